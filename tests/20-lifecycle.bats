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

@test "every multi-record -o yaml output is a YAML stream, every -o json one an object a line" {
	provision "$MANIFESTS/minimal.yaml"
	snap=$(sbx-snap "$ID")
	provision "$MANIFESTS/minimal.yaml"
	snap2=$(sbx-snap "$ID")
	run -0 sbx-fork -n 3 -o yaml "$snap"
	[ "$(yaml_docs <<<"$output")" -eq 3 ]
	run -0 sbx-fork -n 2 -o json "$snap2"
	[ "$(json_lines <<<"$output")" -eq 2 ]
	[ "$(sbx-ls -o yaml | yaml_docs)" -eq 7 ]
	[ "$(sbx-ls -o json | json_lines)" -eq 7 ]
	[ "$(sbx-ls -s -o yaml | yaml_docs)" -eq 2 ]
	[ "$(sbx-ls -s -o json | json_lines)" -eq 2 ]
	[ "$(sbx-snap list -o yaml | yaml_docs)" -eq 2 ]
	[ "$(sbx-snap list -o json | json_lines)" -eq 2 ]
	[ "$(sbx-snap inspect "$snap" | yaml_docs)" -eq 1 ]
	[ "$(sbx-inspect "$ID" | yaml_docs)" -eq 1 ]
}

@test "a state document on stdin is one operand; IDs one a line, YAML streams and JSON lines are several" {
	provision "$MANIFESTS/minimal.yaml"
	a=$ID
	provision "$MANIFESTS/minimal.yaml"
	b=$ID
	# a sandbox's document forks it, as its ID does
	run -0 bash -c "sbx-inspect $a | sbx-fork"
	kid=$output
	[[ $kid == sbx-* ]]
	run -0 bash -c "sbx-snap -o yaml $b | sbx-fork -o json"
	[ "$(json_lines <<<"$output")" -eq 1 ]
	# one document destroys one sandbox and exits 0
	run -0 bash -c "sbx-inspect $kid | sbx-gc -"
	[ "$output" = "$kid" ]
	run -0 bash -c "sbx-inspect -o json $b | sbx-pause && sbx-pause -r $b"
	# several documents for a program that takes one: 65, nothing done
	run -65 bash -c "sbx-ls -o yaml | sbx-pause"
	[[ $output == *"IDs, where one is wanted"* ]]
	[ "$(state "$a" status)" = ready ]
	# bad input anywhere on stdin: 65 before anything is destroyed
	n=$(sbx-ls -q | wc -l)
	run -65 bash -c "printf '%s\n../x\n' $a | sbx-gc -"
	[[ $output == *"stdin:2:"* ]]
	run -65 bash -c "{ sbx-inspect $a; echo ---; echo 'name: x'; } | sbx-gc -"
	[[ $output == *"has no sandbox_id"* ]]
	run -65 bash -c "sbx-snap -o yaml $a | sbx-gc -"
	[ "$(sbx-ls -q | wc -l)" -eq "$n" ]
	# a YAML stream and JSON lines are one operand a document
	run -0 bash -c "sbx-ls -o yaml | sbx-gc -"
	[ "${#lines[@]}" -eq "$n" ]
	provision "$MANIFESTS/minimal.yaml"
	provision "$MANIFESTS/minimal.yaml"
	run -0 bash -c "sbx-ls -o json | sbx-gc -"
	[ "${#lines[@]}" -eq 2 ]
	[ -z "$(sbx-ls -q)" ]
	run -0 bash -c "sbx-ls -q | sbx-gc -"
	[ -z "$output" ]
}

@test "sbx-run - takes the first record of stdin, and the command gets the rest" {
	provision "$MANIFESTS/minimal.yaml"
	run -0 bash -c "{ sbx-inspect $ID; echo ---; echo rest; } | sbx-run - -- cat"
	[ "$output" = "rest" ]
	run -0 bash -c "{ sbx-inspect -o json $ID; echo rest; } | sbx-run - -- cat"
	[ "$output" = "rest" ]
	run -0 bash -c "printf '%s\nrest\n' $ID | sbx-run - -- cat"
	[ "$output" = "rest" ]
	run -0 bash -c "sbx-inspect $ID | sbx-run - -- cat"
	[ -z "$output" ]
	run -125 bash -c "echo 'name: x' | sbx-run - -- true"
	[[ $output == *"has no sandbox_id"* ]]
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
	# the same ID with another manifest is a mistake, not the sandbox asked for
	printf 'sandbox_id: job-42.step-1\nread_only_root: true\nresource_allocation: {pids: 32, memory_mb: 64}\n' > "$WORK/other.yaml"
	run -65 sbx-provision "$WORK/other.yaml"
	[[ $output == *"sandbox_id job-42.step-1 exists with another manifest: resource_allocation.memory_mb differs"* ]]
	printf 'sandbox_id: job-42.step-1\nuser: 1000:1000\nresource_allocation: {pids: 32}\n' > "$WORK/other.yaml"
	run -65 sbx-provision -o yaml "$WORK/other.yaml"
	[[ $output == *": user differs"* ]]
	[ "$(state "$ID" pid)" = "$pid" ]
	[ "$(state "$ID" memory_mb)" = 512 ]
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
	local d
	[ -n "$(cg_dirs "$spec")" ]
	for d in $(cg_dirs "$spec"); do
		[ ! -d "$d" ] || { echo "left: $d"; false; }
		[ ! -d "$(dirname "$d")" ] || { echo "left: group $(dirname "$d")"; false; }
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

@test "the sbx front-end dispatches to sbx-VERB; an unknown verb gets the list and the nearest" {
	run -0 sbx provision -n "$MANIFESTS/minimal.yaml"
	run -0 sbx ls -q
	run -64 sbx no-such-verb
	[[ $output == *"'no-such-verb' is not a verb"* ]]
	[[ $output == *"verbs: provision run snap fork inspect ls gc watchdog pause"* ]]
	[[ $output != *"did you mean"* ]]
	run -64 sbx provison
	[[ $output == *"did you mean 'provision'?"* ]]
	run -64 sbx ../sbx-run
	[[ $output == *"verbs: provision"* ]]
	run -0 sbx --version
	run -0 sbx -h
	[[ $output == *"gc         destroy sandboxes"* ]]
}

@test "-h prints every option that the man page names, not only the usage line" {
	local p opt n
	for p in "$BATS_TEST_DIRNAME"/../man/sbx-*.1.scd; do
		p=$(basename "$p" .1.scd)
		run -0 "$p" -h
		[[ ${lines[0]} == usage:* ]]
		n=0
		while read -r opt; do
			n=$((n + 1))
			[[ $output == *"$opt"* ]] || { echo "$p -h does not name $opt"; false; }
		done < <(awk '/^# OPTIONS/ { on = 1; next } /^# / { on = 0 } on' \
		    "$BATS_TEST_DIRNAME/../man/$p.1.scd" | grep -o '^\*-[^*]*\*\(, \*--[a-z-]*\*\)*' | grep -o -- '--[a-z-]*')
		[ "$n" -ge 2 ]
		[[ $output == *"See $p(1)."* ]]
	done
}

@test "when the kernel refuses namespaces or a new proc, provision names the cause and the way out" {
	[ "$(id -u)" -eq 0 ] || skip "staging a chroot and a covered /proc needs root"
	local d covered
	# in a chroot the kernel makes no user namespace
	d=$(mktemp -d "$WORK/chroot.XXXXXX")
	run -69 unshare -m --propagation private sh -c "mount --rbind / '$d' && chroot '$d' env PATH='$PATH' SBX_ROOT='$SBX_ROOT' sh -c 'echo {} | sbx-provision'"
	[[ $output == *"cannot create the sandbox's namespaces: Operation not permitted (here: this process is in a chroot"* ]]
	[[ $output == *"user.max_user_namespaces"* ]]
	[[ $output == *"apparmor_restrict_unprivileged_userns"* ]]
	[[ $output == *"seccomp"* ]]
	# a /proc with a part covered, as Docker masks /proc/keys and others
	for covered in /proc/keys /proc/timer_list /proc/kcore; do [ -f "$covered" ] && break; done
	[ -f "$covered" ]
	run -69 unshare -m --propagation private sh -c "mount --bind /dev/null $covered && echo {} | sbx-provision"
	[[ $output == *"mount proc on /proc: Operation not permitted: the kernel gives a user namespace a new proc only while"* ]]
	[[ $output == *"mounts cover $covered"* ]]
	[[ $output == *"systempaths=unconfined"* ]]
	[ -z "$(sbx-ls -q)" ]
	rmdir "$d"
}

@test "every program answers -h and -V" {
	local p
	for p in sbx-provision sbx-run sbx-inspect sbx-ls sbx-gc sbx-watchdog sbx-pause; do
		run -0 "$p" -h
		[[ $output == usage:* ]]
		run -0 "$p" --version
		if [ "$p" = sbx-run ]; then
			run -125 "$p" --no-such-option
		else
			run -64 "$p" --no-such-option
		fi
	done
}

@test "a state root of mode 0700 (mktemp -d) works: provision, run, write, snapshot, fork" {
	chmod 700 "$SBX_ROOT"
	printf 'read_only_root: false\nresource_allocation: {disk_mb: 32}\n' > "$WORK/rw.yaml"
	provision "$WORK/rw.yaml"
	run -0 sbx-run "$ID" -- sh -c 'echo kept > /root/f && cat /root/f'
	[ "$output" = kept ]
	run -0 sbx-run --user 1000 "$ID" -- sh -c 'echo mine > /home/sandbox/g && cat /home/sandbox/g'
	[ "$output" = mine ]
	run -0 sbx-snap "$ID"
	snap=$output
	run -0 sbx-fork -n 1 "$snap"
	run -0 sbx-run "$output" -- cat /root/f
	[ "$output" = kept ]
	# and the root stayed as the operator made it
	[ "$(stat -c %a "$SBX_ROOT")" = 700 ]
}

@test "labels: kept in the state; sbx-ls --filter by status and label, oldest first; bad labels and filters refused" {
	provision <<<'labels: {agent: "7", team/x: blue}'
	a=$ID
	provision <<<'labels: {agent: "8"}'
	b=$ID
	provision <<<'{}'
	c=$ID
	[ "$(sbx-inspect -o json "$a" | python3 -c 'import json,sys; print(json.load(sys.stdin)["labels"])')" = "{'agent': '7', 'team/x': 'blue'}" ]
	run -0 sbx-ls -q
	[ "$output" = "$(printf '%s\n' "$a" "$b" "$c")" ]
	run -0 sbx-ls -q --filter label:agent=7
	[ "$output" = "$a" ]
	run -0 sbx-ls -q -f label:agent -f status=ready
	[ "$output" = "$(printf '%s\n' "$a" "$b")" ]
	run -0 sbx-ls -q -f tier=namespace -f label:team/x=blue
	[ "$output" = "$a" ]
	sbx-gc "$b" >/dev/null
	run -0 sbx-ls -q -f status=ready -f label:agent
	[ "$output" = "$a" ]
	run -64 sbx-ls -f colour=red
	run -64 sbx-ls -f status=sleepy
	run -64 sbx-ls -f label:Agent=7
	run -65 sbx-provision -n <<<'labels: {Agent: "7"}'
	[[ $output == *"'Agent' is not a label name"* ]]
	run -65 sbx-provision -n <<<'labels: {a: [1]}'
	# the terminal's table: columns aligned, labels last
	run -0 script -qec "sbx-ls" /dev/null
	[[ ${lines[0]} == "ID "*"STATUS "*"TIER "*"CREATED "*"EXPIRES "*"LABELS"* ]]
	col=$(awk 'NR == 1 { print index($0, "LABELS") }' <<<"$output")
	row=$(grep "$a" <<<"$output" | tr -d '\r')
	[ "${row:$((col - 1))}" = "agent=7,team/x=blue" ]
}
