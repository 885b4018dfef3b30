"""`jostle export`: OpenMetrics parsed by prometheus_client (its OpenMetrics parser and the
Prometheus text parser node_exporter's format follows), and HTTP JSON records posted to a
local HTTP server: retried, kept in the spool while it is down, sent when it is back."""

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from prometheus_client import parser as text_parser
from prometheus_client.openmetrics import parser as om_parser

from jostle.export import httpjson
from test_history_cli import make_store
from test_store import check_record, write_check

from conftest import run_cli as jostle

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch):
    monkeypatch.setattr(httpjson, "PAUSE_S", 0.01)


def families(text):
    om = {f.name: f for f in om_parser.text_string_to_metric_families(text)}
    prom = {f.name: f for f in text_parser.text_string_to_metric_families(text)}
    assert set(om) == set(prom)
    return om


# ---------------------------------------------------------------- OpenMetrics

def test_openmetrics_from_the_store_parses_and_names_by_prometheus_rules(tmp_path, capsys):
    db, planted, recs = make_store(tmp_path, capsys, nodes=6, days=45, seed=2)
    rc, out, err = jostle(capsys, "export", "--db", db, "--format", "openmetrics")
    assert rc == 0, err
    assert out.endswith("# EOF\n")
    fam = families(out)
    triad = fam["jostle_check_triad_bytes_per_second"]
    assert triad.type == "gauge" and triad.unit == "bytes_per_second"
    assert len(triad.samples) == 6                      # the latest of each node
    s = triad.samples[0]
    assert s.labels["class"] == "cpu" and s.labels["kernel"] == "triad" and s.value > 1e9
    lat = fam["jostle_check_pingpong_latency_seconds"]
    assert lat.samples[0].labels["size_bytes"] == "8" and lat.samples[0].value < 1e-5
    assert fam["jostle_check_healthy"].samples and \
        {x.value for x in fam["jostle_check_healthy"].samples} <= {0.0, 1.0}
    drifted = {x.labels["node"] for x in fam["jostle_drift_change_ratio"].samples}
    assert drifted == {node for node, _ in planted}
    stamp = fam["jostle_run_timestamp_seconds"].samples[0].value
    assert 1.7e9 < stamp < 2.2e9


def test_openmetrics_straight_from_a_run_file(tmp_path, data, capsys):
    out_file = tmp_path / "jostle.prom"
    rc, out, err = jostle(capsys, "export", data / "pingpong_intra.jsonl", "--format",
                          "openmetrics", "-o", out_file)
    assert rc == 0, err
    fam = families(out_file.read_text())
    lat = fam["jostle_pingpong_latency_seconds"]
    sizes = {x.labels["size_bytes"] for x in lat.samples}
    assert "8" in sizes and all(x.labels["node"] for x in lat.samples)
    assert "jostle_pingpong_bandwidth_bytes_per_second" in fam
    assert not list(tmp_path.glob(".*.tmp"))            # renamed into place


def test_label_values_are_escaped(tmp_path, capsys):
    rec = check_record(node='n"1\\x')
    write_check(tmp_path / "spool", rec)
    rc, out, _ = jostle(capsys, "export", tmp_path / "spool", "--format", "openmetrics")
    assert rc == 0
    fam = families(out)
    assert fam["jostle_check_triad_bytes_per_second"].samples[0].labels["node"] == 'n"1\\x'


# ---------------------------------------------------------------- HTTP JSON

class Collector:
    """A local HTTP endpoint: keeps what is POSTed; FAIL_FIRST requests answered 503;
    STATUS the answer to the others."""

    def __init__(self, port=0, fail_first=0, status=200):
        self.got, self.fail_first, self.status, self.seen = [], fail_first, status, 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.seen += 1
                code = 503 if outer.seen <= outer.fail_first else outer.status
                if code == 200:
                    outer.got.append(json.loads(body))
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a):
                pass
        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/jostle"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def checks(tmp_path):
    spool = tmp_path / "checks"
    write_check(spool, check_record(time="2026-11-20T10:00:00Z"))
    write_check(spool, check_record(node="c4", time="2026-11-20T10:05:00Z", triad=30.0,
                                    verdict="unhealthy", failed=True))
    return spool


def test_httpjson_posts_reframe_fields(tmp_path, checks, capsys):
    srv = Collector()
    try:
        rc, _, err = jostle(capsys, "export", checks, "--format", "httpjson", "--url", srv.url,
                            "--system", "daint", "--spool", tmp_path / "out-spool")
    finally:
        srv.stop()
    assert rc == 0 and "4 record(s) sent" in err, err       # 2 nodes x 2 numeric values
    by = {(r["hostname"], r["jostle_metric"]): r for r in srv.got}
    bad = by[("c4", "triad")]
    assert bad["check_perf_value"] == 30.0 and bad["check_perf_unit"] == "GB/s"
    assert bad["check_perf_ref"] == 40.0 and bad["check_perf_lower_thres"] == -0.1
    assert bad["check_perf_upper_thres"] is None and bad["check_perf_result"] == "fail"
    assert bad["check_result"] == "fail" and bad["check_system"] == "daint"
    assert bad["check_partition"] == "cpu" and bad["check_job_nodelist"] == ["c4"]
    assert by[("c3", "memory_latency")]["check_perf_upper_thres"] == 0.1
    assert by[("c3", "triad")]["check_perf_result"] == "pass"


def test_httpjson_retries_then_sends(tmp_path, checks, capsys):
    srv = Collector(fail_first=2)
    try:
        rc, _, err = jostle(capsys, "export", checks, "--format", "httpjson", "--url", srv.url,
                            "--spool", tmp_path / "out-spool", "--attempts", "3")
    finally:
        srv.stop()
    assert rc == 0 and len(srv.got) == 4 and srv.seen == 6, err


def test_httpjson_spools_while_down_and_sends_when_back(tmp_path, checks, capsys):
    port = free_port()
    url = f"http://127.0.0.1:{port}/jostle"
    spool = tmp_path / "out-spool"
    rc, _, err = jostle(capsys, "export", checks, "--format", "httpjson", "--url", url,
                        "--spool", spool, "--attempts", "2", "--timeout", "2")
    assert rc == 75 and "4 record(s) kept in the spool" in err, err
    assert len(httpjson.spooled(spool, url)) == 1
    # a later check while still down: joins the spool
    later = tmp_path / "later"
    write_check(later, check_record(time="2026-11-21T10:00:00Z"))
    rc, _, err = jostle(capsys, "export", later, "--format", "httpjson", "--url", url,
                        "--spool", spool, "--attempts", "1")
    assert rc == 75 and "6 record(s) kept" in err, err
    srv = Collector(port=port)
    try:
        rc, _, err = jostle(capsys, "export", later, "--format", "httpjson", "--url", url,
                            "--spool", spool)
    finally:
        srv.stop()
    # the later check's 2 records waited and are exported again: each is sent once
    assert rc == 0 and "2 record(s) sent" in err and "and 4 from the spool" in err, err
    assert len(srv.got) == 6 and httpjson.spooled(spool, url) == []
    times = [r["check_job_completion_time"] for r in srv.got]
    assert times[:4] == sorted(times[:4])            # the oldest first


def test_httpjson_a_replay_sends_each_record_once(tmp_path, checks, capsys):
    """Three exports of the same values while the endpoint is down keep one copy of each:
    the replay is 4 POSTs, not 12 (issue 47)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/jostle"
    spool = tmp_path / "out-spool"
    for _ in range(3):
        rc, _, err = jostle(capsys, "export", checks, "--format", "httpjson", "--url", url,
                            "--spool", spool, "--attempts", "1", "--timeout", "2")
        assert rc == 75 and "4 record(s) kept" in err, err
    assert len(httpjson.pending(spool, url)) == 4 and len(httpjson.spooled(spool, url)) == 1
    srv = Collector(port=port)
    try:
        rc, _, err = jostle(capsys, "export", checks, "--format", "httpjson", "--url", url,
                            "--spool", spool)
    finally:
        srv.stop()
    assert rc == 0 and "4 record(s) sent" in err and "from the spool" not in err, err
    assert httpjson.spooled(spool, url) == []
    keys = [httpjson.record_key(r) for r in srv.got]
    assert len(keys) == 4 == len(set(keys))


def test_httpjson_refused_is_an_error_not_a_spool(tmp_path, checks, capsys):
    srv = Collector(status=400)
    try:
        rc, _, err = jostle(capsys, "export", checks, "--format", "httpjson", "--url", srv.url,
                            "--spool", tmp_path / "out-spool")
    finally:
        srv.stop()
    assert rc == 1 and "HTTP 400" in err and srv.seen == 1
    assert not list((tmp_path / "out-spool").glob("*.jsonl"))


def test_httpjson_without_a_url_prints_the_records(checks, capsys):
    rc, out, _ = jostle(capsys, "export", checks, "--format", "httpjson")
    lines = [json.loads(x) for x in out.splitlines()]
    assert rc == 0 and len(lines) == 4 and lines[0]["facility"] == "jostle"


def test_export_bad_input(tmp_path, checks, capsys):
    for argv, word in ((["--format", "openmetrics", "--url", "http://x"], "--url"),
                       (["--format", "httpjson", "--url", "ftp://x"], "ftp://x"),
                       (["--format", "httpjson", "-o", tmp_path / "x.prom"], "-o")):
        rc, _, err = jostle(capsys, "export", checks, *argv)
        assert rc == 2 and word in err and err.count("\n") == 1, err
