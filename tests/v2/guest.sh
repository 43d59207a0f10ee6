#!/bin/bash
# SPDX-License-Identifier: MIT
# PID 1 of the cgroup v2 test guest (tests/v2/run boots it): mount what a
# systemd host would (cgroup2 alone, with nsdelegate), lay the hierarchy out as
# systemd does (init.scope, system.slice, user.slice with every controller
# enabled down to it), print the proof that no v1 hierarchy exists, run the
# chosen bats files, report the result on the console and power off.
# The kernel's command line names the configuration: sbx_conf=FILE (a shell
# file of the host's that sets REPO and the SBX_* variables, and FILES).
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
off() {
	echo 1 > /proc/sys/kernel/sysrq
	sync
	echo o > /proc/sysrq-trigger
	sleep 60
}
conf=""
read -r cmdline < /proc/cmdline
for a in $cmdline; do
	case $a in sbx_conf=*) conf=${a#sbx_conf=} ;; esac
done
exec > /dev/console 2>&1 < /dev/null
# shellcheck source=/dev/null
if [ -z "$conf" ] || ! . "$conf"; then
	echo "sbx-guest: no configuration (sbx_conf=) on the command line"
	off
fi
mkdir -p /dev/pts /dev/shm /run /tmp
mount -t devpts -o newinstance,ptmxmode=0666,gid=5,mode=620 devpts /dev/pts
ln -sf pts/ptmx /dev/ptmx 2>/dev/null || true
ln -s /proc/self/fd /dev/fd
ln -s fd/0 /dev/stdin
ln -s fd/1 /dev/stdout
ln -s fd/2 /dev/stderr
mount -t tmpfs -o mode=1777 shm /dev/shm
mount -t tmpfs -o mode=755 run /run
# /tmp, where the tests keep their state roots, on ext4 as on a Debian host
# (tmpfs takes ID-mapped mounts only from Linux 6.3): the blank disk the host gave
modprobe virtio_blk || off
modprobe -a loop veth nf_tables || off
for _ in $(seq 100); do [ -b /dev/vda ] && break; sleep 0.1; done
# The host's /tmp stays reachable at /run/host-tmp, and what the run needs of
# it (the tree and build, when they are there, as in a CI clone) goes back in.
mkdir -p /run/host-tmp
mount --bind /tmp /run/host-tmp
if ! mkfs.ext4 -q -F /dev/vda || ! mount -t ext4 /dev/vda /tmp || ! chmod 1777 /tmp; then
	echo "sbx-guest: no ext4 on /dev/vda for /tmp"
	off
fi
for d in "$REPO" "${SBX_BIN:-}" "${SBX_LIBEXEC:-}" "${SBX_HOSTILE:-}"; do
	case $d in
	/tmp/*) [ -d "$d" ] && continue
		mkdir -p "$d" && mount --bind "/run/host-tmp/${d#/tmp/}" "$d" ||
			echo "sbx-guest: cannot reach $d of the host's /tmp" ;;
	esac
done
mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 /sys/fs/cgroup
mountpoint -q /sys/kernel/security || mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
hostname sbx-v2-guest
ip link set lo up
cg=/sys/fs/cgroup
mkdir "$cg/init.scope" "$cg/system.slice" "$cg/user.slice"
echo $$ > "$cg/init.scope/cgroup.procs"
ctrls=$(sed 's/\([^ ]*\)/+\1/g' "$cg/cgroup.controllers")
# shellcheck disable=SC2086
echo $ctrls > "$cg/cgroup.subtree_control"
# shellcheck disable=SC2086
echo $ctrls > "$cg/user.slice/cgroup.subtree_control"
echo "# guest kernel $(uname -r), $(nproc) CPUs, $(($(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo) / 1024)) MiB"
echo "# cgroup mounts in /proc/self/mountinfo:"
awk '$0 ~ / - cgroup2? / { print "#   " $0 }' /proc/self/mountinfo
echo "# controllers: $(cat "$cg/cgroup.controllers")"
cd "$REPO" || { echo "sbx-guest: no $REPO"; off; }
if [ -n "${GUEST_CMD:-}" ]; then
	# shellcheck disable=SC2086
	$GUEST_CMD
else
	# Each entry FILE or FILE:REGEX (the tests of FILE whose names match),
	# through tests/run; its summary becomes a comment, the sum the result.
	p=0 f=0 s=0
	for entry in $FILES; do
		file=${entry%%:*} re=""
		[ "$file" = "$entry" ] || re=${entry#*:}
		while IFS= read -r line; do
			if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed(,\ ([0-9]+)\ skipped)?$ ]]; then
				p=$((p + BASH_REMATCH[1])) f=$((f + BASH_REMATCH[2])) s=$((s + ${BASH_REMATCH[4]:-0}))
				line="# $file: $line"
			fi
			printf '%s\n' "$line"
		done < <(SBX_TIER=namespace SBX_BATS_FILTER=$re tests/run "$file" 2>&1)
	done
	summary="$p passed, $f failed"
	[ "$s" -gt 0 ] && summary="$summary, $s skipped"
	echo "$summary"
	[ "$f" -eq 0 ] && [ "$p" -gt 0 ]
fi
echo "sbx-guest: exit $?"
off
