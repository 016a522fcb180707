"""The benchmark figures of the README and of the site are what the results files say
(benchmarks/readme.py).

Each block between ``<!-- bench:NAME:start -->`` and ``<!-- bench:NAME:end -->`` must be exactly
the rendering of ``benchmarks/results/NAME.json``: a figure typed in by hand, or a results file
committed without its page, fails here. Every results file has one block: the summary in
README.md, every other one on a page of the site.
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


def test_every_results_file_has_one_block_and_every_block_is_its_file_rendered():
    readme = readme_module()
    where = readme.located()
    assert sorted(where) == sorted(readme.RENDERERS)
    doubled = {name: [p.relative_to(ROOT).as_posix() for p in pages] for name, pages in where.items() if len(pages) > 1}
    assert not doubled, f"a benchmark's block is on more than one page: {doubled}"
    for name, (page,) in where.items():
        body = readme.blocks(page.read_text(encoding="utf-8"))[name]
        assert body == readme.render(name), f"the {name} block of {page.relative_to(ROOT)} differs from " \
                                            f"benchmarks/results/{name}.json; run python benchmarks/readme.py"


def test_the_summary_is_in_the_readme_and_the_other_blocks_on_the_site():
    readme = readme_module()
    where = readme.located()
    assert where[readme.SUMMARY] == [ROOT / "README.md"]
    for name, pages in where.items():
        if name != readme.SUMMARY:
            assert all(page.is_relative_to(ROOT / "docs") for page in pages), name


def test_a_figure_edited_by_hand_is_found():
    readme = readme_module()
    for page in (ROOT / "README.md", ROOT / "docs" / "benchmarks.md"):
        text = page.read_text(encoding="utf-8")
        name, body = next(iter(readme.blocks(text).items()))
        digit = next(i for i, ch in enumerate(body) if ch.isdigit())
        edited = body[:digit] + str((int(body[digit]) + 1) % 10) + body[digit + 1:]
        assert readme.blocks(text.replace(body, edited))[name] != readme.render(name)
        assert readme.rewrite(text.replace(body, edited)) == text


def test_update_rewrites_the_blocks_of_every_page(tmp_path):
    readme = readme_module()
    first, second = tmp_path / "README.md", tmp_path / "benchmarks.md"
    stale = "<!-- bench:{0}:start -->\nold figures\n<!-- bench:{0}:end -->\n"
    first.write_text("# veil\n\n" + stale.format("summary"), encoding="utf-8")
    second.write_text("# Benchmarks\n\n" + stale.format("dp") + "\n" + stale.format("ldp"), encoding="utf-8")
    readme.update(where=[first, second])
    assert readme.blocks(first.read_text(encoding="utf-8")) == {"summary": readme.render("summary")}
    assert readme.blocks(second.read_text(encoding="utf-8")) == {"dp": readme.render("dp"), "ldp": readme.render("ldp")}
