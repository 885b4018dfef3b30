"""The NUIOA study of Moreaud 2007 (seed 001): typed settings → the runs of existing
benchmarks (`jostle nuioa` draws their figures and table):

  placement  ping-pong latency and bandwidth, comm thread near/far x buffers near/far the NIC
             (seed sec. 2.3-2.4), and thread + buffers on each NUMA node in turn (fig. 2.3, 2.8)
  flows      one-way flows both ways: stream (send/receive), put and get (one-sided), sender or
             initiator near/far x receiver or target near/far (sec. 2.5.1, fig. 2.6-2.7)
  load       the flow while compute threads copy into the memory of each node in turn: the
             flow's and the writers' bandwidth, alone and together (table 2.3), with
             `jostle-bench contention --phases compute,comm,together --kernel copy`

Near and far are jostle-bench's (--comm-core/--comm-mem near|far, src/topo/nic_place.c).
"""

from dataclasses import dataclass
from typing import Optional

from ..errors import UsageError
from ..run import estimate
from ..run.campaign import RunSpec, repeated
from ..sizes import parse_sizes
from .contention import DEFAULT_PHASE_TIME, launch_share
from .pingpong import LAUNCHES, launch_budget

PARTS = ("placement", "flows", "load")
DEFAULT_SIZES = "8,64K,4M"          # latency, a medium message, bandwidth
# --quick: a point's repetitions and time (and a load phase's time) in all, over its launches;
# the load's arrays keep their default: far larger than the LLC
QUICK = {"min_reps": 20, "max_time": 0.2, "phase_time": 0.2}


@dataclass
class Settings:
    parts: str = ",".join(PARTS)
    sizes: str = DEFAULT_SIZES
    nic: Optional[str] = None
    writers: Optional[int] = None        # compute threads of the load part
    buffers: Optional[str] = None
    quick: bool = False
    ranks: int = 2
    hosts: Optional[list] = None
    timeout: Optional[float] = None
    runs: int = LAUNCHES                 # launches of each run, the point's time shared


def parts_of(text) -> list:
    parts = [x.strip() for x in text.split(",")]
    bad = [x for x in parts if x not in PARTS]
    if bad or not parts:
        raise UsageError(f"--parts: '{bad[0] if bad else text}' is not a part; allowed: "
                         f"{', '.join(PARTS)}")
    return parts


def launch_times(quick, k) -> dict:
    """{benchmark: {jostle-bench option: value}}: the timing of each of K launches, a
    ping-pong's (pingpong.launch_budget) and a load phase's (contention.launch_share) share of
    what --quick or jostle-bench's defaults give a point in all; K = 1 and no --quick: none."""
    given = QUICK if quick else {}
    if k <= 1:
        pp = {"min-reps": given.get("min_reps"), "max-time": given.get("max_time")}
        load = {**pp, "phase-time": given.get("phase_time")}
    else:
        t, p, n, m = launch_budget(given.get("max_time"), None, given.get("min_reps"), k, floor=1)
        pp = {"min-reps": n, "max-time": t, "precision": p, "max-reps": m}
        load = {x.replace("_", "-"): v for x, v in launch_share(
            k, given.get("phase_time"), given.get("max_time"), given.get("min_reps")).items()}
    return {b: {o: v for o, v in d.items() if v is not None}
            for b, d in (("pingpong", pp), ("contention", load))}


def plan(args: "Settings", topo: dict, bench=None) -> tuple:
    """(runs, notes): the runs of the chosen parts on TOPO (jostle-bench --topo), sizes
    parsed by BENCH (the one launched), each launched --runs K times with a point's time
    shared among the launches (launch_times)."""
    parts = parts_of(args.parts)
    sizes = parse_sizes(args.sizes, bench)
    nodes = topo.get("numa_nodes") or []
    nics = [n for n in topo["machine"].get("nics") or [] if n.get("numa") is not None]
    if args.nic and not any(n["name"] == args.nic for n in topo["machine"].get("nics") or []):
        names = ", ".join(n["name"] for n in topo["machine"].get("nics") or []) or "none"
        raise UsageError(f"--nic '{args.nic}' is not a NIC of this machine; its NICs: {names}")
    notes = []
    where = ("near", "far") if len(nodes) > 1 and nics else ("near",)
    if len(nodes) < 2:
        notes.append("one NUMA node: near and far are the same node, so only the near cases "
                     "run and no placement effect can show")
    elif not nics:
        notes.append("no NIC of known NUMA locality: near/far are undefined, only the default "
                     "placement runs")
    hosts = list(args.hosts or [])
    if len(set(hosts)) < 2:
        notes.append("intra-node runs: the messages never cross a NIC; run with --hosts to "
                     "measure NUIOA effects")
    k = getattr(args, "runs", 1)   # a plan of a test: 1
    times = launch_times(args.quick, k)
    common = [*(["--nic", args.nic] if args.nic else []),
              *(["--buffers", args.buffers] if getattr(args, "buffers", None) else [])]
    spec = args.sizes
    def sweep(bench_name, at):   # seconds a launch measures at most (no start-up)
        t = times[bench_name]
        return estimate.estimate_sweep(at, t.get("min-reps"), t.get("max-time"),
                                       benchmark=bench_name)
    pp = sweep("pingpong", sizes)
    timeout = args.timeout or round(60 + 2 * pp)
    runs = []

    def add(name, bench_name, extra, t=timeout, e=pp):
        timing = [x for o, v in times[bench_name].items() for x in ("--" + o, str(v))]
        runs.append(RunSpec(f"nuioa-{name}", bench_name, [*extra, *timing, *common],
                            args.ranks, hosts, t, estimate=round(e, 2)))

    if "placement" in parts:
        for core in where:
            for mem in where:
                add(f"pp-core{core}-mem{mem}", "pingpong",
                    ["--sizes", spec, "--comm-core", core, "--comm-mem", mem])
        for node in nodes:
            cores = node.get("cores") or [0]
            # Intra-node: the two ranks on two cores of the node; across hosts the same core.
            pair = cores[0] if len(set(hosts)) > 1 else f"{cores[0]},{cores[1 % len(cores)]}"
            add(f"pp-node{node['index']}", "pingpong",
                ["--sizes", spec, "--comm-core", str(pair), "--comm-mem", str(node["index"])])
    if "flows" in parts:
        pairs = [("near", "near")] + ([("near", "far"), ("far", "near")] if len(where) > 1 else [])
        for mode, a, b in (("stream", "send", "recv"), ("put", "init", "target"),
                           ("get", "init", "target")):
            for x, y in pairs:
                add(f"{mode}-{a}{x}-{b}{y}", "pingpong",
                    ["--mode", mode, "--sizes", spec, "--comm-core", f"{x},{y}",
                     "--comm-mem", f"{x},{y}"])
    if "load" in parts:
        big = str(max(sizes))
        cores = int(topo["machine"].get("cores") or 1)
        per_host = args.ranks if len(set(hosts)) < 2 else -(-args.ranks // len(set(hosts)))
        free = cores // per_host - 1
        n = args.writers or max(free, 1)
        over = ["--oversubscribe"] if n > free else []
        phase = times["contention"].get("phase-time", DEFAULT_PHASE_TIME)
        load = sweep("contention", [max(sizes)]) + 3 * phase
        load_timeout = args.timeout or round(60 + 2 * load)
        for node in nodes:
            add(f"load-mem{node['index']}", "contention",
                ["--kernel", "copy", "--phases", "compute,comm,together", "--sizes", big,
                 "--compute-cores", str(n), "--compute-mem", str(node["index"]),
                 *(["--comm-core", "near", "--comm-mem", "near"] if nics else []),
                 *over], load_timeout, load)
    return repeated(runs, k), notes
