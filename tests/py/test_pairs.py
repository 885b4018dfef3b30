"""pingpong --pairs N and --comm-threads T (issue 27): every flow's records, osu_mbw_mr's
columns, the NIC-aware placement of each flow on multi-NUMA topologies, and bad input."""

import json
import subprocess
import sys

import pytest

from mpijobs import ENV, ROOT, built, run_bench, validate

pytestmark = pytest.mark.mpi
QUICK = ["--min-reps", "20", "--max-time", "0.05", "--warmup", "2"]
TOPOS = ROOT / "share" / "topologies"


def records(path):
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert lines[0]["type"] == "meta" and lines[-1]["type"] == "end"
    return lines[0], [x for x in lines if x["type"] == "point"], lines[-1]


def place(topology, threads):
    """What `jostle-bench --place` advises for comm threads 0..threads-1 on TOPOLOGY."""
    out = subprocess.run([built(), "--place", "--topology", str(topology), "--threads",
                          str(threads)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_pairs_aggregate_rate_and_each_pair(tmp_path, flavor):
    out = tmp_path / "p.jsonl"
    p = run_bench("pingpong", "--pairs", "2", "--mode", "stream", "--sizes", "64,4K", *QUICK,
                  out=out, n=4, flavor=flavor)
    assert p.returncode == 0, p.stderr[-2000:]
    meta, points, end = records(out)
    assert end["status"] == "ok" and meta["flows"]["pairs"] == 2 and meta["flows"]["flows"] == 2
    assert "osu_mbw_mr" in meta["flows"]["sync"]
    # every rank's communicating thread is recorded (pair i = rank i with rank i + 2)
    assert sorted(meta["binding"]) == ["0", "1", "2", "3"]
    assert all("comm" in meta["binding"][r] for r in meta["binding"])
    assert any("oversubscribed" in w for w in meta["warnings"])   # 4 ranks on this 2-core host
    for size in (64, 4096):
        at = {(x["metric"], x["params"].get("pair")): x for x in points
              if x["params"]["size"] == size}
        assert set(at) == {("bandwidth", None), ("message_rate", None), ("window_time", None),
                           ("pair_bandwidth", 0), ("pair_bandwidth", 1)}
        agg, rate = at[("bandwidth", None)], at[("message_rate", None)]
        assert agg["params"]["pairs"] == 2 and agg["params"]["window"] == 64
        # the message rate is the bandwidth over the size, sample by sample (osu_mbw_mr's)
        assert rate["median"] == pytest.approx(agg["median"] * 1e6 / size, rel=1e-6)
        # the aggregate of a sample is both pairs' bytes over their mean time: it lies
        # between the slowest pair's rate and twice the fastest's
        per = [at[("pair_bandwidth", k)] for k in (0, 1)]
        assert all(x["n"] == agg["n"] for x in per)
        assert 2 * min(x["min"] for x in per) <= agg["max"] * (1 + 1e-9)
        assert agg["min"] <= 2 * max(x["max"] for x in per) * (1 + 1e-9)


def test_format_osu_prints_osu_mbw_mr_columns(tmp_path):
    p = run_bench("pingpong", "--pairs", "1", "--mode", "stream", "--sizes", "1,8K", *QUICK,
                  "--format", "osu")
    assert p.returncode == 0, p.stderr[-2000:]
    lines = [x for x in p.stdout.splitlines() if x.strip()]
    head = [x for x in lines if x.startswith("# Size")]
    assert head and head[0].split() == ["#", "Size", "MB/s", "Messages/s"], lines
    rows = [x.split() for x in lines if not x.startswith("#")]
    assert [r[0] for r in rows] == ["1", "8192"]
    for size, mbs, rate in ((int(a), float(b), float(c)) for a, b, c in rows):
        # both printed with 2 decimals: MB/s is the rate x size / 1e6 to its last digit
        assert rate > 0 and mbs == pytest.approx(rate * size / 1e6, rel=0.01, abs=0.0051)


def test_comm_threads_records_level_threads_and_flows(tmp_path):
    out = tmp_path / "t.jsonl"
    p = run_bench("pingpong", "--comm-threads", "2", "--sizes", "8", *QUICK, out=out)
    assert p.returncode == 0, p.stderr[-2000:]
    meta, points, end = records(out)
    assert meta["mpi"]["thread_level"] == "multiple"
    assert meta["flows"]["comm_threads"] == 2 and "osu_latency_mt" in meta["flows"]["sync"]
    for r in ("0", "1"):
        assert {"comm", "comm_thread_1"} <= set(meta["binding"][r]), meta["binding"][r]
    got = {(x["metric"], x["params"].get("thread")) for x in points}
    assert got == {("latency", None), ("bandwidth", None), ("rtt", None), ("pair_latency", 0),
                   ("pair_latency", 1)}


@pytest.mark.parametrize("topo", ["opteron-8numa.xml", "opteron-2numa-nic1.xml", "henri.xml"])
def test_each_flow_placed_by_the_nic_aware_order(tmp_path, topo):
    """On a multi-NUMA machine (an XML topology: nothing is bound, the request is recorded):
    communicating thread k = local rank x threads + t gets the k-th place of `jostle place
    --comm`, the NIC's node first."""
    advice = place(TOPOS / topo, 4)
    want = [(t["core"], t["numa"]) for t in advice["threads"]]
    assert want[0][1] in advice["near_numa"]
    for args, ranks, per in ((["--pairs", "2"], 4, 1), (["--comm-threads", "2"], 2, 2)):
        out = tmp_path / f"{topo}-{ranks}.jsonl"
        p = run_bench("pingpong", *args, "--topology", str(TOPOS / topo), "--sizes", "8",
                      *QUICK, out=out, n=ranks)
        assert p.returncode == 0, p.stderr[-2000:]
        meta = records(out)[0]
        assert meta["flows"]["placement"].startswith("auto")
        for r in range(ranks):
            b = meta["binding"][str(r)]
            for t in range(per):
                got = b["comm" if t == 0 else f"comm_thread_{t}"]
                assert (got["requested_core"], got["requested_mem"]) == want[r * per + t], (r, t, b)


# Refused before MPI starts: judged through --validate (no launch), with both builds.
@pytest.mark.unit
@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
@pytest.mark.parametrize("args, named", [
    (["--pairs", "0"], "--pairs '0'"),
    (["--comm-threads", "0"], "--comm-threads '0'"),
    (["--pairs", "1", "--mode", "put"], "--pairs is not allowed with --mode put"),
    (["--comm-threads", "1", "--mode", "get"], "--comm-threads is not allowed with --mode get"),
    (["--pairs", "2", "--comm-threads", "33"], "66 flows"),
])
def test_bad_input_exits_2_naming_the_value_and_writes_nothing(tmp_path, flavor, args, named):
    p = validate("pingpong", *args, "--sizes", "8", "--output", tmp_path / "bad.jsonl",
                 flavor=flavor)
    assert p.returncode == 2, (p.returncode, p.stderr[-1000:])
    assert named in p.stderr and "Traceback" not in p.stderr
    assert len([x for x in p.stderr.splitlines() if "error:" in x]) == 1
    assert list(tmp_path.iterdir()) == []


# Refused once the ranks are known (how many pairs the job holds): real launches, each library.
@pytest.mark.parametrize("args, ranks, named, flavor", [
    (["--pairs", "2"], 2, "--pairs 2 is not allowed with 2 ranks", "openmpi"),
    (["--pairs", "2"], 2, "--pairs 2 is not allowed with 2 ranks", "mpich"),
    (["--pairs", "3"], 5, "--pairs 3 is not allowed with 5 ranks", "openmpi"),
])
def test_too_many_pairs_for_the_ranks_exits_2_and_writes_nothing(tmp_path, args, ranks, named,
                                                                  flavor):
    out = tmp_path / "bad.jsonl"
    assert validate("pingpong", *args, "--sizes", "8", flavor=flavor).returncode == 0
    p = run_bench("pingpong", *args, "--sizes", "8", out=out, n=ranks, flavor=flavor)
    assert p.returncode == 2, (p.returncode, p.stderr[-1000:])
    assert named in p.stderr and "Traceback" not in p.stderr
    assert len([x for x in p.stderr.splitlines() if "error:" in x]) == 1
    assert list(tmp_path.iterdir()) == []


def test_comm_threads_refused_where_the_library_gives_less_than_multiple(tmp_path, built):
    """SimGrid's SMPI grants MPI_THREAD_SINGLE to a request for MPI_THREAD_MULTIPLE."""
    sim_exe = built("simgrid")
    sys.path.insert(0, str(ROOT / "python"))
    from jostle.run.simgrid import platform_xml
    plat = tmp_path / "plat.xml"
    plat.write_text(platform_xml(2, 1.25e9, 1e-6, 1e9))
    out = tmp_path / "sim.jsonl"
    p = subprocess.run(["smpirun", "-np", "2", "-platform", str(plat), str(sim_exe), "pingpong",
                        "--comm-threads", "2", "--sizes", "8", "--output", str(out)], env=ENV,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2, p.stderr[-2000:]
    assert "--comm-threads 2 is not allowed" in p.stderr and "MPI_THREAD_MULTIPLE" in p.stderr
    assert "granted single" in p.stderr
    assert not out.exists() and not (tmp_path / "sim.jsonl.partial").exists()


def test_jostle_pingpong_pairs_list_one_run_each(tmp_path, jostle_cli, built):
    from jostle.records.results import load_run
    p = jostle_cli("pingpong", "--pairs", "1,2", "--mode", "stream", "--sizes", "64", *QUICK,
                   "--bench", built(), "--output-dir", str(tmp_path), "--campaign", "c",
                   "--name", "pp", "--quiet", "--runs", "1", env=ENV)
    assert p.returncode == 0, p.stderr[-2000:]
    runs = []
    for pairs in (1, 2):
        run = load_run(tmp_path / "c" / f"pp-p{pairs}-t0.jsonl")
        assert run.meta["mpi"]["ranks"] == 2 * pairs and run.meta["flows"]["pairs"] == pairs
        pts = run.points
        assert sorted(pts[pts["metric"] == "pair_bandwidth"]["pair"]) == list(range(pairs))
        runs.append(run)
    # jostle advise: the fewest ranks x threads reaching 90% of the best aggregate, alone
    from jostle.analysis.advise import talkers_advice
    [item] = talkers_advice(runs)
    num = item["numbers"]
    agg = {p: float(r.points[r.points.metric == "bandwidth"]["median"].max()) / 1e3
           for p, r in zip((1, 2), runs)}
    assert num["load"] is False and num["aggregate_GBps"] == pytest.approx(max(agg.values()))
    first = num["ranks"] // 2
    assert agg[first] >= 0.9 * max(agg.values()) and (first == 1 or agg[1] < 0.9 * agg[2])
    assert num["interval"][0][0] <= num["ranks"] and "reach 90%" in item["text"]


@pytest.mark.parametrize("args, named", [
    (["--pairs", "0"], "--pairs: '0' is not allowed"),
    (["--comm-threads", "2,2"], "--comm-threads: '2,2' is not allowed"),
    (["--pairs", "1", "--mode", "get"], "--pairs is not allowed with --mode get"),
    (["--pairs", "8", "--comm-threads", "9"], "72 flows, at most 64"),
])
@pytest.mark.unit
def test_jostle_pingpong_refuses_bad_flows(tmp_path, jostle_cli, args, named):
    p = jostle_cli("pingpong", *args, "--output-dir", str(tmp_path), "--dry-run")
    assert p.returncode == 2 and named in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert list(tmp_path.iterdir()) == []


CONT = ["--kernel", "triad", "--sizes", "4", "--phase-time", "0.1", "--array-bytes", "4M",
        "--min-reps", "20", "--max-time", "0.2", "--warmup", "2", "--oversubscribe"]


def test_contention_with_pairs_and_the_heat_map(tmp_path):
    """contention --pairs N: the phases of fig1 with every pair talking, each rank computing;
    the runs of several pair counts make the heat map communicating ranks × computing cores."""
    from jostle.figures import contention as fig
    from jostle.analysis import contention as analysis_contention
    from jostle.records.results import load_run
    runs = []
    for pairs in (1, 2):
        for cores in (0, 1):
            out = tmp_path / f"fig1-triad-p{pairs}-t0-c{cores:02d}.jsonl"
            p = run_bench("contention", "--pairs", str(pairs), "--compute-cores", str(cores),
                          *CONT, out=out, n=2 * pairs)
            assert p.returncode == 0, p.stderr[-2000:]
            runs.append(load_run(out))
    last = runs[-1]
    assert last.meta["flows"]["pairs"] == 2
    # every rank of the 2 pairs computes (compute-on both): 4 ranks with one compute thread
    assert all(len(last.meta["binding"][str(r)]["compute"]) == 1 for r in range(4))
    table = fig.talking(analysis_contention.degradation_table(runs))
    assert set(table.talking_ranks) == {2, 4}
    lat = table[(table.metric == "latency") & (table.compute_cores == 1)]
    assert len(lat) == 2 and lat.degradation.notna().all()
    figs = fig.build(runs)
    assert "contention-flows" in [f.id for f in figs]
    # jostle advise under load: together, at the most computing cores, x the flows
    from jostle.analysis.advise import talkers_advice
    [item] = talkers_advice(runs)
    assert item["numbers"]["load"] is True and set(item["numbers"]["measured"]) == {"2x1", "4x1"}
    bw = last.points[(last.points.metric == "bandwidth") & (last.points.phase == "together")]
    assert item["numbers"]["measured"]["4x1"] == pytest.approx(2 * bw["median"].max() / 1e3)
    assert any("4 ranks × 1 thread(s) talk" in s for s in table.run.map(
        {r.name: analysis_contention.series_of(r, "fig1") for r in runs}))


@pytest.mark.unit
def test_jostle_contention_plans_each_count_of_pairs(tmp_path, jostle_cli):
    p = jostle_cli("contention", "fig1", "--quick", "--pairs", "1,2", "--comm-threads", "2",
                   "--max-cores", "1", "--output-dir", str(tmp_path), "--dry-run", "--runs", "1")
    assert p.returncode == 0, p.stderr[-2000:]
    lines = [x for x in p.stdout.splitlines() if "jostle-bench contention" in x]
    assert len(lines) == 4
    assert sum("-np 4 " in x and "--pairs 2 --comm-threads 2" in x for x in lines) == 2
    assert any("fig1-triad-p2-t2-c01-quick.jsonl" in x for x in lines)
    p = jostle_cli("contention", "fig1", "--pairs", "0", "--output-dir", str(tmp_path),
                   "--dry-run")
    assert p.returncode == 2 and "--pairs: '0' is not allowed" in p.stderr
