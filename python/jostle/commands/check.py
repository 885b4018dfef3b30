"""`jostle check`: one node in seconds against the reference of its class, under a watchdog;
the scheduler's health check (docs/check.md).

Exit status: 0 healthy, 1 unhealthy (one line: `jostle: CHECK VALUE vs REFERENCE (CHANGE,
tolerance T)`), 2 bad input (nothing measured, the node untouched), 3 could not judge (the
node is busy with others' work: never a failure), 124 stopped by its watchdog (--timeout)."""

import argparse
import json
import math
import shutil
import signal
import sys
from dataclasses import replace
from pathlib import Path

from .. import binary
from ..analysis import check, check_budget, check_reference, check_site, machines
from ..errors import JostleError, UsageError
from ..run import check_node, slurm
from ..run.watchdog import Expired, Watchdog
from . import _common
from . import _options
from . import _record
from ._check_save import save_reference
from ._check_run import (BUDGET, BUSY_SHARE, SPOOL, STATE_DIR, TIMEOUT, Check, Killed,
                         Settings, _runs_dir, dry_run, left_behind, mark_start, node_name,
                         on_signals, prepare, run_once, started_ago)

ORDER = 44
EXAMPLES = """examples:
  jostle check --site /etc/jostle/site.toml                  judge this node against its class
  jostle check --save-reference --site site.toml --class cpu --match 'cn*'
                                                             on a known-good node: its reference
  jostle check --slurm --site site.toml                      drain (after a retest) or resume it
  jostle check --budget 5 --timeout 15 --checks triad,memory_latency,nic    a prolog's check

exit status: 0 healthy, 1 unhealthy (one line naming the check), 2 bad input (the node
untouched), 3 could not judge ("skipped: node busy"), 124 stopped by its watchdog."""


def checks_type(text):
    names = [x.strip() for x in text.split(",")]
    bad = [x for x in names if x not in check.CHECKS]
    if not names or bad or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected some of "
                                         + ", ".join(check.CHECKS) + ", each once")
    return names


def tolerance_type(text):
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected a fraction "
                                          "between 0 and 1 (0.3: 30%)")
    return v


def fraction_type(text):
    v = _common.positive_float(text)
    if v > 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected a fraction in (0, 1]")
    return v

def register(sub):
    p = sub.add_parser("check", help="this node against its class's reference, in seconds "
                                     "(the scheduler's health check)",
                       description=__doc__.split("\n\n")[0], epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_argument_group("what is judged")
    _options.add(g, "site", "the site file: classes, their host names and references")
    g.add_argument("--class", dest="cls", metavar="NAME",
                   help="the node's class (default: the first whose hosts match its name)")
    g.add_argument("--node", metavar="NAME", help="the node's name (default: $SLURMD_NODENAME, "
                   "else the short host name)")
    g.add_argument("--checks", type=checks_type, metavar="LIST",
                   help="judge only these: " + ", ".join(check.CHECKS)
                        + " (default: the class's, else every one it has a reference for)")
    t = p.add_argument_group("time")
    t.add_argument("--budget", type=_common.positive_float, metavar="S",
                   help=f"seconds the check should take (default: the site's, else {BUDGET:g})")
    t.add_argument("--timeout", type=_common.positive_float, metavar="S",
                   help="hard limit: whatever the check started is killed, exit 124 (default: "
                        f"the site's, else {TIMEOUT:g}; not under the budget)")
    r = p.add_argument_group("references")
    r.add_argument("--save-reference", action="store_true",
                   help="measure this (known-good) node and keep its values in --class of the "
                        "site file; the class's reference and tolerances are derived again "
                        "from every node it holds")
    r.add_argument("--repeat", type=_common.positive_int, default=5, metavar="K",
                   help="with --save-reference: checks of this node kept (their spread is the "
                        "check's repeatability; the fewer, the wider the tolerance; default 5)")
    r.add_argument("--match", action="append", default=[], metavar="PATTERN",
                   help="with --save-reference: a host pattern of the class (a glob, or /regex/); "
                        "repeatable")
    r.add_argument("--compute-cores", type=_common.nonneg_int, metavar="N",
                   help="with --save-reference: compute threads per rank under load (default: "
                        "jostle-bench's, the free cores of each rank's share)")
    r.add_argument("--oversubscribe", action="store_true",
                   help="with --save-reference: allow more bound threads than cores (a node "
                        "of one or two cores)")
    r.add_argument("--tolerance", type=tolerance_type, metavar="F",
                   help="with --save-reference: the tolerance of every check of the class, "
                        "chosen by the site (recorded as chosen), instead of the derived ones; "
                        f"without it a tolerance over {check_reference.MAX_TOLERANCE:.0%}% "   # %% in help
                        "refuses the reference")
    r.add_argument("--interval", type=_common.positive_float, metavar="S",
                   help="with --save-reference: seconds between two checks of a node, SLURM's "
                        "HealthCheckInterval (default: the site's interval, else "
                        f"{check_budget.INTERVAL_S:g}): the tolerances spend the false-drain "
                        "budget over a year of them")
    r.add_argument("--node-years", type=_common.positive_float, metavar="K",
                   help="with --save-reference: at most one healthy node drained per K "
                        "node-years, shared by the class's checks (default: the site's "
                        f"node_years, else {check_budget.NODE_YEARS:g})")
    r.add_argument("--load-sizes", metavar="SMALL,LARGE",
                   help=f"with --save-reference: the messages under load (default {check.LOAD_SIZES})")
    s = p.add_argument_group("the scheduler")
    s.add_argument("--slurm", action="store_true",
                   help="drain the node when it fails (after a retest), resume it when it "
                        "passes and jostle had drained it")
    s.add_argument("--no-suspect", action="store_true",
                   help="with --slurm: drain at the first failure (no retest)")
    s.add_argument("--state-dir", metavar="DIR",
                   help=f"where the suspect mark is kept (default: $JOSTLE_STATE_DIR, the site's, "
                        f"else {STATE_DIR})")
    s.add_argument("--busy-share", type=fraction_type, metavar="F",
                   help=f"the node is busy when others use F of its cores (default: the site's, "
                        f"else {BUSY_SHARE:g})")
    s.add_argument("--no-busy-check", action="store_true",
                   help="judge even when others use the node (their load is still recorded): "
                        "a node shared on purpose, or a test on a shared machine")
    o = p.add_argument_group("output")
    o.add_argument("--spool", metavar="DIR",
                   help=f"where each check's record goes (default: $JOSTLE_SPOOL, the site's, "
                        f"else {SPOOL})")
    o.add_argument("--runs-dir", metavar="DIR",
                   help="keep the runs' records there (default: in the spool, removed after)")
    o.add_argument("--format", choices=("text", "json"), default="text",
                   help="stdout: the one line (default), or the record")
    o.add_argument("--dry-run", action="store_true", help="print the runs, measure nothing")
    _record.add_option(o)
    l = p.add_argument_group("launching")
    l.add_argument("--mpi", choices=("auto", "openmpi", "mpich"), default="auto")
    l.add_argument("--bench", metavar="PATH", help="the jostle-bench binary")
    l.add_argument("--launcher", metavar="'CMD …'",
                   help="launcher prefix instead of the MPI's own on this node ({np}: ranks)")
    p.set_defaults(func=main)

# ---------------------------------------------------------------- the command

def main(args):
    mark_start(whole_process=getattr(args, "whole_process", False))
    args.site_path = _options.given(args, "site")[0]
    if not args.site_path:
        raise UsageError("no site file: give --site FILE or set $JOSTLE_SITE (docs/check.md)")
    saving = args.save_reference
    if not saving:
        for opt in ("compute_cores", "load_sizes", "match", "oversubscribe", "tolerance"):
            if getattr(args, opt):
                raise UsageError(f"--{opt.replace('_', '-')} is only used with --save-reference "
                                 "(a check measures as its class's reference was measured)")
    if saving and not args.cls:
        raise UsageError("--save-reference needs --class NAME (the class the values go to)")
    if saving and args.slurm:
        raise UsageError("--save-reference measures a known-good node: it does not take --slurm")
    if saving and args.record:
        raise UsageError("--record adds a check's record to the store; --save-reference "
                         "writes none (its values go to the site file)")
    path = Path(args.site_path)
    site = check_site.load(path) if (path.exists() or not saving) else check_site.Site(path)
    st = Settings(args, site)
    node = node_name(args)
    bench = binary.find_bench(args.mpi, args.bench)
    if saving:
        return save_reference(args, st, site, node, bench)
    chk = Check(args, st, node, bench)
    ended = []

    def at_limit(what):   # stuck past the limit outside any program: say so and leave
        line = f"jostle: timeout: the check did not end within {st.timeout:g} s ({what or 'ending'})"
        if not ended:
            try:
                check_node.spool_write(st.spool, chk.record(check.TIMEOUT, line))
            except JostleError:
                pass
            print(line, flush=True)

    # Everything from here on, the bench's answers included, is under the watchdog.
    wd = Watchdog(st.timeout - started_ago(), st.reserve, on_limit=at_limit,
                  exit_status=check.TIMEOUT)
    previous = on_signals()
    try:
        try:
            if not set_up_check(args, st, site, chk, wd):
                return dry_run(chk)
            status, line = judge_node(args, st, chk, wd)
        except Expired as e:
            status = check.TIMEOUT
            line = (f"jostle: timeout: {e.what} still running at {started_ago():.0f} s "
                    f"(watchdog {st.timeout:g} s): killed")
        except Killed as k:    # its runs were ended on the way out (Watchdog.run, judge_node)
            for sig in (signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, signal.SIG_IGN)    # the record is written whole
            status = 128 + k.signum
            line = f"jostle: killed by signal {k.signum} during {wd.running or 'its start'}"
        more = {"slurm": scheduler(args, st, chk, wd, status, line)} if args.slurm else {}
        rec = chk.record(status, line, **more)
        ended.append(True)
        try:
            rec["record"] = str(check_node.spool_write(st.spool, rec))
        except JostleError as e:   # the verdict stands: a full disk is not the node's fault
            rec["record"] = None
            print(f"jostle: warning: {e}", file=sys.stderr)
    finally:
        wd.finish()
        for sig, handler in previous.items():   # a caller's own, as they were
            signal.signal(sig, handler)
    if args.format == "json":
        print(json.dumps(rec, indent=1))
    else:
        action = (rec.get("slurm") or {}).get("action")
        print(line + (f" [{action}]" if action not in (None, "none", "clear") else ""))
    # after the verdict is out and outside the watchdog: the store never changes the verdict
    return _record.then(args, [rec["record"]], status)


def set_up_check(args, st, site, chk: Check, wd: Watchdog) -> bool:
    """CHK's class, references and runs (bad input: exit 2, nothing measured); False for
    --dry-run."""
    run = wd.run
    version = check_node.bench_json(run, chk.bench, "--version")
    facts = check_node.bench_json(run, chk.bench, "--machine")
    here = check_site.machine_of(facts, version.get("mpi_library", ""))
    cls = site.class_of(chk.node, args.cls)
    check_site.check_machine(site, cls, here)
    # a node whose own checks the class holds is judged against them (its place is known)
    refs = check_reference.own_references(cls.reference, cls.nodes.get(chk.node))
    if cls.baseline:
        key = machines.machine_key(machines.machine_facts(
            {"machine": facts, "mpi": {"library": version.get("mpi_library", "")}}))
        from_baseline, sets = check_site.baseline_references(site, cls, key)
        refs = {**from_baseline, **refs}
        # measured with the baseline's working sets where the class holds none of its own
        cls = replace(cls, options=replace(cls.options, **{
            k: v for k, v in sets.items() if not getattr(cls.options, k)}))
    checks = args.checks or cls.checks or [*refs, *([check.NIC] if cls.nics else [])]
    missing = [x for x in checks if x != check.NIC and x not in refs]
    if missing or not checks:
        raise UsageError(f"class '{cls.name}' of {site.path} has no reference for "
                         f"{', '.join(missing) or 'any check'}; save one with --save-reference")
    prepare(args, st, chk, cls, checks, refs, version, facts, run)
    return not args.dry_run


def judge_node(args, st: Settings, chk: Check, wd: Watchdog) -> tuple:
    for t, step in left_behind(st):    # checks killed by SIGKILL: their record now
        line = f"jostle: killed by signal 9 during {step} (found by the next check)"
        rec = {**chk.record(128 + 9, line), "time": check_node.utc(t), "end": None,
               "duration_s": None, "runs": [], "values": [], "load": {}}
        check_node.spool_write(st.spool, rec)
    runs_dir, temporary = _runs_dir(args, st)
    try:
        return run_once(chk, wd, runs_dir)
    finally:
        if temporary:
            shutil.rmtree(runs_dir, ignore_errors=True)


def scheduler(args, st, chk, wd: Watchdog, status, line) -> dict:
    """The SLURM side of a verdict (check.slurm_action): the suspect mark and scontrol."""
    def run(argv, what):
        return wd.run(argv, what, timeout=max(1.0, wd.left_to_limit() - 0.5), until_limit=True)
    out = {"node": chk.node}
    try:
        if status == check.SKIPPED:
            out.update(action="none", why="could not judge: nothing changed")
            return out
        node = slurm.show_node(run, chk.node)
        suspect = check_node.read_suspect(st.state_dir, chk.node) is not None
        action, why = check.slurm_action(status, suspect, node.drained, node.ours,
                                         not args.no_suspect)
        out.update(state=node.state, reason_before=node.reason, action=action, why=why)
        if action == "suspect":
            check_node.mark_suspect(st.state_dir, chk.node, line)
        elif action == "drain":
            slurm.update_node(run, chk.node, "drain", check.slurm_reason(line))
            check_node.clear_suspect(st.state_dir, chk.node)
        elif action in ("resume", "clear"):
            check_node.clear_suspect(st.state_dir, chk.node)
            if action == "resume":
                slurm.update_node(run, chk.node, "resume")
        elif status in (check.UNHEALTHY, check.TIMEOUT) and node.drained:
            check_node.clear_suspect(st.state_dir, chk.node)
    except JostleError as e:
        out["error"] = str(e)
        print(f"jostle: --slurm: {e}", file=sys.stderr)
    return out
