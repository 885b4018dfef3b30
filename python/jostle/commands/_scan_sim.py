"""`jostle scan --simulate`: the link part under SimGrid on a generated allocation, with the
faults of --inject, the spread of --noise and the fabric of --topology-conf (docs/scan.md,
"Simulated"). Judged and confirmed as a real scan is: what is flagged is measured again, in
rounds of half as many links at once, its links' own draws drawn anew."""

import dataclasses
import hashlib
import json
import shlex
import shutil
import sys
from pathlib import Path

from .. import lazy
from ..analysis import scan
from ..analysis.scan import inputs as scan_input
from ..errors import JostleError, UsageError
from ..records.results import load_run
from ..run import sim_fabric, simgrid
from ..run.campaign import Campaign, LaunchConfig
from ..run.progress import Progress
from ..studies import scan as study
from ._scan_report import analyse, classes, confirm, report
from ._scan_runs import settings_of

np = lazy.module("numpy")
pd = lazy.module("pandas")

# SimGrid 3.32's SMPI network model with its cross-traffic (each flow's acknowledgements as a
# reverse flow on the route) crashes (SIGSEGV in lmm::MaxMin::do_solve, from
# Model::next_occurring_event_lazy) on the shift pattern over 128 nodes or more as soon as one
# node's link is slower than the others; the same platform with every link alike runs, and so
# does the faulty one without cross-traffic, or with the CM02 or LV08 model. Without it, the
# reverse direction of a split-duplex link carries no acknowledgements: a link's bandwidth is
# its own, which is what the scan compares (docs/scan.md, "Simulated").
# With links that all differ (--noise), events fall a few nanoseconds apart: at smpirun's
# surf/precision of 1e-9 s a barrier of 1024 ranks took 37 s of real time here, at 1e-7 s 7 s
# (1 MiB takes 840 us, a latency 4 us: 100 ns is 2.5% of the smallest value measured); and
# the default MPI_Allgather (64 B from each of 96 such ranks) 15 s, bruck's 0.2 s.
SCAN_SMPI_FLAGS = ("--cfg=network/crosstraffic:0", "--cfg=smpi/allgather:bruck")
NOISY_SMPI_FLAGS = (f"--cfg=surf/precision:{sim_fabric.PRECISION:g}",)


# A node's fingerprint as drawn (SimGrid runs no kernel): arbitrary nominal values; only their
# ratios between nodes are judged
NOMINAL = {"pingpong_latency": 0.4, "pingpong_bandwidth": 12000.0, "memory_latency": 90.0,
           "triad": 100.0, "latency_alone": 1.5, "latency_under_load": 1.3,
           "bandwidth_under_load": 1.1}


def fingerprints(hosts, noise, faults):
    """The node values of a simulated scan: each fingerprint metric drawn around NOMINAL with
    the spread of --noise (none without it: NaN, not judged), --inject node:I:METRIC=F on it."""
    n = len(hosts)
    if noise.sd <= 0 and not faults.metrics:
        drawn = {m.name: np.full(n, np.nan) for m in scan.FINGERPRINT}
    else:
        drawn = sim_fabric.fingerprint_values(n, NOMINAL, noise, faults)
    cols = {}
    for m in scan.FINGERPRINT:
        cols[m.name] = drawn[m.name]
        if m.degradation:
            cols[m.name + "_u"] = np.zeros(n)
    return pd.DataFrame(cols, index=hosts)


def _faults(injected, bw, lat):
    """(links of simgrid.platform_xml, sim_fabric.Faults) of the --inject values."""
    links, faults = {}, sim_fabric.Faults()
    for where, kind, f in injected:
        if kind not in scan_input.INJECT_KINDS:   # a fingerprint metric
            faults.metrics[(where, kind)] = faults.metrics.get((where, kind), 1.0) * f
            continue
        table = faults.nodes if isinstance(where, int) else faults.cables
        b, l_ = table.get(where, (1.0, 1.0))
        table[where] = (b * f, l_) if kind == "bandwidth" else (b, l_ * f)
        if isinstance(where, int):
            lb, ll = links.get(where, (bw, lat))
            links[where] = (lb * f, ll) if kind == "bandwidth" else (lb, ll * f)
    return links, faults


def simulated(args, fabric=None) -> int:
    counts = simgrid.parse_nodes(args.nodes)
    if len(counts) != 1:
        raise UsageError(f"--nodes '{args.nodes}': a scan simulates one node count; give N")
    n = counts[0]
    hosts = [f"node-{i}" for i in range(n)]
    if fabric is not None:
        fabric.check_hosts(hosts, simulated=True)
    injected = [scan_input.parse_inject(x, n, fabric, [m.name for m in scan.FINGERPRINT])
                for x in args.inject or []]
    args.classes = classes(args, hosts)
    noise = sim_fabric.check_noise(args.noise or 0.0, args.noise_tails or "normal")
    noise = sim_fabric.Noise(noise.sd, noise.tails, args.seed)
    bw, lat = simgrid.parse_bandwidth(args.bandwidth), simgrid.parse_latency(args.latency)
    speed = simgrid.parse_speed(args.speed)
    plan = settings_of(args)
    shifts = study.shifts_of(plan, n)
    links, faults = _faults(injected, bw, lat)
    camp_dir = Path(args.output_dir) / args.campaign
    spec = study.link_run(plan, hosts, exact=True, shifts=shifts)
    explicit = noise.sd > 0 or fabric is not None
    key = json.dumps([sorted(map(str, injected)), noise.sd, noise.tails, noise.seed,
                      args.topology_conf and Path(args.topology_conf).read_text()])
    tag = "-" + hashlib.sha1(key.encode()).hexdigest()[:8] if explicit or injected else ""
    spec.name += tag
    spec.timeout = (args.timeout or 600) + 0.06 * n * len(shifts)
    if not args.dry_run and not shutil.which("smpirun"):
        raise JostleError("smpirun is not installed (SimGrid); --simulate needs it")
    bench = simgrid.find_sim_bench(args.bench)
    pairs = [(r, (r + k) % n) for k in shifts for r in range(n)]

    def platform(passno, measured, name):
        plat_dir = camp_dir / "platforms"
        hostfile = plat_dir / f"hostfile-{n}"
        if not explicit:
            return simgrid.write_platform(plat_dir, n, bw, lat, speed, links=links, tag=tag,
                                          write=not args.dry_run)
        path = plat_dir / f"platform-{n}{tag}-{name}.xml"
        if not args.dry_run:
            sim_fabric.write(path, sim_fabric.platform_xml(hosts, bw, lat, speed, measured, noise,
                                                           fabric, faults, passno))
            sim_fabric.write(hostfile, sim_fabric.hostfile_text(hosts))
        return path, hostfile

    tmp = camp_dir / "smpi-tmp"   # smpirun's copies of the binary, one a rank (its -tmpdir
    # option takes its value as the next option in SimGrid 3.32: TMPDIR instead)

    def config(plat, hostfile):
        if not args.dry_run:
            tmp.mkdir(parents=True, exist_ok=True)
        prefix = shlex.join(["env", f"TMPDIR={tmp}", "smpirun", "-np", str(n), "-platform",
                             str(plat), "-hostfile", str(hostfile),
                             *simgrid.smpi_flags(args.poll_cost), *SCAN_SMPI_FLAGS,
                             *(NOISY_SMPI_FLAGS if explicit else ()),
                             "--log=root.thresh:warning", "--log=smpi_config.thresh:error"])
        return LaunchConfig(bench, "custom", prefix=prefix)

    cfg = config(*platform(1, pairs, "pass1"))
    camp = Campaign(camp_dir, [spec])
    if args.dry_run:
        camp.dry_run(cfg)
        print(study.time_bound(dataclasses.replace(plan, parts="links"), n, shifts),
              file=sys.stderr)
        return 0
    camp.run(cfg, Progress(), quiet=True)
    run = load_run(camp.output(spec))
    real = float((run.launch or {}).get("elapsed_s") or 0)   # the launch's, also when resumed
    print(f"jostle: simulated {n} nodes: the link part ({len(shifts)} round(s)) would take "
          f"{float((run.end or {}).get('elapsed_s') or 0):.3f} s of simulated time on this "
          f"platform; it took {real:.1f} s here", file=sys.stderr)
    values = fingerprints(hosts, noise, faults)
    verdict, extra = analyse(args, hosts, {}, camp.output(spec), {}, fabric, values)
    findings = verdict.findings
    if not args.no_confirm and (findings or verdict.screened):
        def measure(path, rounds):
            spec2 = study.link_run(plan, hosts, exact=True, pairs=path, nrounds=rounds)
            spec2.name += tag + "-again"
            spec2.timeout = spec.timeout
            with open(path) as f:
                again = [tuple(int(x) for x in line.split()[1:]) for line in f if line.strip()]
            cfg2 = config(*platform(2, again, "pass2-" + Path(path).stem))
            camp2 = Campaign(camp_dir, [spec2])
            camp2.run(cfg2, Progress(), quiet=True)
            return camp2.output(spec2)
        findings = confirm(args, camp_dir, hosts, None, None, verdict, extra, {}, measure,
                           lambda again: values.loc[again])
    return report(args, camp_dir, hosts, verdict, findings, extra, {}, real)
