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


# The sizes a sweep is exported at by default (`jostle export --all-sizes`: every size): the
# check's latency and bandwidth sizes (8 B, 1 MiB) and the sizes between and beyond where a
# network's protocols change (4 KiB: a page, eager messages; 64 KiB: rendezvous; 16 MiB: a
# large transfer). A sweep that lacks one keeps its measured size nearest to it (log scale).
NAMED_SIZES = (8, 4096, 65536, 1 << 20, 16 << 20)


def named_sizes(rows, sizes=NAMED_SIZES) -> list:
    """ROWS with, for each series but its size (node, benchmark, metric, unit and the other
    parameters), only the sizes nearest to each of SIZES: a few series per metric, not one per
    size of a sweep. A row without a size is kept."""
    import math

    def key_of(r):
        rest = {k: v for k, v in (r.get("params") or {}).items() if k not in ("size", "rep")}
        return (r["node"], r["benchmark"], r["metric"], r.get("unit") or "",
                json.dumps(rest, sort_keys=True, default=str))

    def size_of(r):
        v = (r.get("params") or {}).get("size")
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 \
            else None
    groups = {}
    for r in rows:
        s = size_of(r)
        if s is not None:
            groups.setdefault(key_of(r), set()).add(s)
    keep = {k: {min(have, key=lambda s, n=n: (abs(math.log(s / n)), s)) for n in sizes}
            for k, have in groups.items()}
    out = []
    for r in rows:
        s = size_of(r)
        if s is None:
            out.append(r)
            continue
        if s in keep[key_of(r)]:
            out.append(r)
    return out
