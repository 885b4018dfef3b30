"""`jostle scan`: the slow node and the bad link of an allocation (docs/scan.md).

A campaign like every study: a fingerprint per node (every node at once, each measuring only
itself), then the links with mpiGraph's shift pattern (every round, or K of them), then every
node, link and cable judged against the allocation itself, false alarms controlled over the
whole scan (jostle.analysis.scan); what is flagged is measured again. A node that does not
answer is named unreachable after its run's time-out and the scan goes on without it; what was
measured is kept, and the same command resumes."""

import argparse
import socket
import sys
import time
from pathlib import Path

from .. import binary
from ..analysis.scan import classes as scan_classes
from ..analysis.scan import inputs as scan_input
from ..run import launch, simgrid, slurm
from ..run.campaign import Campaign, LaunchConfig
from ..errors import UsageError
from ..records import fabric as fabric_mod
from ..run.progress import Progress
from ..studies import scan as study
from . import _common
from . import _options
from . import _record
from . import _simulation as simulation
from . import baseline as baseline_cmd
from ._scan_report import MIN_EFFECT, MIN_EFFECT_FEW, analyse, classes, confirm, report
from ._scan_runs import fp_outputs, run_fingerprints, run_links, settings_of

ORDER = 45
EXAMPLES = """examples:
  salloc -N 16 jostle scan                          every node of the job, then its links
  jostle scan --hosts n1,n2,n3,n4 --budget 30       four hosts, 30 s of fingerprint each
  jostle scan --hostfile nodes.txt --format json    the figures and suspects as JSON
  jostle scan --drain-script drain.sh               scontrol lines for the flagged nodes
  jostle scan --dry-run --nodes 256                 the plan and its time bound for 256 nodes
  jostle scan --shifts 32                           32 of the N-1 rounds of links
  jostle scan --simulate --nodes 256 --inject link:7:bandwidth=0.5
                                                    the link part under SimGrid, one bad link
  jostle scan --simulate --nodes 1024 --shifts 32 --noise 0.05 --noise-tails t3 --seed 3
                                                    a machine whose nodes all differ

exit status: 0 nothing flagged, 1 a node or link flagged (or unreachable), 2 bad input."""


def load_sizes_type(text):
    from ..sizes import parse_bytes
    try:
        sizes = [parse_bytes(t) for t in text.split(",")]
    except UsageError:
        sizes = []
    if len(sizes) != 2:
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected two message sizes "
                                         "SMALL,LARGE, e.g. 4,64M")
    return text


def threshold_type(text):
    return _common.positive_float(text)


def fdr_type(text):
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not 0 < v < 0.5:
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected a false discovery "
                                         "rate from 0 to 0.5 (exclusive), e.g. 0.01")
    return v


def groups_type(text):
    try:
        return scan_classes.parse_groups(text)
    except UsageError as e:
        raise argparse.ArgumentTypeError(str(e).split(": ", 1)[-1]) from None


def register(sub):
    p = sub.add_parser("scan", help="find the slow node and the bad link of an allocation",
                       description=__doc__.split("\n\n")[0], epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("the allocation (default: the SLURM job's nodes)")
    g.add_argument("--hosts", type=_common.hosts_type, metavar="A,B,…", help="the nodes to scan")
    g.add_argument("--hostfile", metavar="FILE", help="the nodes to scan, one per line")
    m = p.add_argument_group("measuring")
    m.add_argument("--budget", type=_common.positive_float, default=60.0, metavar="S",
                   help="seconds of fingerprint per node (default 60; every node at once)")
    m.add_argument("--round-time", type=_common.positive_float, default=1.0, metavar="S",
                   help="seconds per round of the link part (default 1)")
    r = m.add_mutually_exclusive_group()
    r.add_argument("--shifts", type=_common.positive_int, metavar="K",
                   help="K of the N-1 rounds of the link part (every node sends and receives K "
                        "times; drawn with --seed); default all N-1")
    r.add_argument("--quick", action="store_true",
                   help="one round of the link part: n/2 disjoint pairs, each both ways")
    m.add_argument("--seed", type=_common.nonneg_int, default=1, metavar="S",
                   help="seed of the rounds drawn by --shifts (and of --noise) (default 1)")
    m.add_argument("--link-metrics", choices=("all", "bandwidth", "latency"), default="all",
                   help="what the link part measures and judges: bandwidth at 1 MiB, latency at "
                        "8 B, or both (default)")
    m.add_argument("--pairwise", action="store_true",
                   help="links one pair at a time (no contention between pairs; for small N)")
    m.add_argument("--parts", choices=("all", "fingerprint", "links"), default="all",
                   help="what to measure (default all)")
    m.add_argument("--fingerprint-jobs", type=_common.positive_int, metavar="K",
                   help="nodes fingerprinted at once (default: all of them)")
    m.add_argument("--load-sizes", type=load_sizes_type, default=study.FP_SIZES["contention"],
                   metavar="SMALL,LARGE", help="message sizes of the contention under load "
                   f"(default {study.FP_SIZES['contention']}; smaller for a small or busy machine)")
    m.add_argument("--compute-cores", type=_common.nonneg_int, metavar="N",
                   help="compute threads per rank under load (default: jostle-bench's, the "
                        "free cores of the rank's share)")
    m.add_argument("--comm-core", metavar="LIST", help="--comm-core of the link run's ranks")
    j = p.add_argument_group("judging")
    j.add_argument("--fdr", type=fdr_type, default=0.01, metavar="Q",
                   help="false discovery rate over every test of the scan (Benjamini-Hochberg; "
                        "with nothing wrong, the chance of any flag) (default 0.01)")
    j.add_argument("--min-effect", type=_common.positive_float, default=None, metavar="F",
                   help="never flag what is less than F worse than its reference (relative: "
                        f"0.1 is 10%%) (default {MIN_EFFECT:g}; below 5 nodes, where the effect "
                        f"alone decides, {MIN_EFFECT_FEW:g})")
    j.add_argument("--threshold", type=threshold_type, default=None, metavar="Z",
                   help="also require a robust z (from the MAD) of at least Z (default: none; "
                        "--fdr controls the false alarms)")
    j.add_argument("--no-confirm", action="store_true",
                   help="do not measure again what was flagged (by default a suspect must be "
                        "flagged twice: a shared node can be slow for a moment)")
    j.add_argument("--topology-conf", metavar="FILE",
                   help="the fabric, in SLURM's topology.conf format: slow links are also "
                        "judged by the cable between switches they cross")
    k = j.add_mutually_exclusive_group()
    k.add_argument("--groups", type=groups_type, metavar="'NAME=PAT,…;…'",
                   help="node classes judged apart (each fingerprint against its own class): "
                        "NAME=PATTERN[,PATTERN…], ';' between classes, a pattern a glob or "
                        "/regex/ of host names; every host in one")
    _options.add(k, "site", "node classes judged apart, from the site file of `jostle check` "
                 "(its [class.NAME] hosts)")
    j.add_argument("--baseline", type=_common.name_type, metavar="NAME",
                   help="also judge each node's fingerprint against baseline NAME, a scan "
                        "kept with `jostle baseline save SCAN-FOLDER --name NAME`")
    _options.add(j, "baselines")
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
    l.add_argument("--timeout", type=_common.positive_float, metavar="S",
                   help="a run still going S seconds after the time it should take is stopped "
                        f"and its node named unreachable (default {study.DEFAULT_MARGIN:g})")
    s = simulation.add_options(p, "1Gf", "node speed")
    s.add_argument("--inject", action="append", metavar="link:I:KIND=F",
                   help="with --simulate: node I's link (or link:SWITCH-SWITCH:KIND=F, the "
                        "cable between two switches of --topology-conf) at F times the "
                        "platform's bandwidth or latency (KIND), or node:I:METRIC=F, node I's "
                        "drawn fingerprint METRIC (triad, …) at F times; repeatable")
    s.add_argument("--noise", type=simulation.noise_type, metavar="SD",
                   help="with --simulate: every node's link and every cable drawn from a "
                        "lognormal of spread SD (0.05: 5%%), each measured link's own draw "
                        "too, and each node's fingerprint values (drawn, not run)")
    s.add_argument("--noise-tails", choices=("normal", "t3"),
                   help="with --noise: the measured links' draws normal (default) or heavy-"
                        "tailed (t3: Student's t, 3 degrees of freedom)")
    _common.add_output_options(p, campaign_default="scan")
    p.set_defaults(func=main)


# ---------------------------------------------------------------- the allocation

def allocation(args) -> list:
    """The hosts to scan, checked: --hosts, --hostfile, else the SLURM job's nodes."""
    allowed = slurm.job_hosts()
    if args.hosts and args.hostfile:
        raise UsageError("--hosts and --hostfile both name the hosts; give one")
    if args.hosts or args.hostfile:
        where = "--hosts" if args.hosts else f"--hostfile '{args.hostfile}'"
        hosts = scan_input.check_hosts(args.hosts or scan_input.read_hostfile(args.hostfile), allowed, where)
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
    return scan_input.check_hosts(allowed, where="the SLURM job's nodes")


def config_for(args):
    """A function RunSpec -> LaunchConfig: the detected launcher, or --launcher with its
    {np} and {hosts} filled in per run."""
    ns = argparse.Namespace(**{**vars(args), "launcher": None, "platform": None,
                               "hostfile": None})
    if args.launcher is None:
        config = _common.launch_config(ns)
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
    if not args.simulate:
        for flag in ("inject", "noise", "noise_tails"):
            if getattr(args, flag) is not None:
                name = "--" + flag.replace("_", "-")
                raise UsageError(f"{name} is only used with --simulate; add --simulate, or "
                                 f"leave {name} out")
    if args.noise_tails and not args.noise:
        raise UsageError(f"--noise-tails '{args.noise_tails}' needs --noise SD")
    if args.baseline:   # before anything is measured: a missing baseline is bad input
        if args.simulate or args.parts == "links":
            raise UsageError(f"--baseline '{args.baseline}': a baseline judges the nodes' "
                             "fingerprint, which " + ("a simulated scan" if args.simulate else
                                                      "--parts links") + " does not measure")
        baseline_cmd.existing(args.baseline, baseline_cmd.folder(args))
    fabric = fabric_mod.read_topology(args.topology_conf) if args.topology_conf else None
    if args.simulate:
        from . import _scan_sim
        return _record.then_campaign(args, _scan_sim.simulated(args, fabric))
    if args.dry_run and nodes is not None and not (args.hosts or args.hostfile):
        hosts = [f"node-{i}" for i in range(simgrid.parse_nodes(nodes)[-1])]
    else:
        hosts = allocation(args)
    study.check_shifts(settings_of(args), len(hosts))
    args.classes = classes(args, hosts)
    if fabric is not None:
        fabric.check_hosts(hosts)
    args.comm_core_of = study.per_host(args.comm_core, hosts)
    camp_dir = Path(args.output_dir) / args.campaign
    config_of = config_for(args)
    plan = settings_of(args)
    shifts = study.shifts_of(plan, len(hosts))
    if args.dry_run:
        parts = (study.fingerprint_runs(plan, hosts) if args.parts != "links" else []) + \
            ([study.link_run(plan, hosts, shifts=shifts)] if args.parts != "fingerprint" else [])
        Campaign(camp_dir, parts).dry_run(config_of)
        print(study.time_bound(plan, len(hosts), shifts), file=sys.stderr)
        if args.parts != "fingerprint" and len(shifts) < len(hosts) - 1:
            listed = (study.shift_text(shifts) if len(shifts) > 64
                      else ",".join(map(str, shifts)))
            print(f"jostle: rounds (shift k: every node sends to node+k, receives from "
                  f"node-k): {listed}", file=sys.stderr)
        return 0
    progress = Progress()
    t0 = time.monotonic()
    dead = run_fingerprints(args, camp_dir, hosts, config_of, progress) \
        if args.parts != "links" else {}
    link_file = None
    if args.parts != "fingerprint":
        link_file = run_links(args, camp_dir, [h for h in hosts if h not in dead], config_of,
                              progress, dead, shifts_for=lambda n: study.shifts_of(plan, n))
    fp_files = fp_outputs(args, camp_dir, [h for h in hosts if h not in dead])
    verdict, extra = analyse(args, hosts, fp_files, link_file, dead, fabric)
    findings = verdict.findings
    if not args.no_confirm and (findings or verdict.screened):
        def measure(pairs, rounds):
            return run_links(args, camp_dir, extra["link_hosts"], config_of, progress, dead,
                             "-again", pairs=(pairs, rounds))
        findings = confirm(args, camp_dir, hosts, config_of, progress, verdict, extra, dead,
                           measure)
    return _record.then_campaign(args, report(args, camp_dir, hosts, verdict, findings, extra, dead,
                                         time.monotonic() - t0))


