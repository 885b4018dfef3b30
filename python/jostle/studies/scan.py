"""`jostle scan`'s plan (docs/scan.md): typed settings → the fingerprint runs of each node, the
link run's rounds (every shift 1..N-1, K of them, or --quick's one) and the time bound of the
whole. commands/scan.py parses and measures (commands/_scan_runs.py runs these runs, probes a
node that does not answer), commands/_scan_report.py judges and reports."""

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..analysis.check import CHAIN_PAGES
from ..analysis.working_sets import WORKING_SETS
from ..binary import repo_root
from ..errors import UsageError
from ..run.campaign import RunSpec
from ..units import duration
from .flags import default_name

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
DEFAULT_MARGIN = 60.0   # seconds past a run's expected time before its node is unreachable
LINKS_PER_POINT_SIMULATED = "32"   # links a point of a simulated run: every rank walks every point
# Every simulated rank loads a topology: this machine's, discovered (0.05 s a rank here, minutes
# at 1024 ranks), or a small XML one (nothing is bound in a simulation either way).
SIM_TOPOLOGY = Path("share") / "topologies" / "memonly-numa.xml"


@dataclass
class Settings:
    """What `jostle scan` is told (its options of the same names); None: the default."""
    budget: float = 60.0                 # seconds of fingerprint per node
    round_time: float = 1.0              # seconds per round of the link part
    shifts: Optional[int] = None         # K of the N-1 rounds; None: all
    quick: bool = False                  # one round, N/2
    seed: int = 1                        # of the rounds drawn by shifts
    link_metrics: str = "all"            # all, bandwidth, latency
    pairwise: bool = False
    parts: str = "all"                   # all, fingerprint, links
    fingerprint_jobs: Optional[int] = None   # nodes fingerprinted at once; None: all
    load_sizes: str = FP_SIZES["contention"]
    compute_cores: Optional[int] = None
    comm_core: Optional[str] = None      # the link run's --comm-core, one value for all
    comm_core_of: Optional[dict] = None  # or one per host ({host: entry}, per_host)
    oversubscribe: str = "auto"
    timeout: Optional[float] = None      # seconds past a run's expected time


def fingerprint_runs(s: Settings, hosts, only=None, suffix="", sets=None) -> list:
    """The fingerprint runs of HOSTS (of benchmark ONLY, when given; SUFFIX on their names;
    SETS: {host: {chain_bytes, array_bytes}}, the working sets to build, as the first
    measurement's when a node is measured again: its value is then judged against the
    first pass's)."""
    b = s.budget
    margin = s.timeout or DEFAULT_MARGIN
    extra = ([] if s.compute_cores is None else ["--compute-cores", str(s.compute_cores)])
    extra += ["--oversubscribe"] if s.oversubscribe == "yes" else []
    runs = []
    for h in hosts:
        pp = ["--sizes", FP_SIZES["pingpong"], "--min-reps", "20", "--max-reps", FP_MAX_REPS,
              "--warmup", "5", "--max-time", f"{0.05 * b:.3g}"]
        # the working sets built in a part of each run's share (docs/check.md, "The budget")
        ct = ["--kernel", "triad", "--sizes", s.load_sizes, "--phases",
              "compute,comm,together", "--phase-time", f"{0.1 * b:.3g}", "--min-reps", "10",
              "--max-reps", FP_MAX_REPS, "--max-time", f"{0.1 * b:.3g}",
              "--setup-time", f"{0.1 * b:.3g}", *extra]
        ml = ["--accesses", MEMLAT_ACCESSES, "--min-reps", "3", "--max-reps", "1000",
              "--warmup", "1", "--max-time", f"{FP_SHARES['memlat'] * b:.3g}",
              "--setup-time", f"{0.5 * FP_SHARES['memlat'] * b:.3g}", "--pages", CHAIN_PAGES]
        for key, size in ((sets or {}).get(h) or {}).items():
            bench, option = WORKING_SETS[key][:2]
            (ml if bench == "memlat" else ct).extend([option, str(size)])
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


def check_shifts(s: Settings, n):
    """--shifts K against N nodes (exit 2, the value named)."""
    k = s.shifts
    if k is not None and k > n - 1:
        raise UsageError(f"--shifts {k} is not allowed for {n} nodes; expected 1 to {n - 1} (a "
                         f"full scan is {n - 1} rounds: leave --shifts out)")


def shifts_of(s: Settings, n) -> list:
    check_shifts(s, n)
    return choose_shifts(n, s.shifts, s.quick, s.seed or 1)


def arrange_rounds(links, n_at_once) -> list:
    """LINKS (src, dst ranks) in rounds of at most N_AT_ONCE links, each rank sending once and
    receiving once a round: [(round, src, dst)]."""
    rounds, left = [], list(links)
    while left:
        sends, recvs, this, rest = set(), set(), [], []
        for src, dst in left:
            if len(this) < n_at_once and src not in sends and dst not in recvs:
                this.append((src, dst))
                sends.add(src)
                recvs.add(dst)
            else:
                rest.append((src, dst))
        rounds.append(this)
        left = rest
    return [(q, src, dst) for q, r in enumerate(rounds) for src, dst in r]


def link_run(s: Settings, hosts, exact=False, shifts=None, pairs=None, nrounds=None) -> RunSpec:
    """The shift run over HOSTS: SHIFTS (None: all N-1) or the rounds of PAIRS (a file,
    NROUNDS rounds); EXACT: simulated, one sample a link."""
    n = len(hosts)
    sizes = {"all": LINK_SIZES, "bandwidth": "1M", "latency": "8"}[s.link_metrics]
    nsizes = len(sizes.split(","))
    a = ["--sizes", sizes, "--pattern", "pairwise" if s.pairwise else "shift"]
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
              "--max-time", f"{s.round_time / (n * nsizes):.3g}"]
    of = s.comm_core_of
    if of:   # the kept hosts' entries: a host found dead leaves the link run with its own
        a += ["--comm-core", ",".join(of[h] for h in hosts)]
    elif s.comm_core:
        a += ["--comm-core", s.comm_core]
    bound = rounds * s.round_time + 10
    kind = "pairwise" if s.pairwise else "shift"
    name = default_name(f"links-{kind}-n{n}", [x if x != str(pairs) else Path(pairs).name
                                               for x in a], n, hosts)
    return RunSpec(name, "shift", a, n, list(hosts), 2 * bound + (s.timeout or DEFAULT_MARGIN),
                   estimate=bound)


def time_bound(s: Settings, n, shifts=None) -> str:
    """The plan's time, part by part: the fingerprint, the link part's rounds, and what a
    confirmation may add."""
    rounds = len(shifts) if shifts else n - 1
    fp = 0 if s.parts == "links" else s.budget * -(-n // (s.fingerprint_jobs or n))
    links = 0 if s.parts == "fingerprint" else rounds * s.round_time
    which = "every node at once" if not s.fingerprint_jobs else \
        f"{s.fingerprint_jobs} at once"
    part = (f"{rounds} of the {n - 1} shift rounds ({shift_text(shifts)})"
            if shifts and rounds < n - 1 else f"{n - 1} rounds")
    return (f"jostle: scan of {n} nodes: fingerprint ≤ {duration(fp)} ({which}), "
            f"links {part} × {s.round_time:g} s ≤ {duration(links)}, plus start-ups: "
            f"at most about {duration(fp + links + 60)}; a confirmation measures again what "
            "is flagged (its fingerprints, its links in rounds of half as many at once)")


def shift_text(shifts) -> str:
    return ",".join(map(str, shifts[:12])) + (f",… ({len(shifts)})" if len(shifts) > 12 else "")
