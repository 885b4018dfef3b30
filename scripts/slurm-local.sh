#!/usr/bin/env bash
# slurm-local.sh: a SLURM cluster on this machine, private to one directory, for tests and trials.
#
#   slurm-local.sh start [DIR]    install slurm-wlm + munge if missing, write DIR/slurm.conf, start
#                                 munged, slurmctld and slurmd, wait until the node is idle, and
#                                 print the line to source: export SLURM_CONF=DIR/slurm.conf
#   slurm-local.sh start2 [DIR]   two nodes instead, each a network namespace with its own host
#                                 name and address (scripts/netns-hosts.sh): slurmctld and node
#                                 jsl-n1 in the first, jsl-n2 in the second, TCP between them.
#                                 Clients must run in the first: use `exec`.
#   slurm-local.sh exec DIR CMD…  run CMD where the cluster's clients work (SLURM_CONF set; for a
#                                 two-node cluster, inside jsl-n1's namespace and host name)
#   slurm-local.sh stop [DIR]     stop the daemons started in DIR by the pids written there (and
#                                 take the two namespaces down)
#   slurm-local.sh status [DIR]   exit 0 when every node answers and is idle or allocated
#   slurm-local.sh env [DIR]      print the export line again
#
# DIR defaults to $JOSTLE_SLURM_DIR, else /tmp/jostle-slurm. Everything lives there: the config,
# the munge key and socket, state, logs and pids, so it neither needs nor touches /etc/slurm, the
# system's munged or the default ports (it takes free ones), and two of them do not collide.
# The site default MpiDefault=none is kept on purpose: it is what users meet, and jostle must
# pick the PMI plugin itself. Needs root (slurmd starts jobs as their users).
# Two nodes: JOSTLE_NETNS_A/_B/_NET (netns-hosts.sh) default to jsl-n1, jsl-n2 and 10.253.9, not
# netns-hosts.sh's own defaults, so that its inter-host tests elsewhere do not take them down.
# Exit status: 0 ok, 1 the cluster did not come up (logs shown), 3 it cannot be had here (not
# root, packages not installable, no namespaces for start2): tests skip on 3 only.
set -euo pipefail

DIR=$(readlink -m "${2:-${JOSTLE_SLURM_DIR:-/tmp/jostle-slurm}}")
SELF_DIR=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
SBIN=/usr/sbin
export JOSTLE_NETNS_A=${JOSTLE_NETNS_A:-jsl-n1} JOSTLE_NETNS_B=${JOSTLE_NETNS_B:-jsl-n2}
export JOSTLE_NETNS_NET=${JOSTLE_NETNS_NET:-10.253.9}
NETNS="bash $SELF_DIR/netns-hosts.sh"

die() { echo "slurm-local: $*" >&2; exit 1; }
cannot() { echo "slurm-local: $*" >&2; exit 3; }

free_port() {  # a TCP port nothing listens on now
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

two() { [ -f "$DIR/two-nodes" ]; }
nodes() { if two; then echo "$JOSTLE_NETNS_A $JOSTLE_NETNS_B"; else echo jostle1; fi; }

# in_ns NS CMD…: CMD in namespace NS's network, with NS as host name. nsenter, not `ip netns
# exec`: that one remounts /sys, which hides /sys/fs/cgroup, and slurmd will not start without it.
in_ns() {
    local ns=$1; shift
    nsenter --net="/run/netns/$ns" unshare --uts -- /bin/sh -c 'hostname "$0" && exec "$@"' "$ns" "$@"
}

# in_node NS CMD…: as in_ns, and with DIR/tmp-NS mounted on DIR/nodetmp (TmpFS): both slurmd
# share this machine's /tmp, where SLURM's PMIx plugin makes one directory per job step and
# node, named the same on both: the second node's step would fail on "File exists".
in_node() {
    local ns=$1; shift
    mkdir -p "$DIR/tmp-$ns" "$DIR/nodetmp"
    nsenter --net="/run/netns/$ns" unshare --uts --mount -- /bin/sh -c \
        'mount --bind "$1/tmp-$0" "$1/nodetmp" && hostname "$0" && shift && exec "$@"' \
        "$ns" "$DIR" "$@"
}

client() {  # client CMD…: a SLURM command as the cluster's users run it
    if two; then in_ns "$JOSTLE_NETNS_A" env SLURM_CONF="$DIR/slurm.conf" "$@"
    else SLURM_CONF=$DIR/slurm.conf "$@"; fi
}

node_states() { client timeout 10 sinfo -h -N -o %t 2>/dev/null || true; }

write_conf() {  # write_conf CTLD_HOST CTLD_ADDR NODE_LINE… (NAME:HOST:ADDR)
    local ctld=$1 addr=$2 cores cpus n host a line names=""; shift 2
    cores=$(nproc)
    # More CPUs than cores are declared (config_overrides) so that the studies' 4-rank runs are
    # schedulable on a 2-core machine: jostle binds and records oversubscription itself.
    cpus=$(( cores < 8 ? 8 : cores ))
    mkdir -p "$DIR/state" "$DIR/log"
    {
        cat <<EOF
# written by slurm-local.sh: a private cluster on this machine
ClusterName=jostle
SlurmctldHost=$ctld($addr)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
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
EOF
        two && echo "TmpFS=$DIR/nodetmp"
        for line in "$@"; do
            IFS=: read -r n host a <<<"$line"
            mkdir -p "$DIR/spool/$n"
            echo "NodeName=$n NodeHostname=$host NodeAddr=$a CPUs=$cpus State=UNKNOWN"
            names+=${names:+,}$n
        done
        echo "PartitionName=debug Nodes=$names Default=YES MaxTime=INFINITE State=UP"
    } > "$DIR/slurm.conf"
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

wait_idle() {
    local i s="" want
    want=$(nodes | wc -w)
    for i in $(seq 150); do
        s=$(node_states | tr '\n' ' ')
        [ "$(echo "$s" | grep -oE '\b(idle|mix|alloc)\b' | wc -l)" = "$want" ] && { env_line; return 0; }
        sleep 0.2
    done
    echo "slurm-local: nodes not idle after 30 s (states '${s:-none}'); logs:" >&2
    tail -n 5 "$DIR"/log/*.log >&2 || true
    exit 1
}

prepare() {  # prepare MODE: what both starts need
    [ "$(id -u)" = 0 ] || cannot "needs root (slurmd starts jobs as their users)"
    bash "$SELF_DIR/install-deps.sh" >&2 || true
    local exe
    for exe in $SBIN/munged $SBIN/slurmctld $SBIN/slurmd /usr/bin/sbatch; do
        [ -x $exe ] || cannot "$exe missing and scripts/install-deps.sh could not install it"
    done
    if [ -f "$DIR/slurm.conf" ] && [ "$1" = "$(two && echo two || echo one)" ] && status; then
        env_line; exit 0
    fi
    stop 2>/dev/null || true
    rm -rf "$DIR/state" "$DIR/two-nodes"
    mkdir -p "$DIR" && chmod 700 "$DIR"
}

start() {
    prepare one
    trap stop EXIT   # a start that fails leaves nothing running
    write_conf "$(hostname -s)" 127.0.0.1 "jostle1:$(hostname -s):127.0.0.1"
    start_munge
    # -c: a clean start (no state from an earlier cluster in DIR); -i: ignore stale state
    SLURM_CONF=$DIR/slurm.conf $SBIN/slurmctld -c -i
    SLURM_CONF=$DIR/slurm.conf $SBIN/slurmd -N jostle1
    wait_idle
    trap - EXIT
}

start2() {
    prepare two
    local why
    why=$($NETNS check) || cannot "two nodes need network namespaces: $why"
    command -v nsenter >/dev/null || cannot "nsenter (util-linux) not found"
    touch "$DIR/two-nodes"
    trap stop EXIT
    $NETNS up >&2
    local a=$JOSTLE_NETNS_A b=$JOSTLE_NETNS_B
    write_conf "$a" "$JOSTLE_NETNS_NET.1" "$a:$a:$JOSTLE_NETNS_NET.1" "$b:$b:$JOSTLE_NETNS_NET.2"
    start_munge   # a Unix socket: reached from every namespace (one file system)
    in_ns "$a" env SLURM_CONF="$DIR/slurm.conf" $SBIN/slurmctld -c -i
    in_node "$a" env SLURM_CONF="$DIR/slurm.conf" $SBIN/slurmd -N "$a"
    in_node "$b" env SLURM_CONF="$DIR/slurm.conf" $SBIN/slurmd -N "$b"
    wait_idle
    trap - EXIT
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
    if two; then $NETNS down; fi
}

status() {
    [ -f "$DIR/slurm.conf" ] || return 1
    local s want
    s=$(node_states)
    want=$(nodes | wc -w)
    [ -n "$s" ] && [ "$(echo "$s" | grep -cE '^(idle|mix|alloc|comp)')" = "$want" ]
}

env_line() { echo "export SLURM_CONF=$DIR/slurm.conf"; }

case "${1:-}" in
    start) start ;;
    start2) start2 ;;
    stop) stop ;;
    status) status ;;
    env) env_line ;;
    exec) [ $# -ge 3 ] || die "usage: exec DIR CMD…"; shift 2; client "$@" ;;
    *) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; [ -z "${1:-}" ] || exit 2 ;;
esac
