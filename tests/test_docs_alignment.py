"""The site's code blocks keep their columns when the reader's monospace font lacks ℓ, δ, β, ∞
(audit item 20): the hook docs/hooks/one_column.py puts every non-ASCII character of a <pre> in a
span the stylesheet makes one character wide. Checked in headless Chromium with a code font that
draws only ASCII, so that ℓ and the others come from a proportional font, as on a reader's
system whose monospace font lacks them."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _hook():
    spec = importlib.util.spec_from_file_location("one_column", ROOT / "docs" / "hooks" / "one_column.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_hook_wraps_each_wide_character_of_a_code_block_only():
    one_column = _hook().one_column
    html = ('<p>ℓ-diversity</p><pre class="x"><code><span class="k">k</span> │ ℓ = 3 &amp; δ</code></pre>'
            '<pre>plain</pre>')
    out = one_column(html)
    assert out.startswith("<p>ℓ-diversity</p>")                   # prose is left alone
    assert '<span class="k">k</span> <span class="one-column">│</span> <span class="one-column">ℓ</span> = 3 ' \
           '&amp; <span class="one-column">δ</span>' in out
    assert out.endswith("<pre>plain</pre>")
    assert re.sub(r'<span class="one-column">(.)</span>', r"\1", out) == html   # nothing else changes
    assert "docs/hooks/one_column.py" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>
@font-face {{ font-family: "Mono Without Greek"; src: local("DejaVu Sans Mono"); unicode-range: U+0000-007F; }}
pre {{ font-family: "Mono Without Greek", "DejaVu Serif", serif; font-size: 20px; }}
{css}
</style></head><body><div class="md-typeset">
{blocks}
</div><script>
window.addEventListener("load", () => document.fonts.ready.then(() => {{
  const width = id => document.getElementById(id).getBoundingClientRect().width;
  const out = document.createElement("pre"); out.id = "veil-probe";
  out.textContent = JSON.stringify({{ascii: width("ascii"), raw: width("raw"), fixed: width("fixed")}});
  document.body.appendChild(out);
}}));
</script></body></html>"""


def test_a_line_with_greek_letters_is_as_wide_as_one_without_in_a_browser(tmp_path: Path):
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        if os.environ.get("VEIL_REQUIRE_SERVICES") == "1":
            pytest.fail("Chromium is not installed, and VEIL_REQUIRE_SERVICES=1 demands it")
        pytest.skip("Chromium is not installed (Debian package chromium)")
    line, greek = "| k | l | d | b | oo |", "| k | ℓ | δ | β | ∞∞ |"
    blocks = (f'<pre><span id="ascii">{line}</span></pre><pre><span id="raw">{greek}</span></pre>'
              + _hook().one_column(f'<pre><span id="fixed">{greek}</span></pre>'))
    css = (ROOT / "docs" / "stylesheets" / "extra.css").read_text(encoding="utf-8")
    page = tmp_path / "page.html"
    page.write_text(PAGE.format(css=css, blocks=blocks), encoding="utf-8")
    command = [binary, "--headless", "--disable-gpu", "--no-first-run", f"--user-data-dir={tmp_path / 'profile'}",
               "--virtual-time-budget=5000", "--dump-dom", page.as_uri()]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.insert(1, "--no-sandbox")
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    found = re.search(r'<pre id="veil-probe">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stderr[-2000:]
    widths = json.loads(found[1])
    assert abs(widths["raw"] - widths["ascii"]) > 2, widths       # the fallback font does misalign them
    assert abs(widths["fixed"] - widths["ascii"]) < 0.5, widths   # the one-column spans do not
