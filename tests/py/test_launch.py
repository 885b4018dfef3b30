import os
import signal
import sys
import threading
import time

import pytest

from jostle import binary
from jostle.run import bench_query, estimate, launch, process
from jostle.errors import JostleError, UsageError

pytestmark = pytest.mark.unit

B = "/opt/jostle-bench"
ARGS = ["pingpong", "--sizes", "0:1K"]


def cmd(kind, ranks=2, hosts=None, **kw):
    kw.setdefault("euid", 1000)
    kw.setdefault("cores", 2)
    return launch.build_command(kind, B, ARGS, ranks, hosts, **kw)


def test_openmpi_as_user_fitting_no_extra_flags():
    p = cmd("openmpi", exe="mpirun")
    assert p.argv == ["mpirun", "--bind-to", "none", "-np", "2", B, *ARGS]
    assert p.oversubscribe is False and "fit" in p.reason


def test_a_reference_program_may_ask_the_launcher_to_bind():
    """jostle-bench binds itself (no launcher binding); bench/'s reference loops ask for it."""
    assert cmd("openmpi", exe="mpirun", launcher_binds=True).argv[1:3] == ["--bind-to", "core"]
    assert cmd("mpich", exe="mpiexec.mpich", launcher_binds=True).argv[3:5] == ["-bind-to", "core"]
    assert cmd("srun", launcher_binds=True).argv[3] == "--cpu-bind=cores"


def test_openmpi_as_root_adds_allow_run_as_root():
    p = cmd("openmpi", exe="mpirun", euid=0)
    assert p.argv[:2] == ["mpirun", "--allow-run-as-root"]


def test_openmpi_oversubscribed_when_ranks_exceed_cores():
    p = cmd("openmpi", ranks=4, exe="mpirun", euid=0, cores=2)
    assert p.argv[:7] == ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
                          "-np", "4"]
    assert p.oversubscribe is True and "4 rank(s) on a host with 2 core(s)" == p.reason


def test_openmpi_oversubscribe_forced_either_way():
    assert "--oversubscribe" in cmd("openmpi", oversubscribe=True).argv
    assert "--oversubscribe" not in cmd("openmpi", ranks=8, oversubscribe=False).argv


def test_openmpi_two_hosts_one_rank_each():
    p = cmd("openmpi", hosts=["n1", "n2"], exe="mpirun")
    assert p.argv == ["mpirun", "--bind-to", "none", "-np", "2", "--host", "n1,n2",
                      "--map-by", "node", B, *ARGS]
    assert p.oversubscribe is False and "remote" in p.reason


def test_openmpi_hosts_share_ranks_with_slot_counts():
    p = cmd("openmpi", ranks=4, hosts=["n1", "n2"])
    i = p.argv.index("--host")
    assert p.argv[i + 1] == "n1:2,n2:2"


def test_mpich_as_root_and_user_alike():
    root = cmd("mpich", exe="mpiexec.mpich", euid=0)
    user = cmd("mpich", exe="mpiexec.mpich", euid=1000)
    assert root.argv == user.argv == ["mpiexec.mpich", "-n", "2", "-bind-to", "none", B, *ARGS]


def test_mpich_two_hosts():
    p = cmd("mpich", hosts=["n1", "n2"], exe="mpiexec.mpich")
    assert p.argv == ["mpiexec.mpich", "-n", "2", "-hosts", "n1,n2", "-bind-to", "none", B, *ARGS]


def test_srun_intra_node_pins_to_one_node():
    p = cmd("srun", exe="srun")
    assert p.argv == ["srun", "-n", "2", "--cpu-bind=none", "-N", "1", B, *ARGS]


def test_srun_two_hosts():
    p = cmd("srun", hosts=["n1", "n2"], exe="srun")
    assert p.argv == ["srun", "-n", "2", "--cpu-bind=none", "-N", "2", "--ntasks-per-node=1",
                      "--nodelist=n1,n2", B, *ARGS]


def test_smpirun_needs_a_platform():
    p = cmd("smpirun", ranks=64, platform="cluster.xml", hostfile="hosts.txt", exe="smpirun")
    assert p.argv == ["smpirun", "-np", "64", "-platform", "cluster.xml", "-hostfile", "hosts.txt",
                      B, *ARGS]
    assert cmd("smpirun", platform="p.xml").argv[:5] == ["smpirun", "-np", "2", "-platform", "p.xml"]
    with pytest.raises(UsageError, match="platform"):
        cmd("smpirun")


def test_custom_prefix_is_used_verbatim():
    p = cmd("custom", prefix="mpirun -np 2 --mca btl 'self,vader'", euid=0, ranks=8)
    assert p.argv == ["mpirun", "-np", "2", "--mca", "btl", "self,vader", B, *ARGS]
    assert p.oversubscribe is None
    assert p.line.startswith("mpirun -np 2 --mca btl self,vader /opt/jostle-bench pingpong")


def test_unknown_launcher_kind():
    with pytest.raises(UsageError, match="unknown launcher 'pbs'"):
        cmd("pbs")


def test_choose_launcher_follows_flavor_and_slurm_wins():
    have = {"mpirun.openmpi", "mpiexec.mpich", "srun", "mpiexec"}
    which = lambda x: f"/usr/bin/{x}" if x in have else None
    assert launch.choose_launcher("openmpi", env={}, which=which) == ("openmpi", "mpirun.openmpi")
    assert launch.choose_launcher("mpich", env={}, which=which) == ("mpich", "mpiexec.mpich")
    assert launch.choose_launcher("other", env={}, which=which) == ("generic", "mpiexec")
    assert launch.choose_launcher("mpich", env={"SLURM_JOB_ID": "7"}, which=which)[0] == "srun"
    have.discard("srun")
    assert launch.choose_launcher("mpich", env={"SLURM_JOB_ID": "7"}, which=which)[0] == "mpich"
    with pytest.raises(JostleError, match="no launcher found"):
        launch.choose_launcher("openmpi", env={}, which=lambda x: None)


def test_find_bench_env_and_errors(tmp_path, fake_bench):
    assert binary.find_bench() == fake_bench
    os.environ["JOSTLE_BENCH"] = str(tmp_path / "nope")
    with pytest.raises(UsageError, match="nope"):
        binary.find_bench()


def test_bench_version_and_machine_from_the_binary(fake_bench):
    v = bench_query.bench_version(fake_bench)
    assert v["mpi_flavor"] == "openmpi" and v["version"] == "0.1.0"
    assert bench_query.bench_machine(fake_bench)["cores"] == 24


def test_version_and_machine_are_asked_once_per_build(tmp_path):
    """`jostle run` plans every step, then runs it: the description is asked once; a
    rebuilt bench or another environment is asked again, and a caller cannot spoil it."""
    calls = tmp_path / "calls"
    bench = tmp_path / "jostle-bench"

    def build(cores):
        bench.write_text(f"#!/bin/sh\necho x >> {calls}\n"
                         f"echo '{{\"cores\": {cores}, \"extra\": \"'$JT_X'\"}}'\n")
        bench.chmod(0o755)

    build(4)
    first = bench_query.bench_machine(bench)
    first["cores"] = 99                              # the caller's copy, not the cache
    assert bench_query.bench_machine(bench)["cores"] == 4
    assert len(calls.read_text().split()) == 1
    build(12)                                        # rebuilt: another size and mtime
    assert bench_query.bench_machine(bench)["cores"] == 12
    os.environ["JT_X"] = "y"
    try:
        assert bench_query.bench_machine(bench)["extra"] == "y"
    finally:
        del os.environ["JT_X"]
    assert len(calls.read_text().split()) == 3


def test_estimate_timeout_grows_with_the_sweep():
    small = estimate.estimate_timeout([0, 1, 2])
    big = estimate.estimate_timeout([1 << 30] * 10)
    assert 60 < small < big and big > 10 * 100 * 2 * (1 << 30) / 0.5e9


def py(code):
    return [sys.executable, "-c", code]


def test_execute_streams_stdout_and_parses_progress():
    out, err, prog = [], [], []
    o = process.execute(py("import sys\nprint('# table')\nprint('progress 1 2', file=sys.stderr)\n"
                          "print('note', file=sys.stderr)\nprint('progress 2 2', file=sys.stderr)"),
                       timeout=30, on_stdout=out.append, on_stderr=err.append,
                       on_progress=lambda d, t: prog.append((d, t)))
    assert o.status == "ok" and o.returncode == 0
    assert out == ["# table"] and err == ["note"] and prog == [(1, 2), (2, 2)]


def test_execute_reports_failure_and_stderr_tail():
    o = process.execute(py("import sys; print('boom', file=sys.stderr); sys.exit(3)"),
                       timeout=30, on_stdout=lambda l: None)
    assert o.status == "failed" and o.returncode == 3 and "boom" in o.stderr_tail


def test_execute_timeout_kills_the_whole_group(tmp_path):
    pidfile = tmp_path / "grandchild"
    code = ("import subprocess, sys, time\n"
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
            "time.sleep(60)")
    t0 = time.monotonic()
    o = process.execute(py(code), timeout=1.5, on_stdout=lambda l: None, grace=2)
    assert o.status == "timeout" and time.monotonic() - t0 < 15
    stat = f"/proc/{int(pidfile.read_text())}/stat"

    def gone():  # gone, or a zombie left for init to reap
        try:
            return open(stat).read().split(")")[1].split()[0] == "Z"
        except OSError:
            return True
    # The grandchild went with the group: SIGKILL is delivered at once, but its exit is the
    # kernel's to finish (under load, after this line): waited for, up to a bound.
    deadline = time.monotonic() + 30
    while not gone() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(), open(stat).read()


def _signal_to_jostle(tmp_path, sig, status):
    """Sends SIG to this process while a child that records the signal it gets runs; returns
    the RunInterrupted raised and the signal number the child saw."""
    mark = tmp_path / "got"
    code = ("import signal, sys, time\n"
            f"def h(s, f):\n open({str(mark)!r}, 'w').write(str(s)); sys.exit({status})\n"
            f"signal.signal({int(sig)}, h)\nprint('ready', flush=True)\ntime.sleep(60)")
    ready = threading.Event()
    threading.Timer(0.1, lambda: (ready.wait(10), os.kill(os.getpid(), sig))).start()
    with pytest.raises(process.RunInterrupted) as e:
        process.execute(py(code), timeout=30, on_stdout=lambda l: ready.set())
    return e.value, mark.read_text()


def test_ctrl_c_is_forwarded_as_sigint_and_reported(tmp_path, python_sigint):
    e, got = _signal_to_jostle(tmp_path, signal.SIGINT, 130)
    assert e.exit_status == 130 and e.outcome.status == "interrupted"
    assert got == str(int(signal.SIGINT))


def test_sigterm_to_jostle_reaches_the_run(tmp_path):
    e, got = _signal_to_jostle(tmp_path, signal.SIGTERM, 143)
    assert e.exit_status == 143 and "SIGTERM" in str(e)
    assert got == str(int(signal.SIGTERM))
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # handlers restored
