"""The ping-pong study (Zahn 2021, OSU's conventions): typed settings → the `jostle-bench
pingpong` runs, one per state of the buffers and kind of pages (and flows), each launched K
times with the point's budget shared among the launches (the launch is the unit)."""

import dataclasses
import math
from dataclasses import dataclass
from typing import Optional

from ..records import benchmarks
from ..run import estimate
from ..run.campaign import RunSpec, repeated
from ..sizes import cap_sizes, parse_sizes
from .flags import check_memory, default_name, pass_through

# Launches of each run by default: the launch is the unit (docs/statistics.md), and three is the
# fewest whose spread says anything (Student's t with 2 degrees of freedom).
LAUNCHES = 3
# The three sweeps of the ping-pong study (Zahn 2021), and all of them without overlap.
PRESETS = {
    "bytes": "1:1K:1",          # every byte up to 1 KiB
    "fine": "16:20K:16",        # every 16 B up to 20 KiB
    "pow2": "1K:1G",            # powers of two from 1 KiB to 1 GiB
    "seed": "0:1K:1,1040:20K:16,32K:1G",
}
# jostle-bench's stopping rule: its options, passed on when given.
REPETITIONS = ("min-reps", "max-reps", "precision", "target", "max-time", "warmup", "sample-reps",
               "min-sample-ticks")


@dataclass
class Settings:
    sizes: Optional[str] = None
    preset: Optional[str] = None
    mode: Optional[str] = None
    window: Optional[int] = None
    check: bool = False
    statistic: Optional[str] = None
    order: Optional[str] = None
    percentiles: Optional[str] = None
    keep_samples: bool = False
    buffers: Optional[list] = None
    pages: Optional[list] = None
    pairs: Optional[list] = None
    comm_threads: Optional[list] = None
    ranks: int = 2
    hosts: Optional[list] = None
    comm_core: Optional[str] = None
    comm_mem: Optional[str] = None
    topology: Optional[str] = None
    min_reps: Optional[int] = None
    max_reps: Optional[int] = None
    precision: Optional[float] = None
    target: Optional[str] = None
    max_time: Optional[float] = None
    warmup: Optional[int] = None
    sample_reps: Optional[str] = None
    min_sample_ticks: Optional[int] = None
    timeout: Optional[float] = None
    name: Optional[str] = None
    runs: int = LAUNCHES


PASSED = ("window", "comm-core", "comm-mem", "topology", *REPETITIONS, "statistic", "order",
          "percentiles")


def bench_args(args, spec, buffers=None, pairs=None, threads=None, pages=None) -> list:
    """The jostle-bench pingpong options from ours (only those the user gave)."""
    out = ["--sizes", spec, "--mode", mode(args)] + (["--buffers", buffers] if buffers else [])
    out += ["--pages", pages] if pages else []
    out += (["--pairs", str(pairs)] if pairs else []) + (
        ["--comm-threads", str(threads)] if threads else [])
    return (out + pass_through(args, PASSED) + (["--check"] if args.check else [])
            + pass_through(args, ["keep-samples"]))


def mode(args) -> str:
    return args.mode or benchmarks.default("pingpong", "mode")


def flow_grid(args) -> list:
    """(pairs, threads) of each run when --pairs or --comm-threads is given (None: not given);
    jostle-bench judges each (jostle-bench --validate) before any launches."""
    if not args.pairs and not args.comm_threads:
        return []
    return [(p, t) for p in (args.pairs or [None]) for t in (args.comm_threads or [None])]


def plan(args: "Settings", bench) -> list:
    """The runs: one per state of the buffers × kind of pages (× pairs × threads), each
    launched K times (--runs), sizes parsed by BENCH (the one launched)."""
    spec = args.sizes or benchmarks.default("pingpong", "sizes")
    if args.preset:
        spec = PRESETS[args.preset]
        if args.sizes:
            spec = cap_sizes(spec, max(parse_sizes(args.sizes, bench)), bench)
    sizes = parse_sizes(spec, bench)
    hosts = args.hosts or []
    per_host = math.ceil(args.ranks / max(1, len(hosts)))
    check_memory(sizes, per_host, buffers=2 if args.check else 1,
                 option="--preset" if args.preset else "--sizes", spec=spec)
    # one run per state of the buffers and kind of pages: (state, pages, name suffix)
    states = [(st, pg, "".join(f"-{x}" for x, many in ((st, len(args.buffers or []) > 1),
                                                          (pg, len(args.pages or []) > 1)) if many))
              for st in args.buffers or [None] for pg in args.pages or [None]]
    flows = flow_grid(args)
    where = "inter" if len(set(hosts)) > 1 else "intra"
    # the same command resumes its runs (a hash of what is measured, no clock in the name)
    # (the lists of states and kinds in the hash: a run with --buffers cold is not the default's)
    listed = bench_args(args, spec, ",".join(args.buffers or []) or None,
                        pages=",".join(args.pages or []) or None)
    base = args.name or default_name(f"pingpong-{where}-{mode(args)}", listed, args.ranks, hosts)
    one = per_launch(args, args.runs)   # what each of the K launches is given
    sweep = estimate.estimate_sweep(sizes, one.min_reps, one.max_time, args.warmup)
    timeout = args.timeout or estimate.estimate_timeout(sizes, one.min_reps, one.max_time,
                                                      args.warmup)
    runs = [RunSpec(f"{base}{suffix}", "pingpong", bench_args(one, spec, st, pages=pg),
                    args.ranks, hosts, timeout, estimate=sweep)
            for st, pg, suffix in states] if not flows else [
        RunSpec(f"{base}{suffix}-p{p or 1}-t{t or 0}", "pingpong",
                bench_args(one, spec, st, p, t, pg), max(args.ranks, 2 * (p or 1)), hosts,
                timeout, estimate=sweep)
        for st, pg, suffix in states for p, t in flows]
    return repeated(runs, args.runs)


def per_launch(args, k):
    """ARGS as each of K launches is given them (launch_budget): a point's --max-time,
    --min-reps and --max-reps divided among the launches, its --precision widened by √K (a
    launch then takes about 1/K of the samples; the interval over the K launches is what is
    reported), so that the K launches together take about the time of one. K = 1: ARGS as
    they are."""
    if k <= 1:
        return args
    t, p, n, m = launch_budget(args.max_time, args.precision, args.min_reps, k, args.max_reps)
    return dataclasses.replace(args, max_time=t, precision=p, min_reps=n, max_reps=m)


# A launch's --min-reps is not divided below this (nor above what was asked).
MIN_LAUNCH_REPS = 20
# The samples a point's K launches take together at most unless --max-reps says otherwise:
# the round trips OSU's osu_latency times at a message above 8 KiB by default (1 000; 10 000
# below), so that no point of the sweep costs more than OSU's loop spends on it, and a point
# whose samples do not reach the precision (correlated, drifting) gives its time to the launches,
# whose spread is what is reported (docs/statistics.md, "The sweep's time").
OSU_ITERATIONS = 1000
# A point's time in each launch unless --max-time is given: about the two-stage optimum
# (Cochran, Sampling Techniques, 3rd ed., §10.6) of a launch's time on a point, (σ/τ)·√(S·c),
# at the costliest point of the default sweep on the 2-core guest: 0.066-0.09 s at 4 MiB (σ the
# samples' spread as a launch's median sees it, 20-34%, τ the launches' 4-10%, a launch's start
# S 0.35 s, a sample c 1-1.2 ms). More narrows a launch's median far below the launches'
# spread, which is what is reported; 0.07 s, alternated with 0.1 s against OSU, lost spread
# and coverage (docs/validation.md). Cheaper points stop at their precision or --max-reps first.
LAUNCH_TIME = 0.1


def launch_budget(max_time, precision, min_reps, k, max_reps=None, bench="pingpong",
                  floor=None) -> tuple:
    """(--max-time, --precision, --min-reps, --max-reps) of each of K launches of a point of
    jostle-bench BENCH given MAX_TIME, PRECISION, MIN_REPS and MAX_REPS in all (None: BENCH's
    defaults; a ping-pong's --max-reps: OSU_ITERATIONS, its --max-time: LAUNCH_TIME a launch at
    most, its --min-reps not below FLOOR, by default MIN_LAUNCH_REPS). A contention phase's are
    divided as they are (FLOOR 1): at 64 MiB its repetitions, not its time, make the point's
    length (20 round trips of 27 ms on the 2-core guest against a 0.2 s phase), which a floor
    would multiply by K; `jostle nuioa --quick`'s 20 samples a point likewise (FLOOR 1: a 4 MiB
    put's 20 windows took 1.5 s, its 0.2 s notwithstanding)."""
    def given(v, name):
        return float(benchmarks.default(bench, name)) if v is None else float(v)
    total, wanted, reps = given(max_time, "max-time"), given(precision, "precision"), \
        int(given(min_reps, "min-reps"))
    osu = bench == "pingpong"   # OSU's conventions are the ping-pong's, not a phase's
    floor = floor if floor is not None else MIN_LAUNCH_REPS if osu else 1
    least = max(math.ceil(reps / k), min(reps, floor))
    most = math.ceil((OSU_ITERATIONS if max_reps is None and osu else given(max_reps, "max-reps"))
                     / k)
    per = total / k if max_time is not None or not osu else min(total / k, LAUNCH_TIME)
    return (float(f"{per:.4g}"), float(f"{min(0.5, wanted * math.sqrt(k)):.4g}"),
            least, max(most, least))


def launch_options(max_time, k) -> list:
    """The jostle-bench options of each of K launches of a sweep of MAX_TIME a point (the
    others at their defaults in all): `jostle run`'s ping-pong step."""
    t, p, n, m = launch_budget(max_time, None, None, k)
    return ["--max-time", str(t), "--precision", str(p), "--min-reps", str(n), "--max-reps",
            str(m)]
