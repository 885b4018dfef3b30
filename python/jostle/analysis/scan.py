"""`jostle scan`'s reading of its campaign: each node and link against the allocation.

A scan's runs (commands/scan.py plans them) are a fingerprint per node (pingpong and contention
runs on that node alone) and one `shift` run over all nodes (every directed link). This module
turns their records into one value per node and metric and one per link and metric, and flags
what is far from the allocation's own median on the side that is worse:

    z = (log x - median) / sqrt(MAD^2 + u^2)   (robust z: the MAD scaled by 1.4826, at least
                                                 0.01; u: the value's own uncertainty, if any)

on the log scale for every metric: a latency, a bandwidth, and the degradation under load as
a ratio (how many times worse under load than alone, against the allocation's median ratio;
its u from the 95% intervals of the two medians, so a 4-byte latency that waited out a time
slice in a few loose samples is not far; on an oversubscribed node the ratios are not judged
at all: a time slice is all they would measure). A value is flagged when z >= the threshold AND it
differs from the median by at least the minimum effect (relative): with few nodes the MAD can
be tiny, and a 3% difference is not a fault whatever its z. A node whose every link out (or
in) is flagged against the links that do not touch it is named as the node, not as N-1 links.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from types import SimpleNamespace

from . import comparison, contention
from .. import lazy
from ..errors import UsageError
from .stats import mad

np = lazy.module("numpy")
pd = lazy.module("pandas")

# The MAD is never taken below 1% (of the median: 0.01 on the log scale): values
# all alike (a simulation, a quiet machine) give a MAD of 0, and every difference an infinite z.
MAD_FLOOR = 0.01
HOST_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
INJECT_KINDS = ("bandwidth", "latency")


@dataclass(frozen=True)
class NodeMetric:
    name: str
    benchmark: str     # which fingerprint run holds it
    metric: str
    unit: str
    worse: int         # +1: higher is worse
    size: object = None   # the point's message size: bytes, "small" or "large" of the run's, None: any
    phase: str = None  # contention's phase
    degradation: bool = False   # a contention.pairs() degradation, not a point's median
    label: str = ""


FINGERPRINT = (
    NodeMetric("pingpong_latency", "pingpong", "latency", "us", +1, 8,
               label="intra-node latency at 8 B"),
    NodeMetric("pingpong_bandwidth", "pingpong", "bandwidth", "MB/s", -1, 1 << 20,
               label="intra-node bandwidth at 1 MiB"),
    NodeMetric("memory_latency", "memlat", "latency", "ns", +1,
               label="memory latency: one dependent load, a miss to the node's memory"),
    NodeMetric("triad", "contention", "compute_throughput", "GB/s", -1, None, "compute",
               label="triad on the compute cores, alone"),
    NodeMetric("latency_alone", "contention", "latency", "us", +1, "small", "comm",
               label="latency at the small size (4 B) beside idle cores"),
    NodeMetric("latency_under_load", "contention", "latency", "x", +1, "small", degradation=True,
               label="latency at 4 B with every other core computing / alone"),
    NodeMetric("bandwidth_under_load", "contention", "bandwidth", "x", +1, "large",
               degradation=True, label="bandwidth at the large size (64 MiB) alone / under load"),
)
LINK_METRICS = (("latency", "us", +1), ("bandwidth", "MB/s", -1))


# ---------------------------------------------------------------- input

def check_hosts(hosts, allowed=None, where="--hosts") -> list:
    """HOSTS as given, refused (exit 2, the value named) when fewer than two, repeated, not a
    plain host name (it becomes part of a file name), or not among ALLOWED (the job's nodes)."""
    hosts = [h.strip() for h in hosts if h.strip()]
    if len(hosts) < 2:
        raise UsageError(f"{where} '{','.join(hosts)}': a scan needs at least 2 hosts "
                         "(it compares each node with the others)")
    for h in hosts:
        if not HOST_RE.match(h):
            raise UsageError(f"{where}: host '{h}' is not allowed; expected a host name of "
                             "letters, digits, '.', '-' and '_'")
    dup = sorted({h for h in hosts if hosts.count(h) > 1})
    if dup:
        raise UsageError(f"{where}: host '{dup[0]}' is named twice; each host once")
    if allowed is not None:
        unknown = [h for h in hosts if h not in allowed]
        if unknown:
            raise UsageError(f"{where}: unknown host '{unknown[0]}': not in this allocation; "
                             f"allowed: {', '.join(allowed)}")
    return hosts


def read_hostfile(path) -> list:
    """One host per line (`host slots=N` and `host:N` read as host; # starts a comment)."""
    try:
        text = open(path).read()
    except OSError as e:
        raise UsageError(f"--hostfile '{path}': cannot read it ({e.strerror})") from None
    out = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(line.split()[0].split(":")[0])
    return out


def parse_inject(text, nodes) -> tuple:
    """'link:I:bandwidth=F' or 'link:I:latency=F' -> (I, kind, F): node I's link at F times the
    platform's bandwidth (or latency)."""
    m = re.match(r"^link:([0-9]+):([a-z_]+)=([0-9.eE+-]+)$", text or "")
    if not m:
        raise UsageError(f"--inject '{text}' is not allowed; expected link:I:bandwidth=F or "
                         "link:I:latency=F")
    i, kind = int(m.group(1)), m.group(2)
    if kind not in INJECT_KINDS:
        raise UsageError(f"--inject '{text}': unknown kind '{kind}'; allowed: "
                         f"{', '.join(INJECT_KINDS)}")
    if i >= nodes:
        raise UsageError(f"--inject '{text}': node {i} does not exist; allowed: 0 to {nodes - 1}")
    try:
        f = float(m.group(3))
    except ValueError:
        f = math.nan
    if not (f > 0 and math.isfinite(f)):
        raise UsageError(f"--inject '{text}': factor '{m.group(3)}' is not allowed; expected a "
                         "number > 0")
    return i, kind, f


# ---------------------------------------------------------------- tables from records

def _size(points, size):
    if size in ("small", "large") and "size" in points and len(points):
        return points["size"].min() if size == "small" else points["size"].max()
    return size


def _pick(points, metric, size=None, phase=None):
    df = points[points.metric == metric]
    size = _size(points, size)
    if size is not None and "size" in df:
        df = df[df["size"] == size]
    if phase is not None and "phase" in df:
        df = df[df["phase"] == phase]
    return df


def load_ratio(pairs, metric, size) -> tuple:
    """(ratio, u) of a contention run's PAIRS at SIZE: how many times worse METRIC is under
    load than alone (together / alone for a latency, alone / together for a bandwidth), and
    the standard uncertainty of its log from the two medians' 95% intervals (added in
    quadrature; 0 where a record has none). NaN when the run has no such pair."""
    sel = pairs[(pairs.metric == metric) & (pairs["size"] == size)] \
        if not pairs.empty and "size" in pairs else pairs.iloc[0:0]
    if not len(sel):
        return math.nan, math.nan
    sign = contention.METRICS[metric][1]
    a, t = sel.alone.to_numpy(dtype=float), sel.together.to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = float(np.median(t / a if sign > 0 else a / t))
        u = 0.0
        for side in ("alone", "together"):
            lo, hi = (sel.get(f"{side}_{b}") for b in ("lo", "hi"))
            if lo is not None and hi is not None:
                w = np.log(hi.to_numpy(dtype=float) / lo.to_numpy(dtype=float)) / (2 * 1.96)
                w = w[np.isfinite(w)]
                u = math.hypot(u, float(np.median(w)) if w.size else 0.0)
    return ratio, u


def oversubscribed(run) -> bool:
    """Whether RUN had more bound threads than cores (its records say so): a compute thread
    then shares the communicating thread's core, and a ratio under load is the scheduler's
    time slice (milliseconds, against a microsecond alone), not the node's memory system."""
    return "oversubscribed" in getattr(run, "caveats", ())


def node_values(runs_by_host: dict) -> pd.DataFrame:
    """One row per host, one column per FINGERPRINT metric (NaN where a run is missing, and
    for a ratio under load where the run was oversubscribed), and for an under-load ratio
    METRIC_u, the uncertainty of its log.
    RUNS_BY_HOST: host -> {benchmark: results.Run}."""
    rows = {}
    for host, runs in runs_by_host.items():
        row = {}
        for m in FINGERPRINT:
            run = runs.get(m.benchmark)
            v = math.nan
            if m.degradation:
                v, row[m.name + "_u"] = math.nan, math.nan
                if run is not None and not oversubscribed(run):
                    v, row[m.name + "_u"] = load_ratio(
                        contention.pairs(run.points, run.param_names), m.metric,
                        _size(run.points, m.size))
            elif run is not None:
                sel = _pick(run.points, m.metric, m.size, m.phase)
                v = float(sel["median"].median()) if len(sel) else math.nan
            row[m.name] = v
        rows[host] = row
    cols = [c for m in FINGERPRINT for c in (m.name, *((m.name + "_u",) if m.degradation else ()))]
    return pd.DataFrame.from_dict(rows, orient="index", columns=cols)


def link_values(run, hosts=None) -> pd.DataFrame:
    """One row per directed link of a shift run: src, dst (hosts), latency at its smallest size,
    bandwidth at its largest. HOSTS: the run's hosts as the scan names them, rank r on HOSTS[r]
    (one rank per host, in order): used when the ranks' own host names are others (an address
    given, a name the node gives itself)."""
    df = run.points
    if hosts is not None and not df.empty and \
            not set(df.src_host) | set(df.dst_host) <= set(hosts) and df.src.max() < len(hosts):
        df = df.assign(src_host=[hosts[int(r)] for r in df.src],
                       dst_host=[hosts[int(r)] for r in df.dst])
    if df.empty:
        return pd.DataFrame(columns=["src", "dst", "latency", "bandwidth"])
    small, large = df["size"].min(), df["size"].max()
    lat = df[(df.metric == "latency") & (df["size"] == small)]
    bw = df[(df.metric == "bandwidth") & (df["size"] == large)]
    out = lat[["src_host", "dst_host", "median"]].rename(columns={"median": "latency"}).merge(
        bw[["src_host", "dst_host", "median"]].rename(columns={"median": "bandwidth"}),
        on=["src_host", "dst_host"], how="outer")
    return out.rename(columns={"src_host": "src", "dst_host": "dst"}).reset_index(drop=True)


# ---------------------------------------------------------------- outliers

def score(values, worse, threshold, min_effect, center=None, reference=None, noise=None):
    """(z, flagged) of each value against the values' median and MAD (or CENTER, a baseline;
    or the median and MAD of REFERENCE, other values of the same metric), on the log scale.
    NOISE: each value's own standard uncertainty on that scale, added to the MAD in
    quadrature (a value measured too loosely to tell is not far)."""
    def logs(a):
        a = np.asarray(a, dtype=float)
        ok = np.isfinite(a) & (a > 0)
        return np.log(np.where(ok, a, 1.0)), ok
    x, ok = logs(values)
    r, rok = logs(values if reference is None else reference)
    if center is not None:
        med = math.log(center)
    elif rok.any():
        med = float(np.median(r[rok]))
    else:
        return np.full(x.shape, math.nan), np.zeros(x.shape, bool)
    s = max(mad(r[rok]) if rok.sum() > 1 else 0.0, MAD_FLOOR)
    u = np.zeros(x.shape) if noise is None else np.nan_to_num(np.asarray(noise, dtype=float))
    z = worse * (x - med) / np.hypot(s, u)
    flagged = ok & (z >= threshold) & (np.abs(np.exp(x - med) - 1) >= min_effect)
    return np.where(ok, z, np.nan), flagged


@dataclass
class Finding:
    kind: str          # unreachable | node | link
    where: str         # a host, or SRC->DST
    evidence: list     # [{metric, value, unit, median, z, run, label}]
    z: float

    def to_dict(self, rank) -> dict:
        node = self.where if self.kind != "link" else None
        return {"rank": rank, "kind": self.kind, "node": node,
                "link": self.where if self.kind == "link" else None,
                "z": None if not math.isfinite(self.z) else round(self.z, 2),
                "evidence": self.evidence}


def _ev(metric, value, unit, median, z, run, label="", reference="allocation"):
    def num(x):
        return None if x is None or not math.isfinite(x) else round(float(x), 6)
    return {"metric": metric, "value": num(value), "unit": unit, "median": num(median),
            "z": None if not math.isfinite(z) else round(float(z), 2), "run": run,
            "label": label, "reference": reference}


def judge_nodes(values: pd.DataFrame, runs_of: dict, threshold, min_effect, baseline=None,
                against="") -> tuple:
    """(table with a z and a flag per metric, {host: [evidence]}). BASELINE: the node_values
    of a saved scan (baseline_values), AGAINST its name: each value is also judged against the
    baseline's nodes (their median and MAD), its z in METRIC_zb."""
    table = values.copy()
    flagged = {}
    for m in FINGERPRINT:
        col = values[m.name].to_numpy(dtype=float)
        noise = values[m.name + "_u"].to_numpy(dtype=float) if m.degradation else None
        refs = [("allocation", None, "_z")]
        if baseline is not None and np.isfinite(baseline[m.name].to_numpy(dtype=float)).any():
            refs.append((f"baseline {against}", baseline[m.name].to_numpy(dtype=float), "_zb"))
        for ref_name, ref, suffix in refs:
            z, f = score(col, m.worse, threshold, min_effect, noise=noise, reference=ref)
            table[m.name + suffix] = z
            base = col if ref is None else ref
            med = float(np.nanmedian(base)) if np.isfinite(base).any() else math.nan
            for host, zz, ff, v in zip(values.index, z, f, col):
                if ff:
                    flagged.setdefault(host, []).append(
                        _ev(m.name, v, m.unit, med, zz, runs_of.get((host, m.benchmark), ""),
                            m.label, ref_name))
    return table, flagged


def baseline_values(points) -> pd.DataFrame:
    """node_values of the fingerprint runs of a saved scan (comparison.Points, from a baseline
    of `jostle baseline save SCAN-FOLDER`): one row per node it measured, the host from each
    run's file name (fp-BENCHMARK-HOST; the confirmations, -again, left out)."""
    f = points.frame
    by_host = {}
    for run, df in (f.groupby("run", sort=False) if not f.empty else ()):
        bench = str(df.benchmark.iloc[0])
        stem = str(run).rsplit("/", 1)[-1].removesuffix(".jsonl")
        if not stem.startswith(f"fp-{bench}-") or stem.endswith("-again"):
            continue
        df = df.loc[:, df.notna().any()]
        names = [c for c in (*comparison.param_columns(df), "rep") if c in df.columns]
        by_host.setdefault(stem[len(f"fp-{bench}-"):], {})[bench] = \
            SimpleNamespace(points=df.reset_index(drop=True), param_names=names)
    return node_values(by_host)


def judge_links(links: pd.DataFrame, hosts, run_path, threshold, min_effect,
                metrics=None) -> tuple:
    """(links table with z and flags, node findings, link findings). Each link is judged
    against every link; a node all of whose links out (or all in) are far, for one metric, from
    the links that do not touch it is one node finding: one bad node touches 2(N-1) of the
    N(N-1) links, half of them at N = 4, where their own median and MAD would no longer be the
    healthy links'. A flagged link of a node so named is that node's evidence too (into a node
    whose sending is capped, TCP's acknowledgements wait behind its data, in the round where
    the pair exchange both ways). METRICS: the names of LINK_METRICS judged (default all; the
    others get no flag)."""
    links = links.copy()
    judged = [m for m in LINK_METRICS if metrics is None or m[0] in metrics]
    for metric, _unit, _worse in LINK_METRICS:
        links[metric + "_z"], links[metric + "_flag"] = np.nan, False
    for metric, _unit, worse in judged:
        z, f = score(links[metric].to_numpy(dtype=float), worse, threshold, min_effect)
        links[metric + "_z"], links[metric + "_flag"] = z, f
    nodes, claimed = {}, set()
    for h in hosts:
        others = links[(links.src != h) & (links.dst != h)]
        for side, col in (("out", "src"), ("in", "dst")):
            mine = links[links[col] == h]
            for metric, unit, worse in judged:
                ref = others[metric] if others[metric].notna().sum() >= 2 else links[metric]
                z, f = score(mine[metric].to_numpy(dtype=float), worse, threshold, min_effect,
                             reference=ref.to_numpy(dtype=float))
                if len(mine) >= 2 and f.all():
                    nodes.setdefault(h, []).append(_ev(
                        f"links_{side}_{metric}", float(mine[metric].median()), unit,
                        float(ref.median()), float(z.min()), str(run_path),
                        f"every link {side} of the node: median {metric} of its {len(mine)}, "
                        "against the links that do not touch it"))
                    claimed.update(mine.index)
    found = []
    for idx, row in links.iterrows():
        if idx in claimed:
            continue
        ev = [_ev(metric, row[metric], unit, float(links[metric].median()), row[metric + "_z"],
                  str(run_path), f"link {row.src}->{row.dst}")
              for metric, unit, _ in judged if row[metric + "_flag"]]
        named = [h for h in (row.src, row.dst) if h in nodes]
        if ev and named:
            nodes[named[0]].extend(ev)
        elif ev:
            found.append(Finding("link", f"{row.src}->{row.dst}", ev, max(e["z"] for e in ev)))
    return links, nodes, found


def rank(unreachable: dict, node_ev: dict, link_findings: list) -> list:
    """Suspects, worst first: unreachable nodes, then by their largest robust z."""
    out = [Finding("unreachable", h, [{"metric": "reachable", "value": None, "unit": "",
                                       "median": None, "z": None, "run": run, "label": why}],
                   math.inf) for h, (why, run) in unreachable.items()]
    found = [Finding("node", h, ev, max((e["z"] or 0) for e in ev)) for h, ev in node_ev.items()]
    found += link_findings
    out += sorted(found, key=lambda f: -f.z)
    return out


def drain_lines(suspects) -> list:
    """`scontrol update` lines that drain each flagged node (links name no node to drain)."""
    out = []
    for s in suspects:
        if s.kind == "link":
            continue
        what = "unreachable" if s.kind == "unreachable" else \
            ", ".join(f"{e['metric']} z={e['z']}" for e in s.evidence[:3])
        reason = re.sub(r"[^A-Za-z0-9 .,:=_+-]", "", f"jostle scan: {what}")[:200]
        out.append(f'scontrol update NodeName={s.where} State=DRAIN Reason="{reason}"')
    return out


# ---------------------------------------------------------------- output

def _num(x):
    return None if x is None or x != x or x in (float("inf"), float("-inf")) else round(float(x), 4)


def nodes_json(table, dead) -> list:
    out = [{"host": h, "status": "ok", **{k: _num(v) for k, v in row.items()}}
           for h, row in table.iterrows()]
    return out + [{"host": h, "status": "unreachable"} for h in sorted(dead)]


def links_json(links) -> list:
    return [{"src": r.src, "dst": r.dst, "latency_us": _num(r.latency),
             "bandwidth_MBps": _num(r.bandwidth), "latency_z": _num(r.latency_z),
             "bandwidth_z": _num(r.bandwidth_z),
             "flagged": bool(r.latency_flag or r.bandwidth_flag)} for r in links.itertuples()]


def text(doc, table) -> str:
    cols = [m.name for m in FINGERPRINT]
    lines = [f"jostle scan: {len(doc['hosts'])} nodes, {len(doc['unreachable'])} unreachable, "
             f"{len(doc['suspects'])} suspect(s), {doc['elapsed_s']:.0f} s; {doc['campaign']}"]
    if not table.empty and table[cols].notna().any().any():
        lines.append("node".ljust(18) + "".join(c_[:19].rjust(21) for c_ in cols))
        for h, row in table.iterrows():
            lines.append(h[:17].ljust(18) + "".join(
                f"{row[c_]:.4g} (z {row[c_ + '_z']:+.1f})".rjust(21) if row[c_] == row[c_]
                else "-".rjust(21) for c_ in cols))
    if doc["links"]:
        flagged = sum(x["flagged"] for x in doc["links"])
        lines.append(f"links: {len(doc['links'])} measured, {flagged} flagged")
    for s in doc["suspects"]:
        where = s["node"] or s["link"]
        ev = "; ".join(f"{e['metric']} {e['value']} {e['unit']} ("
                       + ("" if e.get("reference", "allocation") == "allocation"
                          else e["reference"] + " ")
                       + f"median {e['median']}, z {e['z']}) "
                       f"[{e['run']}]" if e["value"] is not None else f"{e['label']} [{e['run']}]"
                       for e in s["evidence"])
        lines.append(f"  {s['rank']}. {s['kind']} {where}: {ev}")
    if not doc["suspects"]:
        lines.append("nothing flagged")
    lines += [f"figure: {f}" for f in doc["figures"]] + [f"note: {n}" for n in doc["notes"]]
    return "\n".join(lines)
