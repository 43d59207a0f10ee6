#!/usr/bin/env bats
# valgrind (memcheck) over the lifecycle steps it can follow. valgrind 3.19 has
# no open_tree, mount_setattr, Landlock, seccomp or pidfd_open, so provisioning
# and runs are covered by the ASan/UBSan suite (make check SANITIZE=1) instead;
# here the sandboxes are made natively and every other step runs under memcheck.
load helpers

vg() {
	valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
		--errors-for-leak-kinds=definite,indirect --error-exitcode=99 "$@"
}

@test "valgrind: inspect, ls, pause, watchdog, gc, audit verification and bad input are clean" {
	command -v valgrind >/dev/null || skip "valgrind is not installed"
	# ASan's shadow memory and valgrind cannot share a process
	if [ "${SBX_SANITIZE:-}" = 1 ]; then
		skip "the ASan build is checked by ASan, not valgrind"
	fi
	printf 'resource_allocation: {memory_mb: 128, pids: 32, max_wall_clock_s: 600}\nenv: {A: b}\ntmpfs: [{guest: /scratch, size_mb: 4}]\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	run -0 sbx-run "$ID" -- true
	run -0 vg sbx-inspect -o json "$ID"
	run -0 vg sbx-inspect "$ID"
	run -0 vg sbx-ls -o yaml
	run -0 vg sbx-pause "$ID"
	run -0 vg sbx-pause --resume "$ID"
	run -0 vg sbx-inspect --usage -o json "$ID"
	run -0 vg sbx-ls -q -f status=ready -f label:x
	run -0 vg sbx-ls --runs "$ID"
	run -0 vg sbx-watchdog --extend 5 "$ID"
	run -0 vg sbx-watchdog --once --all
	run -0 vg sbx-provision -n -o json "$MANIFESTS/spec-example.yaml"
	run -0 vg sbx-provision -n -o yaml "$MANIFESTS/seed-example.json"
	local f
	for f in "$FIXTURES"/invalid/*; do
		run -65 vg sbx-provision "$f"
	done
	run -65 vg sbx-inspect ../x
	run -0 vg sbx-gc --verify-audit
	run -0 vg sbx-gc "$ID"
	provision "$WORK/m.yaml"
	kill -9 "$(state "$ID" pid)"
	sleep 0.2
	run -0 vg sbx-gc
	run -0 vg sbx-gc --dry-run
}

@test "valgrind: snapshot, verify, inspect, export, import, retention and hostile layers are clean" {
	command -v valgrind >/dev/null || skip "valgrind is not installed"
	if [ "${SBX_SANITIZE:-}" = 1 ]; then
		skip "the ASan build is checked by ASan, not valgrind"
	fi
	provision <<<'read_only_root: false'
	run -0 sbx-run "$ID" -- sh -c 'echo data > /root/d; ln /root/d /root/h; ln -s d /root/s; rm /etc/hostname'
	run -0 vg sbx-snap --id v1 "$ID"
	run -0 vg sbx-snap --id v1 "$ID"
	run -0 vg sbx-snap verify v1
	run -0 vg sbx-snap inspect -o json v1
	run -0 vg sbx-ls -s -o yaml
	run -0 vg sbx-snap export -f "$WORK/v1.tar" v1
	run -0 vg sbx-snap import "$WORK/v1.tar"
	local k
	for k in symlink-write hardlink-out truncated xattr; do
		python3 "$FIXTURES/mklayer.py" "$k" "$WORK/$k" "$WORK/escape"
		run -65 vg sbx-snap import "$WORK/$k/export.tar"
	done
	wd=$(state "$ID" watchdog_pid)
	[ -n "$wd" ] && kill -0 "$wd"
	run -0 vg sbx-gc "$ID"
	# the watchdog goes with its sandbox, pidfds or not (valgrind has none)
	for _ in $(seq 50); do kill -0 "$wd" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$wd" 2>/dev/null; then
		[ "$(cut -d' ' -f3 "/proc/$wd/stat")" = Z ]
	fi
	run -0 vg sbx-gc --keep-last 1 --dry-run
	run -0 vg sbx-snap remove v1
	run -0 vg sbx-gc
}

@test "valgrind: sbx-mcp's protocol, tool list and tool errors, and sbx-cp's refusals are clean" {
	command -v valgrind >/dev/null || skip "valgrind is not installed"
	if [ "${SBX_SANITIZE:-}" = 1 ]; then
		skip "the ASan build is checked by ASan, not valgrind"
	fi
	# what needs no run (valgrind cannot follow one into a sandbox)
	printf '%s\n' 'not json' '[1]' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}' \
		'{"jsonrpc":"2.0","id":2,"method":"tools/list"}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run","arguments":{"sandbox_id":"sbx-00000000","command":"true"}}}' \
		'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"create","arguments":{"manifest":{"no_such_key":1}}}}' \
		'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fork","arguments":{"source":"snap-00000000","count":"x"}}}' \
		'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope"}}' > "$WORK/req"
	run -0 vg sbx-mcp --any-sandbox < "$WORK/req"
	[ "${#lines[@]}" = 8 ]
	run -64 vg sbx-cp "$WORK/req" "$WORK/x"
	run -66 vg sbx-cp "$WORK/req" sbx-00000000:/tmp
}
