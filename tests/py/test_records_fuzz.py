"""Damaged records: thousands of mutated run files and hand-made bad lines. Loading one raises
the project's record errors only (never TypeError, ValueError, RecursionError), and `status`
judges each file as `report` loads it (results.file_state, the one judgement)."""

import json
import random
import shutil
from pathlib import Path

import pytest

from jostle import cli
from jostle.commands.status import campaign_status
from jostle.errors import JostleError
from jostle.records.results import IncompleteRunError, RecordError, load

pytestmark = pytest.mark.unit

DATA = Path(__file__).parent / "data"
SEEDS = ["pingpong_intra.jsonl", "contention_pairs.jsonl"]
# What a mutated field becomes: every JSON type, out-of-range numbers, odd text.
ODD_VALUES = [None, True, False, 0, -1, 2**63, 1.5e308, -0.0, "", "a", "NaN", "∞", [], [1],
              ["a", "b"], [2, 1], {}, {"x": {"y": 1}}, "x" * 300]


def _lines(name, points=40):
    """The seed file cut to its first POINTS points (its end line counting them): a mutation then
    lands on the meta and end lines as often as on a point, and costs a fifth of the whole."""
    lines = (DATA / name).read_text().splitlines()
    end = json.loads(lines[-1])
    if end.get("type") != "end" or end["points"] <= points:
        return lines
    end["points"] = points
    return lines[:1 + points] + [json.dumps(end, separators=(",", ":"))]


def _mutate_value(rng, rec):
    """Set one field (at any depth of dicts) to an odd value."""
    obj = rec
    while True:
        keys = list(obj) if isinstance(obj, dict) else list(range(len(obj)))
        if not keys:
            return
        k = rng.choice(keys)
        if isinstance(obj[k], (dict, list)) and obj[k] and rng.random() < 0.5:
            obj = obj[k]
            continue
        obj[k] = rng.choice(ODD_VALUES)
        return


def mutate(rng, lines) -> bytes:
    """One damaged copy of a run file: structured (a field's value) or raw (bytes, lines)."""
    lines = list(lines)
    kind = rng.randrange(7)
    i = rng.randrange(len(lines))
    if kind == 0:
        rec = json.loads(lines[i])
        _mutate_value(rng, rec)
        lines[i] = json.dumps(rec, separators=(",", ":"))
    elif kind == 1:
        del lines[i]
    elif kind == 2:
        lines.insert(i, lines[rng.randrange(len(lines))])
    elif kind == 3:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    text = ("\n".join(lines) + "\n").encode()
    if kind == 4:
        text = text[:rng.randrange(len(text) + 1)]
    elif kind == 5:
        k = rng.randrange(len(text))
        text = text[:k] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8))) + text[k + 1:]
    elif kind == 6:
        text = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200)))
    return text


def _handmade():
    """Hand-made bad files: wrong types, NaN, huge numbers, deep nesting, long lines."""
    meta, point, end = _lines("pingpong_intra.jsonl")[0], _lines("pingpong_intra.jsonl")[1], \
        '{"type":"end","status":"ok","points":1,"elapsed_s":1}'

    def pt(**kw):
        rec = json.loads(point)
        for k, v in kw.items():
            rec[k] = v
        return json.dumps(rec)

    raw_points = [
        pt(params={"size": "64"}), pt(params={"size": -1}), pt(params={"size": [1]}),
        pt(params={"mode": {"a": 1}}), pt(ci95=["a", "b"]), pt(ci95=[2.0, 1.0]), pt(ci95=[1]),
        pt(elapsed_s="soon"), pt(elapsed_s=-1), pt(n="100"), pt(n=-5), pt(n=True),
        pt(median="0.6"), pt(median=None), pt(converged="yes"), pt(stddev=-1.0),
        pt(min=5.0), pt(max=0.0), pt(metric=7), pt(unit=None), pt(params=[1, 2]),
        pt(resolution_limited="no"), pt(tick=-1e-9), pt(tick="1ns"), pt(reps_per_sample=0),
        pt(reps_per_sample=2.5), pt(reps_per_sample=True),
        point.replace('"median":0.6', '"median":NaN'),
        point.replace('"median":0.6', '"median":Infinity'),
        point.replace('"max":0.6449999999999999', '"max":-Infinity'),
        point.replace('"median":0.6', '"median":1e999'),
        point.replace('"n":100', '"n":' + "9" * 5001),
        point.replace('"median":0.6', '"median":0.' + "6" * 5001),
        point.replace('"params":{', '"params":{"deep":' + "[" * 100000 + "]" * 100000 + ','),
        point.replace('"params":{', '"params":{"deep":' + "[" * 40 + "]" * 40 + ','),
        point.replace('"params":{', '"params":{"long":"' + "x" * (17 << 20) + '",'),
        '{"type":"point"}', '[1,2,3]', '"point"', 'null', '{"type":7}', '{"type":"nosuch"}',
        '{"type":"end","status":"ok","points":"1"}', '{"type":"end","status":5}',
        '{"type":"end","status":"ok","points":1,"elapsed_s":"soon"}',
        '{"type":"end","status":"done","points":1}',
    ]
    files = {f"point{k}": "\n".join([meta, line, end]) + "\n" for k, line in enumerate(raw_points)}
    bad_meta = [meta.replace('"schema":1', '"schema":999'), meta.replace('"schema":1', '"schema":true'),
                meta.replace('"argv":["jostle-bench","pingpong"]', '"argv":[1,2]'),
                meta.replace('"ranks":2', '"ranks":"two"'), meta.replace('"ranks":2', '"ranks":NaN'),
                meta.replace('"start":"2026-11-22T10:00:00Z"', '"start":5'),
                meta.replace('"benchmark":"pingpong"', '"benchmark":["pingpong"]')]
    files.update({f"meta{k}": "\n".join([m, point, end]) + "\n" for k, m in enumerate(bad_meta)})
    files.update({"empty": "", "no-meta": point + "\n" + end + "\n", "truncated": meta + "\n" + point[:40],
                  "random": "\x00\x01\xff garbage \n"})
    return files


def _fresh(path: Path, data: bytes):
    """DATA as a new file at PATH: ext4 flushes a file truncated and written again when it is
    closed (auto_da_alloc), 2 ms of waiting each, 20 s of the 4 000 writes of the fuzz test."""
    path.unlink(missing_ok=True)
    path.write_bytes(data)


def _status_of(directory: Path, name: str) -> str:
    _fresh(directory / "campaign.json", json.dumps({"runs": [{"name": name}]}).encode())
    return campaign_status(directory)["runs"][0]["state"]


def _report_of(directory: Path) -> str:
    """What report's loader makes of the directory: damaged (refused), partial or complete."""
    try:
        runs = load([directory], allow_incomplete=True)
    except (RecordError, IncompleteRunError) as e:
        return "partial" if isinstance(e, IncompleteRunError) else "damaged"
    except JostleError:
        return "damaged"
    return "complete" if runs[0].complete else "partial"


def _check_one(directory, data: bytes, label):
    _fresh(directory / "r.jsonl", data)
    # report's loader raises the project's own errors only: anything else fails here
    status, report = _status_of(directory, "r"), _report_of(directory)
    assert status == report, f"{label}: status says {status}, report {report}"
    return status


@pytest.mark.filterwarnings("ignore::jostle.records.results.IncompleteRunWarning")
def test_thousands_of_mutated_records(tmp_path):
    rng = random.Random(28)
    seeds = [_lines(s) for s in SEEDS]
    seen = {"complete": 0, "partial": 0, "damaged": 0}
    for k in range(2000):
        data = mutate(rng, seeds[k % len(seeds)])
        seen[_check_one(tmp_path, data, f"mutation {k}")] += 1
    # The mutations reach every verdict (a fuzzer that only ever broke files tests little).
    assert all(seen.values()), seen


@pytest.mark.filterwarnings("ignore::jostle.records.results.IncompleteRunWarning")
def test_handmade_bad_lines_are_record_errors(tmp_path):
    for name, text in _handmade().items():
        d = tmp_path / name
        d.mkdir()
        data = text.encode("utf-8", "surrogateescape")
        state = _check_one(d, data, name)
        if name in ("truncated",):
            assert state == "partial", name
        else:
            assert state == "damaged", f"{name}: judged {state}"
        with pytest.raises(JostleError) as e:
            load([d / "r.jsonl"])
        assert "\n" not in str(e.value) and len(str(e.value)) < 400, (name, str(e.value)[:500])


@pytest.mark.parametrize("name", ["point0", "point4", "point9", "point21", "point24", "point25",
                                  "point27", "meta1", "empty", "random"])
def test_commands_refuse_a_damaged_record_in_one_line(tmp_path, capsys, name):
    """report, plot, status, advise and model on a damaged record: one line, no traceback."""
    d = tmp_path / "c"
    d.mkdir()
    (d / "r.jsonl").write_bytes(_handmade()[name].encode())
    (d / "campaign.json").write_text(json.dumps({"runs": [{"name": "r"}]}))
    for argv in (["report", str(d)], ["plot", str(d)], ["plot", str(d / "r.jsonl")],
                 ["advise", str(d)], ["model", "fit", str(d)]):
        capsys.readouterr()
        assert cli.main(argv) == 1, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("jostle: error: "), (argv, err)
        assert "r.jsonl" in err, (argv, err)
    assert cli.main(["status", str(d)]) == 0
    assert "damaged" in capsys.readouterr().out
    assert not (d / "report.html").exists() and not (d / "figures").exists()


def test_the_seed_records_stay_complete(tmp_path):
    for s in SEEDS:
        d = tmp_path / s
        d.mkdir()
        shutil.copy(DATA / s, d / "r.jsonl")
        assert _check_one(d, (DATA / s).read_bytes(), s) == "complete"
