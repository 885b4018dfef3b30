"""Figures of the bcast benchmark: time until the last recipient holds the data.

  bcast-vs-k      time versus the number of recipients k, one panel per size
  bcast-vs-size   real ranks: time versus size, one panel per k
  bcast-sim-size  simulated runs (bcast-sim-<N>[-smpi-<ALG>]): time versus size, one panel
                  per node count, k = every node but the root, with the bandwidth bound
  bcast-vs-nodes  simulated runs: time versus simulated node count, one panel per size
Every routing of jt_dbcast is a line of its own colour and marker; MPI_Bcast (the reference
a dynamic broadcast cannot use) is drawn black and dashed, named with its library; SimGrid's
MPI_Bcast algorithms (smpi:ALG) are thin grey dashes, the best of them in the panel (the
smallest geometric mean of time) dark grey and named. Log axes; the median is drawn, the
p25-p75 band around it (not for the grey ones).
tables(runs) gives the report its section: auto against MPI_Bcast, flat, the best smpi:*
algorithm and the bound.
"""

from __future__ import annotations

import math

from ..analysis.bcast import times
from ..sizes import human
from ..units import number, size_label
from . import Figure, np, pd, plt, pooled, ticker

ORDER = ("flat", "binomial", "chain", "pipeline-chain", "pipeline-tree", "two-tree", "knomial-4",
         "knomial-8", "knomial-16", "scatter-allgather", "auto", "mpi_bcast")

# A colour and a marker of its own per routing, the same in every figure; routings not listed
# (a new one) take the spare ones in order of name. Grey is kept for the smpi:* baselines.
STYLES = {"flat": ("tab:blue", "v"), "binomial": ("tab:orange", "^"), "chain": ("tab:green", "<"),
          "pipeline-chain": ("tab:purple", ">"), "pipeline-tree": ("tab:brown", "D"),
          "two-tree": ("tab:pink", "P"), "knomial-4": ("teal", "1"), "knomial-8": ("teal", "2"),
          "knomial-16": ("teal", "3"), "scatter-allgather": ("tab:olive", "X"),
          "auto": ("tab:red", "o"), "mpi_bcast": ("black", "s")}
SPARE = (("tab:cyan", "*"), ("gold", "h"),
         ("navy", "p"), ("lime", "d"))
BOUND_LABEL = "bound m/β + ⌈log₂P⌉·α"


def is_smpi(routing) -> bool:
    return str(routing).startswith("smpi:")


def _key(routing):
    return (ORDER.index(routing) if routing in ORDER else len(ORDER), routing)


def _styles(routings, mpi_label, best_smpi=None, where="") -> dict:
    """Line styles of one figure: routing -> plot keywords (label included)."""
    out, spare = {}, iter(SPARE)
    for r in sorted(set(routings), key=_key):
        if is_smpi(r):
            best = r == best_smpi
            out[r] = dict(color="dimgray" if best else "silver", linestyle="--",
                          linewidth=2.0 if best else 0.8, marker="x" if best else None, ms=5,
                          zorder=1.5 if best else 1,
                          label=f"{r} (best smpi:*{where})" if best else "_nolegend_")
        elif r == "mpi_bcast":
            out[r] = dict(color="black", linestyle="--", marker="s", ms=4, label=mpi_label)
        else:
            color, marker = STYLES.get(r) or next(spare, ("tab:gray", "."))
            out[r] = dict(color=color, marker=marker, ms=4, label=r, zorder=3,
                          linewidth=2.2 if r == "auto" else 1.2)
    return out


def best_smpi(d, x="size") -> str:
    """The smpi:* routing of D with the smallest geometric mean of median time over the values
    of X that every smpi:* routing of D has (None when there is none)."""
    s = d[d["routing"].map(is_smpi)]
    if s.empty:
        return None
    wide = s.pivot_table(index="routing", columns=x, values="median", aggfunc="first")
    wide = wide.dropna(axis=1)
    if wide.empty:
        return None
    return np.log(wide.astype(float)).mean(axis=1).idxmin()


def mpi_label(runs_by_name, d) -> str:
    libs = sorted({runs_by_name[r].short_mpi for r in d.loc[d["routing"] == "mpi_bcast", "run"]})
    if d["simulated"].any():
        return "MPI_Bcast (SMPI default: binomial_tree)"
    return f"MPI_Bcast ({', '.join(libs)})" if libs else "MPI_Bcast"


def bound_us(size, nodes, alpha, beta) -> float:
    """m/β + ⌈log₂ P⌉·α in µs: every byte crosses the root's link once, and the last node is at
    least ⌈log₂ P⌉ hops away when a node can start one transfer per step."""
    return (size / beta + math.ceil(math.log2(nodes)) * alpha) * 1e6


def _axes(ax, x, xlabel):
    ax.set_xscale("log", base=2)
    # 4, 8, 16 recipients or nodes (not 2², 2³), 1K, 64K bytes.
    label = (lambda v: human(int(v))) if x == "size" else (lambda v: str(int(v)))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: label(v) if v >= 1 else ""))
    ax.xaxis.set_minor_formatter(ticker.FuncFormatter(lambda v, _: ""))
    ax.set_yscale("log")
    # 20, 50, 2 000: not 2×10¹; minor ticks labelled at 2, 3 and 5 only
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: number(v, 2)))
    ax.yaxis.set_minor_formatter(ticker.FuncFormatter(
        lambda v, _: number(v, 2) if v > 0 and f"{v:e}"[0] in "235" else ""))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("time until the last recipient holds the data (µs)")
    ax.grid(True, which="both", alpha=0.3)


def _panel(ax, d, x, xlabel, styles):
    for routing in sorted(d["routing"].unique(), key=_key):
        g = d[d["routing"] == routing].sort_values(x)
        st = styles[routing]
        ax.plot(g[x], g["median"], **st)
        if not is_smpi(routing):
            ax.fill_between(g[x], g["p25"], g["p75"], alpha=0.15, color=st["color"])
    _axes(ax, x, xlabel)


def _grid(keys, title):
    n = len(keys)
    cols = min(n, 3)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5.6 * cols, 4.4 * rows), squeeze=False)
    fig.suptitle(title)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _legend(fig, axes, routings):
    """One legend for the figure: every labelled line of any panel, once, and one entry for
    the grey smpi:* lines that are not named."""
    seen = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    if sum(map(is_smpi, set(routings))) > 1:
        seen["other smpi:* algorithms"] = plt.Line2D([], [], color="silver", linestyle="--",
                                                     linewidth=0.8)
    ncol = min(len(seen), 5)
    fig.legend(list(seen.values()), list(seen), loc="lower center", ncol=ncol, frameon=False)
    rows = (len(seen) + ncol - 1) // max(ncol, 1)
    fig.tight_layout(rect=(0, 0.035 * rows + 0.03, 1, 0.95))


def _sim_size_figure(d, by_name):
    """Time versus size, one panel per simulated node count, with the bound."""
    d = d[d["recipients"] == d["nodes"] - 1]
    nodes = sorted(d["nodes"].unique())
    fig, axes = _grid(nodes, "bcast, simulated (SimGrid): time versus size, to every other node")
    alphas, betas = set(), set()
    for ax, n in zip(axes, nodes):
        dn = d[d["nodes"] == n]
        styles = _styles(dn["routing"], mpi_label(by_name, dn), best_smpi(dn), f", {int(n)} nodes")
        _panel(ax, dn, "size", "payload (bytes)", styles)
        ax.set_title(f"{int(n)} nodes")
        sizes = np.array(sorted(dn["size"].unique()), dtype=float)
        alpha, beta = dn["alpha"].dropna(), dn["beta"].dropna()
        if len(alpha) and len(beta) and len(sizes):
            alphas.add(float(alpha.iloc[0]))
            betas.add(float(beta.iloc[0]))
            ax.plot(sizes, [bound_us(s, n, alpha.iloc[0], beta.iloc[0]) for s in sizes],
                    color="black", linewidth=1.4, label=BOUND_LABEL, zorder=4)
    _legend(fig, axes, d["routing"])
    plat = (f"α = {number(next(iter(alphas)) * 1e6, 3)} µs (the route latency: two links) and "
            f"β = {number(next(iter(betas)) / 1e9, 3)} GB/s (the node link's bandwidth) "
            "of the simulated platform (the 'simulated' object of each run's metadata)"
            if len(alphas) == 1 and len(betas) == 1 else
            "α (route latency) and β (link bandwidth) of each run's simulated platform")
    return Figure("bcast-sim-size", "bcast versus size, simulated, per node count",
                  "SimGrid cluster, one rank per node, broadcast from node 0 to every other node; "
                  "simulated time per routing of jt_dbcast (colours); SimGrid's own MPI_Bcast "
                  "algorithms smpi:* in grey, the best of each panel dark grey and named; MPI_Bcast "
                  f"(SMPI's default) black dashed. The black line is the bound m/β + ⌈log₂P⌉·α, "
                  f"with {plat}: the time of a one-port broadcast (one send at a time) on that "
                  "platform at best. SMPI's factors (latency scaled by size, 0.70-0.94 of the "
                  "link rate) put large broadcasts well above it; a small one sent to all at "
                  "once (flat) may come under it, SimGrid overlapping the root's sends.", fig)


@pooled
def build(runs) -> list:
    df = times(runs)
    if df.empty:
        return []
    by_name = {r.name: r for r in runs}
    figs = []
    for sim, d in df.groupby("simulated"):
        where = "simulated" if sim else "real ranks"
        for group, dr in d.groupby("group"):
            styles = _styles(dr["routing"], mpi_label(by_name, dr), best_smpi(dr))
            if dr["recipients"].nunique() > 1:
                sizes = sorted(dr["size"].unique())
                fig, axes = _grid(sizes, f"bcast ({group}, {where}): time versus recipients k")
                for ax, s in zip(axes, sizes):
                    _panel(ax, dr[dr["size"] == s], "recipients", "recipients k", styles)
                    ax.set_title(size_label(s))
                _legend(fig, axes, dr["routing"])
                figs.append(Figure(f"bcast-vs-k-{group}", f"bcast versus k ({group})",
                                   "Time until the last of k recipients holds the data, per "
                                   "routing; MPI_Bcast dashed (needs every recipient to call it).",
                                   fig))
            if not sim and dr["size"].nunique() > 1:
                ks = sorted(dr["recipients"].unique())
                fig, axes = _grid(ks, f"bcast ({group}, {where}): time versus size")
                for ax, k in zip(axes, ks):
                    _panel(ax, dr[dr["recipients"] == k], "size", "payload (bytes)", styles)
                    ax.set_title(f"k = {k}")
                _legend(fig, axes, dr["routing"])
                figs.append(Figure(f"bcast-vs-size-{group}", f"bcast versus size ({group})",
                                   "Time until the last recipient holds the data versus the "
                                   "payload size, per routing; MPI_Bcast dashed.", fig))
        if sim and d["size"].nunique() > 1:
            figs.append(_sim_size_figure(d, by_name))
        if sim and d["nodes"].nunique() > 1:
            d = d[d["recipients"] == d["nodes"] - 1]
            sizes = sorted(d["size"].unique())
            fig, axes = _grid(sizes, "bcast, simulated (SimGrid): time versus node count")
            for ax, s in zip(axes, sizes):
                ds = d[d["size"] == s]
                styles = _styles(ds["routing"], mpi_label(by_name, ds), best_smpi(ds, "nodes"),
                                 f", {size_label(s)}")
                _panel(ax, ds, "nodes", "simulated nodes (one rank each)", styles)
                ax.set_title(f"{size_label(s)} to every other node")
            _legend(fig, axes, d["routing"])
            figs.append(Figure("bcast-vs-nodes", "bcast versus simulated node count",
                               "SimGrid cluster, one rank per node, broadcast to every other "
                               "node; simulated time, per routing; MPI_Bcast dashed; smpi:* "
                               "(SimGrid's MPI_Bcast algorithms) grey, the best dark grey.", fig))
    return figs


def _r(x, digits=3):
    return round(x, digits) if x is not None and math.isfinite(x) else ""


@pooled
def tables(runs) -> list:
    """The report's bcast section: per group (a real run, or the simulated runs of one node
    count), size and k, auto against MPI_Bcast, flat, the best smpi:* and the bound."""
    df = times(runs)
    if df.empty:
        return []
    rows = []
    for (group, size, k), d in df.groupby(["group", "size", "recipients"]):
        med = d.set_index("routing")["median"].astype(float)
        med = med[~med.index.duplicated()]
        auto = med.get("auto")
        chosen = d[d["routing"] == "auto"]["chosen"].iloc[0] if "chosen" in d and auto is not None else ""
        ours = med[[r for r in med.index if r != "mpi_bcast" and not is_smpi(r)]]
        smpi = med[[r for r in med.index if is_smpi(r)]]
        row = d.iloc[0]
        bound = (bound_us(size, row["nodes"], row["alpha"], row["beta"])
                 if row["simulated"] and k == row["nodes"] - 1 and pd.notna(row["alpha"]) else None)
        mpi = med.get("mpi_bcast")
        rows.append([group, human(int(size)), int(k), chosen, _r(auto, 2), _r(mpi, 2),
                     _r(auto / mpi) if auto is not None and mpi is not None else "",
                     _r(med["flat"] / auto, 2) if auto is not None and "flat" in med else "",
                     ours.idxmin() if len(ours) else "",
                     f"{smpi.idxmin()[5:]} {number(smpi.min(), 3)}" if len(smpi) else "",
                     _r(auto / smpi.min()) if auto is not None and len(smpi) else "",
                     _r(auto / bound, 2) if auto is not None and bound else ""])
    return [{"id": "bcast-summary", "title": "Dynamic broadcasts against MPI_Bcast",
             "caption": "Median time until the last recipient holds the data (µs). auto/MPI: "
                        "the automatic routing's time over MPI_Bcast's (≤ 1 is as good); "
                        "flat/auto: the speed-up of the automatic choice over flat sends; best "
                        "smpi:*: the fastest of SimGrid's MPI_Bcast algorithms at that point "
                        "(µs); auto/bound: over m/β + ⌈log₂P⌉·α of the simulated platform.",
             "headers": ["run", "size", "k", "auto chose", "auto (µs)", "MPI_Bcast (µs)",
                         "auto/MPI", "flat/auto", "best dbcast routing", "best smpi:* (µs)",
                         "auto/best smpi", "auto/bound"],
             "rows": rows, "num_cols": (2, 4, 5, 6, 7, 10, 11)}]
