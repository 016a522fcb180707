"""Reading a table with Spark as the local engine reads it: the same header, cells, refusals and
malformed-line rule.

* **CSV.** The header of a file on this machine is read by veil itself, as
  :func:`veil.data.io.read_csv` reads it (the same delimiter sniffing, the same refusals of an
  empty file or a bad header), and Spark is given the column names. Spark reads the cells as
  ISO-8859-1, which maps every byte to one character, and veil turns each cell back into its
  bytes, so that a byte that is not UTF-8 is seen (Spark's own UTF-8 decoding would replace it
  silently) and the other cells are the UTF-8 text the local engine reads. Spark parses each
  line on its own, so a quote left open closes at the end of its line, as in
  :mod:`veil.data.lenient`.

  ``malformed="refuse"`` (``veil check``, ``veil anonymize``, ``veil dp --strict``) reads in
  Spark's ``FAILFAST`` mode: a line with the wrong number of fields stops the job, and veil names
  the line with the local engine's sentence; a cell that is not UTF-8 refuses the file with the
  local engine's sentence. ``malformed="drop"`` (the DP queries) reads in ``DROPMALFORMED`` mode
  and leaves out every line that is not UTF-8: the rule of :mod:`veil.data.lenient`, reported
  nowhere. Either way every cell of a line is read, so that no line escapes the check by Spark
  reading only some of its columns.
* **Parquet and Spark DataFrames.** Read as they are; a column of lists, structures, maps or raw
  bytes is refused with the local engine's sentence
  (:func:`veil.data.io.refuse_unreadable_types`) before any job runs.

A table with no records is refused by :meth:`SparkSource.refuse_empty` with the local engine's
sentence; the DP queries answer it instead, as the local engine does.
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pyarrow as pa

from veil.data.io import (SNIFF_BYTES, _check_header, _describe_parse_error, normalize_delimiter, not_text_sentence,
                          refuse_unreadable_types, sniff_delimiter)
from veil.data.lenient import check_header_closed, header_line
from veil.engines.spark_mondrian import spark_column
from veil.engines.spark_session import java_message
from veil.errors import DataError, ParameterError

__all__ = ["SparkSource", "collect", "read_source", "utf8_aggregate"]

_UTF8 = "__veil_utf8"


@dataclass(frozen=True)
class SparkSource:
    """A table as Spark reads it, with what veil needs to speak about it.

    Attributes:
        frame: the records (a Spark DataFrame), nothing collected.
        kind: ``"csv"``, ``"parquet"`` or ``"spark"``.
        delimiter: the CSV delimiter.
        where: how messages name the table (a quoted path, or ``the spark table``).
        path: the CSV file on this machine whose lines a message can name, or ``None``.
        fields: the number of fields of the CSV header (0 for other kinds).
        utf8: with ``malformed="refuse"``, a Spark column that is false for a record holding a cell
            that is not UTF-8 (checked when the summary is collected); ``None`` otherwise.
    """

    frame: Any
    kind: str
    delimiter: str
    where: str
    path: Path | None = None
    fields: int = 0
    utf8: Any = None

    def only(self, column) -> "SparkSource":
        """The source reduced to one computed column (and the UTF-8 check, when there is one)."""
        from pyspark.sql import functions as F

        if self.utf8 is None:
            return replace(self, frame=self.frame.select(column))
        return replace(self, frame=self.frame.select(column, self.utf8.alias(_UTF8)), utf8=F.col(_UTF8))

    @property
    def columns(self) -> list[str]:
        return [c for c in self.frame.columns if c != _UTF8]

    def refuse_empty(self) -> None:
        """Refuse a table with no records, in the local engine's words.

        Raises:
            DataError: always.
        """
        if self.kind == "csv" and self.path is not None:
            raise DataError(f"file {self.where} has a header but no records; an empty table cannot be published.")
        if self.kind in ("csv", "parquet"):
            raise DataError(f"file {self.where} has no records; an empty table cannot be published.")
        raise DataError("the table has no records; an empty table cannot be published.")


def read_source(session, data, delimiter: str | None, malformed: str) -> SparkSource:
    """The table ``data`` names, read by Spark (see the module notes).

    Args:
        session: the ``SparkSession``.
        data: a Spark DataFrame, or the path of a Parquet file or folder (``.parquet``/``.pq``, or a
            folder of Parquet part files) or of a CSV file or folder.
        delimiter: the CSV delimiter (sniffed when ``None``).
        malformed: ``"refuse"`` or ``"drop"``: what a malformed CSV line does.

    Raises:
        DataError: the path does not exist, the header is bad, Spark cannot read it, or a column
            holds lists, structures, maps or raw bytes.
        ParameterError: a bad delimiter.
    """
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    if isinstance(data, DataFrame):
        _refuse_unreadable(data.schema, "the spark table")
        return SparkSource(data, "spark", ",", "the spark table")
    if not isinstance(data, (str, os.PathLike)):
        raise DataError(f"the Spark engine reads a Spark DataFrame or the path of a Parquet or CSV table, not a "
                        f"{type(data).__name__}.")
    text = str(data)
    local = "://" not in text
    path = Path(text)
    where = repr(text)
    if local and not path.exists():
        raise DataError(f"file {where} does not exist; check the path.")
    parquet = path.suffix.lower() in (".parquet", ".pq") or (local and path.is_dir() and any(
        p.suffix == ".parquet" for p in path.iterdir()))
    delimiter = normalize_delimiter(delimiter)
    try:
        if parquet:
            frame = session.read.parquet(text)
            _refuse_unreadable(frame.schema, where)
            return SparkSource(frame, "parquet", ",", where)
        if local:
            first = _first_file(path)
            header, delimiter = _header(first, delimiter, malformed)
        else:
            delimiter = delimiter or ","
            header = (session.read.option("header", True).option("sep", delimiter).option("quote", '"')
                      .option("escape", '"').option("inferSchema", False).csv(text).columns)
        from pyspark.sql.types import StringType, StructField, StructType

        schema = StructType([StructField(name, StringType()) for name in header])
        raw = (session.read.schema(schema).option("header", True).option("sep", delimiter).option("quote", '"')
               .option("escape", '"').option("encoding", "ISO-8859-1").option("enforceSchema", True)
               .option("mode", "DROPMALFORMED" if malformed == "drop" else "FAILFAST").csv(text))
    except (DataError, ParameterError):
        raise
    except Exception as exc:  # noqa: BLE001 - Spark's analysis errors
        raise DataError(f"Spark cannot read {where} ({java_message(exc)}).") from None
    # Every cell back to its bytes, as text: UTF-8 when the file is.
    frame = raw.select(*[F.encode(spark_column(name), "ISO-8859-1").cast("string").alias(name) for name in header])
    utf8 = F.lit(True)
    for name in header:
        utf8 = utf8 & F.coalesce(F.is_valid_utf8(spark_column(name)), F.lit(True))
    source = SparkSource(frame, "csv", delimiter, where, path if local and path.is_file() else None, len(header))
    if malformed == "drop":
        return replace(source, frame=frame.filter(utf8))
    return replace(source, utf8=utf8)


def collect(source: SparkSource, summary) -> tuple[Any, pa.Table]:
    """Run the job that collects ``summary``, an aggregate of ``source.frame`` that carries the
    UTF-8 check (:func:`utf8_aggregate`) when there is one.

    Returns:
        The summary as Spark keeps it (checkpointed, so that it is not computed again) and the
        collected table without the check's column.

    Raises:
        DataError: with ``malformed="refuse"``, a line with the wrong number of fields (named, when
            the file is on this machine) or a cell that is not UTF-8, in the local engine's words;
            or Spark cannot read the table.
    """
    try:
        summary = summary.localCheckpoint(eager=True)
        collected = summary.toArrow()
    except Exception as exc:  # noqa: BLE001 - PySpark and Py4J raise their own types
        raise DataError(_job_failure(source, exc)) from None
    if _UTF8 in collected.column_names:
        if collected.num_rows and not all(collected.column(_UTF8).to_pylist()):
            raise DataError(not_text_sentence(source.where))
        collected = collected.drop_columns([_UTF8])
    return summary, collected


def utf8_aggregate(source: SparkSource) -> list:
    """The aggregate a summary carries for the UTF-8 check (none without one)."""
    from pyspark.sql import functions as F

    return [] if source.utf8 is None else [F.min(source.utf8).alias(_UTF8)]


def _job_failure(source: SparkSource, exc: BaseException) -> str:
    """The sentence for a Spark job that failed while reading ``source``."""
    message = java_message(exc)
    if source.kind == "csv" and "MALFORMED_RECORD" in str(exc):
        if source.path is not None:
            sentence = _describe_parse_error(source.path, source.delimiter, source.fields, DataError(
                "a line has a different number of fields than the header"))
            if sentence.startswith("line "):
                return sentence
        return (f"a line of {source.where} has a different number of fields than the header (delimiter "
                f"{source.delimiter!r}); fix that row or give --delimiter.")
    return f"Spark could not read {source.where} ({message})."


def _refuse_unreadable(schema, where: str) -> None:
    """:func:`veil.data.io.refuse_unreadable_types` on a Spark schema: the same sentence for the same column."""
    from pyspark.sql.pandas.types import to_arrow_type

    fields = []
    for field in schema.fields:
        try:
            fields.append(pa.field(field.name, to_arrow_type(field.dataType, timezone="UTC")))
        except Exception:  # noqa: BLE001 - a type Arrow has no form for is a single value (an interval)
            continue
    refuse_unreadable_types(pa.schema(fields).empty_table(), where)


def _first_file(path: Path) -> Path:
    """The CSV file, or the first part file of a CSV folder."""
    if not path.is_dir():
        return path
    parts = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith((".", "_")))
    if not parts:
        raise DataError(f"the folder {str(path)!r} holds no table file; check the path.")
    return parts[0]


def _header(path: Path, delimiter: str | None, malformed: str) -> tuple[list[str], str]:
    """The header and delimiter of a CSV file, as :func:`veil.data.io.read_csv` finds them.

    Raises:
        DataError: the file cannot be read, is empty, or its header is bad.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError as exc:
        raise DataError(f"cannot read file {str(path)!r}: {exc.strerror or exc}.") from None
    if malformed == "drop":
        line = header_line(head, path)
        if line is None:
            raise DataError(f"file {str(path)!r} is empty; it needs a header row and at least one record.")
        text = line.decode("utf-8")
        delimiter = delimiter or sniff_delimiter(text)
        check_header_closed(line, delimiter, path)
        header = next(csv.reader([text], delimiter=delimiter))
    else:
        try:
            sample = head.decode("utf-8-sig")
        except UnicodeDecodeError:
            try:
                sample = head[:-4].decode("utf-8-sig")
            except UnicodeDecodeError:
                raise DataError(not_text_sentence(repr(str(path)))) from None
        if not sample.strip():
            raise DataError(f"file {str(path)!r} is empty; it needs a header row and at least one record.")
        delimiter = delimiter or sniff_delimiter(sample)
        header = next(csv.reader(io.StringIO(sample, newline=""), delimiter=delimiter))
    _check_header(header, path)
    return header, delimiter
