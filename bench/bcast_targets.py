#!/usr/bin/env python3
"""Targets of the bcast benchmark, printed as ratios with PASS or FAIL:

  * 256 simulated nodes, 1 MiB to every other node: auto <= 1.5 x the bound
    m/beta + ceil(log2 P) alpha (alpha, beta: the simulated platform's route latency and link
    bandwidth, from the runs' metadata), and auto <= the best smpi:* algorithm;
  * every size (default 8 B, then powers of 4 from 64 B to 16 MiB) at 16, 64 and 256 nodes:
    auto <= 1.05 x the best of jostle's other routings and <= 1.10 x the best smpi:* algorithm
    (SimGrid's own MPI_Bcast algorithms, `jostle bcast --routing smpi:all`);
  * real ranks (4, oversubscribed here; Open MPI and MPICH builds when present): auto against
    the library's MPI_Bcast with its tuned defaults, printed without a target.

Simulated runs: `jostle bcast --simulate` into one campaign (a temporary directory unless
--keep DIR; `jostle report DIR/targets` draws it), one sample per point (simulated time is
deterministic), every routing of jt_dbcast in one launch per node count and each smpi:*
algorithm in a launch of its own. A launch that runs past --timeout (jostle's routings: 30
min) or --smpi-timeout (each smpi:* algorithm: 10 min) seconds of real time is stopped and
the script goes on (at 256 nodes arrival_pattern_aware_wait, which polls, does not finish):
its points measured so far are kept, the missing ones are listed, and a "best smpi:*" is
over the algorithms measured at that point (the count is printed). Launches run side by side,
as many as this machine has cores (`--jobs`: simulated times do not depend on load); the
default grid took about an hour of real time on a 2-core VM one launch at a time.
Exit status 0 when every target passes, 1 otherwise (or when a jostle launch failed)."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import checkout_venv

checkout_venv.use()
ROOT = checkout_venv.ROOT
import pandas as pd  # noqa: E402
from jostle.figures.bcast import bound_us  # noqa: E402
from jostle.records.results import IncompleteRunWarning, load_run  # noqa: E402
from jostle.run.simgrid import SMPI_BCAST_ALL  # noqa: E402
from jostle.sizes import human  # noqa: E402

SIZES = "8,64,256,1K,4K,16K,64K,256K,1M,4M,16M"
REAL_SIZES = "8,1K,64K,1M,16M"
ENV = dict(os.environ, PYTHONPATH=str(ROOT / "python"), OMPI_ALLOW_RUN_AS_ROOT="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
OURS = "all"   # every routing jostle-bench knows, auto and mpi_bcast included


def jostle(*args, quiet=True):
    cmd = [sys.executable, "-m", "jostle.cli", "bcast", *args, "--quiet"]
    p = subprocess.run(cmd, env=ENV, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE if quiet else None, text=True)
    return p.returncode, (p.stderr or "")


def points(path):
    """(the run, its time points as {param or statistic: value}) of a run file, complete or
    .partial (a broken last line left out)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteRunWarning)
        run = load_run(path, allow_incomplete=True)
    if run.points.empty:
        return run, []
    time_points = run.points[run.points.metric == "time"]
    return run, [{k: v for k, v in row.items() if not pd.isna(v)}
                 for row in time_points.to_dict("records")]


def simulate(camp, nodes, sizes, timeouts, bench):
    """Runs the campaign node count by node count: jostle's routings in one launch, then the
    smpi:* algorithms (a launch each), with timeouts[0] and timeouts[1] seconds of real time
    per launch. Returns ({run name: status} of the launches that did not finish, whether
    jostle's own routings all finished)."""
    lost = {}
    for n in nodes:
        for timeout, routings in ((timeouts[0], [OURS]),
                                  (timeouts[1], [f"smpi:{a}" for a in SMPI_BCAST_ALL])):
            if not launch_all(camp, n, sizes, routings, timeout, bench, lost):
                return lost, False
    return lost, not any(run == f"bcast-sim-{n}" for run in lost for n in nodes)


def launch_all(camp, n, sizes, routings, timeout, bench, lost) -> bool:
    """Launches ROUTINGS at N nodes until each has finished or failed: a launch that fails or
    runs past TIMEOUT goes into LOST and the rest is launched again (jostle resumes: what
    completed is not run again). False when jostle itself failed (bad input, no build)."""
    name = {OURS: f"bcast-sim-{n}", **{r: f"bcast-sim-{n}-smpi-{r[5:]}"
                                      for r in routings if r.startswith("smpi:")}}
    while routings:
        rc, err = jostle("--simulate", "--nodes", str(n), "--sizes", sizes,
                         "--routing", ",".join(routings), "--min-reps", "1", "--warmup", "0",
                         "--timeout", str(timeout), "--output-dir", str(camp.parent),
                         "--campaign", camp.name, "--jobs", str(os.cpu_count() or 1),
                         *(["--bench", bench] if bench else []))
        if rc == 0:
            return True
        new = {}
        for side in camp.glob(f"bcast-sim-{n}*.launch.json"):
            rec = json.loads(side.read_text())
            status = rec.get("status")
            if status == "ok" and not (camp / f"{rec['run']}.jsonl").exists():
                status = "no records: SimGrid stopped it (deadlock)"
            if status not in ("ok", "running") and rec["run"] not in lost:
                new[rec["run"]] = status
        if not new:
            print(f"jostle bcast --simulate failed at {n} nodes (exit {rc}):\n{err.strip()}")
            return False
        lost.update(new)
        routings = [r for r in routings if name[r] not in new]
    return True


def collect(camp):
    """{nodes: {size: {routing: median µs}}}, {nodes: {size: auto's choice}}, {nodes: (α, β)}."""
    data, chose, plat = {}, {}, {}
    files = list(camp.glob("bcast-sim-*.jsonl")) + list(camp.glob("bcast-sim-*.jsonl.partial"))
    for f in files:
        run, pts = points(f)
        n = (run.meta.get("mpi") or {}).get("ranks")
        sim = run.meta.get("simulated") or {}
        if not n:
            continue
        plat[n] = (sim.get("route_latency_s"), sim.get("route_bandwidth_Bps"))
        for q in pts:
            if q["recipients"] != n - 1:
                continue
            data.setdefault(n, {}).setdefault(q["size"], {})[q["routing"]] = q["median"]
            if q["routing"] == "auto":
                seg = f"/{human(int(q['segment']))}" if q.get("segment") else ""
                chose.setdefault(n, {})[q["size"]] = q.get("chosen", "?") + seg
    return data, chose, plat


def best(med, pick):
    c = {r: t for r, t in med.items() if pick(r)}
    return min(c.items(), key=lambda kv: kv[1]) if c else (None, None)


def verdict(ratio, target, results):
    ok = ratio is not None and ratio <= target
    results.append(ok)
    return f"{ratio:6.3f} {'PASS' if ok else 'FAIL'}" if ratio is not None else "   –   FAIL"


def report_simulated(data, chose, plat, lost, results):
    nall = len(SMPI_BCAST_ALL)
    for n in sorted(data):
        print(f"\n== simulated, {n} nodes (broadcast to the {n - 1} others), median µs; "
              f"auto/jostle: auto over the best other routing of jt_dbcast (≤ 1.05); "
              f"auto/smpi: over the best smpi:* algorithm (≤ 1.10)")
        print(f"{'size':>6} {'auto':>11} {'auto chose':<20} {'best jostle':<26} "
              f"{'best smpi:* (of measured)':<36} {'auto/jostle':>11} {'auto/smpi':>11}")
        for size in sorted(data[n]):
            med = data[n][size]
            auto = med.get("auto")
            jr, jt = best(med, lambda r: r not in ("auto", "mpi_bcast") and not r.startswith("smpi:"))
            sr, st = best(med, lambda r: r.startswith("smpi:"))
            nsmpi = sum(r.startswith("smpi:") for r in med)
            rj = auto / jt if auto and jt else None
            rs = auto / st if auto and st else None
            js = f"{jr} {jt:.4g}" if jr else "–"
            ss = f"{sr[5:]} {st:.4g} ({nsmpi}/{nall})" if sr else f"– (0/{nall})"
            print(f"{human(size):>6} {auto if auto else float('nan'):>11.4g} "
                  f"{chose.get(n, {}).get(size, '–'):<20} {js:<26} {ss:<36} "
                  f"{verdict(rj, 1.05, results):>11} {verdict(rs, 1.10, results):>11}")
    if lost:
        print("\nlaunches stopped or failed (their later sizes are missing above): "
              + ", ".join(f"{r} ({s})" for r, s in sorted(lost.items())))
    n, size = 256, 1 << 20
    print("\n== 256 simulated nodes, 1 MiB to every other node")
    med = data.get(n, {}).get(size)
    if not med or "auto" not in med:
        print("SKIP  not measured (--nodes / --sizes leave it out)")
        return
    alpha, beta = plat[n]
    bound = bound_us(size, n, alpha, beta)   # the figure's line, one formula
    auto = med["auto"]
    sr, st = best(med, lambda r: r.startswith("smpi:"))
    print(f"auto {auto:.1f} µs ({chose[n][size]}); bound m/β + ⌈log₂P⌉·α = {bound:.1f} µs "
          f"(β = {beta / 1e9:.3g} GB/s, α = {alpha * 1e6:.3g} µs, from the platform); "
          f"best smpi:* {sr} {st:.1f} µs")
    print(f"{verdict(auto / bound, 1.5, results)[-4:]}  auto / bound = {auto / bound:.3f} "
          f"(target ≤ 1.5)")
    if st:
        print(f"{verdict(auto / st, 1.0, results)[-4:]}  auto / best smpi:* ({sr}) = "
              f"{auto / st:.3f} (target ≤ 1.0)")


def real(out, sizes, ranks):
    print(f"\n== real ranks: {ranks} on this host ({os.cpu_count()} cores: oversubscribed), "
          "auto against the MPI library's own MPI_Bcast (tuned defaults), median µs; no target")
    print(f"{'library':<16} {'size':>6} {'auto':>11} {'auto chose':<20} {'MPI_Bcast':>11} "
          f"{'auto/MPI':>9}")
    for lib in ("openmpi", "mpich"):
        exe = ROOT / "build" / lib / "jostle-bench"
        if not exe.exists():
            print(f"{lib:<16} not built ({exe})")
            continue
        rc, err = jostle("--ranks", str(ranks), "--mpi", lib, "--bench", str(exe), "--routing",
                         "auto,mpi_bcast", "--sizes", sizes, "--max-time", "3",
                         "--output-dir", str(out), "--campaign", f"real-{lib}",
                         "--name", f"bcast-{ranks}r-{lib}")
        f = out / f"real-{lib}" / f"bcast-{ranks}r-{lib}.jsonl"
        if rc or not f.exists():
            print(f"{lib:<16} failed (exit {rc}): {err.strip()[-400:]}")
            continue
        run, pts = points(f)
        name = run.short_mpi   # 'Open MPI 4.1.4', 'MPICH 4.0.2'
        med = {}
        for p in pts:
            med.setdefault(p["size"], {})[p["routing"]] = p
        for size, m in sorted(med.items()):
            a, b = m.get("auto"), m.get("mpi_bcast")
            ch = a.get("chosen", "?") if a else "–"
            print(f"{name[:16]:<16} {human(size):>6} {a['median'] if a else float('nan'):>11.4g} "
                  f"{ch:<20} {b['median'] if b else float('nan'):>11.4g} "
                  f"{a['median'] / b['median'] if a and b else float('nan'):>9.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", metavar="DIR", help="write the campaigns here and keep them")
    ap.add_argument("--nodes", default="16,64,256", help="simulated node counts (16,64,256)")
    ap.add_argument("--sizes", default=SIZES, help=f"simulated sizes ({SIZES})")
    ap.add_argument("--timeout", type=float, default=1800,
                    help="real seconds before the launch of jostle's routings is stopped, per "
                         "node count (1800: at 256 nodes and 16 MiB it takes about 20 min here)")
    ap.add_argument("--smpi-timeout", type=float, default=600,
                    help="real seconds before each smpi:* launch is stopped (600)")
    ap.add_argument("--real-sizes", default=REAL_SIZES,
                    help=f"sizes on real ranks ({REAL_SIZES}); 'none' to skip real ranks")
    ap.add_argument("--ranks", type=int, default=4, help="real ranks (4)")
    ap.add_argument("--bench", metavar="PATH",
                    help="SimGrid build of jostle-bench (default build/simgrid/jostle-bench)")
    a = ap.parse_args()
    out = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="jostle-bcast-targets-"))
    camp = out / "targets"
    nodes = [int(x) for x in a.nodes.split(",")]
    t0 = time.monotonic()
    lost, ok = simulate(camp, nodes, a.sizes, (a.timeout, a.smpi_timeout), a.bench)
    t_sim = time.monotonic() - t0
    results = [ok]
    data, chose, plat = collect(camp)
    report_simulated(data, chose, plat, lost, results)
    if a.real_sizes != "none":
        real(out, a.real_sizes, a.ranks)
    wall = time.monotonic() - t0
    npass = sum(results[1:])
    print(f"\n{npass} of {len(results) - 1} ratios pass; simulated sweep {t_sim:.0f} s, "
          f"all {wall:.0f} s of real time; campaign: {camp}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
