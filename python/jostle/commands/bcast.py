"""`jostle bcast`: the dynamic-broadcast benchmark, on real ranks or simulated at scale.

Real ranks: one run of `jostle-bench bcast` under the MPI launcher.
Simulated (--simulate): one run per node count under SimGrid's smpirun, each on a
generated cluster platform (jostle.run.simgrid), with the SimGrid build of jostle-bench
(build/simgrid/jostle-bench). The campaign resumes: node counts already complete are
skipped.
"""

import argparse

from ..records import benchmarks
from ..run import simgrid
from ..sizes import parse_sizes
from ..studies import bcast as study
from . import _common
from . import _simulation as simulation

ORDER = 30
STUDY = True
ROUTINGS, SIM_SIZES, SIM_ROUTINGS = study.ROUTINGS, study.SIM_SIZES, study.SIM_ROUTINGS

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
    g.add_argument("--sizes", type=_common.spec_type, metavar="SPEC",
                   help=f"payload sizes (default {benchmarks.default('bcast', 'sizes')}; "
                        f"simulated {SIM_SIZES})")
    _common.bench_option(g, "bcast", "recipients", type=recipients_list, metavar="K[,K…]|all",
                   default=benchmarks.default("bcast", "recipients"))
    g.add_argument("--routing", type=routing_list, metavar="R[,R…]",
                   help=f"{', '.join(ROUTINGS)} or all (default "
                        f"{benchmarks.default('bcast', 'routing')}; simulated {SIM_ROUTINGS}); "
                        "simulated also smpi:ALG (SimGrid's MPI_Bcast algorithm ALG) or smpi:all")
    g.add_argument("--ranks", type=_common.ranks_type, default=4, metavar="N",
                   help="ranks of a real run (default 4; ≥ 2)")
    g.add_argument("--hosts", type=_common.hosts_type, metavar="A,B", help="hosts of a real run")
    _common.bench_option(g, "bcast", "segment", type=_common.bytes_type)
    _common.bench_option(g, "bcast", "progress-mode")
    _common.bench_option(g, "bcast", "check", help="verify every payload (real runs)")
    simulation.add_options(p, "1Gf", "node speed, flop/s", noise=True)
    h = p.add_argument_group("repetitions")
    _common.bench_option(h, "bcast", "min-reps", type=_common.positive_int,
                   help=f"samples per point at least ({benchmarks.default('bcast', 'min-reps')}; "
                        "simulated 2: it is deterministic)")
    _common.bench_option(h, "bcast", "max-time", type=_common.positive_float)
    _common.bench_option(h, "bcast", "warmup", type=_common.nonneg_int)
    _common.add_runs_option(h)
    _common.add_launch_options(p)
    _common.add_output_options(p, campaign_default="bcast")
    p.add_argument("--name", type=_common.name_type, help="run name (default bcast-<ranks>r-<hash of the options>: the same command resumes)")
    p.add_argument("--dry-run", action="store_true", help="print the command lines and exit")
    p.set_defaults(func=main)


def main(args):
    simulation.check_simulation(args)
    if args.simulate:
        runs, config = simulate(args)
        return _common.run_campaign(args, runs, config=config, jobs=args.jobs)
    return _common.run_campaign(args, study.plan(_common.settings(study.Settings, args), _common.bench_of(args)))


def simulate(args):
    """One launch per node count for jostle's routings (bcast-sim-N) and one per node count and
    SimGrid algorithm (bcast-sim-N-smpi-ALG, smpirun --cfg=smpi/bcast:ALG): the algorithm of
    MPI_Bcast is a setting of the whole launch."""
    nodes = simgrid.parse_nodes(args.nodes)
    spec = args.sizes or SIM_SIZES
    settings = _common.settings(study.Settings, args)
    # parsed by a native build: the SimGrid build answers nothing outside smpirun (SIGSEGV)
    study.check_segment(settings, parse_sizes(spec), spec)
    study.check_recipients(args.recipients, min(nodes), "simulated nodes (the smallest of --nodes)")
    ours, algs = study.split_smpi(args.routing or SIM_ROUTINGS)
    variants = [("", study.bench_args(settings, spec, ours, True), ())] if ours else []
    variants += [(f"-smpi-{a}", study.bench_args(settings, spec, f"smpi:{a}", True),
                  (f"smpi/bcast:{a}",)) for a in algs]
    return simgrid.plan_sweep(simulation.sweep(args), "bcast", nodes, None, 4.0, variants)
