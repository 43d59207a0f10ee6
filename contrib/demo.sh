#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make demo: one short, real lifecycle on the minimal manifest.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${SBX_BIN:?run through make demo}:$PATH"
if [ -z "${SBX_ROOT:-}" ]; then
	SBX_ROOT=$(mktemp -d /tmp/sbx-demo.XXXXXX)
	chmod 711 "$SBX_ROOT"
	export SBX_ROOT
	trap 'rm -rf "$SBX_ROOT"' EXIT
fi
say() { printf '\n\033[1m$ %s\033[0m\n' "$*" >&2; }

say "id=\$(sbx-provision manifests/minimal.yaml)"
id=$(sbx-provision manifests/minimal.yaml)
echo "$id"
say "sbx-run --trace - $id -- sh -c 'hostname; id; cat /proc/1/comm; ls /proc | grep -c [0-9]'"
sbx-run --trace - "$id" -- sh -c 'hostname; id; cat /proc/1/comm; ls /proc | grep -c "[0-9]"'
say "sbx-run $id -- python3 -c 'allocate 64 MiB and spin for 0.3 s'"
sbx-run --trace - "$id" -- python3 -c '
import time
b = bytearray(64 << 20); b[::4096] = b"\1" * len(b[::4096])
t = time.process_time()
while time.process_time() - t < 0.3: pass
print("done")'
say "sbx-run $id -- touch /etc/x   # read-only root"
sbx-run "$id" -- touch /etc/x || echo "exit status $?"
say "sbx-ls"
sbx-ls -o json
say "sbx-gc $id"
sbx-gc "$id"
say "sbx-gc --verify-audit"
sbx-gc --verify-audit
