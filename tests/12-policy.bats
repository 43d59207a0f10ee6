#!/usr/bin/env bats
# The operator's policy (sbx-policy(5)): trust is a claim, not a grant. Every
# manifest, however it arrives (a file, a dry run, a one-shot, a snapshot
# imported or pulled), is held to the policy, and the defaults are limits.
load helpers

# refused KEYWORD YAML: provision (and its dry run) exits 77 naming KEYWORD
# and the built-in policy, and makes nothing.
refused() {
	local want=$1
	shift
	printf '%s\n' "$1" > "$WORK/m.yaml"
	run -77 sbx-provision --dry-run "$WORK/m.yaml"
	[[ $output == *"$want"*"not allowed by the built-in policy"* ]]
	run -77 sbx-provision "$WORK/m.yaml"
	[[ $output == *"$want"*"not allowed by the built-in policy"* ]]
	run -125 sbx-run -m "$WORK/m.yaml" -- true
	[[ $output == *"$want"*"not allowed by the built-in policy"* ]]
	[ -z "$(sbx-ls -q)" ]
}

@test "the built-in policy: a manifest cannot grant itself trust, capabilities, or its way out of seccomp, Landlock or the network namespace" {
	echo 'allow seccomp' > "$WORK/allow-all.policy"
	refused "trust: trusted" 'trust: trusted'
	refused "trust: semi-trusted" 'trust: semi-trusted'
	refused "security.capabilities: CAP_SYS_ADMIN" 'security: {capabilities: [CAP_SYS_ADMIN]}'
	refused "security.capabilities: CAP_SYS_PTRACE" 'security: {capabilities: [CAP_NET_BIND_SERVICE, CAP_SYS_PTRACE]}'
	refused "security.seccomp: $WORK/allow-all.policy" "security: {seccomp: $WORK/allow-all.policy}"
	refused "security.landlock: false" 'security: {landlock: false}'
	# even a policy that lets a manifest claim trust grants none of these by itself
	echo 'max_trust: trusted' | policy
	run -77 sbx-provision - <<<'{trust: trusted, security: {seccomp: unconfined}}'
	[[ $output == *"security.seccomp: unconfined: not allowed by the policy ($SBX_ROOT/policy.yaml, which keeps the built-in rule: allow: {seccomp_unconfined: true} is needed)"* ]]
	run -77 sbx-provision - <<<'{trust: trusted, security: {seccomp: unconfined, landlock: false, no_new_privileges: false}}'
	run -77 sbx-provision - <<<'{trust: trusted, network_policy: host}'
	[[ $output == *"network_policy: host: not allowed by the policy"* ]]
	rm "$SBX_ROOT/policy.yaml"
	# what the built-in policy does allow still works
	provision - <<<'security: {capabilities: [CAP_NET_BIND_SERVICE]}'
	run -0 sbx-run "$ID" -- grep CapEff /proc/self/status
	[ "$output" = "CapEff:	0000000000000400" ]
	provision - <<<'trust: sensitive'
}

@test "/, /proc, /sys, /dev, /run, /boot and the state root are never mountable, whatever the policy says" {
	printf 'max_trust: trusted\nmounts: [{path: /, mode: rw}]\nrootfs: [/]\n' | policy
	mkdir -p "$WORK/p" "$WORK/data"
	local host
	for host in / /proc/self /sys/kernel /dev/shm /boot "$SBX_ROOT" "$SBX_ROOT/sandboxes" "$(dirname "$SBX_ROOT")" /run; do
		[ -e "$host" ] || continue
		printf 'filesystem_mounts: [{host: %s, guest: /x, mode: ro, idmap: false}]\n' "$host" > "$WORK/m.yaml"
		run -77 sbx-provision --dry-run "$WORK/m.yaml"
		[[ $output == *"never mountable"* ]] || { echo "$host: $output"; false; }
		run -77 sbx-provision "$WORK/m.yaml"
	done
	printf 'rootfs: /etc\n' > "$WORK/m.yaml"
	run -0 sbx-provision --dry-run "$WORK/m.yaml"       # this policy allows /etc...
	printf 'rootfs: /proc\n' > "$WORK/m.yaml"
	run -77 sbx-provision --dry-run "$WORK/m.yaml"      # ...but never /proc
	[[ $output == *"rootfs /proc"*"never mountable"* ]]
	# a place inside the state root too deep to walk up from is not taken for outside it
	deep="$SBX_ROOT/sandboxes/deep"
	mkdir -p "$deep"
	(cd "$deep" && for _ in $(seq 300); do mkdir d && cd d || exit 1; done)
	printf 'filesystem_mounts: [{host: %s, guest: /x, mode: ro, idmap: false}]\n' \
		"$deep$(printf '/d%.0s' $(seq 300))" > "$WORK/m.yaml"
	run -77 sbx-provision -n "$WORK/m.yaml"
	rm -rf "$deep"
	# another name for /proc (a bind mount of it) is still /proc
	[ "$(id -u)" = 0 ] || skip "binding /proc elsewhere needs root"
	mount --bind /proc "$WORK/p"
	printf 'filesystem_mounts: [{host: %s, guest: /x, mode: ro}]\n' "$WORK/p" > "$WORK/m.yaml"
	run -77 sbx-provision "$WORK/m.yaml"
	umount "$WORK/p"
	[[ $output == *"kernel filesystem"* ]]
	# and one mounted below a source (a proc in a chroot tree) stays behind
	mkdir -p "$WORK/tree/proc"
	mount -t proc proc "$WORK/tree/proc"
	printf 'filesystem_mounts: [{host: %s, guest: /tree, mode: ro}]\n' "$WORK/tree" > "$WORK/m.yaml"
	run sbx-run -m "$WORK/m.yaml" -- sh -c 'ls /tree/proc | wc -l'
	umount "$WORK/tree/proc"
	[ "$status" = 0 ] && [ "$output" = 0 ]
	settled
}

@test "the built-in policy gives no host owner's files to write: idmap as root, a rootless caller's keys, /tmp" {
	# a root-only directory of secrets, as /root/.ssh is
	mkdir -m 700 "$WORK/keys"
	echo secret > "$WORK/keys/id"
	chmod 600 "$WORK/keys/id"
	printf 'filesystem_mounts: [{host: %s, guest: /k, mode: rw, idmap: true}]\n' "$WORK/keys" > "$WORK/m.yaml"
	run -77 sbx-provision -n "$WORK/m.yaml"
	[[ $output == *"mapped to its owner (idmap)"*"mounts: [{path: $WORK/keys, mode: rw}]"* ]]
	printf 'filesystem_mounts: [{host: %s, guest: /k, mode: ro, idmap: true}]\n' "$WORK/keys" > "$WORK/m.yaml"
	run -77 sbx-provision -n "$WORK/m.yaml"
	# a rw mount left to the default is not mapped where the policy does not
	# grant it: the sandbox's IDs are nobody there, nothing read, nothing written
	printf 'filesystem_mounts: [{host: %s, guest: /k, mode: rw}]\n' "$WORK/keys" > "$WORK/m.yaml"
	run -0 sbx-provision -n -o json "$WORK/m.yaml"
	[[ $output == *'"mode":"rw","idmap":false'* ]]
	provision "$WORK/m.yaml"
	assert_confined "$ID"
	run -1 sbx-run "$ID" -- cat /k/id
	run -2 sbx-run "$ID" -- sh -c 'echo x >> /k/id'
	[ "$(cat "$WORK/keys/id")" = secret ]
	printf 'filesystem_mounts: [{host: /var/tmp, guest: /t, mode: ro}]\n' > "$WORK/m.yaml"
	run -77 sbx-provision -n "$WORK/m.yaml"
	[[ $output == *"the host's shared /var/tmp"* ]]
	printf 'filesystem_mounts: [{host: /tmp, guest: /t, mode: ro}]\n' > "$WORK/m.yaml"
	run -77 sbx-provision -n "$WORK/m.yaml"
}

@test "a policy file: mounts, limits, defaults and egress ranges, each refusal naming its line" {
	mkdir -p "$WORK/ws/a" "$WORK/models" "$WORK/elsewhere"
	chmod 755 "$WORK" "$WORK/ws" "$WORK/ws/a"
	cat <<EOF | policy
# the operator's ceilings
mounts:
  - {path: $WORK/ws, mode: rw}
  - {path: $WORK/models, mode: ro}
allowed_egress: ["10.20.0.0/16:443", "*.example.org:443"]
limits: {memory_mb: 1024, max_wall_clock_s: 600}
defaults: {memory_mb: 256, pids: 64}
EOF
	printf 'filesystem_mounts: [{host: %s, guest: /w, mode: rw}]\n' "$WORK/elsewhere" > "$WORK/m.yaml"
	run -77 sbx-provision "$WORK/m.yaml"
	[[ $output == *"filesystem_mounts[0]: host $WORK/elsewhere (mode rw): not allowed by the policy ($SBX_ROOT/policy.yaml:2: mounts"* ]]
	printf 'filesystem_mounts: [{host: %s, guest: /m, mode: rw}]\n' "$WORK/models" > "$WORK/m.yaml"
	run -77 sbx-provision "$WORK/m.yaml"
	printf 'resource_allocation: {memory_mb: 2048}\n' > "$WORK/m.yaml"
	run -77 sbx-provision -n "$WORK/m.yaml"
	[[ $output == *"resource_allocation.memory_mb: 2048: not allowed by the policy ($SBX_ROOT/policy.yaml:6: limits: memory_mb 1024)"* ]]
	printf 'network_policy: egress-allow-list\nallowed_egress: ["10.30.0.1:443"]\n' > "$WORK/m.yaml"
	run -77 sbx-provision -n "$WORK/m.yaml"
	[[ $output == *"allowed_egress: 10.30.0.1:443: not allowed by the policy ($SBX_ROOT/policy.yaml:5: allowed_egress"* ]]
	printf 'network_policy: egress-allow-list\nallowed_egress: ["10.20.3.0/24:443", "files.example.org:443"]\n' > "$WORK/m.yaml"
	run -0 sbx-provision -n "$WORK/m.yaml"
	printf 'network_policy: egress-allow-list\nallowed_egress: ["10.20.3.0/24:80"]\n' > "$WORK/m.yaml"
	run -77 sbx-provision -n "$WORK/m.yaml"
	# inside the ceilings: the policy's defaults are the sandbox's limits
	printf 'filesystem_mounts: [{host: %s, guest: /w, mode: rw}, {host: %s, guest: /m}]\n' \
		"$WORK/ws/a" "$WORK/models" > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	[ "$(state "$ID" memory_mb)" = 256 ]
	[ "$(state "$ID" pids)" = 64 ]
	run -0 sbx-run "$ID" -- sh -c 'echo in > /w/f && cat /w/f'
}

@test "a policy file others may write, or malformed, or named and missing, stops every provision" {
	echo 'max_trust: trusted' | policy
	chmod 666 "$SBX_ROOT/policy.yaml"
	run -77 sbx-provision - <<<'{}'
	[[ $output == *"policy $SBX_ROOT/policy.yaml: others may write it"* ]]
	chmod 644 "$SBX_ROOT/policy.yaml"
	printf 'max_trust: trusted\nmounts: [{path: relative}]\n' | policy
	run -65 sbx-provision - <<<'{}'
	[[ $output == *"$SBX_ROOT/policy.yaml:2:"*"absolute"* ]]
	printf 'max_trusted: trusted\n' | policy
	run -65 sbx-provision - <<<'{}'
	[[ $output == *"unknown key 'max_trusted'"* ]]
	run -66 sbx-provision --policy "$WORK/none.yaml" - <<<'{}'
	SBX_POLICY="$WORK/none.yaml" run -66 sbx-provision - <<<'{}'
	# --policy names another file, and that one holds
	echo 'max_trust: trusted' > "$WORK/p.yaml"
	run -0 sbx-provision -n --policy "$WORK/p.yaml" - <<<'trust: trusted'
	[ -z "$(sbx-ls -q)" ]
}

@test "the defaults are limits, proven from inside: processes, memory, CPU, tmpfs inodes, a writable root's disk" {
	provision - <<<'{read_only_root: false, tmpfs: [{guest: /scratch, size_mb: 64}]}'
	assert_confined "$ID"
	# 1024 processes and threads at most (a fork bomb would take the host's 32768)
	run -0 sbx-run --trace "$WORK/t.yaml" "$ID" -- python3 -c '
import threading, time
ev = threading.Event(); n = 0
try:
    for _ in range(2000):
        threading.Thread(target=ev.wait, daemon=True).start(); n += 1
except RuntimeError:
    pass
print(n); ev.set()'
	[ "$output" -lt 1024 ]
	[ "$(yaml_value pids_limit_hits "$WORK/t.yaml")" -gt 0 ]
	# 512 MiB: a 700 MiB allocation is OOM-killed, and the sandbox lives on
	run -137 sbx-run --trace "$WORK/t.yaml" "$ID" -- python3 -c 'b = bytearray(700 << 20); b[::4096] = b"\1" * len(b[::4096])'
	grep -q 'kill_reason: "memory"' "$WORK/t.yaml"
	run -0 sbx-run "$ID" -- true
	# one CPU: two busy threads get one core's time, as the run itself measured it
	run -0 sbx-run --trace "$WORK/t.yaml" "$ID" -- python3 -c '
import os, time
end = time.time() + 1.5
pid = os.fork()
while time.time() < end: pass
if pid: os.waitpid(pid, 0)'
	cpu=$(yaml_value cpu_seconds_used "$WORK/t.yaml")
	wall=$(yaml_value elapsed_s "$WORK/t.yaml")
	python3 -c "assert $cpu <= 1.25 * $wall, ($cpu, $wall)"
	# a tmpfs bounds inodes, not only bytes
	run -0 sbx-run "$ID" -- python3 -c '
n = 0
try:
    for n in range(100000): open("/scratch/f%d" % n, "w").close()
except OSError as e: print(n, e.errno)'
	read -r files errno <<<"$output"
	[ "$errno" = 28 ] && [ "$files" -le 16384 ]
	# a writable root has a 1 GiB quota on the host's disk
	run -1 sbx-run "$ID" -- fallocate -l 1100M /root/big
	[[ $output == *"No space left on device"* ]]
	run -0 sbx-run "$ID" -- sh -c 'rm -f /root/big && fallocate -l 100M /root/small'
}

# export_hostile NAME [craft options]: a snapshot of a plain sandbox, exported,
# its metadata rewritten as an attacker would, imported as snapshot NAME.
export_hostile() {
	local name=$1
	shift
	if [ -z "${BASE_EXPORT:-}" ]; then
		provision - <<<'read_only_root: false'
		sbx-run "$ID" -- sh -c 'echo from-the-sender > /root/note'
		snap=$(sbx-snap "$ID")
		sbx-snap export -f "$WORK/base.tar" "$snap"
		sbx-gc "$ID" > /dev/null
		BASE_EXPORT=$WORK/base.tar
	fi
	python3 "$FIXTURES/craft-snapshot.py" "$BASE_EXPORT" "$WORK/$name.tar" "$name" "$@"
	run -0 sbx-snap import "$WORK/$name.tar"
	[ "$output" = "$name" ]
}

@test "threat: an imported snapshot's own manifest and base are held to the restoring side's policy" {
	local evil
	for evil in '{"trust": "trusted", "network_policy": "host"}' \
		'{"filesystem_mounts": [{"host": "/", "guest": "/host", "mode": "rw"}]}' \
		'{"trust": "trusted", "security": {"seccomp": "unconfined", "landlock": false, "no_new_privileges": false}}' \
		'{"security": {"capabilities": ["CAP_SYS_ADMIN"]}}' \
		'{"read_only_root": false, "resource_allocation": {"max_wall_clock_s": 31536000}, "security": {"landlock": false}}'; do
		n=$((${n:-0} + 1))
		export_hostile "evil-$n" --manifest "$evil"
		run -77 sbx-fork "evil-$n"
		echo "$output"
		[[ $output == *"not allowed by the built-in policy"* || $output == *"never mountable"* ]]
		run -77 sbx-snap restore "evil-$n"
	done
	# a base the restoring host never made: its /etc as the sandbox's root
	export_hostile evil-base --base /etc
	run -77 sbx-fork evil-base
	[[ $output == *"the snapshot's base_rootfs /etc: not allowed by the built-in policy"* ]]
	# nor through an allowed directory, by .. or a symbolic link
	mkdir -p "$WORK/roots/r"
	ln -s /etc "$WORK/roots/link"
	printf 'rootfs: ["%s/roots"]\n' "$WORK" | policy
	python3 "$FIXTURES/craft-snapshot.py" "$BASE_EXPORT" "$WORK/dots.tar" evil-dots --base "$WORK/roots/../../../etc"
	run -65 sbx-snap import "$WORK/dots.tar"
	[[ $output == *"base_rootfs must be host or an absolute, normalized path"* ]]
	export_hostile evil-link --base "$WORK/roots/link"
	run -65 sbx-fork evil-link
	[[ $output == *"symbolic link"* ]]
	rm "$SBX_ROOT/policy.yaml"
	[ -z "$(sbx-ls -q)" ]
	# the restoring side's own manifest instead: the layers, under its rules
	echo 'resource_allocation: {memory_mb: 128}' > "$WORK/mine.yaml"
	run -0 sbx-fork -m "$WORK/mine.yaml" evil-1
	kid=$output
	assert_confined "$kid"
	run -0 sbx-run "$kid" -- sh -c 'cat /root/note; grep -c : /proc/net/dev; test -e /host || echo no-host'
	[ "$output" = "from-the-sender
1
no-host" ]
	[ "$(state "$kid" memory_mb)" = 128 ]
	run -0 sbx-snap restore -m "$WORK/mine.yaml" evil-2
	# a manifest of the restoring side names no root of its own
	printf 'rootfs: /etc\n' > "$WORK/bad.yaml"
	run -65 sbx-fork -m "$WORK/bad.yaml" evil-1
	[[ $output == *"rootfs is the snapshot"* ]]
}
