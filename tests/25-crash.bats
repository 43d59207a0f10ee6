#!/usr/bin/env bats
# Crash safety: a tool SIGKILLed at any step leaves a state that the next
# sbx-gc sweep understands, and after it nothing of the sandbox remains.
load helpers

# The state root's cgroup group: it can only be removed once no process of
# ours (init, a run, a watchdog) is left in it.
group_dirs() {
	local g
	g=$(printf '%s' "$SBX_ROOT" | sha256sum | cut -c1-12)
	find /sys/fs/cgroup -maxdepth 6 -type d -path "*/sbx/r$g" 2>/dev/null
}

# Every check returns on failure by itself: bash ignores set -e inside a
# function called from a condition, so nothing here may rely on it.
assert_nothing_left() {
	[ -z "$(sbx-ls -q)" ] || { echo "sandboxes left"; return 1; }
	[ -z "$(ls -A "$SBX_ROOT/sandboxes")" ] || { ls -la "$SBX_ROOT/sandboxes"; return 1; }
	[ -z "$(group_dirs)" ] || { echo "cgroups left:"; group_dirs; return 1; }
	absent "$SBX_ROOT" /proc/self/mountinfo || return 1
}

@test "sbx-provision SIGKILLed at each step: one sweep removes every trace" {
	local point
	for point in provision-dir provision-state create-cgroup create-cloned provision-created \
	    provision-watchdog; do
		printf 'resource_allocation: {memory_mb: 128, pids: 32, disk_mb: 16}\nread_only_root: false\n' > "$WORK/m.yaml"
		run -137 env SBX_TEST_CRASH_AT=$point sbx-provision "$WORK/m.yaml"
		run -0 sbx-gc
		echo "after a crash at $point"
		# a watchdog whose PID was never recorded sees its sandbox go and leaves
		for _ in $(seq 30); do [ -z "$(group_dirs)" ] && break; sleep 0.1; run sbx-gc; done
		assert_nothing_left
	done
}

@test "sbx-gc SIGKILLed at each step of a destroy: the next sweep finishes it" {
	local point
	for point in destroy-cleanup destroy-killed remove-tombstone; do
		printf 'resource_allocation: {memory_mb: 128, pids: 32, disk_mb: 16}\nread_only_root: false\n' > "$WORK/m.yaml"
		provision "$WORK/m.yaml"
		run -0 sbx-run "$ID" -- sh -c 'sleep 60 > /dev/null 2>&1 & echo started'
		run -137 env SBX_TEST_CRASH_AT=$point sbx-gc "$ID"
		run -0 sbx-gc
		echo "after a crash at $point"
		assert_nothing_left
	done
}

@test "sbx-run SIGKILLed before and after starting the command: the sandbox stays usable, destroy is complete" {
	local point
	for point in run-cgroup run-forked; do
		printf 'resource_allocation: {memory_mb: 128, pids: 32}\n' > "$WORK/m.yaml"
		provision "$WORK/m.yaml"
		run -137 env SBX_TEST_CRASH_AT=$point sbx-run "$ID" -- sleep 30
		run -0 sbx-run "$ID" -- echo usable
		[ "$output" = "usable" ]
		run -0 sbx-gc "$ID"
		run -0 sbx-gc
		echo "after a crash at $point"
		assert_nothing_left
	done
}

@test "sbx-pause SIGKILLed mid-pause or mid-resume: never frozen while marked ready" {
	provision "$MANIFESTS/minimal.yaml"
	run -137 env SBX_TEST_CRASH_AT=pause-saved sbx-pause "$ID"
	[[ $(sbx-inspect "$ID") == *'status: "paused"'* ]]
	run -0 sbx-pause --resume "$ID"
	run -0 sbx-run "$ID" -- echo thawed
	run -0 sbx-pause "$ID"
	run -137 env SBX_TEST_CRASH_AT=resume-thawed sbx-pause --resume "$ID"
	run -0 sbx-pause --resume "$ID"
	run -0 timeout 10 sbx-run "$ID" -- echo thawed
	[ "$output" = "thawed" ]
}

@test "a provision in progress is not mistaken for an abandoned one" {
	provision "$MANIFESTS/minimal.yaml"
	# make it look half-made, as a provision still at work would leave it
	sed -i 's/^status: "ready"/status: "provisioning"/' "$SBX_ROOT/sandboxes/$ID/state.yaml"
	# while a tool holds its lock, the sweep leaves it alone
	(
		flock -x 9
		sbx-gc > "$WORK/gc.out" 2>&1
	) 9< "$SBX_ROOT/sandboxes/$ID"
	[ -d "$SBX_ROOT/sandboxes/$ID" ]
	run -125 sbx-run "$ID" -- true
	# once nobody holds it, it is abandoned and reaped
	run -0 sbx-gc
	assert_nothing_left
}
