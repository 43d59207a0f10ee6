#!/bin/sh
# SPDX-License-Identifier: MIT
# A real S3 server for the tests: single-node Ceph (one monitor, one memstore
# OSD, no manager, `auth none` between daemons) with radosgw's S3 API on
# 127.0.0.1 (HTTP, and HTTPS with a certificate of its own), which checks
# AWS Signature V4 strictly. Adapted from the recipe in
# the workplace's shared/ref/start-radosgw.sh: free ports, state under DIR.
#
#   server.sh start DIR   start it; writes DIR/env (AWS_* variables to source)
#   server.sh stop DIR    stop the daemons it started, by the PIDs under DIR/run
#
# Needs Debian's radosgw ceph-mon ceph-osd ceph-common (exit 69 without them).
set -eu
cmd=${1:?usage: server.sh start|stop DIR}
C=${2:?usage: server.sh start|stop DIR}

free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

stop() {
	for d in rgw osd mon; do
		[ -f "$C/run/$d.pid" ] || continue
		p=$(cat "$C/run/$d.pid")
		kill "$p" 2>/dev/null || true
	done
	for d in rgw osd mon; do
		[ -f "$C/run/$d.pid" ] || continue
		p=$(cat "$C/run/$d.pid")
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		kill -9 "$p" 2>/dev/null || true
		rm -f "$C/run/$d.pid"
	done
}

case $cmd in
stop) stop; exit 0 ;;
start) ;;
*) echo "server.sh: unknown command '$cmd'" >&2; exit 64 ;;
esac

for b in radosgw ceph-mon ceph-osd ceph radosgw-admin ceph-authtool monmaptool openssl; do
	command -v "$b" >/dev/null || { echo "server.sh: $b is not installed" >&2; exit 69; }
done
rm -rf "$C"; mkdir -p "$C/run" "$C/log" "$C/mon.a" "$C/osd.0"
C=$(cd "$C" && pwd)
MON=$(free_port); RGW=$(free_port); TLS=$(free_port)
# HTTPS beside HTTP, with a certificate of our own for localhost and 127.0.0.1
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
	-addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
	-keyout "$C/tls.key" -out "$C/tls.crt" 2>/dev/null
FSID=$(cat /proc/sys/kernel/random/uuid)
cat > "$C/ceph.conf" <<CONF
[global]
fsid = $FSID
mon host = v1:127.0.0.1:$MON
mon initial members = a
public network = 127.0.0.0/8
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
mon data avail warn = 5
mon max pg per osd = 1000
run dir = $C/run
log file = $C/log/\$name.log
admin socket = $C/run/\$name.asok
keyring = $C/keyring
ms bind port min = 20000
ms bind port max = 30000
[mon.a]
mon data = $C/mon.a
[osd.0]
osd data = $C/osd.0
osd objectstore = memstore
memstore device bytes = ${SBX_S3_SERVER_BYTES:-4294967296}
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$RGW ssl_endpoint=127.0.0.1:$TLS ssl_certificate=$C/tls.crt ssl_private_key=$C/tls.key
rgw dns name = localhost
# free the space of deleted objects within seconds, not hours (the benchmark
# rewrites hundreds of megabytes into an in-memory store)
rgw gc obj min wait = 1
rgw gc processor period = 2
CONF
cd "$C"
trap 'stop' EXIT
ceph-authtool --create-keyring keyring --gen-key -n mon. --cap mon 'allow *' >/dev/null
monmaptool --create --add a "v1:127.0.0.1:$MON" --fsid "$FSID" monmap >/dev/null
ceph-mon -c ceph.conf --mkfs -i a --monmap monmap --keyring keyring
ceph-mon -c ceph.conf -i a -f > log/mon.stdout 2>&1 & echo $! > run/mon.pid
U=$(cat /proc/sys/kernel/random/uuid)
ID=$(timeout 30 ceph -c ceph.conf osd new "$U")
ceph-osd -c ceph.conf -i "$ID" --mkfs --osd-uuid "$U" 2>/dev/null
# The OSD sometimes asks the monitor before it has the monitor map (and
# exits: "wrong fsid"); start it again until the cluster counts it up.
up=0
for try in 1 2 3 4 5; do
	ceph-osd -c ceph.conf -i "$ID" -f >> log/osd.stdout 2>&1 & echo $! > run/osd.pid
	i=0
	while [ $i -lt 100 ] && kill -0 "$(cat run/osd.pid)" 2>/dev/null; do
		if timeout 10 ceph -c ceph.conf osd stat 2>/dev/null | grep -q ' 1 up'; then
			up=1
			break
		fi
		sleep 0.2
		i=$((i + 1))
	done
	[ $up = 1 ] && break
	kill "$(cat run/osd.pid)" 2>/dev/null || true
	wait "$(cat run/osd.pid)" 2>/dev/null || true
	echo "server.sh: the OSD did not come up (try $try)" >&2
done
[ $up = 1 ] || { echo "server.sh: the OSD never came up" >&2; exit 1; }
radosgw -c ceph.conf -n client.rgw.a -f > log/rgw.stdout 2>&1 & echo $! > run/rgw.pid
timeout 60 radosgw-admin -c ceph.conf user create --uid=sbx --display-name=sbx \
	--access-key=SBXACCESSKEY --secret-key=sbxsecret123 >/dev/null
i=0
until curl -sf -o /dev/null "http://127.0.0.1:$RGW/"; do
	i=$((i + 1)); [ $i -gt 600 ] && { echo "server.sh: radosgw did not answer" >&2; exit 1; }
	sleep 0.1
done
cat > "$C/env" <<ENV
export AWS_ACCESS_KEY_ID=SBXACCESSKEY
export AWS_SECRET_ACCESS_KEY=sbxsecret123
export AWS_REGION=us-east-1
export AWS_ENDPOINT_URL=http://127.0.0.1:$RGW
SBX_S3_PORT=$RGW
SBX_S3_TLS_PORT=$TLS
SBX_S3_CA=$C/tls.crt
ENV
trap - EXIT
echo "radosgw ready on 127.0.0.1:$RGW (source $C/env)"
