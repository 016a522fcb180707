"""Reading a CSV file line by line, for differentially private answers: a malformed line is left out.

A differentially private answer must not let one record decide whether anything is released, nor
how the other records are read. :func:`veil.data.io.read_csv` with ``malformed="drop"`` (what the
DP queries use) therefore reads a CSV file by a public rule that looks at each line on its own:

1. The header is the first line that is not empty; the delimiter, when not given, is sniffed from
   it alone (never from the records). A header that is not UTF-8 text, or that leaves a quote
   open, is refused: it is the table's schema, not a record, and the curator's to fix.
2. Every further line is one record, or none:

   * a quote left open at the end of a line closes there: a value never continues on the next
     line (so no line changes how another one is read);
   * a line with fewer or more fields than the header is left out;
   * a line holding bytes that are not UTF-8 is left out;
   * an empty line is skipped.

Leaving a line out is a fixed transformation of each record, so adding or removing one line
changes the table read by at most that one record, and every sensitivity of the queries holds.
How many lines were left out depends on the data, so it is never reported, in a message or in a
file; a curator who wants to find them reads the file strictly (``malformed="refuse"``, the
``--strict`` option of ``veil dp``), which refuses the first malformed line and names it.

The rule is applied in two ways that give the same table. The fast way parses the whole file with
Arrow (rows of the wrong length skipped) and keeps that table when no line was malformed in any
other way. Otherwise (a value holding a line break, which only an open quote makes; a byte that is
not UTF-8; a line too long for a parsing block) the file is rebuilt in memory line by line by the
rule above and parsed again.
"""

from __future__ import annotations

import mmap
import os
import re
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from veil.errors import DataError
from veil.parallel import thread_count

__all__ = ["check_header_closed", "header_line", "read_records"]

_BOM = b"\xef\xbb\xbf"
#: The parsing block of the fast way (as :func:`veil.data.io.read_csv` reads).
BLOCK_SIZE = 1 << 24
#: The bytes a header line must fit in (what :func:`veil.data.io.read_csv` reads first).
SNIFF_LIMIT = 1 << 16


def header_line(head: bytes, path: Path) -> bytes | None:
    """The header line of a CSV file whose first bytes are ``head`` (its first line that is not
    empty, as Arrow takes it), without its byte-order mark; ``None`` when the file holds no line.

    Raises:
        DataError: the header is not UTF-8 text, or is not complete within ``head``.
    """
    text = head[len(_BOM):] if head.startswith(_BOM) else head
    lines = [line for line in re.split(rb"\r\n|\r|\n", text) if line]
    if not lines:
        return None
    if len(lines) == 1 and not text.endswith((b"\n", b"\r")) and len(head) >= SNIFF_LIMIT:
        raise DataError(f"the header row of {str(path)!r} is longer than {SNIFF_LIMIT:,} bytes; shorten the column "
                        "names.")
    try:
        lines[0].decode("utf-8")
    except UnicodeDecodeError:
        raise DataError(f"the header row of {str(path)!r} is not UTF-8 text; save the file as UTF-8 CSV.") from None
    return lines[0]


def check_header_closed(line: bytes, delimiter: str, path: Path) -> None:
    """Refuse a header line that leaves a quote open (it would swallow the records that follow).

    Raises:
        DataError: the quote is named by the file.
    """
    if b'"' in line and _line_pattern(delimiter).fullmatch(line) is None:
        raise DataError(f"the header row of {str(path)!r} opens a quote it does not close; fix the header.")


def _line_pattern(delimiter: str) -> re.Pattern:
    """A line all of whose quotes close, as Arrow's parser reads fields: a field that starts with a
    quote runs to the next quote that is not doubled, then, like a field without a quote at its
    start, to the next delimiter (its quotes then literal)."""
    d = re.escape(delimiter.encode("utf-8"))
    field = rb'(?:"(?:[^"]|"")*+"[^' + d + rb']*+|[^' + d + rb'"][^' + d + rb']*+|)'
    return re.compile(field + rb"(?:" + d + field + rb")*+")


def read_records(source: Path | pa.Buffer, path: Path, delimiter: str, column_types: dict) -> pa.Table:
    """The records of a CSV file by the rule of the module notes.

    Args:
        source: the file, or its bytes.
        path: how messages name it.
        delimiter: the delimiter, one character.
        column_types: the Arrow type of every column named in the header (text, or
            dictionary-encoded text).

    Raises:
        DataError: the file cannot be read.
    """
    fast = _parse(source, delimiter, column_types, BLOCK_SIZE)
    if fast is not None:
        return fast
    try:
        data = source.to_pybytes() if isinstance(source, pa.Buffer) else Path(source).read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read file {str(path)!r}: {exc.strerror or exc}.") from None
    rebuilt, longest = _rebuild(data, delimiter)
    table = _parse(pa.py_buffer(rebuilt), delimiter, column_types, max(BLOCK_SIZE, 2 * longest + 2))
    if table is None:  # pragma: no cover - every line is closed, UTF-8 and shorter than a block
        raise DataError(f"file {str(path)!r} cannot be read as a CSV table; read it with --strict to find why.")
    return table


def _parse(source, delimiter: str, column_types: dict, block_size: int) -> pa.Table | None:
    """Arrow's table of the file, rows of the wrong length skipped; ``None`` when some line is
    malformed in another way (an open quote made a value run over a line break, a byte is not
    UTF-8, a line does not fit a block)."""
    spans = []

    def skip(row) -> str:
        if "\n" in row.text or "\r" in row.text:
            spans.append(True)
        return "skip"

    # Arrow decodes a skipped row's text before calling ``skip``; for a row that is not UTF-8 the
    # decoding fails, Arrow reports that as "unraisable" (on the terminal) and the read fails:
    # silenced here, and the read failing sends the file the slow way.
    hook, sys.unraisablehook = sys.unraisablehook, lambda _: None
    try:
        table = pacsv.read_csv(
            source,
            read_options=pacsv.ReadOptions(use_threads=thread_count() > 1, block_size=block_size),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True, invalid_row_handler=skip),
            convert_options=pacsv.ConvertOptions(column_types=column_types, strings_can_be_null=False,
                                                 quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return None
    finally:
        sys.unraisablehook = hook
    if spans or (_holds_quote(source) and any(_holds_line_break(column) for column in table.columns)):
        return None
    return table


def _holds_quote(source) -> bool:
    """Whether the file holds a quote at all (without one, no value can hold a line break)."""
    if isinstance(source, pa.Buffer):
        return memoryview(source).tobytes().find(b'"') >= 0 if source.size < BLOCK_SIZE else True
    try:
        with open(source, "rb") as fh:
            if os.fstat(fh.fileno()).st_size == 0:
                return False
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as view:
                return view.find(b'"') >= 0
    except (OSError, ValueError):
        return True


def _holds_line_break(column: pa.ChunkedArray) -> bool:
    for chunk in column.chunks:
        values = chunk.dictionary if pa.types.is_dictionary(chunk.type) else chunk
        for line_break in ("\n", "\r"):
            if len(values) and pc.any(pc.match_substring(values, line_break)).as_py():
                return True
    return False


def _rebuild(data: bytes, delimiter: str) -> tuple[bytes, int]:
    """The file's lines by the rule of the module notes: the header, then every record line that is
    UTF-8 text, its open quote closed at its end; one line break after each. Also the longest line."""
    closed = _line_pattern(delimiter)
    lines = iter(data.splitlines())
    kept = []
    for line in lines:  # the header: the first line that is not empty
        if line:
            kept.append(line)
            break
    for line in lines:
        if not line:
            continue
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if b'"' in line and closed.fullmatch(line) is None:
            line += b'"'
        kept.append(line)
    return b"\n".join(kept) + b"\n", max(map(len, kept), default=0)
