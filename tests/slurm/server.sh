#!/bin/sh
# SPDX-License-Identifier: MIT
# A single-node Slurm for the tests (munge, slurmctld, slurmd) on free ports,
# state under DIR. Adapted from the workplace's shared/ref/start-slurm.sh.
#
#   server.sh start DIR   start it; writes DIR/env (SLURM_CONF to source)
#   server.sh stop DIR    stop what it started, by the PIDs under DIR
#
# Needs Debian's slurm-wlm and munge (exit 69 without them).
set -eu
cmd=${1:?usage: server.sh start|stop DIR}
S=${2:?usage: server.sh start|stop DIR}

stop() {
	for f in ctld.pid d.pid munged.pid; do
		[ -s "$S/$f" ] || continue
		p=$(cat "$S/$f")
		kill "$p" 2>/dev/null || true
		i=0
		while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		kill -9 "$p" 2>/dev/null || true
		rm -f "$S/$f"
	done
}

case $cmd in
stop) stop; exit 0 ;;
start) ;;
*) echo "server.sh: unknown command '$cmd'" >&2; exit 64 ;;
esac
for b in slurmctld slurmd munged sinfo; do
	command -v "$b" >/dev/null || { echo "server.sh: $b is not installed" >&2; exit 69; }
done
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
mkdir -p "$S/state" "$S/spool" "$S/log" "$S/munge"
S=$(cd "$S" && pwd)
chmod 755 "$S"
chown munge:munge "$S/munge"
[ -f /etc/munge/munge.key ] || mungekey -c
trap stop EXIT
runuser -u munge -- munged --socket="$S/munge/munge.socket" --pid-file="$S/munge/munged.pid" --force
cp "$S/munge/munged.pid" "$S/munged.pid"
h=$(hostname)
cat > "$S/slurm.conf" <<CONF
ClusterName=sbxtest
SlurmctldHost=$h
AuthType=auth/munge
AuthInfo=socket=$S/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/ctld.pid
SlurmdPidFile=$S/d.pid
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldLogFile=$S/log/ctld.log
SlurmdLogFile=$S/log/d.log
NodeName=$h CPUs=$(nproc) RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -f "$S/slurm.conf"
slurmd -f "$S/slurm.conf"
i=0
until SLURM_CONF="$S/slurm.conf" sinfo -h -o %t 2>/dev/null | grep -q idle; do
	i=$((i + 1)); [ $i -gt 300 ] && { echo "server.sh: slurm did not come up" >&2; exit 1; }
	sleep 0.1
done
echo "export SLURM_CONF=$S/slurm.conf" > "$S/env"
trap - EXIT
echo "slurm ready (source $S/env)"
