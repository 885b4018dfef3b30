#!/usr/bin/env python3
"""Issue 45's targets of `jostle scan`'s judgement, on simulated allocations whose truth is
known, with the functions `jostle scan` runs (scan.judge, second_pass, hold_back):

  * clean: N nodes (--sizes), every fingerprint metric lognormal 5% apart (the nodes'
    hardware), the links as bench/scan_null_rates.py makes them (node up and down links
    lognormal 5%, each pair's interference t3 of sd 5%, 32 shifts); what is flagged is
    measured again (the links' draws anew, the fingerprints the same hardware): the share
    of scans that name anything (target <= 5%) and that drain a node (<= 1%);
  * slow: K of 256 nodes' triad at 0.7x (--slow 26,10): the share of scans naming each
    (targets 80% for 26, 90% for 10), and the scans naming another;
  * classes: half of 64 nodes 15% better on every fingerprint metric, given as two classes
    (--groups): the share of scans naming anything (target <= 5%).

Prints a line per case with Wilson's 95% interval and PASS/FAIL; exit status 0 when all pass.

Usage: bench/scan_allocations.py [--scans 200] [--sizes 5,8,16,32,64,128,199,200,256]
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import checkout_venv

checkout_venv.use()

import numpy as np  # noqa: E402

from scan_null_rates import clean_links, fingerprints, interval, suspects  # noqa: E402

SIZES = (5, 8, 16, 32, 64, 128, 199, 200, 256)


def scan_once(n, rng, slow=(), classes=False):
    """(findings, hosts) of one simulated scan, confirmed as `jostle scan` does."""
    hosts, links, hw = clean_links(n, rng)
    half = range(n // 2) if classes else ()
    values = fingerprints(hosts, rng, slow=slow, factor=0.7, fast=half, faster=1.15)
    again = clean_links(n, rng, hw=hw)[1]
    cls = {h: "new" if i < n // 2 else "old" for i, h in enumerate(hosts)} if classes else None
    return suspects(hosts, links, values, again, cls)[0], hosts


def clean(n, scans, seed) -> tuple:
    rng = np.random.default_rng([seed, n])
    named = drained = 0
    for _ in range(scans):
        found, _ = scan_once(n, rng)
        named += bool(found)
        drained += any(f.kind == "node" and f.drain for f in found)
    return named, drained


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--scans", type=checkout_venv.at_least_one, default=200)
    ap.add_argument("--slow", default="26,10", help="slow nodes among 256 (comma-separated)")
    ap.add_argument("--seed", type=int, default=45)
    ap.add_argument("--skip", action="append", default=[], choices=("clean", "slow", "classes"))
    a = ap.parse_args(argv)
    try:
        sizes = [int(s) for s in a.sizes.split(",")]
        slows = [int(s) for s in a.slow.split(",")]
    except ValueError:
        sizes = slows = []
    if not sizes or min(sizes) < 5 or not slows or not 0 < min(slows) <= max(slows) < 128:
        ap.error(f"--sizes '{a.sizes}' / --slow '{a.slow}': expected node counts >= 5 and "
                 "slow counts from 1 to 127, comma-separated")
    ok, k = True, a.scans
    print(f"# {k} scans a case; fingerprints 5% apart (normal), links: node sd 5%, pair t3 sd "
          "5%, 32 shifts; fdr 0.01, min effect 0.1; flagged links measured again", flush=True)
    if "clean" not in a.skip:
        for n in sizes:
            t0 = time.monotonic()
            named, drained = clean(n, k, a.seed)
            good = named <= 0.05 * k and (drained <= 0.01 * k or n not in (16, 64, 199))
            ok &= good
            print(f"clean N = {n:>4}: anything named {named}/{k} = {named / k:.1%} "
                  f"{interval(named, k)}, a node drained {drained}/{k} = {drained / k:.1%} "
                  f"{interval(drained, k)} {'PASS' if good else 'FAIL'} "
                  f"({time.monotonic() - t0:.0f} s)", flush=True)
    if "slow" not in a.skip:
        for s in slows:
            rng, t0 = np.random.default_rng([a.seed, 256, s]), time.monotonic()
            hits, other = [], 0
            for _ in range(k):
                found, hosts = scan_once(256, rng, slow=range(s))
                names = {f.where for f in found if f.kind == "node"}
                hits.append(sum(hosts[i] in names for i in range(s)) / s)
                other += any(f.where not in hosts[:s] for f in found)
            share, want = float(np.mean(hits)), 0.8 if s > 10 else 0.9
            ok &= share >= want
            print(f"slow {s:>3} of 256 at 0.7x triad: each named in {share:.1%} of scans "
                  f"(least {min(hits):.0%}), another named in {other}/{k} "
                  f"{'PASS' if share >= want else 'FAIL'} (target {want:.0%}; "
                  f"{time.monotonic() - t0:.0f} s)", flush=True)
    if "classes" not in a.skip:
        rng, t0, named = np.random.default_rng([a.seed, 64, 2]), time.monotonic(), 0
        for _ in range(k):
            named += bool(scan_once(64, rng, classes=True)[0])
        good = named <= 0.05 * k
        ok &= good
        print(f"classes: half of 64 at 1.15x, two classes: anything named {named}/{k} = "
              f"{named / k:.1%} {interval(named, k)} {'PASS' if good else 'FAIL'} "
              f"({time.monotonic() - t0:.0f} s)", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
