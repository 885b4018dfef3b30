"""A store's points as series: one node's one metric over time (docs/history.md).

A series is keyed by node, benchmark, metric, unit and the point's parameters (a repetition
index, `rep`, left out: the repetitions of one run are pooled by their median), with one value
per run: the median the record holds (a check's value). Its orientation (higher or lower is
better) is the benchmark's (jostle-bench --describe), a check's that of the scan's fingerprint
metric of its name.

Which values count (`usable`): a check that was skipped (the node busy), timed out or failed
measured nothing worth a series; a check that judged its node unhealthy did, and stays in the
series (a drift is found from exactly those), but a value the check failed is not a good value
(`good`): references are learned from good values only.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone

from . import drift, scan
from ..records import benchmarks
from ..units import size_label

UNUSABLE_VERDICTS = {"skipped", "timeout", "error"}
_FINGERPRINT = {m.name: m for m in scan.FINGERPRINT}
_LOWER_UNITS = {"us", "ns", "ms", "s", "x"}


def orientation(benchmark: str, metric: str, unit: str) -> str:
    """"higher" or "lower": which way is better."""
    if benchmark == "check" and metric in _FINGERPRINT:
        return "lower" if _FINGERPRINT[metric].worse > 0 else "higher"
    try:
        return benchmarks.metric(benchmark, metric)["better"]
    except KeyError:
        pass
    low = any(w in metric for w in ("latency", "time", "rtt", "overhead")) or unit in _LOWER_UNITS
    return "lower" if low else "higher"


def series_params(params: dict) -> dict:
    return {k: v for k, v in sorted((params or {}).items()) if k != "rep"}


def label(benchmark: str, metric: str, params: dict) -> str:
    """A series as a person names it: `triad`, `pingpong_latency at 8 B` (a check's: its
    name, the size where it has one), `pingpong latency at 8 B (mode=pingpong)`."""
    p = series_params(params)
    size = p.pop("size", None)
    head = metric if benchmark == "check" else f"{benchmark} {metric}"
    if isinstance(size, (int, float)) and not isinstance(size, bool):
        head += f" at {size_label(size)}"
    rest = "" if benchmark == "check" else ", ".join(f"{k}={v}" for k, v in p.items())
    return f"{head} ({rest})" if rest else head


def days(t: str) -> float:
    """An ISO 8601 UTC time as days since the epoch."""
    dt = datetime.fromisoformat(t.replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp() / 86400.0


def usable(p: dict) -> bool:
    return (p.get("verdict") or "") not in UNUSABLE_VERDICTS and \
        isinstance(p.get("median"), (int, float)) and p["median"] > 0 and \
        math.isfinite(p["median"])


def good(p: dict) -> bool:
    """A value references may learn from: usable, and not failed by its check."""
    return usable(p) and not p.get("flagged")


def _key(p: dict) -> tuple:
    return (p["node"], p["benchmark"], p["metric"], p.get("unit") or "",
            json.dumps(series_params(p.get("params")), sort_keys=True))


def series(points, keep=usable) -> list:
    """The drift.Series of POINTS (store rows, time order) that KEEP keeps, one value per run
    (the median of a run's points of one key), each with its points' rows in `rows`."""
    groups = {}
    for p in points:
        if keep(p):
            groups.setdefault(_key(p), {}).setdefault(p["uid"], []).append(p)
    out = []
    for key, runs in groups.items():
        node, bench, metric, unit, params = key
        ordered = sorted(runs.values(), key=lambda rows: (rows[0]["time"], rows[0]["uid"]))
        first = ordered[0][0]
        out.append(drift.Series(
            key=key, node=node, label=label(bench, metric, json.loads(params)), unit=unit,
            better=orientation(bench, metric, unit),
            days=[days(rows[0]["time"]) for rows in ordered],
            values=[_median([r["median"] for r in rows]) for rows in ordered],
            times=[rows[0]["time"] for rows in ordered], cls=first.get("class") or "",
            rows=[rows[0] for rows in ordered],
            lo=[_median([r.get("ci95_lo") for r in rows]) for rows in ordered],
            hi=[_median([r.get("ci95_hi") for r in rows]) for rows in ordered]))
    out.sort(key=lambda s: (s.label, s.node))
    return out


def _median(xs):
    xs = sorted(float(x) for x in xs if x is not None and math.isfinite(float(x)))
    if not xs:
        return math.nan
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def quantile(xs, q: float) -> float:
    """The Q-quantile (0..1) of XS by linear interpolation (as numpy's default)."""
    xs = sorted(float(x) for x in xs)
    if not xs:
        return math.nan
    pos = q * (len(xs) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def band(values) -> dict:
    """The reference band of good values: their median and 5th and 95th percentiles."""
    return {"median": _median(values), "p5": quantile(values, 0.05),
            "p95": quantile(values, 0.95), "n": len(values)}


def summary(all_series, drifts=()) -> list:
    """One row per series: node, class, series, unit, points, first, last, latest, median, p5,
    p95 (of its own values), the latest against its median, and its drift's message."""
    found = {id(t.series): t for t in drifts}
    rows = []
    for s in all_series:
        b = band(s.values)
        t = found.get(id(s))
        rows.append({"node": s.node, "class": s.cls, "series": s.label, "unit": s.unit,
                     "better": s.better, "points": len(s.values), "first": s.times[0],
                     "last": s.times[-1], "latest": s.values[-1], "median": b["median"],
                     "p5": b["p5"], "p95": b["p95"],
                     "latest_vs_median": s.values[-1] / b["median"] - 1 if b["median"] else math.nan,
                     "drift": t.message() if t else ""})
    return rows


def class_bands(all_series) -> dict:
    """{series label: band} over every node's good values of that label (the figure's
    reference band: what the class's nodes measure)."""
    vals = {}
    for s in all_series:
        vals.setdefault(s.label, []).extend(
            v for v, r in zip(s.values, s.rows) if not r.get("flagged"))
    return {k: band(v) for k, v in vals.items() if v}


@dataclass
class View:
    """What a history shows: the store's rows selected, their series, the drifts found (and
    every test made), and each label's class band."""
    rows: list
    series: list
    drifts: list
    tests: list
    bands: dict
    alpha: float
    min_effect: float

    @property
    def method(self) -> str:
        return drift.METHOD.format(alpha=self.alpha) + \
            f"; a change under {self.min_effect:.0%} is not reported"


def view(rows, alpha=drift.ALPHA, min_effect=drift.MIN_EFFECT) -> View:
    """The history of ROWS (Store.points): series, drifts, bands."""
    all_series = series(rows)
    drifts, tests = drift.detect(all_series, alpha, min_effect)
    return View(rows, all_series, drifts, tests, class_bands(all_series), alpha, min_effect)


# ---------------------------------------------------------------- references learned from history

def learnable(rows, drifts=()) -> list:
    """The rows references may learn from: good values (`good`), none of a series at or after
    the start of a drift found in it (DRIFTS: drift tests)."""
    cut = {t.series.key: t.since for t in drifts}
    return [r for r in rows if good(r) and not (
        _key(r) in cut and r["time"] >= str(cut[_key(r)]))]


def check_samples(rows) -> dict:
    """{node: {check: [values]}} of the check values among ROWS (learnable ones)."""
    out = {}
    for r in rows:
        if r["kind"] == "check":
            out.setdefault(r["node"], {}).setdefault(r["metric"], []).append(float(r["median"]))
    return out


_STATS = ("n", "min", "p25", "median", "p75", "p99", "max", "mean", "stddev")


def baseline_entries(rows) -> list:
    """Baseline entries (docs/records.md, "Baselines") of the runs among ROWS (learnable
    ones): per kind of machine and MPI library, one run per node and benchmark whose every
    statistic is the median over that node's runs of it (a node measured on 30 days is one
    draw of the class, as a node of one campaign), named as the runs were (a scan's
    fingerprint fp-BENCHMARK-NODE, so that `scan --baseline` reads it)."""
    from .machines import machine_facts, machine_key
    groups = {}
    for r in rows:
        if r["kind"] != "run":
            continue
        facts = machine_facts({"machine": r.get("machine"), "mpi": r.get("mpi")})
        entry = groups.setdefault(machine_key(facts), {"facts": facts, "runs": {}})
        run = entry["runs"].setdefault((r["node"], r["benchmark"]), {"names": [], "uids": [],
                                                                     "points": {}})
        if r["uid"] not in run["uids"]:
            run["uids"].append(r["uid"])
            run["names"].append(r["name"])
        params = dict(series_params(r.get("params")))
        params.update(ranks=(r.get("mpi") or {}).get("ranks"), nodes=len(r["node"].split(",")))
        key = (r["metric"], r.get("unit") or "", json.dumps(params, sort_keys=True))
        run["points"].setdefault(key, []).append(r)
    out = []
    for key, g in groups.items():
        runs, points = [], []
        for (node, bench), run in sorted(g["runs"].items()):
            name = run["names"][-1]
            stem = f"fp-{bench}-{node}" if name.startswith(f"fp-{bench}-") else name
            runs.append({"file": f"{stem}.jsonl", "digest": "learned-" + "-".join(
                u[-8:] for u in run["uids"])[:64], "learned_from": len(run["uids"])})
            for (metric, unit, params), rs in run["points"].items():
                p = {"run": len(runs) - 1, "benchmark": bench, "metric": metric, "unit": unit,
                     "params": json.loads(params)}
                for s in _STATS:
                    v = _median([x.get(s) for x in rs])
                    p[s] = None if v != v else float(f"{v:.6g}")
                lo, hi = (_median([x.get(k) for x in rs]) for k in ("ci95_lo", "ci95_hi"))
                p["ci95"] = [None if lo != lo else float(f"{lo:.6g}"),
                             None if hi != hi else float(f"{hi:.6g}")]
                points.append(p)
        out.append({"key": key, "machine": g["facts"], "runs": runs, "points": points})
    return out
