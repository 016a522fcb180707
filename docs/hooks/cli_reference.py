"""MkDocs hook: the command-line reference, generated from the `veil` command at build time.

A page holding the line ``<!-- veil-cli-reference -->`` gets, in its place, the ``--help`` of
`veil` and of every command and sub-command, in the order `veil --help` lists them. The command
is found the way pip installs it (``[project.scripts] veil`` in pyproject.toml) and imported from
this checkout's ``src/``, so the page always describes the code it is built with and there is no
copy to keep up to date. The help is rendered at a fixed width, without colour.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

MARKER = "<!-- veil-cli-reference -->"
WIDTH = "100"


def _typer_app(root: Path):
    """The Typer application behind the ``veil`` console script of ``root/pyproject.toml``."""
    import importlib

    import typer

    script = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]["veil"]
    module_name, _, attribute = script.partition(":")
    src = str(root / "src")
    if src not in sys.path:
        sys.path.insert(0, src)
    target = getattr(importlib.import_module(module_name), attribute)
    if isinstance(target, typer.Typer):
        return target
    # A `main()` that calls the application: find the Typer it names.
    for name in getattr(getattr(target, "__code__", None), "co_names", ()):
        candidate = getattr(target, "__globals__", {}).get(name)
        if isinstance(candidate, typer.Typer):
            return candidate
    raise RuntimeError(f"docs/hooks/cli_reference.py: the veil script {script!r} neither is nor calls a "
                       "typer.Typer application; update the hook.")


def _command_paths(command, path: tuple[str, ...] = ()):
    """Every command path below ``command`` (a Click group), depth first in listing order."""
    import click

    yield path
    if isinstance(command, click.Group):
        ctx = click.Context(command, info_name=path[-1] if path else "veil")
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from _command_paths(sub, path + (name,))


def cli_reference(root: Path) -> str:
    """The Markdown of every command's help."""
    import typer
    from typer.testing import CliRunner

    app = _typer_app(root)
    runner = CliRunner()
    env = {"COLUMNS": WIDTH, "TERMINAL_WIDTH": WIDTH, "NO_COLOR": "1", "TERM": "dumb"}
    parts = []
    for path in _command_paths(typer.main.get_command(app)):
        result = runner.invoke(app, [*path, "--help"], env=env, prog_name="veil")
        if result.exit_code != 0:
            raise RuntimeError(f"`veil {' '.join(path)} --help` exited with {result.exit_code}: {result.output}")
        help_text = "\n".join(line.rstrip() for line in result.output.strip("\n").splitlines())
        heading = "#" * min(len(path) + 2, 4)
        parts.append(f"{heading} veil {' '.join(path)}".rstrip() + f"\n\n```text\n{help_text}\n```\n")
    return "\n".join(parts)


def on_page_markdown(markdown: str, page, config, files):
    if MARKER not in markdown:
        return markdown
    root = Path(config.config_file_path).resolve().parent
    return markdown.replace(MARKER, cli_reference(root))
