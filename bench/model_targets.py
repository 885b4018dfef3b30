#!/usr/bin/env python3
"""Targets of the contention model: its leave-one-out error on a campaign.

  * mean |error| <= 4% (Denis, Jeannot, Swartvagher, IJNC 2023: "in average lower than 4%")
  * max |error| <= 10%

On a campaign DIR given with --campaign, else a fresh `jostle model calibrate --quick` in a
temporary directory (or --keep DIR). Prints the error per point, mean and max with PASS/FAIL,
and the model's stated limits (one NUMA node, oversubscription). Exit 0 when both pass."""
import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import checkout_venv

checkout_venv.use()
ROOT = checkout_venv.ROOT
from jostle.analysis import model  # noqa: E402
from jostle.commands.model import load_runs  # noqa: E402

MEAN, MAX = 0.04, 0.10


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--campaign", metavar="DIR", help="check this campaign instead of calibrating")
    ap.add_argument("--keep", metavar="DIR", help="calibrate into DIR and keep it")
    a = ap.parse_args()
    d = Path(a.campaign) if a.campaign else None
    if d is None:
        out = Path(a.keep or tempfile.mkdtemp(prefix="jostle-model-"))
        subprocess.run([sys.executable, "-m", "jostle.cli", "model", "calibrate", "--quick",
                        "--output-dir", str(out), "--quiet"], check=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT / "python")})
        d = out / "model"
    runs = load_runs(d)
    table = model.check(model.observations(runs))
    print(table[["run", "phase", "side", "cores", "size", "measured", "predicted", "error"]]
          .to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    e = model.errors(table)
    ok = True
    for name, v, goal in (("mean |error|", e["mean_abs_error"], MEAN),
                          ("max |error|", e["max_abs_error"], MAX)):
        good = v is not None and v <= goal
        ok &= good
        print(f"{name}: {'n/a' if v is None else f'{100 * v:.1f}%'} (target ≤ {100 * goal:.0f}%) "
              f"{'PASS' if good else 'FAIL'}")
    for lim in model.document(runs, d.name, draws=0)["not_identifiable"]:
        print(f"limit: {lim['what']}: {lim['reason']}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
