#!/usr/bin/env python3
"""Healthy nodes drained per node-year, and slow nodes drained at their second check, by
`jostle check --slurm` at a check every --interval seconds (docs/check.md, "Tolerances").

Each class is learned as a site learns it: --nodes good nodes, each checked --repeat times,
their values kept and the class's references derived by check_reference.references_from_samples
(what `--save-reference` calls), one check (triad, lower is worse) or --checks of them sharing
the budget. A node's level: the class's centre x exp(u), u normal of sd --spread; each check x
exp(e), e Student's t of --tails degrees of freedom scaled to the standard deviation --repeat-sd
(or normal: --tails 0). Then a year of checks of each healthy node:

  saved   each node the class holds, judged against its own saved checks (own_references)
  class   as many new nodes of the class, judged against the class's reference

A check fails as check.judge_value judges it (its comparison is applied to the whole year at
once, and judge_value itself asserts the verdict of every failure and of 2 000 passes); the
failures go through check.slurm_action (suspect, then drain at the next judged failure). A
node-year counts once when the node is drained at least once. A slow node (--slow, e.g. 0.8):
a node of the class (saved: it slowed after saving; class: a new one) whose checks are x SLOW;
drained when its first two checks drain it.

Targets (issue 45): t3 noise, spread 5%, repeat 2%, every 300 s: healthy nodes drained <= 1
per 100 node-years; a 0.8x node drained by its second check in >= 90%.

Usage: bench/check_drains.py [--classes 20] [--nodes 32] [--repeat 10] [--years 2]
       [--interval 300] [--tails 3] [--spread 0.05] [--repeat-sd 0.02] [--slow 0.8]
       [--checks 1] [--seed 0]
"""

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from jostle.analysis import check, check_budget, check_reference, stats

CENTRE = 20.0
NAMES = check.MEASURED


def noise(rng, tails, sd, size):
    if not tails:
        return rng.normal(0, sd, size)
    return rng.standard_t(tails, size) * sd / math.sqrt(tails / (tails - 2))


def year_drained(rng, level, ref, n, a):
    """Whether a node at LEVEL (its checks' median) is drained within a year of N checks."""
    values = level * np.exp(noise(rng, a.tails, a.repeat_sd, n))
    # judge_value's comparison, on the whole year: lower is worse
    fails = -(values / ref["value"] - 1) > ref["tolerance"]
    idx = np.flatnonzero(fails)
    for i in rng.choice(np.flatnonzero(~fails), 2000 if n > 2000 else 0, replace=False):
        assert check.judge_value("triad", float(values[i]), ref).verdict == "pass"
    failed = set(idx.tolist())
    for i in idx:
        assert check.judge_value("triad", float(values[i]), ref).verdict == "fail"
        # a pass before it cleared the mark; a failure before it left the node suspect
        action, _ = check.slurm_action(check.UNHEALTHY, (i - 1) in failed, False, False)
        if action == "drain":
            return True
    return False


def slow_drained(rng, level, ref, a):
    suspect = False
    for v in level * a.slow * np.exp(noise(rng, a.tails, a.repeat_sd, 2)):
        verdict = check.judge_value("triad", float(v), ref).verdict
        status = check.UNHEALTHY if verdict == "fail" else check.HEALTHY
        action, _ = check.slurm_action(status, suspect, False, False)
        if action == "drain":
            return True
        suspect = action == "suspect"
    return False


def one_class(rng, a):
    levels = CENTRE * np.exp(rng.normal(0, a.spread, a.nodes))
    nodes = {f"n{i}": {name: list(lv * np.exp(noise(rng, a.tails, a.repeat_sd, a.repeat)))
                       for name in NAMES[:a.checks]} for i, lv in enumerate(levels)}
    refs = check_reference.references_from_samples(nodes, NAMES[:a.checks], 100.0, a.interval)
    ref = {**refs["triad"], "worse": "lower"}
    n = int(check_budget.checks_a_year(a.interval))
    out = {"saved": [0, 0, 0, 0], "class": [0, 0, 0, 0]}
    for i, lv in enumerate(levels):
        own = check_reference.own_references({"triad": ref}, nodes[f"n{i}"])["triad"]
        new = CENTRE * math.exp(rng.normal(0, a.spread))
        for kind, r, level in (("saved", own, lv), ("class", ref, new)):
            o = out[kind]
            for _ in range(a.years):
                o[0] += year_drained(rng, level, r, n, a)
                o[1] += 1
            o[2] += slow_drained(rng, level, r, a)
            o[3] += 1
    return out, ref


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--classes", type=int, default=20)
    p.add_argument("--nodes", type=int, default=32)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--years", type=int, default=2)
    p.add_argument("--interval", type=float, default=300.0)
    p.add_argument("--tails", type=float, default=3.0)
    p.add_argument("--spread", type=float, default=0.05)
    p.add_argument("--repeat-sd", type=float, default=0.02)
    p.add_argument("--slow", type=float, default=0.8)
    p.add_argument("--checks", type=int, default=1, choices=range(1, len(NAMES) + 1))
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    total = {"saved": [0, 0, 0, 0], "class": [0, 0, 0, 0]}
    tols = []
    for _ in range(a.classes):
        out, ref = one_class(rng, a)
        tols.append((ref["tolerance"], ref["own_tolerance"], ref["tails"]))
        for k in total:
            total[k] = [x + y for x, y in zip(total[k], out[k])]
    t = np.array(tols)
    print(f"{a.classes} classes of {a.nodes} nodes x {a.repeat} checks, {a.checks} check(s) "
          f"sharing the budget, a check every {a.interval:g} s; noise "
          f"{'t%g' % a.tails if a.tails else 'normal'} sd {a.repeat_sd:.0%}, spread "
          f"{a.spread:.0%}; tolerance median {np.median(t[:, 0]):.1%} (own "
          f"{np.median(t[:, 1]):.1%}), tails fitted median t{np.median(t[:, 2]):g}")
    for kind, (d, ny, s, ns) in total.items():
        lo, hi = stats.wilson(d, ny)
        slo, shi = stats.wilson(s, ns)
        print(f"{kind:6s} healthy drained {d} of {ny} node-years = {100 * d / ny:.2f} per 100 "
              f"[{100 * lo:.2f}, {100 * hi:.2f}] (target <= 1); {a.slow:g}x drained by its "
              f"second check {s} of {ns} = {s / ns:.1%} [{slo:.1%}, {shi:.1%}] (target >= 90%)")


if __name__ == "__main__":
    main()
