#!/usr/bin/env bats
# Lifecycle: provision, inspect, ls, destroy, idempotency, audit, and no leftovers.
load helpers

@test "provision prints an ID; inspect and ls show it ready" {
	provision "$MANIFESTS/minimal.yaml"
	[[ $ID =~ ^sbx-[0-9a-f]{8}$ ]]
	run -0 sbx-inspect "$ID"
	[[ $output == *'status: "ready"'* ]]
	run -0 sbx-ls -q
	[ "$output" = "$ID" ]
	run -0 sbx-ls -o json
	[[ $output == *"\"sandbox_id\":\"$ID\""* ]]
}

@test "-o yaml prints the state document, and the next tool takes it on stdin" {
	run -0 sbx-provision -o yaml "$MANIFESTS/minimal.yaml"
	[[ $output == *'status: "ready"'* ]]
	echo "$output" > "$WORK/state.yaml"
	id=$(sed -n 's/^sandbox_id: "\(.*\)"/\1/p' "$WORK/state.yaml")
	run -0 sbx-inspect < "$WORK/state.yaml"
	[[ $output == *"sandbox_id: \"$id\""* ]]
	run -0 sbx-run - -- echo via-stdin < "$WORK/state.yaml"
	[ "$output" = "via-stdin" ]
	echo "$id" | sbx-gc -
	[ -z "$(sbx-ls -q)" ]
}

@test "a caller-chosen sandbox_id makes provision idempotent" {
	printf 'sandbox_id: job-42.step-1\nresource_allocation: {pids: 32}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	[ "$ID" = "job-42.step-1" ]
	pid=$(state "$ID" pid)
	provision "$WORK/m.yaml"
	[ "$ID" = "job-42.step-1" ]
	[ "$(state "$ID" pid)" = "$pid" ]
	[ "$(sbx-ls -q | wc -l)" -eq 1 ]
}

@test "an illegal or unknown ID is refused before it becomes a path" {
	run -65 sbx-inspect ../../etc
	run -66 sbx-inspect sbx-00000000
	run -66 sbx-gc sbx-00000000
}

@test "sbx-gc leaves no process, cgroup, mount, netns or state behind" {
	provision "$MANIFESTS/minimal.yaml"
	pid=$(state "$ID" pid)
	netns=$(readlink "/proc/$pid/ns/net")
	mntns=$(readlink "/proc/$pid/ns/mnt")
	spec=$(state "$ID" cgroup)
	run -0 sbx-run "$ID" -- sh -c 'sleep 60 & echo started'
	run -0 sbx-gc "$ID"
	[ "$output" = "$ID" ]
	gone "$pid"
	[ ! -e "$SBX_ROOT/sandboxes/$ID" ]
	# no process anywhere is still in the sandbox's namespaces
	run -1 bash -c "ls -l /proc/[0-9]*/ns/net 2>/dev/null | grep -qF '$netns'"
	run -1 bash -c "ls -l /proc/[0-9]*/ns/mnt 2>/dev/null | grep -qF '$mntns'"
	absent "$SBX_ROOT" /proc/self/mountinfo
	# every cgroup directory named in the state is gone, and after a sweep
	# so is the state root's group
	run -0 sbx-gc
	local c
	for c in $(echo "${spec#1:}" | tr ',' ' '); do
		ctl=${c%%=*}
		[ ! -d "/sys/fs/cgroup/$ctl${c#*=}" ] || { echo "left: $ctl${c#*=}"; false; }
		[ ! -d "/sys/fs/cgroup/$ctl$(dirname "${c#*=}")" ] || { echo "left: group of $ctl"; false; }
	done
}

@test "sbx-gc with no ID reaps sandboxes whose init died, and orphaned cgroups" {
	provision "$MANIFESTS/minimal.yaml"
	pid=$(state "$ID" pid)
	kill -9 "$pid"
	# SIGKILL is delivered asynchronously: give the kernel a moment
	for _ in $(seq 50); do
		sbx-inspect "$ID" | grep -q 'status: "terminated"' && break
		sleep 0.1
	done
	run -0 sbx-inspect "$ID"
	[[ $output == *'status: "terminated"'* ]]
	run -125 sbx-run "$ID" -- true
	run -0 sbx-gc --dry-run
	[[ $output == *"$ID"* ]]
	[ -d "$SBX_ROOT/sandboxes/$ID" ]
	run -0 sbx-gc
	[ ! -e "$SBX_ROOT/sandboxes/$ID" ]
}

@test "the audit log records the lifecycle with a verified hash chain" {
	provision -c corr-7 "$MANIFESTS/minimal.yaml"
	run -0 sbx-run "$ID" -- true
	run -0 sbx-gc "$ID"
	run -0 grep -c . "$SBX_ROOT/audit.log"
	[ "$output" -ge 4 ]
	grep -q '"event":"provision".*"correlation_id":"corr-7"' "$SBX_ROOT/audit.log"
	grep -q '"event":"run-end"' "$SBX_ROOT/audit.log"
	grep -q '"event":"destroy"' "$SBX_ROOT/audit.log"
	run -0 sbx-gc --verify-audit
	# an edit anywhere breaks the chain at that line
	sed -i '2s/"outcome":"ok"/"outcome":"OK"/' "$SBX_ROOT/audit.log"
	run -1 sbx-gc --verify-audit
	[[ $output == *"audit.log:2:"* ]]
}

@test "a deleted audit line is detected" {
	provision "$MANIFESTS/minimal.yaml"
	run -0 sbx-run "$ID" -- true
	sed -i '1d' "$SBX_ROOT/audit.log"
	run -1 sbx-gc --verify-audit
}

@test "the audit head record: a deleted last line, a rewritten last line or a missing head is detected" {
	provision "$MANIFESTS/minimal.yaml"
	run -0 sbx-run "$ID" -- true
	run -0 sbx-gc --verify-audit
	[[ $output == *"3 lines, chain intact, head at line 3"* ]]
	cp "$SBX_ROOT/audit.log" "$WORK/log"
	cp "$SBX_ROOT/audit.head" "$WORK/head"
	# the last line deleted: the chain is intact, the head is not
	sed -i '$d' "$SBX_ROOT/audit.log"
	run -1 sbx-gc --verify-audit
	[[ $output == *"audit.head: names line 3, but the log has 2: the log was truncated"* ]]
	# the last line changed, its hash recomputed: the head names another line
	cp "$WORK/log" "$SBX_ROOT/audit.log"
	python3 "$FIXTURES/audit-rewrite.py" "$SBX_ROOT" 3 line
	run -1 sbx-gc --verify-audit
	[[ $output == *"audit.head: head mismatch: line 3"* ]]
	# no head at all
	cp "$WORK/log" "$SBX_ROOT/audit.log"
	rm "$SBX_ROOT/audit.head"
	run -1 sbx-gc --verify-audit
	[[ $output == *"audit.head: missing"* ]]
	echo garbage > "$SBX_ROOT/audit.head"
	run -1 sbx-gc --verify-audit
	[[ $output == *"audit.head: not a head record"* ]]
	# a head behind the log (a crash lost its last update) is no damage
	cp "$WORK/head" "$SBX_ROOT/audit.head"
	run -0 sbx-run "$ID" -- true
	run -0 sbx-gc --verify-audit
	cp "$WORK/head" "$SBX_ROOT/audit.head"
	run -0 sbx-gc --verify-audit
	[[ $output == *"5 lines, chain intact, head at line 3"* ]]
}

@test "a keyed audit log: every line and the head carry a mac; rewrites without the key are caught" {
	head -c 32 /dev/urandom > "$WORK/audit.key"
	chmod 600 "$WORK/audit.key"
	export SBX_AUDIT_KEY="$WORK/audit.key"
	provision "$MANIFESTS/minimal.yaml"
	run -0 sbx-run "$ID" -- true
	[ "$(grep -c '"hash":"[0-9a-f]\{64\}","mac":"[0-9a-f]\{64\}"}$' "$SBX_ROOT/audit.log")" -eq 3 ]
	grep -q ' mac=[0-9a-f]\{64\}$' "$SBX_ROOT/audit.head"
	run -0 sbx-gc --verify-audit
	[[ $output == *"3 keyed lines, their macs verified"* ]]
	# without the key the chain is checked and the macs are said to be unchecked
	SBX_AUDIT_KEY="" run -0 sbx-gc --verify-audit
	[[ $output == *"3 keyed lines, their macs NOT verified: no key"* ]]
	cp "$SBX_ROOT/audit.log" "$WORK/log"
	cp "$SBX_ROOT/audit.head" "$WORK/head"
	# line 2 changed, every hash after it and the head recomputed: its mac is wrong
	python3 "$FIXTURES/audit-rewrite.py" "$SBX_ROOT" 2 chain
	SBX_AUDIT_KEY="" run -0 sbx-gc --verify-audit
	run -1 sbx-gc --verify-audit
	[[ $output == *"audit.log:2: mac mismatch"* ]]
	# the whole log and its head rewritten without macs: caught with the key
	cp "$WORK/log" "$SBX_ROOT/audit.log"
	cp "$WORK/head" "$SBX_ROOT/audit.head"
	python3 "$FIXTURES/audit-rewrite.py" "$SBX_ROOT" 2 unkeyed
	run -1 sbx-gc --verify-audit
	[[ $output == *"audit.log:3: the last line carries no mac though a key is set"* ]]
	# unkeyed lines after keyed ones
	cp "$WORK/log" "$SBX_ROOT/audit.log"
	cp "$WORK/head" "$SBX_ROOT/audit.head"
	SBX_AUDIT_KEY="" run -0 sbx-run "$ID" -- true
	run -1 sbx-gc --verify-audit
	[[ $output == *"audit.log:4: no mac after keyed lines"* ]]
	# another key
	cp "$WORK/log" "$SBX_ROOT/audit.log"
	cp "$WORK/head" "$SBX_ROOT/audit.head"
	head -c 32 /dev/urandom > "$WORK/other.key"
	chmod 600 "$WORK/other.key"
	SBX_AUDIT_KEY="$WORK/other.key" run -1 sbx-gc --verify-audit
	[[ $output == *"audit.log:1: mac mismatch"* ]]
}

@test "an audit key inside the state root, open to others, missing or short is refused before anything is made" {
	head -c 32 /dev/urandom > "$SBX_ROOT/audit.key"
	chmod 600 "$SBX_ROOT/audit.key"
	SBX_AUDIT_KEY="$SBX_ROOT/audit.key" run -77 sbx-provision "$MANIFESTS/minimal.yaml"
	[[ $output == *"inside the state root"* ]]
	ln -s "$SBX_ROOT/audit.key" "$WORK/link.key"
	SBX_AUDIT_KEY="$WORK/link.key" run -77 sbx-provision "$MANIFESTS/minimal.yaml"
	[[ $output == *"inside the state root"* ]]
	head -c 32 /dev/urandom > "$WORK/audit.key"
	chmod 640 "$WORK/audit.key"
	SBX_AUDIT_KEY="$WORK/audit.key" run -77 sbx-provision "$MANIFESTS/minimal.yaml"
	[[ $output == *"mode 640"* ]]
	SBX_AUDIT_KEY="$WORK/none.key" run -66 sbx-provision "$MANIFESTS/minimal.yaml"
	head -c 16 /dev/urandom > "$WORK/short.key"
	chmod 600 "$WORK/short.key"
	SBX_AUDIT_KEY="$WORK/short.key" run -65 sbx-provision "$MANIFESTS/minimal.yaml"
	[[ $output == *"16 bytes"* ]]
	SBX_AUDIT_KEY="$WORK/short.key" run -65 sbx-gc --verify-audit
	run -0 sbx-ls -q
	[ -z "$output" ]
	[ ! -e "$SBX_ROOT/audit.log" ]
}

@test "SBX_AUDIT_SYSLOG: every audit line also goes to the syslog socket, as syslog(3) sends it" {
	python3 "$FIXTURES/syslog-sink.py" "$WORK/log.sock" "$WORK/received" &
	TEST_PIDS+=($!)
	for _ in $(seq 50); do
		[ -s "$WORK/received" ] && break
		sleep 0.1
	done
	export SBX_AUDIT_SYSLOG="$WORK/log.sock"
	provision "$MANIFESTS/minimal.yaml"
	run -0 sbx-run "$ID" -- true
	run -0 sbx-gc "$ID"
	for _ in $(seq 50); do
		[ "$(grep -c sbx-audit "$WORK/received")" -ge 4 ] && break
		sleep 0.1
	done
	cat "$WORK/received"
	# <authpriv.info>Mmm dd hh:mm:ss sbx-audit[PID]: the line, in the log's order
	run -0 grep -c '^<86>[A-Z][a-z][a-z] [ 1-3][0-9] [0-9:]\{8\} sbx-audit\[[0-9]*\]: {"seq":' \
	    "$WORK/received"
	[ "$output" -eq 4 ]
	diff <(sed -n 's/^<[0-9]*>[^]]*\]: //p' "$WORK/received") "$SBX_ROOT/audit.log"
	# a socket nobody reads: the log is still written
	SBX_AUDIT_SYSLOG="$WORK/nobody.sock" provision "$MANIFESTS/minimal.yaml"
	[ "$(grep -c . "$SBX_ROOT/audit.log")" -eq 5 ]
	SBX_AUDIT_SYSLOG="dev/log" run -64 sbx-ls
}

@test "the sbx front-end dispatches to sbx-VERB" {
	run -0 sbx provision -n "$MANIFESTS/minimal.yaml"
	run -0 sbx ls -q
	run -64 sbx no-such-verb
	run -0 sbx --version
}

@test "every program answers -h and -V" {
	local p
	for p in sbx-provision sbx-run sbx-inspect sbx-ls sbx-gc sbx-watchdog sbx-pause; do
		run -0 "$p" -h
		[[ $output == usage:* ]]
		run -0 "$p" --version
		run -64 "$p" --no-such-option
	done
}
