"""`jostle history`: a store of check records (bench/drift_rates.py's site, smaller) read as a
table, JSON and CSV, filtered, drawn, and as a section of the HTML report."""

import csv
import importlib.util
import io
import json
import re
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest


from conftest import run_cli as jostle

pytestmark = pytest.mark.unit

BENCH = Path(__file__).resolve().parents[2] / "bench" / "drift_rates.py"


def _bench():
    spec = importlib.util.spec_from_file_location("drift_rates", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def make_store(tmp, capsys, nodes=8, days=60, seed=3, start=None):
    """A store of NODES nodes' daily checks with the bench's three planted drifts: (db,
    planted, records)."""
    bench = _bench()
    if start is not None:
        bench.START = start
    recs, planted = bench.simulate(seed, nodes=nodes, days=days)
    bench.write_spool(recs, tmp / "spool")
    db = tmp / "store.sqlite"
    rc, _, err = jostle(capsys, "history", "add", tmp / "spool", "--db", db)
    assert rc == 0, err
    return db, planted, recs


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("history")

    class Cap:     # capsys is function-scoped: read the output here instead
        def readouterr(self):
            return type("O", (), {"out": "", "err": ""})()
    db, planted, recs = make_store(tmp, Cap())
    return tmp, db, planted, recs


def test_the_table_names_each_series_and_the_drifts(site, capsys):
    _, db, planted, _ = site
    rc, out, err = jostle(capsys, "history", "--db", db)
    assert rc == 0, err
    series, checks = out.split("\n\nchecks:\n")
    lines = series.splitlines()
    assert lines[0].split()[:4] == ["node", "class", "series", "points"]
    assert len(lines) == 1 + 8 * 6                       # one row a series
    assert len(checks.splitlines()) == 1 + 8             # and one row a node's checks
    drifts = [line for line in err.splitlines() if line.startswith("jostle: drift: ")]
    assert {(d.split()[3]) for d in drifts} == {node for node, _ in planted}
    assert any(re.search(r"triad −(9|10|11)% since", d) for d in drifts), drifts
    assert any(re.search(r"pingpong_latency at 8 B \+(1[89]|2[0-2])% since", d)
               for d in drifts), drifts
    assert any(re.search(r"triad −[0-9.]+%/week since", d) for d in drifts), drifts


def test_json_lists_campaigns_runs_and_series(site, capsys):
    _, db, planted, recs = site
    rc, out, _ = jostle(capsys, "history", "--db", db, "--format", "json")
    doc = json.loads(out)
    assert doc["schema"] == 2 and doc["campaigns"][0]["campaign"] == "checks"
    measured = [r for r in recs if r["values"]]
    assert len(doc["runs"]) == len(measured) == doc["campaigns"][0]["runs"]
    s = next(x for x in doc["series"] if x["drift"] and x["metric"] == "pingpong_latency")
    assert s["better"] == "lower" and s["unit"] == "us" and s["params"] == {"size": 8}
    assert s["values"][0]["time"] < s["values"][-1]["time"]
    assert {"time", "value", "ci95", "run", "verdict", "flagged"} <= set(s["values"][0])
    assert {d["node"] for d in doc["drifts"]} == {n for n, _ in planted}
    assert "Holm" in doc["method"]


def test_csv_has_one_row_per_value_and_filters_select(site, capsys):
    _, db, planted, recs = site
    node = sorted(n for n, m in planted if m == "triad")[0]
    rc, out, _ = jostle(capsys, "history", "--db", db, "--format", "csv", "--node", node,
                        "--metric", "triad")
    rows = list(csv.DictReader(io.StringIO(out)))
    want = [r for r in recs if r["node"] == node and r["values"]]
    assert len(rows) == len(want) and {r["metric"] for r in rows} == {"triad"}
    assert rows[0]["node"] == node and float(rows[0]["value"]) > 0
    # a pattern, and dates
    first = min(r["time"] for r in recs)[:10]
    rc, out, _ = jostle(capsys, "history", "--db", db, "--format", "csv", "--node", "cn00[0-3]",
                        "--since", first, "--until", first)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows and {r["node"] for r in rows} <= {f"cn00{i}" for i in range(4)}
    assert {r["time"][:10] for r in rows} == {first}


def test_bad_input_is_refused_in_one_line(site, capsys):
    _, db, _, _ = site
    for argv, word in ((["--since", "yesterday"], "yesterday"), (["--alpha", "2"], "(0, 1)"),
                       (["--format", "xml"], "xml"), (["--days", "0"], "0")):
        rc, _, err = jostle(capsys, "history", "--db", db, *argv)
        assert rc == 2 and word in err and err.count("\n") == 1, err


def test_days_counts_back_from_now(tmp_path, capsys):
    now = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    db, _, recs = make_store(tmp_path, capsys, nodes=3, days=20,
                             start=now - timedelta(days=19))
    rc, out, _ = jostle(capsys, "history", "--db", db, "--days", "5", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    cut = (now - timedelta(days=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert rows and all(r["time"] >= cut for r in rows)
    assert len({r["run"] for r in rows}) < len(recs) / 2


@pytest.mark.slow
@pytest.mark.pages
def test_figures_and_the_page(site, tmp_path, capsys):
    _, db, planted, _ = site
    rc, out, err = jostle(capsys, "history", "--db", db, "--figures", tmp_path / "fig",
                          "--report", tmp_path / "h.html")
    assert rc == 0, err
    pngs = sorted((tmp_path / "fig").glob("history-*.png"))
    assert len(pngs) == 6 and len(list((tmp_path / "fig").glob("*.svg"))) == 6
    page = (tmp_path / "h.html").read_text()
    assert '<section id="history">' in page and page.count("data:image/png;base64,") == 6
    assert "drift(s) found" in page and all(node in page for node, _ in planted)


@pytest.mark.slow
@pytest.mark.pages
def test_the_report_of_a_campaign_shows_its_nodes_history(tmp_path, data, capsys, monkeypatch):
    d = tmp_path / "c"
    d.mkdir()
    shutil.copy(data / "pingpong_intra.jsonl", d)
    db = tmp_path / "s.sqlite"
    assert jostle(capsys, "history", "add", d, "--db", db)[0] == 0
    # the history section draws its own figures (figures.history); the ping-pong's, which
    # nothing here reads, are not drawn
    from jostle import figures
    monkeypatch.setattr(figures, "build", lambda runs: [])
    rc, out, err = jostle(capsys, "report", d, "--history", db)
    assert rc == 0, err
    page = (d / "report.html").read_text()
    assert '<section id="history">' in page and "No drift found" in page


def test_a_size_filter_needs_no_built_bench(site, capsys, monkeypatch):
    """A store query reads its --size itself: no jostle-bench is found, none is asked."""
    _, db, _, _ = site
    monkeypatch.setenv("JOSTLE_BENCH", "/nonexistent/jostle-bench")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    rc, _, err = jostle(capsys, "history", "--db", db, "--size", "16K", "--format", "csv")
    assert rc == 0, err
    rc, _, err = jostle(capsys, "history", "--db", db, "--size", "16X")
    assert rc == 2 and "16X" in err and err.count("\n") == 1, err
