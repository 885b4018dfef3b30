"""The working set a run measured with: the memory latency's pointer-chase chain, the
contention's arrays. Each is cut to what a node builds in its share of a time budget
(jostle-bench --setup-time; docs/check.md, "The budget"), and a value measured with one size is
another measurement than one measured with another (a 1 MiB chain walks the caches, a 32 MiB
one the memory). `jostle check` measures with its reference's and does not judge a run cut
to another; `jostle scan` compares a node only with the nodes measured with its own
(analysis/scan/working_sets.py)."""

from __future__ import annotations

# The working set of each benchmark: its name (a check class's option), the benchmark that
# builds it, jostle-bench's option, and where its run's meta records its size and its cut.
WORKING_SETS = {"chain_bytes": ("memlat", "--bytes", ("chain", "bytes"), ("chain", "capped_by")),
                "array_bytes": ("contention", "--array-bytes", ("kernel", "array_bytes"),
                                ("kernel", "array_capped_by"))}


def of_run(run) -> dict:
    """{name: bytes} of the working sets RUN (results.Run) measured with: what its meta
    records, or, for a run kept in a baseline, what the baseline kept (`sets`)."""
    kept = getattr(run, "sets", None)
    if kept is not None:
        return {k: v for k, v in kept.items() if k in WORKING_SETS and _size(v)}
    meta = getattr(run, "meta", None) or {}
    out = {}
    for key, (_, _, where, _) in WORKING_SETS.items():
        v = (meta.get(where[0]) or {}).get(where[1])
        if _size(v):
            out[key] = v
    return out


def working_sets(runs_by_bench: dict) -> dict:
    """{chain_bytes, array_bytes} that the runs (results.Run by benchmark, or a list of the
    launches of one: the first) measured with."""
    out = {}
    for key, (bench, _, _, _) in WORKING_SETS.items():
        run = runs_by_bench.get(bench)
        run = run[0] if isinstance(run, list) else run
        v = of_run(run).get(key) if run is not None else None
        if v:
            out[key] = v
    return out


def most_common(sizes, least: int = 1) -> "int | None":
    """The size most of SIZES share (None: unknown, left out), the larger on a tie (the one
    closer to what the caches ask for); None where fewer than LEAST share it."""
    known = [s for s in sizes if s is not None]
    best = max(set(known), key=lambda s: (known.count(s), s), default=None)
    return best if best is not None and known.count(best) >= least else None


def _size(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def mib(b) -> str:
    return f"{b / 2**20:.4g} MiB"
