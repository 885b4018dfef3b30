"""Overlap figures (Taboada, COMPAS 2016, figure 3): heat maps of the overlap ratio, number of
ranks × message size, one panel per collective and one figure per configuration (MPI library,
rank policy, progress mode and thread placement, kernel); and t_pure, t_CPU, t_ovrl versus
size for one configuration, where a protocol switch (rendezvous) shows.

The colour is overlap_min, the seed's formula (denominator min(t_pure, t_CPU), as in IMB's
user guide); the records also hold overlap_max (what IMB-NBC's code prints)."""

from __future__ import annotations

import re

from ..analysis.overlap import SHOWN, frame
from ..sizes import human
from . import Figure, np, patches, plt, pooled

CONFIG = ("library", "policy", "progress", "thread_core", "kernel")


def _label(cfg) -> str:
    lib, pol, prog, tc, kern = cfg
    thread = f" on {tc} core" if prog == "thread" else ""
    return f"{lib}, ranks {pol}, progress {prog}{thread}, kernel {kern}"


def heatmaps(df) -> list:
    figs = []
    ov = df[df.metric == SHOWN]
    for cfg, d in ov.groupby(list(CONFIG), sort=True):
        colls = list(dict.fromkeys(d.collective))
        fig, axes = plt.subplots(1, len(colls), figsize=(4.2 * len(colls), 3.6), squeeze=False)
        for ax, coll in zip(axes[0], colls):
            t = d[d.collective == coll].pivot_table(index="size", columns="ranks",
                                                    values="median", aggfunc="median")
            im = ax.imshow(t.values, origin="lower", aspect="auto", vmin=0, vmax=1,
                           cmap="inferno", interpolation="nearest")
            if t.size <= 200:   # small grids: the value in each cell, readable in print
                for (y, x), v in np.ndenumerate(t.values):
                    if np.isfinite(v):
                        ax.text(x, y, f"{v:.2f}", ha="center", va="center",
                                fontsize=8 if t.size <= 40 else 6,
                                color="black" if v > 0.6 else "white")
            # Oversubscribed rank counts measure time slicing, not overlap: hatched over.
            over = set(d[(d.collective == coll) & d.caveats.str.contains("oversubscribed")].ranks)
            for x, n in enumerate(t.columns):
                if n in over:
                    ax.add_patch(patches.Rectangle((x - 0.5, -0.5), 1, len(t.index), facecolor="grey",
                                           alpha=0.6, hatch="///", edgecolor="white", lw=0))
            ax.set_xticks(range(len(t.columns)), [f"{c}{' (over.)' if c in over else ''}"
                                                  for c in t.columns])
            ax.set_yticks(range(len(t.index)), [human(int(s)) for s in t.index])
            ax.set_xlabel("MPI ranks")
            ax.set_title(coll)
        axes[0][0].set_ylabel("message size (bytes)")
        fig.colorbar(im, ax=axes[0].tolist(), label="overlap (min formula)")
        cav = sorted({c for cs in d.caveats for c in cs.split("; ") if c})
        fig.suptitle(_label(cfg) + (f"  [{'; '.join(cav)}]" if cav else ""), fontsize=9)
        slug = "-".join(re.sub(r"[^a-z0-9.]+", "", str(x).lower().split(" version")[0])
                        for x in cfg)
        figs.append(Figure(f"overlap-heatmap-{slug}", f"Overlap: {_label(cfg)}",
                           "Overlap ratio max(0, min(1, (t_pure + t_CPU − t_ovrl) / "
                           "min(t_pure, t_CPU))) of the medians (the seed's and IMB user "
                           "guide's formula; overlap_max, IMB-NBC's printed one, is in the "
                           "records). Black: none, yellow: full; grey hatched: more threads "
                           "than cores (oversubscribed), where the ratio measures time "
                           "slicing, not overlap.", fig))
    return figs


def times(df) -> list:
    """t_pure, t_CPU, t_ovrl vs size for one configuration: the largest run that is not
    oversubscribed (time slices would be all a reader sees), else the smallest run."""
    t = df[df.metric.isin(["t_pure", "t_cpu", "t_ovrl"])]
    if t.empty:
        return []
    fair = t[~t.caveats.str.contains("oversubscribed")]
    pool = fair if not fair.empty else t[t.ranks == t.ranks.min()]
    cfg, d = next(iter(pool.groupby(list(CONFIG), sort=True)))
    d = d[d.ranks == d.ranks.max()]
    colls = list(dict.fromkeys(d.collective))
    fig, axes = plt.subplots(1, len(colls), figsize=(4.2 * len(colls), 3.4), squeeze=False)
    for ax, coll in zip(axes[0], colls):
        for m, style in (("t_pure", "-"), ("t_cpu", ":"), ("t_ovrl", "--")):
            s = d[(d.collective == coll) & (d.metric == m)].sort_values("size")
            x = np.maximum(s["size"].to_numpy(dtype=float), 1)
            ax.plot(x, s["median"], style, marker="o", ms=3, label=m)
            ax.fill_between(x, s["p25"], s["p75"], alpha=0.2)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("time (µs), median and quartiles")
        ax.set_title(coll)
        ax.legend(fontsize=7)
    n = int(d.ranks.max())
    cav = sorted({c for cs in d.caveats for c in cs.split("; ") if c})
    fig.suptitle(f"{_label(cfg)}, {n} ranks" + (f"  [{'; '.join(cav)}]" if cav else ""),
                 fontsize=9)
    return [Figure("overlap-times", f"Overlap times vs size ({n} ranks)",
                   "t_pure (post, wait), t_CPU (the calibrated work alone) and t_ovrl (post, "
                   "work, wait); a jump of t_pure with no matching overlap is where the "
                   "library switches protocol (the seed sees rendezvous at 64-128 KiB).", fig)]


@pooled
def build(runs) -> list:
    df = frame(runs)
    if df.empty or "collective" not in df:
        return []
    return heatmaps(df) + times(df)


@pooled
def tables(runs) -> list:
    """The report's table: both formulas side by side, per configuration, collective, size."""
    df = frame(runs)
    if df.empty or "collective" not in df:
        return []
    keys = [*CONFIG, "collective", "ranks", "size"]
    w = df.pivot_table(index=keys, columns="metric", values="median", aggfunc="first")
    rows = [[*k[:-1], human(int(k[-1])), *(w.loc[k].get(m) for m in
            ("t_pure", "t_cpu", "t_ovrl", "overlap_min", "overlap_max"))] for k in w.index]
    return [{"id": "overlap-table", "title": "Overlap of non-blocking collectives",
             "caption": "Medians in µs; overlap_min is the seed's formula (figures), "
                        "overlap_max IMB-NBC's printed one.",
             "headers": [*CONFIG, "collective", "ranks", "size", "t_pure", "t_CPU", "t_ovrl",
                         "overlap_min", "overlap_max"],
             "rows": rows,
             "num_cols": ("t_pure", "t_CPU", "t_ovrl", "overlap_min", "overlap_max")}]
