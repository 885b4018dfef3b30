#!/usr/bin/env python3
"""Where the time of a simulated Cholesky goes, from the traces JT_CHOL_TRACE makes.

Run a simulated factorization with JT_CHOL_TRACE=PREFIX in the environment (each rank writes
PREFIX-MODE-rRANK.csv, src/runtime/chol_trace.h), then:

    scripts/chol-trace.py PREFIX [MODE ...]     (default: every mode found)

Per mode it prints: the makespan; per rank (mean and max over ranks) the time its link carries
its own sends as a root (union of post..complete) and forwards of others' tiles (union of
arrival..receive complete where that is longer than 1 µs), and both at once; the delay of a tile
from the end of the task that made it to its arrival, at its most urgent recipient and at all;
and the critical path (walked back from the last task: the worker's previous task when the
worker was the later constraint, else the input that came last), split into computing, waiting
in the root's queue, transfer (post to arrival) and other gaps (polling, scheduling).
"""
from __future__ import annotations

import collections
import glob
import math
import re
import sys

KINDS = ("POTRF", "TRSM", "SYRK", "GEMM")


def grid(size: int) -> tuple[int, int]:
    p = max(d for d in range(1, math.isqrt(size) + 1) if size % d == 0)
    return p, size // p


def tile_id(m: int, n: int) -> int:
    return m * (m + 1) // 2 + n


def load(prefix: str, mode: str) -> dict[int, list[tuple]]:
    ranks = {}
    for fn in glob.glob(f"{glob.escape(prefix)}-{mode}-r*.csv"):
        r = int(re.search(r"-r(\d+)\.csv$", fn).group(1))
        with open(fn) as f:
            next(f)
            ranks[r] = [(float(t), e, int(a), int(b), int(c), int(d))
                        for t, e, a, b, c, d in (line.rstrip().split(",") for line in f)]
    return ranks


def union(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def length(iv: list[tuple[float, float]]) -> float:
    return sum(b - a for a, b in iv)


def intersect(x: list, y: list) -> float:
    i = j = 0
    tot = 0.0
    while i < len(x) and j < len(y):
        a, b = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        tot += max(0.0, b - a)
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return tot


def inputs(kind: int, m: int, n: int, k: int) -> list[tuple[int, int]]:
    """The final tiles a task reads, as (row, column)."""
    return [] if kind == 0 else [(k, k)] if kind == 1 else [(m, k)] if kind == 2 else [(m, k), (n, k)]


def analyse(ranks: dict[int, list[tuple]]) -> dict:
    P, Q = grid(len(ranks))
    owner = lambda m, n: (m % P) * Q + n % Q
    start, end, final_end = {}, {}, {}
    post = collections.defaultdict(dict)    # (rank, tile) -> {first recipient: time}
    first_post, sent, arrived, fwdone = {}, {}, {}, {}
    by_rank_tasks = collections.defaultdict(list)
    for r, evs in ranks.items():
        for t, e, a, b, c, d in evs:
            if e == "S":
                start[(a, b, c, d)] = t
            elif e == "E":
                end[(a, b, c, d)] = t
                by_rank_tasks[r].append((a, b, c, d))
                if a in (0, 1):
                    final_end[tile_id(b, c)] = t
            elif e == "P":
                post[(r, a)][b] = t
                first_post.setdefault((r, a), (t, b))
            elif e == "C":
                sent[(r, a)] = t
            elif e == "A":
                arrived[(r, a)] = t
            elif e == "F":
                fwdone[(r, a)] = t
    t0 = min(start.values())
    span = max(end.values()) - t0
    res = {"P": P, "Q": Q, "span": span}
    own, fwd, both, comp = [], [], [], []
    for r in ranks:
        o = union([(t, sent.get((r, tl), t)) for (rr, tl), d in post.items() if rr == r
                   for t in d.values()])
        f = union([(t, fwdone[(r, tl)]) for (rr, tl), t in arrived.items()
                   if rr == r and fwdone.get((r, tl), t) - t > 1e-6])
        own.append(length(o))
        fwd.append(length(f))
        both.append(intersect(o, f))
        comp.append(sum(end[x] - start[x] for x in by_rank_tasks[r]))
    res.update(own=own, fwd=fwd, both=both, comp=comp)
    urgent, alld = [], []
    for (r, tl), t in arrived.items():
        m = int((math.isqrt(8 * tl + 1) - 1) // 2)
        n = tl - m * (m + 1) // 2
        o = owner(m, n)
        dly = t - final_end[tl]
        alld.append(dly)
        if first_post.get((o, tl), (0, -1))[1] == r:
            urgent.append(dly)
    res.update(urgent=urgent, all=alld)
    # Critical path, backwards from the last task to end.
    prev_on_rank = {}
    for _r, lst in by_rank_tasks.items():
        lst.sort(key=lambda x: end[x])
        for i, x in enumerate(lst):
            prev_on_rank[x] = lst[i - 1] if i else None
    cur = max(end, key=end.get)
    cp = collections.Counter()
    path = []
    while cur is not None:
        kind, m, n, k = cur
        r = owner(m, n)
        s = start[cur]
        cp["compute"] += end[cur] - s
        cp["compute " + KINDS[kind]] += end[cur] - s
        deps = []  # (time available here, predecessor task, root post time or None)
        prev = (2 if m == n else 3, m, n, k - 1)  # the previous update of the same tile
        if prev in end:
            deps.append((end[prev], prev, None, None))
        for (im, ik) in inputs(kind, m, n, k):
            prod = (0, ik, ik, ik) if im == ik else (1, im, ik, ik)
            tl = tile_id(im, ik)
            o = owner(im, ik)
            if o == r:
                deps.append((end[prod], prod, None, None))
            else:
                p = post[(o, tl)].get(r, first_post[(o, tl)][0])
                deps.append((arrived[(r, tl)], prod, p, end[prod]))
        wprev = prev_on_rank[cur]
        ready = max((d[0] for d in deps), default=t0)
        if wprev is not None and end[wprev] >= ready:
            cp["gap"] += s - end[wprev]
            cur = wprev
            continue
        if not deps:
            cp["gap"] += s - t0
            break
        t, prod, p, pe = max(deps, key=lambda d: d[0])
        cp["gap"] += s - t
        if p is not None:
            tl = tile_id(prod[1], prod[2])
            order = sorted((t2, rr) for (rr, t3), t2 in arrived.items() if t3 == tl)
            path.append((tl, prod, owner(prod[1], prod[2]), r, p - pe, t - p,
                         [x[1] for x in order].index(r), len(order), s - t))
            cp["queue"] += p - pe
            cp["transfer"] += t - p
            cp["hops"] += 1
        cur = prod
    res["cp"] = cp
    res["path"] = path[::-1]
    return res


def mean(v):
    return sum(v) / len(v) if v else 0.0


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    verbose = "-v" in argv
    argv = [a for a in argv if a != "-v"]
    prefix = argv[0]
    modes = argv[1:] or sorted({re.sub(r"-r\d+\.csv$", "", f)[len(prefix) + 1:]
                                for f in glob.glob(glob.escape(prefix) + "-*-r*.csv")})
    for mode in modes:
        a = analyse(load(prefix, mode))
        ms = 1e3
        cp = a["cp"]
        kinds = ", ".join(f"{k} {cp['compute ' + k] * ms:.1f}" for k in KINDS)
        print(f"{mode}: {a['P']}x{a['Q']}, makespan {a['span'] * ms:.1f} ms")
        print(f"  per rank (mean / max, ms): compute {mean(a['comp']) * ms:.1f} / "
              f"{max(a['comp']) * ms:.1f}; own sends {mean(a['own']) * ms:.1f} / "
              f"{max(a['own']) * ms:.1f}; forwards {mean(a['fwd']) * ms:.1f} / "
              f"{max(a['fwd']) * ms:.1f}; both at once {mean(a['both']) * ms:.1f} / "
              f"{max(a['both']) * ms:.1f}")
        print(f"  tile delay end->arrival (ms): most urgent recipient mean "
              f"{mean(a['urgent']) * ms:.2f} max {max(a['urgent'], default=0) * ms:.2f}; "
              f"all recipients mean {mean(a['all']) * ms:.2f}")
        print(f"  critical path (ms): compute {cp['compute'] * ms:.1f} "
              f"({kinds}), "
              f"root queue {cp['queue'] * ms:.1f}, transfer {cp['transfer'] * ms:.1f} "
              f"over {cp['hops']} messages, gaps {cp['gap'] * ms:.1f}")
        for tl, prod, o, r, q, tr, idx, n, _g in a["path"] if verbose else ():
            print(f"    {KINDS[prod[0]]}{prod[1:]} tile {tl}: {o} -> {r} queue {q * ms:.2f} "
                  f"transfer {tr * ms:.2f} ms (arrived {idx + 1} of {n})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
