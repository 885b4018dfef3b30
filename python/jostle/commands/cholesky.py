"""`jostle cholesky`: the tiled Cholesky on jostle's task runtime, flat sends against dynamic
broadcasts, on real ranks or simulated at scale.

Real ranks: one run of `jostle-bench cholesky` under the MPI launcher.
Simulated (--simulate): one run per node count under smpirun on a generated cluster platform
(jostle.run.simgrid), with the SimGrid build; the tile kernels are SimGrid executions of their
flops at the node speed. Resumable: node counts already complete are skipped.
"""

import argparse
import dataclasses
import sys

from .. import binary
from ..run import bench_query, simgrid, starpu
from ..run.campaign import Campaign, RunSpec
from ..errors import UsageError
from ..run.progress import Progress
from ..records.results import load_run
from ..studies import cholesky as study
from . import _common
from . import _simulation as simulation

ORDER = 31
STUDY = True
KERNELS, MODES, SIM_N, SIM_TILE = study.KERNELS, study.MODES, study.SIM_N, study.SIM_TILE
DEFAULT = study.DEFAULT

EXAMPLES = """examples:
  jostle cholesky                                   2 ranks here, N 2048, tiles 256
  jostle cholesky --ranks 4 --grid 2x2 --n 4096 --tile 512
  jostle cholesky --n 4096 --tile 512 --workers 1 --starpu   beside StarPU-MPI's mpi_cholesky
  jostle cholesky --simulate --nodes 4:256          the seed's figure: gain vs node count
  jostle cholesky --simulate --kernel-rates measure --cores-per-node 16   kernels timed here
  jostle cholesky --matrix nonspd                   must fail with exit 2, naming the tile"""


def modes_type(text):
    """--modes: a comma-separated list of known modes (unknown: exit 2 naming it)."""
    names = [m for m in text.split(",") if m]
    for m in names:
        if m not in MODES:
            raise argparse.ArgumentTypeError(f"'{m}' is not a mode; expected a list of "
                                             + ", ".join(MODES))
    if not names:
        raise argparse.ArgumentTypeError(f"'{text}' names no mode")
    return ",".join(dict.fromkeys(names))


def grid_type(text):
    p, _, q = text.partition("x")
    if text != "auto" and not (p.isdigit() and q.isdigit() and int(p) >= 1 and int(q) >= 1):
        raise argparse.ArgumentTypeError(f"'{text}' is not a process grid; expected PxQ or auto")
    return text


def register(sub):
    p = sub.add_parser("cholesky", help="tiled Cholesky: flat sends against dynamic broadcasts",
                       description="GFlop/s of a tiled Cholesky on jostle's task runtime, with "
                                   "flat sends and with dynamic broadcasts (jt_dbcast).",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("problem")
    _common.bench_option(g, "cholesky", "n", type=_common.positive_int,
                   help=f"matrix order (default {DEFAULT('n')}; simulated {SIM_N})")
    _common.bench_option(g, "cholesky", "tile", type=_common.positive_int,
                   help=f"tile order, must divide N (default {DEFAULT('tile')}; simulated {SIM_TILE})")
    _common.bench_option(g, "cholesky", "grid", type=grid_type, default=DEFAULT("grid"))
    _common.bench_option(g, "cholesky", "modes", type=modes_type, default=DEFAULT("modes"))
    _common.bench_option(g, "cholesky", "datatype", default=DEFAULT("datatype"))
    _common.bench_option(g, "cholesky", "routing",
                   help=f"routing of the dbcast mode (default {DEFAULT('routing')}; simulated "
                        "binomial: the pipelines' many segment flows make SMPI's network model "
                        "slow)")
    _common.bench_option(g, "cholesky", "workers", type=_common.nonneg_int)
    _common.bench_option(g, "cholesky", "matrix", default=DEFAULT("matrix"))
    g.add_argument("--ranks", type=_common.ranks_type, default=2, metavar="N", help="real ranks (default 2)")
    g.add_argument("--hosts", type=_common.hosts_type, metavar="A,B", help="hosts of a real run")
    # A runtime's polling turn (a window of MPI_Test, its queues) costs about a microsecond:
    # with SIM_CFG's fixed test cost, 1 µs instead of 0.1 gives the same GFlop/s within 1%
    # (16 nodes: 1231/1241 against 1231/1241 flat-ordered/dbcast) in a third of the real time.
    s = simulation.add_options(p, "100Gf", "speed of a node's core, flop/s: the kernels' "
                                        "modelled rate", poll_default=1e-6, noise=True)
    s.add_argument("--kernel-rates", metavar="measure|LIST",
                   help="each kernel's GFlop/s per simulated core instead of --speed: "
                        "'measure' times them here on the tile size (jostle-bench "
                        "tile-kernels, native build), or potrf=R,trsm=R,syrk=R,gemm=R")
    s.add_argument("--cores-per-node", type=_common.positive_int, default=1, metavar="C",
                   help="cores per simulated node, each running one worker (default 1; the "
                        "seed's nodes: --cores-per-node 16)")
    r = p.add_argument_group("outside reference")
    r.add_argument("--starpu", action="store_true",
                   help="also run StarPU-MPI's mpi_cholesky (starpu-examples) on the same N, "
                        "tile and ranks, recorded as run <name>-starpu")
    r.add_argument("--starpu-reps", type=_common.positive_int, default=3, metavar="N",
                   help="mpi_cholesky launches, one factorization each (default 3)")
    r.add_argument("--starpu-bin", metavar="PATH", help=f"mpi_cholesky (default {starpu.MPI_CHOLESKY})")
    h = p.add_argument_group("repetitions")
    h.add_argument("--min-reps", type=_common.positive_int, metavar="N",
                   help="factorizations per mode at least (default 5; simulated 1: deterministic)")
    h.add_argument("--max-time", type=_common.positive_float, metavar="S", help="time cap per mode")
    h.add_argument("--warmup", type=_common.nonneg_int, metavar="N", help="untimed factorizations first")
    _common.add_runs_option(h)
    _common.add_launch_options(p)
    _common.add_output_options(p, campaign_default="cholesky")
    p.add_argument("--name", type=_common.name_type, help="run name (default cholesky-<ranks>r-<hash of the options>: the same command resumes)")
    p.add_argument("--dry-run", action="store_true", help="print the command lines and exit")
    p.set_defaults(func=main)


def main(args):
    simulation.check_simulation(args)
    if args.simulate:
        runs, config = simulate(args)
        return _common.run_campaign(args, runs, config=config, jobs=args.jobs)
    settings = _common.settings(study.Settings, args)
    # the reference is found before anything launches: a dry run refuses what the run would
    starpu_exe = starpu.find(args.starpu_bin) if args.starpu or args.starpu_bin else None
    runs = study.plan(settings)
    base = dataclasses.replace(settings, runs=1)   # the reference is named for the run itself
    after = (_starpu_reference(args, study.plan(base)[0].name, runs[0].args, starpu_exe)
             if args.starpu else None)
    return _common.run_campaign(args, runs, after)


def _starpu_reference(args, name, run_args, starpu_exe):
    """What runs after the campaign with --starpu: StarPU-MPI's mpi_cholesky on the same matrix,
    its records beside the runs (kept when complete, as a run is)."""
    def reference(camp, config, progress):
        if args.datatype != "float":
            progress.note("StarPU-MPI's mpi_cholesky computes in float: compare it with "
                          "--datatype float (this run is in double)")
        n, nb = int(run_args[1]), int(run_args[3])
        ref = camp.dir / f"{name}-starpu.jsonl"
        if ref.exists():
            progress.note(f"{ref}: already complete, skipped")
        else:
            starpu.run(starpu_exe, config.bench, ref, n=n, tile=nb,
                       ranks=args.ranks, hosts=args.hosts or [], reps=args.starpu_reps,
                       workers=args.workers or 1, progress=progress)
        print(f"jostle: StarPU-MPI reference in {ref}", file=sys.stderr)
        return 0
    return reference


def kernel_rates(args, tile) -> str:
    """--kernel-rates as jostle-bench takes it: given, or measured here by the native build's
    tile-kernels benchmark, one rank, as run tile-kernels-<NB> of the campaign (so a resumed
    sweep keeps the rates its first runs were simulated with)."""
    if args.kernel_rates != "measure":
        # judged by the bench's own reading of it (the native build's --validate: the SimGrid
        # build runs only under smpirun), before any simulation starts
        bench_query.validate(binary.find_bench("auto"), "cholesky", ["--kernel-rates", args.kernel_rates])
        return args.kernel_rates
    native = argparse.Namespace(**{**vars(args), "mpi": "auto", "bench": None, "launcher": None,
                                   "platform": None})
    run = RunSpec(f"tile-kernels-{tile}", "tile-kernels", ["--tile", str(tile)], 1, [], 600)
    camp = Campaign(f"{args.output_dir}/{args.campaign}", [run])
    camp.run(_common.launch_config(native), Progress(), quiet=True)
    pts = load_run(camp.output(run)).points
    g = pts[pts["metric"] == "gflops"].set_index("kernel")["median"]
    print(f"jostle: kernel rates measured here ({camp.output(run)}): "
          + ", ".join(f"{k} {g[k]:.4g}" for k in KERNELS) + " GFlop/s", file=sys.stderr)
    return ",".join(f"{k.lower()}={g[k]:.4g}" for k in KERNELS)


# SMPI's MPI_Test and MPI_Iprobe sleep n × their cost, n one more after every failed test of
# any rank and 1 again after any success (smpi/grow-injected-times, on by default): a runtime
# that polls a window of receives while it waits then stalls for up to milliseconds per turn,
# and its node's next task waits for it (measured: a 2.68 ms GEMM seen to take 3.16 ms on
# average in flat mode, 8 nodes; docs/cholesky.md).  Off, each test costs --poll-cost.
SIM_CFG = ("smpi/grow-injected-times:no",)


def simulate(args):
    if args.starpu:
        raise UsageError("--starpu is not allowed with --simulate: StarPU-MPI runs on real ranks")
    if args.matrix != "spd":
        raise UsageError("--matrix nonspd is not allowed with --simulate: the kernels do not run")
    nodes = simgrid.parse_nodes(args.nodes)
    extra = []
    if args.kernel_rates:
        extra = ["--kernel-rates", kernel_rates(args, args.tile or SIM_TILE)]
    vargs = study.bench_args(_common.settings(study.Settings, args), True) + extra
    return simgrid.plan_sweep(simulation.sweep(args), "cholesky", nodes, vargs, 2.0,
                              variants=[("", vargs, SIM_CFG)])
