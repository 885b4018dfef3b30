"""What a rerun keeps of a `.partial` (python/jostle/records/resume.py), on hand-made files."""

import json

import pytest

from jostle.records.resume import keepable

pytestmark = pytest.mark.unit


def partial(path, options, links):
    """A stopped run of (size, src, dst) links, one latency line each."""
    meta = {"type": "meta", "schema": 1, "benchmark": "shift", "options": options,
            "harness": {"order": {"kind": "increasing"}}}
    lines = [meta] + [{"type": "point", "params": {"size": s, "src": a, "dst": b},
                       "metric": "latency", "unit": "us", "n": 1, "median": 1.0}
                      for s, a, b in links]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


LINKS = [(8, a, (a + 1) % 4) for a in range(4)] + [(8, 0, 2)]


def test_a_point_a_params_group_is_kept_point_by_point(tmp_path):
    kept = keepable(partial(tmp_path / "a.jsonl.partial", {}, LINKS), lambda meta: True)
    assert kept.points == 5 and kept.line_count == 5


def test_points_of_several_links_are_measured_anew(tmp_path):
    """With --links-per-point 2 the 5 links are 3 points (the last cut short), not 5: a
    count of params groups would skip points never measured."""
    p = partial(tmp_path / "b.jsonl.partial", {"links-per-point": "2"}, LINKS)
    assert keepable(p, lambda meta: True) is None
    assert keepable(partial(tmp_path / "c.jsonl.partial", {"links-per-point": "1"}, LINKS),
                    lambda meta: True).points == 5
