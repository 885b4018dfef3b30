#!/usr/bin/env python3
"""A year of daily `jostle history`: how many stationary series ever raise a drift, and how
soon a step is found (analysis/drift.py, docs/statistics.md "Drift over a year").

Each series: one node's daily check of one metric, log values normal of sd --sd around its
level, --spikes of the checks met a busy moment (x1.1-2 worse). Looked at as a site does,
every day: drift.detect on the series as it stood that day (one series, so its family is
itself: the rate is per series). Printed:

  stationary  --series series of --days values, each looked at every day it can be tested:
              the share that ever raised a drift (target <= 5% a year: issue 45), and the
              share at the last day's single look;
  step        --series series with a --step (e.g. -10%) from a day drawn in [30, days - 30],
              looked at every day after it: the share found (worse, its size within 5 points)
              within 14 days (target >= 90%), the median and 90th percentile of the delay.

Usage: bench/drift_year.py [--series 200] [--days 365] [--sd 0.02] [--spikes 0.02]
                           [--step -0.10] [--seed 1]
"""
import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from jostle.analysis import drift


def series(values):
    days = list(range(len(values)))
    return drift.Series(("n1", "check", "triad", "GB/s", "{}"), "n1", "triad", "GB/s",
                        "higher", [float(d) for d in days], [float(v) for v in values],
                        [f"day{d}" for d in days])


def draw(rng, a):
    x = rng.normal(0, a.sd, a.days)
    spikes = rng.uniform(size=a.days) < a.spikes
    x[spikes] -= np.log(rng.uniform(1.1, 2.0, spikes.sum()))
    return x


def stationary(rng, a) -> tuple:
    ever = last = 0
    for _ in range(a.series):
        v = 40.0 * np.exp(draw(rng, a))
        last += bool(drift.detect([series(v)])[0])
        ever += any(drift.detect([series(v[:n])])[0] for n in range(drift.MIN_POINTS, a.days + 1))
    return ever, last


def step(rng, a) -> tuple:
    delays = []
    for _ in range(a.series):
        x = draw(rng, a)
        at = int(rng.integers(30, a.days - 30))
        x[at:] += math.log1p(a.step)
        v = 40.0 * np.exp(x)
        for n in range(at + 1, min(a.days, at + 30) + 1):
            found = drift.detect([series(v[:n])])[0]
            if found and found[0].worse and abs(found[0].change - a.step) < 0.05:
                delays.append(n - at)      # checks after the step when it was found
                break
        else:
            delays.append(math.inf)
    return np.array(delays)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--series", type=int, default=200)
    p.add_argument("--days", type=int, default=365)
    p.add_argument("--sd", type=float, default=0.02)
    p.add_argument("--spikes", type=float, default=0.02)
    p.add_argument("--step", type=float, default=-0.10)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {a.series} series of "
          f"{a.days} daily values, sd {a.sd:.1%}, spikes {a.spikes:.0%}; seed {a.seed}")
    t0 = time.monotonic()
    d = step(rng, a)
    within = int((d <= 14).sum())
    print(f"step {a.step:+.0%}: found within 14 days in {within} of {a.series} "
          f"({within / a.series:.1%}); delay median {np.median(d):g}, 90th percentile "
          f"{np.quantile(d, 0.9):g} checks ({time.monotonic() - t0:.0f} s)", flush=True)
    t0 = time.monotonic()
    ever, last = stationary(rng, a)
    print(f"stationary: {ever} of {a.series} ({ever / a.series:.1%}) raised a drift on some day "
          f"of the year; {last} at the last day's look ({time.monotonic() - t0:.0f} s)")


if __name__ == "__main__":
    main()
