"""`jostle advise DIR`: one page of advice from the model and the campaign's studies."""

import argparse
import json

from ..analysis import advise, model
from ..errors import UsageError
from .model import load_runs, model_of, requirements

ORDER = 22


def register(sub):
    p = sub.add_parser("advise", help="advice from the model and the campaign's studies",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Compute cores before either side loses 10%, where to place "
                                   "the communication, whether a progress thread pays, which "
                                   "broadcast routing: each with its numbers and uncertainty.",
                       epilog="examples:\n  jostle advise results/model\n"
                              "  jostle advise results/model --json")
    p.add_argument("directory", metavar="DIR", help="a campaign directory")
    p.add_argument("--json", action="store_true", help="print JSON for programs")
    p.set_defaults(func=main)


def gather(directory) -> dict:
    """The advice of DIR: the model (fitted when needed) and its leave-one-out error."""
    runs = load_runs(directory, benchmarks=None)
    con = [r for r in runs if r.benchmark == "contention"]
    if not runs:
        raise UsageError(f"campaign '{directory}' is empty; run `jostle model calibrate` "
                         "(and `jostle overlap` for the progress-thread advice)")
    doc = check = None
    if con:
        requirements(con, directory)
        doc = model_of(directory)
        check = model.errors(model.check(model.observations(con)))
    out = advise.advise(runs, doc, check)
    if not out["advice"]:
        raise UsageError(f"campaign '{directory}' holds nothing to advise on (no contention, "
                         "overlap or bcast run); run `jostle model calibrate`")
    return out


def main(args):
    out = gather(args.directory)
    if args.json:
        print(json.dumps(out, indent=1, default=str))
        return 0
    for title, key in (("What this machine shows", "headline"), ("Advice", "advice")):
        print(title)
        for item in out[key]:
            print(f"  - {item['text']}")
    err = out["model_error"]
    if err.get("mean_abs_error") is not None:
        print(f"Model error (leave-one-out, {err['predicted']} points): mean "
              f"{100 * err['mean_abs_error']:.1f}%, max {100 * err['max_abs_error']:.1f}%")
    fit = out.get("model_fit")
    if fit and not fit["fits"]:
        print(f"The model does not fit this machine (above the {fit['limit']:.0%} threshold, "
              "docs/model.md): the advice does not cite it. Likely cause: "
              + "; ".join(fit["causes"]))
    for lim in out["limits"]:
        print(f"Limit: {lim['what']}: {lim['reason']}")
    return 0
