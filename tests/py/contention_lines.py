"""The records jostle-bench contention would write, made by hand (tests/py/test_contention.py)
and by the fake bench of tests/py/test_contention_cli.py: this module imports nothing heavy, so
that the fake, a new Python at each run, starts in a fraction of a second."""

M64 = 64 << 20


def _point(params, metric, unit, med):
    return {"type": "point", "params": params, "metric": metric, "unit": unit, "n": 50,
            "min": med, "p25": med, "median": med, "p75": med, "p99": med, "max": med,
            "mean": med, "stddev": 0.0, "ci95": [med, med], "converged": True, "elapsed_s": 0.2}


def run_lines(argv, kernel="triad", cores=2, sizes=(4, M64), ai=1 / 12, warnings=(),
              counters=None, stalled=False):
    """The records jostle-bench contention would write, with a simple contention model:
    together, latency grows 10 % and bandwidth and compute lose 5 % per compute core."""
    meta = {"type": "meta", "schema": 1, "benchmark": "contention", "argv": list(argv),
            "hosts": ["h", "h"], "mpi": {"library": "Open MPI v4.1.4", "ranks": 2},
            "machine": {"cpu": "Fake", "cores": 4, "numa_nodes": 2, "topology": "this system"},
            "kernel": {"name": kernel, "ai": ai}, "warnings": list(warnings),
            "counters": counters or {"backend": "unavailable", "reason": "perf_event_paranoid is 3"}}
    lines, f = [meta], 1 - 0.05 * cores
    for size in sizes:
        lat, bw = 1.0 + size / 5000.0, 2 * size / (1.0 + size / 5000.0)
        base = {"size": size, "kernel": kernel, "compute_cores": cores, "ai": ai, "rep": 0}
        comp = [("compute_bandwidth", "GB/s", 10.0), ("compute_flops", "GFlop/s", 10.0 * ai)]
        comp = [c for c in comp if not (kernel == "cpu" and c[0] == "compute_bandwidth")]
        stall = [("stalled_fraction", "1", 0.3)] if stalled else []
        for m, u, v in comp + stall if cores else []:
            lines.append(_point({"phase": "compute", **base}, m, u, v))
        for m, u, v in (("latency", "us", lat), ("bandwidth", "MB/s", bw), ("rtt", "us", 2 * lat)):
            lines.append(_point({"phase": "comm", **base}, m, u, v))
        for m, u, v in (("latency", "us", lat * (1 + 0.1 * cores)), ("bandwidth", "MB/s", bw * f),
                        ("rtt", "us", 2 * lat * (1 + 0.1 * cores)), *((m, u, v * f) for m, u, v in comp),
                        *((m, u, v + 0.1 * cores) for m, u, v in stall)):
            if cores or m in ("latency", "bandwidth", "rtt"):
                lines.append(_point({"phase": "together", **base}, m, u, v))
    lines.append({"type": "end", "status": "ok", "points": len(lines) - 1, "elapsed_s": 1.0})
    return lines
