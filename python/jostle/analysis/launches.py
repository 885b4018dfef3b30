"""The launch as the unit: one setting measured in K launches (`--runs K`, NAME-r1 … NAME-rK),
summarised per point as what the next launch is expected to show.

Per point (its params, metric and unit):
- median: the median over the launches of each launch's median;
- ci95: the 95% confidence interval over the launches (records.repeats: Student's t with K - 1
  degrees of freedom on the log scale, never narrower than a launch's own interval), widened to
  hold the median where it lies outside;
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
    """Per point of the launches JOBS (the Runs of one setting, in launch order; one is a
    single launch): dicts of params, metric, unit, median, ci95, within, launches, between,
    note, converged; in the order of the first launch's points."""
    jobs = [j for j in jobs if not j.points.empty]
    if not jobs:
        return []
    params = list(dict.fromkeys(p for j in jobs for p in j.param_names))
    per = {}   # point key -> {"row": first row, "meds": [], "within": [], "conv": []}
    for j in jobs:
        for row in j.points.to_dict("records"):
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
    pooled = {}
    together = repeats.pool(jobs) if len(jobs) > 1 else []
    if len(together) == 1:   # the jobs of one setting (NAME-r1 … NAME-rK)
        pooled = {_key(r, params): r for r in together[0].points.to_dict("records")}
    out = []
    for key, p in per.items():
        row, meds = p["row"], p["meds"]
        s = sorted(meds)
        k = len(s)
        median = s[k // 2] if k % 2 else (s[k // 2 - 1] + s[k // 2]) / 2
        pool = pooled.get(key)
        if pool is not None and k > 1:
            lo, hi = _num(pool.get("ci95_lo")), _num(pool.get("ci95_hi"))
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


def headline_metric(points) -> str:
    """The metric a table of POINTS shows: latency where measured, else the first one."""
    metrics = list(dict.fromkeys(p["metric"] for p in points))
    return "latency" if "latency" in metrics else (metrics[0] if metrics else "")


def table(points, launches: int) -> list:
    """The lines of the text table of POINTS (summarise's) for a setting of LAUNCHES launches:
    per point of the headline metric, its median over the launches, the 95% interval over them
    and the within-launch interval beside it, and the note of a point that disagrees."""
    metric = headline_metric(points)
    rows = [p for p in points if p["metric"] == metric]
    if not rows:
        return []
    unit = rows[0]["unit"]
    if launches > 1:
        head = (f"{'size':>9}  {metric + ' (' + unit + ')':>16}  {'95% CI over launches':>24}"
                f"  {'within a launch':>15}")
    else:
        head = f"{'size':>9}  {metric + ' (' + unit + ')':>16}  {'95% CI, this launch':>24}"
    lines = [head]
    for p in rows:
        med, (lo, hi) = p["median"], p["ci95"]
        rel = (hi - lo) / 2 / med * 100 if med > 0 else math.nan
        span = f"{_fmt(lo)}-{_fmt(hi)} ±{rel:.1f}%"
        size = p["params"].get("size", "")
        line = f"{size!s:>9}  {_fmt(med):>16}  {span:>24}"
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
            f"its 95% interval over them, a launch's own interval beside it; {varying} point(s) "
            f"vary between launches beyond their own intervals{stopped}")
