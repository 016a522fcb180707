"""The CSV text every experiment writes: a header of its columns, then one line per row."""

from __future__ import annotations

import csv
import io
from typing import Any, Callable, Iterable, Mapping, Sequence


def rows_csv(columns: Sequence[str], rows: Iterable[Mapping[str, Any]], cell: Callable[[Any], str]) -> str:
    """The rows as CSV text (``\\n`` line ends), each value written as ``cell`` formats it.

    Args:
        columns: the header, and the key of each row's value in that position.
        rows: the rows, each a mapping holding every column.
        cell: turns a value into its text (each experiment keeps its own number format).

    Raises:
        KeyError: a row lacks one of the columns.
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([cell(row[c]) for c in columns])
    return out.getvalue()
