"""Every headline number beside its physical bound (Hoefler and Belli, SC15, rule 11).

The bounds are measured (run/bound_probes.py) or read on the machine of the runs:
- one core's copy bandwidth: `jostle-bench --latency-matrix` (a one-core copy on the local
  NUMA node), and the node's STREAM triad on all cores at once: `jostle-bench --stream`;
- the core-to-core latency of the pairs of cores the ping-pong binds its ranks to:
  `jostle-bench c2c` (one cache line bounced between a thread on each core);
  all saved by `jostle run`'s bounds step as CAMPAIGN/bounds.json;
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
arrays fit the caches. An intra-node latency is bounded by the core-to-core latency of its
two cores (its flag or its data must cross between their caches at least once): one whose own
95% interval lies wholly below the bound's is an error of the measurement (the two are measured
at different moments, and where the intervals meet the difference is noise, not an error). The memory latency (a pointer chase) is
kept in bounds.json as a fact of the machine, never drawn as a bound: a message that stays in
cache goes below it.
"""

import json
import math
from pathlib import Path

FILE = "bounds.json"
ERROR = "an error of the measurement, not a success"


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


# The verdict words of the summary table (report, `jostle run`, report --format json).
WITHIN, ERROR_WORD, CACHE, NO_BOUND = "within bound", "ERROR", "in cache", "no bound"


def bound_row(value, bound, source, unit, past, error=False, cache=False) -> dict:
    """The bound columns of a summary row: BOUND (None: unknown, SOURCE says why) in UNIT, the
    ratio VALUE / BOUND, PAST: the value lies beyond it; ERROR: beyond it is an error of the
    measurement, CACHE: beyond it only while in cache."""
    if not bound:
        return {"bound": None, "bound_unit": unit, "source": source, "ratio": None,
                "verdict": NO_BOUND}
    verdict = WITHIN if not past else ERROR_WORD if error else CACHE if cache else WITHIN
    return {"bound": float(bound), "bound_unit": unit, "source": source,
            "ratio": float(value) / float(bound), "verdict": verdict}


def bandwidth_row(gbps, inter, bounds, from_memory=False) -> dict:
    """bandwidth_text's bound as summary columns."""
    if inter:
        bound, what = bounds.get("link_GBps"), "NIC link (hwloc, sysfs)"
    else:
        bound, what = bounds.get("copy_GBps"), "one core's copy (bounds step)"
    past = bool(bound) and gbps > bound
    return bound_row(gbps, bound, what if bound else "not measured here", "GB/s", past,
                     error=inter or from_memory, cache=not (inter or from_memory))


def compute_row(node_gbps, bounds, in_cache=False) -> dict:
    """compute_text's bound as summary columns."""
    triad = bounds.get("triad_GBps")
    what = f"triad on all {bounds.get('triad_threads') or '?'} cores (bounds step)"
    return bound_row(node_gbps, triad, what if triad else "not measured here", "GB/s",
                     bool(triad) and node_gbps > triad, error=not in_cache, cache=in_cache)


def latency_row(us, bounds, pair="", inter=False, us_hi=None) -> dict:
    """latency_text's bound as summary columns (the bound in µs, the ratio latency / bound)."""
    if inter:
        return bound_row(us, None, "inter-node: none measured", "µs", False)
    bound, what = c2c_bound(bounds, pair)
    if bound is None:
        return bound_row(us, None, "core-to-core latency not measured here", "µs", False)
    top = us if us_hi is None or math.isnan(us_hi) else max(us, float(us_hi))
    below = top * 1e3 < bound["ci95"][0]
    short = what.replace("the core-to-core latency of cores", "core-to-core, cores").replace(
        "the lowest core-to-core latency measured (cores", "lowest core-to-core (cores")
    return {**bound_row(us, bound["median"] / 1e3, short + " (c2c)", "µs", below, error=True),
            "bound_ci95": [x / 1e3 for x in bound["ci95"]]}


def run_pair(run) -> str:
    """'0:1': the cores rank 0's and rank 1's communicating threads were bound to (the
    record's binding), or '' when it does not say."""
    binding = run.meta.get("binding") or {}
    cores = [((binding.get(r) or {}).get("comm") or {}).get("core") for r in ("0", "1")]
    return f"{cores[0]}:{cores[1]}" if all(isinstance(c, int) and c >= 0 for c in cores) else ""


def c2c_bound(bounds, pair) -> tuple:
    """(the bound {"median", "ci95"}, what it is) for PAIR ('0:1'), either order; the lowest
    pair measured when PAIR was not; (None, why) when none was."""
    got = bounds.get("c2c_ns") or {}
    a, _, b = (pair or "").partition(":")
    for key in (pair, f"{b}:{a}"):
        if key and key in got:
            return got[key], f"the core-to-core latency of cores {key}"
    if got:
        key = min(got, key=lambda k: got[k]["median"])
        why = (f"the run's pair {pair} was not" if pair else
               "the run does not say which cores it used")
        return got[key], f"the lowest core-to-core latency measured (cores {key}; {why})"
    return None, ("core-to-core latency not measured here: `jostle run` measures it (bounds "
                  "step, jostle-bench c2c)")


def latency_text(us, bounds, pair="", inter=False, us_hi=None) -> str:
    """An intra-node one-way latency (µs; US_HI the top of its own 95% interval, where known)
    against the core-to-core latency of its cores: an error of the measurement when the
    latency's interval (its median alone, without one) lies below the bound's."""
    if inter:
        return " (inter-node: no bound measured for a latency across the network)"
    bound, what = c2c_bound(bounds, pair)
    if bound is None:
        return f" (bound: {what})"
    ns, (lo, hi) = us * 1e3, bound["ci95"]
    top = us if us_hi is None or math.isnan(us_hi) else max(us, float(us_hi))
    if top * 1e3 < lo:
        return (f" — BELOW its bound, {what}, {bound['median']:.3g} ns (95% {lo:.3g}..{hi:.3g}; "
                f"{ns / bound['median']:.2g}×): {ERROR}")
    return (f" ({ns / bound['median']:.2g}× {what}, {bound['median']:.3g} ns, 95% "
            f"{lo:.3g}..{hi:.3g}: the least a message between them can take)")
