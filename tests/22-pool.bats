#!/usr/bin/env bats
# Warm pools (sbx-policy(5) pools): members made ahead, claimed by sbx-provision
# and sbx-run -m when the manifest matches, kept by the refiller, retired when idle.
load helpers

# pool NAME MANIFEST [KEY: VALUE...]: a policy with one pool (more keys as given).
pool_policy() {
	local name=$1 file=$2
	shift 2
	{
		echo "pools:"
		echo "  - name: $name"
		echo "    manifest: $file"
		for kv in "$@"; do echo "    $kv"; done
	} | policy
}

# members: the unclaimed members' IDs, one a line (pools/KEY/ID).
members() {
	find "$SBX_ROOT/pools" -mindepth 2 -maxdepth 2 -type f -printf '%f\n' 2>/dev/null | sort
}

# wait_members N SECONDS: until the pools hold N members (the refiller works apart).
wait_members() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		[ "$(members | wc -l)" -eq "$1" ] && return 0
		sleep 0.1
	done
	members
	return 1
}

@test "--fill-pools makes the pool's members: pooled, out of reach of sbx-run, each its own sandbox" {
	m=$(manifest p.yaml <<-'EOF'
		network_policy: deny-all
		resource_allocation: {memory_mb: 128, pids: 64}
	EOF
	)
	pool_policy py "$m" "size: 2"
	run -0 sbx-provision --fill-pools
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[0]} == "py sbx-"* ]] && [[ ${lines[1]} == "py sbx-"* ]]
	a=${lines[0]#py } b=${lines[1]#py }
	[ "$(members)" = "$(printf '%s\n' "$a" "$b" | sort)" ]
	[ "$(state "$a" status)" = pooled ] && [ "$(state "$a" pool)" = py ]
	# full: a second fill makes nothing
	run -0 sbx-provision --fill-pools
	[ -z "$output" ]
	# a member is nobody's until claimed
	run -125 sbx-run "$a" -- true
	[[ $output == *"member of warm pool py, not claimed"* ]]
	run -0 sbx-ls
	[[ $output == *'status: "pooled"'* ]]
}

@test "a manifest that matches is served from the pool: ready, its lifetime from the claim, its own name, nothing left of the pool in its state" {
	m=$(manifest p.yaml <<-'EOF'
		network_policy: deny-all
		resource_allocation: {memory_mb: 128, pids: 64, max_wall_clock_s: 120}
	EOF
	)
	pool_policy py "$m" "size: 1"
	run -0 sbx-provision --fill-pools
	member=${output#py }
	filled=$(ms_of "$(state "$member" created_at)")
	sleep 1.1
	# the same manifest written another way (keys in another order, defaults spelt out)
	c=$(manifest c.yaml <<-'EOF'
		resource_allocation: {max_wall_clock_s: 120, pids: 64, memory_mb: 128}
		isolation_level: namespace
		network_policy: deny-all
	EOF
	)
	provision "$c"
	[ "$ID" = "$member" ]
	[ -z "$(members)" ]
	run -0 sbx-inspect "$ID"
	[[ $output == *'status: "ready"'* ]]
	[[ $output != *"pool"* ]]
	born=$(ms_of "$(state "$ID" created_at)")
	due=$(ms_of "$(state "$ID" expires_at)")
	[ "$born" -gt $((filled + 1000)) ]
	[ $((due - born)) -eq 120000 ]
	grep -q "\"sandbox\":\"$ID\",\"event\":\"provision\".*from pool py" "$SBX_ROOT/audit.log"
	# from inside: its hostname is its own ID, its writable layer empty, its init PID 1
	assert_confined "$ID"
	run -0 sbx-run "$ID" -- sh -c 'hostname; cat /proc/1/cmdline | tr "\0" " "; echo; ls -A /tmp | wc -l'
	[ "${lines[0]}" = "$ID" ]
	[ "${lines[2]}" = 0 ]
	# an empty pool: the next one is made, not claimed
	provision "$c"
	[ "$ID" != "$member" ]
	# a manifest that differs in anything is never served from the pool
	run -0 sbx-provision --fill-pools
	other=$(manifest o.yaml <<-'EOF'
		network_policy: deny-all
		resource_allocation: {memory_mb: 256, pids: 64, max_wall_clock_s: 120}
	EOF
	)
	provision "$other"
	[ "$(members | wc -l)" -eq 1 ]
	[ "$(state "$ID" status)" = ready ]
}

@test "a claimed member is killed at its own deadline, counted from the claim, not from the fill" {
	m=$(manifest p.yaml <<-'EOF'
		network_policy: deny-all
		resource_allocation: {memory_mb: 128, pids: 64, max_wall_clock_s: 2}
	EOF
	)
	pool_policy short "$m" "size: 1" "max_idle_s: 600"
	run -0 sbx-provision --fill-pools
	member=${output#short }
	# older than its lifetime before anyone claims it
	sleep 2.5
	provision "$m"
	[ "$ID" = "$member" ]
	pid=$(state "$ID" pid)
	run -0 sbx-run "$ID" -- true
	run -0 wait_gone "$pid" 60
	run -0 sbx-inspect "$ID"
	[[ $output == *'kill_reason: "wall-clock"'* ]]
	born=$(ms_of "$(state "$ID" created_at)")
	killed=$(ms_of "$(state "$ID" killed_at)")
	echo "killed $((killed - born)) ms after the claim"
	[ $((killed - born)) -ge 2000 ]
}

@test "an unclaimed member past max_idle_s is retired by its watchdog; the refill makes a fresh one" {
	m=$(manifest p.yaml <<-'EOF'
		network_policy: deny-all
		resource_allocation: {memory_mb: 128, pids: 64}
	EOF
	)
	pool_policy idle "$m" "size: 1" "max_idle_s: 1"
	run -0 sbx-provision --fill-pools
	member=${output#idle }
	pid=$(state "$member" pid)
	run -0 wait_gone "$pid" 30
	for ((i = 0; i < 100; i++)); do
		[ -d "$SBX_ROOT/sandboxes/$member" ] || break
		sleep 0.1
	done
	[ ! -d "$SBX_ROOT/sandboxes/$member" ]
	[ -z "$(members)" ]
	grep -q "\"sandbox\":\"$member\",\"event\":\"pool-retire\".*\"detail\":\"pool-idle\"" \
	    "$SBX_ROOT/audit.log"
	run -0 sbx-provision --fill-pools
	[[ $output == "idle sbx-"* ]] && [ "${output#idle }" != "$member" ]
}

@test "sbx-run -m takes a member for its one command, and it goes with the command" {
	m=$(manifest p.yaml <<-'EOF'
		network_policy: deny-all
		resource_allocation: {memory_mb: 128, pids: 64}
	EOF
	)
	pool_policy py "$m" "size: 2"
	run -0 sbx-provision --fill-pools
	run -0 sbx-run -m "$m" -- hostname
	host=$output
	members | grep -qx -- "$host" && false
	[[ $host == sbx-* ]]
	for _ in $(seq 100); do [ -d "$SBX_ROOT/sandboxes/$host" ] || break; sleep 0.1; done
	[ ! -d "$SBX_ROOT/sandboxes/$host" ]
	[ "$(members | wc -l)" -eq 1 ]
}

@test "a member is claimed while its runner makes its next run's cgroup; the claimed member's first run has that cgroup" {
	m=$(manifest p.yaml <<-'EOF'
		resource_allocation: {memory_mb: 128, pids: 64}
	EOF
	)
	pool_policy pa "$m" "size: 1"
	# the member's runner (its environment is its starter's) holds still
	# where it has read the state to make the next run's cgroup
	run -0 env SBX_TEST_PAUSE_AT="run-ahead:$WORK/go" sbx-provision --fill-pools
	member=${output#pa }
	for _ in $(seq 100); do [ -e "$WORK/go.paused" ] && break; sleep 0.05; done
	[ -e "$WORK/go.paused" ]
	provision "$m"
	[ "$ID" = "$member" ]
	touch "$WORK/go"
	dir=$(cg_dirs "$(state "$ID" cgroup)" | head -n 1)
	for _ in $(seq 100); do
		[ -n "$(find "$dir" -mindepth 1 -maxdepth 1 -name 'run-*.*')" ] && break
		sleep 0.05
	done
	[ -n "$(find "$dir" -mindepth 1 -maxdepth 1 -name 'run-*.*')" ]
	# (with the runner's settings, so that the runner serves it); the
	# member's second worker may serve it, with the cgroup it made ahead:
	# one named after a worker and a count, not after the run
	run -0 env SBX_TEST_PAUSE_AT="run-ahead:$WORK/go" sbx-run "$ID" -- cat /proc/self/cgroup
	grep -Eq ":/run-[0-9]+\.[0-9]+$" <<<"$output"
	run -1 grep -Eq ":/run-[0-9]+$" <<<"$output"
}

@test "a member waits with two workers, each with its parked entry; the first run after the claim is started by one" {
	m=$(manifest p.yaml <<-'EOF'
		resource_allocation: {memory_mb: 128, pids: 64}
	EOF
	)
	pool_policy pe "$m" "size: 1"
	run -0 sbx-provision --fill-pools
	member=${output#pe }
	for _ in $(seq 200); do
		mapfile -t parks < <(pgrep -f "^sbx-park $member")
		[ "${#parks[@]}" -eq 2 ] && break
		sleep 0.05
	done
	[ "${#parks[@]}" -eq 2 ]
	[ "$(pgrep -c -f "^sbx-runner $member")" -eq 3 ]
	woke=$(woke_of "${parks[@]}")
	provision "$m"
	[ "$ID" = "$member" ]
	[ "$(woke_of "${parks[@]}")" -eq "$woke" ]
	run -0 sbx-run "$ID" -- true
	[ "$(woke_of "${parks[@]}")" -gt "$woke" ]
}

@test "refill: claim replaces a claimed member in the background; sbx-watchdog --all keeps pools full" {
	m=$(manifest p.yaml <<-'EOF'
		network_policy: deny-all
		resource_allocation: {memory_mb: 128, pids: 64}
	EOF
	)
	pool_policy py "$m" "size: 1" "refill: claim"
	run -0 sbx-provision --fill-pools
	first=${output#py }
	provision "$m"
	[ "$ID" = "$first" ]
	run -0 wait_members 1 30
	[ "$(members)" != "$first" ]
	# the --all watchdog fills a pool it finds short, its members without own watchdogs
	pool_policy py "$m" "size: 2"
	sbx-watchdog --all 2>"$WORK/wd.err" &
	TEST_PIDS+=($!)
	run -0 wait_members 2 60
	made=0
	for id in $(members); do
		[ "$(state "$id" status)" = pooled ]
		[ -z "$(state "$id" watchdog_pid)" ] && made=$((made + 1))
	done
	[ "$made" -ge 1 ]
	kill "${TEST_PIDS[0]}"
	wait "${TEST_PIDS[0]}" || true
	TEST_PIDS=()
	[ ! -s "$WORK/wd.err" ]
}

@test "a claim killed midway leaves a member out of its pool, which sbx-gc removes" {
	m=$(manifest p.yaml <<-'EOF'
		network_policy: deny-all
		resource_allocation: {memory_mb: 128, pids: 64}
	EOF
	)
	pool_policy py "$m" "size: 1"
	run -0 sbx-provision --fill-pools
	member=${output#py }
	SBX_TEST_CRASH_AT=pool-claim run -137 sbx-provision "$m"
	[ -z "$(members)" ]
	[ "$(state "$member" status)" = pooled ]
	run -0 sbx-gc
	[[ $output == *"$member"* ]]
	[ ! -d "$SBX_ROOT/sandboxes/$member" ]
}

@test "a pool the policy no longer names: sbx-gc retires its members" {
	m=$(manifest p.yaml <<-'EOF'
		network_policy: deny-all
		resource_allocation: {memory_mb: 128, pids: 64}
	EOF
	)
	pool_policy py "$m" "size: 2"
	run -0 sbx-provision --fill-pools
	[ "$(members | wc -l)" -eq 2 ]
	# the manifest changed: its members are of another pool now
	printf 'network_policy: deny-all\nresource_allocation: {memory_mb: 96, pids: 64}\n' > "$m"
	run -0 sbx-gc
	[ "${#lines[@]}" -eq 2 ]
	[ -z "$(members)" ]
	[ -z "$(sbx-ls -q)" ]
	grep -q '"event":"pool-retire".*"detail":"pool-gone"' "$SBX_ROOT/audit.log"
}

@test "bad pools: a malformed entry, a missing manifest, a manifest naming its sandbox_id" {
	m=$(manifest p.yaml <<-'EOF'
		network_policy: deny-all
	EOF
	)
	printf 'pools:\n  - name: Bad Name\n    manifest: %s\n' "$m" | policy
	run -65 sbx-provision --fill-pools
	[[ $output == *"policy.yaml:2:"*"pools: name: 'Bad Name' is not a name"* ]]
	printf 'pools:\n  - name: a\n    manifest: %s\n    size: lots\n' "$m" | policy
	run -65 sbx-provision --fill-pools
	[[ $output == *"policy.yaml:4:"*"size"* ]]
	printf 'pools:\n  - name: a\n    manifest: %s\n  - name: a\n    manifest: %s\n' "$m" "$m" | policy
	run -65 sbx-provision "$m"
	[[ $output == *"pools: a is named twice"* ]]
	pool_policy gone "$WORK/missing.yaml"
	run -66 sbx-provision --fill-pools
	[[ $output == *"pool gone: manifest"*"missing.yaml"* ]]
	printf 'sandbox_id: sbx-fixed01\nnetwork_policy: deny-all\n' > "$WORK/id.yaml"
	pool_policy fixed "$WORK/id.yaml"
	run -65 sbx-provision --fill-pools
	[[ $output == *"pool fixed: manifest"*"names a sandbox_id"* ]]
	[ -z "$(sbx-ls -q)" ]
	[ -z "$(members)" ]
	run -64 sbx-provision --fill-pools "$m"
}

@test "a member whose init died is not handed out: a fresh sandbox is made, and sbx-gc takes the dead one" {
	m=$(manifest p.yaml <<-'EOF'
		network_policy: deny-all
		resource_allocation: {memory_mb: 128, pids: 64}
	EOF
	)
	pool_policy py "$m" "size: 1"
	run -0 sbx-provision --fill-pools
	member=${output#py }
	pid=$(state "$member" pid)
	kill -9 "$pid"
	run -0 wait_gone "$pid" 30
	provision "$m"
	[ "$ID" != "$member" ]
	run -0 sbx-run "$ID" -- true
	run -0 sbx-gc
	[[ $output == *"$member"* ]]
	[ ! -d "$SBX_ROOT/sandboxes/$member" ]
	[ -z "$(members)" ]
}
