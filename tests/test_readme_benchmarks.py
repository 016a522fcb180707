"""The README's benchmark figures are what the results files say (benchmarks/readme.py).

Each block between ``<!-- bench:NAME:start -->`` and ``<!-- bench:NAME:end -->`` must be exactly
the rendering of ``benchmarks/results/NAME.json``: a figure typed in by hand, or a results file
committed without the README, fails here.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_module():
    """benchmarks/readme.py, loaded from its file (the benchmarks folder is not a package)."""
    spec = importlib.util.spec_from_file_location("benchmark_readme", ROOT / "benchmarks" / "readme.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_results_file_has_its_block_and_every_block_is_its_file_rendered():
    readme = readme_module()
    found = readme.blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert sorted(found) == sorted(readme.RENDERERS)
    for name, body in found.items():
        assert body == readme.render(name), f"the README's {name} block differs from benchmarks/results/{name}.json; " \
                                            "run python benchmarks/readme.py"


def test_a_figure_edited_by_hand_is_found():
    readme = readme_module()
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    name, body = next(iter(readme.blocks(text).items()))
    digit = next(i for i, ch in enumerate(body) if ch.isdigit())
    edited = body[:digit] + str((int(body[digit]) + 1) % 10) + body[digit + 1:]
    assert readme.blocks(text.replace(body, edited))[name] != readme.render(name)
    assert readme.rewrite(text.replace(body, edited)) == text
