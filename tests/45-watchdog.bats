#!/usr/bin/env bats
# The watchdog: lifetimes enforced from outside, memory warnings, pause/resume.
load helpers

@test "max_wall_clock_s 2: a sandbox running sleep 100 ends at its deadline, within 0.5 s by sbx's clock, reason wall-clock" {
	printf 'resource_allocation: {max_wall_clock_s: 2, pids: 32, memory_mb: 128}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	pid=$(state "$ID" pid)
	spec=$(state "$ID" cgroup)
	sbx-run "$ID" -- sleep 100 > /dev/null 2>&1 &
	TEST_PIDS+=($!)
	# the bound only keeps a hang from lasting: the figures below are sbx's
	run -0 wait_gone "$pid" 60
	run -0 sbx-inspect "$ID"
	[[ $output == *'status: "terminated"'* ]]
	[[ $output == *'kill_reason: "wall-clock"'* ]]
	born=$(ms_of "$(state "$ID" created_at)")
	due=$(ms_of "$(state "$ID" expires_at)")
	killed=$(ms_of "$(state "$ID" killed_at)")
	echo "deadline $((due - born)) ms after provisioning, killed $((killed - due)) ms after it"
	[ $((due - born)) -eq 2000 ]
	[ "$killed" -ge "$due" ] && [ $((killed - due)) -lt 500 ]
	grep -q '"event":"kill".*"detail":"wall-clock"' "$SBX_ROOT/audit.log"
	# its work done, the watchdog leaves too
	run -0 wait_gone "$(state "$ID" watchdog_pid)" 2
	# nothing of it stays in the kernel
	local d
	[ -n "$(cg_dirs "$spec")" ]
	for d in $(cg_dirs "$spec"); do
		[ ! -d "$d" ]
	done
}

@test "a sandbox that forks as fast as it can while the deadline passes is still killed" {
	# long enough for the first run under emulation too (make check-v2)
	printf 'resource_allocation: {max_wall_clock_s: 6, pids: 64, memory_mb: 256}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	assert_confined "$ID"
	# the bound: pids.max holds inside before anything forks freely
	run sbx-run "$ID" -- sh -c 'for i in $(seq 100); do sleep 5 >/dev/null 2>&1 & done 2>&1 | grep -c fork'
	[ "$output" -gt 0 ]
	pid=$(state "$ID" pid)
	spec=$(state "$ID" cgroup)
	sbx-run "$ID" -- sh -c 'while :; do (:) & done' > /dev/null 2>&1 &
	TEST_PIDS+=($!)
	run -0 wait_gone "$pid" 60
	[[ $(sbx-inspect "$ID") == *'kill_reason: "wall-clock"'* ]]
	local d
	[ -n "$(cg_dirs "$spec")" ]
	for d in $(cg_dirs "$spec"); do
		[ ! -d "$d" ]
	done
}

@test "with its watchdog SIGKILLed, the deadline still holds: the run is bounded, later runs refused" {
	printf 'resource_allocation: {max_wall_clock_s: 2, pids: 32}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	wd=$(state "$ID" watchdog_pid)
	[ -n "$wd" ] && kill -0 "$wd"
	kill -9 "$wd"
	run -137 sbx-run --trace "$WORK/t.yaml" "$ID" -- sleep 100
	grep -q 'kill_reason: "wall-clock"' "$WORK/t.yaml"
	run -125 sbx-run "$ID" -- true
	# and the next sweep, or a --once watchdog, reaps it
	run -0 sbx-watchdog --once --all
	run -0 sbx-inspect "$ID"
	[[ $output == *'kill_reason: "wall-clock"'* ]]
}

@test "with its watchdog SIGKILLed, an idle sandbox still ends at its deadline: its init leaves and takes everything with it" {
	printf 'resource_allocation: {max_wall_clock_s: 2, pids: 32}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	pid=$(state "$ID" pid)
	spec=$(state "$ID" cgroup)
	kill -9 "$(state "$ID" watchdog_pid)"
	# no run, no watchdog, no sweep: init alone keeps the deadline (a generous bound)
	run -0 wait_gone "$pid" 30
	[ "$(state "$ID" status)" = terminated ]
	[[ $(sbx-inspect "$ID") == *'kill_reason: "wall-clock"'* ]]
	run -125 sbx-run "$ID" -- true
}

@test "sbx-watchdog --all supervises sandboxes provisioned without their own" {
	printf 'resource_allocation: {max_wall_clock_s: 1, pids: 32}\n' > "$WORK/m.yaml"
	provision --no-watchdog "$WORK/m.yaml"
	a=$ID
	provision --no-watchdog "$WORK/m.yaml"
	b=$ID
	[ -z "$(state "$a" watchdog_pid)" ]
	sbx-watchdog --all &
	TEST_PIDS+=($!)
	run -0 wait_gone "$(state "$a" pid)" 4
	run -0 wait_gone "$(state "$b" pid)" 4
	[[ $(sbx-inspect "$a") == *'kill_reason: "wall-clock"'* ]]
	[[ $(sbx-inspect "$b") == *'kill_reason: "wall-clock"'* ]]
}

@test "the watchdog is invisible and unreachable from inside" {
	provision "$MANIFESTS/minimal.yaml"
	assert_confined "$ID"
	wd=$(state "$ID" watchdog_pid)
	run -0 sbx-run "$ID" -- sh -c "ps -e -o comm; kill -9 $wd 2>&1; echo rc=\$?"
	[[ $output != *"sbx-watchdog"* ]]
	[[ $output == *"rc=1"* || $output == *"No such process"* ]]
	kill -0 "$wd"
}

@test "memory warnings at 80% then 95% reach the audit log before the OOM kill" {
	printf 'resource_allocation: {memory_mb: 200, pids: 32}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	assert_confined "$ID"
	# 2 MiB every 50 ms: the last 5% before the limit take about 250 ms, more
	# than twice the watchdog's 100 ms sampling period
	run -137 sbx-run --trace "$WORK/t.yaml" "$ID" -- python3 -c '
import time
x = []
while True:
    x.append(bytearray(2 << 20)); x[-1][::4096] = b"\1" * 512
    time.sleep(0.05)'
	grep -q 'oom_killed: true' "$WORK/t.yaml"
	grep '"event":"memory-warning"' "$SBX_ROOT/audit.log"
	w80=$(grep -n '"event":"memory-warning".*at 80%' "$SBX_ROOT/audit.log" | head -1 | cut -d: -f1)
	w95=$(grep -n '"event":"memory-warning".*at 95%' "$SBX_ROOT/audit.log" | head -1 | cut -d: -f1)
	end=$(grep -n '"event":"run-end"' "$SBX_ROOT/audit.log" | tail -1 | cut -d: -f1)
	[ -n "$w80" ] && [ -n "$w95" ] && [ "$w80" -lt "$w95" ] && [ "$w95" -lt "$end" ]
	[[ $(sbx-inspect "$ID") == *"last_warning:"*"95%"* ]]
	# where the kernel measures memory pressure (cgroup v2 with PSI), the
	# warnings say what the shortage costs
	if [ -f "/sys/fs/cgroup$(state "$ID" cgroup | sed -n 's/^2://p')/memory.pressure" ]; then
		grep -q '"event":"memory-warning".*at 95%.*memory pressure (PSI, avg10): some [0-9.]*%, full [0-9.]*%' "$SBX_ROOT/audit.log"
	fi
}

@test "pause stops a CPU-bound loop's CPU time from growing; resume continues it" {
	printf 'resource_allocation: {pids: 32}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	sbx-run "$ID" -- sh -c 'while :; do :; done' > /dev/null 2>&1 &
	TEST_PIDS+=($!)
	sleep 0.5
	spec=$(state "$ID" cgroup)
	cg_cpu_ns "$spec"
	run -0 sbx-pause "$ID"
	[[ $(sbx-inspect "$ID") == *'status: "paused"'* ]]
	run -125 sbx-run "$ID" -- true
	a=$(cg_cpu_ns "$spec"); sleep 1; b=$(cg_cpu_ns "$spec")
	echo "paused: $a -> $b"
	[ $((b - a)) -lt 20000000 ]
	run -0 sbx-pause --resume "$ID"
	[[ $(sbx-inspect "$ID") == *'status: "executing"'* ]]
	a=$(cg_cpu_ns "$spec"); sleep 1; b=$(cg_cpu_ns "$spec")
	echo "resumed: $a -> $b"
	[ $((b - a)) -gt 500000000 ]
	run -0 sbx-run "$ID" -- true
}

@test "pause of a paused sandbox, resume of a ready one: illegal transitions are refused" {
	provision "$MANIFESTS/minimal.yaml"
	run -65 sbx-pause --resume "$ID"
	run -0 sbx-pause "$ID"
	run -65 sbx-pause "$ID"
	run -0 sbx-gc "$ID"
}

@test "--extend: more lifetime for a live sandbox, within the policy; its init (no watchdog here) learns it, nothing inside can move it" {
	printf 'limits: {max_wall_clock_s: 60}\n' | policy
	# A sandbox whose processes try every way to extend init's deadline
	# themselves: kill(2) (their PID shows), a queued signal claiming to come
	# from outside (SI_QUEUE, PID 0: not SI_USER) and one claiming SI_USER
	# (the kernel refuses it). Past its 3 s it must be gone all the same.
	run -0 sbx-provision --no-watchdog <<<'resource_allocation: {max_wall_clock_s: 3}'
	forger=$output
	kill -0 "$(state "$forger" pid)"
	run -0 sbx-run "$forger" -- python3 -c '
import ctypes, os, signal, struct
libc = ctypes.CDLL(None, use_errno=True)
for k in range(25):
    os.kill(1, signal.SIGRTMIN + k)
    for code in (-1, 0):          # SI_QUEUE, SI_USER
        info = struct.pack("iii4xii", signal.SIGRTMIN + k, 0, code, 0, 0).ljust(128, b"\0")
        r = libc.syscall(129, 1, signal.SIGRTMIN + k, info)   # rt_sigqueueinfo
        assert code == -1 or r == -1, "SI_USER was let through"
print("sent")'
	[ "$output" = sent ]
	run -0 sbx-provision --no-watchdog <<<'resource_allocation: {max_wall_clock_s: 3}'
	ID=$output
	old=$(state "$ID" expires_at)
	run -0 sbx-watchdog --extend 30 "$ID"
	[ "$(date -d "$output" +%s)" -eq $(( $(date -d "$old" +%s) + 30 )) ]
	[ "$(state "$ID" expires_at)" = "$output" ]
	[ "$(state "$ID" max_wall_clock_s)" = 33 ]
	run -77 sbx-watchdog --extend 60 "$ID"
	[[ $output == *"max_wall_clock_s: 93: not allowed by the policy"* ]]
	grep -q '"event":"extend"' "$SBX_ROOT/audit.log"
	# past the first deadline: the forger's init has left (nothing inside
	# moved it), the extended one's keeps its sandbox (the only enforcer here)
	now=$(date +%s)
	sleep $(( $(date -d "$old" +%s) + 2 - now > 0 ? $(date -d "$old" +%s) + 2 - now : 0 ))
	run -0 sbx-run "$ID" -- echo alive
	kill -0 "$(state "$ID" pid)"
	# (gone: a zombie counts, this host's PID 1 reaps its orphans late)
	gone "$(state "$forger" pid)"
	run -66 sbx-watchdog --extend 5 sbx-00000000
	run -64 sbx-watchdog --extend 0 "$ID"
	sbx-gc "$ID" >/dev/null
	run -66 sbx-watchdog --extend 5 "$ID"
}
