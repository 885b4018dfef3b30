"""`jostle baseline save|check|list`: a campaign's points kept as the reference of this kind of
machine, in a small JSON file a site can version (docs/records.md, "Baselines")."""

import argparse
import json
import os
import sys
import time
from pathlib import Path

from ..analysis import comparison
from ..errors import UsageError
from . import _common as c
from . import compare

ORDER = 46
SCHEMA = 1
EXAMPLES = f"""examples:
  jostle pingpong --sizes 1:4M --runs 3 --campaign ref      measure the reference
  jostle baseline save results/ref --name pingpong          keep it (baselines/pingpong.json)
  jostle baseline check results/after --name pingpong       later: slower than the reference?
  jostle baseline list

A baseline file holds one entry per kind of machine (CPU model, cores, NUMA nodes, MPI library,
NICs, as the records say); check uses the entry of the campaign's machine. Where baselines
live: --baselines DIR, else $JOSTLE_BASELINES, else ./baselines.
{compare.EXIT}"""


def register(sub):
    p = sub.add_parser("baseline", help="keep a campaign as this machine's reference; check against it",
                       description="Save, check against and list baselines: reference points "
                                   "per kind of machine.",
                       epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    s = acts.add_parser("save", help="keep DIR's points as baseline NAME for its machine")
    s.add_argument("dir", metavar="DIR", help="a complete campaign folder (or a .jsonl run file)")
    s.add_argument("--name", type=c.name_type, default="default",
                   help="the baseline's name (default: default)")
    k = acts.add_parser("check", help="compare DIR against baseline NAME of its machine",
                        epilog=compare.EXIT)
    k.add_argument("dir", metavar="DIR", help="a campaign folder (or a .jsonl run file)")
    k.add_argument("--name", type=c.name_type, default="default",
                   help="the baseline's name (default: default)")
    compare.add_comparison_options(k)
    li = acts.add_parser("list", help="the baselines and the machines each covers")
    for q in (s, k, li):
        q.add_argument("--baselines", metavar="DIR",
                       help="where baselines are kept (default: $JOSTLE_BASELINES, else ./baselines)")
    s.add_argument("--allow-incomplete", action="store_true", help="keep an incomplete campaign")
    p.set_defaults(func=main)


def folder(args) -> Path:
    return Path(args.baselines or os.environ.get("JOSTLE_BASELINES") or "baselines")


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


def save(args):
    side = comparison.load_side(args.dir, "DIR", args.allow_incomplete)
    if side.frame.empty:
        raise UsageError(f"'{args.dir}': its runs hold no point to keep")
    path = folder(args) / f"{args.name}.json"
    data = read(path) if path.exists() else {"schema": SCHEMA, "tool": "jostle baseline",
                                             "name": args.name, "machines": []}
    entry = {**comparison.to_records(side), "saved": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             "campaign": str(args.dir)}
    data["machines"] = [m for m in data["machines"] if m.get("key") != entry["key"]] + [entry]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(dumps(data), encoding="utf-8")
        tmp.replace(path)     # never a half-written baseline
    except OSError as e:
        raise UsageError(f"cannot write baseline '{path}': {e.strerror}") from None
    print(f"jostle: baseline '{args.name}' for {entry['key']}: {len(entry['points'])} points of "
          f"{len(entry['runs'])} run(s) in {path}", file=sys.stderr)
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
    """(entry, label) of baseline NAME for the machine of KEY (comparison.machine_key); with
    ALLOW_DIFFERENT, the single entry of a file that has no entry for it."""
    data = read(existing(name, base))
    entry = next((m for m in data["machines"] if m.get("key") == key), None)
    if entry is None:
        if not allow_different or len(data["machines"]) != 1:
            have = "; ".join(m.get("key", "?") for m in data["machines"]) or "none"
            raise UsageError(f"baseline '{name}' has no entry for this machine ({key}); it "
                             f"has: {have}" + ("" if allow_different else
                                               " (--allow-different-machines with one entry uses it)"))
        entry = data["machines"][0]
    return entry, f"baseline {name} ({entry.get('campaign')}, saved {entry.get('saved')})"


def check(args):
    compare.check_output_dir(args)
    existing(args.name, folder(args))
    side = comparison.load_side(args.dir, "B", args.allow_incomplete)
    entry, label = entry_for(args.name, folder(args), comparison.machine_key(side.machine),
                             args.allow_different_machines)
    ref = comparison.from_records(entry, label)
    return compare.emit(args, compare.run_comparison(args, ref, side), ref, side)


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
    return {"save": save, "check": check, "list": listing}[args.action](args)
