"""Every headline number beside its physical bound (Hoefler and Belli, SC15, rule 11).

The bounds are measured or read on the machine of the runs:
- one core's copy bandwidth and the memory-latency floor: `jostle-bench --latency-matrix`
  (a one-core copy and a cache-bypassing pointer chase on the local NUMA node), saved by
  `jostle run`'s bounds step as CAMPAIGN/bounds.json;
- a NIC's link speed: the records' machine.nics[].link_gbps (hwloc and sysfs, GB/s).

An intra-node ping-pong bandwidth out of cache is bounded by one core's copy from memory (a
message is copied at least once; one that stays in cache may go faster, and the text says so);
an inter-node one by the link, and above it is an error of the measurement, said as such. A
latency is set against the memory-latency floor of an uncached access: small messages stay in
cache, so one below it is said, not flagged.
"""

import json
from pathlib import Path
from . import launch

FILE = "bounds.json"


def measure(bench, nbytes="64M") -> dict:
    """The local NUMA node's memory-latency floor (ns) and one core's copy bandwidth (GB/s)."""
    m = launch._query(Path(bench), "--latency-matrix", "--bytes", nbytes)
    lat = [row[i] for i, row in enumerate(m.get("latency_ns") or [])]
    bw = [row[i] for i, row in enumerate(m.get("bandwidth_gbs") or [])]
    return {"memory_latency_ns": min(lat) if lat else None,
            "copy_GBps": max(bw) if bw else None,
            "source": f"jostle-bench --latency-matrix --bytes {nbytes} (local node: pointer chase, "
                      "one-core copy)", "topology": m.get("topology")}


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


def bandwidth_text(gbps, inter, bounds) -> str:
    """' (62% of one core's copy, 12.1 GB/s)', or the bound unknown, or an error over it."""
    key, what = (("link_GBps", "the NIC's link") if inter else ("copy_GBps", "one core's copy"))
    bound = bounds.get(key)
    if not bound:
        how = ("link speed unknown: not in hwloc or sysfs" if inter else
               "one core's copy not measured here: `jostle run` measures it (bounds step)")
        return f" (bound: {how})"
    frac = gbps / bound
    if frac > 1 and inter:
        return (f" — ABOVE its bound, {what} {bound:.3g} GB/s ({frac:.0%}): an error of the "
                "measurement, not a success")
    if frac > 1:   # the copy was measured from memory; a message that fits a cache is faster
        return (f" ({frac:.0%} of {what} from memory, {bound:.3g} GB/s: above it only while "
                "the message stays in cache; out of cache it would be an error of the measurement)")
    return f" ({frac:.0%} of {what}, {bound:.3g} GB/s)"


def latency_text(us, bounds) -> str:
    floor = bounds.get("memory_latency_ns")
    if not floor:
        return " (memory-latency floor not measured here)"
    return (f" ({us * 1e3 / floor:.2g}× the memory-latency floor {floor:.3g} ns, an uncached "
            "access; small messages stay in cache, so they may go below it)")
