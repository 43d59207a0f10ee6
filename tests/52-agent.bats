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
	[ "$(json_get 'd["stdout"]' <<<"$output")" = "done" ]
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

@test "agent: sbx-cp round-trips a tree: modes, times, symlinks, a 100 MB file; owners the sandbox user's" {
	tier_provision <<<$'read_only_root: false\nuser: "1000:1000"\nresource_allocation: {disk_mb: 512}'
	mkdir -p "$WORK/src/sub/deep"
	echo secret > "$WORK/src/sub/f"
	chmod 0640 "$WORK/src/sub/f"
	chmod 0750 "$WORK/src/sub/deep"
	printf '#!/bin/sh\necho run\n' > "$WORK/src/x.sh"
	chmod 0755 "$WORK/src/x.sh"
	ln -s sub/f "$WORK/src/rel"
	ln -s /etc/shadow "$WORK/src/abs"
	head -c 100000000 /dev/urandom > "$WORK/src/big"
	touch -h -d '2021-03-04 05:06:07' "$WORK/src/sub/f" "$WORK/src/rel" "$WORK/src/sub/deep" "$WORK/src/sub"
	run -0 sbx-cp "$WORK/src" "$ID:/home/sandbox"
	# (python's stat: gVisor's statx refuses coreutils' flags)
	run -0 sbx-run -w /home/sandbox/src "$ID" -- python3 -c '
import os, subprocess
for p in ("sub", "sub/f", "sub/deep", "x.sh"):
    st = os.lstat(p)
    print(p, oct(st.st_mode & 0o7777)[2:], "%d:%d" % (st.st_uid, st.st_gid), *([int(st.st_mtime)] if p != "x.sh" else []))
print(os.readlink("rel"), os.readlink("abs"))
print(subprocess.run(["./x.sh"], capture_output=True, text=True).stdout.strip(), open("rel").read().strip())'
	t=$(date -d '2021-03-04 05:06:07' +%s)
	[ "$output" = "$(printf '%s\n' "sub 755 1000:1000 $t" \
		"sub/f 640 1000:1000 $t" "sub/deep 750 1000:1000 $t" "x.sh 755 1000:1000" \
		"sub/f /etc/shadow" "run secret")" ]
	# and back out, under another name, with the same bytes
	run -0 sbx-cp "$ID:/home/sandbox/src" "$WORK/back"
	cmp "$WORK/src/big" "$WORK/back/big"
	[ "$(stat -c '%a %Y' "$WORK/back/sub/f")" = "640 $(date -d '2021-03-04 05:06:07' +%s)" ]
	[ "$(readlink "$WORK/back/abs")" = /etc/shadow ]
	[ "$(stat -c %u "$WORK/back/sub/f")" = "$(id -u)" ]
	# one file, into an existing directory and as a new name; - is a tar stream
	run -0 sbx-cp "$ID:/home/sandbox/src/sub/f" "$WORK/back/sub/deep"
	run -0 sbx-cp "$ID:/home/sandbox/src/x.sh" "$WORK/renamed"
	[ "$(cat "$WORK/back/sub/deep/f")" = secret ]
	[ -x "$WORK/renamed" ]
	run -0 bash -c "sbx-cp $ID:/home/sandbox/src/sub - | tar -t | sort"
	[ "$output" = "$(printf 'sub/\nsub/deep/\nsub/f')" ]
	run -0 bash -c "tar -C '$WORK/src' -c sub | sbx-cp - $ID:/tmp && sbx-run $ID -- cat /tmp/sub/f"
	[ "$output" = secret ]
}

@test "agent: sbx-cp copies a link to a host file as the link; read-only, quota and missing paths refused" {
	tier_provision <<<$'read_only_root: false\nuser: "1000:1000"\nresource_allocation: {disk_mb: 16}'
	# a link inside to the host's /etc/shadow: the link comes out, never the file
	run -0 sbx-run "$ID" -- ln -s /etc/shadow /home/sandbox/shadow
	run -0 sbx-cp "$ID:/home/sandbox/shadow" "$WORK/got"
	[ -L "$WORK/got" ]
	[ "$(readlink "$WORK/got")" = /etc/shadow ]
	echo x > "$WORK/f"
	# the writable layer's quota: 16 MiB, and a 40 MB file
	head -c 40000000 /dev/zero > "$WORK/big"
	run -74 sbx-cp "$WORK/big" "$ID:/home/sandbox"
	[[ $output == *"the sandbox's disk is full"* ]]
	# paths that are not there, operands that are not one of each
	run -66 sbx-cp "$ID:/no/such" "$WORK/x"
	run -66 sbx-cp "$WORK/f" "$ID:/no/such/dir/x"
	run -66 sbx-cp "$WORK/no-such" "$ID:/tmp"
	run -73 sbx-cp "$ID:/etc/hostname" "$WORK/no/such/x"
	run -64 sbx-cp "$WORK/f" "$WORK/g"
	run -64 sbx-cp "$ID:/a" "$ID:/b"
	run -64 sbx-cp "$WORK/f" "$ID:relative"
	[ ! -e "$WORK/x" ] && [ -z "$(find "$WORK" -maxdepth 1 -name '.sbx-cp*')" ]
	# the sandbox's read-only mounts hold: a read-only root's /usr
	tier_provision </dev/null
	run -77 sbx-cp "$WORK/f" "$ID:/usr"
	[[ $output == *"Read-only file system"* ]] || [[ $output == *"Permission denied"* ]]
}

@test "agent: sbx-cp refuses what a hostile tar in the sandbox sends (65), and writes nothing outside" {
	tier_provision <<<'env: {PATH: "/tmp/bin:/usr/bin:/bin"}'
	# a tar earlier on the sandbox's PATH, sending an entry that climbs out
	run -0 sbx-run "$ID" -- sh -c 'mkdir -p /tmp/bin && cat > /tmp/bin/tar && chmod 755 /tmp/bin/tar' <<'PY'
#!/usr/bin/python3
import io, sys, tarfile
out = tarfile.open(fileobj=sys.stdout.buffer, mode="w|")
for name in ("hostname", "../../escaped"):
    info = tarfile.TarInfo(name); info.size = 3
    out.addfile(info, io.BytesIO(b"bad"))
out.close()
PY
	mkdir "$WORK/dst"
	run -65 sbx-cp "$ID:/etc/hostname" "$WORK/dst"
	[[ $output == *"what the sandbox sent"* ]]
	[ -z "$(ls -A "$WORK/dst")" ]
	[ ! -e "$WORK/escaped" ] && [ ! -e "$(dirname "$WORK")/escaped" ]
}

@test "agent: a background run outlives its caller, is waited for with its status and output, takes signals, ends at the deadline" {
	tier_provision <<<'resource_allocation: {max_wall_clock_s: 600}'
	# the caller is gone (sbx-run -d returned) while the command runs on
	run -0 sbx-run -d "$ID" -- sh -c 'sleep 1; echo out; echo err >&2; exit 4'
	r=$output
	[[ $r == run-* ]]
	run -0 sbx-ls --runs "$ID" -o json
	[ "$(json_get 'd["state"], d["command"][0]' <<<"$output")" = "running sh" ]
	run -4 --separate-stderr sbx-run --wait "$r"
	[ "$output" = out ] && [ "$stderr" = err ]
	run -4 sbx-run --wait "$r" -o json
	[ "$(json_get 'd["stdout"], d["stderr"].strip(), d["run_id"], d["trace"]["exit_code"]' <<<"$output")" = "out
 err $r 4" ]
	run -0 sbx-ls --runs "$ID" -q
	[ "$output" = "$r" ]
	# a signal reaches the command, as it would a foreground run's
	run -0 sbx-run -d "$ID" -- sleep 100
	s=$output
	until sbx-run "$ID" -- pgrep -x sleep >/dev/null; do sleep 0.1; done
	run -0 sbx-run --signal TERM "$s"
	run -143 sbx-run --wait "$s"
	run -125 sbx-run --signal TERM "$s"
	[[ $output == *"has ended"* ]]
	run -125 sbx-run --signal KILL "$r"
	# --wait's own timeout (125, sbx-run's: the run goes on); the sandbox's
	# deadline ends it (137, wall-clock): a sandbox of its own, whose 10 s
	# start now, whatever the steps above took on a loaded machine
	tier_provision <<<'resource_allocation: {max_wall_clock_s: 10}'
	run -0 sbx-run -d "$ID" -- sleep 100
	w=$output
	run -125 sbx-run --wait "$w" -T 0.5
	[[ $output == *"still running after 0.5 s"* ]]
	run -137 sbx-run --wait "$w" -o json
	[ "$(json_get 'd["trace"]["kill_reason"]' <<<"$output")" = wall-clock ]
	run -125 sbx-run --wait run-00000000
	[[ $output == *"no such run"* ]]
}

@test "agent: a shell session keeps cd, exports and functions; each call's own status and output; --restart, -T and exit end it" {
	tier_provision </dev/null
	run -0 sbx-run --session s "$ID" -- 'cd /tmp && export FOO=bar && greet() { echo "hi $1"; }'
	run -3 --separate-stderr sbx-run --session s "$ID" -- 'pwd; echo "$FOO"; greet you; echo e >&2; sh -c "exit 3"'
	[ "$output" = "$(printf '/tmp\nbar\nhi you')" ] && [ "$stderr" = e ]
	run -0 sbx-run --session s -o json "$ID" -- 'printf "no newline"'
	[ "$(json_get 'repr(d["stdout"]), d["exit_code"], d["ended"]' <<<"$output")" = "'no newline' 0 False" ]
	# a syntax error is the line's status (2), and the shell goes on; a
	# line that reads stdin reads nothing (never the session's channel)
	run -2 sbx-run --session s "$ID" -- 'echo "unclosed'
	run -0 sbx-run --session s "$ID" -- 'read -r x; echo "read $? $FOO"'
	[ "$output" = "read 1 bar" ]
	# the channel is the host's: not in the sandbox's view
	run -1 sbx-run "$ID" -- test -e "$SBX_ROOT/sandboxes/$ID/sessions/s.sock"
	# exit ends the shell; the next call starts a fresh one
	run -5 sbx-run --session s -o json "$ID" -- 'exit 5'
	[ "$(json_get 'd["ended"]' <<<"$output")" = True ]
	run -0 sbx-run --session s "$ID" -- 'echo "[$FOO]"; export FOO=again'
	[ "$output" = "[]" ]
	run -0 sbx-run --session s --restart "$ID"
	run -0 sbx-run --session s "$ID" -- 'echo "[$FOO]"'
	[ "$output" = "[]" ]
	# -T: the session (and what it runs) ends at the timeout
	run -124 sbx-run --session s -T 1 "$ID" -- 'export FOO=x; sleep 60'
	[[ $output == *"timed out"* ]]
	run -0 sbx-run --session s "$ID" -- 'echo "[$FOO]"'
	[ "$output" = "[]" ]
	run -125 sbx-run --session 'bad name' "$ID" -- true
	# the session's process goes with the sandbox
	run -0 sbx-gc "$ID"
	for _ in $(seq 100); do pgrep -f -- "--session s $ID" >/dev/null || break; sleep 0.1; done
	run -1 pgrep -f -- "--session s $ID"
}

@test "agent: sbx-inspect --usage reports what a live sandbox uses now: memory, CPU, pids, disk, the time left" {
	tier_provision <<<$'read_only_root: false\nuser: "1000:1000"\nresource_allocation: {memory_mb: 512, pids: 64, max_wall_clock_s: 600}'
	run -0 sbx-run "$ID" -- sh -c 'head -c 20000000 /dev/urandom > /home/sandbox/f'
	run -0 sbx-run -d "$ID" -- python3 -c 'import time; b = bytes(range(256)) * (256 << 10); open("/home/sandbox/held", "w").close(); time.sleep(60)'
	r=$output
	# measured once the 64 MiB are written (the process says so), however long that took
	until sbx-run "$ID" -- test -e /home/sandbox/held; do sleep 0.1; done
	run -0 sbx-inspect --usage -o json "$ID"
	echo "$output"
	# (gVisor's own threads count among the pids: sbx-manifest(5))
	[ "$(json_get 'd["memory_mb"] >= 64, d["memory_limit_mb"], d["pids"] >= 2, d["pids_limit"], d["cpu_seconds"] > 0' <<<"$output")" = "True 512 True 64 True" ]
	[ "$(json_get '0 < d["seconds_left"] <= 600' <<<"$output")" = True ]
	[ "$(json_get 'd["disk_mb"] >= 19' <<<"$output")" = True ]
	run -0 sbx-run --signal TERM "$r"
	run -143 sbx-run --wait "$r"
	sbx-gc "$ID" >/dev/null
	run -66 sbx-inspect --usage "$ID"
}
