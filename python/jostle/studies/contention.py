"""The contention studies of Swartvagher (COMPAS 2021, SIAM PP22): typed settings → the runs of
`jostle-bench contention`. One run is one configuration (kernel, compute cores, placement, AI)
measured in three phases (compute alone, comm alone, together); a study is the grid of runs:
  fig1      vs compute cores 0..max, 4 B and 64 MiB           (the paper's figure 1)
  fig2      fig1 for the comm thread near/far × data near/far the NIC   (figure 2)
  fig3      vs message size 4 B..64 MiB at one core count      (figure 3)
  fig4      vs arithmetic intensity of triad, 4 B and 64 MiB   (figure 4)
  usecases  cg, gemm and triad at one core count               (the slides' use cases)
The model's calibration (studies/model.py) plans from the same pieces."""

import dataclasses
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

from ..analysis import contention
from ..errors import UsageError
from ..records import benchmarks
from ..run import estimate, launch
from ..run.campaign import RunSpec, repeated
from ..sizes import human, parse_sizes
from ..units import duration
from .flags import check_memory, given_over
from .pingpong import LAUNCHES, launch_budget

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

@dataclass
class Settings:
    """What `jostle contention STUDY` (and `jostle model calibrate`) is told; None: the bench's
    default, or the study's."""
    kernel: str = benchmarks.default("contention", "kernel")
    quick: bool = False
    max_cores: Optional[int] = None      # fig1, fig2: the sweep's top
    cores: Optional[int] = None          # fig3, fig4, usecases: one core count
    stores: Optional[str] = None
    ai: Optional[Fraction] = None
    sizes: Optional[str] = None          # fig3
    ai_list: Optional[list] = None       # fig4
    kernels: Optional[list] = None       # usecases
    ranks: int = 2
    hosts: Optional[list] = None
    comm_core: Optional[str] = None
    comm_mem: Optional[str] = None
    compute_mem: Optional[str] = None
    compute_on: Optional[str] = None
    pairs: Optional[list] = None
    comm_threads: Optional[list] = None
    nic: Optional[str] = None
    phase_time: Optional[float] = None
    repeat: Optional[int] = None
    array_bytes: Optional[str] = None
    min_reps: Optional[int] = None
    max_time: Optional[float] = None
    precision: Optional[float] = None
    oversubscribe: str = "auto"
    timeout: Optional[float] = None
    runs: int = LAUNCHES                 # launches of each run, the point's time shared
    threads_now: Optional[int] = None    # communicating threads of each rank (a flows grid)


def ai_text(ai: Fraction) -> str:
    """What jostle-bench gets: a decimal it can parse (it records the value it executed)."""
    return repr(float(ai)) if ai.denominator != 1 else str(ai.numerator)


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


def oversubscribe_flag(args, machine, n) -> list:
    """The jostle-bench flag that lets N compute threads per rank share cores, when needed."""
    cores, per_host, free = host_share(args, machine)
    needed = n > free            # as jostle-bench decides it
    if needed and args.oversubscribe == "no":
        raise UsageError(
            f"{n} compute core(s) per rank need {per_host * (1 + n)} bound threads on a host with "
            f"{cores} cores ({per_host} rank(s) × (1 comm + {n} compute)); allowed without "
            f"--oversubscribe: at most {max(free, 0)} compute core(s) per rank")
    return ["--oversubscribe"] if needed or args.oversubscribe == "yes" else []


def common_args(args, machine) -> list:
    """The jostle-bench options every run of the study shares (only those given)."""
    out = [*QUICK_ARGS, "--array-bytes", str(quick_array_bytes(machine))] if args.quick else []
    return given_over(out, args, ("stores", "compute_on", "phase_time", "repeat", "array_bytes",
                                    "nic", "min_reps", "max_time", "precision"))


def paper_placement(machine) -> tuple:
    """(comm core, comm mem, compute mem) of the paper's figures 1, 3, 4: the data on the NIC's
    NUMA node, the comm thread on another one. Where there is no such choice (one NUMA node, no
    NIC of known locality) jostle-bench's own defaults are kept."""
    nic_known = any(n.get("numa") is not None for n in machine.get("nics") or [])
    if (machine.get("numa_nodes") or 1) > 1 and nic_known:
        return "far", "near", "near"
    return None, None, None


def placement_args(args, comm_core=None, comm_mem=None, compute_mem=None) -> list:
    """Placement options: the user's, else the study's (COMM_CORE, COMM_MEM, COMPUTE_MEM)."""
    out = []
    for flag, mine in (("--comm-core", comm_core), ("--comm-mem", comm_mem),
                       ("--compute-mem", compute_mem)):
        v = getattr(args, flag[2:].replace("-", "_"), None) or mine
        if v is not None:
            out += [flag, str(v)]
    return out


def estimate_of(args, sizes, phases_per_size=PHASES) -> float:
    """Seconds a run measures at most: each size's comm as a ping-pong sweep, plus every
    phase's minimum time (its start-up not counted, as a ping-pong's estimate)."""
    phase_time = args.phase_time or (0.2 if args.quick else DEFAULT_PHASE_TIME)
    repeat = args.repeat or int(benchmarks.default("contention", "repeat"))
    return (estimate.estimate_sweep(sizes, args.min_reps or (20 if args.quick else None),
                                    args.max_time, benchmark="contention")
            + len(sizes) * phases_per_size * repeat * phase_time)


def timeout_of(args, sizes, phases_per_size=PHASES) -> float:
    """Generous: the run's estimate doubled, and a minute for MPI's start-up."""
    if args.timeout:
        return args.timeout
    return round(60 + 2 * estimate_of(args, sizes, phases_per_size))


def launch_share(k, phase_time=None, max_time=None, min_reps=None, precision=None) -> dict:
    """The phase time, --max-time, --min-reps and --precision of each of K launches of a
    contention point given these in all (None: jostle-bench's defaults): the times and the
    repetitions divided among the launches, the precision widened by √K, as a ping-pong's
    (pingpong.launch_budget), so that the K launches measure about as long as one did."""
    t, p, n, _ = launch_budget(max_time, precision, min_reps, k, bench="contention")
    phase = float(DEFAULT_PHASE_TIME if phase_time is None else phase_time) / k
    return {"phase_time": float(f"{phase:.4g}"), "max_time": t, "min_reps": n, "precision": p}


def per_launch(args, k):
    """ARGS as each of K launches is given them (launch_share of what --quick or the user
    set, else jostle-bench's defaults); K = 1: ARGS as they are."""
    if k <= 1:
        return args
    quick = dict(zip(QUICK_ARGS[::2], QUICK_ARGS[1::2])) if args.quick else {}

    def total(name):
        v = getattr(args, name)
        return quick.get("--" + name.replace("_", "-")) if v is None else v
    return dataclasses.replace(args, **launch_share(k, total("phase_time"), total("max_time"),
                                                     total("min_reps"), args.precision))


def plan(study, args, machine, bench=None) -> list:
    """The runs of STUDY on MACHINE (jostle-bench --machine), in the order they are run: once,
    or once per pairs x threads that talk (--pairs, --comm-threads), named STUDY-…-pN-tT-cNN;
    each launched --runs K times, a point's time shared among them (per_launch)."""
    args = per_launch(args, getattr(args, "runs", 1))
    grid = [(p, t) for p in (getattr(args, "pairs", None) or [None])
            for t in (getattr(args, "comm_threads", None) or [None])]
    if grid == [(None, None)]:
        return _plan(study, args, machine, bench)
    runs = []
    for p, t in grid:
        flows = dataclasses.replace(args, ranks=max(args.ranks, 2 * (p or 1)), threads_now=t)
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
    common = common_args(args, machine)
    paper = paper_placement(machine)
    runs = []

    def add(name, kernel, n, sizes, spec, extra=()):
        a = ["--kernel", kernel, "--compute-cores", str(n), "--sizes", spec, *extra,
             *oversubscribe_flag(args, machine, n), *common]
        runs.append(RunSpec(f"{study}-{name}{nt}-c{n:02d}{suffix}", "contention", a, args.ranks,
                            list(args.hosts or []), timeout_of(args, sizes),
                            estimate=round(estimate_of(args, sizes), 2)))

    ai = ["--ai", ai_text(args.ai)] if getattr(args, "ai", None) is not None else []
    if study == "fig1":
        for n in core_counts(args, machine):
            add(args.kernel, args.kernel, n, both, both_spec, [*ai, *placement_args(args, *paper)])
    elif study == "fig2":
        for core in ("near", "far"):
            for mem in ("near", "far"):
                for n in core_counts(args, machine):
                    add(f"{args.kernel}-core{core}-mem{mem}", args.kernel, n, both, both_spec,
                        [*ai, *placement_args(args, core, mem, mem)])
    elif study == "fig3":
        spec = args.sizes or FIG3_SIZES
        sizes = parse_sizes(spec, bench)
        check_memory(sizes, host_share(args, machine)[1], spec=spec)
        add(args.kernel, args.kernel, fixed_cores(args, machine), sizes, spec,
            [*ai, *placement_args(args, *paper)])
    elif study == "fig4":
        for x in args.ai_list or [Fraction(x) for x in FIG4_AI.split(",")]:
            add(f"triad-ai{float(x):.4g}", "triad", fixed_cores(args, machine), both, both_spec,
                ["--ai", ai_text(x), *placement_args(args, *paper)])
    elif study == "usecases":
        for k in args.kernels or USECASE_KERNELS.split(","):
            add(k, k, fixed_cores(args, machine), both, both_spec, placement_args(args, *paper))
    return repeated(runs, getattr(args, "runs", 1))   # --runs K: K launches (jostle run: 1)


def estimate_note(study, args, runs, machine, bench) -> str:
    """How long STUDY without --quick would take on this machine, from RUNS (its quick runs' records)."""
    startup, measuring = contention.run_costs(runs)
    full = dataclasses.replace(args, quick=False)
    n = len(plan(study, full, machine, bench))
    per_run = startup + QUICK_FACTOR * measuring
    return (f"{study} without --quick would be {n} runs here, about {duration(n * per_run)} "
            f"(per run {startup:.1f} s of start-up plus {QUICK_FACTOR} × the {measuring:.1f} s "
            f"measured, as --quick divides phase time and repetitions by {QUICK_FACTOR})")
