"""The dynamic broadcast against MPI_Bcast (SIAM PP22): typed settings → the `jostle-bench
bcast` run of real ranks, and the arguments of each simulated launch (commands/bcast.py sweeps
those under SimGrid)."""

from dataclasses import dataclass
from typing import Optional

from ..errors import UsageError
from ..records import benchmarks
from ..run import estimate, simgrid
from ..run.campaign import RunSpec, repeated
from ..sizes import parse_bytes, parse_sizes
from .flags import check_memory, default_name, pass_through

# jt_dbcast's routings (the descriptor lists them as the choices of cholesky's --routing: bcast's
# takes a list, whose items it does not list), then auto and MPI_Bcast: the order of the
# simulated default, which a resumed campaign's arguments must match.
_ROUTES = benchmarks.choices("cholesky", "routing")
ROUTINGS = (*(r for r in _ROUTES if r != "auto"), "auto", "mpi_bcast")
SIM_SIZES = "8,64K,1M"
# Simulated by default: all but the chain of whole messages (P-1 hops of the whole payload:
# never the fastest; `--routing all` has it).
SIM_ROUTINGS = ",".join(r for r in ROUTINGS if r != "chain")


@dataclass
class Settings:
    sizes: Optional[str] = None
    recipients: str = benchmarks.default("bcast", "recipients")
    routing: Optional[str] = None
    ranks: int = 4
    hosts: Optional[list] = None
    segment: Optional[str] = None
    progress_mode: Optional[str] = None
    check: bool = False
    min_reps: Optional[int] = None
    max_time: Optional[float] = None
    warmup: Optional[int] = None
    timeout: Optional[float] = None
    name: Optional[str] = None
    runs: int = 1


def split_smpi(routing: str):
    """'auto,smpi:ompi,smpi:all' -> ('auto', ['ompi', every algorithm of smpi:all…]): jostle's
    routings (one launch) and SimGrid's MPI_Bcast algorithms (one launch each)."""
    ours, algs = [], []
    for x in routing.split(","):
        if not x.startswith("smpi:"):
            ours.append(x)
            continue
        for a in simgrid.SMPI_BCAST_ALL if x == "smpi:all" else (x[5:],):
            if a not in algs:
                algs.append(a)
    return ",".join(ours), algs


def check_recipients(spec, P, where):
    for x in spec.split(","):
        if x != "all" and int(x) > P - 1:
            raise UsageError(f"--recipients '{x}' is not allowed with {P} {where}: expected "
                             f"1 to {P - 1} (every rank but the root) or all")


def bench_args(args: "Settings", spec, routing, sim) -> list:
    """jostle-bench bcast's arguments (SIM: a simulated run: 2 samples, 1 warm-up, no time
    cap, unless given: a simulation is deterministic)."""
    out = ["--sizes", spec, "--routing", routing, "--recipients", args.recipients]
    reps = {"min_reps": args.min_reps or (2 if sim else None),
            "warmup": args.warmup if args.warmup is not None else (1 if sim else None),
            "max_time": args.max_time if args.max_time is not None else (0 if sim else None)}
    for k, v in reps.items():
        if v is not None:
            out += ["--" + k.replace("_", "-"), str(v)]
    out += pass_through(args, ("segment", "progress-mode"))
    if args.check and not sim:
        out.append("--check")
    return out


def check_segment(args, sizes, spec):
    if args.segment is not None and parse_bytes(args.segment) > max(sizes):
        raise UsageError(f"--segment '{args.segment}' is larger than the largest size of --sizes "
                         f"'{spec}' ({max(sizes)} bytes): a segment is a piece of a message")


def plan(args: "Settings", bench) -> list:
    """The run of real ranks (K launches with --runs K), sizes parsed by BENCH (the one
    launched); refused (exit 2) before anything launches when its options cannot go together."""
    spec = args.sizes or benchmarks.default("bcast", "sizes")
    sizes = parse_sizes(spec, bench)
    check_segment(args, sizes, spec)
    if args.routing and split_smpi(args.routing)[1]:
        raise UsageError(f"--routing '{args.routing}': smpi:* are SimGrid's MPI_Bcast algorithms, "
                         "for simulated runs (add --simulate); on real ranks mpi_bcast is the MPI "
                         "library's own MPI_Bcast with its tuned defaults")
    check_recipients(args.recipients, args.ranks, "ranks")
    routing = args.routing or benchmarks.default("bcast", "routing")
    check_memory(sizes, args.ranks, option="--sizes", spec=spec)
    nroutes = len(ROUTINGS) if "all" in routing.split(",") else len(routing.split(","))
    npts = nroutes * len(args.recipients.split(","))
    timeout = args.timeout or npts * estimate.estimate_timeout(
        sizes, args.min_reps, args.max_time, args.warmup, benchmark="bcast")
    run_args = bench_args(args, spec, routing, False)
    name = args.name or default_name(f"bcast-{args.ranks}r", run_args, args.ranks, args.hosts)
    return repeated([RunSpec(name, "bcast", run_args, args.ranks, args.hosts or [], timeout)],
                    args.runs)
