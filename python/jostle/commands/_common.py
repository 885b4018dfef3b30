"""Options and checks shared by the commands that launch jostle-bench."""

import argparse
import dataclasses
import math
import shutil
import sys
import time
from pathlib import Path

from ..records import benchmarks
from .. import binary
from ..run import bench_query, launch, slurm
from ..run.campaign import Campaign, LaunchConfig, unwritable_dir
from ..run.progress import Progress
from ..errors import UsageError
from ..sizes import parse_bytes
from . import _record


# jostle-bench's largest count (--min-reps, --warmup, …: jt_opt_long's bound in
# src/harness/driver.c); no count of jostle's may go above it either.
MAX_COUNT = 1_000_000_000
# Ranks of one job: far above any machine's, low enough that a typo is not planned.
MAX_RANKS = 1 << 20


def _whole(text, low):
    v = int(text) if text.isascii() and text.strip().lstrip("+-").isdigit() else None
    if v is None or not low <= v <= MAX_COUNT:
        raise argparse.ArgumentTypeError(
            f"{ascii(text) if not text.isprintable() or not text else repr(text)} is not allowed; "
            f"expected a whole number from {low} to {MAX_COUNT}")
    return v


def positive_int(text):
    return _whole(text, 1)


def counts_type(text) -> list:
    """1,2,4: whole numbers from 1 to 64 (pairs or threads that talk, jostle-bench's bound),
    each once, in the order given."""
    try:
        vals = [int(x) for x in text.split(",")]
    except ValueError:
        vals = []
    if not vals or min(vals) < 1 or max(vals) > 64 or len(set(vals)) < len(vals):
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected whole numbers from 1 "
                                         "to 64, each once: 1,2,4")
    return vals


def add_flow_options(g, what, several):
    """--pairs and --comm-threads (jostle-bench's) of a command that launches them."""
    g.add_argument("--pairs", type=counts_type, metavar="N[,N…]",
                   help=f"N pairs at once, rank i with rank i+N (osu_mbw_mr's pairing), 2N ranks "
                        f"at least: {what}; several: {several}")
    g.add_argument("--comm-threads", type=counts_type, metavar="T[,T…]",
                   help=f"T communicating threads per rank (MPI_THREAD_MULTIPLE), thread t with "
                        f"thread t of the partner; several: {several}")


def nonneg_int(text):
    return _whole(text, 0)


def positive_float(text):
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (v > 0 and math.isfinite(v)):
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected a number > 0")
    return v


def precision_type(text):
    v = positive_float(text)
    if v >= 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected a fraction in (0, 1), e.g. 0.01")
    return v


def ranks_type(text):
    v = positive_int(text)
    if v < 2 or v > MAX_RANKS:
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; a ping-pong needs from 2 to "
                                         f"{MAX_RANKS} ranks")
    return v


def hosts_type(text):
    hosts = [h.strip() for h in text.split(",")]
    if not all(h and h.isprintable() and " " not in h for h in hosts):
        raise argparse.ArgumentTypeError(f"{ascii(text)} is not allowed; expected host names "
                                         "separated by commas, e.g. node1,node2")
    return hosts


def add_launch_options(p):
    g = p.add_argument_group("launching")
    g.add_argument("--mpi", choices=("auto", "openmpi", "mpich"), default="auto",
                   help="which build of jostle-bench (build/<mpi>/) and launcher to use; auto "
                        "asks the binary for its MPI (default: auto)")
    g.add_argument("--bench", metavar="PATH",
                   help="the jostle-bench binary (default: $JOSTLE_BENCH, build/openmpi, "
                        "build/mpich, then PATH)")
    g.add_argument("--launcher", metavar="'CMD …'",
                   help="launcher prefix used verbatim instead of the detected one, e.g. "
                        "\"mpirun -np 2 --mca btl self,vader\"")
    g.add_argument("--oversubscribe", choices=("auto", "yes", "no"), default="auto",
                   help="allow more ranks than cores (Open MPI); auto: only when needed")
    g.add_argument("--platform", metavar="FILE.xml",
                   help="run simulated under SimGrid's smpirun on this platform file")
    g.add_argument("--hostfile", metavar="FILE", help="hostfile for smpirun")
    g.add_argument("--srun-mpi", metavar="NAME",
                   help="srun's PMI plugin inside a SLURM job (default: pmix for Open MPI, pmi2 "
                        "for MPICH, among those of `srun --mpi=list`)")
    g.add_argument("--timeout", type=positive_float, metavar="S",
                   help="stop a run that takes longer than S seconds (default: sized from the sweep)")
    g.add_argument("--restart", action="store_true",
                   help="measure an interrupted run from its first point (default: a rerun keeps "
                        "the points of its .partial and measures the others)")


def add_output_options(p, campaign_default):
    """--output-dir, --campaign, --verbose and --record (the command's end calls
    _record.then_campaign or _record.then)."""
    g = p.add_argument_group("output")
    g.add_argument("--output-dir", default="results", metavar="DIR",
                   help="where campaigns are written (default: results)")
    g.add_argument("--campaign", default=campaign_default, metavar="NAME", type=name_type,
                   help=f"campaign directory under --output-dir (default: {campaign_default})")
    g.add_argument("--verbose", action="store_false", dest="quiet",
                   help="print jostle-bench's result tables (default: one line per run; every "
                        "point is in the run's record)")
    g.add_argument("--quiet", action="store_true", help=argparse.SUPPRESS)  # the default now
    _record.add_option(g)


# Launches of one setting (--runs): far above what an interval over launches needs (its
# Student's t is within 3% of the normal's by 30), low enough that a typo is not planned.
MAX_RUNS = 100


def runs_type(text):
    """--runs K: a whole number from 1 to MAX_RUNS."""
    v = int(text) if text.isascii() and text.strip().lstrip("+-").isdigit() else None
    if v is None or not 1 <= v <= MAX_RUNS:
        raise argparse.ArgumentTypeError(
            f"{ascii(text) if not text.isprintable() or not text else repr(text)} is not allowed; "
            f"expected a whole number of launches from 1 to {MAX_RUNS}")
    return v


# --runs of a study that measures in launches by default (the launch as the unit); argparse
# fills in the default
LAUNCHES_HELP = ("launch each run K times (NAME-r1 … NAME-rK, default %(default)s; 1: one "
                 "launch, said so), each point's time and repetitions (a phase's too) divided "
                 "among them and its precision widened by √K, and report per point the median "
                 "over the launches, the 95%% interval the next invocation's median falls in "
                 "and a launch's own interval beside it; at most " + str(MAX_RUNS))


def add_runs_option(group, default=1, help=None):
    """--runs K: each run of the study launched K times (campaign.repeated)."""
    group.add_argument("--runs", type=runs_type, default=default, metavar="K",
                       help=help or "launch each run K times into the campaign (NAME-r1 … "
                            "NAME-rK), each a separate MPI job, so that `jostle compare` "
                            f"measures the variation between jobs (default {default}; at most "
                            f"{MAX_RUNS})")


def bench_option(group, bench, name, help=None, **kw):
    """--NAME as jostle-bench BENCH takes it: metavar, choices, default and help from its
    descriptor (jostle.records.benchmarks), HELP in place of the descriptor's where a study says more.
    The parsed default is None: only what the user gives is passed on (see pass_through), and
    jostle-bench applies its own default."""
    o = benchmarks.option(bench, name)
    text = (help or o["help"]).replace("%", "%%")
    if o["arg"] is None:
        return group.add_argument("--" + name, action="store_true", help=text, **kw)
    if o["default"] is not None and "default" not in text:
        text += f" (default {o['default']})"
    if o["choices"] and "type" not in kw:
        kw.setdefault("choices", o["choices"])
    return group.add_argument("--" + name, metavar=kw.pop("metavar", o["arg"]), help=text, **kw)


def check_per_rank(args, ranks, names=("comm_core", "comm_mem")):
    """A per-rank list (N,N,…) of no more entries than ranks: the extra ones would never be
    used, nor checked."""
    for name in names:
        v = getattr(args, name, None)
        if isinstance(v, str) and "," in v and len(v.split(",")) > ranks:
            raise UsageError(f"--{name.replace('_', '-')} '{v}' lists {len(v.split(','))} "
                             f"values for {ranks} ranks; allowed: one value, or one per rank")


def check_hosts(args):
    """--hosts of no more hosts than --ranks (a host without a rank would never be measured)."""
    hosts = args.hosts or []
    if len(hosts) > args.ranks:
        raise UsageError(f"--hosts names {len(hosts)} hosts for --ranks {args.ranks}; "
                         "allowed: at most one host per rank")


def out_file_type(text):
    """A file jostle will write: checked before any work (its directory must exist and take
    a file), nothing created."""
    p = Path(text)
    why = ("it is empty" if not text else "it is a directory" if p.is_dir()
           else f"'{p.parent}' does not exist" if not p.parent.is_dir()
           else unwritable_dir(p.parent))
    if why:
        raise argparse.ArgumentTypeError(f"{ascii(text)} cannot be written: {why}")
    return text


def out_dir_type(text):
    """A directory jostle will write into (made if missing): checked before any work."""
    why = "it is empty" if not text else unwritable_dir(text)
    if why:
        raise argparse.ArgumentTypeError(f"{ascii(text)} cannot be written: {why}")
    return text


def bytes_type(text):
    """One byte count (sizes.parse_bytes, read as jostle-bench reads it), kept as written (16K)
    for the messages that name it and for jostle-bench, which parses it again."""
    try:
        parse_bytes(text)
    except UsageError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text.strip()


def spec_type(text):
    """A value handed on to jostle-bench (--sizes SPEC): not empty (which would silently mean
    the default), one printable line."""
    if not text or not text.isprintable():
        raise argparse.ArgumentTypeError(f"{ascii(text)} is not allowed; expected a value "
                                         "(leave the option out for its default)")
    return text


def name_type(text):
    """A run or campaign name: one plain file name (no traversal, nothing a shell or a job
    script would read as more than a name)."""
    if (not text or "/" in text or text.startswith(".") or text != text.strip()
            or not text.isprintable() or any(ch in text for ch in "\"'`$;&|*?\\")):
        raise argparse.ArgumentTypeError(
            f"{ascii(text)} is not allowed; expected a plain file name without '/', a leading "
            "'.', spaces at its ends, control characters or any of \"'`$;&|*?\\")
    return text


def bench_of(args):
    """The jostle-bench the command launches (--bench, --mpi): the one that parses its sizes."""
    return binary.find_bench(args.mpi, args.bench)


def launch_config(args) -> LaunchConfig:
    """Binary and launcher from --bench/--mpi/--launcher/--platform (see launch.py)."""
    bench = bench_of(args)
    over = {"auto": "auto", "yes": True, "no": False}[args.oversubscribe]
    restart = bool(getattr(args, "restart", False))
    if args.launcher is not None:
        return LaunchConfig(bench, "custom", prefix=args.launcher, restart=restart)
    if args.platform:
        if not Path(args.platform).is_file():
            raise UsageError(f"--platform '{args.platform}' is not a file")
        return LaunchConfig(bench, "smpirun", exe="smpirun", platform=args.platform,
                            hostfile=args.hostfile, restart=restart)
    flavor = args.mpi if args.mpi != "auto" else bench_query.bench_version(bench).get("mpi_flavor", "other")
    kind, exe = launch.choose_launcher(flavor)
    srun_mpi = getattr(args, "srun_mpi", None)
    if srun_mpi and not shutil.which("srun"):
        raise UsageError(f"--srun-mpi '{srun_mpi}': there is no srun on PATH; the option "
                         "applies to runs started by srun inside a SLURM job")
    if kind == "srun" or srun_mpi:   # checked outside a job too, so a typo shows at once
        srun_mpi = launch.choose_srun_mpi(flavor, slurm.srun_mpi_plugins(), srun_mpi)
    return LaunchConfig(bench, kind, exe=exe, oversubscribe=over,
                        srun_mpi=srun_mpi if kind == "srun" else None, restart=restart)


def run_campaign(args, runs, after=None, config=None, notes=(), jobs=1) -> int:
    """The one end of every study that launches a campaign: the campaign OUTPUT-DIR/CAMPAIGN
    of RUNS, its plan with --dry-run, else NOTES, its runs and where each one's records are,
    then AFTER(campaign, config, progress) for what the study adds (figures, a reference, an
    estimate; its exit status), then the campaign into the results store with --record.
    CONFIG: the LaunchConfig, or a function of the RunSpec (runs of several MPI libraries);
    by default the one of --bench/--mpi/--launcher. JOBS: runs side by side (simulated)."""
    camp = Campaign(f"{args.output_dir}/{args.campaign}", runs)
    config = config or launch_config(args)
    if args.dry_run:
        return camp.dry_run(config, args.quiet)
    for note in notes:
        print(f"jostle: note: {note}", file=sys.stderr)
    progress, t0 = Progress(), time.monotonic()
    camp.run(config, progress, quiet=args.quiet, jobs=jobs)
    for run in runs:
        print(f"jostle: results in {camp.output(run)}", file=sys.stderr)
    print(f"jostle: {len(runs)} run(s) in {camp.dir}, {time.monotonic() - t0:.0f} s",
          file=sys.stderr)
    return _record.then_campaign(args, after(camp, config, progress) if after else 0)


def settings(kind, args):
    """ARGS as the typed settings KIND (a dataclass of a study): the fields ARGS has, the
    dataclass's defaults for the others; a study never sees the namespace."""
    return kind(**{f.name: getattr(args, f.name) for f in dataclasses.fields(kind)
                   if hasattr(args, f.name)})
