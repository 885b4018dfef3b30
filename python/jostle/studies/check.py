"""`jostle check`'s runs (docs/check.md): the steps of the checks asked for on one node, each
given its share of the time budget (what a check costs besides its steps, each launch's start,
then the shares), named as the scan's fingerprint runs so that a scan can serve as a
reference. The measurements' definitions, the budget's fixed costs and shares and a class's
run options are analysis/check.py's; judging the values is too."""

from ..analysis.check import FIXED_S, METRICS, PER_LAUNCH_S, SHARES, WORKING_SETS, RunOptions
from ..errors import UsageError
from ..run.campaign import RunSpec

MIN_MEASURE_S = 1.0
# The ping-pong is launched twice and judged by the better launch (the lower latency, the
# higher bandwidth): a launch now and then lands on a slow state (at 8 B on a guest, one
# launch in 5-20 is 17-60% slower than the others, docs/check.md), which the better of two
# skips, while a node gone slow is slow at both.
LAUNCHES = {"pingpong": 2}     # at most 2: the second is fp-pingpong-NODE-again
SETUP = {"memlat": 0.45, "contention": 0.25}
# With the reference's working set given, its build may take what the points leave of the
# share (less a tenth): the size changes only when this node makes pages 3-4 times slower
# than when the reference was saved, not when a neighbour slows it by half.
SETUP_GIVEN = {"memlat": 0.65, "contention": 0.45}
POINTS = {"pingpong": 0.7, "memlat": 0.25, "contention": 0.45}
# A sample of the memory latency: 50 000 dependent loads (5-30 ms at 100-600 ns), so that
# its minimum of samples fits a share of a second.
MEMLAT_ACCESSES = "50000"
# Each point also stops at this many samples: the harness sizes a batch from the first
# samples' speed, and a batch of fast samples that the scheduler then slows (a busy or an
# oversubscribed node) runs past --max-time; fewer samples bound that (at 1 MiB, 5000
# ping-pongs are under a second on a healthy node).
MAX_REPS = "5000"
PINGPONG_SIZES = "8,1M"


def benchmarks_of(checks) -> list:
    """The runs CHECKS need, in the order they are made."""
    need = {METRICS[c].benchmark for c in checks if c in METRICS}
    return [b for b in SHARES if b in need]


def _launches(benches) -> int:
    return sum(LAUNCHES.get(b, 1) for b in benches)


def measure_time(budget: float, benches, per_launch: float = PER_LAUNCH_S) -> float:
    """Seconds of BUDGET left to the points once the fixed costs are paid."""
    return budget - FIXED_S - per_launch * _launches(benches)


def min_budget(benches, per_launch: float = PER_LAUNCH_S) -> float:
    return FIXED_S + per_launch * _launches(benches) + MIN_MEASURE_S


def plan(checks, budget: float, node: str, opts: "RunOptions | None" = None,
         given: "float | None" = None, launch_s: "float | None" = None) -> list:
    """The runs of CHECKS on NODE within BUDGET seconds (what is left of the budget GIVEN;
    their names are the scan's fingerprint runs: fp-BENCHMARK-NODE), each with its share as
    its time limit (RunSpec.timeout); a launch costs LAUNCH_S (the class's, measured) where
    that is more than PER_LAUNCH_S. A budget too short for them is refused."""
    benches = benchmarks_of(checks)
    if not benches:
        return []
    opts = opts or RunOptions()
    given = budget if given is None else given
    each = max(PER_LAUNCH_S, launch_s or 0.0)   # a launch's cost
    if measure_time(given, benches, each) < MIN_MEASURE_S:
        spent = given - budget
        raise UsageError(
            f"--budget {given:g} is too short for {', '.join(benches)}: it needs "
            f"{min_budget(benches, each):.3g} s at least ({FIXED_S:g} s to start and probe the node"
            + (f", of which this check took {spent:.2f} s to start here" if spent > 0 else "")
            + f"; {_launches(benches)} launches of {each:.2g} s"
            + (", as its reference measured them" if each > PER_LAUNCH_S else "")
            + f"; {MIN_MEASURE_S:g} s of measuring)")
    m = max(MIN_MEASURE_S, measure_time(budget, benches, each))
    total = sum(SHARES[b] for b in benches)
    runs = []
    for b in benches:
        t = m * SHARES[b] / total
        points = POINTS[b] * t
        if b == "pingpong":   # two points
            a = ["--sizes", PINGPONG_SIZES, "--min-reps", "20", "--max-reps", MAX_REPS,
                 "--warmup", "5", "--max-time", f"{points / 2:.3g}"]
        elif b == "memlat":
            a = ["--accesses", MEMLAT_ACCESSES, "--min-reps", "3", "--max-reps", "1000",
                 "--warmup", "1", "--max-time", f"{points:.3g}", "--pages", opts.chain_pages]
        else:                 # three phases at two sizes
            per = points / 6
            a = ["--kernel", "triad", "--sizes", opts.load_sizes, "--phases",
                 "compute,comm,together", "--phase-time", f"{per:.3g}", "--min-reps", "3",
                 "--max-reps", MAX_REPS, "--max-time", f"{per:.3g}"]
            if opts.compute_cores is not None:
                a += ["--compute-cores", str(opts.compute_cores)]
            a += ["--oversubscribe"] if opts.oversubscribe else []
        given = [(option, getattr(opts, key)) for key, (bench, option, _, _)
                 in WORKING_SETS.items() if bench == b and getattr(opts, key)]
        if b in SETUP:
            a += ["--setup-time", f"{(SETUP_GIVEN if given else SETUP)[b] * t:.3g}"]
        for option, size in given:
            a += [option, str(size)]
        k = LAUNCHES.get(b, 1)
        if k > 1:       # the points' times were the step's: each launch has its part
            a = [f"{float(x) / k:.3g}" if i and a[i - 1] == "--max-time" else x
                 for i, x in enumerate(a)]
        for i in range(k):    # a second launch is named as the scan names its confirmation
            runs.append(RunSpec(f"fp-{b}-{node}" + ("-again" if i else ""), b, a,
                                1 if b == "memlat" else 2, [],
                                timeout=t / k + each, estimate=t / k + each))
    return runs
