"""The `jostle` command. Subcommands live in jostle.commands, one module each.

A module there defines register(subparsers) (which sets `func` on its parser)
and optionally ORDER for its place in --help; it is found by name, so adding a
benchmark's command means adding a module, not editing a switch here.
"""

import argparse
import importlib
import pkgutil
import sys
import warnings

from . import __version__, commands
from .errors import JostleError

EPILOG = """examples:
  jostle run                                  machine summary, quick ping-pong, HTML report
  jostle pingpong --sizes 0:1K --ranks 2      intra-node ping-pong, table on stdout
  jostle pingpong --hosts n1,n2 --preset seed the three sweeps of the ping-pong study, inter-node
  jostle plot results/adhoc -o figures        RTT and bandwidth figures (PNG and SVG)
  jostle report results/adhoc                 one self-contained HTML page

exit status: 0 ok, 1 a run or its data failed, 2 bad command-line input, 130 Ctrl-C.
See docs/cli.md for every option."""


def command_modules() -> list:
    mods = [importlib.import_module(f"{commands.__name__}.{m.name}")
            for m in pkgutil.iter_modules(commands.__path__) if not m.name.startswith("_")]
    return sorted((m for m in mods if hasattr(m, "register")),
                  key=lambda m: (getattr(m, "ORDER", 50), m.__name__))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="jostle", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
        description="Plan, launch, read and draw jostle-bench MPI benchmark campaigns.")
    p.add_argument("--version", action="version", version=f"jostle {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for mod in command_modules():
        mod.register(sub)
    return p


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"jostle: warning: {message}", file=sys.stderr)


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    warnings.showwarning = _show_warning  # one clean line, not a source excerpt
    try:
        return args.func(args) or 0
    except JostleError as e:
        print(f"jostle: {'error: ' if e.exit_status != 130 else ''}{e}", file=sys.stderr)
        return e.exit_status
    except KeyboardInterrupt:
        print("jostle: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
