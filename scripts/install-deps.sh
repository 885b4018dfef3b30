#!/usr/bin/env bash
# Installs what jostle needs and is missing, on Debian 12 with apt-get (as root or through sudo).
# On a cluster without root it installs nothing: it checks for the MPI, hwloc and compilers
# already there (modules) and says exactly what is missing.  Idempotent and quick when all is there.
set -euo pipefail

# Debian packages, each with a probe that says whether it is already usable.
pkgs=(
  "cmake:command -v cmake"
  "make:command -v make"
  "gcc:command -v cc"
  "pkg-config:command -v pkg-config"
  "libopenmpi-dev:test -x /usr/bin/mpicc.openmpi"
  "openmpi-bin:command -v mpirun.openmpi"
  "libmpich-dev:test -x /usr/bin/mpicc.mpich"
  "mpich:command -v mpiexec.mpich"
  "libhwloc-dev:pkg-config --exists hwloc"
  "hwloc:command -v hwloc-ls"
  "libopenblas-dev:test -e /usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h -o -e /usr/include/cblas.h"
  "liblapacke-dev:test -e /usr/include/lapacke.h"
  "libsimgrid-dev:command -v smpicc"
  "starpu-examples:test -x /usr/lib/x86_64-linux-gnu/starpu/mpi/mpi_cholesky"
  "python3-venv:python3 -c 'import ensurepip, venv'"
  "python3-dev:test -e /usr/include/python3.11/Python.h"
  "iproute2:command -v ip"
  "likwid:command -v likwid-bench"
  # gcc 12's sanitizer run-times (make test-sanitize); gcc-12 depends on them, named for a
  # machine where one was removed.
  "libasan8:test -e /usr/lib/x86_64-linux-gnu/libasan.so.8"
  "libubsan1:test -e /usr/lib/x86_64-linux-gnu/libubsan.so.1"
  "libtsan2:test -e /usr/lib/x86_64-linux-gnu/libtsan.so.2"
  # a one-node SLURM for the launcher tests (scripts/slurm-local.sh)
  "munge:command -v munged"
  "slurmctld:command -v slurmctld"
  "slurmd:command -v slurmd"
  "slurm-client:command -v sbatch"
  # renders the report as a person sees it (tests/py/test_report_browser.py)
  "chromium:command -v chromium"
  # a throwaway PostgreSQL server for the results store's tests (tests/py/pglocal.py), and
  # libpq, which psycopg (the test extra) loads
  "postgresql:ls /usr/lib/postgresql/*/bin/initdb"
  "libpq5:test -e /usr/lib/x86_64-linux-gnu/libpq.so.5"
  # Prometheus' promtool: checks the OpenMetrics export and contrib's alerting rules
  # (tests/py/test_export_verdicts.py, tests/py/test_contrib.py)
  "prometheus:command -v promtool"
)

missing=()
for entry in "${pkgs[@]}"; do
  name=${entry%%:*}
  probe=${entry#*:}
  if ! bash -c "$probe" >/dev/null 2>&1; then
    missing+=("$name")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ -r /etc/debian_version ] && command -v apt-get >/dev/null; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO=""; fi
  fi
  if [ "$(id -u)" -eq 0 ] || [ -n "$SUDO" ]; then
    echo "jostle: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    exit 0
  fi
fi

# No root: what is essential must already be there (cluster modules).
essential=0
command -v mpicc >/dev/null || { echo "jostle: no MPI compiler (mpicc): load your MPI module" >&2; essential=1; }
pkg-config --exists hwloc 2>/dev/null || { echo "jostle: hwloc (>= 2.0) not found by pkg-config: load hwloc or set PKG_CONFIG_PATH" >&2; essential=1; }
command -v cmake >/dev/null || { echo "jostle: cmake not found" >&2; essential=1; }
echo "jostle: not root, so not installing: ${missing[*]} (optional ones are skipped)" >&2
exit $essential
