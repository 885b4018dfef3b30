"""Against the real jostle-bench (2 ranks on this host); skipped when it is not built."""

import json

import pytest

from jostle.cli import main
from jostle.records.results import load_run

pytestmark = pytest.mark.mpi


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_real_pingpong_intra_node(flavor, tmp_path, capsys, monkeypatch, built):
    bench = built(flavor)
    monkeypatch.delenv("JOSTLE_BENCH", raising=False)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    rc = main(["pingpong", "--mpi", flavor, "--bench", str(bench), "--sizes", "0:1K",
               "--min-reps", "20", "--max-time", "0.05", "--output-dir", str(tmp_path),
               "--campaign", "it", "--name", flavor, "--timeout", "120", "--verbose"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "# Size" in out and f"{flavor}: 3 launches, the launch as the unit" in out
    for k in (2, 3):   # 3 launches by default, each a run of its own
        assert load_run(tmp_path / "it" / f"{flavor}-r{k}.jsonl").complete
    summary = json.loads((tmp_path / "it" / f"{flavor}.summary.json").read_text())
    lat = [p for p in summary["points"] if p["metric"] == "latency"]
    assert len(lat) == 12 and all(len(p["launches"]) == 3 for p in lat)
    assert all(p["ci95"][0] <= p["median"] <= p["ci95"][1] for p in lat)
    run = load_run(tmp_path / "it" / f"{flavor}-r1.jsonl")
    assert run.meta["mpi"]["ranks"] == 2 and len(set(run.hosts)) == 1
    assert sorted(run.points["size"].unique()) == [0] + [1 << k for k in range(11)]
    rtt = run.points[run.points.metric == "rtt"]
    assert (rtt["median"] > 0).all() and (rtt["n"] >= 20).all()
    assert run.launch["launcher"] == flavor
