"""--db, --site and --baselines are declared once (commands/_options.py) with their environment
variable, site-file key and fallback, and found one way in every command that takes them."""
import re
from pathlib import Path

import pytest

from jostle import cli
from jostle.commands import _options, _record, baseline

pytestmark = pytest.mark.unit

COMMANDS = Path(__file__).resolve().parents[2] / "python" / "jostle" / "commands"


def test_no_command_declares_a_shared_option_itself():
    spelled = re.compile(r"""add_argument\(\s*["'](--db|--site|--baselines)["']""")
    by_hand = [f.name for f in COMMANDS.glob("*.py")
               if f.name != "_options.py" and spelled.search(f.read_text())]
    assert not by_hand


def test_flag_then_environment_then_site_file_then_fallback(tmp_path, monkeypatch):
    for name in ("JOSTLE_DB", "JOSTLE_SITE", "JOSTLE_BASELINES"):
        monkeypatch.delenv(name, raising=False)
    args = cli.build_parser().parse_args(["baseline", "list"])
    assert baseline.folder(args) == Path("baselines")
    monkeypatch.setenv("JOSTLE_BASELINES", str(tmp_path / "env"))
    assert baseline.folder(args) == tmp_path / "env"
    args = cli.build_parser().parse_args(["baseline", "list", "--baselines", str(tmp_path / "f")])
    assert baseline.folder(args) == tmp_path / "f"
    # the store: --db, $JOSTLE_DB, the site file's [check] store, the default file
    site = tmp_path / "site.toml"
    site.write_text(f'[check]\nstore = "{tmp_path / "site.sqlite"}"\n'
                    '[class.cpu]\nhosts = ["n1"]\nchecks = ["triad"]\n')
    assert _record.store_of(None, None) == _options.SHARED["db"].fallback
    assert _record.store_of(None, str(site)) == str(tmp_path / "site.sqlite")
    monkeypatch.setenv("JOSTLE_SITE", str(site))
    assert _record.store_of(None, None) == str(tmp_path / "site.sqlite")
    monkeypatch.setenv("JOSTLE_DB", str(tmp_path / "env.sqlite"))
    assert _record.store_of(None, None) == str(tmp_path / "env.sqlite")
    assert _record.store_of(str(tmp_path / "flag.sqlite"), None) == str(tmp_path / "flag.sqlite")


def test_each_command_shows_where_the_default_comes_from():
    for argv in (["history"], ["export"], ["baseline", "learn"], ["baseline", "list"]):
        text = dict(cli.parsers(cli.build_parser()))[" ".join(argv)].format_help()
        for o in _options.SHARED.values():
            if o.flag in text:
                assert f"${o.envvar}" in text, (argv, o.flag)


