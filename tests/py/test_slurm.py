"""jostle inside a real SLURM (scripts/slurm-local.sh, MpiDefault=none): the PMI plugin srun
needs, the job's facts in the records, and the quick mode of every study through salloc and
sbatch with both MPI builds."""

import json
import shlex
from pathlib import Path

import pytest

from jostle import launch
from jostle.errors import JostleError, UsageError
from mpijobs import bench_exe
from slurmlocal import JOSTLE

PLUGIN = {"openmpi": "pmix", "mpich": "pmi2"}

# The quick mode of each study at its smallest (a 2-core VM shared with other work: each
# costs 4-20 s); `run` reports on the ping-pong's campaign.
STUDIES = {
    "pingpong": ["pingpong", "--sizes", "4,1K", "--max-time", "0.1"],
    "contention": ["contention", "fig1", "--quick", "--max-cores", "0", "--phase-time", "0.05",
                   "--min-reps", "5", "--max-time", "0.1", "--array-bytes", "1M"],
    "nuioa": ["nuioa", "--quick", "--parts", "placement", "--sizes", "8"],
    "overlap": ["overlap", "--quick", "--ranks", "2", "--collectives", "ialltoall", "--sizes", "4",
                "--policy", "scatter", "--progress-mode", "none"],
    "bcast": ["bcast", "--ranks", "2", "--sizes", "8", "--routing", "binomial", "--min-reps", "10",
              "--max-time", "0.1"],
    "cholesky": ["cholesky", "--n", "256", "--tile", "64", "--min-reps", "1", "--max-time", "0.1"],
    "run": ["run", "--steps", "machine,topo,report"],
}


def campaign(study):
    return "pingpong" if study == "run" else study


def metas(directory: Path) -> list:
    return [json.loads(f.open().readline()) for f in sorted(directory.glob("*.jsonl"))]


def check_records(directory: Path, flavor, job=None):
    found = metas(directory)
    assert found, f"no run file in {directory}"
    for m in found:
        s = m.get("slurm") or {}
        assert s.get("job_id") and s.get("nodelist") and s.get("partition") == "debug", m
        assert s.get("mpi_plugin") == PLUGIN[flavor], s
        assert m["launch_line"].startswith("srun ") and f"--mpi={PLUGIN[flavor]}" in m["launch_line"]
        assert job is None or s["job_id"] == job
        assert flavor.replace("openmpi", "Open MPI").replace("mpich", "MPICH") in m["mpi"]["library"]


# ------------------------------------------------ the choice of plugin, without SLURM

def test_plugin_list_parsed_from_both_formats():
    new = "MPI plugin types are...\n\tpmix\n\tnone\n\tpmi2\nspecific pmix plugin versions available: pmix_v4,pmix_v5\n"
    old = "srun: MPI types are...\nsrun: none\nsrun: pmi2\n"

    def fake(out):
        return lambda *a, **k: type("R", (), {"stdout": "", "stderr": out})()
    assert launch.srun_mpi_plugins(fake(new)) == ["pmix", "none", "pmi2", "pmix_v4", "pmix_v5"]
    assert launch.srun_mpi_plugins(fake(old)) == ["none", "pmi2"]


def test_plugin_follows_the_build_and_the_override():
    assert launch.choose_srun_mpi("openmpi", ["none", "pmi2", "pmix"]) == "pmix"
    assert launch.choose_srun_mpi("openmpi", ["none", "pmix_v4"]) == "pmix_v4"
    assert launch.choose_srun_mpi("mpich", ["none", "pmi2", "pmix"]) == "pmi2"
    assert launch.choose_srun_mpi("other", ["none", "pmi2"]) is None
    assert launch.choose_srun_mpi("openmpi", ["none", "pmi2"], "pmi2") == "pmi2"
    with pytest.raises(UsageError, match=r"--srun-mpi 'bogus' .* allowed: none, pmi2"):
        launch.choose_srun_mpi("mpich", ["none", "pmi2"], "bogus")
    with pytest.raises(JostleError, match=r"none of which starts a Open MPI .*--srun-mpi.*--launcher"):
        launch.choose_srun_mpi("openmpi", ["none", "pmi2"])


def test_srun_line_carries_the_plugin():
    p = launch.build_command("srun", "/b", ["pingpong"], 2, euid=0, cores=2, srun_mpi="pmi2")
    assert p.argv == ["srun", "-n", "2", "--cpu-bind=none", "--mpi=pmi2", "-N", "1", "/b", "pingpong"]


# ------------------------------------------------ a real SLURM

@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_salloc_pingpong_on_mpidefault_none(slurm, tmp_path, flavor):
    bench_exe(flavor)
    assert "MpiDefault=none" in (slurm.dir / "slurm.conf").read_text()
    r = slurm.salloc(2, *JOSTLE, "pingpong", "--sizes", "4,1K", "--mpi", flavor,
                     "--output-dir", tmp_path, "--campaign", "c", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    check_records(tmp_path / "c", flavor)


def test_bad_srun_mpi_exits_2_and_leaves_nothing(slurm, tmp_path):
    r = slurm.salloc(2, *JOSTLE, "pingpong", "--sizes", "4", "--srun-mpi", "bogus",
                     "--output-dir", tmp_path, "--campaign", "c")
    assert r.returncode == 2, r.stderr
    assert "--srun-mpi 'bogus'" in r.stderr and "pmi2" in r.stderr
    assert not list(tmp_path.glob("c/*.jsonl*"))


def test_every_study_in_salloc_with_open_mpi(slurm, tmp_path):
    bench_exe("openmpi")
    for name, argv in STUDIES.items():
        r = slurm.salloc(2, *JOSTLE, *argv, "--mpi", "openmpi", "--quiet",
                         "--output-dir", tmp_path, "--campaign", campaign(name), cwd=tmp_path)
        assert r.returncode == 0, f"{name}: {r.stderr[-2000:]}"
    for name in STUDIES:
        if name != "run":
            check_records(tmp_path / name, "openmpi")
    assert "pingpong" in (tmp_path / "pingpong" / "report.html").read_text()


def test_every_study_through_sbatch_with_mpich(slurm, tmp_path):
    bench_exe("mpich")
    lines = [shlex.join([*JOSTLE, *argv, "--mpi", "mpich", "--quiet", "--output-dir",
                         str(tmp_path), "--campaign", campaign(name)]) for name, argv in STUDIES.items()]
    lines.append(shlex.join([*JOSTLE, *STUDIES["pingpong"], "--mpi", "openmpi", "--quiet",
                             "--output-dir", str(tmp_path), "--campaign", "pp-openmpi"]))
    out = tmp_path / "job.out"
    job, r = slurm.sbatch_wait(2, "set -e\n" + "\n".join(lines), out, cwd=tmp_path, timeout=600)
    log = out.read_text() if out.exists() else ""
    assert r.returncode == 0 and job, f"{r.stderr}\n{log[-3000:]}"
    for name in STUDIES:
        if name != "run":
            check_records(tmp_path / name, "mpich", job)
    check_records(tmp_path / "pp-openmpi", "openmpi", job)
    assert (tmp_path / "pingpong" / "report.html").exists()
    assert slurm.job_state(job) == "COMPLETED"
