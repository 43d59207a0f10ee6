#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make bench-v2, inside the cgroup v2 guest (tests/v2/run --exec): make bench's
# cgroup rows (tests/bench/cgroup.py) where CLONE_INTO_CGROUP works. The guest
# writes nothing back to the host: the figures are printed.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="${SBX_BIN:?run through make bench-v2}:$PATH"
SBX_ROOT=$(mktemp -d /tmp/sbx-bench.XXXXXX)
chmod 711 "$SBX_ROOT"
export SBX_ROOT
trap 'sbx-gc $(sbx-ls -q) >/dev/null 2>&1; sbx-gc >/dev/null 2>&1' EXIT
echo "machine: $(nproc) CPUs, kernel $(uname -r), /sys/fs/cgroup is $(stat -fc %T /sys/fs/cgroup)"
python3 tests/bench/cgroup.py "$SBX_ROOT/bench.yaml"
cat "$SBX_ROOT/bench.yaml"
