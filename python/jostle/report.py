"""One self-contained HTML page for a set of runs: nothing external to fetch.

Figures are embedded as base64 PNG; warnings come first and stand out, since a
figure from an oversubscribed laptop must not be mistaken for a cluster's.
"""

import html
import json
import time
import warnings
from pathlib import Path

from . import __version__, figures
from .results import IncompleteRunWarning, load

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0;font-size:13px}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.warnings{background:#fff3f0;border:2px solid #c0392b;padding:.6em 1.2em;border-radius:4px}
.warnings li{color:#8b1a10}.ok{color:#1e7d32}.bad{color:#c0392b;font-weight:bold}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #eee}
figcaption{font-size:13px;color:#555}code{font-size:12px;word-break:break-all}
"""


def _e(v) -> str:
    return html.escape("" if v is None else str(v))


def _num(v) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return _e(v)
    return "" if f != f else f"{f:.4g}"


def _table(headers, rows, num_cols=()) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for h, v in zip(headers, row):
            if h in num_cols:
                cells.append(f'<td class="num">{_num(v)}</td>')
            else:
                cells.append(f"<td>{v if isinstance(v, _Raw) else _e(v)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


class _Raw(str):
    """Already-escaped HTML for a table cell."""


def _status(run) -> _Raw:
    if run.complete:
        return _Raw('<span class="ok">complete</span>')
    return _Raw(f'<span class="bad">INCOMPLETE</span>: {_e(run.problem)}')


def _warnings(runs, missing) -> list:
    items = []
    for r in runs:
        items += [f"{r.name}: {w}" for w in r.warnings]
        if not r.complete:
            items.append(f"{r.name}: incomplete run ({r.problem}); its {len(r.points)} point "
                         "line(s) are shown but the sweep did not finish")
    items += [f"{name}: planned in the campaign but never completed" for name in missing]
    return items


def _machines(runs) -> str:
    seen, parts = set(), []
    for r in runs:
        m = r.meta.get("machine") or {}
        host = (r.hosts or ["?"])[0]
        key = (host, json.dumps(m, sort_keys=True))
        if key in seen:
            continue
        seen.add(key)
        mem = m.get("memory_bytes")
        rows = [("host (rank 0)", host), ("CPU", m.get("cpu")), ("cores", m.get("cores")),
                ("hardware threads", m.get("pus")), ("NUMA nodes", m.get("numa_nodes")),
                ("memory", f"{mem / 2**30:.1f} GiB" if isinstance(mem, (int, float)) else mem),
                ("topology", m.get("topology")),
                ("MPI", (r.meta.get("mpi") or {}).get("library")),
                ("compiler", (r.meta.get("compiler") or {}).get("id")),
                ("jostle-bench", f"{r.meta.get('version', '?')} ({r.meta.get('git', '?')})")]
        parts.append(f"<h3>{_e(host)}</h3>" + _table(["", ""], rows))
        nics = m.get("nics") or []
        if nics:
            keys = ["name", "kind", "pci", "numa", "link_gbps"]
            parts.append(_table(["NIC", "kind", "PCI", "NUMA node", "link GB/s"],
                                [[n.get(k) for k in keys] for n in nics]))
        else:
            parts.append("<p>No network card found by hwloc.</p>")
    return "".join(parts) or "<p>No machine metadata.</p>"


def _runs_table(runs, missing) -> str:
    rows = []
    for r in runs:
        mpi = r.meta.get("mpi") or {}
        cmd = (r.launch or {}).get("command") or " ".join(r.meta.get("argv") or [])
        rows.append([r.name, r.benchmark, _status(r), ", ".join(dict.fromkeys(r.hosts)),
                     mpi.get("ranks"), mpi.get("library"), r.meta.get("start"), len(r.points),
                     (r.end or {}).get("elapsed_s"), _Raw(f"<code>{_e(cmd)}</code>"), str(r.path)])
    rows += [[n, "", _Raw('<span class="bad">not run</span>')] + [""] * 8 for n in missing]
    return _table(["run", "benchmark", "status", "hosts", "ranks", "MPI", "start", "point lines",
                   "elapsed s", "command", "file"], rows, num_cols=("elapsed s",))


def _results(runs) -> str:
    parts = []
    for r in runs:
        df = r.points
        if df.empty:
            continue
        cols = r.param_names + ["metric", "unit", "n", "median", "p25", "p75",
                                "ci95_lo", "ci95_hi", "converged"]
        rows = df[[c for c in cols if c in df]].itertuples(index=False)
        table = _table(cols, rows, num_cols=("median", "p25", "p75", "ci95_lo", "ci95_hi"))
        flag = "" if r.complete else ' <span class="bad">(incomplete)</span>'
        parts.append(f"<details><summary><b>{_e(r.name)}</b>{flag} — {len(df)} point lines "
                     f"(median, quartiles, 95% CI of the median)</summary>{table}</details>")
    return "".join(parts) or "<p>No points.</p>"


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


def _benchmark_sections(runs) -> str:
    """Sections a benchmark adds: the tables(runs) of its figure module, when it has one."""
    parts = []
    key = {id(r): figures.study_of(r) or r.benchmark for r in runs}
    for bench in dict.fromkeys(key.values()):
        tables = getattr(figures.module_for(bench), "tables", None)
        for t in tables([r for r in runs if key[id(r)] == bench]) if tables else []:
            parts.append(f'<section id="{_e(t["id"])}"><h2>{_e(t["title"])}</h2>'
                         f'<p>{_e(t["caption"])}</p>'
                         f'{_table(t["headers"], t["rows"], t.get("num_cols", ()))}</section>')
    return "".join(parts)


def _topology(dirs) -> str:
    """The machine picture and placement advice `jostle run` saved (figures/topo.py)."""
    from .figures.topo import saved
    parts = []
    for d in dirs:
        got = saved(d)
        if got:
            fig, lines = got
            parts.append(f'<figure id="machine-picture"><img alt="machine" src="data:image/png;'
                         f'base64,{figures.png_base64(fig)}"><figcaption>Cores, NUMA nodes and '
                         f'NICs as hwloc sees them</figcaption></figure><h3>Communication '
                         f'placement (jostle place --comm)</h3><ul>'
                         + "".join(f"<li>{_e(x)}</li>" for x in lines) + "</ul>")
            figures.plt.close(fig)
    return "".join(parts)


def render(runs, title="jostle report", missing=(), figures_dir=None, topology="") -> str:
    figs = figures.build(runs)
    try:
        if figures_dir is not None:
            figures.save(figs, figures_dir)
        fig_html = "".join(
            f'<figure id="{_e(f.id)}"><img alt="{_e(f.title)}" '
            f'src="data:image/png;base64,{figures.png_base64(f.fig)}">'
            f"<figcaption>{_e(f.caption)}</figcaption></figure>" for f in figs)
    finally:
        figures.close(figs)
    warn = _warnings(runs, missing)
    warn_html = ('<div class="warnings"><ul>' + "".join(f"<li>{_e(w)}</li>" for w in warn)
                 + "</ul></div>") if warn else '<p class="ok">No warnings recorded.</p>'
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title><style>{_CSS}</style></head>
<body>
<h1>{_e(title)}</h1>
<p>Generated {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())} by jostle {__version__}
from {len(runs)} run(s).</p>
<section id="warnings"><h2>Warnings</h2>{warn_html}</section>
<section id="runs"><h2>Runs</h2>{_runs_table(runs, missing)}</section>
<section id="machine"><h2>Machine</h2>{_machines(runs)}{topology}</section>
<section id="figures"><h2>Figures</h2>{fig_html or '<p>No figure for these benchmarks.</p>'}</section>
{_benchmark_sections(runs)}
<section id="results"><h2>Results</h2>{_results(runs)}</section>
</body></html>
"""


def write(paths, output, title=None, figures_dir=None) -> Path:
    """Load PATHS (incomplete runs included, and flagged) and write the page to OUTPUT.

    With FIGURES_DIR, the figures are also saved there as PNG and SVG files."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IncompleteRunWarning)  # flagged in the page instead
        runs = load(paths, allow_incomplete=True)
    dirs = [p for p in map(Path, paths) if p.is_dir()]
    title = title or "jostle report: " + ", ".join(p.name for p in map(Path, paths))
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(render(runs, title, _missing(dirs, runs), figures_dir, _topology(dirs)),
                      encoding="utf-8")
    return output
