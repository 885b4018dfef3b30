"""The figure of a comparison (comparison.Comparison): per benchmark and MPI library, one panel
per metric that is its point's test (a metric derived from the same samples shows the same),
the slowdown of B against A per size with its 95% interval, the tolerance band, each point
coloured by its verdict, and the sweep's common shift with its interval."""

import json
import math
import re

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
    rows = cmp.tests
    several = len(cmp.libraries) > 1
    for bench, lib in dict.fromkeys(zip(rows["benchmark"], rows["mpi"])):
        part = rows[(rows["benchmark"] == bench) & (rows["mpi"] == lib)]
        sweeps = cmp.sweeps_of(lib)
        sweeps = sweeps[sweeps["benchmark"] == bench] if not sweeps.empty else sweeps
        metrics = list(dict.fromkeys(part["metric"]))
        fig, axes = plt.subplots(len(metrics), 1, figsize=(8, 2.6 * len(metrics) + 0.6),
                                 sharex=True, squeeze=False)
        for ax, metric in zip(axes[:, 0], metrics):
            _panel(ax, part[part["metric"] == metric], cmp.tolerance, metric)
            for sw in (sweeps[sweeps["metric"] == metric].to_dict("records")
                       if not sweeps.empty else []):
                label = (f"sweep ×{sw['slowdown']:.3f} [{sw['lo']:.3f}, {sw['hi']:.3f}]: "
                         f"{sw['verdict']}")
                if sw.get("groups", 1) > 1:     # sizes that disagree: each group over its own
                    x = [sw["size_lo"], sw["size_hi"]]
                    ax.fill_between(x, sw["lo"], sw["hi"], color=COLOURS[sw["verdict"]],
                                    alpha=0.12, lw=0)
                    ax.plot(x, [sw["slowdown"]] * 2, color=COLOURS[sw["verdict"]], ls="--",
                            lw=1, label=label.replace("sweep", "sweep group", 1))
                    continue
                ax.axhspan(sw["lo"], sw["hi"], color=COLOURS[sw["verdict"]], alpha=0.12, lw=0)
                ax.axhline(sw["slowdown"], color=COLOURS[sw["verdict"]], ls="--", lw=1,
                           label=label)
        axes[-1, 0].set_xlabel("message size" if part["size"].notna().any() else "point")
        handles = [plt.Line2D([], [], marker="o", ls="", color=c, label=v)
                   for v, c in COLOURS.items() if (part["verdict"] == v).any()]
        sweep_lines = [ln for ln in axes[0, 0].get_lines() if ln.get_label().startswith("sweep")]
        axes[0, 0].legend(handles=handles + sweep_lines, loc="upper left", fontsize=8, ncol=4)
        cond = "; ".join(f"{k}: {a} → {b}" for k, (a, b) in cmp.conditions.items())
        title = f"{bench}, {lib}: B against A{' (' + cond + ')' if cond else ''}"
        fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        slug = re.sub(r"[^a-z0-9]+", "-", lib.lower()).strip("-")
        figs.append(Figure(f"compare-{bench}" + (f"-{slug}" if several else ""), title,
                           f"Slowdown of B against A (> 1: B worse), {cmp.statistic} of each run, "
                           f"95% interval, ±{cmp.tolerance:.0%} band; dashed: the sweep's common "
                           f"shift with the job as the unit, its 95% interval shaded; "
                           f"{cmp.method}. {cmp.jobs_note}.", fig))
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
            err = ([[p["slowdown"] - p["lo"]], [p["hi"] - p["slowdown"]]]
                   if math.isfinite(p["lo"]) else None)   # one run per side: no interval
            ax.errorbar([x], [p["slowdown"]], yerr=err,
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
