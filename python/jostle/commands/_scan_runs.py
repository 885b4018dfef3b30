"""`jostle scan`'s runs: the fingerprint of each node, the link run, and the probes that tell
a dead node from a failed run (commands/scan.py plans, judges and reports; docs/scan.md)."""

import hashlib
import os
import random
from pathlib import Path

from ..binary import repo_root
from ..run import process
from ..run.campaign import Campaign, Failure, RunSpec
from ..errors import JostleError, UsageError
from ..units import duration
from . import _common

# The fingerprint's runs, in this order, and each one's share of --budget.
FP_SHARES = {"pingpong": 0.15, "memlat": 0.1, "contention": 0.75}
# A memlat sample: this many dependent loads (20 ms at 0.1 us a miss to memory on a quiet node,
# 200 ms oversubscribed); at least 3 samples, then up to the run's share of the budget.
MEMLAT_ACCESSES = "200000"
FP_SIZES = {"pingpong": "8,1M", "contention": "4,64M"}
# Each point also stops at this many samples: on an oversubscribed node a batch sized from
# the first (fast) samples can run far past --max-time when later ones are descheduled.
FP_MAX_REPS = "20000"
LINK_SIZES = "8,1M"
LINK_MAX_REPS = "30"
PROBE_TIMEOUT = 30.0
DEFAULT_MARGIN = 60.0   # seconds past a run's expected time before its node is unreachable
# ---------------------------------------------------------------- the plan

def fingerprint_runs(args, hosts, only=None, suffix="") -> list:
    """The fingerprint runs of HOSTS (of benchmark ONLY, when given; SUFFIX on their names)."""
    b = args.budget
    margin = args.timeout or DEFAULT_MARGIN
    extra = ([] if args.compute_cores is None else ["--compute-cores", str(args.compute_cores)])
    extra += ["--oversubscribe"] if args.oversubscribe == "yes" else []
    runs = []
    for h in hosts:
        pp = ["--sizes", FP_SIZES["pingpong"], "--min-reps", "20", "--max-reps", FP_MAX_REPS,
              "--warmup", "5", "--max-time", f"{0.05 * b:.3g}"]
        # the working sets built in a part of each run's share (docs/check.md, "The budget")
        ct = ["--kernel", "triad", "--sizes", args.load_sizes, "--phases",
              "compute,comm,together", "--phase-time", f"{0.1 * b:.3g}", "--min-reps", "10",
              "--max-reps", FP_MAX_REPS, "--max-time", f"{0.1 * b:.3g}",
              "--setup-time", f"{0.1 * b:.3g}", *extra]
        ml = ["--accesses", MEMLAT_ACCESSES, "--min-reps", "3", "--max-reps", "1000",
              "--warmup", "1", "--max-time", f"{FP_SHARES['memlat'] * b:.3g}",
              "--setup-time", f"{0.5 * FP_SHARES['memlat'] * b:.3g}"]
        for bench, a in (("pingpong", pp), ("memlat", ml), ("contention", ct)):
            if only in (None, bench):
                share = FP_SHARES[bench]
                runs.append(RunSpec(f"fp-{bench}-{h}{suffix}", bench, a,
                                    1 if bench == "memlat" else 2, [h],
                                    share * b + 5 + margin, estimate=share * b + 5))
    return runs


def per_host(comm_core, hosts) -> "dict | None":
    """--comm-core as one entry per host of the allocation ({host: entry}), or None for a
    single value (it serves every rank)."""
    parts = comm_core.split(",") if comm_core else []
    if len(parts) <= 1:
        return None
    if len(parts) != len(hosts):
        raise UsageError(f"--comm-core '{comm_core}' is not allowed: give one value for all "
                         f"hosts or one per host ({len(hosts)})")
    return dict(zip(hosts, parts))


def choose_shifts(n, k=None, quick=False, seed=1) -> list:
    """The rounds of the link part for N nodes: every shift 1..N-1 (a full scan), K of them
    (one drawn at random from each of K equal stretches of 1..N-1, seeded: near and far
    partners both), or --quick: the one round N/2, every node with one partner (n/2 disjoint
    pairs for an even N; for an odd N the shift by (N-1)/2). Every node sends and receives
    once a round."""
    if quick:
        return [n // 2] if n % 2 == 0 else [(n - 1) // 2]
    if k is None or k >= n - 1:
        return list(range(1, n))
    rng = random.Random(f"jostle-scan-shifts-{seed}-{n}-{k}")
    edges = [1 + (n - 1) * i // k for i in range(k + 1)]
    return [rng.randrange(edges[i], edges[i + 1]) for i in range(k)]


def check_shifts(args, n):
    """--shifts K against N nodes (exit 2, the value named)."""
    k = getattr(args, "shifts", None)
    if k is not None and k > n - 1:
        raise UsageError(f"--shifts {k} is not allowed for {n} nodes; expected 1 to {n - 1} (a "
                         f"full scan is {n - 1} rounds: leave --shifts out)")


def shifts_of(args, n) -> list:
    check_shifts(args, n)
    return choose_shifts(n, getattr(args, "shifts", None), getattr(args, "quick", False),
                         getattr(args, "seed", None) or 1)


def arrange_rounds(links, n_at_once) -> list:
    """LINKS (src, dst ranks) in rounds of at most N_AT_ONCE links, each rank sending once and
    receiving once a round: [(round, src, dst)]."""
    rounds, left = [], list(links)
    while left:
        sends, recvs, this, rest = set(), set(), [], []
        for s, d in left:
            if len(this) < n_at_once and s not in sends and d not in recvs:
                this.append((s, d))
                sends.add(s)
                recvs.add(d)
            else:
                rest.append((s, d))
        rounds.append(this)
        left = rest
    return [(q, s, d) for q, r in enumerate(rounds) for s, d in r]


def pairs_file(camp_dir, rounds) -> Path:
    """The rounds as jostle-bench shift --pairs reads them, in CAMP_DIR, named by content (the
    same rounds: the same file, and the run that measured them resumes)."""
    body = "".join(f"{q} {s} {d}\n" for q, s, d in rounds)
    path = Path(camp_dir) / f"pairs-{hashlib.sha1(body.encode()).hexdigest()[:10]}.txt"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(path, body)
    return path


LINKS_PER_POINT_SIMULATED = "32"   # links a point of a simulated run: every rank walks every point
# Every simulated rank loads a topology: this machine's, discovered (0.05 s a rank here, minutes
# at 1024 ranks), or a small XML one (nothing is bound in a simulation either way).
SIM_TOPOLOGY = Path("share") / "topologies" / "memonly-numa.xml"


def link_run(args, hosts, exact=False, shifts=None, pairs=None, nrounds=None) -> RunSpec:
    """The shift run over HOSTS: SHIFTS (None: all N-1) or the rounds of PAIRS (a file,
    NROUNDS rounds); EXACT: simulated, one sample a link."""
    n = len(hosts)
    sizes = {"all": LINK_SIZES, "bandwidth": "1M", "latency": "8"}[args.link_metrics]
    nsizes = len(sizes.split(","))
    a = ["--sizes", sizes, "--pattern", "pairwise" if args.pairwise else "shift"]
    rounds = nrounds if pairs is not None else (len(shifts) if shifts else n - 1)
    if pairs is not None:
        a += ["--pairs", str(pairs)]
    elif shifts and len(shifts) < n - 1:
        a += ["--shifts", ",".join(map(str, shifts))]
    if exact:   # simulated: deterministic, one sample says it all
        a += ["--iterations", "1", "--warmup", "0", "--links-per-point", LINKS_PER_POINT_SIMULATED]
        topo = (repo_root() or Path.cwd()) / SIM_TOPOLOGY
        a += ["--topology", str(topo)] if topo.is_file() else []
    else:
        # --max-reps bounds the rounds measured: a point fed from the rounds already taken
        # is fast, and the harness would size its next batch of new rounds from that speed.
        a += ["--min-reps", "5", "--max-reps", LINK_MAX_REPS, "--warmup", "2",
              "--max-time", f"{args.round_time / (n * nsizes):.3g}"]
    of = getattr(args, "comm_core_of", None)
    if of:   # the kept hosts' entries: a host found dead leaves the link run with its own
        a += ["--comm-core", ",".join(of[h] for h in hosts)]
    elif getattr(args, "comm_core", None):
        a += ["--comm-core", args.comm_core]
    bound = rounds * args.round_time + 10
    kind = "pairwise" if args.pairwise else "shift"
    name = _common.default_name(f"links-{kind}-n{n}", [x if x != str(pairs) else Path(pairs).name
                                                 for x in a], n, hosts)
    return RunSpec(name, "shift", a, n, list(hosts), 2 * bound + (args.timeout or DEFAULT_MARGIN),
                   estimate=bound)


def time_bound(args, n, shifts=None) -> str:
    """The plan's time, part by part: the fingerprint, the link part's rounds, and what a
    confirmation may add."""
    rounds = len(shifts) if shifts else n - 1
    fp = 0 if args.parts == "links" else args.budget * -(-n // (args.fingerprint_jobs or n))
    links = 0 if args.parts == "fingerprint" else rounds * args.round_time
    which = "every node at once" if not args.fingerprint_jobs else \
        f"{args.fingerprint_jobs} at once"
    part = (f"{rounds} of the {n - 1} shift rounds ({shift_text(shifts)})"
            if shifts and rounds < n - 1 else f"{n - 1} rounds")
    return (f"jostle: scan of {n} nodes: fingerprint ≤ {duration(fp)} ({which}), "
            f"links {part} × {args.round_time:g} s ≤ {duration(links)}, plus start-ups: "
            f"at most about {duration(fp + links + 60)}; a confirmation measures again what "
            "is flagged (its fingerprints, its links in rounds of half as many at once)")


def shift_text(shifts) -> str:
    return ",".join(map(str, shifts[:12])) + (f",… ({len(shifts)})" if len(shifts) > 12 else "")

# ---------------------------------------------------------------- running

def _probe(config_of, hosts) -> dict:
    """Which of HOSTS answer a one-rank launch of `jostle-bench --version` in time."""
    dead = {}
    for h in hosts:
        spec = RunSpec("probe", "--version", [], 1, [h])
        plan = config_of(spec).plan(spec, ["--version"])
        try:
            out = process.execute(plan.argv, timeout=PROBE_TIMEOUT, on_stdout=lambda line: None)
        except JostleError as e:
            out = Failure(str(e), False)
        if not getattr(out, "status", None) == "ok":
            dead[h] = f"no answer to a one-rank launch within {PROBE_TIMEOUT:g} s"
    return dead


def run_fingerprints(args, camp_dir, hosts, config_of, progress, suffix="") -> dict:
    """Runs every node's fingerprint, a benchmark at a time (a node that did not answer the
    first is not asked again); returns {host: (why, run file)} of the unreachable."""
    dead = {}
    for bench in FP_SHARES:
        runs = fingerprint_runs(args, [h for h in hosts if h not in dead], bench, suffix)
        camp = Campaign(camp_dir, runs)
        done = camp.run(config_of, progress, quiet=True,
                        jobs=args.fingerprint_jobs or len(hosts), keep_going=True)
        for spec, status in done:
            if isinstance(status, Failure):
                lines = status.message.splitlines()
                why = ("no answer before the time-out" if status.timeout
                       else "its run failed: " + (lines[1] if len(lines) > 1 else lines[0])[:200])
                dead[spec.hosts[0]] = (why, str(camp.output(spec)) + ".partial")
        # Every node lost on the first pass: the launch, not the nodes; say so instead of N
        # suspects. (A node measured again, -again, that no longer answers is unreachable.)
        if len(dead) == len(hosts) and not suffix:
            h, (why, _) = next(iter(dead.items()))
            raise JostleError(f"no node could be measured ({h}: {why}); inside SLURM, ask for "
                              "two tasks per node (salloc -N N --ntasks-per-node=2)")
    return dead


def run_links(args, camp_dir, hosts, config_of, progress, dead, suffix="", shifts_for=None,
              pairs=None) -> "Path | None":
    """The link run over HOSTS (SHIFTS_FOR(n): its rounds for n hosts; PAIRS: (file, rounds)
    instead); when it fails, the hosts that do not answer are added to DEAD and it is run
    again without them (not with PAIRS, whose ranks are HOSTS'). Returns the complete run
    file, or None."""
    while len(hosts) >= 2:
        spec = link_run(args, hosts, shifts=shifts_for(len(hosts)) if shifts_for else None,
                        pairs=pairs[0] if pairs else None, nrounds=pairs[1] if pairs else None)
        spec.name += suffix
        camp = Campaign(camp_dir, [spec])
        [(_, status)] = camp.run(config_of, progress, quiet=True, keep_going=True)
        if not isinstance(status, Failure):
            return camp.output(spec)
        lost = _probe(config_of, hosts)
        if not lost:
            raise JostleError(f"the link run failed and every host answers: {status.message}")
        for h, why in lost.items():
            dead[h] = (why, str(camp.output(spec)) + ".partial")
        if pairs:
            return None
        hosts = [h for h in hosts if h not in lost]
    return None

def fp_outputs(args, camp_dir, hosts, suffix="") -> dict:
    """{(host, benchmark): run file} of the fingerprints of HOSTS."""
    if args.parts == "links":
        return {}
    return {(s.hosts[0], s.benchmark): Campaign(camp_dir, []).output(s)
            for s in fingerprint_runs(args, hosts, suffix=suffix)}

def _write_atomic(path: Path, body: str):
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(body)
        os.replace(tmp, path)
    except OSError as e:
        raise JostleError(f"cannot write {path}: {e.strerror}") from None

