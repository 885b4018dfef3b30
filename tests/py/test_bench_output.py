"""jostle-bench's stdout formats (--format table|osu|json|csv) and OSU's short flags (-m, -i,
-x), with 2 real ranks: what a script written for OSU's output reads, and what the record holds."""
import csv
import io
import json

import pytest

from jostle.records.results import load_run

from mpijobs import run_bench, validate

pytestmark = pytest.mark.mpi


def run(*args, flavor="openmpi"):
    p = run_bench("pingpong", *args, flavor=flavor, timeout=120)
    assert p.returncode == 0, p.stderr
    return p


def rows(text):
    """The data rows of OSU-style output: every line that is not a comment, split on blanks."""
    return [line.split() for line in text.splitlines() if line and not line.startswith("#")]


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_osu_flags_and_columns(tmp_path, flavor):
    out = tmp_path / "r.jsonl"
    p = run("-m", "4:64", "-i", "37", "-x", "3", "--format", "osu", "--output", str(out),
            flavor=flavor)
    assert "# Size" in p.stdout and "Latency (us)" in p.stdout
    data = rows(p.stdout)
    assert [int(r[0]) for r in data] == [4, 8, 16, 32, 64]
    assert all(len(r) == 2 and float(r[1]) > 0 for r in data)
    r = load_run(out)
    # -i fixes the samples, -x the warm-up; the value printed is OSU's statistic, the mean
    lat = r.points[r.points.metric == "latency"]
    assert set(lat["n"]) == {37}
    assert r.meta["options"]["warmup"] == "3"
    assert "as OSU prints it" in p.stdout
    printed = {int(x[0]): float(x[1]) for x in data}
    for _, pt in lat.iterrows():
        assert printed[int(pt["size"])] == pytest.approx(pt["mean"], abs=0.006)
    # --statistic median: the record's median instead, and the choice is recorded
    p = run("-m", "4:64", "-i", "37", "--format", "osu", "--statistic", "median", "--output",
            str(out), flavor=flavor)
    r = load_run(out)
    assert r.meta["options"]["statistic"] == "median"
    printed = {int(x[0]): float(x[1]) for x in rows(p.stdout)}
    for _, pt in r.points[r.points.metric == "latency"].iterrows():
        assert printed[int(pt["size"])] == pytest.approx(pt["median"], abs=0.006)


def test_osu_max_alone_starts_at_zero_and_stream_heads_bandwidth():
    p = run("-m", "2", "-i", "10", "--mode", "stream", "--window", "4", "--format", "osu")
    assert "Bandwidth (MB/s)" in p.stdout
    assert [r[0] for r in rows(p.stdout)] == ["0", "1", "2"]


def test_json_and_csv_match_the_record(tmp_path):
    out = tmp_path / "r.jsonl"
    p = run("--sizes", "8,1K", "-i", "20", "--format", "json", "--output", str(out))
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    recorded = [json.loads(line) for line in out.read_text().splitlines()[1:-1]]
    assert lines == recorded and all(x["type"] == "point" for x in lines)
    p = run("--sizes", "8,1K", "-i", "20", "--format", "csv")
    table = list(csv.DictReader(io.StringIO(p.stdout)))
    assert {(t["label"], t["metric"]) for t in table} >= {("8", "latency"), ("1024", "rtt")}
    for t in table:
        assert int(t["n"]) == 20 and json.loads(t["params"])["size"] in (8, 1024)
        assert float(t["ci95_lo"]) <= float(t["median"]) <= float(t["ci95_hi"])


@pytest.mark.parametrize("how", ["keep", "subtract"])
def test_clock_overhead_is_named_in_the_record(tmp_path, how):
    out = tmp_path / "r.jsonl"
    args = ["--sizes", "8", "-i", "50"] + ([] if how == "keep" else ["--clock-overhead", how])
    run(*args, "--output", str(out))
    h = load_run(out).meta["harness"]
    assert h["clock_overhead"] == how and h["timer_overhead_s"] > 0
    assert ("kept" in h["timer"]) == (how == "keep")


# Refused before MPI starts: judged through --validate (no launch), with both builds; one case
# per library under the launcher below.
@pytest.mark.unit
@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
@pytest.mark.parametrize("args, needle", [
    (["--clock-overhead", "maybe"], "'maybe'"),
    (["-m", "8:4"], "'8:4'"),
    (["-i", "0"], "'0'"),
    (["-i", "5", "--min-reps", "3"], "--iterations"),
    (["--format", "xml"], "'xml'"),
    (["-m"], "-m"),
])
def test_bad_osu_input_exit_2(tmp_path, flavor, args, needle):
    out = [] if "--output" in args else ["--output", tmp_path / "r.jsonl"]
    p = validate("pingpong", *out, *args, flavor=flavor)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert needle in p.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_bad_osu_input_under_the_launcher_is_refused_as_validate_says(tmp_path, flavor):
    out = tmp_path / "r.jsonl"
    said = validate("pingpong", "-m", "8:4", "--output", out, flavor=flavor).stderr.strip()
    p = run_bench("pingpong", "-m", "8:4", out=out, flavor=flavor)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert said.startswith("jostle-bench: error: ") and said in p.stderr
    assert not list(tmp_path.iterdir())
