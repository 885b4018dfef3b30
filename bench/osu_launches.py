#!/usr/bin/env python3
"""Launch for launch against OSU: whole invocations of OSU's osu_latency and of `jostle
pingpong` (its default: 3 launches, the launch as the unit), alternated, and what each tool's
reported latency does from one invocation to the next (--kind bw: osu_bw against `jostle
pingpong --mode stream`, window 64 both, the bandwidth in MB/s).

The OSU side is the real osu_latency where one is installed (--osu DIR, OSU_HOME, a Spack or
module install on PATH, then PATH itself: build it from /work/shared/anchors/README.md), else
the project's reference loop written to OSU's method (bench/ref/ref_osu.c, `ref_osu sweep`),
said so in the header. OSU runs with its default iterations; jostle with its defaults.

Printed per size:
- each tool's spread across invocations, sd/mean of what it reports (OSU: its average;
  jostle: the median over its launches), and the ratio of their medians over invocations;
- cover: in how many invocations jostle's reported 95% interval (the prediction interval of
  the next invocation's median over its launches, docs/statistics.md) contains the median of
  the other invocations' reported values;
- within: the same for the interval one launch reports on its own (its first launch against
  the other invocations' first launches): what jostle reported before the launch was the unit;
- mean-CI: the same for the 95% confidence interval of the launches' mean (Student's t, K - 1
  degrees of freedom on the log scale, widened to hold the median), computed from the same
  launches: what jostle reported before the prediction interval (docs/statistics.md).
Then the fraction of sizes where jostle's spread is no larger than OSU's (target >= 80%), the
coverage over all (size, invocation) pairs (target >= 90%), and both tools' total wall time.

Usage: bench/osu_launches.py [--kind latency|bw] [--invocations 5] [--runs 3] [--osu DIR]
                             [--max-size 4194304] [--jostle-args "--max-reps 1000000"]
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import checkout_venv
from checkout_venv import at_least_one

checkout_venv.use()
ROOT = checkout_venv.ROOT
from jostle.records import repeats  # noqa: E402
from jostle.records.results import load_run  # noqa: E402


PROGRAM = {"latency": "osu_latency", "bw": "osu_bw"}
WINDOW = 64   # osu_bw's and jostle-bench's default window


def find_osu(given, kind):
    """osu_latency's (osu_bw's) path: GIVEN (a file or a directory above it), OSU_HOME, PATH;
    None."""
    for base in (given, os.environ.get("OSU_HOME")):
        if not base:
            continue
        p = Path(base)
        if p.is_file():
            return str(p)
        hits = sorted(p.rglob(PROGRAM[kind]))
        if hits:
            return str(hits[0])
    return shutil.which(PROGRAM[kind])


def run_osu(build, osu, max_size, kind):
    """{size: latency us or bandwidth MB/s} of one invocation, and its wall time."""
    sizes = [str(1 << k) for k in range(max_size.bit_length())]
    if osu:
        cmd = checkout_venv.launch_line(build, osu, ["-m", f"1:{max_size}"], bind=True)
    else:   # the reference loop: its sweep (latency), or one round of bw (OSU's mean, 4th col)
        cmd = checkout_venv.launch_line(build, str(Path(build) / "ref_osu"),
                                        ["sweep", *sizes] if kind == "latency" else
                                        ["bw", "1", *sizes], bind=True)
    t0 = time.monotonic()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    wall = time.monotonic() - t0
    got = {}
    for line in out.splitlines():
        parts = line.split()
        if line.startswith("#") or not parts:
            continue
        if len(parts) == 2 and parts[0].isdigit():
            got[int(parts[0])] = float(parts[1])
        elif not osu and kind == "bw" and len(parts) >= 3 and parts[1].isdigit():
            got[int(parts[1])] = int(parts[1]) * WINDOW / float(parts[2]) / 1e6
    return got, wall


def run_jostle(build, runs, max_size, where, i, kind, extra=()):
    """{size: (median over launches, ci95 lo, hi, first launch's median, its lo, hi)} of one
    invocation of `jostle pingpong` with its defaults (and EXTRA options), its wall time, and
    where the time went (parts())."""
    flavor = "mpich" if Path(build).name == "mpich" else "openmpi"
    cmd = [str(ROOT / ".venv" / "bin" / "jostle"), "pingpong", "--sizes", f"1:{max_size}",
           "--mpi", flavor, "--bench", str(Path(build) / "jostle-bench"), "--runs", str(runs),
           "--output-dir", str(where), "--campaign", f"inv{i}", "--name", "j",
           *(["--mode", "stream"] if kind == "bw" else []), *extra]
    metric = "latency" if kind == "latency" else "bandwidth"
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.monotonic() - t0
    camp = Path(where) / f"inv{i}"
    summary = json.loads((camp / "j.summary.json").read_text())
    first = load_run(camp / ("j-r1.jsonl" if runs > 1 else "j.jsonl")).points
    first = first[first.metric == metric].set_index("size")
    got = {}
    for p in summary["points"]:
        if p["metric"] != metric:
            continue
        s = int(p["params"]["size"])
        r = first.loc[s]
        got[s] = (p["median"], *p["ci95"], r["median"], r["ci95_lo"], r["ci95_hi"],
                  *mean_ci(p["launches"], p["median"]))
    return got, wall, parts(camp, wall)


def parts(camp, wall):
    """[measuring, starting and ending the launches, the rest (the CLI)] of WALL seconds: the
    launches' own elapsed time (their end lines), their launchers' wall time beyond it (their
    NAME.launch.json), and what is left."""
    own = launched = 0.0
    for f in sorted(camp.glob("*.launch.json")):
        launched += float(json.loads(f.read_text()).get("elapsed_s") or 0.0)
        lines = f.with_name(f.name.replace(".launch.json", ".jsonl")).read_text().splitlines()
        own += float(json.loads(lines[-1]).get("elapsed_s") or 0.0)
    return [own, launched - own, wall - launched]


def mean_ci(meds, median):
    """The 95% confidence interval of the mean of the launches' log medians MEDS, widened to
    hold MEDIAN (their median); the range of MEDS where one is not positive."""
    if len(meds) < 2 or min(meds) <= 0:
        return min(meds), max(meds)
    y = [math.log(v) for v in meds]
    half = repeats.t975(len(y) - 1) * statistics.stdev(y) / math.sqrt(len(y))
    m = statistics.mean(y)
    return min(math.exp(m - half), median), max(math.exp(m + half), median)


def spread(values):
    return statistics.stdev(values) / statistics.mean(values) if len(values) > 1 else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=str(ROOT / "build" / "openmpi"))
    ap.add_argument("--kind", choices=sorted(PROGRAM), default="latency",
                    help="latency: osu_latency against jostle pingpong; bw: osu_bw against "
                         "jostle pingpong --mode stream (default latency)")
    ap.add_argument("--invocations", type=at_least_one, default=5,
                    help="invocations of each tool, alternated (default 5)")
    ap.add_argument("--runs", type=at_least_one, default=3,
                    help="jostle's launches per invocation (default 3, its own default)")
    ap.add_argument("--osu", help="osu_latency, or a directory above it (default: OSU_HOME, "
                                  "then PATH; none: the reference loop)")
    ap.add_argument("--max-size", type=at_least_one, default=4 << 20,
                    help="the largest size, a power of two (default 4194304)")
    ap.add_argument("--jostle-args", default="",
                    help="options added to jostle pingpong's (one string, split at spaces): "
                         "to measure a setting other than the defaults, said in the header")
    a = ap.parse_args()
    osu = find_osu(a.osu, a.kind)
    print(f"# {checkout_venv.machine()}")
    print(f"# {a.invocations} invocations each, alternated: "
          f"{osu or 'no ' + PROGRAM[a.kind] + ' found: the reference loop (ref_osu)'} (default "
          f"iterations) and `jostle pingpong --runs {a.runs}"
          f"{' --mode stream' if a.kind == 'bw' else ''}"
          f"{' ' + a.jostle_args if a.jostle_args else ''}` (defaults), {a.kind}, sizes 1 B - "
          f"{a.max_size} B; load average at start {os.getloadavg()[0]:.1f}")
    osu_got, jostle_got, walls = [], [], {"osu": 0.0, "jostle": 0.0}
    split = [0.0, 0.0, 0.0]
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.invocations):
            order = ("osu", "jostle") if i % 2 == 0 else ("jostle", "osu")
            for tool in order:
                if tool == "osu":
                    got, wall = run_osu(a.build, osu, a.max_size, a.kind)
                else:
                    got, wall, part = run_jostle(a.build, a.runs, a.max_size, tmp, i, a.kind,
                                                 a.jostle_args.split())
                    split = [x + y for x, y in zip(split, part)]
                (osu_got if tool == "osu" else jostle_got).append(got)
                walls[tool] += wall
                print(f"# invocation {i + 1} {tool}: {wall:.1f} s (load average "
                      f"{os.getloadavg()[0]:.1f})", flush=True)
    sizes = sorted(set(osu_got[0]) & set(jostle_got[0]))
    n = a.invocations
    print(f"\n{'size':>8}{'OSU sd/mean':>13}{'jostle sd/mean':>16}{'ratio':>8}"
          f"{'cover':>7}{'within':>8}{'mean-CI':>9}")
    calmer = cover = within = old = 0
    for s in sizes:
        o = [g[s] for g in osu_got]
        j = [g[s][0] for g in jostle_got]
        c = w = o_ = 0
        for k in range(n):
            others = [v for m, v in enumerate(j) if m != k]
            firsts = [g[s][3] for m, g in enumerate(jostle_got) if m != k]
            if others:
                mid = statistics.median(others)
                c += jostle_got[k][s][1] <= mid <= jostle_got[k][s][2]
                first_mid = statistics.median(firsts)
                w += jostle_got[k][s][4] <= first_mid <= jostle_got[k][s][5]
                o_ += jostle_got[k][s][6] <= mid <= jostle_got[k][s][7]
        so, sj = spread(o), spread(j)
        calmer += sj <= so
        cover += c
        within += w
        old += o_
        print(f"{s:>8}{100 * so:>12.1f}%{100 * sj:>15.1f}%"
              f"{statistics.median(j) / statistics.median(o):>8.3f}{c:>5}/{n}{w:>6}/{n}"
              f"{o_:>7}/{n}")
    pairs = len(sizes) * n
    print(f"\njostle's spread across invocations no larger than OSU's at {calmer}/{len(sizes)} "
          f"sizes ({100 * calmer / len(sizes):.0f}%; target >= 80%)")
    print(f"jostle's 95% interval for the next invocation contains the other invocations' median at "
          f"{cover}/{pairs} (size, invocation) pairs ({100 * cover / pairs:.0f}%; target >= 90%);"
          f" one launch's own interval: {within}/{pairs} ({100 * within / pairs:.0f}%); the "
          f"confidence interval of the launches' mean: {old}/{pairs} "
          f"({100 * old / pairs:.0f}%)")
    print(f"wall time in all: OSU {walls['osu']:.1f} s, jostle {walls['jostle']:.1f} s "
          f"(ratio {walls['jostle'] / walls['osu']:.2f}; target <= 1); load average at the end "
          f"{os.getloadavg()[0]:.1f}")
    print(f"jostle's wall time: {split[0]:.1f} s measuring (its launches' own time), "
          f"{split[1]:.1f} s starting and ending {a.runs * n} launches (MPI), {split[2]:.1f} s "
          f"the command around them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
