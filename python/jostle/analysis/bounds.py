"""Every headline number beside its physical bound (Hoefler and Belli, SC15, rule 11).

The bounds are measured or read on the machine of the runs:
- one core's copy bandwidth and the memory-latency floor: `jostle-bench --latency-matrix`
  (a one-core copy and a cache-bypassing pointer chase on the local NUMA node), and the node's
  STREAM triad on all cores at once: `jostle-bench --stream`; both saved by `jostle run`'s
  bounds step as CAMPAIGN/bounds.json;
- a NIC's link speed: the records' machine.nics[].link_gbps (hwloc and sysfs, GB/s).

An intra-node ping-pong bandwidth is bounded by one core's copy from memory (a message is
copied at least once, by one core). The copy's bandwidth is in STREAM's counting (each byte
read and written), so one core copies at most half as many message bytes per second (3/4 with
the streaming stores a library's memcpy may use): the bound is loose by 1.3-2x, never tight
enough to call a right number wrong. A message that stays in cache may go faster,
and the text says so; one from memory (larger than the last-level cache, or cold buffers)
above it is an error of the measurement, said as such. An inter-node bandwidth is
bounded by the link. A contention run's compute throughput, summed over the node's computing
threads, is bounded by the node's triad on all cores (the same STREAM counting), unless its
arrays fit the caches. A latency is set against the memory-latency floor of an uncached
access: small messages stay in cache, so one below it is said, not flagged.
"""

import json
from pathlib import Path
from ..run import bench_query
from ..errors import JostleError

FILE = "bounds.json"
ERROR = "an error of the measurement, not a success"


def measure(bench, nbytes="64M") -> dict:
    """The local NUMA node's memory-latency floor (ns), one core's copy bandwidth and the
    node's triad on all cores (GB/s, STREAM counting)."""
    m = bench_query._query(Path(bench), "--latency-matrix", "--bytes", nbytes)
    lat = [row[i] for i, row in enumerate(m.get("latency_ns") or [])]
    bw = [row[i] for i, row in enumerate(m.get("bandwidth_gbs") or [])]
    found = {"memory_latency_ns": min(lat) if lat else None,
             "copy_GBps": max(bw) if bw else None,
             "source": f"jostle-bench --latency-matrix --bytes {nbytes} (local node: pointer "
                       "chase, one-core copy)", "topology": m.get("topology")}
    try:   # a bench built before --stream: the triad is said unknown, the rest stands
        t = bench_query._query(Path(bench), "--stream")
        found.update(triad_GBps=t.get("GBps"), triad_threads=t.get("threads"),
                     triad_source=f"jostle-bench --stream: the triad on all {t.get('threads')} "
                                  f"cores at once, {t.get('bytes_per_thread', 0) >> 20} MiB of "
                                  f"arrays each, best of {t.get('rounds')} rounds")
    except JostleError as e:
        found.update(triad_GBps=None, triad_source=f"not measured: {e}")
    return found


def save(directory, found: dict):
    Path(directory, FILE).write_text(json.dumps(found, indent=1) + "\n")


def saved(runs) -> dict:
    """The bounds.json of the campaign folders of RUNS (the first found), else {}."""
    for d in dict.fromkeys(Path(r.path).parent for r in runs):
        try:
            return json.loads((d / FILE).read_text())
        except (OSError, ValueError):
            continue
    return {}


def of(runs) -> dict:
    """Every bound known for RUNS: copy_GBps, memory_latency_ns, link_GBps."""
    b = dict(saved(runs))
    links = [n.get("link_gbps") for r in runs for n in (r.meta.get("machine") or {}).get("nics") or []]
    links = [x for x in links if isinstance(x, (int, float)) and x > 0]
    b["link_GBps"] = max(links) if links else None
    return b


def node_threads(run) -> int:
    """Compute threads on the node of rank 0 (every rank's binding on the same host)."""
    hosts = run.hosts or []
    total = 0
    for rank, b in (run.meta.get("binding") or {}).items():
        if str(rank).isdigit() and int(rank) < len(hosts) and hosts[int(rank)] == hosts[0]:
            total += len((b or {}).get("compute") or [])
    return total


def arrays_in_cache(run) -> bool:
    """Whether the node's compute arrays together fit its last-level caches (then a triad may
    beat the bound from memory)."""
    kernel = run.meta.get("kernel") if isinstance(run.meta.get("kernel"), dict) else {}
    llc = (run.meta.get("machine") or {}).get("llc_bytes")
    per = kernel.get("array_bytes")
    return bool(llc and per and per * max(node_threads(run), 1) <= llc)


def _over(frac, what, bound, unit="GB/s") -> str:
    return f" — ABOVE its bound, {what} {bound:.3g} {unit} ({frac:.0%}): {ERROR}"


def bandwidth_text(gbps, inter, bounds, from_memory=False) -> str:
    """' (62% of one core's copy, 12.1 GB/s)', or the bound unknown, or an error over it.
    FROM_MEMORY: the message cannot stay in cache (larger than the last-level cache, or cold
    buffers), so an intra-node one above one core's copy is an error too."""
    if inter:
        bound, what = bounds.get("link_GBps"), "the NIC's link"
        how = "link speed unknown: not in hwloc or sysfs"
    else:
        bound, what = bounds.get("copy_GBps"), "one core's copy"
        how = "one core's copy not measured here: `jostle run` measures it (bounds step)"
    if not bound:
        return f" (bound: {how})"
    frac = gbps / bound
    if frac > 1 and (inter or from_memory):
        return _over(frac, what, bound)
    if frac > 1:   # the copy was measured from memory; a message that fits a cache is faster
        return (f" ({frac:.0%} of {what} from memory, {bound:.3g} GB/s: above it only while "
                "the message stays in cache; from memory it would be an error of the "
                "measurement)")
    return f" ({frac:.0%} of {what}, {bound:.3g} GB/s)"


def compute_text(node_gbps, bounds, in_cache=False) -> str:
    """A node's compute throughput (STREAM counting) against its triad on all cores."""
    triad = bounds.get("triad_GBps")
    if not triad:
        return (" (bound: the node's STREAM triad on all cores not measured here: `jostle run` "
                "measures it, bounds step)")
    frac = node_gbps / triad
    what = f"the node's STREAM triad on all {bounds.get('triad_threads') or '?'} cores"
    if frac > 1 and not in_cache:
        return _over(frac, what, triad)
    if frac > 1:
        return (f" ({frac:.0%} of {what}, {triad:.3g} GB/s: the arrays fit the caches, so "
                "above it is possible)")
    return f" ({frac:.0%} of {what}, {triad:.3g} GB/s)"


def latency_text(us, bounds) -> str:
    floor = bounds.get("memory_latency_ns")
    if not floor:
        return " (memory-latency floor not measured here)"
    return (f" ({us * 1e3 / floor:.2g}× the memory-latency floor {floor:.3g} ns, an uncached "
            "access; small messages stay in cache, so they may go below it)")
