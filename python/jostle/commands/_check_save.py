"""`jostle check --save-reference` (commands/check.py): K checks of a known-good node, their
values kept in its class of the site file, whose reference and tolerances are derived again
from every node the class holds (docs/check.md, "References")."""

import re
import shutil
import sys
from dataclasses import replace
from pathlib import Path

from ..analysis import check, check_budget, check_reference, check_site
from ..studies import check as check_study
from ..errors import JostleError, UsageError
from ..run import check_node
from ..run.watchdog import Expired, Watchdog
from ._check_run import (BUSY_WINDOW_S, Check, _runs_dir, dry_run, mark_start, prepare,
                         started_ago)

SIZES_RE = r"^[0-9]+[KMG]?,[0-9]+[KMG]?$"
RETRIES = 3     # checks of a reference measured again when a step did not finish in its share


def options(args, site, here) -> check.RunOptions:
    """How the class is measured: as given, or the class's own when none is given (refused
    when both differ and the class already holds nodes)."""
    if not check_site.NAME_RE.match(args.cls):
        raise UsageError(f"--class '{args.cls}' is not allowed; a class name is letters, digits, "
                         "'_' and '-'")
    for pat in args.match:
        if len(pat) > 1 and pat.startswith("/") and pat.endswith("/"):
            try:
                re.compile(pat[1:-1])
            except re.error as e:
                raise UsageError(f"--match '{pat}' is not a valid regular expression ({e})") from None
    if args.load_sizes and not re.match(SIZES_RE, args.load_sizes):
        raise UsageError(f"--load-sizes '{args.load_sizes}' is not allowed; expected SMALL,LARGE "
                         "e.g. 4,64M")
    old = site.classes.get(args.cls)
    given = args.compute_cores is not None or args.oversubscribe or args.load_sizes
    opts = check.RunOptions(args.compute_cores, args.oversubscribe,
                            args.load_sizes or check.LOAD_SIZES)
    if old is not None:
        check_site.check_machine(site, old, here)
        if not given:
            return old.options     # the class's own way of measuring
        opts = replace(opts, chain_bytes=old.options.chain_bytes,
                       array_bytes=old.options.array_bytes, chain_pages=old.options.chain_pages)
        if old.nodes and old.options != opts:
            raise UsageError(f"class '{args.cls}' was measured with {old.options.to_dict()}, "
                             f"not {opts.to_dict()}: give the same options (or none), or "
                             "another class")
    return opts


def drain_budget(args, site) -> tuple:
    """(node-years per healthy node drained, seconds between checks): the options, else the
    site file's [check] node_years and interval, else check_budget's."""
    d = site.defaults
    years = args.node_years or d.get("node_years") or check_budget.NODE_YEARS
    interval = args.interval or d.get("interval") or check_budget.INTERVAL_S
    return years, interval


def buys_lines(refs: dict, years: float, interval: float) -> list:
    """What each tolerance of REFS buys at a check every INTERVAL seconds: healthy nodes
    drained per 1 000 node-years (the site's target 1 000 / YEARS, shared by the checks) and
    the smallest slowdown drained at the second check with 95% probability; the same for a
    node judged against its own saved checks."""
    out = []
    for name, ref in refs.items():
        (drains, slow), (own, own_slow) = (check_budget.buys(ref, interval, o) for o in (0, 1))
        out.append(f"{name}\tat a check every {interval:g} s: {drains:.2g} healthy nodes "
                   f"drained per 1000 node-years (target {1000 / years:.3g} for all checks), "
                   f"{slow:.0%} slower drained at its second check 95% of the time; a saved "
                   f"node against its own checks (tolerance {ref['own_tolerance']:.0%}): "
                   f"{own:.2g}, {own_slow:.0%}")
    return out


def save_reference(args, st, site, node, bench) -> int:
    wd = Watchdog(st.timeout - started_ago(), st.reserve)
    try:
        version = check_node.bench_json(wd.run, bench, "--version")
        facts = check_node.bench_json(wd.run, bench, "--machine")
        here = check_site.machine_of(facts, version.get("mpi_library", ""))
        cls = check_site.NodeClass(args.cls, options=options(args, site, here))
        checks = args.checks or list(check.CHECKS)
        first = prepare(args, st, Check(args, st, node, bench), cls, checks, {}, version, facts,
                        wd.run)
    except Expired as e:
        print(f"jostle: timeout: {e.what} did not answer within {st.timeout:g} s")
        return check.TIMEOUT
    finally:
        wd.finish()
    if args.dry_run:
        return dry_run(first)
    samples = {name: [] for name in check.MEASURED}
    errors = {}     # {check: the standard error of each check's value}: its noise's floor
    nics, steps = {}, {}
    k, retries = 0, 0
    while k < args.repeat:
        if k or retries:   # each of the reference's checks has the whole budget, as a check
            mark_start(process_counts=False)
        chk = Check(args, st, node, bench)
        chk.choose_runs(cls, checks, {}, first.config, facts, version.get("mpi_library"))
        chk.runs = first.runs     # each repeat measures alike (the first fixes the working sets)
        wd = Watchdog(st.timeout, st.reserve)
        runs_dir, temporary = _runs_dir(args, st)
        if args.runs_dir and args.repeat > 1:
            runs_dir = runs_dir / f"r{k + 1}"
            runs_dir.mkdir(exist_ok=True)
        try:
            pre = check_node.busy_now(BUSY_WINDOW_S, st.uid_min)
            why = check_node.why_busy(pre, st.busy_share, st.busy_user_cores, before=True)
            if why and not args.no_busy_check:
                print(f"jostle: skipped: node busy: {why}; no reference saved")
                return check.SKIPPED
            nics = check_node.nics()
            runs = chk.measure(wd, runs_dir)
        except Expired as e:
            print(f"jostle: timeout: {e.what} still running at {wd.elapsed():.0f} s; "
                  "no reference saved")
            return check.TIMEOUT
        finally:
            wd.finish()
            if temporary:
                shutil.rmtree(runs_dir, ignore_errors=True)
        failed = {b: r for b, r in runs.items() if isinstance(r, str)}
        if failed and set(failed) <= set(chk.unfinished) and retries < RETRIES:
            # a slow moment of a good node (a launch that waited): that check again
            retries += 1
            print(f"jostle: check {k + 1}/{args.repeat} of {node}: {', '.join(failed)} did not "
                  f"finish in its share: measured again ({retries} of {RETRIES})",
                  file=sys.stderr)
            continue
        if failed:
            b, why = next(iter(failed.items()))
            raise JostleError(f"{b}: {why}; no reference saved "
                              "(a larger --budget gives each step more time)")
        for t in chk.timings:
            steps[t["benchmark"]] = max(steps.get(t["benchmark"], 0.0), t["elapsed_s"])
            if t.get("launch_s", 0) > 0:
                steps[check.LAUNCH] = max(steps.get(check.LAUNCH, 0.0), t["launch_s"])
        if chk.timings:     # the first check's start holds the interpreter's: the longest
            steps[check.START] = max(steps.get(check.START, 0.0), chk.timings[0]["start_s"])
        sets = check.working_sets(runs)
        if k == 0:     # the next checks measure as the class's checks will
            cls.options = replace(cls.options, **{k: getattr(cls.options, k) or v
                                                  for k, v in sets.items()})
            first.runs = check_study.plan(checks, st.budget, node, cls.options,
                                    launch_s=steps.get(check.LAUNCH))
        values, why = check.values_of(runs)
        for name, v in values.items():
            if name in checks:
                samples[name].append(v)
        for name, e in check.errors_of(runs).items():
            if name in checks:
                errors.setdefault(name, []).append(e)
        if k == 0:     # a check the reference will not hold is said, with why
            for name in [c for c in checks if c in why]:
                print(f"jostle: {name} left out of the reference: {why[name]}", file=sys.stderr)
        k += 1
        print(f"jostle: check {k}/{args.repeat} of {node}: "
              + ", ".join(f"{n} {v:.4g}" for n, v in values.items() if v == v and n in checks),
              file=sys.stderr)
    up = {n: v for n, v in nics.items() if v.get("state") == "up"} if check.NIC in checks else {}
    path = Path(args.site_path)
    with check_site.locked(path):
        fresh = check_site.load(path) if path.exists() else site
        budget = drain_budget(args, fresh)
        got = check_site.add_samples(fresh, args.cls, node, samples, here, up, cls.options,
                                     args.match, args.checks, args.tolerance, steps, budget,
                                     errors)
        wide = check_reference.too_wide(got.reference)
        if wide:     # a bound that a node at half speed passes is no bound
            raise UsageError(check_reference.refusal(*wide, got.reference[wide[0]]))
        check_site.write(fresh)
    for name, ref in got.reference.items():
        print(f"{args.cls}\t{name}\t{ref['value']:.4g} {ref['unit']}\ttolerance "
              f"{ref['tolerance']:.0%}\t(spread {ref['spread']:.1%}, repeatability "
              f"{ref['repeatability']:.1%}, {ref['nodes']} node(s), {ref['checks']} checks)")
    for line in buys_lines(got.reference, *budget):
        print(f"{args.cls}\t{line}")
    for name, nic in got.nics.items():
        print(f"{args.cls}\tnic:{name}\t{nic.get('state')} {nic.get('speed_mbps', '')}".rstrip())
    print(f"jostle: class '{args.cls}' of {path}: {len(got.nodes)} node(s)", file=sys.stderr)
    if note := check_reference.narrowing_note(got.reference):
        print(note, file=sys.stderr)
    return 0
