"""`jostle compare A B`: is B slower than A, point by point, beyond the noise of the machine?"""

import argparse
import json
import math
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

from ..analysis import comparison, machines, stats
from .. import figures
from ..errors import UsageError
from ..figures import compare as compare_figures

ORDER = 45
EXIT = ("exit status: 0 no regression (no point or sweep slower, none undecided that could be), "
        "1 a point or a sweep slower beyond the tolerance, 2 bad input, 3 inconclusive (none "
        "slower, but some that could be are undecided, or one run per side without --job-sd; "
        "--undecided-ok makes it 0).")
EXAMPLES = f"""examples:
  jostle compare results/before results/after          the table, worst points first
  jostle pingpong --sizes 1:4M --runs 3 --campaign before   (each side: K jobs, --runs K)
  jostle compare results/run-A results/run-B           two `jostle run` campaigns: per MPI library
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
    g.add_argument("--job-sd", type=tolerance_type, default=None, metavar="S",
                   help="with one run per side: the variation between MPI jobs to assume, as a "
                        "standard deviation of the log (without it: ratios, no verdict; "
                        f"{stats.JOB_SD_DEFAULT} was measured on a busy 2-core VM, "
                        "docs/statistics.md)")
    g.add_argument("--undecided-ok", action="store_true",
                   help="exit 0, not 3, when the verdict is inconclusive (still printed so)")
    g.add_argument("--allow-incomplete", action="store_true",
                   help="compare what an incomplete campaign holds")
    g.add_argument("--allow-different-machines", action="store_true",
                   help="compare runs of two kinds of machine (the differences are printed), "
                        "or two MPI libraries when each side holds one")
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
    diff = machines.machine_differences(a.machine, b.machine)
    if diff and not args.allow_different_machines:
        raise UsageError(f"{a.label} and {b.label} were made on different machines ("
                         f"{'; '.join(diff)}); pass --allow-different-machines to compare them")
    return comparison.compare(a, b, args.statistic, args.tolerance, args.fdr, metrics=args.metric,
                              job_sd=args.job_sd, pair_libraries=args.allow_different_machines)


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
    return cmp.exit_status(args.undecided_ok)


def main(args):
    check_output_dir(args)
    a = comparison.load_side(args.a, "A", args.allow_incomplete)
    b = comparison.load_side(args.b, "B", args.allow_incomplete)
    return emit(args, run_comparison(args, a, b), a, b)


# -- Output ---------------------------------------------------------------------------------

def _header(cmp, a, b) -> list:
    lines = [f"{a.label}: {a.runs} run(s); {b.label}: {b.runs} run(s)",
             f"machine: {machines.machine_text(a.machine)}",
             f"MPI libraries compared (each against its own): {', '.join(cmp.libraries)}"]
    for side, libs in cmp.only_libraries.items():
        lines.append(f"only in {side}, not compared: {', '.join(libs)}")
    diff = machines.machine_differences(*cmp.machines)
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
    return lines + [f"note: {n}" for n in cmp.notes]


def _also(cmp) -> dict:
    """{(library, benchmark, params, test metric): the rows shown beside that test}."""
    out = {}
    for r in cmp.rows[~cmp.rows["test"]].to_dict("records"):
        key = (r["mpi"], r["benchmark"], json.dumps(r["params"], sort_keys=True), r["same_test_as"])
        out.setdefault(key, []).append(r)
    return out


def _also_of(also, r) -> list:
    return also.get((r["mpi"], r["benchmark"], json.dumps(r["params"], sort_keys=True),
                     r["metric"]), [])


def _verdict_line(cmp, lib=None) -> str:
    v = cmp.verdict(lib)
    c = cmp.counts(lib)
    text = {"slower": "SLOWER", "inconclusive": "INCONCLUSIVE", "no regression": "no regression"}[v]
    if v == "inconclusive":
        text += f": {cmp.why(lib)}"
    return f"{text} ({', '.join(f'{n} {k}' for k, n in c.items())} point(s))"


def table(cmp, a, b, every=False) -> str:
    lines = _header(cmp, a, b)
    skip = comparison.common_params(cmp.rows)
    also = _also(cmp)
    tests = cmp.tests.assign(worst=cmp.tests["slowdown"].apply(math.log).abs())
    for lib in cmp.libraries:
        lines.append(f"== {lib}")
        mine = tests[tests["mpi"] == lib]
        for v in comparison.VERDICTS:
            group = mine[mine["verdict"] == v].sort_values("worst", ascending=False)
            if group.empty:
                lines.append(f"{v:10s} 0 points")
                continue
            shown = group if every else group.head(3)
            lines.append(f"{v:10s} {len(group)} point(s); "
                         + ("every one" if every else "worst") + ": "
                         + "; ".join(comparison.point_text(r, skip, _also_of(also, r))
                                     for r in shown.to_dict("records"))
                         + ("" if every or len(group) <= 3 else f"; … {len(group) - 3} more (--all)"))
        for r in cmp.sweeps_of(lib).to_dict("records"):
            lines.append(f"sweep      {r['verdict']}: {comparison.sweep_text(r, skip)}")
        lines.append(f"verdict of {lib}: {_verdict_line(cmp, lib)}")
    for side, pts in (("A", cmp.only_a), ("B", cmp.only_b)):
        if pts:
            lines.append(f"only in {side}: {len(pts)} point(s), not compared: "
                         + "; ".join(pts[:5]) + ("; …" if len(pts) > 5 else ""))
    if cmp.not_compared:
        lines.append(f"not compared: {len(cmp.not_compared)} point(s) with a zero or missing "
                     f"{cmp.statistic} (e.g. {cmp.not_compared[0]})")
    lines.append(f"verdict: {_verdict_line(cmp)}")
    return "\n".join(lines)


def _clean(r) -> dict:
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in r.items() if k not in ("worst",)}


def as_json(cmp, a, b) -> dict:
    return {"schema": 2, "tool": "jostle compare",
            "a": {"label": a.label, "runs": a.runs, "machine": a.machine,
                  "libraries": list(a.libraries)},
            "b": {"label": b.label, "runs": b.runs, "machine": b.machine,
                  "libraries": list(b.libraries)},
            "statistic": cmp.statistic, "tolerance": cmp.tolerance, "method": cmp.method,
            "jobs": cmp.jobs_note, "conditions": {k: list(v) for k, v in cmp.conditions.items()},
            "verdict": cmp.verdict(), "counts": cmp.counts(), "exit_status": cmp.exit_status(),
            "libraries": {lib: {"verdict": cmp.verdict(lib), "counts": cmp.counts(lib)}
                          for lib in cmp.libraries},
            "only_libraries": cmp.only_libraries, "notes": cmp.notes,
            "points": [_clean(r) for r in cmp.rows.to_dict("records")],
            "sweeps": [_clean(r) for r in cmp.sweeps.to_dict("records")],
            "only_a": cmp.only_a, "only_b": cmp.only_b, "not_compared": cmp.not_compared}


def junit(cmp, a, b) -> str:
    """JUnit XML: a test suite per MPI library, one test case per point (class
    benchmark.metric, its test metric; the metrics derived from the same samples in its text)
    and per sweep; a failure when slower, skipped when undecided."""
    suites = ET.Element("testsuites", name="jostle compare")
    also = _also(cmp)
    for lib in cmp.libraries:
        tests = cmp.tests[cmp.tests["mpi"] == lib]
        sweeps = cmp.sweeps_of(lib)
        rows = [(r, comparison.point_text(r, also=_also_of(also, r)),
                 f"{r['benchmark']}.{r['metric']}", comparison.where(r["params"]) or r["metric"])
                for r in tests.to_dict("records")]
        rows += [(r, comparison.sweep_text(r), f"{r['benchmark']}.{r['metric']}.sweep",
                  " ".join(f"{k}={v}" for k, v in r["params"].items()) or "sweep")
                 for r in sweeps.to_dict("records")]
        suite = ET.SubElement(suites, "testsuite", name=f"{b.label} vs {a.label}: {lib}",
                              tests=str(len(rows)),
                              failures=str(sum(r["verdict"] == "slower" for r, *_ in rows)),
                              errors="0",
                              skipped=str(sum(r["verdict"] == "undecided" for r, *_ in rows)))
        props = ET.SubElement(suite, "properties")
        for k, v in (("method", cmp.method), ("jobs", cmp.jobs_note), ("mpi", lib),
                     ("tolerance", str(cmp.tolerance)), ("statistic", cmp.statistic),
                     ("verdict", cmp.verdict(lib))):
            ET.SubElement(props, "property", name=k, value=v)
        for r, text, cls, name in rows:
            case = ET.SubElement(suite, "testcase", classname=cls, name=name, time="0")
            if r["verdict"] == "slower":
                ET.SubElement(case, "failure", message=f"slower: {text}", type="slower").text = text
            elif r["verdict"] == "undecided":
                ET.SubElement(case, "skipped", message=f"undecided: {text}")
            ET.SubElement(case, "system-out").text = f"{r['verdict']}: {text}"
    return ET.tostring(suites, encoding="unicode", xml_declaration=True)
