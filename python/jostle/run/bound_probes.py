"""The machine's bounds, measured by jostle-bench alone (no launcher) for analysis/bounds.py:
the memory-latency floor, one core's copy, the triad on all cores, the core-to-core latency.
Analysis never launches: `jostle run`'s bounds step measures here and saves bounds.json."""

import tempfile
from pathlib import Path

from ..binary import ask
from ..errors import JostleError


def measure(bench, nbytes="64M") -> dict:
    """The local NUMA node's memory-latency floor (ns), one core's copy bandwidth and the
    node's triad on all cores (GB/s, STREAM counting)."""
    m = ask(bench, "--latency-matrix", "--bytes", nbytes)
    lat = [row[i] for i, row in enumerate(m.get("latency_ns") or [])]
    bw = [row[i] for i, row in enumerate(m.get("bandwidth_gbs") or [])]
    found = {"memory_latency_ns": min(lat) if lat else None,
             "copy_GBps": max(bw) if bw else None,
             "source": f"jostle-bench --latency-matrix --bytes {nbytes} (local node: pointer "
                       "chase, one-core copy)", "topology": m.get("topology")}
    try:   # a bench built before --stream: the triad is said unknown, the rest stands
        t = ask(bench, "--stream")
        found.update(triad_GBps=t.get("GBps"), triad_threads=t.get("threads"),
                     triad_source=f"jostle-bench --stream: the triad on all {t.get('threads')} "
                                  f"cores at once, {t.get('bytes_per_thread', 0) >> 20} MiB of "
                                  f"arrays each, best of {t.get('rounds')} rounds")
    except JostleError as e:
        found.update(triad_GBps=None, triad_source=f"not measured: {e}")
    try:   # a bench built before c2c: the latency's bound is said unknown
        found.update(c2c(bench))
    except JostleError as e:
        found.update(c2c_ns={}, c2c_source=f"not measured: {e}")
    return found


def c2c(bench, pairs="auto", max_time=0.5) -> dict:
    """{"c2c_ns": {"A:B": {"median", "ci95"}}, "c2c_source"}: the core-to-core latency (one way,
    ns) of PAIRS of cores by `jostle-bench c2c`, run alone (an MPI singleton)."""
    from ..records.results import load_run   # pandas, only when measured
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "c2c.jsonl"
        argv = ["c2c", "--pairs", pairs, "--max-time", str(max_time), "--quiet",
                "--output", str(out)]
        ask(bench, *argv, timeout=120, answer="text")
        if not out.exists():
            raise JostleError(f"'{bench} {' '.join(argv)}' wrote no {out.name}")
        run = load_run(out)
    lat = run.points[run.points["metric"] == "latency"]
    got = {f"{int(r['core_a'])}:{int(r['core_b'])}":
           {"median": float(r["median"]), "ci95": [float(r["ci95_lo"]), float(r["ci95_hi"])],
            "n": int(r["n"])} for r in lat.to_dict("records")}
    return {"c2c_ns": got, "c2c_source": "jostle-bench c2c: one cache line bounced between a "
            "thread on each core, ns one way (half a round trip), median of the samples of "
            f"{int(lat['bounces'].iloc[0]) if len(lat) else '?'} round trips"}
