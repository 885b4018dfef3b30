"""The contention figures of Swartvagher (COMPAS 2021, figures 1-4; SIAM PP22 use cases).

Runs are grouped by study, read from the run names `jostle contention` gives them
(fig1-…, fig2-…, …, with -quick for --quick); a run named otherwise is put where its
data fits (AI varies: fig4; many sizes: fig3; else fig1). Each figure shows both sides:
the communication metric and the compute bandwidth per core, alone (solid) and together
(dashed), and the degradation in percent (jostle.analysis.contention: positive is worse).  The compute
bandwidth is the phase's aggregate throughput (all compute threads' bytes / its wall time)
divided by the threads: a median over sweeps would let a starved thread, which contributes few
sweeps, lift "together" above "alone".

Every figure draws the bounds (bounds.py, Hoefler and Belli's rule 11): on the compute panel the
node's STREAM triad on all cores shared by the node's computing threads, so that a point above
it puts the node above its triad (an error of the measurement, marked); on the communication
panel one core's copy (intra-node) or the NIC's link (inter-node) under the bandwidth, and the
core-to-core latency of the ranks' cores (jostle-bench c2c) beside an intra-node latency. The heat map gives each cell's computation together as
a share of the triad.
"""

from __future__ import annotations

from collections import Counter

from ..analysis import bounds, contention
from ..analysis.contention import LATENCY_BELOW, degradation_table
from ..sizes import human
from ..units import shown_frame
from . import Figure, between_note, caveats_footer, np, plt, pooled, ticker

STUDIES = {
    "fig1": "Contention vs computing cores",
    "fig2": "Contention vs computing cores: comm thread and data near/far the NIC",
    "fig3": "Contention vs message size",
    "fig4": "Contention vs arithmetic intensity of triad",
    "usecases": "Contention of computational kernels",
}
X = {"fig1": "compute_cores", "fig2": "compute_cores", "fig3": "size", "fig4": "ai"}
XLABEL = {"compute_cores": "computing cores per rank", "size": "message size (bytes; K = 1024)",
          "ai": "arithmetic intensity (flop/byte, as executed)"}
SIDES = ("alone", "together", "alone_lo", "alone_hi", "together_lo", "together_hi")
ERROR_BARS = ("error bars: the 95% confidence interval of each median (over repetitions, from "
              "the lowest bound to the highest); none on the degradations")
DEGRADATION = ("comm: latency_together/latency_alone − 1 or 1 − bw_together/bw_alone; compute "
               "slowdown: 1 − computebw_together/computebw_alone; from the medians of each "
               "alone/together pair, median over repetitions")


def _bytes(size) -> str:
    text = human(int(size))
    return f"{text}iB" if text[-1].isalpha() else f"{text} B"


def compute_metric(df) -> str:
    """The compute side's metric: the aggregate throughput, the per-sweep bandwidth of records
    written before it existed, or flops for a kernel that moves no data (cpu)."""
    for m in ("compute_throughput", "compute_bandwidth"):
        if (df.metric == m).any():
            return m
    return "compute_flops"


COMPUTE_YLABEL = {
    "compute_throughput": "compute bandwidth per core (GB/s)\n= aggregate / threads",
    "compute_bandwidth": "compute bandwidth per core (GB/s)\nmedian over sweeps (older records)",
    "compute_flops": "compute per core (GFlop/s)\nmedian over sweeps",
}


def per_core(k, compute):
    """Rows K of the compute metric with alone and together per core (aggregate / threads)."""
    if compute != "compute_throughput" or "compute_cores" not in k:
        return k
    cores = k["compute_cores"].astype(float).where(lambda c: c > 0)
    return k.assign(**{c: k[c] / cores for c in ("alone", "together", *contention.BOUNDS)
                       if c in k})


def _notes(runs) -> list:
    """Caveats of the study's runs, each with how many runs it concerns (named when few)."""
    seen = Counter()
    names = {}
    for r in runs:
        for cav in r.caveats:
            seen[cav] += 1
            names.setdefault(cav, []).append(r.name)
    out = []
    for cav, k in seen.items():
        who = ", ".join(names[cav][:3]) + (", …" if k > 3 else "")
        out.append(f"{cav} ({k} of {len(runs)} runs: {who})")
    return out


def _finish(fig, title, notes, legend="solid: alone, dashed: together"):
    fig.suptitle(f"{title}\n{legend}; degradation: positive is worse")
    return caveats_footer(fig, notes)


def _x_axis(ax, x):
    ax.set_xlabel(XLABEL[x])
    if x == "size":
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: human(int(v)) if v >= 1 else ""))
    elif x == "ai":
        ax.set_xscale("log")
    else:
        ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True))
    ax.grid(True, alpha=0.3)


def _rows(study, table):
    """[(title, rows of TABLE, comm metric)]: one per size, or latency and bandwidth over sizes."""
    if study == "fig3":
        return [("latency", table, "latency"), ("bandwidth", table, "bandwidth")]
    out = []
    for size in sorted(table["size"].dropna().unique()):
        metric = "latency" if size < LATENCY_BELOW else "bandwidth"
        out.append((f"{_bytes(size)} messages", table[table["size"] == size], metric))
    return out


def _line(ax, d, col, color, style, label=None):
    """COL against x; with the 95% CI of its median as error bars where the records have it."""
    d = d.sort_values("xv")
    lo, hi = f"{col}_lo", f"{col}_hi"
    if lo in d and hi in d and d[lo].notna().any():
        y = d[col].astype(float)
        err = [(y - d[lo]).clip(lower=0).fillna(0), (d[hi] - y).clip(lower=0).fillna(0)]
        ax.errorbar(d["xv"], y, yerr=err, fmt=style, color=color, ms=4, lw=1.2, capsize=2,
                    label=label)
    else:
        ax.plot(d["xv"], d[col], style, color=color, ms=4, lw=1.2, label=label)


def triad_share(k, triad):
    """Per row of K (compute_throughput per core, as per_core makes it): the bound per core, the
    node's triad over its computing threads; NaN where either is unknown."""
    threads = k["node_threads"].where(k["node_threads"] > 0) if "node_threads" in k else np.nan
    return (triad / threads) if triad else k["alone"] * np.nan


def _compute_bound(ax, k, triad, first) -> int:
    """The bound per core on the compute panel, and a red x on every point above it (arrays
    out of cache); returns how many such points."""
    if k.empty or not triad or "node_threads" not in k:
        return 0
    d = k.assign(bound=triad_share(k, triad)).sort_values("xv")
    if d["bound"].notna().any():
        ax.plot(d["xv"], d["bound"], "-.", color="black", lw=0.9,
                label=f"bound: node's triad {triad:.3g} GB/s / its computing threads"
                if first else None)
    over = 0
    for side in ("alone", "together"):
        bad = d[(d[side] > d["bound"]) & ~d["in_cache"].astype(bool)]
        if len(bad):
            ax.plot(bad["xv"], bad[side], "x", color="red", ms=9, mew=2)
            over += len(bad)
    return over


def _comm_bound(ax, comm, limits, inter, pair="") -> None:
    """One core's copy or the link (bandwidth, GB/s), or the core-to-core latency of PAIR's
    cores (an intra-node latency, µs), with the panel's legend."""
    if comm == "bandwidth":
        v, what = ((limits.get("link_GBps"), "the NIC's link") if inter else
                   (limits.get("copy_GBps"), "one core's copy"))
        if v:
            ax.axhline(v, color="black", ls="-.", lw=0.9, label=f"bound: {what}, {v:.3g} GB/s")
            ax.legend(fontsize=7, loc="best")
    elif comm == "latency" and not inter:
        bound, what = bounds.c2c_bound(limits, pair)
        if bound is not None:
            v = bound["median"] / 1e3
            ax.axhline(v, color="black", ls=":", lw=0.9, label=f"bound: {what}, {v * 1e3:.3g} ns")
            ax.legend(fontsize=7, loc="best")


def bounds_caption(limits, inter, over, pair="") -> str:
    """The caption's sentence about the bounds drawn (or unknown), and the points above them."""
    said = []
    triad = limits.get("triad_GBps")
    said.append(f"dash-dot on the computation: the node's STREAM triad on all cores ({triad:.3g} "
                "GB/s, jostle-bench --stream) divided among the node's computing threads; a point "
                "above it puts the node above its triad" if triad else
                "the bound of the computation (the node's STREAM triad on all cores) is not "
                "measured here: `jostle run`'s bounds step measures it")
    if inter:
        link = limits.get("link_GBps")
        said.append(f"dash-dot on the bandwidth: the NIC's link ({link:.3g} GB/s)" if link else
                    "the NIC's link speed is unknown (not in hwloc or sysfs)")
    else:
        copy = limits.get("copy_GBps")
        said.append(f"dash-dot on the bandwidth: one core's copy ({copy:.3g} GB/s), which a "
                    "message from memory cannot pass" if copy else
                    "one core's copy (the intra-node bandwidth's bound) is not measured here")
    if not inter:
        bound, what = bounds.c2c_bound(limits, pair)
        said.append(f"dotted on the latency: {what} ({bound['median']:.3g} ns, jostle-bench "
                    "c2c), which no message between those cores can beat" if bound else what)
    text = "Bounds (bounds.py): " + "; ".join(said) + "."
    if over:
        text += (f" {over} point(s) above the node's triad, marked x in red: "
                 f"{bounds.ERROR}.")
    return text


def _versus(study, table, labels, limits=None, inter=False, pair="") -> tuple:
    """The figure and how many points are above their bound."""
    limits = limits or {}
    x = X[study]
    rows = _rows(study, table)
    over = 0
    fig, axes = plt.subplots(len(rows), 3, figsize=(15, 4.2 * len(rows)), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for (title, part, comm), (ax_c, ax_k, ax_d) in zip(rows, axes):
        # bandwidth in GB/s and times in µs, as every other figure (units.SHOWN)
        part = shown_frame(part.assign(xv=part[x].astype(float)), cols=SIDES)
        compute = compute_metric(part)
        for i, series in enumerate(labels):
            color = colors[i % len(colors)]
            s = part[part.series == series]
            m = s[s.metric == comm]
            k = per_core(s[s.metric == compute], compute)
            _line(ax_c, m, "alone", color, "-o", series)
            _line(ax_c, m, "together", color, "--o")
            _line(ax_k, k, "alone", color, "-s", series)
            _line(ax_k, k, "together", color, "--s")
            _line(ax_d, m.assign(pct=m.degradation * 100), "pct", color, "-o", f"{series}: comm")
            _line(ax_d, k.assign(pct=k.degradation * 100), "pct", color, ":s", f"{series}: compute")
            if compute == "compute_throughput":   # STREAM counting, as the triad's
                over += _compute_bound(ax_k, k, limits.get("triad_GBps"), i == 0)
        _comm_bound(ax_c, comm, limits, inter, pair)
        unit = part[part.metric == comm]["unit"]
        ax_c.set_ylabel(f"{comm} ({unit.iloc[0] if len(unit) else '?'})")
        ax_c.set_title(f"communication: {comm}, {title}" if study != "fig3" else f"communication: {comm}")
        ax_k.set_ylabel(COMPUTE_YLABEL[compute])
        ax_k.set_title(f"computation, {title}" if study != "fig3" else "computation")
        ax_d.set_ylabel("degradation (%)")
        ax_d.set_title(f"{comm} degradation (o, solid), compute slowdown (s, dotted)", fontsize=9)
        ax_d.axhline(0, color="grey", lw=0.8)
        for ax in (ax_c, ax_k, ax_d):
            _x_axis(ax, x)
        if study == "fig3":
            ax_c.set_yscale("log")
        if limits.get("triad_GBps"):
            ax_k.legend(fontsize=7, loc="best")
    axes[0][0].legend(fontsize=8, loc="best")
    return fig, over


def _usecases(table, counters) -> plt.Figure:
    fig, (ax_b, ax_s) = plt.subplots(1, 2, figsize=(14, 5), gridspec_kw={"width_ratios": [3, 2]})
    kernels = list(dict.fromkeys(table["kernel"].dropna()))
    sizes = sorted(table["size"].dropna().unique())
    bars = []
    for size in sizes:
        comm = "latency" if size < LATENCY_BELOW else "bandwidth"
        bars.append((f"comm {comm} ({_bytes(size)})", size, comm))
        bars.append((f"compute slowdown ({_bytes(size)})", size, "compute"))
    width = 0.8 / max(len(bars), 1)
    pos = np.arange(len(kernels))
    for j, (label, size, metric) in enumerate(bars):
        vals = []
        for k in kernels:
            mine = table[(table.kernel == k) & (table["size"] == size)]
            v = mine[mine.metric == (compute_metric(mine) if metric == "compute" else metric)]
            vals.append(float(v.degradation.iloc[0]) * 100 if len(v) else np.nan)
        ax_b.bar(pos + (j - (len(bars) - 1) / 2) * width, vals, width, label=label,
                 hatch="//" if metric == "compute" else None)
    ax_b.set_xticks(pos, kernels)
    ax_b.axhline(0, color="grey", lw=0.8)
    ax_b.set_ylabel("degradation (%)")
    ax_b.set_title("communication degradation and compute slowdown")
    ax_b.legend(fontsize=8)
    stalled = table[table.metric == "stalled_fraction"]
    if stalled.empty:
        why = "; ".join(sorted(counters)) or "no stalled_fraction in the records"
        ax_s.text(0.5, 0.5, f"counters unavailable on this machine\n({why})", ha="center",
                  va="center", wrap=True, transform=ax_s.transAxes)
        ax_s.set_axis_off()
    else:
        big = stalled[stalled["size"] == stalled["size"].max()]
        for j, side in enumerate(("alone", "together")):
            vals = [float(big[big.kernel == k][side].median()) * 100 for k in kernels]
            ax_s.bar(pos + (j - 0.5) * 0.4, vals, 0.4, label=side, hatch="//" if j else None)
        ax_s.set_xticks(pos, kernels)
        ax_s.set_ylabel("stalled cycles (% of cycles)")
        ax_s.set_title(f"stalled cycles, {_bytes(big['size'].iloc[0])} messages")
        ax_s.legend(fontsize=8)
    return fig


def talking(table):
    """(communicating ranks, threads per rank) of each row: 2 x pairs, and comm_threads (1 where
    the rank's main thread talks); runs without --pairs are one pair."""
    pairs = table["pairs"].fillna(1).astype(int) if "pairs" in table else 1
    threads = table["comm_threads"].fillna(0).astype(int) if "comm_threads" in table else 0
    frame = table.assign(talking_ranks=2 * pairs, talking_threads=threads)
    frame["talking_threads"] = frame["talking_threads"].where(frame["talking_threads"] > 0, 1)
    return frame


def _heat(ax, grid, title, extra=None):
    """EXTRA: a grid of the same shape with a second line for each cell ('' for none)."""
    lim = max(float(np.nanmax(np.abs(grid.values))) if grid.size else 1.0, 1.0)
    im = ax.imshow(grid.values, cmap="RdYlGn_r", vmin=-lim, vmax=lim, aspect="auto",
                   origin="lower")
    ax.set_xticks(range(grid.shape[1]), [str(c) for c in grid.columns])
    ax.set_yticks(range(grid.shape[0]), [f"{r} × {t}" for r, t in grid.index])
    for (i, j), v in np.ndenumerate(grid.values):
        if v == v:
            more = extra.values[i, j] if extra is not None else ""
            more = more if isinstance(more, str) else ""
            ax.text(j, i, f"{v:+.0f}%" + (f"\n{more}" if more else ""), ha="center",
                    va="center", fontsize=8, color="red" if "ABOVE" in more else "black")
    ax.set_xlabel(XLABEL["compute_cores"])
    ax.set_title(title, fontsize=10)
    return im


def _triad_cells(part, triad):
    """Per cell of the computation's heat map: its together as a share of the node's triad
    ('62% of triad', 'ABOVE triad' in red when out of cache and over it)."""
    if not triad or part.empty or "node_threads" not in part:
        return None
    node = part["together"] / part["compute_cores"].where(part["compute_cores"] > 0) \
        * part["node_threads"].where(part["node_threads"] > 0)
    frac = node / triad
    text = [("" if f != f else f"{f:.0%} of triad" + (" ABOVE" if f > 1 and not c else ""))
            for f, c in zip(frac, part["in_cache"].astype(bool))]
    return part.assign(cell=text).pivot_table(index=["talking_ranks", "talking_threads"],
                                              columns="compute_cores", values="cell",
                                              aggfunc="first")


def flows_heatmap(table, notes, limits=None):
    """Communicating ranks (x threads) against computing cores: the degradation of both sides,
    from runs with several numbers of pairs or threads that talk; None otherwise."""
    if table.empty or "compute_cores" not in table:
        return None
    t = talking(table)
    if t[["talking_ranks", "talking_threads"]].drop_duplicates().shape[0] < 2:
        return None
    sizes = sorted(t["size"].dropna().unique()) if "size" in t else []
    small = t[t["size"] == sizes[0]] if sizes else t
    comm = small[small.metric == ("latency" if not sizes or sizes[0] < LATENCY_BELOW
                                  else "bandwidth")]
    compute = t[t.metric == compute_metric(t)].drop_duplicates(
        ["talking_ranks", "talking_threads", "compute_cores"])
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    triad = (limits or {}).get("triad_GBps")
    cells = (_triad_cells(compute, triad) if compute_metric(t) == "compute_throughput"
             else None)
    right = ("computation: slowdown;\nbelow it, together as a share of the node's STREAM triad "
             f"on all cores ({triad:.3g} GB/s)" if cells is not None else
             "computation: slowdown\n(the node's triad not measured: no share of it)")
    for ax, part, what, extra in (
            (axes[0], comm, f"communication ({comm.metric.iloc[0] if len(comm) else '?'}"
                            f"{', ' + _bytes(sizes[0]) if sizes else ''}): degradation", None),
            (axes[1], compute, right, cells)):
        grid = part.pivot_table(index=["talking_ranks", "talking_threads"],
                                columns="compute_cores", values="degradation",
                                aggfunc="median") * 100
        im = _heat(ax, grid, what, extra.reindex_like(grid) if extra is not None else None)
        ax.set_ylabel("communicating ranks × threads each")
        fig.colorbar(im, ax=ax, label="degradation (%, positive: worse)")
    _finish(fig, "Communicating ranks × computing cores", notes,
            legend="each cell: the median over repetitions")
    return fig


@pooled
def build(runs) -> list:
    runs = [r for r in runs if not r.points.empty]
    table = degradation_table(runs)
    if table.empty:
        return []
    figures = []
    limits = bounds.of(runs)
    inter = any(len(set(r.hosts)) > 1 for r in runs)
    heat = flows_heatmap(table, _notes(runs), limits)
    if heat is not None:
        triad = limits.get("triad_GBps")
        figures.append(Figure("contention-flows", "Communicating ranks × computing cores",
                              "Degradation together vs alone of the communication (left, the "
                              "smallest size) and of the computation (right, per core) for each "
                              "number of communicating ranks and threads (rows, --pairs and "
                              f"--comm-threads) and computing cores per rank (columns). "
                              f"Degradation — {DEGRADATION}. "
                              + (f"Under each slowdown, the node's computation together (rank "
                                 "0's throughput × the node's computing threads / its own) as a "
                                 f"share of the node's STREAM triad on all cores ({triad:.3g} "
                                 f"GB/s); above 100% with arrays out of cache: {bounds.ERROR}."
                                 if triad else "The node's STREAM triad on all cores is not "
                                 "measured here (`jostle run`'s bounds step): no share of it."),
                              heat))
    for study_id in dict.fromkeys(table.study):
        study = study_id.removesuffix("-quick")
        part = table[table.study == study_id]
        group = [r for r in runs if r.name in set(part.run)]
        notes = _notes(group)
        title = STUDIES[study] + (" (--quick)" if study_id != study else "")
        if study == "usecases":
            counters = {f"{(r.meta.get('counters') or {}).get('backend', '?')}: "
                        f"{(r.meta.get('counters') or {}).get('reason', '')}".rstrip(": ")
                        for r in group}
            fig = _usecases(part, counters)
            said = ""
        else:
            pair = bounds.run_pair(group[0]) if group else ""
            fig, over = _versus(study, part, list(dict.fromkeys(part.series)), limits, inter,
                                pair)
            said = " " + bounds_caption(limits, inter, over, pair)
        _finish(fig, title, notes, *(["hatched: compute side"] if study == "usecases" else []))
        caption = (f"{title}: {len(group)} run(s), {', '.join(sorted(set(part.series)))}. "
                   f"Degradation — {DEGRADATION}. {ERROR_BARS[0].upper()}{ERROR_BARS[1:]}."
                   + said + between_note(group))
        figures.append(Figure(f"contention-{study_id}", title, caption, fig))
    return figures


@pooled
def tables(runs) -> list:
    """For the report: the degradations of every study, one row per point and metric."""
    table = degradation_table([r for r in runs if not r.points.empty])
    if table.empty:
        return []
    table = table[table.metric.isin(("latency", "bandwidth", "compute_throughput",
                                     "compute_traffic", "compute_bandwidth", "compute_flops",
                                     "stalled_fraction"))]
    cols = ["study", "series", "run", *[c for c in ("kernel", "compute_cores", "size", "ai")
                                         if c in table], "metric", "unit", "alone", "together"]
    rows = [[*r[:-1], r[-1] * 100 if r[-1] == r[-1] else None]
            for r in table[[*cols, "degradation"]].itertuples(index=False)]
    return [{"id": "contention", "title": "Contention: degradations",
             "caption": f"Medians alone and together, and the degradation in percent ({DEGRADATION}).",
             "headers": [*cols, "degradation %"], "rows": rows,
             "num_cols": ("alone", "together", "degradation %")}]
