"""Figures of shift runs (`jostle scan`'s links): heat maps of the link matrices, one for the
bandwidth at the largest size and one for the latency at the smallest, sender in rows and
receiver in columns (mpiGraph's layout)."""

from . import Figure, caveats_footer, np, plt


def matrix(points, metric, size):
    """(hosts in rank order, N x N array of the medians, NaN on the diagonal and where absent)."""
    df = points[(points.metric == metric) & (points["size"] == size)]
    ranks = sorted(set(df.src) | set(df.dst))
    names = {int(r.src): r.src_host for r in df.itertuples()}
    names.update({int(r.dst): r.dst_host for r in df.itertuples()})
    m = np.full((len(ranks), len(ranks)), np.nan)
    at = {r: i for i, r in enumerate(ranks)}
    for r in df.itertuples():
        m[at[r.src], at[r.dst]] = r.median
    return [names[r] for r in ranks], m


def _heat(run, metric, size, unit, cmap, stem):
    hosts, m = matrix(run.points, metric, size)
    n = len(hosts)
    fig, ax = plt.subplots(figsize=(min(4 + 0.25 * n, 14), min(3.5 + 0.25 * n, 13)))
    im = ax.imshow(m, cmap=cmap, interpolation="nearest")
    fig.colorbar(im, ax=ax, label=f"{metric} ({unit})")
    if n <= 32:
        ax.set_xticks(range(n), hosts, rotation=90, fontsize=7)
        ax.set_yticks(range(n), hosts, fontsize=7)
    ax.set_xlabel("receiver")
    ax.set_ylabel("sender")
    pattern = run.meta.get("pattern") or "shift"
    ax.set_title(f"{metric} of every link at {int(size)} B ({pattern}, {n} nodes)")
    caveats_footer(fig, run.warnings[:2])
    return Figure(f"{run.name}-{stem}", f"Links: {metric} at {int(size)} B",
                  f"Median {metric} of each directed link, {pattern} pattern; a row or column "
                  "of one colour is a node whose every link is off.", fig)


def build(runs) -> list:
    out = []
    for run in runs:
        df = run.points
        if df.empty or "src" not in df:
            continue
        out.append(_heat(run, "bandwidth", df["size"].max(), "MB/s", "viridis", "bandwidth"))
        out.append(_heat(run, "latency", df["size"].min(), "us", "viridis_r", "latency"))
    return out
