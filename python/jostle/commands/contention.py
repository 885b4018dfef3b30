"""`jostle contention fig1|fig2|fig3|fig4|usecases`: the studies of Swartvagher (COMPAS 2021,
SIAM PP22) as resumable campaigns of `jostle-bench contention` runs, then their figure.

One run is one configuration (kernel, compute cores, placement, AI) measured in three phases
(compute alone, comm alone, together); a study is the grid of such runs:
  fig1      vs compute cores 0..max, 4 B and 64 MiB           (the paper's figure 1)
  fig2      fig1 for the comm thread near/far × data near/far the NIC   (figure 2)
  fig3      vs message size 4 B..64 MiB at one core count      (figure 3)
  fig4      vs arithmetic intensity of triad, 4 B and 64 MiB   (figure 4)
  usecases  cg, gemm and triad at one core count               (the slides' use cases)
"""

import argparse
import dataclasses
import math
import sys
import time
from fractions import Fraction
from pathlib import Path

from ..records import benchmarks
from ..analysis import contention
from .. import figures
from ..run import bench_query, estimate, launch
from ..run.campaign import Campaign, RunSpec, repeated
from ..errors import UsageError
from ..figures import contention as contention_figures
from ..run.progress import Progress
from ..records.results import load_run
from ..sizes import human, parse_sizes
from ..units import duration
from . import _common as c
from . import _record
from .run import Step

ORDER = 20
STUDY = True
KERNELS = benchmarks.choices("contention", "kernel")
MIN_AI = Fraction(1, 12)        # triad: 2 flops per 24 bytes (a, b read, c written)
LATENCY_SIZE, BANDWIDTH_SIZE = 4, 64 << 20   # the paper's latency and bandwidth messages
FIG3_SIZES = ",".join(str(4 ** k) for k in range(1, 14))      # 4 B, 16 B, … 64 MiB
FIG4_AI = "1/12,1/6,1/3,2/3,4/3,8/3,16/3,32/3,16"               # ×2 steps, log-spaced
USECASE_KERNELS = "cg,gemm,triad"
# --quick divides the phase time, the repetitions and the time cap by QUICK_FACTOR (from
# jostle-bench's defaults), so the default mode costs about QUICK_FACTOR × the measuring time
# of a quick run.
QUICK_FACTOR = 5
QUICK_ARGS = ["--phase-time", "0.2", "--min-reps", "20", "--max-time", "0.4"]
QUICK_ARRAY = 8 << 20


def quick_array_bytes(machine) -> int:
    """--quick's arrays per compute thread: small (short phases), but twice the last-level
    cache where a thread per core of them fits in a quarter of the memory, so that even one
    thread streams from memory and the contention measured is memory contention."""
    llc, cores = machine.get("llc_bytes") or 0, machine.get("cores") or 1
    big = 2 * llc
    fits = big * cores <= (machine.get("memory_bytes") or 0) / 4
    return max(QUICK_ARRAY, big) if fits else QUICK_ARRAY
DEFAULT_PHASE_TIME = float(benchmarks.default("contention", "phase-time"))
PHASES = len(benchmarks.default("contention", "phases").split(","))

STUDIES = {
    "fig1": "latency (4 B) and bandwidth (64 MiB) vs computing cores, alone and together",
    "fig2": "fig1 for the comm thread near/far × data near/far the NIC",
    "fig3": "vs message size (4 B..64 MiB) at one core count",
    "fig4": "vs arithmetic intensity of triad (flop/byte), 4 B and 64 MiB",
    "usecases": "cg, gemm and triad: comm degradation, compute slowdown, stalled cycles",
}

EXAMPLES = """examples:
  jostle contention fig1 --quick                      a few minutes on a laptop
  jostle contention fig1 --hosts n1,n2                the paper's figure 1 on two nodes
  jostle contention fig2 --hosts n1,n2 --max-cores 35
  jostle contention fig3 --cores 35 --hosts n1,n2
  jostle contention fig4 --ai 1/12,1,6,16 --cores 35 --hosts n1,n2
  jostle contention usecases --cores 35 --hosts n1,n2 --dry-run

Runs are written to OUTPUT-DIR/CAMPAIGN/<study>-….jsonl (…-quick.jsonl with --quick) and
the figure to OUTPUT-DIR/CAMPAIGN/figures/. Completed runs are never run again."""


# ---------------------------------------------------------------- option types

def fraction(text) -> Fraction:
    try:
        return Fraction(text.strip()).limit_denominator(10 ** 6)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"'{text}' is not a number; expected e.g. 0.5 or 1/12") from None


def ai_type(text) -> Fraction:
    v = fraction(text)
    if v < MIN_AI:
        raise argparse.ArgumentTypeError(
            f"'{text}' is not allowed: the arithmetic intensity of triad is at least 1/12 "
            "flop/byte (2 flops per 24 bytes)")
    return v


def ai_list_type(text) -> list:
    return [ai_type(x) for x in text.split(",")]


def kernel_list_type(text) -> list:
    ks = [k.strip() for k in text.split(",")]
    bad = [k for k in ks if k not in KERNELS]
    if bad:
        raise argparse.ArgumentTypeError(f"'{bad[0]}' is not a kernel; allowed: {', '.join(KERNELS)}")
    return ks


def _placement(allowed):
    def check(text):
        if text in allowed or text.isdigit():
            return text
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected "
                                         f"{'|'.join(allowed)} or a number")
    return check


def _ai_text(ai: Fraction) -> str:
    """What jostle-bench gets: a decimal it can parse (it records the value it executed)."""
    return repr(float(ai)) if ai.denominator != 1 else str(ai.numerator)


# ---------------------------------------------------------------- the plan

def host_share(args, machine) -> tuple:
    """(cores of a host, ranks on each host, free cores of each rank: its share minus the comm thread)."""
    cores = int(machine.get("cores") or launch.host_cores())
    hosts = set(args.hosts or [])
    per_host = math.ceil(args.ranks / len(hosts)) if hosts else args.ranks
    threads = getattr(args, "threads_now", None) or 1   # communicating threads of each rank
    return cores, per_host, cores // per_host - threads


def core_counts(args, machine) -> list:
    """0..--max-cores; by default every free core, or every core where none is free (a laptop)."""
    cores, _, free = host_share(args, machine)
    if args.max_cores is not None and args.max_cores > cores:
        # a thread per core of the host at most: more would measure the scheduler, and a plan
        # of one run per count must stay small
        raise UsageError(
            f"--max-cores {args.max_cores} is more than the {cores} cores of this host "
            f"(jostle-bench --machine); allowed: 0 to {cores} (at most {max(free, 0)} compute "
            "core(s) per rank without oversubscribing)")
    top = args.max_cores if args.max_cores is not None else (free if free >= 1 else cores)
    return list(range(top + 1))


def fixed_cores(args, machine) -> int:
    cores, _, free = host_share(args, machine)
    return args.cores if args.cores is not None else max(free, 1)


def _oversubscribe(args, machine, n) -> list:
    """The jostle-bench flag that lets N compute threads per rank share cores, when needed."""
    cores, per_host, free = host_share(args, machine)
    needed = n > free            # as jostle-bench decides it
    if needed and args.oversubscribe == "no":
        raise UsageError(
            f"{n} compute core(s) per rank need {per_host * (1 + n)} bound threads on a host with "
            f"{cores} cores ({per_host} rank(s) × (1 comm + {n} compute)); allowed without "
            f"--oversubscribe: at most {max(free, 0)} compute core(s) per rank")
    return ["--oversubscribe"] if needed or args.oversubscribe == "yes" else []


def _common(args, machine) -> list:
    """The jostle-bench options every run of the study shares (only those given)."""
    out = [*QUICK_ARGS, "--array-bytes", str(quick_array_bytes(machine))] if args.quick else []
    return c.given_over(out, args, ("stores", "compute_on", "phase_time", "repeat", "array_bytes",
                                    "nic", "min_reps", "max_time", "precision"))


def paper_placement(machine) -> tuple:
    """(comm core, comm mem, compute mem) of the paper's figures 1, 3, 4: the data on the NIC's
    NUMA node, the comm thread on another one. Where there is no such choice (one NUMA node, no
    NIC of known locality) jostle-bench's own defaults are kept."""
    nic_known = any(n.get("numa") is not None for n in machine.get("nics") or [])
    if (machine.get("numa_nodes") or 1) > 1 and nic_known:
        return "far", "near", "near"
    return None, None, None


def _placement_args(args, comm_core=None, comm_mem=None, compute_mem=None) -> list:
    """Placement options: the user's, else the study's (COMM_CORE, COMM_MEM, COMPUTE_MEM)."""
    out = []
    for flag, mine in (("--comm-core", comm_core), ("--comm-mem", comm_mem),
                       ("--compute-mem", compute_mem)):
        v = getattr(args, flag[2:].replace("-", "_"), None) or mine
        if v is not None:
            out += [flag, str(v)]
    return out


def _timeout(args, sizes, phases_per_size=PHASES) -> float:
    """Generous: each size's comm as a ping-pong sweep, plus every phase's minimum time, doubled."""
    if args.timeout:
        return args.timeout
    phase_time = args.phase_time or (0.2 if args.quick else DEFAULT_PHASE_TIME)
    repeat = args.repeat or int(benchmarks.default("contention", "repeat"))
    base = estimate.estimate_timeout(sizes, args.min_reps or (20 if args.quick else None),
                                   args.max_time, benchmark="contention")
    return round(base + 2 * len(sizes) * phases_per_size * repeat * phase_time)


def plan(study, args, machine, bench=None) -> list:
    """The runs of STUDY on MACHINE (jostle-bench --machine), in the order they are run: once,
    or once per pairs x threads that talk (--pairs, --comm-threads), named STUDY-…-pN-tT-cNN."""
    grid = [(p, t) for p in (getattr(args, "pairs", None) or [None])
            for t in (getattr(args, "comm_threads", None) or [None])]
    if grid == [(None, None)]:
        return _plan(study, args, machine, bench)
    runs = []
    for p, t in grid:
        flows = argparse.Namespace(**{**vars(args), "ranks": max(args.ranks, 2 * (p or 1)),
                                      "threads_now": t})
        for r in _plan(study, flows, machine, bench):
            head, cores = r.name.rsplit("-c", 1)
            extra = (["--pairs", str(p)] if p else []) + (["--comm-threads", str(t)] if t else [])
            runs.append(dataclasses.replace(r, name=f"{head}-p{p or 1}-t{t or 0}-c{cores}",
                                            args=[*r.args, *extra]))
    return runs


def _plan(study, args, machine, bench=None) -> list:
    suffix = "-quick" if args.quick else ""
    nt = "-nt" if getattr(args, "stores", None) == "nt" else ""   # never resumes a normal run
    both = [LATENCY_SIZE, BANDWIDTH_SIZE]
    both_spec = f"{LATENCY_SIZE},{human(BANDWIDTH_SIZE)}"
    common = _common(args, machine)
    paper = paper_placement(machine)
    runs = []

    def add(name, kernel, n, sizes, spec, extra=()):
        a = ["--kernel", kernel, "--compute-cores", str(n), "--sizes", spec, *extra,
             *_oversubscribe(args, machine, n), *common]
        runs.append(RunSpec(f"{study}-{name}{nt}-c{n:02d}{suffix}", "contention", a, args.ranks,
                            list(args.hosts or []), _timeout(args, sizes)))

    ai = ["--ai", _ai_text(args.ai)] if getattr(args, "ai", None) is not None else []
    if study == "fig1":
        for n in core_counts(args, machine):
            add(args.kernel, args.kernel, n, both, both_spec, [*ai, *_placement_args(args, *paper)])
    elif study == "fig2":
        for core in ("near", "far"):
            for mem in ("near", "far"):
                for n in core_counts(args, machine):
                    add(f"{args.kernel}-core{core}-mem{mem}", args.kernel, n, both, both_spec,
                        [*ai, *_placement_args(args, core, mem, mem)])
    elif study == "fig3":
        spec = args.sizes or FIG3_SIZES
        sizes = parse_sizes(spec, bench)
        c.check_memory(sizes, host_share(args, machine)[1], spec=spec)
        add(args.kernel, args.kernel, fixed_cores(args, machine), sizes, spec,
            [*ai, *_placement_args(args, *paper)])
    elif study == "fig4":
        for x in args.ai_list or ai_list_type(FIG4_AI):
            add(f"triad-ai{float(x):.4g}", "triad", fixed_cores(args, machine), both, both_spec,
                ["--ai", _ai_text(x), *_placement_args(args, *paper)])
    elif study == "usecases":
        for k in args.kernels or kernel_list_type(USECASE_KERNELS):
            add(k, k, fixed_cores(args, machine), both, both_spec, _placement_args(args, *paper))
    return repeated(runs, getattr(args, "runs", 1))   # --runs K: K jobs of each (jostle run: 1)


# ---------------------------------------------------------------- the command

def register(sub):
    p = sub.add_parser(
        "contention", help="computation vs communication contention studies (figures 1-4, use cases)",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EXAMPLES,
        description="Plan and run a campaign of jostle-bench contention runs, then draw its "
                    "figure with the degradation of both sides (comm: latency_together/"
                    "latency_alone − 1, 1 − bw_together/bw_alone; compute: 1 − "
                    "computebw_together/computebw_alone).")
    studies = p.add_subparsers(dest="study", metavar="STUDY", required=True)
    for study, text in STUDIES.items():
        s = studies.add_parser(study, help=text, description=text, epilog=EXAMPLES,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
        _options(s, study)
        s.set_defaults(func=main)


def _options(p, study):
    g = p.add_argument_group("study")
    g.add_argument("--quick", action="store_true",
                   help="short phases (0.2 s, 20 repetitions, arrays of twice the last-level "
                        "cache where memory allows, else 8 MiB): a first look, "
                        "and an estimate of the default mode's cost")
    if study in ("fig1", "fig2"):
        g.add_argument("--max-cores", type=c.nonneg_int, metavar="N",
                       help="sweep 0..N compute cores per rank (default: every free core of "
                            "the rank's share of the host; every core where none is free)")
    else:
        g.add_argument("--cores", type=c.positive_int, metavar="N",
                       help="compute cores per rank (default: every free core of its share)")
    if study in ("fig1", "fig2", "fig3"):
        c.bench_option(g, "contention", "kernel", default=benchmarks.default("contention", "kernel"))
        c.bench_option(g, "contention", "stores")
        g.add_argument("--ai", type=ai_type, metavar="F",
                       help="triad's arithmetic intensity, flop/byte (≥ 1/12)")
    if study == "fig3":
        g.add_argument("--sizes", type=c.spec_type, metavar="SPEC",
                       help="message sizes (default: powers of 4, 4 B..64 MiB)")
    if study == "fig4":
        g.add_argument("--ai", dest="ai_list", type=ai_list_type, metavar="F,F…",
                       help=f"intensities of triad, flop/byte, each ≥ 1/12 (default {FIG4_AI})")
    if study == "usecases":
        g.add_argument("--kernels", type=kernel_list_type, metavar="K,K…",
                       help=f"kernels compared (default {USECASE_KERNELS})")
    g.add_argument("--ranks", type=c.ranks_type, default=2, metavar="N", help="ranks (default 2)")
    g.add_argument("--hosts", type=c.hosts_type, metavar="A,B",
                   help="hosts, one rank each in turn (default: this host only)")
    if study != "fig2":   # fig2 is the four placements
        for flag, words, what in (
                ("--comm-core", ("near", "far", "auto"), "core of the communicating thread"),
                ("--comm-mem", ("near", "far", "interleave", "auto"), "NUMA node of its buffers"),
                ("--compute-mem", ("local", "near", "far", "interleave"),
                 "NUMA node of the kernel's arrays (local)")):
            g.add_argument(flag, type=_placement(words), metavar="|".join(words) + "|N", help=what)
    c.bench_option(g, "contention", "compute-on")
    c.add_flow_options(g, "each rank of the pairs with its compute threads",
                       "the study once per count, and the heat map communicating ranks × "
                       "computing cores")
    c.bench_option(g, "contention", "nic")
    h = p.add_argument_group("phases and repetitions")
    for name, kind in (("phase-time", c.positive_float), ("repeat", c.positive_int),
                       ("array-bytes", c.bytes_type), ("min-reps", c.positive_int),
                       ("max-time", c.positive_float), ("precision", c.precision_type)):
        c.bench_option(h, "contention", name, type=kind)
    c.add_launch_options(p)
    c.add_output_options(p, campaign_default="contention")
    c.add_runs_option(h)
    p.add_argument("--dry-run", action="store_true", help="print the command lines and exit")


def _check(args):
    c.check_hosts(args)


def execute(study, args, config, directory, progress, machine) -> Campaign:
    """Plan STUDY and run what is missing of it in DIRECTORY."""
    camp = Campaign(directory, plan(study, args, machine, config.bench))
    camp.run(config, progress, quiet=args.quiet)
    return camp


def draw(camp, outdir) -> list:
    return figures.write(contention_figures.build([load_run(camp.output(s)) for s in camp.runs]), outdir)


def estimate_note(study, args, camp, machine, bench) -> str:
    """How long STUDY without --quick would take on this machine, from the quick runs."""
    runs = [load_run(camp.output(s)) for s in camp.runs]
    startup, measuring = contention.run_costs(runs)
    full = argparse.Namespace(**{**vars(args), "quick": False})
    n = len(plan(study, full, machine, bench))
    per_run = startup + QUICK_FACTOR * measuring
    return (f"{study} without --quick would be {n} runs here, about {duration(n * per_run)} "
            f"(per run {startup:.1f} s of start-up plus {QUICK_FACTOR} × the {measuring:.1f} s "
            f"measured, as --quick divides phase time and repetitions by {QUICK_FACTOR})")


def main(args):
    _check(args)
    study = args.study
    camp_dir = Path(args.output_dir) / args.campaign
    config = c.launch_config(args)
    machine = bench_query.bench_machine(config.bench)
    if args.dry_run:
        return Campaign(camp_dir, plan(study, args, machine, config.bench)).dry_run(config, args.quiet)
    t0 = time.monotonic()
    camp = execute(study, args, config, camp_dir, Progress(), machine)
    paths = draw(camp, camp.dir / "figures")
    for p in paths:
        print(p)
    print(f"jostle: {len(camp.runs)} run(s) in {camp.dir}, {time.monotonic() - t0:.0f} s", file=sys.stderr)
    if args.quick:
        print(f"jostle: {estimate_note(study, args, camp, machine, config.bench)}", file=sys.stderr)
    return _record.campaign(args, 0)


def _step_study(ctx):
    """`jostle run`'s quick fig1: its options and the machine, or None without the benchmark."""
    if "contention" not in bench_query.bench_version(ctx.config.bench).get("benchmarks", []):
        return None
    p = argparse.ArgumentParser()
    _options(p, "fig1")
    args = argparse.Namespace(**{**vars(p.parse_args(["--quick"])), **vars(ctx.args)})
    return args, bench_query.bench_machine(ctx.config.bench)


def step_contention(ctx):
    """`jostle run`: a quick fig1 (triad, 4 B and 64 MiB) in the run's campaign."""
    study = _step_study(ctx)
    if study is None:
        ctx.notes.append(f"{ctx.config.bench} has no contention benchmark: step skipped")
        return
    args, machine = study
    camp = execute("fig1", args, ctx.config, ctx.dir, ctx.progress, machine)
    ctx.notes.append(estimate_note("fig1", args, camp, machine, ctx.config.bench))


def plan_step(ctx):
    study = _step_study(ctx)
    return (Campaign(ctx.dir, plan("fig1", study[0], study[1], ctx.config.bench)), ctx.config
            ) if study else None


RUN_STEPS = [Step("contention", "quick core-count sweep: fig1 --quick (triad, 4 B and 64 MiB)",
                  step_contention, plan_step, order=30)]
