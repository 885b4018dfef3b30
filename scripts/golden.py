#!/usr/bin/env python3
"""The golden files of the tree, made one way (as hwloc's tests/hwloc/xml/*.test and its one
driver): each is written by one function here from what it copies, checked by
tests/py/test_golden.py, and rewritten after a change that is meant by

    make golden            (python3 scripts/golden.py --update)

  describe     python/jostle/describe.json: `jostle-bench --describe` of the Open MPI build,
               the copy for machines without a bench (a C descriptor changed)
  cli-options  tests/py/data/cli_options.json: every command's options (one added or removed)
  topologies   share/topologies/*.xml but this-vm.xml: share/topologies/generate.py's machines

Without --update it writes nothing and names each file that differs (exit 1)."""

import argparse
import contextlib
import importlib.util
import io
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def describe() -> dict:
    from jostle import binary
    text = json.dumps(binary.ask(binary.find_bench("openmpi"), "--describe"), indent=4)
    return {"python/jostle/describe.json": text + "\n"}


def cli_options() -> dict:
    from jostle import cli
    now = {name: sorted(o for a in p._actions for o in a.option_strings)
           for name, p in cli.parsers(cli.build_parser())}
    return {"tests/py/data/cli_options.json": json.dumps(now, indent=1, sort_keys=True) + "\n"}


def topologies() -> dict:
    spec = importlib.util.spec_from_file_location("topo_generate",
                                                  ROOT / "share/topologies/generate.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
        if gen.main(["--outdir", tmp]) != 0:
            raise SystemExit("share/topologies/generate.py failed")
        return {f"share/topologies/{f.name}": f.read_text() for f in sorted(Path(tmp).iterdir())}


GOLDEN = {"describe": describe, "cli-options": cli_options, "topologies": topologies}


def stale(name: str) -> list:
    """The files of golden NAME that differ from what makes them (missing ones included)."""
    made = GOLDEN[name]()
    return [p for p, text in made.items()
            if not (ROOT / p).is_file() or (ROOT / p).read_text() != text]


def main(argv) -> int:
    ap = argparse.ArgumentParser(description="check or rewrite the golden files")
    ap.add_argument("--update", action="store_true", help="rewrite those that differ")
    ap.add_argument("names", nargs="*", metavar="NAME",
                    help=f"of {', '.join(GOLDEN)} (default: all)")
    args = ap.parse_args(argv)
    unknown = [n for n in args.names if n not in GOLDEN]
    if unknown:
        ap.error(f"'{unknown[0]}' is not a golden file; allowed: {', '.join(GOLDEN)}")
    bad = 0
    for name in args.names or GOLDEN:
        made = GOLDEN[name]()
        for path, text in made.items():
            if (ROOT / path).is_file() and (ROOT / path).read_text() == text:
                continue
            if args.update:
                (ROOT / path).write_text(text)
                print(f"golden: {path} rewritten ({name})")
            else:
                print(f"golden: {path} differs from what makes it ({name}): `make golden`")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
