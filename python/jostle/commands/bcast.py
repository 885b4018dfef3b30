"""`jostle bcast`: the dynamic-broadcast benchmark, on real ranks or simulated at scale.

Real ranks: one run of `jostle-bench bcast` under the MPI launcher.
Simulated (--simulate): one run per node count under SimGrid's smpirun, each on a
generated cluster platform (jostle.run.simgrid), with the SimGrid build of jostle-bench
(build/simgrid/jostle-bench). The campaign resumes: node counts already complete are
skipped.
"""

import argparse

from ..records import benchmarks
from ..run import estimate, simgrid
from ..run.campaign import RunSpec, repeated
from ..errors import UsageError
from ..sizes import parse_bytes, parse_sizes
from . import _common as c
from . import _record
from . import _simulation as simulation

ORDER = 30
STUDY = True
# jt_dbcast's routings (the descriptor lists them as the choices of cholesky's --routing: bcast's
# takes a list, whose items it does not list), then auto and MPI_Bcast: the order of the
# simulated default, which a resumed campaign's arguments must match.
_ROUTES = benchmarks.choices("cholesky", "routing")
ROUTINGS = (*(r for r in _ROUTES if r != "auto"), "auto", "mpi_bcast")
SIM_SIZES = "8,64K,1M"
# Simulated by default: all but the chain of whole messages (P-1 hops of the whole payload:
# never the fastest; `--routing all` has it).
SIM_ROUTINGS = ",".join(r for r in ROUTINGS if r != "chain")

EXAMPLES = """examples:
  jostle bcast                                        4 ranks here, every routing, k = 3
  jostle bcast --ranks 8 --recipients 1,3,7 --sizes 8:64M
  jostle bcast --routing auto,mpi_bcast --hosts n1,n2,n3,n4
  jostle bcast --simulate --nodes 4:256 --bandwidth 10Gbps --latency 1us --speed 1Gf
  jostle bcast --simulate --nodes 4:64 --sizes 1M --routing auto,flat,mpi_bcast
  jostle bcast --simulate --nodes 16,64,256 --sizes 8:16M --routing all,smpi:all
  jostle bcast --simulate --nodes 64 --routing auto,smpi:scatter_LR_allgather,smpi:ompi

Real runs go to OUTPUT-DIR/CAMPAIGN/NAME.jsonl; a simulated sweep writes one run per
node count (bcast-sim-<N>.jsonl), one per node count and SimGrid algorithm
(bcast-sim-<N>-smpi-<ALG>.jsonl: smpirun --cfg=smpi/bcast:ALG) and the platform files
beside them. A run that is already complete is not run again.

smpi:ALG (simulated only) is MPI_Bcast with SimGrid's algorithm ALG; smpi:all is every
one but default (= binomial_tree = mpi_bcast under SimGrid), automatic, and those that
deadlock or crash in SimGrid 3.32 (SMP_linear, ompi_split_bintree, impi,
arrival_pattern_aware, arrival_scatter): jostle.run.simgrid.SMPI_BCAST_NOT_IN_ALL says why."""


def routing_list(text):
    items = [x.strip() for x in text.split(",")]
    for x in items:
        if x.startswith("smpi:") and x[5:] not in (*simgrid.SMPI_BCAST, "all"):
            raise argparse.ArgumentTypeError(
                f"'{x}' is not a broadcast algorithm of SimGrid 3.32; expected smpi:all or "
                f"smpi:ALG with ALG one of {', '.join(simgrid.SMPI_BCAST)}")
        if not x.startswith("smpi:") and x not in ROUTINGS and x != "all":
            raise argparse.ArgumentTypeError(
                f"'{x}' is not a routing; expected {', '.join(ROUTINGS)}, all, smpi:ALG "
                "(simulated) or smpi:all")
    return ",".join(items)


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


def recipients_list(text):
    items = [x.strip() for x in text.split(",")]
    for x in items:
        if x != "all" and not (x.isdigit() and int(x) >= 1):
            raise argparse.ArgumentTypeError(
                f"'{x}' is not a number of recipients; expected whole numbers ≥ 1 or all")
    return ",".join(items)


def register(sub):
    p = sub.add_parser("bcast", help="dynamic broadcasts against MPI_Bcast (real or simulated)",
                       description="Time until the last of k recipients holds the data of a "
                                   "broadcast: each routing of jt_dbcast and MPI_Bcast.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("sweep")
    g.add_argument("--sizes", type=c.spec_type, metavar="SPEC",
                   help=f"payload sizes (default {benchmarks.default('bcast', 'sizes')}; "
                        f"simulated {SIM_SIZES})")
    c.bench_option(g, "bcast", "recipients", type=recipients_list, metavar="K[,K…]|all",
                   default=benchmarks.default("bcast", "recipients"))
    g.add_argument("--routing", type=routing_list, metavar="R[,R…]",
                   help=f"{', '.join(ROUTINGS)} or all (default "
                        f"{benchmarks.default('bcast', 'routing')}; simulated {SIM_ROUTINGS}); "
                        "simulated also smpi:ALG (SimGrid's MPI_Bcast algorithm ALG) or smpi:all")
    g.add_argument("--ranks", type=c.ranks_type, default=4, metavar="N",
                   help="ranks of a real run (default 4; ≥ 2)")
    g.add_argument("--hosts", type=c.hosts_type, metavar="A,B", help="hosts of a real run")
    c.bench_option(g, "bcast", "segment", type=c.bytes_type)
    c.bench_option(g, "bcast", "progress-mode")
    c.bench_option(g, "bcast", "check", help="verify every payload (real runs)")
    simulation.add_options(p, "1Gf", "node speed, flop/s", noise=True)
    h = p.add_argument_group("repetitions")
    c.bench_option(h, "bcast", "min-reps", type=c.positive_int,
                   help=f"samples per point at least ({benchmarks.default('bcast', 'min-reps')}; "
                        "simulated 2: it is deterministic)")
    c.bench_option(h, "bcast", "max-time", type=c.positive_float)
    c.bench_option(h, "bcast", "warmup", type=c.nonneg_int)
    c.add_runs_option(h)
    c.add_launch_options(p)
    c.add_output_options(p, campaign_default="bcast")
    p.add_argument("--name", type=c.name_type, help="run name (default bcast-<ranks>r-<hash of the options>: the same command resumes)")
    p.add_argument("--dry-run", action="store_true", help="print the command lines and exit")
    p.set_defaults(func=main)


def _ks(spec, P, where):
    for x in spec.split(","):
        if x != "all" and int(x) > P - 1:
            raise UsageError(f"--recipients '{x}' is not allowed with {P} {where}: expected "
                             f"1 to {P - 1} (every rank but the root) or all")


def bench_args(args, spec, routing, sim) -> list:
    out = ["--sizes", spec, "--routing", routing, "--recipients", args.recipients]
    reps = {"min_reps": args.min_reps or (2 if sim else None),
            "warmup": args.warmup if args.warmup is not None else (1 if sim else None),
            "max_time": args.max_time if args.max_time is not None else (0 if sim else None)}
    for k, v in reps.items():
        if v is not None:
            out += ["--" + k.replace("_", "-"), str(v)]
    out += c.pass_through(args, ("segment", "progress-mode"))
    if args.check and not sim:
        out.append("--check")
    return out


def _check_segment(args, sizes, spec):
    if args.segment is not None and parse_bytes(args.segment) > max(sizes):
        raise UsageError(f"--segment '{args.segment}' is larger than the largest size of --sizes "
                         f"'{spec}' ({max(sizes)} bytes): a segment is a piece of a message")


def main(args):
    simulation.check_simulation(args)
    if args.simulate:
        return _record.campaign(args, simulate(args))
    spec = args.sizes or benchmarks.default("bcast", "sizes")
    sizes = parse_sizes(spec, c.bench_of(args))
    _check_segment(args, sizes, spec)
    if args.routing and split_smpi(args.routing)[1]:
        raise UsageError(f"--routing '{args.routing}': smpi:* are SimGrid's MPI_Bcast algorithms, "
                         "for simulated runs (add --simulate); on real ranks mpi_bcast is the MPI "
                         "library's own MPI_Bcast with its tuned defaults")
    _ks(args.recipients, args.ranks, "ranks")
    routing = args.routing or benchmarks.default("bcast", "routing")
    c.check_memory(sizes, args.ranks, option="--sizes", spec=spec)
    nroutes = len(ROUTINGS) if "all" in routing.split(",") else len(routing.split(","))
    npts = nroutes * len(args.recipients.split(","))
    timeout = args.timeout or npts * estimate.estimate_timeout(
        sizes, args.min_reps, args.max_time, args.warmup, benchmark="bcast")
    run_args = bench_args(args, spec, routing, False)
    name = args.name or c.default_name(f"bcast-{args.ranks}r", run_args, args.ranks, args.hosts)
    runs = repeated([RunSpec(name, "bcast", run_args, args.ranks, args.hosts or [], timeout)],
                    args.runs)
    return c.run_campaign(args, runs)


def simulate(args):
    """One launch per node count for jostle's routings (bcast-sim-N) and one per node count and
    SimGrid algorithm (bcast-sim-N-smpi-ALG, smpirun --cfg=smpi/bcast:ALG): the algorithm of
    MPI_Bcast is a setting of the whole launch."""
    nodes = simgrid.parse_nodes(args.nodes)
    spec = args.sizes or SIM_SIZES
    # parsed by a native build: the SimGrid build answers nothing outside smpirun (SIGSEGV)
    _check_segment(args, parse_sizes(spec), spec)
    _ks(args.recipients, min(nodes), "simulated nodes (the smallest of --nodes)")
    ours, algs = split_smpi(args.routing or SIM_ROUTINGS)
    variants = [("", bench_args(args, spec, ours, True), ())] if ours else []
    variants += [(f"-smpi-{a}", bench_args(args, spec, f"smpi:{a}", True), (f"smpi/bcast:{a}",))
                 for a in algs]
    return simgrid.run_sweep(simulation.sweep(args), "bcast", nodes, None, 4.0, variants)
