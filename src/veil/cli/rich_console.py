"""Rich's console as every ``veil`` command prints with it: escaping what it shows, and tables
never cut short. Rich is imported here and only here among what every command shares, so that a
command that prints no table (``veil check --json``) never loads it.

**Width.** What a command prints is as wide as the terminal it is shown on (or ``$COLUMNS``, when
set); printed to a file or a pipe it is not wrapped at all. A table is never drawn narrower than
its longest word or figure: where the width does not allow that, the table is drawn wider than the
width, so that no figure is ever cut short.
"""

from __future__ import annotations

from rich.console import Console as RichConsole
from rich.table import Table

from veil.untrusted import shown

#: The width of what is printed to a file or a pipe: lines are not wrapped, tables take their own width.
UNWRAPPED = 100_000


class Console(RichConsole):
    """Rich's console as every veil command prints with it: each string it renders (a line, a
    table's title, heading or cell) has its control characters, bidirectional controls and lone
    surrogates escaped first (:func:`veil.untrusted.shown`; line breaks and tabs are kept), so a
    column name or a value of the user's table never drives the terminal."""

    def render_str(self, text: str, **options):
        return super().render_str(shown(text, keep="\n\t"), **options)


class Terminal(Console):
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
