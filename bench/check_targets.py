#!/usr/bin/env python3
"""Target of `jostle check` on this machine (docs/check.md), printed with PASS or FAIL, the
machine and the date: --checks N checks in a row (default 20), each within its budget + 1 s
and each healthy (exit 0), against a reference of this machine saved first (--repeat 5); each
check's wall time and each step's own time against its share.

The checks run as a site runs them, in a cpu group of their own with the largest shares
(tests/py/checknode.py's Group: on a machine shared with other work a check's ranks
otherwise get a share of the cores by autogroup); when others keep the machine busy, with
--no-busy-check, and then a failure retested at once (as --slurm's suspect mode does before
it drains) counts only when its retest fails too. tests/py/test_check_system.py checks the same
on three checks; the twenty are a target, measured here. Needs root, the cgroup v1 cpu
controller and build/openmpi. Exit status 0 when the target passes, 1 when it fails, 2 when it
cannot be measured here."""
import argparse
import datetime
import json
import os
import sys
import tempfile
import tomllib
from pathlib import Path

import checkout_venv
from checkout_venv import machine

checkout_venv.use()
sys.path.insert(0, str(checkout_venv.ROOT / "tests" / "py"))
import checknode as tcs  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checks", type=int, default=20, help="checks in a row (default 20)")
    ap.add_argument("--budget", type=int, default=8, help="--budget of each check (default 8)")
    a = ap.parse_args()
    if not (tcs.CGROUP_CPU / "cpu.cfs_quota_us").exists() or os.geteuid() != 0:
        print("SKIP: needs root and the cgroup v1 cpu controller at /sys/fs/cgroup/cpu")
        return 2
    print(f"jostle check targets, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} "
          f"UTC, on {machine()}", flush=True)
    node = tcs.make_node()
    try:
        with tempfile.TemporaryDirectory(prefix="jostle-check-") as tmp:
            d = Path(tmp)
            site = tcs.save_site(d, node, a.budget)
            if site is None:
                print("SKIP: the reference could not be saved: the node is busy")
                return 2
            for line in getattr(node, "refusals", []):
                print(f"  reference refused, saved again with --tolerance 0.5: {line}")
            refs = tomllib.loads(site.read_text())["class"]["here"]["reference"]
            print("  reference (--repeat 5): " + ", ".join(
                f"{name} {r['value']:.4g} {r['unit']} ±{r['tolerance']:.0%}"
                f"{' (chosen)' if r.get('chosen') else ''} (repeatability "
                f"{r['repeatability']:.1%})" for name, r in refs.items() if 'repeatability' in r))
            out, retests = tcs.checks_in_a_row(site, node, d / "spool", a.checks, a.budget)
            recs = sorted((json.loads(p.read_text()) for p in (d / "spool").glob("check-*.json")),
                          key=lambda r: r["time"])
            for (rc, wall, line), rec in zip(out, recs):
                steps = ", ".join(f"{s['benchmark']} {s.get('elapsed_s', 0):.2f}/"
                                  f"{s.get('share_s') or 0:.2f}" for s in rec["runs"])
                print(f"  exit {rc}, {wall:5.2f} s [{steps}]: {line}")
            for rc, wall, line in retests:
                print(f"  retest: exit {rc}, {wall:5.2f} s: {line}")
            walls = [w for _, w, _ in out + retests]
            healthy = sum(rc == 0 for rc, _, _ in out)
            # quiet, the target is every check healthy; beside others' work, healthy on retest
            held = tcs.healthy_enough(out, retests, node) if node.busy_flags else \
                healthy == len(out)
            ok = max(walls) <= a.budget + 1 and held
            print(f"{'PASS' if ok else 'FAIL'} {a.checks} checks: {healthy} healthy, "
                  f"{len(retests)} retested, the longest {max(walls):.2f} s for a budget of "
                  f"{a.budget} s (target: each within budget + 1 s, each healthy; steps: seconds taken/share); "
                  f"{len(recs)} records in the spool{' (busy: --no-busy-check)' if node.busy_flags else ''}")
            return 0 if ok else 1
    finally:
        node.remove()


if __name__ == "__main__":
    sys.exit(main())
