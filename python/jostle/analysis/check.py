"""`jostle check`'s measurements and verdicts (docs/check.md): one node, in seconds, against
the reference of its class.

What it measures is a subset of `jostle scan`'s fingerprint (analysis/scan.py), by the same
runs and under the same names, so that a scan (or a `jostle baseline` of one) can serve as a
reference: memory bandwidth on the compute cores (`triad`, over the phase's wall time: a
throttled node shows there), memory latency, the intra-node ping-pong at 8 B and 1 MiB, and
communication under load; beside them the state and link speed of the node's NICs, read from
/sys. This module plans the runs for a time budget, reads their records into values, derives
a reference and its tolerance from what good nodes measured, and judges: pure functions, no
launching (run/check_node.py measures, commands/check.py decides what to do with a verdict).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from . import scan, stats
from ..errors import UsageError
from ..run.campaign import RunSpec

# The exit statuses of `jostle check` (docs/check.md): what a scheduler's script reads.
HEALTHY, UNHEALTHY, BAD_INPUT, SKIPPED, TIMEOUT = 0, 1, 2, 3, 124
VERDICTS = {HEALTHY: "healthy", UNHEALTHY: "unhealthy", SKIPPED: "skipped", TIMEOUT: "timeout"}

# The checks taken from the scan's fingerprint (same names, same runs, same definitions).
MEASURED = ("triad", "memory_latency", "pingpong_latency", "pingpong_bandwidth",
            "latency_under_load", "bandwidth_under_load")
METRICS = {m.name: m for m in scan.FINGERPRINT if m.name in MEASURED}
NIC = "nic"
CHECKS = (*MEASURED, NIC)

# Time: what a check costs besides its runs' points (Python and its imports, the busy probe,
# jostle-bench's queries), and each launch (MPI start-up, buffers, the memory-latency chain).
FIXED_S = 1.5
PER_LAUNCH_S = 0.8
MIN_MEASURE_S = 1.0
# Each benchmark's share of the measuring time (the scan's own proportions, with more for the
# memory latency, whose chain is built inside its share).
SHARES = {"pingpong": 0.15, "memlat": 0.15, "contention": 0.70}
MEMLAT_ACCESSES = "200000"
# Each point also stops at this many samples: the harness sizes a batch from the first
# samples' speed, and a batch of fast samples that the scheduler then slows (a busy or an
# oversubscribed node) runs past --max-time; fewer samples bound that (at 1 MiB, 5000
# ping-pongs are under a second on a healthy node).
MAX_REPS = "5000"
# The share of the contention's time given to its six points' phases: the rest is for its
# buffers and start-up, and what the points run past their time.
POINTS_SHARE = 0.6
PINGPONG_SIZES = "8,1M"
LOAD_SIZES = "4,64M"

# Tolerances (docs/check.md, "References"): the worse side of the good nodes (their 5th
# percentile, or 95th for what is worse higher) plus a one-sided prediction bound of a check
# from its repeatability (the standard deviation of repeated checks on one node): Student's
# t at FALSE_ALARM (3 sigma's share of a normal) with the degrees of freedom it was learned
# from, never under MIN_TOLERANCE.
FALSE_ALARM = 0.00135
PERCENTILE = 5.0
MIN_TOLERANCE = 0.10


@dataclass(frozen=True)
class RunOptions:
    """How the runs are made: part of a class's reference (a check measures as its reference
    was measured)."""
    compute_cores: "int | None" = None   # None: jostle-bench's (the free cores of a rank's share)
    oversubscribe: bool = False
    load_sizes: str = LOAD_SIZES

    def to_dict(self) -> dict:
        d = {"oversubscribe": self.oversubscribe, "load_sizes": self.load_sizes}
        return d if self.compute_cores is None else {"compute_cores": self.compute_cores, **d}


def benchmarks_of(checks) -> list:
    """The runs CHECKS need, in the order they are made."""
    need = {METRICS[c].benchmark for c in checks if c in METRICS}
    return [b for b in SHARES if b in need]


def measure_time(budget: float, benches) -> float:
    """Seconds of BUDGET left to the points once the fixed costs are paid."""
    return budget - FIXED_S - PER_LAUNCH_S * len(benches)


def min_budget(benches) -> float:
    return FIXED_S + PER_LAUNCH_S * len(benches) + MIN_MEASURE_S


def plan(checks, budget: float, node: str, opts: RunOptions = RunOptions(),
         given: "float | None" = None) -> list:
    """The runs of CHECKS on NODE within BUDGET seconds (what is left of the budget GIVEN;
    their names are the scan's fingerprint runs: fp-BENCHMARK-NODE). A budget too short for
    them is refused."""
    benches = benchmarks_of(checks)
    if not benches:
        return []
    given = budget if given is None else given
    if measure_time(given, benches) < MIN_MEASURE_S:
        raise UsageError(f"--budget {given:g} is too short for {', '.join(benches)}: it needs "
                         f"{min_budget(benches):g} s at least (start-ups and "
                         f"{MIN_MEASURE_S:g} s of measuring)")
    m = max(MIN_MEASURE_S, measure_time(budget, benches))
    total = sum(SHARES[b] for b in benches)
    runs = []
    for b in benches:
        t = m * SHARES[b] / total
        if b == "pingpong":   # two points
            a = ["--sizes", PINGPONG_SIZES, "--min-reps", "20", "--max-reps", MAX_REPS,
                 "--warmup", "5", "--max-time", f"{0.4 * t:.3g}"]
        elif b == "memlat":   # the chain is built inside the share
            a = ["--accesses", MEMLAT_ACCESSES, "--min-reps", "3", "--max-reps", "1000",
                 "--warmup", "1", "--max-time", f"{0.5 * t:.3g}"]
        else:                 # three phases at two sizes
            per = POINTS_SHARE * t / 6
            a = ["--kernel", "triad", "--sizes", opts.load_sizes, "--phases",
                 "compute,comm,together", "--phase-time", f"{per:.3g}", "--min-reps", "10",
                 "--max-reps", MAX_REPS, "--max-time", f"{per:.3g}"]
            if opts.compute_cores is not None:
                a += ["--compute-cores", str(opts.compute_cores)]
            a += ["--oversubscribe"] if opts.oversubscribe else []
        runs.append(RunSpec(f"fp-{b}-{node}", b, a, 1 if b == "memlat" else 2, [],
                            estimate=t + PER_LAUNCH_S))
    return runs


# ---------------------------------------------------------------- values

def values_of(runs_by_bench: dict) -> tuple:
    """({check: value} of the runs of one node (results.Run by benchmark; NaN where not
    measured), {check: why it is not judged}): the scan's own reading of a fingerprint
    (scan.node_values)."""
    table = scan.node_values({"node": runs_by_bench})
    row = table.iloc[0] if len(table) else {}
    values = {name: float(row.get(name, math.nan)) for name in MEASURED}
    notes = {}
    run = runs_by_bench.get("contention")
    if run is not None and scan.oversubscribed(run):
        for name in ("latency_under_load", "bandwidth_under_load"):
            notes[name] = ("not judged: the contention run was oversubscribed (a compute "
                           "thread shared a communicating thread's core: a ratio under load "
                           "would be the scheduler's time slice)")
    if run is not None and not values["triad"] == values["triad"]:
        notes["triad"] = "not measured: no compute thread (give the class compute_cores)"
    return values, notes


# ---------------------------------------------------------------- references

def _quantile(xs, q):
    xs = sorted(xs)
    if len(xs) == 1:
        return xs[0]
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _median(xs):
    return _quantile(xs, 50.0)


def derive(samples: dict, worse: int) -> "dict | None":
    """A reference from SAMPLES ({node: [values of its checks]}) of a metric that is worse
    higher (WORSE +1) or lower (-1): {value, tolerance, spread, repeatability, nodes, checks},
    or None when no node has a value. On the log scale: the value is the median of the nodes'
    medians; spread, how far the worse 5% of the nodes are from it (their 5th percentile, or
    95th); repeatability, the standard deviation of each node's checks around its own mean,
    pooled over the nodes that have two or more; the tolerance is spread + t x
    repeatability x sqrt(1 + 1/n) (t: Student's quantile at 1 - FALSE_ALARM for the pooled
    degrees of freedom, n: the mean number of checks per node: a bound on the next check of
    a good node, wide when it was learned from few), as a fraction of the value, at least
    MIN_TOLERANCE."""
    per_node = {n: [float(v) for v in vs if v is not None and math.isfinite(v) and v > 0]
                for n, vs in samples.items()}
    per_node = {n: vs for n, vs in per_node.items() if vs}
    if not per_node:
        return None
    logs = {n: [math.log(v) for v in vs] for n, vs in per_node.items()}
    medians = [_median(x) for x in logs.values()]
    center = _median(medians)
    edge = _quantile(medians, 100 - PERCENTILE if worse > 0 else PERCENTILE)
    spread = max(0.0, worse * (edge - center))
    # pooled over the nodes: each node's squared deviations from its own mean, over the
    # degrees of freedom left (a robust MAD of three repeats ignores the one that strayed,
    # which is the check's noise all the same)
    ss = sum((x - sum(xs) / len(xs)) ** 2 for xs in logs.values() if len(xs) > 1 for x in xs)
    df = sum(len(xs) - 1 for xs in logs.values() if len(xs) > 1)
    rep = math.sqrt(ss / df) if df else 0.0
    n = sum(len(xs) for xs in logs.values()) / len(logs)
    t = spread + (stats.t_quantile(1 - FALSE_ALARM, df) * rep * math.sqrt(1 + 1 / n) if df else 0.0)
    tolerance = max(MIN_TOLERANCE, math.exp(t) - 1 if worse > 0 else 1 - math.exp(-t))

    def rel(x):
        return math.exp(x) - 1
    return {"value": _sig(math.exp(center)), "tolerance": round(tolerance, 4),
            "spread": round(rel(spread), 4), "repeatability": round(rel(rep), 4),
            "nodes": len(per_node), "checks": sum(len(v) for v in per_node.values()),
            "df": df}


NARROW_DF = 14   # below this many degrees of freedom t is past 3.6 (3.3 at 30): say how to narrow


def narrowing_note(refs: dict) -> str:
    """'' or one line for whoever saved REFS ({check: reference}): learned from few degrees
    of freedom, their tolerances are wide (t of 19.2 for one node of 3 checks), and what
    narrows them."""
    dfs = [r["df"] for r in refs.values() if r.get("df") is not None and "repeatability" in r]
    if not dfs or min(dfs) >= NARROW_DF:
        return ""
    df = min(dfs)
    if df == 0:
        return ("jostle: one check per node: the check's own noise is not known, so the "
                "tolerances hold the nodes' spread alone; --repeat 3 or more measures it "
                "(docs/check.md, References)")
    t = stats.t_quantile(1 - FALSE_ALARM, df)
    return (f"jostle: the tolerances were learned from {df} degree(s) of freedom (Student's "
            f"t {t:.3g}; {stats.t_quantile(1 - FALSE_ALARM, NARROW_DF):.2g} at {NARROW_DF}): "
            "each good node saved, or a larger --repeat, narrows them (docs/check.md, "
            "References)")


def _sig(x, digits=6):
    return float(f"{x:.{digits}g}")


def references_from_samples(nodes: dict, checks=MEASURED) -> dict:
    """{check: reference} from a class's saved samples NODES ({node: {check: [values]}})."""
    out = {}
    for name in checks:
        m = METRICS[name]
        ref = derive({n: s.get(name, []) for n, s in nodes.items()}, m.worse)
        if ref is not None:
            out[name] = {**ref, "unit": m.unit, "worse": "higher" if m.worse > 0 else "lower"}
    return out


def references_from_table(table) -> dict:
    """{check: reference} from node values (scan.node_values or scan.baseline_values: one
    row per node): one value per node, so the tolerance is the spread alone (and the floor)."""
    nodes = {}
    for host, row in table.iterrows():
        nodes[str(host)] = {c: [float(row[c])] for c in MEASURED if c in row and row[c] == row[c]}
    return references_from_samples(nodes)


# ---------------------------------------------------------------- verdicts

@dataclass
class Value:
    name: str
    value: object                 # a number, or for a NIC "up 10000 Mb/s"
    unit: str = ""
    reference: object = None
    tolerance: "float | None" = None
    worse: str = ""
    change: "float | None" = None  # value / reference - 1
    verdict: str = "not judged"    # pass | fail | not judged
    note: str = ""
    params: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        def num(x):
            return None if isinstance(x, float) and not math.isfinite(x) else x
        return {"name": self.name, "value": num(self.value), "unit": self.unit,
                "reference": num(self.reference), "tolerance": self.tolerance,
                "worse": self.worse or None,
                "change": None if self.change is None else round(self.change, 4),
                "verdict": self.verdict, "note": self.note or None, "params": self.params}


PARAMS = {"pingpong_latency": {"size": 8}, "pingpong_bandwidth": {"size": 1 << 20},
          "triad": {"kernel": "triad", "phase": "compute"}}


def judge_value(name, value, ref, note="") -> Value:
    """VALUE of check NAME against REF (a reference dict, or None)."""
    m = METRICS[name]
    v = Value(name, value, m.unit, params=PARAMS.get(name, {}))
    if ref is None:
        v.note = note or "no reference for this check in the class"
        return v
    v.reference, v.tolerance, v.worse = ref["value"], ref["tolerance"], ref["worse"]
    if not (isinstance(value, float) and math.isfinite(value) and value > 0):
        v.value = None
        v.note = note or "not measured"
        return v
    v.change = value / ref["value"] - 1
    worse_by = v.change if ref["worse"] == "higher" else -v.change
    v.verdict = "fail" if worse_by > ref["tolerance"] else "pass"
    v.note = note
    return v


def judge_nics(now: dict, ref: dict) -> list:
    """Each NIC of the reference REF ({name: {state, speed_mbps}}) as it is NOW (the same
    shape; a NIC missing from NOW is missing from the node): it must be there, up, and at
    its reference speed or above."""
    out = []
    for name, r in sorted(ref.items()):
        n = now.get(name)
        want = f"{r.get('state')}" + (f" {r['speed_mbps']} Mb/s" if r.get("speed_mbps") else "")
        v = Value(f"{NIC}:{name}", None, "", want, 0.0, "lower", params={"nic": name})
        if n is None:
            v.value, v.verdict, v.note = "missing", "fail", "the NIC is not on the node"
        else:
            v.value = f"{n.get('state')}" + (f" {n['speed_mbps']} Mb/s" if n.get("speed_mbps") else "")
            if n.get("state") != r.get("state"):
                v.verdict, v.note = "fail", f"state {n.get('state')}, expected {r.get('state')}"
            elif r.get("speed_mbps") and (n.get("speed_mbps") or 0) < r["speed_mbps"]:
                v.verdict = "fail"
                v.change = (n.get("speed_mbps") or 0) / r["speed_mbps"] - 1
                v.note = f"link speed {n.get('speed_mbps') or 'unknown'} Mb/s"
            else:
                v.verdict = "pass"
        out.append(v)
    return out


def _fmt(x) -> str:
    """A number for the one-line reason: 3 significant digits, ASCII only."""
    if isinstance(x, str) or x is None:
        return str(x)
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    if 1e3 <= abs(x) < 1e6:
        return f"{x:.0f}"
    return f"{x:.3g}" if 1e-3 <= abs(x) < 1e3 else f"{x:.2e}"


def _shown(x, unit):
    from ..units import SHOWN
    to, factor = SHOWN.get(unit, (unit, 1.0))
    return (x * factor if isinstance(x, float) else x), to.replace("µ", "u")


def reason(failed: list) -> str:
    """The one line of an unhealthy node: `jostle: CHECK VALUE vs REFERENCE (CHANGE,
    tolerance T)` of the check furthest past its tolerance, and how many more failed."""
    def excess(v):
        if v.change is None:
            return math.inf
        return (v.change if v.worse == "higher" else -v.change) - (v.tolerance or 0)
    worst = sorted(failed, key=excess, reverse=True)
    v = worst[0]
    if v.change is None and not v.name.startswith(NIC + ":"):   # its run failed
        text = f"jostle: {v.name} not measured: {v.note}"
    elif v.name.startswith(NIC + ":"):
        text = f"jostle: {v.name} {v.value} vs {v.reference}"
        if v.change is not None:
            text += f" ({v.change:+.0%}, tolerance 0%)"
    else:
        value, unit = _shown(v.value, v.unit)
        ref, _ = _shown(v.reference, v.unit)
        text = (f"jostle: {v.name} {_fmt(value)} {unit} vs {_fmt(ref)} {unit} "
                f"({v.change:+.0%}, tolerance {v.tolerance:.0%})")
    if len(worst) > 1:
        text += f"; {len(worst) - 1} more: " + ", ".join(w.name for w in worst[1:])
    return text


def verdict(values: list) -> tuple:
    """(exit status, one line) of judged VALUES: unhealthy when any failed; healthy when at
    least one was judged and none failed; a node with nothing judged could not be judged."""
    failed = [v for v in values if v.verdict == "fail"]
    if failed:
        return UNHEALTHY, reason(failed)
    judged = [v for v in values if v.verdict == "pass"]
    if not judged:
        return SKIPPED, "jostle: skipped: nothing could be judged (" + \
            "; ".join(sorted({f"{v.name}: {v.note}" for v in values})[:3]) + ")"
    return HEALTHY, f"jostle: healthy: {len(judged)} checks within tolerance"


def slurm_reason(line: str) -> str:
    """LINE as a SLURM drain reason: it starts with 'jostle:' (what `--slurm` resumes), at
    most 200 characters of plain ASCII (no quote that would end the scontrol argument)."""
    text = "".join(ch if 32 <= ord(ch) < 127 and ch not in "\"'`\\" else " " for ch in line)
    if not text.startswith("jostle:"):
        text = "jostle: " + text
    return text[:200]


# ---------------------------------------------------------------- the scheduler

def slurm_action(status: int, suspect: bool, drained: bool, ours: bool,
                 use_suspect: bool = True) -> tuple:
    """What `--slurm` does with a check's exit STATUS: (action, why). A failure (unhealthy,
    or a time-out) marks the node suspect the first time (SUSPECT: marked by the last judged
    check) and drains it the next; never a node already drained for another reason (an
    operator's: DRAINED and not OURS), whose reason it would overwrite. A pass clears the
    mark and resumes the node only when jostle drained it (its reason starts with jostle:).
    A check that could not judge changes nothing."""
    if status in (UNHEALTHY, TIMEOUT):
        if drained and not ours:
            return "none", "already drained for another reason: left as it is"
        if drained:
            return "none", "already drained by jostle"
        if use_suspect and not suspect:
            return "suspect", "first failure: marked suspect, drained if the next check fails"
        return "drain", "failed again after its suspect run" if use_suspect else "failed"
    if status == HEALTHY:
        if drained and ours:
            return "resume", "passed: resumed (jostle had drained it)"
        if drained:
            return "clear", "passed; drained for another reason: left drained"
        return "clear", "passed"
    return "none", "could not judge: nothing changed"
