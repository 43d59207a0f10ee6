#!/usr/bin/env bats
# sbx-run: exit statuses, environment, terminal, time limits, one-shots.
load helpers

@test "the command's exit status passes through; signals are 128+N" {
	provision "$MANIFESTS/minimal.yaml"
	run -0 sbx-run "$ID" -- true
	run -7 sbx-run "$ID" -- sh -c 'exit 7'
	run -143 sbx-run "$ID" -- sh -c 'kill -TERM $$'
	run -137 sbx-run "$ID" -- sh -c 'kill -KILL $$'
}

@test "126 for a command that cannot run, 127 for one not found, 125 for sbx's own failures" {
	provision "$MANIFESTS/minimal.yaml"
	run -127 sbx-run "$ID" -- no-such-command
	[[ $output == *"no-such-command"* ]]
	run -126 sbx-run "$ID" -- /etc/passwd
	run -125 sbx-run sbx-00000000 -- true
	run -125 sbx-run ../x -- true
	run -125 sbx-run -w /no/such/dir "$ID" -- true
	# usage errors too: 64 could be the command's own
	run -125 sbx-run "$ID"
	[[ $output == usage:* ]]
	run -125 sbx-run --timeout abc "$ID" -- true
	run -125 sbx-run --no-such-option "$ID" -- true
	run -64 sbx-run "$ID" -- sh -c 'exit 64'
	[ -z "$output" ]
}

@test "rlimits: no core dumps, open files bounded" {
	provision "$MANIFESTS/minimal.yaml"
	run -0 sbx-run "$ID" -- sh -c 'ulimit -c; ulimit -n; ulimit -Hn'
	[ "${lines[0]}" = "0" ]
	[ "${lines[1]}" -le 65536 ]
	[ "${lines[2]}" -le 65536 ]
}

@test "stdin, stdout and stderr pass through" {
	provision "$MANIFESTS/minimal.yaml"
	run -0 bash -c "echo piped | sbx-run $ID -- tr a-z A-Z"
	[ "$output" = "PIPED" ]
	run -0 bash -c "sbx-run $ID -- sh -c 'echo out; echo err >&2' 2>/dev/null"
	[ "$output" = "out" ]
}

@test "env, --env, --workdir and --user reach the command; host env does not" {
	printf 'env: {GREETING: hello, LANG: C.UTF-8}\nworkdir: /tmp\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	export SBX_HOST_SECRET=leak
	run -0 sbx-run -e EXTRA=1 -e GREETING=override "$ID" -- sh -c 'echo $GREETING $EXTRA $LANG $(pwd) ${SBX_HOST_SECRET:-clean}'
	[ "$output" = "override 1 C.UTF-8 /tmp clean" ]
	run -0 sbx-run -w / -u 1000:1000 "$ID" -- sh -c 'echo $(pwd) $(id -u) $(id -g) $HOME'
	[ "$output" = "/ 1000 1000 /home/sandbox" ]
}

@test "--timeout kills the run's processes and exits 124; the sandbox stays usable" {
	provision "$MANIFESTS/minimal.yaml"
	start=$(date +%s%N)
	run -124 sbx-run --timeout 1 --trace "$WORK/t.yaml" "$ID" -- sh -c 'sleep 10 & sleep 10'
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	[ "$ms" -lt 1500 ]
	grep -q 'timed_out: true' "$WORK/t.yaml"
	grep -q 'kill_reason: "timeout"' "$WORK/t.yaml"
	run -0 sbx-run "$ID" -- sh -c 'ps -e | grep -c sleep || true'
	[ "$output" = "0" ]
}

@test "--kill-after: SIGTERM at the timeout, SIGKILL after the grace period" {
	provision "$MANIFESTS/minimal.yaml"
	# a command that exits on SIGTERM is done at the timeout
	start=$(date +%s%N)
	run -124 sbx-run --timeout 1 --kill-after 5 "$ID" -- sleep 10
	[ $(( ($(date +%s%N) - start) / 1000000 )) -lt 2000 ]
	# one that ignores it is killed after the grace period
	start=$(date +%s%N)
	run -124 sbx-run --timeout 1 --kill-after 1 "$ID" -- sh -c 'trap "" TERM; while :; do sleep 0.1; done'
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	[ "$ms" -ge 1900 ] && [ "$ms" -lt 3000 ]
}

@test "-t gives the command a terminal of the sandbox's own" {
	provision "$MANIFESTS/minimal.yaml"
	run -0 script -qec "sbx-run -t $ID -- sh -c 'tty; test -t 0 && echo interactive'" /dev/null
	[[ $output == *"/dev/pts/0"* ]]
	[[ $output == *"interactive"* ]]
	# without -t the command has no controlling terminal, even when the caller has one
	run -0 script -qec "sbx-run $ID -- sh -c 'ps -o tty= -p \$\$'" /dev/null
	[[ $output == *"?"* ]]
}

@test "-t with stdin not a terminal runs without one and warns, never hangs" {
	provision "$MANIFESTS/minimal.yaml"
	echo 'echo hi; test -t 0 || echo no-tty' > "$WORK/in"
	# timeout only guards against the hang this test is about (teardown then
	# destroys the sandbox with whatever still runs in it)
	run -0 --separate-stderr timeout -s KILL 30 sbx-run -t "$ID" -- bash < "$WORK/in"
	[ "$output" = "$(printf 'hi\nno-tty')" ]
	[[ $stderr == *"stdin is not a terminal"*"-t ignored"* ]]
	run -0 timeout -s KILL 30 sbx-run -t "$ID" -- true < /dev/null
	run -0 --separate-stderr bash -c "echo hi | timeout -s KILL 30 sbx-run -t $ID -- cat"
	[ "$output" = hi ]
}

@test "a run that sbx kills says why on stderr, and a run on the ended sandbox names the reason" {
	printf 'resource_allocation: {memory_mb: 128, pids: 64}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	assert_confined "$ID"
	run -137 --separate-stderr sbx-run "$ID" -- python3 -c '
x = []
while True:
    x.append(bytearray(8 << 20))'
	[ "$stderr" = "sbx-run: $ID: killed: memory limit of 128 MiB reached" ]
	run -124 --separate-stderr sbx-run --timeout 0.5 "$ID" -- sleep 10
	[ "$stderr" = "sbx-run: $ID: timed out: --timeout of 0.5 s reached" ]
	# the command's own SIGKILL is no kill by sbx: nothing added
	run -137 --separate-stderr sbx-run "$ID" -- sh -c 'kill -KILL $$'
	[ -z "$stderr" ]
	# the lifetime ends under a run (the watchdog or the run's own bound)
	printf 'resource_allocation: {max_wall_clock_s: 3}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	run -137 --separate-stderr sbx-run "$ID" -- sleep 100
	[ "$stderr" = "sbx-run: $ID: killed: lifetime of 3 s (max_wall_clock_s) ran out" ]
	run -0 sbx-watchdog --once --all
	run -125 sbx-run "$ID" -- true
	[ "$output" = "sbx-run: $ID: sandbox is terminated: lifetime of 3 s (max_wall_clock_s) ran out; destroy it with sbx-gc $ID" ]
}

@test "a run on a paused sandbox says how to resume it" {
	provision "$MANIFESTS/minimal.yaml"
	run -0 sbx-pause "$ID"
	run -125 sbx-run "$ID" -- true
	[ "$output" = "sbx-run: $ID: sandbox is paused; resume it with sbx-pause -r $ID" ]
	run -0 sbx-pause -r "$ID"
	run -0 sbx-run "$ID" -- true
}

@test "one-shot -m: provision, run, trace, destroy" {
	run -0 sbx-run -m "$MANIFESTS/minimal.yaml" --trace "$WORK/t.yaml" -- sh -c 'echo one-shot; hostname'
	[ "${lines[0]}" = "one-shot" ]
	grep -q 'exit_code: 0' "$WORK/t.yaml"
	settled
	run -3 sbx-run -m "$MANIFESTS/minimal.yaml" -- sh -c 'exit 3'
	settled
	run -125 sbx-run -m "$FIXTURES/invalid/alias.yaml" -- true
	[[ $output == *"alias.yaml:1:7"* ]]
}

@test "one-shot -m: the sandbox is marked one_shot, has no watchdog, keeps no trace, and its audit lines chain" {
	sbx-run -m "$MANIFESTS/minimal.yaml" -- sh -c "echo started > $WORK/started; sleep 30" &
	TEST_PIDS+=($!)
	for _ in $(seq 100); do [ -e "$WORK/started" ] && break; sleep 0.05; done
	id=$(sbx-ls -q)
	[[ $id == sbx-* ]]
	run -0 sbx-inspect "$id"
	[[ $output == *"one_shot: true"* ]]
	[[ $output != *"watchdog_pid"* ]]
	[[ $output != *"execution_trace"* ]]
	[[ $output == *'status: "executing"'* ]]
	kill "${TEST_PIDS[0]}"
	wait "${TEST_PIDS[0]}" || true
	settled
	run -0 grep -o "\"sandbox\":\"$id\",\"event\":\"[a-z-]*\"" "$SBX_ROOT/audit.log"
	events=${output//\"sandbox\":\"$id\",\"event\":/}
	[ "$(tr '\n' ' ' <<<"$events")" = '"provision" "run-start" "run-end" "destroy" ' ]
	grep -q "\"sandbox\":\"$id\",\"event\":\"provision\".*one-shot" "$SBX_ROOT/audit.log"
	run -0 sbx-gc --verify-audit
	# a provisioned sandbox is not one
	provision --no-watchdog "$MANIFESTS/minimal.yaml"
	[ "$(state "$ID" one_shot)" = false ]
}

@test "status: executing while a run is going on, ready again when its sbx-run is gone, even by SIGKILL" {
	provision --no-watchdog "$MANIFESTS/minimal.yaml"
	[ "$(state "$ID" status)" = ready ]
	sbx-run "$ID" -- sh -c "echo started > $WORK/a; sleep 30" &
	TEST_PIDS+=($!)
	sbx-run "$ID" -- sh -c "echo started > $WORK/b; sleep 30" &
	TEST_PIDS+=($!)
	for _ in $(seq 100); do [ -e "$WORK/a" ] && [ -e "$WORK/b" ] && break; sleep 0.05; done
	[ "$(state "$ID" status)" = executing ]
	kill "${TEST_PIDS[0]}"
	wait "${TEST_PIDS[0]}" || true
	# one run left
	[ "$(state "$ID" status)" = executing ]
	kill -9 "${TEST_PIDS[1]}"
	wait "${TEST_PIDS[1]}" || true
	# the sandbox's runner ends the run when its client is gone: soon, not at once
	for _ in $(seq 200); do [ "$(state "$ID" status)" = ready ] && break; sleep 0.05; done
	[ "$(state "$ID" status)" = ready ]
	run -0 sbx-run "$ID" -- true
}

# The command line of the host process that started `sleep $1` (its parent).
parent_of_sleep() {
	local p=
	for _ in $(seq 200); do
		p=$(pgrep -x -f "sleep $1" | head -n 1)
		[ -n "$p" ] && break
		sleep 0.05
	done
	[ -n "$p" ] && tr '\0' ' ' < "/proc/$(ps -o ppid= -p "$p" | tr -d ' ')/cmdline"
}

@test "the caller's umask and working directory reach the command through the runner's parked entry, each run its own" {
	provision "$MANIFESTS/minimal.yaml"
	run -0 sbx-run "$ID" -- true
	for mask in 0027 0002 0077; do
		run -0 sh -c "umask $mask && sbx-run \"\$1\" -- sh -c umask" _ "$ID"
		[ "$output" = "$mask" ]
	done
	run -0 sbx-run --workdir /tmp "$ID" -- pwd
	[ "$output" = /tmp ]
	run -0 sbx-run "$ID" -- pwd
	[ "$output" = / ]
	run -125 sbx-run --workdir /nonexistent "$ID" -- pwd
	[[ $output == *"workdir /nonexistent"* ]]
}

@test "a runner's parked entry killed from the host costs no run: the next ones run, and new entries are parked" {
	provision "$MANIFESTS/minimal.yaml"
	run -0 sbx-run "$ID" -- true
	for _ in $(seq 100); do
		old=$(pgrep -f "^sbx-park $ID" | tr '\n' ' ') && [ -n "$old" ] && break
		sleep 0.05
	done
	[ -n "$old" ]
	# shellcheck disable=SC2086
	kill -KILL $old
	# (not $i: bats' run sets it)
	for k in 1 2 3; do
		run -0 sbx-run "$ID" -- echo "run $k"
		[ "$output" = "run $k" ]
	done
	for _ in $(seq 100); do
		new=$(pgrep -f "^sbx-park $ID" | grep -vxF -f <(tr ' ' '\n' <<<"$old" | grep .) | head -n 1) && [ -n "$new" ] && break
		sleep 0.05
	done
	[ -n "$new" ]
}

@test "runs go through the sandbox's runner; a client with other SBX_ settings runs the command itself" {
	provision "$MANIFESTS/minimal.yaml"
	run -0 state "$ID" runner_pid
	[ "$output" -gt 0 ]
	[ -S "$SBX_ROOT/sandboxes/$ID/run.sock" ]
	# the command's process is a child of one of the runner's workers ...
	sbx-run "$ID" -- sleep 31 &
	TEST_PIDS+=($!)
	run -0 parent_of_sleep 31
	[[ $output == "sbx-runner $ID"* ]]
	# ... its status, streams and trace are the client's as ever
	run -3 sbx-run --trace "$WORK/t" "$ID" -- sh -c 'echo out; echo err >&2; exit 3'
	[[ $output == *out*err* ]]
	grep -q '^  exit_code: 3$' "$WORK/t"
	# another environment (SBX_*) is not the runner's to serve: sbx-run does the run
	SBX_OTHER=1 sbx-run "$ID" -- sleep 32 &
	TEST_PIDS+=($!)
	run -0 parent_of_sleep 32
	[[ $output == *sbx-run* ]]
	[[ $output != *sbx-runner* ]]
}

@test "the runner is out of the sandbox's reach: not in its /proc, its PID names nothing, its socket no path; another user namespace's client is not served" {
	provision "$MANIFESTS/minimal.yaml"
	assert_confined "$ID"
	rp=$(state "$ID" runner_pid)
	sock=$SBX_ROOT/sandboxes/$ID/run.sock
	[ -S "$sock" ]
	kill -0 "$rp"
	run -0 sbx-run "$ID" -- sh -c "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '; echo; kill -0 $rp 2>&1 || echo no-such; ls /proc/$rp 2>&1 || echo no-proc; [ -e '$sock' ] || echo no-sock; ls -d '$SBX_ROOT' 2>&1 || echo no-root"
	[[ $output != *sbx-runner* ]]
	[[ $output == *no-such* ]]
	[[ $output == *no-proc* ]]
	[[ $output == *no-sock* ]]
	[[ $output == *no-root* ]]
	# a client that reaches the socket from another user namespace is not
	# served: it runs the command itself, and cannot
	run -125 unshare -U -r env PATH="$PATH" SBX_ROOT="$SBX_ROOT" sbx-run "$ID" -- touch /tmp/ran
	[[ $output == *"join the sandbox"* ]]
	run -1 sbx-run "$ID" -- test -e /tmp/ran
	kill -0 "$rp"
}

@test "an expired sandbox refuses runs even with no watchdog" {
	printf 'resource_allocation: {max_wall_clock_s: 1, pids: 16}\n' > "$WORK/m.yaml"
	provision --no-watchdog "$WORK/m.yaml"
	sleep 1.2
	run -125 sbx-run "$ID" -- true
	[[ $output == *"expired"* ]]
	run -0 sbx-gc
	[ -z "$(sbx-ls -q)" ]
}

@test "the last run's trace is kept in the state document" {
	provision "$MANIFESTS/minimal.yaml"
	run -5 sbx-run "$ID" -- sh -c 'exit 5'
	run -0 sbx-inspect "$ID"
	[[ $output == *"execution_trace:"* ]]
	[[ $output == *"exit_code: 5"* ]]
	# the next run's replaces it
	run -7 sbx-run "$ID" -- sh -c 'exit 7'
	run -0 sbx-inspect "$ID"
	[[ $output == *"exit_code: 7"* ]]
	[[ $output != *"exit_code: 5"* ]]
	# a torn trace (a crash mid-write) is left out, never an error, and the next run mends it
	printf 'execution_trace:\n  exit_co' > "$SBX_ROOT/sandboxes/$ID/trace.yaml"
	run -0 sbx-inspect "$ID"
	[[ $output != *"execution_trace"* ]]
	[[ $output == *"sandbox_id: \"$ID\""* ]]
	run -0 sbx-run "$ID" -- true
	run -0 sbx-inspect -o json "$ID"
	[[ $output == *'"exit_code":0'* ]]
}
