"""Advice from the model and the campaign's studies, each item with the numbers it rests on.

advise(runs, doc, check) returns {"headline": [...], "advice": [...], "limits": [...],
"model_error": {...}}; an item is {"topic", "text", "numbers"}. A question the records cannot
answer gets an item that says so and why, never a made-up number.
"""

import math

from . import bcast, bounds, contention, model, overlap
from ..records import repeats
from ..errors import JostleError
from ..sizes import human
from .. import lazy
np = lazy.module("numpy")

DROP = 0.10      # the threshold: a side losing more than 10% of its bandwidth alone


def _ci(xs):
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    return [float(np.percentile(xs, 2.5)), float(np.percentile(xs, 97.5))] if xs else None


def _first_drop(p, size, top, side) -> object:
    """The fewest cores at which SIDE (0 compute, 1 comm) loses more than DROP, else None."""
    for k in range(1, top + 1):
        t = model.predict_point(p, k, size)
        a = model.predict_point(p, k, size, "alone")
        if t[side] is not None and a[side] and t[side] < (1 - DROP) * a[side]:
            return k
    return None


def _oversubscribed(doc) -> str:
    """Why the campaign's contention runs cannot answer how many cores to keep, or ''."""
    for limit in doc.get("not_identifiable") or []:
        if "oversubscribed" in limit.get("reason", ""):
            return limit["reason"]
    return ""


def cores_advice(doc) -> list:
    out = []
    top = int(doc["machine"].get("cores") or 1)
    crowded = _oversubscribed(doc)
    for cfg in doc["configurations"]:
        if "raw" not in cfg or (cfg["comm_mem"], cfg["compute_mem"]) != ("near", "near"):
            continue
        raw = model._ints(cfg["raw"])
        if not raw["M"]:
            continue
        size = max(raw["M"])
        what = f"{cfg['kernel']}, {human(size)} messages"
        if raw["Cap"] is None:
            out.append({"topic": "compute cores", "text": f"{what}: not identifiable: "
                        f"{raw['why']}", "numbers": {}})
            continue
        for side, name in ((1, "communication"), (0, "computation")):
            k = _first_drop(raw, size, top, side)
            draws = []
            for q in map(model._ints, cfg["draws"]):
                if q["Cap"] is not None:
                    draws.append(_first_drop(q, size, top, side) or top + 1)
            lo, hi = (int(np.percentile(draws, 2.5)), int(np.percentile(draws, 97.5))) \
                if draws else (None, None)
            at = model.predict(cfg, k or top, size)
            side_n = "comm" if side else "compute"
            loss = at[side_n]["loss"]
            rng = f"{lo}..{hi if hi is not None and hi <= top else f'never (≤ {top})'}"
            # two ranks, each a communicating thread and k computing ones, one core each
            if crowded and (k is None or 2 * (k + 1) > top):
                text = (f"{what}: this machine cannot answer how many compute cores to keep: "
                        f"the runs that would tell were oversubscribed (its {top} core(s) are "
                        "fewer than the threads bound), so a loss of the "
                        f"{name} there measures threads sharing cores as much as memory "
                        "contention. A run that would answer: `jostle contention fig1 "
                        "--max-cores N` on a node with at least 2 × (N + 1) cores, one for "
                        "each rank's communicating thread and each of its N computing ones")
            elif k == 1:
                text = (f"{what}: {name} loses more than {DROP:.0%} already with 1 compute "
                        f"core per rank (at 1: −{loss:.0%}; 95% range of the threshold {rng} "
                        "cores): every computing core beside a communicating rank costs it; "
                        "keep the computation off the communicating ranks' node, or accept "
                        "the loss")
            elif k:
                text = (f"{what}: {name} loses more than {DROP:.0%} from {k} compute "
                        f"core(s) per rank on, so keep at most {k - 1} (at {k}: −{loss:.0%}; "
                        f"95% range of the threshold {rng} cores)")
            else:
                text = (f"{what}: {name} stays within {DROP:.0%} up to all {top} cores (at "
                        f"{top}: −{loss:.0%})")
            out.append({"topic": "compute cores", "text": text,
                        "numbers": {"side": side_n, "threshold_cores": k,
                                    "answerable": "cannot answer" not in text,
                                    "threshold_ci95": [lo, hi], "at": at}})
    return out


def placement_advice(doc, runs) -> list:
    nics = [n for n in doc["machine"].get("nics") or [] if n.get("numa") is not None]
    nic = (f"NIC {nics[0]['name']} is on NUMA node {nics[0]['numa']}" if nics
           else "no NIC of known locality")
    if doc["machine"]["numa_nodes"] <= 1:
        return [{"topic": "comm placement", "text": f"{nic}; this machine cannot answer where "
                 f"to place the communication: {model.ONE_NODE}, so near and far are the same "
                 "memory. A run that would answer: `jostle nuioa` on a node with two or more "
                 "NUMA nodes (and its NIC on one of them)",
                 "numbers": {"identifiable": False, "reason": model.ONE_NODE}}]
    try:
        near = model.configuration(doc, None, "near", "near")
        far = model.configuration(doc, None, "far", "near")
    except model.NotIdentifiable as e:
        return [{"topic": "comm placement", "text": f"{nic}; near/far: {e}", "numbers": {}}]
    a, b = model._ints(near["raw"]), model._ints(far["raw"])
    size = max(set(a["M"]) & set(b["M"]))
    gain = a["M"][size] / b["M"][size] - 1
    draws = [x["M"][size] / y["M"][size] - 1
             for x, y in zip(map(model._ints, near["draws"]), map(model._ints, far["draws"]))]
    return [{"topic": "comm placement",
             "text": f"{nic}: bind the communication thread to a core of that node and its "
                     f"buffers there; expected gain over the far node at {human(size)}: "
                     f"{gain:+.0%} (95%: {_fmt_ci(_ci(draws), '{:+.0%}')})",
             "numbers": {"nic_numa": nics[0]["numa"] if nics else None, "size": size,
                         "gain": gain, "gain_ci95": _ci(draws)}}]


def _fmt_ci(ci, f="{:.3g}") -> str:
    return f"{f.format(ci[0])}..{f.format(ci[1])}" if ci else "n/a"


def progress_advice(runs) -> list:
    df = overlap.frame([r for r in runs if r.benchmark == "overlap"])
    if df.empty or "progress" not in df:
        return [{"topic": "progress thread", "text": "no overlap runs in this campaign: run "
                 "`jostle overlap` to know whether a progress thread pays", "numbers": {}}]
    ov = df[df.metric == overlap.SHOWN]
    out = []
    for lib, d in ov.groupby("library"):
        base = d[d.progress == "none"]["median"]
        thr = d[d.progress == "thread"]
        if base.empty or thr.empty:
            out.append({"topic": "progress thread", "text": f"{lib}: overlap runs lack the "
                        "'none' or 'thread' progress mode to compare", "numbers": {}})
            continue
        by_core = thr.groupby("thread_core")["median"].mean()
        core = str(by_core.idxmax())
        gain = float(by_core.max() - base.mean())
        pays = gain > DROP
        spread = thr[thr.thread_core == core]["median"]
        out.append({"topic": "progress thread",
                    "text": f"{lib}: a progress thread {'pays' if pays else 'does not pay'}: "
                            f"mean overlap {base.mean():.2f} without (range {base.min():.2f}.."
                            f"{base.max():.2f}), {by_core.max():.2f} with it on the '{core}' core "
                            f"(range {spread.min():.2f}..{spread.max():.2f}; {len(thr)} points; "
                            "IMB's min formula)"
                            + (f"; take the '{core}' core" if pays else ""),
                    "numbers": {"library": lib, "overlap_none": float(base.mean()),
                                "overlap_thread": float(by_core.max()), "thread_core": core,
                                "by_core": {str(k): float(v) for k, v in by_core.items()},
                                "points": int(len(thr))}})
    return out


def bcast_advice(runs) -> list:
    df = bcast.times([r for r in runs if r.benchmark == "bcast"])
    if df.empty:
        return []
    out = []
    for size, d in df.groupby("size"):
        med = d.groupby("routing")["median"].median()
        best = med.drop("mpi_bcast", errors="ignore")
        if best.empty:
            continue
        r = str(best.idxmin())
        vs = f", MPI_Bcast {med['mpi_bcast']:.3g} µs" if "mpi_bcast" in med else ""
        out.append({"topic": "broadcast routing",
                    "text": f"{human(int(size))}: {r} ({best.min():.3g} µs median{vs})",
                    "numbers": {"size": int(size), "routing": r, "median_us": float(best.min()),
                                **({"mpi_bcast_us": float(med["mpi_bcast"])}
                                   if "mpi_bcast" in med else {})}})
    return out


def headline(obs, doc, limits=None) -> list:
    """Latency and bandwidth alone with their CI, each beside its bound (LIMITS: bounds.of),
    and the loss at full cores the model gives."""
    limits = limits or {}
    inter = len((doc.get("machine") or {}).get("hosts") or []) > 1
    out = []
    comm = obs[(obs.side == "comm") & (obs.phase == "alone")] if not obs.empty else obs
    for s, d in comm.groupby("size") if not comm.empty else []:
        v = float(d.value.median())
        if s < model.BANDWIDTH_BOUND:
            lat = s / (v * 1e9) * 1e6     # bandwidth = size / one-way time (records.md)
            out.append({"topic": "latency", "text": f"{int(s)} B one-way latency alone: "
                        f"{lat:.3g} µs (median of {len(d)} runs)"
                        + bounds.latency_text(lat, limits, inter=inter), "numbers": {"size": int(s),
                        "latency_us": lat, "runs": int(len(d))}})
        else:
            ci = [float(d.lo.min()), float(d.hi.max())]
            out.append({"topic": "bandwidth", "text": f"{human(int(s))} bandwidth alone: {v:.3g} "
                        f"GB/s (95% CI over runs {ci[0]:.3g}..{ci[1]:.3g})"
                        + bounds.bandwidth_text(v, inter, limits),
                        "numbers": {"size": int(s), "GBps": v, "ci95": ci}})
    out += _full_cores(doc)
    return flagged(out)


def _full_cores(doc) -> list:
    """What the model predicts with every core computing, at the largest message."""
    top = int(doc["machine"].get("cores") or 1)
    try:
        cfg = model.configuration(doc, None, "near", "near")
        size = max(model._ints(cfg["raw"])["M"])
        at = model.predict(cfg, top, size)
    except (model.NotIdentifiable, ValueError):
        return []
    parts = []
    for side in ("comm", "compute"):
        o = at[side]
        if o["loss"] is not None:
            ci = o["ci95"]
            rng = (f", 95% {1 - ci[1] / o['alone_GBps']:.0%}..{1 - ci[0] / o['alone_GBps']:.0%}"
                   if ci else "")
            parts.append(f"{side} −{o['loss']:.0%}{rng}")
    return [{"topic": "contention at full cores",
             "text": f"{cfg['kernel']} on all {top} cores with {human(size)} messages (model): "
                     + ", ".join(parts), "numbers": at}] if parts else []


def pingpong_headline(runs, limits=None) -> list:
    """Of each ping-pong run: the latency of its smallest message and its highest bandwidth,
    each with the 95% interval of its median, as the run measured them, and beside each its
    bound (bounds.py: LIMITS, else those of RUNS)."""
    limits = bounds.of(runs) if limits is None else limits
    out = []
    for r in runs:
        if r.benchmark != "pingpong" or r.points.empty or "size" not in r.points:
            continue
        p = r.points
        state = (f", buffers {p['buffers'].iloc[0]}" if "buffers" in p else "") + (
            f", {r.pages} pages" if r.pages != "system" else "")
        lat = p[(p.metric == "latency") & (p["size"] > 0)].sort_values("size")
        if not lat.empty:
            x = lat.iloc[0]
            out.append({"topic": "latency", "text": f"{int(x['size'])} B one-way latency: "
                        f"{x['median']:.3g} µs (95% CI {x['ci95_lo']:.3g}..{x['ci95_hi']:.3g}"
                        f"{state})"
                        + bounds.latency_text(float(x["median"]), limits, bounds.run_pair(r),
                                              len(set(r.hosts)) > 1),
                        "numbers": {"size": int(x["size"]), "latency_us":
                        float(x["median"]), "ci95": [float(x["ci95_lo"]), float(x["ci95_hi"])]}})
        bw = p[p.metric == "bandwidth"]
        if not bw.empty:
            x = bw.loc[bw["median"].idxmax()]
            llc = (r.meta.get("machine") or {}).get("llc_bytes")
            memory = (x.get("buffers") == "cold") or bool(llc and int(x["size"]) > llc)
            out.append({"topic": "bandwidth", "text": f"highest bandwidth: "
                        f"{x['median'] / 1e3:.3g} GB/s at {human(int(x['size']))} (95% CI "
                        f"{x['ci95_lo'] / 1e3:.3g}..{x['ci95_hi'] / 1e3:.3g}{state})"
                        + bounds.bandwidth_text(float(x["median"]) / 1e3, len(set(r.hosts)) > 1,
                                                limits, from_memory=memory),
                        "numbers": {"size": int(x["size"]), "GBps": float(x["median"]) / 1e3}})
    return flagged(out)


def flagged(items) -> list:
    """ITEMS with 'error' set where a number is above its bound (bounds.ERROR in the text): the
    page shows them as errors of the measurement."""
    return [{**h, "error": bounds.ERROR in h["text"]} for h in items]


def contention_headline(runs, limits=None) -> list:
    """Of each contention study, its run with the most computing cores at its largest size: the
    compute throughput of the node alone and together against the node's STREAM triad on all
    cores, the communication beside one core's copy or the link, and the latency of its
    smallest size beside the core-to-core latency of its cores (bounds.py)."""
    limits = bounds.of(runs) if limits is None else limits
    con = [r for r in runs if r.benchmark == "contention" and not r.points.empty]
    table = contention.degradation_table(con)
    if table.empty or "compute_cores" not in table:
        return []
    by_name = {r.name: r for r in con}
    out = []
    for study, part in table.groupby("study", sort=False):
        comp = part[part.metric == "compute_throughput"]
        comp = comp[comp["compute_cores"] > 0]
        if comp.empty:
            continue
        x = comp.sort_values(["compute_cores", "size"]).iloc[-1]
        run = by_name[x["run"]]
        threads, cores = bounds.node_threads(run), int(x["compute_cores"])
        share = (threads or cores) / cores     # rank 0's aggregate x its node's threads
        node = {s: float(x[s]) * share for s in ("alone", "together")}
        bound = bounds.compute_text(max(node.values()), limits, bounds.arrays_in_cache(run))
        out.append({"topic": "compute under contention", "text":
                    f"{study}, {x.get('kernel', '?')} on {cores} core(s) per rank, "
                    f"{human(int(x['size']))} messages: the node's {threads or cores} computing "
                    f"threads {node['alone']:.3g} GB/s alone, {node['together']:.3g} GB/s "
                    f"together (rank 0's throughput × {threads or cores}/{cores} of its threads; "
                    f"STREAM counting); the higher{bound}",
                    "numbers": {"study": study, "run": run.name, "cores": cores,
                                "node_threads": threads, "node_GBps": node,
                                "triad_GBps": limits.get("triad_GBps")}})
        comm = part[(part.run == x["run"])]
        inter = len(set(run.hosts)) > 1
        bw = comm[(comm.metric == "bandwidth") & (comm["size"] == comm["size"].max())]
        if not bw.empty:
            b = bw.iloc[0]
            llc = (run.meta.get("machine") or {}).get("llc_bytes")
            memory = b.get("buffers") == "cold" or bool(llc and int(b["size"]) > llc)
            g = {s: float(b[s]) / 1e3 for s in ("alone", "together")}
            out.append({"topic": "communication under contention", "text":
                        f"{study}, {human(int(b['size']))} messages beside {cores} computing "
                        f"core(s) per rank: {g['alone']:.3g} GB/s alone, {g['together']:.3g} "
                        f"GB/s together; the higher"
                        + bounds.bandwidth_text(max(g.values()), inter, limits, memory),
                        "numbers": {"study": study, "run": run.name, "GBps": g}})
        lat = comm[(comm.metric == "latency") & (comm["size"] == comm["size"].min())]
        if not lat.empty and int(lat.iloc[0]["size"]) < contention.LATENCY_BELOW:
            t = lat.iloc[0]
            out.append({"topic": "latency under contention", "text":
                        f"{study}, {int(t['size'])} B one-way latency beside {cores} computing "
                        f"core(s) per rank: {t['alone']:.3g} µs alone, {t['together']:.3g} µs "
                        "together" + bounds.latency_text(float(t["together"]), limits,
                                                         bounds.run_pair(run), inter),
                        "numbers": {"study": study, "run": run.name,
                                    "latency_us": {"alone": float(t["alone"]),
                                                   "together": float(t["together"])}}})
    return flagged(out)


REACH = 0.90    # the share of the node's aggregate bandwidth that counts as reached


def _talkers(runs, load):
    """{(ranks, threads each): (median, ci95_lo, ci95_hi)} of the aggregate bandwidth of the
    runs with --pairs/--comm-threads: alone, the best size of a pingpong run; under load, the
    together phase of a contention run at its largest size and most computing cores (its
    bandwidth is one flow's: x flows)."""
    out, rank = {}, {}   # rank: (computing cores, median) of what out holds, the larger wins
    for r in runs:
        flows, p = r.meta.get("flows"), r.points
        if not flows or p.empty or "size" not in p:
            continue
        key = (2 * flows["pairs"], max(flows["comm_threads"], 1))
        if load and r.benchmark == "contention" and "phase" in p:
            bw = p[(p.metric == "bandwidth") & (p.phase == "together")]
            bw = bw[bw["size"] == bw["size"].max()]
            scale = flows["flows"]
        elif not load and r.benchmark == "pingpong":
            bw, scale = p[p.metric == "bandwidth"], 1
        else:
            continue
        if bw.empty:
            continue
        x = bw.loc[bw["median"].idxmax()]
        got = tuple(scale * float(x[c]) for c in ("median", "ci95_lo", "ci95_hi"))
        order = (int(x["compute_cores"]) if load else 0, got[0])
        if key not in out or order > rank[key]:
            out[key], rank[key] = got, order
    return out


def talkers_advice(runs) -> list:
    """The fewest ranks x threads that talk reaching REACH of the node's aggregate bandwidth
    (the most any count reached), alone and under load, with the interval of that count: from
    the first whose interval's top reaches REACH x the best's bottom to the first whose bottom
    reaches REACH x the best's top."""
    items = []
    for load, where in ((False, "alone (pingpong --pairs/--comm-threads)"),
                        (True, "under load (contention --pairs/--comm-threads, together, most "
                               "computing cores)")):
        got = _talkers(runs, load)
        if len(got) < 2:
            if got:
                items.append({"topic": "ranks × threads that talk", "text": f"{where}: one count "
                              "of talking ranks × threads only; run several (--pairs 1,2,4)",
                              "numbers": {}})
            continue
        order = sorted(got, key=lambda k: (k[0] * k[1], k))
        best = max(got, key=lambda k: got[k][0])
        need, lo, hi = (REACH * got[best][0], REACH * got[best][1], REACH * got[best][2])
        first = next(k for k in order if got[k][0] >= need)
        early = next((k for k in order if got[k][2] >= lo), first)
        late = next((k for k in order if got[k][1] >= hi), None)
        name = "{} ranks × {} thread(s)".format
        items.append({
            "topic": "ranks × threads that talk",
            "text": f"{where}: {name(*first)} reach {REACH:.0%} of the node's aggregate "
                    f"{got[best][0] / 1e3:.3g} GB/s ({name(*best)}); interval {name(*early)} .. "
                    f"{name(*late) if late else 'not reached within the counts measured'}",
            "numbers": {"load": load, "ranks": first[0], "threads": first[1],
                        "aggregate_GBps": got[best][0] / 1e3,
                        "interval": [list(early), list(late) if late else None],
                        "measured": {f"{k[0]}x{k[1]}": got[k][0] / 1e3 for k in order}}})
    return items


GAIN = 1.10    # a kind of pages worth advising: 10% more bandwidth, interval and all


def pages_advice(runs) -> list:
    """Huge pages against the system's (or base) pages, from ping-pong runs that differ only by
    --pages, the K jobs of each (--runs K) pooled: at each size measured by both, the ratio of
    the bandwidths' medians and its interval (the huge side's 95% CI over the other's, ends
    crossed; pooled, each spans its jobs); advised where an interval's bottom reaches GAIN,
    with the largest gain."""
    groups = {}
    for r in repeats.pool(runs):
        p = r.points
        if r.benchmark != "pingpong" or p.empty or "size" not in p or r.meta.get("flows"):
            continue
        bw = p[p.metric == "bandwidth"]
        if bw.empty:
            continue
        key = (r.meta.get("mpi_library"), tuple(sorted(set(r.hosts))),
               str(bw["mode"].iloc[0]) if "mode" in bw else "",
               str(bw["buffers"].iloc[0]) if "buffers" in bw else "")
        groups.setdefault(key, {})[r.pages] = bw.groupby("size")[
            ["median", "ci95_lo", "ci95_hi"]].median()
    items = []
    for (_, hosts, mode, _), kinds in groups.items():
        other = next((k for k in ("system", "base") if k in kinds), None)
        if "huge" not in kinds or other is None:
            continue
        h, o = kinds["huge"], kinds[other]
        both = h.index.intersection(o.index)
        if both.empty:
            continue
        ratio = h.loc[both, "median"] / o.loc[both, "median"]
        low = h.loc[both, "ci95_lo"] / o.loc[both, "ci95_hi"]
        high = h.loc[both, "ci95_hi"] / o.loc[both, "ci95_lo"]
        where = "inter-node" if len(hosts) > 1 else "intra-node"
        gained = low[low >= GAIN]
        if gained.empty:
            items.append({"topic": "huge pages", "text": f"{where} {mode}: huge pages gained "
                          f"no {GAIN - 1:.0%} at any size measured (largest ratio "
                          f"{ratio.max():.2f}× at {human(int(ratio.idxmax()))})",
                          "numbers": {"ratio_by_size": {int(s): float(v)
                                                        for s, v in ratio.items()}}})
            continue
        top = int(ratio.idxmax())
        items.append({
            "topic": "huge pages",
            "text": f"{where} {mode}: huge pages (--pages huge against {other}) raise the "
                    f"bandwidth {ratio[top]:.2f}× at {human(top)} (95% interval "
                    f"{low[top]:.2f}..{high[top]:.2f}; {o.loc[top, 'median'] / 1e3:.3g} → "
                    f"{h.loc[top, 'median'] / 1e3:.3g} GB/s), at least {GAIN:.2f}× at "
                    f"{len(gained)} of {len(both)} sizes, the first "
                    f"{human(int(gained.index.min()))}: put the communication buffers on "
                    "2 MiB pages (a 2 MiB-aligned buffer and madvise(MADV_HUGEPAGE), or THP "
                    "'always')",
            "numbers": {"size": top, "ratio": float(ratio[top]),
                        "interval": [float(low[top]), float(high[top])],
                        "from_size": int(gained.index.min()),
                        "ratio_by_size": {int(s): float(v) for s, v in ratio.items()}}})
    return items


def advise(runs, doc=None, check=None) -> dict:
    """Everything the page and `jostle advise` say; DOC and CHECK: the model and its errors."""
    obs = model.observations(runs)
    items = []
    if doc is not None:
        items += cores_advice(doc) + placement_advice(doc, runs)
    items += (progress_advice(runs) + bcast_advice(runs) + talkers_advice(runs)
              + pages_advice(runs))
    limits = bounds.of(runs)
    return {"headline": pingpong_headline(runs, limits) + contention_headline(runs, limits)
            + (headline(obs, doc, limits) if doc is not None else []),
            "advice": items, "limits": (doc or {}).get("not_identifiable", []),
            "model_error": check or {}, "campaign": (doc or {}).get("campaign"),
            "machine": (doc or {}).get("machine")}


def for_runs(runs, campaign) -> object:
    """advise() of RUNS with the model fitted on them where they allow it; None: nothing to say."""
    con = [r for r in runs if r.benchmark == "contention"]
    doc = check = None
    if con:
        try:
            doc = model.document(con, campaign, draws=50)   # fewer draws: a page, not a fit
            check = model.errors(model.check(model.observations(con)))
        except (model.NotIdentifiable, JostleError):
            doc = check = None
    out = advise(runs, doc, check)
    return out if out["advice"] or out["headline"] else None
