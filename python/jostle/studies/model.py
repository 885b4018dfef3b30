"""The contention model's calibration (docs/model.md): the fewest `jostle-bench contention`
runs that identify it (settings: studies.contention.Settings, as `contention fig1`), and how
long the sweeps it stands in for would have taken here."""

import dataclasses
import math

from ..run.campaign import RunSpec
from ..sizes import human
from . import contention

# 4 B for the latency the advice quotes; 1 MiB and 64 MiB: two bandwidth-bound transfers of
# different demand, so that each core count gives two points of the capacity line.
SIZES = [4, 1 << 20, 64 << 20]


def calibrate_cores(top) -> list:
    """1, 2, a quarter, half and all of the cores: the rise, the knee and the plateau."""
    return sorted({n for n in (1, 2, top // 4, top // 2, top) if 1 <= n <= top})


def placements(machine) -> list:
    """(comm-mem, compute-mem) pairs: near/far the NIC where the machine can tell them apart."""
    if contention.paper_placement(machine) == (None, None, None):
        return [(None, None)]
    return [(cm, dm) for cm in ("near", "far") for dm in ("near", "far")]


def plan(args, machine) -> list:
    suffix = "-quick" if args.quick else ""
    spec = ",".join(human(s) if s >= 1024 else str(s) for s in SIZES)
    runs = []
    for cm, dm in placements(machine):
        where = f"-comm{cm}-data{dm}" if cm else ""
        for n in calibrate_cores(contention.core_counts(args, machine)[-1]):
            a = ["--kernel", args.kernel, "--compute-cores", str(n), "--sizes", spec,
                 *(["--comm-mem", cm, "--compute-mem", dm] if cm else []),
                 *contention.oversubscribe_flag(args, machine, n),
                 *contention.common_args(args, machine)]
            runs.append(RunSpec(f"model-{args.kernel}{where}-c{n:02d}{suffix}", "contention", a,
                                args.ranks, list(args.hosts or []), contention.timeout_of(args, SIZES)))
    return runs


def size_costs(runs) -> tuple:
    """(start-up and teardown per run, {size: measuring seconds per run}), means over RUNS,
    from the points' own elapsed_s and the launcher's wall time."""
    per_size, startup = {}, []
    for r in runs:
        pts = r.points.groupby([p for p in r.param_names], dropna=False)["elapsed_s"].max()
        by = pts.groupby(level=r.param_names.index("size")).sum()
        for s, t in by.items():
            per_size.setdefault(int(s), []).append(float(t))
        wall = (r.launch or {}).get("elapsed_s")
        if wall is not None:
            startup.append(max(0.0, float(wall) - float(by.sum())))
    mean = lambda xs: sum(xs) / len(xs) if xs else 0.0
    return mean(startup), {s: mean(t) for s, t in per_size.items()}


def sweep_estimate(args, machine, camp_runs) -> str:
    """How long fig1 + fig2 would have taken here, costed with this campaign's own runs."""
    startup, per_size = size_costs(camp_runs)
    fig_sizes = [contention.LATENCY_SIZE, contention.BANDWIDTH_SIZE]
    measuring = sum(per_size.get(s, math.nan) for s in fig_sizes)
    # each run of the figures in K launches that share its measuring time, each one started
    k = max(1, getattr(args, "runs", 1))
    once = dataclasses.replace(args, runs=1)
    n = len(contention.plan("fig1", once, machine)) + len(contention.plan("fig2", once, machine))
    per_run = k * startup + measuring
    spent = startup * len(camp_runs) + sum(per_size.values()) * len(camp_runs)
    text = (f"{len(camp_runs)} calibration run(s), about {spent / 60:.1f} min; fig1 + fig2 here "
            f"would be {n} runs of {k} launch(es), about {n * per_run / 60:.1f} min in this mode "
            f"({k} × {startup:.1f} s start-up + {measuring:.1f} s measuring 4 B and 64 MiB per "
            "run, means of this campaign's runs")
    if args.quick:   # --quick divides phases, repetitions and time cap by QUICK_FACTOR
        full = k * startup + contention.QUICK_FACTOR * measuring
        text += f"), about {n * full / 60:.1f} min without --quick ({contention.QUICK_FACTOR} × measuring"
    return text + "; a loaded machine: read them as rough)"
