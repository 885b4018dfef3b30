"""The tiled Cholesky on jostle's task runtime, flat sends against dynamic broadcasts (SIAM
PP22): typed settings → the `jostle-bench cholesky` run of real ranks, and the arguments of a
simulated launch (commands/cholesky.py sweeps those under SimGrid)."""

from dataclasses import dataclass
from typing import Optional

from ..errors import UsageError
from ..records import benchmarks
from ..run.campaign import RunSpec, repeated
from .flags import default_name

KERNELS = ("POTRF", "TRSM", "SYRK", "GEMM")
MODES = tuple(benchmarks.default("cholesky", "modes").split(","))   # every mode, in order
SIM_N, SIM_TILE = 16384, 512


def DEFAULT(name):
    return benchmarks.default("cholesky", name)


@dataclass
class Settings:
    n: Optional[int] = None
    tile: Optional[int] = None
    modes: str = ",".join(MODES)
    routing: Optional[str] = None
    matrix: str = "spd"
    datatype: str = DEFAULT("datatype")
    grid: str = "auto"
    workers: Optional[int] = None
    min_reps: Optional[int] = None
    max_time: Optional[float] = None
    warmup: Optional[int] = None
    ranks: int = 2
    hosts: Optional[list] = None
    timeout: Optional[float] = None
    name: Optional[str] = None
    runs: int = 1


def bench_args(args: "Settings", sim) -> list:
    """jostle-bench cholesky's arguments (SIM: a simulated run, whose repetitions are 1: the
    simulation is deterministic)."""
    n = args.n or (SIM_N if sim else int(DEFAULT("n")))
    nb = args.tile or (SIM_TILE if sim else int(DEFAULT("tile")))
    if n % nb:
        raise UsageError(f"--tile {nb} does not divide --n {n}: choose a tile order that "
                         "divides the matrix order")
    out = ["--n", str(n), "--tile", str(nb), "--modes", args.modes,
           "--routing", args.routing or ("binomial" if sim else DEFAULT("routing")),
           "--matrix", args.matrix]
    if args.datatype != DEFAULT("datatype"):
        out += ["--datatype", args.datatype]
    if not sim:
        out += ["--grid", args.grid]
    if args.workers is not None:
        out += ["--workers", str(args.workers)]
    reps = {"min_reps": args.min_reps or (1 if sim else 5),
            "warmup": args.warmup if args.warmup is not None else (0 if sim else 1),
            "max_time": args.max_time if args.max_time is not None else (0 if sim else 10)}
    for k, v in reps.items():
        out += ["--" + k.replace("_", "-"), str(v)]
    return out


def plan(args: Settings) -> list:
    """The run of real ranks (K launches with --runs K), refused (exit 2) when its grid is not
    its rank count."""
    if args.grid != "auto":
        p, q = map(int, args.grid.split("x"))
        if p * q != args.ranks:
            raise UsageError(f"--grid {args.grid} does not match --ranks {args.ranks}: "
                             f"{p} x {q} = {p * q} ranks")
    run_args = bench_args(args, False)
    name = args.name or default_name(f"cholesky-{args.ranks}r", run_args, args.ranks, args.hosts)
    return repeated([RunSpec(name, "cholesky", run_args, args.ranks, args.hosts or [],
                             args.timeout or 1800)], args.runs)
