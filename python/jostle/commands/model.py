"""`jostle model calibrate|fit|predict|check`: the contention model of docs/model.md, fitted
from a campaign's contention records; calibrate runs the fewest runs it needs."""

import argparse
import json
import os
import sys
from pathlib import Path

from .. import figures
from ..run import bench_query
from ..analysis import model
from ..errors import UsageError
from ..figures import model as model_figures
from ..records.results import find_run_files, load, load_run
from ..sizes import human, parse_bytes
from . import _common
from ..studies import contention
from ..studies import model as study
from . import contention as contention_cmd

ORDER = 21
MODEL_FILE, CHECK_FILE = "model.json", "model-check.csv"
EXAMPLES = """examples:
  jostle model calibrate --quick              the fewest runs, a few minutes on a laptop
  jostle model fit results/model              parameters and uncertainty -> model.json
  jostle model predict results/model --cores 8 --comm-mem near --compute-mem near --size 64M
  jostle model check results/model            leave-one-out error per point, table and figure"""


# ---------------------------------------------------------------- reading and writing

def load_runs(directory, benchmarks=("contention",)) -> list:
    """The complete runs of DIR (of BENCHMARKS; None: all); none at all is an empty list."""
    d = Path(directory)
    if not d.is_dir():
        raise UsageError(f"'{directory}' is not a directory; expected a campaign directory "
                         "(e.g. results/model)")
    runs = load([d], allow_incomplete=False) if find_run_files(d) else []
    return [r for r in runs if benchmarks is None or r.benchmark in benchmarks]


def _missing_planned(directory, runs) -> list:
    man = Path(directory) / "campaign.json"
    try:
        planned = [x["name"] for x in json.loads(man.read_text())["runs"]
                   if x.get("benchmark", "contention") == "contention"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    have = {r.name for r in runs}
    return [n for n in planned if n not in have]


def requirements(runs, directory) -> None:
    """Refuse (exit 2) a campaign that cannot identify the model; say which runs are missing."""
    missing = _missing_planned(directory, runs)
    obs = model.observations(runs) if runs else None
    need = []
    if obs is None or obs.empty:
        need.append("contention runs (jostle model calibrate)")
    else:
        cores = set(obs[(obs.side == "compute") & (obs.phase == "alone")].cores)
        bw = obs[(obs.side == "comm") & (obs["size"] >= model.BANDWIDTH_BOUND)]
        if len(cores) < 2:
            need.append(f"compute alone at ≥ 2 core counts (have {sorted(cores) or 'none'})")
        if bw.empty:
            need.append(f"a transfer of ≥ {human(model.BANDWIDTH_BOUND)} (have "
                        f"{', '.join(human(int(s)) for s in sorted(set(obs['size'])))})")
    if missing:
        need.append(f"planned runs not complete: {', '.join(missing)}")
    if need:
        raise UsageError(f"campaign '{directory}' cannot be fitted: missing {'; '.join(need)}; "
                         "run `jostle model calibrate` (or resume it) to make them")


def write_atomic(path, text):
    """.partial then rename: no half-written file looks complete."""
    path = Path(path)
    tmp = path.with_name(path.name + ".partial")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def fit_dir(directory) -> dict:
    runs = load_runs(directory)
    requirements(runs, directory)
    doc = model.document(runs, Path(directory).name)
    doc["directory"] = str(Path(directory).resolve())
    write_atomic(Path(directory) / MODEL_FILE, json.dumps(doc, indent=1) + "\n")
    return doc


def model_of(directory) -> dict:
    """DIR/model.json when it is newer than every run file, else a fresh fit (written)."""
    d = Path(directory)
    f = d / MODEL_FILE
    if f.is_file() and all(f.stat().st_mtime >= p.stat().st_mtime for p in d.glob("*.jsonl")):
        return json.loads(f.read_text())
    return fit_dir(d)


# ---------------------------------------------------------------- the commands

def register(sub):
    p = sub.add_parser("model", help="the contention model: calibrate, fit, predict, check",
                       description=__doc__, epilog=EXAMPLES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    s = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    cal = s.add_parser("calibrate", help="run the fewest contention runs the model needs",
                       description="Plan and run (resumably) contention runs at 1, 2, ¼, ½ and "
                                   "all cores, 4 B, 1 MiB and 64 MiB, near and far the NIC where "
                                   "the machine has several NUMA nodes; then fit and say how "
                                   "long fig1 + fig2 would have taken.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    contention_cmd.add_options(cal, "fig1")   # the same study options as contention fig1
    cal.set_defaults(func=calibrate, campaign="model")
    for name, func, what in (("fit", fit_main, "fit DIR's records, write DIR/model.json"),
                             ("predict", predict_main, "bandwidths together at K cores"),
                             ("check", check_main, "leave-one-out error of every point")):
        q = s.add_parser(name, help=what, description=what, epilog=EXAMPLES,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
        q.add_argument("directory", metavar="DIR", help="a campaign directory")
        q.add_argument("--json", action="store_true", help="print JSON instead of text")
        q.set_defaults(func=func)
        if name == "predict":
            q.add_argument("--cores", type=_common.nonneg_int, required=True, metavar="K",
                           help="compute cores per rank")
            q.add_argument("--comm-mem", choices=("near", "far"), default="near",
                           help="NUMA node of the comm buffers, against the NIC (near)")
            q.add_argument("--compute-mem", choices=("near", "far"), default="near",
                           help="NUMA node of the compute data (near)")
            q.add_argument("--kernel", choices=contention.KERNELS, help="(the campaign's, if one)")
            q.add_argument("--size", required=True, metavar="BYTES", help="message size, e.g. 64M")


def calibrate(args):
    _common.check_hosts(args)
    config = _common.launch_config(args)
    machine = bench_query.bench_machine(config.bench)
    settings = _common.settings(contention.Settings, args)

    def after(camp, config, progress):
        done = [load_run(camp.output(s)) for s in camp.runs]
        doc = fit_dir(camp.dir)
        print(camp.dir / MODEL_FILE)
        print(f"jostle: {study.sweep_estimate(settings, machine, done)}", file=sys.stderr)
        for lim in doc["not_identifiable"]:
            print(f"jostle: {lim['what']}: {lim['reason']}", file=sys.stderr)
        return 0
    return _common.run_campaign(args, study.plan(settings, machine), after, config)


def fit_main(args):
    doc = fit_dir(args.directory)
    if args.json:
        print(json.dumps({k: v for k, v in doc.items()}, indent=1))
        return 0
    print(Path(args.directory) / MODEL_FILE)
    for cfg in doc["configurations"]:
        print(f"{cfg['kernel']} (stores {cfg['stores']}), comm-mem {cfg['comm_mem']}, "
              f"compute-mem {cfg['compute_mem']}: {cfg['points']} points, runs "
              f"{', '.join(cfg['runs'])}")
        for k, p in cfg["parameters"].items():
            if k == "M":
                for s, q in p.items():
                    print(f"  M({human(int(s))}) = {_pm(q)} GB/s  comm alone")
            else:
                print(f"  {k} = {_pm(p)}  {p['what']}")
    for lim in doc["not_identifiable"]:
        print(f"{lim['what']}: {lim['reason']}")
    return 0


def _pm(p) -> str:
    """'value [lo, hi]' or why it is not identifiable."""
    if p.get("value") is None:
        return f"not identifiable ({p.get('reason')})"
    ci = p.get("ci95")
    return f"{p['value']:.4g}" + (f" [95%: {ci[0]:.4g}, {ci[1]:.4g}]" if ci else "")


def predict_main(args):
    doc = model_of(args.directory)
    size = [parse_bytes(args.size)]
    cores = (doc["machine"].get("cores") or 0)
    if cores and args.cores > cores:
        raise UsageError(f"--cores {args.cores} is not allowed; this machine has {cores} cores")
    kernels = sorted({cfg["kernel"] for cfg in doc["configurations"]})
    try:
        cfg = model.configuration(doc, args.kernel or (kernels[0] if len(kernels) == 1 else None),
                                  args.comm_mem, args.compute_mem)
        out = model.predict(cfg, args.cores, size[0])
    except model.NotIdentifiable as e:
        raise UsageError(str(e)) from None
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    for side in ("compute", "comm"):
        o = out[side]
        if o["together_GBps"] is None:
            print(f"{side}: latency-bound at {human(size[0])}: outside the model (docs/model.md)")
            continue
        ci = o["ci95"]
        loss = f", {100 * o['loss']:.1f}% below alone" if o["loss"] is not None else ""
        print(f"{side}: {o['together_GBps']:.4g} GB/s together"
              + (f" [95%: {ci[0]:.4g}, {ci[1]:.4g}]" if ci else "")
              + f" (alone {o['alone_GBps']:.4g}{loss})")
    return 0


def check_main(args):
    runs = load_runs(args.directory)
    requirements(runs, args.directory)
    table = model.check(model.observations(runs))
    summ = model.errors(table)
    d = Path(args.directory)
    write_atomic(d / CHECK_FILE, table.to_csv(index=False))
    paths = figures.write([model_figures.check_figure(table, runs)], d / "figures")
    if args.json:
        print(json.dumps({**summ, "points": table.to_dict("records")}, indent=1, default=str))
        return 0
    cols = ["run", "phase", "side", "cores", "size", "measured", "predicted", "error"]
    print(table[cols].to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    for w in sorted(set(table.why) - {""}):
        print(f"not predicted: {w}")
    mean, mx = summ["mean_abs_error"], summ["max_abs_error"]
    print(f"leave-one-out over {summ['predicted']}/{summ['points']} points: mean |error| "
          + (f"{100 * mean:.1f}%, max {100 * mx:.1f}%" if mean is not None else "n/a"))
    for p in paths:
        print(p)
    return 0
