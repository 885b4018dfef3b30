"""`jostle scan`: the slow node and the bad link of an allocation (docs/scan.md).

A campaign like every study: a fingerprint per node (every node at once, each measuring only
itself), then every link with mpiGraph's shift pattern, then each node and link against the
allocation's median (jostle.analysis.scan). A node that does not answer is named unreachable after its
run's time-out and the scan goes on without it; what was measured is kept, and the same command
resumes."""

import argparse
import json
import os
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

from .. import binary, figures
from ..analysis import baselines, comparison, scan
from ..run import launch, simgrid
from ..run.campaign import Campaign, LaunchConfig
from ..errors import JostleError, UsageError
from ..figures import shift as shift_figures
from ..run.progress import Progress
from ..records.results import load_run
from . import _common as c
from . import _simulation as simulation
from . import baseline as baseline_cmd
from ._scan_runs import (DEFAULT_MARGIN, FP_SIZES, _write_atomic, fingerprint_runs, fp_outputs,
                         link_run, per_host, run_fingerprints, run_links, time_bound)

ORDER = 45
EXAMPLES = """examples:
  salloc -N 16 jostle scan                          every node of the job, then its links
  jostle scan --hosts n1,n2,n3,n4 --budget 30       four hosts, 30 s of fingerprint each
  jostle scan --hostfile nodes.txt --format json    the figures and suspects as JSON
  jostle scan --drain-script drain.sh               scontrol lines for the flagged nodes
  jostle scan --dry-run --nodes 256                 the plan and its time bound for 256 nodes
  jostle scan --simulate --nodes 256 --inject link:7:bandwidth=0.5
                                                    the link part under SimGrid, one bad link

exit status: 0 nothing flagged, 1 a node or link flagged (or unreachable), 2 bad input."""


def load_sizes_type(text):
    from ..sizes import parse_sizes
    try:
        sizes = parse_sizes(text)
    except UsageError:
        sizes = []
    if len(sizes) != 2 or "," not in text:
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected two message sizes "
                                         "SMALL,LARGE, e.g. 4,64M")
    return text


def threshold_type(text):
    return c.positive_float(text)


def register(sub):
    p = sub.add_parser("scan", help="find the slow node and the bad link of an allocation",
                       description=__doc__.split("\n\n")[0], epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("the allocation (default: the SLURM job's nodes)")
    g.add_argument("--hosts", type=c.hosts_type, metavar="A,B,…", help="the nodes to scan")
    g.add_argument("--hostfile", metavar="FILE", help="the nodes to scan, one per line")
    m = p.add_argument_group("measuring")
    m.add_argument("--budget", type=c.positive_float, default=60.0, metavar="S",
                   help="seconds of fingerprint per node (default 60; every node at once)")
    m.add_argument("--round-time", type=c.positive_float, default=1.0, metavar="S",
                   help="seconds per round of the link part, N-1 rounds (default 1)")
    m.add_argument("--link-metrics", choices=("all", "bandwidth", "latency"), default="all",
                   help="what the link part measures and judges: bandwidth at 1 MiB, latency at "
                        "8 B, or both (default)")
    m.add_argument("--pairwise", action="store_true",
                   help="links one pair at a time (no contention between pairs; for small N)")
    m.add_argument("--parts", choices=("all", "fingerprint", "links"), default="all",
                   help="what to measure (default all)")
    m.add_argument("--fingerprint-jobs", type=c.positive_int, metavar="K",
                   help="nodes fingerprinted at once (default: all of them)")
    m.add_argument("--load-sizes", type=load_sizes_type, default=FP_SIZES["contention"],
                   metavar="SMALL,LARGE", help="message sizes of the contention under load "
                   f"(default {FP_SIZES['contention']}; smaller for a small or busy machine)")
    m.add_argument("--compute-cores", type=c.nonneg_int, metavar="N",
                   help="compute threads per rank under load (default: jostle-bench's, the "
                        "free cores of the rank's share)")
    m.add_argument("--comm-core", metavar="LIST", help="--comm-core of the link run's ranks")
    j = p.add_argument_group("judging")
    j.add_argument("--threshold", type=threshold_type, default=3.5, metavar="Z",
                   help="robust z (from the MAD) from which a value is flagged (default 3.5, Iglewicz and Hoaglin's cut-off for the modified z score)")
    j.add_argument("--no-confirm", action="store_true",
                   help="do not measure again what was flagged (by default a suspect must be "
                        "flagged twice: a shared node can be slow for a moment)")
    j.add_argument("--min-effect", type=c.positive_float, default=0.25, metavar="F",
                   help="never flag a difference from the median smaller than F (relative; "
                        "a ratio under load: relative to the median ratio) (default 0.25)")
    j.add_argument("--baseline", type=c.name_type, metavar="NAME",
                   help="also judge each node's fingerprint against baseline NAME, a scan "
                        "kept with `jostle baseline save SCAN-FOLDER --name NAME`")
    j.add_argument("--baselines", metavar="DIR",
                   help="where baselines are kept (default: $JOSTLE_BASELINES, else ./baselines)")
    o = p.add_argument_group("output")
    o.add_argument("--format", choices=("text", "json"), default="text")
    o.add_argument("--drain-script", metavar="FILE",
                   help="write scontrol DRAIN lines for the flagged nodes (never run)")
    o.add_argument("--dry-run", action="store_true", help="print the plan and its time bound")
    l = p.add_argument_group("launching")
    l.add_argument("--mpi", choices=("auto", "openmpi", "mpich"), default="auto")
    l.add_argument("--bench", metavar="PATH", help="the jostle-bench binary")
    l.add_argument("--launcher", metavar="'CMD …'",
                   help="launcher prefix instead of the detected one; {np} and {hosts} (a,b or "
                        "a:2) are replaced by each run's ranks and hosts")
    l.add_argument("--oversubscribe", choices=("auto", "yes", "no"), default="auto")
    l.add_argument("--srun-mpi", metavar="NAME", help="srun's PMI plugin in a SLURM job")
    l.add_argument("--timeout", type=c.positive_float, metavar="S",
                   help="a run still going S seconds after the time it should take is stopped "
                        f"and its node named unreachable (default {DEFAULT_MARGIN:g})")
    s = simulation.add_options(p, "1Gf", "node speed")
    s.add_argument("--inject", action="append", metavar="link:I:KIND=F",
                   help="with --simulate: node I's link at F times the platform's bandwidth or "
                        "latency (KIND); repeatable")
    c.add_output_options(p, campaign_default="scan")
    p.set_defaults(func=main)


# ---------------------------------------------------------------- the allocation

def allocation(args) -> list:
    """The hosts to scan, checked: --hosts, --hostfile, else the SLURM job's nodes."""
    job = os.environ.get("SLURM_JOB_NODELIST")
    allowed = _slurm_hosts(job) if job else None
    if args.hosts and args.hostfile:
        raise UsageError("--hosts and --hostfile both name the hosts; give one")
    if args.hosts or args.hostfile:
        where = "--hosts" if args.hosts else f"--hostfile '{args.hostfile}'"
        hosts = scan.check_hosts(args.hosts or scan.read_hostfile(args.hostfile), allowed, where)
        if allowed is None:
            for h in hosts:
                try:
                    socket.getaddrinfo(h, None)
                except OSError:
                    raise UsageError(f"{where}: unknown host '{h}' (its name does not resolve)") from None
        return hosts
    if allowed is None:
        raise UsageError("no hosts: give --hosts A,B,… or --hostfile FILE, or run inside a SLURM "
                         "job (salloc -N 4 jostle scan)")
    return scan.check_hosts(allowed, where="the SLURM job's nodes")


def _slurm_hosts(nodelist) -> list:
    try:
        out = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise JostleError(f"'scontrol show hostnames {nodelist}' failed: {e}") from None
    if out.returncode:
        raise JostleError(f"'scontrol show hostnames {nodelist}': {out.stderr.strip()}")
    return out.stdout.split()


def config_for(args):
    """A function RunSpec -> LaunchConfig: the detected launcher, or --launcher with its
    {np} and {hosts} filled in per run."""
    ns = argparse.Namespace(**{**vars(args), "launcher": None, "platform": None,
                               "hostfile": None})
    if args.launcher is None:
        config = c.launch_config(ns)
        return lambda spec: config
    bench = binary.find_bench(args.mpi, args.bench)

    def of(spec):
        hosts = launch._host_list(spec.hosts, spec.ranks)[0] if spec.hosts else ""
        prefix = args.launcher.replace("{np}", str(spec.ranks)).replace("{hosts}", hosts)
        return LaunchConfig(bench, "custom", prefix=prefix)
    return of


def main(args):
    if not args.simulate and args.dry_run and hasattr(args, "nodes"):
        nodes = args.nodes   # the plan for N nodes, real ones: no --simulate needed
        del args.nodes
    else:
        nodes = None
    simulation.check_simulation(args)
    if args.baseline:   # before anything is measured: a missing baseline is bad input
        if args.simulate or args.parts == "links":
            raise UsageError(f"--baseline '{args.baseline}': a baseline judges the nodes' "
                             "fingerprint, which " + ("a simulated scan" if args.simulate else
                                                      "--parts links") + " does not measure")
        baseline_cmd.existing(args.baseline, baseline_cmd.folder(args))
    if args.simulate:
        return simulated(args)
    if args.inject:
        raise UsageError("--inject is only used with --simulate")
    if args.dry_run and nodes is not None and not (args.hosts or args.hostfile):
        hosts = [f"node-{i}" for i in range(simgrid.parse_nodes(nodes)[-1])]
    else:
        hosts = allocation(args)
    args.comm_core_of = per_host(args.comm_core, hosts)
    camp_dir = Path(args.output_dir) / args.campaign
    config_of = config_for(args)
    if args.dry_run:
        parts = (fingerprint_runs(args, hosts) if args.parts != "links" else []) + \
            ([link_run(args, hosts)] if args.parts != "fingerprint" else [])
        Campaign(camp_dir, parts).dry_run(config_of)
        print(time_bound(args, len(hosts)), file=sys.stderr)
        return 0
    progress = Progress()
    t0 = time.monotonic()
    dead = run_fingerprints(args, camp_dir, hosts, config_of, progress) \
        if args.parts != "links" else {}
    link_file = None
    if args.parts != "fingerprint":
        link_file = run_links(args, camp_dir, [h for h in hosts if h not in dead], config_of,
                              progress, dead)
    fp_files = fp_outputs(args, camp_dir, [h for h in hosts if h not in dead])
    result = analyse(args, hosts, fp_files, link_file, dead)
    if not args.no_confirm and any(s.kind != "unreachable" for s in result["suspects"]):
        result = confirm(args, camp_dir, hosts, config_of, progress, result, fp_files, dead)
    return report(args, camp_dir, hosts, result, dead, time.monotonic() - t0)


def confirm(args, camp_dir, hosts, config_of, progress, first, fp_files, dead) -> dict:
    """Measure again what was flagged (the flagged nodes' fingerprints, the links) and keep a
    suspect only when the second measurement flags it too: a node of a shared machine can be
    slow for a few seconds because of another job, a bad one stays bad. Its evidence: both."""
    fp_names = {m.name for m in scan.FINGERPRINT}
    again = sorted({s.where for s in first["suspects"] if s.kind == "node"
                    and any(e["metric"] in fp_names for e in s.evidence)})
    fp2 = dict(fp_files)
    if again:
        lost = run_fingerprints(args, camp_dir, again, config_of, progress, "-again")
        dead.update(lost)
        fp2.update(fp_outputs(args, camp_dir, [h for h in again if h not in lost], "-again"))
    link_file = first["link_file"]
    if link_file is not None and any(s.kind == "link" or any(
            e["metric"].startswith("links_") for e in s.evidence) for s in first["suspects"]):
        link_file = run_links(args, camp_dir, first["link_hosts"], config_of, progress, dead,
                              "-again")
    second = analyse(args, hosts, {k: v for k, v in fp2.items() if k[0] not in dead},
                     link_file, dead)
    before = {(s.kind, s.where): s for s in first["suspects"]}
    kept = []
    for s in second["suspects"]:
        if s.kind == "unreachable":
            # flagged, then lost when measured again (a throttled node can outlast its
            # time-out): unreachable, with what the first measurement found
            flagged = before.get(("node", s.where))
            s.evidence = (flagged.evidence if flagged else []) + s.evidence
            kept.append(s)
        elif (s.kind, s.where) in before:
            s.evidence = before[(s.kind, s.where)].evidence + s.evidence
            kept.append(s)
    second["suspects"] = kept
    return second


# ---------------------------------------------------------------- output

def analyse(args, hosts, fp_files, link_file, dead) -> dict:
    runs_by_host = {}
    for (h, bench), path in fp_files.items():
        runs_by_host.setdefault(h, {})[bench] = load_run(path)
    values = scan.node_values({h: runs_by_host.get(h, {}) for h in hosts if h not in dead})
    table, node_ev = scan.judge_nodes(values, {k: str(v) for k, v in fp_files.items()},
                                      args.threshold, args.min_effect,
                                      *baseline_of(args, runs_by_host))
    links, link_findings, link_run_ = None, [], None
    if link_file is not None:
        link_run_ = load_run(link_file)
        links, more, link_findings = scan.judge_links(
            scan.link_values(link_run_, (link_run_.launch or {}).get("hosts") or
                             [h for h in hosts if h not in dead]),
            [h for h in hosts if h not in dead], link_file,
            args.threshold, args.min_effect,
            metrics=None if args.link_metrics == "all" else (args.link_metrics,))
        for h, ev in more.items():
            node_ev.setdefault(h, []).extend(ev)
    suspects = scan.rank(dead, node_ev, link_findings)
    crowded = sorted(h for h, runs in runs_by_host.items()
                     if h not in dead and scan.oversubscribed(runs.get("contention")))
    notes = [f"latency_under_load and bandwidth_under_load not judged on {', '.join(crowded)}: "
             "oversubscribed (more bound threads than cores: under load, a compute thread "
             "shares the communicating thread's core)"] if crowded else []
    return {"table": table, "links": links, "suspects": suspects, "link_run": link_run_,
            "notes": notes,
            "link_file": link_file, "link_hosts": [h for h in hosts if h not in dead]}


def baseline_of(args, runs_by_host) -> tuple:
    """(baseline_values, name) of --baseline for the machine the fingerprints ran on; () with
    no --baseline or nothing measured."""
    run = next((r for runs in runs_by_host.values() for r in runs.values()), None)
    if not args.baseline or run is None:
        return ()
    key = comparison.machine_key(comparison.machine_facts(run.meta))
    entry, label = baseline_cmd.entry_for(args.baseline, baseline_cmd.folder(args), key)
    base = scan.baseline_values(baselines.from_records(entry, label))
    if base.empty:
        raise UsageError(f"--baseline '{args.baseline}': its entry for this machine holds no "
                         "scan fingerprint (fp-… runs); keep a scan's folder: `jostle baseline "
                         f"save results/scan --name {args.baseline}`")
    return base, args.baseline


def report(args, camp_dir, hosts, a, dead, elapsed) -> int:
    suspects = a["suspects"]
    figs = []
    if a["link_run"] is not None:
        figs = figures.write(shift_figures.build([a["link_run"]]), camp_dir / "figures")
    if args.drain_script:
        _write_atomic(Path(args.drain_script),
                      "#!/bin/sh\n# written by jostle scan; review before running\n"
                      + "".join(line + "\n" for line in scan.drain_lines(suspects)))
    doc = {"schema": 1, "campaign": str(camp_dir), "hosts": hosts, "elapsed_s": round(elapsed, 1),
           "threshold": args.threshold, "min_effect": args.min_effect,
           "baseline": getattr(args, "baseline", None),
           "unreachable": sorted(dead), "nodes": scan.nodes_json(a["table"], dead),
           "links": [] if a["links"] is None else scan.links_json(a["links"]),
           "suspects": [s.to_dict(i + 1) for i, s in enumerate(suspects)],
           "figures": [str(p) for p in figs if str(p).endswith(".png")],
           "notes": a.get("notes", [])}
    _write_atomic(camp_dir / "scan.json", json.dumps(doc, indent=1) + "\n")
    if args.format == "json":
        print(json.dumps(doc, indent=1))
    else:
        print(scan.text(doc, a["table"]))
    return 1 if suspects else 0


# ---------------------------------------------------------------- simulated

# SimGrid 3.32's SMPI network model with its cross-traffic (each flow's acknowledgements as a
# reverse flow on the route) crashes (SIGSEGV in lmm::MaxMin::do_solve, from
# Model::next_occurring_event_lazy) on the shift pattern over 128 nodes or more as soon as one
# node's link is slower than the others; the same platform with every link alike runs, and so
# does the faulty one without cross-traffic, or with the CM02 or LV08 model. Without it, the
# reverse direction of a split-duplex link carries no acknowledgements: a link's bandwidth is
# its own, which is what the scan compares (docs/scan.md, "Simulated").
SCAN_SMPI_FLAGS = ("--cfg=network/crosstraffic:0",)


def simulated(args) -> int:
    """The link part on a generated cluster under SimGrid, with faults injected."""
    counts = simgrid.parse_nodes(args.nodes)
    if len(counts) != 1:
        raise UsageError(f"--nodes '{args.nodes}': a scan simulates one node count; give N")
    n = counts[0]
    injected = [scan.parse_inject(x, n) for x in args.inject or []]
    bw, lat = simgrid.parse_bandwidth(args.bandwidth), simgrid.parse_latency(args.latency)
    speed = simgrid.parse_speed(args.speed)
    links = {}
    for i, kind, f in injected:
        b, l_ = links.get(i, (bw, lat))
        links[i] = (b * f, l_) if kind == "bandwidth" else (b, l_ * f)
    hosts = [f"node-{i}" for i in range(n)]
    camp_dir = Path(args.output_dir) / args.campaign
    tag = "-" + c.default_name("inject", sorted(map(str, injected)))[7:] if injected else ""
    spec = link_run(args, hosts, exact=True)
    spec.name += tag
    spec.timeout = (args.timeout or 600) + 0.06 * n * n   # N(N-1) links: about 16 ms each at 256 here
    if not args.dry_run and not shutil_which("smpirun"):
        raise JostleError("smpirun is not installed (SimGrid); --simulate needs it")
    bench = simgrid.find_bench(args.bench)
    plat, hostfile = simgrid.write_platform(camp_dir / "platforms", n, bw, lat, speed,
                                            links=links, tag=tag, write=not args.dry_run)
    prefix = shlex.join(["smpirun", "-np", str(n), "-platform", str(plat), "-hostfile",
                         str(hostfile), *simgrid.smpi_flags(args.poll_cost), *SCAN_SMPI_FLAGS,

                         "--log=root.thresh:warning", "--log=smpi_config.thresh:error"])
    config = LaunchConfig(bench, "custom", prefix=prefix)
    camp = Campaign(camp_dir, [spec])
    if args.dry_run:
        camp.dry_run(config)
        print(time_bound(argparse.Namespace(**{**vars(args), "parts": "links"}), n),
              file=sys.stderr)
        return 0
    camp.run(config, Progress(), quiet=True)
    run = load_run(camp.output(spec))
    real = float((run.launch or {}).get("elapsed_s") or 0)   # the launch's, also when resumed
    print(f"jostle: simulated {n} nodes: the link part would take "
          f"{float((run.end or {}).get('elapsed_s') or 0):.3f} s of simulated time on this "
          f"platform; it took {real:.1f} s here", file=sys.stderr)
    return report(args, camp_dir, hosts, analyse(args, hosts, {}, camp.output(spec), {}), {},
                  real)


def shutil_which(name):
    import shutil
    return shutil.which(name)
