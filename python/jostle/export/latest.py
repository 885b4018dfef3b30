"""Which values an exporter sends: by default the latest of each series (what a gauge shows
now), or every value selected."""

from __future__ import annotations

import json


def series_key(row: dict) -> tuple:
    params = {k: v for k, v in sorted((row.get("params") or {}).items()) if k != "rep"}
    return (row["node"], row["benchmark"], row["metric"], row.get("unit") or "",
            json.dumps(params, sort_keys=True))


def latest(rows) -> list:
    """The rows of the latest run of each series (ROWS in time order, as the store gives
    them); a run's repetitions of one point (`rep`) all kept, for the caller to pool."""
    last = {}
    for r in rows:
        k = series_key(r)
        if k not in last or (r["time"], r["uid"]) >= (last[k][0]["time"], last[k][0]["uid"]):
            if k in last and last[k][0]["uid"] == r["uid"]:
                last[k].append(r)
            else:
                last[k] = [r]
    return [r for group in last.values() for r in group]


def pooled(rows) -> list:
    """One row per series and run: a run's repetitions (`rep`) pooled by their median."""
    groups = {}
    for r in rows:
        groups.setdefault((series_key(r), r["uid"]), []).append(r)
    out = []
    for group in groups.values():
        if len(group) == 1:
            out.append(group[0])
            continue
        vals = sorted(float(g["median"]) for g in group)
        n = len(vals)
        med = vals[n // 2] if n % 2 else 0.5 * (vals[n // 2 - 1] + vals[n // 2])
        out.append({**group[0], "median": med,
                    "params": {k: v for k, v in group[0]["params"].items() if k != "rep"}})
    return out
