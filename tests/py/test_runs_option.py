"""--runs K on every study that launches MPI jobs: each run launched K times into one campaign,
named NAME-r1 … NAME-rK (campaign.repeated), so that `jostle compare` measures the variation
between jobs; a bad K is refused before anything is planned."""

import json
import re

import pytest

from jostle import cli, figures, repeats, results
from jostle.figures import contention as contention_figures, pingpong as pingpong_figures

# each study with the arguments that keep its dry run small and on the fake bench
STUDIES = {
    "pingpong": ["--sizes", "1:64", "--launcher", ""],
    "contention": ["fig1", "--quick", "--launcher", ""],
    "overlap": ["--quick", "--ranks", "2", "--launcher", ""],
    "nuioa": ["--quick", "--mpi", "openmpi"],   # the built bench: its plan reads --topo
    "bcast": ["--ranks", "2", "--launcher", ""],
    "cholesky": ["--launcher", ""],
}


@pytest.fixture
def bench(monkeypatch, fake_bench, study):
    """The fake bench, except for nuioa (the built one: nothing launches in a dry run)."""
    if study == "nuioa":
        monkeypatch.delenv("JOSTLE_BENCH")


def dry_run(capsys, tmp_path, study, *extra):
    rc = cli.main([study, *STUDIES[study], *extra, "--dry-run", "--output-dir", str(tmp_path)])
    out = capsys.readouterr()
    names = re.findall(r"--output \S*/([^/\s]+)\.jsonl", out.out)
    return rc, names, out.err


@pytest.mark.parametrize("study", sorted(STUDIES))
def test_runs_2_plans_every_run_twice_with_the_job_suffix(capsys, bench, tmp_path, study):
    rc, once, _ = dry_run(capsys, tmp_path, study)
    assert rc == 0 and once
    rc, twice, err = dry_run(capsys, tmp_path, study, "--runs", "2")
    assert rc == 0
    assert len(twice) == 2 * len(once)
    assert sorted(twice) == sorted(f"{n}-r{k}" for n in once for k in (1, 2))
    assert f"{len(twice)} run(s) to make" in err
    assert not list(tmp_path.rglob("*.json*"))   # a dry run writes nothing


@pytest.mark.parametrize("study", sorted(STUDIES))
@pytest.mark.parametrize("bad", ["0", "x", "-1", "1.5"])
def test_a_bad_runs_is_refused_naming_the_value(capsys, bench, tmp_path, study, bad):
    with pytest.raises(SystemExit) as e:
        cli.main([study, *STUDIES[study], "--runs", bad, "--dry-run",
                  "--output-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert "--runs" in err and f"'{bad}'" in err and "Traceback" not in err
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


@pytest.mark.parametrize("study", ["bcast", "cholesky"])
def test_runs_is_refused_for_a_simulated_run(capsys, bench, tmp_path, study):
    rc = cli.main([study, "--simulate", "--runs", "2", "--dry-run", "--output-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and "--runs 2" in err and "deterministic" in err


# ---------------------------------------------------------------- figures pool the K jobs
# The jobs of one setting are drawn as one bar, line or row (repeats.pool, figures.pooled):
# run files copied from tests/py/data as jobs NAME-r1 … NAME-rK, every statistic scaled by a
# factor per job, so that the jobs disagree far beyond each job's own interval.

SCALED = ("min", "p25", "median", "p75", "p99", "max", "mean", "stddev")


def _jobs(src, folder, name, factors):
    """SRC's lines as jobs FOLDER/NAME-r1.jsonl …, job k's statistics times FACTORS[k-1]."""
    folder.mkdir(parents=True, exist_ok=True)
    for k, f in enumerate(factors, start=1):
        lines = []
        for line in src.read_text().splitlines():
            rec = json.loads(line)
            if rec["type"] == "point":
                rec.update({s: rec[s] * f for s in SCALED if rec.get(s) is not None})
                rec["ci95"] = [x * f for x in rec["ci95"]] if rec.get("ci95") else None
            lines.append(json.dumps(rec))
        (folder / f"{name}-r{k}.jsonl").write_text("\n".join(lines) + "\n")


def _bars(ax):
    """[(height, lowest, highest of its error bar)] of the bar chart on AX."""
    from matplotlib.container import BarContainer, ErrorbarContainer
    (bars,) = [c for c in ax.containers if isinstance(c, BarContainer)]
    (err,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    segs = err.lines[2][0].get_segments()
    return [(p.get_height(), s[0][1], s[1][1]) for p, s in zip(bars.patches, segs)]


def test_nuioa_draws_one_bar_per_setting_spanning_its_jobs(tmp_path):
    from fake_bench import _dist, meta
    src = tmp_path / "one.jsonl"
    factors = (1.0, 1.3, 0.8)   # the jobs' medians: 10, 13 and 8 µs; their intervals ±0.02 %
    for core in ("near", "far"):
        m = dict(meta(["h"]), benchmark="pingpong")
        p = [{"type": "point", "params": {"size": s, "mode": "pingpong"}, "metric": metric,
              "unit": unit, **_dist(v, 0.01, 100)}
             for s in (8, 4 << 20) for metric, unit, v in (("latency", "us", 10.0),
                                                          ("bandwidth", "MB/s", 1000.0))]
        src.write_text("".join(json.dumps(x) + "\n" for x in
                               [m, *p, {"type": "end", "status": "ok", "points": len(p)}]))
        _jobs(src, tmp_path / "c", f"nuioa-pp-core{core}-memnear", factors)
    figs = figures.build(results.load([tmp_path / "c"]))
    try:
        (fig,) = [f for f in figs if f.id == "nuioa-placement"]
        latency = fig.fig.axes[0]
        assert sorted(t.get_text() for t in latency.get_xticklabels()) == [
            "thread far, mem near", "thread near, mem near"]   # 2 settings, not 6 jobs
        for height, lo, hi in _bars(latency):
            assert height == pytest.approx(10.0)               # the median of 10, 13 and 8
            assert lo <= 8.0 * 1.0 and hi >= 13.0              # spans every job's median
            assert hi - lo < 6.0                               # and no wider than the jobs'
        assert "pools its 3 MPI jobs" in fig.caption and "variation between jobs" in fig.caption
    finally:
        figures.close(figs)


def test_pingpong_draws_one_curve_per_setting_and_keeps_campaigns_apart(tmp_path, data):
    src = data / "pingpong_intra.jsonl"
    _jobs(src, tmp_path / "a", "pp-intra", (1.0, 1.5))
    _jobs(src, tmp_path / "b", "pp-intra", (1.0, 1.5))   # another campaign: not pooled with a
    runs = results.load([tmp_path / "a", tmp_path / "b"])
    pooled = repeats.pool(runs)
    assert [(r.name, r.jobs) for r in pooled] == [("pp-intra", 2), ("pp-intra", 2)]
    one = results.load_run(src)
    (job1, job2), (p,) = runs[:2], pooled[:1]
    assert len(p.points) == len(one.points)                 # one row per point, not per job
    med = p.points["median"].to_numpy()
    assert med == pytest.approx(1.25 * one.points["median"].to_numpy())   # median of 1 and 1.5
    assert (p.points["ci95_lo"] <= job1.points["median"]).all()
    assert (p.points["ci95_hi"] >= job2.points["median"]).all()
    assert (p.points["p25"] == job1.points["p25"]).all() and (p.points["p75"] == job2.points["p75"]).all()
    figs = pingpong_figures.build(runs[:2])
    try:
        for f in figs:
            curves = [ln for ax in f.fig.axes for ln in ax.get_lines()
                      if ln.get_label().startswith("intra-node")]
            assert len(curves) == 2, f.id          # one per panel (RTT, bandwidth), not per job
            assert "pools its 2 MPI jobs" in f.caption
    finally:
        figures.close(figs)


def test_contention_pools_the_jobs_into_one_row_per_point(tmp_path, data):
    src = data / "contention_pairs.jsonl"
    _jobs(src, tmp_path / "c", "fig1-triad", (1.0, 2.0, 3.0))
    runs = results.load([tmp_path / "c"])
    single = contention_figures.degradation_table([results.load_run(src)])
    table = contention_figures.degradation_table(repeats.pool(runs))
    assert len(table) == len(single) and set(table.run) == {"fig1-triad"}
    assert table["alone"].to_numpy() == pytest.approx(2.0 * single["alone"].to_numpy())
    assert (table["alone_lo"] <= single["alone"]).all()
    assert (table["alone_hi"] >= 3.0 * single["alone"]).all()
    (t,) = contention_figures.tables(runs)
    assert len(t["rows"]) == len(contention_figures.tables([results.load_run(src)])[0]["rows"])
    assert "pools its 3 MPI jobs" in t["caption"]
