"""StarPU-MPI's own tiled Cholesky (`mpi_cholesky` from Debian's starpu-examples) as the outside
reference of `jostle cholesky`: the same N, tile order and ranks, one launch per sample (it
factorizes once per launch), its "Synthetic GFlops" line kept as a run of the cholesky
benchmark (tool `starpu-mpi`, point mode `starpu`, the rest in meta.reference) so that
figures and the report set it beside jostle's modes.  StarPU gets one CPU worker per rank unless told (STARPU_NCPU) and one BLAS
thread (OpenBLAS's own threads beside StarPU's workers oversubscribe the cores: ~3 GFlop/s
here); its process grid is its own default (`mpi_cholesky` has no option for it).

mpi_cholesky computes in single precision (float tiles, sgemm/ssyrk/strsm, and a POTRF of
sscal + ssyr per column: it links no spotrf), so its GFlop/s compare with `jostle cholesky
--datatype float`; the record says so (params.datatype = "float")."""

import json
import os
import re
import shutil
import struct
import subprocess
import time
from pathlib import Path

from . import launch
from ..binary import ask
from ..errors import JostleError, UsageError

MPI_CHOLESKY = Path("/usr/lib/x86_64-linux-gnu/starpu/mpi/mpi_cholesky")
_GFLOPS = re.compile(r"Synthetic GFlops\s*:\s*([0-9.eE+-]+)")


def find(explicit=None) -> Path:
    """--starpu PATH, else Debian's mpi_cholesky, else mpi_cholesky in PATH."""
    if explicit:   # what was asked for, or nothing: never another binary in its place
        if not (Path(explicit).is_file() and os.access(explicit, os.X_OK)):
            raise UsageError(f"--starpu-bin '{explicit}' is not an executable file")
        return Path(explicit)
    for p in (MPI_CHOLESKY, shutil.which("mpi_cholesky")):
        if p and Path(p).is_file():
            return Path(p)
    raise JostleError(f"StarPU-MPI's mpi_cholesky is not installed ({MPI_CHOLESKY}): "
                      "`make deps` installs starpu-examples")


def stats(bench, samples) -> dict:
    """jostle-bench's statistics of samples (the harness's own code, not a second copy)."""
    return ask(bench, "--stats", stdin=" ".join(map(repr, samples)))


def run(exe: Path, bench: Path, out: Path, *, n: int, tile: int, ranks: int, hosts=(),
        reps: int = 3, workers: int = 1, timeout: float = 900, progress=None) -> Path:
    """Runs mpi_cholesky `reps` times with Open MPI's launcher and writes the record `out`
    (through out.partial, renamed when complete)."""
    if n % tile:
        raise UsageError(f"--tile {tile} does not divide --n {n}")
    args = ["-size", str(n), "-nblocks", str(n // tile)]
    argv = launch.build_command("openmpi", exe, args, ranks, list(hosts)).argv
    env = {**os.environ, "STARPU_SILENT": "1", "STARPU_NCPU": str(workers),
           "OPENBLAS_NUM_THREADS": "1"}
    samples, t0 = [], time.monotonic()
    for k in range(reps):
        if progress:
            progress.note(f"StarPU-MPI mpi_cholesky {k + 1}/{reps}: N {n}, tile {tile}, "
                          f"{ranks} ranks")
        p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout)
        m = _GFLOPS.search(p.stdout + p.stderr)
        if p.returncode or not m:
            raise JostleError(f"{' '.join(argv)} failed (exit {p.returncode}):\n"
                              f"{(p.stdout + p.stderr)[-1500:]}")
        samples.append(float(m.group(1)))
    meta = {"type": "meta", "schema": 1, "tool": "starpu-mpi", "benchmark": "cholesky",
            "argv": argv, "start": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "mpi": {"library": "Open MPI (through StarPU-MPI)", "ranks": ranks},
            "reference": {"what": "StarPU-MPI's mpi_cholesky (starpu-examples), its "
                                  "'Synthetic GFlops' line, one factorization per launch",
                          "path": str(exe), "STARPU_NCPU": workers, "OPENBLAS_NUM_THREADS": 1,
                          "grid": "StarPU's default for the rank count",
                          "datatype": "float (sgemm, ssyrk, strsm; POTRF as sscal + ssyr per "
                                      "column)"},
            "warnings": [],
            # each launch's GFlop/s kept as --keep-samples keeps a bench's (docs/records.md)
            "harness": {"samples": {"file": out.name + ".samples",
                                    "format": "float64 little-endian, each point line's "
                                              "samples at its offset, in the order measured"}}}
    point = {"type": "point",
             "params": {"mode": "starpu", "routing": "starpu", "order": n, "tile": tile,
                        "grid": "starpu", "workers": workers, "matrix": "spd",
                        "datatype": "float"},
             "metric": "gflops", "unit": "GFlop/s", **stats(bench, samples),
             "converged": False, "elapsed_s": round(time.monotonic() - t0, 3),
             "samples": {"offset": 0, "count": len(samples)}}
    end = {"type": "end", "status": "ok", "points": 1,
           "elapsed_s": round(time.monotonic() - t0, 3)}
    partial = Path(str(out) + ".partial")
    partial.parent.mkdir(parents=True, exist_ok=True)
    out.with_name(out.name + ".samples").write_bytes(struct.pack(f"<{len(samples)}d", *samples))
    partial.write_text("".join(json.dumps(r) + "\n" for r in (meta, point, end)))
    partial.replace(out)
    return out
