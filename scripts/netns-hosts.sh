#!/usr/bin/env bash
# netns-hosts.sh: "hosts" on one machine, for inter-host MPI tests without a cluster.
#
# Two network namespaces joined by a veth pair (or, with JOSTLE_NETNS_N=N > 2, N namespaces each
# with a veth to a bridge in a namespace of its own), each with its own hostname (a UTS
# namespace entered on every `exec`), so that Open MPI sees separate nodes and talks TCP between
# them (btl tcp,self), never shared memory. Needs root (CAP_SYS_ADMIN + CAP_NET_ADMIN).
#
#   netns-hosts.sh up                 create the namespaces, veth pair, addresses (idempotent)
#   netns-hosts.sh down               remove them (idempotent; never fails if absent)
#   netns-hosts.sh status             exit 0 when up and wired, 1 otherwise
#   netns-hosts.sh check              exit 0 when namespaces can be made here, else 1 + reason
#   netns-hosts.sh exec A|B CMD…      run CMD in host A or B (its netns + its hostname)
#   netns-hosts.sh agent              print the path of the rsh agent (generated under /tmp)
#   netns-hosts.sh rsh HOST CMD…      the rsh agent itself: run CMD on HOST (name or IP)
#   netns-hosts.sh mpirun ARGS…       Open MPI's mpirun inside A, ranks over A and B by TCP
#   netns-hosts.sh hosts              the hosts' addresses, comma-separated (for --hosts)
# Faults, for the tests of `jostle scan` (HOST as for exec):
#   netns-hosts.sh degrade HOST RATE  a tbf qdisc on HOST's veth: what it sends is capped at RATE
#   netns-hosts.sh slow HOST QUOTA_US what starts on HOST from now on (exec, rsh) runs in a cgroup
#                                     v1 `cpu` group of cfs_quota_us QUOTA_US per 100000 µs
#   netns-hosts.sh kill HOST          HOST's processes killed, its link down, and what is started
#                                     there from now on hangs (until heal): it answers no more
#   netns-hosts.sh heal HOST          undo degrade and slow (and bring the link up)
#
# `mpirun` adds, unless ARGS already name them: -np 2, --host <A's IP>,<B's IP> (one rank each,
# rank 0 on A), --bind-to none, --map-by node (and --mca mpi_yield_when_idle 1 when
# JOSTLE_NETNS_YIELD=1). Give jostle-bench --comm-core 0,1: both "hosts" share this machine's
# cores, and each rank, alone on its host, would otherwise be bound to core 0. It always adds
# --allow-run-as-root, the rsh agent, btl tcp,self and the interface restrictions. When the namespaces are not up it brings them up for this one
# command and takes them down afterwards (also on failure or Ctrl-C), so it works as a
# `jostle --launcher` prefix on its own.
#
# Only addresses made here are used: $JOSTLE_NETNS_NET.1 (A) and .2 (B), /24 on the veth pair,
# plus lo in each namespace. Settings (environment): JOSTLE_NETNS_A / _B (namespace and host
# names, default jostleA / jostleB), JOSTLE_NETNS_NET (first three octets, default 10.253.7);
# with JOSTLE_NETNS_N=N (3..200) the hosts are PREFIX1..PREFIXN at .1 .. .N
# (JOSTLE_NETNS_PREFIX, default jostleH, at most 8 characters) and the bridge is in PREFIXbr.
set -euo pipefail

NS_A=${JOSTLE_NETNS_A:-jostleA}
NS_B=${JOSTLE_NETNS_B:-jostleB}
NET=${JOSTLE_NETNS_NET:-10.253.7}
NHOSTS=${JOSTLE_NETNS_N:-2}
PREFIX=${JOSTLE_NETNS_PREFIX:-jostleH}
IP_A=$NET.1
IP_B=$NET.2
SUBNET=$NET.0/24
VETH_A=veth-$NS_A      # the end in A; interface names are at most 15 characters
VETH_B=veth-$NS_B
[[ $NHOSTS =~ ^[0-9]+$ && $NHOSTS -ge 2 && $NHOSTS -le 200 ]] ||
    { echo "netns-hosts: JOSTLE_NETNS_N '$NHOSTS' is not allowed; expected 2 to 200" >&2; exit 2; }
if [ "$NHOSTS" -gt 2 ]; then
    [[ $PREFIX =~ ^[A-Za-z][A-Za-z0-9]{0,7}$ ]] ||
        { echo "netns-hosts: JOSTLE_NETNS_PREFIX '$PREFIX' is not allowed; expected a letter, then at most 7 letters or digits" >&2; exit 2; }
    NAMES=(); for i in $(seq "$NHOSTS"); do NAMES+=("$PREFIX$i"); done
    NS_A=${NAMES[0]}; NS_B=${NAMES[1]}; VETH_A=veth-$NS_A; VETH_B=veth-$NS_B
    BRIDGE_NS=${PREFIX}br
else
    NAMES=("$NS_A" "$NS_B")
    BRIDGE_NS=""
fi
IPS=(); for i in $(seq "$NHOSTS"); do IPS+=("$NET.$i"); done
CGROUP_CPU=${JOSTLE_NETNS_CGROUP:-/sys/fs/cgroup/cpu}
AGENT_DIR=${JOSTLE_NETNS_TMP:-/tmp/jostle-netns}
SELF=$(readlink -f "${BASH_SOURCE[0]}")
MPIRUN=${JOSTLE_MPIRUN:-$(command -v mpirun.openmpi || command -v mpirun || echo mpirun)}

die() { echo "netns-hosts: $*" >&2; exit 1; }

# Which host is $1 (a namespace name = hostname, A or B, or an address)? Prints its index.
which_host() {
    case "$1" in A|a) echo 0; return ;; B|b) echo 1; return ;; esac
    local i
    for i in "${!NAMES[@]}"; do
        if [ "$1" = "${NAMES[$i]}" ] || [ "$1" = "${IPS[$i]}" ]; then echo "$i"; return; fi
    done
    return 1
}

# Can this process create namespaces? Prints the reason when not.
check() {
    [ "$(id -u)" = 0 ] || { echo "not root (ip netns needs CAP_SYS_ADMIN)"; return 1; }
    command -v ip >/dev/null || { echo "iproute2 'ip' not found"; return 1; }
    command -v unshare >/dev/null || { echo "util-linux 'unshare' not found"; return 1; }
    local probe=jostle-probe-$$ err
    if ! err=$(ip netns add "$probe" 2>&1); then
        echo "cannot create a network namespace: ${err:-ip netns add failed}"; return 1
    fi
    if ! err=$(ip netns exec "$probe" unshare --uts sh -c 'hostname jostle-probe' 2>&1); then
        ip netns del "$probe" 2>/dev/null || true
        echo "cannot set a hostname in a UTS namespace: ${err:-unshare --uts failed}"; return 1
    fi
    ip netns del "$probe" 2>/dev/null || true
}

down() {
    local ns
    for ns in "${NAMES[@]}" $BRIDGE_NS; do
        [ "$ns" = "$BRIDGE_NS" ] || { heal_cgroup "$ns"; rm -f "$AGENT_DIR/dead-$ns"; }
        if ip netns pids "$ns" >/dev/null 2>&1; then
            # whatever is still running there (a hung rank) would keep it alive
            local pids; pids=$(ip netns pids "$ns" 2>/dev/null || true)
            [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
        fi
        ip netns del "$ns" 2>/dev/null || true
    done
    ip link del "$VETH_A" 2>/dev/null || true   # only if an old run left it in the root namespace
}

status() {  # no `| grep -q`: with pipefail, grep quitting early can fail the pipeline
    local a b
    if [ -n "$BRIDGE_NS" ]; then
        local i
        for i in "${!NAMES[@]}"; do
            a=$(ip netns exec "${NAMES[$i]}" ip -o addr show dev "veth-${NAMES[$i]}" 2>/dev/null) || return 1
            [[ $a == *"inet ${IPS[$i]}/24"* ]] || return 1
        done
        a=$(ip netns exec "$NS_A" ip link show dev "$VETH_A" 2>/dev/null) || return 1
        [[ $a == *"state UP"* ]]
        return
    fi
    a=$(ip netns exec "$NS_A" ip -o addr show dev "$VETH_A" 2>/dev/null) || return 1
    b=$(ip netns exec "$NS_B" ip -o addr show dev "$VETH_B" 2>/dev/null) || return 1
    [[ $a == *"inet $IP_A/24"* && $b == *"inet $IP_B/24"* ]] || return 1
    a=$(ip netns exec "$NS_A" ip link show dev "$VETH_A" 2>/dev/null) || return 1
    [[ $a == *"state UP"* ]]
}

up() {
    local reason
    reason=$(check) || die "namespaces unavailable: $reason"
    down
    trap 'down; trap - ERR' ERR
    if [ -n "$BRIDGE_NS" ]; then up_bridge; trap - ERR; return; fi
    ip netns add "$NS_A"
    ip netns add "$NS_B"
    ip link add "$VETH_A" netns "$NS_A" type veth peer name "$VETH_B" netns "$NS_B"
    ip -n "$NS_A" link set lo up
    ip -n "$NS_B" link set lo up
    ip -n "$NS_A" addr add "$IP_A/24" dev "$VETH_A"
    ip -n "$NS_B" addr add "$IP_B/24" dev "$VETH_B"
    ip -n "$NS_A" link set "$VETH_A" up
    ip -n "$NS_B" link set "$VETH_B" up
    # The link is up when both ends are; wait for it (and for DAD to settle) before use.
    local i
    for i in $(seq 50); do status && break; sleep 0.1; done
    status || { down; die "veth link between $NS_A and $NS_B did not come up"; }
    trap - ERR
}

# N hosts: each a veth to a bridge that lives in a namespace of its own (nothing is added to
# the machine's own namespace).
up_bridge() {
    ip netns add "$BRIDGE_NS"
    ip -n "$BRIDGE_NS" link add br0 type bridge
    ip -n "$BRIDGE_NS" link set br0 up
    local i ns
    for i in "${!NAMES[@]}"; do
        ns=${NAMES[$i]}
        ip netns add "$ns"
        ip link add "veth-$ns" netns "$ns" type veth peer name "b-$ns" netns "$BRIDGE_NS"
        ip -n "$BRIDGE_NS" link set "b-$ns" master br0
        ip -n "$BRIDGE_NS" link set "b-$ns" up
        ip -n "$ns" link set lo up
        ip -n "$ns" addr add "${IPS[$i]}/24" dev "veth-$ns"
        ip -n "$ns" link set "veth-$ns" up
    done
    for i in $(seq 50); do status && break; sleep 0.1; done
    status || { down; die "the veth links to the bridge did not come up"; }
}

host_of() {  # the namespace of host $1, or die naming the hosts allowed
    local h; h=$(which_host "$1") || die "unknown host '$1' (expected A, B, ${NAMES[*]} or ${IPS[*]})"
    echo "${NAMES[$h]}"
}

cgroup_of() { echo "$CGROUP_CPU/jostle-netns-$1"; }

# exec_in HOST CMD…: CMD in that namespace, with that hostname (and in its cgroup when `slow`
# made one), replacing this shell.
exec_in() {
    local ns; ns=$(host_of "$1")
    shift
    [ $# -gt 0 ] || die "exec: no command"
    local cg; cg=$(cgroup_of "$ns")
    [ ! -d "$cg" ] || echo $$ > "$cg/cgroup.procs"
    hang_if_dead "$ns"
    exec ip netns exec "$ns" unshare --uts -- /bin/sh -c 'hostname "$0" && exec "$@"' "$ns" "$@"
}

degrade() {
    local ns; ns=$(host_of "$1")
    [[ ${2:-} =~ ^[0-9]+(\.[0-9]+)?[kKmMgG]?(bit|bps)$ ]] ||
        die "degrade: rate '${2:-}' is not allowed; expected e.g. 100mbit"
    ip netns exec "$ns" tc qdisc replace dev "veth-$ns" root tbf rate "$2" burst 64kb latency 400ms
}

slow() {
    local ns; ns=$(host_of "$1")
    [[ ${2:-} =~ ^[0-9]+$ && $2 -ge 1000 ]] ||
        die "slow: quota '${2:-}' is not allowed; expected microseconds per 100000, at least 1000"
    [ -d "$CGROUP_CPU" ] || die "slow: no cgroup v1 cpu controller at $CGROUP_CPU"
    local cg; cg=$(cgroup_of "$ns")
    mkdir -p "$cg"
    echo 100000 > "$cg/cpu.cfs_period_us"
    echo "$2" > "$cg/cpu.cfs_quota_us"
    local p
    for p in $(ip netns pids "$ns" 2>/dev/null); do echo "$p" > "$cg/cgroup.procs" 2>/dev/null || true; done
}

heal_cgroup() {
    local cg p
    cg=$(cgroup_of "$1")
    [ -d "$cg" ] || return 0
    for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do echo "$p" > "$CGROUP_CPU/cgroup.procs" 2>/dev/null || true; done
    rmdir "$cg" 2>/dev/null || true
}

heal() {
    local ns; ns=$(host_of "$1")
    rm -f "$AGENT_DIR/dead-$ns"
    ip netns exec "$ns" tc qdisc del dev "veth-$ns" root 2>/dev/null || true
    heal_cgroup "$ns"
    ip -n "$ns" link set "veth-$ns" up 2>/dev/null || true
}

# A host that `kill` took down answers nothing: what is started there hangs, as an ssh to a dead
# node does, until its caller's time-out.
hang_if_dead() {
    [ ! -e "$AGENT_DIR/dead-$1" ] || exec sleep 1000000
}

kill_host() {
    local ns; ns=$(host_of "$1")
    mkdir -p "$AGENT_DIR" && touch "$AGENT_DIR/dead-$ns"
    ip -n "$ns" link set "veth-$ns" down
    local pids; pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
}

# The rsh agent, as Open MPI calls it: AGENT HOST CMD-STRING… where CMD-STRING is shell
# text (`PATH=…; export PATH; … orted …`). Like ssh, start from a clean environment.
rsh() {
    [ $# -ge 2 ] || die "rsh: usage: rsh HOST COMMAND…"
    local host=$1; shift
    which_host "$host" >/dev/null || die "rsh: unknown host '$host'"
    local keep=(PATH="${PATH:-/usr/local/bin:/usr/bin:/bin}" HOME="${HOME:-/root}" SHELL=/bin/sh)
    [ -z "${LD_LIBRARY_PATH:-}" ] || keep+=(LD_LIBRARY_PATH="$LD_LIBRARY_PATH")
    local v
    for v in OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM TMPDIR; do
        [ -z "${!v:-}" ] || keep+=("$v=${!v}")
    done
    exec_in "$host" env -i "${keep[@]}" /bin/sh -c "$*"
}

agent() {
    mkdir -p "$AGENT_DIR"
    local f=$AGENT_DIR/rsh-agent tmp
    tmp=$(mktemp "$AGENT_DIR/.rsh-agent.XXXXXX")
    printf '#!/bin/sh\n# generated by %s\nexec %q rsh "$@"\n' "$SELF" "$SELF" > "$tmp"
    chmod 755 "$tmp"
    mv -f "$tmp" "$f"
    echo "$f"
}

has_opt() {  # has_opt NAME… -- ARGS…: does ARGS contain one of the options NAME?
    local names=() a
    while [ "$1" != -- ]; do names+=("$1"); shift; done
    shift
    for a in "$@"; do
        local n
        for n in "${names[@]}"; do
            [ "$a" = "$n" ] && return 0
            case "$a" in "$n"=*) return 0 ;; esac
        done
    done
    return 1
}

# single_host ARGS…: the namespace of the one host that --host names (entries h or h:slots),
# or failure when it names several or none.
single_host() {
    local prev="" a list="" h one=""
    for a in "$@"; do
        if [ "$prev" = --host ] || [ "$prev" = -H ]; then list=$a; fi
        prev=$a
    done
    [ -n "$list" ] || return 1
    for h in ${list//,/ }; do
        h=$(host_of "${h%%:*}" 2>/dev/null) || return 1
        [ -z "$one" ] || [ "$one" = "$h" ] || return 1
        one=$h
    done
    echo "$one"
}

mpirun_cmd() {
    local rc=0
    if ! status; then
        up
        trap 'down' EXIT
    fi
    # A signal (Ctrl-C, jostle's time-out) reaches mpirun too (same process group); pass
    # it on anyway and wait for mpirun to stop its ranks, then take the namespaces down.
    local pid=""
    trap '[ -z "$pid" ] || kill -INT "$pid" 2>/dev/null || true' INT
    trap '[ -z "$pid" ] || kill -TERM "$pid" 2>/dev/null || true' TERM HUP
    local ag; ag=$(agent)
    # A job on one host (every --host entry the same) runs inside that host, with shared
    # memory between its ranks as on a real node; a job over several runs in A, over TCP.
    local home=$NS_A btl=tcp,self one
    if one=$(single_host "$@"); then home=$one; btl=self,vader,tcp; fi
    local args=(--allow-run-as-root
                --mca plm_rsh_agent "$ag"
                --mca plm_rsh_no_tree_spawn 1
                --mca btl "$btl"
                --mca btl_tcp_if_include "$SUBNET"
                --mca oob_tcp_if_include "$SUBNET")
    has_opt -np -n --np -c -- "$@" || args+=(-np "$NHOSTS")
    has_opt --host -H --hostfile -hostfile --machinefile -machinefile -- "$@" ||
        args+=(--host "$(IFS=,; echo "${IPS[*]}")")
    has_opt --bind-to -bind-to -- "$@" || args+=(--bind-to none)
    has_opt --map-by -map-by -- "$@" || args+=(--map-by node)
    # Both "hosts" share this machine's cores and each believes it has them all, so each rank
    # is local rank 0 and jostle-bench binds both to core 0, where two spinning ranks take
    # turns at scheduler ticks (4 ms medians). Pass --comm-core 0,1 to jostle-bench; or set
    # JOSTLE_NETNS_YIELD=1 to make idle ranks yield (less faithful, but survives a shared core).
    if [ "${JOSTLE_NETNS_YIELD:-0}" != 0 ] && ! has_opt mpi_yield_when_idle -- "$@"; then
        args+=(--mca mpi_yield_when_idle 1)
    fi
    local a is_bench=0
    for a in "$@"; do case "$a" in */jostle-bench|jostle-bench) is_bench=1 ;; esac; done
    if [ "$is_bench" = 1 ] && ! has_opt --comm-core -- "$@" && ! has_opt mpi_yield_when_idle -- "${args[@]}" "$@"; then
        echo "netns-hosts: warning: no --comm-core: both ranks will be bound to core 0 (each" \
             "is alone on its \"host\"); pass --comm-core 0,1 for meaningful numbers" >&2
    fi
    # Not exec: the EXIT trap must run afterwards. In the host's cgroup when `slow` made one.
    local cg; cg=$(cgroup_of "$home")
    [ ! -d "$cg" ] || echo $$ > "$cg/cgroup.procs"
    hang_if_dead "$home"
    ip netns exec "$home" unshare --uts -- /bin/sh -c 'hostname "$0" && exec "$@"' "$home" \
        env SHELL=/bin/sh "$MPIRUN" "${args[@]}" "$@" &
    pid=$!
    wait "$pid" || rc=$?
    # a signal interrupted `wait`: let mpirun finish (it stops its ranks), then report
    while kill -0 "$pid" 2>/dev/null; do wait "$pid" || rc=$?; done
    return "$rc"
}

main() {
    local cmd=${1:-}
    [ $# -gt 0 ] && shift
    case "$cmd" in
        up) up; if [ -n "$BRIDGE_NS" ]; then echo "up: ${NAMES[*]} (${IPS[*]}) on a bridge in $BRIDGE_NS"
            else echo "up: $NS_A ($IP_A, $VETH_A) <-> $NS_B ($IP_B, $VETH_B)"; fi ;;
        down) down ;;
        status) status ;;
        check) local r; if r=$(check); then echo ok; else echo "$r"; exit 1; fi ;;
        exec) [ $# -ge 2 ] || die "usage: exec A|B CMD…"
              status || die "namespaces are not up (run: $0 up)"
              exec_in "$@" ;;
        agent) agent ;;
        hosts) (IFS=,; echo "${IPS[*]}") ;;
        degrade) [ $# -eq 2 ] || die "usage: degrade HOST RATE"; degrade "$@" ;;
        slow) [ $# -eq 2 ] || die "usage: slow HOST QUOTA_US"; slow "$@" ;;
        heal) [ $# -eq 1 ] || die "usage: heal HOST"; heal "$@" ;;
        kill) [ $# -eq 1 ] || die "usage: kill HOST"; kill_host "$@" ;;
        rsh) rsh "$@" ;;
        mpirun) mpirun_cmd "$@" ;;
        ""|-h|--help|help) sed -n '2,/^set -euo/p' "$SELF" | sed '$d; s/^# \{0,1\}//' ;;
        *) die "unknown subcommand '$cmd' (try: $0 help)" ;;
    esac
}

main "$@"
