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

# unlocked: no process (a one-shot's teardown) holds a lock on what the
# sandboxes directory holds, sandboxes and tombstones alike.
unlocked() {
	local d
	for d in "$SBX_ROOT"/sandboxes/* "$SBX_ROOT"/sandboxes/.dead-*; do
		[ -e "$d" ] || continue
		for _ in $(seq 100); do flock -n "$d" true && break; sleep 0.1; done
		flock -n "$d" true || return 1
	done
}

@test "sbx-run -m returns once the sandbox's processes are dead; its teardown, killed at each step, is finished by the sweep" {
	local point
	printf 'resource_allocation: {memory_mb: 128, pids: 32, disk_mb: 16}\nread_only_root: false\n' > "$WORK/m.yaml"
	# what the command left running is dead when sbx-run returns, not later
	run -0 sbx-run -m "$WORK/m.yaml" -- sh -c 'sleep 86399 > /dev/null 2>&1 & echo started'
	[ "$output" = started ]
	run -1 pgrep -f 'sleep 86399'
	settled
	assert_nothing_left
	grep -q '"event":"destroy","correlation_id":"[^"]*","outcome":"ok","detail":"detached"' \
	    "$SBX_ROOT/audit.log"
	for point in destroy-detached destroy-killed remove-tombstone; do
		run -0 env SBX_TEST_CRASH_AT=$point sbx-run -m "$WORK/m.yaml" -- \
		    sh -c 'sleep 86398 > /dev/null 2>&1 & echo started'
		[ "$output" = started ]
		run -1 pgrep -f 'sleep 86398'
		unlocked
		echo "after a crash at $point"
		[ -n "$(ls -A "$SBX_ROOT/sandboxes")" ]
		if [ $point = destroy-detached ]; then
			[ -n "$(group_dirs)" ]
			[ "$(sbx-ls -q | wc -l)" = 1 ]
			run -0 sbx-inspect "$(sbx-ls -q)"
			[[ $output == *'status: "cleanup"'* ]]
		fi
		run -0 sbx-gc
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

# The snapshot store is consistent: every snapshot verifies, no temporary file
# is left, and every layer is named by some snapshot.
check_store() {
	local s f d
	for s in $(sbx-snap list); do
		sbx-snap verify "$s" || return 1
	done
	for d in layers cache snapshots; do
		[ -d "$SBX_ROOT/$d" ] || continue
		while IFS= read -r f; do
			case $f in
			.lock|.fork.lock) ;;
			.tmp-*|*.tmp.*) echo "temporary file left: $d/$f"; return 1 ;;
			*.yaml) ;;
			*.index)
				[ -f "$SBX_ROOT/snapshots/${f%.index}.yaml" ] ||
				    { echo "index without a snapshot: $f"; return 1; } ;;
			*)
				grep -q "${f%.tar.zst}" "$SBX_ROOT"/snapshots/*.yaml ||
				    { echo "unreferenced: $d/$f"; return 1; } ;;
			esac
		done < <(find "$SBX_ROOT/$d" -mindepth 1 -maxdepth 1 -printf '%f\n')
	done
}

@test "sbx-snap, sbx-fork and sbx-gc SIGKILLed at each step: no reported snapshot is lost, nothing leaks" {
	local point
	printf 'read_only_root: false\nresource_allocation: {memory_mb: 128, pids: 32}\nfork: {max_fork_factor: 16}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	src=$ID
	run -0 sbx-run "$src" -- sh -c 'head -c 300000 /dev/urandom > /root/data; sleep 60 > /dev/null 2>&1 & echo started'
	run -0 sbx-snap --id reported "$src"
	for point in snap-frozen snap-packed snap-layer snap-saved; do
		run -137 env SBX_TEST_CRASH_AT=$point sbx-snap "$src"
		run -0 sbx-gc
		echo "after a crash at $point"
		[ "$(state "$src" status)" = ready ]
		run -0 timeout 5 sbx-run "$src" -- true
		check_store
	done
	for point in cache-extracted fork-child; do
		run -137 env SBX_TEST_CRASH_AT=$point sbx-fork -n 2 reported
		run -0 sbx-gc
		echo "after a crash at $point"
		check_store
	done
	# the child made before the crash is a whole sandbox
	run -0 sbx-ls -q
	for id in $output; do
		[ "$id" = "$src" ] && continue
		run -0 sbx-run "$id" -- head -c 10 /root/data
	done
	for _ in 1 2 3; do run -0 sbx-snap "$src"; done
	run -137 env SBX_TEST_CRASH_AT=gc-snapshot sbx-gc --keep-last 1
	run -0 sbx-gc --keep-last 1
	check_store
	run -0 sbx-snap verify reported    # a live fork still stands on it
	for id in $(sbx-ls -q); do run -0 sbx-gc "$id"; done
	run -0 sbx-gc --keep-last 1
	check_store
	assert_nothing_left
}

@test "destroying a root's last sandbox by ID removes the root's cgroup group (no sweep needed)" {
	[ "$(id -u)" -eq 0 ] || skip "cgroups of this user are its delegated ones"
	provision "$MANIFESTS/minimal.yaml"
	first=$ID
	provision "$MANIFESTS/minimal.yaml"
	[ -n "$(group_dirs)" ]
	run -0 sbx-gc "$first"
	# another sandbox (and its watchdog) still uses the group
	[ -n "$(group_dirs)" ]
	run -0 sbx-gc "$ID"
	[ -z "$(group_dirs)" ]
}

@test "a root's cgroup group left in some hierarchies only (busy there when it was removed) is removed by the sweep" {
	[ "$(id -u)" -eq 0 ] || skip "cgroups of this user are its delegated ones"
	[ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ] || skip "cgroup v2 has one hierarchy"
	provision "$MANIFESTS/minimal.yaml"
	cpu=$(dirname "$(cg_dirs "$(state "$ID" cgroup)" | grep '/cgroup/cpu/' | head -n 1)")
	[ -d "$cpu" ]
	run -0 sbx-gc "$ID"
	[ -z "$(group_dirs)" ]
	# as a removal leaves it where an exited watchdog was still counted:
	# the freezer's hierarchy, which the sweep reads, has none
	mkdir -p "$cpu/@watchdog"
	[ -n "$(group_dirs)" ]
	run -0 sbx-gc
	[ -z "$(group_dirs)" ]
}
