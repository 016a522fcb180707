"""``veil dp query --engine spark [--master M]``: the table read by Spark, the query run on it.

The Spark engine of ``veil dp query`` (:mod:`veil.cli.dp_query`) answers, charges and writes as the
local engine does; only the reading and the counting move to Spark:

* **The engine** is ``--engine``/``--master``, else the specification's ``engine:`` section (the
  same as the anonymization configuration's: ``{name: spark, master: 'local[*]', config: {...}}``),
  else local. ``--master`` without the Spark engine is refused. The master is checked before Spark
  starts, as ``veil anonymize`` checks it (:func:`veil.engines.spark.check_master`: a standalone
  master that accepts no connection within 10 s is refused in one sentence), so an unreachable
  master charges nothing and writes nothing.
* **The table** is read by veil's Spark reader (:func:`veil.engines.spark_read.read_source`: CSV
  cells as text, with the local reader's header, delimiter sniffing and rule for malformed lines).
* **One pass before the charge** (one Spark job, run by Python on the executors, which therefore
  need this veil): per record batch, the sums of the table's fingerprint
  (:func:`veil.dp.fingerprint.fingerprint_sums`, which add up across batches, so the fingerprint is
  the local engine's for the same CSV file and a budget bound to the table by one engine is the
  table's for the other) and, for each aggregated column Spark holds as text, how many cells are
  not missing and how many of those are not numbers by veil's reading rule
  (:func:`veil.data.encoding.parse_numbers`). A column with a cell that is not a number, or no
  number at all, is refused as text, as the local engine refuses it; the refusal is the curator's,
  before any charge. Nothing but these counts is collected.
* **The query** runs on the Spark DataFrame (:class:`veil.dp.grouped_query.Query` with
  :mod:`veil.dp.spark_statistics`), each aggregated text column cast to numbers in Spark (a
  missing cell stays missing), so the statistics are the local engine's; noise is drawn on the
  driver, so the same seed gives the same answers on both engines when bounding keeps every row.

A budget kept for a population that names people by a key column is checked on the local engine
only (the check reads the whole column); such a query is refused on Spark in one sentence.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Optional

from veil.errors import ColumnError, ParameterError

__all__ = ["SparkRead", "engine_of", "spark_read", "spark_typed_frame"]

_N, _FIRST, _SECOND = "__veil_n", "__veil_first", "__veil_second"


def engine_of(document: dict, engine: Optional[str], master: Optional[str]) -> tuple[str, str, dict]:
    """``(name, master, settings)`` of the engine a query runs on: the options first, then the
    specification's ``engine:`` section.

    Raises:
        ParameterError: an unknown engine, or a master without the Spark engine.
    """
    section = document.get("engine") or {}
    name = engine or section.get("name", "local")
    if name not in ("local", "spark"):
        raise ParameterError(f"--engine is local or spark, not {name!r}.")
    if master is not None and name != "spark":
        raise ParameterError("--master applies only with the Spark engine (--engine spark, or engine: {name: spark} "
                             "in the specification).")
    return name, master or section.get("master", "local[*]"), dict(section.get("config") or {})


class _SparkTable:
    """What a ledger reads of a table Spark holds: its columns and number of rows."""

    def __init__(self, columns: list[str], rows: int):
        self.columns = self.column_names = list(columns)
        self.num_rows = rows

    @property
    def data(self):
        from veil.ledger import LedgerError

        raise LedgerError("this population names people by a key column, which veil checks on the local engine only; "
                          "query the table with --engine local.")


def _batch_counts(names: list[str], texts: list[str], utf8: Optional[str]):
    """The function each Spark task runs on its record batches (see the module notes)."""

    def count(batches):
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        from veil.data.encoding import parse_numbers
        from veil.dp.fingerprint import fingerprint_sums

        def signed(word: int) -> int:
            return word - 2**64 if word >= 2**63 else word

        for batch in batches:
            table = pa.Table.from_batches([batch])
            n, first, second = fingerprint_sums(table.select(names))
            row = {_N: [n], _FIRST: [signed(first)], _SECOND: [signed(second)]}
            for i, name in enumerate(texts):
                column = table.column(name)
                present = np.asarray(pc.fill_null(pc.and_kleene(pc.is_valid(column), pc.not_equal(column, "")),
                                                  False), dtype=bool)
                parsed = parse_numbers(column)
                row[f"__veil_present{i}"] = [int(present.sum())]
                row[f"__veil_bad{i}"] = [int((present & ~np.isfinite(parsed)).sum())]
            if utf8 is not None:
                row[utf8] = [pc.min(table.column(utf8)).as_py() is not False]
            yield pa.RecordBatch.from_pydict(row)

    return count


class SparkRead:
    """A table read by Spark for ``veil dp query``, with what its one pass found (see the module notes).

    Attributes:
        frame: the records (a Spark DataFrame, never collected).
        names: the table's columns.
        texts: the aggregated columns Spark holds as text.
    """

    columns = None  # what the local engine reads in memory; Spark holds the table

    def __init__(self, source, texts: list[str], data: Path):
        self.source = source
        self.frame = source.frame
        self.names = source.columns
        self.texts = texts
        self.data = data
        self._found: Optional[dict] = None

    def found(self) -> dict:
        """The one pass (fingerprint sums, present and non-numeric cells of each text column), run once.

        Raises:
            DataError: Spark cannot read the table (with ``--strict``, a malformed line).
        """
        if self._found is None:
            from pyspark.sql import types as T

            from veil.dp.fingerprint import fingerprint_of_sums
            from veil.engines.spark_read import collect

            from veil.engines.spark_read import _UTF8

            utf8 = _UTF8 if self.source.utf8 is not None else None
            frame = self.frame.select(*[self.frame[c] for c in self.names],
                                      *([self.source.utf8.alias(utf8)] if utf8 else []))
            fields = [T.StructField(_N, T.LongType()), T.StructField(_FIRST, T.LongType()),
                      T.StructField(_SECOND, T.LongType())]
            for i in range(len(self.texts)):
                fields += [T.StructField(f"__veil_present{i}", T.LongType()),
                           T.StructField(f"__veil_bad{i}", T.LongType())]
            if utf8:
                fields.append(T.StructField(utf8, T.BooleanType()))
            counts = frame.mapInArrow(_batch_counts(self.names, self.texts, utf8), T.StructType(fields))
            _, table = collect(self.source, counts)
            # (collect refuses, for a strict read, a batch with a cell that is not UTF-8, and drops the column)
            sums = {name: sum(table.column(name).to_pylist()) for name in table.column_names}
            n = int(sums[_N])
            self._found = {"n": n, "fingerprint": fingerprint_of_sums(self.names, n, sums[_FIRST], sums[_SECOND]),
                           "present": [int(sums[f"__veil_present{i}"]) for i in range(len(self.texts))],
                           "bad": [int(sums[f"__veil_bad{i}"]) for i in range(len(self.texts))]}
        return self._found

    def ref(self, charged: bool):
        """The table as a ledger binds it (after the pass), or ``None`` when nothing is charged."""
        from veil.ledger.binding import TableRef

        found = self.found()
        return TableRef(found["fingerprint"], _SparkTable(self.names, found["n"]), self.data.name) if charged \
            else None


def spark_read(data: Path, master: str, settings: dict, delimiter: Optional[str], strict: bool,
               aggregated: list[str]) -> SparkRead:
    """Start Spark at ``master`` (checked first, so an unreachable master fails within the engine's
    connection timeout) and read ``data`` with veil's Spark reader; nothing runs yet.

    Args:
        data: a CSV or Parquet file or folder.
        master: the Spark master.
        settings: Spark settings (the specification's ``engine.config``).
        delimiter: the CSV delimiter (sniffed when ``None``).
        strict: refuse a malformed CSV line instead of leaving it out.
        aggregated: the columns the aggregates read.

    Raises:
        ParameterError: PySpark or Java missing, a master that is invalid or cannot be reached, the
            ``--encoding`` option (Spark reads UTF-8).
        DataError: the table cannot be read.
    """
    from veil.data.text_encoding import UTF8, current_encoding
    from veil.engines import make_engine

    if current_encoding() != UTF8:
        raise ParameterError("--encoding applies to the local engine only (Spark reads UTF-8); save the table as "
                             "UTF-8 to read it with Spark.")
    if master.startswith("local") and "PYSPARK_PYTHON" not in os.environ:
        # The pass runs veil's Python on the executors: in this process's own interpreter on a local master.
        os.environ["PYSPARK_PYTHON"] = sys.executable
    engine = make_engine("spark", master=master, config=settings)
    source = engine._source(data, delimiter, "refuse" if strict else "drop")
    types = {f.name: type(f.dataType).__name__ for f in source.frame.schema.fields}
    texts = [c for c in dict.fromkeys(aggregated) if types.get(c) == "StringType"]
    return SparkRead(source, texts, data)


def spark_typed_frame(read: SparkRead, spec) -> Any:
    """The Spark DataFrame to query: each aggregated text column as numbers (a missing cell missing).

    Raises:
        ColumnError: an aggregated column that is text: a cell that is not a number, no number at
            all, or a Spark type that is neither text nor a number (the local engine's refusal).
    """
    from pyspark.sql import functions as F

    found = read.found()
    types = {f.name: type(f.dataType).__name__ for f in read.frame.schema.fields}
    frame = read.frame.select(*[read.frame[c] for c in read.names])
    for agg in spec.document["aggregates"]:
        name = agg.get("column")
        if name is None or name not in types:
            continue
        if name in read.texts:
            i = read.texts.index(name)
            text = found["bad"][i] > 0 or found["present"][i] == 0
        else:
            text = types[name] not in ("ByteType", "ShortType", "IntegerType", "LongType", "FloatType",
                                       "DoubleType", "DecimalType", "BooleanType")
        if text:
            label = agg.get("name") or f"{agg['aggregate']}({name})"
            raise ColumnError(f"{label} needs a numeric column, but '{name}' holds text; aggregate a column of "
                              "numbers, or count it.")
    for name in read.texts:
        column = F.col("`" + name.replace("`", "``") + "`")
        frame = frame.withColumn(name, F.when(column.isNotNull() & (column != ""), column.cast("double")))
    return frame
