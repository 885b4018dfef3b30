#!/usr/bin/env python3
"""Parity of `jostle-bench pingpong --pairs N` and `--comm-threads T` with osu_mbw_mr and
osu_latency_mt, measured side by side in the same MPI jobs, with Open MPI and MPICH.

bench/ref/ref_mbw.c alternates, size by size and inside each of --jobs MPI jobs per MPI library
(the libraries' jobs interleaved; which of the two allocates its buffers first alternates from
job to job), a reference loop written to the method of osu_mbw_mr (OMB's
release of 2024: two barriers and a window of 64 sends per iteration, a 1-byte acknowledgement,
100 + 10 iterations; aggregate bandwidth in MB/s and the message rate, 1e6 x bandwidth / size,
so both have the same ratio) or of osu_latency_mt (latency of T threads per rank; its timed
iterations divided by --lat-div) with jostle's own flows (comm/flows.c, what `jostle-bench pingpong
--pairs N` / `--comm-threads T` run), at every power of two 1 B - 4 MiB.

Printed per size: OSU's figure of each loop (the median over rounds), the rounds, the least and
most of jostle / reference over them, its median over rounds (the target) with the 95% interval
of that median (distribution-free, as jostle-bench's), and `med-sample`: the same ratio of the two loops'
median samples (a window, or a round trip; the median over rounds of each round's): a time slice taken by another
process lands in a few samples and moves OSU's mean, not this median, so on a loaded machine it
tells the method apart from the load.  Targets, [0.97, 1.03] on the median over rounds at every
size, per MPI library: 1 pair (bandwidth and message rate) and 1 thread.  Runs with more ranks or
threads than this machine has cores are marked OVERSUBSCRIBED: numbers printed, no target.  A
job cut by --job-timeout keeps the rounds it finished; a size left with none fails its target.
A single round of a short size spreads by 20-30% on a 2-core VM (a window of 64 one-byte
messages lasts 10 us: one time slice moves it), so --settle S spends up to S more seconds per
library on the sizes whose interval still straddles a bound of the band.

The ranks are started by jostle.run.launch (the launcher and flags `jostle` itself uses).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checkout_venv

checkout_venv.use()
ROOT = checkout_venv.ROOT

from jostle.run import bench_query, launch  # noqa: E402
from jostle.analysis.stats import median_ci95  # noqa: E402
from osu_parity import at_least_one  # noqa: E402

SIZES = [1 << k for k in range(23)]  # 1 B .. 4 MiB


def counts(text):
    try:
        vals = [int(v) for v in text.split(",")]
    except ValueError:
        vals = []
    if not vals or min(vals) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a list of whole numbers >= 1")
    return vals


def sizes(text):
    """A comma-separated subset of SIZES (a short run at the sizes in question)."""
    try:
        vals = [int(v) for v in text.split(",")]
    except ValueError:
        vals = []
    if not vals or any(v not in SIZES for v in vals):
        raise argparse.ArgumentTypeError(f"'{text}' is not a list of powers of two from 1 to "
                                         f"{SIZES[-1]}")
    return sorted(set(vals))


def seconds(text):
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not v >= 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds >= 0")
    return v


def builds(text):
    dirs = [d for d in text.split(",") if d]
    for d in dirs:
        if not os.access(os.path.join(d, "ref_mbw"), os.X_OK):
            raise argparse.ArgumentTypeError(f"'{d}' has no ref_mbw: `make build` makes "
                                             f"build/openmpi and build/mpich")
    if not dirs:
        raise argparse.ArgumentTypeError(f"'{text}' names no build directory")
    return dirs


def load():
    return "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def descendants(pid):
    """The processes below PID (a launcher's proxies and ranks, which MPICH's hydra puts in
    process groups of their own)."""
    kids = {}
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.append(k)
            todo.append(k)
    return out


def run_job(argv, limit):
    """stdout lines of one MPI job, and whether it was cut at LIMIT seconds (its lines so far
    kept: ref_mbw flushes every size).  A cut job's launcher is asked to stop (SIGTERM, which
    it passes to its ranks), then it and whatever it started are killed by pid."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=limit)
        cut = False
    except subprocess.TimeoutExpired:
        below = descendants(p.pid)
        p.terminate()
        try:
            out, err = p.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        for pid in below:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        cut = True
    if p.returncode != 0 and not cut:
        sys.exit(f"{' '.join(argv)} exited {p.returncode}: {err.strip()[-400:]}")
    return out.splitlines(), cut


def measure(build, kind, ranks, args, n, limit, got, sizes, a, jostle_first):
    """Adds one job's rounds to GOT (size -> [(ref, jostle, ref_median, jostle_median)]);
    JOSTLE_FIRST: jostle's buffers allocated before the reference's (alternated job by job);
    A: the options (--pages, --ref-touch)."""
    argv = checkout_venv.launch_line(build, os.path.join(build, "ref_mbw"),
                                     [*(["--pages", "huge"] if a.pages == "huge" else []),
                                      *(["--jostle-first"] if jostle_first else []),
                                      *(["--touch-at-alloc"] if a.ref_touch == "alloc" else []),
                                      kind,
                                      *args[:1], str(n), *args[1:], *map(str, sizes)], ranks)
    lines, cut = run_job(argv, limit)
    for line in lines:
        f = line.split()
        if len(f) == 6:   # a cut job's last line may be partial, and its launcher's words blank
            got.setdefault(int(f[1]), []).append(tuple(map(float, f[2:])))
    return cut


LO, HI = 0.97, 1.03   # the band on jostle / reference


def verdict(ratios):
    """(median, 95% interval of the median, settled): settled when the interval lies wholly
    inside the band or wholly outside it (more rounds would not change the verdict)."""
    m = statistics.median(ratios)
    lo, hi = median_ci95(ratios)
    return m, (lo, hi), (LO <= lo and hi <= HI) or hi < LO or lo > HI


def table(title, got, target, lat, cut, sizes):
    """Prints one table; returns the sizes outside the target (none when no target), the
    sizes whose med-sample ratio is outside it, and the sizes whose interval is inside it."""
    unit = "us" if lat else "MB/s"
    print(f"\n## {title}{'' if target else '  OVERSUBSCRIBED: no target'}"
          f"{'  (cut by --job-timeout)' if cut else ''}; load average {load()}")
    rate = "" if lat else f"{'ref msg/s':>12}{'jostle':>12}"
    print(f"{'size':>8}{'ref ' + unit:>11}{'jostle':>11}{rate}{'rounds':>7}{'min':>7}{'max':>7}"
          f"{'median':>8}{'95% CI of the median':>22}{'med-sample':>11}")
    bad, off, inside = [], [], []
    for size in sizes:
        rows = got.get(size, [])
        if not rows:
            print(f"{size:>8}  not measured")
            bad += [size] if target else []
            off.append(size)
            continue
        ratios = [j / r for r, j, _, _ in rows]
        m, (lo, hi), _ = verdict(ratios)
        rm = statistics.median(x[2] for x in rows)
        jm = statistics.median(x[3] for x in rows)
        sample = jm / rm if lat else rm / jm   # in the metric's direction, as `median`
        ref = statistics.median(x[0] for x in rows)
        jos = statistics.median(x[1] for x in rows)
        line = f"{size:>8}{ref:>11.5g}{jos:>11.5g}"
        if not lat:
            line += f"{1e6 * ref / size:>12.5g}{1e6 * jos / size:>12.5g}"
        line += f"{len(ratios):>7}{min(ratios):>7.3f}{max(ratios):>7.3f}"
        ok = LO <= m <= HI
        bad += [size] if target and not ok else []
        off += [] if LO <= sample <= HI else [size]
        inside += [size] if LO <= lo and hi <= HI else []
        print(f"{line}{m:>8.3f}{f'[{lo:.3f}, {hi:.3f}]':>22}{sample:>11.3f}"
              f"{'  *' if target and not ok else ''}")
    return bad, off, inside


def unsettled(a, got):
    """The sizes that --settle measures again: neither settled (the 95% interval of the median
    ratio wholly inside the band or wholly outside it) nor at --max-rounds."""
    return [sz for sz in a.sizes if len(got.get(sz, [])) < a.max_rounds
            and not (got.get(sz) and verdict([j / r for r, j, _, _ in got[sz]])[2])]


def main():
    here = [str(ROOT / "build" / b) for b in ("openmpi", "mpich")
            if os.access(ROOT / "build" / b / "ref_mbw", os.X_OK)]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split(
        "\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--builds", type=builds, default=here or None,
                    help="build directories, comma-separated, one per MPI library (default: "
                         "build/openmpi,build/mpich, those built)")
    ap.add_argument("--rounds", type=at_least_one, default=6,
                    help="rounds in all per library and configuration (default 6)")
    ap.add_argument("--jobs", type=at_least_one, default=3,
                    help="MPI jobs the rounds are spread over, per library: each job draws its "
                         "buffers' pages afresh, which moves a loop's bandwidth for the whole job "
                         "on some machines (see osu_parity.py) (default 3)")
    ap.add_argument("--pairs", type=counts, default=[1],
                    help="pair counts (default 1, the target; 2 on a 2-core machine is "
                         "oversubscribed)")
    ap.add_argument("--threads", type=counts, default=[1],
                    help="thread counts (default 1, the target)")
    ap.add_argument("--only", choices=("mbw", "latmt"),
                    help="run one method only: mbw (osu_mbw_mr's, over --pairs) or latmt "
                         "(osu_latency_mt's, over --threads; about 1/20 of the time of mbw) "
                         "(default both)")
    ap.add_argument("--sizes", type=sizes, default=SIZES,
                    help="the sizes, comma-separated powers of two from 1 to 4194304, for a short "
                         "run at the sizes in question (default all 23; the targets are judged "
                         "at the sizes run)")
    ap.add_argument("--lat-div", type=at_least_one, default=10,
                    help="osu_latency_mt's timed iterations (10 000 up to 8 KiB, 1 000 above) "
                         "divided by this, at least one per thread; its untimed ones (100 and "
                         "10) are kept, and are jostle's warm-up (default 10: 1 000 + 100 and "
                         "100 + 10)")
    ap.add_argument("--pages", choices=("system", "huge"), default="system",
                    help="system: both loops' buffers on the pages the kernel gives them (OSU's "
                         "page-aligned buffers; jostle's default); huge: both on 2 MiB pages "
                         "(jostle-bench --pages huge, the reference's buffers 2 MiB-aligned and "
                         "madvised, as THP 'always' would back them): a departure from OSU's "
                         "buffers, which takes the kernel's 4 KiB page walks out of the large "
                         "sizes' copies (default system)")
    ap.add_argument("--ref-touch", choices=("size", "alloc"), default="size",
                    help="when the osu_latency_mt loop's pages are faulted in: size (OSU's: each "
                         "page by the first size that sets it) or alloc (zeroed when allocated, "
                         "as jostle's and osu_mbw_mr's buffers are: a departure from OSU, named "
                         "in the output) (default size)")
    ap.add_argument("--settle", type=seconds, default=0.0, metavar="S",
                    help="after the rounds, up to S more seconds per library and configuration "
                         "for jobs of 2-20 rounds at the sizes not yet settled (the 95%% interval of "
                         "the median ratio not wholly inside the band nor wholly outside it), the "
                         "libraries taking turns (default 0: none)")
    ap.add_argument("--max-rounds", type=at_least_one, default=200,
                    help="--settle stops adding rounds to a size at this many (default 200)")
    ap.add_argument("--job-timeout", type=at_least_one, default=300,
                    help="seconds one MPI job may take before it is cut: the whole run takes at "
                         "most configurations x jobs x libraries x this (default 300)")
    a = ap.parse_args()
    if not a.builds:
        ap.error("no build directory has ref_mbw: run `make build`")
    cores = launch.host_cores()
    m = bench_query.bench_machine(os.path.join(a.builds[0], "jostle-bench"))
    libs = {b: " ".join(bench_query.bench_version(os.path.join(b, "jostle-bench"))["mpi_library"]
                       .replace(" Version:", "").split(",")[0].split()) for b in a.builds}
    print(f"# machine: {os.uname().nodename}, {m.get('cpu')}, {cores} cores, "
          f"{m.get('numa_nodes')} NUMA node(s), {m.get('kernel')}")
    print("# " + "; ".join(f"{os.path.relpath(b, ROOT)}: {lib}" for b, lib in libs.items()))
    print(f"# {a.rounds} rounds over {a.jobs} MPI jobs per library and configuration, the "
          f"libraries' jobs interleaved, the reference and jostle alternating size by size; "
          f"osu_latency_mt's timed counts / {a.lat_div}; pages: {a.pages}"
          f"{' (a departure from OSU buffers: both on 2 MiB pages)' if a.pages == 'huge' else ''}"
          f"; osu_latency_mt loop's pages faulted in {'when allocated (a departure from OSU)' if a.ref_touch == 'alloc' else 'by the first size that sets them (OSU)'}"
          f"; load average at start {load()}")
    start = time.monotonic()
    configs = [("mbw", 2 * p, [], p, f"osu_mbw_mr method, {p} pair(s), {2 * p} ranks: "
                "aggregate bandwidth and message rate") for p in a.pairs if a.only != "latmt"]
    configs += [("latmt", 2, [str(t), str(a.lat_div)], t,
                 f"osu_latency_mt method, {t} thread(s) per rank, 2 ranks: latency")
                for t in a.threads if a.only != "mbw"]
    verdicts = []
    for kind, ranks, args, k, title in configs:
        lat = kind == "latmt"
        got = {b: {} for b in a.builds}
        cut = {b: False for b in a.builds}
        t0 = time.monotonic()
        jobs = {b: 0 for b in a.builds}   # each library's jobs so far: the allocation order
        for j in range(a.jobs):
            n = a.rounds // a.jobs + (j < a.rounds % a.jobs)
            for b in a.builds if n else ():
                cut[b] |= measure(b, kind, ranks, args, n, a.job_timeout, got[b], a.sizes, a,
                                  jobs[b] % 2 == 1)
                jobs[b] += 1
        over = (2 * k if lat else ranks) > cores
        target = k == 1 and not over
        # --settle: jobs of a few rounds at the sizes not yet settled, the
        # libraries taking turns; short sizes get many rounds for little time, and their
        # single rounds spread most
        deadline = time.monotonic() + a.settle * len(a.builds)
        while target and time.monotonic() < deadline:
            todo = {b: unsettled(a, got[b]) for b in a.builds}
            if not any(todo.values()):
                break
            for b in a.builds:
                if todo[b] and time.monotonic() < deadline:
                    # an even count (each loop first as often); more where a round lasts
                    # milliseconds and the job's start-up (about a second) would dominate
                    n = 2 if max(todo[b]) >= 1 << 20 else 6 if max(todo[b]) >= 1 << 16 else 20
                    cut[b] |= measure(b, kind, ranks, args, n, a.job_timeout, got[b], todo[b],
                                      a, jobs[b] % 2 == 1)
                    jobs[b] += 1
        for b in a.builds:
            bad, off, inside = table(f"{libs[b]}: {title} ({time.monotonic() - t0:.0f} s for both libraries)",
                        got[b], target, lat, cut[b], a.sizes)
            if target:
                what = ["1 thread latency"] if lat else ["1 pair bandwidth", "1 pair message rate"]
                verdicts += [(f"{libs[b]}: {w}", bad, off, inside) for w in what]
    print(f"\n# {os.uname().nodename}, {cores} cores; load average at the end {load()}; "
          f"{time.monotonic() - start:.0f} s in all")
    for name, bad, off, inside in verdicts:
        print(f"{name:<40} target [0.97, 1.03] on the median over rounds: "
              f"{'PASS' if not bad else 'FAIL at ' + ', '.join(map(str, bad))}; its 95% "
              f"interval inside at {len(inside)} of {len(a.sizes)} sizes; med-sample "
              f"inside at {len(a.sizes) - len(off)} of {len(a.sizes)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
