"""The bcast benchmark: a real run (Open MPI, 4 ranks, oversubscribed), bad input, a small
simulated run under SimGrid, and the platform files.  Assertions are about structure and
delivery (--check makes every recipient verify every payload), never machine speeds."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jostle import simgrid
from jostle.errors import UsageError
from jostle.results import load_run
from mpijobs import run_bench

ROOT = Path(__file__).resolve().parents[2]
SIM_EXE = ROOT / "build/simgrid/jostle-bench"
QUICK = ["--min-reps", "5", "--max-time", "0.02", "--warmup", "1"]
ROUTINGS = {"flat", "binomial", "chain", "pipeline-chain", "pipeline-tree", "two-tree", "auto", "mpi_bcast"}


def bcast(tmp_path, *args, np=4, name="b.jsonl"):
    out = tmp_path / name
    return run_bench("bcast", *args, out=out, n=np, timeout=240), out


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


@pytest.mark.parametrize("args, named", [
    (["--routing", "flat,tree"], "'tree'"),
    (["--recipients", "4"], "4 recipients"),
    (["--recipients", "x"], "'x'"),
    (["--sizes", "12Q"], "12Q"),
])
def test_bad_input_exits_2_without_file(tmp_path, args, named):
    p, out = bcast(tmp_path, *QUICK, *args, np=4)
    assert p.returncode == 2, p.stderr
    assert named in p.stderr
    assert not out.exists() and not Path(str(out) + ".partial").exists()


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


@pytest.mark.skipif(not shutil.which("smpirun"), reason="SimGrid (smpirun) is not installed")
def test_small_simulated_sweep(tmp_path):
    if not SIM_EXE.exists():
        pytest.skip(f"{SIM_EXE} is not built (make build with smpicc installed)")
    cmd = [sys.executable, "-m", "jostle.cli", "bcast", "--simulate", "--nodes", "4,8",
           "--sizes", "8,64K", "--routing", "flat,pipeline-tree,auto,mpi_bcast",
           "--output-dir", str(tmp_path), "--campaign", "sim", "--quiet"]
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
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
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0 and "already complete" in p.stderr
    from jostle.figures import bcast as fb
    runs = [load_run(tmp_path / "sim" / f"bcast-sim-{n}.jsonl") for n in (4, 8)]
    assert "bcast-vs-nodes" in [f.id for f in fb.build(runs)]
    assert fb.tables(runs)[0]["rows"]
