#!/usr/bin/env bats
# The isolation every tier gives, proven from inside the sandbox. Written once
# for every tier: tests/run runs this file once per tier named below, with
# SBX_TIER set (the namespace tier, the OCI tier under runc, crun and
# runsc, and the microVM tier); what only one tier has says so.
#   SBX_TIER=runsc make check TESTS=tests/32-tiers.bats
# tiers: namespace runc crun runsc microvm
load helpers
load netlib
load tierlib

eval "base_$(declare -f teardown)"
teardown() {
	remotes_down
	base_teardown
}

only_runc() {
	[ "$TIER" = runc ] || skip "runc's own (SBX_TIER=$TIER)"
	tier_manifest </dev/null
}

@test "tier: new PID, network, mount, user, IPC and UTS namespaces; few processes; the host's invisible" {
	not_tier microvm "a microVM is isolated by its own kernel, not namespaces (microvm: tests below)"
	tier_provision </dev/null
	# gVisor's namespaces are its own kernel's (its /proc has no ns/): the
	# host's view of its sandbox process shows the host's, but for PIDs,
	# which gVisor's kernel numbers itself (the count below)
	pid=self nss="pid net mnt user ipc uts"
	if [ "$TIER" = runsc ]; then
		pid=$(state "$ID" pid) nss="net mnt user ipc uts"
	fi
	for ns in $nss; do
		if [ "$pid" = self ]; then
			run -0 sbx-run "$ID" -- readlink "/proc/self/ns/$ns"
		else
			run -0 readlink "/proc/$pid/ns/$ns"
		fi
		[ -n "$output" ]
		[ "$output" != "$(readlink "/proc/self/ns/$ns")" ]
	done
	run -0 sbx-run "$ID" -- sh -c 'set -- /proc/[0-9]*; echo $#'
	[ "$output" -lt 10 ]
	run -0 sbx-run "$ID" -- sh -c "kill -0 $$ 2>&1; echo rc=\$?"
	[[ $output == *"rc=1"* ]]
	run -0 sbx-run "$ID" -- cat /proc/sys/kernel/hostname
	[ "$output" = "$ID" ]
}

@test "tier: no capabilities, no_new_privs, a seccomp filter, root inside is not root outside" {
	not_tier microvm "root in a microVM holds its own kernel's capabilities; the host's side is vm_confined"
	tier_provision </dev/null
	tier_confined "$ID"
	run -0 sbx-run "$ID" -- cat /proc/1/status
	[[ $output == *"CapEff:	0000000000000000"* ]]
	# the profile's EPERM for a dangerous call, from the kernel's filter
	run -1 sbx-run "$ID" -- unshare -U true
	[[ $output == *"Operation not permitted"* ]]
}

@test "tier: deny-all is only lo, and the host's loopback listener is unreachable; its own name resolves" {
	tier_provision </dev/null
	# its /etc/hosts names it, as every tier writes it
	run -0 sbx-run "$ID" -- getent hosts "$ID"
	[[ $output == "127.0.1.1"*" $ID" ]]
	host_listener
	run -0 python3 -c "import socket; print(socket.create_connection(('127.0.0.1', $PORT), 2).recv(9).decode().strip())"
	[ "$output" = "host" ]
	run -0 sbx-run "$ID" -- cat /proc/net/dev
	[ "$(grep -c ':' <<<"$output")" -eq 1 ]
	[[ $output == *"lo:"* ]]
	run -0 sbx-run "$ID" -- ip -o link
	[ "${#lines[@]}" -eq 1 ]
	[[ $output == "1: lo:"* ]]
	run -0 sbx-run "$ID" -- python3 -c "
import socket
try:
    socket.create_connection(('127.0.0.1', $PORT), 2); print('connected')
except OSError as e:
    print('refused', e.errno)"
	[ "$output" = "refused 111" ]
}

@test "tier: network_policy host (trusted, allowed by the operator): the host's loopback listener answers" {
	not_tier runsc "runsc's --network=host sandbox does not start on this host (runsc create: cannot read client sync file; google/gvisor#10295)"
	TIER_POLICY=$'max_trust: trusted\nnetwork_policies: [deny-all, host]' tier_manifest <<-'EOF'
	trust: trusted
	network_policy: host
	EOF
	# (the warning on stderr apart: the ID alone on stdout)
	run -0 --separate-stderr sbx-provision "$WORK/m.yaml"
	ID=$output
	host_listener
	# a microVM's is QEMU's user-mode network: the host's loopback is 10.0.2.2
	to=127.0.0.1
	[ "$TIER" != microvm ] || to=10.0.2.2
	run -0 sbx-run "$ID" -- python3 -c "import socket; print(socket.create_connection(('$to', $PORT), 5).recv(9).decode().strip())"
	[ "$output" = "host" ]
}

@test "tier: egress allow-list: the allowed server answers; its other port, another server and UDP are refused, counted and logged" {
	command -v ip >/dev/null || skip "iproute2 is not installed (the tests' own namespaces)"
	remote_up R
	remote_up R2
	tier_provision <<-EOF
	network_policy: egress-allow-list
	allowed_egress: ["$R:8080"]
	EOF
	# the sandbox's own veth end, as in the namespace tier (a microVM's NIC)
	run -0 sbx-run "$ID" -- python3 -c 'import socket; print(sorted(n for _, n in socket.if_nameindex()))'
	[[ $output == *"'eth0'"* ]]
	if [ "$TIER" = microvm ]; then
		# QEMU's own network namespace only bridges the guest's frames to
		# the veth: no address of its own to reach anything with
		pid=$(state "$ID" pid)
		run -0 nsenter -t "$pid" -n ip -o link show master br0
		[[ $output == *" eth0@"* ]] && [[ $output == *" tap0:"* ]]
		run -0 nsenter -t "$pid" -n ip -o addr show
		[[ $output != *" inet"* ]]
	fi
	run -0 sbx-run "$ID" -- python3 - "tcp:$R:8080" "http:$R:8080" < "$FIXTURES/egress-probe.py"
	[[ ${lines[0]} == "tcp:$R:8080 connected "* ]]
	[[ ${lines[1]} == "http:$R:8080 HTTP/1.0_200 "* ]]
	# each refused (a reset, or ICMP admin-prohibited), none connected or answered
	run -0 sbx-run --trace "$WORK/t.yaml" "$ID" -- python3 - "tcp:$R:8081" "tcp:$R2:8080" \
	    "udp:$R:9999" < "$FIXTURES/egress-probe.py"
	[[ ${lines[0]} == "tcp:$R:8081 refused-"* ]]
	[[ ${lines[1]} == "tcp:$R2:8080 refused-"* ]]
	[[ ${lines[2]} == "udp:$R:9999 refused-"* ]]
	[ "$(yaml_value egress_denied "$WORK/t.yaml")" = 3 ]
	grep -q "tcp $R2:8080 sent=0 received=0 denied=1" "$WORK/t.yaml"
	[ "$(grep -c "\"egress-denied\".*destination=tcp $R:8081 count=1" "$SBX_ROOT/audit.log")" -eq 1 ]
	# the allowed run counted its bytes
	run -0 sbx-run --trace "$WORK/ok.yaml" "$ID" -- python3 - "http:$R:8080" < "$FIXTURES/egress-probe.py"
	[ "$(yaml_value egress_received_bytes "$WORK/ok.yaml")" -gt 10 ]
	if [ "$TIER" = runsc ]; then
		# gVisor's restore would find no veth: an allow-list's snapshot
		# holds files only, and the sandbox's network stays
		run -0 sbx-snap "$ID"
		run -0 sbx-snap inspect -o yaml "$output"
		[[ $output == *"memory: false"* ]]
		run -0 sbx-run "$ID" -- python3 - "http:$R:8080" < "$FIXTURES/egress-probe.py"
		[[ $output == "http:$R:8080 HTTP/1.0_200 "* ]]
	fi
	# the network goes with the sandbox
	net=$(state "$ID" net_addr)
	net=${net%/30}
	# shellcheck disable=SC2086
	table=$(printf 'sbx_%02x%02x%02x%02x' ${net//./ })
	run -0 sbx-gc "$ID"
	run -0 net_objects
	[[ $output != *"$table"* ]]
	[ ! -e "/run/sbx/net/$net" ]
}

@test "tier: egress allow-list over IPv6: the sandbox's one address; the allowed server answers; its other port, UDP and IPv4 are refused; the kernel's own reports are not refusals" {
	command -v ip >/dev/null || skip "iproute2 is not installed (the tests' own namespaces)"
	[ -e /proc/sys/net/ipv6 ] || skip "this kernel has no IPv6"
	remote_up R R6
	tier_provision <<-EOF
	network_policy: egress-allow-list
	allowed_egress: ["[$R6]:8080"]
	EOF
	# eth0 has the sandbox's address of the /96 and no link-local one
	# (gVisor's netstack keeps no /proc/net/if_inet6)
	if [ "$TIER" != runsc ]; then
		run -0 sbx-run "$ID" -- cat /proc/net/if_inet6
		[[ $output == *"fd87005b"*" eth0"* ]]
		[[ $output != *"fe80"* ]]
	fi
	# The kernel reports its multicast groups when the address is added and
	# again within a second (MLD): runs across that second refuse nothing.
	local nth
	for nth in 1 2 3 4; do
		run -0 sbx-run --trace "$WORK/t$nth.yaml" "$ID" -- sleep 0.3
		[ "$(yaml_value egress_denied "$WORK/t$nth.yaml")" = 0 ]
	done
	run -0 sbx-run --trace "$WORK/t.yaml" "$ID" -- python3 - "http:[$R6]:8080" \
	    "tcp:[$R6]:8081" "udp:[$R6]:9999" "tcp:$R:8080" < "$FIXTURES/egress-probe.py"
	[[ ${lines[0]} == "http:[$R6]:8080 HTTP/1.0_200 "* ]]
	[[ ${lines[1]} == "tcp:[$R6]:8081 refused-"* ]]
	[[ ${lines[2]} == "udp:[$R6]:9999 refused-"* ]]
	[[ ${lines[3]} == "tcp:$R:8080 refused-"* ]]
	[ "$(yaml_value egress_denied "$WORK/t.yaml")" = 3 ]
	grep -q "tcp \[$R6\]:8080 sent=[1-9][0-9]* received=[1-9][0-9]* denied=0" "$WORK/t.yaml"
	grep -q "destination=udp \[$R6\]:9999 count=1" "$SBX_ROOT/audit.log"
	run -0 sbx-gc "$ID"
	absent "ff02:" "$SBX_ROOT/audit.log" "$WORK"/t*.yaml
}

@test "tier: egress allow-list: the watchdog resolves host names again and moves the pin: rules, the sandbox's /etc/hosts, the relay" {
	command -v ip >/dev/null || skip "iproute2 is not installed (the tests' own namespaces)"
	remote_up R
	remote_up R2
	printf '127.0.0.1 localhost\n%s api.sbx-test\n' "$R" > "$WORK/hosts"
	tier_manifest <<-EOF
	network_policy: egress-allow-list
	allowed_egress: ["api.sbx-test:8080"]
	egress_refresh_s: 1
	EOF
	# the name resolves where sbx-provision and its watchdog do
	run -0 unshare -m sh -c "mount --bind '$WORK/hosts' /etc/hosts && sbx-provision '$WORK/m.yaml'"
	ID=$output
	run -0 sbx-run "$ID" -- python3 - "http:api.sbx-test:8080" < "$FIXTURES/egress-probe.py"
	[[ $output == "http:api.sbx-test:8080 HTTP/1.0_200 "* ]]
	# the name moves (the file is rewritten in place: the bind mount keeps its inode)
	printf '127.0.0.1 localhost\n%s api.sbx-test\n' "$R2" > "$WORK/hosts"
	for _ in $(seq 100); do
		[[ $(sbx-inspect "$ID") == *"api.sbx-test $R2"* ]] && break
		sleep 0.1
	done
	[[ $(sbx-inspect "$ID") == *"api.sbx-test $R2"* ]]
	run -0 sbx-run "$ID" -- cat /etc/hosts
	[[ $output == *"$R2	api.sbx-test"* ]]
	[[ $output != *"$R	api.sbx-test"* ]]
	run -0 sbx-run "$ID" -- python3 - "http:api.sbx-test:8080" < "$FIXTURES/egress-probe.py"
	[[ $output == "http:api.sbx-test:8080 HTTP/1.0_200 "* ]]
	# the old address is no longer allowed, even under the right name
	run -0 sbx-run "$ID" -- python3 - "tcp:$R:8080" < "$FIXTURES/egress-probe.py"
	[[ $output == "tcp:$R:8080 refused-"* ]]
	grep -q "\"egress-pins\".*pinned api.sbx-test $R2" "$SBX_ROOT/audit.log"
	run -0 sbx-gc "$ID"
}

@test "tier: the root is read-only (a write fails), /tmp is scratch, the host's /usr cannot be written" {
	tier_provision </dev/null
	run -2 sbx-run "$ID" -- sh -c 'echo x > /etc/evil'
	[[ $output == *"Read-only file system"* ]]
	run -1 sbx-run "$ID" -- touch /usr/bin/evil
	[ ! -e /usr/bin/evil ]
	run -0 sbx-run "$ID" -- sh -c 'echo scratch > /tmp/f && cat /tmp/f'
	[ "$output" = "scratch" ]
}

@test "tier: filesystem_mounts: a rw workspace is its owner's, idmap: false writes as the sandbox's host ID, ro refuses writes" {
	not_tier microvm "isolation_level microvm shares no host directory yet (69, below)"
	mkdir "$WORK/ws" "$WORK/open" "$WORK/ro"
	chmod 755 "$WORK" "$WORK/ws"
	chmod 777 "$WORK/open" "$WORK/ro"
	echo hi > "$WORK/ro/f"
	TIER_POLICY="mounts: [{path: $WORK, mode: rw}]" tier_provision <<-EOF
	filesystem_mounts:
	  - {host: $WORK/ws, guest: /workspace, mode: rw}
	  - {host: $WORK/open, guest: /srv/open, mode: rw, idmap: false}
	  - {host: $WORK/ro, guest: /data, mode: ro}
	EOF
	run -0 sbx-run "$ID" -- sh -c 'echo a > /workspace/a && echo b > /srv/open/b && cat /data/f'
	[ "$output" = hi ]
	# the workspace's owner (the operator) owns what root inside made; the
	# unmapped directory got the sandbox's own host ID
	[ "$(stat -c %u:%g "$WORK/ws/a")" = "$(id -u):$(id -g)" ]
	[ "$(stat -c %u "$WORK/open/b")" = "$(state "$ID" uid_base)" ]
	# only the manifest's user is mapped: another user inside cannot write there
	run -1 sbx-run -u 1000:1000 "$ID" -- touch /workspace/u
	[ ! -e "$WORK/ws/u" ]
	run -1 sbx-run "$ID" -- touch /data/x
	[[ $output == *"Read-only file system"* ]]
	[ ! -e "$WORK/ro/x" ]
	# the mount points were made in the sandbox's root, not on the host
	[ ! -e /srv/open ]
}

@test "tier: the capability the manifest names is root's only one; disk_mb bounds a writable root" {
	not_tier microvm "a microVM's capabilities are its own kernel's (disk_mb: microvm test below)"
	tier_provision "capabilities: [cap_net_bind_service]" <<-'EOF'
	read_only_root: false
	resource_allocation:
	  disk_mb: 16
	EOF
	run -0 sbx-run "$ID" -- grep CapEff /proc/self/status
	[ "$output" = "CapEff:	0000000000000400" ]
	run -0 sbx-run "$ID" -- sh -c 'echo kept > /etc/new && cat /etc/new'
	[ "$output" = kept ]
	# the writable layer's files are the sandbox's IDs on the host, never root's
	[ "$(stat -c %u "$SBX_ROOT/sandboxes/$ID/layer/upper/etc/new")" = "$(state "$ID" uid_base)" ]
	run -1 sbx-run "$ID" -- dd if=/dev/zero of=/big bs=1M count=32
	[[ $output == *"No space left on device"* ]]
}

@test "tier: a snapshot of the writable layer keeps a new file and a deletion (restored in the namespace tier)" {
	not_tier microvm "isolation_level microvm captures no file layer yet"
	tier_provision <<-'EOF'
	read_only_root: false
	resource_allocation:
	  disk_mb: 16
	EOF
	run -0 sbx-run "$ID" -- sh -c 'echo kept > /root/f && rm /etc/hostname'
	run -0 sbx-snap "$ID"
	snap=$output
	# the sandbox goes on running after its snapshot
	run -0 sbx-run "$ID" -- cat /root/f
	printf 'rootfs: %s\nread_only_root: false\nresource_allocation: {disk_mb: 16}\n' "$snap" > "$WORK/from.yaml"
	provision "$WORK/from.yaml"
	run -0 sbx-run "$ID" -- cat /root/f
	[ "$output" = kept ]
	run -1 sbx-run "$ID" -- test -e /etc/hostname
}

@test "tier: sbx-run -t gives the command a terminal of the sandbox's own, its exit status, and no TIOCSTI" {
	tier_provision </dev/null
	tier_confined "$ID"
	if [ "$TIER" = runsc ]; then
		# gVisor's exec makes no terminal from its flags: sbx-run's own
		# failure (125, SPEC 8), before anything runs
		run -125 script -qec "sbx-run -t $ID -- true" /dev/null
		[[ $output == *"sbx-run -t: runtime runsc gives a run no terminal"* ]]
		return
	fi
	# script(1) gives sbx-run a terminal of the test's own on stdin
	run -0 script -qec "sbx-run -t $ID -- python3 -c \"
import fcntl, os, sys, termios, errno
print('tty', os.isatty(0), os.isatty(1), os.ttyname(0).startswith('/dev/pts/'))
try:
    fcntl.ioctl(0, termios.TIOCSTI, b'x'); print('injected')
except OSError as e:
    print('refused', errno.errorcode[e.errno])\"" /dev/null
	[[ $output == *"tty True True True"* ]]
	# a microVM's kernel is its own (6.1 lets a terminal's owner use
	# TIOCSTI): what it pushes goes to the guest's terminal, never the host's
	[ "$TIER" = microvm ] || [[ $output == *"refused EPERM"* ]]
	run -3 script -qec "sbx-run -t $ID -- sh -c 'exit 3'" /dev/null
	# the terminal is the sandbox's: nothing of it is left on the host
	[ -z "$(find /run/sbx-oci/*/"$ID" -name 'tty-*' 2>/dev/null)" ]
}

@test "tier: exit codes pass through (status, signal, not found, not executable)" {
	tier_provision </dev/null
	run -7 sbx-run "$ID" -- sh -c 'exit 7'
	run -137 sbx-run "$ID" -- sh -c 'kill -9 $$'
	run -127 sbx-run "$ID" -- no-such-command
	run -126 sbx-run "$ID" -- /etc
	run -0 sbx-run -u 1000:1000 -w /tmp -e GREETING=hi "$ID" -- sh -c 'id -u; pwd; echo $GREETING'
	[ "${lines[0]}" = 1000 ]
	[ "${lines[1]}" = /tmp ]
	[ "${lines[2]}" = hi ]
}

@test "tier: the memory limit's OOM kill is 137, with oom_killed and kill_reason in the trace" {
	tier_provision <<-'EOF'
	resource_allocation:
	  memory_mb: 64
	EOF
	run -137 sbx-run --trace "$WORK/trace.yaml" "$ID" -- python3 -c '
b = bytearray(256 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1'
	grep -q '^  oom_killed: true' "$WORK/trace.yaml"
	[ "$(yaml_value kill_reason "$WORK/trace.yaml")" = memory ]
	if [ "$TIER" = runsc ]; then
		# gVisor's sandbox is one process to the host's kernel, which
		# kills it whole at the limit (sbx-manifest(5))
		run -0 sbx-inspect "$ID"
		[[ $output == *'status: "terminated"'* ]]
		return
	fi
	# the sandbox lives on for the next run
	run -0 sbx-run "$ID" -- true
}

@test "tier: a bounded fork bomb hits the pids limit, counted in the trace; the host is unaffected" {
	tier_provision <<-'EOF'
	resource_allocation: {pids: 32, memory_mb: 256}
	EOF
	tier_confined "$ID"
	run sbx-run --timeout 30 --trace "$WORK/t.yaml" "$ID" -- sh -c 'i=0; while [ $i -lt 200 ]; do sleep 3 & i=$((i+1)); done 2>&1; wait'
	bomb=$output
	[ "$(yaml_value pids_limit_hits "$WORK/t.yaml")" -gt 0 ]
	run -0 sh -c 'for i in 1 2 3 4 5 6 7 8; do true & done; wait; echo host-ok'
	if [ "$TIER" = runsc ]; then
		# gVisor does not survive a refused thread (its issue 2490): the
		# limit ends the sandbox, as the memory limit does (sbx-manifest(5))
		[ "$(yaml_value exit_code "$WORK/t.yaml")" = 137 ]
		[ "$(yaml_value kill_reason "$WORK/t.yaml")" = pids ]
		run -0 sbx-inspect "$ID"
		[[ $output == *'status: "terminated"'* ]]
		return
	fi
	[[ $bomb == *"Cannot fork"* ]]
	run -0 sbx-run "$ID" -- echo usable
}

@test "tier: --timeout ends the command (124) and nothing of it is left in the sandbox" {
	tier_provision </dev/null
	run -124 sbx-run -T 1 "$ID" -- sleep 1000
	run -0 sbx-run "$ID" -- ps -eo args
	[[ $output != *"sleep 1000"* ]]
}

@test "tier: pause freezes the sandbox and resume thaws it" {
	tier_provision </dev/null
	run -0 sbx-pause "$ID"
	[ "$(state "$ID" status)" = paused ]
	run -0 sbx-pause -r "$ID"
	[ "$(state "$ID" status)" = ready ]
	run -0 sbx-run "$ID" -- true
}

@test "tier: sbx-gc removes the container, its mounts, cgroups and root's mount point" {
	tier_provision <<-'EOF'
	resource_allocation:
	  memory_mb: 64
	EOF
	run -0 sbx-run "$ID" -- true
	pid=$(state "$ID" pid)
	[ "$TIER" != microvm ] || group=$(dirname "$(state "$ID" dir)")
	# the state root's cgroup group (sbx/GROUP/ID in each hierarchy)
	cg=$(cg_dirs "$(state "$ID" cgroup)" | head -n 1)
	cggroup=$(basename "$(dirname "$cg")")
	run -0 sbx-gc "$ID"
	gone "$pid" || { ps -o pid,ppid,stat,cmd -p "$pid"; false; }
	run -1 grep -qF "$ID" /proc/self/mountinfo
	run -0 find /sys/fs/cgroup -maxdepth 6 -type d -name "$ID"
	[ -z "$output" ]
	# with its last sandbox, the group goes from every hierarchy (a
	# hybrid host's unified one too, where runc makes its cgroups), by
	# the sweep at the latest (its watchdog and runner leave it just after,
	# and an exited one holds it until reaped)
	for _ in $(seq 50); do
		sbx-gc >/dev/null
		[ -z "$(find /sys/fs/cgroup -maxdepth 6 -type d -name "$cggroup")" ] && break
		sleep 0.1
	done
	run -0 find /sys/fs/cgroup -maxdepth 6 -type d -name "$cggroup"
	[ -z "$output" ]
	if [ "$TIER" = runc ]; then
		run -0 runc --root "$SBX_ROOT/oci/runc" list -q
		[ -z "$output" ]
		run -0 find /run/sbx-oci -name "$ID"
		[ -z "$output" ]
	fi
	if [ "$TIER" = microvm ]; then
		run -0 find /run/sbx-vm -name "$ID"
		[ -z "$output" ]
		[ ! -e "$SBX_ROOT/sandboxes/$ID" ]
		# the state root's directory of VMs goes with its last one
		[ ! -e "$group" ]
	fi
}

@test "tier: a one-shot's result comes once nothing of its sandbox runs; its teardown then leaves nothing" {
	tier_manifest </dev/null
	run -0 sbx-run -m "$WORK/m.yaml" -- sh -c 'sleep 86397 > /dev/null 2>&1 & echo one-shot'
	[ "$output" = one-shot ]
	id=$(grep -o '"sandbox":"[^"]*","event":"provision"' "$SBX_ROOT/audit.log" | cut -d'"' -f4)
	[[ $id == sbx-* ]]
	# what the command left running (a host process here), and a VMM, are gone already
	run -1 pgrep -f "sleep 86397|/run/sbx-vm/.*/$id/"
	settled
	run -0 find /sys/fs/cgroup -maxdepth 6 -type d -name "$id"
	[ -z "$output" ]
	run -1 grep -qF "$id" /proc/self/mountinfo
	[ -z "$(find /run/sbx-vm /dev/shm/sbx-vm /run/sbx-oci -name "$id*" 2>/dev/null)" ]
	grep -q "\"sandbox\":\"$id\",\"event\":\"destroy\",\"correlation_id\":\"[^\"]*\",\"outcome\":\"ok\"" \
	    "$SBX_ROOT/audit.log"
}

@test "tier: a warm pool's member is claimed by sbx-provision and by sbx-run -m: ready at once, its own ID and hostname" {
	TIER_POLICY=$'pools:\n  - {name: t, manifest: '"$WORK/m.yaml"', size: 1}' tier_manifest </dev/null
	run -0 sbx-provision --fill-pools
	member=${output#t }
	[ "$(state "$member" status)" = pooled ]
	provision "$WORK/m.yaml"
	[ "$ID" = "$member" ]
	[ "$(state "$ID" status)" = ready ]
	run -0 sbx-run "$ID" -- hostname
	[ "$output" = "$ID" ]
	if [ "$TIER" = microvm ]; then
		# the member ran sbx's own command once (its VMM warmed); its
		# runs count from the first, as a fresh VM's
		run -0 sbx-run "$ID" -- sh -c 'read -r l < /proc/self/cgroup; echo "$l"'
		[ "$output" = "0::/sbx/run-1" ]
	fi
	run -0 sbx-provision --fill-pools
	member=${output#t }
	run -0 sbx-run -m "$WORK/m.yaml" -- hostname
	[ "$output" = "$member" ]
	for _ in $(seq 100); do [ -e "$SBX_ROOT/sandboxes/$member" ] || break; sleep 0.1; done
	[ ! -e "$SBX_ROOT/sandboxes/$member" ]
	# idle members of 512 MiB: no memory warning (a VM's watchdog gave one at
	# once, reading its VMM's cgroup, and its note held the lock a claim needs)
	run -1 grep '"event":"memory-warning"' "$SBX_ROOT/audit.log"
}

@test "runc: the bundle's config.json says what the manifest asked, and runc's state is the state root's own" {
	only_runc
	cat >> "$WORK/m.yaml" <<-'EOF'
	resource_allocation: {memory_mb: 96, cpu_cores: 0.5, pids: 32}
	env: {QUOTE: "a\"b,c"}
	EOF
	provision "$WORK/m.yaml"
	cfg="$SBX_ROOT/sandboxes/$ID/bundle/config.json"
	run -0 python3 - "$cfg" "$(state "$ID" uid_base)" <<-'EOF'
	import json, sys
	c = json.load(open(sys.argv[1]))
	lx = c["linux"]
	assert lx["uidMappings"] == [{"containerID": 0, "hostID": int(sys.argv[2]), "size": 65536}], lx["uidMappings"]
	assert {n["type"] for n in lx["namespaces"]} == {"pid", "mount", "ipc", "uts", "user", "cgroup", "network"}
	assert lx["resources"]["memory"]["limit"] == 96 << 20
	assert lx["resources"]["cpu"]["quota"] == 50000 and lx["resources"]["cpu"]["period"] == 100000
	assert lx["resources"]["pids"]["limit"] == 32
	assert lx["seccomp"]["defaultAction"] == "SCMP_ACT_ERRNO" and lx["seccomp"]["defaultErrnoRet"] == 38
	assert "/proc/kcore" in lx["maskedPaths"]
	assert c["root"]["readonly"] is True
	assert c["process"]["noNewPrivileges"] is True
	assert all(v == [] for v in c["process"]["capabilities"].values())
	print("ok")
	EOF
	[ "$output" = ok ]
	run -0 runc --root "$SBX_ROOT/oci/runc" list -q
	[ "$output" = "$ID" ]
	run -0 sbx-run "$ID" -- sh -c 'printf %s "$QUOTE"'
	[ "$output" = 'a"b,c' ]
}

@test "runc: a runtime that is missing, not what it is named, or anyone's to write; one sbx does not drive: 69, nothing made" {
	only_runc
	for rt in /nonexistent/runc /bin/true kata-runtime; do
		sed "s|^runtime: .*|runtime: $rt|" "$WORK/m.yaml" > "$WORK/rt.yaml"
		run -69 sbx-provision "$WORK/rt.yaml"
		[[ $output == *"runtime $rt"* ]]
	done
	cp /usr/sbin/runc "$WORK/runc" && chmod 775 "$WORK/runc"
	sed "s|^runtime: .*|runtime: $WORK/runc|" "$WORK/m.yaml" > "$WORK/rt.yaml"
	run -69 sbx-provision "$WORK/rt.yaml"
	[[ $output == *"only its owner may write"* ]]
	run -0 sbx-ls -q
	[ -z "$output" ]
	[ ! -d "$SBX_ROOT/oci" ] || [ -z "$(runc --root "$SBX_ROOT/oci/runc" list -q)" ]
}

@test "runc: keys this tier cannot honour yet are 69 naming the key, nothing made" {
	only_runc
	base=$(cat "$WORK/m.yaml")
	printf '%s\n' "$base" | sed 's/landlock: false/landlock: true/' > "$WORK/k.yaml"
	run -69 sbx-provision "$WORK/k.yaml"
	[[ $output == *"security.landlock"* ]]
	run -0 sbx-ls -q
	[ -z "$output" ]
}

only_runsc() {
	[ "$TIER" = runsc ] || skip "gVisor's own (SBX_TIER=$TIER)"
}

@test "runsc: the kernel inside is gVisor's, which answers what the host's would; the state names the platform" {
	only_runsc
	tier_manifest "seccomp: unconfined" <<<'trust: trusted'
	# without a filter of its own, which would refuse syslog(2) anyway
	policy <<-'EOF'
	max_trust: trusted
	allow:
	  landlock_off: true
	  seccomp_unconfined: true
	EOF
	provision "$WORK/m.yaml"
	run -0 sbx-run "$ID" -- uname -r
	[ "$output" != "$(uname -r)" ]
	# syslog(2): the host's kernel log would be refused to the sandbox's
	# root; gVisor's kernel answers with its own
	run -0 sbx-run "$ID" -- dmesg
	[[ $output == *"Starting gVisor"* ]]
	run -0 sbx-run "$ID" -- unshare -U cat /proc/self/uid_map
	# the platform the state names is the one the sandbox runs on: kvm
	# holds a VM's descriptor (where KVM is the hardware kind: a
	# paravirtual one, which gVisor's kvm platform hangs in, is ptrace)
	platform=ptrace
	for p in $(pgrep -f "runsc-sandbox.*$ID"); do
		for fd in "/proc/$p/fd"/*; do
			[ "$(readlink "$fd")" != anon_inode:kvm-vm ] || platform=kvm
		done
	done
	[ "$(state "$ID" platform)" = "$platform" ]
}

# A process whose token and count are in its memory alone, writing them to
# /tmp for the tests to read: Python on the host's root under runsc (gVisor's
# memory holds /tmp too), a shell of busybox's in a microVM.
COUNTER='import os, time
tok = os.urandom(8).hex()
i = 0
while True:
    i += 1
    with open("/tmp/state.new", "w") as f:
        f.write("%s %d\n" % (tok, i))
    os.rename("/tmp/state.new", "/tmp/state")
    time.sleep(0.02)'
SH_COUNTER='tok=$(head -c8 /dev/urandom | od -An -tx1 | tr -d " \n"); i=0
while :; do i=$((i+1)); echo "$tok $i" > /tmp/state.new; mv /tmp/state.new /tmp/state; sleep 0.02; done'

only_memory() {
	[ "$TIER" = runsc ] || [ "$TIER" = microvm ] ||
		skip "memory snapshots are runsc's and the microVM's (SBX_TIER=$TIER)"
}

# A root directory for a microVM that keeps memory snapshots (a root of its
# own, copied to a disk: the host's root over 9p cannot be migrated):
# busybox from the guest kit's initramfs, and the few files a shell wants.
vm_root() {
	local c
	mkdir -p "$1/bin" "$1/etc" "$1/tmp" "$1/root"
	chmod 1777 "$1/tmp"
	(cd "$1" && cpio --quiet -id bin/busybox < "$SBX_GUEST_KIT/initrd")
	for c in sh sleep head od tr cat mv echo test ls hostname rm kill ps date; do
		ln -s busybox "$1/bin/$c"
	done
	echo 'root:x:0:0:root:/root:/bin/sh' > "$1/etc/passwd"
}

# A sandbox whose memory can be snapshotted, its ID in ID.
memory_provision() {
	if [ "$TIER" != microvm ]; then
		tier_provision </dev/null
		return
	fi
	[ -e "$WORK/root/bin/busybox" ] || vm_root "$WORK/root"
	TIER_POLICY="rootfs: [\"$WORK\"]" tier_provision <<-EOF
	rootfs: $WORK/root
	read_only_root: false
	resource_allocation: {memory_mb: 64}
	EOF
}

start_counter() {
	local tries=200
	if [ "$TIER" = microvm ]; then
		# a background run: the agent ends a run's processes with it
		run -0 sbx-run -d "$1" -- sh -c "$SH_COUNTER"
	else
		run -0 sbx-run -e "COUNTER=$COUNTER" "$1" -- sh -c \
			'setsid python3 -c "$COUNTER" </dev/null >/dev/null 2>&1 &'
	fi
	while [ $((tries -= 1)) -gt 0 ]; do
		run sbx-run "$1" -- cat /tmp/state
		[ "$status" -ne 0 ] || return 0
	done
	return 1
}

@test "runsc, microvm: a running process's memory is snapshotted; 3 forks go on with its token from its count, and diverge; the parent goes on" {
	only_memory
	memory_provision
	parent=$ID
	if [ "$TIER" = microvm ]; then
		run -0 sbx-run "$parent" -- sh -c 'echo parent > /root/pfile'
	fi
	start_counter "$parent"
	read -r token before <<<"$output"
	run -0 sbx-snap "$parent"
	snap=$output
	run -0 sbx-snap inspect -o yaml "$snap"
	[[ $output == *"memory: true"* ]]
	if [ "$TIER" = microvm ]; then
		[[ $output == *'tier: "microvm/microvm"'* ]]
	else
		[[ $output == *'tier: "oci/runsc"'* ]]
	fi
	run -0 sbx-fork -n 3 "$snap"
	kids=$output
	[ "$(wc -l <<<"$kids")" -eq 3 ]
	for kid in $kids; do
		run -0 sbx-run "$kid" -- cat /tmp/state
		read -r t count <<<"$output"
		[ "$t" = "$token" ]
		[ "$count" -ge "$before" ]
		run -0 sbx-run "$kid" -- sh -c "echo $kid > /tmp/mark"
	done
	for kid in $kids; do
		run -0 sbx-run "$kid" -- cat /tmp/mark
		[ "$output" = "$kid" ]
		if [ "$TIER" = microvm ]; then
			# the count goes on in each, which is a VM of its own: its
			# hostname, and random numbers apart from its siblings'
			run -0 sbx-run "$kid" -- hostname
			[ "$output" = "$kid" ]
			run -0 sbx-run "$kid" -- sh -c 'head -c16 /dev/urandom | od -An -tx1 | tr -d " \n"'
			echo "$output" >> "$WORK/random"
			run -0 sbx-run "$kid" -- cat /tmp/state
			read -r t next <<<"$output"
			[ "$t" = "$token" ]
			[ "$next" -gt "$before" ]
		fi
	done
	[ "$TIER" != microvm ] || [ "$(sort -u "$WORK/random" | wc -l)" -eq 3 ]
	run -1 sbx-run "$parent" -- test -e /tmp/mark
	run -0 sbx-run "$parent" -- cat /tmp/state
	read -r t count <<<"$output"
	[ "$t" = "$token" ]
	[ "$count" -gt "$before" ]
	run -0 sbx-snap --no-memory "$parent"
	run -0 sbx-snap inspect -o yaml "$output"
	[[ $output == *"memory: false"* ]]
	if [ "$TIER" = microvm ]; then
		# a clone's files snapshot is its whole layer (its disk came with
		# the parent's files): a deletion of one of them holds, restored
		# in the namespace tier
		kid=$(head -1 <<<"$kids")
		run -0 sbx-run "$kid" -- rm /root/pfile
		run -0 sbx-run "$kid" -- sh -c 'echo kid > /root/kfile'
		run -0 sbx-snap --no-memory "$kid"
		ksnap=$output
		run -0 sbx-snap inspect -o yaml "$ksnap"
		[[ $output == *"parent: \"$snap\""* ]]
		printf 'isolation_level: namespace\nrootfs: %s\nread_only_root: false\n' "$ksnap" \
			> "$WORK/ns.yaml"
		run -0 sbx-provision "$WORK/ns.yaml"
		nsid=$output
		run -0 sbx-run "$nsid" -- cat /root/kfile
		[ "$output" = kid ]
		run -1 sbx-run "$nsid" -- test -e /root/pfile
		run -0 sbx-gc "$nsid"
		# gc takes the VMs with their RAM and disks
		mapfile -t all <<<"$kids"
		all+=("$parent")
		run -0 sbx-gc "${all[@]}"
		for kid in "${all[@]}"; do
			[ -z "$(find /run/sbx-vm /dev/shm/sbx-vm -name "$kid*" 2>/dev/null)" ]
			[ ! -e "$SBX_ROOT/sandboxes/$kid" ]
		done
	fi
}

@test "runsc, microvm: a damaged memory checkpoint is 65 and makes nothing" {
	only_memory
	memory_provision
	start_counter "$ID"
	run -0 sbx-snap "$ID"
	snap=$output
	hex=$(sbx-snap inspect -o yaml "$snap" | sed -n '/^checkpoint:/,/^[a-z]/s/.*digest: "sha256:\([0-9a-f]*\)".*/\1/p')
	[ -n "$hex" ]
	blob="$SBX_ROOT/layers/$hex.tar.zst"
	[ -f "$blob" ]
	printf 'damage' | dd of="$blob" bs=1 seek=100 conv=notrunc 2>/dev/null
	run -0 sbx-ls -q
	before=$output
	run -65 sbx-fork -n 1 "$snap"
	[[ $output == *checkpoint* ]]
	run -0 sbx-ls -q
	[ "$output" = "$before" ]
	[ "$TIER" = microvm ] || return 0
	# a checkpoint that passed its digest but names a host file through a
	# link (one pulled from elsewhere may): the VM is never given it
	run -0 sbx-snap "$ID"
	snap=$output
	run -0 sbx-fork -n 1 "$snap"
	run -0 sbx-gc "$output"
	hex=$(sbx-snap inspect -o yaml "$snap" | sed -n '/^checkpoint:/,/^[a-z]/s/.*digest: "sha256:\([0-9a-f]*\)".*/\1/p')
	for f in base.img ram; do
		cp -a "$SBX_ROOT/cache/$hex/$f" "$WORK/$f.saved"
		ln -sf /etc/hostname "$SBX_ROOT/cache/$hex/$f"
		run -65 sbx-fork -n 1 "$snap"
		[[ $output == *"$f"* ]]
		run -0 sbx-ls -q
		[ "$output" = "$before" ]
		rm "$SBX_ROOT/cache/$hex/$f"
		mv "$WORK/$f.saved" "$SBX_ROOT/cache/$hex/$f"
	done
}

only_microvm() {
	[ "$TIER" = microvm ] || skip "the microVM tier's own (SBX_TIER=$TIER)"
}

@test "microvm: the guest's own kernel and devices, no host process; the VMM unprivileged; the state says the acceleration" {
	only_microvm
	tier_provision </dev/null
	tier_confined "$ID"
	# its block devices are its own disk alone (disk_mb's default, 1 GiB)
	run -0 sbx-run "$ID" -- sh -c 'ls /sys/block; cat /sys/block/vda/size'
	[ "${lines[0]}" = vda ]
	[ "${lines[1]}" = $((1024 * 2048)) ]
	run -0 sbx-run "$ID" -- sh -c 'ls /dev/kvm /dev/vhost-vsock /dev/mem 2>&1; echo done'
	[[ $output != *"/dev/kvm"$'\n'* ]]
	# PID 1 is the agent; the host's processes are not there to signal
	run -0 sbx-run "$ID" -- cat /proc/1/comm
	[ "$output" = sbx-agent ]
	run -0 sbx-run "$ID" -- sh -c "kill -0 $$ 2>&1; echo rc=\$?"
	[[ $output == *"rc=1"* ]]
	run -0 sbx-run "$ID" -- hostname
	[ "$output" = "$ID" ]
	# the acceleration the state names is the one the VMM uses: under
	# KVM it holds a VM's descriptor, under TCG none
	vmm=$(state "$ID" pid)
	accel=tcg
	for fd in "/proc/$vmm/fd"/*; do
		[ "$(readlink "$fd")" != anon_inode:kvm-vm ] || accel=kvm
	done
	[ "$(state "$ID" acceleration)" = "$accel" ]
}

@test "microvm: a descriptor the caller left open (a root-only file) does not reach the VMM" {
	only_microvm
	local fd
	tier_manifest </dev/null
	provision "$WORK/m.yaml" 7</etc/shadow
	pid=$(state "$ID" pid)
	[ -d "/proc/$pid/fd" ]
	for fd in "/proc/$pid/fd"/*; do
		[ "$(readlink "$fd")" != /etc/shadow ]
	done
}

@test "microvm: stdin, stdout and stderr apart; a signal from the caller; the terminal's size and a resize" {
	only_microvm
	tier_provision </dev/null
	run -0 sh -c "printf 'in\nput\n' | sbx-run $ID -- sh -c 'cat; echo to-err >&2' 2>$WORK/err"
	[ "$output" = $'in\nput' ]
	[ "$(cat "$WORK/err")" = to-err ]
	# SIGTERM to sbx-run reaches the command in the guest, which dies of it
	sbx-run "$ID" -- sleep 1000 &
	run_pid=$!
	TEST_PIDS+=("$run_pid")
	until sbx-run "$ID" -- pgrep -x sleep >/dev/null; do sleep 0.2; done
	kill -TERM "$run_pid"
	rc=0
	wait "$run_pid" || rc=$?
	[ "$rc" = 143 ]
	run -1 sbx-run "$ID" -- pgrep -x sleep
	run -0 script -qec "stty rows 33 cols 111; sbx-run -t $ID -- stty size" /dev/null
	[[ $output == *"33 111"* ]]
}

@test "microvm: disk_mb is the writable layer's disk: writes past it fail, files stay between runs" {
	only_microvm
	tier_provision <<-'EOF'
	read_only_root: false
	resource_allocation:
	  disk_mb: 64
	EOF
	run -0 sbx-run "$ID" -- sh -c 'echo kept > /etc/new'
	run -0 sbx-run "$ID" -- cat /etc/new
	[ "$output" = kept ]
	run -1 sbx-run "$ID" -- dd if=/dev/zero of=/big bs=1M count=100
	[[ $output == *"No space left on device"* ]]
	# the host's files are not the guest's to change
	[ ! -e /etc/new ]
	[ "$(stat -c %s "$SBX_ROOT/sandboxes/$ID/disk.img")" = $((64 << 20)) ]
}

@test "microvm: the watchdog kills the VMM at the deadline (wall-clock); a killed VMM is swept" {
	only_microvm
	tier_provision <<<'resource_allocation: {max_wall_clock_s: 20}'
	pid=$(state "$ID" pid)
	sbx-run "$ID" -- sleep 1000 > /dev/null 2>&1 &
	TEST_PIDS+=($!)
	run -0 wait_gone "$pid" 120
	run -0 sbx-inspect "$ID"
	[[ $output == *'status: "terminated"'* ]]
	[[ $output == *'kill_reason: "wall-clock"'* ]]
	due=$(ms_of "$(state "$ID" expires_at)")
	killed=$(ms_of "$(state "$ID" killed_at)")
	[ "$killed" -ge "$due" ] && [ $((killed - due)) -lt 500 ]
	run -0 sbx-gc "$ID"
	[ -z "$(find /run/sbx-vm -name "$ID")" ]
	# a VMM killed from outside: its sandbox is dead, and gc removes it all
	tier_provision </dev/null
	pid=$(state "$ID" pid)
	kill -KILL "$pid"
	run -0 wait_gone "$pid" 10
	run -125 sbx-run "$ID" -- true
	[[ $output == *"VM is gone"* ]]
	run -0 sbx-gc
	[ ! -e "$SBX_ROOT/sandboxes/$ID" ]
	[ -z "$(find /run/sbx-vm -name "$ID")" ]
	run -0 find /sys/fs/cgroup -maxdepth 6 -type d -name "$ID"
	[ -z "$output" ]
}

@test "microvm: snapshot-boot: the next VM of a root starts from the first one's boot snapshot, a VM of its own (its random numbers too); a changed root boots anew; old ones are swept" {
	only_microvm
	memory_provision
	first=$ID
	[ -z "$(state "$first" started_from)" ]
	boots=("$SBX_ROOT"/vm/boot-*)
	[ "${#boots[@]}" -eq 1 ] && [ -f "${boots[0]}/vm.conf" ]
	run -0 sbx-run "$first" -- sh -c 'echo first > /root/f'
	memory_provision
	second=$ID
	[ "$(state "$second" started_from)" = "boot snapshot" ]
	# its first random numbers (as the next one's below) its own: the
	# guest's generator was reseeded, not left with the image's key
	run -0 sbx-run "$second" -- sh -c 'head -c16 /dev/urandom | od -An -tx1 | tr -d " \n"'
	[ ${#output} -eq 32 ]
	drawn=$output
	# QEMU reads in a kernel and an initramfs to boot, not to restore
	run -0 grep -qxz -- -kernel "/proc/$(state "$first" pid)/cmdline"
	run -1 grep -qxz -- -kernel "/proc/$(state "$second" pid)/cmdline"
	# its own disk, hostname, limits and clock
	run -1 sbx-run "$second" -- test -e /root/f
	run -0 sbx-run "$second" -- hostname
	[ "$output" = "$second" ]
	run -0 sbx-run "$second" -- cat /sys/fs/cgroup/sbx/memory.max
	[ "$output" = $((64 << 20)) ]
	run -0 sbx-run "$second" -- date +%s
	[ $(($(date +%s) - output)) -lt 60 ] && [ $((output - $(date +%s))) -lt 60 ]
	# the boot set the first VM's limits; one the boot snapshot does not
	# have (pids are not in its key) is written at the setup
	TIER_POLICY="rootfs: [\"$WORK\"]" tier_provision <<-EOF
	rootfs: $WORK/root
	read_only_root: false
	resource_allocation: {memory_mb: 64, pids: 77}
	EOF
	[ "$(state "$ID" started_from)" = "boot snapshot" ]
	run -0 sbx-run "$ID" -- sh -c 'head -c16 /dev/urandom | od -An -tx1 | tr -d " \n"'
	[ ${#output} -eq 32 ]
	[ "$output" != "$drawn" ]
	run -0 sbx-run "$ID" -- cat /sys/fs/cgroup/sbx/pids.max
	[ "$output" = 77 ]
	run -0 sbx-run "$ID" -- cat /sys/fs/cgroup/sbx/memory.max
	[ "$output" = $((64 << 20)) ]
	run -0 sbx-run "$first" -- cat /root/f
	# its memory snapshots are as any VM's
	run -0 sbx-snap "$second"
	run -0 sbx-snap inspect -o yaml "$output"
	[[ $output == *"memory: true"* ]]
	# a root that changed is another boot snapshot's; with
	# SBX_VM_BOOT_SNAPSHOT=0 a VM always boots
	touch "$WORK/root/etc/changed"
	memory_provision
	[ -z "$(state "$ID" started_from)" ]
	boots=("$SBX_ROOT"/vm/boot-*)
	[ "${#boots[@]}" -eq 2 ]
	SBX_VM_BOOT_SNAPSHOT=0 memory_provision
	[ -z "$(state "$ID" started_from)" ]
	# one unused for a week goes with a sweep, the other stays
	touch -d '8 days ago' "${boots[0]}/vm.conf"
	run -0 sbx-gc
	[ ! -e "${boots[0]}" ] && [ -e "${boots[1]}" ]
}

@test "microvm: an allow-list's VMs: the second from the boot snapshot, forks from a memory snapshot, each its own addresses (IPv4 and IPv6), MAC and /etc/hosts, each reaching the server" {
	only_microvm
	command -v ip >/dev/null || skip "iproute2 is not installed (the tests' own namespaces)"
	remote_up R R6
	vm_root "$WORK/root"
	printf '127.0.0.1\tlocalhost\n' > "$WORK/root/etc/hosts"
	ids=()
	for _ in 1 2; do
		TIER_POLICY="rootfs: [\"$WORK\"]" tier_provision <<-EOF
		rootfs: $WORK/root
		read_only_root: false
		resource_allocation: {memory_mb: 64}
		network_policy: egress-allow-list
		allowed_egress: ["$R:8080", "[$R6]:8080"]
		fork: {max_fork_factor: 4}
		EOF
		ids+=("$ID")
	done
	[ -z "$(state "${ids[0]}" started_from)" ]
	[ "$(state "${ids[1]}" started_from)" = "boot snapshot" ]
	# a memory snapshot of the second, forked twice: the clones resume its
	# processes, each with a network of its own
	run -0 sbx-run -d "${ids[1]}" -- sh -c 'while :; do sleep 1; done'
	run -0 sbx-snap "${ids[1]}"
	snap=$output
	run -0 sbx-snap inspect -o yaml "$snap"
	[[ $output == *"memory: true"* ]]
	run -0 sbx-fork -n 2 "$snap"
	ids+=("${lines[@]}")
	[ "${#ids[@]}" -eq 4 ]
	macs=() nets=()
	for id in "${ids[@]}"; do
		net=$(state "$id" net_addr)
		net=${net%/30}
		nets+=("$net")
		addr="${net%.*}.$((${net##*.} + 2))"
		run -0 sbx-run "$id" -- /bin/busybox ifconfig eth0
		[[ $output == *"inet addr:$addr "* ]]
		macs+=("$(sed -n 's/.*HWaddr \([0-9A-Fa-f:]*\).*/\1/p' <<<"$output")")
		# its IPv6 address the /96's with the IPv4 one in its last 32 bits,
		# and no other (a clone's parent's went)
		# shellcheck disable=SC2086
		addr6=fd87005b0000000000000000$(printf '%02x' ${addr//./ })
		run -0 sbx-run "$id" -- cat /proc/net/if_inet6
		[[ $output == *"$addr6 "*" eth0"* ]]
		[ "$(grep -c eth0 <<<"$output")" -eq 1 ]
		run -0 sbx-run "$id" -- sh -c "printf 'GET / HTTP/1.0\r\n\r\n' | /bin/busybox nc $R6 8080"
		[[ ${lines[0]} == "HTTP/1.0 200"* ]]
		# (busybox's nc: its static wget crashes resolving even an address)
		run -0 sbx-run "$id" -- sh -c "printf 'GET / HTTP/1.0\r\n\r\n' | /bin/busybox nc $R 8080"
		[[ ${lines[0]} == "HTTP/1.0 200"* ]]
		run -1 sbx-run "$id" -- sh -c "echo | /bin/busybox nc $R 8081"
		run -0 sbx-run "$id" -- cat /etc/hosts
		[[ $output == *"127.0.1.1	$id"* ]]
	done
	[ "$(printf '%s\n' "${macs[@]}" | sort -u | wc -l)" -eq 4 ]
	[ "$(printf '%s\n' "${nets[@]}" | sort -u | wc -l)" -eq 4 ]
	# a memory snapshot restores into the network it was taken with
	tier_manifest <<-EOF
	rootfs: $snap
	read_only_root: false
	resource_allocation: {memory_mb: 64}
	EOF
	run -65 sbx-provision "$WORK/m.yaml"
	[[ $output == *"the memory snapshot's VM had a network"* ]]
	run -0 sbx-gc "${ids[@]}"
	for net in "${nets[@]}"; do [ ! -e "/run/sbx/net/$net" ]; done
}

@test "microvm: bad input: more vCPUs than the host has (65), no guest kernel (69), keys it cannot honour (69); nothing made" {
	only_microvm
	tier_manifest <<<"resource_allocation: {cpu_cores: $(($(nproc) + 1))}"
	run -65 sbx-provision "$WORK/m.yaml"
	[[ $output == *"vCPUs, more than this host's $(nproc)"* ]]
	tier_manifest </dev/null
	SBX_GUEST_KIT=$WORK/nokit run -69 sbx-provision "$WORK/m.yaml"
	[[ $output == *"SBX_GUEST_KIT $WORK/nokit: not a built guest kit"* ]]
	# the kit made on first use, where Debian's kernel cannot be had
	mkdir -p "$WORK/libexec/guest"
	cp "$SBX_LIBEXEC/sbx-agent" "$WORK/libexec/"
	printf '#!/bin/sh\necho "guest: no kernel here" >&2\nexit 69\n' > "$WORK/libexec/guest/build.sh"
	chmod 755 "$WORK/libexec/guest/build.sh"
	SBX_GUEST_KIT='' SBX_LIBEXEC=$WORK/libexec run -69 sbx-provision "$WORK/m.yaml"
	[[ $output == *"no guest kernel could be built"* ]]
	for key in 'security: {landlock: true}' \
		'filesystem_mounts: [{host: /srv, guest: /srv}]'; do
		tier_manifest <<<"$key"
		sed -i '/^security: {}$/d' "$WORK/m.yaml"
		run -69 sbx-provision "$WORK/m.yaml"
		[[ $output == *"isolation_level microvm"* ]]
	done
	run -0 sbx-ls -q
	[ -z "$output" ]
	# this state root's VMs only (its group): other work may run VMs meanwhile
	group=r$(printf '%s' "$SBX_ROOT" | sha256sum | cut -c1-12)
	[ -z "$(find "/run/sbx-vm/$group" -mindepth 1 -maxdepth 1 2>/dev/null)" ]
}
