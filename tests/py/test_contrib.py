"""The operator's kit in contrib/ (issue 47): the Grafana dashboard against the fields Grafana's
dashboard JSON model needs, every metric it and the alerting rules query being one jostle
exports; the rules through Prometheus' own `promtool check rules` and `promtool test rules`
(the alerts fire on the series they are for); the SLURM wrapper's environment file; the cron
lines and the logrotate snippet."""

import json
import os
import re
import shutil
import subprocess
import textwrap

import pytest

from conftest import REPO
from conftest import run_cli as jostle
from jostle.records import store_url
from test_export_verdicts import write_checks
from test_history_cli import make_store

pytestmark = pytest.mark.unit

CONTRIB = REPO / "contrib"
DASHBOARD = CONTRIB / "grafana" / "jostle-dashboard.json"
RULES = CONTRIB / "prometheus" / "jostle-alerts.yml"
DEFAULTS = CONTRIB / "slurm" / "jostle.default"
WRAPPER = CONTRIB / "slurm" / "jostle-healthcheck"
PANEL_TYPES = {"row", "timeseries", "state-timeline", "stat", "table", "gauge", "bargauge",
               "status-history", "text"}
needs_promtool = pytest.mark.skipif(not shutil.which("promtool"), reason="promtool is not "
                                    "installed (Debian's prometheus: scripts/install-deps.sh)")


def _names(expr: str) -> set:
    return set(re.findall(r"\bjostle_[a-z0-9_]+", expr))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Every family name of an export of a store with drifts, and of checks of every verdict
    with NICs."""
    tmp = tmp_path_factory.mktemp("contrib")

    class Cap:
        def readouterr(self):
            return type("O", (), {"out": "", "err": ""})()
    db, _, _ = make_store(tmp, Cap(), nodes=6, days=45, seed=2)
    return db


@pytest.fixture
def checks(tmp_path):
    return write_checks(tmp_path / "checks")


def _families(capsys, *argv) -> set:
    rc, out, err = jostle(capsys, "export", *argv, "--format", "openmetrics")
    assert rc == 0, err
    return {m.group(1) for m in re.finditer(r"^# TYPE (\S+) ", out, re.M)}


def test_the_dashboard_has_what_grafanas_json_model_needs(exported, checks, capsys):
    d = json.loads(DASHBOARD.read_text())
    for key, kind in (("title", str), ("uid", str), ("schemaVersion", int), ("panels", list),
                      ("time", dict), ("templating", dict), ("version", int)):
        assert isinstance(d.get(key), kind), key
    assert len(d["uid"]) <= 40 and d["time"]["from"] and d["time"]["to"]
    variables = {v["name"]: v for v in d["templating"]["list"]}
    assert {"datasource", "class", "node"} <= set(variables)
    assert variables["datasource"]["type"] == "datasource"
    ids, queried = set(), set()
    for p in d["panels"]:
        assert isinstance(p["id"], int) and p["id"] not in ids, p
        ids.add(p["id"])
        assert p["type"] in PANEL_TYPES and p["title"]
        g = p["gridPos"]
        assert all(isinstance(g[k], int) for k in "hwxy") and g["x"] + g["w"] <= 24
        if p["type"] == "row":
            assert p.get("repeat") in (None, *variables)
            continue
        refs = [t["refId"] for t in p["targets"]]
        assert refs and len(refs) == len(set(refs))
        for t in p["targets"]:
            queried |= _names(t["expr"])
            for var in re.findall(r"\$(\w+)", t["expr"]):
                assert var in variables, (p["title"], var)
    # per class: verdicts over time, durations against budget, values against references,
    # drifts
    titles = " ".join(p["title"] for p in d["panels"]).lower()
    for what in ("verdicts", "budget", "references", "drifts"):
        assert what in titles
    assert any(p.get("repeat") == "class" for p in d["panels"])
    # every metric it queries is one jostle exports
    have = _families(capsys, "--db", exported) | _families(capsys, checks)
    assert queried and queried <= have, queried - have


@needs_promtool
def test_promtool_passes_the_alerting_rules_and_each_names_jostles_metrics(exported, checks,
                                                                          capsys):
    r = subprocess.run(["promtool", "check", "rules", str(RULES)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    text = RULES.read_text()
    alerts = re.findall(r"- alert: (\w+)", text)
    assert {"JostleNodeUnhealthy", "JostleNoRecentCheck", "JostleDrift"} <= set(alerts)
    used = set()
    for expr in re.findall(r"expr: (.*)", text):
        used |= _names(expr)
    have = _families(capsys, "--db", exported) | _families(capsys, checks)
    assert used <= have, used - have


@needs_promtool
def test_the_alerts_fire_on_the_series_they_are_for(tmp_path):
    """promtool's rule unit tests: an unhealthy node, a node whose last check is 40 minutes
    old, a drift, and a healthy node that raises nothing."""
    tests = tmp_path / "jostle-alerts-test.yml"
    tests.write_text(textwrap.dedent(f"""\
        rule_files: [{RULES}]
        evaluation_interval: 1m
        tests:
          - interval: 1m
            input_series:
              - series: 'jostle_check_verdict{{node="c1",class="cpu"}}'
                values: '1x60'
              - series: 'jostle_check_verdict{{node="c2",class="cpu"}}'
                values: '0x60'
              - series: 'jostle_check_timestamp_seconds{{node="c3",class="cpu"}}'
                values: '0x60'
              - series: 'jostle_check_timestamp_seconds{{node="c2",class="cpu"}}'
                values: '0+60x60'
              - series: 'jostle_drift_change_ratio{{node="c4",class="cpu",series="triad",shape="step"}}'
                values: '-0.18x120'
            alert_rule_test:
              - eval_time: 15m
                alertname: JostleNodeUnhealthy
                exp_alerts:
                  - exp_labels: {{severity: warning, node: c1, class: cpu}}
                    exp_annotations:
                      summary: "jostle: node c1 (cpu) is unhealthy"
                      description: "The latest jostle check of c1 failed against its class's references; `jostle history --node c1` names the values."
              - eval_time: 40m
                alertname: JostleNoRecentCheck
                exp_alerts:
                  - exp_labels: {{severity: warning, node: c3, class: cpu}}
                    exp_annotations:
                      summary: "jostle: no check of c3 in 30 minutes"
                      description: "The latest jostle check of c3 began 40m 0s ago: the health check or the export is not running."
              - eval_time: 20m
                alertname: JostleNoRecentCheck
                exp_alerts: []
              - eval_time: 90m
                alertname: JostleDrift
                exp_alerts:
                  - exp_labels: {{severity: info, node: c4, class: cpu, series: triad,
                                  shape: step}}
                    exp_annotations:
                      summary: "jostle: triad drifted on c4"
                      description: "triad on c4 changed by 18% (step); `jostle history --node c4` shows since when."
        """))
    r = subprocess.run(["promtool", "test", "rules", str(tests)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_environment_file_sets_the_store_and_its_spool():
    r = subprocess.run(["sh", "-c", f". {DEFAULTS} && printf '%s\\n' \"$JOSTLE_DB\" "
                        "\"$JOSTLE_STORE_SPOOL\" \"$JOSTLE_SPOOL\" \"$JOSTLE_SITE\""],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    db, store_spool, spool, site = r.stdout.split("\n")[:4]
    assert db and store_url.problem(db) == "" and store_url.is_postgresql(db)
    for path in (store_spool, spool, site):
        assert path.startswith("/"), path          # nothing under slurmd's working directory
    assert store_spool != spool


def test_the_wrapper_exports_the_store_and_works_outside_slurmds_folder(tmp_path):
    """The wrapper under slurmd's conditions (no PATH, a working directory of its own), jostle
    replaced by a script that writes down its environment and folder."""
    fake = tmp_path / "fake-jostle"
    fake.write_text(f"#!/bin/sh\nenv > {tmp_path}/env\npwd > {tmp_path}/pwd\n"
                    f"echo \"$@\" > {tmp_path}/argv\n")
    fake.chmod(0o755)
    state = tmp_path / "state"
    state.mkdir()
    defaults = tmp_path / "defaults"
    defaults.write_text(f". {DEFAULTS}\nJOSTLE={fake}\nJOSTLE_STATE_DIR={state}\n"
                        f"LOG={tmp_path}/hc.log\n")
    slurmd = tmp_path / "slurmd-cwd"
    slurmd.mkdir()
    r = subprocess.run(["/bin/sh", str(WRAPPER)], cwd=slurmd, timeout=30,
                       env={"JOSTLE_DEFAULTS": str(defaults), "SLURMD_NODENAME": "n1"},
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    env = dict(line.split("=", 1) for line in (tmp_path / "env").read_text().splitlines()
               if "=" in line)
    assert env["JOSTLE_DB"] == "postgresql://jostle@db.site/jostle"
    assert env["JOSTLE_STORE_SPOOL"] == "/var/spool/jostle-store"
    assert (tmp_path / "pwd").read_text().strip() == str(state)
    assert "--record" in (tmp_path / "argv").read_text()
    assert not list(slurmd.iterdir())


def test_the_cron_lines_parse_and_retention_follows_a_successful_add():
    lines = [x for x in (CONTRIB / "cron" / "jostle").read_text().splitlines()
             if x.strip() and not x.startswith("#") and "=" not in x.split()[0]]
    assert len(lines) == 3
    for line in lines:
        f = line.split(None, 6)
        assert len(f) == 7 and f[5] == "root", line
        r = subprocess.run(["sh", "-n", "-c", f[6]], capture_output=True, text=True)
        assert r.returncode == 0, (line, r.stderr)
    prune = next(x for x in lines if "-delete" in x)
    # the records go only once `history add` said every one is in the store
    assert re.search(r"history add [^;]*&& find [^;]*check-\*\.json", prune), prune


@pytest.mark.skipif(not shutil.which("logrotate"), reason="logrotate is not installed")
def test_logrotate_reads_the_snippet(tmp_path):
    state = tmp_path / "state"
    r = subprocess.run(["logrotate", "-d", "-s", str(state),
                        str(CONTRIB / "logrotate" / "jostle")],
                       capture_output=True, text=True, timeout=30, env={**os.environ})
    assert r.returncode == 0 and "error" not in r.stderr.lower(), r.stderr
