"""Reading tables: CSV, Parquet, and pandas or polars frames (files are written by :mod:`veil.output`).

CSV cells are read as text, as ARX does; types are decided when a column is encoded. The
delimiter is sniffed from the first lines when not given, so ``;``-separated files just work.
Files are UTF-8 unless another encoding is given (see :mod:`veil.data.text_encoding`).
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from veil.data.encoding import to_arrow
from veil.data.text_encoding import UTF8, current_encoding, normalize_encoding
from veil.errors import DataError, ParameterError
from veil.inputs import check_regular_file, open_regular_file
from veil.output import describe_os_error
from veil.untrusted import quoted, shown
from veil.parallel import map_threads, thread_count

CANDIDATE_DELIMITERS = (";", ",", "\t", "|")
SNIFF_BYTES = 1 << 16
#: The longest header row read (its column names); the sniffing window grows to hold it whole.
MAX_HEADER_BYTES = 1 << 24
_LINE_END = re.compile(rb"\r\n?|\n")
_TEXT_CODES = pa.dictionary(pa.int32(), pa.string())


@dataclass(frozen=True)
class Table:
    """A table as read, with what is needed to hand it back in the same form.

    Attributes:
        data: the columns, as a pyarrow Table (text columns for CSV input).
        kind: ``"csv"``, ``"parquet"``, ``"pandas"``, ``"polars"`` or ``"arrow"``.
        delimiter: the CSV delimiter, for writing a release the way the input was written.
        source: the frame the user passed (never modified), or ``None`` for files.
    """

    data: pa.Table
    kind: str
    delimiter: str = ","
    source: object = None

    @property
    def columns(self) -> list[str]:
        return list(self.data.column_names)

    @property
    def num_rows(self) -> int:
        return self.data.num_rows


def sniff_delimiter(sample: str) -> str:
    """The delimiter among ``; , tab |`` that splits the first lines into equally many fields.

    Falls back to the most frequent candidate in the header, then to ``,``.
    """
    lines = [line for line in sample.splitlines()[:20] if line.strip()]
    if len(lines) > 1 and not sample.endswith(("\n", "\r")) and len(sample) >= SNIFF_BYTES:
        lines = lines[:-1]  # the last line may be cut in the middle
    best, best_count = None, 0
    for delim in CANDIDATE_DELIMITERS:
        counts = {len(next(csv.reader([line], delimiter=delim))) for line in lines}
        if len(counts) == 1:
            fields = counts.pop()
            if fields > best_count and fields > 1:
                best, best_count = delim, fields
    if best is not None:
        return best
    header = lines[0] if lines else ""
    counts = {d: header.count(d) for d in CANDIDATE_DELIMITERS}
    delim = max(counts, key=counts.get)
    return delim if counts[delim] > 0 else ","


TAB_NAMES = ("tab", "\\t", "\t")


def normalize_delimiter(delimiter: str | None) -> str | None:
    """A delimiter as given on a command line: one character, with ``tab`` and ``\\t`` meaning the tab.

    Raises:
        ParameterError: anything else (empty, several characters, a quote or a line break).
    """
    if delimiter is None:
        return None
    if delimiter.lower() in TAB_NAMES:
        return "\t"
    if len(delimiter) != 1 or delimiter in ('"', "\n", "\r"):
        raise ParameterError(f"the delimiter must be one character such as ',' or ';' (or 'tab'), "
                             f"not {delimiter!r}.")
    return delimiter


def read_csv(path: str | os.PathLike, delimiter: str | None = None, allow_empty: bool = False,
             dictionary: Iterable[str] = (), malformed: str = "refuse", encoding: str | None = None) -> Table:
    """Read a CSV file with a header row; every cell is kept as text.

    ``delimiter`` is one character (``tab`` or ``\\t`` for the tab), or ``None`` to sniff it.
    ``allow_empty`` accepts a header with no records: a differentially private release must answer
    for an empty table as for any other, since refusing would tell that it is empty.
    The columns named in ``dictionary`` are read straight into dictionary codes (each block of
    the file encoded by the reader's threads as it is parsed): the same texts, a fraction of the
    memory, and no encoding pass afterwards. Names that are not columns are ignored.
    ``malformed`` says what a line that is not a well-formed record does: ``"refuse"`` (the
    default) refuses the file, naming the line; ``"drop"`` leaves the line out by the public rule
    of :mod:`veil.data.lenient` (each line read on its own, the delimiter sniffed from the header
    alone), which the differentially private queries use, and reports nothing about it.
    ``encoding`` is the file's text encoding (``cp1252``, ``latin-1`` …); ``None`` takes the one
    in effect (:func:`veil.data.text_encoding.reading_encoding`, UTF-8 by default). The public rule
    of ``"drop"`` reads UTF-8 only.

    Raises:
        ParameterError: the delimiter is not one character, ``malformed`` is neither value, the
            encoding is unknown, or ``"drop"`` is asked of a file in another encoding than UTF-8.
        DataError: the file is missing, not text in its encoding, empty (or has no records while
            ``allow_empty`` is false), has duplicate or empty column names, or (when
            ``malformed="refuse"``) a row with a different number of fields than the header (the
            line is named).
    """
    delimiter = normalize_delimiter(delimiter)
    _check_malformed(malformed)
    encoding = current_encoding() if encoding is None else normalize_encoding(encoding)
    if malformed == "drop" and encoding != UTF8:
        raise ParameterError("a table read for a differentially private answer must be UTF-8 text; convert the "
                             "file to UTF-8 (its encoding cannot be given here).")
    path = Path(path)
    if not path.exists():
        raise DataError(f"file {str(path)!r} does not exist; check the path.")
    if path.is_dir():
        raise DataError(f"{str(path)!r} is a folder, not a table file.")
    head, whole = _head_of(path)
    return _read_csv(path, head, whole, delimiter, path, allow_empty, set(dictionary), malformed, encoding)


MALFORMED = ("refuse", "drop")


def _check_malformed(malformed: str) -> None:
    if malformed not in MALFORMED:
        raise ParameterError(f"malformed must be 'refuse' or 'drop', not {malformed!r}.")


def read_csv_bytes(content: bytes, name: str, delimiter: str | None = None) -> Table:
    """Read CSV text held in memory (a published file a release ledger keeps, which veil wrote in
    UTF-8), exactly as :func:`read_csv` reads a file; ``name`` is what messages call it.

    Raises:
        ParameterError, DataError: as :func:`read_csv`.
    """
    end = _LINE_END.search(content)
    head = content if end is None else content[:max(end.end(), SNIFF_BYTES)]
    return _read_csv(pa.BufferReader(content), head, len(head) == len(content), normalize_delimiter(delimiter),
                     Path(name), allow_empty=False, codes=set(), encoding=UTF8)


def _head_of(path: Path) -> tuple[bytes, bool]:
    """The first :data:`SNIFF_BYTES` of a CSV file, or more when its header row is longer (up to its
    line break), and whether that is the whole file.

    Raises:
        DataError: the path is not a regular file (a pipe or a device would never end), cannot be
            read, or its header row is longer than :data:`MAX_HEADER_BYTES`.
    """
    try:
        with open_regular_file(path, "file") as fh:
            head = fh.read(SNIFF_BYTES)
            while not _LINE_END.search(head) and len(head) <= MAX_HEADER_BYTES:
                more = fh.read(SNIFF_BYTES)
                if not more:
                    return head, True
                head += more
            whole = not fh.read(1)
    except OSError as exc:
        raise DataError(f"cannot read file {str(path)!r}: {describe_os_error(exc)}.") from None
    if not _LINE_END.search(head) and not whole:
        raise DataError(f"the header row of {str(path)!r} is longer than {MAX_HEADER_BYTES >> 20} MiB; "
                        "a CSV table starts with one line of column names.")
    return head, whole


def read_csv_header(path: str | os.PathLike, delimiter: str | None = None, encoding: str | None = None) -> list[str]:
    """The column names of a CSV file (its whole header row, however long), read without the rest;
    ``encoding`` as :func:`read_csv` takes it.

    Raises:
        ParameterError, DataError: as :func:`read_csv` for the file's first lines.
    """
    path = Path(path)
    encoding = current_encoding() if encoding is None else normalize_encoding(encoding)
    head, whole = _head_of(path)
    return _header(head, whole, normalize_delimiter(delimiter), path, allow_empty=True, encoding=encoding)[0]


def _header(head: bytes, whole: bool, delimiter: str | None, path: Path, allow_empty: bool,
            encoding: str = UTF8) -> tuple[list[str], str]:
    """The header row in ``head`` (the first bytes of a CSV file, its whole first line among them, in
    ``encoding``) and the delimiter (sniffed when ``None``)."""
    decoder = codecs.getincrementaldecoder("utf-8-sig" if encoding == UTF8 else encoding)()
    try:
        # incremental: a character the sniffed bytes cut in two is left for the reader
        sample = decoder.decode(head, final=whole)
    except UnicodeDecodeError:
        raise DataError(_not_text(path, encoding)) from None
    if not sample.strip():
        raise DataError(f"file {str(path)!r} is empty; it needs a header row and at least one record.")
    if not allow_empty and whole and len([line for line in sample.splitlines() if line.strip()]) == 1:
        raise DataError(f"file {str(path)!r} has a header but no records; an empty table cannot be published.")
    if delimiter is None:
        delimiter = sniff_delimiter(sample)
    header = next(csv.reader(io.StringIO(sample, newline=""), delimiter=delimiter))
    _check_header(header, path)
    return header, delimiter


def _read_csv(source, head: bytes, whole: bool, delimiter: str | None, path: Path, allow_empty: bool,
              codes: set[str], malformed: str = "refuse", encoding: str = UTF8) -> Table:
    """The table in ``source`` (a path, or a buffer whose first bytes are ``head``, the whole of it
    when ``whole``); ``allow_empty``, ``malformed`` and ``encoding`` (its normalized name) as
    :func:`read_csv` takes them, ``codes`` the columns it reads as ``dictionary``."""
    if malformed == "drop":
        return _read_records(source, head, delimiter, path, allow_empty, codes)
    header, delimiter = _header(head, whole, delimiter, path, allow_empty, encoding)
    end = _LINE_END.search(head)
    header_bytes = end.end() if end else len(head)
    try:
        data = pacsv.read_csv(
            source,
            # A block holds the header row whole (Arrow reads the names from the first block).
            read_options=pacsv.ReadOptions(use_threads=thread_count() > 1, block_size=max(1 << 24, 2 * header_bytes),
                                           **({} if encoding == UTF8 else {"encoding": encoding})),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(
                column_types={name: _TEXT_CODES if name in codes else pa.string() for name in header},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
        raise DataError(_describe_parse_error(path, delimiter, len(header), exc, encoding)) from None
    if data.num_rows == 0 and not allow_empty:
        raise DataError(f"file {str(path)!r} has a header but no records; an empty table cannot be published.")
    return Table(data, "csv", delimiter)


def _read_records(source, head: bytes, delimiter: str | None, path: Path, allow_empty: bool,
                  codes: set[str]) -> Table:
    """:func:`_read_csv` with ``malformed="drop"``: the lines that are records (:mod:`veil.data.lenient`)."""
    from veil.data.lenient import check_header_closed, header_line, read_records

    line = header_line(head, path)
    if line is None:
        raise DataError(f"file {str(path)!r} is empty; it needs a header row and at least one record.")
    text = line.decode("utf-8")
    if delimiter is None:
        delimiter = sniff_delimiter(text)
    check_header_closed(line, delimiter, path)
    header = next(csv.reader([text], delimiter=delimiter))
    _check_header(header, path)
    types = {name: _TEXT_CODES if name in codes else pa.string() for name in header}
    data = read_records(source, path, delimiter, types)
    if data.num_rows == 0 and not allow_empty:
        raise DataError(f"file {str(path)!r} has a header but no records; an empty table cannot be published.")
    return Table(data, "csv", delimiter)


def _check_header(header: list[str], path: Path) -> None:
    empty = [i + 1 for i, name in enumerate(header) if not name.strip()]
    if empty:
        raise DataError(f"column {empty[0]} of {str(path)!r} has no name in the header row; name every column.")
    seen = set()
    for name in header:
        if name in seen:
            raise DataError(f"column name {quoted(name)} appears twice in the header of {str(path)!r}; rename one.")
        seen.add(name)


def _not_text(path: Path, encoding: str) -> str:
    """The sentence for a file that its encoding does not decode."""
    return not_text_sentence(repr(str(path)), encoding)


def not_text_sentence(where: str, encoding: str = UTF8) -> str:
    """The sentence for a table file (named by ``where``, a quoted path) that its encoding does not
    decode, which every engine says alike."""
    if encoding == UTF8:
        return (f"file {where} is not UTF-8 text; name its encoding (--encoding cp1252 or --encoding "
                "latin-1 for most Western European spreadsheets) or save it as UTF-8 CSV.")
    return f"file {where} is not {encoding} text; name the encoding it was saved in (--encoding)."


def _describe_parse_error(path: Path, delimiter: str, expected: int, exc: Exception, encoding: str = UTF8) -> str:
    """Find the first ragged line (only on the error path, so a scan line by line is fine)."""
    if isinstance(exc, UnicodeDecodeError):
        return _not_text(path, encoding)
    try:
        with open(path, encoding="utf-8-sig" if encoding == UTF8 else encoding, newline="") as fh:
            for number, row in enumerate(csv.reader(fh, delimiter=delimiter), start=1):
                if row and len(row) != expected:
                    return (f"line {number} of {str(path)!r} has {len(row)} fields but the header has "
                            f"{expected} (delimiter {delimiter!r}); fix that row or give --delimiter.")
    except (UnicodeDecodeError, csv.Error, OSError):  # OSError: text held in memory has no file to scan
        pass
    if "UTF8" in str(exc) or "utf8" in str(exc).lower():
        return _not_text(path, encoding)
    return f"file {str(path)!r} is not a readable CSV table ({shown(str(exc).splitlines()[0], 200)})."


def read_parquet(path: str | os.PathLike, allow_empty: bool = False) -> Table:
    """Read a Parquet file.

    ``allow_empty`` accepts a file with no rows (see :func:`read_csv`).

    Raises:
        DataError: the file is missing, not Parquet, or has no rows while ``allow_empty`` is false.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"file {str(path)!r} does not exist; check the path.")
    if path.is_dir():
        raise DataError(f"{str(path)!r} is a folder, not a table file.")
    check_regular_file(path, "file")
    try:
        data = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise DataError(f"file {str(path)!r} is not a readable Parquet file "
                        f"({shown(str(exc).splitlines()[0], 200)}).") from None
    if data.num_rows == 0 and not allow_empty:
        raise DataError(f"file {str(path)!r} has no records; an empty table cannot be published.")
    refuse_unreadable_types(data, repr(str(path)))
    return Table(data, "parquet")


def refuse_unreadable_types(data: pa.Table, where: str) -> None:
    """Refuse columns whose cells are not single values: lists, structures, maps and raw bytes.

    veil reads every cell as one value (a number, a text, a date, …) and publishes it in a CSV
    table, where none of those types has a faithful form.

    Raises:
        DataError: the first such column, named.
    """
    for field in data.schema:
        kind = field.type.value_type if pa.types.is_dictionary(field.type) else field.type
        if pa.types.is_struct(kind):
            what = "structures"
        elif pa.types.is_map(kind):
            what = "maps"
        elif pa.types.is_nested(kind):
            what = "lists" if not pa.types.is_union(kind) else "values of mixed types (a union)"
        elif pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_fixed_size_binary(kind) \
                or getattr(pa.types, "is_binary_view", lambda _: False)(kind):
            what = "raw bytes"
        else:
            continue
        raise DataError(f"column {quoted(field.name)} of {where} holds {what}, not single values; drop it or convert it "
                        "to text before using the table.")


def from_frame(frame, dictionary: Iterable[str] = (), allow_empty: bool = False) -> Table:
    """Wrap a pandas or polars DataFrame (or a pyarrow Table) without copying or modifying it.

    A polars frame's text columns named in ``dictionary`` are dictionary-encoded straight from
    polars' own strings (string views, handed over without a copy), on every core; the other
    columns are converted as polars converts them. ``allow_empty`` accepts a frame with no rows
    (see :func:`read_csv`).

    Raises:
        DataError: the frame has no rows (unless ``allow_empty``), or is of another type.
    """
    kind = _frame_kind(frame)
    if kind == "pandas":
        columns = [str(c) for c in frame.columns]
        if len(set(columns)) != len(columns):
            raise DataError("the DataFrame has two columns with the same name; rename one.")
        data = pa.table({name: to_arrow(frame.iloc[:, i]) for i, name in enumerate(columns)})
    elif kind == "polars":
        data = _polars_table(frame, set(dictionary))
    else:
        data = frame
    if data.num_rows == 0 and not allow_empty:
        raise DataError("the table has no records; an empty table cannot be published.")
    refuse_unreadable_types(data, f"the {kind} table")
    return Table(data, kind, source=frame)


def _polars_table(frame, codes: set[str]) -> pa.Table:
    """A polars frame as an Arrow table, its text columns in ``codes`` as dictionary arrays of text."""
    import polars as pl

    text = [name for name, kind in frame.schema.items() if name in codes and kind == pl.String]
    if not text:
        return frame.to_arrow()
    plain = frame.drop(text).to_arrow()
    views = frame.select(text).to_arrow(compat_level=pl.CompatLevel.newest())

    def encode(name: str) -> pa.ChunkedArray:
        # Arrow hashes string views, but few of its other kernels read them: the dictionary,
        # small, is turned into ordinary text.
        encoded = views.column(name).dictionary_encode()
        return pa.chunked_array([pa.DictionaryArray.from_arrays(chunk.indices, chunk.dictionary.cast(pa.large_string()))
                                 for chunk in encoded.chunks], type=pa.dictionary(pa.int32(), pa.large_string()))

    encoded = dict(zip(text, map_threads(encode, text)))
    return pa.table({name: encoded[name] if name in encoded else plain.column(name) for name in frame.columns})


def _frame_kind(frame) -> str:
    module = type(frame).__module__.split(".")[0]
    if module == "pandas":
        return "pandas"
    if module == "polars":
        return "polars"
    if isinstance(frame, pa.Table):
        return "arrow"
    raise DataError(f"cannot read a {type(frame).__name__}; pass a pandas or polars DataFrame, "
                    "a pyarrow Table, or a path to a CSV or Parquet file.")


def read_table(source, delimiter: str | None = None, allow_empty: bool = False,
               dictionary: Iterable[str] = (), malformed: str = "refuse", encoding: str | None = None) -> Table:
    """Read a table from a path (``.parquet``/``.pq`` as Parquet, anything else as CSV) or a frame.

    ``allow_empty`` accepts a table file with no records (see :func:`read_csv`); ``encoding`` is
    a CSV file's text encoding (see :func:`read_csv`).
    A CSV file's columns named in ``dictionary`` are read straight into codes (see :func:`read_csv`),
    a polars frame's are encoded from its own strings (see :func:`from_frame`).
    ``malformed`` says what a CSV line that is not a well-formed record does (see :func:`read_csv`);
    Parquet files and frames have no such lines.
    """
    _check_malformed(malformed)
    if isinstance(source, (str, os.PathLike)):
        suffix = Path(source).suffix.lower()
        if suffix in (".parquet", ".pq"):
            return read_parquet(source, allow_empty)
        return read_csv(source, delimiter, allow_empty, dictionary, malformed, encoding)
    return from_frame(source, dictionary, allow_empty)
