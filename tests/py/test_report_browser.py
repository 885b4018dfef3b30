"""The report as a person sees it: rendered by a real browser (Debian's chromium, headless)."""

import html
import re
import shutil
import subprocess

import pytest
from PIL import Image

from jostle.cli import main

pytestmark = pytest.mark.system

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# Appended to a copy of the page: once everything has loaded, the title says how many images
# the browser could not decode (naturalWidth 0) out of how many.
PROBE = """<script>window.addEventListener("load", () => {
  const imgs = [...document.images];
  document.title = "broken " + imgs.filter(i => !i.complete || i.naturalWidth === 0).length
                   + " of " + imgs.length;
});</script>"""


def _chromium(*args, timeout=120):
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--virtual-time-budget=5000", *args],
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
@pytest.mark.skipif(not CHROMIUM, reason="chromium is not installed (apt-get install chromium)")
def test_quick_campaign_report_renders_in_chromium(fake_bench, tmp_path, capsys):
    assert main(["run", "--launcher", "", "--output-dir", str(tmp_path), "--campaign", "q"]) == 0
    page = tmp_path / "q" / "report.html"
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace("</body>", PROBE + "</body>"))

    dom = _chromium("--dump-dom", f"file://{probe}").stdout
    title = re.search(r"<title>(.*?)</title>", dom).group(1)
    broken, total = map(int, re.fullmatch(r"broken (\d+) of (\d+)", title).groups())
    assert total >= 3 and broken == 0, title   # the ping-pong figures and the machine

    text = html.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<(script|style)\b.*?</\1>", " ", dom,
                                                         flags=re.S)))
    bad = r"\b((?i:nan|inf)|None)\b"   # 'none' is a progress mode; Python's None is not
    assert not re.search(bad, text), re.search(r".{60}" + bad + r".{60}", text, re.S)

    shot = tmp_path / "shot.png"
    _chromium(f"--screenshot={shot}", "--window-size=1280,2000", f"file://{page}")
    img = Image.open(shot).convert("L")
    lo, hi = img.getextrema()
    assert img.size == (1280, 2000) and hi - lo > 100   # something drawn, not a blank page
