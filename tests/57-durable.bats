#!/usr/bin/env bats
# Durable by construction: a step repeated with its caller's key gives the
# first result and does no work again, whatever killed the caller on the way.
# shellcheck disable=SC2154 # $stderr comes from run --separate-stderr
load helpers

json_get() {
	python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"
}

# ran FILE: how many times a step appended its line to FILE inside $ID.
ran() {
	sbx-run "$ID" -- sh -c "cat $1 2>/dev/null | wc -l"
}

# until_running KEY...: wait until the sandbox has a running run for each key.
until_running() {
	local k
	for k in "$@"; do
		until sbx-ls --runs "$ID" -o json | grep -q "\"once_key\":\"$k\",\"state\":\"running\""; do
			sleep 0.05
		done
	done
}

@test "sbx-run --once: a repeat replays the recorded result without running again; another input under the key is 65" {
	provision "$MANIFESTS/minimal.yaml"
	step='echo run >> /tmp/n; echo out; echo err >&2; exit 3'
	run -3 --separate-stderr sbx-run --once wf-1/step-a "$ID" -- sh -c "$step"
	[ "$output" = out ] && [ "$stderr" = err ]
	run -3 --separate-stderr sbx-run --once wf-1/step-a "$ID" -- sh -c "$step"
	[ "$output" = out ] && [ "$stderr" = err ]
	run -0 ran /tmp/n
	[ "$output" = 1 ]
	# the object: the same both times, with the streams' digests
	run -3 sbx-run --once wf-1/step-a -o json "$ID" -- sh -c "$step"
	first=$output
	[ "$(json_get 'd["stdout_sha256"], d["stderr_bytes"], d["trace"]["exit_code"]' <<<"$first")" = \
	    "$(echo out | sha256sum | cut -d' ' -f1) 4 3" ]
	run -3 sbx-run --once wf-1/step-a -o json "$ID" -- sh -c "$step"
	[ "$output" = "$first" ]
	run -3 sbx-run --once wf-1/step-a --trace "$WORK/trace" "$ID" -- sh -c "$step"
	[ "$(yaml_value exit_code "$WORK/trace")" = 3 ]
	# another command, environment or sandbox under the key: 65, naming it, nothing run
	run -65 sbx-run --once wf-1/step-a "$ID" -- sh -c 'echo run >> /tmp/n'
	[[ $output == *"whose command was"* ]]
	run -65 sbx-run --once wf-1/step-a -e A=1 "$ID" -- sh -c "$step"
	[[ $output == *"whose env was [], not [\"A=1\"]"* ]]
	other=$ID
	provision "$MANIFESTS/minimal.yaml"
	run -65 sbx-run --once wf-1/step-a "$ID" -- sh -c "$step"
	[[ $output == *"whose sandbox_id was \"$other\""* ]]
	ID=$other
	run -0 ran /tmp/n
	[ "$output" = 1 ]
	run -0 sbx-ls --runs "$ID" -o json
	[ "$(json_get 'd["once_key"], d["state"], d["exit_code"]' <<<"$output")" = "wf-1/step-a exited 3" ]
	# a key is 1 to 256 bytes without control characters
	run -125 sbx-run --once '' "$ID" -- true
	run -125 sbx-run --once "$(printf 'a\nb')" "$ID" -- true
	run -125 sbx-run --once k -m "$MANIFESTS/minimal.yaml" -- true
	[[ $output == *"not with -m"* ]]
}

@test "sbx-run --once SIGKILLed while its command runs, before it started, or twice at once: one run, one result" {
	provision "$MANIFESTS/minimal.yaml"
	# the caller killed mid-run: the run goes on, the repeat waits for it
	sbx-run --once k-mid "$ID" -- sh -c 'echo run >> /tmp/mid; sleep 1; echo done; exit 5' &
	caller=$!
	TEST_PIDS+=("$caller")
	until_running k-mid
	kill -KILL "$caller"
	run -5 sbx-run --once k-mid "$ID" -- sh -c 'echo run >> /tmp/mid; sleep 1; echo done; exit 5'
	[ "$output" = "done" ]
	run -0 ran /tmp/mid
	[ "$output" = 1 ]
	# killed when the key had its run's directory but no run yet: the repeat starts it
	run -137 env SBX_TEST_CRASH_AT=once-made sbx-run --once k-early "$ID" -- sh -c 'echo run >> /tmp/early'
	run -0 ran /tmp/early
	[ "$output" = 0 ]
	run -0 sbx-run --once k-early "$ID" -- sh -c 'echo run >> /tmp/early'
	run -0 sbx-run --once k-early "$ID" -- sh -c 'echo run >> /tmp/early'
	run -0 ran /tmp/early
	[ "$output" = 1 ]
	# two callers with one key at the same moment: one run, both get its result
	for i in 1 2 3; do
		sbx-run --once k-race "$ID" -- sh -c 'echo run >> /tmp/race; echo $$' > "$WORK/race.$i" &
		TEST_PIDS+=($!)
	done
	wait "${TEST_PIDS[@]: -3}"
	run -0 ran /tmp/race
	[ "$output" = 1 ]
	[ -s "$WORK/race.1" ] && cmp "$WORK/race.1" "$WORK/race.2" && cmp "$WORK/race.1" "$WORK/race.3"
}

@test "sbx-run --once: INT and TERM to the caller are the run's, and the repeat replays them; a lost run is 125" {
	provision "$MANIFESTS/minimal.yaml"
	sbx-run --once k-term "$ID" -- sleep 60 &
	caller=$!
	TEST_PIDS+=("$caller")
	until_running k-term
	kill -TERM "$caller"
	rc=0
	wait "$caller" || rc=$?
	[ "$rc" = 143 ]
	run -143 sbx-run --once k-term "$ID" -- sleep 60
	# the process that ran it killed (as a host restart would): unknown, never run twice
	sbx-run --once k-lost "$ID" -- sleep 60 &
	TEST_PIDS+=($!)
	until_running k-lost
	sup=$(sbx-ls --runs "$ID" -o json | python3 -c '
import json, sys
for l in sys.stdin:
    d = json.loads(l)
    if d.get("once_key") == "k-lost": print(d["pid"])')
	[ -n "$sup" ]
	kill -KILL "$sup"
	run -125 sbx-run --once k-lost "$ID" -- sleep 60
	[[ $output == *"left no result"*"whether the command ran is unknown"* ]]
}

@test "sbx-run --once: a TERM that comes while the command's process sets itself up ends it all the same (143)" {
	provision "$MANIFESTS/minimal.yaml"
	# held in the sandbox's namespaces before its exec: a signal then was
	# caught by the handler it inherited from its supervisor, and lost
	# (its release file is the sandbox's /tmp/go: it has joined the mounts)
	SBX_TEST_PAUSE_AT="run-joined:/tmp/go" sbx-run --once k-early "$ID" -- sleep 60 &
	caller=$!
	TEST_PIDS+=("$caller")
	until_running k-early
	sup=$(sbx-ls --runs "$ID" -o json | json_get 'd["pid"]')
	until pgrep -P "$sup" >/dev/null; do sleep 0.05; done
	kill -TERM "$caller"
	# it ends by the signal where it waits; were it lost, the release would
	# let sleep 60 run (and this test wait for it)
	for _ in $(seq 100); do kill -0 "$caller" 2>/dev/null || break; sleep 0.1; done
	sbx-run "$ID" -- touch /tmp/go
	rc=0
	wait "$caller" || rc=$?
	[ "$rc" = 143 ]
	run -143 sbx-run --once k-early "$ID" -- sleep 60
}

# watchdogs PATTERN: how many watchdog processes watch the sandbox named so.
watchdogs() {
	pgrep -cxf "sbx-watchdog $1" || true
}

@test "provision, snapshot, fork, restore, select and gc repeated with their keys, after a success and after a SIGKILL at each step: one result each, the same output; a key clash is 65" {
	local point
	# provision: the sandbox_id is the key; a half-made one is made whole
	for point in provision-dir provision-state create-cgroup create-cloned provision-created \
	    provision-watchdog; do
		printf 'sandbox_id: key-%s\nread_only_root: false\nresource_allocation: {memory_mb: 128, pids: 32}\nfork: {max_fork_factor: 8}\n' \
		    "$point" > "$WORK/m.yaml"
		run -137 env SBX_TEST_CRASH_AT=$point sbx-provision "$WORK/m.yaml"
		run -0 sbx-provision "$WORK/m.yaml"
		echo "after a crash at $point"
		[ "$output" = "key-$point" ]
		[ "$(state "key-$point" status)" = ready ]
		run -0 sbx-provision "$WORK/m.yaml"
		[ "$output" = "key-$point" ]
		run -0 sbx-run "key-$point" -- true
		# the watchdog of the half-made one leaves: one watches it
		for _ in $(seq 50); do [ "$(watchdogs "key-$point")" = 1 ] && break; sleep 0.1; done
		[ "$(watchdogs "key-$point")" = 1 ]
	done
	sed -i 's/pids: 32/pids: 33/' "$WORK/m.yaml"
	run -65 sbx-provision "$WORK/m.yaml"
	[[ $output == *"resource_allocation.pids differs"* ]]
	src=key-provision-dir
	run -0 sbx-run "$src" -- sh -c 'echo one > /root/f'
	# snapshot: --id
	for point in snap-frozen snap-packed snap-layer snap-saved; do
		run -137 env SBX_TEST_CRASH_AT=$point sbx-snap --id "snap-$point" "$src"
		run -0 sbx-snap --id "snap-$point" "$src"
		echo "after a crash at $point"
		[ "$output" = "snap-$point" ]
		run -0 sbx-snap --id "snap-$point" "$src"
		[ "$output" = "snap-$point" ]
		[ "$(state "$src" status)" = ready ]
		[ "$(sbx-snap list | grep -c "^snap-$point\$")" = 1 ]
	done
	run -0 sbx-snap --id snap-a "$src"
	run -0 sbx-snap --id snap-a "$src"
	[ "$output" = snap-a ]
	run -65 sbx-snap --id snap-a key-provision-state
	# fork: --id PREFIX
	for point in cache-extracted fork-child; do
		run -137 env SBX_TEST_CRASH_AT=$point sbx-fork --id kid -n 2 snap-a
		echo "after a crash at $point"
	done
	run -0 sbx-fork --id kid -n 2 snap-a
	[ "$output" = "$(printf 'kid-1\nkid-2')" ]
	run -0 sbx-fork --id kid -n 2 snap-a
	[ "$output" = "$(printf 'kid-1\nkid-2')" ]
	[ "$(sbx-ls -q | grep -c '^kid-')" = 2 ]
	# the audit log has the fork that made a child (if it lived to say so),
	# not the repeats that made none
	[ "$(grep -c '"event":"fork","correlation_id":"[^"]*","outcome":"ok"' "$SBX_ROOT/audit.log")" -le 1 ]
	run -0 sbx-run kid-2 -- cat /root/f
	[ "$output" = one ]
	run -0 sbx-snap --id snap-b key-provision-state
	run -65 sbx-fork --id kid -n 2 snap-b
	[[ $output == *"rootfs differs"* ]]
	# restore: --id SANDBOX
	run -0 sbx-snap restore --id back snap-a
	[ "$output" = back ]
	run -0 sbx-snap restore --id back snap-a
	[ "$output" = back ]
	run -65 sbx-snap restore --id back snap-b
	# select: --id SNAP, the new head
	run -0 sbx-fork --select kid-1 --id head
	[ "$output" = head ]
	run -0 sbx-fork --select kid-1 --id head
	[ "$output" = head ]
	run -0 sbx-ls -q
	[[ $'\n'$output$'\n' != *$'\n'kid-2$'\n'* ]]
	[ "$(sbx-snap list | grep -c '^head$')" = 1 ]
	[ "$(grep -c '"event":"select","correlation_id":"[^"]*","outcome":"ok"' "$SBX_ROOT/audit.log")" = 1 ]
	run -65 sbx-fork --select kid-1 --id snap-b
	# gc: the sandbox's ID; destroyed already is done
	for point in destroy-cleanup destroy-killed remove-tombstone; do
		printf 'sandbox_id: key-%s\n' "$point" > "$WORK/gc.yaml"
		run -0 sbx-provision "$WORK/gc.yaml"
		run -0 sbx-run "key-$point" -- sh -c 'sleep 60 > /dev/null 2>&1 &'
		run -137 env SBX_TEST_CRASH_AT=$point sbx-gc "key-$point"
		run -0 sbx-gc "key-$point"
		echo "after a crash at $point"
		[ "$output" = "key-$point" ]
		run -0 sbx-gc "key-$point"
		[ "$output" = "key-$point" ]
		run -66 sbx-inspect "key-$point"
	done
	run -66 sbx-gc never-made
	# a name destroyed and made again is a sandbox again
	printf 'sandbox_id: key-destroy-killed\n' > "$WORK/again.yaml"
	run -0 sbx-provision "$WORK/again.yaml"
	run -0 sbx-run key-destroy-killed -- true
}

# progress_ok FILE: every line of FILE is a JSON object of one verb's
# progress, its percent never falls, and the last says done at 100%.
progress_ok() {
	python3 - "$1" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert lines, "no progress lines"
pc = [l["percent"] for l in lines]
assert pc == sorted(pc), pc
assert all(l["elapsed_s"] >= 0 and l["progress"] == lines[0]["progress"] for l in lines)
assert all("done" in l and "total" in l and "unit" in l for l in lines[:-1])
last = lines[-1]
assert last["phase"] == "done" and last["ok"] is True and last["percent"] == 100, last
print(" ".join(l["phase"] for l in lines))
PY
}

@test "--progress json: snapshot, fork, restore, export and import report their phases as JSON lines up to 100%" {
	printf 'read_only_root: false\n' > "$WORK/w.yaml"
	provision "$WORK/w.yaml"
	run -0 sbx-run "$ID" -- sh -c 'head -c 3000000 /dev/urandom > /root/data'
	sbx-snap --progress json --id p1 "$ID" 2> "$WORK/snap.err" > "$WORK/snap.out"
	[ "$(cat "$WORK/snap.out")" = p1 ]
	run -0 progress_ok "$WORK/snap.err"
	[ "$output" = "freeze memory pack save done" ]
	sbx-fork --progress json -n 2 p1 2> "$WORK/fork.err" > /dev/null
	run -0 progress_ok "$WORK/fork.err"
	[[ $output == "snapshot cache children "*"done" ]]
	grep -q '"phase":"children","done":2,"total":2,"unit":"sandboxes"' "$WORK/fork.err"
	sbx-snap restore --progress json p1 2> "$WORK/restore.err" > /dev/null
	run -0 progress_ok "$WORK/restore.err"
	sbx-snap export --progress json -f "$WORK/p1.tar" p1 2> "$WORK/export.err"
	run -0 progress_ok "$WORK/export.err"
	size=$(python3 -c 'import json,sys; print(max(json.loads(l).get("total") or 0 for l in open(sys.argv[1])))' "$WORK/export.err")
	[ "$size" -gt 3000000 ]
	# into a state root of its own, inside $WORK: the teardown removes it
	mkdir -m 700 "$WORK/other"
	SBX_ROOT=$WORK/other sbx-snap import --progress json "$WORK/p1.tar" \
	    2> "$WORK/import.err" > /dev/null
	run -0 progress_ok "$WORK/import.err"
	run -64 sbx-snap list --progress json
	run -64 sbx-snap --progress fast "$ID"
}

@test "SIGTERM mid-snapshot and SIGINT mid-fork stop cleanly (143, 130): the sandbox is ready, nothing half made stays, the same command then does the work" {
	printf 'read_only_root: false\nfork: {max_fork_factor: 8}\n' > "$WORK/w.yaml"
	provision "$WORK/w.yaml"
	run -0 sbx-run "$ID" -- sh -c 'echo kept > /root/f'
	SBX_TEST_PAUSE_AT="snap-frozen:$WORK/go" sbx-snap --progress json --id cut "$ID" \
	    2> "$WORK/cut.err" &
	snap=$!
	TEST_PIDS+=("$snap")
	until [ -e "$WORK/go.paused" ]; do sleep 0.05; done
	[ "$(state "$ID" status)" = snapshotting ]
	kill -TERM "$snap"
	touch "$WORK/go"
	rc=0
	wait "$snap" || rc=$?
	[ "$rc" = 143 ]
	grep -q 'interrupted by SIGTERM' "$WORK/cut.err"
	grep '^{' "$WORK/cut.err" | tail -n 1 | grep -q '"phase":"failed","ok":false'
	[ -z "$(find "$SBX_ROOT/layers" -name '.tmp-*' -o -name '*.tmp.*' 2>/dev/null)" ]
	[ "$(state "$ID" status)" = ready ]
	run -0 timeout 10 sbx-run "$ID" -- cat /root/f
	[ "$output" = kept ]
	[ -z "$(sbx-snap list)" ]
	run -0 sbx-snap --id cut "$ID"
	[ "$output" = cut ]
	# a fork stopped before its children are made: none made, the repeat makes them
	rm -f "$WORK/go" "$WORK/go.paused"
	SBX_TEST_PAUSE_AT="fork-children:$WORK/go" sbx-fork --id kid -n 3 cut > "$WORK/fork.out" \
	    2> "$WORK/fork.err" &
	fork=$!
	TEST_PIDS+=("$fork")
	until [ -e "$WORK/go.paused" ]; do sleep 0.05; done
	kill -INT "$fork"
	touch "$WORK/go"
	rc=0
	wait "$fork" || rc=$?
	[ "$rc" = 130 ]
	[ ! -s "$WORK/fork.out" ]
	run -0 sbx-ls -q
	[[ $'\n'$output != *$'\n'kid-* ]]
	run -0 sbx-fork --id kid -n 3 cut
	[ "$output" = "$(printf 'kid-1\nkid-2\nkid-3')" ]
}
