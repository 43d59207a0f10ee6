# SPDX-License-Identifier: MIT
# The tier a bats file that names tiers ("# tiers: ...") runs under this time
# (tests/run sets SBX_TIER), and its sandboxes.
# shellcheck shell=bash

TIER=${SBX_TIER:-namespace}

# The manifest for this tier, with the keys on stdin added and SECURITY (the
# arguments, "KEY: VALUE" each) under security:, written to $WORK/m.yaml.
# The operator's policy gets TIER_POLICY's lines (sbx-policy(5)) too.
tier_manifest() {
	local kv
	case $TIER in
	namespace)
		[ -z "${TIER_POLICY:-}" ] || printf '%s\n' "$TIER_POLICY" | policy
		printf 'isolation_level: namespace\nsecurity: {}\n' ;;
	runc | crun | runsc)
		[ -x "/usr/sbin/$TIER" ] || [ -x "/usr/bin/$TIER" ] ||
			skip "$TIER is not installed (contrib/install-deps.sh installs it)"
		# the OCI runtimes apply no Landlock: the operator allows running without it.
		printf 'allow:\n  landlock_off: true\n%s\n' "${TIER_POLICY:-}" | policy
		printf 'isolation_level: oci\nruntime: %s\nsecurity:\n  landlock: false\n' "$TIER" ;;
	microvm)
		command -v qemu-system-x86_64 >/dev/null ||
			skip "QEMU is not installed (contrib/install-deps.sh guest)"
		[ -n "${SBX_GUEST_KIT:-}" ] ||
			skip "no guest kit (make check builds one from Debian's kernel package)"
		[ -z "${TIER_POLICY:-}" ] || printf '%s\n' "$TIER_POLICY" | policy
		printf 'isolation_level: microvm\nsecurity: {}\n' ;;
	*) echo "SBX_TIER=$TIER: namespace, runc, crun, runsc or microvm"; return 1 ;;
	esac > "$WORK/m.yaml"
	for kv in "$@"; do
		sed -i "s/^security: {}$/security:/; /^security:/a\\  $kv" "$WORK/m.yaml"
	done
	cat >> "$WORK/m.yaml"
}

tier_provision() {
	tier_manifest "$@"
	provision "$WORK/m.yaml"
}

# A microVM's boundary is its kernel, not the host's (uname differs), and
# the host's side of it, QEMU, runs unprivileged: not root, no capability,
# no_new_privs, QEMU's own seccomp filter, in the sandbox's cgroup.
vm_confined() {
	local pid
	pid=$(state "$1" pid)
	run -0 sbx-run "$1" -- uname -r
	[ "$output" != "$(uname -r)" ]
	[ "$output" = "$(state "$1" guest_kernel)" ]
	run -0 cat "/proc/$pid/status"
	[[ $output == *"CapEff:	0000000000000000"* ]]
	[[ $output == *"NoNewPrivs:	1"* ]]
	[[ $output == *"Seccomp:	2"* ]]
	run -0 awk '/^Uid:/ { print $2 }' "/proc/$pid/status"
	[ "$output" != 0 ]
	[ "$output" = "$(state "$1" uid_base)" ]
	grep -q "$1" "/proc/$pid/cgroup"
}

# What a tier does not have: a skip naming it.
not_tier() {
	[ "$TIER" != "$1" ] || skip "$2"
}

# The sandbox's processes hold no capability, no_new_privs and a seccomp
# filter, and its root is no root of the host's. gVisor's /proc has no
# NoNewPrivs line and shows its own user namespace: there prctl says the
# first, and the host's view of gVisor's sandbox process the last.
tier_confined() {
	if [ "$TIER" = microvm ]; then
		vm_confined "$1"
		return
	fi
	if [ "$TIER" != runsc ]; then
		assert_confined "$1"
		return
	fi
	run -0 sbx-run "$1" -- cat /proc/self/status
	[[ $output == *"CapEff:	0000000000000000"* ]]
	[[ $output == *"Seccomp:	2"* ]]
	run -0 sbx-run "$1" -- python3 -c 'import ctypes; print(ctypes.CDLL(None).prctl(39, 0, 0, 0, 0))'
	[ "$output" = 1 ]
	run -0 awk '/^Uid:/ { print $2 }' "/proc/$(state "$1" pid)/status"
	[ "$output" != 0 ]
}
