"""Which nodes a scan compares on a metric that depends on a working set (docs/scan.md, "One
working set"): each fingerprint's chain and arrays are cut to what its node builds in its
share of --budget, and a 1 MiB chain (inside the caches: 1.3 ns) is another measurement than
a 32 MiB one (84 ns). The nodes measured with the most common size (ties: the largest, the
one closest to what the caches ask for) are judged among themselves. A node measured with a
smaller one is judged against them: a smaller set can only flatter it (more of it in the
caches: a lower latency, a higher triad, less contention), and the test is one-sided, so a
node worse than them is worse; a slow node is the one whose share builds less (a node at 30%
of a core builds an eighth of the others' arrays), and leaving it out would hide it. A node
measured with a larger one is not judged on that metric, and the scan says why. Against a
baseline, a node is judged against the saved nodes measured with its own size, else those
measured with larger ones. A size a run does not record (NaN: an older jostle-bench, a
baseline saved before sizes were kept) goes with any."""

from __future__ import annotations

import math

from ..working_sets import mib, most_common

SAME = "a value is compared only with values of the same working set"
FIX = f"{SAME} (a larger --budget lets every node build the same)"
FIX_BASE = f"{SAME} (a larger --budget, or a baseline saved with this one)"


def _sizes(table, key) -> "list | None":
    """TABLE's KEY column as a list of sizes (None: unknown), or None without the column."""
    if key is None or key not in table:
        return None
    return [int(v) if isinstance(v, (int, float)) and math.isfinite(v) else None
            for v in table[key]]


def _listed(sizes) -> str:
    """'32 MiB (7), 1 MiB (1)': the sizes SIZES, most common first, with their counts."""
    counts = {}
    for s in sizes:
        counts[s] = counts.get(s, 0) + 1
    order = sorted(counts, key=lambda s: (-counts[s], -s))
    return ", ".join(f"{mib(s)} ({counts[s]})" for s in order) or "none"


def common(sizes) -> "int | None":
    """The most common of SIZES that at least two share (ties: the largest); None."""
    return most_common(sizes, least=2)


def split(values, metric, base=None, against="") -> tuple:
    """([(hosts, base rows)], {host: why}): the groups of VALUES' hosts (a table of
    node_values) that are judged on METRIC (scan.NodeMetric), each with the rows of BASE (a
    baseline's node_values, named AGAINST; None: the allocation itself) it is judged against,
    and why each other host is not judged."""
    key = metric.working_set
    hosts = list(values.index)
    mine = _sizes(values, key)
    if base is None:
        if mine is None or len({s for s in mine if s is not None}) <= 1:
            return [(hosts, None)], {}
        chosen = common(mine)
        judged = [h for h, s in zip(hosts, mine) if s in (None, chosen)]
        groups = [(judged, None)] if judged else []
        smaller = [h for h, s in zip(hosts, mine) if None not in (s, chosen) and s < chosen]
        if smaller:     # flattered by its smaller set: judged against the others, one-sided
            groups.append((smaller, values.loc[judged]))
        why = {}
        for i, (h, s) in enumerate(zip(hosts, mine)):
            if s not in (None, chosen) and h not in smaller:
                others = [x for j, x in enumerate(mine) if j != i and x is not None]
                why[h] = (f"not judged: measured with {mib(s)} ({key}), the other nodes with "
                          f"{_listed(others)}; {FIX}")
        return groups, why
    theirs = _sizes(base, key)
    if mine is None or theirs is None or all(s is None for s in theirs):
        return [(hosts, base)], {}
    groups, why = [], {}
    for size in dict.fromkeys(mine):
        members = [h for h, s in zip(hosts, mine) if s == size]
        rows = [s in (None, size) or size is None for s in theirs]
        if not any(rows):   # flattered by its smaller set: against the larger, one-sided
            rows = [s is not None and s > size for s in theirs]
        if any(rows):
            groups.append((members, base[rows]))
            continue
        for h in members:
            why[h] = (f"not judged against baseline {against}: measured with {mib(size)} "
                      f"({key}), the baseline's nodes with "
                      f"{_listed([s for s in theirs if s is not None])}; {FIX_BASE}")
    return groups, why



def of_row(row, keys) -> dict:
    """{key: size} of a node_values ROW for KEYS (those it records)."""
    out = {}
    for k in keys:
        v = row.get(k)
        if isinstance(v, (int, float)) and math.isfinite(v):
            out[k] = int(v)
    return out


def agree(first: dict, again: dict) -> bool:
    """Whether two measurements' working sets ({key: size}) are one: a size either does not
    record goes with any."""
    return all(again[k] == v for k, v in first.items() if k in again)
