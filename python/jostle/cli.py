"""The `jostle` command. Subcommands live in jostle.commands, one module each, found by name
(jostle.commands says what a module declares): adding a study means adding a module, not
editing a switch here.
"""

import argparse
import difflib
import re
import sys
import warnings

from . import __version__, commands
from .errors import JostleError

EPILOG = """examples:
  jostle run                                  machine summary, quick ping-pong, HTML report
  jostle pingpong --sizes 0:1K --verbose      intra-node ping-pong, its table on stdout
  jostle pingpong --hosts n1,n2 --preset seed the three sweeps of the ping-pong study, inter-node
  jostle plot results/adhoc -o figures        RTT and bandwidth figures (PNG and SVG)
  jostle report results/adhoc                 one self-contained HTML page

exit status: 0 ok, 1 a run or its data failed, 2 bad command-line input, 130 Ctrl-C.
See docs/cli.md for every option."""


def _did_you_mean(word, choices) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2), "did you mean" hints and no silent prefix
    abbreviations (`--size` must not quietly mean `--sizes`). Subcommand parsers inherit it."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        self._argv = list(sys.argv[1:] if args is None else args)   # for error()
        return super().parse_known_args(args, namespace)

    def error(self, message):
        m = re.match(r"argument ((?:-\S+/)?(--?\S+)): expected one argument$", message)
        argv = getattr(self, "_argv", [])
        if m and m.group(2) in argv[:-1] and argv[argv.index(m.group(2)) + 1].startswith("-"):
            # its value starts with '-' (-1Gbps) or the next option was taken for it
            nxt = argv[argv.index(m.group(2)) + 1]
            message = (f"argument {m.group(1)}: expected one argument, got none: {ascii(nxt)} "
                       f"reads as an option (a value starting with '-' is written "
                       f"{m.group(2)}={nxt})")
        m = re.match(r"argument (\S+): invalid choice: '([^']*)' \(choose from (.*)\)$", message)
        if m:
            choices = re.findall(r"'([^']*)'", m.group(3))
            what = ("unknown command" if m.group(1) == "COMMAND"
                    else f"argument {m.group(1)}: not allowed:")
            message = (f"{what} '{m.group(2)}'{_did_you_mean(m.group(2), choices)}; "
                       f"allowed: {', '.join(choices)}")
        message = message.replace("\n", "\\n").replace("\r", "\\r")   # one line, always
        self.exit(2, f"{self.prog}: error: {message}; see '{self.prog} --help'\n")

    def unknown_options(self, extras):
        """Refuse what no parser took, naming the option a misspelling was meant to be."""
        opts = [o for a in self._actions for o in a.option_strings]
        word = next((e for e in extras if e.startswith("-")), extras[0])
        name = word.split("=", 1)[0]
        kind = "option" if word.startswith("-") else "argument"
        self.error(f"unknown {kind} '{name}'{_did_you_mean(name, opts) if kind == 'option' else ''}")


def build_parser(only=None) -> argparse.ArgumentParser:
    """The parser of every command; ONLY (a command's name): that command's alone, which is
    all a command line naming it needs (the others' modules cost 0.1-0.2 s to import)."""
    p = Parser(
        prog="jostle", formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
        description="Plan, launch, read and draw jostle-bench MPI benchmark campaigns.")
    p.add_argument("--version", action="version", version=f"jostle {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for mod in commands.modules(only):
        mod.register(sub)
    p.commands = sub.choices
    p.set_defaults(parser=build_parser)   # what a command that parses another one's uses (submit)
    return p


def parsers(p: argparse.ArgumentParser, prefix=()):
    """(name, parser) of P and of every subcommand under it ("jostle" for P itself, then
    "baseline learn" and the like): what the golden file of options and the tests walk."""
    yield " ".join(prefix) or "jostle", p
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                yield from parsers(sub, (*prefix, name))


def parse(argv=None) -> argparse.Namespace:
    """Parse ARGV; an option no parser knows is reported by the subcommand it was given to."""
    argv = list(sys.argv[1:] if argv is None else argv)
    p = build_parser(argv[0] if argv else None)
    args, extras = p.parse_known_args(argv)
    if extras:
        p.commands.get(args.command, p).unknown_options(extras)
    return args


def _show_warning(message, category, filename, lineno, file=None, line=None):
    print(f"jostle: warning: {message}", file=sys.stderr)


def main(argv=None) -> int:
    args = parse(argv)
    args.whole_process = argv is None     # a command of its own (a check's budget counts it all)
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
