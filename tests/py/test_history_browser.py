"""`jostle history`'s figures and page as a person sees them: rendered by a real browser
(Debian's chromium, headless), as the report's test does."""

import html
import re

import pytest
from PIL import Image

from test_history_cli import jostle, make_store
from test_report_browser import CHROMIUM, PROBE, _chromium

pytestmark = pytest.mark.system


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM, reason="chromium is not installed (apt-get install chromium)")
def test_the_history_page_renders_in_chromium(tmp_path, capsys):
    db, planted, _ = make_store(tmp_path, capsys, nodes=8, days=60, seed=3)
    page = tmp_path / "history.html"
    rc, _, err = jostle(capsys, "history", "--db", db, "--report", page, "--figures",
                        tmp_path / "fig")
    assert rc == 0, err
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace("</body>", PROBE + "</body>"))

    dom = _chromium("--dump-dom", f"file://{probe}").stdout
    title = re.search(r"<title>(.*?)</title>", dom).group(1)
    broken, total = map(int, re.fullmatch(r"broken (\d+) of (\d+)", title).groups())
    assert total == 6 and broken == 0, title          # one figure a series label
    text = html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<(script|style)\b.*?</\1>", " ", dom,
                                                         flags=re.S)))
    assert not re.search(r"\b((?i:nan|inf)|None)\b", text)
    assert "3 drift(s) found" in text and all(node in text for node, _ in planted)

    shot = tmp_path / "shot.png"
    _chromium(f"--screenshot={shot}", "--window-size=1280,2400", f"file://{page}")
    img = Image.open(shot).convert("L")
    lo, hi = img.getextrema()
    assert img.size == (1280, 2400) and hi - lo > 100   # something drawn, not a blank page
    # the first figure (the drifted triad, drawn first) in colour: its nodes are told apart
    rgb = Image.open(tmp_path / "fig" / "history-triad.png").convert("RGB")
    colours = {c for _, c in rgb.getcolors(1 << 20) or []}
    assert len(colours) > 50
