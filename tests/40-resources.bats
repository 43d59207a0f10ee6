#!/usr/bin/env bats
# Resource limits, enforced by the kernel's cgroups and measured in the trace.
load helpers

# field FILE KEY: a value from a trace file
field() {
	yaml_value "$2" "$1"
}

@test "a memory hog is OOM-killed: exit 137, oom_killed true, kill_reason memory" {
	printf 'resource_allocation: {memory_mb: 128, pids: 64}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	assert_confined "$ID"
	run -137 sbx-run --trace "$WORK/t.yaml" "$ID" -- python3 -c '
x = []
while True:
    x.append(bytearray(8 << 20))'
	[ "$(field "$WORK/t.yaml" oom_killed)" = "true" ]
	[ "$(field "$WORK/t.yaml" signal)" = "9" ]
	[ "$(field "$WORK/t.yaml" kill_reason)" = "memory" ]
	# the sandbox survives its run's OOM
	run -0 sbx-run "$ID" -- echo alive
}

@test "the OOM killer takes the run's processes, never init: a tmpfs filled to the memory limit leaves the sandbox alive" {
	printf 'resource_allocation: {memory_mb: 128, pids: 64}\ntmpfs: [{guest: /tmp, size_mb: 512}]\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	assert_confined "$ID"
	pid=$(state "$ID" pid)
	# tmpfs pages are charged to the sandbox and belong to no process: small
	# writers, each smaller than init, so only oom_score_adj keeps init alive
	run -137 sbx-run --trace "$WORK/t.yaml" "$ID" -- sh -c 'i=0
		while [ $i -lt 400 ]; do head -c 1048576 /dev/zero > /tmp/f$i || exit $?; i=$((i + 1)); done'
	[ "$(field "$WORK/t.yaml" oom_killed)" = "true" ]
	[ "$(field "$WORK/t.yaml" kill_reason)" = "memory" ]
	[[ $(ps -o stat= -p "$pid") != Z* ]]
	[ "$(state "$ID" status)" = ready ]
	run -0 sbx-run "$ID" -- cat /proc/1/oom_score_adj /proc/self/oom_score_adj
	[ "${lines[1]}" = 1000 ]
}

@test "a bounded fork bomb hits pids.max and the host is unaffected" {
	printf 'resource_allocation: {pids: 32, memory_mb: 256}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	assert_confined "$ID"
	run sbx-run --timeout 30 --trace "$WORK/t.yaml" "$ID" -- sh -c 'i=0; while [ $i -lt 200 ]; do sleep 3 & i=$((i+1)); done 2>&1; wait'
	[[ $output == *"Cannot fork"* ]]
	# the kernel counted the refusals, and the trace reports them
	[ "$(field "$WORK/t.yaml" pids_limit_hits)" -gt 0 ]
	# the host forks as before, and the sandbox is usable once the run ended
	run -0 sh -c 'for i in 1 2 3 4 5 6 7 8; do true & done; wait; echo host-ok'
	run -0 sbx-run "$ID" -- echo usable
}

@test "cpu_cores 0.5 gives about half a core to a CPU-bound loop" {
	printf 'resource_allocation: {cpu_cores: 0.5, pids: 32}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	run -0 sbx-run --trace "$WORK/t.yaml" "$ID" -- python3 -c '
import time
t = time.time()
while time.time() - t < 3: pass'
	cpu=$(field "$WORK/t.yaml" cpu_seconds_used)
	wall=$(field "$WORK/t.yaml" elapsed_s)
	echo "cpu=$cpu wall=$wall"
	python3 -c "r = $cpu / $wall; print(r); assert 0.35 < r < 0.65, r"
}

@test "a tmpfs filled past size_mb gives ENOSPC" {
	printf 'tmpfs: [{guest: /scratch, size_mb: 4}]\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	run -1 sbx-run "$ID" -- dd if=/dev/zero of=/scratch/fill bs=1M count=8
	[[ $output == *"No space left on device"* ]]
	run -0 sbx-run "$ID" -- sh -c 'rm /scratch/fill && echo freed'
}

@test "disk_mb: writes past the quota fail with ENOSPC inside; deleting frees space" {
	printf 'read_only_root: false\nresource_allocation: {disk_mb: 16, pids: 32}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	assert_confined "$ID"
	run -1 sbx-run "$ID" -- dd if=/dev/zero of=/root/fill bs=1M count=32
	[[ $output == *"No space left on device"* ]]
	run -0 sbx-run "$ID" -- rm /root/fill
	run -0 sbx-run --trace "$WORK/t.yaml" "$ID" -- dd if=/dev/zero of=/root/ok bs=1M count=4
	used=$(field "$WORK/t.yaml" disk_used_mb)
	python3 -c "assert 4 <= $used < 6, $used"
	# the quota's filesystem and loop device go with the sandbox
	layer="$SBX_ROOT/sandboxes/$ID/layer"
	dev=$(awk -v l="$layer" '$5 == l {print $NF}' /proc/self/mountinfo)
	run -0 sbx-gc "$ID"
	[ -n "$dev" ]
	absent "$SBX_ROOT" /proc/self/mountinfo
	run -0 losetup -a
	absent "$SBX_ROOT" <(echo "$output")
}

@test "disk_mb: what was asked is usable: df inside shows it, 64 MiB of data fit, 72 MiB do not" {
	printf 'read_only_root: false\nresource_allocation: {disk_mb: 64, pids: 32}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	assert_confined "$ID"
	run -0 sbx-run "$ID" -- df -B1 --output=size,avail /
	read -r size avail <<<"${lines[1]}"
	echo "size=$size avail=$avail"
	[ "$avail" -ge $((64 << 20)) ]
	[ "$size" -le $((72 << 20)) ]
	run -0 sbx-run "$ID" -- dd if=/dev/zero of=/root/fill bs=1M count=64 conv=fsync
	run -0 sbx-run "$ID" -- rm /root/fill
	run -1 sbx-run "$ID" -- dd if=/dev/zero of=/root/fill bs=1M count=72 conv=fsync
	[[ $output == *"No space left on device"* ]]
}

# dd_rate OUTPUT UNITS: how many UNITS a second dd says it wrote (its own clock)
dd_rate() {
	local secs
	secs=$(sed -n 's/.* copied, \([0-9.e-]*\) s,.*/\1/p' <<<"$1")
	python3 -c "print($2 / $secs)"
}

@test "io_mbps and io_iops throttle the writable layer's device: direct writes from inside keep to them, by dd's clock" {
	# a read-only root has no writable layer, no disk_mb, nothing to throttle
	printf 'resource_allocation: {io_mbps: 2}\n' > "$WORK/nodisk.yaml"
	run -65 sbx-provision "$WORK/nodisk.yaml"
	[[ $output == *"io_mbps throttles the writable layer's own device, which only disk_mb gives it"* ]]
	[ -z "$(sbx-ls -q)" ]
	printf 'read_only_root: false\nresource_allocation: {disk_mb: 64, io_mbps: 2, io_iops: 25}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	run -0 sbx-run "$ID" -- dd if=/dev/zero of=/root/f bs=1M count=6 oflag=direct
	mbps=$(dd_rate "$output" 6)
	run -0 sbx-run "$ID" -- dd if=/dev/zero of=/root/g bs=4k count=60 oflag=direct
	iops=$(dd_rate "$output" 60)
	echo "throttled: $mbps MiB/s, $iops writes/s"
	python3 -c "assert $mbps <= 2.6 and $iops <= 32, ($mbps, $iops)"
	# the same writes in a sandbox without the throttle, in the same run
	printf 'read_only_root: false\nresource_allocation: {disk_mb: 64}\n' > "$WORK/free.yaml"
	provision "$WORK/free.yaml"
	run -0 sbx-run "$ID" -- dd if=/dev/zero of=/root/f bs=1M count=6 oflag=direct
	free=$(dd_rate "$output" 6)
	echo "unthrottled: $free MiB/s"
	python3 -c "assert $free > 2 * $mbps, ($free, $mbps)"
}

@test "the trace's CPU and memory figures match what the program did (within 20%)" {
	printf 'resource_allocation: {memory_mb: 1024, pids: 32}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	run -0 sbx-run --trace "$WORK/t.yaml" "$ID" -- python3 -c '
import resource, time
b = bytearray(200 << 20)            # 200 MiB, touched
for i in range(0, len(b), 4096): b[i] = 1
t = time.process_time()
while time.process_time() - t < 1.5: pass
r = resource.getrusage(resource.RUSAGE_SELF)
print(r.ru_utime + r.ru_stime)'
	own=$output
	cat "$WORK/t.yaml"
	cpu=$(field "$WORK/t.yaml" cpu_seconds_used)
	mem=$(field "$WORK/t.yaml" peak_memory_mb)
	# The run's cgroup against the program's own count (its start-up and page
	# touching included, which a loaded machine makes dearer): at least that,
	# and at most 20% more (the interpreter's exit, the run's set-up).
	# 200 MiB plus the interpreter.
	echo "cpu=$cpu own=$own"
	python3 -c "assert 1.5 <= $own - 0.01 <= $cpu <= $own * 1.2, ($cpu, $own)"
	python3 -c "assert 200 <= $mem <= 200 * 1.2, $mem"
}

@test "each run's counters start at zero" {
	printf 'resource_allocation: {memory_mb: 512, pids: 32}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	run -0 sbx-run --trace "$WORK/a.yaml" "$ID" -- python3 -c 'b = bytearray(150 << 20); b[::4096] = b"\1" * len(b[::4096])'
	run -0 sbx-run --trace "$WORK/b.yaml" "$ID" -- true
	a=$(field "$WORK/a.yaml" peak_memory_mb)
	b=$(field "$WORK/b.yaml" peak_memory_mb)
	python3 -c "assert $a >= 150 and $b < 20, ($a, $b)"
}

# run_cgs DIR: the run cgroups below a sandbox's cgroup directory, by name
run_cgs() {
	find "$1" -mindepth 1 -maxdepth 1 -type d -name 'run-*' -printf '%f\n' | sort
}

@test "a runner's worker makes each run's cgroup before the run is asked for and removes it after the answer; a worker that ends removes its own" {
	printf 'resource_allocation: {memory_mb: 128, pids: 64}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	dir=$(cg_dirs "$(state "$ID" cgroup)" | head -n 1)
	[ -d "$dir" ]
	# the waiting worker's cgroup for its next run is there before any run
	for _ in $(seq 100); do [ -n "$(run_cgs "$dir")" ] && break; sleep 0.05; done
	made=$(run_cgs "$dir")
	[ "$(wc -l <<<"$made")" = 1 ]
	[[ $made == run-*.* ]]
	# ... and the run is in it, alone: its counters are the run's
	run -0 sbx-run "$ID" -- cat /proc/self/cgroup
	[[ $output == *"/$made"* ]]
	# the run's cgroup goes once it has answered; the next run has a new one
	for _ in $(seq 100); do ! run_cgs "$dir" | grep -qx "$made" && break; sleep 0.05; done
	run -0 run_cgs "$dir"
	[[ $output != *"$made"* ]]
	run -0 sbx-run "$ID" -- cat /proc/self/cgroup
	[[ $output != *"/$made"* ]]
	# four runs at once take four workers; those past the two kept waiting
	# end, each taking its cgroup with it: one cgroup per live worker
	for _ in 1 2 3 4; do
		sbx-run "$ID" -- sleep 1 &
		TEST_PIDS+=($!)
	done
	wait "${TEST_PIDS[@]}"
	rp=$(state "$ID" runner_pid)
	n=0
	for _ in $(seq 100); do
		n=$(pgrep -P "$rp" | wc -l)
		[ "$n" -le 2 ] && [ "$(run_cgs "$dir" | wc -l)" = "$n" ] && break
		sleep 0.05
	done
	echo "workers $n, cgroups: $(run_cgs "$dir" | tr '\n' ' ')"
	[ "$n" -le 2 ]
	[ "$(run_cgs "$dir" | wc -l)" = "$n" ]
	run -0 sbx-gc "$ID"
	[ ! -d "$dir" ]
}

@test "a runner that starts before its sandbox is saved ready still makes the first run's cgroup ahead" {
	printf 'resource_allocation: {memory_mb: 128, pids: 64}\n' > "$WORK/m.yaml"
	# provisioning held between the runner's start and the state saved ready,
	# long enough for the runner's worker to find the sandbox still being made
	SBX_TEST_PAUSE_AT="provision-runner:$WORK/go" sbx-provision "$WORK/m.yaml" > "$WORK/id" &
	TEST_PIDS+=($!)
	# as long as it takes sbx-provision to get there (it exits if it fails)
	while [ ! -e "$WORK/go.paused" ] && kill -0 "${TEST_PIDS[-1]}" 2>/dev/null; do
		sleep 0.02
	done
	[ -e "$WORK/go.paused" ]
	sleep 0.5
	touch "$WORK/go"
	wait "${TEST_PIDS[-1]}"
	ID=$(cat "$WORK/id")
	[ "$(state "$ID" status)" = ready ]
	dir=$(cg_dirs "$(state "$ID" cgroup)" | head -n 1)
	for _ in $(seq 100); do [ -n "$(run_cgs "$dir")" ] && break; sleep 0.05; done
	made=$(run_cgs "$dir")
	[[ $made == run-*.* ]]
	# (the runner serves only callers of its own SBX_* environment)
	run -0 env SBX_TEST_PAUSE_AT="provision-runner:$WORK/go" sbx-run "$ID" -- cat /proc/self/cgroup
	[[ $output == *"/$made"* ]]
	run -0 sbx-gc "$ID"
	[ ! -d "$dir" ]
}
