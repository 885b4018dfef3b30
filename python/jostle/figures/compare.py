"""The figure of a comparison (comparison.Comparison): per benchmark, one panel per metric,
the slowdown of B against A per size with its 95% interval, the tolerance band, and each
point coloured by its verdict."""

import json
import math

from ..sizes import human
from . import Figure, plt

COLOURS = {"slower": "firebrick", "faster": "seagreen", "same": "grey", "undecided": "orange"}


def _series(rows):
    """The rows of one metric split by their parameters other than size."""
    out = {}
    for r in rows.to_dict("records"):
        rest = {k: v for k, v in r["params"].items() if k != "size"}
        out.setdefault(json.dumps(rest, sort_keys=True, default=str), []).append(r)
    return out


def build(cmp) -> list:
    figs = []
    rows = cmp.rows
    for bench in dict.fromkeys(rows["benchmark"]):
        part = rows[rows["benchmark"] == bench]
        metrics = list(dict.fromkeys(part["metric"]))
        fig, axes = plt.subplots(len(metrics), 1, figsize=(8, 2.6 * len(metrics) + 0.6),
                                 sharex=True, squeeze=False)
        for ax, metric in zip(axes[:, 0], metrics):
            _panel(ax, part[part["metric"] == metric], cmp.tolerance, metric)
        axes[-1, 0].set_xlabel("message size" if part["size"].notna().any() else "point")
        handles = [plt.Line2D([], [], marker="o", ls="", color=c, label=v)
                   for v, c in COLOURS.items() if (part["verdict"] == v).any()]
        axes[0, 0].legend(handles=handles, loc="upper left", fontsize=8, ncol=4)
        cond = "; ".join(f"{k}: {a} → {b}" for k, (a, b) in cmp.conditions.items())
        title = f"{bench}: B against A{' (' + cond + ')' if cond else ''}"
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        figs.append(Figure(f"compare-{bench}", title,
                           f"Slowdown of B against A (> 1: B worse), {cmp.statistic} of each run, "
                           f"95% interval, ±{cmp.tolerance:.0%} band; {cmp.method}. "
                           f"{cmp.jobs_note}.", fig))
    return figs


def _panel(ax, rows, tolerance, metric):
    ax.axhspan(1 / (1 + tolerance), 1 + tolerance, color="0.9", zorder=0)
    ax.axhline(1, color="0.5", lw=0.8, zorder=1)
    sized = rows["size"].notna().all()
    for k, (_key, pts) in enumerate(_series(rows).items()):
        xs = [p["size"] if sized else i for i, p in enumerate(pts)]
        if sized and len(_series(rows)) > 1:   # side by side, not on top of each other
            xs = [x * (1.08 ** k) for x in xs]
        for x, p in zip(xs, pts):
            ax.errorbar([x], [p["slowdown"]], yerr=[[p["slowdown"] - p["lo"]], [p["hi"] - p["slowdown"]]],
                        fmt="o", ms=4, color=COLOURS[p["verdict"]], ecolor=COLOURS[p["verdict"]],
                        elinewidth=1, capsize=2)
    if sized:
        ax.set_xscale("symlog", base=2, linthresh=1)
        sizes = sorted(set(rows["size"]))
        ticks = sizes[::max(1, math.ceil(len(sizes) / 12))]
        ax.set_xticks(ticks)
        ax.set_xticklabels([human(int(s)) for s in ticks], fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel(f"{metric}\nslowdown B/A", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
