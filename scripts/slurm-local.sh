#!/usr/bin/env bash
# slurm-local.sh: a one-node SLURM on this machine, private to one directory, for tests and trials.
#
#   slurm-local.sh start [DIR]    install slurm-wlm + munge if missing, write DIR/slurm.conf, start
#                                 munged, slurmctld and slurmd, wait until the node is idle, and
#                                 print the line to source: export SLURM_CONF=DIR/slurm.conf
#   slurm-local.sh stop [DIR]     stop the daemons started in DIR, by the pids written there
#   slurm-local.sh status [DIR]   exit 0 when the node answers and is idle or allocated
#   slurm-local.sh env [DIR]      print the export line again
#
# DIR defaults to $JOSTLE_SLURM_DIR, else /tmp/jostle-slurm. Everything lives there: the config,
# the munge key and socket, state, logs and pids, so it neither needs nor touches /etc/slurm, the
# system's munged or the default ports (it takes free ones), and two of them do not collide.
# The site default MpiDefault=none is kept on purpose: it is what users meet, and jostle must
# pick the PMI plugin itself. Needs root (slurmd starts jobs as their users).
# Exit status: 0 ok, 1 the cluster did not come up (logs shown), 3 it cannot be had here (not
# root, packages not installable): tests skip on 3 only.
set -euo pipefail

DIR=$(readlink -m "${2:-${JOSTLE_SLURM_DIR:-/tmp/jostle-slurm}}")
SELF_DIR=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
NODE=${JOSTLE_SLURM_NODE:-jostle1}
SBIN=/usr/sbin

die() { echo "slurm-local: $*" >&2; exit 1; }

free_port() {  # a TCP port nothing listens on now
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

node_state() {
    SLURM_CONF=$DIR/slurm.conf timeout 10 sinfo -h -N -n "$NODE" -o %t 2>/dev/null | head -1
}

write_conf() {
    local cores ctld_port slurmd_port cpus
    cores=$(nproc)
    # More CPUs than cores are declared (config_overrides) so that the studies' 4-rank runs are
    # schedulable on a 2-core machine: jostle binds and records oversubscription itself.
    cpus=$(( cores < 8 ? 8 : cores ))
    ctld_port=$(free_port)
    slurmd_port=$(free_port)
    mkdir -p "$DIR/state" "$DIR/spool" "$DIR/log"
    cat > "$DIR/slurm.conf" <<EOF
# written by slurm-local.sh: a private one-node cluster
ClusterName=jostle
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge.socket
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=300
NodeName=$NODE NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munge() {
    [ -f "$DIR/munge.key" ] || { head -c 1024 /dev/urandom > "$DIR/munge.key"; }
    chmod 600 "$DIR/munge.key"
    # --force: munged refuses root and a socket directory that others could write without it
    $SBIN/munged --force --key-file="$DIR/munge.key" --socket="$DIR/munge.socket" \
        --pid-file="$DIR/munged.pid" --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge.seed"
    local i
    for i in $(seq 50); do [ -S "$DIR/munge.socket" ] && return 0; sleep 0.1; done
    die "munged did not create its socket (see $DIR/log/munged.log)"
}

start() {
    [ "$(id -u)" = 0 ] || { echo "slurm-local: needs root (slurmd starts jobs as their users)" >&2; exit 3; }
    bash "$SELF_DIR/install-deps.sh" >&2 || true
    for exe in $SBIN/munged $SBIN/slurmctld $SBIN/slurmd /usr/bin/sbatch; do
        [ -x $exe ] || { echo "slurm-local: $exe missing and scripts/install-deps.sh could not install it" >&2; exit 3; }
    done
    if status 2>/dev/null; then env_line; return 0; fi
    stop 2>/dev/null || true
    mkdir -p "$DIR" && chmod 700 "$DIR"
    write_conf
    start_munge
    # -c: a clean start (no state from an earlier cluster in DIR); -i: ignore stale state
    SLURM_CONF=$DIR/slurm.conf $SBIN/slurmctld -c -i
    SLURM_CONF=$DIR/slurm.conf $SBIN/slurmd -N "$NODE"
    local i s=""
    for i in $(seq 150); do
        s=$(node_state || true)
        case "$s" in idle|idle~|mix|alloc) env_line; return 0 ;; esac
        sleep 0.2
    done
    echo "slurm-local: node $NODE not idle after 30 s (state '${s:-none}'); logs:" >&2
    tail -n 5 "$DIR"/log/*.log >&2 || true
    stop
    exit 1
}

stop_pidfile() {  # stop_pidfile FILE NAME: SIGTERM, then SIGKILL after 10 s, only if it is NAME
    local f=$1 name=$2 pid i
    [ -f "$f" ] || return 0
    pid=$(cat "$f" 2>/dev/null || true)
    if [ -n "$pid" ] && [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$name" ]; then
        kill -TERM "$pid" 2>/dev/null || true
        for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$f"
}

stop() {
    local f
    for f in "$DIR"/slurmd-*.pid; do stop_pidfile "$f" slurmd; done
    stop_pidfile "$DIR/slurmctld.pid" slurmctld
    stop_pidfile "$DIR/munged.pid" munged
}

status() {
    [ -f "$DIR/slurm.conf" ] || return 1
    case "$(node_state)" in idle|mix|alloc|comp) return 0 ;; *) return 1 ;; esac
}

env_line() { echo "export SLURM_CONF=$DIR/slurm.conf"; }

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    env) env_line ;;
    *) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; [ -z "${1:-}" ] || exit 2 ;;
esac
