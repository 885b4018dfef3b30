"""The OpenMetrics text of jostle's numbers, for node_exporter's textfile collector
(docs/history.md, "The site's monitoring").

Names as Prometheus names them: `jostle_<benchmark>_<metric>_<unit>` in base units (a latency
in seconds, a bandwidth in bytes per second, a ratio as `ratio`), one gauge per series with the
latest value (the median of the run's or the check's record), labelled by `node`, `class` and
the point's parameters (`size` as `size_bytes`). Beside them:

  jostle_run_timestamp_seconds   when the exported value was measured (node_exporter refuses
                                 timestamps on samples, so the time is a gauge of its own)
  jostle_check_verdict           the node's latest check, whatever its verdict, as its exit
                                 status (VERDICT_CODES); with it its duration, budget, time,
                                 whether it was skipped, and its NICs' states (_check)
  jostle_check_failed            1 for a value the latest check failed, else 0
  jostle_check_reference         the class's reference a check judged against
  jostle_drift_change_ratio      a drift found (analysis/drift.py): the change, -0.18 for -18%;
                                 when it began is a value (…_since_timestamp_seconds), never a
                                 label: a label that moves makes a new series each time

docs/history.md, "Every exported metric", lists them all with their units and labels.

The text ends with `# EOF`; the older Prometheus text format (which node_exporter also reads)
takes `# UNIT` and `# EOF` as comments. Sample values are not timestamped.
"""

from __future__ import annotations

import math
import re

from .latest import latest, pooled

# unit -> (Prometheus unit, factor to it)
UNITS = {
    "s": ("seconds", 1.0), "ms": ("seconds", 1e-3), "us": ("seconds", 1e-6),
    "ns": ("seconds", 1e-9),
    "B/s": ("bytes_per_second", 1.0), "KB/s": ("bytes_per_second", 1e3),
    "MB/s": ("bytes_per_second", 1e6), "GB/s": ("bytes_per_second", 1e9),
    "MiB/s": ("bytes_per_second", 2.0 ** 20), "GiB/s": ("bytes_per_second", 2.0 ** 30),
    "Flop/s": ("flops_per_second", 1.0), "GFlop/s": ("flops_per_second", 1e9),
    "msg/s": ("messages_per_second", 1.0), "Mmsg/s": ("messages_per_second", 1e6),
    "x": ("ratio", 1.0), "1": ("ratio", 1.0), "%": ("ratio", 0.01),
    "B": ("bytes", 1.0), "bytes": ("bytes", 1.0),
}
_NAME_BAD = re.compile(r"[^a-zA-Z0-9_]")


def name_part(text: str) -> str:
    """TEXT as part of a metric or label name: [a-zA-Z0-9_], lower case, no repeated _."""
    s = re.sub(r"_+", "_", _NAME_BAD.sub("_", str(text))).strip("_").lower()
    return s or "x"


def unit_of(unit: str) -> tuple:
    """(Prometheus unit, factor) of a record's UNIT; an unknown unit is kept, named."""
    return UNITS.get(unit or "", (name_part(unit) if unit else "", 1.0))


def metric_name(benchmark: str, metric: str, unit: str) -> str:
    base, _ = unit_of(unit)
    name = f"jostle_{name_part(benchmark)}_{name_part(metric)}"
    if base and not name.endswith("_" + base):
        name += "_" + base
    if not re.match(r"[a-zA-Z_]", name):
        name = "_" + name
    return name


def _label_name(k: str) -> str:
    n = name_part(k)
    n = "size_bytes" if n == "size" else n
    if n in ("node", "class", "le", "quantile") or n.startswith("__"):
        n = "param_" + n.lstrip("_")
    return n if re.match(r"[a-zA-Z_]", n) else "p_" + n


def _escape(v) -> str:
    if isinstance(v, bool):
        v = "true" if v else "false"
    elif isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v).replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def _labels(d: dict) -> str:
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in d.items()) + "}"


def _number(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v))


class _Families:
    """Families in order of first appearance, each once, its samples together, each label set
    once (a later one replaces an earlier: OpenMetrics allows no duplicate)."""

    def __init__(self):
        self.meta, self.samples = {}, {}

    def add(self, name, help_text, unit, labels: dict, value: float):
        if name not in self.meta:
            self.meta[name] = (help_text, unit)
            self.samples[name] = {}
        self.samples[name][_labels(labels)] = value

    def text(self) -> str:
        out = []
        for name, (help_text, unit) in self.meta.items():
            out.append(f"# TYPE {name} gauge")
            if unit:
                out.append(f"# UNIT {name} {unit}")
            out.append(f"# HELP {name} {_escape(help_text)}")
            out += [f"{name}{lab} {_number(v)}" for lab, v in self.samples[name].items()]
        out.append("# EOF")
        return "\n".join(out) + "\n"


def _base_labels(r) -> dict:
    d = {"node": r["node"]}
    if r.get("class"):
        d["class"] = r["class"]
    return d


# A check's verdict as jostle_check_verdict's value: the exit status `jostle check` gives
# (docs/check.md), so that a rule and a script read the same number.
VERDICT_CODES = {"healthy": 0, "unhealthy": 1, "error": 2, "skipped": 3, "timeout": 124}
OTHER_CODE = 2      # a verdict this jostle does not know: the check did not judge the node


def verdict_code(verdict) -> int:
    return VERDICT_CODES.get(str(verdict or ""), OTHER_CODE)


def _seconds(t) -> float:
    from ..analysis import history
    return float(round(history.days(str(t)) * 86400.0))


def _num(v):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and \
        math.isfinite(v) else None


def render(rows, drifts=(), every=False, checks=None) -> str:
    """The OpenMetrics text of ROWS (store rows: Store.points or store.rows_from_docs), the
    latest value of each series (EVERY: each run's, the latest label set winning), the
    latest check of each node among CHECKS (store_checks.runs_of_checks: every check, whatever
    its verdict; None: the checks ROWS show), and the drifts found (analysis.drift tests)."""
    from ..analysis import history
    fam = _Families()
    rows = pooled(rows if every else latest(rows))
    latest_check = {}
    for r in rows:
        if r["kind"] == "check" and checks is None:
            latest_check[r["node"]] = {"node": r["node"], "class": r.get("class"),
                                       "time": r["time"], "verdict": r.get("verdict"),
                                       "meta": {}}
        if not (isinstance(r.get("median"), (int, float)) and math.isfinite(r["median"])):
            continue
        unit, factor = unit_of(r.get("unit"))
        name = metric_name(r["benchmark"], r["metric"], r.get("unit"))
        labels = _base_labels(r)
        for k, v in sorted((r.get("params") or {}).items()):
            if k != "rep" and v is not None:
                labels.setdefault(_label_name(k), v)
        what = history.label(r["benchmark"], r["metric"], {})
        fam.add(name, f"jostle {what}: the median of the latest "
                      f"{'check' if r['kind'] == 'check' else 'run'} ({r.get('unit') or '-'} "
                      f"in the record; {history.orientation(r['benchmark'], r['metric'], r.get('unit') or '')} is better)",
                unit, labels, r["median"] * factor)
        fam_time = _base_labels(r) | {"benchmark": r["benchmark"]}
        fam.add("jostle_run_timestamp_seconds", "when the exported values were measured",
                "seconds", fam_time, _seconds(r["time"]))
        if r["kind"] == "check":
            fam.add("jostle_check_failed", "1 for a value the node's latest check failed",
                    "", _base_labels(r) | {"check": r["metric"]}, 1.0 if r.get("flagged") else 0.0)
            if r.get("reference") is not None:
                fam.add(f"jostle_check_reference_{unit}" if unit else "jostle_check_reference",
                        "the class's reference the check judged the value against", unit,
                        _base_labels(r) | {"check": r["metric"]}, r["reference"] * factor)
    for c in checks or ():
        latest_check[c["node"]] = c          # in time order: the last one stays
    for c in latest_check.values():
        _check(fam, c)
    for t in drifts:
        s = t.series
        labels = {"node": s.node, **({"class": s.cls} if s.cls else {}), "series": s.label,
                  "shape": t.shape}
        fam.add("jostle_drift_change_ratio", "a drift found in the node's history: the "
                "relative change (-0.18: 18% lower)", "ratio", labels, t.change)
        try:
            since = _seconds(t.since)
        except (TypeError, ValueError):
            continue
        fam.add("jostle_drift_since_timestamp_seconds", "when the drift began (the first value "
                "after the change)", "seconds", labels, since)
    return fam.text()


def _check(fam: _Families, c: dict):
    """The families of a node's latest check C, whatever its verdict."""
    base = _base_labels(c)
    meta = c.get("meta") or {}
    verdict = c.get("verdict")
    fam.add("jostle_check_verdict", "the verdict of the node's latest check, as jostle check's "
            "exit status: 0 healthy, 1 unhealthy, 2 error (or a verdict not known), 3 skipped "
            "(the node busy), 124 timeout", "", base, float(verdict_code(verdict)))
    fam.add("jostle_check_healthy", "1 when the node's latest check was healthy, 0 when it was "
            "anything else (unhealthy, timed out, skipped, error)", "", base,
            1.0 if verdict == "healthy" else 0.0)
    fam.add("jostle_check_skipped", "1 when the node's latest check was skipped (the node "
            "busy), else 0", "", base, 1.0 if verdict == "skipped" else 0.0)
    fam.add("jostle_check_timestamp_seconds", "when the node's latest check began (the age of "
            "the node's last check: time() minus this)", "seconds", base, _seconds(c["time"]))
    for key, name, what in (("duration_s", "duration", "how long the node's latest check took"),
                            ("budget_s", "budget", "the time budget of the node's latest check"),
                            ("timeout_s", "timeout", "the watchdog's limit of the node's latest "
                                                     "check")):
        v = _num(meta.get(key))
        if v is not None:
            fam.add(f"jostle_check_{name}_seconds", what, "seconds", base, v)
    if "unfinished" in meta:
        fam.add("jostle_check_unfinished_steps", "the steps of the node's latest check stopped "
                "at the end of their share of the budget", "", base,
                float(len(meta.get("unfinished") or ())))
    for n in meta.get("nics") or ():
        labels = base | {"nic": n.get("name") or "-"}
        fam.add("jostle_check_nic_up", "1 when the NIC was up at the node's latest check "
                "(InfiniBand: ACTIVE), 0 when down, missing or another state", "", labels,
                1.0 if n.get("state") == "up" else 0.0)
        fam.add("jostle_check_nic_ok", "1 when the NIC passed the latest check (there, in its "
                "reference state, at its reference speed or above), else 0", "", labels,
                1.0 if n.get("ok") else 0.0)
        speed = _num(n.get("speed_mbps"))
        if speed is not None:
            fam.add("jostle_check_nic_speed_bytes_per_second", "the NIC's link speed at the "
                    "node's latest check (as node_exporter's node_network_speed_bytes)",
                    "bytes_per_second", labels, speed * 1e6 / 8)
