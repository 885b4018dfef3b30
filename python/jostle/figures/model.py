"""The model's leave-one-out check: predicted against measured, one panel per side (compute,
comm), the measurement's 95% CI drawn, the diagonal and ±10% around it. Not a benchmark's
module: `jostle model check` draws it."""

from . import Figure, caveats_footer, np, plt


def check_figure(table, runs) -> Figure:
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 4.3))
    for ax, side in zip(axes, ("compute", "comm")):
        d = table[(table.side == side) & table.predicted.notna()]
        for phase, mk in (("alone", "o"), ("together", "s")):
            e = d[d.phase == phase]
            if e.empty:
                continue
            ax.errorbar(e.measured, e.predicted, xerr=[e.measured - e.lo, e.hi - e.measured],
                        fmt=mk, ms=5, capsize=3, label=f"{phase} ({len(e)})")
        vals = np.concatenate([d.measured, d.predicted]) if len(d) else np.array([0.0, 1.0])
        lo, hi = 0.0, float(np.nanmax(vals)) * 1.1 or 1.0
        x = np.array([lo, hi])
        ax.plot(x, x, "k-", lw=0.8, label="predicted = measured")
        ax.fill_between(x, 0.9 * x, 1.1 * x, color="0.85", label="±10%")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        err = d.error.abs()
        summary = (f"mean |err| {100 * err.mean():.1f}%, max {100 * err.max():.1f}%"
                   if len(err) else "no point predicted")
        ax.set_title(f"{side} bandwidth (GB/s): {summary}", fontsize=9)
        ax.set_xlabel("measured (GB/s), 95% CI of the median")
        ax.set_ylabel("predicted without this point (GB/s)")
        ax.legend(fontsize=8, loc="upper left")
    notes = sorted({c for r in runs for c in r.caveats})
    return Figure("model-check", "Model: leave-one-out prediction against measurement",
                  "Each point predicted by the model fitted without it (docs/model.md).",
                  caveats_footer(fig, notes))
