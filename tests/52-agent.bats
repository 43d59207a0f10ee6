#!/usr/bin/env bats
# What agent platforms use, in every tier: a run's result as one object
# (sbx-run -o json) and files copied into and out of a live sandbox (sbx-cp).
# tiers: namespace runc crun runsc
load helpers
load tierlib

# json_get EXPR: EXPR of the JSON object on stdin, as Python prints it
# (`d` is the object), read by a real JSON parser.
json_get() {
	python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"
}

@test "agent: -o json is one object with the status, both streams, their sizes and the trace" {
	tier_provision </dev/null
	run -3 --separate-stderr bash -c "echo piped | sbx-run -o json $ID -- sh -c 'tr a-z A-Z; echo oops >&2; exit 3'"
	[ -z "$stderr" ]
	obj=$output
	[ "$(json_get 'd["exit_code"], d["signal"], d["truncated"]' <<<"$obj")" = "3 None False" ]
	[ "$(json_get 'repr(d["stdout"]), repr(d["stderr"])' <<<"$obj")" = "'PIPED\n' 'oops\n'" ]
	[ "$(json_get 'd["stdout_bytes"], d["stderr_bytes"]' <<<"$obj")" = "6 5" ]
	[ "$(json_get 'd["trace"]["exit_code"], d["trace"]["elapsed_s"] > 0' <<<"$obj")" = "3 True" ]
	# a signal: 128+N and the signal's number (the OCI runtimes' exec says
	# only 128+N); -o yaml is the same object
	run -137 --separate-stderr sbx-run -o yaml "$ID" -- sh -c 'kill -KILL $$'
	sig=9
	[ "$TIER" = namespace ] || sig=None
	[ "$(python3 -c 'import yaml, sys; d = yaml.safe_load(sys.stdin); print(d["exit_code"], d["signal"])' <<<"$output")" = "137 $sig" ]
	# a command not found is a result too, with the reason (sbx's, or the
	# runtime's on its stderr)
	run -127 --separate-stderr sbx-run -o json "$ID" -- no-such-command
	[ "$(json_get 'd["exit_code"], "no-such-command" in d.get("error", "") + d["stderr"]' <<<"$output")" = "127 True" ]
	# bytes that are not UTF-8 (and NUL) become U+FFFD: the object stays JSON
	run -0 sbx-run -o json "$ID" -- printf 'a\377\000b\303\251'
	[ "$(json_get 'd["stdout"] == "a\ufffd\ufffdb\u00e9", d["stdout_bytes"]' <<<"$output")" = "True 6" ]
}

@test "agent: -o json keeps --max-output bytes of each stream and counts the rest; leftovers do not hold it" {
	tier_provision </dev/null
	run -0 sbx-run -o json --max-output 1000 "$ID" -- sh -c 'head -c 3000000 /dev/zero | tr "\0" a; echo e >&2'
	[ "$(json_get 'len(d["stdout"]), d["stdout_bytes"], d["stderr"], d["truncated"]' <<<"$output")" = "1000 3000000 e
 True" ]
	# stdin larger than a pipe holds, to a command that reads none of it
	head -c 300000 /dev/zero > "$WORK/in"
	run -0 sbx-run -o json "$ID" -- sh -c 'wc -c' < "$WORK/in"
	[ "$(json_get 'd["stdout"].strip()' <<<"$output")" = 300000 ]
	run -0 sbx-run -o json "$ID" -- true < "$WORK/in"
	# a process the command left running: the result comes when the command
	# ends, with what it wrote, even while the process holds the pipes open
	# (but under runc and crun, whose exec waits for whoever holds the
	# streams it passed on)
	run -0 timeout 60 sbx-run -o json "$ID" -- sh -c 'sleep 120 >/dev/null 2>&1 & echo done'
	[ "$(json_get 'd["stdout"]' <<<"$output")" = done ]
	if [ "$TIER" = namespace ] || [ "$TIER" = runsc ]; then
		run -0 timeout 60 sbx-run -o json "$ID" -- sh -c 'sleep 120 & echo held'
		[ "$(json_get 'd["stdout"]' <<<"$output")" = held ]
	fi
}

@test "agent: -o refuses a terminal and unknown formats (125)" {
	tier_provision </dev/null
	run -125 sbx-run -o xml "$ID" -- true
	[[ $output == *"--output: 'xml' is not json or yaml"* ]]
	run -125 sbx-run -t -o json "$ID" -- true
	[[ $output == *"terminal"* ]]
	run -125 sbx-run -o json --max-output lots "$ID" -- true
}
