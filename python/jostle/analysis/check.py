"""`jostle check`'s measurements and verdicts (docs/check.md): one node, in seconds, against
the reference of its class.

What it measures is a subset of `jostle scan`'s fingerprint (analysis/scan/fingerprint.py), by
the same runs and under the same names, so that a scan (or a `jostle baseline` of one) can
serve as a reference: memory bandwidth on the compute cores (`triad`, over the phase's wall
time: a throttled node shows there), memory latency, the intra-node ping-pong at 8 B and 1 MiB, and
communication under load; beside them the state and link speed of the node's NICs, read from
/sys. This module reads the runs' records into values (studies/check.py plans them for a
time budget), derives a reference and its tolerance from what good nodes measured, and
judges: pure functions, no launching (run/check_node.py measures, commands/check.py decides
what to do with a verdict).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ..errors import JostleError
from ..registry import Registry
from . import scan
from .working_sets import WORKING_SETS, mib, working_sets

# The exit statuses of `jostle check` (docs/check.md): what a scheduler's script reads.
HEALTHY, UNHEALTHY, BAD_INPUT, SKIPPED, TIMEOUT = 0, 1, 2, 3, 124
VERDICTS = {HEALTHY: "healthy", UNHEALTHY: "unhealthy", SKIPPED: "skipped", TIMEOUT: "timeout"}
# Ended by a signal N (SIGTERM, SIGHUP; SIGKILL found by the next check): exit 128 + N.
KILLED = "killed"


def verdict_word(status: int) -> str:
    return VERDICTS.get(status) or (KILLED if status > 128 else "error")


@dataclass(frozen=True)
class Check:
    """A named check: the scan's fingerprint metric it reads (same name, same run, same
    definition; None for the NICs, read from /sys), and the params of the point it judges."""
    name: str
    metric: "scan.NodeMetric | None"
    params: dict


# The checks by name, in the order they are told (a name registered twice is refused).
CHECKS = Registry("check")


def register(name: str, fingerprint: bool = True, **params) -> Check:
    """Check NAME, the scan's fingerprint metric of that name where FINGERPRINT, judged on
    the point of PARAMS."""
    metric = next((m for m in scan.FINGERPRINT if m.name == name), None)
    if fingerprint and metric is None:
        raise JostleError(f"check {name!r}: no fingerprint metric of that name "
                          "(analysis/scan/fingerprint.py)")
    return CHECKS.add(name, Check(name, metric, params))


register("triad", kernel="triad", phase="compute")
register("memory_latency")
register("pingpong_latency", size=8)
register("pingpong_bandwidth", size=1 << 20)
register("latency_under_load")
register("bandwidth_under_load")
NIC = register("nic", fingerprint=False).name

# What the rest reads: the checks that measure, and their fingerprint metrics.
MEASURED = tuple(name for name, c in CHECKS.items() if c.metric)
METRICS = {name: CHECKS[name].metric for name in MEASURED}

# Time (docs/check.md, "Budget"): what a check costs besides its steps (Python and its
# imports, the busy probe, jostle-bench's queries), and each step's start (mpirun, MPI_Init).
# The rest is shared among the steps (SHARES); each step is stopped at the end of its share
# (run.watchdog), so a check ends within its budget on any node.  Inside a share the working
# set is built within SETUP of it (jostle-bench --setup-time cuts the chain or the arrays to
# what this node makes in that time, and records the cut), the points within POINTS of it,
# and the rest is the step's own start and end (freeing, MPI_Finalize).
FIXED_S = 1.5
# A launch's own cost (mpirun, MPI_Init, MPI_Finalize) at least; a class whose reference
# measured more (step_seconds.launch: its launches' wall time less jostle-bench's own) is
# planned with its own, so that a node whose mpirun takes 2 s gives its points their time.
PER_LAUNCH_S = 0.8
LAUNCH = "launch"     # step_seconds' key of the longest launch cost of the reference's runs
SHARES = {"pingpong": 0.15, "memlat": 0.20, "contention": 0.65}
LOAD_SIZES = "4,64M"
# The memory latency's chain on huge pages (jostle-bench --pages): on base pages a walk misses
# the TLB at every line and its page walks, nested in a guest, move with where the kernel
# and the host put the pages: 259-472 ns from check to check where huge pages gave 176-179
# (bench/memlat_pages.py). The scan's fingerprint walks the same.
CHAIN_PAGES = "huge"
PAGES = ("system", "base", "huge")

@dataclass(frozen=True)
class RunOptions:
    """How the runs are made: part of a class's reference (a check measures as its reference
    was measured)."""
    compute_cores: "int | None" = None   # None: jostle-bench's (the free cores of a rank's share)
    oversubscribe: bool = False
    load_sizes: str = LOAD_SIZES
    # The working sets the reference was measured with (None: not yet: jostle-bench's own,
    # cut to the time the step is given); a check measures with the same.
    chain_bytes: "int | None" = None
    array_bytes: "int | None" = None
    chain_pages: str = CHAIN_PAGES   # a class saved before it was chosen: system

    def to_dict(self) -> dict:
        d = {"oversubscribe": self.oversubscribe, "load_sizes": self.load_sizes,
             "chain_pages": self.chain_pages}
        d = d if self.compute_cores is None else {"compute_cores": self.compute_cores, **d}
        return {**d, **{k: getattr(self, k) for k in WORKING_SETS if getattr(self, k)}}

    def way(self) -> "RunOptions":
        """How the runs are made, the working sets aside (what a user chooses)."""
        return replace(self, chain_bytes=None, array_bytes=None)


BUILDS = {bench for bench, *_ in WORKING_SETS.values()}     # the steps that build one


def working_set_notes(runs_by_bench: dict, opts: RunOptions) -> tuple:
    """({benchmark: why its values are not judged}, {the benchmarks of a smaller set}): a run
    whose working set is not the one its reference was measured with (cut to the time this
    check's budget gives it). A smaller set can only flatter the node (more of it cached), so
    a value past its tolerance all the same fails (judge_flattered); a slow node is the one
    whose share builds less."""
    got, notes, smaller = working_sets(runs_by_bench), {}, set()
    for key, (bench, _, _, _) in WORKING_SETS.items():
        want = getattr(opts, key)
        if want and key in got and got[key] != want:
            notes[bench] = (f"not judged: measured with {mib(got[key])} ({key}), its reference "
                            f"with {mib(want)}: the budget's share could not build it on this "
                            "node (a larger --budget, or a reference saved with this one)")
            if got[key] < want:
                smaller.add(bench)
    return notes, smaller


def judge_flattered(name, value, ref, note) -> "Value":
    """VALUE of check NAME measured with a smaller working set than REF's (NOTE: why it is
    not judged otherwise): a failure where it is past the tolerance all the same, else not
    judged."""
    v = judge_value(name, value, ref)
    if v.verdict == "fail":
        v.note = note.replace("not judged: ", "", 1) + "; past its tolerance all the same, " \
            "a smaller set being one that can only flatter it"
        return v
    return judge_value(name, float("nan"), ref, note)


# ---------------------------------------------------------------- values

def values_of(runs_by_bench: dict) -> tuple:
    """({check: value} of the runs of one node (results.Run by benchmark, or a list of the
    launches of one; NaN where not measured), {check: why it is not judged}): the scan's own
    reading of a fingerprint (scan.node_values), the best over a benchmark's launches."""
    launches = {b: r if isinstance(r, list) else [r] for b, r in runs_by_bench.items()}
    values = {name: math.nan for name in MEASURED}
    for k in range(max(map(len, launches.values()), default=0)):
        table = scan.node_values({"node": {b: rs[min(k, len(rs) - 1)]
                                           for b, rs in launches.items()}})
        row = table.iloc[0] if len(table) else {}
        for name in MEASURED:
            v, best = float(row.get(name, math.nan)), values[name]
            if v == v and (best != best or (v < best if METRICS[name].worse > 0 else v > best)):
                values[name] = v
    notes = {}
    run = (launches.get("contention") or [None])[0]
    if run is not None and scan.oversubscribed(run):
        for name in ("latency_under_load", "bandwidth_under_load"):
            notes[name] = ("not judged: the contention run was oversubscribed (a compute "
                           "thread shared a communicating thread's core: a ratio under load "
                           "would be the scheduler's time slice)")
    if run is not None and not values["triad"] == values["triad"]:
        notes["triad"] = "not measured: no compute thread (give the class compute_cores)"
    return values, notes


def errors_of(runs_by_bench: dict) -> dict:
    """{check: the standard uncertainty of the log of its value} of the runs of one node (as
    values_of reads them; the median over a benchmark's launches): the floor of the check's
    repeatability (check_reference.derive)."""
    out = {}
    for name, m in METRICS.items():
        rs = runs_by_bench.get(m.benchmark)
        each = (scan.value_error(r, m) for r in (rs if isinstance(rs, list) else [rs]))
        errs = sorted(e for e in each if e > 0)     # NaN (no interval, no run) left out
        if errs:
            out[name] = errs[len(errs) // 2]
    return out


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
    verdict: str = "not judged"    # pass | fail | not judged | unfinished (its step's share ran out)
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


def judge_value(name, value, ref, note="") -> Value:
    """VALUE of check NAME against REF (a reference dict, or None)."""
    m = METRICS[name]
    v = Value(name, value, m.unit, params=dict(CHECKS[name].params))
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


# A step that did not finish in a share this many times what it took when the reference was
# saved is the node's slowness, not a share too tight: the check fails.  So is a step that
# did not finish in a check that took this many times its reference's start to reach its
# first step (and START_MIN_S more): a node slowed on its CPU (a quota, a throttled core)
# spends its budget starting, leaving its steps shares too short to measure anything.
SLOW_FACTOR = 2.0
START = "start"       # step_seconds' key of the check's own start (Python, probe, queries)
START_MIN_S = 0.5


def unfinished(name, ref, share: float, ref_step: "float | None",
               start: "tuple | None" = None) -> Value:
    """The value of check NAME whose step was stopped at the end of its SHARE (seconds):
    a failure when the share was SLOW_FACTOR times or more the REF_STEP seconds its step took
    when the reference was saved, or when START, (seconds this check took to start, seconds
    its reference's took), is SLOW_FACTOR times or more; else not judged (the verdict: could
    not judge)."""
    m = METRICS[name]
    v = Value(name, None, m.unit, (ref or {}).get("value"), (ref or {}).get("tolerance"),
              (ref or {}).get("worse", ""), params=dict(CHECKS[name].params))
    v.note = f"{m.benchmark} did not finish in its {share:.2g} s share of the budget (stopped)"
    now, then = start or (None, None)
    if ref is not None and ref_step and share >= SLOW_FACTOR * ref_step:
        v.verdict = "fail"
        v.note += f", {share / ref_step:.1f} x the {ref_step:.2g} s it took for the reference"
    elif ref is not None and then and now >= max(SLOW_FACTOR * then, then + START_MIN_S):
        v.verdict = "fail"
        # no quote: the line is SLURM's drain reason (check.slurm_reason blanks quotes)
        v.note += (f" after a start of {now:.2g} s, {now / then:.1f} x the {then:.2g} s it "
                   "took for the reference")
    else:
        v.verdict = "unfinished"
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
        if v.verdict == "fail" and "did not finish" in v.note:
            text = f"jostle: {v.name} too slow: {v.note}"
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
    unfinished = sorted({v.note for v in values if v.verdict == "unfinished"})
    if unfinished:    # the node's fault or a slow start: not told apart, so not judged
        return SKIPPED, ("jostle: could not judge: " + "; ".join(unfinished)
                         + f" ({len(judged)} other checks within tolerance)")
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
