"""jostle inside a real SLURM (scripts/slurm-local.sh, MpiDefault=none): the PMI plugin srun
needs, the job's facts in the records, and the quick mode of every study through salloc and
sbatch with both MPI builds."""

import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jostle.run import launch, slurm as slurm_mod
from jostle.errors import JostleError, UsageError
from slurmlocal import JOSTLE

pytestmark = pytest.mark.system

PLUGIN = {"openmpi": "pmix", "mpich": "pmi2"}

# The quick mode of each study at its smallest (a 2-core VM shared with other work: each
# costs 4-20 s); `run` reports on the ping-pong's campaign.
STUDIES = {
    "pingpong": ["pingpong", "--sizes", "4,1K", "--max-time", "0.1", "--runs", "1"],
    # fig1's 64 MiB messages: the time-out estimated from the options (69 s) was short of a
    # loaded machine's (75 s with the load average at 12): a bound that only a hang reaches
    "contention": ["contention", "fig1", "--quick", "--max-cores", "0", "--phase-time", "0.05",
                   "--min-reps", "5", "--max-time", "0.1", "--array-bytes", "1M",
                   "--timeout", "600", "--runs", "1"],
    "nuioa": ["nuioa", "--quick", "--parts", "placement", "--sizes", "8", "--runs", "1"],
    "overlap": ["overlap", "--quick", "--ranks", "2", "--collectives", "ialltoall", "--sizes", "4",
                "--policy", "scatter", "--progress-mode", "none"],
    "bcast": ["bcast", "--ranks", "2", "--sizes", "8", "--routing", "binomial", "--min-reps", "10",
              "--max-time", "0.1"],
    "cholesky": ["cholesky", "--n", "256", "--tile", "64", "--min-reps", "1", "--max-time", "0.1"],
    "run": ["run", "--steps", "machine,topo,report"],
}


def campaign(study):
    return "pingpong" if study == "run" else study


def one_python(commands) -> list:
    """A command line that runs COMMANDS ([name, [jostle's argv]]) in one Python, one after the
    other, and stops at the first that fails, naming it: a Python started per command cost
    1 s of CPU each (numpy, pandas, matplotlib), 7 of them per test."""
    return [sys.executable, "-c", "import sys\nfrom jostle.cli import main\n"
            f"for name, argv in {[[n, list(map(str, a))] for n, a in commands]!r}:\n"
            "    if main(argv) != 0:\n        sys.exit(f'{name}: failed')\n"]


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

@pytest.mark.unit
def test_plugin_list_parsed_from_both_formats():
    new = "MPI plugin types are...\n\tpmix\n\tnone\n\tpmi2\nspecific pmix plugin versions available: pmix_v4,pmix_v5\n"
    old = "srun: MPI types are...\nsrun: none\nsrun: pmi2\n"

    def fake(out):
        return lambda *a, **k: type("R", (), {"stdout": "", "stderr": out})()
    assert slurm_mod.srun_mpi_plugins(fake(new)) == ["pmix", "none", "pmi2", "pmix_v4", "pmix_v5"]
    assert slurm_mod.srun_mpi_plugins(fake(old)) == ["none", "pmi2"]


@pytest.mark.unit
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


@pytest.mark.unit
def test_srun_line_carries_the_plugin():
    p = launch.build_command("srun", "/b", ["pingpong"], 2, euid=0, cores=2, srun_mpi="pmi2")
    assert p.argv == ["srun", "-n", "2", "--cpu-bind=none", "--mpi=pmi2", "-N", "1", "/b", "pingpong"]


# ------------------------------------------------ a real SLURM

@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_salloc_pingpong_on_mpidefault_none(slurm, tmp_path, flavor, built):
    built(flavor)
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


def test_every_study_in_salloc_with_open_mpi(slurm, tmp_path, built):
    built("openmpi")
    r = slurm.salloc(2, *one_python([(name, [*argv, "--mpi", "openmpi", "--quiet", "--output-dir",
                                             tmp_path, "--campaign", campaign(name)])
                                     for name, argv in STUDIES.items()]), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    for name in STUDIES:
        if name != "run":
            check_records(tmp_path / name, "openmpi")
    assert "pingpong" in (tmp_path / "pingpong" / "report.html").read_text()


def test_every_study_through_sbatch_with_mpich(slurm, tmp_path, built):
    built("mpich")
    commands = [(name, [*argv, "--mpi", "mpich", "--quiet", "--output-dir", tmp_path,
                        "--campaign", campaign(name)]) for name, argv in STUDIES.items()]
    commands.append(("pp-openmpi", [*STUDIES["pingpong"], "--mpi", "openmpi", "--quiet",
                                    "--output-dir", tmp_path, "--campaign", "pp-openmpi"]))
    out = tmp_path / "job.out"
    job, r = slurm.sbatch_wait(2, shlex.join(one_python(commands)), out, cwd=tmp_path,
                               timeout=600)
    log = out.read_text() if out.exists() else ""
    assert r.returncode == 0 and job, f"{r.stderr}\n{log[-3000:]}"
    for name in STUDIES:
        if name != "run":
            check_records(tmp_path / name, "mpich", job)
    check_records(tmp_path / "pp-openmpi", "openmpi", job)
    assert (tmp_path / "pingpong" / "report.html").exists()
    assert slurm.job_state(job) == "COMPLETED"


# ------------------------------------------------ campaigns as batch jobs

OVERLAP = ["overlap", "--quick", "--ranks", "2,4", "--collectives", "ialltoall", "--sizes", "4",
           "--policy", "scatter", "--progress-mode", "none", "--mpi", "openmpi", "--quiet"]


def status(slurm, directory):
    r = slurm.run(*JOSTLE, "status", directory, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def wait_job(slurm, job, timeout=240):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        state = slurm.job_state(job)
        if state not in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", None):
            return state
        time.sleep(0.5)
    raise AssertionError(f"job {job} still {state} after {timeout} s")


def submit(slurm, tmp_path, *argv):
    r = slurm.run(*JOSTLE, "submit", *argv, "--time", "5", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


@pytest.mark.unit
def test_submit_dry_run_prints_the_script_and_writes_nothing(tmp_path, jostle_cli):
    r = jostle_cli("submit", "contention", "fig1", "--quick", "--nodes", "1", "--time", "5",
                   "--dry-run", "--output-dir", tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("#!/bin/bash") and "#SBATCH --time=5" in r.stdout
    assert "#SBATCH --nodes=1" in r.stdout and "jostle.cli contention fig1 --quick" in r.stdout
    assert not list(tmp_path.iterdir())


@pytest.mark.unit
@pytest.mark.parametrize("argv, message", [
    (["pingpong", "--sizes", "4", "--time", "5"], "needs SLURM's sbatch"),
    (["pingpong", "--time", "5x", "--dry-run"], "--time: '5x' is not allowed"),
    (["pingpong", "--time", "99:99:99", "--dry-run"], "'99:99:99' is not allowed"),
    (["pingpong", "--time", "1-24", "--dry-run"], "'1-24' is not allowed"),
    (["pingpong", "--time", "-1", "--dry-run"], "'-1' is not allowed"),
    (["pingpong", "--time", "", "--dry-run"], "'' is not allowed"),
    (["bogus", "--time", "5", "--dry-run"], "STUDY 'bogus' is not allowed"),
    # nothing that could end an #SBATCH line reaches the script
    (["pingpong", "--time", "5", "--dry-run", "--partition", "a\ntouch X"], "'a\\ntouch X'"),
    (["pingpong", "--time", "5", "--dry-run", "--account", "a b"], "'a b' is not allowed"),
    (["pingpong", "--time", "5", "--dry-run", "--partition", "a;b"], "'a;b' is not allowed"),
])
def test_submit_bad_input_exits_2(tmp_path, jostle_cli, argv, message):
    empty = tmp_path / "bin"
    empty.mkdir()   # a PATH without sbatch: outside any SLURM
    r = jostle_cli("submit", *argv, "--output-dir", tmp_path / "out", env={"PATH": str(empty)})
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert not (tmp_path / "out").exists()


def test_submit_script_passes_sbatch_test_only(slurm, tmp_path, built):
    """The script of a valid submit is one SLURM itself takes (sbatch --test-only: parsed and
    scheduled, not run); its dry run wrote nothing."""
    built("openmpi")
    out = tmp_path / "out"
    r = slurm.run(*JOSTLE, "submit", *STUDIES["pingpong"], "--mpi", "openmpi", "--time", "1:00",
                  "--partition", "debug",   # scripts/slurm-local.sh's partition
                  "--dry-run", "--output-dir", out, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert not out.exists()
    script = tmp_path / "job.sbatch"
    script.write_text(r.stdout)
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
    t = slurm.run("sbatch", "--test-only", script, cwd=tmp_path)
    assert t.returncode == 0 and "to start at" in t.stderr, t.stderr


@pytest.mark.unit
def test_submit_checks_the_study_before_writing_a_script(tmp_path, jostle_cli):
    """The study's own parser and plan judge its options: no script for a command that would
    not run (a plan refused: --max-cores above the host's cores)."""
    r = jostle_cli("submit", "contention", "fig1", "--max-cores", "99999", "--time", "5",
                   "--dry-run", "--output-dir", tmp_path / "o")
    assert r.returncode == 2 and "--max-cores 99999" in r.stderr, r.stderr
    assert r.stdout == "" and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.unit
def test_submit_script_passes_bash_n_with_spaces_and_lists(tmp_path, jostle_cli):
    out = tmp_path / "with space"
    r = jostle_cli("submit", "pingpong", "--time", "1-0:30", "--dry-run", "--partition",
                   "short,long", "--account", "proj_1", "--output-dir", out)
    assert r.returncode == 0, r.stderr
    assert "#SBATCH --partition=short,long" in r.stdout
    assert f'#SBATCH --output="{out}/adhoc/slurm-%j.out"' in r.stdout
    assert subprocess.run(["bash", "-n"], input=r.stdout, text=True).returncode == 0
    r = jostle_cli("submit", "pingpong", "--time", "5", "--dry-run",
                   "--output-dir", tmp_path / "o\n#SBATCH --x")
    assert r.returncode == 2 and "cannot go into a job script" in r.stderr, r.stderr


def test_submit_then_status_then_report(slurm, tmp_path, built):
    built("openmpi")
    job = submit(slurm, tmp_path, *STUDIES["pingpong"], "--mpi", "openmpi",
                 "--output-dir", tmp_path, "--campaign", "sub")
    assert wait_job(slurm, job) == "COMPLETED"
    st = status(slurm, tmp_path / "sub")
    assert st["count"] == {"complete": 1, "partial": 0, "damaged": 0, "planned": 0}
    assert [(j["job"], j["state"]) for j in st["jobs"]] == [(job, "COMPLETED")]
    check_records(tmp_path / "sub", "openmpi", job)
    r = slurm.run(*JOSTLE, "report", tmp_path / "sub", cwd=tmp_path)
    assert r.returncode == 0, r.stderr


def test_submit_cancelled_midway_then_resubmitted_loses_nothing(slurm, tmp_path, built):
    built("openmpi")
    d = tmp_path / "ov"
    argv = [*OVERLAP, "--output-dir", tmp_path, "--campaign", "ov"]
    first = submit(slurm, tmp_path, *argv)
    end = time.monotonic() + 180
    while not list(d.glob("*.jsonl")) and time.monotonic() < end:
        time.sleep(0.1)
    assert slurm.run("scancel", first).returncode == 0
    assert wait_job(slurm, first) == "CANCELLED"
    st = status(slurm, d)
    assert st["count"]["complete"] == 1, st   # the second run was stopped before its end
    done = {f.name: f.read_bytes() for f in d.glob("*.jsonl")}
    second = submit(slurm, tmp_path, *argv)
    assert wait_job(slurm, second) == "COMPLETED"
    st = status(slurm, d)
    assert st["count"] == {"complete": 2, "partial": 0, "damaged": 0, "planned": 0}, st
    assert [j["state"] for j in st["jobs"]] == ["CANCELLED", "COMPLETED"]
    for name, content in done.items():   # kept, not measured again
        assert (d / name).read_bytes() == content
    log = "".join(f.read_text() for f in d.glob("slurm-*.out"))
    assert "already complete" in log


# ------------------------------------------------ two nodes (network namespaces, TCP)

@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_two_nodes_pingpong_goes_between_them(slurm2, tmp_path, flavor, built):
    built(flavor)
    n1, n2 = slurm2.hosts
    r = slurm2.run("salloc", "-N", 2, "-n", 2, "--time", 10, *JOSTLE, "pingpong", "--hosts",
                   f"{n1},{n2}", "--sizes", "4:4K", "--comm-core", "0,1", "--mpi", flavor,
                   "--output-dir", tmp_path, "--campaign", "c", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    check_records(tmp_path / "c", flavor)
    m = metas(tmp_path / "c")[0]
    assert m["hosts"] == [n1, n2] and f"--nodelist={n1},{n2}" in m["launch_line"]
    r = slurm2.run(*JOSTLE, "plot", tmp_path / "c", "-o", tmp_path / "figs", "--format", "svg")
    assert r.returncode == 0, r.stderr
    assert any("inter-node" in f.read_text() for f in (tmp_path / "figs").glob("*.svg"))


def test_two_nodes_contention_quick(slurm2, tmp_path, built):
    built("openmpi")
    n1, n2 = slurm2.hosts
    r = slurm2.run("salloc", "-N", 2, "-n", 2, "--time", 10, *JOSTLE, *STUDIES["contention"],
                   "--hosts", f"{n1},{n2}", "--mpi", "openmpi", "--quiet",
                   "--output-dir", tmp_path, "--campaign", "c", cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    check_records(tmp_path / "c", "openmpi")
    assert all(m["hosts"] == [n1, n2] for m in metas(tmp_path / "c"))
