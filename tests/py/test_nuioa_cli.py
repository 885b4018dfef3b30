"""`jostle nuioa`: the plan on the fake machines (multi-node logic), the refusals, and its
figures and report table on hand-made run files (no MPI needed)."""

import json

import pytest

from conftest import REPO
from fake_bench import _dist, meta
from jostle import report
from jostle.cli import main
from jostle.studies import nuioa
from jostle.errors import UsageError
from jostle.figures import build, close, nuioa as nuioa_figures

pytestmark = pytest.mark.unit

TOPO = REPO / "share" / "topologies"


def fake_topo(nodes, cores_per_node, nic_node=0):
    return {"machine": {"cores": nodes * cores_per_node, "numa_nodes": nodes,
                        "nics": [{"name": "ib0", "numa": nic_node}]},
            "numa_nodes": [{"index": i, "cores": list(range(i * cores_per_node,
                                                            (i + 1) * cores_per_node))}
                           for i in range(nodes)]}


def args(**kw):
    """The study's settings, one launch a run unless KW says (the plans below are about what
    each run is)."""
    base = dict(parts="placement,flows,load", sizes="8,4M", nic=None, writers=None, quick=True,
                ranks=2, hosts=None, timeout=None, runs=1)
    return nuioa.Settings(**{**base, **kw})


def _opt(run, flag):
    return run.args[run.args.index(flag) + 1] if flag in run.args else None


def test_three_launches_by_default_share_each_points_time():
    """K = 3 launches of each run by default (the launch as the unit): a ping-pong's point gets
    a third of --quick's 0.2 s and of its 20 samples (pingpong.launch_budget, no floor: a 4 MiB
    put's 20 windows outlast the 0.2 s), a load phase a third of its 0.2 s and of its samples;
    one launch keeps --quick's own numbers."""
    assert nuioa.Settings().runs == 3
    runs, _ = nuioa.plan(args(runs=nuioa.Settings().runs), fake_topo(1, 2))
    names = [r.name for r in runs]
    assert names[:3] == [f"nuioa-pp-corenear-memnear-r{k}" for k in (1, 2, 3)]
    pp = runs[0]
    assert [_opt(pp, f) for f in ("--max-time", "--min-reps", "--precision", "--max-reps")] == [
        "0.06667", "7", "0.01732", "334"]
    load = next(r for r in runs if r.benchmark == "contention")
    assert [_opt(load, f) for f in ("--phase-time", "--max-time", "--min-reps")] == [
        "0.06667", "0.06667", "7"]
    one, _ = nuioa.plan(args(), fake_topo(1, 2))
    assert [_opt(one[0], f) for f in ("--max-time", "--min-reps", "--precision")] == [
        "0.2", "20", None]
    load = next(r for r in one if r.benchmark == "contention")
    assert _opt(load, "--phase-time") == "0.2" and load.name == "nuioa-load-mem0"


def test_plan_on_eight_nodes():
    runs, notes = nuioa.plan(args(hosts=["a", "b"]), fake_topo(8, 2))
    names = [r.name for r in runs]
    assert len(names) == len(set(names))
    pp = [r for r in runs if r.name.startswith("nuioa-pp-core")]
    assert len(pp) == 4                               # near/far x near/far
    assert {tuple(r.args[r.args.index("--comm-core") + 1:r.args.index("--comm-core") + 2])
            for r in pp} == {("near",), ("far",)}
    per_node = [r for r in runs if r.name.startswith("nuioa-pp-node")]
    assert len(per_node) == 8
    assert per_node[5].args[per_node[5].args.index("--comm-mem") + 1] == "5"
    assert per_node[5].args[per_node[5].args.index("--comm-core") + 1] == "10"  # across hosts
    flows = [r for r in runs if r.name.split("-")[1] in ("stream", "put", "get")]
    assert len(flows) == 9                            # 3 modes x (nn, nf, fn)
    put_far = next(r for r in flows if r.name == "nuioa-put-initnear-targetfar")
    assert "near,far" in put_far.args and put_far.args[put_far.args.index("--mode") + 1] == "put"
    load = [r for r in runs if r.benchmark == "contention"]
    assert len(load) == 8 and all("--compute-mem" in r.args for r in load)
    assert load[3].args[load[3].args.index("--compute-mem") + 1] == "3"
    assert "4194304" in load[0].args and "together" in ",".join(load[0].args)
    assert not [n for n in notes if "NUMA" in n]


def test_plan_on_one_node_runs_near_only_and_says_so():
    runs, notes = nuioa.plan(args(), fake_topo(1, 2))
    assert not any("far" in r.name for r in runs)
    assert [r.name for r in runs if r.name.startswith("nuioa-pp-node")] == ["nuioa-pp-node0"]
    node0 = next(r for r in runs if r.name == "nuioa-pp-node0")
    assert "0,1" in node0.args                        # intra-node: two cores of the node
    assert any("one NUMA node" in n for n in notes)
    assert any("intra-node" in n for n in notes)
    load = next(r for r in runs if r.benchmark == "contention")
    assert "--oversubscribe" in load.args             # 2 cores, 2 ranks: no free core


def test_plan_refusals():
    with pytest.raises(UsageError, match="not a part"):
        nuioa.plan(args(parts="placement,bogus"), fake_topo(2, 2))
    with pytest.raises(UsageError, match="not a NIC"):
        nuioa.plan(args(nic="mlx9"), fake_topo(2, 2))


def test_cli_bad_input_exits_2(fake_bench, capsys):
    assert main(["nuioa", "--parts", "nope", "--dry-run"]) == 2


# ---------------------------------------------------------------- figures and table

def _point(params, metric, unit, median):
    return {"type": "point", "params": params, "metric": metric, "unit": unit,
            **_dist(median, 0.02, 100)}


def _write(path, bench, points):
    m = meta(["h"], numa=2)
    m["benchmark"] = bench
    lines = [m] + points + [{"type": "end", "status": "ok", "points": len(points),
                             "elapsed_s": 1.0}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


@pytest.fixture
def nuioa_dir(tmp_path):
    d = tmp_path / "nuioa"
    d.mkdir()
    for core in ("near", "far"):
        for mem in ("near", "far"):
            slow = (core == "far") + (mem == "far")
            pts = []
            for size, lat, bw in ((8, 1.0 + 0.05 * slow, 8), (4 << 20, 400.0, 1200 - 200 * slow)):
                p = {"size": size, "mode": "pingpong"}
                pts += [_point(p, "latency", "us", lat), _point(p, "bandwidth", "MB/s", bw)]
            _write(d / f"nuioa-pp-core{core}-mem{mem}.jsonl", "pingpong", pts)
    for mode in ("stream", "put", "get"):
        p = {"size": 4 << 20, "mode": mode, "window": 64}
        _write(d / f"nuioa-{mode}-sendnear-recvfar.jsonl", "pingpong",
               [_point(p, "bandwidth", "MB/s", 1000)])
    pts = []
    for phase, flow, cpu in (("compute", None, 2.7), ("comm", 1049, None), ("together", 883, 1.2)):
        p = {"phase": phase, "size": 4 << 20, "kernel": "copy", "compute_cores": 1}
        if flow:
            pts.append(_point(p, "bandwidth", "MB/s", flow))
        if cpu:
            pts.append(_point(p, "compute_bandwidth", "GB/s", cpu))
    _write(d / "nuioa-load-mem4.jsonl", "contention", pts)
    return d


def test_figures_and_load_table(nuioa_dir):
    from jostle.records.results import load
    runs = load([nuioa_dir])
    figs = build(runs)                               # the study's module draws nuioa-… runs
    try:
        assert [f.id for f in figs] == ["nuioa-placement", "nuioa-flows"]
    finally:
        close(figs)
    (t,) = nuioa_figures.tables(runs)
    (row,) = t["rows"]
    assert row[0] == "mem4"
    assert row[1] == pytest.approx(1.049) and row[2] == pytest.approx(0.883)   # GB/s, from MB/s records
    assert row[3] == pytest.approx(100 * (883 / 1049 - 1))      # −16 %, as Hagrid's CPU 2 → mem 4
    assert row[6] == pytest.approx(100 * (1.2 / 2.7 - 1))


@pytest.mark.pages
def test_report_has_the_nuioa_section(nuioa_dir, tmp_path):
    out = report.write([nuioa_dir], tmp_path / "r.html")
    page = out.read_text()
    assert 'id="nuioa-load"' in page and 'id="nuioa-placement"' in page


@pytest.mark.pages
def test_report_shows_saved_machine_picture_and_advice(nuioa_dir, tmp_path):
    topo = {"machine": {"cpu": "X", "cores": 4, "nics": [{"name": "ib0", "numa": 1,
                                                           "pci": "0000:41:00.0"}]},
            "numa_nodes": [{"index": 0, "memory_bytes": 1 << 30, "cores": [0, 1]},
                           {"index": 1, "memory_bytes": 1 << 30, "cores": [2, 3]}]}
    adv = {"why": "NUMA node 1: the node of NIC ib0", "home_numa": 1,
           "threads": [{"thread": 0, "core": 2, "numa": 1, "why": "comm thread 0"}],
           "unknown": ["which NIC the MPI library really uses"]}
    (nuioa_dir / "topo.json").write_text(json.dumps(topo))
    (nuioa_dir / "placement.json").write_text(json.dumps(adv))
    page = report.write([nuioa_dir], tmp_path / "r.html").read_text()
    assert 'id="machine-picture"' in page and "the node of NIC ib0" in page
