#!/bin/sh
# SPDX-License-Identifier: MIT
# Threat: escaping through the tools an agent finds: mounting, changing root,
# new namespaces, devices, kernel tunables, the host's /sys, setuid binaries.
# Prints "NAME blocked" or "NAME ESCAPED" for each try.
try() {
	name=$1
	shift
	if "$@" >/dev/null 2>&1; then echo "$name ESCAPED"; else echo "$name blocked"; fi
}
try mount-tmpfs mount -t tmpfs none /tmp
try mount-bind mount --bind / /tmp
try remount-root-rw mount -o remount,rw /
try chroot chroot / /bin/true
try unshare-user unshare -Ur true
try unshare-mount unshare -m true
try nsenter-init nsenter -t 1 -m -u true
# a node is a threat where it opens a device (gVisor makes nodes of none)
try mknod sh -c 'mknod /tmp/kmem c 1 2 && head -c 1 /tmp/kmem'
try proc-sys-write sh -c 'echo 1 > /proc/sys/kernel/sysrq'
try sysrq-trigger sh -c 'echo h > /proc/sysrq-trigger'
try proc-kcore head -c 1 /proc/kcore
try sys-listing sh -c 'ls /sys | grep -q .'
try dev-disk sh -c 'ls /dev | grep -Eq "^(sd|vd|nvme|loop|mem|kmem|port)"'
try dmesg dmesg
try ip-link-add ip link add sbxevil type dummy
try setuid-su su -c true root
try write-usr sh -c 'echo x > /usr/bin/sbx-evil'
try hostname-change hostname evil
