#!/usr/bin/env bats
# The same programs as an unprivileged user, through user namespaces alone.
load helpers

RL_UID=4242

# as_user CMD...: run CMD as an unprivileged user with its own state root.
as_user() {
	setpriv --reuid="$RL_UID" --regid="$RL_UID" --clear-groups \
		env -i PATH="$RL/bin:/usr/bin:/bin" SBX_ROOT="$RL/root" HOME="$RL" "$@"
}

setup() {
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	[ "$(id -u)" = 0 ] || skip "needs root to become another user"
	[ "$(cat /proc/sys/user/max_user_namespaces)" -gt 0 ] || skip "user namespaces are disabled"
	RL=$(mktemp -d /tmp/sbx-rootless.XXXXXX)
	mkdir "$RL/bin"
	# the build tree may sit below a directory other users cannot search
	cp "$SBX_BIN"/sbx* "$RL/bin/"
	chmod 755 "$RL" "$RL/bin"
	cp "$MANIFESTS/minimal.yaml" "$FIXTURES/syscalls.py" "$RL/"
	printf '{}\n' > "$RL/nolimits.yaml"
	# the built-in defaults (1 CPU, 512 MiB, pids, a disk quota for a writable
	# root) need a cgroup and root: this caller's policy has none of them
	mkdir -m 700 "$RL/root"
	printf 'defaults: {cpu_cores: null, memory_mb: null, pids: null, disk_mb: null}\n' > "$RL/root/policy.yaml"
	chown -R "$RL_UID:$RL_UID" "$RL"
	WORK=$(mktemp -d /tmp/sbx-work.XXXXXX)
}

teardown() {
	if [ -n "${RL:-}" ]; then
		as_user sh -c 'ids=$(sbx-ls -q); [ -z "$ids" ] || sbx-gc $ids; sbx-gc' >/dev/null 2>&1
		rm -rf "$RL"
	fi
	rm -rf "${WORK:-}"
	undelegate
}

# delegate: give the user a cgroup v2 subtree as systemd does for
# user@UID.service (Delegate=yes): the unit's cgroup and its cgroup.procs,
# cgroup.subtree_control and cgroup.threads are the user's, its controllers
# enabled from above; below it the user's manager made app.slice and a scope.
# Sets DG to the scope, which in_scope moves a command into.
delegate() {
	local cg=/sys/fs/cgroup u=/sys/fs/cgroup/user.slice/user-$RL_UID.slice f
	[ "$(stat -fc %T $cg)" = cgroup2fs ] || skip "needs cgroup v2 alone (make check-v2 boots a guest that has it)"
	DG_ROOT=$u
	mkdir -p "$u/user@$RL_UID.service"
	for f in "$cg" "$cg/user.slice" "$u"; do
		echo "+cpu +memory +pids" > "$f/cgroup.subtree_control"
	done
	u="$u/user@$RL_UID.service"
	chown "$RL_UID:$RL_UID" "$u" "$u/cgroup.procs" "$u/cgroup.subtree_control" "$u/cgroup.threads"
	as_user sh -c "mkdir $u/app.slice $u/app.slice/test.scope && echo '+cpu +memory +pids' > $u/cgroup.subtree_control"
	DG="$u/app.slice/test.scope"
}

# in_scope CMD...: CMD as the user, in the delegated scope (moved there by
# root, as systemd starts a user's session processes there).
in_scope() {
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$DG" \
		setpriv --reuid="$RL_UID" --regid="$RL_UID" --clear-groups \
		env -i PATH="$RL/bin:/usr/bin:/bin" SBX_ROOT="$RL/root" HOME="$RL" "$@"
}

undelegate() {
	[ -n "${DG_ROOT:-}" ] || return 0
	find "$DG_ROOT" -depth -type d -exec rmdir {} + 2>/dev/null
	rmdir "$DG_ROOT" 2>/dev/null || true
}

@test "rootless: provision and run; root inside is the caller outside, nothing more" {
	run -0 as_user sbx-provision "$RL/nolimits.yaml"
	id=$output
	run -0 as_user sbx-run "$id" -- cat /proc/self/status /proc/self/uid_map
	[[ $output == *"CapEff:	0000000000000000"* ]]
	[[ $output == *"NoNewPrivs:	1"* ]]
	[[ $output == *"Seccomp:	2"* ]]
	[[ $(tail -n 1 <<<"$output") =~ ^\ +0\ +$RL_UID\ +1$ ]]
	run -0 as_user sbx-run "$id" -- sh -c 'cat /proc/1/comm; hostname; cat /proc/net/dev | grep -c :'
	[ "${lines[0]}" = "sbx-init" ]
	[ "${lines[1]}" = "$id" ]
	[ "${lines[2]}" = "1" ]
	run -2 as_user sbx-run "$id" -- sh -c 'echo x > /etc/evil'
	[[ $output == *"Read-only file system"* ]]
}

@test "rootless: dangerous system calls fail and host root files stay closed" {
	run -0 as_user sbx-provision "$RL/nolimits.yaml"
	id=$output
	run -0 as_user sbx-run "$id" -- cat /proc/self/status
	[[ $output == *"CapEff:	0000000000000000"* ]]
	run -0 as_user sbx-run "$id" -- python3 - < "$FIXTURES/syscalls.py"
	for name in mount ptrace bpf keyctl unshare-user setns; do
		[[ $output == *"$name EPERM"* ]] || { echo "not refused: $name"; false; }
	done
	# init holds the namespaces but its memory and environment stay closed
	run -1 as_user sbx-run "$id" -- cat /proc/1/environ
	[[ $output == *"Permission denied"* ]]
}

@test "rootless: limits that need a cgroup fail with 69 naming what cannot be enforced" {
	if as_user test -w /sys/fs/cgroup/memory || as_user test -w /sys/fs/cgroup/cgroup.procs; then
		skip "this host delegates cgroups to every user"
	fi
	run -69 as_user sbx-provision "$RL/minimal.yaml"
	[[ $output == *"cannot be enforced"* ]]
	# the built-in policy's defaults too, and the message says where they came from
	rm "$RL/root/policy.yaml"
	run -69 as_user sbx-provision "$RL/nolimits.yaml"
	[[ $output == *"cannot be enforced"*"the policy's defaults: cpu_cores 1, memory_mb 512, pids 1024"*"policy.yaml"* ]]
	printf 'resource_allocation: {disk_mb: 16}\n' > "$RL/disk.yaml"
	chown "$RL_UID" "$RL/disk.yaml"
	run -69 as_user sbx-provision "$RL/disk.yaml"
	[[ $output == *"disk_mb"* ]]
	run -0 as_user sbx-ls -q
	[ -z "$output" ]
}

@test "rootless: the trace comes from rusage and gc removes everything" {
	run -0 as_user sbx-provision "$RL/nolimits.yaml"
	id=$output
	pid=$(as_user sbx-inspect "$id" | sed -n 's/^ *pid: //p')
	run -0 as_user sbx-run --trace - "$id" -- python3 -c 'b = bytearray(80 << 20); b[::4096] = b"\1" * len(b[::4096])'
	[[ $output == *"peak_memory_mb: "* ]]
	mem=$(sed -n 's/^ *peak_memory_mb: //p' <<<"$output")
	python3 -c "assert 80 <= $mem <= 120, $mem"
	run -0 as_user sbx-gc "$id"
	gone "$pid"
	[ -z "$(ls "$RL/root/sandboxes")" ]
}

@test "rootless: snapshots and forks work without root; an idle sandbox needs no freezer, a busy one does" {
	printf 'read_only_root: false\n' > "$RL/rw.yaml"
	chown "$RL_UID:$RL_UID" "$RL/rw.yaml"
	run -0 as_user sbx-provision "$RL/rw.yaml"
	id=$output
	run -0 as_user sbx-run "$id" -- sh -c 'echo mine > /root/f; rm /etc/hostname'
	# nothing runs in it but its init: nothing to freeze, cgroup or not
	run -0 as_user sbx-snap "$id"
	snap=$output
	if ! as_user test -w /sys/fs/cgroup/freezer && ! as_user test -w /sys/fs/cgroup/cgroup.procs; then
		# with a process running and no delegated cgroup: no consistent snapshot
		as_user sbx-run "$id" -- sleep 60 > /dev/null 2>&1 &
		bg=$!
		for _ in $(seq 100); do
			[[ $(as_user sbx-inspect "$id") == *'status: "executing"'* ]] && break
			sleep 0.1
		done
		run -69 as_user sbx-snap "$id"
		[[ $output == *"cannot freeze the sandbox"*"while processes run in it"* ]]
		kill "$bg"
		wait "$bg" || true
	fi
	run -0 as_user sbx-fork -n 2 "$snap"
	for k in "${lines[@]}"; do
		run -0 as_user sbx-run "$k" -- sh -c 'cat /root/f; test ! -e /etc/hostname && echo gone'
		[ "$output" = "$(printf 'mine\ngone')" ]
	done
	run -0 as_user sbx-snap verify "$snap"
}

@test "rootless: sbx-run -u with an ID the sandbox does not have is sbx's own failure (125), naming the one it has" {
	run -0 as_user sbx-provision "$RL/nolimits.yaml"
	id=$output
	run -125 as_user sbx-run -u 1000 "$id" -- id -u
	[[ $output == *"--user 1000: a rootless sandbox maps one ID, yours (host uid $RL_UID"* ]]
	run -0 as_user sbx-run -u 0:0 "$id" -- id -u
	[ "$output" = 0 ]
}

@test "rootless: a captured run's stdin ends (no pipe end held by the relay), sbx-cp copies in and out" {
	run -0 as_user sbx-provision "$RL/nolimits.yaml"
	id=$output
	run -0 as_user timeout 60 sh -c "echo piped | sbx-run -o json $id -- cat"
	[[ $output == *'"stdout":"piped\n"'* ]]
	printf 'data\n' > "$RL/in.txt"
	chown "$RL_UID:$RL_UID" "$RL/in.txt"
	run -0 as_user timeout 60 sbx-cp "$RL/in.txt" "$id:/tmp"
	run -0 as_user timeout 60 sbx-cp "$id:/tmp/in.txt" "$RL/out.txt"
	[ "$(cat "$RL/out.txt")" = data ]
}

@test "rootless with a cgroup v2 subtree delegated as systemd does: real limits, counted per run, removed by gc" {
	delegate
	printf 'resource_allocation: {memory_mb: 64, memory_soft_pct: 50, pids: 64, cpu_cores: 0.5}\n' > "$RL/limits.yaml"
	chown "$RL_UID:$RL_UID" "$RL/limits.yaml"
	run -0 in_scope sbx-provision "$RL/limits.yaml"
	id=$output
	cgpath=$(in_scope sbx-inspect "$id" | sed -n 's/^ *cgroup: "2:\(.*\)"$/\1/p')
	# below the delegated subtree, which the user owns
	[[ $cgpath == "${DG_ROOT#/sys/fs/cgroup}/user@$RL_UID.service/app.slice/sbx/"* ]]
	[ "$(cat "/sys/fs/cgroup$cgpath/memory.max")" = $((64 << 20)) ]
	run -137 in_scope sbx-run "$id" -- python3 -c 'b = bytearray(200 << 20); b[::4096] = b"\1" * len(b[::4096])'
	run -0 in_scope sbx-run --trace "$RL/t.yaml" "$id" -- sh -c 'for i in $(seq 100); do sleep 5 >/dev/null 2>&1 & done 2>&1 | grep -c fork'
	[ "$output" -gt 0 ]
	grep -q 'pids_limit_hits: [1-9]' "$RL/t.yaml"
	run -0 in_scope sbx-gc "$id"
	[ ! -e "/sys/fs/cgroup$cgpath" ]
}
