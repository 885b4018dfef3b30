"""The overlap of non-blocking collectives with computation (IMB-NBC, as in Taboada, COMPAS
2016): typed settings → one `jostle-bench overlap` run per (MPI library, rank policy, progress
mode, progress-thread core, number of ranks), every collective and size inside it."""

from dataclasses import dataclass, field
from typing import Optional

from ..errors import UsageError
from ..records import benchmarks
from ..run.campaign import RunSpec, repeated
from ..sizes import parse_sizes
from .flags import given_over, pass_through

# --collectives takes a list: the descriptor does not list its items (src/comm/nbc.c does).
COLLECTIVES = ("ialltoall", "igather", "iscatter", "ibcast", "iallgather", "ireduce",
               "iallreduce", "isendrecv")
POLICIES = benchmarks.choices("overlap", "policy")
MODES = benchmarks.choices("overlap", "progress-mode")
THREAD_CORES = ("bind", "next", "numa")
SEED_COLLECTIVES = "ialltoall,igather,iscatter"        # the seed's figure 3
QUICK = ["--min-reps", "20", "--max-time", "0.1", "--warmup", "3"]


@dataclass
class Settings:
    collectives: list = field(default_factory=lambda: SEED_COLLECTIVES.split(","))
    sizes: Optional[str] = None
    ranks: Optional[list] = None         # rank counts; None: 2 to the cores, powers of two
    policy: list = field(default_factory=lambda: ["scatter", "numa"])
    progress_mode: list = field(default_factory=lambda: ["none", "thread"])
    thread_core: list = field(default_factory=lambda: ["numa"])
    fallback: bool = False
    poll_us: Optional[float] = None
    thread_idle: Optional[str] = None
    batch: Optional[int] = None
    kernel: str = benchmarks.default("overlap", "kernel")
    hosts: Optional[list] = None
    quick: bool = False
    min_reps: Optional[int] = None
    max_time: Optional[float] = None
    warmup: Optional[int] = None
    oversubscribe: str = "auto"
    timeout: Optional[float] = None
    runs: int = 1


def plan(args: "Settings", configs, cores) -> list:
    """[(LaunchConfig, RunSpec)]: one run per library × policy × mode (× thread core for
    progress threads) × rank count; CONFIGS: [(library, its LaunchConfig)], the first one's
    bench parses the sizes; CORES: of a host."""
    hosts = list(args.hosts or [])
    counts = args.ranks or [n for n in (2, 4, 8, 16, 32, 64) if n <= max(cores, 2)]
    spec = args.sizes or benchmarks.default("overlap", "sizes")
    common = ["--collectives", ",".join(args.collectives), "--sizes", spec,
              "--kernel", args.kernel,
              *given_over(QUICK if args.quick else [], args, ("min_reps", "max_time", "warmup")),
              *pass_through(args, ("poll-us", "batch", "thread-idle", "fallback"))]
    sizes = parse_sizes(spec, configs[0][1].bench)
    # a point: its time cap, and half a second of the repetitions before it
    point = 0.1 if args.quick else float(benchmarks.default("overlap", "max-time")) + 0.5
    timeout = args.timeout or 60 + 2 * len(sizes) * len(args.collectives) * point
    out = []
    for lib, config in configs:
        for pol in args.policy:
            for mode in args.progress_mode:
                if mode == "async" and lib != "mpich":
                    continue   # MPICH's own progress thread: nothing to compare elsewhere
                for tc in (args.thread_core if mode == "thread" else [None]):
                    for n in counts:
                        per_host = -(-n // len(hosts)) if hosts else n
                        if per_host > cores and args.oversubscribe == "no":
                            raise UsageError(
                                f"--ranks {n} puts {per_host} ranks on hosts of {cores} cores, "
                                "and --oversubscribe no forbids more ranks than cores")
                        a = ["--policy", pol, "--progress-mode", mode,
                             *(["--thread-core", tc] if tc else []),
                             *(["--oversubscribe"] if per_host > cores else []), *common]
                        name = (f"overlap-{lib}-{pol}-{mode}{'-' + tc if tc else ''}-"
                                f"{args.kernel}-n{n:02d}")
                        spec = RunSpec(name, "overlap", a, n, hosts, timeout)
                        out += [(config, s) for s in repeated([spec], getattr(args, "runs", 1))]
    if not out:
        raise UsageError("nothing to run: --progress-mode async needs the MPICH build "
                         "(build/mpich)")
    return out
