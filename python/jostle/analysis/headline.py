"""What this machine shows: each headline number of the campaign (the ping-pong's latency and
bandwidth, each contention study's throughput and latency alone and together, the model's loss
at full cores) with its interval and beside its physical bound (bounds.py); a number past its
bound is flagged as an error of the measurement. An item is {"topic", "text", "numbers",
"error"}."""

from . import bounds, contention, model
from ..sizes import human


def model_headline(obs, doc, limits=None) -> list:
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
            slow = float(d.lo.min())       # the runs' lowest bandwidth: their longest latency
            out.append({"topic": "latency", "text": f"{int(s)} B one-way latency alone: "
                        f"{lat:.3g} µs (median of {len(d)} runs)"
                        + bounds.latency_text(lat, limits, inter=inter,
                                              us_hi=s / (slow * 1e9) * 1e6 if slow > 0 else None),
                        "numbers": {"size": int(s), "latency_us": lat, "runs": int(len(d))},
                        "row": row(f"{int(s)} B one-way latency alone (contention runs)", lat,
                                   "µs", None, bounds.latency_row(
                                       lat, limits, inter=inter, us_hi=s / (slow * 1e9) * 1e6
                                       if slow > 0 else None))})
        else:
            ci = [float(d.lo.min()), float(d.hi.max())]
            out.append({"topic": "bandwidth", "text": f"{human(int(s))} bandwidth alone: {v:.3g} "
                        f"GB/s (95% CI over runs {ci[0]:.3g}..{ci[1]:.3g})"
                        + bounds.bandwidth_text(v, inter, limits),
                        "numbers": {"size": int(s), "GBps": v, "ci95": ci},
                        "row": row(f"{human(int(s))} bandwidth alone (contention runs)", v,
                                   "GB/s", ci, bounds.bandwidth_row(v, inter, limits))})
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
                     + ", ".join(parts), "numbers": at,
             "row": row(f"loss on all {top} cores, {human(size)} messages (model)",
                        ", ".join(parts), "", None, bounds.bound_row(
                            0, None, "a prediction: no bound", "", False))}] if parts else []


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
                                              len(set(r.hosts)) > 1, float(x["ci95_hi"])),
                        "numbers": {"size": int(x["size"]), "latency_us":
                        float(x["median"]), "ci95": [float(x["ci95_lo"]), float(x["ci95_hi"])]},
                        "row": row(f"{int(x['size'])} B one-way latency ({r.name})",
                                   float(x["median"]), "µs",
                                   [float(x["ci95_lo"]), float(x["ci95_hi"])],
                                   bounds.latency_row(float(x["median"]), limits,
                                                      bounds.run_pair(r), len(set(r.hosts)) > 1,
                                                      float(x["ci95_hi"])))})
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
                        "numbers": {"size": int(x["size"]), "GBps": float(x["median"]) / 1e3},
                        "row": row(f"highest bandwidth, at {human(int(x['size']))} ({r.name})",
                                   float(x["median"]) / 1e3, "GB/s",
                                   [float(x["ci95_lo"]) / 1e3, float(x["ci95_hi"]) / 1e3],
                                   bounds.bandwidth_row(float(x["median"]) / 1e3,
                                                        len(set(r.hosts)) > 1, limits,
                                                        from_memory=memory))})
    return flagged(out)


def row(measure, value, unit, ci, bound, shown=None) -> dict:
    """A headline's row of the summary table: MEASURE, VALUE in UNIT (SHOWN: its text, where
    it is two numbers), CI its 95% interval or None, and its BOUND columns (bounds.*_row)."""
    num = isinstance(value, (int, float))
    return {"measure": measure, "value": float(value) if num else None, "unit": unit,
            "shown": shown or (f"{value:.3g}" if num else str(value)),
            "ci95": [float(c) for c in ci] if ci else None, **bound}


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
                                "triad_GBps": limits.get("triad_GBps")},
                    "row": row(f"node compute throughput, {x.get('kernel', '?')}, alone / "
                               f"together ({study})", max(node.values()), "GB/s", None,
                               bounds.compute_row(max(node.values()), limits,
                                                  bounds.arrays_in_cache(run)),
                               shown=f"{node['alone']:.3g} / {node['together']:.3g}")})
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
                        "numbers": {"study": study, "run": run.name, "GBps": g},
                        "row": row(f"{human(int(b['size']))} bandwidth alone / together "
                                   f"({study})", max(g.values()), "GB/s", None,
                                   bounds.bandwidth_row(max(g.values()), inter, limits, memory),
                                   shown=f"{g['alone']:.3g} / {g['together']:.3g}")})
        lat = comm[(comm.metric == "latency") & (comm["size"] == comm["size"].min())]
        if not lat.empty and int(lat.iloc[0]["size"]) < contention.LATENCY_BELOW:
            t = lat.iloc[0]
            out.append({"topic": "latency under contention", "text":
                        f"{study}, {int(t['size'])} B one-way latency beside {cores} computing "
                        f"core(s) per rank: {t['alone']:.3g} µs alone, {t['together']:.3g} µs "
                        "together" + bounds.latency_text(float(t["together"]), limits,
                                                         bounds.run_pair(run), inter,
                                                         t.get("together_hi")),
                        "numbers": {"study": study, "run": run.name,
                                    "latency_us": {"alone": float(t["alone"]),
                                                   "together": float(t["together"])}},
                        "row": row(f"{int(t['size'])} B latency alone / together ({study})",
                                   float(t["together"]), "µs", None,
                                   bounds.latency_row(float(t["together"]), limits,
                                                      bounds.run_pair(run), inter,
                                                      t.get("together_hi")),
                                   shown=f"{t['alone']:.3g} / {t['together']:.3g}")})
    return flagged(out)


COLUMNS = ("measure", "value", "95% interval", "bound", "bound's source", "ratio", "verdict")


def _amount(x, unit) -> str:
    """X in UNIT as the table shows it: a latency under 1 µs in ns."""
    if x is None:
        return ""
    return f"{x * 1e3:.3g} ns" if unit == "µs" and x < 1 else f"{x:.3g} {unit}".strip()


def summary_rows(items) -> list:
    """The summary table of headline ITEMS (those with a row), one dict of COLUMNS' text each,
    with 'error' where the number lies past its bound and 'text' the item's prose."""
    out = []
    for h in items:
        r = h.get("row")
        if not r:
            continue
        lo_hi = r["ci95"]
        out.append({"measure": r["measure"],
                    "value": f"{r['shown']} {r['unit']}".strip(),
                    "95% interval": f"{lo_hi[0]:.3g}..{lo_hi[1]:.3g}" if lo_hi else "",
                    "bound": _amount(r["bound"], r["bound_unit"]),
                    "bound's source": r["source"],
                    "ratio": f"{r['ratio']:.2g}×" if r["ratio"] is not None else "",
                    "verdict": r["verdict"], "error": bool(h.get("error")),
                    "text": h["text"]})
    return out


def summary_lines(items) -> list:
    """The summary table as plain text lines (`jostle run`'s closing lines), columns aligned."""
    rows = summary_rows(items)
    if not rows:
        return []
    cols = [c for c in COLUMNS if any(r[c] for r in rows)]
    width = {c: max(len(c), *(len(r[c]) for r in rows)) for c in cols}
    def line(vals):
        return "  ".join(v.ljust(width[c]) for c, v in zip(cols, vals)).rstrip()
    return [line(cols)] + [line([r[c] for c in cols]) for r in rows]
