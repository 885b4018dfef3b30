"""Dynamic broadcasts: the time until the last recipient holds the data, one row per (run, point),
with the run's node count, whether it was simulated (bcast-sim-<N>[-smpi-<ALG>]) and the route's
latency and bandwidth of a simulated platform."""

from __future__ import annotations

from .. import lazy
from ..records.results import frame

pd = lazy.module("pandas")


def times(runs) -> pd.DataFrame:
    df = frame(runs)
    if df.empty or "routing" not in df:
        return pd.DataFrame()
    df = df[df["metric"] == "time"].copy()
    df["simulated"] = [r.startswith("bcast-sim-") for r in df["run"]]
    meta = {r.name: r.meta for r in runs}
    df["nodes"] = df["run"].map(lambda r: (meta[r].get("mpi") or {}).get("ranks"))
    # Simulated runs of one node count (jostle's routings, each smpi:ALG) are one group.
    df["group"] = [f"bcast-sim-{n}" if sim else r
                   for r, n, sim in zip(df["run"], df["nodes"], df["simulated"])]
    sim = df["run"].map(lambda r: meta[r].get("simulated") or {})
    df["beta"] = sim.map(lambda s: s.get("route_bandwidth_Bps"))
    df["alpha"] = sim.map(lambda s: s.get("route_latency_s"))
    return df
