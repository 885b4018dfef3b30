"""The bcast benchmark: a real run (Open MPI, 4 ranks, oversubscribed), bad input, a small
simulated run under SimGrid, and the platform files.  Assertions are about structure and
delivery (--check makes every recipient verify every payload), never machine speeds."""
import re
import subprocess
from pathlib import Path

import pytest

from jostle.run import simgrid
from jostle.errors import UsageError
from jostle.records.results import load_run
from mpijobs import run_bench, validate

pytestmark = pytest.mark.mpi
QUICK = ["--min-reps", "5", "--max-time", "0.02", "--warmup", "1"]
ROUTINGS = {"flat", "binomial", "chain", "pipeline-chain", "pipeline-tree", "two-tree",
            "knomial-4", "knomial-8", "knomial-16", "scatter-allgather", "auto", "mpi_bcast"}


def bcast(tmp_path, *args, np=4, name="b.jsonl", flavor="openmpi"):
    out = tmp_path / name
    return run_bench("bcast", *args, out=out, n=np, flavor=flavor, timeout=240), out


@pytest.mark.slow
def test_every_routing_delivers_and_records(tmp_path):
    # 64K + 1 byte: not inline, several segments with a 16K segment, a last short one.
    p, out = bcast(tmp_path, *QUICK, "--sizes", "0,8,65537", "--recipients", "1,3",
                   "--segment", "16K", "--check")
    assert p.returncode == 0, p.stderr
    r = load_run(out)
    df = r.points
    assert set(df["routing"]) == ROUTINGS
    assert set(df["metric"]) == {"time", "bandwidth"}
    assert sorted(df["size"].unique()) == [0, 8, 65537]
    assert sorted(df["recipients"].unique()) == [1, 3]
    assert len(df) == len(ROUTINGS) * 3 * 2 * 2          # routings x sizes x k x metrics
    t = df[df["metric"] == "time"]
    assert (t["median"] > 0).all() and (t["unit"] == "us").all()
    auto = t[t["routing"] == "auto"]
    assert set(auto["chosen"]) <= ROUTINGS - {"auto", "mpi_bcast", "chain"}
    assert (t[t["routing"] == "pipeline-chain"]["segment"] == 16384).all()
    b = r.meta["bcast"]
    assert b["root"] == 0 and not b["simulated"] and b["progress_mode"] in ("thread", "poll")
    assert b["clock"]["method"].startswith("one host")
    assert r.meta["options"]["check"] is True or "check" in r.meta["options"]


def test_poll_mode_and_spread_recipients(tmp_path):
    p, out = bcast(tmp_path, *QUICK, "--sizes", "4K", "--recipients", "2", "--routing",
                   "chain,pipeline-tree", "--progress-mode", "poll", "--check", np=4)
    assert p.returncode == 0, p.stderr
    r = load_run(out)
    assert r.meta["bcast"]["progress_mode"] == "poll"
    assert set(r.points["routing"]) == {"chain", "pipeline-tree"}


# Refused before MPI starts: judged through --validate (no launch), with both builds.
@pytest.mark.unit
@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
@pytest.mark.parametrize("args, named", [
    (["--routing", "flat,tree"], "'tree'"),
    (["--sizes", "12Q"], "12Q"),
])
def test_bad_input_exits_2_without_file(tmp_path, flavor, args, named):
    out = tmp_path / "b.jsonl"
    p = validate("bcast", *QUICK, *args, "--output", out, flavor=flavor)
    assert p.returncode == 2, p.stderr
    assert named in p.stderr
    assert not out.exists() and not Path(str(out) + ".partial").exists()


# Refused once the ranks are known (bcast reads --recipients against the job's ranks): real
# launches, one with each library.
@pytest.mark.parametrize("args, named, flavor", [
    (["--recipients", "4"], "4 recipients", "openmpi"),
    (["--recipients", "4"], "4 recipients", "mpich"),
    (["--recipients", "x"], "'x'", "openmpi"),
])
def test_bad_input_for_the_ranks_exits_2_without_file(tmp_path, args, named, flavor):
    p, out = bcast(tmp_path, *QUICK, *args, np=4, flavor=flavor)
    assert p.returncode == 2, p.stderr
    assert named in p.stderr
    assert not out.exists() and not Path(str(out) + ".partial").exists()


@pytest.mark.unit
def test_cli_bad_input(tmp_path, capsys):
    from jostle.cli import main
    with pytest.raises(SystemExit) as e:
        main(["bcast", "--routing", "star"])
    assert e.value.code == 2 and "'star'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["bcast", "--recipients", "0"])
    assert e.value.code == 2
    assert main(["bcast", "--simulate", "--nodes", "4:1x", "--output-dir", str(tmp_path)]) == 2
    assert "'4:1x'" in capsys.readouterr().err
    assert main(["bcast", "--simulate", "--bandwidth", "fast", "--output-dir", str(tmp_path)]) == 2
    assert "'fast'" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


@pytest.mark.unit
def test_platform_generation(tmp_path):
    assert simgrid.parse_bandwidth("10Gbps") == pytest.approx(1.25e9)
    assert simgrid.parse_bandwidth("1.25GBps") == pytest.approx(1.25e9)
    assert simgrid.parse_latency("1us") == pytest.approx(1e-6)
    assert simgrid.parse_latency("500ns") == pytest.approx(5e-7)
    assert simgrid.parse_speed("1Gf") == pytest.approx(1e9)
    assert simgrid.parse_nodes("4:256") == [4, 8, 16, 32, 64, 128, 256]
    assert simgrid.parse_nodes("4,100,4") == [4, 100]
    for bad in ("1", "8:4", "a", ""):
        with pytest.raises(UsageError):
            simgrid.parse_nodes(bad)
    with pytest.raises(UsageError):
        simgrid.parse_latency("1 parsec")
    plat, hosts = simgrid.write_platform(tmp_path, 16, 1.25e9, 1e-6, 1e9)
    xml = plat.read_text()
    assert '<platform version="4.1">' in xml and 'radical="0-15"' in xml
    assert 'bw="1250000000Bps"' in xml and 'lat="1e-06s"' in xml and 'speed="1000000000f"' in xml
    assert hosts.read_text().splitlines() == [f"node-{i}" for i in range(16)]
    import xml.dom.minidom
    xml.dom.minidom.parseString(plat.read_text())  # well formed


@pytest.mark.slow
def test_small_simulated_sweep(tmp_path, jostle_cli, built):
    built("simgrid")
    cmd = ["bcast", "--simulate", "--nodes", "4,8", "--sizes", "8,64K", "--routing",
           "flat,pipeline-tree,auto,mpi_bcast", "--output-dir", tmp_path, "--campaign", "sim",
           "--quiet"]
    p = jostle_cli(*cmd)
    assert p.returncode == 0, p.stderr
    for n in (4, 8):
        r = load_run(tmp_path / "sim" / f"bcast-sim-{n}.jsonl")
        assert r.meta["bcast"]["simulated"] and r.meta["mpi"]["ranks"] == n
        t = r.points[r.points["metric"] == "time"]
        assert set(t["routing"]) == {"flat", "pipeline-tree", "auto", "mpi_bcast"}
        assert (t["recipients"] == n - 1).all() and (t["median"] > 0).all()
        # Simulated time does not depend on this machine's load: samples of a point differ
        # only by where the simulated polling loops stand (SimGrid grows the cost of
        # repeated failed MPI_Iprobe/MPI_Test), a few percent.
        assert ((t["max"] - t["min"]) <= 0.1 * t["median"] + 1e-3).all()
    assert (tmp_path / "sim" / "platforms" / "platform-8.xml").exists()
    # Resumed: nothing left to run.
    p = jostle_cli(*cmd)
    assert p.returncode == 0 and "already complete" in p.stderr
    from jostle.figures import bcast as fb
    runs = [load_run(tmp_path / "sim" / f"bcast-sim-{n}.jsonl") for n in (4, 8)]
    assert "bcast-vs-nodes" in [f.id for f in fb.build(runs)]
    assert fb.tables(runs)[0]["rows"]
    # Side by side (--jobs 2): the same simulated times, to the last digit.
    side = [*cmd[:cmd.index("--campaign")], "--campaign", "side", "--quiet", "--jobs", "2"]
    p = jostle_cli(*side)
    assert p.returncode == 0, p.stderr
    for n in (4, 8):
        one, two = (load_run(tmp_path / c / f"bcast-sim-{n}.jsonl").points for c in ("sim", "side"))
        key = ["metric", "routing", "size", "recipients"]
        assert one.sort_values(key)["median"].tolist() == two.sort_values(key)["median"].tolist()


def test_nodes_that_differ_under_noise(tmp_path, jostle_cli, built):
    """--noise 0.2 --seed S: each node's link its own (drawn once from S), runs and platforms
    named by the spread and the seed; a flat broadcast waits for the slowest node's link, so
    its time moves off the identical nodes' and depends on the seed."""
    built("simgrid")
    base = ["bcast", "--simulate", "--nodes", "8", "--sizes", "1M", "--routing", "flat",
            "--output-dir", tmp_path, "--campaign", "n", "--quiet"]
    for more in ([], ["--noise", "0.2", "--seed", "1"], ["--noise", "0.2", "--seed", "2"]):
        p = jostle_cli(*base, *more)
        assert p.returncode == 0, p.stderr
    times = {}
    for name in ("bcast-sim-8", "bcast-sim-8-noise0.2-seed1", "bcast-sim-8-noise0.2-seed2"):
        t = load_run(tmp_path / "n" / f"{name}.jsonl").points
        times[name] = float(t[t["metric"] == "time"]["median"].iloc[0])
    plat = (tmp_path / "n" / "platforms" / "platform-8-noise0.2-seed1.xml").read_text()
    assert "each node its own" in plat and len(set(
        re.findall(r'_link" bandwidth="([^"]+)"', plat))) == 8
    same, one, two = times.values()
    assert one != same and two != same and one != two, times
    p = jostle_cli("bcast", "--noise", "0.1")           # a platform's option, without --simulate
    assert p.returncode == 2 and "--noise is only used with --simulate" in p.stderr
    p = jostle_cli(*base, "--noise", "-1")
    assert p.returncode == 2 and "'-1' is not allowed" in p.stderr


# ---- smpi:<algorithm> baselines (SimGrid's MPI_Bcast algorithms) -------------------------

@pytest.mark.unit
def test_smpi_routing_names_and_groups():
    from jostle.commands.bcast import routing_list
    from jostle.studies.bcast import split_smpi
    assert routing_list("auto, smpi:ompi") == "auto,smpi:ompi"
    assert split_smpi("auto,smpi:ompi,mpi_bcast,smpi:ompi") == ("auto,mpi_bcast", ["ompi"])
    ours, algs = split_smpi("smpi:all,smpi:SMP_linear")
    assert ours == "" and algs == [*simgrid.SMPI_BCAST_ALL, "SMP_linear"]
    # smpi:all leaves out default (= binomial_tree = mpi_bcast), automatic and the deadlocks
    assert {"binomial_tree", "scatter_LR_allgather", "ompi", "mpich"} <= set(algs)
    assert not {"default", "automatic", "SMP_linear"} & set(simgrid.SMPI_BCAST_ALL)
    assert set(simgrid.SMPI_BCAST_NOT_IN_ALL) <= set(simgrid.SMPI_BCAST)


@pytest.mark.unit
@pytest.mark.parametrize("argv, named", [
    (["--simulate", "--routing", "auto,smpi:nope"], "'smpi:nope'"),
    (["--simulate", "--routing", "auto,smpi:"], "'smpi:'"),
    (["--simulate", "--routing", "tree"], "'tree'"),
])
def test_cli_bad_routing_exits_2_one_line(tmp_path, capsys, argv, named):
    from jostle.cli import main
    with pytest.raises(SystemExit) as e:
        main(["bcast", *argv, "--output-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert e.value.code == 2 and named in err and len(err.strip().splitlines()) == 1
    if "smpi:" in named:   # the allowed ones are listed
        assert "smpi:all" in err and "scatter_LR_allgather" in err and "mvapich2" in err
    assert not any(tmp_path.iterdir())


@pytest.mark.unit
@pytest.mark.parametrize("argv, named", [
    (["--routing", "auto,smpi:ompi"], "smpi:ompi"),                      # real ranks
    (["--sizes", "8,64K", "--segment", "1M"], "'1M'"),
    (["--simulate", "--nodes", "4", "--sizes", "8,1K", "--segment", "64K"], "'64K'"),
])
def test_cli_refuses_before_launching(tmp_path, capsys, argv, named):
    from jostle.cli import main
    assert main(["bcast", *argv, "--output-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert named in err and len(err.strip().splitlines()) == 1, err
    assert not any(tmp_path.iterdir())


@pytest.mark.unit
@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_bench_refuses_smpi_on_real_ranks_and_large_segment(tmp_path, flavor):
    """Refused before MPI starts (--validate: no launch) by the builds of real ranks."""
    out = tmp_path / "b.jsonl"
    p = validate("bcast", *QUICK, "--routing", "smpi:binomial_tree", flavor=flavor)
    assert p.returncode == 2 and "'smpi:binomial_tree'" in p.stderr, p.stderr
    p = validate("bcast", *QUICK, "--sizes", "8,1K", "--segment", "4K", "--output", out,
                 flavor=flavor)
    assert p.returncode == 2 and "--segment '4K'" in p.stderr, p.stderr
    assert not out.exists()


def _smpirun(sim_exe, tmp_path, n, *args, cfg=()):
    plat, hosts = simgrid.write_platform(tmp_path, n, 1.25e9, 1e-6, 1e9)
    cmd = ["smpirun", "-np", str(n), "-platform", str(plat), "-hostfile", str(hosts),
           *simgrid.smpi_flags(), *(f"--cfg={c}" for c in cfg), "--log=root.thresh:warning",
           str(sim_exe), "bcast", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_smpi_algorithms_are_simgrids_own(tmp_path, built):
    """The list jostle offers is the one the installed SimGrid prints for an unknown name."""
    sim_exe = built("simgrid")
    p = _smpirun(sim_exe, tmp_path, 2, "--sizes", "8", cfg=["smpi/bcast:jostle-none"])
    assert p.returncode != 0
    line = next(x for x in p.stderr.splitlines() if "Valid algorithms:" in x)
    offered = [a.strip(" .") for a in line.split("Valid algorithms:")[1].split(",")]
    assert offered == list(simgrid.SMPI_BCAST)
    # jostle-bench itself: one smpi:ALG per launch, never beside mpi_bcast (the same MPI_Bcast)
    p = _smpirun(sim_exe, tmp_path, 2, "--sizes", "8", "--routing", "mpi_bcast,smpi:flattree")
    assert p.returncode == 2 and "smpi:flattree" in p.stderr, p.stderr


@pytest.mark.slow
def test_smpi_baselines_simulated(tmp_path, jostle_cli, built):
    """One launch per algorithm; smpi:binomial_tree is SMPI's default MPI_Bcast (the same times
    as mpi_bcast), and the algorithms differ where they should: flat is fastest at 8 B, the
    scatter-allgather beats the binomial tree of whole messages at 1 MiB."""
    built("simgrid")
    p = jostle_cli("bcast", "--simulate", "--nodes", "8", "--sizes", "8,1M", "--routing",
                   "auto,mpi_bcast,smpi:binomial_tree,smpi:scatter_LR_allgather,smpi:flattree",
                   "--output-dir", tmp_path, "--campaign", "sim", "--quiet")
    assert p.returncode == 0, p.stderr
    runs = {f.stem: load_run(f) for f in (tmp_path / "sim").glob("bcast-sim-8*.jsonl")}
    assert set(runs) == {"bcast-sim-8", "bcast-sim-8-smpi-binomial_tree",
                         "bcast-sim-8-smpi-scatter_LR_allgather", "bcast-sim-8-smpi-flattree"}
    assert "--cfg=smpi/bcast:flattree" in runs["bcast-sim-8-smpi-flattree"].meta["launch_line"]
    t = {}
    for r in runs.values():
        d = r.points[r.points["metric"] == "time"]
        for routing, size, med in zip(d["routing"], d["size"], d["median"]):
            t[routing, size] = med
    assert set(t) == {(r, s) for r in ("auto", "mpi_bcast", "smpi:binomial_tree",
                                       "smpi:scatter_LR_allgather", "smpi:flattree")
                      for s in (8, 1 << 20)}
    for s in (8, 1 << 20):
        assert t["smpi:binomial_tree", s] == pytest.approx(t["mpi_bcast", s], rel=1e-3)
    assert t["smpi:flattree", 8] < 0.7 * t["smpi:binomial_tree", 8]
    assert t["smpi:scatter_LR_allgather", 1 << 20] < 0.8 * t["smpi:binomial_tree", 1 << 20]
    assert t["smpi:scatter_LR_allgather", 8] > t["smpi:binomial_tree", 8]
    # The figure: one panel per node count with the bound; the table names the best smpi:*.
    from jostle.figures import bcast as fb
    figs = {f.id: f for f in fb.build(list(runs.values()))}
    assert "bcast-sim-size" in figs and "m/β" in figs["bcast-sim-size"].caption
    labels = [t.get_text() for t in figs["bcast-sim-size"].fig.legends[0].get_texts()]
    assert any(lab.startswith("bound") for lab in labels)
    assert any("best smpi:*" in lab for lab in labels) and "auto" in labels
    rows = {r[1]: r for r in fb.tables(list(runs.values()))[0]["rows"]}
    assert rows["1M"][9].startswith("scatter_LR_allgather") and rows["8"][9].startswith("flattree")
    # bound at 1 MiB, 8 nodes: m/β + 3 α with β = 1.25 GB/s, α = 2 µs (two 1 µs links)
    assert fb.bound_us(1 << 20, 8, 2e-6, 1.25e9) == pytest.approx(838.8608 + 6)
