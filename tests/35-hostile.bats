#!/usr/bin/env bats
# Hostile programs (tests/hostile/) run inside a default sandbox, each only after
# the same test proved from inside that the sandbox holds. Each names its threat.
load helpers

# A default sandbox with the hostile programs mounted read-only at /hostile.
hostile_sandbox() {
	printf 'filesystem_mounts: [{host: %s, guest: /hostile, mode: ro}]\nresource_allocation: {pids: 64, memory_mb: 256}\n' \
		"${SBX_HOSTILE:?run through make check}" > "$WORK/hostile.yaml"
	provision "$WORK/hostile.yaml"
	assert_confined "$ID"
}

@test "threat: the kernel's dangerous interfaces (mount, ptrace, bpf, keyctl, modules, io_uring...)" {
	hostile_sandbox
	run -0 sbx-run "$ID" -- /hostile/kernel
	echo "$output"
	[ "$(grep -c blocked <<<"$output")" -ge 29 ]
	[[ $output != *ESCAPED* ]]
}

@test "threat: escape through tools (mount, chroot, unshare, nsenter, mknod, /proc/sys, /sys, setuid)" {
	hostile_sandbox
	run -0 sbx-run "$ID" -- /hostile/escape.sh
	echo "$output"
	[ "$(grep -c blocked <<<"$output")" -ge 18 ]
	[[ $output != *ESCAPED* ]]
	# and the host is as it was
	[ "$(cat /proc/sys/kernel/hostname)" != evil ]
	[ ! -e /usr/bin/sbx-evil ]
}

@test "threat: network exfiltration (TCP, UDP, raw, packet, abstract unix, DNS)" {
	hostile_sandbox
	# on the host: a TCP listener, a UDP socket that counts datagrams, an abstract socket
	python3 - > "$WORK/net" <<'PY' &
import os, select, socket, sys, time
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(4)
port = t.getsockname()[1]
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", port))
name = "sbx-test-%d" % os.getpid()
a = socket.socket(socket.AF_UNIX); a.bind("\0" + name); a.listen(4)
print(port, name, flush=True)
got = 0
end = time.time() + 8
while time.time() < end:
    r, _, _ = select.select([t, u, a], [], [], 0.2)
    for s in r:
        if s is u:
            s.recv(100)
        else:
            s.accept()[0].close()
        got += 1
print("received", got, flush=True)
PY
	TEST_PIDS+=($!)
	for _ in $(seq 50); do [ -s "$WORK/net" ] && break; sleep 0.1; done
	read -r port name < "$WORK/net"
	# control: from the host, the UDP socket and listeners do receive
	python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', $port))"
	run -0 sbx-run "$ID" -- /hostile/net-exfil "$port" "$name"
	echo "$output"
	[[ $output == *"tcp-to-host-loopback blocked"* ]]
	[[ $output == *"raw-socket blocked"* ]]
	[[ $output == *"packet-socket blocked"* ]]
	[[ $output == *"abstract-unix-to-host blocked"* ]]
	[[ $output == *"dns-lookup blocked"* ]]
	[[ $output != *ESCAPED* ]]
	wait "${TEST_PIDS[-1]}"
	# only the host's own control datagram arrived
	grep -q "^received 1$" "$WORK/net"
}

@test "threat: one sandbox reaching another (network, files in a shared mount, processes)" {
	mkdir -p "$WORK/shared" && chmod 1777 "$WORK/shared"
	printf 'filesystem_mounts: [{host: %s, guest: /shared, mode: rw}]\n' "$WORK/shared" > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	a=$ID
	provision "$WORK/m.yaml"
	b=$ID
	assert_confined "$a"
	assert_confined "$b"
	# different host IDs: a private file of A's is closed to B's root
	[ "$(state "$a" uid_base)" != "$(state "$b" uid_base)" ]
	run -0 sbx-run "$a" -- sh -c 'umask 077; echo secret-of-a > /shared/a.txt'
	run -1 sbx-run "$b" -- cat /shared/a.txt
	[[ $output == *"Permission denied"* ]]
	run -1 sbx-run "$b" -- rm -f /shared/a.txt
	# A's listener on its loopback is not B's loopback
	sbx-run "$a" -- python3 -c '
import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 4711)); s.listen(1); time.sleep(3)' &
	TEST_PIDS+=($!)
	sleep 0.5
	run -0 sbx-run "$b" -- python3 -c '
import socket
try:
    socket.create_connection(("127.0.0.1", 4711), 1); print("connected")
except OSError as e:
    print("refused", e.errno)'
	[ "$output" = "refused 111" ]
	# and B cannot see A's processes
	run -0 sbx-run "$b" -- sh -c 'ps -e -o comm | grep -c python3 || true'
	[ "$output" = "0" ]
}

@test "threat: a sandbox turning another sandbox's mount source into a symlink to the host" {
	mkdir -p "$WORK/shared/sub" && chmod 777 "$WORK/shared" "$WORK/shared/sub"
	printf 'filesystem_mounts: [{host: %s, guest: /shared, mode: rw}]\n' "$WORK/shared" > "$WORK/a.yaml"
	provision "$WORK/a.yaml"
	assert_confined "$ID"
	# sandbox A swaps the directory for a link to the host's /etc...
	run -0 sbx-run "$ID" -- sh -c 'rmdir /shared/sub && ln -s /etc /shared/sub'
	[ -L "$WORK/shared/sub" ]
	# ...that the operator then gives sandbox B: refused, nothing mounted
	printf 'filesystem_mounts: [{host: %s/shared/sub, guest: /data, mode: rw}]\n' "$WORK" > "$WORK/b.yaml"
	run -65 sbx-provision "$WORK/b.yaml"
	[[ $output == *"symbolic link"* ]]
	[ "$(sbx-ls -q | wc -l)" -eq 1 ]
}

@test "threat: a hostile root filesystem whose mount point is a symlink out of the root" {
	mkdir -p "$WORK/root/usr" "$WORK/escape-target" "$WORK/data"
	ln -s "$WORK/escape-target" "$WORK/root/workspace"
	ln -s /usr/bin "$WORK/root/bin"
	# a rootfs must be reachable by the sandbox's unprivileged host IDs
	chmod a+rx "$WORK"
	chmod -R a+rX "$WORK/root"
	printf 'rootfs: %s\nfilesystem_mounts: [{host: %s, guest: /workspace, mode: rw}]\n' "$WORK/root" "$WORK/data" > "$WORK/m.yaml"
	run -71 sbx-provision "$WORK/m.yaml"
	[[ $output == *"mount point /workspace (a symlink"* ]]
	# nothing was mounted over the link's target, and nothing is left
	absent "$WORK/escape-target" /proc/self/mountinfo
	run -0 sbx-ls -q
	[ -z "$output" ]
}
