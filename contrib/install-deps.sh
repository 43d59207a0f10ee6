#!/bin/sh
# SPDX-License-Identifier: MIT
# Install the Debian packages sbx builds and tests with, when any is missing.
set -eu
pkgs="gcc make pkg-config libyaml-dev libseccomp-dev libcap-dev libarchive-dev libcurl4-openssl-dev zstd scdoc bats iproute2 nftables libnftables1 util-linux bsdutils procps e2fsprogs python3 python3-yaml man-db curl runc crun runsc"
# node and npm for tests/54-mcp.bats (the MCP SDK's client): Debian's, unless a
# nodejs package that brings its own npm (NodeSource's) is there already
pkgs="$pkgs nodejs"
command -v npm >/dev/null 2>&1 || pkgs="$pkgs npm"
# `install-deps.sh bench`: what make bench compares against
[ "${1:-}" = bench ] && pkgs="$pkgs bubblewrap hyperfine libarchive-tools"
# `install-deps.sh s3`: a real S3 server (Ceph radosgw) and a scheduler (Slurm) for tests/9*.bats
[ "${1:-}" = s3 ] && pkgs="$pkgs radosgw ceph-mon ceph-osd ceph-common openssl slurm-wlm munge"
# `install-deps.sh lint`: the static checkers
[ "${1:-}" = lint ] && pkgs="$pkgs cppcheck clang-tidy shellcheck zsh fish"
# `install-deps.sh guest`: the test guest of make check-v2 (contrib/guest/build.sh)
[ "${1:-}" = guest ] && pkgs="$pkgs qemu-system-x86 kmod cpio"
# `install-deps.sh fuzz`: libFuzzer
[ "${1:-}" = fuzz ] && pkgs="$pkgs clang libclang-rt-14-dev"
# `install-deps.sh package`: make deb and tests/59-package.bats (a fresh
# Debian root made by debootstrap, the package installed in a chroot)
[ "${1:-}" = package ] && pkgs="$pkgs dpkg-dev binutils debootstrap"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages:$missing (run as root, or install them)" >&2
	exit 69
fi
echo "install-deps: installing$missing" >&2
apt_get() {
	# Other work shares the machine: wait for the dpkg lock rather than fail.
	i=0
	until DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=120 "$@"; do
		i=$((i + 1))
		[ "$i" -lt 5 ] || return 1
		sleep 5
	done
}
apt_get update -qq
# shellcheck disable=SC2086
apt_get install -y -qq --no-install-recommends $missing >/dev/null
