#!/usr/bin/env bats
# SPDX-License-Identifier: MIT
# Network policies: deny-all, the egress allow-list enforced on the host side
# (veth, nftables, relay), host-name pinning, denial logging, and cleanup.
# Traffic goes only to servers in namespaces these tests create (netlib.bash).
# shellcheck disable=SC2154

load helpers
load netlib

eval "base_$(declare -f teardown)"
teardown() {
	remotes_down
	base_teardown
}

needs_net() {
	[ "$(id -u)" -eq 0 ] || skip "the allow-list needs root (tested for exit 69 in its own test)"
	command -v ip >/dev/null || skip "iproute2 is not installed (the tests' own namespaces)"
}

# allow ENTRY...: a manifest allowing ENTRY...; prints its path.
allow() {
	local e list=""
	for e in "$@"; do
		list+="${list:+, }\"$e\""
	done
	manifest "allow-$RANDOM.yaml" <<-EOF
	network_policy: egress-allow-list
	allowed_egress: [$list]
	EOF
}

# veth_addr ID N: address N of the sandbox's /30 (1: the host's end, 2: the sandbox's).
veth_addr() {
	local a
	a=$(state "$1" net_addr)
	a=${a%/30}
	printf '%s.%s\n' "${a%.*}" "$((${a##*.} + $2))"
}

# table_of ID: the sandbox's nftables table on the host.
table_of() {
	local a x y z w
	a=$(state "$1" net_addr)
	IFS=. read -r x y z w <<<"${a%/30}"
	printf 'sbx_%02x%02x%02x%02x\n' "$x" "$y" "$z" "$w"
}

probe() {
	local id=$1
	shift
	sbx-run "$id" -- python3 - "$@" < "$FIXTURES/egress-probe.py"
}

@test "deny-all: a test server and the host's listener are unreachable at once; no veth is made" {
	needs_net
	remote_up R
	host_listener
	before=$(net_objects)
	provision "$MANIFESTS/minimal.yaml"
	[ "$(net_objects)" = "$before" ]
	run -0 probe "$ID" "tcp:$R:8080" "tcp:127.0.0.1:$PORT" "dns:$R"
	# ENETUNREACH, ECONNREFUSED (the sandbox's own loopback), ENETUNREACH
	[[ ${lines[0]} == "tcp:$R:8080 refused-101 0.0"* ]]
	[[ ${lines[1]} == "tcp:127.0.0.1:$PORT refused-111 0.0"* ]]
	[[ ${lines[2]} == "dns:$R refused-101 0.0"* ]]
	# control: the server answers from the host
	run -0 curl -s -o /dev/null -w '%{http_code}' "http://$R:8080/"
	[ "$output" = 200 ]
}

@test "allow-list: the allowed server answers TCP and HTTP; everything else is refused fast, logged and counted" {
	needs_net
	remote_up R
	remote_up R2
	provision "$(allow "$R:8080")"
	assert_confined "$ID"
	run -0 sbx-run "$ID" -- cat /proc/net/dev
	[[ $output == *"eth0:"* ]]
	run -0 probe "$ID" "tcp:$R:8080" "http:$R:8080"
	[[ ${lines[0]} == "tcp:$R:8080 connected "* ]]
	[[ ${lines[1]} == "http:$R:8080 HTTP/1.0_200 "* ]]
	run -0 sbx-run "$ID" -- curl -sS -m 5 -o /dev/null -w '%{http_code}' "http://$R:8080/"
	[ "$output" = 200 ]
	# the same server's other port, another server, UDP, a DNS query: each
	# refused (a TCP reset, or ICMP admin-prohibited: EHOSTUNREACH) in well under a second
	run -0 sbx-run --trace "$WORK/t.yaml" "$ID" -- python3 - "tcp:$R:8081" "tcp:$R2:8080" \
	    "udp:$R:9999" "dns:$R" < "$FIXTURES/egress-probe.py"
	[[ ${lines[0]} == "tcp:$R:8081 refused-111 0.0"* ]]
	[[ ${lines[1]} == "tcp:$R2:8080 refused-111 0.0"* ]]
	[[ ${lines[2]} == "udp:$R:9999 refused-113 0.0"* ]]
	[[ ${lines[3]} == "dns:$R refused-113 0.0"* ]]
	[ "$(yaml_value egress_denied "$WORK/t.yaml")" = 4 ]
	run -0 cat "$WORK/t.yaml"
	[[ $output == *"tcp $R:8081 sent=0 received=0 denied=1"* ]]
	[[ $output == *"tcp $R2:8080 sent=0 received=0 denied=1"* ]]
	[[ $output == *"udp $R:9999 sent=0 received=0 denied=1"* ]]
	[[ $output == *"udp $R:53 sent=0 received=0 denied=1"* ]]
	# one audit event per destination
	for d in "tcp $R:8081" "tcp $R2:8080" "udp $R:9999" "udp $R:53"; do
		[ "$(grep -c "\"egress-denied\".*destination=$d count=1" "$SBX_ROOT/audit.log")" -eq 1 ]
	done
	# the allowed run counted its bytes per destination
	run -0 sbx-run --trace "$WORK/ok.yaml" "$ID" -- curl -sS -m 5 -o /dev/null "http://$R:8080/"
	[ "$(yaml_value egress_denied "$WORK/ok.yaml")" = 0 ]
	[ "$(yaml_value egress_sent_bytes "$WORK/ok.yaml")" -gt 50 ]
	[ "$(yaml_value egress_received_bytes "$WORK/ok.yaml")" -gt 200 ]
	grep -q "tcp $R:8080 sent=[1-9][0-9]* received=[1-9][0-9]* denied=0" "$WORK/ok.yaml"
	run -0 sbx-gc --verify-audit
}

@test "allow-list: Landlock's port rules (landlock_network) are a second layer under the host's: each refuses on its own" {
	needs_net
	remote_up R
	m=$(allow "$R:8080")
	printf 'security: {landlock_network: true}\n' >> "$m"
	provision "$m"
	assert_confined "$ID"
	# the allowed port passes both; the other one Landlock refuses in the
	# sandbox (EACCES) before a packet leaves
	run -0 probe "$ID" "tcp:$R:8080" "tcp:$R:8081"
	[[ ${lines[0]} == "tcp:$R:8080 connected "* ]]
	[[ ${lines[1]} == "tcp:$R:8081 refused-13 "* ]]
	# without Landlock's rules, the host's rules refuse that port alone (a reset)
	provision "$(allow "$R:8080")"
	run -0 probe "$ID" "tcp:$R:8081"
	[[ ${lines[0]} == "tcp:$R:8081 refused-111 "* ]]
}

@test "allow-list: egress-denied events carry the correlation ID of the run that was refused" {
	needs_net
	remote_up R
	provision -c prov-corr "$(allow "$R:8080")"
	assert_confined "$ID"
	run -0 sbx-run -c run-a "$ID" -- python3 - "tcp:$R:8081" < "$FIXTURES/egress-probe.py"
	[[ ${lines[0]} == "tcp:$R:8081 refused-111 "* ]]
	# the first refusal of a destination is written at once
	[ "$(grep -c "\"event\":\"egress-denied\",\"correlation_id\":\"run-a\".*destination=tcp $R:8081 count=1" "$SBX_ROOT/audit.log")" -eq 1 ]
	# another run's refusals (summed while the destination's last event is under
	# 10 s old, written when the relay ends at the latest) keep that run's ID
	run -0 sbx-run -c run-b "$ID" -- python3 - "tcp:$R:8081" "tcp:$R:8081" < "$FIXTURES/egress-probe.py"
	run -0 sbx-gc "$ID"
	grep '"egress-denied"' "$SBX_ROOT/audit.log" > "$WORK/denied"
	[ "$(grep '"correlation_id":"run-b"' "$WORK/denied" | grep -o "destination=tcp $R:8081 count=[0-9]*" |
	    awk -F= '{ n += $3 } END { print n }')" -eq 2 ]
	absent prov-corr "$WORK/denied"
	run -0 sbx-gc --verify-audit
}

@test "allow-list: ranges never reach the host, other sandboxes, link-local or cloud metadata" {
	needs_net
	remote_up R
	provision "$(allow "0.0.0.0/0:*")"
	host=$(veth_addr "$ID" 1)
	peer=$(sbx-provision "$(allow "0.0.0.0/0:*")")
	other=$(veth_addr "$peer" 2)
	run -0 probe "$ID" "http:$R:8081" "tcp:$host:22" "tcp:$other:80" "tcp:169.254.169.254:80" \
	    "tcp:169.254.1.1:80"
	[[ ${lines[0]} == "http:$R:8081 HTTP/1.0_200 "* ]]
	for i in 1 2 3 4; do
		[[ ${lines[$i]} == *" refused-111 0.0"* ]]
	done
	grep -q "destination=tcp 169.254.169.254:80 count=1" "$SBX_ROOT/audit.log"
}

@test "allow-list: a host name is pinned, reachable by name, and only at its pinned address" {
	needs_net
	remote_up R
	remote_up R2
	# The host resolves api.sbx-test from a hosts file of this test only
	# (a private mount namespace), never from the host's own configuration.
	printf '127.0.0.1 localhost\n%s api.sbx-test\n' "$R" > "$WORK/hosts"
	m=$(allow "api.sbx-test:8080")
	run -0 unshare -m sh -c "mount --bind '$WORK/hosts' /etc/hosts && sbx-provision '$m'"
	ID=$output
	run -0 sbx-run "$ID" -- cat /etc/hosts
	[[ $output == *"$R	api.sbx-test"* ]]
	[[ $(sbx-inspect "$ID") == *"api.sbx-test $R"* ]]
	run -0 sbx-run "$ID" -- curl -sS -m 5 -o /dev/null -w '%{http_code}' http://api.sbx-test:8080/
	[ "$output" = 200 ]
	# the name at another address: refused by the rules
	run -7 sbx-run "$ID" -- curl -sS -m 5 --resolve "api.sbx-test:8080:$R2" http://api.sbx-test:8080/
	# the pinned address under another name (HTTP Host, TLS SNI): reset by the relay
	run -56 sbx-run "$ID" -- curl -sS -m 5 -H 'Host: evil.example' "http://$R:8080/"
	run -35 sbx-run "$ID" -- curl -sS -m 5 -k --resolve "evil.example:8080:$R" \
	    https://evil.example:8080/
	grep -q "destination=tcp $R:8080 count=1 reason=name evil.example not allowed" \
	    "$SBX_ROOT/audit.log"
	# and the right SNI passes the relay (the server speaks plain HTTP, so TLS fails after)
	run -35 sbx-run "$ID" -- curl -sS -m 5 -k https://api.sbx-test:8080/
	[[ $output == *"wrong version number"* ]]
}

@test "allow-list: DNS goes only to an allowed resolver, over TCP through the relay" {
	needs_net
	remote_up R
	provision "$(allow "$R:53")"
	run -0 sbx-run "$ID" -- cat /etc/resolv.conf
	[[ $output == *"nameserver $R"* ]]
	[[ $output == *"options use-vc"* ]]
	run -0 sbx-run "$ID" -- getent hosts anything.example
	[[ $output == "192.0.2.53"*"anything.example"* ]]
	# UDP to the same resolver is still refused
	run -0 probe "$ID" "dns:$R"
	[[ $output == "dns:$R refused-113 "* ]]
}

@test "allow-list: ICMP is refused even with CAP_NET_RAW inside, and logged" {
	needs_net
	remote_up R
	m=$(allow "$R:8080")
	printf 'security:\n  capabilities: [CAP_NET_RAW]\n' >> "$m"
	provision "$m"
	run -0 sbx-run "$ID" -- cat /proc/self/status /proc/self/uid_map
	[[ $output == *"NoNewPrivs:	1"* ]]
	not_host_root
	# the answer is the host's "destination unreachable, administratively prohibited"
	run -0 probe "$ID" "icmp:$R"
	[[ $output == "icmp:$R icmp-type-3-code-13 0.0"* ]]
	grep -q "destination=icmp $R count=1" "$SBX_ROOT/audit.log"
}

@test "allow-list: root inside, even with CAP_NET_ADMIN, cannot change the host's rules" {
	needs_net
	remote_up R
	remote_up R2
	provision "$(allow "$R:8080")"
	run -0 sbx-run "$ID" -- cat /proc/self/uid_map
	not_host_root
	table=$(table_of "$ID")
	rules=$(nft list table inet "$table")
	# no capabilities: nft and ip fail
	run -1 sbx-run "$ID" -- nft flush ruleset
	run -2 sbx-run "$ID" -- ip link set eth0 down
	# with CAP_NET_ADMIN inside, only the sandbox's own namespace changes
	m=$(allow "$R:8080")
	printf 'security:\n  capabilities: [CAP_NET_ADMIN]\n' >> "$m"
	echo 'capabilities: [CAP_NET_ADMIN]' | policy
	provision "$m"
	run -0 sbx-run "$ID" -- cat /proc/self/uid_map
	not_host_root
	table2=$(table_of "$ID")
	rules2=$(nft list table inet "$table2")
	run -0 sbx-run "$ID" -- nft flush ruleset
	run -0 probe "$ID" "http:$R:8080" "tcp:$R:8081"
	[[ ${lines[0]} == "http:$R:8080 HTTP/1.0_200 "* ]]
	[[ ${lines[1]} == "tcp:$R:8081 refused-111 "* ]]
	# A forged source address (one of this test's own, so that nothing could
	# ever answer elsewhere) is dropped on the host's side.
	gw=$(veth_addr "$ID" 1)
	run -0 sbx-run "$ID" -- sh -c "ip addr add $R2/32 dev eth0 && ip route add $R/32 via $gw src $R2"
	run -0 probe "$ID" "http:$R:8080"
	[[ ${lines[0]} == "http:$R:8080 refused-"* ]]
	[ "$(nft list table inet "$table")" = "$rules" ]
	[ "$(nft list table inet "$table2")" = "$rules2" ]
}

@test "allow-list: the hostile network program gets no further than under deny-all" {
	needs_net
	remote_up R
	m=$(allow "$R:8080")
	printf 'filesystem_mounts: [{host: %s, guest: /hostile, mode: ro}]\n' \
	    "${SBX_HOSTILE:?run through make check}" >> "$m"
	provision "$m"
	assert_confined "$ID"
	host_listener
	run -0 sbx-run "$ID" -- /hostile/net-exfil "$PORT" "sbx-test-$$"
	echo "$output"
	for t in tcp-to-host-loopback raw-socket packet-socket abstract-unix-to-host dns-lookup; do
		[[ $output == *"$t blocked"* ]]
	done
	[[ $output != *ESCAPED* ]]
}

@test "allow-list: bad input and hosts that cannot enforce it exit 65 and 69, and make nothing" {
	run -65 sbx-provision - <<<'network_policy: egress-allow-list'
	[[ $output == *"allowed_egress is empty"* ]] || [[ $output == *"needs root"* ]]
	run -65 sbx-provision - <<<'allowed_egress: ["10.0.0.1:80"]'
	[[ $output == *"allowed_egress needs network_policy: egress-allow-list"* ]]
	run -65 sbx-provision - <<<'{network_policy: egress-allow-list, allowed_egress: ["10.0.0.1:99999"]}'
	[[ $output == *"10.0.0.1:99999"* ]]
	[ "$(id -u)" -eq 0 ] || skip "the rest needs root"
	run -65 sbx-provision - <<<'{network_policy: egress-allow-list, allowed_egress: ["fd00::1:80"]}'
	[[ $output == *"write an IPv6 address in brackets"* ]]
	run -65 sbx-provision - <<<'{network_policy: egress-allow-list, allowed_egress: ["[fd00::/129]:80"]}'
	[[ $output == *"prefix length must be 0 to 128"* ]]
	run -65 env SBX_NET_POOL6=fd00::/64 sbx-provision - <<<'{network_policy: egress-allow-list, allowed_egress: ["[fd00::1]:80"]}'
	[[ $output == *"SBX_NET_POOL6"* ]]
	run -69 sbx-provision - <<<'{network_policy: egress-allow-list, allowed_egress: ["no-such-host.invalid:80"]}'
	[[ $output == *"cannot resolve no-such-host.invalid"* ]]
	run -65 env SBX_NET_POOL=10.0.0.0/8 sbx-provision - <<<'{network_policy: egress-allow-list, allowed_egress: ["10.0.0.1:80"]}'
	[[ $output == *"SBX_NET_POOL"* ]]
	run -0 sbx-ls -q
	[ -z "$output" ]
}

@test "allow-list without root: exit 69 naming why, never an open network" {
	[ "$(id -u)" -eq 0 ] || skip "runs the rootless case as another user from root"
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
	uid=$(awk -F: '$1 == "nobody" {print $3}' /etc/passwd)
	rl=$(mktemp -d /tmp/sbx-rootless.XXXXXX)
	chown "$uid" "$rl"
	printf 'network_policy: egress-allow-list\nallowed_egress: ["10.250.1.2:80"]\n' > "$rl/m.yaml"
	chmod 644 "$rl/m.yaml"
	run -69 setpriv --reuid="$uid" --regid="$uid" --clear-groups env SBX_ROOT="$rl/root" \
	    HOME="$rl" "$SBX_BIN/sbx-provision" "$rl/m.yaml"
	[[ $output == *"cannot be enforced without root"*"/dev/net/tun"* ]]
	rm -rf "$rl"
}

@test "network_policy host: only with trust: trusted, and said loudly" {
	run -65 sbx-provision - <<<'network_policy: host'
	[[ $output == *"network_policy: host is allowed only with trust: trusted"* ]]
	[ "$(id -u)" -eq 0 ] || skip "the rest needs root"
	# a claim of trust is not a grant: the operator's policy must allow both
	run -77 sbx-provision - <<<'{network_policy: host, trust: trusted}'
	[[ $output == *"trust: trusted: not allowed by the built-in policy"* ]]
	echo 'max_trust: trusted' | policy
	run -77 sbx-provision - <<<'{network_policy: host, trust: trusted}'
	[[ $output == *"network_policy: host: not allowed by the policy ($SBX_ROOT/policy.yaml, which keeps the built-in rule: deny-all, egress-allow-list only)"* ]]
	printf 'max_trust: trusted\nnetwork_policies: [deny-all, host]\n' | policy
	run -0 --separate-stderr sbx-provision - <<<'{network_policy: host, trust: trusted}'
	ID=$output
	[[ $stderr == *"WARNING"*"host's network"* ]]
	grep -q '"provision".*network_policy host' "$SBX_ROOT/audit.log"
	run -0 sbx-run "$ID" -- cat /proc/net/dev
	[[ $output == *"eth0:"* ]]
}

@test "addresses: live sandboxes never share one; 100 create/destroy cycles leave nothing behind" {
	needs_net
	remote_up R
	before=$(net_objects)
	ids=()
	for i in 1 2 3; do
		ids+=("$(sbx-provision "$(allow "$R:8080")")")
	done
	addrs=$(for i in "${ids[@]}"; do state "$i" net_addr; done | sort -u | wc -l)
	[ "$addrs" -eq 3 ]
	for i in "${ids[@]}"; do
		run -0 sbx-run "$i" -- curl -sS -m 5 -o /dev/null -w '%{http_code}' "http://$R:8080/"
		[ "$output" = 200 ]
	done
	for i in "${ids[@]}"; do sbx-gc "$i" >/dev/null; done
	m=$(allow "$R:8080")
	for i in $(seq 100); do
		id=$(sbx-provision "$m")
		sbx-gc "$id" >/dev/null
	done
	[ "$(net_objects)" = "$before" ]
}

@test "sbx-gc removes the rules, lease and relay of a sandbox whose init was killed" {
	needs_net
	remote_up R
	before=$(net_objects)
	provision "$(allow "$R:8080")"
	relay=$(state "$ID" relay_pid)
	kill -9 "$(state "$ID" pid)"
	for i in $(seq 100); do gone "$relay" && break; sleep 0.02; done
	gone "$relay"
	[ "$(net_objects)" != "$before" ]
	run -0 sbx-gc --dry-run
	[[ $output == *"would remove netlease"* || $output == *"would remove sandbox $ID"* ]]
	run -0 sbx-gc
	[ "$(net_objects)" = "$before" ]
}

@test "sbx-provision SIGKILLed once the network is made: one sweep removes it all" {
	needs_net
	remote_up R
	before=$(net_objects)
	run -137 env SBX_TEST_CRASH_AT=create-network sbx-provision "$(allow "$R:8080")"
	[ "$(net_objects)" != "$before" ]
	run -0 sbx-gc
	for _ in $(seq 30); do [ "$(net_objects)" = "$before" ] && break; sleep 0.1; done
	[ "$(net_objects)" = "$before" ]
	run -0 sbx-ls -q
	[ -z "$output" ]
}
