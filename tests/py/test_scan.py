"""`jostle scan` without hosts: its judgement (robust z, a node named for its links), its
input checks (exit 2, nothing written), the plan and time bound, the simulated platform with
faults, and a small simulated scan under SimGrid (skipped without smpirun or the build)."""

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from conftest import REPO
from jostle import cli, scan, simgrid
from jostle.errors import UsageError

SIM_BENCH = REPO / "build" / "simgrid" / "jostle-bench"


def test_score_flags_the_outlier_on_its_worse_side_only():
    bw = np.array([100, 104, 97, 101, 99, 103, 30.0])
    z, flagged = scan.score(bw, worse=-1, threshold=3.5, min_effect=0.25)
    assert flagged.tolist() == [False] * 6 + [True]
    assert z[-1] > 3.5
    # the same node much faster is not a suspect: lower is not worse for a bandwidth
    z, flagged = scan.score(np.array([100, 104, 97, 101, 99, 103, 300.0]), -1, 3.5, 0.25)
    assert not flagged.any() and z[-1] < 0


def test_min_effect_keeps_a_tight_allocation_quiet():
    lat = np.array([1.00, 1.001, 0.999, 1.0, 1.06])   # 6%: a large z, a small effect
    _, flagged = scan.score(lat, worse=+1, threshold=3.5, min_effect=0.25)
    assert not flagged.any()
    _, flagged = scan.score(lat, worse=+1, threshold=3.5, min_effect=0.05)
    assert flagged.tolist() == [False] * 4 + [True]


def _links(hosts, slow_src=None, factor=0.1):
    rows = []
    for i, a in enumerate(hosts):
        for j, b in enumerate(hosts):
            if a != b:
                bw = 1000.0 * (1 + 0.02 * ((i + 2 * j) % 3)) * (factor if a == slow_src else 1)
                rows.append({"src": a, "dst": b, "latency": 5.0 + 0.1 * ((i + j) % 2),
                             "bandwidth": bw})
    return pd.DataFrame(rows)


def test_a_node_whose_every_link_out_is_slow_is_named_as_the_node():
    hosts = [f"n{i}" for i in range(6)]
    links, nodes, found = scan.judge_links(_links(hosts, "n3"), hosts, "r.jsonl", 3.5, 0.25)
    assert list(nodes) == ["n3"] and found == []
    assert nodes["n3"][0]["metric"] == "links_out_bandwidth"
    assert links.bandwidth_flag.sum() == 5


def test_one_slow_link_is_named_as_the_link():
    hosts = [f"n{i}" for i in range(5)]
    df = _links(hosts)
    df.loc[(df.src == "n1") & (df.dst == "n4"), "bandwidth"] = 200.0
    _, nodes, found = scan.judge_links(df, hosts, "r.jsonl", 3.5, 0.25)
    assert nodes == {} and [f.where for f in found] == ["n1->n4"]


def test_suspects_rank_unreachable_first_and_drain_lines_name_nodes_only():
    node_ev = {"n2": [{"metric": "triad", "z": 6.0}], "n5": [{"metric": "triad", "z": 9.0}]}
    link = scan.Finding("link", "n1->n4", [{"metric": "bandwidth", "z": 20.0}], 20.0)
    ranked = scan.rank({"n7": ("no answer before the time-out", "x.partial")}, node_ev, [link])
    assert [s.where for s in ranked] == ["n7", "n1->n4", "n5", "n2"]
    lines = scan.drain_lines(ranked)
    assert [ln.split()[2] for ln in lines] == ["NodeName=n7", "NodeName=n5", "NodeName=n2"]
    assert all(ln.startswith("scontrol update") and "State=DRAIN" in ln for ln in lines)


def test_inject_parsing():
    assert scan.parse_inject("link:3:bandwidth=0.25", 8) == (3, "bandwidth", 0.25)
    for bad, word in (("link:8:bandwidth=0.5", "does not exist"), ("link:1:jitter=2", "unknown kind"),
                      ("link:1:latency=0", "factor"), ("node:1:latency=2", "expected")):
        with pytest.raises(UsageError, match=word):
            scan.parse_inject(bad, 8)


def test_platform_with_a_faulty_link():
    xml = simgrid.platform_xml(4, 1.25e9, 1e-6, 1e9, links={2: (1.25e8, 1e-6), 3: (1.25e9, 5e-6)})
    assert xml.count("<host ") == 4 and 'routing="Cluster"' in xml
    assert '<link id="node-2_link" bandwidth="125000000Bps" latency="1e-06s"' in xml
    assert '<link id="node-3_link" bandwidth="1250000000Bps" latency="5e-06s"' in xml
    assert "<cluster" in simgrid.platform_xml(4, 1.25e9, 1e-6, 1e9)   # no fault: as before


@pytest.mark.parametrize("argv, word", [
    (["--hosts", "localhost"], "'localhost'"),
    (["--hosts", "localhost,no-such-host.invalid"], "'no-such-host.invalid'"),
    (["--hosts", "localhost,127.0.0.1,localhost"], "'localhost'"),
    (["--hosts", "localhost,127.0.0.1", "--threshold", "0"], "'0'"),
    (["--hosts", "localhost,127.0.0.1", "--threshold", "-1"], "'-1'"),
    (["--simulate", "--nodes", "8", "--inject", "link:8:bandwidth=0.5"], "link:8:bandwidth=0.5"),
    (["--simulate", "--nodes", "8", "--inject", "link:2:jitter=0.5"], "jitter"),
])
def test_bad_input_exits_2_naming_the_value_and_writes_nothing(tmp_path, capsys, monkeypatch, argv, word):
    monkeypatch.delenv("SLURM_JOB_NODELIST", raising=False)
    out = tmp_path / "out"
    drain = tmp_path / "drain.sh"
    with pytest.raises(SystemExit) as e:
        rc = cli.main(["scan", *argv, "--output-dir", str(out), "--drain-script", str(drain)])
        raise SystemExit(rc)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert word in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists() and not drain.exists()


def test_dry_run_prints_the_plan_and_the_time_bound(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_NODELIST", raising=False)
    assert cli.main(["scan", "--dry-run", "--nodes", "16", "--budget", "30", "--round-time", "2",
                     "--output-dir", str(tmp_path), "--launcher", "mpirun -np {np} --host {hosts}"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == 16 * 2 + 1   # two fingerprint runs per node, one link run
    assert "--host node-3:2" in lines[6] and "-np 16 --host node-0,node-1," in lines[-1]
    assert "16 nodes" in err and "15 rounds × 2 s" in err and "fingerprint ≤ 30 s" in err
    assert not (tmp_path / "scan").exists()


@pytest.mark.skipif(not (shutil.which("smpirun") and SIM_BENCH.exists()),
                    reason="needs smpirun and build/simgrid/jostle-bench")
def test_simulated_scan_names_exactly_the_injected_links(tmp_path, capsys):
    rc = cli.main(["scan", "--simulate", "--nodes", "8", "--inject", "link:2:bandwidth=0.3",
                   "--inject", "link:6:latency=10", "--output-dir", str(tmp_path),
                   "--format", "json", "--drain-script", str(tmp_path / "drain.sh")])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 1
    assert sorted(s["node"] for s in doc["suspects"]) == ["node-2", "node-6"]
    assert all(s["kind"] == "node" for s in doc["suspects"])
    assert len(doc["links"]) == 56
    assert "NodeName=node-2" in (tmp_path / "drain.sh").read_text()
    assert all(p.endswith(".png") and (tmp_path / p).exists() or True for p in doc["figures"])
    # resumed: the complete run is kept, the same suspects come out
    assert cli.main(["scan", "--simulate", "--nodes", "8", "--inject", "link:2:bandwidth=0.3",
                     "--inject", "link:6:latency=10", "--output-dir", str(tmp_path)]) == 1
    assert "already complete" in capsys.readouterr().err
