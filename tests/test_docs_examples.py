"""Every code block of README.md and of the pages in docs/ runs, as written, and prints what it shows.

Each page runs in a fresh temporary folder, its blocks in order:

* ```` ```python ````: executed in one namespace per page (a later block sees the names an earlier
  one made), in the page's folder.
* ```` ```console ````: each line starting with ``$ `` is a command (a line ending in ``\\`` goes
  on); the lines after it, up to the next command, are what it prints.
* ```` ```sh ```` (or ``bash``, ``shell``): every line is a command; ``#`` starts a comment.
* ```` ```text ```` right after a python block (nothing but blank lines between): what that block
  prints.
* Any other block (yaml, json, a ``text`` block elsewhere) is shown, not run, unless a directive
  says otherwise.

Commands are ``veil …`` only, run as real processes of the ``veil`` script with ``COLUMNS=100``
(so tables wrap as shown; ``> FILE`` at the end sends standard output to a file). Shown output
must match what was printed (standard output and error together, trailing spaces ignored), where
a line ``...`` stands for any number of lines.

An HTML comment on the line before a block holds its directives, separated by ``;``:

* ``no-run``: the block is not run (only for blocks that install something: each must hold a
  ``pip install``);
* ``file: NAME``: the block's text is written to NAME in the page's folder (a file the reader
  creates with that content);
* ``exit: N``: its commands end with status N (default 0);
* ``output varies``: the output is not compared (noise from the secure source, timings).

The README's folder holds copies of ``examples/`` and ``src/veil/resources/adult/``: its commands
are given from the repository root. Every other page starts from an empty folder and makes the
files it uses. DP budget files are sealed with the suite's temporary key (``budget_key_file`` in
conftest.py), in Python blocks and commands alike.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
REPOSITORY_FILES = {"README.md": ("examples", "src/veil/resources/adult")}
COMMAND_LANGUAGES = {"sh", "bash", "shell"}
DIRECTIVES = ("no-run", "file", "exit", "output varies")
TERMINAL_COLUMNS = "100"

FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,})(?P<lang>[\w-]*)\s*$")
COMMENT = re.compile(r"^\s*<!--(.*)-->\s*$")


@dataclass
class Block:
    page: str
    line: int
    lang: str
    text: str
    directives: dict[str, str] = field(default_factory=dict)
    after_python: bool = False

    @property
    def where(self) -> str:
        return f"{self.page}, line {self.line}"


def parse_directives(comment: str, where: str) -> dict[str, str]:
    directives = {}
    for item in filter(None, (part.strip() for part in comment.split(";"))):
        name, _, value = item.partition(":")
        name = name.strip()
        if name not in DIRECTIVES:
            raise ValueError(f"{where}: unknown directive {item!r}; use one of {', '.join(DIRECTIVES)}.")
        directives[name] = value.strip()
    return directives


def parse_blocks(text: str, page: str) -> list[Block]:
    """The fenced blocks of a Markdown page, with their directives."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    previous_end = None  # index of the line after the last block's closing fence
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        start, indent, fence = i, match["indent"], match["fence"]
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != fence:
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        if i == len(lines):
            raise ValueError(f"{page}, line {start + 1}: the code block is never closed.")
        before = start - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        comment = COMMENT.match(lines[before]) if before >= 0 else None
        where = f"{page}, line {start + 1}"
        block = Block(page, start + 1, match["lang"].lower(), "\n".join(body),
                      parse_directives(comment.group(1), where) if comment else {})
        block.after_python = (bool(blocks) and blocks[-1].lang == "python" and previous_end is not None
                              and all(not line.strip() for line in lines[previous_end:start]))
        blocks.append(block)
        i += 1
        previous_end = i
    return blocks


def output_matches(expected: str, actual: str) -> bool:
    """Whether ``actual`` has the lines of ``expected``, a line ``...`` matching any number of lines."""
    def clean(text: str) -> list[str]:
        out = [line.rstrip() for line in text.splitlines()]
        while out and not out[-1]:
            out.pop()
        while out and not out[0]:
            out.pop(0)
        return out

    want, got = clean(expected), clean(actual)
    segments: list[list[str]] = [[]]
    for line in want:
        if line.strip() == "...":
            segments.append([])
        else:
            segments[-1].append(line)
    if len(segments) == 1:
        return want == got
    first, *middle, last = segments
    if got[:len(first)] != first:
        return False
    pos = len(first)
    for segment in middle:
        found = next((j for j in range(pos, len(got) - len(segment) + 1) if got[j:j + len(segment)] == segment), None)
        if found is None:
            return False
        pos = found + len(segment)
    return len(got) - len(last) >= pos and (not last or got[len(got) - len(last):] == last)


def split_commands(block: Block) -> list[tuple[str, str | None]]:
    """(command, shown output or None) pairs of a console or sh block."""
    lines = block.text.splitlines()
    if block.lang in COMMAND_LANGUAGES:
        commands: list[tuple[str, str | None]] = []
        current: list[str] = []
        for line in lines:
            stripped = line.rstrip()
            current.append(stripped[:-1] if stripped.endswith("\\") else stripped)
            if not stripped.endswith("\\"):
                command = " ".join(part.strip() for part in current).strip()
                current = []
                if command and not command.startswith("#"):
                    commands.append((command, None))
        return commands
    pairs: list[tuple[str, list[str]]] = []
    continuing = False
    for line in lines:
        if continuing:
            pairs[-1] = (pairs[-1][0] + " " + line.rstrip().rstrip("\\").strip(), pairs[-1][1])
            continuing = line.rstrip().endswith("\\")
        elif line.startswith("$ "):
            pairs.append((line[2:].rstrip().rstrip("\\").strip(), []))
            continuing = line.rstrip().endswith("\\")
        elif pairs:
            pairs[-1][1].append(line)
        elif line.strip():
            raise ValueError(f"{block.where}: console output before the first '$ ' command.")
    return [(command, "\n".join(output)) for command, output in pairs]


def veil_command() -> list[str]:
    """The ``veil`` script as pip installs it (``[project.scripts]``), run by this interpreter."""
    script = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]["veil"]
    module, _, attribute = script.partition(":")
    return [sys.executable, "-c",
            f"import sys; sys.argv[0] = 'veil'; from {module} import {attribute}; sys.exit({attribute}())"]


class PageRun:
    """Runs one page's blocks in order in ``folder``."""

    def __init__(self, page: Path, folder: Path, key_file: Path):
        self.name = page.relative_to(ROOT).as_posix()
        self.folder = folder
        self.namespace: dict = {"__name__": "__docs__"}
        self.last_output = ""
        self.env = {**os.environ, "COLUMNS": TERMINAL_COLUMNS, "VEIL_KEY_FILE": str(key_file),
                    "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
        self.env.pop("FORCE_COLOR", None)
        self.env.pop("TERMINAL_WIDTH", None)

    def run(self, block: Block) -> None:
        if "no-run" in block.directives:
            assert "pip install" in block.text, f"{block.where}: no-run is only for blocks that install something."
            return
        if "file" in block.directives:
            assert block.directives["file"], f"{block.where}: 'file:' needs a file name."
            (self.folder / block.directives["file"]).write_text(block.text + "\n", encoding="utf-8")
            return
        if block.lang == "python":
            self.run_python(block)
        elif block.lang == "console" or block.lang in COMMAND_LANGUAGES:
            for command, shown in split_commands(block):
                printed = self.run_command(block, command)
                if shown is not None:
                    self.compare(block, shown, printed)
        elif block.lang == "text" and block.after_python:
            self.compare(block, block.text, self.last_output)

    def run_python(self, block: Block) -> None:
        buffer = io.StringIO()
        cwd = os.getcwd()
        os.chdir(self.folder)
        try:
            with contextlib.redirect_stdout(buffer):
                exec(compile(block.text, f"{self.name}:{block.line}", "exec"), self.namespace)
        finally:
            os.chdir(cwd)
        self.last_output = buffer.getvalue()

    def run_command(self, block: Block, command: str) -> str:
        words = shlex.split(command, comments=True)
        target = None
        if len(words) >= 2 and words[-2] == ">":
            words, target = words[:-2], words[-1]
        assert words and words[0] == "veil", (
            f"{block.where}: only veil commands run in the docs, not {command!r}; mark install steps no-run.")
        proc = subprocess.run(veil_command() + words[1:], cwd=self.folder, env=self.env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE if target else subprocess.STDOUT,
                              text=True, timeout=600)
        printed = proc.stdout if target is None else proc.stderr
        if target is not None:
            (self.folder / target).write_text(proc.stdout, encoding="utf-8")
        expected = int(block.directives.get("exit", 0))
        assert proc.returncode == expected, (
            f"{block.where}: `{command}` exited with {proc.returncode}, not {expected}:\n{printed}"
            + (proc.stderr or ""))
        return printed

    def compare(self, block: Block, shown: str, printed: str) -> None:
        if "output varies" in block.directives:
            return
        if not output_matches(shown, printed):
            diff = "\n".join(difflib.unified_diff(shown.splitlines(), printed.splitlines(), "shown", "printed",
                                                  lineterm=""))
            pytest.fail(f"{block.where}: the output shown is not what was printed:\n{diff}", pytrace=False)


def runnable(page: Path) -> bool:
    return any(b.lang == "python" or b.lang == "console" or b.lang in COMMAND_LANGUAGES or "file" in b.directives
               for b in parse_blocks(page.read_text(encoding="utf-8"), page.name))


@pytest.mark.parametrize("page", [p for p in PAGES if runnable(p)], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_page_examples_run(page: Path, tmp_path: Path, budget_key_file: Path) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    name = page.relative_to(ROOT).as_posix()
    for item in REPOSITORY_FILES.get(name, ()):
        shutil.copytree(ROOT / item, folder / item)
    run = PageRun(page, folder, budget_key_file)
    for block in parse_blocks(page.read_text(encoding="utf-8"), name):
        run.run(block)


def test_readme_links_resolve() -> None:
    """The README's relative links (to the guides, to files of the repository) lead somewhere."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t and not t.startswith("#")]
    assert any(t.startswith("docs/guides/") for t in targets)
    missing = [t for t in targets if not (ROOT / t.split("#")[0]).exists()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_every_guide_runs_something() -> None:
    guides = sorted((ROOT / "docs" / "guides").glob("*.md"))
    assert len(guides) >= 4
    assert all(runnable(guide) for guide in guides)


@pytest.mark.parametrize("expected, actual, matches", [
    ("a\nb", "a\nb  \n\n", True),
    ("a\nb", "a\nc", False),
    ("a\n...\nd", "a\nb\nc\nd", True),
    ("a\n...\nd", "a\nb\nc", False),
    ("...\nc\n...", "a\nb\nc\nd", True),
    ("...\nx\n...", "a\nb\nc\nd", False),
    ("a\n...\na", "a", False),
])
def test_output_matching(expected: str, actual: str, matches: bool) -> None:
    assert output_matches(expected, actual) is matches


def test_block_rules() -> None:
    page = ("Text\n\n```python\nprint(1)\n```\n\n```text\n1\n```\n\n<!-- output varies; exit: 1 -->\n"
            "```console\n$ veil dp count a.csv \\\n    --epsilon 1\nanswer\n$ veil --version\n```\n\n"
            "```text\nnot output\n```\n")
    blocks = parse_blocks(page, "page.md")
    assert [b.lang for b in blocks] == ["python", "text", "console", "text"]
    assert blocks[1].after_python and not blocks[3].after_python
    assert blocks[2].directives == {"output varies": "", "exit": "1"}
    assert split_commands(blocks[2]) == [("veil dp count a.csv --epsilon 1", "answer"), ("veil --version", "")]
    with pytest.raises(ValueError, match="unknown directive"):
        parse_blocks("<!-- no run -->\n```sh\nveil demo\n```\n", "page.md")


def test_cli_reference_is_the_help_of_every_command() -> None:
    """docs/cli.md is generated at build time from the commands themselves: one section per
    command, each the text `veil … --help` prints."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "docs" / "hooks" / "cli_reference.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    assert hook.MARKER in (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    page = hook.cli_reference(ROOT)
    sections = re.findall(r"^#+ (veil[^\n]*)\n\n```text\n(.*?)\n```$", page, flags=re.M | re.S)
    titles = [title for title, _ in sections]
    assert {"veil", "veil check", "veil anonymize", "veil dp count", "veil ldp simulate"} <= set(titles)
    assert len(titles) == len(set(titles))
    env = {**os.environ, "COLUMNS": hook.WIDTH, "TERMINAL_WIDTH": hook.WIDTH, "NO_COLOR": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    for title, shown in sections:
        if title in ("veil", "veil dp count"):
            proc = subprocess.run(veil_command() + title.split()[1:] + ["--help"], env=env, capture_output=True,
                                  text=True, check=True)
            assert output_matches(shown, proc.stdout), title
