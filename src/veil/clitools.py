"""What every ``veil`` command shares: turning user errors into one sentence and exit status 2,
and parsing the list and ``COLUMN=VALUE`` options.
"""

from __future__ import annotations

import functools
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, List, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from veil.errors import ParameterError, VeilError

EXIT_USAGE = 2
EXIT_FAILED_CHECK = 1


def fails_cleanly(command: Callable) -> Callable:
    """Turn a VeilError into its sentence on stderr and exit status 2."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except VeilError as exc:
            Console(stderr=True, highlight=False, soft_wrap=True).print(f"error: {exc}", markup=False)
            raise typer.Exit(EXIT_USAGE) from None

    return wrapper


def split_names(text: Optional[str]) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()] if text else []


def parse_pairs(items: List[str], option: str) -> dict[str, str]:
    """``COL=VALUE`` items into a dict, refusing malformed ones."""
    pairs = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ParameterError(f"{option} takes COLUMN=VALUE, not {item!r}.")
        pairs[name.strip()] = value.strip()
    return pairs


def parse_orders(items: List[str]) -> dict[str, list[str]]:
    """``COL=v1,v2,…`` or ``COL=FILE`` (one value a line) into value orders."""
    orders = {}
    for name, value in parse_pairs(items, "--order").items():
        path = Path(value)
        if path.is_file():
            orders[name] = [line for line in path.read_text(encoding="utf-8").splitlines() if line]
        else:
            orders[name] = [v.strip() for v in value.split(",")]
    return orders


@contextmanager
def progress_bar(description: str):
    """A progress callback drawing a bar on a terminal, or ``None`` when stderr is not one."""
    if not sys.stderr.isatty():
        yield None
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update
