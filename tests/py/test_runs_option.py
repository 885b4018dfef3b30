"""--runs K on every study that launches MPI jobs: each run launched K times into one campaign,
named NAME-r1 … NAME-rK (campaign.repeated), so that `jostle compare` measures the variation
between jobs; a bad K is refused before anything is planned."""

import json
import re

import numpy as np
import pytest

from jostle import cli, figures
from jostle.analysis import contention
from jostle.records import repeats, results
from jostle.figures import contention as contention_figures, pingpong as pingpong_figures

pytestmark = pytest.mark.unit

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
    rc, once, _ = dry_run(capsys, tmp_path, study, "--runs", "1")   # pingpong's default is 3
    assert rc == 0 and once
    rc, twice, err = dry_run(capsys, tmp_path, study, "--runs", "2")
    assert rc == 0
    assert len(twice) == 2 * len(once)
    assert sorted(twice) == sorted(f"{n}-r{k}" for n in once for k in (1, 2))
    assert f"{len(twice)} run(s) to make" in err
    assert not list(tmp_path.rglob("*.json*"))   # a dry run writes nothing


@pytest.mark.parametrize("study", sorted(STUDIES))
@pytest.mark.parametrize("bad", ["0", "x", "-1", "1.5", "1000000"])
def test_a_bad_runs_is_refused_naming_the_value(capsys, bench, tmp_path, study, bad):
    with pytest.raises(SystemExit) as e:
        cli.main([study, *STUDIES[study], "--runs", bad, "--dry-run",
                  "--output-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert "--runs" in err and f"'{bad}'" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
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


# the 95% interval over the jobs of the factors 1, 1.3 and 0.8: exp(mean ± t(2) sd / sqrt(3))
# of their logs (t(2) = 4.302653)
_LOGS = np.log([1.0, 1.3, 0.8])
JOBS_CI = tuple(np.exp(_LOGS.mean() + s * 4.302653 * _LOGS.std(ddof=1) / np.sqrt(3)) for s in (-1, 1))


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
        geo = 10.0 * (1.0 * 1.3 * 0.8) ** (1 / 3)
        for height, lo, hi in _bars(latency):
            assert height == pytest.approx(geo, rel=1e-6)      # the jobs' geometric mean
            assert lo == pytest.approx(JOBS_CI[0] * 10, rel=1e-4)   # its 95% CI over the jobs
            assert hi == pytest.approx(JOBS_CI[1] * 10, rel=1e-4)
        ticks = [ln for ln in latency.get_lines() if ln.get_label() == "range of the jobs' medians"]
        assert len(ticks) == 1 and sorted(set(ticks[0].get_ydata())) == pytest.approx([8.0, 13.0])
        assert "pools its 3 MPI jobs" in fig.caption and "confidence interval" in fig.caption
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
    positive = one.points["median"].to_numpy() > 0
    assert med[positive] == pytest.approx(1.5 ** 0.5 * one.points["median"].to_numpy()[positive])
    assert (p.points["ci95_lo"] <= job1.points["median"]).all()   # 2 jobs: t(1) = 12.7
    assert (p.points["ci95_hi"] >= job2.points["median"]).all()
    assert (p.points["jobs_lo"] == job1.points["median"]).all()
    assert (p.points["jobs_hi"] == job2.points["median"]).all()
    assert (p.points["n"] == 2).all() and (p.points["samples"] == 2 * one.points["n"]).all()
    # a typical job's quartiles, not the lowest job's p25 and the highest job's p75
    assert p.points["p25"].to_numpy() == pytest.approx(1.25 * one.points["p25"].to_numpy())
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
    single = contention.degradation_table([results.load_run(src)])
    table = contention.degradation_table(repeats.pool(runs))
    assert len(table) == len(single) and set(table.run) == {"fig1-triad"}
    assert table["alone"].to_numpy() == pytest.approx(6 ** (1 / 3) * single["alone"].to_numpy())
    assert (table["alone_lo"] <= single["alone"]).all()
    assert (table["alone_hi"] >= 3.0 * single["alone"]).all()
    (t,) = contention_figures.tables(runs)
    assert len(t["rows"]) == len(contention_figures.tables([results.load_run(src)])[0]["rows"])
    assert "pools its 3 MPI jobs" in t["caption"]


def test_a_pooled_points_interval_is_the_jobs_confidence_interval(tmp_path, data):
    """Five jobs, the job as the unit: the 95% interval of the geometric mean over the jobs
    (Student's t, 4 degrees of freedom, on the log scale), narrower than their range, and
    never below a job's own interval."""
    src = data / "pingpong_intra.jsonl"
    factors = (1.0, 1.1, 0.95, 1.2, 0.9)
    _jobs(src, tmp_path / "c", "pp", factors)
    (p,) = repeats.pool(results.load([tmp_path / "c"]))
    one = results.load_run(src).points
    logs = np.log(factors)
    half = 2.776445 * logs.std(ddof=1) / np.sqrt(5)
    row = (one["metric"] == "latency") & (one["size"] == 1024)
    (i,) = np.flatnonzero(row.to_numpy())
    base = one.loc[row, "median"].iloc[0]
    got = p.points.iloc[i]
    assert got["median"] == pytest.approx(base * np.exp(logs.mean()))
    assert got["ci95_lo"] == pytest.approx(base * np.exp(logs.mean() - half))
    assert got["ci95_hi"] == pytest.approx(base * np.exp(logs.mean() + half))
    assert got["jobs_lo"] == pytest.approx(0.9 * base) and got["jobs_hi"] == pytest.approx(1.2 * base)
    assert got["n"] == 5
    # jobs that agree exactly: the interval is the jobs' own, not a point
    _jobs(src, tmp_path / "d", "pp", (1.0, 1.0, 1.0))
    (q,) = repeats.pool(results.load([tmp_path / "d"]))
    lat = one[row].iloc[0]
    assert q.points.iloc[i]["ci95_lo"] < lat["median"] < q.points.iloc[i]["ci95_hi"]
    assert q.points.iloc[i]["ci95_hi"] / lat["median"] < lat["ci95_hi"] / lat["median"] + 0.01
