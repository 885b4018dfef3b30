"""The report's warnings about the points themselves (jostle.analysis.quality): one line per
study and kind, counted, the worst named, whatever the number of points or jobs."""

import json

import pytest

from jostle import report
from jostle.analysis import quality
from jostle.records.results import load_run

pytestmark = pytest.mark.unit


def _runs(tmp_path, data, names, edit):
    """Copies of the inter-node ping-pong record named NAMES, each point line edited by
    EDIT(name, k, point) (k counts the point lines)."""
    lines = (data / "pingpong_inter.jsonl").read_text().splitlines()
    runs = []
    for name in names:
        out, k = [], 0
        for line in lines:
            rec = json.loads(line)
            if rec["type"] == "meta":
                rec["harness"] = dict(rec.get("harness") or {}, timer_resolution_s=2e-8)
                rec["warnings"] = ["oversubscribed: 2 ranks bound on 1 core"]
            if rec["type"] == "point":
                edit(name, k, rec)
                k += 1
            out.append(json.dumps(rec))
        (tmp_path / f"{name}.jsonl").write_text("\n".join(out) + "\n")
        runs.append(load_run(tmp_path / f"{name}.jsonl"))
    return runs


def test_many_points_many_jobs_make_one_line_per_kind(tmp_path, data):
    def edit(name, k, pt):
        size = pt["params"]["size"]
        if size <= 8:          # the smallest points: the clock keeps them wide
            pt.update(converged=False, resolution_limited=True, tick=0.01 if size else 0.05)
        elif size == 64 * 1024 and name.endswith("r2"):
            pt.update(converged=False, resolution_limited=False, ci95=[pt["median"] * 0.7,
                                                                        pt["median"] * 1.3])
        elif size == 1024:
            pt.update(modes=[{"at": pt["median"], "share": 0.6},
                             {"at": 2 * pt["median"], "share": 0.4}])
    runs = _runs(tmp_path, data, ["pp-r1", "pp-r2", "pp-r3"], edit)
    points = sum(len(r.points.drop_duplicates(r.param_names)) for r in runs)
    small = 3 * sum(s <= 8 for s in set(runs[0].points["size"]))
    warns = [w.text for w in quality.run_warnings(runs) + quality.point_warnings(runs)]
    # the C side's warning once, with its runs; each kind of the points once for the study
    assert warns[0] == "pp-r1, pp-r2, pp-r3: oversubscribed: 2 ranks bound on 1 core"
    lim = [w for w in warns if "resolution-limited" in w]
    assert len(lim) == 1 and lim[0].startswith(f"pp: {small} of {points} point(s) resolution-limited "
                                               "at the clock's 20 ns tick; worst ±1.")
    assert "at 0 B in pp-r1" in lim[0]
    unconv = [w for w in warns if "did not converge" in w]
    assert unconv == [f"pp: 1 of {points} point(s) did not converge (worst ±30% at 64 KiB in "
                      "pp-r2): their 95% interval stayed wider than the target precision"]
    multi = [w for w in warns if "two or more modes" in w]
    assert len(multi) == 1 and multi[0].startswith(f"pp: 3 of {points} point(s) have two or more")
    assert len(warns) == 4


def test_resolution_limited_is_not_counted_as_unconverged(tmp_path, data):
    def edit(name, k, pt):
        pt.update(converged=False, resolution_limited=pt["params"]["size"] % 2 == 0, tick=0.001)
    (run,) = _runs(tmp_path, data, ["one"], edit)
    sizes = sorted(set(run.points["size"]))
    even = sum(s % 2 == 0 for s in sizes)
    lines = [w.text for w in quality.point_warnings([run])]
    assert len(lines) == 2
    assert lines[0].startswith(f"one: {len(sizes) - even} of {len(sizes)} point(s) did not "
                               "converge")
    assert lines[1].startswith(f"one: {even} of {len(sizes)} point(s) resolution-limited")


def test_the_settings_of_one_benchmark_make_one_line_per_kind_with_each_as_detail(tmp_path, data):
    """`jostle run`'s eight overlap settings: one line per kind for the benchmark, the worst
    run named, each setting's own line in the details (not 8 lines per kind)."""
    def edit(name, k, pt):
        size = pt["params"]["size"]
        if size <= 8:
            pt.update(converged=False, resolution_limited=True, tick=0.01 if size else 0.05)
        elif (size, name) in ((64 * 1024, "ov-b"), (1024, "ov-c")):
            w = 0.3 if name == "ov-b" else 0.1
            pt.update(converged=False, resolution_limited=False,
                      ci95=[pt["median"] * (1 - w), pt["median"] * (1 + w)])
        elif size == 2048 and name == "ov-a":
            pt.update(modes=[{"at": pt["median"], "share": 0.6},
                             {"at": 2 * pt["median"], "share": 0.4}])
    runs = _runs(tmp_path, data, ["ov-a", "ov-b", "ov-c"], edit)
    per = len(runs[0].points.drop_duplicates(runs[0].param_names))
    bench = runs[0].benchmark
    warns = quality.run_warnings(runs) + quality.point_warnings(runs)
    assert [w.text for w in warns][0] == "ov-a, ov-b, ov-c: oversubscribed: 2 ranks bound on 1 core"
    assert len(warns) == 4, [w.text for w in warns]
    unconv, lim, modes = warns[1:]
    assert unconv.text == (f"{bench} (3 settings): 2 of {3 * per} point(s) did not converge "
                           "(worst ±30% at 64 KiB in ov-b): their 95% interval stayed wider "
                           "than the target precision")
    assert [d.split(":")[0] for d in unconv.details] == ["ov-b", "ov-c"]
    assert unconv.details[1].startswith(f"ov-c: 1 of {per} point(s) did not converge (worst ±10% "
                                        "at 1 KiB)")
    assert lim.text.startswith(f"{bench} (3 settings): ") and "resolution-limited" in lim.text
    assert [d.split(":")[0] for d in lim.details] == ["ov-a", "ov-b", "ov-c"]
    # a kind in one setting only: the line names its run, no details
    assert " in ov-a)" in modes.text and modes.details == ()
    box = report._ENV.get_template("warnings.html").render(
        notices={"errors": [], "warnings": warns, "notes": []})
    assert box.count("<li>") == 4 + 2 + 3 and box.count("<details>") == 2
    assert "<details><summary>by setting (2)</summary><ul><li>ov-b: 1 of" in box
