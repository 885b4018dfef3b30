#!/usr/bin/env python3
"""A stand-in for jostle-bench that speaks its CLI contract without MPI.

It lets the tests drive launch.py and campaign.py end to end (progress lines,
the table on stdout, .partial then rename, time-outs, Ctrl-C) on any machine.
Behaviour knobs come from the environment:
  FAKE_BENCH_DELAY  seconds per point (default 0)
  FAKE_BENCH_HANG_AFTER  after this many sizes, hang (until a signal: a run that never ends)
  FAKE_BENCH_FLAVOR mpi_flavor printed by --version (default openmpi)
  FAKE_BENCH_EXIT   exit with this status after writing meta (simulates a crash)
  FAKE_BENCH_SWITCH SIZE:FACTOR: that size's values times FACTOR in the even launches
                    (an --output named NAME-r2, -r4, …): a point that switches between two
                    levels from launch to launch, each launch precise on its own
It also writes the hand-checked fixtures in data/ (python3 fake_bench.py --fixtures).
"""

import json
import math
import os
import re
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))


def meta(hosts, library="Open MPI v4.1.4, package: Debian OpenMPI", numa=2,
         warnings=(), argv=("jostle-bench", "pingpong"), schema=1):
    return {"type": "meta", "schema": schema, "tool": "jostle", "version": "0.1.0",
            "git": "abc123def456", "benchmark": "pingpong", "argv": list(argv),
            "start": "2026-11-22T10:00:00Z", "hosts": list(hosts),
            "mpi": {"library": library, "library_full": library, "version": "3.1",
                    "ranks": len(hosts), "thread_level": "multiple"},
            "compiler": {"id": "GNU 12.2.0", "flags": "-O2"},
            "machine": {"cpu": "Fake CPU @ 2.5GHz", "cores": 24, "pus": 24, "numa_nodes": numa,
                        "memory_bytes": 64 << 30, "topology": "this system",
                        "nics": [{"name": "mlx5_0", "kind": "openfabrics", "pci": "0000:81:00.0",
                                  "numa": 1, "link_gbps": 15.75}]},
            "options": {"sizes": "…", "mode": "pingpong"},
            "harness": {"min_reps": 100, "max_reps": 100000, "precision": 0.01, "max_time_s": 1.0,
                        "warmup": 10, "ci": "median, distribution-free order statistics, 95%"},
            "binding": {"0": {"comm": {"core": 0, "pu_os": 0, "mem_numa": 0}, "compute": []},
                        "1": {"comm": {"core": 1, "pu_os": 1, "mem_numa": 0}, "compute": []}},
            "counters": {"backend": "unavailable", "reason": "no PAPI"},
            "warnings": list(warnings)}


def _dist(median, spread, n):
    q = [median * (1 + spread * k) for k in (-0.3, -0.1, 0, 0.1, 0.9, 1.5)]
    return {"n": n, "min": q[0], "p25": q[1], "median": q[2], "p75": q[3], "p99": q[4],
            "max": q[5], "mean": median * (1 + spread * 0.05), "stddev": median * spread * 0.2,
            "ci95": [median * (1 - spread * 0.02), median * (1 + spread * 0.02)],
            "converged": True, "elapsed_s": 0.01}


def points(size, base_us=0.6, gbps=4.0, mode="pingpong", buffers="osu"):
    """The three metric lines of one size; rtt from a simple latency + size/bandwidth model."""
    rtt = base_us + 0.02 * math.sin(size / 7.0) + 2 * size / (gbps * 1e3)
    params = {"size": size, "mode": mode, "buffers": buffers}
    out = []
    for metric, unit, med in (("rtt", "us", rtt), ("latency", "us", rtt / 2),
                              ("bandwidth", "MB/s", 2 * size / rtt)):
        out.append({"type": "point", "params": params, "metric": metric, "unit": unit,
                    **_dist(med, 0.05, 100)})
    return out


def real_bench():
    """The built jostle-bench: its size parser is the only one (the fake does not copy it)."""
    for flavor in ("openmpi", "mpich", "mpi"):
        p = os.path.join(HERE, "..", "..", "build", flavor, "jostle-bench")
        if os.access(p, os.X_OK):
            return p
    sys.exit("fake_bench: no built jostle-bench to parse sizes (make build)")


def expand(spec):
    out = subprocess.run([real_bench(), "--parse-sizes", spec], capture_output=True, text=True)
    if out.returncode:
        sys.stderr.write(out.stderr)
        sys.exit(out.returncode)
    return json.loads(out.stdout)


def dumps(rec):
    return json.dumps(rec, separators=(",", ":")) + "\n"


def run_pingpong(argv):
    opts = {"--sizes": "0:1K", "--output": None, "--mode": "pingpong", "--buffers": "osu"}
    flags = set()
    it = iter(argv)
    for a in it:
        if a in ("--progress", "--quiet", "--check"):
            flags.add(a)
        elif a.startswith("--"):
            opts[a] = next(it)
    sizes = expand(opts["--sizes"])
    delay = float(os.environ.get("FAKE_BENCH_DELAY", "0"))
    out = opts["--output"]
    part = out + ".partial"
    f = open(part, "w")
    f.write(dumps(meta(["fakehost", "fakehost"], argv=["jostle-bench", "pingpong", *argv],
                       numa=1, warnings=["oversubscribed: 2 ranks on 1 core"])))
    f.flush()
    if os.environ.get("FAKE_BENCH_EXIT"):
        print("fake failure: cannot bind", file=sys.stderr)
        sys.exit(int(os.environ["FAKE_BENCH_EXIT"]))
    t0, written = time.time(), [0]
    launch = re.search(r"-r([0-9]+)\.jsonl$", out)
    switch = os.environ.get("FAKE_BENCH_SWITCH", "")
    switch_size, factor = (int(switch.split(":")[0]), float(switch.split(":")[1])) \
        if switch and launch and int(launch[1]) % 2 == 0 else (None, 1.0)

    def stop(signum, frame):
        f.write(dumps({"type": "end", "status": "interrupted", "points": written[0],
                       "elapsed_s": time.time() - t0}))
        f.close()
        sys.exit(128 + signum)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    if "--quiet" not in flags:
        print("# jostle-bench pingpong (fake)\n# Size  Latency(us)  Bandwidth(MB/s)  RTT(us)", flush=True)
    for k, s in enumerate(sizes, 1):
        time.sleep(delay)
        # A dirty echo costs more: the fake's states differ as the real ones do in kind.
        slow = {"osu": 1.0, "distinct": 1.0, "echo": 1.6, "cold": 2.0}[opts["--buffers"]]
        recs = points(s, base_us=0.6 * slow, gbps=4.0 / slow, mode=opts["--mode"],
                      buffers=opts["--buffers"])
        if s == switch_size:   # the time moves by FACTOR: a bandwidth by 1/FACTOR
            for r in recs:
                f_ = 1 / factor if r["unit"] == "MB/s" else factor
                r.update({k: r[k] * f_ for k in ("min", "p25", "median", "p75", "p99", "max",
                                                  "mean", "stddev")})
                r["ci95"] = [x * f_ for x in r["ci95"]]
        for r in recs:
            f.write(dumps(r))
        f.flush()
        written[0] += len(recs)
        if "--quiet" not in flags:
            print(f"{s:<10d} {recs[1]['median']:10.2f} {recs[2]['median']:12.2f} {recs[0]['median']:10.2f}",
                  flush=True)
        if "--progress" in flags:
            print(f"progress {k} {len(sizes)}", file=sys.stderr, flush=True)
        if k == int(os.environ.get("FAKE_BENCH_HANG_AFTER", "0")):
            while True:
                signal.pause()
    f.write(dumps({"type": "end", "status": "ok", "points": written[0], "elapsed_s": time.time() - t0}))
    f.close()
    os.rename(part, out)


def run_overlap(argv):
    """A small overlap run: the three times and both ratios per collective and size."""
    opts = {"--sizes": "4:1M", "--collectives": "ialltoall", "--policy": "scatter",
            "--progress-mode": "none", "--kernel": "cpu"}
    it = iter(argv)
    for a in it:
        if a not in ("--progress", "--quiet", "--oversubscribe", "--fallback"):
            opts[a] = next(it)
    m = meta(["fakehost", "fakehost"], argv=["jostle-bench", "overlap", *argv])
    m["benchmark"] = "overlap"
    m["overlap"] = {"figures_show": "overlap_min"}
    lines = [m]
    for coll in opts["--collectives"].split(","):
        for size in expand(opts["--sizes"]):
            params = {"collective": coll, "size": size, "kernel": opts["--kernel"],
                      "policy": opts["--policy"], "progress": opts["--progress-mode"],
                      "thread_core": "numa"}
            pure = 1 + size / 4e3
            for metric, med in (("t_ovrl", 1.5 * pure), ("t_pure", pure), ("t_cpu", pure)):
                lines.append({"type": "point", "params": params, "metric": metric, "unit": "us",
                              **_dist(med, 0.05, 100)})
            for metric, med in (("overlap_min", 0.5), ("overlap_max", 0.5)):
                lines.append({"type": "point", "params": params, "metric": metric, "unit": "1",
                              "n": 100, "median": med})
    lines.append({"type": "end", "status": "ok", "points": len(lines) - 1, "elapsed_s": 0.1})
    _write(opts["--output"], lines)


def main(argv):
    if argv[:1] == ["--version"]:
        print(json.dumps({"version": "0.1.0", "git": "abc123", "mpi_library": "Open MPI v4.1.4",
                          "mpi_flavor": os.environ.get("FAKE_BENCH_FLAVOR", "openmpi")}))
    elif argv[:1] == ["--machine"]:
        print(json.dumps(meta(["fakehost"])["machine"]))
    elif argv[:1] == ["--parse-sizes"]:
        print(json.dumps(expand(argv[1])))
    elif argv[:1] == ["--list"]:
        print("pingpong  round-trip time and bandwidth between two ranks")
    elif argv[:1] == ["pingpong"]:
        run_pingpong(argv[1:])
    elif argv[:1] == ["overlap"]:
        run_overlap(argv[1:])
    elif argv[:1] == ["--fixtures"]:
        write_fixtures(os.path.join(HERE, "data"))
    else:
        print(f"fake jostle-bench: unknown arguments {argv}", file=sys.stderr)
        sys.exit(2)


# ------------------------------------------------------------ fixtures

FIXTURE_SIZES = (list(range(0, 33)) + list(range(1536, 20 * 1024 + 1, 1024))
                 + [1 << k for k in range(6, 25)])


def _write(path, lines, tail=""):
    with open(path, "w") as f:
        f.writelines(dumps(r) for r in lines)
        f.write(tail)


def write_fixtures(d):
    os.makedirs(d, exist_ok=True)
    intra = [meta(["nodeA", "nodeA"], numa=1, warnings=["oversubscribed: 2 ranks bound on 1 core"])]
    inter = [meta(["nodeA", "nodeB"], library="MPICH Version: 4.0.2", numa=2)]
    for s in sorted(set(FIXTURE_SIZES)):
        intra += points(s)
        inter += points(s, base_us=2.4, gbps=10.0)
    for name, recs in (("pingpong_intra.jsonl", intra), ("pingpong_inter.jsonl", inter)):
        npts = len(recs) - 1
        _write(os.path.join(d, name), recs + [{"type": "end", "status": "ok", "points": npts,
                                               "elapsed_s": 12.5}])
    head = intra[:1] + intra[1:31]   # meta + 10 sizes x 3 metrics
    _write(os.path.join(d, "partial.jsonl.partial"), head)
    _write(os.path.join(d, "interrupted.jsonl.partial"),
           head + [{"type": "end", "status": "interrupted", "points": 30, "elapsed_s": 3.0}])
    _write(os.path.join(d, "noend.jsonl"), head)
    _write(os.path.join(d, "truncated.jsonl"), head, tail='{"type":"point","params":{"si')
    _write(os.path.join(d, "error_status.jsonl"),
           head + [{"type": "end", "status": "error", "points": 30, "elapsed_s": 3.0,
                    "message": "MPI_Send failed: connection reset"}])
    _write(os.path.join(d, "unknown_schema.jsonl"),
           [meta(["nodeA", "nodeA"], schema=2)] + intra[1:4]
           + [{"type": "end", "status": "ok", "points": 3, "elapsed_s": 1.0}])
    with open(os.path.join(d, "malformed.jsonl"), "w") as f:
        f.write(dumps(intra[0]) + dumps(intra[1]) + '{"type":"point", "params": oops}\n'
                + dumps(intra[2]) + dumps({"type": "end", "status": "ok", "points": 2, "elapsed_s": 1}))
    bad = dict(intra[1])
    del bad["median"]
    _write(os.path.join(d, "missing_median.jsonl"),
           [intra[0], bad, {"type": "end", "status": "ok", "points": 1, "elapsed_s": 1.0}])


if __name__ == "__main__":
    main(sys.argv[1:])
