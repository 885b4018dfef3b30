"""`jostle scan`'s output: the nodes and links of scan.json, and the text a person reads."""

from __future__ import annotations


from .fingerprint import FINGERPRINT


def _num(x):
    return None if x is None or x != x or x in (float("inf"), float("-inf")) else round(float(x), 4)


def nodes_json(table, dead, skipped=None) -> list:
    """Each node's values and z, and what is not judged and why (SKIPPED: {host: {METRIC or
    METRIC_zb: why}}, scan.Verdict.skipped)."""
    skipped = skipped or {}
    out = [{"host": h, "status": "ok", **{k: _num(v) for k, v in row.items()},
            **({"not_judged": skipped[h]} if skipped.get(h) else {})}
           for h, row in table.iterrows()]
    return out + [{"host": h, "status": "unreachable"} for h in sorted(dead)]


def links_json(links) -> list:
    return [{"src": r.src, "dst": r.dst, "latency_us": _num(r.latency),
             "bandwidth_MBps": _num(r.bandwidth), "latency_z": _num(r.latency_z),
             "bandwidth_z": _num(r.bandwidth_z),
             "flagged": bool(r.latency_flag or r.bandwidth_flag)} for r in links.itertuples()]


def _text_evidence(e) -> str:
    """One line of a suspect's evidence: the value to 4 figures beside the median it is judged
    against, how many times it, z and p (scan.json keeps the full numbers)."""
    if e["value"] is None:
        return f"{e['label']} [{e['run']}]"
    ref = "" if e.get("reference", "allocation") == "allocation" else e["reference"] + " "
    cross = f", {e['slow']} of the {e['pairs']} links across it slow" if "slow" in e else ""
    again = "measured again: " if e.get("pass") == 2 else ""
    times = f"{e['value'] / e['median']:.3g}× " if e["median"] else ""
    why = [f"z {e['z']:.1f}"] if e.get("z") is not None else []
    if e.get("p") is not None:
        why.append(f"p {e['p']:.2g}" if e["p"] > 0 else "p < 1e-300")
    why = f" ({', '.join(why)}{cross})" if why or cross else ""
    return (f"{again}{e['metric']} {e['value']:.4g} {e['unit']} = {times}the {ref}median "
            f"{e['median']:.4g}{why} [{e['run']}]")


def _cell(row, col, skipped) -> str:
    if row[col] != row[col]:
        return "-"
    why = "not judged" if col in skipped else f"z {row[col + '_z']:+.1f}"
    return f"{row[col]:.4g} ({why})"


def text(doc, table, skipped=None) -> str:
    """The scan's text: a line per node (each metric with its z, or 'not judged': its note
    says why), the suspects and their evidence, the figures and the notes."""
    cols = [m.name for m in FINGERPRINT]
    skipped = skipped or {}
    lines = [f"jostle scan: {len(doc['hosts'])} nodes, {len(doc['unreachable'])} unreachable, "
             f"{len(doc['suspects'])} suspect(s), {doc['elapsed_s']:.0f} s; {doc['campaign']}"]
    if not table.empty and table[cols].notna().any().any():
        lines.append("node".ljust(18) + "".join(c_[:19].rjust(21) for c_ in cols))
        for h, row in table.iterrows():
            lines.append(h[:17].ljust(18) + "".join(
                _cell(row, c_, skipped.get(h, {})).rjust(21) for c_ in cols))
    if doc["links"]:
        flagged = sum(x["flagged"] for x in doc["links"])
        lines.append(f"links: {len(doc['links'])} measured, {flagged} flagged")
    for s in doc["suspects"]:
        held = "" if s["drain"] or s["kind"] != "node" else " [not drained: selected at --fdr, " \
            "not at the family-wise level]"
        lines.append(f"  {s['rank']}. {s['kind']} {s['node'] or s['link'] or s['cable']}{held}:")
        lines += [f"       {_text_evidence(e)}" for e in s["evidence"]]
    if not doc["suspects"]:
        lines.append("nothing flagged")
    lines += [f"figure: {f}" for f in doc["figures"]] + [f"note: {n}" for n in doc["notes"]]
    return "\n".join(lines)
