"""What a launch says of why it stopped a point (jostle-bench's "stop", docs/statistics.md,
"Stopping") and of a median between two levels ("levels"), as `jostle pingpong` reports them
over its launches; and the sweep's time, planned and printed before it starts."""

import json

import pytest

from fake_bench import meta, points

from jostle import cli
from jostle.analysis import launches
from jostle.records.results import load_run

pytestmark = pytest.mark.unit


def _launch(path, k, extra):
    """Launch K of sizes 8 and 16 (fake_bench's values), EXTRA[(k, size)] added to its
    latency line."""
    lines = [meta(["h", "h"])]
    for size in (8, 16):
        for p in points(size):
            if p["metric"] == "latency":
                p.update({"stop": "precision", **extra.get((k, size), {})})
            lines.append(p)
    lines.append({"type": "end", "status": "ok", "points": 6, "elapsed_s": 1.0})
    f = path / f"s-r{k}.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return load_run(f)


def test_a_median_between_two_levels_and_a_point_not_narrowing_are_said(tmp_path):
    """Launch 2 found size 8's median between levels 0.30 and 0.36 us; launch 1 stopped size 16
    as not narrowing: both said, the levels' medians in the note, neither converged."""
    two = {"levels": [{"median": 0.30, "share": 0.5, "ci95": [0.299, 0.301]},
                      {"median": 0.36, "share": 0.5, "ci95": [0.359, 0.361]}],
           "stop": "two levels", "converged": False}
    runs = [_launch(tmp_path, k, {(2, 8): two, (1, 16): {"stop": "not narrowing",
                                                         "converged": False}})
            for k in (1, 2, 3)]
    pts = {p["params"]["size"]: p for p in launches.summarise(runs) if p["metric"] == "latency"}
    assert pts[8]["levels"] == [0.30, 0.36] and pts[8]["stops"][1] == "two levels"
    assert "two levels within a launch: 0.3 and 0.36 us" in pts[8]["note"]
    assert pts[16]["stops"] == ["not narrowing", "precision", "precision"]
    assert pts[16]["levels"] is None and not pts[16]["converged"]
    assert launches.stopped_early(list(pts.values()), "latency") == 2
    assert "2 point(s) stopped in a launch when more samples could not narrow them" in \
        launches.heading("s", 3, 0, 2)
    (row8,) = [ln for ln in launches.table(list(pts.values()), 3) if ln.split()[0] == "8"]
    assert "two levels within a launch" in row8
    # a line from before "stop" existed reads as not said
    said = [s for s in runs[0].points.stop if isinstance(s, str)]
    assert sorted(said) == ["not narrowing", "precision"] and len(runs[0].points) == 6


def test_the_sweep_is_planned_before_it_starts(capsys, tmp_path, fake_bench):
    """`jostle pingpong` prints its runs and the time they take at most before the first
    launch, as --dry-run does."""
    rc = cli.main(["pingpong", "--sizes", "1:64", "--launcher", "", "--output-dir",
                   str(tmp_path), "--campaign", "c", "--max-time", "0.3"])
    err = capsys.readouterr().err
    assert rc == 0
    plan = [ln for ln in err.splitlines() if ln.startswith("jostle: plan: ")]
    assert len(plan) == 1 and "3 run(s) to make, 0 already complete" in plan[0]
    assert "at most about" in plan[0]
    assert err.index("jostle: plan: ") < err.index("jostle: results in")
