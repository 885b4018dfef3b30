#!/usr/bin/env python3
"""Targets of `jostle scan`, printed with PASS or FAIL:

  * simulated: --nodes N (default 256) under SimGrid with two injected faults (node 37's link
    at half the bandwidth, node 20's at 5 times the latency): the suspects are exactly those two
    nodes; the simulated time of the link part and the real time it took here are printed.
    (SimGrid 3.32's SMPI model crashed from 128 nodes with a slower link while its cross-traffic
    was on; a simulated scan runs without it: commands/scan.py, SCAN_SMPI_FLAGS);
  * clean: --clean K scans (default 10) of four "hosts" on this machine (network namespaces,
    tests/py/netns4.py; needs root) with no fault: at most one of them flags anything, and
    each flag is printed (what, which node, its z and effect).

Simulated runs are kept in --keep DIR (default: a temporary directory) and resumed from there;
a clean scan is always measured anew. Exit status 0 when every target passes, 1 otherwise."""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import checkout_venv

checkout_venv.use()
ROOT = checkout_venv.ROOT
sys.path.insert(0, str(ROOT / "tests" / "py"))
import netns4  # noqa: E402

FAULTS = {37: "bandwidth=0.5", 20: "latency=5"}


def simulated(keep: Path, nodes: int) -> bool:
    faults = {i if i < nodes else i % nodes: f for i, f in FAULTS.items()}
    cmd = [sys.executable, "-m", "jostle.cli", "scan", "--simulate", "--nodes", str(nodes),
           *[a for i, f in faults.items() for a in ("--inject", f"link:{i}:{f}")],
           "--output-dir", str(keep), "--campaign", f"sim{nodes}", "--format", "json"]
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                       env={**netns4.os.environ, "PYTHONPATH": str(ROOT / "python")})
    if p.returncode not in (0, 1):
        print(f"simulated scan failed (exit {p.returncode}):\n{p.stderr[-2000:]}")
        return False
    doc = json.loads(p.stdout)
    named = sorted(s["node"] or s["link"] for s in doc["suspects"])
    want = sorted(f"node-{i}" for i in faults)
    timing = next((ln for ln in p.stderr.splitlines() if "simulated time" in ln), "")
    ok = named == want and all(s["kind"] == "node" for s in doc["suspects"])
    print(f"{'PASS' if ok else 'FAIL'} simulated {nodes} nodes, faults "
          f"{', '.join(f'node-{i} {f}' for i, f in faults.items())}: named {named or 'nothing'}"
          f" (want exactly {want}); {len(doc['links'])} links")
    for s in doc["suspects"]:
        e = s["evidence"][0]
        print(f"  {s['rank']}. {s['node'] or s['link']}: {e['metric']} {e['value']} {e['unit']} "
              f"(median {e['median']}, z {e['z']})")
    print(f"  {timing.removeprefix('jostle: ')}; this script: {time.monotonic() - t0:.0f} s")
    return ok


def clean(k: int, out: Path) -> bool:
    why = netns4.unavailable()
    if why:
        print(f"SKIP clean scans: {why}")
        return True
    flagged, times = [], []
    with netns4.Hosts(4) as hosts:
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
    ok = len(flagged) <= 1
    print(f"{'PASS' if ok else 'FAIL'} {k} clean scans of 4 hosts: {len(flagged)} with a false "
          f"flag (target: at most 1){'; scans ' + ', '.join(str(i + 1) for i in flagged) if flagged else ''}"
          f"; {sum(times) / len(times):.0f} s per scan ({' '.join(netns4.SCAN_ARGS)})")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=256, help="simulated nodes (default 256)")
    ap.add_argument("--clean", type=int, default=10, help="clean scans (default 10; 0: none)")
    ap.add_argument("--skip-sim", action="store_true")
    ap.add_argument("--keep", metavar="DIR", help="keep the campaigns here (resumed)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="jostle-scan-") as tmp:
        keep = Path(a.keep or tmp)
        ok = True
        if not a.skip_sim:
            ok &= simulated(keep, a.nodes)
        if a.clean:
            ok &= clean(a.clean, keep)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
