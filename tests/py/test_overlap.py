"""Integration: jostle-bench overlap with 2 and 4 real ranks (oversubscribed on a small host),
tiny sizes; jostle place --ranks; bad input.  Assertions are about structure, the formulas
and the placement, never machine speeds."""
import json
import subprocess
from pathlib import Path

import pytest

from jostle.figures import overlap as fig
from jostle.records.results import load_run
from mpijobs import ENV, run_bench, validate

pytestmark = pytest.mark.mpi
ROOT = Path(__file__).resolve().parents[2]
QUICK = ["--min-reps", "5", "--max-time", "0.05", "--warmup", "2", "--sizes", "4,1K"]
TOPOS = ROOT / "share/topologies"


def overlap(tmp_path, *args, np=2, mpi="openmpi"):
    out = tmp_path / f"o{np}.jsonl"
    return run_bench("overlap", *args, out=out, n=np, flavor=mpi), out


def clamp(x):
    return max(0.0, min(1.0, x))


@pytest.mark.parametrize("np,mode,mpi", [(2, "none", "openmpi"), (2, "polling", "openmpi"),
                                         (4, "thread", "openmpi"), (2, "async", "mpich")])
def test_records_and_both_formulas(tmp_path, np, mode, mpi):
    p, out = overlap(tmp_path, *QUICK, "--collectives", "ialltoall,igather,isendrecv",
                     "--progress-mode", mode, "--policy", "numa", "--oversubscribe", np=np,
                     mpi=mpi)
    assert p.returncode == 0, p.stderr
    r = load_run(out)
    m = r.meta
    assert m["overlap"]["figures_show"] == "overlap_min"
    assert m["overlap"]["batch"] == 16 and "slowest rank" in m["overlap"]["sample"]
    assert "min(t_pure, t_cpu)" in m["overlap"]["overlap_min"]
    assert "max(t_pure, t_cpu)" in m["overlap"]["overlap_max"]
    assert m["kernel"]["name"] == "cpu" and m["kernel"]["unit_s"] > 0
    assert len(m["placement"]["planned"]) == np
    assert set(m["binding"]) == {str(k) for k in range(np)}
    if mode == "async":   # MPICH's own thread, asked for before MPI_Init
        assert "MPICH" in m["mpi"]["library"] and "MPIR_CVAR_ASYNC_PROGRESS=1" in \
            m["overlap"]["library_progress"] and m["mpi"]["thread_level"] == "multiple"
    if mode == "thread":
        assert m["mpi"]["thread_level"] == "multiple"
        assert m["overlap"]["thread_idle"] == "spin"
        assert all("progress" in m["binding"][str(k)] for k in range(np))
    cores = m["machine"]["cores"]
    if np > cores:
        assert any("oversubscribed" in w for w in m["warnings"])
    df = r.points
    assert set(df.collective) == {"ialltoall", "igather", "isendrecv"}
    for _, g in df.groupby(["collective", "size"]):
        v = g.set_index("metric")["median"]
        assert set(v.index) == {"t_pure", "t_cpu", "t_ovrl", "overlap_min", "overlap_max"}
        pure, cpu, ovrl = v["t_pure"], v["t_cpu"], v["t_ovrl"]
        # The ratios are the formulas applied to the medians, to the record's precision.
        assert v["overlap_min"] == pytest.approx(clamp((pure + cpu - ovrl) / min(pure, cpu)),
                                                 abs=1e-6)
        assert v["overlap_max"] == pytest.approx(clamp((pure + cpu - ovrl) / max(pure, cpu)),
                                                 abs=1e-6)
        assert v["overlap_max"] <= v["overlap_min"] + 1e-9
    assert fig.build([r]) and fig.tables([r])[0]["rows"]


@pytest.mark.parametrize("args,rank_core,thread_core", [
    (["--thread-core", "1"], None, 1),                          # explicit core
    (["--comm-core", "1", "--thread-core", "bind"], 1, 1),      # bind follows the moved rank
])
def test_progress_thread_core_obtained(tmp_path, args, rank_core, thread_core):
    p, out = overlap(tmp_path, *QUICK, "--collectives", "ialltoall", "--progress-mode", "thread",
                     "--oversubscribe", *args)
    assert p.returncode == 0, p.stderr
    m = load_run(out).meta
    b = m["binding"]["0"]
    assert b["progress"]["core"] == thread_core
    if rank_core is not None:
        assert b["comm"]["core"] == rank_core
    assert "see binding" in m["placement"]["planned"]


def test_barrier_before_every_sample(tmp_path):
    p, out = overlap(tmp_path, *QUICK, "--batch", "1", "--collectives", "ibcast")
    assert p.returncode == 0, p.stderr
    r = load_run(out)
    assert r.meta["overlap"]["batch"] == 1
    n = r.points.set_index("metric").loc["t_pure", "n"]
    assert (n >= 5).all()


# Refused before MPI starts: judged through --validate (no launch), with both builds.
@pytest.mark.unit
@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
@pytest.mark.parametrize("args,text", [
    (["--collectives", "ialltoal"], "'ialltoal' is not one of"),
    (["--policy", "spread"], "--policy 'spread' is not allowed"),
    (["--progress-mode", "often"], "progress-mode"),
    (["--thread-core", "99999"], "--thread-core '99999' is not allowed"),
    (["--batch", "0"], "--batch '0' is not allowed"),
    (["--thread-idle", "doze"], "thread-idle"),
    (["--progress-mode", "async"], "--progress-mode async is MPICH's own progress thread"),
])
def test_bad_input_exits_2(tmp_path, flavor, args, text):
    out = tmp_path / "o.jsonl"
    p = validate("overlap", *QUICK, *args, "--output", out, flavor=flavor)
    if "async" in args and flavor == "mpich":
        assert p.returncode == 0, p.stderr  # MPICH's own progress thread: allowed there
        return
    assert p.returncode == 2, p.stderr
    assert text in p.stderr and not out.exists()


# Refused once the ranks are known (the root among them, a size per rank, where the threads
# go): real launches; one case with each library.
@pytest.mark.parametrize("args,text,mpi", [
    (["--root", "7"], "--root 7 is not allowed", "openmpi"),
    (["--root", "7"], "--root 7 is not allowed", "mpich"),
    (["--collectives", "ireduce", "--sizes", "2,8"], "2 B is not allowed with ireduce",
     "openmpi"),
    (["--progress-mode", "thread", "--comm-core", "1"], "--thread-core numa is not allowed with",
     "openmpi"),
])
def test_bad_input_for_the_ranks_exits_2(tmp_path, args, text, mpi):
    assert validate("overlap", *QUICK, *args, flavor=mpi).returncode == 0
    p, out = overlap(tmp_path, *QUICK, *args, mpi=mpi)
    assert p.returncode == 2, p.stderr
    assert text in p.stderr and not out.exists()


def test_more_ranks_than_cores_needs_oversubscribe(tmp_path, built):
    cores = json.loads(subprocess.run([built(), "--machine"], capture_output=True,
                                      text=True).stdout)["cores"]
    p, out = overlap(tmp_path, *QUICK, np=cores + 1)
    assert p.returncode == 2 and "allowed only with --oversubscribe" in p.stderr
    assert not out.exists()


@pytest.fixture
def place(jostle_cli, built):
    return lambda *args: jostle_cli("place", "--bench", built(), *args)


@pytest.mark.unit
def test_place_draws_rows_and_writes_launcher_files(tmp_path, place):
    p = place("--ranks", "1:4", "--topology", str(TOPOS / "opteron-2numa-nic0.xml"),
              "--write-dir", str(tmp_path))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    # 3 ranks on 2 nodes of 2 cores: node 0 is full (threads on the ranks' cores), node 1
    # has a free core for rank 2's thread (the seed's algorithm 2).
    three = lines.index(next(x for x in lines if x.startswith("3 ranks")))
    assert lines[three].split("|")[1:3] == [" 0 1 ", " 2 . "]
    assert lines[three + 1].split("|")[1:3] == [" 0 1 ", " . 2 "]
    assert (tmp_path / "rankfile").read_text().count("rank ") == 4
    assert (tmp_path / "slurm-cpu-bind.txt").read_text().startswith("--cpu-bind=map_cpu:0,1,2,3")
    assert (tmp_path / "mpich-bind.txt").read_text().startswith("-bind-to user:")


@pytest.mark.unit
def test_place_json_and_bad_input(place):
    p = place("--ranks", "2", "--json", "--topology", str(TOPOS / "henri.xml"))
    assert p.returncode == 0, p.stderr
    row = json.loads(p.stdout)["rows"][0]
    assert row["rank_cores"] == [0, 18] and row["progress_cores"] == [1, 19]
    assert place("--ranks", "0").returncode == 2
    assert place("--ranks", "2", "--policy", "spread").returncode == 2


def test_rankfile_accepted_by_mpirun(tmp_path, place):
    p = place("--ranks", "2", "--progress", "next", "--write-dir", str(tmp_path))
    assert p.returncode == 0, p.stderr
    r = subprocess.run(["mpirun.openmpi", "--rankfile", str(tmp_path / "rankfile"), "-np", "2",
                        "true"], env=ENV, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


@pytest.mark.unit
def test_overlap_command_bad_input(jostle_cli):
    p = jostle_cli("overlap", "--collectives", "ibarrier")
    assert p.returncode == 2 and "'ibarrier' is not a collective" in p.stderr


@pytest.mark.unit
def test_overlap_command_passes_batch_and_idle(jostle_cli, built):
    p = jostle_cli("overlap", "--dry-run", "--ranks", "2", "--policy", "numa", "--progress-mode",
                   "thread", "--batch", "4", "--thread-idle", "sleep", "--bench", built())
    assert p.returncode == 0, p.stderr
    line = p.stdout.strip().splitlines()[-1]
    assert "--batch 4" in line and "--thread-idle sleep" in line
