"""What each `jostle` command's --help prints lists every option it takes. That the options
themselves are kept (tests/py/data/cli_options.json, a golden file) is test_golden.py's: a change
that adds or removes one runs `make golden` in the same commit."""
import argparse

from jostle import cli
import pytest

pytestmark = pytest.mark.unit



def test_every_commands_help_lists_its_options():
    for name, parser in cli.parsers(cli.build_parser()):
        shown = [o for a in parser._actions if a.help != argparse.SUPPRESS
                 for o in a.option_strings]
        text = parser.format_help()
        missing = [o for o in shown if o not in text]
        assert not missing, f"jostle {name} --help does not list {missing}"
        # a lone % in a help string makes argparse print its action's fields instead
        assert "option_strings" not in text, f"jostle {name} --help: a % not written %%"
