"""`jostle baseline save|check|list`: a campaign's points kept as the reference of this kind of
machine, in a small JSON file a site can version (docs/records.md, "Baselines")."""

import argparse
import json
import sys
import time
from pathlib import Path

from ..analysis import baselines, comparison, machines
from ..errors import UsageError
from . import _common
from . import _options
from . import _learn, compare

ORDER = 46
SCHEMA = 1
EXAMPLES = f"""examples:
  jostle pingpong --sizes 1:4M --runs 3 --campaign ref      measure the reference
  jostle baseline save results/ref --name pingpong          keep it (baselines/pingpong.json)
  jostle baseline check results/after --name pingpong       later: slower than the reference?
  jostle baseline list

A baseline file holds one entry per kind of machine and MPI library (CPU model, cores, NUMA
nodes, NICs, and the library, as the records say): a campaign of two libraries (`jostle run`)
is kept as two entries, and check judges each library of the campaign against its own entry.
Where baselines live: --baselines DIR, else $JOSTLE_BASELINES, else ./baselines.
{compare.EXIT}"""


def register(sub):
    p = sub.add_parser("baseline", help="keep a campaign as this machine's reference; check against it",
                       description="Save, check against and list baselines: reference points "
                                   "per kind of machine.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    s = acts.add_parser("save", help="keep DIR's points as baseline NAME for its machine")
    s.add_argument("dir", metavar="DIR", help="a complete campaign folder (or a .jsonl run file)")
    s.add_argument("--name", type=_common.name_type, default="default",
                   help="the baseline's name (default: default)")
    k = acts.add_parser("check", help="compare DIR against baseline NAME of its machine",
                        epilog=compare.EXIT)
    k.add_argument("dir", metavar="DIR", help="a campaign folder (or a .jsonl run file)")
    k.add_argument("--name", type=_common.name_type, default="default",
                   help="the baseline's name (default: default)")
    compare.add_comparison_options(k)
    li = acts.add_parser("list", help="the baselines and the machines each covers")
    for q in (s, k, li):
        _options.add(q, "baselines")
    s.add_argument("--allow-incomplete", action="store_true", help="keep an incomplete campaign")
    _learn.register(acts)
    p.set_defaults(func=main)


def folder(args) -> Path:
    return Path(_options.value(args, "baselines"))


def read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise UsageError(f"cannot read baseline '{path}': {e.strerror}") from None
    except ValueError as e:
        raise UsageError(f"baseline '{path}' is not JSON ({e})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("machines"), list):
        raise UsageError(f"baseline '{path}' is not a jostle baseline of schema {SCHEMA}")
    return data


def dumps(data) -> str:
    """Indented JSON with each point and run on one line: a person reads it, and a diff of two
    versions shows which points moved."""
    lines = []
    for line in json.dumps({**data, "machines": "@machines"}, indent=1).splitlines():
        if line.strip() != '"machines": "@machines"':
            lines.append(line)
            continue
        lines.append(' "machines": [')
        for i, m in enumerate(data["machines"]):
            head = {k: v for k, v in m.items() if k not in ("runs", "points")}
            lines.append("  {" + json.dumps(head)[1:-1] + ",")
            for key in ("runs", "points"):
                items = [json.dumps(x) for x in m.get(key, [])]
                lines.append(f'   "{key}": [')
                lines += [f"    {x}," for x in items[:-1]] + ([f"    {items[-1]}"] if items else [])
                lines.append("   ]" + ("," if key == "runs" else ""))
            lines.append("  }" + ("," if i < len(data["machines"]) - 1 else ""))
        lines.append(" ]" + ("," if line.rstrip().endswith(",") else ""))
    return "\n".join(lines) + "\n"


def keep(args, name, entries, campaign) -> Path:
    """ENTRIES (one a machine) into the baseline NAME, in place of its entries of the same
    machines, each stamped with the time and CAMPAIGN; written whole or not at all. Its path."""
    path = folder(args) / f"{name}.json"
    data = read(path) if path.exists() else {"schema": SCHEMA, "tool": "jostle baseline",
                                             "name": name, "machines": []}
    saved = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    stamped = [{**e, "saved": saved, "campaign": campaign} for e in entries]
    keys = {e["key"] for e in stamped}
    data["machines"] = [m for m in data["machines"] if m.get("key") not in keys] + stamped
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(dumps(data), encoding="utf-8")
        tmp.replace(path)     # never a half-written baseline
    except OSError as e:
        raise UsageError(f"cannot write baseline '{path}': {e.strerror}") from None
    return path


def save(args):
    side = comparison.load_side(args.dir, "DIR", args.allow_incomplete)
    if side.frame.empty:
        raise UsageError(f"'{args.dir}': its runs hold no point to keep")
    entries = baselines.to_records(side)
    path = keep(args, args.name, entries, str(args.dir))
    for entry in entries:
        print(f"jostle: baseline '{args.name}' for "
              f"{machines.machine_text(entry['machine'], mpi=True)}: {len(entry['points'])} points "
              f"of {len(entry['runs'])} run(s) in {path}", file=sys.stderr)
    print(path)
    return 0


def existing(name, base: Path) -> Path:
    """Baseline NAME's file in BASE, refused (exit 2) when there is none."""
    path = base / f"{name}.json"
    if not path.exists():
        raise UsageError(f"no baseline '{name}' in {base}; make one with "
                         f"`jostle baseline save DIR --name {name}`")
    return path


def entry_for(name, base: Path, key, allow_different=False) -> tuple:
    """(entry, label) of baseline NAME for the machine and library of KEY
    (machines.machine_key); with ALLOW_DIFFERENT, the single entry of a file that has no
    entry for it."""
    data = read(existing(name, base))
    entry = next((m for m in data["machines"] if m.get("key") == key), None)
    if entry is None:
        if not allow_different or len(data["machines"]) != 1:
            have = "; ".join(m.get("key", "?") for m in data["machines"]) or "none"
            raise UsageError(f"baseline '{name}' has no entry for this machine and MPI library ({key}); it "
                             f"has: {have}" + ("" if allow_different else
                                               " (--allow-different-machines with one entry uses it)"))
        entry = data["machines"][0]
    return entry, f"baseline {name} ({entry.get('campaign')}, saved {entry.get('saved')})"


def check(args):
    compare.check_output_dir(args)
    existing(args.name, folder(args))
    side = comparison.load_side(args.dir, "B", args.allow_incomplete)
    refs, missing, labels = [], [], []
    for lib, full in side.libraries.items():
        key = machines.machine_key({**side.machine, "mpi": full})
        try:
            entry, label = entry_for(args.name, folder(args), key,
                                     args.allow_different_machines and len(side.libraries) == 1)
        except UsageError:
            missing.append(lib)
            continue
        refs.append(baselines.from_records(entry, label))
        labels.append(label)
    if not refs:   # the refusal of the first library names what the baseline has
        entry_for(args.name, folder(args),
                  machines.machine_key({**side.machine, "mpi": next(iter(side.libraries.values()))}),
                  args.allow_different_machines)
    ref = baselines.joined(refs, f"baseline {args.name}" if len(refs) > 1 else labels[0])
    cmp = compare.run_comparison(args, ref, side)
    cmp.notes += [f"{lib}: no entry in baseline '{args.name}' for this machine and library; "
                  "not compared" for lib in missing]
    return compare.emit(args, cmp, ref, side)


def listing(args):
    base = folder(args)
    files = sorted(base.glob("*.json")) if base.is_dir() else []
    if not files:
        print(f"jostle: no baseline in {base}", file=sys.stderr)
        return 0
    for f in files:
        data = read(f)
        for m in data["machines"]:
            print(f"{f.stem}\t{m.get('saved')}\t{len(m.get('runs', []))} run(s), "
                  f"{len(m.get('points', []))} points\t{m.get('key')}\t{m.get('campaign')}")
    return 0


def main(args):
    if args.action == "learn":
        return _learn.main(args, keep)
    return {"save": save, "check": check, "list": listing}[args.action](args)
