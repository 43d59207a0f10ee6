# SPDX-License-Identifier: MIT
# Shared by every bats file: a private state root per test, the built programs
# first on PATH, and a teardown that destroys whatever the test left.
# bats sets $output, $status and $lines; the test files use what this file defines.
# shellcheck disable=SC2034,SC2154
bats_require_minimum_version 1.5.0

FIXTURES="$BATS_TEST_DIRNAME/fixtures"
MANIFESTS="$BATS_TEST_DIRNAME/../manifests"

setup() {
	export PATH="${SBX_BIN:?run through make check}:$PATH"
	SBX_ROOT=$(mktemp -d /tmp/sbx-test.XXXXXX)
	export SBX_ROOT
	export SBX_CORRELATION_ID="bats-$BATS_TEST_NUMBER"
	WORK=$(mktemp -d /tmp/sbx-work.XXXXXX)
	TEST_PIDS=()
}

teardown() {
	local p id
	for p in "${TEST_PIDS[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	if [ -d "$SBX_ROOT/sandboxes" ]; then
		for id in $(sbx-ls -q 2>/dev/null); do
			sbx-gc "$id" >/dev/null 2>&1
		done
		sbx-gc >/dev/null 2>&1
		settled 30 >/dev/null || true
	fi
	rm -rf "$SBX_ROOT" "$WORK"
}

# settled [SECONDS]: wait until the state root holds no sandbox, tombstones
# included: a one-shot's teardown goes on in the background after sbx-run
# returns (sbx-run(1)), and writes nothing in the state root once this holds.
settled() {
	local i
	for ((i = 0; i < ${1:-30} * 20; i++)); do
		[ -z "$(ls -A "$SBX_ROOT/sandboxes" 2>/dev/null)" ] && return 0
		sleep 0.05
	done
	ls -la "$SBX_ROOT/sandboxes"
	return 1
}

# Write a manifest to $WORK/NAME from stdin and print its path.
manifest() {
	cat > "$WORK/$1"
	printf '%s\n' "$WORK/$1"
}

# The operator's policy of this test's state root, from stdin (sbx-policy(5)).
policy() {
	cat > "$SBX_ROOT/policy.yaml"
}

# Provision from stdin or a file; sets $ID.
provision() {
	run -0 sbx-provision "$@"
	ID=$output
	[[ $ID == sbx-* ]] || [ -n "$ID" ]
}

# yaml_value KEY [FILE]: the first `KEY: value` of a YAML document (file or stdin).
yaml_value() {
	sed -n "s/^ *$1: \"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "${2:-/dev/stdin}" | head -n 1
}

# yaml_docs: the number of documents in the YAML stream on stdin, read by a real
# YAML parser (Debian's python3-yaml; a document that is not a mapping fails).
yaml_docs() {
	/usr/bin/python3 -c '
import sys, yaml
docs = list(yaml.safe_load_all(sys.stdin))
assert all(isinstance(d, dict) for d in docs), docs
print(len(docs))'
}

# json_lines: the number of lines on stdin, each of which must be one JSON object.
json_lines() {
	/usr/bin/python3 -c '
import json, sys
n = 0
for line in sys.stdin:
    assert isinstance(json.loads(line), dict), line
    n += 1
print(n)'
}

# A value from the sandbox's state document: state ID KEY (top level or runtime_state).
state() {
	sbx-inspect "$1" | yaml_value "$2"
}

# Prove, from inside, that the sandbox holds before anything hostile runs in it:
# no capabilities, no_new_privs, seccomp filtering, and root inside not root outside.
assert_confined() {
	run -0 sbx-run "$1" -- cat /proc/self/status /proc/self/uid_map
	[[ $output == *"CapEff:	0000000000000000"* ]]
	[[ $output == *"NoNewPrivs:	1"* ]]
	[[ $output == *"Seccomp:	2"* ]]
	not_host_root
}

# The last output (holding a uid_map) does not map root inside to root outside.
not_host_root() {
	if grep -Eq '^ *0 +0 ' <<<"$output"; then
		echo "root inside maps to root outside"
		return 1
	fi
}

# cg_dirs SPEC: the directories a cgroup spec of the state names ("2:/path"
# on cgroup v2, "1:ctl=/path,..." on v1), one a line.
cg_dirs() {
	local c
	case $1 in
	2:*) echo "/sys/fs/cgroup${1#2:}" ;;
	1:*) for c in $(tr ',' ' ' <<<"${1#1:}"); do echo "/sys/fs/cgroup/${c%%=*}${c#*=}"; done ;;
	esac
}

# cg_cpu_ns SPEC: the CPU time (ns) the cgroup has used (v2 cpu.stat, v1 cpuacct.usage).
cg_cpu_ns() {
	local c
	case $1 in
	2:*) echo $(($(sed -n 's/^usage_usec //p' "/sys/fs/cgroup${1#2:}/cpu.stat") * 1000)) ;;
	1:*) c=$(tr ',' '\n' <<<"${1#1:}" | sed -n 's/^cpuacct=//p')
		cat "/sys/fs/cgroup/cpuacct$c/cpuacct.usage" ;;
	esac
}

# gone PID: the process is gone (a zombie waiting for its parent counts as gone:
# it holds no namespace, mount or memory any more). ps fails for a PID that is
# no more, which errexit must not take for an answer (a parent that reaps at
# once, as the v2 guest's PID 1 does, leaves no zombie to find).
# wait_gone PID SECONDS: wait until the process is gone (or a zombie); prints ms taken
wait_gone() {
	local start st
	start=$(date +%s%N)
	while :; do
		st=$(ps -o stat= -p "$1" 2>/dev/null) || true
		[ -z "$st" ] || [[ $st == Z* ]] && break
		[ $(( ($(date +%s%N) - start) / 1000000 )) -lt $(( $2 * 1000 )) ] || return 1
		sleep 0.02
	done
	echo $(( ($(date +%s%N) - start) / 1000000 ))
}

# ms_of "2026-12-02T18:07:29.868Z": milliseconds since the epoch
ms_of() {
	echo $(( $(date -d "$1" +%s%N) / 1000000 ))
}

gone() {
	local st
	st=$(ps -o stat= -p "$1" 2>/dev/null) || true
	[ -z "$st" ] || [[ $st == Z* ]]
}

# absent STRING FILE...: STRING appears in none of the files.
absent() {
	local s=$1
	shift
	if grep -qF -- "$s" "$@" 2>/dev/null; then
		echo "found '$s' in $*"
		return 1
	fi
}

# Run a loopback TCP listener on the host; sets $PORT and records its PID.
host_listener() {
	python3 - > "$WORK/port" <<'PY' &
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
print(s.getsockname()[1], flush=True)
s.settimeout(30)
while True:
    try:
        c, _ = s.accept()
        c.sendall(b"host\n")
        c.close()
    except socket.timeout:
        break
PY
	TEST_PIDS+=($!)
	local i
	for i in $(seq 50); do
		[ -s "$WORK/port" ] && break
		sleep 0.1
	done
	PORT=$(cat "$WORK/port")
	[ -n "$PORT" ]
}

# npm_pinned PACKAGE_JSON DIR PROBE: the packages PACKAGE_JSON pins, installed
# under DIR unless DIR has that package.json and PROBE (a path under DIR)
# already; npm's registry is the one thing a test reaches outside for.
npm_pinned() {
	if ! cmp -s "$1" "$2/package.json" || [ ! -e "$2/$3" ]; then
		mkdir -p "$2"
		cp "$1" "$2/"
		(cd "$2" && npm install --no-audit --no-fund --loglevel=error >&2)
	fi
}

# woke_of PID...: the voluntary context switches of those processes, summed
# (a parked entry wakes only to start a run).
woke_of() {
	local p n=0
	for p in "$@"; do
		n=$((n + $(sed -n 's/^voluntary_ctxt_switches:\t*//p' "/proc/$p/status" 2>/dev/null || echo 0)))
	done
	echo "$n"
}
