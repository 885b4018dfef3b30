import json
import shutil
import warnings

import pytest

from jostle.records.results import (
    IncompleteRunError,
    IncompleteRunWarning,
    RecordError,
    find_run_files,
    frame,
    load,
    load_run,
)

pytestmark = pytest.mark.unit


def test_good_file_loads_into_a_frame(data):
    run = load_run(data / "pingpong_intra.jsonl")
    assert run.complete and run.problem == ""
    assert run.benchmark == "pingpong" and run.name == "pingpong_intra"
    assert run.param_names == ["size", "mode"]
    df = run.points
    assert len(df) == run.end["points"] == 3 * df["size"].nunique()
    assert set(df.metric) == {"rtt", "latency", "bandwidth"}
    row = df[(df["size"] == 1024) & (df.metric == "rtt")].iloc[0]
    assert row["p25"] <= row["median"] <= row["p75"]
    assert row["ci95_lo"] <= row["median"] <= row["ci95_hi"]
    assert row.unit == "us" and row.n == 100


def test_a_large_file_read_again_is_the_same_run_until_it_changes(tmp_path, data, monkeypatch):
    from jostle.records import results
    monkeypatch.setattr(results, "MIN_KEEP", 0)      # every file counts as large
    monkeypatch.setattr(results, "scan", counted := _Counted(results.scan))
    p = tmp_path / "r.jsonl"
    shutil.copy(data / "pingpong_intra.jsonl", p)
    first = load_run(p)
    before = first.points.loc[0, "median"]
    first.meta["git"] = "changed by a caller"
    first.points.loc[0, "median"] = -1.0
    second = load_run(p)
    assert counted.calls == 1                          # read once
    assert second.meta["git"] == "abc123def456" and second.points.loc[0, "median"] == before
    p.write_text(p.read_text().replace('"git":"abc', '"git":"xabc', 1))   # rewritten: read anew
    assert load_run(p).meta["git"] == "xabc123def456" and counted.calls == 2


class _Counted:
    def __init__(self, f):
        self.f, self.calls = f, 0

    def __call__(self, *a):
        self.calls += 1
        return self.f(*a)


@pytest.mark.parametrize("name,reason", [
    ("truncated.jsonl", "cut mid-write"),
    ("noend.jsonl", "no 'end' line"),
    ("partial.jsonl.partial", "no 'end' line"),
    ("interrupted.jsonl.partial", "'interrupted'"),
    ("error_status.jsonl", "MPI_Send failed"),
])
def test_incomplete_runs_are_refused_with_file_and_count(data, name, reason):
    with pytest.raises(IncompleteRunError) as e:
        load_run(data / name)
    msg = str(e.value)
    assert name in msg and reason in msg and "30 point line(s)" in msg
    assert "--allow-incomplete" in msg
    assert e.value.points == 30


def test_partial_name_alone_makes_a_run_incomplete(tmp_path, data):
    p = tmp_path / "done.jsonl.partial"
    shutil.copy(data / "pingpong_intra.jsonl", p)  # a good end line, but never renamed
    with pytest.raises(IncompleteRunError, match=".partial name"):
        load_run(p)


def test_allow_incomplete_warns_and_flags(data):
    with pytest.warns(IncompleteRunWarning, match="incomplete"):
        run = load_run(data / "interrupted.jsonl.partial", allow_incomplete=True)
    assert not run.complete and len(run.points) == 30 and run.name == "interrupted"


@pytest.mark.parametrize("name,where,what", [
    ("unknown_schema.jsonl", ":1:", "unknown schema 2"),
    ("malformed.jsonl", ":3:", "not valid JSON"),
    ("missing_median.jsonl", ":2:", "no 'median'"),
])
def test_bad_files_name_file_and_line(data, name, where, what):
    with pytest.raises(RecordError) as e:
        load_run(data / name, allow_incomplete=True)  # never a reason to accept these
    assert f"{name}{where}" in str(e.value) and what in str(e.value)


@pytest.mark.parametrize("lines,what", [
    (['{"type":"point","params":{},"metric":"rtt","unit":"us","n":1,"median":1}'], "first record must be 'meta'"),
    (["META", "META"], "second 'meta'"),
    (["META", '{"type":"end","status":"ok","points":0}', "END"], "follows the 'end'"),
    (["META", '{"type":"bogus"}'], "unknown record type"),
    (["META", '{"type":"end","status":"ok","points":5}'], "counts 5 points"),
    (["META", '[1,2]'], "JSON object"),
])
def test_structure_errors(tmp_path, data, lines, what):
    meta = (data / "pingpong_intra.jsonl").read_text().split("\n")[0]
    p = tmp_path / "x.jsonl"
    p.write_text("\n".join(meta if l == "META" else l for l in lines).replace(
        "END", '{"type":"end","status":"ok","points":0}') + "\n")
    with pytest.raises(RecordError, match=what):
        load_run(p)


def test_null_stats_become_nan_and_unknown_keys_are_ignored(tmp_path, data):
    meta = json.loads((data / "pingpong_intra.jsonl").read_text().split("\n")[0])
    meta["future_key"] = {"x": 1}
    point = {"type": "point", "params": {"size": 8}, "metric": "rtt", "unit": "us", "n": 1,
             "median": 1.5, "p25": 1.5, "p75": 1.5, "stddev": None, "new": True}
    p = tmp_path / "x.jsonl"
    p.write_text("\n".join(json.dumps(r) for r in
                           (meta, point, {"type": "end", "status": "ok", "points": 1})) + "\n")
    df = load_run(p).points
    assert df.stddev.isna().all() and df["median"].iloc[0] == 1.5 and "new" not in df


def test_directory_loads_recursively_and_prefers_the_complete_file(tmp_path, data):
    (tmp_path / "a" / "b").mkdir(parents=True)
    shutil.copy(data / "pingpong_intra.jsonl", tmp_path / "a" / "x.jsonl")
    shutil.copy(data / "partial.jsonl.partial", tmp_path / "a" / "x.jsonl.partial")  # stale
    shutil.copy(data / "pingpong_inter.jsonl", tmp_path / "a" / "b" / "y.jsonl")
    assert [p.name for p in find_run_files(tmp_path)] == ["y.jsonl", "x.jsonl"]  # path order
    runs = load([tmp_path])
    assert [r.name for r in runs] == ["y", "x"]
    df = frame(runs)
    assert set(df.run) == {"x", "y"} and len(df) == sum(len(r.points) for r in runs)


def test_directory_with_incomplete_run_is_refused_unless_allowed(tmp_path, data):
    shutil.copy(data / "pingpong_intra.jsonl", tmp_path / "x.jsonl")
    shutil.copy(data / "partial.jsonl.partial", tmp_path / "y.jsonl.partial")
    with pytest.raises(IncompleteRunError, match="y.jsonl.partial"):
        load([tmp_path])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert [r.complete for r in load([tmp_path], allow_incomplete=True)] == [True, False]


def test_sidecar_is_attached(tmp_path, data):
    shutil.copy(data / "pingpong_intra.jsonl", tmp_path / "x.jsonl")
    (tmp_path / "x.launch.json").write_text('{"command": "mpirun -np 2 jostle-bench"}')
    assert load_run(tmp_path / "x.jsonl").launch["command"] == "mpirun -np 2 jostle-bench"
