"""Reading tables (CSV, Parquet, pandas, polars) and writing files atomically.

CSV cells are read as text, as ARX does; types are decided when a column is encoded. The
delimiter is sniffed from the first lines when not given, so ``;``-separated files just work.
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from veil.data.encoding import to_arrow
from veil.errors import DataError

CANDIDATE_DELIMITERS = (";", ",", "\t", "|")
SNIFF_BYTES = 1 << 16


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


def read_csv(path: str | os.PathLike, delimiter: str | None = None) -> Table:
    """Read a CSV file with a header row; every cell is kept as text.

    Raises:
        DataError: the file is missing, not UTF-8, empty, has duplicate or empty column names,
            or a row with a different number of fields than the header (the line is named).
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"file {str(path)!r} does not exist; check the path.")
    if path.is_dir():
        raise DataError(f"{str(path)!r} is a folder, not a table file.")
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
        sample = head.decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            sample = head[:-4].decode("utf-8-sig")
        except UnicodeDecodeError:
            raise DataError(f"file {str(path)!r} is not UTF-8 text; save it as UTF-8 CSV.") from None
    if not sample.strip():
        raise DataError(f"file {str(path)!r} is empty; it needs a header row and at least one record.")
    if len([line for line in sample.splitlines() if line.strip()]) == 1 and len(head) < SNIFF_BYTES:
        raise DataError(f"file {str(path)!r} has a header but no records; an empty table cannot be published.")
    if delimiter is None:
        delimiter = sniff_delimiter(sample)
    header = next(csv.reader(io.StringIO(sample, newline=""), delimiter=delimiter))
    _check_header(header, path)
    try:
        data = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(use_threads=True, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(
                column_types={name: pa.string() for name in header},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowInvalid as exc:
        raise DataError(_describe_parse_error(path, delimiter, len(header), exc)) from None
    if data.num_rows == 0:
        raise DataError(f"file {str(path)!r} has a header but no records; an empty table cannot be published.")
    return Table(data, "csv", delimiter)


def _check_header(header: list[str], path: Path) -> None:
    empty = [i + 1 for i, name in enumerate(header) if not name.strip()]
    if empty:
        raise DataError(f"column {empty[0]} of {str(path)!r} has no name in the header row; name every column.")
    seen = set()
    for name in header:
        if name in seen:
            raise DataError(f"column name {name!r} appears twice in the header of {str(path)!r}; rename one.")
        seen.add(name)


def _describe_parse_error(path: Path, delimiter: str, expected: int, exc: Exception) -> str:
    """Find the first ragged line (only on the error path, so a scan line by line is fine)."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            for number, row in enumerate(csv.reader(fh, delimiter=delimiter), start=1):
                if row and len(row) != expected:
                    return (f"line {number} of {str(path)!r} has {len(row)} fields but the header has "
                            f"{expected} (delimiter {delimiter!r}); fix that row or give --delimiter.")
    except (UnicodeDecodeError, csv.Error):
        pass
    if "UTF8" in str(exc) or "utf8" in str(exc).lower():
        return f"file {str(path)!r} is not UTF-8 text; save it as UTF-8 CSV."
    return f"file {str(path)!r} is not a readable CSV table ({str(exc).splitlines()[0]})."


def read_parquet(path: str | os.PathLike) -> Table:
    """Read a Parquet file.

    Raises:
        DataError: the file is missing, not Parquet, or has no rows.
    """
    path = Path(path)
    if not path.exists():
        raise DataError(f"file {str(path)!r} does not exist; check the path.")
    try:
        data = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise DataError(f"file {str(path)!r} is not a readable Parquet file ({str(exc).splitlines()[0]}).") from None
    if data.num_rows == 0:
        raise DataError(f"file {str(path)!r} has no records; an empty table cannot be published.")
    return Table(data, "parquet")


def from_frame(frame) -> Table:
    """Wrap a pandas or polars DataFrame (or a pyarrow Table) without copying or modifying it.

    Raises:
        DataError: the frame has no rows, or is of another type.
    """
    kind = _frame_kind(frame)
    if kind == "pandas":
        columns = [str(c) for c in frame.columns]
        if len(set(columns)) != len(columns):
            raise DataError("the DataFrame has two columns with the same name; rename one.")
        data = pa.table({name: to_arrow(frame.iloc[:, i]) for i, name in enumerate(columns)})
    elif kind == "polars":
        data = frame.to_arrow()
    else:
        data = frame
    if data.num_rows == 0:
        raise DataError("the table has no records; an empty table cannot be published.")
    return Table(data, kind, source=frame)


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


def read_table(source, delimiter: str | None = None) -> Table:
    """Read a table from a path (``.parquet``/``.pq`` as Parquet, anything else as CSV) or a frame."""
    if isinstance(source, (str, os.PathLike)):
        suffix = Path(source).suffix.lower()
        if suffix in (".parquet", ".pq"):
            return read_parquet(source)
        return read_csv(source, delimiter)
    return from_frame(source)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_many(files: dict) -> None:
    """Write several files (text, or bytes for binary ones) so that either all of them appear or
    none does.

    Every file is first written to a temporary file beside its target; only when all are
    complete are they renamed into place.

    Raises:
        DataError: a folder does not exist or a target is a folder.
    """
    pending = []
    try:
        for path, text in files.items():
            path = Path(path)
            check_target(path)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            pending.append((tmp, path))
            if isinstance(text, bytes):
                with os.fdopen(fd, "wb") as fh:
                    fh.write(text)
            else:
                with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                    fh.write(text)
            os.chmod(tmp, path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask())
        for tmp, path in pending:
            os.replace(tmp, path)
    finally:
        for tmp, _ in pending:
            if os.path.exists(tmp):
                os.unlink(tmp)


def check_target(path: str | os.PathLike) -> None:
    """Refuse, before any work is done, an output path that cannot be written.

    Raises:
        DataError: the path is a folder or its folder does not exist.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise DataError(f"{str(path)!r} is a folder; give a file name to write.")
    if not folder.is_dir():
        raise DataError(f"folder {str(folder)!r} does not exist; create it or choose another output path.")


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename.

    Nothing is left behind if writing fails, and an existing file is replaced only when the new
    content is complete; the file gets the mode a plain ``open`` would give it.

    Raises:
        DataError: the folder does not exist or the path is a folder.
    """
    atomic_write_many({path: text})
