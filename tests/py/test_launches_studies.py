"""`jostle contention` and `jostle nuioa` measure in launches by default, as `jostle pingpong`
does (the launch as the unit): each run launched 3 times with real ranks, and per point the
median over the launches with the interval the next invocation's median falls in
(analysis.launches, through commands._launches); `--runs 1` is one launch and says so. The
smallest sizes and times the benchmarks take: a few seconds each."""

import json

import pytest

from conftest import run_cli
from mpijobs import ENV
from jostle.analysis import launches
from jostle.records import lines

pytestmark = pytest.mark.mpi


@pytest.fixture
def real(monkeypatch, built):
    """The built Open MPI jostle-bench, with the environment its ranks need here."""
    bench = built()
    monkeypatch.delenv("JOSTLE_BENCH", raising=False)
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    for k in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM",
              "OMPI_MCA_rmaps_base_oversubscribe"):
        monkeypatch.setenv(k, ENV[k])
    return ["--mpi", "openmpi", "--bench", str(bench), "--quiet", "--timeout", "120"]


def test_contention_launches_each_run_three_times_and_reports_the_median_over_them(
        capsys, tmp_path, real):
    """fig3 at one size (4 B), one compute core, the shortest phases: 3 launches; the
    summary's value is the median of the launches' medians (each read back from its own
    record), its interval reaches past every launch, and the table names the phase."""
    rc, out, err = run_cli(capsys, "contention", "fig3", "--quick", "--cores", "1", "--sizes",
                           "4", "--phase-time", "0.03", "--min-reps", "5", "--max-time", "0.05",
                           "--array-bytes", "4M", *real, "--output-dir", tmp_path)
    assert rc == 0, err
    d = tmp_path / "contention"
    name = "fig3-triad-c01-quick"
    assert sorted(p.name for p in d.glob("*.jsonl")) == [f"{name}-r{k}.jsonl" for k in (1, 2, 3)]
    for k in (1, 2, 3):   # each launch given a third of the phase's time
        argv = lines.read(d / f"{name}-r{k}.jsonl").meta["argv"]
        assert argv[argv.index("--phase-time") + 1] == "0.01"
    summary = json.loads((d / f"{name}.summary.json").read_text())
    assert summary["launches"] == 3 and summary["unit"] == "launch"
    latency = [p for p in summary["points"] if p["metric"] == "latency"]
    assert {p["params"]["phase"] for p in latency} == {"comm", "together"}
    for p in latency:
        own = [next(r["median"] for r in lines.read(d / f"{name}-r{k}.jsonl").rows
                    if r["metric"] == "latency" and r["phase"] == p["params"]["phase"])
               for k in (1, 2, 3)]
        assert p["launches"] == own
        assert p["median"] == sorted(own)[1]
        lo, hi = p["ci95"]
        assert lo <= min(own) and hi >= max(own) and p["within"] is not None
        if p["between"]:   # varies, or bimodal: in the words of analysis.launches
            assert launches.note(p["between"], "us", own) in out, (p["between"], own)
    assert f"{name}: 3 launches, the launch as the unit" in out
    assert "95% PI, next invocation" in out and "within a launch" in out
    assert any(ln.split()[:2] == ["comm", "4"] for ln in out.splitlines())


def test_nuioa_one_launch_says_so(capsys, tmp_path, real):
    """--runs 1: one launch of each run, named without a launch suffix, and the output says
    that each interval is the launch's own."""
    rc, out, err = run_cli(capsys, "nuioa", "--quick", "--parts", "placement", "--sizes", "8",
                           "--runs", "1", *real, "--output-dir", tmp_path)
    assert rc == 0, err
    d = tmp_path / "nuioa"
    assert sorted(p.name for p in d.glob("*.jsonl")) == ["nuioa-pp-corenear-memnear.jsonl",
                                                         "nuioa-pp-node0.jsonl"]
    summary = json.loads((d / "nuioa-pp-node0.summary.json").read_text())
    assert summary["launches"] == 1 and "this launch's own" in summary["ci95"]
    assert "nuioa-pp-node0: 1 launch (--runs 1): each interval is this launch's own" in out
