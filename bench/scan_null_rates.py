#!/usr/bin/env python3
"""How often a scan of a clean allocation drains a healthy node, by its size (issue 50).

Each scan is simulated as the issue's review did it: N nodes, each with an uplink and a
downlink of its own (lognormal, sd 0.05: the hardware), each directed pair's interference drawn
anew (Student t with 3 degrees of freedom, sd 0.05), a link's bandwidth the least of its
sender's uplink, its receiver's downlink and the pair's draw (the slowest part of its route),
its latency the same on every link; 32 shift rounds (every partner below 33 nodes). The links go through the
judgement `jostle scan` runs (analysis/scan/verdict.py: judge with no fingerprint values, no baseline,
--fdr 0.01, --min-effect 0.1, then hold_back): a scan "drains" when a node is to be drained.

--fault F also plants one node whose uplink is at F (e.g. 0.6) and counts the scans that drain
it (the power), and those that drain another.

Prints, per N, the share of scans that drained a node with its binomial 95% interval, and the
seconds taken. Exit status 0 when every rate of a clean scan is at most --target (0.01).

Usage: bench/scan_null_rates.py [--sizes 16,64,128,199,200,256] [--scans 200] [--fault F]
"""
import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))   # loaded by a test, too
import checkout_venv

checkout_venv.use()

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from jostle.analysis import stats  # noqa: E402

SIZES = (16, 64, 128, 199, 200, 256)


def clean_links(n, rng, shifts=32, sd=0.05, fault=None, factor=1.0, hw=None) -> tuple:
    """(hosts, links) of one simulated scan of N nodes: a link the least of its sender's
    uplink, its receiver's downlink and the pair's t3 interference; node FAULT's uplink at
    FACTOR. HW: the (up, down, shifts) of a first pass (the second: the same hardware and
    links, new draws), returned as the third."""
    hosts = [f"n{i:03d}" for i in range(n)]
    if hw is not None:
        up, down, ks = hw
    else:
        up, down = sd * rng.standard_normal(n), sd * rng.standard_normal(n)
        if fault is not None:
            up[fault] += math.log(factor)
        ks = np.arange(1, n)
        if ks.size > shifts:
            ks = np.sort(rng.choice(ks, shifts, replace=False))
    src = np.repeat(np.arange(n)[None, :], ks.size, axis=0).ravel()
    dst = ((np.arange(n)[None, :] + ks[:, None]) % n).ravel()
    pair = sd * rng.standard_t(3, src.size) / math.sqrt(3)
    bw = np.minimum(np.minimum(up[src], down[dst]), pair)
    h = np.array(hosts)
    return hosts, pd.DataFrame({"src": h[src], "dst": h[dst], "latency": 5.0,
                                "bandwidth": 1000.0 * np.exp(bw)}), (up, down, ks)


def fingerprints(hosts, rng, sd=0.05, slow=(), factor=1.0, fast=(), faster=1.0):
    """node_values of HOSTS: every fingerprint metric lognormal of spread SD (the nodes'
    hardware); the triad of the nodes SLOW at FACTOR; every metric of the nodes FAST FASTER
    times better (a newer firmware)."""
    from jostle.analysis import scan
    n, cols = len(hosts), {}
    for m in scan.FINGERPRINT:
        x = 10 * np.exp(sd * rng.standard_normal(n))
        x[list(fast)] *= faster ** -m.worse
        if m.name == "triad":
            x[list(slow)] *= factor
        cols[m.name] = x
        if m.degradation:
            cols[m.name + "_u"] = np.zeros(n)
    return pd.DataFrame(cols, index=hosts)


def drained(hosts, links, fdr=0.01, min_effect=0.1) -> list:
    """The nodes a scan of LINKS would drain: scan.judge (no fingerprint values, no baseline)
    and hold_back, as `jostle scan` runs them."""
    return [f.where for f in suspects(hosts, links)[0] if f.kind == "node" and f.drain]


def suspects(hosts, links, values=None, again=None, classes=None, fdr=0.01, min_effect=0.1):
    """(findings, verdict) of a scan as `jostle scan` judges it: scan.judge of VALUES
    (node_values; None: not measured) and LINKS, hold_back; AGAIN: the links measured a
    second time, and only what is flagged again kept (scan.second_pass; the fingerprints are
    the nodes' hardware, the same the second time)."""
    from jostle.analysis import scan
    if values is None:
        values = pd.DataFrame({c: np.nan for m in scan.FINGERPRINT
                               for c in (m.name, m.name + "_u")}, index=hosts)
    v = scan.judge(values, {}, fdr, min_effect, links=links, hosts=hosts, link_run="links",
                   classes=classes)
    found = v.findings
    if again is not None and (found or v.screened):
        found = scan.second_pass(v, fdr, min_effect, values=values, links=again)
    return scan.hold_back(scan.rank({}, found), v), v


def rate(n, scans, seed=1, fault=None, factor=1.0) -> tuple:
    """(scans that drained a healthy node, scans that drained the faulty one) of SCANS."""
    rng = np.random.default_rng([seed, n])
    false = hit = 0
    for _ in range(scans):
        hosts, links, _ = clean_links(n, rng, fault=fault, factor=factor)
        names = drained(hosts, links)
        bad = hosts[fault] if fault is not None else None
        false += any(h != bad for h in names)
        hit += bad in names
    return false, hit


def interval(k, n) -> str:
    """Wilson's 95% interval of K of N, as printed."""
    lo, hi = stats.wilson(k, n)
    return f"[{lo:.1%}, {hi:.1%}]"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--scans", type=checkout_venv.at_least_one, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fault", type=float, help="one node's uplink at this factor (0 < F < 1)")
    ap.add_argument("--target", type=float, default=0.01)
    args = ap.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 5:
        ap.error(f"--sizes '{args.sizes}': expected node counts >= 5, comma-separated")
    if args.fault is not None and not 0 < args.fault < 1:
        ap.error(f"--fault '{args.fault}': expected a factor between 0 and 1")
    ok = True
    print(f"# clean scans drained, {args.scans} scans a size (node sd 0.05, pair t3 sd 0.05, "
          "32 shifts, fdr 0.01, min effect 0.1)" +
          (f"; one node's uplink at {args.fault:g}" if args.fault else ""))
    for n in sizes:
        t0 = time.monotonic()
        fault = 0 if args.fault else None
        false, hit = rate(n, args.scans, args.seed, fault, args.fault or 1.0)
        share = false / args.scans
        ok &= share <= args.target
        power = f"; the faulty node drained {hit}/{args.scans}" if args.fault else ""
        print(f"N = {n:>4}: a healthy node drained in {false}/{args.scans} = {share:.1%} "
              f"{interval(false, args.scans)}{power} ({time.monotonic() - t0:.0f} s)",
              flush=True)
    print(f"# target (a healthy node drained in at most {args.target:.0%} of scans): "
          f"{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
