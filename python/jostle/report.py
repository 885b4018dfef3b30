"""One self-contained HTML page for a set of runs: nothing external to fetch.

The first screen (issue 49) holds the summary table of the headline numbers beside their bounds
and the key figures as thumbnails; then the notices in three styles: errors (a run failed, a
number past its bound), warnings (the measurement's doubts, folded) and notes about the machine
(one NUMA node, oversubscribed: neutral). Figures are embedded as base64, compressed PNG or SVG
whichever is smaller; the per-point tables go to a CSV beside the page, linked.
This module gathers what the page says; the markup is in templates/ (Jinja2,
one template per section, autoescaped: every string from a record is escaped).
"""

import base64
import json
import math
import time
import warnings
from importlib import resources
from pathlib import Path
from typing import NamedTuple

import jinja2

from . import __version__, figures, units
from .analysis import advise, comparison, headline, quality, rules
from .figures import compare as compare_figures
from .records.results import IncompleteRunWarning, load
from .records.run_meta import EXCLUDE_NOTE


def _template_source(name):
    """Templates are package data, read through importlib so an installed wheel finds them."""
    try:
        return (resources.files(__package__) / "templates" / name).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


_ENV = jinja2.Environment(loader=jinja2.FunctionLoader(_template_source), autoescape=True,
                          trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)


def _text(v) -> str:
    return "" if v is None or v != v else str(v)   # v != v: NaN, a value the record lacks


def _num(v) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return _text(v)
    return "" if f != f else units.number(f)


class _Cell(NamedTuple):
    text: str
    num: bool   # right-aligned, formatted as a number


def _table(headers, rows, num_cols=()) -> dict:
    """A table for templates/table.html: its cells as text, numbers formatted."""
    return {"headers": [_text(h) for h in headers],
            "rows": [[_Cell(_num(v), True) if h in num_cols else _Cell(_text(v), False)
                      for h, v in zip(headers, row)] for row in rows]}


def _notices(runs, missing, summary) -> dict:
    """The page's three levels of notice: errors (a run that failed or never ran, a number past
    its bound), warnings ([quality.Line] of what could spoil a figure: the C side's about the
    measurement, then per benchmark and kind the points that did not converge, are
    resolution-limited or have several modes, the worst named, each setting's own line in the
    details) and notes about the machine (one NUMA node, oversubscribed), each once."""
    warn, notes = quality.split_run_warnings(runs)
    errors = [f"{r.name}: incomplete run ({r.problem}); its {len(r.points)} point line(s) are "
              "shown but the sweep did not finish" for r in runs if not r.complete]
    errors += [f"{name}: planned in the campaign but never completed" for name in missing]
    errors += [f"past its bound: {h['text']}" for h in (summary or {}).get("headline", [])
               if h.get("error")]
    whats = {}   # one line per reason: "one NUMA node" once, with all it keeps from being known
    for x in (summary or {}).get("limits") or []:
        whats.setdefault(x["reason"], []).append(x["what"])
    notes = [x.text for x in notes] + [f"{', '.join(w)}: {why}" for why, w in whats.items()]
    return {"errors": errors, "warnings": warn + quality.point_warnings(runs),
            "notes": list(dict.fromkeys(notes))}


# The figure a person came for, per benchmark (issue 49), by id prefix; a benchmark not named
# here shows its first figure.
KEY_FIGURES = ("pingpong-pow2", "contention-fig", "contention-", "overlap-heatmap-")
MAX_KEY = 4


def _key_figures(items) -> tuple:
    """(the key figures, the others) of ITEMS: one per benchmark (the id's first word), the one
    KEY_FIGURES prefers, else its first; at most MAX_KEY."""
    by_bench = {}
    for f in items:
        by_bench.setdefault(f["id"].split("-")[0], []).append(f)
    key = []
    for figs in by_bench.values():
        rank = [next((i for i, k in enumerate(KEY_FIGURES) if f["id"].startswith(k)),
                     len(KEY_FIGURES)) for f in figs]
        key.append((min(rank), figs[rank.index(min(rank))]))
    key = [f for _, f in sorted(key, key=lambda x: x[0])][:MAX_KEY]   # ping-pong's first
    return key, [f for f in items if f not in key]


def _mpis(runs, key) -> tuple:
    """The MPI libraries of the runs on machine KEY, and how each says it moves data."""
    libs = {}
    for r in runs:
        if _machine_key(r) == key:
            libs.setdefault((r.meta.get("mpi") or {}).get("library"), (r.short_mpi, r.mpi_transport))
    names = "; ".join(lib for lib in libs if lib)
    transports = "; ".join(f"{name}: {t}" if len(libs) > 1 else t
                           for name, t in libs.values() if t)
    return names, transports + (EXCLUDE_NOTE if "^" in transports else "")


# What tells machines apart: not the whole "machine" object, whose clock frequency and memory
# change between two runs (an Open MPI and an MPICH run showed one host twice).
_IDENTITY = ("cpu", "cores", "pus", "numa_nodes", "topology")


def _machine_key(run) -> tuple:
    m = run.meta.get("machine") or {}
    return ((run.hosts or ["?"])[0], *(json.dumps(m.get(k), sort_keys=True) for k in _IDENTITY))


def _machines(runs) -> list:
    seen, out = set(), []
    for r in runs:
        m = r.meta.get("machine") or {}
        host = (r.hosts or ["?"])[0]
        key = _machine_key(r)
        if key in seen:
            continue
        seen.add(key)
        mpi, transport = _mpis(runs, key)
        mem = m.get("memory_bytes")
        cores, pus = m.get("cores"), m.get("pus")
        smt = (None if not (cores and pus) else "off (one thread per core)" if pus == cores
               else f"on ({pus // cores} threads per core)")
        mhz = m.get("cpu_mhz")
        facts = [("host (rank 0)", host), ("CPU", m.get("cpu")),
                 ("CPU frequency", f"{mhz:.0f} MHz" if isinstance(mhz, (int, float)) else None),
                 ("frequency governor", m.get("cpu_governor") or
                  ("none (no cpufreq: a VM?)" if "cpu_governor" in m else None)),
                 ("cores", cores), ("hardware threads", pus), ("SMT", smt),
                 ("NUMA nodes", m.get("numa_nodes")),
                 ("OS", m.get("os")), ("kernel", m.get("kernel")),
                 ("memory", f"{mem / 2**30:.1f} GiB" if isinstance(mem, (int, float)) else mem),
                 ("topology", m.get("topology")),
                 ("MPI", mpi), ("MPI transport", transport),
                 ("compiler", (r.meta.get("compiler") or {}).get("id")),
                 ("jostle-bench", f"{r.meta.get('version', '?')} ({r.meta.get('git', '?')})")]
        keys = ["name", "kind", "pci", "numa", "link_gbps"]
        nics = [[n.get(k) for k in keys] for n in m.get("nics") or []]
        out.append({"host": host,   # a fact an older record lacks is left out, not blank
                    "facts": _table(["", ""], [(k, v) for k, v in facts if v not in (None, "")]),
                    "nics": _table(["NIC", "kind", "PCI", "NUMA node", "link GB/s"], nics)
                    if nics else None})
    return out


def _environment(runs) -> dict:
    """The environment every run shared, and what differs between them (rules.environments)."""
    env = rules.environments(runs)
    return {"runs": env["runs"],
            "common": _table(["setting", "value"], env["common"]) if env["common"] else None,
            "differs": _table(["setting", "value", "runs"], env["differs"])
            if env["differs"] else None,
            "launcher": _table(["variable", "value", "set by", "runs"], env["launcher"])
            if env["launcher"] else None}


def _runs_table(runs) -> list:
    rows = []
    for r in runs:
        mpi = r.meta.get("mpi") or {}
        rows.append({"name": r.name, "benchmark": r.benchmark, "complete": r.complete,
                     "problem": _text(r.problem), "hosts": ", ".join(dict.fromkeys(r.hosts)),
                     "ranks": _text(mpi.get("ranks")), "mpi": r.short_mpi,
                     "start": _text(r.meta.get("start")), "points": len(r.points),
                     "elapsed": _num((r.end or {}).get("elapsed_s")),
                     "command": (r.launch or {}).get("command") or " ".join(r.meta.get("argv") or []),
                     "file": str(r.path)})
    return rows


def _points_csv(runs, path) -> list:
    """Every run's per-point table in one CSV at PATH (a column 'run' first); the page lists
    the runs and links the file. [] and no file when no run has a point."""
    import pandas as pd
    frames = [units.shown_frame(r.points).assign(run=r.name) for r in runs if not r.points.empty]
    if not frames:
        return []
    df = pd.concat(frames, ignore_index=True)
    df[["run"] + [c for c in df.columns if c != "run"]].to_csv(path, index=False)
    return [{"name": r.name, "complete": r.complete, "count": len(r.points),
             "params": ", ".join(r.param_names)} for r in runs if not r.points.empty]


def _results(runs) -> list:
    out = []
    for r in runs:
        df = r.points
        if df.empty:
            continue
        cols = r.param_names + ["metric", "unit", "n", "median", "p25", "p75",
                                "ci95_lo", "ci95_hi", "converged"]
        df = units.shown_frame(df)
        if "converged" in df:   # the doubtful rows stand out, the others stay quiet
            df = df.assign(converged=[{False: "NO", True: "yes"}.get(v, "")
                                      for v in df["converged"]])
        rows = df[[c for c in cols if c in df]].itertuples(index=False)
        out.append({"name": r.name, "complete": r.complete, "count": len(df),
                    "table": _table(cols, rows, num_cols=("median", "p25", "p75", "ci95_lo",
                                                          "ci95_hi"))})
    return out


def _missing(dirs, runs) -> list:
    """Runs a campaign.json planned that have no file at all."""
    have = {r.name for r in runs}
    names = []
    for d in dirs:
        man = Path(d) / "campaign.json"
        if man.is_file():
            try:
                names += [x["name"] for x in json.loads(man.read_text())["runs"]]
            except (ValueError, KeyError, TypeError):
                pass
    return [n for n in dict.fromkeys(names) if n not in have]


def _benchmark_tables(runs) -> list:
    """Sections a benchmark adds: the tables(runs) of its figure module, when it has one."""
    out = []
    key = {id(r): figures.study_of(r) or r.benchmark for r in runs}
    for bench in dict.fromkeys(key.values()):
        tables = getattr(figures.module_for(bench), "tables", None)
        for t in tables([r for r in runs if key[id(r)] == bench]) if tables else []:
            out.append({"id": t["id"], "title": t["title"], "caption": t["caption"],
                        "table": _table(t["headers"], t["rows"], t.get("num_cols", ()))})
    return out


def _topology(dirs) -> list:
    """The machine picture and placement advice `jostle run` saved (figures/topo.py)."""
    from .figures.topo import saved
    out = []
    for d in dirs:
        got = saved(d)
        if got:
            fig, lines = got
            out.append({"png": figures.png_base64(fig), "lines": lines})
            figures.plt.close(fig)
    return out


def _comparison(runs, reference) -> dict:
    """The section of the comparison of RUNS against REFERENCE (a campaign or run file), with
    compare's defaults; None without one."""
    if reference is None:
        return None
    a = comparison.load_side(reference, "A", allow_incomplete=True)
    cmp = comparison.compare(a, comparison.points_of([r for r in runs if r.complete], "B"))
    items = _embedded(compare_figures.build(cmp))
    rows = cmp.tests[cmp.tests["verdict"] != "same"]
    rows = rows.assign(w=rows["slowdown"].apply(lambda x: abs(math.log(x))))
    rows = rows.sort_values(["verdict", "w"], ascending=[True, False], key=lambda c: c.map(
        {v: i for i, v in enumerate(comparison.VERDICTS)}) if c.name == "verdict" else c)
    table = _table(["verdict", "MPI", "benchmark", "metric", "point", "slowdown", "95% low",
                    "95% high"],
                   [(r["verdict"], r["mpi"], r["benchmark"], r["metric"],
                     comparison.where(r["params"]), r["slowdown"], r["lo"], r["hi"])
                    for r in rows.head(50).to_dict("records")],
                   num_cols=("slowdown", "95% low", "95% high"))
    sweeps = _table(["verdict", "MPI", "sweep", "slowdown", "95% low", "95% high"],
                    [(r["verdict"], r["mpi"], comparison.sweep_text(r), r["slowdown"], r["lo"],
                      r["hi"]) for r in cmp.sweeps.to_dict("records")],
                    num_cols=("slowdown", "95% low", "95% high")) if len(cmp.sweeps) else None
    n_only = len(cmp.only_a) + len(cmp.only_b)
    verdict = cmp.verdict()
    return {"reference": str(reference), "counts": cmp.counts(),
            "verdict": {"slower": "slower than the reference",
                        "inconclusive": f"inconclusive: {cmp.why()}",
                        "no regression": "no regression"}[verdict],
            "bad": verdict != "no regression",
            "libraries": ", ".join(cmp.libraries),
            "tolerance": f"{cmp.tolerance:.0%}", "jobs": cmp.jobs_note, "method": cmp.method,
            "figures": items, "table": table if len(rows) else None, "sweeps": sweeps,
            "unmatched": (f"{len(cmp.only_a)} point(s) only in the reference, {len(cmp.only_b)} "
                          "only here") if n_only else ""}


def _embedded(figs, figures_dir=None, smallest=False) -> list:
    """FIGS as the page embeds them (id, title, caption, PNG, src: its data URI); with
    FIGURES_DIR also saved there (PNG and SVG), each drawn once: the page takes the files
    saved. SMALLEST: the compressed PNG or the SVG, whichever is fewer bytes. FIGS are freed."""
    try:
        saved = figures.save(figs, figures_dir) if figures_dir is not None else []
        files = {(p.stem, p.suffix): p for p in saved}
        out = []
        for f in figs:
            if smallest:
                mime, data = figures.smallest(f.fig, files.get((f.id, ".png")),
                                              files.get((f.id, ".svg")))
                png = None
            else:
                png = figures.png_base64(f.fig, files.get((f.id, ".png")))
                mime, data = "image/png", base64.b64decode(png)
            out.append({"id": f.id, "title": f.title, "caption": f.caption, "png": png,
                        "src": f"data:{mime};base64," + base64.b64encode(data).decode("ascii"),
                        "bytes": len(data)})
        return out
    finally:
        figures.close(figs)


def render(runs, title="jostle report", missing=(), figures_dir=None, topology=(),
           summary=None, compared=None, history=None, points_csv=None) -> str:
    """The page for RUNS; MISSING: run names planned but never run; TOPOLOGY: _topology();
    POINTS_CSV: the file the per-point tables go to (linked by its name: beside the page),
    else they are in the page."""
    key, others = _key_figures(_embedded(figures.build(runs), figures_dir, smallest=True))
    return _ENV.get_template("base.html").render(
        title=title, version=__version__, runs=runs,
        generated=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        notices=_notices(runs, missing, summary), runs_table=_runs_table(runs),
        missing=list(missing), machines=_machines(runs), topology=list(topology),
        key_figures=key, figures=others, summary=summary,
        table=headline.summary_rows(summary["headline"]) if summary else [],
        environment=_environment(runs),
        rules=rules.twelve_rules(runs, lambda r: figures.study_of(r) or r.benchmark),
        comparison=compared, history=history,
        benchmark_tables=_benchmark_tables(runs),
        results=[] if points_csv else _results(runs),
        csv={"name": Path(points_csv).name, "runs": _points_csv(runs, points_csv)}
        if points_csv else None)


def write(paths, output, title=None, figures_dir=None, compare_with=None,
          history_db=None, on_summary=None) -> Path:
    """Load PATHS (incomplete runs included, and flagged) and write the page to OUTPUT.

    With FIGURES_DIR, the figures are also saved there as PNG and SVG files; with
    COMPARE_WITH (a campaign), a section compares the complete runs against it; with
    HISTORY_DB (a results store), a section draws the history of the runs' nodes; ON_SUMMARY
    is called with the summary (advise.for_runs, or None) the page opens on."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteRunWarning)  # flagged in the page instead
        runs = load(paths, allow_incomplete=True)
    dirs = [p for p in map(Path, paths) if p.is_dir()]
    title = title or "jostle report: " + ", ".join(p.name for p in map(Path, paths))
    output = Path(output)
    summary = advise.for_runs([r for r in runs if r.complete], title)
    if on_summary is not None:
        on_summary(summary)
    compared = _comparison(runs, compare_with)
    hist = _history_of(runs, history_db) if history_db else None
    csv = output.with_name(output.stem + ".points.csv")
    output.write_text(render(runs, title, _missing(dirs, runs), figures_dir, _topology(dirs),
                             summary, compared, hist, csv), encoding="utf-8")
    return output


def summary_of(paths, title=None) -> dict:
    """What `report --format json` prints: the summary table, the model's judgement, the advice
    and the notices of the runs under PATHS, without drawing anything."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteRunWarning)
        runs = load(paths, allow_incomplete=True)
    dirs = [p for p in map(Path, paths) if p.is_dir()]
    summary = advise.for_runs([r for r in runs if r.complete], title or "jostle report")
    notices = _notices(runs, _missing(dirs, runs), summary)
    return {"summary": [{k: v for k, v in h["row"].items()} | {"error": h["error"]}
                        for h in (summary or {}).get("headline", []) if h.get("row")],
            "model": (summary or {}).get("model_fit"),
            "advice": [{"topic": a["topic"], "text": a["text"]}
                       for a in (summary or {}).get("advice", [])],
            "errors": notices["errors"], "warnings": [w.text for w in notices["warnings"]],
            "notes": notices["notes"]}


# ---------------------------------------------------------------- the results store's history

def history_section(view, where, title, max_rows=200, figures_dir=None) -> dict:
    """The section of a history (analysis.history.View) read from the store WHERE; with
    FIGURES_DIR its figures are saved there too (PNG and SVG), each drawn once."""
    from .figures import history as history_figures
    items = _embedded(history_figures.build(view.series, view.drifts, view.bands), figures_dir)
    from .analysis import history
    rows = history.summary(view.series, view.drifts)
    rows.sort(key=lambda r: (not r["drift"], r["series"], r["node"]))
    table = _table(["node", "class", "series", "unit", "points", "first", "last", "latest",
                    "median", "latest / median", "drift"],
                   [(r["node"], r["class"], r["series"], r["unit"], r["points"], r["first"][:10],
                     r["last"][:10], r["latest"], r["median"], f"{r['latest_vs_median']:+.1%}",
                     r["drift"]) for r in rows[:max_rows]],
                   num_cols=("points", "latest", "median"))
    times = [r["time"] for r in view.rows]
    labels = {s.label for s in view.series}
    return {"title": title, "store": where, "runs": len({r["uid"] for r in view.rows}),
            "nodes": len({r["node"] for r in view.rows}),
            "first": min(times)[:10] if times else "-", "last": max(times)[:10] if times else "-",
            "series": len(view.series), "tested": len(view.tests),
            "drifts": [t.message() for t in view.drifts], "method": view.method,
            "figures": items, "table": table if rows else None,
            "more": (f"{len(labels) - len(items)} more series labels are in the table, not "
                     "drawn" if len(labels) > len(items) else "") +
                    (f"; the table shows {max_rows} of {len(rows)} series"
                     if len(rows) > max_rows else "")}


def history_page(section, output, title) -> Path:
    """A page with SECTION alone (jostle history --report)."""
    output = Path(output)
    output.write_text(_ENV.get_template("history_page.html").render(
        title=title, version=__version__, history=section,
        generated=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())), encoding="utf-8")
    return output


def _history_of(runs, db) -> dict:
    """The history section of the nodes of RUNS in the store DB."""
    from .analysis import history
    from .records import store
    nodes = sorted({h for r in runs for h in r.hosts})
    with store.open_store(db, create=False) as st:
        rows = st.points(store.Query(nodes=tuple(nodes)))
    return history_section(history.view(rows), store.shown(db),
                           "the nodes of these runs (" + ", ".join(nodes[:8])
                           + (", …" if len(nodes) > 8 else "") + ")")
