"""Figures and the table of `jostle nuioa` (Moreaud 2007, seed 001), from its runs (pingpong and
contention runs named nuioa-…, see jostle.commands.nuioa):

  nuioa-placement  latency (smallest size) and bandwidth (largest) per placement of the comm
                   thread and its buffers: near/far x near/far, then each NUMA node in turn
                   (seed fig. 2.3 and 2.8)
  nuioa-flows      one-way bandwidth (largest size) of stream, put and get, per placement of
                   each side (seed fig. 2.6-2.7: where the data is deposited is what matters)
  table            the flow and the writers alone and together, per written node (table 2.3)
"""

import re

from ..units import number, shown_frame, size_label
from . import Figure, between_note, plt, pooled

PREFIX = "nuioa-"


def _mine(runs):
    return [r for r in runs if r.name.startswith(PREFIX) and not r.points.empty]


def _value(run, metric, size=None, phase=None):
    """(median, ci95_lo, ci95_hi) of METRIC at SIZE (default the largest), in the unit people
    read (GB/s); None when the run has no such point."""
    df = shown_frame(run.points[run.points["metric"] == metric])
    if phase is not None and "phase" in df:
        df = df[df["phase"] == phase]
    if df.empty:
        return None
    if size is None:
        size = df["size"].max()
    df = df[df["size"] == size]
    if df.empty:
        return None
    row = df.iloc[0]
    return tuple(float(row.get(c, float("nan")))
                 for c in ("median", "ci95_lo", "ci95_hi", "jobs_lo", "jobs_hi"))


def _median(run, metric, size=None, phase=None):
    v = _value(run, metric, size, phase)
    return v[0] if v else None


def _caveats(runs) -> str:
    m = (runs[0].meta.get("machine") or {}) if runs else {}
    bits = []
    if (m.get("numa_nodes") or 1) < 2:
        bits.append("one NUMA node: near = far")
    if len({h for r in runs for h in r.hosts}) < 2:
        bits.append("intra-node: no NIC crossed")
    if any("oversubscribed" in w for r in runs for w in r.warnings):
        bits.append("oversubscribed")
    return f" [{'; '.join(bits)}]" if bits else ""


def _bars(ax, labels, values, unit, title):
    """VALUES: (median, ci95_lo, ci95_hi, jobs_lo, jobs_hi) or None per bar; the interval as an
    error bar, the range of pooled jobs (NaN for one job) as grey ticks beside it."""
    xs = range(len(labels))
    meds = [v[0] if v else 0 for v in values]
    err = [[max(v[0] - v[1], 0) if v and v[1] == v[1] else 0 for v in values],
           [max(v[2] - v[0], 0) if v and v[2] == v[2] else 0 for v in values]]
    ax.bar(xs, meds, yerr=err, capsize=3, color="#4a78b0", ecolor="black")
    jobs = [(x, v[3], v[4]) for x, v in zip(xs, values) if v and v[3] == v[3]]
    if jobs:
        ax.plot([x + 0.25 for x, _, _ in jobs] * 2, [lo for _, lo, _ in jobs] +
                [hi for _, _, hi in jobs], "_", color="0.45", ms=8, mew=1.2,
                label="range of the jobs' medians")
        ax.legend(fontsize=7, loc="best")
    ax.set_xticks(list(xs), labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(unit)
    ax.set_title(title, fontsize=9)
    for x, v in zip(xs, values):
        if v is not None:
            ax.text(x, v[0], number(v[0]), ha="center", va="bottom", fontsize=7)


def _label(name):
    return (name[len(PREFIX):].replace("pp-", "").replace("core", "thread ")
            .replace("-mem", ", mem ").replace("node", "node "))


@pooled
def build(runs) -> list:
    runs = _mine(runs)
    out = []
    pp = [r for r in runs if r.name.startswith(PREFIX + "pp-")]
    if pp:
        fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8))
        small = min(int(r.points["size"].min()) for r in pp)
        big = max(int(r.points["size"].max()) for r in pp)
        labels = [_label(r.name) for r in pp]
        _bars(a, labels, [_value(r, "latency", small) for r in pp], "µs",
              f"latency, {size_label(small)}")
        _bars(b, labels, [_value(r, "bandwidth", big) for r in pp], "GB/s",
              f"bandwidth, {size_label(big)}")
        fig.tight_layout()
        out.append(Figure("nuioa-placement", "NUIOA: placement of the comm thread and buffers",
                          "Ping-pong latency (smallest size) and bandwidth (largest) for the "
                          "comm thread and its buffers near/far the NIC, and on each NUMA node "
                          "in turn (Moreaud 2007, fig. 2.3, 2.8); bars: the median, error bars: "
                          "its 95% interval" + _caveats(pp) + between_note(pp), fig))
    flows = [r for r in runs if re.match(PREFIX + r"(stream|put|get)-", r.name)]
    if flows:
        fig, ax = plt.subplots(figsize=(8, 3.8))
        big = max(int(r.points["size"].max()) for r in flows)
        _bars(ax, [r.name[len(PREFIX):] for r in flows],
              [_value(r, "bandwidth", big) for r in flows], "GB/s",
              f"one-way bandwidth, {size_label(big)}")
        fig.tight_layout()
        out.append(Figure("nuioa-flows", "NUIOA: one-way flows, each side near or far",
                          "Stream (send/receive), MPI_Put and MPI_Get bandwidth with the sender "
                          "or initiator and the receiver or target near/far the NIC; the seed "
                          "finds only where the data lands matters (sec. 2.5.1); error bars: the "
                          "95% interval of the median" + _caveats(flows)
                          + between_note(flows), fig))
    return out


@pooled
def tables(runs) -> list:
    load = [r for r in _mine(runs) if r.name.startswith(PREFIX + "load-")]
    if not load:
        return []
    rows = []
    for r in load:
        flow_a, flow_t = _median(r, "bandwidth", phase="comm"), _median(r, "bandwidth", phase="together")
        cpu_a = _median(r, "compute_bandwidth", phase="compute")
        cpu_t = _median(r, "compute_bandwidth", phase="together")
        pct = lambda a, t: None if not a or t is None else 100.0 * (t / a - 1)
        rows.append([r.name[len(PREFIX + "load-"):], flow_a, flow_t, pct(flow_a, flow_t),
                     cpu_a, cpu_t, pct(cpu_a, cpu_t)])
    headers = ["writers into", "flow alone GB/s", "flow during GB/s", "flow change %",
               "writers alone GB/s/core", "writers during GB/s/core", "writers change %"]
    return [{"id": "nuioa-load", "title": "NUIOA under memory load (seed table 2.3)",
             "caption": "The ping-pong flow (largest size) and compute threads copying into the "
                        "memory of each node, alone and together; Hagrid lost 4-18 % of RDMA "
                        "bandwidth and 26-43 % of CPU write bandwidth" + _caveats(load)
                        + between_note(load, ("bandwidth", "compute_bandwidth")),
             "headers": headers, "rows": rows, "num_cols": tuple(headers[1:])}]
