"""`jostle overlap`: the overlap of non-blocking collectives with computation (IMB-NBC, as in
Taboada, COMPAS 2016), as a resumable campaign of `jostle-bench overlap` runs: one run per
(MPI library, rank policy, progress mode, progress-thread core, number of ranks), every
collective and size inside
it; then the heat maps (ranks × size, colour = overlap) and the times versus size."""

import argparse
import os

from ..records import benchmarks
from .. import figures
from ..run import bench_query, launch
from ..run.campaign import Campaign
from ..errors import UsageError
from ..figures import overlap as overlap_figures
from ..records.results import load_run
from ..studies import overlap as study
from . import _common
from .run import Step

ORDER = 25
STUDY = True
COLLECTIVES, POLICIES, MODES = study.COLLECTIVES, study.POLICIES, study.MODES
THREAD_CORES, SEED_COLLECTIVES, QUICK = study.THREAD_CORES, study.SEED_COLLECTIVES, study.QUICK

EXAMPLES = """examples:
  jostle overlap --quick                                    2..cores ranks, a first look
  jostle overlap --ranks 2,4,8 --policy scatter,numa --progress-mode none,thread
  jostle overlap --hosts n1,n2,n3,n4 --ranks 4:32:4 --policy scatter,numa \\
                 --progress-mode thread --thread-core bind,numa  the seed's figure 3
  jostle overlap --kernel triad --collectives ialltoall --sizes 1K:4M

Runs: OUTPUT-DIR/CAMPAIGN/overlap-<mpi>-<policy>-<mode>[-<thread core>]-<kernel>-nNN.jsonl
(a run already there with other options is refused, never passed off as this one); figures in
OUTPUT-DIR/CAMPAIGN/figures/. The colour is overlap_min (the seed's formula, denominator
min(t_pure, t_CPU)); overlap_max (IMB-NBC's printed formula) is recorded too."""


def _choices(allowed, what):
    def check(text):
        vals = [v.strip() for v in text.split(",")]
        bad = [v for v in vals if v not in allowed]
        if bad or not vals:
            raise argparse.ArgumentTypeError(f"'{bad[0] if bad else text}' is not {what}; "
                                             f"allowed: {', '.join(allowed)}")
        return vals
    return check


def ranks_list(text):
    """2,4,8 or A:B (every count) or A:B:S."""
    try:
        if ":" in text:
            parts = [int(x) for x in text.split(":")]
            out = list(range(parts[0], parts[1] + 1, parts[2] if len(parts) > 2 else 1))
        else:
            out = [int(x) for x in text.split(",")]
    except (ValueError, IndexError):
        out = []
    if not out or min(out) < 2:
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected rank counts ≥ 2: "
                                         "2,4,8 or 2:8 or 4:32:4")
    return out


def register(sub):
    p = sub.add_parser("overlap", help="overlap of non-blocking collectives: heat maps ranks × "
                                       "size per placement and progress mode",
                       description=__doc__, epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _options(p)
    p.set_defaults(func=main)


def _options(p):
    g = p.add_argument_group("sweep")
    g.add_argument("--collectives", type=_choices(COLLECTIVES, "a collective"),
                   default=SEED_COLLECTIVES.split(","), metavar="A,B",
                   help=f"collectives (default {SEED_COLLECTIVES}; any of {', '.join(COLLECTIVES)})")
    _common.bench_option(g, "overlap", "sizes", type=_common.spec_type)
    g.add_argument("--ranks", type=ranks_list, metavar="LIST",
                   help="rank counts (default: 2 to the cores of this host, powers of two)")
    g.add_argument("--policy", type=_choices(POLICIES, "a rank policy"), default=["scatter", "numa"],
                   metavar="A,B", help="rank placement policies (default scatter,numa)")
    g.add_argument("--progress-mode", type=_choices(MODES, "a progress mode"),
                   default=["none", "thread"], metavar="A,B",
                   help="none, polling, thread, async (MPICH's own progress thread; MPICH "
                        "builds only) (default none,thread)")
    g.add_argument("--thread-core", type=_thread_cores, default=["numa"], metavar="A,B",
                   help="where a progress thread goes: any of bind, next, numa (algorithm 2), "
                        "or a core number (default numa); each is a configuration")
    _common.bench_option(g, "overlap", "fallback",
                   help="where the library does not grant MPI_THREAD_MULTIPLE, poll instead of "
                        "a progress thread (default: such a run stops with exit 2)")
    _common.bench_option(g, "overlap", "poll-us", type=_common.positive_float)
    _common.bench_option(g, "overlap", "thread-idle")
    _common.bench_option(g, "overlap", "batch", type=_common.positive_int)
    _common.bench_option(g, "overlap", "kernel", default=benchmarks.default("overlap", "kernel"))
    g.add_argument("--both-mpi", action="store_true",
                   help="run every configuration with each of build/openmpi and build/mpich "
                        "(the default unless --mpi, --bench or --launcher chooses one)")
    g.add_argument("--hosts", type=_common.hosts_type, metavar="A,B", help="hosts (default: this one)")
    g.add_argument("--quick", action="store_true",
                   help="20 repetitions, 0.1 s per point, 3 warm-up samples")
    for name, kind in (("min-reps", _common.positive_int), ("max-time", _common.positive_float),
                       ("warmup", _common.nonneg_int)):
        o = benchmarks.option("overlap", name)
        _common.bench_option(g, "overlap", name, type=kind, help=f"{o['help']} (default {o['default']};"
                       f" --quick {QUICK[QUICK.index('--' + name) + 1]})")
    _common.add_runs_option(g)
    g.add_argument("--dry-run", action="store_true", help="print the command lines and exit")
    _common.add_launch_options(p)
    _common.add_output_options(p, campaign_default="overlap")


def _thread_cores(text):
    vals = [v.strip() for v in text.split(",")]
    bad = [v for v in vals if v not in THREAD_CORES and not v.isdigit()]
    if bad or not vals:
        raise argparse.ArgumentTypeError(f"'{bad[0] if bad else text}' is not a progress-thread "
                                         "core; allowed: bind, next, numa or a core number")
    return vals


def configs(args) -> list:
    """[(library name, LaunchConfig)]: each of Open MPI and MPICH whose build is there (the MPI
    library is a dimension of the seed's comparison), unless one build or launcher is chosen
    (--mpi, --bench, $JOSTLE_BENCH, --launcher, --platform) without --both-mpi."""
    chosen = (args.mpi != "auto" or args.bench or os.environ.get("JOSTLE_BENCH")
              or args.launcher or getattr(args, "platform", None))
    if chosen and not args.both_mpi:
        return [_single(args)]
    out = []
    for flavor in ("openmpi", "mpich"):
        try:
            ns = argparse.Namespace(**{**vars(args), "mpi": flavor, "bench": None})
            out.append((flavor, _common.launch_config(ns)))
        except Exception:  # that build is absent: only the ones present are compared
            continue
    if not out and args.both_mpi:
        raise UsageError("--both-mpi: neither build/openmpi nor build/mpich holds a jostle-bench")
    return out or [_single(args)]


def _single(args):
    config = _common.launch_config(args)
    return (bench_query.bench_version(config.bench).get("mpi_flavor", "mpi"), config)


def runs_and_launchers(args) -> list:
    """[(LaunchConfig, RunSpec)] of ARGS on this machine."""
    cfgs = configs(args)
    return study.plan(_common.settings(study.Settings, args), cfgs,
                      int(bench_query.bench_machine(cfgs[0][1].bench).get("cores")
                          or launch.host_cores()))


def _campaign(args, directory):
    """The Campaign of ARGS in DIRECTORY and the launcher of each of its runs."""
    runs = runs_and_launchers(args)
    config_of = {spec.name: config for config, spec in runs}   # each run its own launcher
    return Campaign(directory, [spec for _, spec in runs]), lambda spec: config_of[spec.name]


def draw(paths, outdir) -> list:
    return figures.write(overlap_figures.build([load_run(p) for p in paths]), outdir)


def main(args):
    runs = runs_and_launchers(args)
    config_of = {spec.name: config for config, spec in runs}   # each run its own launcher

    def after(camp, config, progress):
        for p in draw([camp.output(spec) for spec in camp.runs], camp.dir / "figures"):
            print(p)
        return 0
    return _common.run_campaign(args, [spec for _, spec in runs], after,
                          lambda spec: config_of[spec.name])


def _step_args(ctx):
    """`jostle run`'s small sweep (2 and 4 ranks, Ialltoall, none and thread)."""
    p = argparse.ArgumentParser()
    _options(p)
    args = p.parse_args(["--quick", "--ranks", "2,4", "--collectives", "ialltoall",
                         "--sizes", "8,1K,64K,256K", "--policy", "numa", "--fallback"])
    return argparse.Namespace(**{**vars(args), **{k: v for k, v in vars(ctx.args).items()
                                                  if k in ("mpi", "bench", "launcher", "timeout",
                                                           "oversubscribe", "quiet")}})


def step_overlap(ctx):
    camp, config = _campaign(_step_args(ctx), ctx.dir)
    camp.run(config, ctx.progress, quiet=ctx.args.quiet)


def step_runs(ctx):
    return _campaign(_step_args(ctx), ctx.dir)


RUN_STEPS = [Step("overlap", "small overlap sweep: Ialltoall, 2 and 4 ranks, no progress vs a "
                             "progress thread", step_overlap, step_runs, order=40)]
