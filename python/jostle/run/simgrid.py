"""SimGrid platforms for simulated runs (smpirun): a cluster of N nodes, one rank each.

The platform is a SimGrid 3.x `<cluster>` (platform DTD version 4.1, the format of the
SimGrid 3.32 installed with jostle): N hosts node-0 … node-(N-1), each with its own
private link (bandwidth, latency) to a backbone that is never the bottleneck (N × the link
bandwidth, zero latency), so that two nodes talk through two links (the usual fat-tree
approximation). The hostfile puts rank r on node-r.

The options every simulated run gets (SMPI_CONFIG) and why:
  smpi/simulate-computation:no   simulated time is what the network model says, not the
                                 real CPU time of this (shared, oversubscribed) machine:
                                 results are deterministic.
  smpi/iprobe, smpi/test         simulated cost of one MPI_Iprobe / MPI_Test: the
                                 polling period of a progress loop (default 0.1 µs).
  smpi/send-is-detached-thresh:0 a send completes when its data is delivered, not at once
                                 (SimGrid shares a link fairly between concurrent flows; an
                                 eager send that "completes" at once would let a sender
                                 post every segment together, and they would all arrive
                                 together).
"""

import math
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..binary import repo_root
from ..errors import JostleError, UsageError

_UNITS = {
    "latency": {"s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9},
    "speed": {"f": 1, "kf": 1e3, "mf": 1e6, "gf": 1e9, "tf": 1e12},
}
# SimGrid spells bytes per second "Bps" and bits per second "bps"; we keep its spelling.
_BW = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([kKmMgGtT]?)([bB])ps\s*$")
_NUM = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-zA-Z]*)\s*$")

SMPI_CONFIG = ("smpi/simulate-computation:no", "smpi/send-is-detached-thresh:0")

# MPI_Bcast algorithms of SimGrid 3.32 (--cfg=smpi/bcast:NAME; the list SimGrid prints for an
# unknown name). ompi, mpich, mvapich2 and impi are selectors: the decision logic of those
# libraries (by size and ranks) picking among the others; default is binomial_tree.
SMPI_BCAST = ("default", "arrival_pattern_aware", "arrival_pattern_aware_wait", "arrival_scatter",
              "binomial_tree", "flattree", "flattree_pipeline", "NTSB", "NTSL", "NTSL_Isend",
              "scatter_LR_allgather", "scatter_rdb_allgather", "SMP_binary", "SMP_binomial",
              "SMP_linear", "ompi", "ompi_split_bintree", "ompi_pipeline", "mpich", "mvapich2",
              "mvapich2_inter_node", "mvapich2_intra_node", "mvapich2_knomial_intra_node", "impi",
              "automatic")
# Left out of smpi:all (each may still be named alone), and why.
SMPI_BCAST_NOT_IN_ALL = {
    "default": "is binomial_tree, and the mpi_bcast routing of a simulated run",
    "automatic": "runs every algorithm at each call (a tuning aid, not a broadcast)",
    "SMP_linear": "deadlocks in SimGrid 3.32 (8 B and 1 MiB, 6 and 8 one-core nodes)",
    "ompi_split_bintree": "deadlocks in SimGrid 3.32 for small messages (8 B, 6 and 8 nodes)",
    "impi": "deadlocks in SimGrid 3.32 for small messages (8 B, 6 and 8 nodes)",
    "arrival_pattern_aware": "deadlocks in jostle-bench under SimGrid 3.32 (16 nodes)",
    "arrival_scatter": "crashes (SIGSEGV) in jostle-bench under SimGrid 3.32 (16 nodes)",
}
SMPI_BCAST_ALL = tuple(a for a in SMPI_BCAST if a not in SMPI_BCAST_NOT_IN_ALL)


def parse_bandwidth(text: str) -> float:
    """'10Gbps' (bits) or '1.25GBps' (bytes) -> bytes per second."""
    m = _BW.match(str(text))
    if not m or float(m.group(1)) <= 0:
        raise UsageError(f"--bandwidth '{text}' is not a bandwidth; expected e.g. 10Gbps (bits/s) "
                         "or 1.25GBps (bytes/s)")
    scale = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[m.group(2).lower()]
    return float(m.group(1)) * scale / (8 if m.group(3) == "b" else 1)


def parse_latency(text: str) -> float:
    """'1us', '500ns', '2ms', '1e-6s' -> seconds (>= 0)."""
    m = _NUM.match(str(text))
    unit = m.group(2).lower() if m else ""
    if not m or unit not in _UNITS["latency"]:
        raise UsageError(f"--latency '{text}' is not a latency; expected e.g. 1us, 500ns, 2ms")
    return float(m.group(1)) * _UNITS["latency"][unit]


def parse_speed(text: str) -> float:
    """'1Gf' -> flop/s."""
    m = _NUM.match(str(text))
    unit = m.group(2).lower() if m else None
    if not m or unit not in _UNITS["speed"] or float(m.group(1)) <= 0:
        raise UsageError(f"--speed '{text}' is not a node speed; expected e.g. 1Gf (flop/s)")
    return float(m.group(1)) * _UNITS["speed"][unit]


def parse_nodes(text: str) -> list:
    """'4:256' (powers of two from 4 to 256), '4,16,100' or '64' -> sorted node counts >= 2."""
    out = set()
    for item in str(text).split(","):
        parts = item.strip().split(":")
        try:
            nums = [int(p) for p in parts]
        except ValueError:
            nums = []
        if not nums or len(nums) > 2 or any(n < 2 for n in nums) or (len(nums) == 2 and nums[0] > nums[1]):
            raise UsageError(f"--nodes '{text}': '{item.strip()}' is not allowed; expected N, LO:HI "
                             "(powers of two from LO) or a comma-separated list, each ≥ 2")
        if len(nums) == 1:
            out.add(nums[0])
        else:
            n = nums[0]
            while n <= nums[1]:
                out.add(n)
                n *= 2
    if max(out) > 65536:
        raise UsageError(f"--nodes '{text}': at most 65536 simulated nodes")
    return sorted(out)


def _fmt(x: float) -> str:
    return f"{x:.12g}"


def platform_xml(nodes: int, bandwidth: float, latency: float, speed: float,
                 prefix: str = "node-", cores: int = 1, links=None) -> str:
    """The platform file text: bandwidth in bytes/s, latency in s, speed in flop/s per core,
    cores per node (an execution runs on one core: W concurrent ones need W cores).
    LINKS: {node: (bandwidth, latency)} for the nodes whose private link differs (a fault
    injected by `jostle scan --simulate`); the same cluster, written host by host."""
    if nodes < 1:
        raise UsageError(f"a platform needs at least 1 node, not {nodes}")
    if cores < 1:
        raise UsageError(f"a node needs at least 1 core, not {cores}")
    if links:
        return _explicit_cluster(nodes, bandwidth, latency, speed, prefix, cores, links)
    return (
        "<?xml version='1.0'?>\n"
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1">\n'
        f"  <!-- jostle: {nodes} nodes, {_fmt(bandwidth)} B/s and {_fmt(latency)} s per node link,"
        f" {cores} core(s) of {_fmt(speed)} flop/s per node -->\n"
        f'  <cluster id="jostle" prefix="{prefix}" suffix="" radical="0-{nodes - 1}"'
        f' speed="{_fmt(speed)}f" core="{cores}" bw="{_fmt(bandwidth)}Bps" lat="{_fmt(latency)}s"'
        f' bb_bw="{_fmt(bandwidth * nodes)}Bps" bb_lat="0s"/>\n'
        "</platform>\n")


def _explicit_cluster(nodes, bandwidth, latency, speed, prefix, cores, links) -> str:
    """What <cluster> expands to (a Cluster zone: per host a split-duplex private link, and a
    backbone), written out so that a node's link can have its own bandwidth and latency."""
    out = ["<?xml version='1.0'?>\n", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n',
           '<platform version="4.1">\n',
           f"  <!-- jostle: {nodes} nodes, {_fmt(bandwidth)} B/s and {_fmt(latency)} s per node link"
           f" ({'each node its own' if len(links) == nodes else 'except nodes ' + ', '.join(map(str, sorted(links)))}), {cores} core(s) of "
           f"{_fmt(speed)} flop/s per node -->\n",
           '  <zone id="jostle" routing="Cluster">\n']
    for i in range(nodes):
        bw, lat = links.get(i, (bandwidth, latency))
        h = f"{prefix}{i}"
        out.append(f'    <host id="{h}" speed="{_fmt(speed)}f" core="{cores}"/>\n'
                   f'    <link id="{h}_link" bandwidth="{_fmt(bw)}Bps" latency="{_fmt(lat)}s"'
                   ' sharing_policy="SPLITDUPLEX"/>\n'
                   f'    <host_link id="{h}" up="{h}_link_UP" down="{h}_link_DOWN"/>\n')
    out.append(f'    <backbone id="jostle_backbone" bandwidth="{_fmt(bandwidth * nodes)}Bps"'
               ' latency="0s"/>\n  </zone>\n</platform>\n')
    return "".join(out)


def hostfile_text(nodes: int, prefix: str = "node-") -> str:
    return "".join(f"{prefix}{i}\n" for i in range(nodes))


def write_platform(directory, nodes: int, bandwidth: float, latency: float, speed: float,
                   cores: int = 1, links=None, tag: str = "", write: bool = True):
    """Writes <dir>/platform-<N><TAG>.xml and hostfile-<N>; returns (platform, hostfile) paths
    (only the paths when not WRITE: a dry run writes nothing)."""
    d = Path(directory)
    plat, hosts = d / f"platform-{nodes}{tag}.xml", d / f"hostfile-{nodes}"
    if not write:
        return plat, hosts
    d.mkdir(parents=True, exist_ok=True)
    plat.write_text(platform_xml(nodes, bandwidth, latency, speed, cores=cores, links=links))
    hosts.write_text(hostfile_text(nodes))
    return plat, hosts


def smpi_flags(poll_cost: float = 1e-7) -> list:
    """The --cfg options of every simulated run (see the module docstring)."""
    if not (poll_cost > 0 and math.isfinite(poll_cost)):
        raise UsageError(f"poll cost {poll_cost} is not allowed; expected seconds > 0")
    cfg = [*SMPI_CONFIG, f"smpi/iprobe:{_fmt(poll_cost)}", f"smpi/test:{_fmt(poll_cost)}"]
    return [f"--cfg={c}" for c in cfg]


def find_sim_bench(explicit=None) -> Path:
    """The SimGrid build of jostle-bench: --bench PATH, else build/simgrid/ of the checkout."""
    if explicit:
        p = Path(explicit)
        if not p.is_file():
            raise UsageError(f"--bench '{p}' is not a file")
        return p.absolute()
    for base in dict.fromkeys(x for x in (repo_root(), Path.cwd()) if x):
        p = base / "build" / "simgrid" / "jostle-bench"
        if p.is_file():
            return p
    raise JostleError("cannot find the SimGrid build of jostle-bench (build/simgrid/jostle-bench); "
                      "`make build` makes it when smpicc is installed, or pass --bench PATH")


def _check_platform(path: Path, speed: float, cores: int, bw: float, lat: float):
    """Refuses to resume from a complete run made on another platform (its records' "simulated"
    object: a generated cluster's route is two links, so twice their latency)."""
    from ..records.results import load_run
    if not path.exists():
        return
    sim = load_run(path).meta.get("simulated") or {}
    want = {"host_speed_flops": speed, "host_cores": cores, "route_bandwidth_Bps": bw,
            "route_latency_s": 2 * lat}
    got = {k: sim.get(k, 1 if k == "host_cores" else None) for k in want}
    if any(got[k] is not None and not math.isclose(got[k], v, rel_tol=1e-6)
           for k, v in want.items()):
        raise UsageError(f"{path} was simulated on another platform ({got}) than this campaign "
                         f"plans ({want}); use another --campaign, or move the file away")


@dataclass
class Sweep:
    """How a simulated campaign runs: its directory, the platform of every node count (a link's
    bandwidth and latency, a core's speed, cores per node, the simulated cost of a poll), the
    SimGrid build of jostle-bench, and the campaign's time-out, jobs side by side and output."""
    directory: Path
    bandwidth: str      # as SimGrid spells it: 10Gbps, 1.25GBps
    latency: str        # 1us
    speed: str          # 1Gf
    poll_cost: float    # seconds
    cores_per_node: int = 1
    bench: Optional[str] = None
    timeout: Optional[float] = None
    jobs: int = 1
    dry_run: bool = False
    quiet: bool = True
    noise: float = 0.0  # nodes' spread (node_links)
    seed: int = 1


def node_links(nodes: int, bandwidth: float, latency: float, sd: float, seed: int) -> dict:
    """{node: (bandwidth, latency)} of nodes that differ: each node's link bandwidth and latency
    times e^(SD·e), e a standard normal drawn once per node and quantity from SEED (the same
    draws as a scan's hardware, run/sim_fabric.py, for its node links)."""
    import numpy as np
    f = np.exp(sd * np.random.default_rng([seed, 1]).standard_normal((nodes, 4)))
    return {i: (bandwidth * f[i, 0], latency * f[i, 2]) for i in range(nodes)}


def plan_sweep(sweep: Sweep, benchmark: str, nodes: list, bench_args: list,
               seconds_per_node: float, variants=None) -> tuple:
    """(runs, launcher of each run) of the simulated campaign of one benchmark: for each node
    count a platform and hostfile (written unless a dry run) and one smpirun run named
    BENCHMARK-sim-N (resumable: a completed count is not run again, and a resumed one must
    have been simulated on the same platform). variants: several launches per node count
    instead, each (suffix, bench_args, cfg): a run BENCHMARK-sim-N<suffix> with its own
    arguments and extra --cfg settings of smpirun (settings of a whole launch, such as
    smpi/bcast:ALG). The campaign itself ends in the commands' one tail."""
    from .campaign import Campaign, LaunchConfig, RunSpec
    bw, lat = parse_bandwidth(sweep.bandwidth), parse_latency(sweep.latency)
    speed = parse_speed(sweep.speed)
    if not sweep.dry_run and not shutil.which("smpirun"):
        raise JostleError("smpirun is not installed (SimGrid); --simulate needs it")
    bench = find_sim_bench(sweep.bench)
    camp_dir = Path(sweep.directory)
    flags = smpi_flags(sweep.poll_cost)
    runs, config_of = [], {}
    # nodes that differ: a platform and runs of their own, named by the spread and the seed
    tag = f"-noise{sweep.noise:g}-seed{sweep.seed}" if sweep.noise > 0 else ""
    for n in nodes:   # one platform per node count; a launcher prefix per variant
        links = node_links(n, bw, lat, sweep.noise, sweep.seed) if tag else None
        plat, hosts = write_platform(camp_dir / "platforms", n, bw, lat, speed,
                                     sweep.cores_per_node, links, tag, write=not sweep.dry_run)
        for suffix, vargs, cfg in variants or [("", bench_args, ())]:
            run = RunSpec(f"{benchmark}-sim-{n}{tag}{suffix}", benchmark, vargs, n, [],
                          sweep.timeout or 600 + seconds_per_node * n)
            more = shlex.join([*flags, *(f"--cfg={c}" for c in cfg),
                               "--log=root.thresh:warning", "--log=smpi_config.thresh:error"])
            runs.append(run)
            config_of[run.name] = LaunchConfig(bench, "smpirun", exe="smpirun", prefix=more,
                                               platform=str(plat), hostfile=str(hosts))
    camp = Campaign(camp_dir, runs)
    cores = sweep.cores_per_node
    for run in runs if not tag else ():   # the platform is not in the arguments: a resumed
        _check_platform(camp.output(run), speed, cores, bw, lat)   # run must match it too
    return runs, lambda run: config_of[run.name]
