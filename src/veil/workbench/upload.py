"""An uploaded table: its format, its delimiter, and whether it is a table at all.

The workbench takes a CSV or Parquet file from the browser. The format is told by the file's own
bytes (Parquet files begin and end with the magic ``PAR1``), never by the name the browser sent;
a CSV file's delimiter is sniffed by veil's own rule (:func:`veil.data.io.sniff_delimiter`,
among ``,`` ``;`` tab and ``|``) and confirmed by the steward. A CSV upload must be UTF-8 text
with a header row of distinct, non-empty names, at least one record, one record per line and as
many fields on every line as in the header, which is what ``veil anonymize`` reads.

Each refusal is an :class:`UploadError` whose one sentence says what to fix.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from veil.data.io import SNIFF_BYTES, sniff_delimiter
from veil.errors import DataError

PARQUET_MAGIC = b"PAR1"
# The delimiters the confirm page offers, with the names it shows them by.
DELIMITERS = {",": "comma (,)", ";": "semicolon (;)", "\t": "tab", "|": "vertical bar (|)"}
PREVIEW_ROWS = 20
# Signatures of files that are often uploaded by mistake, and what to do instead.
_NOT_TABLES = (
    (b"PK\x03\x04", "a ZIP archive (a spreadsheet workbook is one); save the sheet as CSV (UTF-8) and upload that."),
    (b"\x1f\x8b", "compressed with gzip; decompress it and upload the CSV or Parquet file inside."),
    (b"\xd0\xcf\x11\xe0", "an old Excel or Word file; save the sheet as CSV (UTF-8) and upload that."),
    (b"\xff\xfe", "UTF-16 text (a spreadsheet's \"Unicode text\"); save it as CSV UTF-8 and upload that."),
    (b"\xfe\xff", "UTF-16 text; save it as CSV UTF-8 and upload that."),
    (b"%PDF", "a PDF document; upload the table as a CSV or Parquet file."),
    (b"SQLite format 3\x00", "an SQLite database; export the table as CSV and upload that."),
)


class UploadError(DataError):
    """An uploaded file that the workbench cannot take as a table."""


@dataclass(frozen=True)
class Preview:
    """The first rows of an uploaded table, every cell as text.

    Attributes:
        columns: the header's names.
        rows: at most :data:`PREVIEW_ROWS` records.
        records: how many records the whole table holds.
    """

    columns: list[str]
    rows: list[list[str]]
    records: int


def detect_format(content: bytes) -> str:
    """``"parquet"`` or ``"csv"``, told by the bytes alone (the magic ``PAR1`` at both ends).

    Raises:
        UploadError: the file is empty, a damaged Parquet file, or a known kind of non-table
            (an archive, a PDF, a database) or binary data.
    """
    if not content.strip():
        raise UploadError("the file is empty; upload a table with a header row and at least one record.")
    if content.startswith(PARQUET_MAGIC):
        if len(content) < 12 or not content.endswith(PARQUET_MAGIC):
            raise UploadError("the file begins as a Parquet file but is cut short or damaged; upload it again "
                              "whole.")
        return "parquet"
    for magic, sentence in _NOT_TABLES:
        if content.startswith(magic):
            raise UploadError(f"the file is {sentence}")
    if b"\x00" in content[:SNIFF_BYTES]:
        raise UploadError("the file is binary data, not a table; upload a CSV (UTF-8 text) or Parquet file.")
    return "csv"


def decode(content: bytes) -> str:
    """The text of a CSV upload (UTF-8, a leading byte-order mark dropped).

    Raises:
        UploadError: the bytes are not UTF-8.
    """
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = content[:exc.start].count(b"\n") + 1
        raise UploadError(f"the file is not UTF-8 text (line {line} holds a byte that UTF-8 does not allow); "
                          "save it as CSV UTF-8 and upload it again.") from None


def sniff(text: str) -> str:
    """The delimiter veil would read the text with: the one of :data:`DELIMITERS` that splits the
    first lines into equally many fields (:func:`veil.data.io.sniff_delimiter`)."""
    return sniff_delimiter(text[:SNIFF_BYTES])


def check_delimiter(delimiter: str | None) -> str:
    """``delimiter`` if it is one the workbench offers.

    Raises:
        UploadError: anything else.
    """
    if delimiter not in DELIMITERS:
        raise UploadError("choose the delimiter among comma, semicolon, tab and vertical bar.")
    return delimiter


def read_csv_text(text: str, delimiter: str, *, limit: int | None = None) -> Preview:
    """Parse CSV text as veil reads it and check that it is a table.

    Blank lines are skipped (as veil's reader skips them). Every record must lie on one line.

    Args:
        text: the decoded upload.
        delimiter: one of :data:`DELIMITERS`.
        limit: keep at most this many records in :attr:`Preview.rows` (all when ``None``); the
            whole text is checked either way.

    Raises:
        UploadError: no header, an empty or repeated column name, no record, a line with another
            number of fields than the header, a value spanning lines, or a stray quote.
    """
    check_delimiter(delimiter)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header: list[str] | None = None
    rows: list[list[str]] = []
    records = 0
    line = 0
    try:
        for row in reader:
            first, line = line + 1, reader.line_num
            if line != first:
                raise UploadError(f"line {first} holds a line break inside a quoted value; veil reads one record "
                                  "per line, so remove the line breaks from the values.")
            if not row:
                continue   # a blank line
            if header is None:
                header = _checked_header(row, delimiter)
                continue
            if len(row) != len(header):
                raise UploadError(f"line {line} has {len(row)} field{'s' if len(row) != 1 else ''} where the "
                                  f"header has {len(header)}, split by {DELIMITERS[delimiter]}; choose "
                                  "another delimiter or fix that line.")
            records += 1
            if limit is None or len(rows) < limit:
                rows.append(row)
    except csv.Error:
        raise UploadError(f"line {reader.line_num} is not well-formed CSV (a quote in the middle of a value, or one "
                          "never closed); fix the quotes on that line.") from None
    if header is None:
        raise UploadError("the file is empty; upload a table with a header row and at least one record.")
    if not records:
        raise UploadError("the file has a header row but no records; upload a table with at least one record.")
    return Preview(header, rows, records)


def lenient_rows(text: str, delimiter: str, count: int = PREVIEW_ROWS + 1) -> list[list[str]]:
    """The first ``count`` non-blank lines split with ``delimiter``, as well as they split (for
    showing the steward what a delimiter does to a file it does not fit)."""
    reader = csv.reader(io.StringIO(text[:SNIFF_BYTES], newline=""), delimiter=delimiter)
    rows: list[list[str]] = []
    try:
        for row in reader:
            if row:
                rows.append(row)
            if len(rows) >= count:
                break
    except csv.Error:
        pass
    return rows


def _checked_header(row: list[str], delimiter: str) -> list[str]:
    for number, name in enumerate(row, start=1):
        if not name.strip():
            raise UploadError(f"column {number} has no name in the header row, split by "
                              f"{DELIMITERS[delimiter]}; name every column.")
    seen: set[str] = set()
    for name in row:
        if name in seen:
            raise UploadError(f"the column name {name[:60]!r} appears twice in the header row; rename one.")
        seen.add(name)
    return row


def read_parquet_bytes(content: bytes, *, limit: int | None = PREVIEW_ROWS) -> Preview:
    """Read a Parquet upload and check that it is a table (named columns, at least one row, types
    veil reads).

    Raises:
        UploadError: the file cannot be read as Parquet, has no rows, an empty or repeated
            column name, or a column of a type veil cannot read.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from veil.data.io import refuse_unreadable_types

    try:
        data = pq.read_table(pa.BufferReader(content))
    except (pa.ArrowException, OSError):
        raise UploadError("the file begins as a Parquet file but cannot be read as one; export the table again "
                          "(or as CSV) and upload that.") from None
    if not data.num_columns:
        raise UploadError("the Parquet file has no columns; upload a table with at least one column.")
    _checked_header(list(data.column_names), ",")
    if not data.num_rows:
        raise UploadError("the Parquet file has no records; upload a table with at least one record.")
    try:
        refuse_unreadable_types(data, "the uploaded file")
    except DataError as exc:
        raise UploadError(str(exc)) from None
    head = data.slice(0, data.num_rows if limit is None else limit)
    columns = [[_cell(value) for value in column.to_pylist()] for column in head.columns]
    return Preview(list(data.column_names), [list(row) for row in zip(*columns)], data.num_rows)


def _cell(value) -> str:
    return "" if value is None else str(value)


def read_upload(content: bytes, delimiter: str | None = None, *, limit: int | None = PREVIEW_ROWS
                ) -> tuple[str, str | None, Preview]:
    """Tell an upload's format, sniff (or take) its delimiter, and check that it is a table.

    Args:
        content: the file's bytes.
        delimiter: the CSV delimiter the steward chose (sniffed when ``None``; ignored for Parquet).
        limit: how many records the preview keeps (``None``: all).

    Returns:
        The format (``csv`` or ``parquet``), the delimiter (``None`` for Parquet) and the preview.

    Raises:
        UploadError: see :func:`detect_format`, :func:`decode`, :func:`read_csv_text` and
            :func:`read_parquet_bytes`; or veil's CSV reader refuses the text (as ``veil
            anonymize`` would).
    """
    fmt = detect_format(content)
    if fmt == "parquet":
        return fmt, None, read_parquet_bytes(content, limit=limit)
    text = decode(content)
    if delimiter is None:
        delimiter = sniff(text)
    preview = read_csv_text(text, delimiter, limit=limit)
    _read_as_veil_does(content, delimiter)
    return fmt, delimiter, preview


_NAME = "uploaded.csv"


def _read_as_veil_does(content: bytes, delimiter: str) -> None:
    """Read the upload with veil's own CSV reader (what ``veil anonymize`` will read), so that the
    workbench takes no table the command line refuses."""
    from veil.data.io import read_csv_bytes

    try:
        read_csv_bytes(content, _NAME, delimiter)
    except DataError as exc:
        message = str(exc).replace(f"file {_NAME!r}", "the file").replace(repr(_NAME), "the file")
        raise UploadError(message.replace(" or give --delimiter", " or choose another delimiter")) from None
