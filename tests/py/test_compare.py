"""`jostle compare` and the statistics under it (comparison.py, stats.py) on records made from
a real-looking ping-pong sweep (data/pingpong_intra.jsonl, 71 sizes × 3 metrics): each run of
a side is that sweep drawn again with a job's own luck (a seeded factor per run and point), and
B's runs are slowed by a known factor. The bench script bench/compare_targets.py measures the
rates on real launches; here the statistics must find what was put in, and nothing else."""

import json
import math
from xml.etree import ElementTree as ET

import numpy as np
import pytest

from jostle import cli
from jostle.analysis import comparison, machines, multiplicity, stats

pytestmark = pytest.mark.unit

TIME_LIKE = ("rtt", "latency")   # a slowdown by F multiplies these, divides the bandwidth
MPICH = "MPICH Version:\t4.0.2"


def make_campaign(folder, data, runs, factor=1.0, seed=0, job_sd=0.02, library=None,
                  name="pingpong", derived=True):
    """RUNS run files in FOLDER: the data file's points, each run's values times a job
    factor exp(N(0, JOB_SD)) per point, then slowed by FACTOR. DERIVED: the metrics of a point
    drawn once, as jostle-bench derives them from the same samples (latency and rtt times the
    factor, the bandwidth over it); else each metric line drawn on its own. LIBRARY: the MPI
    library the meta line says (default: the data file's Open MPI)."""
    rng = np.random.default_rng(seed)
    lines = (data / "pingpong_intra.jsonl").read_text().splitlines()
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(runs):
        out, drawn = [], {}
        for line in lines:
            rec = json.loads(line)
            if rec["type"] == "meta":
                rec["start"] = f"2026-11-25T10:0{k}:00Z"
                if library:
                    rec["mpi"]["library"] = rec["mpi"]["library_full"] = library
            if rec["type"] == "point":
                key = json.dumps(rec["params"], sort_keys=True) if derived else len(drawn)
                f = drawn.setdefault(key, math.exp(rng.normal(0, job_sd)) * factor)
                f = f if rec["metric"] in TIME_LIKE else 1 / f
                for s in ("min", "p25", "median", "p75", "p99", "max", "mean", "stddev"):
                    rec[s] = rec[s] * f
                rec["ci95"] = [v * f for v in rec["ci95"]]
            out.append(json.dumps(rec))
        (folder / f"{name}-r{k + 1}.jsonl").write_text("\n".join(out) + "\n")
    return folder


def run_cli(capsys, *argv):
    rc = cli.main(["compare", *map(str, argv)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def verdicts(capsys, a, b, *extra):
    rc, out, _ = run_cli(capsys, a, b, "--format", "json", *extra)
    return rc, json.loads(out)


@pytest.mark.parametrize("runs, job_sd", [(3, 0.02), (1, 0.005)])
def test_a_known_slowdown_is_found_where_the_interval_allows_it(tmp_path, data, capsys, runs,
                                                                 job_sd):
    """With one run per side, the assumed spread between jobs (--job-sd) is what it is."""
    a = make_campaign(tmp_path / "a", data, runs, seed=1, job_sd=job_sd)
    b = make_campaign(tmp_path / "b", data, runs, factor=1.10, seed=2, job_sd=job_sd)
    rc, got = verdicts(capsys, a, b, "--job-sd", str(job_sd))
    pts = [p for p in got["points"] if p["test"]]
    assert got["counts"]["faster"] == 0
    for p in pts:
        # slower exactly where the interval at the selection's level clears the tolerance
        assert (p["verdict"] == "slower") == (p["sel_lo"] > 1.05), p
    slower = [p for p in pts if p["verdict"] == "slower"]
    assert len(slower) >= len(pts) // 4, got["counts"]   # many points are clear enough
    assert [s["verdict"] for s in got["sweeps"]] in (["slower"], [])   # none with one run
    assert rc == 1 and got["exit_status"] == 1
    assert "Benjamini-Hochberg" in got["method"]
    assert got["jobs"].startswith("job-to-job variation measured" if runs > 1 else "one run per side")


def test_no_slowdown_is_found_nowhere(tmp_path, data, capsys):
    a = make_campaign(tmp_path / "a", data, 3, seed=1, job_sd=0.005)
    b = make_campaign(tmp_path / "b", data, 3, factor=1.00, seed=2, job_sd=0.005)
    rc, got = verdicts(capsys, a, b)
    assert got["counts"] == {"slower": 0, "undecided": 0, "faster": 0, "same": 71}, got["counts"]
    assert [s["verdict"] for s in got["sweeps"]] == ["same"]
    assert rc == 0 and got["verdict"] == "no regression"


def test_junit_has_one_case_per_point_and_fails_the_slower_ones(tmp_path, data, capsys):
    """Latency, rtt and bandwidth of a ping-pong point come from the same samples: one test
    and one test case (the latency, the others in its text), and one case for the sweep."""
    a = make_campaign(tmp_path / "a", data, 3, seed=1)
    b = make_campaign(tmp_path / "b", data, 3, factor=1.10, seed=2)
    rc, out, _ = run_cli(capsys, a, b, "--format", "junit")
    root = ET.fromstring(out.encode())
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    points = [c for c in cases if not c.get("classname").endswith(".sweep")]
    failed = [c for c in cases if c.find("failure") is not None]
    assert len(cases) == int(suite.get("tests")) == 71 + 1   # 71 sizes, one sweep
    assert {c.get("classname") for c in points} == {"pingpong.latency"}
    assert "rtt ×" in points[5].find("system-out").text
    assert "bandwidth ×" in points[5].find("system-out").text
    assert len(failed) == int(suite.get("failures")) > 0
    assert rc == 1
    rc, got = verdicts(capsys, a, b)
    assert len([p for p in got["points"] if p["test"]]) == 71 == sum(got["counts"].values())
    assert {p["same_test_as"] for p in got["points"] if not p["test"]} == {"latency"}


def test_metrics_drawn_apart_are_tests_apart(tmp_path, data, capsys):
    a = make_campaign(tmp_path / "a", data, 3, seed=1, derived=False)
    b = make_campaign(tmp_path / "b", data, 3, seed=2, derived=False)
    rc, got = verdicts(capsys, a, b)
    assert sum(got["counts"].values()) == 213 - 1   # the bandwidth at 0 B: no ratio


def test_the_same_campaign_twice_is_all_same(tmp_path, data, capsys):
    a = make_campaign(tmp_path / "a", data, 1)
    rc, out, _ = run_cli(capsys, a, a)
    assert rc == 0
    assert "slower     0 points" in out and "undecided  0 points" in out
    assert "the same runs on both sides" in out


def test_the_table_and_the_files(tmp_path, data, capsys):
    a = make_campaign(tmp_path / "a", data, 2, seed=1)
    b = make_campaign(tmp_path / "b", data, 2, factor=1.3, seed=2)
    rc, out, err = run_cli(capsys, a, b, "-o", tmp_path / "out")
    assert rc == 1
    first = [line.split()[0] for line in out.splitlines() if line.split()[0] in comparison.VERDICTS]
    assert first == list(comparison.VERDICTS)     # one line per verdict, the worst first
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert "comparison.json" in names and "comparison.xml" in names
    assert "compare-pingpong.png" in names


@pytest.mark.parametrize("case, expected", [
    ("missing", "does not exist"),
    ("empty", "holds no .jsonl run file"),
    ("no-shared", "share no point"),
    ("metric", "--metric 'latencyy' is not a metric"),
    ("tolerance", "--tolerance"),
    ("incomplete", "incomplete"),
])
def test_bad_input_exits_2_and_writes_nothing(tmp_path, data, capsys, case, expected):
    a = make_campaign(tmp_path / "a", data, 1)
    b = tmp_path / "b"
    extra = []
    if case == "missing":
        b = tmp_path / "nowhere"
    elif case == "empty":
        b.mkdir()
    elif case == "no-shared":
        make_campaign(b, data, 1)
        for f in b.glob("*.jsonl"):
            f.write_text(f.read_text().replace('"size":', '"bytes":'))
    elif case == "metric":
        make_campaign(b, data, 1)
        extra = ["--metric", "latencyy"]
    elif case == "tolerance":
        make_campaign(b, data, 1)
        extra = ["--tolerance", "-3"]
    elif case == "incomplete":
        make_campaign(b, data, 1)
        (b / "campaign.json").write_text(json.dumps({"campaign": "b", "runs": [
            {"name": "pingpong-r1"}, {"name": "pingpong-r2"}]}))
    before = sorted(p for p in tmp_path.rglob("*"))
    with pytest.raises(SystemExit) if case == "tolerance" else _nothing():
        rc, out, err = run_cli(capsys, a, b, *extra, "-o", tmp_path / "out")
        assert rc == 2 and out == ""
        assert expected in err and len(err.strip().splitlines()) == 1
    if case == "tolerance":
        assert expected in capsys.readouterr().err
    assert sorted(p for p in tmp_path.rglob("*")) == before


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_a_nic_of_unknown_speed_is_named_alone():
    facts = machines.machine_facts({"machine": {"cpu": "C", "cores": 2, "numa_nodes": 1, "nics": [
        {"name": "eth0"}, {"name": "mlx5_0", "link_gbps": 12.5}]}})
    assert machines.machine_text(facts) == "C | 2 cores | 1 NUMA | eth0,mlx5_0@12.5"
    assert "eth0@None" in machines.machine_key(facts)        # the key files hold is kept
    facts["mpi"] = "Open MPI v4.1.4"
    assert machines.machine_text(facts, mpi=True).endswith("| Open MPI v4.1.4 | eth0,mlx5_0@12.5")


def test_different_machines_need_the_option(tmp_path, data, capsys):
    a = make_campaign(tmp_path / "a", data, 1)
    b = make_campaign(tmp_path / "b", data, 1, seed=3)
    for f in b.glob("*.jsonl"):
        f.write_text(f.read_text().replace("Fake CPU @ 2.5GHz", "Other CPU"))
    rc, out, err = run_cli(capsys, a, b)
    assert rc == 2 and "different machines" in err and "Other CPU" in err
    rc, out, err = run_cli(capsys, a, b, "--allow-different-machines", "--job-sd", "0.05")
    assert rc in (0, 1, 3) and "machines differ" in out


def test_statistics_against_known_values():
    assert stats.t_quantile(0.975, 4) == pytest.approx(2.7764, abs=1e-4)
    assert stats.t_quantile(0.975, math.inf) == pytest.approx(1.95996, abs=1e-5)
    assert stats.t_sf(2.0, 10) == pytest.approx(0.036694, abs=1e-6)
    rejected, adj, r = multiplicity.bh([0.01, 0.04, 0.03, 0.5], 0.05)
    assert list(rejected) == [True, False, False, False] and r == 1
    assert adj[1] == pytest.approx(0.04 * 4 / 3)
    assert stats.mad([1, 2, 3, 4, 100]) == pytest.approx(1.4826)
    z = stats.robust_z([1, 2, 3, 4, 100])
    assert z[2] == 0 and z[4] > 50
    rng = np.random.default_rng(0)   # equal variances: (almost) complete pooling
    s2 = [np.var(rng.normal(0, 0.1, 3), ddof=1) for _ in range(2000)]
    prior = stats.variance_prior(s2, [2] * 2000)
    assert prior.s2 == pytest.approx(0.01, rel=0.05) and prior.df > 30
    # variances 10^4 apart: little shrinkage (d0 well below a point's own 2)
    s2 = [np.var(rng.normal(0, rng.choice([0.003, 0.3]), 3), ddof=1) for _ in range(2000)]
    assert stats.variance_prior(s2, [2] * 2000).df < 1


def test_pingpong_runs_k_launches_k_jobs_that_compare_measures(capsys, fake_bench, tmp_path):
    """--runs 3: three launches of the same run into one campaign (NAME-r1..r3); a second
    campaign of the same command is compared with the variation between jobs measured."""
    for camp in ("a", "b"):
        rc = cli.main(["pingpong", "--sizes", "1:64", "--runs", "3", "--launcher", "",
                       "--output-dir", str(tmp_path), "--campaign", camp, "--name", "pp"])
        assert rc == 0
    assert sorted(p.name for p in (tmp_path / "a").glob("*.jsonl")) == \
        ["pp-r1.jsonl", "pp-r2.jsonl", "pp-r3.jsonl"]
    capsys.readouterr()
    rc, got = verdicts(capsys, tmp_path / "a", tmp_path / "b")
    assert got["a"]["runs"] == 3 and all(p["runs_a"] == 3 == p["runs_b"] for p in got["points"])
    assert got["jobs"].startswith("job-to-job variation measured from the runs of both sides")
