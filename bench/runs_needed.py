#!/usr/bin/env python3
"""Does following `jostle compare`'s "about N runs per side would decide at 80% power" decide?

compare_simulation's sweeps (23 sizes, the measured profile of the variance between jobs), a
uniform shift (--shift, e.g. 1.10) at --runs runs per side, through comparison.compare. One
undecided point of each comparison that names a number N is followed: the sweep is drawn
again with N runs per side, the shift at that point the one N was computed for (its measured
ratio), the others as before, and compared again; the point decided when its verdict is then
slower, faster or same. Printed: the share decided (target >= 75%: issue 45), and the share of
undecided points that said instead what cannot be promised (more than 100 runs).

Usage: bench/runs_needed.py [--comparisons 200] [--shift 1.10] [--runs 3] [--seed 1]
"""
import argparse
import importlib.util
import math
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checkout_venv
from checkout_venv import machine

checkout_venv.use()
import numpy as np  # noqa: E402
from jostle.analysis import comparison  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("compare_simulation",
                                               os.path.join(HERE, "compare_simulation.py"))
sim = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sim)


def follow(rng, sd, shift, runs, n_cmp) -> dict:
    followed = decided = too_many = undecided = 0
    asked = []
    for _ in range(n_cmp):
        cmp = comparison.compare(sim.side("A", sim.draw(rng, sd, runs, 0.0, 0)),
                                 sim.side("B", sim.draw(rng, sd, runs, shift, 0)))
        t = cmp.tests.sort_values("size").reset_index(drop=True)
        und = t[t["verdict"] == "undecided"]
        undecided += len(und)
        named = und[und["runs_needed"].notna()]
        too_many += len(und) - len(named)
        if named.empty:
            continue
        r = named.iloc[int(rng.integers(len(named)))]
        n = int(r["runs_needed"])
        i = int(np.flatnonzero(np.array(sim.SIZES) == r["size"])[0])
        truth = np.full(len(sim.SIZES), shift)
        truth[i] = math.log(r["ratio"])
        again = comparison.compare(sim.side("A", sim.draw(rng, sd, n, 0.0, 0)),
                                   sim.side("B", sim.draw(rng, sd, n, truth, 0))).tests
        v = again[again["size"] == r["size"]]["verdict"].iloc[0]
        followed += 1
        decided += v in ("slower", "faster", "same")
        asked.append(n)
    return {"followed": followed, "decided": decided, "undecided": undecided,
            "too_many": too_many, "median_n": float(np.median(asked)) if asked else math.nan}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--comparisons", type=int, default=200)
    p.add_argument("--shift", type=float, action="append", help="uniform shift(s) (1.10, 1.07)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    warnings.simplefilter("ignore", RuntimeWarning)
    rng = np.random.default_rng(a.seed)
    sd = sim.measured_profile()
    print(f"# machine: {machine()}")
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {a.comparisons} "
          f"comparisons of {a.runs} against {a.runs} runs per shift; seed {a.seed}")
    print("| shift | points followed | decided after N runs | median N | undecided points "
          "saying more than 100 runs |")
    print("|---|---|---|---|---|")
    for s in a.shift or [1.10, 1.07]:
        t0 = time.monotonic()
        got = follow(rng, sd, math.log(s), a.runs, a.comparisons)
        f = max(1, got["followed"])
        print(f"| ×{s:g} | {got['followed']} | {got['decided']} ({got['decided'] / f:.1%}) | "
              f"{got['median_n']:g} | {got['too_many']} of {got['undecided']} |", flush=True)
        print(f"({time.monotonic() - t0:.0f} s)", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
