"""The launch as the unit: one setting measured in K launches (`--runs K`, NAME-r1 … NAME-rK),
summarised per point as what the next launch is expected to show.

Per point (its params, metric and unit):
- median: the median over the launches of each launch's median;
- ci95: the 95% prediction interval of what the next invocation of the same command will
  report, the median over its own K launches (next_interval: the median ± NEXT95[K] standard
  deviations of the launches' log medians, never narrower than a launch's own interval);
- within: a launch's own 95% interval of its median, as a half-width relative to that median
  (the median over the launches of theirs): what one launch would have claimed;
- launches: each launch's median, in launch order;
- between: "" (the launches agree within their own intervals), "varies" or "bimodal"
  (records.repeats.between), and note: the words a user reads ("varies between launches:
  0.40-0.60 us");
- converged: every launch reached its precision and the launches agree: a point that varies
  between launches is never reported as converged;
- stops: why each launch stopped the point (jostle-bench's "stop": precision, clock, not
  narrowing, two levels, max-time, max-reps; None before it was said);
- levels: the medians of the levels of a launch whose median lay between two (its "levels";
  the first such launch's), the note saying them ("two levels within a launch: 1.02 and 1.18
  us"), never an interval around the valley between them.

Pure functions of the records: no launching, no drawing.
"""

from __future__ import annotations

import json
import math

from ..records import repeats

# The 97.5% point of |m' - m| / s, m and m' the medians of two sets of K independent normal
# draws (this invocation's K launches and the next invocation's), s the standard deviation of
# the first set: the ratio's law is free of the mean and the spread, so that m ± NEXT95[K]·s
# holds m' with probability 95%. K = 2: m' - m over s is Student's t with 1 degree of freedom
# (12.706); K = 3 to 12: 2 000 000 simulated pairs each (docs/statistics.md, "The interval the
# next invocation falls in"; tests/py/test_launch_interval.py simulates them again). Beyond 12:
# t(0.975, K - 1)·√(π/K), the normal median's large-K variance π/(2K) on each side, which lies
# 0.7-3.4% above the simulated point at K = 15 to 100 (a wider interval, never a narrower one).
NEXT95 = {2: 12.706, 3: 3.856, 4: 2.386, 5: 2.006, 6: 1.639, 7: 1.534, 8: 1.338, 9: 1.294,
          10: 1.166, 11: 1.142, 12: 1.049}


def next95(k: int) -> float:
    """NEXT95[K], or its large-K form beyond the table."""
    return NEXT95[k] if k in NEXT95 else repeats.t975(k - 1) * math.sqrt(math.pi / k)


def next_interval(meds, los, his) -> tuple:
    """The 95% interval of the median over K launches that the next invocation will report,
    from this invocation's K launch medians MEDS (their own 95% intervals LOS-HIS): on the
    log scale, the median of MEDS ± next95(K) times their standard deviation, that never taken
    below a launch's own (its interval's half-width over 1.96, the mean of their variances).
    Where a median is not positive (a bandwidth at 0 B): the lowest to the highest interval."""
    k = len(meds)
    if k < 2 or not all(m > 0 and math.isfinite(m) for m in meds):
        return min(los), max(his)
    y = sorted(math.log(m) for m in meds)
    mid = y[k // 2] if k % 2 else (y[k // 2 - 1] + y[k // 2]) / 2
    mean = sum(y) / k
    var = sum((v - mean) ** 2 for v in y) / (k - 1)
    own = [((math.log(h) - math.log(lo)) / (2 * repeats.Z95)) ** 2
           for lo, h in zip(los, his) if lo > 0 and h > 0]
    var = max(var, sum(own) / len(own) if own else 0.0)
    half = next95(k) * math.sqrt(var)
    return math.exp(mid - half), math.exp(mid + half)

def _key(row, params) -> str:
    return json.dumps([row.get(p) if not _missing(row.get(p)) else None for p in params]
                      + [row.get("metric"), row.get("unit")], default=str)


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _num(v):
    return None if _missing(v) else float(v)


def _fmt(v) -> str:
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"


def note(between, unit, meds) -> str:
    """The words of a point whose launches disagree: 'varies between launches: 0.40-0.60 us'
    or 'bimodal across launches: 0.40-0.41 or 0.59-0.60 us'; '' where they agree."""
    if not between:
        return ""
    s = sorted(meds)
    if between == "bimodal":
        y = [math.log(v) for v in s]
        j = max(range(len(s) - 1), key=lambda i: y[i + 1] - y[i])
        groups = [(s[0], s[j]), (s[j + 1], s[-1])]
        return "bimodal across launches: " + " or ".join(
            f"{_fmt(a)}-{_fmt(b)}" for a, b in groups) + f" {unit}"
    return f"varies between launches: {_fmt(s[0])}-{_fmt(s[-1])} {unit}"


def levels_note(levels, unit) -> str:
    """The words of a point whose median lay between two levels in a launch: 'two levels
    within a launch: 1.02 and 1.18 us'; '' where none did."""
    if not levels:
        return ""
    return (f"{'two' if len(levels) == 2 else len(levels)} levels within a launch: "
            + " and ".join(_fmt(v) for v in levels) + f" {unit}")


def stopped_early(points, metric) -> int:
    """Points of METRIC that a launch stopped as more samples could not narrow them (not
    narrowing, two levels): their time went to the next launch."""
    return sum(1 for p in points if p["metric"] == metric
               and any(s in ("not narrowing", "two levels") for s in p.get("stops") or ()))


def summarise(jobs) -> list:
    """Per point of the launches JOBS (the Runs, or records.lines.Lines, of one setting, in
    launch order; one is a single launch): dicts of params, metric, unit, median, ci95,
    within, launches, between, note, converged; in the order of the first launch's points."""
    jobs = [(j.rows, j.param_names) for j in jobs]
    params = list(dict.fromkeys(p for _, names in jobs for p in names))
    per = {}   # point key -> {"row": first row, "meds": [], "within": [], "conv": []}
    for rows, _ in jobs:
        for row in rows:
            med = _num(row.get("median"))
            if med is None:
                continue
            p = per.setdefault(_key(row, params), {"row": row, "meds": [], "within": [],
                                                   "conv": [], "lo": [], "hi": [], "stops": [],
                                                   "levels": None})
            lo, hi = _num(row.get("ci95_lo")), _num(row.get("ci95_hi"))
            lo, hi = (med if lo is None else min(lo, med)), (med if hi is None else max(hi, med))
            p["meds"].append(med)
            p["lo"].append(lo)
            p["hi"].append(hi)
            p["within"].append((hi - lo) / 2 / med if med > 0 else math.nan)
            p["conv"].append(row.get("converged") is not False)
            p["stops"].append(row.get("stop") if isinstance(row.get("stop"), str) else None)
            if p["levels"] is None and isinstance(row.get("levels_median"), list):
                p["levels"] = row["levels_median"]
    out = []
    for p in per.values():
        row, meds = p["row"], p["meds"]
        s = sorted(meds)
        k = len(s)
        median = s[k // 2] if k % 2 else (s[k // 2 - 1] + s[k // 2]) / 2
        if k > 1:
            lo, hi = next_interval(meds, p["lo"], p["hi"])
            between = repeats.between(meds, p["lo"], p["hi"])
        else:   # one launch: its own interval, nothing said of the next
            lo, hi, between = p["lo"][0], p["hi"][0], ""
        lo = median if lo is None else min(lo, median)
        hi = median if hi is None else max(hi, median)
        within = [w for w in p["within"] if math.isfinite(w)]
        unit = row.get("unit") or ""
        words = "; ".join(w for w in (note(between, unit, meds), levels_note(p["levels"], unit))
                          if w)
        out.append({"params": {q: row.get(q) for q in params if not _missing(row.get(q))},
                    "metric": row.get("metric"), "unit": unit, "median": median,
                    "ci95": [lo, hi],
                    "within": sorted(within)[len(within) // 2] if within else None,
                    "launches": meds, "between": between, "note": words,
                    "converged": all(p["conv"]) and not between, "stops": p["stops"],
                    "levels": p["levels"]})
    return out


def interval_kind(launches: int) -> str:
    """What a summary's ci95 is, for LAUNCHES launches."""
    if launches <= 1:
        return "this launch's own 95% confidence interval of its median"
    return (f"95% prediction interval of the next invocation's median over {launches} launches "
            "(docs/statistics.md, \"The interval the next invocation falls in\")")


def headline_metric(points) -> str:
    """The metric a table of POINTS shows: latency where measured, else the first one."""
    metrics = list(dict.fromkeys(p["metric"] for p in points))
    return "latency" if "latency" in metrics else (metrics[0] if metrics else "")


def table(points, launches: int) -> list:
    """The lines of the text table of POINTS (summarise's) for a setting of LAUNCHES launches:
    per point of the headline metric, its median over the launches, the 95% interval of what
    the next invocation will report (next_interval) and the within-launch interval beside it,
    and the note of a point that disagrees."""
    metric = headline_metric(points)
    rows = [p for p in points if p["metric"] == metric]
    if not rows:
        return []
    unit = rows[0]["unit"]
    # a point is its size, and the params that differ between the rows (a contention run's phase)
    extra = [q for q in dict.fromkeys(q for p in rows for q in p["params"]) if q != "size"
             and len({json.dumps(p["params"].get(q), default=str) for p in rows}) > 1]
    labels = [" ".join(str(p["params"].get(q, "")) for q in (*extra, "size")) for p in rows]
    width = max([9, *map(len, labels)])
    name = " ".join((*extra, "size"))
    if launches > 1:
        head = (f"{name:>{width}}  {metric + ' (' + unit + ')':>16}  "
                f"{'95% PI, next invocation':>24}  {'within a launch':>15}")
    else:
        head = f"{name:>{width}}  {metric + ' (' + unit + ')':>16}  {'95% CI, this launch':>24}"
    lines = [head]
    for p, label in zip(rows, labels):
        med, (lo, hi) = p["median"], p["ci95"]
        rel = (hi - lo) / 2 / med * 100 if med > 0 else math.nan
        span = f"{_fmt(lo)}-{_fmt(hi)} ±{rel:.1f}%"
        line = f"{label:>{width}}  {_fmt(med):>16}  {span:>24}"
        if launches > 1:
            w = p["within"]
            line += f"  {'±' + format(100 * w, '.1f') + '%' if w is not None else '-':>15}"
            line += f"  {p['note']}" if p["note"] else ""
        elif p["converged"] is False:
            line += "  not converged" + (f" ({p['note']})" if p["note"] else "")
        lines.append(line)
    return lines


def heading(name, launches: int, varying: int, early: int = 0) -> str:
    """The line above a setting's table; EARLY: the points stopped_early."""
    stopped = (f"; {early} point(s) stopped in a launch when more samples could not narrow "
               "them (docs/statistics.md, \"Stopping\")" if early else "")
    if launches <= 1:
        return (f"{name}: 1 launch (--runs 1): each interval is this launch's own; the next "
                f"launch may land outside it (the default, 3 launches, measures that){stopped}")
    return (f"{name}: {launches} launches, the launch as the unit: the median over launches, "
            f"the 95% interval the next invocation's median falls in (a prediction interval, "
            f"docs/statistics.md), a launch's own interval beside it; {varying} point(s) "
            f"vary between launches beyond their own intervals{stopped}")
