"""Against the real jostle-bench (2 ranks on this host); skipped when it is not built."""

import shutil

import pytest

from conftest import REPO
from jostle.cli import main
from jostle.results import load_run

BUILDS = {"openmpi": ("mpirun.openmpi", "mpirun"), "mpich": ("mpiexec.mpich",)}


def need(flavor):
    bench = REPO / "build" / flavor / "jostle-bench"
    if not bench.exists():
        pytest.skip(f"{bench} is not built (cmake -B build/{flavor} && make -C build/{flavor})")
    if not any(shutil.which(x) for x in BUILDS[flavor]):
        pytest.skip(f"no {flavor} launcher ({', '.join(BUILDS[flavor])}) on PATH")
    return bench


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_real_pingpong_intra_node(flavor, tmp_path, capsys, monkeypatch):
    bench = need(flavor)
    monkeypatch.delenv("JOSTLE_BENCH", raising=False)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    rc = main(["pingpong", "--mpi", flavor, "--bench", str(bench), "--sizes", "0:1K",
               "--min-reps", "20", "--max-time", "0.2", "--output-dir", str(tmp_path),
               "--campaign", "it", "--name", flavor, "--timeout", "120", "--verbose"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "# Size" in out
    run = load_run(tmp_path / "it" / f"{flavor}.jsonl")
    assert run.meta["mpi"]["ranks"] == 2 and len(set(run.hosts)) == 1
    assert sorted(run.points["size"].unique()) == [0] + [1 << k for k in range(11)]
    rtt = run.points[run.points.metric == "rtt"]
    assert (rtt["median"] > 0).all() and (rtt["n"] >= 20).all()
    assert run.launch["launcher"] == flavor
