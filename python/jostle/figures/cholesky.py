"""Figures of the cholesky benchmark: flat sends, flat sends in order of need and dynamic
broadcasts.

  cholesky-gain   simulated runs (cholesky-sim-<N>): GFlop/s of each mode versus node count
                  (one line per mode), and dbcast over flat and over flat-ordered (the seed's
                  figure, Swartvagher, SIAM PP22: up to 30% on 100 nodes); matrix, tile, ranks
                  per node and the simulated machine in the title
  cholesky-real   real runs: GFlop/s of each mode, median with p25-p75 bars (StarPU-MPI's
                  mpi_cholesky among them when recorded)
tables(runs) gives the report its section: per run, both modes, the gain and the residual.
"""

from ..records import benchmarks
from ..records.results import frame
from . import Figure, plt, pooled, ticker


def _frame(runs):
    df = frame(runs)
    if df.empty or "mode" not in df:
        return df.iloc[0:0]
    nodes = {r.name: (r.meta.get("mpi") or {}).get("ranks") for r in runs}
    df = df.copy()
    df["nodes"] = df["run"].map(nodes)
    df["platform"] = df["run"].map({r.name: _platform(r.meta) for r in runs})
    df["simulated"] = [r.startswith("cholesky-sim-") for r in df["run"]]
    return df


def _configuration(points, runs) -> str:
    """'N = 2048, tile 256, 2 ranks (grid 2x1) on AMD EPYC (2 cores)': what the bars ran."""
    def one(col):
        vals = points[col].dropna().unique() if col in points else []
        return ", ".join(str(v) for v in vals) or "?"
    ranks = ", ".join(sorted({str((r.meta.get("mpi") or {}).get("ranks", "?")) for r in runs}))
    machines = sorted({f"{(r.meta.get('machine') or {}).get('cpu', '?')} "
                       f"({(r.meta.get('machine') or {}).get('cores', '?')} cores)" for r in runs})
    return (f"N = {one('order')}, tile {one('tile')}, {ranks} ranks (grid {one('grid')}) on "
            + ", ".join(machines))


def _platform(meta):
    """The simulated node and network in words, from the record's "simulated" object (and the
    kernel rates the run was given, which replace the node's speed)."""
    sim = meta.get("simulated")
    if not sim:
        return ""
    cores = sim.get("host_cores", 1)
    rates = (meta.get("cholesky") or {}).get("kernel_rates_gflops")
    speed = (f"cores at the kernel rates given (GEMM {rates['GEMM']:g} GFlop/s)" if rates
             else f"{sim['host_speed_flops'] / 1e9:g} GFlop/s cores")
    words = [f"{speed.replace('cores', 'nodes', 1)}" if cores == 1 and not rates else
             f"nodes of {cores} {speed}" if rates else f"nodes of {cores} × {speed}"]
    if "route_bandwidth_Bps" in sim:
        words.append(f"{sim['route_bandwidth_Bps'] * 8 / 1e9:g} Gbit/s, "
                     f"{sim['route_latency_s'] * 1e6:g} µs between nodes")
    return ", ".join(words)


MODES = tuple(benchmarks.default("cholesky", "modes").split(","))   # every mode, in order
STYLE = {"flat": ("s", "tab:gray", "flat sends, all at once"),
         "flat-ordered": ("^", "tab:blue", "flat sends, one at a time in order of need"),
         "dbcast": ("o", "tab:red", "dynamic broadcasts")}


def _gains(df):
    """Per run with dbcast and a flat mode: nodes, n, tile, the GFlop/s of each mode (medians,
    NaN where not run), gain in % of dbcast over flat and ratio dbcast / flat-ordered."""
    out = []
    g = df[df["metric"] == "gflops"]
    nan = float("nan")
    for run, d in g.groupby("run"):
        med = d.set_index("mode")["median"].astype(float)
        if "dbcast" not in med or not ("flat" in med or "flat-ordered" in med):
            continue
        m = {k: float(med[k]) if k in med else nan for k in MODES}
        out.append(dict(run=run, nodes=int(d["nodes"].iloc[0]), n=int(d["order"].iloc[0]),
                        tile=int(d["tile"].iloc[0]), grid=d["grid"].iloc[0],
                        routing=d[d["mode"] == "dbcast"]["routing"].iloc[0],
                        platform=d["platform"].iloc[0], **m,
                        gain=100 * (m["dbcast"] / m["flat"] - 1),
                        vs_ordered=m["dbcast"] / m["flat-ordered"]))
    return sorted(out, key=lambda x: x["nodes"])


@pooled
def build(runs) -> list:
    df = _frame(runs)
    if df.empty:
        return []
    figs = []
    sim = [x for x in _gains(df[df["simulated"]])]
    for (n, tile), pts in _group(sim).items():
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10.5, 4.4))
        x = [p["nodes"] for p in pts]
        for mode in MODES:
            y = [p[mode] for p in pts]
            if all(v != v for v in y):
                continue
            marker, color, label = STYLE[mode]
            if mode == "dbcast":
                label += f" ({pts[0]['routing']})"
            ax1.plot(x, y, marker=marker, color=color, label=label)
        ax1.set_ylabel("GFlop/s (simulated)")
        ax1.legend(loc="upper left", fontsize=8)
        ax2.plot(x, [1 + p["gain"] / 100 for p in pts], marker="s", color="tab:gray",
                 label="dbcast / flat")
        ax2.plot(x, [p["vs_ordered"] for p in pts], marker="^", color="tab:blue",
                 label="dbcast / flat-ordered")
        ax2.axhline(1, color="black", linewidth=0.8)
        ax2.set_ylabel("GFlop/s ratio")
        ax2.legend(loc="upper left", fontsize=8)
        for ax in (ax1, ax2):
            ax.set_xscale("log", base=2)
            ax.set_xticks(x, [str(int(v)) for v in x])   # 4, 8, 16 nodes, not 2², 2³, 2⁴
            ax.xaxis.set_minor_formatter(ticker.NullFormatter())
            ax.set_xlabel("simulated nodes (one rank each)")
            ax.grid(True, alpha=0.3)
        plat = pts[0]["platform"]
        fig.suptitle(f"Tiled Cholesky, N = {n}, tiles {tile}×{tile}, one rank per node "
                     f"(SimGrid{': ' + plat if plat else ''})", fontsize=10)
        fig.tight_layout()
        where = plat or "platform not recorded"
        figs.append(Figure(f"cholesky-gain-{n}-{tile}", "Cholesky: the modes versus nodes",
                           f"Left: GFlop/s of each mode; right: dynamic broadcasts "
                           f"({pts[0]['routing']}) over flat sends and over flat sends in order "
                           f"of need, for N = {n} and {tile}×{tile} tiles, one rank per node, on "
                           f"a simulated cluster ({where}); same DAG, same run, only the sending "
                           "differs. No error bars: a simulated factorization is deterministic "
                           "(the same platform gives the same time), so each point is one "
                           "factorization.", fig))
    real = df[(~df["simulated"]) & (df["metric"] == "gflops")]
    if not real.empty:
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        labels, meds, lo, hi = [], [], [], []
        for (run, mode), d in real.groupby(["run", "mode"]):
            r = d.iloc[0]
            labels.append(f"{run}\n{mode}")
            meds.append(r["median"])
            lo.append(r["median"] - r["p25"])
            hi.append(r["p75"] - r["median"])
        ax.bar(range(len(meds)), meds, yerr=[lo, hi], color="tab:blue", capsize=3)
        ax.set_xticks(range(len(meds)), labels, fontsize=7)
        ax.set_ylabel("GFlop/s (median; bars: p25–p75)")
        ax.set_title("Tiled Cholesky on real ranks\n" + _configuration(real, runs), fontsize=9)
        fig.tight_layout()
        figs.append(Figure("cholesky-real", "Cholesky on real ranks",
                           "Median GFlop/s per mode over the factorizations of each run; the "
                           "bars span the middle half of them (p25 to p75). "
                           + _configuration(real, runs) + ".", fig))
    return figs


def _starpu(df):
    """{(N, tile, ranks): median GFlop/s} of the StarPU-MPI reference runs."""
    g = df[(df["metric"] == "gflops") & (df["mode"] == "starpu")]
    return {(int(r["order"]), int(r["tile"]), int(r["nodes"])): float(r["median"])
            for _, r in g.iterrows()}


def _group(points):
    out = {}
    for p in points:
        out.setdefault((p["n"], p["tile"]), []).append(p)
    return out


@pooled
def tables(runs) -> list:
    df = _frame(runs)
    if df.empty:
        return []
    res = df[df["metric"] == "residual"].groupby("run")["median"].max()
    ref = _starpu(df)
    rows = [[p["run"], p["nodes"], p["grid"], p["n"], p["tile"], p["routing"],
             round(p["flat"], 2), round(p["flat-ordered"], 2), round(p["dbcast"], 2),
             round(p["gain"], 1), round(p["vs_ordered"], 3),
             round(ref[(p["n"], p["tile"], p["nodes"])], 2)
             if (p["n"], p["tile"], p["nodes"]) in ref else "",
             f"{res[p['run']]:.2e}" if p["run"] in res else "simulated"]
            for p in _gains(df)]
    return [{"id": "cholesky-summary", "title": "Tiled Cholesky: flat sends against dynamic broadcasts",
             "caption": "Median GFlop/s of each mode on the same run configuration (NaN: mode "
                        "not run); gain = dbcast / flat - 1; dbcast / flat-ordered: against flat "
                        "sends one at a time in order of need. StarPU-MPI: the median of its mpi_cholesky on the "
                        "same N, tile and ranks (`jostle cholesky --starpu`), where recorded; it "
                        "computes in float, so compare it with a run of --datatype float. "
                        "Residual: the largest ‖A − L·Lᵀ‖_F / ‖A‖_F checked (real runs).",
             "headers": ["run", "ranks", "grid", "N", "tile", "dbcast routing", "flat GFlop/s",
                         "flat-ordered GFlop/s", "dbcast GFlop/s", "gain %",
                         "dbcast / flat-ordered", "StarPU-MPI GFlop/s", "residual"],
             "rows": rows, "num_cols": ("flat GFlop/s", "flat-ordered GFlop/s", "dbcast GFlop/s",
                                        "gain %", "dbcast / flat-ordered")}]
