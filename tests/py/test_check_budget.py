"""`jostle check` keeps its budget on the machines that broke it (docs/check.md, "The
budget"): a last-level cache of 1 GiB (this machine's hwloc XML, its L3 enlarged, loaded as
this system), a node held at half a core (cgroup v1 cpu.cfs_quota_us), and one core
(taskset). On each, a reference saved there, then `--budget 8` and `--budget 15`: each check
ends within its budget + 1 s, healthy, or "could not judge" where the machine cannot run a
step in its share; never unhealthy."""

import json
import re
import shutil
import subprocess

import pytest

from checknode import Group, jostle, make_node, save_site, unhealthy_and_quiet
from mpijobs import built

pytestmark = [pytest.mark.system, pytest.mark.slow]

GIB = 1 << 30
SAVE_REPEAT = 2


@pytest.fixture(scope="module")
def node():
    g = make_node()
    yield g
    g.remove()


def big_cache_env(d) -> dict:
    """This machine as hwloc sees it, with one 1 GiB L3 (the hwloc XML of lstopo, loaded as
    this system through HWLOC_XMLFILE: jostle-bench's ranks and Open MPI's see it alike)."""
    lstopo = shutil.which("lstopo-no-graphics") or shutil.which("lstopo")
    if lstopo is None:
        pytest.skip("needs lstopo (Debian's hwloc)")
    xml = subprocess.run([lstopo, "--of", "xml", "-"], capture_output=True, text=True,
                         check=True).stdout
    big, n = re.subn(r'(type="L3Cache"[^>]*cache_size=")[0-9]+"', rf'\g<1>{GIB}"', xml)
    if n == 0:   # no L3 here: the largest data cache becomes 1 GiB
        big, n = re.subn(r'(type="L2Cache"[^>]*cache_size=")[0-9]+"', rf'\g<1>{GIB}"', xml)
    assert n, "no L2 or L3 cache in this machine's topology"
    path = d / "big-cache.xml"
    path.write_text(big)
    env = {"HWLOC_XMLFILE": str(path), "HWLOC_THISSYSTEM": "1"}
    facts = json.loads(subprocess.run([built("openmpi"), "--machine"], capture_output=True,
                                      text=True, env={**env, "PATH": "/usr/bin:/bin"}).stdout)
    assert facts["llc_bytes"] == GIB and facts["this_system"], facts
    return env


MACHINES = ("1 GiB last-level cache", "half a core", "one core")


@pytest.fixture(scope="module", params=MACHINES)
def machine(request, node, tmp_path_factory):
    """(name, prefix, env, site) of one machine that broke the budget, its reference saved
    there (None when the machine cannot measure it: the refusal's line instead)."""
    built("openmpi")
    d = tmp_path_factory.mktemp("budget")
    prefix, env, group = [], None, None
    if request.param == MACHINES[0]:
        env = big_cache_env(d)
    elif request.param == MACHINES[1]:
        group = Group("half", quota_us=50000, parent=node)
        prefix = group.prefix()
    else:
        prefix = ["taskset", "-c", "0"]
    try:
        # 2 checks and the site's tolerance: what is under test is the time, not the bound
        # (test_check_mpi.py refuses a reference too wide), and each check saved costs both
        # cores for its budget
        site = save_site(d, node, 8, SAVE_REPEAT, prefix=prefix, env=env, may_fail=True,
                         tolerance=0.5)
        yield request.param, prefix, env, site, node.save_walls
    finally:
        if group:
            group.remove()


@pytest.mark.parametrize("budget", [8, 15])
def test_a_check_ends_within_its_budget_and_says_the_truth(machine, node, budget, tmp_path):
    name, prefix, env, site, _ = machine
    if isinstance(site, str):
        # the reference could not be measured here (two ranks polling on half a core: a
        # round trip waits for the quota's next period): saying so, in time, is the honest
        # verdict; test_save_reference_keeps_its_budget_too checks the time
        assert re.search(r"did not finish in its [0-9.]+ s share|tolerance would be", site), site
        print(f"{name}: no reference can be saved here: {site}")
        return
    def check(spool):
        return jostle("check", "--site", site, "--budget", budget, "--spool", spool,
                      "--runs-dir", tmp_path / "runs", *node.busy_flags,
                      prefix=[*node.prefix(), *prefix], env=env)
    r = check(tmp_path / "spool")
    if r.returncode == 1:
        # the suite's other workers share the machine: their memory traffic slowed a memory
        # latency by 91% for one check, and a step on one core past twice its reference's time
        # (2026-11-29, make test): retested at once, as --slurm's suspect mode does before it
        # drains; the retest must hold unless the node was busy while it measured
        print(f"{name}, --budget {budget}: retested after: {r.stdout.strip()}")
        shutil.rmtree(tmp_path / "spool")
        r = check(tmp_path / "spool")
    line = r.stdout.strip()
    print(f"{name}, --budget {budget}: exit {r.returncode} in {r.wall:.2f} s: {line}")
    assert r.wall <= budget + 1, (name, r.wall, line)
    assert r.returncode in (0, 1, 3), (name, line, r.stderr)
    assert not unhealthy_and_quiet(r, tmp_path / "spool", node), (name, line)
    if r.returncode == 3:
        assert line.startswith("jostle: could not judge:"), line
    [rec] = [json.loads(p.read_text()) for p in (tmp_path / "spool").glob("check-*.json")]
    assert rec["duration_s"] <= budget + 1
    if name == MACHINES[0]:
        # the reference's working sets were cut to the time (4 GiB of chain and 12 GiB of
        # arrays a thread asked for by the caches), and the check measured with them
        from jostle.analysis import check_site
        opts = check_site.load(site).classes["here"].options
        assert opts.chain_bytes < GIB and opts.array_bytes < GIB, opts
        meta = json.loads((tmp_path / "runs" / f"fp-memlat-{rec['node']}.jsonl")
                          .read_text().splitlines()[0])
        ml = next(v for v in rec["values"] if v["name"] == "memory_latency")
        if meta["chain"]["capped_by"]:   # beside other work its share built less: not judged
            # (or failed: past its tolerance despite the smaller chain, which only flatters)
            assert meta["chain"]["bytes"] < opts.chain_bytes
            assert ml["verdict"] in ("not judged", "fail"), ml
            assert "its reference with" in ml["note"], ml
        else:
            assert meta["chain"]["bytes"] == opts.chain_bytes
        ct = json.loads((tmp_path / "runs" / f"fp-contention-{rec['node']}.jsonl")
                        .read_text().splitlines()[0])["kernel"]
        assert ct["array_bytes"] == opts.array_bytes


def test_save_reference_keeps_its_budget_too(machine):
    """The reference's checks each within the budget: the save within SAVE_REPEAT x (8 + 1) s
    plus a retest's (a step that did not finish is measured again), plus what a save adds (its
    queries, the site file)."""
    name, _, _, site, walls = machine
    print(f"{name}: --save-reference --budget 8 --repeat {SAVE_REPEAT} took "
          + ", then ".join(f"{w:.1f} s" for w in walls))
    assert all(w <= (SAVE_REPEAT + 1) * (8 + 1) + 5 for w in walls), (name, walls, site)
