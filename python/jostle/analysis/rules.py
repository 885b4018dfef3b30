"""What a reviewer asks of a set of runs (Hoefler and Belli, "Scientific Benchmarking of
Parallel Computing Systems", SC15): the points with several modes, what differs in the
environment between runs, and for each study which of the paper's twelve rules its runs meet
and which they cannot here, one line each. The report shows them; docs/statistics.md says why.
"""

from . import bounds
from ..records.run_meta import multimodal_points, one_row_per_point as _points

# The twelve rules, abridged from the paper (its wording in docs/statistics.md).
RULES = (
    "speedup: state the base case and its absolute performance",
    "subsets: say why only part of the benchmarks or of the machine is used",
    "summaries: arithmetic mean of costs, harmonic mean of rates",
    "ratios: summarise the costs or rates they come from, not the ratios",
    "non-determinism: report confidence intervals",
    "normality: do not assume it without a diagnostic",
    "central tendency: check the mean or median is what matters; tails need percentiles",
    "comparisons: statistically sound (non-overlapping intervals, tests)",
    "set-up: document every factor and the complete experimental set-up",
    "parallel time: report how times were measured, synchronised and summarised",
    "bounds: show upper performance bounds where possible",
    "plots: as much as needed; lines only where interpolation is valid",
)


def flat_environment(run) -> dict:
    """The meta line's environment as {setting: value}: variables by name, the kernel's
    settings, each NIC's link."""
    env = run.meta.get("environment") or {}
    out = dict(env.get("variables") or {})
    for key in ("thp", "thp_defrag", "numa_balancing", "cpufreq_driver", "cpufreq_governor",
                "boost", "smt_active", "smt_control"):
        if key in env:
            out[key] = str(env[key])
    for nic in env.get("nics") or []:
        speed = nic.get("speed_mbps") or nic.get("rate")
        out[f"NIC {nic.get('name')}"] = ", ".join(
            str(x) for x in (nic.get("state"), f"{speed} Mb/s" if nic.get("speed_mbps") else speed)
            if x)
    return out


# Variables a launcher sets in every job by itself, from its own options and defaults, not the
# user's environment (docs/statistics.md, "The environment"): Open MPI's mpirun (--bind-to,
# --oversubscribe, its PSM2 device list, its own bookkeeping), MPICH's Hydra (the host name of
# the interface it chose, PMI's bookkeeping). A name ending in "*" is a prefix.
LAUNCHER_SET = (
    ("mpirun (Open MPI)", ("OMPI_MCA_hwloc_base_binding_policy", "OMPI_MCA_mpi_oversubscribe",
                           "OMPI_MCA_rmaps_base_oversubscribe", "OMPI_MCA_rmaps_base_mapping_policy",
                           "OMPI_MCA_rmaps_base_ranking_policy", "OMPI_MCA_orte_*",
                           "OMPI_MCA_ess*", "OMPI_MCA_initial_wdir", "PSM2_DEVICES")),
    ("mpiexec (MPICH Hydra)", ("MPIR_CVAR_CH3_INTERFACE_HOSTNAME", "PMI_*")),
)


def set_by_launcher(name) -> str:
    """The launcher that sets variable NAME by itself, or ''."""
    for launcher, names in LAUNCHER_SET:
        if any(name == n or (n.endswith("*") and name.startswith(n[:-1])) for n in names):
            return launcher
    return ""


def environments(runs) -> dict:
    """{'common': [(setting, value)], 'differs': [(setting, value, runs)], 'launcher':
    [(setting, value, launcher, runs)]} over RUNS that recorded an environment: what every run
    shared, what differs and in which runs, and apart from both what the launchers set by
    themselves (set_by_launcher): a run of another launcher lacks it without any difference
    of the environment."""
    have = [(r.name, flat_environment(r)) for r in runs if "environment" in r.meta]
    keys = sorted({k for _, e in have for k in e})
    common, differs, launcher = [], [], []
    for k in keys:
        values = {}
        for name, e in have:
            values.setdefault(e.get(k, "(unset)"), []).append(name)
        by = set_by_launcher(k)
        if by:
            launcher += [(k, v, by, ", ".join(names)) for v, names in values.items()
                         if v != "(unset)"]
        elif len(values) == 1:
            common.append((k, next(iter(values))))
        else:
            differs += [(k, v, ", ".join(names)) for v, names in values.items()]
    return {"runs": len(have), "common": common, "differs": differs, "launcher": launcher}


def _study_lines(runs) -> list:
    """(rule, verdict, why) for the twelve rules over the runs of one study."""
    metas = [r.meta for r in runs]
    harness = [m.get("harness") or {} for m in metas]
    pts = sum(len(_points(r)) for r in runs)
    multi = sum(len(multimodal_points(r)) for r in runs)
    unconv = sum(int((_points(r)["converged"] == False).sum()) for r in runs  # noqa: E712
                 if not r.points.empty and "converged" in r.points)
    numa = {(m.get("machine") or {}).get("numa_nodes") for m in metas}
    hosts = {h for r in runs for h in r.hosts}
    ranks = sorted({(m.get("mpi") or {}).get("ranks") for m in metas} - {None})
    cores = sorted({(m.get("machine") or {}).get("cores") for m in metas} - {None})
    pct = sorted({str(p) for h in harness for p in h.get("percentiles") or []})
    clock = [m.get("clock") or (m.get(m.get("benchmark")) or {}).get("clock") for m in metas]
    clock = [c for c in clock if c]
    order = sorted({(h.get("order") or {}).get("kind", "increasing") for h in harness})
    tested = all("modes" in h for h in harness)
    env = all("environment" in m for m in metas)
    ratios = any(runs[0].benchmark == b for b in ("contention", "overlap"))
    return [
        ("met" if ratios else "n/a", "ratios are drawn with the absolute times they come from"
         if ratios else "absolute values only, no speedup reported"),
        ("met" if 1 not in numa else "partly",
         f"{', '.join(map(str, ranks)) or '?'} rank(s) on {len(hosts)} host(s) of "
         f"{', '.join(map(str, cores)) or '?'} cores, as the study is designed (docs/studies.md)"
         + ("; one NUMA node: placement not varied" if 1 in numa else "")),
        ("met", "medians of the samples; OSU's mean is of the times (a cost), a rate from it "
         "is their harmonic mean"),
        ("met", "a ratio is formed from the medians of its costs, never averaged itself"),
        ("met", f"95% distribution-free interval of the median on every point; {unconv} of "
         f"{pts} did not reach the target precision"),
        ("met" if tested else "not met",
         f"modes tested on every point: {multi} of {pts} have two or more"
         if tested else "these records predate the mode test (no diagnostic of the shape)"),
        ("met", "p99 in every point" + (f"; percentiles {', '.join(pct)} asked for" if pct
                                        else "; more with --percentiles or -z")),
        ("partly", "intervals drawn on figures of up to 40 points a curve; "
         "`jostle compare` tests differences between campaigns"),
        ("met" if env else "partly", "meta line: hosts, binding, compiler, MPI and transport"
         + (", environment variables, huge pages, NUMA balancing, CPU frequency, NICs" if env
            else "; no environment (records from before it was kept)")
         + f"; sweep order {'/'.join(order)}"),
        ("met", "clocks mapped to rank 0's (offset and drift fitted, residual recorded)" if clock else
         "each sample timed on one rank's clock: no synchronisation needed"),
        _bounds_line(runs),
        ("met", "median, p25-p75 band, intervals, unconverged and multi-modal points marked"),
    ]


def _bounds_line(runs) -> tuple:
    """Rule 11 from what bounds.py knows of the runs' machine (campaign's bounds.json, the
    NICs' link speed, the contention triad)."""
    names = {"copy_GBps": "one core's copy", "c2c_ns": "the core-to-core latency",
             "link_GBps": "the NIC's link", "triad_GBps": "the triad on all cores"}
    known = [text for key, text in names.items() if bounds.of(runs).get(key)]
    if known:
        return "met", f"headlines beside their bounds: {', '.join(known)} (docs/statistics.md)"
    return "not met", ("no bound known for these runs (`jostle run`'s bounds step measures "
                       "them; no NIC link speed readable here)")


def twelve_rules(runs, study_of) -> list:
    """[{'study', 'lines': [(n, rule, verdict, why)]}] per study (STUDY_OF(run) names it)."""
    groups = {}
    for r in runs:
        if not r.points.empty:
            groups.setdefault(study_of(r), []).append(r)
    return [{"study": s, "lines": [(k + 1, RULES[k], v, why)
                                   for k, (v, why) in enumerate(_study_lines(g))]}
            for s, g in groups.items()]
