#!/usr/bin/env bats
# Isolation, proven from inside the sandbox: the kernel refuses, not sbx. The
# namespace tier's own; what every tier gives is 32-tiers.bats, run per tier.
load helpers

@test "PID 1 is the sandbox's init and host processes are invisible" {
	provision "$MANIFESTS/minimal.yaml"
	run -0 sbx-run "$ID" -- sh -c 'cat /proc/1/comm; ls /proc | grep -c "^[0-9]"'
	[ "${lines[0]}" = "sbx-init" ]
	[ "${lines[1]}" -lt 10 ]
	run -0 sbx-run "$ID" -- sh -c "kill -0 $$ 2>&1; echo rc=\$?"
	[[ $output == *"rc=1"* ]]
	# init's memory and environment (the caller's) stay closed to the sandbox
	run -1 sbx-run "$ID" -- cat /proc/1/environ
	[[ $output == *"Permission denied"* ]]
}

@test "hostname is the sandbox's own" {
	provision "$MANIFESTS/minimal.yaml"
	run -0 sbx-run "$ID" -- cat /proc/sys/kernel/hostname
	[ "$output" = "$ID" ]
	[ "$output" != "$(hostname)" ]
}

@test "read_only_root: writing / fails; a rw mount with idmap: false takes writes as an unprivileged host ID" {
	mkdir -p "$WORK/ws" && chmod 777 "$WORK/ws"
	printf 'filesystem_mounts: [{host: %s, guest: /workspace, mode: rw, idmap: false}]\n' "$WORK/ws" > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	run -2 sbx-run "$ID" -- sh -c 'echo x > /etc/evil'
	[[ $output == *"Read-only file system"* ]]
	run -1 sbx-run "$ID" -- touch /usr/bin/evil
	run -0 sbx-run "$ID" -- sh -c 'echo data > /workspace/out.txt'
	[ "$(cat "$WORK/ws/out.txt")" = "data" ]
	# root inside wrote it; on the host the owner is not root
	owner=$(stat -c %u "$WORK/ws/out.txt")
	[ "$owner" -ne 0 ]
	[ "$owner" = "$(state "$ID" uid_base)" ]
}

@test "a workspace mounted rw is its owner's: writable inside as root and as user 1000, files land as the owner, no setuid bit or device leaves" {
	mkdir "$WORK/ws" "$WORK/ws1000"
	chmod 755 "$WORK" "$WORK/ws" "$WORK/ws1000"
	me="$(id -u) $(id -g)"
	printf 'filesystem_mounts: [{host: %s, guest: /workspace, mode: rw}]\n' "$WORK/ws" > "$WORK/root.yaml"
	printf 'user: 1000:1000\nfilesystem_mounts: [{host: %s, guest: /workspace, mode: rw}]\n' "$WORK/ws1000" > "$WORK/user.yaml"
	# writing as a directory's owner is the operator's grant (sbx-policy(5))
	printf 'mounts: [{path: %s, mode: rw}]\n' "$WORK" | policy
	provision "$WORK/root.yaml"
	assert_confined "$ID"
	# the directory's owner is the sandbox's root inside; what it makes is the owner's outside
	run -0 sbx-run "$ID" -- sh -c 'stat -c "%u %g" /workspace; echo r > /workspace/r; mkdir /workspace/d; stat -c "%u %g" /workspace/r'
	[ "$output" = "0 0
0 0" ]
	[ "$(stat -c '%u %g' "$WORK/ws/r" "$WORK/ws/d" | sort -u)" = "$me" ]
	# nothing made there gives a host user more than the owner has
	run -1 sbx-run "$ID" -- chmod u+s /workspace/r
	[[ $output == *"Operation not permitted"* ]]
	run -1 sbx-run "$ID" -- chmod 2755 /workspace/d
	[[ $output == *"Operation not permitted"* ]]
	run -0 sbx-run "$ID" -- python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def fchmodat2(path, mode):
    # 452 everywhere; a C library may not know the call yet, the kernel does
    if libc.syscall(452, -100, path.encode(), mode, 0) != 0:
        raise OSError(ctypes.get_errno(), "fchmodat2")
for name, call in [("creat-setuid", lambda: os.open("/workspace/s", os.O_CREAT | os.O_WRONLY, 0o4755)),
                   ("mknod-setgid", lambda: os.mknod("/workspace/g", 0o2755 | 0o100000)),
                   ("mknod-char", lambda: os.mknod("/workspace/c", 0o600 | 0o020000, os.makedev(1, 3))),
                   ("mknod-block", lambda: os.mknod("/workspace/b", 0o600 | 0o060000, os.makedev(7, 0))),
                   ("fchmodat2-setuid", lambda: fchmodat2("/workspace/r", 0o4755))]:
    try:
        call(); print(name, "ESCAPED")
    except OSError as e:
        print(name, "refused", e.errno)'
	echo "$output"
	[[ $output != *ESCAPED* ]]
	[ "$(grep -c refused <<<"$output")" = 5 ]
	# and the host's view agrees
	[ -z "$(find "$WORK/ws" \( -perm /6000 -o -type c -o -type b \) -print)" ]
	# user 1000 of another sandbox gets its own workspace the same way
	provision "$WORK/user.yaml"
	run -0 sbx-run "$ID" -- sh -c 'id -u; echo u > /workspace/u; stat -c "%u %g" /workspace/u'
	[ "$output" = "1000
1000 1000" ]
	[ "$(stat -c '%u %g' "$WORK/ws1000/u")" = "$me" ]
}

@test "overlay in the user namespace: lower files and directories can be removed (whiteouts)" {
	printf 'read_only_root: false\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	# /opt and /etc/hostname come from the read-only lower layer
	run -0 sbx-run "$ID" -- sh -c 'rmdir /opt && rm /etc/hostname && mkdir /opt && ls -A /opt | wc -l; test ! -e /etc/hostname && echo gone'
	[ "${lines[0]}" = "0" ]
	[ "${lines[1]}" = "gone" ]
	# the lower layer is untouched; the removal is recorded in the sandbox's layer
	[ -d "$SBX_ROOT/skel/$(state "$ID" skeleton)/opt" ]
	[ -e "$SBX_ROOT/sandboxes/$ID/layer/upper/etc/hostname" ]
	run -0 sbx-run "$ID" -- sh -c 'test ! -e /etc/hostname && echo still-gone'
	[ "$output" = "still-gone" ]
}

@test "rootfs host: sandboxes share one read-only skeleton, ID-mapped; it cannot be changed from inside" {
	printf 'read_only_root: false\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	a=$ID
	provision "$MANIFESTS/minimal.yaml"
	b=$ID
	key=$(state "$a" skeleton)
	[ -n "$key" ]
	[ "$(state "$b" skeleton)" = "$key" ]
	skel=$SBX_ROOT/skel/$key
	# what differs per sandbox (its name and network files) is on a tmpfs of its
	# init's: nothing of the root filesystem in its directory but its own layer
	# (and a writable root's disk quota, disk_mb by default), beside the
	# runner's socket and locks
	[ "$(find "$SBX_ROOT/sandboxes/$a" -mindepth 1 -maxdepth 1 -printf '%f\n' | grep -v -e '\.lock$' -e '\.sock$' | sort | tr '\n' ' ')" = "ids layer layer.img state.yaml " ]
	run -0 sbx-run "$a" -- sh -c 'cat /etc/hostname; echo; grep -c "127.0.1.1.$(cat /etc/hostname)" /etc/hosts; cat /etc/resolv.conf'
	[ "${lines[0]}" = "$a" ]
	[ "${lines[1]}" = 1 ]
	[[ ${lines[2]} == *"no resolver allowed"* ]]
	# on the host the skeleton belongs to root, under a directory only root can open
	[ "$(stat -c '%u %a' "$SBX_ROOT/skel")" = "0 700" ]
	[ "$(stat -c %u "$skel/etc/passwd")" = 0 ]
	# inside, ID-mapped: root's files are the sandbox root's, /home/sandbox is user 1000's
	run -0 sbx-run "$a" -- stat -c '%u %g %n' /etc/passwd /home/sandbox /etc/hostname
	[ "$output" = "0 0 /etc/passwd
1000 1000 /home/sandbox
0 0 /etc/hostname" ]
	# a changed /etc/passwd and a removed /etc/group stay in the sandbox's own layer
	run -0 sbx-run "$a" -- sh -c 'echo evil::0:0::/:/bin/sh >> /etc/passwd && rm /etc/group && echo done'
	[ "$output" = "done" ]
	run -0 sbx-run --user 1000 "$a" -- touch /home/sandbox/x
	[ "$(grep -c evil "$skel/etc/passwd")" = 0 ]
	[ -f "$skel/etc/group" ] && [ ! -e "$skel/home/sandbox/x" ]
	run -0 sbx-run "$b" -- sh -c 'grep -c evil /etc/passwd; test -f /etc/group && echo group; test -e /home/sandbox/x || echo clean'
	[ "$output" = "0
group
clean" ]
}

@test "the synthesized /etc is readable by the sandbox's users whatever the operator's umask" {
	(umask 077 && sbx-provision "$MANIFESTS/minimal.yaml" > "$WORK/id")
	ID=$(cat "$WORK/id")
	run -0 sbx-run --user 1000 "$ID" -- sh -c 'cat /etc/passwd /etc/group /etc/hosts /etc/hostname /etc/resolv.conf /etc/nsswitch.conf > /dev/null && stat -c %a /etc/passwd /etc/hosts'
	[ "$output" = "644
644" ]
}

@test "sbx-gc removes skeletons no sandbox uses and the host has outdated, and keeps the rest" {
	provision "$MANIFESTS/minimal.yaml"
	key=$(state "$ID" skeleton)
	stale=0123456789abcdef0123456789abcdef
	mkdir -p "$SBX_ROOT/skel/$stale/etc"
	run -0 sbx-gc --dry-run
	[[ $output == *"would remove skeleton $stale"* ]]
	[[ $output != *"skeleton $key"* ]]
	[ -d "$SBX_ROOT/skel/$stale" ]
	run -0 sbx-gc
	[[ $output == *"removed skeleton $stale"* ]]
	[ ! -e "$SBX_ROOT/skel/$stale" ]
	[ -d "$SBX_ROOT/skel/$key" ]
	# one the state of a live sandbox names stays, current or not
	mv "$SBX_ROOT/skel/$key" "$SBX_ROOT/skel/$stale"
	sed -i "s/$key/$stale/" "$SBX_ROOT/sandboxes/$ID/state.yaml"
	run -0 sbx-gc
	[[ $output != *skeleton* ]]
	[ -d "$SBX_ROOT/skel/$stale" ]
	run -0 sbx-run "$ID" -- cat /etc/hostname
	[ "$output" = "$ID" ]
}

@test "a root-only host file (0600) is unreadable from inside, even as sandbox root" {
	mkdir -p "$WORK/sec" && chmod 755 "$WORK/sec"
	echo topsecret > "$WORK/sec/key" && chmod 600 "$WORK/sec/key"
	printf 'filesystem_mounts: [{host: %s, guest: /sec, mode: ro}]\n' "$WORK/sec" > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	run -0 sbx-run "$ID" -- id -u
	[ "$output" = "0" ]
	run -1 sbx-run "$ID" -- cat /sec/key
	[[ $output == *"Permission denied"* ]]
	[[ $output != *topsecret* ]]
}

@test "rootfs: DIR is the read-only lower layer; the sandbox's writes land in its own layer" {
	chmod a+rx "$WORK"
	# overlay's option separators in the path: layers are passed by descriptor
	r="$WORK/root,fs:1"
	mkdir -p "$r/usr" "$r/etc" "$r/tmp"
	chmod 1777 "$r/tmp"
	for l in bin sbin lib lib64; do
		if [ -L "/$l" ]; then ln -s "$(readlink "/$l")" "$r/$l"; fi
	done
	echo "from-the-image" > "$r/etc/motd"
	chmod -R a+rX "$r"
	printf 'rootfs: "%s"\nread_only_root: false\nfilesystem_mounts: [{host: /usr, guest: /usr, mode: ro}]\n' "$r" > "$WORK/m.yaml"
	# a directory root needs the operator's word
	run -77 sbx-provision "$WORK/m.yaml"
	[[ $output == *"rootfs $r: not allowed by the built-in policy"* ]]
	printf 'rootfs: ["%s"]\n' "$WORK" | policy
	provision "$WORK/m.yaml"
	run -0 sbx-run "$ID" -- cat /etc/motd
	[ "$output" = "from-the-image" ]
	# the image's files belong to host IDs the sandbox does not have: read, not write
	run -2 sbx-run "$ID" -- sh -c 'echo changed > /etc/motd'
	[[ $output == *"Permission denied"* ]]
	# the root directory is the sandbox's own: writes there land in its layer
	run -0 sbx-run "$ID" -- sh -c 'echo new > /file && mkdir /work && echo w > /work/f && cat /file'
	[ "$output" = "new" ]
	[ ! -e "$r/file" ]
	[ -f "$SBX_ROOT/sandboxes/$ID/layer/upper/file" ]
	[ -f "$SBX_ROOT/sandboxes/$ID/layer/upper/work/f" ]
	[ "$(cat "$r/etc/motd")" = "from-the-image" ]
}

@test "the host's /etc, /root, /home, /var and /tmp are not visible" {
	provision "$MANIFESTS/minimal.yaml"
	run -0 sbx-run "$ID" -- sh -c 'ls -a /tmp /home /var /root; cat /etc/passwd; ls /etc'
	# $WORK is a directory of the host's /tmp (and teardown removes it, even
	# when the test fails: no marker file of its own to leave behind)
	[ -d "/tmp/$(basename "$WORK")" ]
	[[ $output != *"$(basename "$WORK")"* ]]
	[[ $output != *"shadow"* ]]
	run -2 sbx-run "$ID" -- ls /etc/shadow
}

@test "mount, ptrace, bpf, keyctl and unshare(CLONE_NEWUSER) fail; CapEff 0, NoNewPrivs 1" {
	provision "$MANIFESTS/minimal.yaml"
	assert_confined "$ID"
	run -0 sbx-run "$ID" -- python3 - < "$FIXTURES/syscalls.py"
	echo "$output"
	local name
	for name in mount ptrace bpf keyctl unshare-user clone-newuser setns io_uring_setup \
	    userfaultfd init_module clock_settime kexec_load perf_event_open open_by_handle_at; do
		[[ $output == *"$name EPERM"* ]] || { echo "not refused: $name"; false; }
	done
	[[ $output != *" OK"* ]]
}

@test "only the minimal /dev exists and mknod fails" {
	provision "$MANIFESTS/minimal.yaml"
	assert_confined "$ID"
	run -0 sbx-run "$ID" -- ls /dev
	[[ $output != *sda* && $output != *vda* && $output != *kmsg* && $output != *mem* ]]
	run -1 sbx-run "$ID" -- mknod /tmp/null2 c 1 3
	run -0 sbx-run "$ID" -- sh -c 'echo x > /dev/null && head -c 4 /dev/urandom | wc -c'
	[ "$output" = "4" ]
}

@test "writes to /proc/sys and /proc/sysrq-trigger are refused" {
	provision "$MANIFESTS/minimal.yaml"
	assert_confined "$ID"
	# dash exits 2 when a redirection fails
	local f
	for f in /proc/sys/kernel/sysrq /proc/sysrq-trigger /proc/sys/kernel/hostname /proc/sys/vm/drop_caches; do
		run -2 sbx-run "$ID" -- sh -c "echo 1 > $f"
		[[ $output == *"cannot create $f"* ]]
	done
	run -0 cat /proc/sys/kernel/hostname
	[ "$output" != "1" ]
}

@test "Landlock refuses writes outside the writable mounts that permissions would allow" {
	printf 'tmpfs: [{guest: /scratch, size_mb: 8}]\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	assert_confined "$ID"
	run -0 sbx-run "$ID" -- sh -c 'echo ok > /scratch/f && cat /scratch/f'
	# /proc/PID/comm is writable by its owner: only Landlock stands in the way
	run -2 sbx-run "$ID" -- sh -c 'echo hacked > /proc/$$/comm'
	[[ $output == *"Permission denied"* ]]
	# control: the same write succeeds with landlock: false (which the policy must allow)
	printf 'security: {landlock: false}\n' > "$WORK/nl.yaml"
	echo 'allow: {landlock_off: true}' | policy
	provision "$WORK/nl.yaml"
	run -0 sbx-run "$ID" -- sh -c 'echo hacked > /proc/$$/comm && cat /proc/$$/comm'
	[ "$output" = "hacked" ]
}

@test "setuid binaries inside do not gain privileges" {
	provision "$MANIFESTS/minimal.yaml"
	assert_confined "$ID"
	run -0 sbx-run -u 1000:1000 "$ID" -- id -u
	[ "$output" = "1000" ]
	run sbx-run -u 1000:1000 "$ID" -- su -c 'id -u' root
	[ "$status" -ne 0 ]
	[[ $output != "0" ]]
}

@test "seccomp: the profile is compiled once per state root; a damaged copy is made again, never skipped" {
	provision "$MANIFESTS/minimal.yaml"
	run -0 sbx-run "$ID" -- true
	prog=$(echo "$SBX_ROOT"/seccomp/default-*.bpf)
	[ -s "$prog" ]
	[ $(($(stat -c %s "$prog") % 8)) -eq 0 ]
	printf 'junk' > "$prog"
	# a run that forks its own process (--user: not the runner's parked
	# entry, confined already) reads the program
	run -0 sbx-run --user 0:0 "$ID" -- grep Seccomp: /proc/self/status
	[[ $output == *"Seccomp:	2"* ]]
	run -1 sbx-run --user 0:0 "$ID" -- unshare -U true
	[ $(($(stat -c %s "$prog") % 8)) -eq 0 ]
}

@test "seccomp strict is default narrowed to AF_UNIX sockets, as sbx-manifest(5) says: a different program, refused inside" {
	provision - <<<'security: {seccomp: default}'
	d=$ID
	provision - <<<'security: {seccomp: strict}'
	s=$ID
	probe='
import socket
for name, fam, kind in [("inet", socket.AF_INET, socket.SOCK_STREAM), ("inet6", socket.AF_INET6, socket.SOCK_DGRAM),
                        ("netlink", socket.AF_NETLINK, socket.SOCK_RAW), ("unix", socket.AF_UNIX, socket.SOCK_STREAM)]:
    try:
        socket.socket(fam, kind).close(); print(name, "ok")
    except OSError as e:
        print(name, e.errno)
a, b = socket.socketpair(); print("socketpair ok")'
	run -0 sbx-run "$d" -- python3 -c "$probe"
	[ "$output" = "inet ok
inet6 ok
netlink ok
unix ok
socketpair ok" ]
	run -0 sbx-run "$s" -- python3 -c "$probe"
	[ "$output" = "inet 97
inet6 97
netlink 97
unix ok
socketpair ok" ]
	# and the two compiled programs are not the same
	run -1 cmp -s "$SBX_ROOT"/seccomp/default-*.bpf "$SBX_ROOT"/seccomp/strict-*.bpf
}

@test "a seccomp policy file is checked by a dry run, compiled at provision and kept: editing it changes no live sandbox" {
	repo=$BATS_TEST_DIRNAME/..
	{ sed -n '/allowed\[\] = {/,/NULL/p' "$repo/lib/host/seccomp_profile.c" | grep -o '"[a-z0-9_]*"' |
		tr -d '"' | grep -vx mkdir | sed 's/^/allow /'; echo 'allow ioctl'; echo 'allow clone'
		echo 'deny mkdir'; } > "$WORK/p.seccomp"
	printf 'security: {seccomp: %s}\n' "$WORK/p.seccomp" > "$WORK/m.yaml"
	printf 'seccomp_files: ["%s"]\n' "$WORK" | policy
	# a bad line is found before anything is made
	cp "$WORK/p.seccomp" "$WORK/good.seccomp"
	echo 'allow no_such_call' >> "$WORK/p.seccomp"
	run -65 sbx-provision --dry-run "$WORK/m.yaml"
	[[ $output == *"p.seccomp:$(wc -l < "$WORK/p.seccomp"):1: unknown system call 'no_such_call'"* ]]
	cp "$WORK/good.seccomp" "$WORK/p.seccomp"
	provision "$WORK/m.yaml"
	run -0 sbx-inspect "$ID"
	[[ $output == *"seccomp_digest: \"sha256:"* ]]
	run -1 sbx-run "$ID" -- mkdir /tmp/d
	[[ $output == *"Operation not permitted"* ]]
	# the operator edits the file: the live sandbox keeps the program it was made with
	sed -i 's/^deny mkdir$/allow mkdir/' "$WORK/p.seccomp"
	run -1 sbx-run "$ID" -- mkdir /tmp/d
	provision "$WORK/m.yaml"
	run -0 sbx-run "$ID" -- mkdir /tmp/d
	# a kept program that no longer matches its digest is never loaded
	printf 'x' | dd of="$SBX_ROOT/sandboxes/$ID/seccomp.bpf" bs=1 seek=10 conv=notrunc 2>/dev/null
	run -125 sbx-run "$ID" -- true
	[[ $output == *"does not match its digest"* ]]
}

@test "Landlock's network rules (landlock_network): only bind_ports may listen, and no TCP connect goes out, not even on the sandbox's own lo" {
	probe='
import socket
s = socket.socket(); s.bind(("127.0.0.1", 7000)); s.listen(1); print("bind-7000 ok")
for what, call in [("bind-7001", lambda: socket.socket().bind(("127.0.0.1", 7001))),
                   ("connect-7000", lambda: socket.create_connection(("127.0.0.1", 7000), 2))]:
    try:
        call(); print(what, "ok")
    except OSError as e:
        print(what, e.errno)'
	# without: the network namespace lets the sandbox's own servers be
	provision - <<<'{}'
	run -0 sbx-run "$ID" -- python3 -c "$probe"
	[ "$output" = "bind-7000 ok
bind-7001 ok
connect-7000 ok" ]
	# with: Landlock alone refuses (EACCES), where no other layer would
	provision - <<<'security: {landlock_network: true, bind_ports: [7000]}'
	assert_confined "$ID"
	run -0 sbx-run "$ID" -- python3 -c "$probe"
	[ "$output" = "bind-7000 ok
bind-7001 13
connect-7000 13" ]
	# on for the code trusted least; refused where ports cannot say it
	run -0 sbx-provision -n -o json - <<<'trust: sensitive'
	[[ $output == *'"landlock_network":true'* ]]
	run -65 sbx-provision -n - <<<'{network_policy: egress-allow-list, allowed_egress: ["10.1.0.0/16:*"], security: {landlock_network: true}}'
	[[ $output == *"allows any port"* ]]
	run -65 sbx-provision -n - <<<'security: {bind_ports: [80]}'
}

@test "a rw mount of a single file is writable with Landlock on" {
	echo before > "$WORK/f"
	chmod 666 "$WORK/f"
	printf 'filesystem_mounts: [{host: %s, guest: /etc/f, mode: rw, idmap: false}]\n' "$WORK/f" > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	run -0 sbx-run "$ID" -- sh -c 'echo after > /etc/f && cat /etc/f'
	[ "$output" = after ]
	[ "$(cat "$WORK/f")" = after ]
}
