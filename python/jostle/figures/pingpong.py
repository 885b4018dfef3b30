"""The ping-pong figures of Zahn (2021): RTT and bandwidth 2·D/RTT versus size.

One figure per size range present in the data, as in the study:
  bytes  every size up to 1 KiB, linear axes        (its figures 1 and 4)
  fine   every 16 B (or finer) up to 20 KiB, linear  (figures 2 and 5)
  pow2   powers of two, log-log                      (figures 3 and 6)
Runs are overlaid (intra-node against inter-node, one MPI against another):
the median as a line, the p25-p75 band around it.  Every curve names the state of
the buffers it was measured with (osu: OSU's conventions).

With runs of two or more buffer states or kinds of pages, one more figure, "what the state of the
buffers costs": latency (ping-pong) or bandwidth (stream, bidir, put, get) per size
and state, overlaid, and below it each state's ratio to osu per size.
"""

import re
from dataclasses import dataclass
from typing import Callable

from ..sizes import human
from ..analysis import bounds
from . import Figure, caveats_footer, np, plt, pooled, ticker

KIB = 1024


def _pow2(s):
    return s >= 1 and (s & (s - 1)) == 0


@dataclass
class Range:
    id: str
    title: str
    keep: Callable        # size -> bool: the sizes drawn in this figure
    dense: Callable       # size -> bool: the sizes whose presence calls for the figure
    min_dense: int
    log: bool
    tick: int = 0         # linear axes: a tick every TICK bytes, labelled 128, 2K, …


RANGES = (
    Range("bytes", "every size up to 1 KiB", lambda s: s <= KIB,
          lambda s: s <= KIB and not _pow2(s), 8, False, 128),
    Range("fine", "up to 20 KiB", lambda s: s <= 20 * KIB,
          lambda s: KIB < s <= 20 * KIB and not _pow2(s), 8, False, 2 * KIB),
    Range("pow2", "powers of two", _pow2, _pow2, 3, True),
)


def series(run):
    """{mode: {'rtt': frame, 'bandwidth': frame}} with rtt in us and bandwidth in MB/s."""
    df = run.points
    if df.empty or "size" not in df:
        return {}
    if "modes" not in df:
        df = df.assign(modes=1)
    modes = df["mode"].fillna("pingpong") if "mode" in df else None
    out = {}
    if "converged" not in df:
        df = df.assign(converged=None)
    for mode, part in (df.groupby(modes, sort=False) if modes is not None else [("pingpong", df)]):
        cols = ["size", "median", "p25", "p75", "ci95_lo", "ci95_hi",
                *(["mean"] if "mean" in part else []),
                *([c for c in ("jobs_lo", "jobs_hi") if c in part]),
                *sorted(c for c in part if c not in ("p25", "p75") and re.fullmatch(
                    r"p\d+(\.\d+)?", c))]
        part = part.assign(converged=part["converged"] != False)  # noqa: E712 (None: not said)
        kept = ["converged", "modes", *(["between"] if "between" in part else [])]
        got = {}
        rtt = part[part.metric == "rtt"]
        if rtt.empty and (part.metric == "latency").any():  # rtt = 2 x latency, quantile by quantile
            lat = part[part.metric == "latency"][cols + kept]
            rtt = lat.assign(**{c: lat[c] * 2 for c in cols[1:]})
        if not rtt.empty:
            got["rtt"] = rtt[cols + kept].groupby("size").last().sort_index()
        bw = part[part.metric == "bandwidth"]
        if not bw.empty:
            scale = np.where(bw.unit == "GB/s", 1000.0, 1.0)  # records may use either
            bw = bw[cols + kept].assign(**{c: bw[c] * scale for c in cols[1:]})
            got["bandwidth"] = bw.groupby("size").last().sort_index()
        if got:
            out[mode] = got
    return out


def buffers(run):
    """The run's state of the buffers (its points' params), None for runs from before it was
    recorded."""
    df = run.points
    if "buffers" not in df or df["buffers"].dropna().empty:
        return None
    return str(df["buffers"].dropna().iloc[0])


def pages(run):
    """The run's kind of pages when chosen (not the system's), else None."""
    return None if run.pages == "system" else run.pages


def state(run):
    """The state of the buffers and, when chosen, the kind of pages: 'osu', 'osu, huge pages'."""
    b = buffers(run)
    return b and b + (f", {pages(run)} pages" if pages(run) else "")


def _labels(runs):
    """Legend text per run; the run name is added where two would read the same."""
    base = [f"{r.locality}, {r.short_mpi}" + (f", buffers {state(r)}" if state(r) else "")
            for r in runs]
    return [f"{b} [{r.name}]" if base.count(b) > 1 else b for b, r in zip(base, runs)]


def _size_axis(ax, rng):
    ax.set_xlabel("message size (bytes; K = 1024)")
    if rng.log:
        ax.set_xscale("log", base=2)
    elif rng.tick:
        ax.xaxis.set_major_locator(ticker.MultipleLocator(rng.tick))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(
        lambda v, _: human(int(round(v))) if v >= 1 or (v == 0 and not rng.log) else ""))
    ax.grid(True, which="major", alpha=0.3)


def _bound_lines(ax, runs, div) -> str:
    """One core's copy (intra-node runs) and the NIC's link (inter-node) as horizontal lines
    on the bandwidth panel (bounds.py); the caption's sentence about them."""
    limits = bounds.of(runs)
    said = []
    for inter, v, what, over in (
            (False, limits.get("copy_GBps"), "one core's copy",
             "STREAM counting; a curve above it from memory (larger than the last-level cache, "
             "or cold buffers) is an error of the measurement, in cache it may pass it"),
            (True, limits.get("link_GBps"), "the NIC's link",
             "a curve above it is an error of the measurement")):
        if not any((len(set(r.hosts)) > 1) == inter for r in runs):
            continue
        if v:
            ax.axhline(v * 1000 / div, color="black", ls="-.", lw=0.9,
                       label=f"bound: {what}, {v:.3g} GB/s")
            said.append(f"dash-dot: the bound, {what} ({v:.3g} GB/s; {over})")
        else:
            said.append(f"the bound ({what}) is unknown here")
    return "; ".join(said)


def _figure(rng, curves, bw_unit, notes, statistic=None):
    fig, (ax_rtt, ax_bw) = plt.subplots(2, 1, figsize=(8.5, 8), sharex=True)
    scale = 1000.0 if bw_unit == "GB/s" else 1.0
    means = False
    tails = False
    jobs_range = False
    for label, color, data in curves:
        for ax, metric, div in ((ax_rtt, "rtt", 1.0), (ax_bw, "bandwidth", scale)):
            d = data.get(metric)
            if d is None:
                continue
            x, y = d.index.to_numpy(), d["median"] / div
            ls = "-" if len(x) > 40 else "-o"
            ax.plot(x, y, ls, color=color, lw=1.1, ms=3, label=label)
            ax.fill_between(x, d["p25"] / div, d["p75"] / div, color=color, alpha=0.25, lw=0)
            # The 95% CI of the median as error bars; too dense to read past 40 points.
            if len(x) <= 40:
                ax.errorbar(x, y, yerr=[(y - d["ci95_lo"] / div).clip(lower=0),
                                        (d["ci95_hi"] / div - y).clip(lower=0)],
                            fmt="none", ecolor=color, elinewidth=0.8, capsize=2)
            if "jobs_lo" in d and len(x) <= 40:   # pooled jobs: their range, apart from the CI
                for c in ("jobs_lo", "jobs_hi"):
                    ax.plot(x, d[c] / div, "_", color="0.45", ms=7, mew=1.0,
                            label=("range of the jobs' medians" if metric == "rtt" and c ==
                                   "jobs_lo" and not jobs_range else None))
                jobs_range = True
            if metric == "rtt" and "mean" in d:   # the statistic OSU prints, for comparison
                ax.plot(x, d["mean"], ":", color=color, lw=1.0)
                means = True
            rtt = data.get("rtt")
            if statistic and rtt is not None and statistic in rtt:   # the tail (rule 7)
                # the bandwidth of the tail's round trip (a bandwidth's own p99 is its best)
                tail = rtt[statistic].reindex(x).to_numpy()
                ax.plot(x, tail if metric == "rtt" else 2 * x / tail / div, "--", color=color,
                        lw=1.0)
                tails = True
            multi = d["modes"].fillna(1).to_numpy() > 1
            bad = ~d["converged"].astype(bool).to_numpy() & ~multi
            if bad.any():   # doubtful: the CI never reached the target precision
                ax.plot(x[bad], y[bad], "o", mfc="white", mec=color, ms=5, mew=1.2,
                        label=f"not converged ({int(bad.sum())})" if metric == "rtt" else None)
            apart = (d["between"].fillna("").astype(str) != "").to_numpy() if "between" in d \
                else np.zeros(len(x), bool)
            if apart.any():   # launches apart beyond their own intervals (repeats.between)
                ax.plot(x[apart], y[apart], "s", mfc="none", mec="darkorange", ms=7, mew=1.2,
                        label=f"varies between launches ({int(apart.sum())})"
                        if metric == "rtt" else None)
            if multi.any():   # a median between modes describes neither (rule 6)
                ax.plot(x[multi], y[multi], "D", mfc="none", mec="crimson", ms=6, mew=1.2,
                        label=f"two or more modes ({int(multi.sum())})" if metric == "rtt"
                        else None)
    if means:
        ax_rtt.plot([], [], ":", color="grey", label="dotted: mean (what OSU prints)")
    if tails:
        ax_rtt.plot([], [], "--", color="grey", label=f"dashed: {statistic}")
    ax_rtt.set_ylabel("round-trip time RTT (µs)")
    rtts = any(data.get("rtt") is not None for _, _, data in curves)
    ax_bw.set_ylabel(f"bandwidth {'2·size/RTT' if rtts else 'window·size/time'} ({bw_unit})")
    if rng.log:
        ax_rtt.set_yscale("log")
        ax_bw.set_yscale("log")
    return _finish(fig, ax_rtt, ax_bw, rng, f"Ping-pong: {rng.title} (median, p25–p75 band; "
                   "dotted: mean" + (f"; dashed: {statistic}" if tails else "") + ")", notes)


def _finish(fig, top, bottom, rng, title, notes):
    """Both panels on the size axis of RNG, the top one's labels kept, legend, title, caveats."""
    _size_axis(top, rng)
    _size_axis(bottom, rng)
    top.tick_params(labelbottom=True)
    # a stream run has no round trips: its legend goes with the bandwidth below
    (top if top.get_legend_handles_labels()[0] else bottom).legend(fontsize=8, loc="best")
    fig.suptitle(title)
    return caveats_footer(fig, notes)


def _buffers_figure(mode, curves, notes):
    """curves: [(state, label, color, frame of size -> median)]; osu first when present."""
    fig, (ax, ax_r) = plt.subplots(2, 1, figsize=(8.5, 8), sharex=True,
                                   gridspec_kw={"height_ratios": [2, 1]})
    ref = next((d for st, _, _, d in curves if st == "osu"), curves[0][3])
    ref_name = next((st for st, *_ in curves if st == "osu"), curves[0][0])
    div = 1.0 if mode == "pingpong" else 1000.0   # records hold MB/s; figures show GB/s
    for st, label, color, d in curves:
        x = d.index.to_numpy()
        ax.plot(x, d["median"] / div, "-o", color=color, lw=1.1, ms=3, label=label)
        ax.fill_between(x, d["p25"] / div, d["p75"] / div, color=color, alpha=0.2, lw=0)
        both = d.index.intersection(ref.index)
        ax_r.plot(both, d.loc[both, "median"] / ref.loc[both, "median"], "-o", color=color,
                  lw=1.1, ms=3, label=st)
    metric = "latency (µs)" if mode == "pingpong" else "bandwidth (GB/s)"
    ax.set_ylabel(f"{metric}, median")
    ax.set_yscale("log")
    ax_r.set_ylabel(f"ratio to {ref_name}")
    ax_r.axhline(1.0, color="grey", lw=0.8)
    return _finish(fig, ax, ax_r, next(r for r in RANGES if r.id == "pow2"),
                   f"What the state of the buffers costs: {mode} (median, p25–p75 band)", notes)


def buffers_figures(runs) -> list:
    """One figure per mode measured with two or more states of the buffers or kinds of pages
    (jostle-bench --pages); the reference is osu on the system's pages."""
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    order = {f"{st}{pg}": 4 * k + j for k, st in enumerate(("osu", "distinct", "echo", "cold"))
             for j, pg in enumerate(("", ", base pages", ", huge pages"))}
    figures = []
    for mode in dict.fromkeys(m for r in runs for m in series(r)):
        metric = "rtt" if mode == "pingpong" else "bandwidth"
        have = [(state(r), r) for r in runs if state(r) and metric in series(r).get(mode, {})]
        if len({st for st, _ in have}) < 2:
            continue
        have.sort(key=lambda x: order.get(x[0], 99))
        labels = dict(zip(map(id, runs), _labels(runs)))
        curves, notes = [], []
        for k, (st, r) in enumerate(have):
            d = series(r)[mode][metric]
            if metric == "rtt":  # latency = RTT / 2, quantile by quantile
                d = d / 2.0
            curves.append((st, labels[id(r)], colors[k % len(colors)], d))
            if r.caveats:
                notes.append((st, ", ".join(r.caveats)))
        same = {c for _, c in notes}
        notes = [f"all: {same.pop()}"] if len(same) == 1 and len(notes) == len(curves) else \
            [f"{st}: {c}" for st, c in notes]
        fig = _buffers_figure(mode, curves, notes)
        states = ", ".join(st for st, *_ in curves)
        caption = (f"What the state of the buffers costs ({mode}): "
                   f"{'latency' if mode == 'pingpong' else 'bandwidth'} per message size for "
                   f"{states}; below, each state's median over osu's (OSU's conventions: the "
                   "echo from its own send buffer, one buffer per side for a window). echo "
                   "sends back the lines the transfer has just dirtied; cold never hits cache"
                   + ("; huge pages: 2 MiB pages asked for (base: refused; otherwise what the "
                      "kernel's setting gave): a large intra-node message is copied by the "
                      "kernel page by page" if any(pages(r) for _, r in have) else "") + ".")
        figures.append(Figure(f"pingpong-buffers-{mode}", f"What the state of the buffers "
                              f"costs: {mode}", caption, fig))
    return figures


@pooled
def build(runs, statistic=None) -> list:
    """STATISTIC: a percentile column ("p99") drawn dashed beside the median."""
    runs = [r for r in runs if not r.points.empty]
    if not runs:
        return []
    labels = _labels(runs)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    per_run = [series(r) for r in runs]
    all_sizes = set()
    for r in runs:
        all_sizes.update(int(s) for s in r.points["size"].dropna())
    figures = []
    for rng in RANGES:
        if sum(map(rng.dense, all_sizes)) < rng.min_dense:
            continue
        curves, notes, peak = [], [], 0.0
        for i, (run, label, ser) in enumerate(zip(runs, labels, per_run)):
            drawn = False
            for j, (mode, data) in enumerate(ser.items()):
                cut = {m: d[[rng.keep(int(s)) for s in d.index]] for m, d in data.items()}
                if max((len(d) for d in cut.values()), default=0) < 2:
                    continue
                if "bandwidth" in cut and len(cut["bandwidth"]):
                    peak = max(peak, float(cut["bandwidth"]["median"].max()))
                name = label if mode == "pingpong" else f"{label}, {mode}"
                curves.append((name, colors[(i + j) % len(colors)], cut))
                drawn = True
            if drawn and run.caveats:
                notes.append(f"{label}: {', '.join(run.caveats)}")
        if not curves:
            continue
        unit = "GB/s" if peak >= 1000 else "MB/s"
        fig = _figure(rng, curves, unit, notes, statistic)
        bound_note = _bound_lines(fig.axes[1], runs, 1000.0 if unit == "GB/s" else 1.0)
        if bound_note:
            for ax in fig.axes[:2]:   # a stream run has no round trips: its top panel is empty
                if ax.get_legend_handles_labels()[0]:
                    ax.legend(fontsize=8, loc="best")
        sizes = sorted(s for s in all_sizes if rng.keep(s))
        caption = (f"Round-trip time and bandwidth 2·size/RTT, {rng.title}: "
                   f"{len(sizes)} sizes from {human(sizes[0])} to {human(sizes[-1])} B; "
                   f"{len(curves)} curve(s). Line: median; band: p25–p75; error bars (up to "
                   "40 points a curve): 95% confidence interval of the median; hollow "
                   "circles: points whose interval did not reach the target precision; orange "
                   "squares (launches pooled): points whose launches lie apart beyond their own "
                   "intervals, varying between launches; red "
                   "diamonds: points whose samples have two or more modes (the median lies "
                   "between them: never reported as precise); dotted: "
                   "the mean of the samples, the statistic OSU prints (jostle-bench "
                   "--statistic mean), above the median where a busy node adds outliers."
                   + (f" Dashed: {statistic}, the tail a bulk-synchronous code waits for."
                      if statistic else "")
                   + (f" Bandwidth panel, {bound_note}." if bound_note else ""))
        figures.append(Figure(f"pingpong-{rng.id}", f"Ping-pong, {rng.title}", caption, fig))
    return figures + buffers_figures(runs)
