"""Every command keeps its options: the parser of each `jostle` command, and what its --help
prints, against tests/py/data/cli_options.json (the options as they were when the package was
regrouped by concern). A change that adds or removes an option updates that file on purpose,
in the same commit."""
import argparse
import json
from pathlib import Path

from jostle import cli
import pytest

pytestmark = pytest.mark.unit

SNAPSHOT = Path(__file__).parent / "data" / "cli_options.json"


def commands(p, prefix=()):
    yield " ".join(prefix) or "jostle", p
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                yield from commands(sub, (*prefix, name))


def test_every_command_keeps_its_options_and_its_help_lists_them():
    kept = json.loads(SNAPSHOT.read_text())
    now = {name: sorted(o for a in p._actions for o in a.option_strings)
           for name, p in commands(cli.build_parser())}
    assert sorted(now) == sorted(kept), "commands added or removed"
    for name, opts in kept.items():
        assert now[name] == opts, f"jostle {name}: options changed"
        parser = dict(commands(cli.build_parser()))[name]
        shown = [o for a in parser._actions if a.help != argparse.SUPPRESS
                 for o in a.option_strings]
        text = parser.format_help()
        missing = [o for o in shown if o not in text]
        assert not missing, f"jostle {name} --help does not list {missing}"
