"""`jostle history`'s figures: one per series (a metric at its point), its nodes over time.

Draws what analysis/history.py and analysis/drift.py computed, nothing new: each node's values
with their 95% intervals (where the records hold one), the reference band of the class (the
median and the 5th-95th percentiles of every node's good values), and each drift found, from
the date it starts. With many nodes, the nodes without a drift are thin grey lines, so that the
ones that moved stand out.
"""

from __future__ import annotations

import re
from datetime import datetime

from . import Figure, plt

MAX_FIGURES = 12
MAX_COLOURED = 8      # nodes drawn in colour, with their intervals; the others grey


def _dates(times):
    return [datetime.fromisoformat(t.replace("Z", "+00:00")) for t in times]


def _id(label: str) -> str:
    return "history-" + (re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-").lower() or "series")


def _one(label, group, drifts, band, title_prefix) -> Figure:
    fig, ax = plt.subplots(figsize=(10, 4.2))
    moved = {id(t.series): t for t in drifts}
    coloured = [s for s in group if id(s) in moved]
    rest = [s for s in group if id(s) not in moved]
    if len(group) <= MAX_COLOURED:
        coloured, rest = group, []
    start = min(s.times[0] for s in group)
    end = max(s.times[-1] for s in group)
    if band and band["n"]:
        span = _dates([start, end])
        ax.fill_between(span, band["p5"], band["p95"], color="tab:green", alpha=0.12, lw=0,
                        label="class: 5th-95th percentile of good values")
        ax.plot(span, [band["median"]] * 2, color="tab:green", lw=1, ls="--",
                label="class: median")
    for s in rest:
        ax.plot(_dates(s.times), s.values, color="0.6", lw=0.6, alpha=0.7, zorder=1)
    if rest:
        ax.plot([], [], color="0.6", lw=0.6, label=f"{len(rest)} other nodes")
    for i, s in enumerate(coloured[:MAX_COLOURED * 2]):
        x = _dates(s.times)
        colour = f"C{i % 10}"
        # the interval where the record has one (NaN: none, drawn as no bar)
        err = [[max(0.0, v - a) if a == a else 0.0 for v, a in zip(s.values, s.lo)],
               [max(0.0, b - v) if b == b else 0.0 for v, b in zip(s.values, s.hi)]] \
            if s.lo and s.hi else None
        ax.errorbar(x, s.values, yerr=err, fmt="o-", ms=3, lw=1, capsize=2, color=colour,
                    label=s.node, zorder=3)
        failed = [(d, v) for d, v, r in zip(x, s.values, s.rows) if r.get("flagged")]
        if failed:
            ax.plot(*zip(*failed), "x", color="firebrick", ms=7, zorder=4)
        t = moved.get(id(s))
        if t is not None:
            ax.axvline(_dates([t.since])[0], color=colour, lw=1, ls=":", zorder=2)
            ax.annotate(f"{s.node}: {t.change:+.0%} ({t.shape})".replace("-", "−"),
                        (_dates([t.since])[0], s.values[t.tau]), textcoords="offset points",
                        xytext=(4, 8), fontsize=8, color=colour, zorder=5,
                        bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": colour,
                              "alpha": 0.85})
    unit = group[0].unit
    better = group[0].better
    ax.set_ylabel(f"{label} [{unit}]" if unit else label)
    ax.set_title(f"{title_prefix}{label} ({better} is better)", fontsize=10)
    ax.grid(alpha=0.3)
    fig.autofmt_xdate()
    # beside the axes: "best" would weigh every point of every node, seconds a figure
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    n_drift = sum(1 for s in group if id(s) in moved)
    caption = (f"{label} of {len(group)} node(s), {start[:10]} to {end[:10]}: each point is one "
               "run or check (its median, the bar its 95% interval where the record holds "
               "one; a red x: a value its check failed); the green band is the class's 5th-95th "
               "percentile of good values, the dashed line their median. "
               + (f"{n_drift} node(s) drifted (dotted line: the first point after the change)."
                  if n_drift else "No drift found."))
    return Figure(_id(label), f"History: {label}", caption, fig)


def build(all_series, drifts=(), bands=None, title_prefix="") -> list:
    """The figures of ALL_SERIES (analysis.history.series), one per label, the labels with a
    drift first; at most MAX_FIGURES."""
    by_label = {}
    for s in all_series:
        by_label.setdefault(s.label, []).append(s)
    drifted = {t.series.label for t in drifts}
    order = sorted(by_label, key=lambda k: (k not in drifted, k))
    return [_one(k, by_label[k], [t for t in drifts if t.series.label == k],
                 (bands or {}).get(k), title_prefix) for k in order[:MAX_FIGURES]]
