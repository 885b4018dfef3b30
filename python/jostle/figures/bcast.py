"""Figures of the bcast benchmark: time until the last recipient holds the data.

  bcast-vs-k      time versus the number of recipients k, one panel per size
  bcast-vs-size   time versus size, one panel per k (the largest k of each run)
  bcast-vs-nodes  simulated runs (bcast-sim-<N>): time versus simulated node count,
                  one panel per size, k = every node but the root
Every routing of jt_dbcast is a line; MPI_Bcast (the reference a dynamic broadcast cannot
use) is drawn black and dashed. Log axes. The median is drawn, the p25-p75 band around it.
tables(runs) gives the report its section: auto against MPI_Bcast and flat.
"""

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import FuncFormatter

from ..results import frame
from ..sizes import human
from ..units import number, size_label
from . import Figure

ORDER = ("flat", "binomial", "chain", "pipeline-chain", "pipeline-tree", "two-tree", "auto", "mpi_bcast")


# A colour and a marker of its own per routing, the same in every figure.
STYLES = {"flat": ("tab:blue", "v"), "binomial": ("tab:orange", "^"), "chain": ("tab:green", "<"),
          "pipeline-chain": ("tab:purple", ">"), "pipeline-tree": ("tab:brown", "D"), "two-tree": ("tab:olive", "X"),
          "auto": ("tab:red", "o"), "mpi_bcast": ("black", "s")}


def _style(routing):
    color, marker = STYLES.get(routing, ("tab:gray", "."))
    if routing == "mpi_bcast":
        return dict(color=color, linestyle="--", marker=marker, label="MPI_Bcast")
    return dict(color=color, marker=marker, ms=4, label=routing,
                linewidth=2.2 if routing == "auto" else 1.2)


def _times(runs) -> pd.DataFrame:
    df = frame(runs)
    if df.empty or "routing" not in df:
        return pd.DataFrame()
    df = df[df["metric"] == "time"].copy()
    df["simulated"] = [r.startswith("bcast-sim-") for r in df["run"]]
    nodes = {r.name: (r.meta.get("mpi") or {}).get("ranks") for r in runs}
    df["nodes"] = df["run"].map(nodes)
    return df


def _panel(ax, d, x, xlabel):
    for routing in sorted(d["routing"].unique(), key=lambda r: ORDER.index(r) if r in ORDER else 99):
        g = d[d["routing"] == routing].sort_values(x)
        ax.plot(g[x], g["median"], **_style(routing))
        ax.fill_between(g[x], g["p25"], g["p75"], alpha=0.15, color=_style(routing)["color"])
    ax.set_xscale("log", base=2)
    # 4, 8, 16 recipients or nodes (not 2², 2³), 1K, 64K bytes.
    label = (lambda v: human(int(v))) if x == "size" else (lambda v: str(int(v)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: label(v) if v >= 1 else ""))
    ax.set_yscale("log")
    # 20, 50, 2 000: not 2×10¹; minor ticks labelled at 2, 3 and 5 only
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: number(v, 2)))
    ax.yaxis.set_minor_formatter(FuncFormatter(
        lambda v, _: number(v, 2) if v > 0 and f"{v:e}"[0] in "235" else ""))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("time until the last recipient holds the data (µs)")
    ax.grid(True, which="both", alpha=0.3)


def _grid(keys, title):
    n = len(keys)
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 4.2 * rows), squeeze=False)
    fig.suptitle(title)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _legend(fig, axes):
    h, lab = axes[0].get_legend_handles_labels()
    fig.legend(h, lab, loc="lower center", ncol=min(len(lab), 7), frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 0.95))


def build(runs) -> list:
    df = _times(runs)
    if df.empty:
        return []
    figs = []
    for sim, d in df.groupby("simulated"):
        where = "simulated" if sim else "real ranks"
        for run, dr in d.groupby("run"):
            if dr["recipients"].nunique() > 1:
                sizes = sorted(dr["size"].unique())
                fig, axes = _grid(sizes, f"bcast ({run}, {where}): time versus recipients k")
                for ax, s in zip(axes, sizes):
                    _panel(ax, dr[dr["size"] == s], "recipients", "recipients k")
                    ax.set_title(size_label(s))
                _legend(fig, axes)
                figs.append(Figure(f"bcast-vs-k-{run}", f"bcast versus k ({run})",
                                   "Time until the last of k recipients holds the data, per "
                                   "routing; MPI_Bcast dashed (needs every recipient to call it).",
                                   fig))
            if dr["size"].nunique() > 1:
                ks = sorted(dr["recipients"].unique())
                fig, axes = _grid(ks, f"bcast ({run}, {where}): time versus size")
                for ax, k in zip(axes, ks):
                    _panel(ax, dr[dr["recipients"] == k], "size", "payload (bytes)")
                    ax.set_title(f"k = {k}")
                _legend(fig, axes)
                figs.append(Figure(f"bcast-vs-size-{run}", f"bcast versus size ({run})",
                                   "Time until the last recipient holds the data versus the "
                                   "payload size, per routing; MPI_Bcast dashed.", fig))
        if sim and d["nodes"].nunique() > 1:
            d = d[d["recipients"] == d["nodes"] - 1]
            sizes = sorted(d["size"].unique())
            fig, axes = _grid(sizes, "bcast, simulated (SimGrid): time versus node count")
            for ax, s in zip(axes, sizes):
                _panel(ax, d[d["size"] == s], "nodes", "simulated nodes (one rank each)")
                ax.set_title(f"{size_label(s)} to every other node")
            _legend(fig, axes)
            figs.append(Figure("bcast-vs-nodes", "bcast versus simulated node count",
                               "SimGrid cluster, one rank per node, broadcast to every other "
                               "node; simulated time, per routing; MPI_Bcast dashed.", fig))
    return figs


def tables(runs) -> list:
    """The report's bcast section: per run, size and k, auto against MPI_Bcast and flat."""
    df = _times(runs)
    if df.empty:
        return []
    rows = []
    for (run, size, k), d in df.groupby(["run", "size", "recipients"]):
        med = d.set_index("routing")["median"].astype(float)
        auto = med.get("auto")
        chosen = d[d["routing"] == "auto"]["chosen"].iloc[0] if "chosen" in d and auto is not None else ""
        best = med.drop("mpi_bcast", errors="ignore")
        rows.append([run, human(int(size)), int(k), chosen,
                     round(auto, 2) if auto is not None else "",
                     round(med["mpi_bcast"], 2) if "mpi_bcast" in med else "",
                     round(auto / med["mpi_bcast"], 3) if auto is not None and "mpi_bcast" in med else "",
                     round(med["flat"] / auto, 2) if auto is not None and "flat" in med else "",
                     best.idxmin() if len(best) else ""])
    return [{"id": "bcast-summary", "title": "Dynamic broadcasts against MPI_Bcast",
             "caption": "Median time until the last recipient holds the data (µs). auto/MPI: "
                        "the automatic routing's time over MPI_Bcast's (≤ 1 is as good); "
                        "flat/auto: the speed-up of the automatic choice over flat sends.",
             "headers": ["run", "size", "k", "auto chose", "auto (µs)", "MPI_Bcast (µs)",
                         "auto/MPI", "flat/auto", "best dbcast routing"],
             "rows": rows, "num_cols": (2, 4, 5, 6, 7)}]
