"""`jostle compare A B`: is B slower than A, point by point, beyond the noise of the machine?"""

import argparse
import json
import math
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

from ..analysis import comparison, stats
from .. import figures
from ..errors import UsageError
from ..figures import compare as compare_figures

ORDER = 45
EXIT = "exit status: 0 no point slower beyond the tolerance, 1 some point slower, 2 bad input."
EXAMPLES = f"""examples:
  jostle compare results/before results/after          the table, worst points first
  jostle pingpong --sizes 1:4M --runs 3 --campaign before   (each side: K jobs, --runs K)
  jostle compare A B --format junit > compare.xml      one test case per point, for CI
  jostle compare A B --format json --tolerance 0.02 --metric latency
  jostle compare A B -o results/after/compare          JSON, JUnit XML and the figure, kept

{EXIT} See docs/statistics.md for how the intervals and verdicts are computed."""


def tolerance_type(text):
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (0 < v < 1):
        raise argparse.ArgumentTypeError(f"'{text}' is not allowed; expected a fraction in "
                                         "(0, 1), e.g. 0.05 for ±5%")
    return v


def add_comparison_options(p):
    g = p.add_argument_group("comparison")
    g.add_argument("--statistic", choices=comparison.STATISTICS, default="median",
                   help="each run's statistic of a point that is compared (default: median)")
    g.add_argument("--metric", action="append", metavar="NAME",
                   help="compare only this metric (repeatable; default: every metric)")
    g.add_argument("--tolerance", type=tolerance_type, default=0.05, metavar="F",
                   help="a slowdown within ±F is not a regression; 'same' needs the whole "
                        "interval inside it (default 0.05)")
    g.add_argument("--fdr", type=tolerance_type, default=0.05, metavar="Q",
                   help="Benjamini-Hochberg's false discovery rate over the points (default 0.05)")
    g.add_argument("--job-sd", type=tolerance_type, default=stats.JOB_SD_DEFAULT, metavar="S",
                   help="with one run per side: the assumed variation between MPI jobs, as a "
                        f"standard deviation of the log (default {stats.JOB_SD_DEFAULT}, measured: "
                        "docs/statistics.md)")
    g.add_argument("--allow-incomplete", action="store_true",
                   help="compare what an incomplete campaign holds")
    g.add_argument("--allow-different-machines", action="store_true",
                   help="compare runs of two kinds of machine (the differences are printed)")
    o = p.add_argument_group("output")
    o.add_argument("--format", choices=("table", "json", "junit"), default="table",
                   help="on stdout: a table (one line per verdict, worst first), JSON, or JUnit "
                        "XML (one test case per point, a failure for each slower one)")
    o.add_argument("--all", action="store_true", help="the table lists every point")
    o.add_argument("-o", "--output", metavar="DIR",
                   help="also write comparison.json, comparison.xml and the figures there")


def register(sub):
    p = sub.add_parser("compare", help="compare two campaigns point by point: slower, faster, same",
                       description="Compare B against the reference A: per matched point the "
                                   "ratio of the statistic with a 95%% interval that includes the "
                                   "variation between MPI jobs, and a verdict.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", metavar="A", help="the reference: a campaign folder or a .jsonl run file")
    p.add_argument("b", metavar="B", help="what is compared with it")
    add_comparison_options(p)
    p.set_defaults(func=main)


def check_output_dir(args):
    if args.output and Path(args.output).exists() and not Path(args.output).is_dir():
        raise UsageError(f"-o '{args.output}' is a file; expected a folder (made if missing)")


def run_comparison(args, a, b) -> comparison.Comparison:
    """The comparison of two loaded sides by the options of ARGS; refuses two machines."""
    diff = comparison.machine_differences(a.machine, b.machine)
    if diff and not args.allow_different_machines:
        raise UsageError(f"{a.label} and {b.label} were made on different machines ("
                         f"{'; '.join(diff)}); pass --allow-different-machines to compare them")
    return comparison.compare(a, b, args.statistic, args.tolerance, args.fdr, metrics=args.metric,
                              job_sd=args.job_sd)


def emit(args, cmp, a, b) -> int:
    """Print in --format, write -o's files; the exit status (1 when a point is slower)."""
    text = {"table": table, "json": lambda *x: json.dumps(as_json(*x), indent=1),
            "junit": junit}[args.format](cmp, a, b, *([args.all] if args.format == "table" else []))
    if args.output:
        out = Path(args.output)
        out.mkdir(parents=True, exist_ok=True)
        (out / "comparison.json").write_text(json.dumps(as_json(cmp, a, b), indent=1) + "\n")
        (out / "comparison.xml").write_text(junit(cmp, a, b) + "\n")
        figs = compare_figures.build(cmp)
        try:
            paths = figures.save(figs, out)
        finally:
            figures.close(figs)
        print(f"jostle: comparison in {out}: comparison.json, comparison.xml, "
              f"{len(paths)} figure file(s)", file=sys.stderr)
    print(text)
    return 1 if cmp.slower else 0


def main(args):
    check_output_dir(args)
    a = comparison.load_side(args.a, "A", args.allow_incomplete)
    b = comparison.load_side(args.b, "B", args.allow_incomplete)
    return emit(args, run_comparison(args, a, b), a, b)


# -- Output ---------------------------------------------------------------------------------

def _header(cmp, a, b) -> list:
    lines = [f"{a.label}: {a.runs} run(s); {b.label}: {b.runs} run(s)",
             f"machine: {comparison.machine_key(a.machine)}"]
    diff = comparison.machine_differences(*cmp.machines)
    if diff:
        lines.append(f"machines differ (--allow-different-machines): {'; '.join(diff)}")
    common = comparison.common_params(cmp.rows)
    if common:
        lines.append("every point: " + " ".join(f"{k}={v}" for k, v in common.items()))
    for name, (va, vb) in cmp.conditions.items():
        lines.append(f"compared: {name} {va} (A) -> {vb} (B)")
    lines += [f"slowdown: B's {cmp.statistic} over A's, oriented (> 1: B worse: a latency up, a "
              f"bandwidth down); 95% interval; tolerance ±{cmp.tolerance:.0%}",
              f"method: {cmp.method}", f"jobs: {cmp.jobs_note}"]
    return lines


def table(cmp, a, b, every=False) -> str:
    lines = _header(cmp, a, b)
    skip = comparison.common_params(cmp.rows)
    rows = cmp.rows.assign(worst=(cmp.rows["slowdown"].apply(math.log)).abs())
    for v in comparison.VERDICTS:
        group = rows[rows["verdict"] == v].sort_values("worst", ascending=False)
        if group.empty:
            lines.append(f"{v:10s} 0 points")
            continue
        shown = group if every else group.head(3)
        lines.append(f"{v:10s} {len(group)} point(s); "
                     + ("every one" if every else "worst") + ": "
                     + "; ".join(comparison.point_text(r, skip) for r in shown.to_dict("records"))
                     + ("" if every or len(group) <= 3 else f"; … {len(group) - 3} more (--all)"))
    for side, pts in (("A", cmp.only_a), ("B", cmp.only_b)):
        if pts:
            lines.append(f"only in {side}: {len(pts)} point(s), not compared: "
                         + "; ".join(pts[:5]) + ("; …" if len(pts) > 5 else ""))
    if cmp.not_compared:
        lines.append(f"not compared: {len(cmp.not_compared)} point(s) with a zero or missing "
                     f"{cmp.statistic} (e.g. {cmp.not_compared[0]})")
    c = cmp.counts()
    lines.append(f"verdict: {'SLOWER' if c['slower'] else 'no regression'} "
                 f"({', '.join(f'{n} {v}' for v, n in c.items())})")
    return "\n".join(lines)


def as_json(cmp, a, b) -> dict:
    pts = []
    for r in cmp.rows.to_dict("records"):
        pts.append({k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                    for k, v in r.items() if k not in ("worst",)})
    return {"schema": 1, "tool": "jostle compare",
            "a": {"label": a.label, "runs": a.runs, "machine": a.machine},
            "b": {"label": b.label, "runs": b.runs, "machine": b.machine},
            "statistic": cmp.statistic, "tolerance": cmp.tolerance, "method": cmp.method,
            "jobs": cmp.jobs_note, "conditions": {k: list(v) for k, v in cmp.conditions.items()},
            "counts": cmp.counts(), "exit_status": 1 if cmp.slower else 0, "points": pts,
            "only_a": cmp.only_a, "only_b": cmp.only_b, "not_compared": cmp.not_compared}


def junit(cmp, a, b) -> str:
    """JUnit XML: one test case per point (class: benchmark.metric), a failure when slower."""
    c = cmp.counts()
    suites = ET.Element("testsuites", name="jostle compare")
    suite = ET.SubElement(suites, "testsuite", name=f"{b.label} vs {a.label}",
                          tests=str(len(cmp.rows)), failures=str(c["slower"]), errors="0",
                          skipped="0")
    props = ET.SubElement(suite, "properties")
    for k, v in (("method", cmp.method), ("jobs", cmp.jobs_note),
                 ("tolerance", str(cmp.tolerance)), ("statistic", cmp.statistic)):
        ET.SubElement(props, "property", name=k, value=v)
    for r in cmp.rows.to_dict("records"):
        case = ET.SubElement(suite, "testcase", classname=f"{r['benchmark']}.{r['metric']}",
                             name=comparison.where(r["params"]) or r["metric"], time="0")
        if r["verdict"] == "slower":
            ET.SubElement(case, "failure", message=f"slower: {comparison.point_text(r)}",
                          type="slower").text = comparison.point_text(r)
        ET.SubElement(case, "system-out").text = f"{r['verdict']}: {comparison.point_text(r)}"
    return ET.tostring(suites, encoding="unicode", xml_declaration=True)
