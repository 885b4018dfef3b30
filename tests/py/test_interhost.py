"""Inter-host ping-pong on one machine: two network namespaces ("hosts") joined by a veth pair.

scripts/netns-hosts.sh makes the namespaces, gives each its own hostname and runs Open MPI
with rank 0 in A and rank 1 in B over TCP (btl tcp,self) through an rsh agent that calls
`ip netns exec`. Skipped unless root, Open MPI and the Open MPI build of jostle-bench are
here and network namespaces can be created. See docs/interhost.md.
"""

import json
import os
import shutil
import subprocess

import pytest

from conftest import REPO
from mpijobs import built

pytestmark = pytest.mark.system

SCRIPT = REPO / "scripts" / "netns-hosts.sh"
BENCH = REPO / "build" / "openmpi" / "jostle-bench"
SWEEP = ["--sizes", "4,64K,1M", "--min-reps", "20", "--max-time", "0.5"]
# Each rank is alone on its "host", so jostle-bench would bind both to core 0 of the one
# machine they share; one core each, as on two real hosts.
CORES = ["--comm-core", "0,1"]
MPIRUN = shutil.which("mpirun.openmpi") or shutil.which("mpirun")
TIMEOUT = 60
# Names of this test session's own: concurrent sessions on one machine do not collide.
# Short, as the veth ends are named veth-<name> (at most 15 characters).
TAG = str(os.getpid() % 100000)
NS_A, NS_B = f"jsA{TAG}", f"jsB{TAG}"
ROOT_OK = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def _env():
    return {**os.environ, **ROOT_OK, "JOSTLE_NETNS_A": NS_A, "JOSTLE_NETNS_B": NS_B,
            "JOSTLE_NETNS_TMP": f"/tmp/jostle-netns-{TAG}"}


def _script(*args, check=True, timeout=TIMEOUT):
    out = subprocess.run([str(SCRIPT), *args], env=_env(), capture_output=True, text=True,
                         timeout=timeout)
    if check and out.returncode != 0:
        raise AssertionError(f"netns-hosts.sh {' '.join(args)} exited {out.returncode}:\n"
                             f"{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    return out


def _records(path):
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    assert lines[0]["type"] == "meta" and lines[-1]["type"] == "end", path
    return lines[0], [x for x in lines if x["type"] == "point"], lines[-1]


def _median(points, size, metric):
    [p] = [p for p in points if p["params"]["size"] == size and p["metric"] == metric]
    return p["median"]


@pytest.fixture(scope="module")
def hosts():
    """(A, B): the two namespaces, up for this module, down afterwards even on failure."""
    if os.geteuid() != 0:
        pytest.skip("not root: network namespaces need CAP_SYS_ADMIN")
    built()   # (the conftest fixture's check: this fixture is module-scoped)
    if not MPIRUN:
        pytest.skip("no Open MPI mpirun on PATH")
    for tool in ("ip", "unshare"):
        if not shutil.which(tool):
            pytest.skip(f"'{tool}' not found")
    probe = _script("check", check=False)
    if probe.returncode != 0:
        pytest.skip("network namespaces unavailable: "
                    + (probe.stdout.strip() or probe.stderr.strip() or "netns-hosts.sh check failed"))
    try:
        up = _script("up", check=False)
        if up.returncode != 0:
            pytest.skip(f"netns-hosts.sh up failed: {up.stderr.strip()[-500:]}")
        yield NS_A, NS_B
    finally:
        _script("down", check=False)
        shutil.rmtree(f"/tmp/jostle-netns-{TAG}", ignore_errors=True)


def test_each_namespace_is_its_own_host(hosts):
    a, b = hosts
    assert _script("exec", "A", "hostname").stdout.strip() == a
    assert _script("exec", "B", "hostname").stdout.strip() == b
    addrs = _script("exec", "B", "ip", "-o", "-4", "addr", "show").stdout
    assert "10.253.7.2/24" in addrs and "10.253.7.1/" not in addrs
    # B reaches A over the veth pair (bash's /dev/tcp against a listener in A would need a
    # second process; the kernel's answer to a closed port is enough: refused, not unreachable)
    r = _script("exec", "B", "bash", "-c", "exec 3<>/dev/tcp/10.253.7.1/9", check=False)
    assert "refused" in r.stderr.lower(), r.stderr


def test_pingpong_across_namespaces_is_tcp_between_two_hosts(hosts, tmp_path):
    """Rank 0 in A, rank 1 in B, by TCP: what the record says. How much slower than shared
    memory it is is a measurement, not a test: bench/interhost_ratio.py (docs/validation.md)."""
    a, b = hosts
    inter = tmp_path / "inter.jsonl"
    _script("mpirun", str(BENCH), "pingpong", *SWEEP, *CORES, "--output", str(inter))
    meta, points, end = _records(inter)
    assert meta["hosts"] == [a, b], meta["hosts"]   # two distinct hosts, rank 0 in A
    assert meta["mpi"]["ranks"] == 2
    assert end["status"] == "ok", end
    assert end["points"] == len(points) == 9      # 3 sizes x (rtt, latency, bandwidth)
    cores = {meta["binding"][k]["comm"]["core"] for k in ("0", "1")}
    assert cores == {0, 1}, meta["binding"]
    # the transport the launch chose (netns-hosts.sh: btl tcp,self), as the record has it
    assert "tcp" in meta["mpi"]["transport"].get("btl", ""), meta["mpi"]["transport"]
    assert "vader" not in meta["mpi"]["transport"].get("btl", "")
    assert _median(points, 4, "latency") > 0 and _median(points, 1 << 20, "bandwidth") > 0


def test_jostle_cli_with_the_netns_launcher(hosts, tmp_path, monkeypatch, capsys):
    """What docs/interhost.md tells a user to run."""
    from jostle.cli import main
    from jostle.records.results import load_run
    a, b = hosts
    for k, v in _env().items():
        if k.startswith(("JOSTLE_NETNS", "OMPI_ALLOW")):
            monkeypatch.setenv(k, v)
    monkeypatch.delenv("JOSTLE_BENCH", raising=False)
    rc = main(["pingpong", "--hosts", f"{a},{b}", "--launcher", f"{SCRIPT} mpirun",
               "--bench", str(BENCH), "--sizes", "4,64K", *CORES, "--min-reps", "20", "--max-time",
               "0.5", "--output-dir", str(tmp_path), "--campaign", "it", "--name", "netns",
               "--timeout", str(TIMEOUT), "--runs", "1"])
    err = capsys.readouterr().err
    assert rc == 0, err
    run = load_run(tmp_path / "it" / "netns.jsonl")
    assert run.hosts == [a, b]
    # the namespaces were up already, so the launcher must have left them up
    assert _script("status", check=False).returncode == 0


def test_one_pair_across_namespaces(hosts, tmp_path):
    """pingpong --pairs 1 (osu_mbw_mr's method) with each rank on its own "host": the pair
    crosses the veth pair, and its flow is recorded beside the aggregate."""
    a, b = hosts
    out = tmp_path / "pairs.jsonl"
    _script("mpirun", str(BENCH), "pingpong", "--pairs", "1", "--mode", "stream", "--sizes",
            "4,64K", "--min-reps", "20", "--max-time", "0.5", *CORES, "--output", str(out))
    meta, points, end = _records(out)
    assert meta["hosts"] == [a, b] and end["status"] == "ok"
    assert meta["flows"]["pairs"] == 1 and "osu_mbw_mr" in meta["flows"]["sync"]
    for size in (4, 65536):
        agg = _median(points, size, "bandwidth")
        [pair] = [p for p in points if p["params"]["size"] == size
                  and p["metric"] == "pair_bandwidth"]
        assert pair["params"]["pair"] == 0 and agg > 0
        # one pair: the aggregate is that pair, sample by sample
        assert agg == pytest.approx(pair["median"], rel=1e-9)
        rate = _median(points, size, "message_rate")
        assert rate == pytest.approx(agg * 1e6 / size, rel=1e-6)
