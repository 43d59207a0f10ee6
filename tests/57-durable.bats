#!/usr/bin/env bats
# Durable by construction: a step repeated with its caller's key gives the
# first result and does no work again, whatever killed the caller on the way.
load helpers

json_get() {
	python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"
}

# ran FILE: how many times a step appended its line to FILE inside $ID.
ran() {
	sbx-run "$ID" -- sh -c "cat $1 2>/dev/null | wc -l"
}

# until_running KEY...: wait until the sandbox has a running run for each key.
until_running() {
	local k
	for k in "$@"; do
		until sbx-ls --runs "$ID" -o json | grep -q "\"once_key\":\"$k\",\"state\":\"running\""; do
			sleep 0.05
		done
	done
}

@test "sbx-run --once: a repeat replays the recorded result without running again; another input under the key is 65" {
	provision "$MANIFESTS/minimal.yaml"
	step='echo run >> /tmp/n; echo out; echo err >&2; exit 3'
	run -3 --separate-stderr sbx-run --once wf-1/step-a "$ID" -- sh -c "$step"
	[ "$output" = out ] && [ "$stderr" = err ]
	run -3 --separate-stderr sbx-run --once wf-1/step-a "$ID" -- sh -c "$step"
	[ "$output" = out ] && [ "$stderr" = err ]
	run -0 ran /tmp/n
	[ "$output" = 1 ]
	# the object: the same both times, with the streams' digests
	run -3 sbx-run --once wf-1/step-a -o json "$ID" -- sh -c "$step"
	first=$output
	[ "$(json_get 'd["stdout_sha256"], d["stderr_bytes"], d["trace"]["exit_code"]' <<<"$first")" = \
	    "$(echo out | sha256sum | cut -d' ' -f1) 4 3" ]
	run -3 sbx-run --once wf-1/step-a -o json "$ID" -- sh -c "$step"
	[ "$output" = "$first" ]
	run -3 sbx-run --once wf-1/step-a --trace "$WORK/trace" "$ID" -- sh -c "$step"
	[ "$(yaml_value exit_code "$WORK/trace")" = 3 ]
	# another command, environment or sandbox under the key: 65, naming it, nothing run
	run -65 sbx-run --once wf-1/step-a "$ID" -- sh -c 'echo run >> /tmp/n'
	[[ $output == *"whose command was"* ]]
	run -65 sbx-run --once wf-1/step-a -e A=1 "$ID" -- sh -c "$step"
	[[ $output == *"whose env was [], not [\"A=1\"]"* ]]
	other=$ID
	provision "$MANIFESTS/minimal.yaml"
	run -65 sbx-run --once wf-1/step-a "$ID" -- sh -c "$step"
	[[ $output == *"whose sandbox_id was \"$other\""* ]]
	ID=$other
	run -0 ran /tmp/n
	[ "$output" = 1 ]
	run -0 sbx-ls --runs "$ID" -o json
	[ "$(json_get 'd["once_key"], d["state"], d["exit_code"]' <<<"$output")" = "wf-1/step-a exited 3" ]
	# a key is 1 to 256 bytes without control characters
	run -125 sbx-run --once '' "$ID" -- true
	run -125 sbx-run --once "$(printf 'a\nb')" "$ID" -- true
	run -125 sbx-run --once k -m "$MANIFESTS/minimal.yaml" -- true
	[[ $output == *"not with -m"* ]]
}

@test "sbx-run --once SIGKILLed while its command runs, before it started, or twice at once: one run, one result" {
	provision "$MANIFESTS/minimal.yaml"
	# the caller killed mid-run: the run goes on, the repeat waits for it
	sbx-run --once k-mid "$ID" -- sh -c 'echo run >> /tmp/mid; sleep 1; echo done; exit 5' &
	caller=$!
	TEST_PIDS+=("$caller")
	until_running k-mid
	kill -KILL "$caller"
	run -5 sbx-run --once k-mid "$ID" -- sh -c 'echo run >> /tmp/mid; sleep 1; echo done; exit 5'
	[ "$output" = done ]
	run -0 ran /tmp/mid
	[ "$output" = 1 ]
	# killed when the key had its run's directory but no run yet: the repeat starts it
	run -137 env SBX_TEST_CRASH_AT=once-made sbx-run --once k-early "$ID" -- sh -c 'echo run >> /tmp/early'
	run -0 ran /tmp/early
	[ "$output" = 0 ]
	run -0 sbx-run --once k-early "$ID" -- sh -c 'echo run >> /tmp/early'
	run -0 sbx-run --once k-early "$ID" -- sh -c 'echo run >> /tmp/early'
	run -0 ran /tmp/early
	[ "$output" = 1 ]
	# two callers with one key at the same moment: one run, both get its result
	for i in 1 2 3; do
		sbx-run --once k-race "$ID" -- sh -c 'echo run >> /tmp/race; echo $$' > "$WORK/race.$i" &
		TEST_PIDS+=($!)
	done
	wait "${TEST_PIDS[@]: -3}"
	run -0 ran /tmp/race
	[ "$output" = 1 ]
	[ -s "$WORK/race.1" ] && cmp "$WORK/race.1" "$WORK/race.2" && cmp "$WORK/race.1" "$WORK/race.3"
}

@test "sbx-run --once: INT and TERM to the caller are the run's, and the repeat replays them; a lost run is 125" {
	provision "$MANIFESTS/minimal.yaml"
	sbx-run --once k-term "$ID" -- sleep 60 &
	caller=$!
	TEST_PIDS+=("$caller")
	until_running k-term
	kill -TERM "$caller"
	rc=0
	wait "$caller" || rc=$?
	[ "$rc" = 143 ]
	run -143 sbx-run --once k-term "$ID" -- sleep 60
	# the process that ran it killed (as a host restart would): unknown, never run twice
	sbx-run --once k-lost "$ID" -- sleep 60 &
	TEST_PIDS+=($!)
	until_running k-lost
	sup=$(sbx-ls --runs "$ID" -o json | python3 -c '
import json, sys
for l in sys.stdin:
    d = json.loads(l)
    if d.get("once_key") == "k-lost": print(d["pid"])')
	[ -n "$sup" ]
	kill -KILL "$sup"
	run -125 sbx-run --once k-lost "$ID" -- sleep 60
	[[ $output == *"left no result"*"whether the command ran is unknown"* ]]
}
