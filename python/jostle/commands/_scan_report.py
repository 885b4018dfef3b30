"""`jostle scan`'s judgement and report (commands/scan.py and _scan_sim.py measure): the
runs read into a scan.Verdict, what is flagged measured again, and the output."""

import json
from pathlib import Path

from .. import figures
from ..analysis import baselines, check_site, machines, scan
from ..analysis.scan import classes as scan_classes
from ..analysis.scan import output as scan_output
from ..analysis.scan import working_sets as scan_sets
from ..analysis.scan.family import EFFECT_ALONE
from ..analysis.working_sets import WORKING_SETS
from ..errors import UsageError
from ..figures import shift as shift_figures
from ..records.results import load_run
from ..studies.scan import arrange_rounds
from . import _options
from . import baseline as baseline_cmd
from ._scan_runs import _write_atomic, fp_outputs, pairs_file, run_fingerprints

MIN_EFFECT = 0.1        # a node, link or cable this much worse than its reference, at least
MIN_EFFECT_FEW = EFFECT_ALONE   # below 5 nodes, where the effect alone decides


def min_effect(args, n) -> float:
    if args.min_effect is not None:
        return args.min_effect
    return MIN_EFFECT if n >= 5 else MIN_EFFECT_FEW


def classes(args, hosts):
    """{host: class} from --groups or --site, None without either."""
    if args.groups:
        return scan_classes.classes_of(hosts, args.groups)
    path = _options.given(args, "site")[0]
    if path:
        site = check_site.load(path)
        groups = {name: cls.hosts for name, cls in site.classes.items()}
        return scan_classes.classes_of(hosts, groups, f"--site '{path}'")
    return None


def confirm(args, camp_dir, hosts, config_of, progress, verdict, extra, dead, measure,
            fingerprint=None) -> list:
    """Measure again what was flagged and keep a finding only when the second measurement
    flags it again on the same metric (its evidence: both): the flagged nodes' fingerprints
    (every node at once), and the links behind a node, a cable or a link, in rounds of at
    most half as many links at once as the first pass (contention taken away, as ClusterKit
    does). A node of a shared machine can be slow for a moment; a bad one stays bad.
    FINGERPRINT: hosts -> their node values, instead of running the fingerprints (simulated)."""
    again = sorted({t.where for f in verdict.findings for t in f.tests
                    if t.kind == "node" and not t.links})
    values2, files, out = None, {}, ""
    if again and fingerprint is not None:
        values2 = fingerprint(again)
    elif again and args.parts != "links":
        # with the working sets of its first measurement, judged against the first pass's
        sets = {h: scan_sets.of_row(verdict.table.loc[h], WORKING_SETS) for h in again
                if h in verdict.table.index}
        lost = run_fingerprints(args, camp_dir, again, config_of, progress, "-again", sets)
        dead.update(lost)
        files = fp_outputs(args, camp_dir, [h for h in again if h not in lost], "-again")
        values2 = node_table(files, [h for h in again if h not in lost])
    links2 = None
    rounds = again_rounds(verdict, extra["link_hosts"])
    if rounds and extra.get("link_run") is not None:
        path = pairs_file(camp_dir, rounds)
        out = measure(path, len({q for q, _, _ in rounds}))
        if out is not None:
            run2 = load_run(out)
            links2 = scan.link_values(run2, extra["link_hosts"])
    n = len(extra["link_hosts"]) or len(hosts)
    kept = scan.second_pass(verdict, args.fdr, min_effect(args, n), args.threshold, values2,
                            links2, files, out or "")
    for h in sorted(dead):   # flagged, then lost when measured again: unreachable, with both
        first = next((f for f in verdict.findings if f.kind == "node" and f.where == h), None)
        if first is not None:
            extra.setdefault("lost_evidence", {})[h] = first.evidence
    return kept


AGAIN_PER_TEST = 64   # links of one node or cable measured again, at most


def again_rounds(verdict, link_hosts) -> list:
    """The links behind the findings, as (round, src rank, dst rank) in rounds of at most half
    as many links at once as the first pass had (every rank sent and received once a round)."""
    rank = {h: i for i, h in enumerate(link_hosts)}
    links = []
    for t in [t for f in verdict.findings for t in f.tests] + verdict.screened:
        for s, d in t.links[:AGAIN_PER_TEST]:
            if s in rank and d in rank and (rank[s], rank[d]) not in links:
                links.append((rank[s], rank[d]))
    return arrange_rounds(links, max(1, len(link_hosts) // 2)) if links else []


# ---------------------------------------------------------------- output

def node_table(fp_files, hosts):
    runs_by_host = {}
    for (h, bench), path in fp_files.items():
        runs_by_host.setdefault(h, {})[bench] = load_run(path)
    return scan.node_values({h: runs_by_host.get(h, {}) for h in hosts})


def analyse(args, hosts, fp_files, link_file, dead, fabric=None, values=None) -> tuple:
    """(scan.Verdict, {link_run, link_hosts, notes}) of the measured runs (VALUES: the
    nodes' fingerprint values when not measured: a simulated scan's)."""
    runs_by_host = {}
    for (h, bench), path in fp_files.items():
        runs_by_host.setdefault(h, {})[bench] = load_run(path)
    alive = [h for h in hosts if h not in dead]
    if values is None:
        values = scan.node_values({h: runs_by_host.get(h, {}) for h in alive})
    links, link_run_, link_hosts = None, None, alive
    if link_file is not None:
        link_run_ = load_run(link_file)
        link_hosts = (link_run_.launch or {}).get("hosts") or alive
        links = scan.link_values(link_run_, link_hosts)
    base, against, old = baseline_of(args, runs_by_host) or (None, "", [])
    verdict = scan.judge(values, {k: str(v) for k, v in fp_files.items()}, args.fdr,
                         min_effect(args, len(alive)), args.threshold, links, link_hosts,
                         str(link_file or ""),
                         None if args.link_metrics == "all" else (args.link_metrics,), fabric,
                         base, against, classes=getattr(args, "classes", None))
    crowded = sorted(h for h, runs in runs_by_host.items()
                     if h not in dead and scan.oversubscribed(runs.get("contention")))
    notes = [f"latency_under_load and bandwidth_under_load not judged on {', '.join(crowded)}: "
             "oversubscribed (more bound threads than cores: under load, a compute thread "
             "shares the communicating thread's core)"] if crowded else []
    return verdict, {"link_run": link_run_, "link_hosts": link_hosts,
                     "notes": notes + old + verdict.notes, "link_file": link_file}


def baseline_of(args, runs_by_host) -> tuple:
    """(baseline_values, name, notes) of --baseline for the machine the fingerprints ran on
    (notes: a baseline saved before it kept its working sets, said once); () with no
    --baseline or nothing measured."""
    run = next((r for runs in runs_by_host.values() for r in runs.values()), None)
    if not args.baseline or run is None:
        return ()
    key = machines.machine_key(machines.machine_facts(run.meta))
    entry, label = baseline_cmd.entry_for(args.baseline, baseline_cmd.folder(args), key)
    points = baselines.from_records(entry, label)
    base = scan.baseline_values(points)
    if base.empty:
        raise UsageError(f"--baseline '{args.baseline}': its entry for this machine holds no "
                         "scan fingerprint (fp-… runs); keep a scan's folder: `jostle baseline "
                         f"save results/scan --name {args.baseline}`")
    old = [] if points.sets is not None else [
        f"baseline {args.baseline} was saved before baselines kept their working sets "
        f"({', '.join(WORKING_SETS)}): every node judged against all its nodes, as before "
        f"(save it again to compare only like with like)"]
    return base, args.baseline, old


def report(args, camp_dir, hosts, verdict, findings, extra, dead, elapsed) -> int:
    suspects = scan.rank(dead, scan.hold_back(findings, verdict))
    for s in suspects:
        if s.kind == "unreachable" and s.where in extra.get("lost_evidence", {}):
            s.evidence = extra["lost_evidence"][s.where] + s.evidence
    figs = []
    if extra["link_run"] is not None:
        figs = figures.write(shift_figures.build([extra["link_run"]]), camp_dir / "figures")
    if args.drain_script:
        _write_atomic(Path(args.drain_script),
                      "#!/bin/sh\n# written by jostle scan; review before running\n"
                      + "".join(line + "\n" for line in scan.drain_lines(suspects)))
    n = len(extra["link_hosts"]) or len(hosts)
    doc = {"schema": 1, "campaign": str(camp_dir), "hosts": hosts, "elapsed_s": round(elapsed, 1),
           "fdr": args.fdr, "threshold": args.threshold, "min_effect": min_effect(args, n),
           "tests": len(verdict.tests), "baseline": getattr(args, "baseline", None),
           "topology": args.topology_conf,
           "unreachable": sorted(dead), "nodes": scan_output.nodes_json(verdict.table, dead,
                                                                   verdict.skipped),
           "links": [] if verdict.links is None else scan_output.links_json(verdict.links),
           "suspects": [s.to_dict(i + 1) for i, s in enumerate(suspects)],
           "figures": [str(p) for p in figs if str(p).endswith(".png")],
           "notes": extra.get("notes", [])}
    _write_atomic(camp_dir / "scan.json", json.dumps(doc, indent=1) + "\n")
    if args.format == "json":
        print(json.dumps(doc, indent=1))
    else:
        print(scan_output.text(doc, verdict.table, verdict.skipped))
    return 1 if suspects else 0
