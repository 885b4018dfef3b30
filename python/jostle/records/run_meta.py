"""What a run's metadata says to a reader, beside its points: its MPI library and transport,
where it ran, what could spoil its figure (caveats), its headline. Mixed into results.Run."""

from __future__ import annotations

import re

from . import benchmarks
from ..units import quantity, size_label, where
from .. import lazy
pd = lazy.module("pandas")

EXCLUDE_NOTE = " (^x: every component but x)"   # what "^x" means in a Run.mpi_transport
# The values a reader looks for first in a run of each benchmark (Run.headline), each at its
# best point: the smallest median where lower is better, else the largest (jostle.records.benchmarks).
HEADLINES = {
    "pingpong": ("latency", "bandwidth"),
    "contention": ("compute_throughput", "bandwidth"),
    "overlap": ("overlap_max",),
    "bcast": ("time",),
}


def headline(benchmark, rows) -> str:
    """A run of BENCHMARK in a few words from its point ROWS, e.g. 'latency 0.195 µs at 0 B,
    bandwidth 8.54 GB/s at 64 MiB': its HEADLINES, else its first metric."""
    if not rows:
        return ""
    first = rows[0]["metric"]
    parts = []
    for metric in [*HEADLINES.get(benchmark, ()), first]:
        if parts and metric == first:
            break
        mine = [r for r in rows if r["metric"] == metric and r.get("median") is not None
                and r["median"] == r["median"]]   # NaN: no median
        if not mine:
            continue
        try:
            lower = benchmarks.metric(benchmark, metric)["better"] == "lower"
        except KeyError:   # a benchmark or metric this package does not know: the smallest
            lower = True
        row = (min if lower else max)(mine, key=lambda r: r["median"])
        parts.append(f"{metric} {quantity(row['median'], row['unit'])}{where(row)}")
    return ", ".join(parts)


class RunMetadata:
    """Needs meta, points, rows, param_names, launch, complete, benchmark, hosts, warnings
    (Run)."""

    @property
    def headline(self) -> str:
        return headline(self.benchmark, self.rows)

    @property
    def short_mpi(self) -> str:
        """'Open MPI v4.1.4, package: …' -> 'Open MPI 4.1.4'; 'MPICH Version:\t4.0.2' ->
        'MPICH 4.0.2'. The full string stays in the report's machine section."""
        return short_mpi_name((self.meta.get("mpi") or {}).get("library"))

    @property
    def mpi_transport(self) -> str:
        """How the library says it moves data: MPICH's device (its version string), the transport
        selections read through the MPI tool interface (Open MPI's pml, btl, mtl; MPICH's
        netmod). "^x" in one means every component but x (EXCLUDE_NOTE)."""
        mpi = self.meta.get("mpi") or {}
        dev = re.search(r"MPICH Device:\s*(\S+)", mpi.get("library_full") or "")
        parts = [f"device {dev.group(1)}"] if dev else []
        parts += [f"{k.removeprefix('MPIR_CVAR_').lower()} {v}"
                  for k, v in (mpi.get("transport") or {}).items() if v]
        return "; ".join(parts)

    @property
    def locality(self) -> str:
        hosts = list(dict.fromkeys(self.hosts))
        kind = "inter-node" if len(hosts) > 1 else "intra-node"
        return f"{kind} ({','.join(hosts) or '?'})"

    @property
    def caveats(self) -> list:
        """What could spoil this run's curve, from its own metadata (records.md: warnings)."""
        found = []
        text = " ".join(self.warnings).lower()
        side = self.launch or {}
        if "oversubscri" in text or side.get("oversubscribe") is True:
            found.append("oversubscribed")
        machine = self.meta.get("machine") or {}
        if machine.get("numa_nodes") == 1 or "single numa" in text or "one numa" in text:
            found.append("one NUMA node")
        if machine.get("topology") and machine["topology"] != "this system":
            found.append(f"topology from {machine['topology']}")
        # the bytes jostle-bench used: its option may be spelt "64M"
        arrays = (self.meta.get("kernel") or {}).get("array_bytes")
        options = self.meta.get("options") or {}
        if arrays is None and str(options.get("array-bytes", "")).isdigit():
            arrays = int(options["array-bytes"])
        llc = machine.get("llc_bytes")
        threads = self.points["compute_cores"].max() if "compute_cores" in self.points else 1
        if arrays and llc and threads and int(arrays) * int(threads) <= llc:
            found.append(f"arrays ({size_label(arrays)} a thread) fit in the {size_label(llc)} "
                         "last-level cache: no memory contention measured")
        multi = multimodal_points(self)
        if len(multi):   # every figure drawing the run says so
            found.append(f"{len(multi)} point(s) with two or more modes (their median lies "
                         "between)")
        if not self.complete:
            found.append(f"INCOMPLETE ({len(self.points)} points)")
        return found


def short_mpi_name(library) -> str:
    """An MPI library's version string in a few words (RunMetadata.short_mpi)."""
    lib = re.sub(r"\s*Version:\s*", " ", (library or "").split(",")[0])
    lib = re.sub(r"\s+v(?=\d)", " ", " ".join(lib.split()))
    return lib.strip() or "MPI ?"


def one_row_per_point(run) -> pd.DataFrame:
    """RUN's points, one row each (their first metric's line): what is said of a point's
    samples (modes, convergence) is said once."""
    df = run.points
    if df.empty:
        return df
    return df.drop_duplicates([c for c in run.param_names if c in df] or None)


def multimodal_points(run) -> pd.DataFrame:
    """The points of RUN whose samples have two or more modes, one row each."""
    df = one_row_per_point(run)
    return df[df["modes"] > 1] if "modes" in df else df.iloc[0:0]
