"""Integration: jostle-bench with 2 real ranks (Open MPI and MPICH), tiny sizes, and the records
it leaves: complete runs, bad input (exit 2, no file that looks complete), interruption."""
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jostle.records.results import IncompleteRunError, load_run

from mpijobs import ENV, ROOT, launcher as launch, run_bench, validate

pytestmark = pytest.mark.mpi


def run(flavor, *args, n=2, timeout=120):
    return run_bench("pingpong", *args, n=n, flavor=flavor, timeout=timeout)


def writer_of(path, wait=10.0):
    """The PID of the process that has PATH open (rank 0 of a run writing its record)."""
    target, deadline = str(Path(path).resolve()), time.time() + wait
    while time.time() < deadline:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in fds:
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                        return int(pid)
                except OSError:
                    pass
        time.sleep(0.1)
    raise AssertionError(f"no process has {target} open")


def wait_for_points(partial, n, wait=60.0, poll=0.1):
    deadline = time.time() + wait
    while time.time() < deadline:
        if partial.exists() and partial.read_text().count('"type":"point"') >= n:
            return
        time.sleep(poll)


def last_line_once_ended(partial, wait=20.0):
    """The file's last line once it is an end line (or after WAIT s): a launcher may return
    while its rank 0 is still closing the file."""
    deadline = time.time() + wait
    while True:
        last = partial.read_text().splitlines()[-1]
        try:
            if json.loads(last).get("type") == "end" or time.time() > deadline:
                return last
        except json.JSONDecodeError:
            if time.time() > deadline:
                return last
        time.sleep(0.2)


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
@pytest.mark.parametrize("mode", [pytest.param("pingpong", marks=pytest.mark.smoke), "stream",
                                  "bidir"])
def test_complete_run_records(tmp_path, flavor, mode):
    out = tmp_path / "r.jsonl"
    p = run(flavor, "--sizes", "0,1,4K", "--mode", mode, "--window", "4", "--min-reps", "20",
            "--max-time", "0.05", "--check", "--output", str(out))
    assert p.returncode == 0, p.stderr
    assert out.exists() and not Path(str(out) + ".partial").exists()
    r = load_run(out)
    assert r.meta["benchmark"] == "pingpong" and r.meta["mpi"]["ranks"] == 2
    assert r.meta["mpi"]["library"].startswith("Open MPI" if flavor == "openmpi" else "MPICH")
    # the transport, as the library reports it (MPI_T control variables, MPICH's device line)
    assert ("pml " if flavor == "openmpi" else "device ch4:") in r.mpi_transport
    # The binding obtained, read back, one core per rank and never the same on one host.
    cores = [r.meta["binding"][k]["comm"]["core"] for k in ("0", "1")]
    assert all(isinstance(c, int) for c in cores) and cores[0] != cores[1]
    assert r.end["status"] == "ok"
    df = r.points
    assert sorted(df["size"].unique()) == [0, 1, 4096]
    metrics = set(df["metric"])
    assert metrics == ({"latency", "bandwidth", "rtt"} if mode == "pingpong"
                       else {"bandwidth", "message_rate", "window_time"})
    assert (df["n"] >= 20).all()
    assert (df["p25"] <= df["median"]).all() and (df["median"] <= df["p75"]).all()
    assert (df["min"] <= df["p25"]).all() and (df["p75"] <= df["p99"]).all()
    if mode == "pingpong":  # latency = RTT / 2, bandwidth = 2 D / RTT, sample by sample
        for size, g in df.groupby("size"):
            m = g.set_index("metric")["median"]
            assert m["latency"] == pytest.approx(m["rtt"] / 2, rel=1e-6)
            if size:  # a median interpolates between the two middle samples, so 1/x of it
                # differs (by 2% and more on a loaded machine): the bandwidth's median comes
                # from the round trips inside the interval of the RTT's median
                rtt = g.set_index("metric").loc["rtt"]
                bw = 2 * size / rtt[["ci95_hi", "ci95_lo"]].to_numpy()
                assert bw[0] * (1 - 1e-9) <= m["bandwidth"] <= bw[1] * (1 + 1e-9), (bw, m)
    # The stdout table is OSU-style: comment lines, then size and latency columns.
    rows = [l.split() for l in p.stdout.splitlines() if l and not l.startswith("#")]
    assert [int(r_[0]) for r_ in rows] == [0, 1, 4096]
    assert any(l.startswith("# Size") for l in p.stdout.splitlines())


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_transport_queried_beside_mpi_init(tmp_path, flavor, built):
    """The transport's control variables come from a child (`jostle-bench --transport`) spawned
    before MPI_Init by the launcher's rank 0: what it reports is what the query says alone, in
    the launch's environment (a setting made there reaches the record)."""
    env = dict(ENV, OMPI_MCA_pml="ob1") if flavor == "openmpi" else dict(ENV)
    alone = json.loads(subprocess.run([built(flavor), "--transport"], env=env, check=True,
                                      capture_output=True, text=True).stdout)
    if flavor == "openmpi":
        assert alone["pml"] == "ob1"
    else:
        assert "MPIR_CVAR_CH4_NETMOD" in alone
    out = tmp_path / "r.jsonl"
    cmd = launch(flavor, 2) + [built(flavor), "pingpong", "--sizes", "1", "--min-reps", "10",
                               "--max-time", "0.1", "--output", str(out)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert load_run(out).meta["mpi"]["transport"] == alone


def test_cold_buffers_and_idle_rank(tmp_path):
    out = tmp_path / "c.jsonl"
    p = run("openmpi", "--sizes", "64", "--buffers", "cold", "--check", "--min-reps", "50", "--output",
            str(out), n=3)
    assert p.returncode == 0, p.stderr
    r = load_run(out)
    assert any("ranks 2 to 2 take no part" in w for w in r.meta["warnings"])
    assert any("oversubscribed" in w for w in r.meta["warnings"]) == (os.cpu_count() < 3)


def test_topology_file_is_not_this_system(tmp_path):
    out = tmp_path / "t.jsonl"
    p = run("openmpi", "--sizes", "4", "--min-reps", "10", "--topology",
            str(ROOT / "share/topologies/henri.xml"), "--output", str(out))
    assert p.returncode == 0, p.stderr
    r = load_run(out)
    assert r.meta["machine"]["cores"] == 36 and r.meta["machine"]["numa_nodes"] == 4
    assert r.meta["binding"]["0"]["comm"]["core"] is None
    assert any("not this system" in w for w in r.meta["warnings"])


# The bad input of a run: refused by jostle-bench before MPI starts (exit 2, the value named,
# no file), judged here through --validate, which stops after those checks (no launch); one
# case per library goes through the launcher below, where a refusal must look the same.
BAD_INPUT = [
    (["--sizes", "-4"], "'-4'"),
    (["--sizes", "abc"], "'abc'"),
    (["--sizes", "3G"], "3G"),
    (["--comm-core", "64"], "'64'"),
    (["--comm-mem", "7"], "'7'"),
    (["--min-reps", "0"], "'0'"),
    (["--mode", "sideways"], "'sideways'"),
    (["--output", "/nonexistent-dir/x.jsonl"], "/nonexistent-dir"),
]


@pytest.mark.unit
@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
@pytest.mark.parametrize("args,needle", BAD_INPUT)
def test_bad_input_exit_2(tmp_path, flavor, args, needle):
    out = [] if "--output" in args else ["--output", tmp_path / "r.jsonl"]
    p = validate("pingpong", "--min-reps", "5", *args, *out, flavor=flavor)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert needle in p.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_bad_input_under_the_launcher_is_refused_as_validate_says(tmp_path, flavor):
    """The same refusal with real ranks: one error line, --validate's, and no file."""
    args = ["--min-reps", "5", "--sizes", "abc", "--output", tmp_path / "r.jsonl"]
    said = validate("pingpong", *args, flavor=flavor).stderr.strip()
    p = run(flavor, *map(str, args))
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert said.startswith("jostle-bench: error: ") and said in p.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_one_rank_is_refused(flavor):
    p = run(flavor, "--sizes", "4", n=1)
    assert p.returncode == 2
    assert "at least 2 MPI ranks" in p.stderr


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_interrupt_keeps_points_marked_incomplete(tmp_path, flavor, built):
    """jostle-bench's own handler, as when a batch system signals the tasks (`scancel
    --signal=INT`): rank 0 writes its end line. (A launcher signalled at the same time may
    SIGKILL rank 0 first: jostle writes the line then, tested below.)"""
    out = tmp_path / "i.jsonl"
    proc = subprocess.Popen(launch(flavor) + [built(flavor), "pingpong", "--sizes", "1:100000:1",
                            "--min-reps", "50", "--output", str(out), "--progress"], env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    partial = Path(str(out) + ".partial")
    wait_for_points(partial, 6)
    os.kill(writer_of(partial), signal.SIGINT)
    proc.wait(timeout=60)
    assert not out.exists() and partial.exists()
    lines = partial.read_text().splitlines()
    assert json.loads(lines[0])["type"] == "meta"
    assert sum('"type":"point"' in l for l in lines) >= 6
    assert json.loads(last_line_once_ended(partial))["status"] == "interrupted"  # records.md
    with pytest.raises(IncompleteRunError) as e:
        load_run(partial)
    assert "incomplete" in str(e.value).lower() or "partial" in str(e.value).lower()
    kept = load_run(partial, allow_incomplete=True)
    assert len(kept.points) >= 6


def at_a_terminal():
    """SIGINT as a shell at a terminal leaves it: a test run in the background (`cmd &` in a
    script) inherits SIGINT ignored, and Python keeps an ignored SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def tree(pid):
    """PID and its descendants, from /proc (parents before children)."""
    kids = {}
    for q in filter(str.isdigit, os.listdir("/proc")):
        try:
            ppid = int(Path(f"/proc/{q}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append(int(q))
    out, todo = [], [pid]
    while todo:
        out.append(todo.pop())
        todo += kids.get(out[-1], [])
    return out


@contextlib.contextmanager
def jostle_sweep(tmp_path, flavor, name):
    """`jostle pingpong` in a session of its own, once 3 points of its long sweep are on disk;
    whatever of it still runs at the end (a failed test) is killed: the sweep lasts hours."""
    proc = subprocess.Popen([sys.executable, "-m", "jostle.cli", "pingpong", "--mpi", flavor,
                             "--sizes", "1:100000:1", "--min-reps", "50", "--output-dir",
                             str(tmp_path), "--name", name, "--runs", "1"], env=ENV,
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=at_a_terminal)
    partial = tmp_path / "adhoc" / f"{name}.jsonl.partial"
    try:
        wait_for_points(partial, 3)
        yield proc, partial
    finally:
        if proc.poll() is None:
            for pid in tree(proc.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            proc.communicate()


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_ctrl_c_to_jostles_group_leaves_an_interrupted_end_line(tmp_path, flavor):
    """Ctrl-C at a terminal signals jostle's process group; jostle forwards it to the run's."""
    with jostle_sweep(tmp_path, flavor, "c") as (proc, partial):
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err
    end = json.loads(last_line_once_ended(partial))
    assert end["type"] == "end" and end["status"] == "interrupted" and end["points"] >= 3


@pytest.mark.parametrize("flavor", ["openmpi", "mpich"])
def test_a_killed_writer_still_gets_an_end_line_from_jostle(tmp_path, flavor):
    """SIGKILL leaves rank 0 no chance to write: jostle, which launched it, writes the end line
    (status error, the points counted) once rank 0 is gone, and says the run failed."""
    with jostle_sweep(tmp_path, flavor, "k") as (proc, partial):
        os.kill(writer_of(partial), signal.SIGKILL)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "failed" in err
    lines = partial.read_text().splitlines()
    end = json.loads(lines[-1])
    assert end["type"] == "end" and end["status"] == "error" and end["written_by"] == "jostle"
    assert end["points"] == sum('"type":"point"' in line for line in lines) >= 3
    assert sum('"type":"end"' in line for line in lines) == 1
    assert len(load_run(partial, allow_incomplete=True).points) == end["points"]
