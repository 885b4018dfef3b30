"""Every verdict is a value (issue 47): the OpenMetrics export of a check that timed out or was
skipped carries its verdict, duration, budget, time and its NICs' states, the check before it
does not show through; no date is a label; a sweep is exported at a few named sizes by default;
and Prometheus' own `promtool check metrics` passes the export of a campaign plus checks."""

import json
import shutil
import subprocess
from datetime import datetime, timezone

import pytest
from prometheus_client.openmetrics import parser as om_parser

from conftest import run_cli as jostle
from jostle.export import latest, openmetrics
from test_store import check_record, write_check

pytestmark = pytest.mark.unit


def samples(text) -> dict:
    """{family: {node (and nic): value}} of an OpenMetrics text."""
    out = {}
    for f in om_parser.text_string_to_metric_families(text):
        for s in f.samples:
            key = s.labels.get("node", "") + (f"/{s.labels['nic']}" if "nic" in s.labels else "")
            out.setdefault(f.name, {})[key] = s.value
    return out


def nic(name, value, verdict="pass"):
    return {"name": f"nic:{name}", "value": value, "unit": "", "reference": "up 10000 Mb/s",
            "tolerance": 0.0, "worse": "lower", "change": None, "verdict": verdict,
            "note": None, "params": {"nic": name}}


@pytest.fixture
def checks(tmp_path):
    return write_checks(tmp_path / "checks")


def write_checks(spool):
    """c1 healthy then timed out; c2 skipped (busy, nothing measured); c3 unhealthy, a NIC
    down: their records in SPOOL."""
    write_check(spool, check_record(node="c1", time="2026-11-20T10:00:00Z"))
    timed_out = check_record(node="c1", time="2026-11-20T10:05:00Z", verdict="timeout",
                             exit_status=124, duration_s=30.4, unfinished=["contention"])
    for v in timed_out["values"]:
        v["value"], v["verdict"] = None, "unfinished"
    write_check(spool, timed_out)
    skipped = check_record(node="c2", time="2026-11-20T10:06:00Z", verdict="skipped",
                           exit_status=3, duration_s=0.7, values=[],
                           reason="jostle: skipped: node busy: user bob runs 2 processes")
    write_check(spool, skipped)
    bad = check_record(node="c3", time="2026-11-20T10:07:00Z", verdict="unhealthy",
                       exit_status=1)
    bad["values"] = bad["values"][:2] + [nic("eth0", "up 10000 Mb/s"),
                                         nic("ib0/1", "down", "fail")]
    write_check(spool, bad)
    return spool


def _export(capsys, *argv):
    rc, out, err = jostle(capsys, "export", *argv, "--format", "openmetrics")
    assert rc == 0, err
    return out


@pytest.mark.parametrize("source", ["paths", "store"])
def test_a_timed_out_and_a_skipped_check_carry_their_verdicts(tmp_path, checks, capsys,
                                                              source):
    if source == "store":
        db = tmp_path / "s.sqlite"
        rc, _, err = jostle(capsys, "history", "add", checks, "--db", db)
        assert rc == 0 and "4 run(s) added" in err, err
        text = _export(capsys, "--db", db)
    else:
        text = _export(capsys, checks)
    s = samples(text)
    codes = openmetrics.VERDICT_CODES
    assert s["jostle_check_verdict"] == {"c1": codes["timeout"], "c2": codes["skipped"],
                                         "c3": codes["unhealthy"]}
    # the healthy check before the timeout does not show through
    assert s["jostle_check_healthy"] == {"c1": 0.0, "c2": 0.0, "c3": 0.0}
    assert s["jostle_check_skipped"] == {"c1": 0.0, "c2": 1.0, "c3": 0.0}
    assert s["jostle_check_duration_seconds"] == {"c1": 30.4, "c2": 0.7, "c3": 11.2}
    assert s["jostle_check_budget_seconds"] == {"c1": 15.0, "c2": 15.0, "c3": 15.0}
    assert s["jostle_check_timestamp_seconds"]["c2"] == datetime(2026, 11, 20, 10, 6, tzinfo=timezone.utc).timestamp()
    assert s["jostle_check_unfinished_steps"] == {"c1": 1.0}
    assert s["jostle_check_nic_up"] == {"c3/eth0": 1.0, "c3/ib0/1": 0.0}
    assert s["jostle_check_nic_ok"] == {"c3/eth0": 1.0, "c3/ib0/1": 0.0}
    assert s["jostle_check_nic_speed_bytes_per_second"] == {"c3/eth0": 1.25e9}


def test_history_lists_timed_out_and_skipped_checks(tmp_path, checks, capsys):
    db = tmp_path / "s.sqlite"
    jostle(capsys, "history", "add", checks, "--db", db)
    rc, out, err = jostle(capsys, "history", "--db", db)
    assert rc == 0, err
    table = out[out.index("checks:"):]
    rows = {line.split()[0]: line for line in table.splitlines()[2:]}
    assert "timeout" in rows["c1"] and "1 timeout" in rows["c1"] and "1 healthy" in rows["c1"]
    assert "skipped" in rows["c2"] and "user bob" in rows["c2"]
    rc, out, _ = jostle(capsys, "history", "--db", db, "--format", "json")
    doc = json.loads(out)
    got = {(c["node"], c["verdict"]) for c in doc["checks"]}
    assert got == {("c1", "healthy"), ("c1", "timeout"), ("c2", "skipped"),
                   ("c3", "unhealthy")}
    c2 = next(c for c in doc["checks"] if c["node"] == "c2")
    assert c2["measured"] is False and c2["duration_s"] == 0.7


def test_no_date_is_a_label(tmp_path, capsys):
    from test_history_cli import make_store
    db, planted, _ = make_store(tmp_path, capsys, nodes=6, days=45, seed=2)
    s = _export(capsys, "--db", db)
    for f in om_parser.text_string_to_metric_families(s):
        for x in f.samples:
            for k, v in x.labels.items():
                assert k not in ("since", "run", "time", "date", "uid"), (f.name, k)
                assert not (len(v) >= 10 and v[4] == "-" and v[7] == "-"), (f.name, k, v)
    since = samples(s)["jostle_drift_since_timestamp_seconds"]
    assert set(since) == {node for node, _ in planted} and min(since.values()) > 1.7e9


def test_a_sweep_is_exported_at_the_named_sizes_unless_all_are_asked(tmp_path, data, capsys):
    run = data / "pingpong_intra.jsonl"
    every = {json.loads(x)["params"]["size"] for x in run.read_text().splitlines()
             if '"point"' in x}
    assert len(every) > 8

    def sizes(*argv):
        fam = {f.name: f for f in om_parser.text_string_to_metric_families(
            _export(capsys, run, *argv))}
        return {float(x.labels["size_bytes"]) for x in
                fam["jostle_pingpong_latency_seconds"].samples}
    few = sizes()
    assert few < every and few >= {8.0, 4096.0, 65536.0, 1048576.0} & every
    assert len(few - {0.0}) <= len(latest.NAMED_SIZES)
    assert sizes("--all-sizes") == every
    assert sizes("--size", "16") == {16.0}


def test_named_sizes_keep_the_nearest_of_a_sweep_without_them():
    rows = [{"node": "n", "benchmark": "b", "metric": "m", "unit": "us",
             "params": {"size": s, "mode": "x"}} for s in (3, 5, 3000, 50000, 900000, 7 << 20)]
    kept = {r["params"]["size"] for r in latest.named_sizes(rows)}
    assert kept == {5, 3000, 50000, 900000, 7 << 20}


@pytest.mark.skipif(not shutil.which("promtool"), reason="promtool is not installed "
                    "(Debian's prometheus: scripts/install-deps.sh)")
def test_promtool_passes_the_export_of_a_campaign_plus_checks(tmp_path, checks, data, capsys):
    camp = tmp_path / "results" / "main"
    camp.mkdir(parents=True)
    for n in ("pingpong_intra.jsonl", "pingpong_inter.jsonl"):
        shutil.copy(data / n, camp / n)
    db = tmp_path / "s.sqlite"
    for what in (camp, checks):
        rc, _, err = jostle(capsys, "history", "add", what, "--db", db)
        assert rc == 0, err
    for argv in (["--db", str(db)], ["--db", str(db), "--all-sizes"], [str(checks)]):
        text = _export(capsys, *argv)
        r = subprocess.run(["promtool", "check", "metrics"], input=text, text=True,
                           capture_output=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
