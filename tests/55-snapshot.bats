#!/usr/bin/env bats
# Snapshots and forks: what a snapshot holds, what forks share and do not,
# chains, verify, idempotent IDs, the fork budget, select, export/import,
# retention, and snapshots taken by the watchdog, by sbx-gc and by sbx-run.
# shellcheck disable=SC2154 # $stderr comes from run --separate-stderr
load helpers

RW='read_only_root: false
fork: {max_fork_factor: 8}'

# A writable sandbox whose confinement is proven; sets $ID.
writable() {
	provision <<<"$RW"
	assert_confined "$ID"
}

@test "a file written in a sandbox is in each of 3 forks; a fork's writes stay its own" {
	writable
	run -0 sbx-run "$ID" -- sh -c 'echo parent > /root/note; mkdir -p /opt/app; echo v1 > /opt/app/conf'
	run -0 sbx-snap "$ID"
	snap=$output
	[[ $snap == snap-* ]]
	run -0 sbx-fork -n 3 "$snap"
	[ "${#lines[@]}" -eq 3 ]
	kids=("${lines[@]}")
	for k in "${kids[@]}"; do
		run -0 sbx-run "$k" -- sh -c 'cat /root/note /opt/app/conf; hostname'
		[ "${lines[0]}" = parent ]
		[ "${lines[1]}" = v1 ]
		[ "${lines[2]}" = "$k" ]    # a hostname of its own
	done
	run -0 sbx-run "${kids[0]}" -- sh -c 'echo mine > /root/only-0; echo v2 > /opt/app/conf'
	for k in "${kids[1]}" "${kids[2]}" "$ID"; do
		run -0 sbx-run "$k" -- sh -c 'cat /opt/app/conf; ls /root'
		[ "${lines[0]}" = v1 ]
		[[ $output != *only-0* ]]
	done
	# Each child has its own host ID range: the same files, other owners outside.
	[ "$(state "${kids[0]}" uid_base)" != "$(state "${kids[1]}" uid_base)" ]
	run -0 sbx-run "${kids[1]}" -- stat -c '%u:%g' /root/note
	[ "$output" = "0:0" ]
}

@test "a whiteout made in a fork survives its snapshot and a fork of that (a chain of 3)" {
	writable
	run -0 sbx-run "$ID" -- sh -c 'echo a > /root/a; echo b > /root/b; mkdir /opt/tree; echo t > /opt/tree/t'
	run -0 sbx-snap "$ID"
	s1=$output
	run -0 sbx-fork "$s1"
	c1=$output
	# delete files of the lower layers: the host's /etc/hostname and the parent's
	run -0 sbx-run "$c1" -- sh -c 'rm /etc/hostname /root/a; rm -r /opt/tree; echo c1 > /root/c1'
	run -0 sbx-snap "$c1"
	s2=$output
	run -0 sbx-fork "$s2"
	c2=$output
	run -0 sbx-run "$c2" -- sh -c 'echo c2 >> /root/c1; echo b2 > /root/b'
	run -0 sbx-snap "$c2"
	s3=$output
	run -0 sbx-snap inspect "$s3"
	[[ $output == *"parent: \"$s2\""* ]]
	[ "$(grep -c 'digest:' <<<"$output")" -eq 3 ]
	run -0 sbx-fork "$s3"
	c3=$output
	run -0 sbx-run "$c3" -- sh -c 'ls -a /root /opt; cat /root/c1 /root/b; test ! -e /etc/hostname && echo no-hostname'
	if grep -qxE 'a|tree' <<<"$output"; then
		echo "deleted files came back"
		false
	fi
	grep -qx c1 <<<"$output"
	grep -qx c2 <<<"$output"
	grep -qx b2 <<<"$output"
	grep -qx no-hostname <<<"$output"
	# the first snapshot still shows the original
	run -0 sbx-fork "$s1"
	run -0 sbx-run "$output" -- cat /root/a /opt/tree/t /etc/hostname
}

@test "sparse files stay sparse, xattrs and modes survive a snapshot" {
	writable
	run -0 sbx-run "$ID" -- python3 -c '
import os
with open("/root/sparse", "wb") as f:
    f.truncate(512 << 20)
    f.seek(100 << 20); f.write(b"middle")
os.setxattr("/root/sparse", "user.origin", b"agent-7")
os.mkfifo("/root/fifo")
os.symlink("/root/sparse", "/root/link")
os.link("/root/sparse", "/root/hard")
os.chmod("/root/sparse", 0o640)'
	run -0 sbx-snap "$ID"
	snap=$output
	run -0 sbx-snap inspect "$snap"
	size=$(yaml_value size <<<"$output")
	[ "$size" -lt 1000000 ]    # 512 MiB of holes: a small layer
	run -0 sbx-fork "$snap"
	run -0 sbx-run "$output" -- python3 -c '
import os, stat
st = os.stat("/root/sparse")
assert st.st_size == 512 << 20, st.st_size
assert st.st_blocks * 512 < 8 << 20, st.st_blocks
assert stat.S_IMODE(st.st_mode) == 0o640
with open("/root/sparse", "rb") as f:
    f.seek(100 << 20); assert f.read(6) == b"middle"
assert os.getxattr("/root/sparse", "user.origin") == b"agent-7"
assert stat.S_ISFIFO(os.lstat("/root/fifo").st_mode)
assert os.readlink("/root/link") == "/root/sparse"
assert os.stat("/root/hard").st_ino == st.st_ino
print("ok")'
	[ "$output" = ok ]
}

@test "verify recomputes every digest: a flipped byte is exit 1 naming the layer" {
	writable
	run -0 sbx-run "$ID" -- sh -c 'head -c 200000 /dev/urandom > /root/data'
	run -0 sbx-snap "$ID"
	snap=$output
	run -0 sbx-snap verify "$snap"
	digest=$(sbx-snap inspect "$snap" | sed -n 's/.*digest: "sha256:\(.*\)"/\1/p')
	blob="$SBX_ROOT/layers/$digest.tar.zst"
	python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[len(b)//2]^=1; open(p,"wb").write(b)' "$blob"
	run -1 sbx-snap verify "$snap"
	[[ $output == *"sha256:$digest"*damaged* ]] || [[ $output == *"sha256:$digest"*mismatch* ]]
	run -66 sbx-snap verify no-such-snapshot "$snap"    # the worse answer wins
}

@test "snapshot IDs chosen by the caller make retries idempotent; another sandbox's ID is refused" {
	writable
	run -0 sbx-snap --id step-1 "$ID"
	[ "$output" = step-1 ]
	run -0 sbx-run "$ID" -- touch /root/later
	run -0 sbx-snap --id step-1 "$ID"
	[ "$output" = step-1 ]
	run -0 sbx-snap list
	[ "$output" = step-1 ]
	first=$ID
	writable
	run -65 sbx-snap --id step-1 "$ID"
	[[ $output == *"taken by a snapshot of sandbox $first"* ]]
	run -65 sbx-snap --id '../x' "$ID"
	run -66 sbx-snap no-such-sandbox
	run -0 sbx-snap list
	[ "$output" = step-1 ]
	# fork IDs: --id PREFIX names the children; a retry returns the same ones
	run -0 sbx-fork -n 2 --id try step-1
	[ "$output" = "$(printf 'try-1\ntry-2')" ]
	run -0 sbx-fork -n 2 --id try step-1
	[ "$output" = "$(printf 'try-1\ntry-2')" ]
}

@test "two sandboxes snapshotted at once under one --id: one wins, the other gets 65" {
	local a b ra rb
	writable; a=$ID
	writable; b=$ID
	for id in "$a" "$b"; do
		run -0 sbx-run "$id" -- sh -c 'head -c 60000000 /dev/urandom > /root/data'
	done
	sbx-snap --id same "$a" > "$WORK/a.out" 2>&1 & pa=$!
	sbx-snap --id same "$b" > "$WORK/b.out" 2>&1 & pb=$!
	ra=0; wait "$pa" || ra=$?
	rb=0; wait "$pb" || rb=$?
	echo "a: $ra $(cat "$WORK/a.out"); b: $rb $(cat "$WORK/b.out")"
	[ "$((ra + rb))" -eq 65 ]
	winner=$a; [ "$ra" -eq 0 ] || winner=$b
	run -0 sbx-snap inspect same
	[[ $output == *"source_sandbox: \"$winner\""* ]]
	run -0 sbx-snap verify same
	[ "$(sbx-inspect "$a" | yaml_value status)" = ready ]
	[ "$(sbx-inspect "$b" | yaml_value status)" = ready ]
	# the loser's index never serves the winner's next snapshot
	run -0 sbx-run "$winner" -- sh -c 'echo after > /root/after'
	run -0 sbx-snap "$winner"
	run -0 sbx-fork "$output"
	run -0 sbx-run "$output" -- sh -c 'cat /root/after; wc -c < /root/data'
	[ "$output" = "$(printf 'after\n60000000')" ]
}

@test "the fork budget: past fork.max_fork_factor is exit 75 and makes nothing" {
	provision <<<'read_only_root: false
fork: {max_fork_factor: 2}'
	run -0 sbx-snap "$ID"
	snap=$output
	run -75 sbx-fork -n 3 "$snap"
	[[ $output == *max_fork_factor* ]]
	[ "$(sbx-ls -q | wc -l)" -eq 1 ]
	run -0 sbx-fork -n 2 "$snap"
	kid=${lines[0]}
	run -75 sbx-fork "$snap"
	run -75 sbx-snap restore "$snap"
	run -0 sbx-gc "$kid"
	run -0 sbx-fork "$snap"
	# a live sandbox made from it keeps the snapshot from removal
	run -75 sbx-snap remove "$snap"
	run -64 sbx-fork -n 0 "$snap"
	run -66 sbx-fork no-such-thing
	# from a live sandbox past its budget: not even its snapshot is made
	run -75 sbx-fork -n 3 "$ID"
	[ "$(sbx-snap list)" = "$snap" ]
}

@test "sbx-fork from a live sandbox snapshots it first" {
	writable
	run -0 sbx-run "$ID" -- sh -c 'echo live > /root/state'
	run -0 sbx-fork -n 2 "$ID"
	for k in "${lines[@]}"; do
		run -0 sbx-run "$k" -- cat /root/state
		[ "$output" = live ]
	done
	run -0 sbx-snap list -o json
	[[ $output == *"\"source_sandbox\":\"$ID\""*'"reason":"fork"'* ]]
}

@test "sbx-fork --select keeps the winner as the new head and retires its siblings" {
	writable
	run -0 sbx-snap "$ID"
	base=$output
	run -0 sbx-fork -n 3 "$base"
	kids=("${lines[@]}")
	run -0 sbx-run "${kids[1]}" -- sh -c 'echo winning > /root/result'
	run -0 sbx-fork --select "${kids[1]}"
	head=$output
	run -0 sbx-snap inspect "$head"
	[[ $output == *"parent: \"$base\""* ]]
	[[ $output == *'reason: "select"'* ]]
	run -0 sbx-ls -q
	[[ $output != *"${kids[0]}"* && $output != *"${kids[2]}"* ]]
	[[ $output == *"${kids[1]}"* && $output == *"$ID"* ]]
	grep -q "\"event\":\"select\".*$head" "$SBX_ROOT/audit.log"
	run -0 sbx-fork "$head"
	run -0 sbx-run "$output" -- cat /root/result
	[ "$output" = winning ]
	run -65 sbx-fork --select "$ID"    # not made from a snapshot
	run -0 sbx-gc --verify-audit
}

@test "export and import carry a snapshot to another store; a retried import is a no-op" {
	writable
	run -0 sbx-run "$ID" -- sh -c 'echo travelled > /root/t'
	run -0 sbx-snap "$ID"
	s1=$output
	run -0 sbx-fork "$s1"
	kid=$output
	run -0 sbx-run "$kid" -- sh -c 'echo second >> /root/t'
	run -0 sbx-snap "$kid"
	s2=$output
	run -0 sbx-snap export -f "$WORK/s2.tar" "$s2"
	other=$(mktemp -d /tmp/sbx-test.XXXXXX)
	SBX_ROOT=$other run -0 sbx-snap import "$WORK/s2.tar"
	[ "$output" = "$s2" ]
	SBX_ROOT=$other run -0 sbx-snap import - < "$WORK/s2.tar"
	SBX_ROOT=$other run -0 sbx-snap verify "$s2"
	SBX_ROOT=$other run -0 sbx-fork "$s2"
	kid=$output
	SBX_ROOT=$other run -0 sbx-run "$kid" -- cat /root/t
	[ "$output" = "$(printf 'travelled\nsecond')" ]
	SBX_ROOT=$other run -0 sbx-gc "$kid"
	rm -rf "$other"
	run -65 sbx-snap import /etc/hostname
	run -66 sbx-snap import "$WORK/none.tar"
}

# digests SNAP: the layer digests of the snapshot's chain, one a line.
digests() {
	sbx-snap inspect "$1" | sed -n 's/.*digest: "sha256:\(.*\)"/\1/p'
}

@test "a chain stacks each layer once: unchanged sandboxes snapshot and fork again and again" {
	# the default manifest: nothing changes, every layer is the same empty one
	provision "$MANIFESTS/minimal.yaml"
	run -0 sbx-snap "$ID"; s=$output
	run -0 sbx-fork "$s"; k=$output
	run -0 sbx-snap "$k"; s2=$output
	[ "$(digests "$s2")" = "$(digests "$s")" ]
	run -0 sbx-snap verify "$s2"
	run -0 sbx-fork "$s2"
	run -0 sbx-run "$output" -- true
	# an idle writable sandbox snapshotted back to back: the same diff each time
	writable
	run -0 sbx-run "$ID" -- sh -c 'mkdir /root/d; echo kept > /root/d/f'
	for _ in 1 2 3 4; do
		run -0 sbx-snap "$ID"; last=$output
	done
	run -0 digests "$last"
	[ "$(sort -u <<<"$output" | wc -l)" -eq "${#lines[@]}" ]
	run -0 sbx-snap verify "$last"
	run -0 sbx-fork "$last"; k=$output
	run -0 sbx-run "$k" -- cat /root/d/f
	[ "$output" = kept ]
	# and a fork of it snapshotted unchanged (as --select of an idle winner does)
	run -0 sbx-fork --select "$k"
	run -0 sbx-fork "$output"
	run -0 sbx-run "$output" -- cat /root/d/f
}

# memory_archive ID OUT [craft options]: a snapshot of a writable sandbox
# ($BASE_SNAP, made once per test), exported, given a memory checkpoint as a
# tier writes one (the files of $CKPT, else $WORK/ckpt), in $WORK/OUT.tar.
memory_archive() {
	local id=$1 out=$2
	shift 2
	if [ -z "${BASE_SNAP:-}" ]; then
		writable
		run -0 sbx-run "$ID" -- sh -c 'echo beside-the-memory > /root/note'
		run -0 sbx-snap "$ID"
		BASE_SNAP=$output
		run -0 sbx-snap export -f "$WORK/base.tar" "$BASE_SNAP"
		mkdir -p "$WORK/ckpt"
		head -c 2000000 /dev/urandom > "$WORK/ckpt/checkpoint.img"
		echo '{"sandbox": 1}' > "$WORK/ckpt/meta.json"
	fi
	python3 "$FIXTURES/craft-snapshot.py" "$WORK/base.tar" "$WORK/$out.tar" "$id" \
	    --checkpoint "${CKPT:-$WORK/ckpt}" "$@"
}

# checkpoint_digest SNAP: the hex digest of the snapshot's memory checkpoint.
checkpoint_digest() {
	sbx-snap inspect -o json "$1" |
	    python3 -c 'import json, sys; print(json.load(sys.stdin)["checkpoint"]["digest"][7:])'
}

@test "a memory checkpoint travels with its snapshot: inspect, verify, export, import; never stacked" {
	local ck kid other
	memory_archive snap-mem mem
	run -0 sbx-snap import "$WORK/mem.tar"
	[ "$output" = snap-mem ]
	run -0 sbx-snap inspect snap-mem
	[[ $output == *"memory: true"* && $output == *'tier: "oci/runsc"'* ]]
	run -0 sbx-snap inspect -o json snap-mem
	python3 -c 'import json, sys
d = json.loads(sys.argv[1])
c = d["checkpoint"]
assert d["memory"] is True and len(d["layers"]) == 1, d
assert c["size"] > 0 and c["unpacked"] == 2000000 + 15 and c["tier"] == "oci/runsc", c' "$output"
	ck=$(checkpoint_digest snap-mem)
	[ "$(sha256sum < "$SBX_ROOT/layers/$ck.tar.zst" | cut -d' ' -f1)" = "$ck" ]
	# a snapshot of files only says so
	run -0 sbx-snap inspect "$BASE_SNAP"
	[[ $output == *"memory: false"* && $output != *checkpoint* ]]
	run -0 sbx-snap verify snap-mem
	# the chain is the layers alone: a fork mounts them, and its own
	# snapshot holds files only
	run -0 sbx-fork snap-mem
	kid=$output
	run -0 sbx-run "$kid" -- cat /root/note
	[ "$output" = beside-the-memory ]
	run -0 sbx-snap "$kid"
	run -0 sbx-snap inspect "$output"
	[[ $output == *"memory: false"* && $output != *"$ck"* ]]
	# export and import elsewhere: the checkpoint goes along, once
	run -0 sbx-snap export -f "$WORK/out.tar" snap-mem
	[ "$(tar tf "$WORK/out.tar" | grep -c "^layers/$ck.tar.zst$")" -eq 1 ]
	other=$(mktemp -d /tmp/sbx-test.XXXXXX)
	SBX_ROOT=$other run -0 sbx-snap import "$WORK/out.tar"
	SBX_ROOT=$other run -0 sbx-snap inspect -o json snap-mem
	[ "$output" = "$(sbx-snap inspect -o json snap-mem)" ]
	SBX_ROOT=$other run -0 sbx-snap verify snap-mem
	# the same snapshot again is a no-op; another checkpoint under its ID is not
	SBX_ROOT=$other run -0 sbx-snap import "$WORK/out.tar"
	mkdir "$WORK/ckpt2"
	echo other > "$WORK/ckpt2/checkpoint.img"
	CKPT=$WORK/ckpt2 memory_archive snap-mem mem2
	SBX_ROOT=$other run -65 sbx-snap import "$WORK/mem2.tar"
	[[ $output == *"another checkpoint"* ]]
	rm -rf "$other"
	# damaged in the store: verify names the checkpoint
	python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[len(b)//2]^=1; open(p,"wb").write(b)' "$SBX_ROOT/layers/$ck.tar.zst"
	run -1 sbx-snap verify snap-mem
	[[ $output == *"checkpoint sha256:$ck"*"damaged"* ]]
}

@test "retention keeps a checkpoint while a snapshot names it and removes it after" {
	local ck
	memory_archive snap-m1 m1
	memory_archive snap-m2 m2
	run -0 sbx-snap import "$WORK/m1.tar"
	run -0 sbx-snap import "$WORK/m2.tar"
	ck=$(checkpoint_digest snap-m1)
	[ "$(checkpoint_digest snap-m2)" = "$ck" ]
	run -0 sbx-snap remove snap-m1
	run -0 sbx-gc
	[ -f "$SBX_ROOT/layers/$ck.tar.zst" ]
	run -0 sbx-snap verify snap-m2
	run -0 sbx-snap remove snap-m2
	run -0 sbx-gc --dry-run
	[[ $output == *"would remove layer $ck.tar.zst"* ]]
	[ -f "$SBX_ROOT/layers/$ck.tar.zst" ]
	run -0 sbx-gc
	[ ! -e "$SBX_ROOT/layers/$ck.tar.zst" ]
	# the layer the base snapshot names stays with it
	run -0 sbx-snap verify "$BASE_SNAP"
	[ "$(find "$SBX_ROOT/layers" -type f | wc -l)" -eq 1 ]
}

@test "a damaged checkpoint, or memory: true without one, is refused with 65 and nothing is made" {
	local d layers
	for d in flip truncate nomap memory-false; do
		memory_archive "snap-$d" "$d" --damage "$d"
		layers=$(ls -A "$SBX_ROOT/layers")
		echo "damage: $d"
		run -65 sbx-snap import "$WORK/$d.tar"
		[[ $output == *checkpoint* ]]
		[ "$(sbx-snap list)" = "$BASE_SNAP" ]
		[ "$(ls -A "$SBX_ROOT/layers")" = "$layers" ]
	done
}

@test "a chain that names a layer twice: refused from an archive, mounted once from this store" {
	local d escape="$WORK/escape"
	mkdir -p "$escape" "$SBX_ROOT/layers" "$SBX_ROOT/snapshots"
	python3 "$FIXTURES/mklayer.py" twice "$WORK/twice" "$escape"
	run -65 sbx-snap import "$WORK/twice/export.tar"
	[[ $output == *"named twice in the chain"* ]]
	[ -z "$(sbx-snap list)" ]
	# as an earlier sbx left it in this store: each layer mounted once
	d=$(cat "$WORK/twice/digest")
	cp "$WORK/twice/layer.tar.zst" "$SBX_ROOT/layers/$d.tar.zst"
	cp "$WORK/twice/snapshot.yaml" "$SBX_ROOT/snapshots/snap-twice.yaml"
	run -0 sbx-snap verify snap-twice
	[ "$(digests snap-twice)" = "$d" ]
	run -0 sbx-fork snap-twice
	run -0 sbx-run "$output" -- test -d /dir
	# what leaves this store names it once, and imports elsewhere
	run -0 sbx-snap export -f "$WORK/out.tar" snap-twice
	other=$(mktemp -d /tmp/sbx-test.XXXXXX)
	SBX_ROOT=$other run -0 sbx-snap import "$WORK/out.tar"
	SBX_ROOT=$other run -0 sbx-snap verify snap-twice
	rm -rf "$other"
}

@test "hostile layers are refused with 65 and write nothing outside the target" {
	local k d escape="$WORK/escape"
	mkdir -p "$escape" "$SBX_ROOT/layers" "$SBX_ROOT/snapshots"
	for k in absolute dotdot symlink-write symlink-out-write below-fifo hardlink-out \
	    hardlink-dotdot device block setuid xattr truncated plain-tar big; do
		python3 "$FIXTURES/mklayer.py" "$k" "$WORK/$k" "$escape"
		echo "layer: $k"
		SBX_LAYER_MAX_MB=1 run -65 sbx-snap import "$WORK/$k/export.tar"
		# The same layer planted in the store (a store someone else can write):
		# extraction into the cache refuses it too.
		d=$(cat "$WORK/$k/digest")
		cp "$WORK/$k/layer.tar.zst" "$SBX_ROOT/layers/$d.tar.zst"
		cp "$WORK/$k/snapshot.yaml" "$SBX_ROOT/snapshots/snap-$k.yaml"
		SBX_LAYER_MAX_MB=1 run -65 sbx-fork "snap-$k"
		[ -z "$(ls -A "$escape")" ]
		[ -z "$(ls -A "$SBX_ROOT/cache")" ]
		[ -z "$(ls -A "$SBX_ROOT/sandboxes")" ]
	done
	[ -z "$(find /tmp "$SBX_ROOT" -maxdepth 4 -name 'pwned-*' 2>/dev/null)" ]
	# the same machinery accepts a well-formed layer
	python3 "$FIXTURES/mklayer.py" good "$WORK/good" "$escape"
	run -0 sbx-snap import "$WORK/good/export.tar"
	run -0 sbx-fork snap-good
	run -0 sbx-run "$output" -- cat /dir/file
	# a directory whose entry comes after what it holds gets that entry's mode
	python3 "$FIXTURES/mklayer.py" late-dir "$WORK/late-dir" "$escape"
	run -0 sbx-snap import "$WORK/late-dir/export.tar"
	run -0 sbx-fork snap-late-dir
	run -0 sbx-run "$output" -- sh -c 'stat -c %a /d; cat /d/f'
	[ "$output" = "$(printf '750\nbelow')" ]
	# and symlinks whose targets climb out: data, resolved in the sandbox's root
	python3 "$FIXTURES/mklayer.py" symlink-out "$WORK/symlink-out" "$escape"
	run -0 sbx-snap import "$WORK/symlink-out/export.tar"
	run -0 sbx-fork snap-symlink-out
	run -0 sbx-run "$output" -- sh -c 'readlink /up /shadow; ls /up/etc/hostname'
	[ "$output" = "$(printf '../../..\n../../../../etc/shadow\n/up/etc/hostname')" ]
	[ -z "$(ls -A "$escape")" ]
}

@test "a sandbox's own symlinks out and paths over 4096 bytes snapshot, verify, fork and read back" {
	writable
	# 20 directories of 250 bytes: a path of over 5000 bytes, made and read by descriptor
	run -0 sbx-run "$ID" -- python3 -c '
import os
os.symlink("../../../../etc/shadow", "/root/shadow-link")
os.symlink("../../../../../../../..", "/root/up")
fd = os.open("/root", os.O_RDONLY)
for i in range(20):
    name = ("%02d" % i) * 125
    os.mkdir(name, dir_fd=fd)
    fd = os.open(name, os.O_RDONLY, dir_fd=fd)
with open(os.open("deep", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as f:
    print("from the bottom", file=f)'
	run -0 sbx-snap "$ID"
	s1=$output
	run -0 sbx-snap verify "$s1"
	read_back() {
		sbx-run "$1" -- python3 -c '
import os
print(os.readlink("/root/shadow-link"), os.readlink("/root/up"))
fd = os.open("/root", os.O_RDONLY)
for i in range(20):
    fd = os.open(("%02d" % i) * 125, os.O_RDONLY, dir_fd=fd)
print(open(os.open("deep", os.O_RDONLY, dir_fd=fd)).read(), end="")'
	}
	run -0 sbx-fork "$s1"
	kid=$output
	run -0 read_back "$kid"
	[ "$output" = "$(printf '../../../../etc/shadow ../../../../../../../..\nfrom the bottom')" ]
	# the next snapshot is a diff on it (its index holds the long path) and keeps both
	run -0 sbx-run "$ID" -- sh -c 'echo more > /root/more'
	run -0 sbx-snap "$ID"
	s2=$output
	run -0 sbx-snap inspect -o json "$s2"
	[[ $output == *"\"parent\":\"$s1\""* ]]
	run -0 sbx-snap verify "$s2"
	run -0 sbx-fork "$s2"
	run -0 read_back "$output"
	[ "$output" = "$(printf '../../../../etc/shadow ../../../../../../../..\nfrom the bottom')" ]
	# and the child's own snapshot stacks on them
	run -0 sbx-snap "$kid"
	run -0 sbx-fork "$output"
	run -0 read_back "$output"
	[ "$output" = "$(printf '../../../../etc/shadow ../../../../../../../..\nfrom the bottom')" ]
}

@test "decompression bombs: a layer may write a bounded multiple of its size; zeros cost nothing" {
	local d escape="$WORK/escape"
	mkdir -p "$escape" "$SBX_ROOT/layers" "$SBX_ROOT/snapshots"
	# 128 MiB of 0xff in 4 KB: refused on import and when planted in the store
	python3 "$FIXTURES/mklayer.py" bomb "$WORK/bomb" "$escape"
	run -65 sbx-snap import "$WORK/bomb/export.tar"
	[[ $output == *"writes more than 64 MiB"*SBX_LAYER_MAX_RATIO* ]]
	[ -z "$(sbx-snap list)" ]
	d=$(cat "$WORK/bomb/digest")
	cp "$WORK/bomb/layer.tar.zst" "$SBX_ROOT/layers/$d.tar.zst"
	cp "$WORK/bomb/snapshot.yaml" "$SBX_ROOT/snapshots/snap-bomb.yaml"
	run -65 sbx-fork snap-bomb
	[ -z "$(ls -A "$SBX_ROOT/cache")" ]
	[ -z "$(ls -A "$SBX_ROOT/sandboxes")" ]
	run -1 sbx-snap verify snap-bomb
	# the operator may allow it: in the policy (limits: layer_ratio), which
	# also bounds the whole (layer_mb), or for one command in the environment
	rm "$SBX_ROOT/snapshots/snap-bomb.yaml"
	printf 'limits: {layer_ratio: 1048576, layer_mb: 64}\n' | policy
	run -65 sbx-snap import "$WORK/bomb/export.tar"
	printf 'limits: {layer_ratio: 1048576}\n' | policy
	run -0 sbx-snap import "$WORK/bomb/export.tar"
	run -0 sbx-snap remove "$output"
	rm "$SBX_ROOT/policy.yaml"
	SBX_LAYER_MAX_RATIO=0 run -0 sbx-snap import "$WORK/bomb/export.tar"
	# a sandbox's own zero-filled files (written, not sparse) fork, read back,
	# and cost no disk in the layer cache
	writable
	run -0 sbx-run "$ID" -- sh -c 'dd if=/dev/zero of=/root/zeros bs=1M count=200 status=none;
	    printf tail >> /root/zeros; head -c 100000 /dev/urandom > /root/random'
	want=$(sbx-run "$ID" -- sha256sum /root/zeros /root/random)
	run -0 sbx-snap "$ID"
	snap=$output
	run -0 sbx-snap verify "$snap"
	run -0 sbx-fork "$snap"
	kid=$output
	run -0 sbx-run "$kid" -- sha256sum /root/zeros /root/random
	[ "$output" = "$want" ]
	d=$(digests "$snap")
	[ "$(du -sk "$SBX_ROOT/cache/$d" | cut -f1)" -lt 1024 ]
}

@test "retention: keep-last 1 keeps the newest snapshot of each lineage and the layers of its chain" {
	writable
	run -0 sbx-run "$ID" -- sh -c 'echo 1 > /root/one'
	run -0 sbx-snap "$ID"; s1=$output
	run -0 sbx-run "$ID" -- sh -c 'echo 4 > /root/four'
	run -0 sbx-snap "$ID"; s4=$output
	run -0 sbx-fork "$s1"; c1=$output
	run -0 sbx-run "$c1" -- sh -c 'echo 2 > /root/two'
	run -0 sbx-snap "$c1"; s2=$output
	run -0 sbx-fork "$s2"; c2=$output
	run -0 sbx-run "$c2" -- sh -c 'echo 3 > /root/three'
	run -0 sbx-snap "$c2"; s3=$output
	run -0 sbx-gc "$c1" "$c2"
	# a live sandbox made from s4 keeps it
	run -0 sbx-fork "$s4"; live=$output
	# the newest of the lineage, and what a live sandbox was made from; not
	# their parents: s3's metadata lists every layer of its chain
	run -0 sbx-gc --keep-last 1
	run -0 sbx-snap list
	[ "$output" = "$(printf '%s\n%s' "$s4" "$s3")" ]
	run -0 sbx-gc "$live"
	run -0 sbx-gc --keep-last 1 --dry-run
	[[ $output == *"would remove snapshot $s4"* ]]
	[ "$(sbx-snap list | wc -l)" -eq 2 ]
	run -0 sbx-gc --keep-last 1
	run -0 sbx-snap list
	[ "$output" = "$s3" ]
	# layers and cache entries no kept snapshot names are gone; s3's chain works
	[ "$(find "$SBX_ROOT/layers" -name '*.tar.zst' | wc -l)" -eq 3 ]
	for c in "$SBX_ROOT"/cache/*; do
		grep -q "$(basename "$c")" "$SBX_ROOT/snapshots/$s3.yaml"
	done
	run -0 sbx-fork "$s3"
	run -0 sbx-run "$output" -- cat /root/one /root/two /root/three
	run -0 sbx-run "$ID" -- cat /root/four    # the first sandbox is still there
	run -0 sbx-snap verify "$s3"
	run -64 sbx-gc --keep-last 0
	run -64 sbx-gc --max-age soon
}

@test "retention by age: --max-age removes older snapshots no live sandbox needs" {
	writable
	first=$ID
	run -0 sbx-snap "$first"; old=$output
	writable
	run -0 sbx-snap "$ID"; chained=$output
	sleep 2
	run -0 sbx-run "$ID" -- touch /root/newer
	run -0 sbx-snap "$ID"; new=$output    # a diff on $chained
	# as old as $chained is now, by the snapshots' own clock: $new is 2 s younger
	age=$(python3 -c 'import datetime, sys, time
t = datetime.datetime.strptime(sys.argv[1], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
print("%.3f" % (time.time() - t.timestamp()))' "$(sbx-snap inspect "$chained" | yaml_value created_at)")
	run -0 sbx-gc --max-age "${age}s"
	run -0 sbx-snap list
	[ "$output" = "$new" ]    # $new stacks on $chained's layer, not its metadata
	[ ! -e "$SBX_ROOT/snapshots/$old.index" ]
	[ ! -e "$SBX_ROOT/snapshots/$chained.index" ]
	run -0 sbx-snap verify "$new"
	run -0 sbx-fork "$new"
	run -0 sbx-run "$output" -- test -e /root/newer
}

@test "the watchdog takes periodic snapshots and keeps snapshot.keep of them" {
	local wd
	provision <<<'read_only_root: false
snapshot: {interval_s: 1, keep: 2}'
	run -0 sbx-run "$ID" -- sh -c 'echo periodic > /root/p'
	for _ in $(seq 80); do
		[ "$(grep -c '"event":"snapshot",.*"outcome":"ok"' "$SBX_ROOT/audit.log")" -ge 3 ] && break
		sleep 0.1
	done
	[ "$(grep -c '"event":"snapshot",.*"outcome":"ok"' "$SBX_ROOT/audit.log")" -ge 3 ]
	# the watchdog stopped, so that its retention removes no snapshot
	# between the listing and the verify (seen on a slow guest)
	wd=$(state "$ID" watchdog_pid)
	kill -9 "$wd"
	for _ in $(seq 100); do gone "$wd" && break; sleep 0.1; done
	gone "$wd"
	run -0 sbx-snap list -o json
	[ "${#lines[@]}" -le 2 ] && [ "${#lines[@]}" -ge 1 ]
	[[ $output == *'"reason":"periodic"'* ]]
	mapfile -t snaps < <(sbx-snap list)
	run -0 sbx-snap verify "${snaps[@]}"
	run -0 sbx-run "$ID" -- cat /root/p    # thawed after each
}

@test "snapshot.keep 1: after periodic snapshots and the one before destroy, one is listed and whole" {
	local n wd
	provision <<<'read_only_root: false
snapshot: {interval_s: 1, keep: 1, before_destroy: true}'
	assert_confined "$ID"
	# changes between the watchdog's snapshots give a chain of several layers
	for n in 1 2 3; do
		run -0 sbx-run "$ID" -- sh -c "echo $n > /root/f$n"
		for _ in $(seq 600); do
			[ "$(grep -c '"event":"snapshot",.*"outcome":"ok"' "$SBX_ROOT/audit.log")" -ge "$n" ] && break
			sleep 0.1
		done
		[ "$(grep -c '"event":"snapshot",.*"outcome":"ok"' "$SBX_ROOT/audit.log")" -ge "$n" ]
	done
	# the watchdog stops here, so that no periodic snapshot follows the last one
	wd=$(state "$ID" watchdog_pid)
	kill -9 "$wd"
	for _ in $(seq 100); do gone "$wd" && break; sleep 0.1; done
	gone "$wd"
	run -0 sbx-run "$ID" -- sh -c 'echo last > /root/last'
	run -0 sbx-gc "$ID"
	run -0 sbx-snap list -o json
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == *'"reason":"before-destroy"'* ]]
	snap=$(sbx-snap list)
	run -0 sbx-snap verify "$snap"
	# no layer that it does not name stays
	for l in "$SBX_ROOT"/layers/*.tar.zst; do
		grep -q "$(basename "$l" .tar.zst)" "$SBX_ROOT/snapshots/$snap.yaml"
	done
	run -0 sbx-fork "$snap"
	run -0 sbx-run "$output" -- cat /root/f1 /root/f2 /root/f3 /root/last
	[ "$output" = "$(printf '1\n2\n3\nlast')" ]
}

@test "snapshot.before_destroy: sbx-gc snapshots a sandbox before it destroys it" {
	provision <<<'read_only_root: false
snapshot: {before_destroy: true}'
	run -0 sbx-run "$ID" -- sh -c 'echo last-words > /root/w'
	run -0 sbx-gc "$ID"
	run -0 sbx-snap list -o yaml
	[[ $output == *"source_sandbox: \"$ID\""* ]]
	[[ $output == *'reason: "before-destroy"'* ]]
	run -0 sbx-fork "$(sbx-snap list)"
	run -0 sbx-run "$output" -- cat /root/w
	[ "$output" = last-words ]
}

@test "sbx-run --snapshot-before captures the sandbox before the command mutates it" {
	writable
	run -0 sbx-run "$ID" -- sh -c 'echo before > /root/f'
	run -0 --separate-stderr sbx-run --snapshot-before "$ID" -- sh -c 'echo after > /root/f; cat /root/f'
	[ "$output" = after ]
	[[ $stderr == *"snapshot snap-"* ]]
	snap=$(sbx-snap list)
	[ "$(state "$ID" last_snapshot_id)" = "$snap" ]
	run -0 sbx-fork "$snap"
	run -0 sbx-run "$output" -- cat /root/f
	[ "$output" = before ]
}

@test "a snapshot freezes the sandbox while it reads the layer, then thaws it" {
	writable
	run -0 sbx-run "$ID" -- sh -c 'sleep 30 > /dev/null 2>&1 & echo started'
	run -137 env SBX_TEST_CRASH_AT=snap-frozen sbx-snap "$ID"
	[ "$(state "$ID" status)" = snapshotting ]
	d=$(find /sys/fs/cgroup -maxdepth 8 -type d -name "$ID" | grep -m1 freezer || true)
	if [ -n "$d" ]; then
		grep -q FROZEN "$d/freezer.state"
	else
		d=$(find /sys/fs/cgroup -maxdepth 8 -type d -name "$ID" | head -1)
		grep -q 'frozen 1' "$d/cgroup.events"
	fi
	run -125 sbx-run "$ID" -- true    # not ready while the snapshot is unfinished
	run -0 sbx-gc
	[ "$(state "$ID" status)" = ready ]
	run -0 timeout 5 sbx-run "$ID" -- echo thawed
}

# tree SANDBOX: every file below /root /home /opt /var with its type, mode,
# owner, size and content digest (what a fork must see as its source did).
tree() {
	sbx-run "$1" -- python3 -c '
import hashlib, os, stat
for top in ("/root", "/home", "/opt", "/var"):
    for d, dirs, files in os.walk(top):
        dirs.sort()
        for n in sorted(dirs + files):
            p = os.path.join(d, n); st = os.lstat(p)
            what = os.readlink(p) if stat.S_ISLNK(st.st_mode) else \
                hashlib.sha256(open(p, "rb").read()).hexdigest()[:16] if stat.S_ISREG(st.st_mode) else ""
            print(p, oct(st.st_mode), st.st_uid, st.st_size if not stat.S_ISDIR(st.st_mode) else 0, what)'
}

@test "incremental snapshots: the next snapshot of a sandbox holds only its changes" {
	writable
	run -0 sbx-run "$ID" -- sh -c 'head -c 2000000 /dev/urandom > /root/big; mkdir -p /root/d /opt/app;
	    echo a > /root/d/a; echo b > /root/b; echo keep > /opt/app/keep; ln -s big /root/link'
	sleep 0.2    # past the racy window: unchanged files can be left out next time
	run -0 sbx-snap "$ID"
	s1=$output
	tree "$ID" > "$WORK/at-s1"
	run -0 sbx-run "$ID" -- sh -c 'echo c > /root/d/c; rm /root/b; chmod 600 /opt/app/keep;
	    rm -r /root/d && mkdir /root/d && echo z > /root/d/z;
	    rm -rf /home && mkdir /home && echo n > /home/new;
	    echo fresh > /root/fresh'
	run -0 sbx-snap "$ID"
	s2=$output
	tree "$ID" > "$WORK/at-s2"
	run -0 sbx-snap inspect -o json "$s2"
	[[ $output == *"\"parent\":\"$s1\""* ]]
	size=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["layers"][-1]["size"])' "$output")
	[ "$size" -lt 20000 ]    # the 2 MB file is not in it again
	# a fork of each snapshot sees exactly what the sandbox had then
	run -0 sbx-fork "$s2"
	run -0 tree "$output"
	diff <(echo "$output") "$WORK/at-s2"
	run -0 sbx-fork "$s1"
	run -0 tree "$output"
	diff <(echo "$output") "$WORK/at-s1"
	# a directory made opaque survives a diff that adds to it
	run -0 sbx-run "$ID" -- sh -c 'echo m > /home/more'
	run -0 sbx-snap "$ID"
	s3=$output
	tree "$ID" > "$WORK/at-s3"
	run -0 sbx-fork "$s3"
	kid=$output
	run -0 tree "$kid"
	diff <(echo "$output") "$WORK/at-s3"
	run -0 sbx-run "$kid" -- ls /home
	[ "$output" = "$(printf 'more\nnew')" ]
	run -0 sbx-snap verify "$s1" "$s2" "$s3"
}

@test "incremental snapshots: a file changed right after a snapshot is not missed" {
	local round
	writable
	for round in 1 2 3 4 5; do
		run -0 sbx-run "$ID" -- sh -c "printf 'v$round' > /root/f"
		run -0 sbx-snap "$ID"
		snap=$output
		run -0 sbx-fork "$snap"
		kid=$output
		run -0 sbx-run "$kid" -- cat /root/f
		[ "$output" = "v$round" ]
		run -0 sbx-gc "$kid"
	done
	run -0 sbx-snap inspect "$snap"
	[ "$(grep -c 'digest:' <<<"$output")" -eq 5 ]    # four diffs on a whole one
}

@test "incremental snapshots: after 8 diffs the next snapshot is whole again" {
	writable
	local round
	for round in $(seq 9); do
		run -0 sbx-run "$ID" -- sh -c "echo $round > /root/n$round"
		run -0 sbx-snap "$ID"
		last=$output
	done
	run -0 sbx-snap inspect -o json "$last"
	[[ $output == *'"parent":null'* ]]
	[ "$(grep -o '"digest"' <<<"$output" | wc -l)" -eq 1 ]
	# a state document fed back as a manifest does not carry the snapshot over
	sbx-inspect "$ID" | sed '/sandbox_id/d' > "$WORK/again.yaml"
	grep -q last_snapshot_id "$WORK/again.yaml"
	provision "$WORK/again.yaml"
	[ -z "$(state "$ID" last_snapshot_id)" ]
}

@test "removing a parent snapshot leaves the snapshots that stack on it whole" {
	writable
	run -0 sbx-run "$ID" -- sh -c 'echo one > /root/one'
	run -0 sbx-snap "$ID"; s1=$output
	run -0 sbx-fork "$s1"; kid=$output
	run -0 sbx-run "$kid" -- sh -c 'echo two > /root/two'
	run -0 sbx-snap "$kid"; s2=$output
	run -75 sbx-snap remove "$s1"    # the child still stands on it
	run -0 sbx-gc "$kid"
	run -0 sbx-snap remove "$s1"
	run -0 sbx-gc --keep-last 1
	run -0 sbx-snap verify "$s2"
	run -0 sbx-fork "$s2"
	run -0 sbx-run "$output" -- cat /root/one /root/two
	[ "$output" = "$(printf 'one\ntwo')" ]
}
