#!/usr/bin/env python3
"""Targets of `jostle scan`, printed with PASS or FAIL, the machine and the date:

  * clean: --seeds K simulated scans (default 20) of --nodes N (default 1024) whose nodes all
    differ (--noise 0.05 --noise-tails t3, seeds 1..K, --shifts 32): at most one scan names
    anything (the false-alarm rate of a whole scan);
  * faults: the same K scans with node 37's link at 0.6 of the bandwidth and node 200's at 5
    times the latency: both named as nodes, and nothing else, in all but one (the power);
  * tree: --tree-seeds K scans (default 10) of a fat tree of --tree-nodes N (default 256; 16
    leaves, 16 spines, bench's topology.conf) with the cable leaf3-spine5 at 0.5 of its
    bandwidth: that cable named in all but one, no node drained;
  * sizes: --size-seeds K clean scans (default 5) at each of --sizes (default 5,8,16,32,64,
    128,199,200,256), fingerprints drawn 5% apart: the scans that name anything (issue 45's
    target: at most 5%, so with 5 seeds none);
  * netns: a real scan of four "hosts" on this machine (network namespaces,
    tests/py/netns4.py; needs root) with one host slowed: named; and --clean K clean ones
    (default 10): no false flag.

Each simulated scan prints its seed, what it named and its real time (the simulation, the
judgement). Simulated campaigns are kept in --keep DIR (default: a temporary directory) and
resumed from there. --quick-check runs fewer and smaller (for a busy machine: --nodes 256
--seeds 5 --tree-seeds 3 --clean 2). Exit status 0 when every target run passes, 1 otherwise."""
import argparse
import datetime
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import checkout_venv
from checkout_venv import machine

checkout_venv.use()
ROOT = checkout_venv.ROOT
sys.path.insert(0, str(ROOT / "tests" / "py"))
sys.path.insert(0, str(ROOT / "python"))
import netns4  # noqa: E402
from jostle.records.fabric import fat_tree_text  # noqa: E402

NOISE = ["--noise", "0.05", "--noise-tails", "t3"]
BAD_CABLE = "leaf3-spine5"


def scan(keep: Path, campaign, nodes, extra) -> tuple:
    """(exit status, the JSON document or None, stderr, seconds) of one simulated scan."""
    cmd = [sys.executable, "-m", "jostle.cli", "scan", "--simulate", "--nodes", str(nodes),
           *extra, "--output-dir", str(keep), "--campaign", campaign, "--format", "json"]
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                       env={**netns4.os.environ, "PYTHONPATH": str(ROOT / "python")})
    doc = json.loads(p.stdout) if p.returncode in (0, 1) and p.stdout.strip() else None
    return p.returncode, doc, p.stderr, time.monotonic() - t0


def named(doc) -> list:
    return sorted((s["kind"], s["node"] or s["link"] or s["cable"]) for s in doc["suspects"])


def _sim_time(err) -> str:
    line = next((ln for ln in err.splitlines() if "simulated time" in ln), "")
    return line.split("; it took ", 1)[-1] if line else "?"


def scans(keep, nodes, todo, jobs):
    """scan() of each (campaign, extra) of TODO, JOBS at a time (a simulation is one process
    on one core, and its judgement does not depend on the real time it took), in order."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(lambda t: scan(keep, t[0], nodes, t[1]), todo)


def simulated(keep, nodes, seeds, shifts, jobs=1) -> bool:
    faults = {37 % nodes: "bandwidth=0.6", 200 % nodes: "latency=5"}
    want = sorted(("node", f"node-{i}") for i in faults)
    ok_clean = ok_faults = True
    for label, inject in (("clean", {}), ("faults", faults)):
        hits, times = 0, []
        todo = [(f"{label}-n{nodes}-s{seed}",
                 [*NOISE, "--seed", str(seed), "--shifts", str(shifts),
                  *[a for i, f in inject.items() for a in ("--inject", f"link:{i}:{f}")]])
                for seed in range(1, seeds + 1)]
        for seed, (rc, doc, err, dt) in enumerate(scans(keep, nodes, todo, jobs), 1):
            times.append(dt)
            if doc is None:
                print(f"  {label} seed {seed}: the scan failed (exit {rc}):\n{err[-1500:]}")
                return False
            got = named(doc)
            good = got == [] if not inject else got == want
            hits += good
            print(f"  {label} seed {seed:2d}: named {got or 'nothing'} ({'ok' if good else 'WRONG'}); "
                  f"{doc['tests']} tests; simulation {_sim_time(err)}, scan {dt:.0f} s", flush=True)
        if not inject:
            ok_clean = seeds - hits <= 1
            print(f"{'PASS' if ok_clean else 'FAIL'} clean: {seeds - hits} of {seeds} scans of "
                  f"{nodes} nodes name anything (target: at most 1); "
                  f"{sum(times) / len(times):.0f} s a scan")
        else:
            ok_faults = hits >= seeds - 1
            print(f"{'PASS' if ok_faults else 'FAIL'} faults: {hits} of {seeds} scans name "
                  f"exactly {[w for _, w in want]} as nodes (target: all but one); "
                  f"{sum(times) / len(times):.0f} s a scan")
    return ok_clean and ok_faults


def sizes(keep, counts, seeds, shifts, jobs=1) -> bool:
    ok = True
    for n in counts:
        rounds = ["--shifts", str(shifts)] if shifts < n - 1 else []   # else every round
        todo = [(f"clean-n{n}-s{seed}", [*NOISE, "--seed", str(seed), *rounds])
                for seed in range(1, seeds + 1)]
        bad, times = [], []
        for seed, (rc, doc, err, dt) in enumerate(scans(keep, n, todo, jobs), 1):
            times.append(dt)
            if doc is None:
                print(f"  sizes N = {n} seed {seed}: the scan failed (exit {rc}):\n{err[-1500:]}")
                return False
            if doc["suspects"]:
                bad.append((seed, named(doc)))
        good = not bad
        ok &= good
        print(f"{'PASS' if good else 'FAIL'} sizes: {len(bad)} of {seeds} clean scans of {n} "
              f"nodes name anything {bad or ''}(target: none); {sum(times) / len(times):.0f} s "
              "a scan", flush=True)
    return ok


def tree(keep, nodes, seeds, shifts, jobs=1) -> bool:
    conf = keep / f"fat-tree-{nodes}.conf"
    keep.mkdir(parents=True, exist_ok=True)
    conf.write_text(fat_tree_text(nodes, 16, 16))
    hits, drained = 0, 0
    todo = [(f"tree-n{nodes}-s{seed}",
             [*NOISE, "--seed", str(seed), "--shifts", str(shifts), "--topology-conf", str(conf),
              "--inject", f"link:{BAD_CABLE}:bandwidth=0.5",
              "--drain-script", str(keep / f"drain-tree-{seed}.sh")])
            for seed in range(1, seeds + 1)]
    for seed, (rc, doc, err, dt) in enumerate(scans(keep, nodes, todo, jobs), 1):
        drain = keep / f"drain-tree-{seed}.sh"
        if doc is None:
            print(f"  tree seed {seed}: the scan failed (exit {rc}):\n{err[-1500:]}")
            return False
        got = named(doc)
        cables = [w for k, w in got if k == "cable"]
        nodes_drained = [ln for ln in drain.read_text().splitlines() if "scontrol" in ln]
        hits += cables == [BAD_CABLE]
        drained += bool(nodes_drained)
        print(f"  tree seed {seed:2d}: named {got or 'nothing'}, {len(nodes_drained)} node(s) "
              f"to drain; simulation {_sim_time(err)}, scan {dt:.0f} s", flush=True)
    ok = hits >= seeds - 1 and drained == 0
    print(f"{'PASS' if ok else 'FAIL'} tree: {BAD_CABLE} at 0.5 named (alone among cables) in "
          f"{hits} of {seeds} scans of {nodes} nodes, 16 leaves (target: all but one), "
          f"{drained} with a node to drain (target: 0)")
    return ok


def netns(k: int, out: Path) -> bool:
    why = netns4.unavailable()
    if why:
        print(f"SKIP netns scans: {why}")
        return True
    flagged, times = [], []
    ok_slow = True
    with netns4.Hosts(4) as hosts:
        slow = hosts.ips[2]
        try:
            hosts.script("slow", slow, "30000")
            p = hosts.scan(out, "slowed")
        finally:
            hosts.heal()
        doc = json.loads(p.stdout) if p.returncode in (0, 1) else None
        got = [s["node"] for s in doc["suspects"]] if doc else None
        ok_slow = got is not None and slow in got
        print(f"{'PASS' if ok_slow else 'FAIL'} netns: {slow} slowed to 30% of a core: named "
              f"{got}")
        for i in range(k):
            t0 = time.monotonic()
            p = hosts.scan(out, f"clean-{i}")
            times.append(time.monotonic() - t0)
            if p.returncode not in (0, 1):
                print(f"FAIL clean scan {i} did not finish (exit {p.returncode}):\n{p.stderr[-2000:]}")
                return False
            doc = json.loads(p.stdout)
            print(f"  scan {i + 1}/{k}: {len(doc['suspects'])} suspect(s), {times[-1]:.0f} s")
            for s in doc["suspects"]:
                ev = "; ".join(f"{e['metric']} {e['value']} (median {e['median']}, z {e['z']})"
                               for e in s["evidence"])
                print(f"    {s['kind']} {s['node'] or s['link']}: {ev}")
            if doc["suspects"]:
                flagged.append(i)
    ok = not flagged
    if k:
        print(f"{'PASS' if ok else 'FAIL'} {k} clean scans of 4 hosts: {len(flagged)} with a "
              f"false flag (target: 0); {sum(times) / len(times):.0f} s per scan "
              f"({' '.join(netns4.SCAN_ARGS)} --min-effect {netns4.MIN_EFFECT})")
    return ok and ok_slow


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=1024, help="simulated nodes (default 1024)")
    ap.add_argument("--seeds", type=int, default=20, help="clean and faulty scans (default 20)")
    ap.add_argument("--shifts", type=int, default=32, help="rounds of each scan (default 32)")
    ap.add_argument("--tree-nodes", type=int, default=256)
    ap.add_argument("--tree-seeds", type=int, default=10)
    ap.add_argument("--clean", type=int, default=10, help="clean netns scans (default 10; 0: none)")
    ap.add_argument("--sizes", default="5,8,16,32,64,128,199,200,256")
    ap.add_argument("--size-seeds", type=int, default=5)
    ap.add_argument("--skip", action="append", default=[],
                    choices=("sim", "tree", "sizes", "netns"))
    ap.add_argument("--quick-check", action="store_true")
    ap.add_argument("--keep", metavar="DIR", help="keep the campaigns here (resumed)")
    ap.add_argument("--jobs", type=int, default=1, help="simulated scans at once (default 1)")
    a = ap.parse_args()
    text = a.sizes
    try:
        a.sizes = [int(x) for x in text.split(",")]
    except ValueError:
        a.sizes = []
    if not a.sizes or min(a.sizes) < 2:
        ap.error(f"--sizes '{text}': expected node counts >= 2, comma-separated")
    if a.quick_check:
        a.nodes, a.seeds, a.tree_seeds, a.clean = 256, 5, 3, 2
    print(f"jostle scan targets, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} "
          f"UTC, on {machine()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="jostle-scan-") as tmp:
        keep = Path(a.keep or tmp)
        ok = True
        if "sim" not in a.skip:
            ok &= simulated(keep, a.nodes, a.seeds, a.shifts, a.jobs)
        if "sizes" not in a.skip:
            ok &= sizes(keep, a.sizes, a.size_seeds, a.shifts, a.jobs)
        if "tree" not in a.skip:
            ok &= tree(keep, a.tree_nodes, a.tree_seeds, a.shifts, a.jobs)
        if "netns" not in a.skip:
            ok &= netns(a.clean, keep)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
