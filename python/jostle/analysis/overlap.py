"""Overlap of non-blocking collectives (Taboada, COMPAS 2016): the records of overlap runs as one
frame, and the overlap ratio shown (overlap_min: the seed's formula, denominator
min(t_pure, t_CPU), as in IMB's user guide; the records also hold overlap_max, what IMB-NBC's
code prints)."""

from __future__ import annotations

from .. import lazy

pd = lazy.module("pandas")

SHOWN = "overlap_min"


def frame(runs) -> pd.DataFrame:
    """One row per (run, point, metric) with the run's ranks, library and caveats."""
    parts = []
    for r in runs:
        if r.points.empty:
            continue
        d = r.points.copy()
        d["ranks"] = (r.meta.get("mpi") or {}).get("ranks")
        d["library"] = r.short_mpi
        d["caveats"] = "; ".join(r.caveats)
        parts.append(d)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
