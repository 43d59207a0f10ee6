#!/bin/sh
# SPDX-License-Identifier: MIT
# Build the test guest's kit from Debian's packages: a kernel (the generic
# linux-image-amd64, which has 9p), its modules, and a small initramfs whose
# init (contrib/guest/init) mounts the host's root read-only over virtio-9p
# under a tmpfs overlay and hands over to the command on the kernel's command
# line. The microVM tier (sbx_vm=1 on the command line) boots the same kit
# with its own root and agent (see init). Nothing is fetched but Debian's own
# packages, through apt.
#
#   contrib/guest/build.sh OUTDIR     prints the kit's directory
#
# The kit is kept in OUTDIR/<key>, the key a digest of the package versions
# and of these files, so a second build with nothing changed is a lookup.
set -eu
out=${1:?usage: build.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)

# The modules the initramfs loads to reach its root (the test guest's over 9p,
# a microVM's over 9p and its ext4 disk), the agent's ports and a microVM's
# NIC (an allow-list's network); the rest come from the kit over 9p once it
# is mounted.
boot_modules="virtio_mmio 9pnet_virtio 9p overlay virtio_blk virtio_console crc32c_generic ext4 virtio_net"

kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)
if [ -z "$kpkg" ]; then
	echo "guest: no Debian kernel package (linux-image-amd64) known to apt; run apt-get update" >&2
	exit 69
fi
kver=$(apt-cache policy "$kpkg" | sed -n 's/^ *Candidate: //p')
bver=$(apt-cache policy busybox-static | sed -n 's/^ *Candidate: //p')
key=$(printf '%s %s %s\n' "$kpkg" "$kver" "$bver" | cat - "$0" "$here/init" |
	sha256sum | cut -c1-16)
kit="$out/$key"
if [ -f "$kit/ready" ]; then
	echo "$kit"
	exit 0
fi
for t in depmod cpio dpkg-deb; do
	command -v "$t" >/dev/null || {
		echo "guest: $t missing (contrib/install-deps.sh guest)" >&2
		exit 69
	}
done
rm -rf "$kit"
mkdir -p "$kit/debs" "$kit/root" "$kit/initrd.d"
fetch() {
	(cd "$kit/debs" && apt-get download "$kpkg=$kver" "busybox-static=$bver" 2>&1 |
		grep -v "unsandboxed as root" >&2) || true
	ls "$kit"/debs/linux-image-*.deb "$kit"/debs/busybox-static_*.deb >/dev/null 2>&1
}
# Lists older than the archive name versions it no longer has: update once.
if ! fetch && [ "$(id -u)" = 0 ]; then
	apt-get update -qq >&2 || true
	kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)
	kver=$(apt-cache policy "$kpkg" | sed -n 's/^ *Candidate: //p')
	bver=$(apt-cache policy busybox-static | sed -n 's/^ *Candidate: //p')
	fetch || true
fi
if ! ls "$kit"/debs/linux-image-*.deb "$kit"/debs/busybox-static_*.deb >/dev/null 2>&1; then
	echo "guest: apt-get download $kpkg busybox-static failed: no guest kernel" >&2
	rm -rf "$kit"
	exit 69
fi
dpkg-deb -x "$kit"/debs/linux-image-*.deb "$kit/root"
kname=$(ls "$kit/root/lib/modules")
depmod -b "$kit/root" "$kname"
cp "$kit/root/boot/vmlinuz-$kname" "$kit/vmlinuz"

# initramfs: busybox, the boot modules in load order, and init.
i="$kit/initrd.d"
mkdir -p "$i/bin" "$i/dev" "$i/proc" "$i/sys" "$i/mod"
dpkg-deb --fsys-tarfile "$kit"/debs/busybox-static_*.deb | tar -xO ./bin/busybox > "$i/bin/busybox"
chmod 755 "$i/bin/busybox"
cp "$here/init" "$i/init"
chmod 755 "$i/init"
mdir="$kit/root/lib/modules/$kname"
: > "$i/mod/order"
for m in $boot_modules; do
	path=$(awk -v m="$m" -F: '{ n = $1; sub(/.*\//, "", n); sub(/\.ko.*/, "", n);
		gsub(/-/, "_", n); if (n == m) { print $0; exit } }' "$mdir/modules.dep")
	[ -n "$path" ] || { echo "guest: module $m not in $kpkg" >&2; exit 69; }
	# The module's own dependencies first (modules.dep lists them last-loaded first).
	for f in $(printf '%s\n' "${path#*:}" | tr ' ' '\n' | sed '/^$/d' | awk '{ a[NR] = $0 }
		END { for (k = NR; k > 0; k--) print a[k] }') "${path%%:*}"; do
		b=$(basename "$f")
		grep -qx "$b" "$i/mod/order" && continue
		cp "$mdir/$f" "$i/mod/$b"
		echo "$b" >> "$i/mod/order"
	done
done
echo "$kname" > "$i/mod/kernel"
(cd "$i" && find . | cpio -o -H newc --quiet) > "$kit/initrd"
rm -rf "$kit/debs" "$i"
echo "$kpkg $kver" > "$kit/ready"
echo "$kit"
