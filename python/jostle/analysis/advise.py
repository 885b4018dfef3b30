"""Advice from the model and the campaign's studies, each item with the numbers it rests on.

advise(runs, doc, check) returns {"headline": [...], "advice": [...], "limits": [...],
"model_error": {...}}; an item is {"topic", "text", "numbers"}. A question the records cannot
answer gets an item that says so and why, never a made-up number.
"""

import math

from . import bcast, bounds, headline, model, overlap
from ..records import repeats
from ..errors import JostleError
from ..sizes import human
from .. import lazy
np = lazy.module("numpy")

DROP = 0.10      # the threshold: a side losing more than 10% of its bandwidth alone
LOO_LIMIT = 0.20  # the model's leave-one-out mean |error| past which it is not cited (model.md)
FEW_POINTS = 10   # fewer predicted points than this: the error itself is little evidence


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
        sides = []
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
                text = _crowded_text(what, top, name)
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
            sides.append({"topic": "compute cores", "text": text,
                          "numbers": {"side": side_n, "threshold_cores": k,
                                      "answerable": "cannot answer" not in text,
                                      "threshold_ci95": [lo, hi], "at": at}})
        if any(i["numbers"]["answerable"] for i in sides):
            out += sides
        else:   # one item for both: two paragraphs a word apart read as the advice twice
            both = _crowded_text(what, top, "communication or of the computation")
            out.append({**sides[0], "text": both, "numbers": {**sides[0]["numbers"],
                                                              "side": "both"}})
    return out


def _crowded_text(what, top, name) -> str:
    """Why an oversubscribed campaign cannot say how many compute cores to keep (NAME: the
    side whose loss it cannot read), and the run that would."""
    return (f"{what}: this machine cannot answer how many compute cores to keep: the runs that "
            f"would tell were oversubscribed (its {top} core(s) are fewer than the threads "
            f"bound), so a loss of the {name} there measures threads sharing cores as much as "
            "memory contention. A run that would answer: `jostle contention fig1 --max-cores N` "
            "on a node with at least 2 × (N + 1) cores, one for each rank's communicating thread "
            "and each of its N computing ones")


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


def judge(check, doc) -> dict:
    """Whether the model fits this machine well enough to be cited: its leave-one-out mean
    |error| (CHECK: model.errors) against LOO_LIMIT, and when it does not, the likely causes
    (DOC's oversubscribed runs, points it could not predict, too few points)."""
    mean = check.get("mean_abs_error")
    causes = []
    crowded = _oversubscribed(doc or {})
    if crowded:
        causes.append(f"oversubscribed runs: {crowded}")
    predicted, points = check.get("predicted") or 0, check.get("points") or 0
    if predicted < points:
        causes.append(f"{points - predicted} of {points} points could not be predicted "
                      "without themselves")
    if predicted < FEW_POINTS:
        causes.append(f"too few points ({predicted} predicted; at least {FEW_POINTS} wanted)")
    fits = mean is not None and mean <= LOO_LIMIT
    if not fits and not causes:
        causes.append("other work loading the machine, or memory the model does not describe "
                      "(docs/model.md, \"Limits\")")
    return {"fits": fits, "limit": LOO_LIMIT, "mean_abs_error": mean,
            "max_abs_error": check.get("max_abs_error"), "predicted": predicted,
            "points": points, "causes": [] if fits else causes}


def advise(runs, doc=None, check=None) -> dict:
    """Everything the page and `jostle advise` say; DOC and CHECK: the model and its errors.
    With CHECK, the model is judged first (judge): one that does not fit is not cited, neither
    in the advice nor in the headline's prediction at full cores."""
    obs = model.observations(runs)
    items = []
    fit = judge(check, doc) if doc is not None and check is not None else None
    if doc is not None and (fit is None or fit["fits"]):
        items += cores_advice(doc) + placement_advice(doc, runs)
    elif doc is not None:   # what does not rest on the model: the one-NUMA-node answer
        items += [i for i in placement_advice(doc, runs)
                  if i["numbers"].get("identifiable") is False]
    items += (progress_advice(runs) + bcast_advice(runs) + talkers_advice(runs)
              + pages_advice(runs))
    limits = bounds.of(runs)
    modelled = headline.model_headline(obs, doc, limits) if doc is not None else []
    if fit is not None and not fit["fits"]:
        modelled = [h for h in modelled if h["topic"] != "contention at full cores"]
    # the launches of one ping-pong setting (--runs K) as one row: the launch as the unit
    pingpong = repeats.pool([r for r in runs if r.benchmark == "pingpong"])
    return {"headline": headline.pingpong_headline(pingpong, limits)
            + headline.contention_headline(runs, limits) + modelled,
            "advice": items, "limits": (doc or {}).get("not_identifiable", []),
            "model_error": check or {}, "model_fit": fit,
            "campaign": (doc or {}).get("campaign"),
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
