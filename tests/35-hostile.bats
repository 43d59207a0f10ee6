#!/usr/bin/env bats
# Hostile programs (tests/hostile/) run inside a default sandbox of each tier,
# each only after the same test proved from inside that the sandbox holds (its
# own PID namespace, no capability, root inside no root outside). Each names
# its threat; what only one tier can be asked says so.
# tiers: namespace runc crun runsc
load helpers
load tierlib

# A default sandbox of this tier with the hostile programs mounted read-only
# at /hostile, proved confined first.
hostile_sandbox() {
	tier_provision <<-EOF
	filesystem_mounts: [{host: ${SBX_HOSTILE:?run through make check}, guest: /hostile, mode: ro}]
	resource_allocation: {pids: 64, memory_mb: 256}
	EOF
	tier_confined "$ID"
	run -0 sbx-run "$ID" -- sh -c "kill -0 $$ 2>&1; echo rc=\$?"
	[[ $output == *"rc=1"* ]]
	cp "$WORK/m.yaml" "$WORK/hostile.yaml"
}

only_namespace() {
	[ "$TIER" = namespace ] || skip "$1 (SBX_TIER=$TIER)"
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
	# shared between sandboxes: each writes as its own host IDs, not as the owner
	tier_manifest <<-EOF
	filesystem_mounts: [{host: $WORK/shared, guest: /shared, mode: rw, idmap: false}]
	EOF
	provision "$WORK/m.yaml"
	a=$ID
	provision "$WORK/m.yaml"
	b=$ID
	tier_confined "$a"
	tier_confined "$b"
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
	tier_manifest <<-EOF
	filesystem_mounts: [{host: $WORK/shared, guest: /shared, mode: rw, idmap: false}]
	EOF
	provision "$WORK/m.yaml"
	tier_confined "$ID"
	# sandbox A swaps the directory for a link to the host's /etc...
	run -0 sbx-run "$ID" -- sh -c 'rmdir /shared/sub && ln -s /etc /shared/sub'
	[ -L "$WORK/shared/sub" ]
	# ...that the operator then gives sandbox B: refused, nothing mounted
	tier_manifest <<-EOF
	filesystem_mounts: [{host: $WORK/shared/sub, guest: /data, mode: rw, idmap: false}]
	EOF
	run -65 sbx-provision "$WORK/m.yaml"
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
	TIER_POLICY="rootfs: [\"$WORK\"]" tier_manifest <<-EOF
	rootfs: $WORK/root
	filesystem_mounts: [{host: $WORK/data, guest: /workspace, mode: rw, idmap: false}]
	EOF
	run -71 sbx-provision "$WORK/m.yaml"
	[[ $output == *"mount point /workspace (a symlink"* ]]
	# nothing was mounted over the link's target, and nothing is left
	absent "$WORK/escape-target" /proc/self/mountinfo
	run -0 sbx-ls -q
	[ -z "$output" ]
}

@test "threat: descriptors the caller left open (a root-only file, the host's /) do not reach inside" {
	hostile_sandbox
	echo secret-of-the-host > "$WORK/secret"
	chmod 600 "$WORK/secret"
	run -1 sbx-run "$ID" -- cat /proc/self/fd/9 9<"$WORK/secret"
	[[ $output != *secret-of-the-host* ]]
	run -0 sbx-run "$ID" -- sh -c 'ls /proc/self/fd/8/ 2>&1; test -e /proc/$$/fd/8 || test -e /proc/$$/fd/9 || echo none' 8</ 9<"$WORK/secret"
	[[ $output != *boot* ]] && [[ $output != *root* ]]
	[ "$(tail -n 1 <<<"$output")" = "none" ]
	# a directory of the host's, with Landlock off too: nothing to climb out of
	if [ "$TIER" = namespace ]; then
		TIER_POLICY='allow: {landlock_off: true}' tier_manifest "landlock: false" </dev/null
	else
		tier_manifest </dev/null   # the OCI runtimes apply no Landlock anyway
	fi
	provision "$WORK/m.yaml"
	tier_confined "$ID"
	run sbx-run "$ID" -- sh -c 'touch /proc/self/fd/7/../../tmp/sbx-escape-$$; ls /proc/self/fd/7/..' 7<"$WORK"
	[ "$status" -ne 0 ]
	[ -z "$(find /tmp -maxdepth 1 -name 'sbx-escape-*')" ]
}

@test "threat: the entering sbx-run child is out of reach while it holds the caller's privileges and descriptors" {
	only_namespace "the namespace tier's own entry into a sandbox (the OCI tier's is the runtime's exec)"
	echo 'capabilities: [CAP_SYS_PTRACE]' | policy
	printf 'security: {capabilities: [CAP_SYS_PTRACE]}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	run -0 sbx-run "$ID" -- cat /proc/self/status /proc/self/uid_map
	[[ $output == *"NoNewPrivs:	1"* ]] && [[ $output == *"Seccomp:	2"* ]]
	[[ $output == *"CapEff:	0000000000080000"* ]]
	not_host_root
	echo secret-of-the-host > "$WORK/secret"
	chmod 600 "$WORK/secret"
	# a run held where it has joined the sandbox but not confined itself yet:
	# its child, in the sandbox's PID namespace, seen from the host first
	init=$(state "$ID" pid)
	SBX_TEST_PAUSE_AT=run-joined:/tmp/go sbx-run "$ID" -- true 9<"$WORK/secret" 2>"$WORK/held.err" &
	TEST_PIDS+=($!)
	held=
	for _ in $(seq 300); do
		for p in $(pgrep -x sbx-run); do
			[ "$(readlink "/proc/$p/ns/pid")" = "$(readlink "/proc/$init/ns/pid")" ] && held=$p
		done
		[ -n "$held" ] && break
		sleep 0.1
	done
	if [ -z "$held" ]; then
		echo "the run was not held: $(cat "$WORK/held.err")"
		ps -o pid,stat,wchan:32,args -C sbx-run || true
		return 1
	fi
	# a racer inside, with CAP_SYS_PTRACE, goes for it, then lets it go on
	run -0 sbx-run "$ID" -- python3 -c '
import os, time
end = time.time() + 30
pid = None
while pid is None and time.time() < end:
    for p in os.listdir("/proc"):
        if p.isdigit() and p != str(os.getpid()):
            try:
                if open("/proc/%s/comm" % p).read().strip() == "sbx-run": pid = p
            except OSError: pass
    time.sleep(0.05)
print("found", pid is not None)
for what, get in [("exe", lambda: os.readlink("/proc/%s/exe" % pid)),
                  ("fd", lambda: open("/proc/%s/fd/9" % pid).read()),
                  ("fds", lambda: os.listdir("/proc/%s/fd" % pid)),
                  ("environ", lambda: open("/proc/%s/environ" % pid).read()),
                  ("mem", lambda: open("/proc/%s/mem" % pid, "rb"))]:
    try:
        print(what, "ESCAPED", get())
    except Exception as e:
        print(what, "blocked", type(e).__name__)
open("/tmp/go", "w").close()'
	echo "$output"
	[[ $output == *"found True"* ]]
	[[ $output != *ESCAPED* ]]
	[[ $output != *secret-of-the-host* ]]
	[ "$(grep -c blocked <<<"$output")" = 5 ]
	wait "${TEST_PIDS[-1]}"
}

@test "threat: a runner's parked entry is out of reach from inside: no PID, no signal, no ptrace, no channel; it goes with the sandbox" {
	only_namespace "the namespace tier's runner keeps the parked entry"
	echo 'capabilities: [CAP_SYS_PTRACE, CAP_KILL]' | policy
	printf 'security: {capabilities: [CAP_SYS_PTRACE, CAP_KILL]}\n' > "$WORK/m.yaml"
	provision "$WORK/m.yaml"
	# first: a PID namespace of its own and no host root
	run -0 sbx-run "$ID" -- sh -c 'readlink /proc/self/ns/pid; cat /proc/self/uid_map'
	[ "${lines[0]}" != "$(readlink /proc/self/ns/pid)" ]
	not_host_root
	init=$(state "$ID" pid)
	# a worker parks an entry once it has run a command: run until a run is
	# one an entry started (it wakes for it); sequential runs keep two
	# workers, and one without an entry makes it after its run
	proven=
	for _ in $(seq 10); do
		mapfile -t parks < <(pgrep -f "^sbx-park $ID")
		woke=$(woke_of "${parks[@]}")
		run -0 sbx-run "$ID" -- true
		if [ "${#parks[@]}" -gt 0 ] && [ "$(woke_of "${parks[@]}")" -gt "$woke" ]; then
			proven=1
			break
		fi
		sleep 0.1
	done
	[ -n "$proven" ]
	# in the sandbox's mounts and user namespace, confined as a command is,
	# but in the host's PID namespace
	channels=()
	for park in "${parks[@]}"; do
		[ "$(readlink "/proc/$park/ns/mnt")" = "$(readlink "/proc/$init/ns/mnt")" ]
		[ "$(readlink "/proc/$park/ns/user")" = "$(readlink "/proc/$init/ns/user")" ]
		[ "$(readlink "/proc/$park/ns/pid")" = "$(readlink /proc/self/ns/pid)" ]
		grep -q '^NoNewPrivs:	1' "/proc/$park/status"
		grep -q '^Seccomp:	2' "/proc/$park/status"
		grep -q '^CapEff:	0000000000080020' "/proc/$park/status"
		grep -q '^Uid:	[1-9]' "/proc/$park/status"
		channels+=("$(for f in /proc/"$park"/fd/*; do readlink "$f"; done | sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' | head -n 1)")
		[ -n "${channels[-1]}" ]
	done
	# inside, as root with CAP_KILL and CAP_SYS_PTRACE: nothing to name it by
	run -0 sbx-run "$ID" -- python3 -c '
import os, signal
me = os.getpid()
for p in sorted(int(p) for p in os.listdir("/proc") if p.isdigit()):
    print("proc", p, open("/proc/%d/comm" % p).read().strip())
# (ptrace is the profile'"'"'s EPERM whatever the target: a PID is what any
# signal, ptrace or /proc needs)
for p in range(2, 1 << 16):
    try:
        os.kill(p, 0)
        if p != me:
            print("signal ESCAPED", p)
    except ProcessLookupError:
        pass
    except PermissionError:
        print("signal visible", p)
print("unix", " ".join(l.split()[6] for l in open("/proc/net/unix").readlines()[1:]))
try:
    os.kill(-1, signal.SIGKILL)
except ProcessLookupError:
    pass
print("killed all it could")
'
	echo "$output"
	[[ $output == *"killed all it could"* ]]
	[[ $output != *ESCAPED* ]]
	[[ $output != *sbx-park* ]]
	[ "$(grep -c '^proc ' <<<"$output")" = 2 ]
	for channel in "${channels[@]}"; do
		[[ " $(sed -n 's/^unix //p' <<<"$output") " != *" $channel "* ]]
	done
	# still there
	for park in "${parks[@]}"; do
		kill -0 "$park"
	done
	# the sandbox's end is theirs, before sbx-gc returns
	run -0 sbx-gc "$ID"
	for park in "${parks[@]}"; do
		[ -z "$(readlink "/proc/$park/ns/mnt" 2>/dev/null)" ]
	done
	run -1 pgrep -f "^sbx-park $ID"
}

@test "threat: terminal injection and the caller's terminal, with the high bits of ioctl's command set" {
	hostile_sandbox
	# a terminal of the test's own that is no session's controlling one
	run -0 python3 - "$ID" <<'PY'
import os, subprocess, sys, tty
master, slave = os.openpty()
tty.setraw(slave)
p = subprocess.run(["sbx-run", sys.argv[1], "--", "/hostile/highbits", "tty"], stdin=slave,
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
print(p.stdout.decode(), end="")
os.set_blocking(slave, False)
try:
    got = os.read(slave, 100)
except BlockingIOError:
    got = b""
print("injected", len(got))
PY
	echo "$output"
	[[ $output != *ESCAPED* ]]
	[ "$(grep -c blocked <<<"$output")" = 6 ]
	[[ $output == *"tiocgwinsz-high allowed"* ]]
	[[ $output == *"injected 0"* ]]
}

@test "threat: AF_VSOCK, which no namespace confines, is refused (the socket is only made)" {
	hostile_sandbox
	run -0 sbx-run "$ID" -- /hostile/highbits
	echo "$output"
	[[ $output != *ESCAPED* ]]
	[ "$(grep -c '^vsock.* blocked (EAFNOSUPPORT)' <<<"$output")" = 3 ]
	[[ $output == *"unix-socket allowed"* ]]
}

@test "threat: what the host gives away through /proc is masked; processes say what they are" {
	hostile_sandbox
	run -0 sbx-run "$ID" -- sh -c 'for f in cmdline config.gz keys key-users timer_list kallsyms kcore sched_debug; do
		[ -e /proc/$f ] || continue; printf "%s %s\n" $f "$(head -c 64 /proc/$f 2>/dev/null | wc -c)"; done
		for d in acpi scsi pressure asound; do [ -d /proc/$d ] && printf "%s %s\n" $d "$(ls /proc/$d | wc -l)"; done; true'
	echo "$output"
	[ -n "$output" ]
	if [ "$TIER" = runsc ]; then
		# gVisor's /proc is its own kernel's: its command line is gVisor's
		masked=$output
		run -0 sbx-run "$ID" -- cat /proc/cmdline
		[[ $output == *gvisor* ]]
		[ "$output" != "$(cat /proc/cmdline)" ]
		output=$(grep -v '^cmdline ' <<<"$masked" || true)
	else
		[[ $output == *"cmdline 0"* ]]
	fi
	[ -z "$output" ] || [ "$(grep -cv ' 0$' <<<"$output")" = 0 ]
	# the watchdog is named for what it is; the namespace tier's init too,
	# inside and on the host (the OCI tier's first process is the root's)
	[ "$(tr '\0' ' ' < "/proc/$(state "$ID" watchdog_pid)/cmdline" | sed 's/ *$//')" = "sbx-watchdog $ID" ]
	[ "$TIER" = namespace ] || return 0
	run -0 sbx-run "$ID" -- cat /proc/1/cmdline
	[ "$(tr '\0' ' ' <<<"$output" | sed 's/ *$//')" = "sbx-init $ID" ]
	[ "$(tr '\0' ' ' < "/proc/$(state "$ID" pid)/cmdline" | sed 's/ *$//')" = "sbx-init $ID" ]
	[[ $(cat "/proc/$(state "$ID" pid)/cmdline") != *hostile.yaml* ]]
}

@test "threat: init, which holds the namespaces, keeps no capability and no way to be used" {
	hostile_sandbox
	run -0 sbx-run "$ID" -- grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/1/status
	# gVisor's /proc has no NoNewPrivs line (tier_confined asked prctl)
	[ "$(grep -v NoNewPrivs <<<"$output")" = "CapEff:	0000000000000000
CapBnd:	0000000000000000
Seccomp:	2" ]
	[ "$TIER" = runsc ] || [[ $output == *"NoNewPrivs:	1"* ]]
	if [ "$TIER" != namespace ]; then
		# the OCI tier's first process is the root's /bin/sh, with the
		# config's environment and nothing of sbx's or the host's in it
		run -0 sbx-run "$ID" -- python3 -c 'print(open("/proc/1/environ").read().split("\0"))'
		[ "$output" = "['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'HOME=/root', '']" ]
		run -1 sbx-run "$ID" -- python3 -c 'open("/proc/1/mem", "rb").read(1)'
		return 0
	fi
	run -0 sbx-run "$ID" -- python3 -c '
for p in ["/proc/1/mem", "/proc/1/environ"]:
    try:
        open(p, "rb").read(1); print(p, "ESCAPED")
    except OSError as e:
        print(p, "blocked", e.errno)'
	[[ $output != *ESCAPED* ]]
}
