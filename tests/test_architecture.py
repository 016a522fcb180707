"""The shape of the package (DESIGN.md): no import circles, imports that run downward through its
layers, the terminal (Typer, Click, Rich) reached only from ``veil.cli``, and no file of more than
800 lines without a reason written in ``LONG_FILES``.

Every import counts, at the top of a module or inside a function (an import made lazily is still
a dependency), and so does ``importlib.import_module("veil.…")``. The imports are read from the
source with ``ast``; nothing is imported to test them.
"""

from __future__ import annotations

import ast
from collections import deque
from functools import lru_cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# The parts of the package by rank: a module may import from its own part and from parts of a
# lower rank, never from a higher one or a sibling of the same rank. The chain of DESIGN.md is
# data → classes → models/metrics → anonymize → attacks → experiments → cli; the others sit where
# their imports put them.
LAYERS = {
    "errors": 0,        # the exceptions every part raises
    "untrusted": 0,     # text from outside made safe to show (messages, the terminal, the report)
    "inputs": 0.5,      # the reader of the files a user names, below the writer (which reads manifests)
    "randomness": 1,    # the random sources dp and ldp share
    "parallel": 1,      # the thread pool data, classes, anonymize and ldp spread work over
    "output": 1,        # the one writer: data writes hierarchy files through it
    "spreadsheet": 1,   # the spreadsheet guard of released files (written by anonymize, read back by attacks, ledger)
    "data": 2,          # Dataset, Hierarchy, reading tables
    "manifests": 2.5,   # a release's published manifest and the private file the curator keeps
    "population": 2.7,  # a population generalized through a release's hierarchies (presence, k-map)
    "cells": 3,         # the published cells of a column (the classes and the metrics read them)
    "engines": 3,       # where records are read and counted: local, or Spark (a summary of distinct rows)
    "classes": 4,       # equivalence classes and count matrices
    "models": 5,        # privacy models, on the classes
    "metrics": 5,       # utility metrics, on the classes
    "risk": 4.5,        # re-identification risk and population uniqueness, on the classes (risk models read them)
    "dp": 5,            # differential privacy, on the data alone
    "ldp": 5,           # local differential privacy, on random sources alone
    "audit": 5,         # query auditing, on the data alone
    "check": 6,         # every model and the risk of a table
    "veil": 7,          # the package itself: the core's public names and __version__
    "anonymize": 8,     # the algorithms, their releases (which record veil's version)
    "sdc": 8.5,         # statistical disclosure control: perturbation methods, on data, classes, risk, dp's samplers
    "attacks": 9,       # attacks on releases
    "config": 9,        # configuration files, which build anonymizers
    "marginals": 9,     # anonymized marginals, whose base table is a full-domain release
    "synth": 10.5,      # DP synthetic data: marginals' junction tree, dp's noise, the ledger's seal, its report
    "conformance": 9,   # the contract of every model, algorithm, mechanism and protocol, as checks
    "experiments": 10,  # reproductions of published experiments
    "ledger": 10,       # the release ledger and its gate: budgets, attacks across releases, checks
    "report": 10,       # a release's HTML report, which runs the checks and the attacks
    "workbench": 10.8,  # veil serve's web application: pages over config, anonymize, attacks, report, ledger, dp
    "cli": 11,          # the command line
    "__main__": 12,     # python -m veil
}

TERMINAL = ("typer", "click", "rich")

# A module holds one concept and its name says which; past this many lines it usually holds several.
MAX_LINES = 800
# The files of veil allowed more than MAX_LINES lines, by their path in the repository, each with
# the reason in one sentence. A new long file fails until it is split by concept or its reason is
# written here; an entry whose file is no longer long (or is gone) fails until it is removed.
LONG_FILES = {
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@lru_cache(maxsize=None)
def modules() -> dict[str, Path]:
    """Every module of veil by its dotted name."""
    return {_module_name(path): path for path in sorted((SRC / "veil").rglob("*.py"))}


def imported_names(path: Path, name: str) -> set[str]:
    """Every module ``path`` (the module ``name``) imports, anywhere in it, as absolute dotted
    names; ``from a import b`` names ``a.b`` when that is a module of veil, else ``a``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            for alias in node.names:
                found.add(f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules() else module)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args and isinstance(node.args[0], ast.Constant)):
            found.add(node.args[0].value)
    return found


@lru_cache(maxsize=None)
def graph() -> dict[str, frozenset[str]]:
    """Module → the modules of veil it imports."""
    return {name: frozenset(m for m in imported_names(path, name) if m in modules() and m != name)
            for name, path in modules().items()}


def circles(edges: dict[str, frozenset[str]]) -> list[list[str]]:
    """One import circle per group of modules that reach each other, as ``[a, b, …, a]``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for vertex in sorted(edges):
        if vertex not in index:
            visit(vertex)
    return [_shortest_circle(edges, group) for group in groups]


def _shortest_circle(edges: dict[str, frozenset[str]], group: list[str]) -> list[str]:
    start, members = group[0], set(group)
    came_from = {start: None}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(edges.get(v, ())):
            if w == start:
                path = [v]
                while came_from[path[-1]] is not None:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if w in members and w not in came_from:
                came_from[w] = v
                queue.append(w)
    raise AssertionError(f"no circle through {start}")


def count_lines(text: str) -> int:
    """The lines of ``text``: one per newline, and a last line that lacks its newline (a form feed is no line)."""
    return text.count("\n") + int(bool(text) and not text.endswith("\n"))


def line_counts(root: Path) -> dict[str, int]:
    """The lines of every ``.py`` file under ``root/src/veil``, by its path from ``root``."""
    return {path.relative_to(root).as_posix(): count_lines(path.read_text(encoding="utf-8"))
            for path in sorted((root / "src" / "veil").rglob("*.py"))}


def too_long(lines: dict[str, int], allowed: dict[str, str]) -> list[str]:
    """The files over ``MAX_LINES`` lines that ``allowed`` gives no reason for, each with its lines."""
    return [f"{name} ({count:,} lines)" for name, count in lines.items()
            if count > MAX_LINES and not allowed.get(name, "").strip()]


def no_longer_long(lines: dict[str, int], allowed: dict[str, str]) -> list[str]:
    """The entries of ``allowed`` whose file is gone or has at most ``MAX_LINES`` lines."""
    return [f"{name} ({lines[name]:,} lines)" if name in lines else f"{name} (gone)"
            for name in allowed if lines.get(name, 0) <= MAX_LINES]


def part(module: str) -> str:
    """The part of the package a module belongs to: ``veil.dp.noise`` → ``dp``."""
    return module.split(".")[1] if "." in module else module


# --------------------------------------------------------------------------- the rules

def test_the_reader_sees_lazy_imports():
    # veil.cli.anonymize imports the configuration only inside its commands
    assert "veil.config" in graph()["veil.cli.anonymize"]
    assert "veil.cli" in graph()["veil.__main__"]


def test_no_import_circles():
    found = circles(graph())
    assert not found, "import circles: " + "; ".join(" → ".join(circle) for circle in found)


def test_a_circle_is_named():
    toy = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a", "d"}), "d": frozenset(),
           "e": frozenset({"f"}), "f": frozenset({"e"})}
    assert circles(toy) == [["a", "b", "c", "a"], ["e", "f", "e"]]


def test_every_part_of_the_package_has_a_layer():
    assert {part(module) for module in modules()} == set(LAYERS)


def test_imports_run_downward():
    upward = [f"{module} → {target}" for module, targets in graph().items() for target in sorted(targets)
              if part(module) != part(target) and LAYERS[part(target)] >= LAYERS[part(module)]]
    assert not upward, "imports that do not run downward (see LAYERS): " + "; ".join(upward)


@pytest.mark.parametrize("module", sorted(m for m in modules() if part(m) not in ("cli", "__main__")))
def test_domain_modules_never_reach_the_terminal(module):
    names = imported_names(modules()[module], module)
    terminal = sorted(n for n in names if n.split(".")[0] in TERMINAL or n == "veil.cli" or n.startswith("veil.cli."))
    assert not terminal, f"{module} imports {', '.join(terminal)}; only veil.cli may"


def test_the_command_line_does_reach_the_terminal():
    # the rule above looks at the right names: the command line does import them
    assert "typer" in imported_names(modules()["veil.cli.console"], "veil.cli.console")
    assert "rich.console" in imported_names(modules()["veil.cli.rich_console"], "veil.cli.rich_console")


def test_the_documented_layout_names_every_part_of_the_package_and_nothing_else():
    # docs/architecture.md, the site's page on the package's layout (it was the README's Layout)
    page = (SRC.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = page.split("## Layout", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    listed = {line.split()[0].rstrip("/").removesuffix(".py") for line in section.splitlines()[1:]
              if line.startswith("  ") and not line.startswith("   ")}
    package = SRC / "veil"
    present = {p.stem for p in package.glob("*.py") if p.stem not in ("__init__", "__main__")}
    present |= {p.name for p in package.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert listed == present, f"docs/architecture.md's layout lists {sorted(listed - present)} that do not exist and omits " \
                              f"{sorted(present - listed)}"


def test_no_file_is_longer_than_the_limit_without_a_reason():
    long = too_long(line_counts(SRC.parent), LONG_FILES)
    assert not long, (
        f"more than {MAX_LINES} lines: {'; '.join(long)}. Split each by concept, not by length: one module per "
        "concept a reader would look for by name, named after it, with a docstring that states it (importers follow "
        "and the layer table holds); or, if one concept really needs the length, write why in one sentence in "
        "LONG_FILES in tests/test_architecture.py.")


def test_every_long_file_allowed_is_still_long():
    stale = no_longer_long(line_counts(SRC.parent), LONG_FILES)
    assert not stale, (f"LONG_FILES allows {'; '.join(stale)}, no longer over {MAX_LINES} lines: remove the "
                       "entry from LONG_FILES in tests/test_architecture.py, so that the file cannot grow back.")


def test_every_reason_is_one_sentence():
    for name, reason in LONG_FILES.items():
        text = reason.strip()
        assert text.endswith(".") and ". " not in text[:-1] and "\n" not in text, \
            f"the reason LONG_FILES gives for {name} is not one sentence: {reason!r}"


def test_lines_are_counted_by_their_newlines():
    assert [count_lines(t) for t in ("", "a", "a\n", "a\nb", "a\n\n", "a\x0cb\n")] == [0, 1, 1, 2, 2, 1]


def test_the_line_limit_is_checked(tmp_path):
    package = tmp_path / "src" / "veil" / "part"
    package.mkdir(parents=True)
    (package / "long.py").write_text("x = 1\n" * (MAX_LINES + 1), encoding="utf-8")
    (package / "limit.py").write_text("x = 1\n" * (MAX_LINES - 1) + "x = 1", encoding="utf-8")
    lines = line_counts(tmp_path)
    assert lines == {"src/veil/part/limit.py": MAX_LINES, "src/veil/part/long.py": MAX_LINES + 1}
    assert too_long(lines, {}) == [f"src/veil/part/long.py ({MAX_LINES + 1} lines)"]
    assert too_long(lines, {"src/veil/part/long.py": " "}) == [f"src/veil/part/long.py ({MAX_LINES + 1} lines)"]
    assert too_long(lines, {"src/veil/part/long.py": "one concept that needs the length."}) == []
    assert no_longer_long(lines, {"src/veil/part/long.py": "a reason.", "src/veil/part/limit.py": "a reason.",
                                  "src/veil/part/gone.py": "a reason."}) == \
        [f"src/veil/part/limit.py ({MAX_LINES} lines)", "src/veil/part/gone.py (gone)"]
