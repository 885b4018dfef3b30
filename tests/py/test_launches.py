"""`jostle pingpong` measures in K launches by default (the launch as the unit): per point the
median over launches, the 95% interval over them and a launch's own interval beside it; a
point whose launches disagree beyond their own intervals is said to vary, never to have
converged (analysis.launches, records.repeats.between)."""

import json
import math
import re

import pytest

from jostle import cli
from jostle.analysis import launches
from jostle.studies import pingpong as pingpong_study
from jostle.records import repeats

pytestmark = pytest.mark.unit


def _run(capsys, tmp_path, *extra):
    rc = cli.main(["pingpong", "--sizes", "1:64", "--launcher", "", "--output-dir",
                   str(tmp_path), "--campaign", "c", *extra])
    out = capsys.readouterr()
    assert rc == 0, out.err
    (summary,) = (tmp_path / "c").glob("*.summary.json")
    return out.out, json.loads(summary.read_text())


def _row(text, size):
    (line,) = [ln for ln in text.splitlines() if re.match(rf"\s+{size}\s", ln)]
    return line


def test_a_point_switching_between_two_levels_across_launches_varies(capsys, tmp_path,
                                                                     fake_bench, monkeypatch):
    """Size 8 takes twice as long in launches 2 and 4, each launch precise to ±0.1% on its
    own: reported as bimodal across launches (4 launches: two groups of two), its interval
    over the launches spanning both levels, and not converged; the other sizes agree."""
    monkeypatch.setenv("FAKE_BENCH_SWITCH", "8:2.0")
    text, summary = _run(capsys, tmp_path, "--runs", "4")
    assert summary["launches"] == 4 and summary["unit"] == "launch"
    assert summary["ci95"].startswith("95% prediction interval of the next invocation's median")
    assert "4 launches, the launch as the unit" in text and "1 point(s) vary" in text
    lat = {p["params"]["size"]: p for p in summary["points"] if p["metric"] == "latency"}
    p8 = lat[8]
    low, high = sorted(p8["launches"])[0], sorted(p8["launches"])[-1]
    assert high == pytest.approx(2 * low)
    assert p8["between"] == "bimodal" and p8["converged"] is False
    assert p8["ci95"][0] < low * 1.01 and p8["ci95"][1] > high * 0.99   # spans both levels
    assert p8["within"] < 0.01                  # each launch alone claimed ±0.1%
    assert "bimodal across launches" in _row(text, 8)
    assert f"{low:.3g}-{low:.3g} or {high:.3g}-{high:.3g} us" in _row(text, 8)
    for size in (1, 2, 4, 16, 32, 64):
        assert lat[size]["between"] == "" and lat[size]["converged"] is True
        assert "launches:" not in _row(text, size)
    bw = [p for p in summary["points"] if p["metric"] == "bandwidth" and
          p["params"]["size"] == 8]
    assert bw[0]["between"] == "bimodal"


def test_three_launches_by_default_and_a_switch_varies(capsys, tmp_path, fake_bench, monkeypatch):
    """The default is 3 launches; with 3, two groups would be one launch against two (an outlier
    does as much): the point varies between launches, with its range."""
    monkeypatch.setenv("FAKE_BENCH_SWITCH", "8:2.0")
    text, summary = _run(capsys, tmp_path)
    assert summary["launches"] == 3
    assert sorted(p.name for p in (tmp_path / "c").glob("*.jsonl")) == [
        f"{summary['setting']}-r{k}.jsonl" for k in (1, 2, 3)]
    p8 = next(p for p in summary["points"] if p["metric"] == "latency"
              and p["params"]["size"] == 8)
    assert p8["between"] == "varies" and not p8["converged"]
    lo, hi = min(p8["launches"]), max(p8["launches"])
    assert f"varies between launches: {lo:.3g}-{hi:.3g} us" in _row(text, 8)
    assert p8["median"] == sorted(p8["launches"])[1]      # the median over the launches


def test_one_launch_says_so(capsys, tmp_path, fake_bench):
    text, summary = _run(capsys, tmp_path, "--runs", "1")
    assert summary["launches"] == 1 and "this launch's own" in summary["ci95"]
    assert "1 launch (--runs 1)" in text and "this launch's own" in text
    assert [p.name for p in (tmp_path / "c").glob("*.jsonl")] == [f"{summary['setting']}.jsonl"]


def test_the_launches_share_the_points_time_and_samples(capsys, tmp_path, fake_bench):
    """Each of K launches gets --max-time / K, --min-reps / K (not below 20), --max-reps / K
    (OSU's 1 000 timed round trips unless given) and --precision x sqrt(K): the K together
    take about the samples and the time of one."""
    rc = cli.main(["pingpong", "--sizes", "1:4", "--launcher", "", "--dry-run", "--max-time",
                   "1.5", "--output-dir", str(tmp_path)])
    err = capsys.readouterr()
    assert rc == 0
    lines = [ln for ln in (err.out + err.err).splitlines() if "--output" in ln]
    assert len(lines) == 3
    for ln in lines:
        assert "--max-time 0.5 " in ln and f"--precision {0.01 * math.sqrt(3):.4g} " in ln
        assert "--min-reps 34 " in ln                           # 100 / 3, rounded up
        assert "--max-reps 334 " in ln                          # OSU's 1 000 / 3
    # not given: LAUNCH_TIME (0.1 s) a launch, below 2 s / 4; 0.8 capped at 0.5; 30 / 4
    # floored at 20; 1 000 / 4. Given, 2 s is divided
    assert pingpong_study.launch_budget(None, 0.4, 30, 4) == (0.1, 0.5, 20, 250)
    assert pingpong_study.launch_budget(2.0, 0.4, 30, 4)[0] == 0.5
    assert pingpong_study.launch_budget(1.0, None, 10, 2, 300) == (0.5, 0.01414, 10, 150)
    # never fewer at most than at least
    assert pingpong_study.launch_budget(1.0, None, 100, 2, 30) == (0.5, 0.01414, 50, 50)
    # `jostle run`'s ping-pong step: its 0.2 s a point, and OSU's 1 000 samples, in 3
    assert pingpong_study.launch_options(0.2, 3) == [
        "--max-time", "0.06667", "--precision", "0.01732", "--min-reps", "34", "--max-reps",
        "334"]


@pytest.mark.parametrize("meds, los, his, want", [
    ([1.0, 1.01, 0.99], [0.9, 0.9, 0.9], [1.1, 1.1, 1.1], ""),            # within their CIs
    ([0.40, 0.49, 0.60], [0.398, 0.487, 0.597], [0.402, 0.491, 0.603], "varies"),
    ([0.40, 0.401, 0.60, 0.602], [0.399, 0.4, 0.599, 0.6], [0.401, 0.402, 0.601, 0.603],
     "bimodal"),
    ([0.40, 0.45, 0.55, 0.60], [0.399, 0.449, 0.549, 0.599], [0.401, 0.451, 0.551, 0.601],
     "varies"),                                                            # a spread, one group
    ([0.40, 0.60], [0.399, 0.599], [0.401, 0.601], "varies"),             # 2: never two groups
    ([0.0, 0.0, 0.0], [0.0] * 3, [0.0] * 3, ""),                          # a bandwidth at 0 B
])
def test_between(meds, los, his, want):
    assert repeats.between(meds, los, his) == want


def test_a_single_launch_reports_its_own_interval(data):
    from jostle.records.results import load_run
    run = load_run(data / "pingpong_intra.jsonl")
    (p,) = [p for p in launches.summarise([run]) if p["metric"] == "latency"
            and p["params"]["size"] == 1024]
    row = run.points[(run.points.metric == "latency") & (run.points["size"] == 1024)].iloc[0]
    assert p["ci95"] == [pytest.approx(row["ci95_lo"]), pytest.approx(row["ci95_hi"])]
    assert p["between"] == "" and p["launches"] == [row["median"]]


def test_the_figure_marks_the_point_that_varies_between_launches(capsys, tmp_path, fake_bench,
                                                                  monkeypatch):
    from jostle import figures
    from jostle.figures import pingpong as pingpong_figures
    from jostle.records import results
    monkeypatch.setenv("FAKE_BENCH_SWITCH", "8:2.0")
    _run(capsys, tmp_path, "--sizes", "1:1K")
    figs = pingpong_figures.build(results.load([tmp_path / "c"]))
    try:
        (f,) = [f for f in figs if f.id == "pingpong-pow2"]
        (marks,) = [ln for ln in f.fig.axes[0].get_lines()
                    if ln.get_label() == "varies between launches (1)"]
        assert list(marks.get_xdata()) == [8]
        assert "varying between launches" in f.caption and "pools its 3 MPI jobs" in f.caption
    finally:
        figures.close(figs)


def test_the_command_sums_its_launches_up_without_pandas(tmp_path, fake_bench):
    """Three launches, their headlines and the summary over them, in a fresh process: neither
    pandas, numpy nor matplotlib is imported (0.4 s of a ping-pong's command, records.lines)."""
    import os
    import subprocess
    import sys
    code = ("import sys, json; from jostle import cli; "
            f"rc = cli.main(['pingpong', '--sizes', '1:64', '--launcher', '', '--output-dir', "
            f"{str(tmp_path)!r}, '--campaign', 'c']); "
            "sys.stderr.write(json.dumps([rc, sorted({m.split('.')[0] for m in sys.modules})]))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ), timeout=120)
    rc, mods = json.loads(r.stderr.splitlines()[-1])
    assert rc == 0 and list((tmp_path / "c").glob("*.summary.json")), r.stderr
    assert not {"pandas", "numpy", "matplotlib"} & set(mods)
