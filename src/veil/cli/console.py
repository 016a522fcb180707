"""What every ``veil`` command shares: turning user errors (its own and Click's usage errors) into
one sentence and exit status 2, parsing the list and ``COLUMN=VALUE`` options, naming the files a
run reads (so that no output replaces one), printing (:func:`terminal`), and showing progress on a
terminal.

**Width.** What a command prints is as wide as the terminal it is shown on (or ``$COLUMNS``, when
set); printed to a file or a pipe it is not wrapped at all. A table is never drawn narrower than
its longest word or figure: where the width does not allow that, the table is drawn wider than the
width, so that no figure is ever cut short.
"""

from __future__ import annotations

import errno
import functools
import importlib
import inspect
import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, List, Mapping, Optional

import click
import typer
from rich.console import Console as RichConsole
from rich.table import Table
from typer.core import TyperGroup

from veil.cli.debug import EXIT_BUG, bug_sentence, debug_mode, routed_warnings
from veil.errors import ParameterError, VeilError, lower_first
from veil.inputs import read_text
from veil.output import describe_os_error
from veil.untrusted import quoted, safe_sentence, shown

EXIT_USAGE = 2
EXIT_FAILED_CHECK = 1

#: The width of what is printed to a file or a pipe: lines are not wrapped, tables take their own width.
UNWRAPPED = 100_000


class Console(RichConsole):
    """Rich's console as every veil command prints with it: each string it renders (a line, a
    table's title, heading or cell) has its control characters, bidirectional controls and lone
    surrogates escaped first (:func:`veil.untrusted.shown`; line breaks and tabs are kept), so a
    column name or a value of the user's table never drives the terminal."""

    def render_str(self, text: str, **options):
        return super().render_str(shown(text, keep="\n\t"), **options)


class _Terminal(Console):
    """A console that never draws a table narrower than the table's longest word or figure."""

    def print(self, *objects, **options) -> None:
        need = max((_fit(self, item) for item in objects if isinstance(item, Table)), default=0)
        if need <= self.width:
            super().print(*objects, **options)
            return
        width = self._width
        self.width = need
        try:
            super().print(*objects, **options)
        finally:
            self._width = width


def _fit(console: Console, table: Table) -> int:
    """Give a table that does not fit the console's width fixed column widths, none narrower than
    its column's longest word or figure, and return the width it then takes.

    Rich narrows the widest columns first and cuts their words with "…"; here every column keeps
    its longest word, and the width left is shared in proportion to what each column could use.
    """
    wide = console.options.update_width(UNWRAPPED)
    ranges = [table._measure_column(console, wide, column) for column in table.columns]
    shortest = [r.minimum for r in ranges]
    longest = [max(r.maximum, r.minimum) for r in ranges]
    room = console.width - table._extra_width
    if sum(longest) <= room or table.width is not None:
        return min(sum(longest) + table._extra_width, console.width)
    if room > 0:
        rich = table._calculate_column_widths(console, console.options.update_width(room))
        if all(width >= least for width, least in zip(rich, shortest)):
            return console.width  # Rich's own layout wraps every column at its words: keep it
    widths = list(shortest)
    spare = room - sum(shortest)
    if spare > 0:
        wants = [b - a for a, b in zip(shortest, longest)]
        total = sum(wants)
        share = [spare * want // total for want in wants]
        for i in sorted(range(len(wants)), key=lambda i: wants[i] - share[i], reverse=True)[:spare - sum(share)]:
            share[i] += 1
        widths = [w + extra for w, extra in zip(widths, share)]
    for column, width in zip(table.columns, widths):
        column.width = max(1, width - table._get_padding_width(column._index))
    return sum(widths) + table._extra_width


def terminal(*, stderr: bool = False, soft_wrap: bool = False) -> Console:
    """The console a command prints with (see the module's notes on width); no highlighting.

    Args:
        stderr: print to standard error instead of standard output.
        soft_wrap: leave long lines to the terminal instead of wrapping them at words.
    """
    stream = sys.stderr if stderr else sys.stdout
    columns = os.environ.get("COLUMNS", "").strip()
    try:
        shown = stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        shown = False
    width = None if shown or columns.isdigit() else UNWRAPPED
    return _Terminal(stderr=stderr, highlight=False, soft_wrap=soft_wrap, width=width)


def print_error(sentence: str) -> None:
    """``error: <sentence>`` on standard error, on one bounded line: whatever text of the user's
    it quotes, no character a terminal would obey reaches it (see :func:`veil.untrusted.safe_sentence`)."""
    terminal(stderr=True, soft_wrap=True).print(f"error: {safe_sentence(sentence)}", markup=False)


def fails_cleanly(command: Callable) -> Callable:
    """Turn a VeilError, or an operating-system error no check foresaw, into one sentence on
    stderr and exit status 2."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except VeilError as exc:
            print_error(str(exc))
            raise typer.Exit(EXIT_USAGE) from None
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                raise
            where = f" ({exc.filename})" if exc.filename else ""
            print_error(f"the system refused an operation{where}: {describe_os_error(exc)}.")
            raise typer.Exit(EXIT_USAGE) from None

    return wrapper


ENCODING = typer.Option(None, "--encoding", help="The text encoding of the CSV tables read (default: utf-8; e.g. "
                                                 "cp1252 or latin-1). Every file veil writes is UTF-8.")


def reads_tables(command: Callable) -> Callable:
    """Give a command that reads CSV tables the ``--encoding`` option: the command runs with that
    encoding in effect for every table it reads (:func:`veil.data.text_encoding.reading_encoding`).
    Put it under :func:`fails_cleanly`, which then reports an unknown encoding as one sentence."""
    signature = inspect.signature(command, eval_str=True)
    if "encoding" in signature.parameters:
        raise TypeError(f"{command.__name__} has a parameter named encoding already")

    @functools.wraps(command)
    def wrapper(*args, encoding: Optional[str] = None, **kwargs):
        from veil.data.text_encoding import reading_encoding

        with reading_encoding(encoding):
            return command(*args, **kwargs)

    option = inspect.Parameter("encoding", inspect.Parameter.KEYWORD_ONLY, default=ENCODING, annotation=Optional[str])
    wrapper.__signature__ = signature.replace(parameters=[*signature.parameters.values(), option])
    wrapper.__annotations__ = {**command.__annotations__, "encoding": Optional[str]}
    return wrapper


def usage_sentence(exc: click.UsageError) -> str:
    """Click's usage error (``No such option '--x'. Did you mean '--y'?``) as one sentence that
    points to the command's help."""
    message = " ".join(exc.format_message().split())
    message = re.sub(r"\s*\((Did you mean[^)]*)\)", r". \1", message)
    parts = [p for p in re.split(r"(?<=[.?!])\s+", message) if p]
    sentence = "; ".join(lower_first(p.rstrip(".")) if i < len(parts) - 1 else lower_first(p)
                         for i, p in enumerate(parts))
    if sentence.endswith("?"):
        return sentence
    where = f"; see '{exc.ctx.command_path} --help'" if exc.ctx is not None else ""
    return sentence.rstrip(".") + where + "."


def reflowed(text: str | None) -> str | None:
    """A help text as the terminal should show it: each paragraph one line (the terminal's width
    wraps it), whatever the line breaks of the docstring; a paragraph that starts with ``\\b`` is
    kept line by line (Click's marker), and brackets are shown as written, not read as Rich markup.

    A line ending in a hyphen after a letter (``background-`` / ``knowledge``) is joined without a
    space, since the hyphen belongs to the word.
    """
    if not text:
        return text
    from rich.markup import escape

    paragraphs = []
    for paragraph in inspect.cleandoc(text).split("\n\n"):
        if paragraph.startswith("\b"):
            paragraphs.append(paragraph)
            continue
        lines = [line.strip() for line in paragraph.splitlines() if line.strip()]
        joined = ""
        for line in lines:
            glue = "" if not joined or re.search(r"[A-Za-z]-$", joined) else " "
            joined += glue + line
        paragraphs.append(joined)
    return escape("\n\n".join(paragraphs))


class VeilGroup(TyperGroup):
    """A command group whose usage errors (an unknown or missing option, a value of the wrong
    type) are printed like every other error: ``error: <one sentence>`` and exit status 2, and
    whose help texts are reflowed (:func:`reflowed`): a docstring's line breaks never break a
    sentence on the terminal.

    It works for the ``veil`` process and for ``typer.testing.CliRunner`` alike, since both call
    :meth:`main`; errors of sub-groups reach the top group's :meth:`main`.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.help = reflowed(self.help)
        for command in self.commands.values():
            if isinstance(command, click.Group):
                continue  # a group reflows its own
            command.help = reflowed(command.help)
            for param in command.params:
                if getattr(param, "help", None):
                    param.help = reflowed(param.help)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        with routed_warnings():  # other packages' warnings never reach the terminal (veil.cli.debug)
            try:
                result = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            except click.UsageError as exc:
                if type(exc).__name__ != "NoArgsIsHelpError":  # the help was printed already
                    print_error(usage_sentence(exc))
                sys.exit(EXIT_USAGE)
            except click.ClickException as exc:
                print_error(lower_first(exc.format_message()))
                sys.exit(exc.exit_code)
            except click.Abort:
                print_error("aborted.")
                sys.exit(1)
            except Exception as exc:  # the last resort: a bug in veil, said in one sentence
                if debug_mode():
                    raise
                print_error(bug_sentence(exc))
                sys.exit(EXIT_BUG)
        sys.exit(result if isinstance(result, int) else 0)


class LazyGroup(click.Group):
    """A command group that the help of its parent lists by name and help text alone, and whose
    module is imported only when the group runs (its own help included): ``veil --help`` and
    ``veil check`` never import what ``veil dp`` needs.

    Args:
        name: the group's name on the command line.
        module: the module that defines it, imported on first use.
        attribute: the module's ``typer.Typer`` application.
        help: the text the parent's help shows, and the group's own help's.
    """

    def __init__(self, name: str, module: str, attribute: str, help: str):
        super().__init__(name=name, help=help)
        self._module = module
        self._attribute = attribute

    def loaded(self) -> click.Group:
        """The group itself, made from its module's Typer application."""
        group = typer.main.get_group(getattr(importlib.import_module(self._module), self._attribute))
        group.name, group.help = self.name, self.help
        return group

    def make_context(self, info_name, args, parent=None, **extra) -> click.Context:
        # Running the group (or asking for its help) runs the real one.
        return self.loaded().make_context(info_name, args, parent=parent, **extra)

    def list_commands(self, ctx: click.Context) -> list[str]:
        # Asked only by what walks the command tree (the docs' CLI reference), never by a run.
        return self.loaded().list_commands(ctx)

    def get_command(self, ctx: click.Context, cmd_name: str):
        return self.loaded().get_command(ctx, cmd_name)


def command_group(lazy: Mapping[str, tuple[str, str, str]] | None = None, **options) -> typer.Typer:
    """A ``typer.Typer`` group as every veil group is made: usage errors as one sentence, no
    completion commands, no pretty tracebacks, and Click's own suggestion of a mistyped command
    only (Typer would add the same one again).

    Args:
        lazy: sub-groups loaded on first use (see :class:`LazyGroup`): name → (module, the
            module's Typer application, help), listed after the group's own commands.
        options: passed to ``typer.Typer``.
    """
    if not lazy:
        return typer.Typer(cls=VeilGroup, add_completion=False, pretty_exceptions_enable=False,
                           suggest_commands=False, **options)
    groups = dict(lazy)

    class WithLazyGroups(VeilGroup):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            for name, (module, attribute, text) in groups.items():
                self.add_command(LazyGroup(name, module, attribute, text))

    return typer.Typer(cls=WithLazyGroups, add_completion=False, pretty_exceptions_enable=False,
                       suggest_commands=False, **options)


ENGINE = typer.Option("local", "--engine", help="Where the records are read and counted: local (in memory) or "
                                                 "spark (Apache Spark; pip install \"veil[spark]\").")
MASTER = typer.Option(None, "--master", help="The Spark master with --engine spark: local[*] (default), local[N], "
                                             "spark://HOST:PORT, yarn.")


def engine_named(name: str, master: Optional[str]):
    """The engine ``--engine`` names (``--master`` only with Spark).

    Raises:
        ParameterError: an unknown engine, ``--master`` without Spark, or Spark without PySpark.
    """
    from veil.data.text_encoding import UTF8, current_encoding
    from veil.engines import make_engine

    if master is not None and name != "spark":
        raise ParameterError("--master applies only with --engine spark.")
    if name == "spark" and current_encoding() != UTF8:
        raise ParameterError("--encoding applies to the local engine only (Spark reads UTF-8); save the table as "
                             "UTF-8 to read it with Spark.")
    return make_engine(name, master=master or "local[*]")


def split_names(text: Optional[str]) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()] if text else []


def parse_pairs(items: List[str], option: str) -> dict[str, str]:
    """``COL=VALUE`` items into a dict, refusing malformed ones and a column given twice."""
    pairs = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise ParameterError(f"{option} takes COLUMN=VALUE, not {quoted(item)}.")
        if name.strip() in pairs:
            raise ParameterError(f"{option} is given twice for {quoted(name.strip())} ({quoted(pairs[name.strip()])} "
                                 f"and {quoted(value.strip())}); give it once.")
        pairs[name.strip()] = value.strip()
    return pairs


def parse_orders(items: List[str]) -> dict[str, list[str]]:
    """``COL=v1,v2,…`` or ``COL=FILE`` (one value a line) into value orders.

    Raises:
        ParameterError: a malformed item, a folder given as the file, or a file that is not a regular
            UTF-8 text file of a document's size (:mod:`veil.inputs`).
    """
    orders = {}
    for name, value in parse_pairs(items, "--order").items():
        path = Path(value)
        if path.is_dir():
            raise ParameterError(f"--order {name}={value}: {value!r} is a folder; give a file with one value a line.")
        if path.exists():
            text = read_text(path, "--order file", error=ParameterError)
            orders[name] = [line for line in text.splitlines() if line]
        else:
            orders[name] = [v.strip() for v in value.split(",")]
    return orders


def files_named(items: List[str], option: str) -> list[Path]:
    """The files among the values of ``COL=VALUE`` items (what a run reads, for output checks)."""
    return [Path(value) for value in parse_pairs(items, option).values() if Path(value).is_file()]


@contextmanager
def stage(description: str):
    """A spinner with the time elapsed while one step runs (loading, transforming, writing) on a
    terminal; nothing when stderr is not one."""
    if not sys.stderr.isatty():
        yield
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        bar.add_task(description, total=None)
        yield


@contextmanager
def progress_bar(description: str):
    """A progress callback drawing a bar on a terminal, or ``None`` when stderr is not one."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update
