# SPDX-License-Identifier: MIT
# "Remote" servers for the network tests: each lives in a network namespace
# the test creates, reached from the host over a veth the test creates, on
# addresses the test assigns (10.250.N.0/24). Nothing else is ever a target.
# shellcheck disable=SC2034,SC2154

REMOTES=()

# remote_up VAR [VAR6]: a namespace with HTTP servers on ADDR:8080 and
# ADDR:8081 and a DNS-over-TCP responder on ADDR:53; sets VAR to ADDR. With
# VAR6, the same HTTP servers on an IPv6 address too (fd50:250:N::2), in VAR6.
remote_up() {
	local var=$1 var6=${2:-} o name i
	for i in $(seq 50); do
		o=$((100 + RANDOM % 150))
		ip -br addr | grep -q "10\.250\.$o\." || break
	done
	name="sbxt$$-$o"
	name=${name:0:15}
	ip netns add "$name"
	REMOTES+=("$name")
	ip link add "$name" type veth peer name eth0 netns "$name"
	ip addr add "10.250.$o.1/24" dev "$name"
	ip link set "$name" up
	ip netns exec "$name" ip addr add "10.250.$o.2/24" dev eth0
	ip netns exec "$name" ip link set eth0 up
	ip netns exec "$name" ip link set lo up
	for p in 8080 8081; do
		ip netns exec "$name" python3 -m http.server -b "10.250.$o.2" "$p" \
		    >/dev/null 2>&1 &
		TEST_PIDS+=($!)
	done
	if [ -n "$var6" ]; then
		ip addr add "fd50:250:$o::1/64" dev "$name" nodad
		ip netns exec "$name" ip addr add "fd50:250:$o::2/64" dev eth0 nodad
		for p in 8080 8081; do
			ip netns exec "$name" python3 -m http.server -b "fd50:250:$o::2" "$p" \
			    >/dev/null 2>&1 &
			TEST_PIDS+=($!)
		done
		for i in $(seq 100); do
			curl -s -o /dev/null -m 1 "http://[fd50:250:$o::2]:8081/" && break
			sleep 0.05
		done
		printf -v "$var6" '%s' "fd50:250:$o::2"
	fi
	ip netns exec "$name" python3 "$BATS_TEST_DIRNAME/fixtures/dns-tcp.py" "10.250.$o.2" \
	    >/dev/null 2>&1 &
	TEST_PIDS+=($!)
	for i in $(seq 100); do
		curl -s -o /dev/null -m 1 "http://10.250.$o.2:8081/" && break
		sleep 0.05
	done
	printf -v "$var" '%s' "10.250.$o.2"
}

remotes_down() {
	local n
	for n in "${REMOTES[@]}"; do
		ip link del "$n" 2>/dev/null
		ip netns del "$n" 2>/dev/null
	done
	REMOTES=()
}

# What of sbx's network is on the host: tables, veths, leases and live relays
# (an exited relay waits as a zombie for whoever adopted it: the test's shell).
net_objects() {
	nft list tables 2>/dev/null | grep -o 'sbx_[0-9a-f]*' | sort
	ip -br link | grep -o '^sbx-[0-9a-f]*' | sort
	find /run/sbx/net -name '[0-9]*' 2>/dev/null | sort
	ps -C sbx-relay -o pid=,stat= | awk '$2 !~ /^Z/ {print $1}' | sort
}
