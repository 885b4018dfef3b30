#!/usr/bin/env python3
"""How often `jostle compare` cries wolf, and how often it finds a real slowdown.

Campaigns of the same command on this machine: intra-node ping-pong, every power of two
1 B - 4 MiB, --runs R (R separate MPI jobs) each. 2P campaigns with --buffers osu and P with
--buffers cold (every message from memory, never from cache: a real, known slowdown of the
large messages; docs/validation.md, "The state of the buffers": 1.4-2.3x from 512 KiB to 2 MiB
on this VM).

1. A/A: P pairs (osu-2i, osu-2i+1): the share of pairs with any point `slower` (target <= 5%),
   and with any point `slower` or `faster`.
2. A/B: P pairs (osu-2i, cold-i). Which points the slowdown really touches is taken from the
   pooled comparison of every osu run against every cold run (`slower` there); a pair finds
   the slowdown when those points at >= 1 MiB are all `slower` (target: >= 95% of pairs);
   the points the pooled comparison leaves untouched (its estimate within ±5%, not slower) must
   not be `slower` in any pair.
3. The spread between jobs of one command (the default of --job-sd, stats.JOB_SD_DEFAULT):
   per point, the standard deviation of the log of the runs' medians over every osu run.

Campaigns are kept under --workdir and resumed (a complete run is never launched again), so
an interrupted measurement goes on where it stopped. The machine is printed first; timings on
a shared machine are what they are: the load average is printed with them, and after every
pair the time so far and the time left at that pace.

Where the time goes: 3P campaigns x R jobs (180 for 20 pairs), each an MPI start-up (~1 s)
plus 23 points of at most --max-time s each (the stopping rule's cap, 1.2 s a job; a point that
has not reached --min-reps goes on to it: 20 round trips of 4 MiB from memory, ~10 ms on a quiet
node; a busy machine overshoots the cap by the time slices it loses), cold jobs also touching
their rotation of twice the last-level cache at every size; then 2P + 1 comparisons, in this
process (~1 s each). Measured 2026-11-26 on the 2-core VM at a load of 11: 2.5-4 s an osu job,
5-7 s a cold one, 39 s a pair, so 20 pairs in about 14 minutes; quiet, about 8 (1.5-2 s an osu
job, 3 s a cold one). The run of 2026-11-25 at a load of 14-24 took 16 s a job (2923 s).

Usage: bench/compare_targets.py [--pairs 20] [--runs 3] [--workdir results/compare_targets]
"""
import argparse
import contextlib
import io
import json
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checkout_venv
from checkout_venv import machine

checkout_venv.use()
ROOT = checkout_venv.ROOT
from jostle import cli  # noqa: E402
from jostle.records.results import find_run_files, load_run  # noqa: E402
MIB = 1 << 20


def jostle(*argv) -> tuple:
    """(exit status, stdout, stderr) of this checkout's `jostle ARGV`, run in this process: 100
    start-ups of Python and pandas saved (a minute on a quiet 2-core VM)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = cli.main(list(argv))
        except SystemExit as e:   # argparse's refusals
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def campaign(workdir, kind, k, args):
    """One campaign of --runs jobs (resumed when it exists)."""
    out = os.path.join(workdir, kind)
    folder = os.path.join(out, f"{kind}-{k:02d}")
    done = [f for f in os.listdir(folder) if f.endswith(".jsonl")] if os.path.isdir(folder) else []
    if len(done) >= args.runs:   # complete: not even a jostle start-up (slow on a busy machine)
        return folder
    cmd = ["pingpong", "--sizes", args.sizes, "--buffers", kind, "--runs", str(args.runs),
           "--min-reps", str(args.min_reps), "--max-time", str(args.max_time), "--mpi", args.mpi,
           "--output-dir", out, "--campaign", f"{kind}-{k:02d}", "--name", "pingpong"]
    rc, _, err = jostle(*cmd)
    if rc != 0:
        sys.exit(f"jostle {' '.join(cmd)} failed ({rc}): {err.strip()[-500:]}")
    return os.path.join(out, f"{kind}-{k:02d}")


def compare(a, b, *extra):
    rc, out, err = jostle("compare", a, b, "--format", "json", *extra)
    if rc not in (0, 1, 3):   # 3: inconclusive (docs/statistics.md)
        sys.exit(f"jostle compare {a} {b} failed ({rc}): {err.strip()}")
    got = json.loads(out)
    got["points"] = [p for p in got["points"] if p.get("test", True)]   # one test per point
    return got


def key(p):
    return p["metric"], p["size"]


def job_spread(folder):
    """{(metric, size): (sd, MAD-based sd, share of runs over twice the median) of the log
    medians over every run under FOLDER}."""
    logs = {}
    for path in (p for p in find_run_files(folder) if p.name.endswith(".jsonl")):
        pts = load_run(path).points
        for metric, size, median in zip(pts["metric"], pts["size"], pts["median"]):
            if median > 0:
                logs.setdefault((metric, int(size)), []).append(math.log(median))
    out = {}
    for k, v in logs.items():
        if len(v) >= 2:
            med = statistics.median(v)
            mad = 1.4826 * statistics.median(abs(x - med) for x in v)
            out[k] = (statistics.stdev(v), mad, sum(x > med + math.log(2) for x in v) / len(v))
    return out


def load() -> str:
    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sizes", default="1:4M")
    ap.add_argument("--min-reps", type=int, default=20)
    ap.add_argument("--max-time", type=float, default=0.05)
    ap.add_argument("--mpi", default="openmpi")
    ap.add_argument("--workdir", default=str(ROOT / "results" / "compare_targets"))
    args = ap.parse_args()
    if args.pairs < 1 or args.runs < 1:
        sys.exit("--pairs and --runs: at least 1")
    print(f"machine: {machine()}; {load()} at the start")
    if os.getloadavg()[0] > 0.5 * (os.cpu_count() or 1):
        print("  the targets assume a quiet machine: others' work stalls jobs (docs/validation.md)")
    print(f"campaigns: jostle pingpong --sizes {args.sizes} --runs {args.runs} --min-reps "
          f"{args.min_reps} --max-time {args.max_time} --mpi {args.mpi}; {2 * args.pairs} osu, "
          f"{args.pairs} cold", flush=True)
    t0 = time.monotonic()
    osu, cold = [], []
    for i in range(args.pairs):   # interleaved: a change of the machine's load hits every kind
        osu += [campaign(args.workdir, "osu", 2 * i, args), campaign(args.workdir, "osu", 2 * i + 1, args)]
        cold.append(campaign(args.workdir, "cold", i, args))
        spent = time.monotonic() - t0
        print(f"  pair {i + 1}/{args.pairs} measured: {spent:.0f} s so far, about "
              f"{spent / (i + 1) * (args.pairs - i - 1):.0f} s left at this pace; {load()}",
              flush=True)
    measured = time.monotonic() - t0
    print(f"measured in {measured:.0f} s; {load()} now", flush=True)

    aa = [compare(osu[2 * i], osu[2 * i + 1]) for i in range(args.pairs)]
    any_slower = sum(c["counts"]["slower"] > 0 for c in aa)
    any_diff = sum(c["counts"]["slower"] + c["counts"]["faster"] > 0 for c in aa)
    npts = len(aa[0]["points"])
    same = statistics.mean(c["counts"]["same"] / len(c["points"]) for c in aa)
    print(f"\nA/A, {args.pairs} pairs of {npts} points: pairs with any point slower "
          f"{any_slower}/{args.pairs} = {any_slower / args.pairs:.0%} (target <= 5%); slower "
          f"or faster {any_diff}/{args.pairs}; points 'same' on average {same:.0%}")

    pooled = compare(os.path.join(args.workdir, "osu"), os.path.join(args.workdir, "cold"))
    truth = {key(p): p for p in pooled["points"]}
    hit = [k for k, p in truth.items() if p["verdict"] == "slower" and k[1] >= MIB]
    # untouched: the pooled comparison's estimate inside the tolerance, and not slower (with
    # jobs that stall on a busy machine, the pooled interval may be too wide to say 'same')
    unaffected = [k for k, p in truth.items()
                  if p["verdict"] != "slower" and 1 / 1.05 <= p["slowdown"] <= 1.05]
    print(f"pooled, {2 * args.pairs * args.runs} osu runs against {args.pairs * args.runs} cold: "
          f"{len(hit)} points slower at >= 1 MiB, {len(unaffected)} untouched (within ±5%, not slower): "
          + ", ".join(f"{m} {s // MIB} MiB x{truth[(m, s)]['slowdown']:.2f}" for m, s in sorted(hit)))
    ab = [compare(osu[2 * i], cold[i]) for i in range(args.pairs)]
    found = per_point = false = 0
    by_point = {k: 0 for k in hit}
    undecided = {k: [] for k in hit}      # the runs each side would need, where undecided
    for c in ab:
        got = {key(p): p for p in c["points"]}
        verdict = {k: p["verdict"] for k, p in got.items()}
        found += all(verdict.get(k) == "slower" for k in hit)
        per_point += sum(verdict.get(k) == "slower" for k in hit)
        false += sum(verdict.get(k) == "slower" for k in unaffected)
        for k in hit:
            by_point[k] += verdict.get(k) == "slower"
            if verdict.get(k) == "undecided" and got[k].get("runs_needed"):
                undecided[k].append(got[k]["runs_needed"])
    print(f"A/B, {args.pairs} pairs (osu against cold): every slowed point >= 1 MiB found in "
          f"{found}/{args.pairs} = {found / args.pairs:.0%} of pairs (target >= 95%); slowed "
          f"points found {per_point}/{len(hit) * args.pairs} = "
          f"{per_point / max(1, len(hit) * args.pairs):.0%}; unaffected points called slower "
          f"{false}/{len(unaffected) * args.pairs}")
    for k in sorted(hit, key=lambda k: (k[1], k[0])):
        need = sorted(undecided[k])
        print(f"  {k[0]:10s} {k[1] // MIB} MiB x{truth[k]['slowdown']:.2f}: slower in "
              f"{by_point[k]}/{args.pairs} pairs" + (
                  f"; undecided in {len(need)}, runs per side that would decide: median "
                  f"{statistics.median(need)}" if need else ""))

    sd = job_spread(os.path.join(args.workdir, "osu"))
    print(f"\nspread between jobs of one command ({2 * args.pairs * args.runs} osu runs), per "
          "point: sd of the log median / the same from the MAD (robust) / share of jobs over 2x "
          "the median job")
    for metric in sorted({m for m, _ in sd}):
        v = sorted((s, x) for (m, s), x in sd.items() if m == metric)
        print(f"  {metric:10s} " + " ".join(f"{s}:{a:.2f}/{b:.2f}/{c:.0%}" for s, (a, b, c) in v))
    for i, name in ((0, "sd"), (1, "MAD-based sd")):
        allsd = sorted(x[i] for x in sd.values())
        print(f"  {name} over every point: median {statistics.median(allsd):.3f}, 75th percentile "
              f"{allsd[int(0.75 * (len(allsd) - 1))]:.3f}, 90th {allsd[int(0.9 * (len(allsd) - 1))]:.3f}, "
              f"largest {allsd[-1]:.3f}")
    print(f"done in {time.monotonic() - t0:.0f} s ({measured:.0f} s measuring, "
          f"{time.monotonic() - t0 - measured:.0f} s comparing); {load()}")


if __name__ == "__main__":
    main()
