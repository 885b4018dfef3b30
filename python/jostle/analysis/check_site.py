"""The site file of `jostle check` (docs/check.md, "The site file"): node classes matched by
host name, each with the reference of its checks, how they were measured and the machine
they were measured on. TOML, read with tomllib; written back by `--save-reference` (the
samples of every good node are kept, so that each save derives the tolerances again from all
of them)."""

from __future__ import annotations

import datetime
import fcntl
import fnmatch
import json
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from . import check, check_reference
from .working_sets import WORKING_SETS, most_common
from ..errors import UsageError, read_input

SCHEMA = 1
NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
CHECK_KEYS = {"budget": float, "timeout": float, "spool": str, "state_dir": str,
              "busy_share": float, "busy_user_cores": float, "uid_min": int,
              "store": str,   # the results store (docs/history.md): a path or postgresql://…
              "interval": float, "node_years": float}   # the false-drain budget
CLASS_KEYS = {"hosts", "checks", "compute_cores", "oversubscribe", "load_sizes", "chain_pages",
              "baseline", "machine", "reference", "nics", "nodes", "step_seconds", *check.WORKING_SETS}
MACHINE_KEYS = ("cpu", "cores", "numa_nodes", "mpi")
STEPS = (*check.SHARES, check.START, check.LAUNCH)     # the keys of a class's step_seconds
REF_KEYS = {"value", "tolerance", "unit", "worse", "spread", "repeatability", "nodes", "checks",
            "chosen", "df", "own_tolerance", "tails", "scale", "error"}


@dataclass
class NodeClass:
    name: str
    hosts: list = field(default_factory=list)       # globs, or /regex/
    checks: "list | None" = None
    options: check.RunOptions = check.RunOptions()
    baseline: "str | None" = None
    machine: dict = field(default_factory=dict)
    reference: dict = field(default_factory=dict)   # {check: {value, tolerance, …}}
    nics: dict = field(default_factory=dict)        # {name: {state, speed_mbps}}
    nodes: dict = field(default_factory=dict)       # {node: {saved, CHECK: [values]}}
    raw: dict = field(default_factory=dict)
    # {benchmark: seconds} the longest launch of each step took when the reference was saved,
    # {start: seconds} the longest its checks took to reach their first step, and {launch:
    # seconds} the longest a launch cost besides jostle-bench's own time
    step_seconds: dict = field(default_factory=dict)

    def matches(self, node: str) -> bool:
        return any(_match(p, node) for p in self.hosts)


@dataclass
class Site:
    path: Path
    header: str = ""
    defaults: dict = field(default_factory=dict)
    classes: dict = field(default_factory=dict)     # {name: NodeClass}, in the file's order

    def class_of(self, node: str, name: "str | None" = None) -> NodeClass:
        """The class NAME, or the first whose host patterns match NODE (exit 2 when none)."""
        if name is not None:
            if name not in self.classes:
                raise UsageError(f"--class '{name}': unknown class in {self.path}; allowed: "
                                 + (", ".join(self.classes) or "none (the file has no class)"))
            return self.classes[name]
        for c in self.classes.values():
            if c.matches(node):
                return c
        raise UsageError(f"no class of {self.path} matches host '{node}' (classes: "
                         + (", ".join(f"{c.name} {c.hosts}" for c in self.classes.values())
                            or "none") + "); add its name to a class's hosts, or give --class")


def _match(pattern: str, node: str) -> bool:
    if len(pattern) > 1 and pattern.startswith("/") and pattern.endswith("/"):
        return re.search(pattern[1:-1], node) is not None
    return fnmatch.fnmatchcase(node, pattern)


def _bad(path, where, what):
    raise UsageError(f"site file {path}: {where}: {what}")


def _typed(path, where, value, typ):
    ok = isinstance(value, typ) and not isinstance(value, bool) if typ is not bool \
        else isinstance(value, bool)
    if typ is float and isinstance(value, int) and not isinstance(value, bool):
        ok, value = True, float(value)
    if not ok:
        _bad(path, where, f"{value!r} is not allowed; expected {typ.__name__}")
    if typ is float and not (math.isfinite(value) and value >= 0):
        _bad(path, where, f"{value!r} is not allowed; expected a number >= 0")
    return value


def load(path) -> Site:
    """The site file at PATH, checked (exit 2 naming what is wrong: not TOML, an unknown key,
    a host pattern that is not a valid regular expression, a reference that is not a number)."""
    path = Path(path)
    text = read_input(path, "--site")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"--site '{path}': not a TOML file ({e})") from None
    schema = data.get("schema", SCHEMA)
    if schema != SCHEMA:
        _bad(path, "schema", f"{schema!r} is not allowed; this jostle reads schema {SCHEMA}")
    unknown = sorted(set(data) - {"schema", "check", "class"})
    if unknown:
        _bad(path, unknown[0], "unknown key; allowed: schema, check, class")
    defaults = {}
    for k, v in (data.get("check") or {}).items():
        if k not in CHECK_KEYS:
            _bad(path, f"[check] {k}", "unknown key; allowed: " + ", ".join(CHECK_KEYS))
        defaults[k] = _typed(path, f"[check] {k}", v, CHECK_KEYS[k])
        if k in ("interval", "node_years") and not defaults[k] > 0:
            _bad(path, f"[check] {k}", f"{v!r} is not allowed; expected a number > 0")
    header = "".join(line + "\n" for line in _header(text))
    site = Site(path, header, defaults)
    classes = data.get("class") or {}
    if not isinstance(classes, dict):
        _bad(path, "class", "expected tables [class.NAME]")
    for name, raw in classes.items():
        site.classes[name] = _node_class(path, name, raw)
    return site


def _header(text):
    """The comment lines at the top of the file (kept when the file is written again)."""
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        yield line


def _node_class(path, name, raw) -> NodeClass:
    where = f"[class.{name}]"
    if not NAME_RE.match(name):
        _bad(path, where, "a class name is letters, digits, '_' and '-'")
    if not isinstance(raw, dict):
        _bad(path, where, "expected a table")
    unknown = sorted(set(raw) - CLASS_KEYS)
    if unknown:
        _bad(path, f"{where} {unknown[0]}", "unknown key; allowed: " + ", ".join(sorted(CLASS_KEYS)))
    hosts = raw.get("hosts", [])
    if not (isinstance(hosts, list) and all(isinstance(h, str) and h for h in hosts)):
        _bad(path, f"{where} hosts", "expected a list of host patterns (globs, or /regex/)")
    for h in hosts:
        if len(h) > 1 and h.startswith("/") and h.endswith("/"):
            try:
                re.compile(h[1:-1])
            except re.error as e:
                _bad(path, f"{where} hosts", f"'{h}' is not a valid regular expression ({e})")
    checks = raw.get("checks")
    if checks is not None:
        if not (isinstance(checks, list) and checks and all(c in check.CHECKS for c in checks)):
            _bad(path, f"{where} checks", f"{checks!r} is not allowed; expected a list of: "
                 + ", ".join(check.CHECKS))
    cores = raw.get("compute_cores")
    if cores is not None and (not isinstance(cores, int) or isinstance(cores, bool) or cores < 0):
        _bad(path, f"{where} compute_cores", f"{cores!r} is not allowed; expected a whole number >= 0")
    over = raw.get("oversubscribe", False)
    if not isinstance(over, bool):
        _bad(path, f"{where} oversubscribe", f"{over!r} is not allowed; expected true or false")
    sizes = raw.get("load_sizes", check.LOAD_SIZES)
    if not (isinstance(sizes, str) and re.match(r"^[0-9]+[KMG]?,[0-9]+[KMG]?$", sizes)):
        _bad(path, f"{where} load_sizes", f"{sizes!r} is not allowed; expected SMALL,LARGE e.g. 4,64M")
    # a class measured before the chain's pages were chosen walked the system's
    pages = raw.get("chain_pages", "system" if raw.get("reference") or raw.get("nodes")
                    else check.CHAIN_PAGES)
    if pages not in check.PAGES:
        _bad(path, f"{where} chain_pages", f"{pages!r} is not allowed; expected one of "
             + ", ".join(check.PAGES))
    sets = {k: raw.get(k) for k in check.WORKING_SETS}
    for k, v in sets.items():
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 4096):
            _bad(path, f"{where} {k}", f"{v!r} is not allowed; expected a byte count >= 4096")
    baseline = raw.get("baseline")
    if baseline is not None and not (isinstance(baseline, str) and baseline):
        _bad(path, f"{where} baseline", "expected the path of a jostle baseline file")
    machine = raw.get("machine", {})
    if not isinstance(machine, dict):
        _bad(path, f"{where} machine", "expected a table")
    reference = raw.get("reference", {})
    if not isinstance(reference, dict):
        _bad(path, f"{where} reference", "expected tables [class.NAME.reference.CHECK]")
    for c, ref in reference.items():
        w = f"[class.{name}.reference.{c}]"
        if c not in check.METRICS:
            _bad(path, w, "unknown check; allowed: " + ", ".join(check.MEASURED))
        if not isinstance(ref, dict) or not REF_KEYS >= set(ref):
            _bad(path, w, "expected the keys " + ", ".join(sorted(REF_KEYS)))
        for k in ("value", "tolerance"):
            v = ref.get(k)
            if not (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                    and v >= 0 and (k != "value" or v > 0)):
                _bad(path, f"{w} {k}", f"{v!r} is not allowed; expected a number "
                     + ("> 0" if k == "value" else ">= 0"))
        if ref.get("worse", check.METRICS[c].worse > 0 and "higher" or "lower") not in ("higher", "lower"):
            _bad(path, f"{w} worse", f"{ref.get('worse')!r} is not allowed; expected higher or lower")
        ref.setdefault("worse", "higher" if check.METRICS[c].worse > 0 else "lower")
        ref.setdefault("unit", check.METRICS[c].unit)
        ref["value"], ref["tolerance"] = float(ref["value"]), float(ref["tolerance"])
    nics = raw.get("nics", {})
    if not (isinstance(nics, dict) and all(isinstance(v, dict) and "state" in v for v in nics.values())):
        _bad(path, f"{where} nics", "expected NAME = {state = \"up\", speed_mbps = N}")
    steps = raw.get("step_seconds", {})
    if not (isinstance(steps, dict) and all(
            b in STEPS and isinstance(v, (int, float)) and not isinstance(v, bool)
            and v > 0 for b, v in steps.items())):
        _bad(path, f"{where} step_seconds", "expected STEP = seconds > 0, for "
             + ", ".join(STEPS))
    nodes = raw.get("nodes", {})
    if not isinstance(nodes, dict) or not all(isinstance(v, dict) for v in nodes.values()):
        _bad(path, f"{where} nodes", "expected tables of saved samples")
    return NodeClass(name, list(hosts), list(checks) if checks else None,
                     check.RunOptions(cores, over, sizes, **sets, chain_pages=pages), baseline,
                     dict(machine),
                     dict(reference), dict(nics), dict(nodes), raw, dict(steps))


# ---------------------------------------------------------------- the machine

def machine_of(facts: dict, mpi_library: str) -> dict:
    """What a reference is bound to: the CPU, its cores and NUMA nodes (jostle-bench
    --machine) and the MPI library (the first part of jostle-bench --version's)."""
    return {"cpu": facts.get("cpu"), "cores": facts.get("cores"),
            "numa_nodes": facts.get("numa_nodes"),
            "mpi": (mpi_library or "").split(",")[0].strip() or None}


def check_machine(site: Site, cls: NodeClass, here: dict):
    """Refuse (exit 2) a class whose reference was measured on another kind of machine."""
    if not cls.machine:
        return
    diff = [f"{k} {cls.machine.get(k)!r} vs this node's {here.get(k)!r}"
            for k in MACHINE_KEYS if k in cls.machine and cls.machine.get(k) != here.get(k)]
    if diff:
        raise UsageError(f"class '{cls.name}' of {site.path} holds the reference of another kind "
                         f"of machine ({'; '.join(diff)}); save a reference on this kind with "
                         f"--save-reference --class NAME")


def baseline_references(site: Site, cls: NodeClass, key: str) -> dict:
    """{check: reference} from the class's jostle baseline (a scan, or checks kept with
    --runs-dir, saved with `jostle baseline save`): its entry for this machine (KEY:
    machines.machine_key), its fingerprint runs one value per node; and the working sets they
    were measured with (common_sets)."""
    from . import baselines
    path = Path(cls.baseline)
    if not path.is_absolute():
        path = site.path.parent / path
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise UsageError(f"class '{cls.name}': baseline '{path}' cannot be read ({e})") from None
    machines = data.get("machines") if isinstance(data, dict) else None
    if not isinstance(machines, list):
        raise UsageError(f"class '{cls.name}': '{path}' is not a jostle baseline")
    entry = next((m for m in machines if isinstance(m, dict) and m.get("key") == key), None)
    if entry is None:
        raise UsageError(f"class '{cls.name}': baseline '{path}' has no entry for this kind of "
                         f"machine ({key}); it has: "
                         + ("; ".join(str(m.get("key")) for m in machines) or "none"))
    from . import scan
    side = baselines.from_records(entry, f"baseline {path.name}")
    refs = check_reference.references_from_table(scan.baseline_values(side))
    if not refs:
        raise UsageError(f"class '{cls.name}': baseline '{path}' holds no fingerprint run "
                         "(fp-BENCHMARK-NODE) for this machine")
    return refs, common_sets(side.sets)


def common_sets(sets: "dict | None") -> dict:
    """{chain_bytes, array_bytes}: the size of each working set most of a baseline's runs
    (SETS: {file: working sets}, None where it kept none) were measured with, the larger on a
    tie: what a check judged against it measures with (check.working_set_notes)."""
    sizes = {key: most_common([v.get(key) for v in (sets or {}).values()])
             for key in WORKING_SETS}
    return {key: size for key, size in sizes.items() if size is not None}


# ---------------------------------------------------------------- saving

def add_samples(site: Site, name: str, node: str, samples: dict, machine: dict, nics: dict,
                opts: check.RunOptions, match=(), checks=None,
                tolerance: "float | None" = None, steps: "dict | None" = None,
                budget: tuple = (), errors: "dict | None" = None) -> NodeClass:
    """Class NAME of SITE with NODE's SAMPLES ({check: [values]}) kept and its references
    derived again from every node it holds (made when new; refused when it holds another
    machine's or was measured another way); TOLERANCE: the site's choice for every check;
    STEPS: {benchmark: seconds} the node's longest launch of each step took; BUDGET: (node
    years, interval) of the false-drain budget (default check_budget's); ERRORS: {check:
    [the standard error of the log of each check's value]}, kept as the node's "errors"."""
    old = site.classes.get(name)
    if old is not None:
        check_machine(site, old, machine)
        if old.nodes and old.options.way() != opts.way():
            raise UsageError(f"class '{name}' was measured with {old.options.to_dict()}, not "
                             f"{opts.to_dict()}: give the same options, or another class")
    cls = old or NodeClass(name)
    cls.hosts = list(dict.fromkeys([*cls.hosts, *match]))
    if checks:
        cls.checks = list(checks)
    cls.options, cls.machine = opts, machine
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    kept = {k: [float(f"{x:.6g}") for x in v if x is not None and math.isfinite(x)]
            for k, v in samples.items()}
    errs = {k: [float(f"{x:.3g}") for x in v if math.isfinite(x)] for k, v in (errors or {}).items()}
    cls.nodes[node] = {"saved": stamp, **{k: v for k, v in kept.items() if v},
                       **({"errors": {k: v for k, v in errs.items() if v}} if errs else {})}
    old_refs = cls.reference
    cls.reference = check_reference.references_from_samples(
        {n: {k: v for k, v in s.items() if k != "saved"} for n, s in cls.nodes.items()},
        check.MEASURED, *budget)
    for c, ref in cls.reference.items():     # a tolerance the site chose stays chosen
        if tolerance is not None or (old_refs.get(c) or {}).get("chosen"):
            cls.reference[c] = check_reference.chosen(
                ref, tolerance if tolerance is not None else old_refs[c]["tolerance"])
    if nics:
        cls.nics = {**cls.nics, **nics}
    for b, t in (steps or {}).items():
        cls.step_seconds[b] = round(max(t, cls.step_seconds.get(b, 0.0)), 3)
    site.classes[name] = cls
    return cls


def _key(k: str) -> str:
    return k if re.match(r"^[A-Za-z0-9_-]+$", k) else json.dumps(k)


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(f"cannot write {v!r} in TOML")


def _table(out, prefix, data):
    plain = {k: v for k, v in data.items() if not isinstance(v, dict)
             and not (isinstance(v, float) and not math.isfinite(v)) and v is not None}
    if plain or not data:
        out.append(f"\n[{prefix}]")
        out += [f"{_key(k)} = {_value(v)}" for k, v in plain.items()]
    for k, v in data.items():
        if isinstance(v, dict):
            _table(out, f"{prefix}.{_key(k)}", v)


def dumps(site: Site) -> str:
    """SITE as TOML: its header comments, then [check], then every class."""
    out = [site.header.rstrip("\n") or
           "# jostle site file (docs/check.md): node classes and their references, written by\n"
           "# jostle check --save-reference; comments other than these first lines are not kept",
           "", f"schema = {SCHEMA}"]
    if site.defaults:
        _table(out, "check", site.defaults)
    for c in site.classes.values():
        body = {"hosts": c.hosts, **({"checks": c.checks} if c.checks else {}),
                **c.options.to_dict(), **({"baseline": c.baseline} if c.baseline else {})}
        _table(out, f"class.{c.name}", body)
        for part in ("machine", "reference", "nics", "step_seconds", "nodes"):
            if getattr(c, part):
                _table(out, f"class.{c.name}.{part}", getattr(c, part))
    return "\n".join(out) + "\n"


def locked(path: Path):
    """An exclusive lock beside PATH (PATH.lock), for read-modify-write of the site file by
    several nodes saving at once."""
    lock = open(path.with_name(path.name + ".lock"), "a")
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


def write(site: Site):
    """SITE into its file, whole or not at all (a temporary file renamed)."""
    tmp = site.path.with_name(f".{site.path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(dumps(site), encoding="utf-8")
        os.replace(tmp, site.path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write the site file {site.path}: {e.strerror}") from None
