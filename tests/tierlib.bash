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
	*) echo "SBX_TIER=$TIER: namespace, runc, crun or runsc"; return 1 ;;
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

# The sandbox's processes hold no capability, no_new_privs and a seccomp
# filter, and its root is no root of the host's. gVisor's /proc has no
# NoNewPrivs line and shows its own user namespace: there prctl says the
# first, and the host's view of gVisor's sandbox process the last.
tier_confined() {
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
