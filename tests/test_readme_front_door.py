"""README.md is the front door, and the documentation site holds the rest (issue 26).

The README stays short (at most 250 lines) and keeps its sections; every link it gives leads to a
file of the repository, a page of the site where it names one, and a heading of that page where
it names an anchor (``mkdocs build --strict`` checks the site's own links, not the README's). The
site has its search and a guide per task, and its command-line reference is generated from the
``veil`` command (docs/hooks/cli_reference.py), not typed in: every command and sub-command is on
it with every option its ``--help`` lists.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import unicodedata
from pathlib import Path

import click
import pytest
import typer
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MAX_LINES = 250
SECTIONS = ["Install", "Set-up", "A tour", "What veil does", "Benchmarks", "Where to go next"]
GUIDES = ["check-and-anonymize", "attack-your-release", "ledger-and-gate", "differential-privacy", "local-dp",
          "adversary-who-knows-the-algorithm", "marginals-and-alphabeta", "spark"]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def mkdocs_config() -> dict:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def nav_pages(nav) -> set[str]:
    """Every page file the site's navigation lists."""
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, list):
        return set().union(*(nav_pages(item) for item in nav))
    if isinstance(nav, dict):
        return set().union(*(nav_pages(item) for item in nav.values()))
    return set()


def slug(heading: str) -> str:
    """The anchor Python-Markdown's toc extension gives a heading (its default slugify)."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*$", text, flags=re.M)}


def broken_links(page: Path) -> list[str]:
    """The links of ``page`` (outside code) that lead nowhere, each with why."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    text = re.sub(r"`[^`\n]*`", "", text)
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: {file.name} has no heading #{anchor}")
    return broken


def cli_hook():
    """docs/hooks/cli_reference.py, loaded from its file (the hooks folder is not a package)."""
    name = "veil_docs_cli_reference"
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "hooks" / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_the_readme_is_at_most_250_lines_and_keeps_its_sections():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_LINES, f"README.md has {len(text.splitlines())} lines; move the rest to docs/"
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings == SECTIONS


def test_every_link_of_the_readme_resolves_and_its_pages_are_on_the_site():
    assert broken_links(README) == []
    pages = nav_pages(mkdocs_config()["nav"])
    linked = {t.partition("#")[0] for t in LINK.findall(README.read_text(encoding="utf-8"))}
    off_site = sorted(t for t in linked if t.startswith("docs/") and t.removeprefix("docs/") not in pages)
    assert off_site == [], f"README.md links to pages the site's navigation does not list: {off_site}"


def test_a_broken_link_is_found(tmp_path):
    # the check above can fail: a missing file and a missing heading are both caught
    (tmp_path / "guide.md").write_text("# A guide\n\n## The part\n", encoding="utf-8")
    page = tmp_path / "README.md"
    page.write_text("[ok](guide.md#the-part) [gone](gone.md) [no heading](guide.md#other) `[code](x.md)`\n",
                    encoding="utf-8")
    assert broken_links(page) == ["gone.md: no such file", "guide.md#other: guide.md has no heading #other"]


def test_the_site_has_its_search_a_guide_per_task_and_a_page_per_concept():
    config = mkdocs_config()
    assert "search" in [p if isinstance(p, str) else next(iter(p)) for p in config["plugins"]]
    pages = nav_pages(config["nav"])
    assert {f"guides/{g}.md" for g in GUIDES} <= pages
    concepts = {p.name for p in (ROOT / "docs" / "concepts").glob("*.md")}
    assert concepts and {f"concepts/{c}" for c in concepts} <= pages
    assert {"cli.md", "reference/configuration.md"} <= pages
    on_disk = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert on_disk == pages, f"pages not in the navigation: {sorted(on_disk - pages)}"


def every_command(command: click.Command, path=()):
    yield path, command
    if isinstance(command, click.Group):
        ctx = click.Context(command, info_name="veil")
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if not sub.hidden:
                yield from every_command(sub, path + (name,))


@pytest.fixture(scope="module")
def cli_reference() -> str:
    return cli_hook().cli_reference(ROOT)


def test_the_command_line_reference_is_generated_not_typed_in(cli_reference):
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert cli_hook().MARKER in page
    assert "Usage:" not in page, "docs/cli.md holds help typed in by hand; the hook generates it"
    from veil.cli import app

    commands = list(every_command(typer.main.get_command(app)))
    assert len(commands) > 30
    sections = re.split(r"^#{2,4} (veil.*)$", cli_reference, flags=re.M)
    shown = dict(zip(sections[1::2], sections[2::2]))
    assert set(shown) == {" ".join(("veil", *path)) for path, _ in commands}
    for path, command in commands:
        section = shown[" ".join(("veil", *path))]
        for parameter in command.params:
            if isinstance(parameter, click.Option) and not parameter.hidden:
                assert max(parameter.opts, key=len) in section, f"veil {' '.join(path)}: {parameter.opts}"
