#!/usr/bin/env bats
# Snapshot stores on S3, against a real server that checks AWS Signature V4
# (Ceph radosgw, started by tests/s3/server.sh unless .ci/run started one and
# named its environment in $SBX_TEST_S3_ENV): push from one state root, pull
# and fork from another, bad credentials, damaged objects, killed pushes,
# retention on the bucket, retries, addressing styles and the progress bar.
# shellcheck disable=SC2154 # $stderr comes from run --separate-stderr
load helpers
load s3/lib

setup_file() {
	s3_start_server
}

teardown_file() {
	s3_stop_server
}

@test "push from one state root, pull and fork from another: the children see the files" {
	s3_init
	sandbox_with "made on host A" 2
	run -0 sbx-snap create "$ID"
	snap=$output
	run -0 sbx-snap push --store "$STORE" "$snap"
	[ "$output" = "$snap" ]
	run -0 sbx-snap list --store "$STORE"
	[ "$output" = "$snap" ]
	# The store's metadata, read without pulling: the same document as here.
	run -0 sbx-snap inspect --store "$STORE" -o json "$snap"
	[ "$output" = "$(sbx-snap inspect -o json "$snap")" ]
	sum=$(sbx-run "$ID" -- sha256sum /root/big)
	other_root
	# A snapshot only in the store: sbx-fork pulls it first.
	run -0 env SBX_ROOT="$HOST_B" sbx-fork -n 2 --store "$STORE" "$snap"
	mapfile -t kids <<<"$output"
	[ "${#kids[@]}" -eq 2 ]
	for k in "${kids[@]}"; do
		run -0 env SBX_ROOT="$HOST_B" sbx-run "$k" -- cat /root/note
		[ "$output" = "made on host A" ]
		run -0 env SBX_ROOT="$HOST_B" sbx-run "$k" -- sha256sum /root/big
		[ "$output" = "$sum" ]
	done
	# Pulled once: the second host now has it locally, with its audit event.
	run -0 env SBX_ROOT="$HOST_B" sbx-snap list
	[ "$output" = "$snap" ]
	grep -q '"event":"snapshot-pull"' "$HOST_B/audit.log"
}

@test "threat: a bucket object's manifest is held to the pulling host's policy; whoever writes the bucket owns no host" {
	s3_init
	sandbox_with "from the bucket" 1
	run -0 sbx-snap create "$ID"
	run -0 sbx-snap export -f "$WORK/base.tar" "$output"
	# what a writer of the bucket could put there: the host's / read-write,
	# the host's network, no seccomp, all under a claim of trust
	python3 "$FIXTURES/craft-snapshot.py" "$WORK/base.tar" "$WORK/evil.tar" snap-evil --manifest \
	    '{"trust": "trusted", "network_policy": "host", "filesystem_mounts": [{"host": "/", "guest": "/host", "mode": "rw"}], "security": {"seccomp": "unconfined", "landlock": false}}'
	python3 "$FIXTURES/craft-snapshot.py" "$WORK/base.tar" "$WORK/base-etc.tar" snap-etc --base /etc
	run -0 sbx-snap import "$WORK/evil.tar"
	run -0 sbx-snap import "$WORK/base-etc.tar"
	run -0 sbx-snap push --store "$STORE" snap-evil
	run -0 sbx-snap push --store "$STORE" snap-etc
	other_root
	run -77 env SBX_ROOT="$HOST_B" sbx-fork --store "$STORE" snap-evil
	[[ $output == *"not allowed by the built-in policy"* || $output == *"never mountable"* ]]
	run -77 env SBX_ROOT="$HOST_B" sbx-snap restore --store "$STORE" snap-etc
	[[ $output == *"base_rootfs /etc"* ]]
	[ -z "$(SBX_ROOT=$HOST_B sbx-ls -q)" ]
	# the layers, under the pulling side's own manifest, are fine
	echo '{}' > "$WORK/mine.yaml"
	run -0 env SBX_ROOT="$HOST_B" sbx-fork -m "$WORK/mine.yaml" snap-evil
	kid=$output
	run -0 env SBX_ROOT="$HOST_B" sbx-run "$kid" -- sh -c 'cat /root/note; test -e /host || echo no-host'
	[ "$output" = "from the bucket
no-host" ]
}

@test "layers are uploaded once however many snapshots share them; metadata is written last" {
	s3_init
	sandbox_with "shared" 1
	run -0 sbx-snap create "$ID"
	s1=$output
	run -0 sbx-fork "$s1"
	kid=$output
	run -0 sbx-snap create "$kid"
	s2=$output
	run -0 sbx-snap push --store "$STORE" "$s1"
	run -0 s3keys team/a/layers/
	[ "$(wc -l <<<"$output")" -eq 1 ]
	run -0 sbx-snap push --store "$STORE" "$s2"
	# s2 stacks its own layer on s1's: one more object, not two.
	run -0 s3keys team/a/layers/
	[ "$(wc -l <<<"$output")" -eq 2 ]
	run -0 s3keys team/a/snapshots/
	[ "$(wc -l <<<"$output")" -eq 2 ]
	# Pushing again changes nothing and succeeds.
	run -0 sbx-snap push --store "$STORE" "$s2"
	run -0 s3keys team/a/layers/
	[ "$(wc -l <<<"$output")" -eq 2 ]
	# Another host's snapshot under the same ID does not replace it.
	other_root
	run -0 env SBX_ROOT="$HOST_B" sbx-provision <<<'read_only_root: false'
	run -0 env SBX_ROOT="$HOST_B" sbx-run "$output" -- sh -c 'echo other > /root/note'
	run -0 env SBX_ROOT="$HOST_B" sbx-snap create --id "$s1" "$(SBX_ROOT=$HOST_B sbx-ls -q)"
	run -65 --separate-stderr env SBX_ROOT="$HOST_B" sbx-snap push --store "$STORE" "$s1"
	[[ $stderr == *"holds another snapshot named $s1"* ]]
	run -0 sbx-snap pull --store "$STORE" "$s1"
}

@test "a wrong secret key fails with the server's 403 code and exit 77; no credentials is 77 too" {
	s3_init
	run -77 --separate-stderr env AWS_SECRET_ACCESS_KEY=wrong-secret sbx-snap list --store "$STORE"
	[[ $stderr == *"403 SignatureDoesNotMatch"* ]]
	run -77 --separate-stderr env AWS_ACCESS_KEY_ID=NOSUCHKEY sbx-snap list --store "$STORE"
	[[ $stderr == *"403 InvalidAccessKeyId"* ]]
	run -77 --separate-stderr env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
		HOME="$WORK" sbx-snap list --store "$STORE"
	[[ $stderr == *"no credentials"* ]]
	# A bucket that is not there is 66, named.
	run -66 --separate-stderr sbx-snap list --store "s3://no-such-bucket-$$/x"
	[[ $stderr == *"NoSuchBucket"* ]]
}

@test "credentials and region from the shared files under AWS_PROFILE" {
	s3_init
	mkdir -p "$WORK/.aws"
	printf '[default]\naws_access_key_id = WRONG\naws_secret_access_key = wrong\n[ci]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
		"$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" > "$WORK/.aws/credentials"
	printf '[profile ci]\nregion = %s\n' "$AWS_REGION" > "$WORK/.aws/config"
	run -0 env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_REGION HOME="$WORK" \
		AWS_PROFILE=ci sbx-snap list --store "$STORE"
	run -77 env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_REGION HOME="$WORK" \
		sbx-snap list --store "$STORE"
}

@test "virtual-host addressing reaches the same bucket as path style" {
	s3_init
	sandbox_with "virtual" 1
	run -0 sbx-snap create "$ID"
	snap=$output
	run -0 env SBX_S3_ADDRESSING=virtual AWS_ENDPOINT_URL="http://localhost:$SBX_S3_PORT" \
		sbx-snap push --store "$STORE" "$snap"
	run -0 sbx-snap list --store "$STORE"
	[ "$output" = "$snap" ]
	run -65 env SBX_S3_ADDRESSING=sideways sbx-snap list --store "$STORE"
}

@test "a layer damaged in the bucket is refused on pull (exit 65) and nothing of it is kept" {
	s3_init
	sandbox_with "to be damaged" 1
	run -0 sbx-snap create "$ID"
	snap=$output
	run -0 sbx-snap push --store "$STORE" "$snap"
	run -0 s3keys team/a/layers/sha256/
	key=$output
	# Overwrite the layer with other bytes of the same length.
	size=$(stat -c %s "$SBX_ROOT/layers/${key##*/}.tar.zst")
	head -c "$size" /dev/urandom > "$WORK/evil"
	BODY_SHA=$(sha256sum "$WORK/evil" | cut -d' ' -f1) run -0 s3curl PUT "$BUCKET/$key" -T "$WORK/evil"
	other_root
	run -65 --separate-stderr env SBX_ROOT="$HOST_B" sbx-snap pull --store "$STORE" "$snap"
	[[ $stderr == *"damaged"* ]]
	run -0 env SBX_ROOT="$HOST_B" sbx-snap list
	[ -z "$output" ]
	[ -z "$(ls -A "$HOST_B/layers")" ]
	run -65 env SBX_ROOT="$HOST_B" sbx-fork --store "$STORE" "$snap"
	[ -z "$(SBX_ROOT=$HOST_B sbx-ls -q)" ]
	# Damaged metadata is refused as well, naming the object.
	printf 'snapshot_id: %s\nlayers: nope\n' "$snap" > "$WORK/meta"
	BODY_SHA=$(sha256sum "$WORK/meta" | cut -d' ' -f1) run -0 s3curl PUT \
		"$BUCKET/team/a/snapshots/$snap.yaml" -T "$WORK/meta"
	run -65 --separate-stderr env SBX_ROOT="$HOST_B" sbx-snap pull --store "$STORE" "$snap"
	[[ $stderr == *"snapshots/$snap.yaml"* ]]
	# Retention will not guess what unreadable metadata names: it deletes nothing.
	run -65 --separate-stderr sbx-gc --store "$STORE" --grace 0
	[[ $stderr == *"cannot be read"* ]]
	run -0 s3keys team/a/layers/
	[ "$output" = "$key" ]
	# The listing leaves it out; removing it by ID works.
	run -0 sbx-snap list --store "$STORE"
	[ -z "$output" ]
	run -0 sbx-snap remove --store "$STORE" "$snap"
	run -66 sbx-snap remove --store "$STORE" "$snap"
}

@test "metadata in the bucket that names a layer twice is refused on pull (exit 65)" {
	s3_init
	sandbox_with "twice" 1
	run -0 sbx-snap create "$ID"
	snap=$output
	run -0 sbx-snap push --store "$STORE" "$snap"
	# the one layer listed twice (as an earlier sbx could write it)
	sbx-snap inspect "$snap" | python3 -c '
import sys
lines = sys.stdin.read().split("\n")
i = lines.index("layers:")
j = i + 1
while lines[j].startswith("  "):
    j += 1
sys.stdout.write("\n".join(lines[:j] + lines[i + 1:j] + lines[j:]))' > "$WORK/meta"
	[ "$(grep -c 'digest:' "$WORK/meta")" -eq 2 ]
	BODY_SHA=$(sha256sum "$WORK/meta" | cut -d' ' -f1) run -0 s3curl PUT \
		"$BUCKET/team/a/snapshots/$snap.yaml" -T "$WORK/meta"
	other_root
	run -65 --separate-stderr env SBX_ROOT="$HOST_B" sbx-snap pull --store "$STORE" "$snap"
	[[ $stderr == *"named twice in the chain"* ]]
	run -0 env SBX_ROOT="$HOST_B" sbx-snap list
	[ -z "$output" ]
}

@test "a memory checkpoint is pushed, pulled, checked and retained like a layer" {
	local ck key size
	s3_init
	sandbox_with "beside the memory" 1
	run -0 sbx-snap create "$ID"
	run -0 sbx-snap export -f "$WORK/base.tar" "$output"
	mkdir "$WORK/ckpt"
	head -c 3000000 /dev/urandom > "$WORK/ckpt/checkpoint.img"
	python3 "$FIXTURES/craft-snapshot.py" "$WORK/base.tar" "$WORK/mem.tar" snap-mem \
	    --checkpoint "$WORK/ckpt"
	run -0 sbx-snap import "$WORK/mem.tar"
	ck=$(sbx-snap inspect -o json snap-mem |
	    python3 -c 'import json, sys; print(json.load(sys.stdin)["checkpoint"]["digest"][7:])')
	run -0 sbx-snap push --store "$STORE" snap-mem
	run -0 s3keys team/a/layers/sha256/
	[[ $output == *"team/a/layers/sha256/$ck"* ]]
	[ "${#lines[@]}" -eq 2 ]
	run -0 sbx-snap inspect --store "$STORE" -o json snap-mem
	[ "$output" = "$(sbx-snap inspect -o json snap-mem)" ]
	other_root
	run -0 env SBX_ROOT="$HOST_B" sbx-snap pull --store "$STORE" snap-mem
	cmp "$SBX_ROOT/layers/$ck.tar.zst" "$HOST_B/layers/$ck.tar.zst"
	run -0 env SBX_ROOT="$HOST_B" sbx-snap verify snap-mem
	run -0 env SBX_ROOT="$HOST_B" sbx-snap inspect -o json snap-mem
	[ "$output" = "$(sbx-snap inspect -o json snap-mem)" ]
	# damaged in the bucket: refused on pull, and nothing of it stays
	key=team/a/layers/sha256/$ck
	size=$(stat -c %s "$SBX_ROOT/layers/$ck.tar.zst")
	head -c "$size" /dev/urandom > "$WORK/evil"
	BODY_SHA=$(sha256sum "$WORK/evil" | cut -d' ' -f1) run -0 s3curl PUT "$BUCKET/$key" -T "$WORK/evil"
	rm -rf "$HOST_B"
	other_root
	run -65 --separate-stderr env SBX_ROOT="$HOST_B" sbx-snap pull --store "$STORE" snap-mem
	[[ $stderr == *"$key: damaged"* ]]
	[ -z "$(SBX_ROOT=$HOST_B sbx-snap list)" ]
	[ ! -e "$HOST_B/layers/$ck.tar.zst" ]
	# retention on the bucket: the checkpoint stays while its snapshot does
	run -0 sbx-gc --store "$STORE" --grace 0
	run -0 s3keys team/a/layers/sha256/
	[[ $output == *"$ck"* ]]
	run -0 sbx-snap remove --store "$STORE" snap-mem
	# A sweep deletes only what is older than its start by the server's
	# clock, whose Date counts whole seconds: let the damaged PUT's second end.
	sleep 1.1
	run -0 sbx-gc --store "$STORE" --grace 0
	[[ $output == *"removed layer $ck"* ]]
	run -0 s3keys team/a/layers/
	[ -z "$output" ]
}

@test "a push killed at each step leaves no visible snapshot; a truncated multipart upload is aborted by gc" {
	s3_init
	sandbox_with "killed" 12
	run -0 sbx-snap create "$ID"
	snap=$output
	other_root
	for point in s3-part push-layer push-layers-done; do
		run -137 env SBX_S3_PART_MB=5 SBX_TEST_CRASH_AT=$point sbx-snap push --store "$STORE" "$snap"
		run -0 sbx-snap list --store "$STORE"
		[ -z "$output" ]
		run -66 env SBX_ROOT="$HOST_B" sbx-snap pull --store "$STORE" "$snap"
	done
	# The upload cut after its first part is still open on the server ...
	run -0 s3curl GET "$BUCKET?prefix=team%2Fa%2F&uploads="
	[[ $output == *"<UploadId>"* ]]
	# ... until retention aborts it (begun before the sweep: the server's
	# clock counts whole seconds).
	sleep 1
	run -0 sbx-gc --store "$STORE" --grace 0
	[[ $output == *"removed upload"* ]]
	run -0 s3curl GET "$BUCKET?prefix=team%2Fa%2F&uploads="
	[[ $output != *"<UploadId>"* ]]
	# And the push completes when let be.
	run -0 env SBX_S3_PART_MB=5 sbx-snap push --store "$STORE" "$snap"
	run -0 env SBX_ROOT="$HOST_B" sbx-snap pull --store "$STORE" "$snap"
}

@test "pushes killed at random moments never leave a snapshot visible but incomplete" {
	s3_init
	sandbox_with "random kills" 1
	other_root
	for round in 1 2 3 4 5 6 7 8; do
		run -0 sbx-run "$ID" -- sh -c "head -c 6M /dev/urandom > /root/r$round"
		run -0 sbx-snap create "$ID"
		snap=$output
		delay=$(awk -v r="$RANDOM" 'BEGIN { printf "%.3f", 0.01 + (r % 300) / 1000 }')
		run env SBX_S3_PART_MB=5 timeout -s KILL "$delay" sbx-snap push --store "$STORE" "$snap"
		[ "$status" -eq 0 ] || [ "$status" -eq 137 ]
		# Whatever is visible is whole: every listed snapshot pulls and verifies.
		run -0 sbx-snap list --store "$STORE"
		for s in $output; do
			run -0 env SBX_ROOT="$HOST_B" sbx-snap pull --store "$STORE" "$s"
			run -0 env SBX_ROOT="$HOST_B" sbx-snap verify "$s"
		done
	done
}

@test "retention on the bucket keeps what kept snapshots need and removes the rest" {
	s3_init
	sandbox_with "old lineage" 1
	old_box=$ID
	run -0 sbx-snap create "$old_box"
	old=$output
	run -0 sbx-snap push --store "$STORE" "$old"
	old_layer=$(s3keys team/a/layers/)
	sleep 4
	sandbox_with "chain" 1
	run -0 sbx-snap create "$ID"
	c1=$output
	run -0 sbx-run "$ID" -- sh -c 'echo second > /root/second'
	run -0 sbx-snap create "$ID"
	c2=$output
	run -0 sbx-snap push --store "$STORE" "$c1"
	run -0 sbx-snap push --store "$STORE" "$c2"
	# Snapshots younger than 3 s stay: the old lineage goes, with its layer.
	run -0 sbx-gc --store "$STORE" --max-age 3s --grace 0 -n
	[[ $output == *"would remove snapshot $old"* ]]
	[[ $output != *"$c1"* && $output != *"$c2"* ]]
	run -0 s3keys team/a/snapshots/
	[ "$(wc -l <<<"$output")" -eq 3 ]
	run -0 sbx-gc --store "$STORE" --max-age 3s --grace 0
	grep -q "\"event\":\"snapshot-remove\".*$old in $STORE" "$SBX_ROOT/audit.log"
	run -0 s3keys team/a/layers/
	[[ $output != *"$old_layer"* ]]
	[ "$(wc -l <<<"$output")" -eq 2 ]
	# Keeping the newest of the lineage keeps the layers it stacks on (c2 is a
	# diff on c1's full layer), not c1's metadata.
	run -0 sbx-gc --store "$STORE" --keep-last 1 --grace 0
	[ "$output" = "removed snapshot $c1" ]
	run -0 sbx-snap list --store "$STORE"
	[ "$output" = "$c2" ]
	run -0 s3keys team/a/layers/
	[ "$(wc -l <<<"$output")" -eq 2 ]
	other_root
	run -0 env SBX_ROOT="$HOST_B" sbx-fork --store "$STORE" "$c2"
	run -0 env SBX_ROOT="$HOST_B" sbx-run "$output" -- cat /root/note /root/second
	[ "$output" = "chain
second" ]
}

@test "retention never deletes a layer uploaded after its sweep began" {
	s3_init
	sandbox_with "swept" 1
	run -0 sbx-snap create "$ID"
	snap=$output
	run -0 sbx-snap push --store "$STORE" "$snap"
	run -0 s3curl DELETE "$BUCKET/team/a/snapshots/$snap.yaml"
	sleep 1
	# The sweep pauses after listing; meanwhile another host uploads a layer
	# whose metadata is not written yet.
	env SBX_TEST_PAUSE_AT="remote-gc-listed:$WORK/go" sbx-gc --store "$STORE" --grace 0 \
		> "$WORK/gc.out" 2>&1 &
	gc=$!
	TEST_PIDS+=("$gc")
	for _ in $(seq 100); do
		[ -e "$WORK/go.paused" ] && break
		sleep 0.1
	done
	[ -e "$WORK/go.paused" ]
	echo fresh > "$WORK/fresh"
	fresh=$(sha256sum "$WORK/fresh" | cut -d' ' -f1)
	BODY_SHA=$fresh run -0 s3curl PUT "$BUCKET/team/a/layers/sha256/$fresh" -T "$WORK/fresh"
	touch "$WORK/go"
	wait "$gc"
	run -0 s3keys team/a/layers/
	[ "$output" = "team/a/layers/sha256/$fresh" ]
	grep -q "removed layer" "$WORK/gc.out"
}

@test "transient failures are retried: connections reset, 503 SlowDown; a dead endpoint gives up in time" {
	s3_init
	sandbox_with "retried" 1
	run -0 sbx-snap create "$ID"
	snap=$output
	for mode in reset 503; do
		python3 "$BATS_TEST_DIRNAME/s3/proxy.py" "$mode" 2 "$SBX_S3_PORT" "$WORK/port" \
			"$WORK/count" &
		TEST_PIDS+=($!)
		for _ in $(seq 50); do
			[ -s "$WORK/port" ] && break
			sleep 0.1
		done
		run -0 env AWS_ENDPOINT_URL="http://127.0.0.1:$(cat "$WORK/port")" \
			sbx-snap push --store "$STORE" "$snap"
		[ "$(cat "$WORK/count")" -gt 2 ]
		rm -f "$WORK/port" "$WORK/count"
	done
	run -0 sbx-snap list --store "$STORE"
	[ "$output" = "$snap" ]
	dead=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	start=$SECONDS
	run -74 --separate-stderr env AWS_ENDPOINT_URL="http://127.0.0.1:$dead" SBX_S3_RETRY_S=2 \
		sbx-snap list --store "$STORE"
	[[ $stderr == *"gave up after"* ]]
	[ $((SECONDS - start)) -lt 10 ]
}

@test "a terminal gets a progress bar for pushes and pulls; a pipe gets none" {
	s3_init
	command -v script >/dev/null || skip "script(1) is not installed"
	sandbox_with "progress" 8
	run -0 sbx-snap create "$ID"
	snap=$output
	run -0 sbx-snap push --store "$STORE" "$snap"
	[ "$output" = "$snap" ]
	run -0 s3curl DELETE "$BUCKET/team/a/snapshots/$snap.yaml"
	run -0 s3keys team/a/layers/
	run -0 s3curl DELETE "$BUCKET/$output"
	run -0 env -u SBX_NO_PROGRESS script -qec "sbx-snap push --store $STORE $snap" /dev/null
	[[ $output == *"push sha256:"*"MiB"*"/s"* ]]
	other_root
	run -0 env -u SBX_NO_PROGRESS SBX_ROOT="$HOST_B" script -qec \
		"sbx-snap pull --store $STORE $snap" /dev/null
	[[ $output == *"pull sha256:"*"MiB"* ]]
	# In a pipe: the ID and nothing else.
	run -0 --separate-stderr env -u SBX_NO_PROGRESS sbx-snap push --store "$STORE" "$snap"
	[ -z "$stderr" ]
}

@test "a sandbox whose manifest names an s3 store pushes its snapshots there" {
	s3_init
	provision <<EOF
read_only_root: false
snapshot:
  storage_backend: $STORE
EOF
	assert_confined "$ID"
	run -0 sbx-run "$ID" -- sh -c 'echo auto > /root/note'
	run -0 sbx-snap create "$ID"
	snap=$output
	run -0 sbx-snap list --store "$STORE"
	[ "$output" = "$snap" ]
	# Checked at provision: the URL's syntax (65) and the credentials (77).
	run -65 sbx-provision <<<'snapshot: {storage_backend: "s3://Bad_Bucket/x"}'
	run -65 sbx-provision <<<'snapshot: {storage_backend: "ftp://host/x"}'
	run -77 env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY HOME="$WORK" sbx-provision <<EOF
snapshot: {storage_backend: "$STORE"}
EOF
	[ "$(sbx-ls -q)" = "$ID" ]
}

@test "usage: push and pull need --store; --store must be s3://" {
	run -64 sbx-snap push snap-00000000
	run -64 sbx-snap pull --store "file:///tmp/x" snap-00000000
	run -64 sbx-fork --store "/tmp/x" snap-00000000
	run -64 sbx-gc --store "http://x" --keep-last 1
	run -64 sbx-gc --grace 5m
	run -64 sbx-gc --store s3://bucket/x --verify-audit
	run -64 sbx-gc --store s3://bucket/x sbx-00000000
	run -64 sbx-snap verify --store s3://bucket/x snap-00000000
}

@test "valgrind: push (multipart), list, pull, refused credentials and retention on a store are clean" {
	s3_init
	command -v valgrind >/dev/null || skip "valgrind is not installed"
	if [ "${SBX_SANITIZE:-}" = 1 ]; then
		skip "the ASan build is checked by ASan, not valgrind"
	fi
	sandbox_with "valgrind" 11
	run -0 sbx-snap create "$ID"
	snap=$output
	printf '#!/bin/sh\nexec valgrind -q --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --error-exitcode=99 "$@"\n' > "$WORK/vg"
	chmod +x "$WORK/vg"
	vg() { "$WORK/vg" "$@"; }
	run -0 env SBX_S3_PART_MB=5 "$WORK/vg" sbx-snap push --store "$STORE" "$snap"
	run -0 vg sbx-snap list --store "$STORE" -o json
	other_root
	run -0 env SBX_ROOT="$HOST_B" "$WORK/vg" sbx-snap pull --store "$STORE" "$snap"
	run -77 env AWS_SECRET_ACCESS_KEY=wrong "$WORK/vg" sbx-snap list --store "$STORE"
	run -0 vg sbx-gc --store "$STORE" --keep-last 1 --grace 0
}

@test "HTTPS: the store's certificate is checked; with its CA named in AWS_CA_BUNDLE it works" {
	s3_init
	sandbox_with "over TLS" 1
	run -0 sbx-snap create "$ID"
	snap=$output
	run -74 --separate-stderr env AWS_ENDPOINT_URL="https://localhost:$SBX_S3_TLS_PORT" \
		sbx-snap push --store "$STORE" "$snap"
	[[ $stderr == *"certificate"* ]]
	run -0 env AWS_ENDPOINT_URL="https://localhost:$SBX_S3_TLS_PORT" AWS_CA_BUNDLE="$SBX_S3_CA" \
		sbx-snap push --store "$STORE" "$snap"
	other_root
	run -0 env SBX_ROOT="$HOST_B" AWS_ENDPOINT_URL="https://127.0.0.1:$SBX_S3_TLS_PORT" \
		AWS_CA_BUNDLE="$SBX_S3_CA" sbx-fork --store "$STORE" "$snap"
	run -0 env SBX_ROOT="$HOST_B" sbx-run "$output" -- cat /root/note
	[ "$output" = "over TLS" ]
}
