#!/usr/bin/env bats
# sbx-mcp: the Model Context Protocol server, driven by the official
# TypeScript SDK's client (from npm, installed under build/npm on first use)
# and by hand-made requests.
load helpers

REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
NPM=$REPO/build/npm

setup_file() {
	npm_pinned "$BATS_TEST_DIRNAME/mcp/package.json" "$NPM" node_modules/@modelcontextprotocol/sdk
}

# mcp_lines: sbx-mcp's answers to the requests on stdin, one JSON-RPC object
# a line, summarised by a real JSON parser as "ID CODE-or-ok".
mcp_lines() {
	sbx-mcp "$@" | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    assert m["jsonrpc"] == "2.0", m
    print(m["id"], m["error"]["code"] if "error" in m else "ok")'
}

@test "mcp: the TypeScript SDK's client creates, runs python3, writes and reads, snapshots, forks 2, destroys" {
	printf 'limits: {memory_mb: 1024}\n' | policy
	command -v node >/dev/null || { echo "node is needed (Debian's nodejs)"; false; }
	cp "$BATS_TEST_DIRNAME/mcp/client.mjs" "$NPM/client.mjs"
	run -0 node "$NPM/client.mjs"
	echo "$output"
	[ "${lines[-1]}" = "ok destroy" ]
	[[ $output == *"ok unknown tool, a manifest beyond the policy, a stranger's ID, bad arguments: errors; ping"* ]]
	[ -z "$(sbx-ls -q)" ]
}

@test "mcp: malformed requests get JSON-RPC errors, in order, and the server serves on" {
	big=$(head -c 1100000 /dev/zero | tr '\0' x)
	run -0 mcp_lines <<EOF
not json at all
[{"jsonrpc":"2.0","id":1,"method":"ping"}]
{"id":2,"method":"ping"}
{"jsonrpc":"2.0","id":3,"method":"no/such/method"}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}}
{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{}}}
{"jsonrpc":"2.0","id":"six","method":"ping","params":"not an object"}
{"jsonrpc":"2.0","id":7,"x":"$big"}
{"jsonrpc":"2.0","method":"notifications/initialized"}

{"jsonrpc":"2.0","id":8,"method":"ping"}
EOF
	[ "$output" = "$(printf '%s\n' "None -32700" "None -32600" "2 -32600" "3 -32601" "4 -32602" \
		"5 -32602" "six -32600" "None -32600" "8 ok")" ]
}

@test "mcp: a tool's failure is a tool error with the reason; another session's sandbox is not reachable" {
	provision "$MANIFESTS/minimal.yaml"
	req='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run","arguments":{"sandbox_id":"'$ID'","command":"true"}}}'
	run -0 bash -c "echo '$req' | sbx-mcp"
	[[ $output == *'"isError":true'* ]]
	[[ $output == *"$ID: no such sandbox or snapshot of this session (exit 66)"* ]]
	# nor can it stand a sandbox on a snapshot not of its session
	run -0 sbx-snap "$ID"
	snap=$output
	run -0 bash -c "echo '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"create\",\"arguments\":{\"manifest\":{\"rootfs\":\"$snap\"}}}}' | sbx-mcp"
	[[ $output == *"rootfs $snap: no such snapshot of this session (exit 66)"* ]]
	# the operator may hand a server the whole state root
	run -0 bash -c "echo '$req' | sbx-mcp --any-sandbox"
	[[ $output == *'"isError":false'* ]] && [[ $output == *'"exit_code":0'* ]]
	# a named manifest of the operator's; a name that climbs out is refused
	mkdir "$WORK/named"
	printf 'resource_allocation: {memory_mb: 128}\n' > "$WORK/named/small.yaml"
	create='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create","arguments":{"manifest_name":"NAME"}}}'
	run -0 bash -c "printf '%s\n' '${create/NAME/small}' '${create/NAME/..\/small}' | sbx-mcp --manifests '$WORK/named'"
	[ "$(grep -c '"isError":false' <<<"$output")" = 1 ]
	[[ ${lines[1]} == *"manifest_name '../small': letters, digits"* ]]
	[ "$(sbx-ls -q | wc -l)" = 2 ]  # the first sandbox and the named one
	# --max-sandboxes: the session's live sandboxes, counted
	run -0 bash -c "printf '%s\n' '${create/NAME/small}' '${create/NAME/small}' | sbx-mcp --manifests '$WORK/named' --max-sandboxes 1"
	[[ ${lines[1]} == *"this session has 1 live sandboxes, its most"* ]]
}

@test "mcp: a client gone mid-run leaves no process of the server's; the run ends at its timeout" {
	printf 'limits: {memory_mb: 1024}\n' | policy
	mkfifo "$WORK/in"
	sbx-mcp --timeout 2 < "$WORK/in" > "$WORK/out" 2>&1 &
	pid=$!
	TEST_PIDS+=("$pid")
	exec 7>"$WORK/in"
	echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create","arguments":{"manifest":{}}}}' >&7
	until grep -q sandbox_id "$WORK/out"; do sleep 0.1; kill -0 "$pid"; done
	id=$(sbx-ls -q)
	echo '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run","arguments":{"sandbox_id":"'"$id"'","command":"sleep 100"}}}' >&7
	until sbx-run "$id" -- pgrep -x sleep >/dev/null; do sleep 0.1; done
	exec 7>&-
	# the server answers the run it had (124: its timeout) and leaves at the end of input
	wait "$pid"
	[[ $(tail -n 1 "$WORK/out") == *'"exit_code":124'* ]]
	run -1 sbx-run "$id" -- pgrep -x sleep
	# the sandbox lives on, to its own lifetime, under its watchdog
	[ "$(state "$id" status)" = ready ]
	[ -n "$(state "$id" expires_at)" ]
}
