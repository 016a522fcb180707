"""The Spark engine of grouped DP queries: contribution bounding and sufficient statistics on Spark.

:func:`spark_true_statistics` is the Spark twin of the pandas engine
(:func:`veil.dp.statistics.compute_statistics` after
:func:`veil.dp.privacy_unit.bound_contributions`): it computes, on a Spark DataFrame, the same
statistics per key, and collects them to the driver in **one** Spark action; the noise is drawn on
the driver afterwards. It uses the DataFrame API alone (no RDD, no ``sparkContext``, no Python
function run by Spark), so a Spark Connect session works as well as a classic one.

* **Keys.** Public keys are a small table joined to the rows (a row whose key is not public is
  dropped, or falls in the "other" bucket when the key set asks for one); every public key is
  answered, in the public order, an empty one with zeros. Without public keys the candidate keys
  are the ones present after bounding, sorted; a row with a missing grouping value belongs to no key.
  Keys from a hierarchy level map each row's value to its label first, by a join with the values
  the leaves can match, as the pandas engine maps them (:mod:`veil.dp.spark_generalized`).
* **Contribution bounding** (the person unit) replays
  :func:`~veil.dp.privacy_unit.bound_contributions` step for step, each person alone, with window
  functions partitioned by the person: at most ``max_groups`` of the person's groups (a uniformly
  random subset), then at most ``max_rows_per_group`` rows in each kept group, then at most
  ``max_rows`` rows of what is left, each choice uniformly random. Random here means *ordered by a
  keyed hash*: SHA-256 of a 256-bit secret drawn from the noise source (the operating system's
  CSPRNG for a release, :func:`~veil.dp.privacy_unit.selection_keys`) and of the row's
  identifier within the action (``monotonically_increasing_id``), or, for a (person, group) pair,
  of the pair's values. Under SHA-256 as a pseudorandom function these orders are independent
  uniform permutations, as the pandas engine's uniform keys give; a fresh secret is drawn for
  every query. The row identifier is stable within the one action (a task Spark runs again reads
  its part of the table again, in the same order, when the table's source is deterministic). The
  secret is a literal of the Spark plan (whoever reads the cluster's plans sees it, and could
  replay which rows were kept; the noise is drawn on the driver, apart).
* **Statistics** are the table of :mod:`veil.dp.statistics`, with its rules: a value is missing
  when it is null or NaN (a text column's value when it is not a number, as ``pd.to_numeric``
  coerces), ±∞ clamps to a bound, the bin of a histogram is
  ``min(bins − 1, ⌊(clamp(x) − lo)·bins/(hi − lo)⌋)`` computed in the same floating-point order.
  Counts are exact; sums are float64 sums whose order of addition Spark chooses, so they may
  differ from the pandas engine's in the last bits.
* **Failures** of Spark (a session whose master or Spark Connect server cannot be reached, a job
  that fails) are one sentence (:func:`spark_failure`); the query then charges nothing, since the
  statistics are computed before the charge. The sentence names the kind of failure, never a
  value of the table.

:func:`spark_answer` turns the noisy pandas answer into a Spark DataFrame of local rows, so a
second action on it reads the same numbers and never draws noise again.
"""

from __future__ import annotations

import datetime
import math
import numbers
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pandas as pd

from veil.dp.noise import NoiseSource
from veil.dp.privacy_unit import selection_keys
from veil.dp.spark_generalized import generalized_rows
from veil.dp.statistics import check_statistic
from veil.errors import DataError, ParameterError, VeilError

__all__ = ["is_spark_frame", "spark_answer", "spark_failure", "spark_schema_frame", "spark_true_statistics"]

_KEY = "__veil_key"
_RID = "__veil_rid"
_HID = "__veil_hid"
_BIN = "__veil_bin"
_PAIR = "__veil_pair"
_ROWKEY = "__veil_rowkey"
_TOTALKEY = "__veil_totalkey"
_RANK = "__veil_rank"
_ROWS = "__veil_rows"
#: public key sets up to this size are broadcast to the executors for the join
_BROADCAST_KEYS = 200_000
_INTEGRAL = ("ByteType", "ShortType", "IntegerType", "LongType")
_FRACTIONAL = ("FloatType", "DoubleType", "DecimalType")
_PANDAS_DTYPES = {"ByteType": "int8", "ShortType": "int16", "IntegerType": "int32", "LongType": "int64",
                  "FloatType": "float32", "DoubleType": "float64", "DecimalType": "float64", "BooleanType": "bool"}


def is_spark_frame(table: Any) -> bool:
    """Whether ``table`` is a Spark DataFrame, of a classic or a Spark Connect session (without
    importing PySpark when it is not)."""
    cls = type(table)
    return cls.__name__ == "DataFrame" and cls.__module__.startswith("pyspark.sql")


def _api(table):
    """The functions module and Window class of ``table``'s kind of session: Spark Connect's for
    a Spark Connect DataFrame (whatever else this program runs), the classic ones otherwise."""
    if type(table).__module__.startswith("pyspark.sql.connect"):
        from pyspark.sql.connect import functions
        from pyspark.sql.connect.window import Window
    else:
        from pyspark.sql import functions
        from pyspark.sql.classic.window import Window
    return functions, Window


def _col(F, name: str):
    return F.col("`" + name.replace("`", "``") + "`")


def _unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) says that the server could not be reached."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        code = getattr(exc, "code", None)
        if callable(code):
            try:
                if getattr(code(), "name", "") in ("UNAVAILABLE", "DEADLINE_EXCEEDED"):
                    return True
            except Exception:  # noqa: BLE001 - an object with an unrelated code()
                pass
        if type(exc).__name__ in ("Py4JNetworkError", "ConnectionRefusedError", "RetriesExceeded"):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def spark_failure(exc: BaseException, what: str) -> VeilError:
    """The one sentence saying that Spark failed while doing ``what``, for ``exc`` raised by PySpark.

    It names the kind of failure (the server or master cannot be reached, the session was stopped,
    or the error's class and condition), never the Java message, which may quote the table's values.

    Returns:
        A ParameterError when the session's master or Spark Connect server cannot be reached or
        the session was stopped (fix the session), a DataError otherwise.
    """
    if _unreachable(exc):
        return ParameterError(f"the Spark session's master or Spark Connect server cannot be reached while {what}; "
                              "check that it runs and the address of the session.")
    text = str(exc)
    if "stopped SparkContext" in text or "SparkContext was shut down" in text or "has been stopped" in text:
        return ParameterError(f"the Spark session was stopped before {what}; start a session and read the table "
                              "again.")
    condition = None
    getter = getattr(exc, "getCondition", None)
    if callable(getter):
        try:
            condition = getter()
        except Exception:  # noqa: BLE001 - a gateway that is gone
            condition = None
    kind = type(exc).__name__ + (f", {condition}" if condition else "")
    return DataError(f"Spark failed while {what} ({kind}); check the Spark session, the table and the cluster.")


def _spark_errors():
    """The exception types PySpark and Py4J raise (those a failed job or a lost session gives)."""
    types: list = [ConnectionError]
    try:
        from pyspark.errors import PySparkException

        types.append(PySparkException)
    except ImportError:  # pragma: no cover - PySpark 4 has it
        pass
    try:
        from py4j.protocol import Py4JError

        types.append(Py4JError)
    except ImportError:  # pragma: no cover - a Spark Connect client without Py4J
        pass
    return tuple(types)


@contextmanager
def _on_spark(what: str) -> Iterator[None]:
    """Run Spark calls: PySpark's own warnings (a Spark Connect client's retries) kept from the
    terminal, and a failure turned into one sentence (:func:`spark_failure`)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module=r"pyspark(\.|$)")
        warnings.filterwarnings("ignore", module=r"py4j(\.|$)")
        try:
            yield
        except _spark_errors() as exc:
            raise spark_failure(exc, what) from None


def spark_schema_frame(table) -> pd.DataFrame:
    """An empty pandas frame with the Spark DataFrame's columns and a pandas type for each
    (numbers and booleans as such, everything else ``object``): what a query checks its columns
    against, without reading a row. ``attrs["never_null_types"]`` names the integral and boolean
    columns declared not nullable.

    Raises:
        ParameterError: the session cannot be reached (a Spark Connect session reads the schema
            from its server).
        DataError: two columns share a name, or Spark fails.
    """
    with _on_spark("reading the table's schema"):
        fields = list(table.schema.fields)
    names = [f.name for f in fields]
    if len(set(names)) != len(names):
        raise DataError("the table has two columns with the same name; rename one.")
    frame = pd.DataFrame({f.name: pd.Series([], dtype=_PANDAS_DTYPES.get(type(f.dataType).__name__, object))
                          for f in fields})
    # the columns that cannot hold a missing value by their type: whole numbers or booleans declared
    # not nullable (read by veil.dp.shared_count; a pandas dtype cannot say it)
    frame.attrs["never_null_types"] = tuple(f.name for f in fields if not f.nullable and type(f.dataType).__name__
                                            in ("ByteType", "ShortType", "IntegerType", "LongType", "BooleanType"))
    return frame


def _secret_hex(src: NoiseSource) -> str:
    """256 secret bits from ``src`` (the CSPRNG for a release), as hexadecimal text."""
    return "".join(f"{int(word):016x}" for word in selection_keys(src, 4))


# ---- public keys --------------------------------------------------------------------------------
_UNMATCHED = object()


def _key_value(value, type_name: str):
    """A public key's value in the Spark type of its column, as pandas' ``get_indexer`` compares
    it with the column's values (1 equals 1.0 and True; "1" equals no number); ``_UNMATCHED``
    when it can equal no value of the column, ``math.nan`` for a NaN key (it matches missing
    values, null or NaN)."""
    if isinstance(value, float) and math.isnan(value):
        return math.nan
    if value is None:
        return _UNMATCHED
    is_number = isinstance(value, numbers.Number) and not isinstance(value, complex)
    if type_name in _INTEGRAL:
        if is_number and float(value) == int(value):
            return int(value)
        return _UNMATCHED
    if type_name in _FRACTIONAL:
        return float(value) if is_number else _UNMATCHED
    if type_name == "BooleanType":
        return bool(value) if is_number and value in (0, 1) else _UNMATCHED
    if type_name == "StringType" or type_name.startswith(("VarcharType", "CharType")):
        return value if isinstance(value, str) else _UNMATCHED
    if type_name == "DateType":
        ok = isinstance(value, datetime.date) and not isinstance(value, datetime.datetime)
        return value if ok else _UNMATCHED
    if type_name in ("TimestampType", "TimestampNTZType"):
        return value if isinstance(value, datetime.datetime) else _UNMATCHED
    return value if isinstance(value, (str, bytes, numbers.Number, datetime.date)) else _UNMATCHED


_KEY_TYPES = {**{t: "long" for t in _INTEGRAL}, **{t: "double" for t in _FRACTIONAL}, "BooleanType": "boolean",
              "StringType": "string", "DateType": "date", "TimestampType": "timestamp",
              "TimestampNTZType": "timestamp_ntz"}


def _joined_keys(F, rows, read: list[str], keys, columns: tuple[str, ...], types: dict, other: bool):
    """``rows`` (of columns ``read``) with the index of each row's public key in ``_KEY`` (rows of
    no key dropped, or given the other bucket's index, ``len(keys.keys)``, with ``other``): a join
    with the keys' table.

    Raises:
        ParameterError: a grouping column of a type public keys cannot be compared with on Spark.
    """
    from pyspark.sql import types as T

    spark_types = {"long": T.LongType(), "double": T.DoubleType(), "boolean": T.BooleanType(),
                   "string": T.StringType(), "date": T.DateType(), "timestamp": T.TimestampType(),
                   "timestamp_ntz": T.TimestampNTZType()}

    fields, table, condition = [], [], None
    for j, name in enumerate(columns):
        t = types[name]
        if t not in _KEY_TYPES:
            raise ParameterError(f"public keys of the grouping column '{name}' (a Spark {t}) cannot be matched on "
                                 "Spark; cast it to text or numbers first.")
        values = [_key_value(key[j], t) for key in keys.keys]
        nan = [isinstance(v, float) and math.isnan(v) for v in values]
        # a value the column cannot hold is null: it equals no row
        table.append([None if (v is _UNMATCHED or n) else v for v, n in zip(values, nan)])
        table.append(nan)
        fields += [T.StructField(f"__veil_k{j}", spark_types[_KEY_TYPES[t]], True),
                   T.StructField(f"__veil_n{j}", T.BooleanType(), False)]
        data = _col(F, name)
        cast = data.cast(_KEY_TYPES[t]) if t in _INTEGRAL + _FRACTIONAL else data
        missing = data.isNull() | F.isnan(cast) if t in _FRACTIONAL else data.isNull()
        match = F.when(F.col(f"__veil_n{j}"), missing).otherwise(cast == F.col(f"__veil_k{j}"))
        condition = match if condition is None else condition & match
    schema = T.StructType(fields + [T.StructField(_KEY, T.LongType(), False)])
    key_frame = rows.sparkSession.createDataFrame(list(zip(*table, range(len(keys.keys)))), schema)
    if len(keys.keys) <= _BROADCAST_KEYS:
        key_frame = F.broadcast(key_frame)
    joined = rows.join(key_frame, condition, "left" if other else "inner")
    group = F.coalesce(F.col(_KEY), F.lit(len(keys.keys)).cast("long")) if other else F.col(_KEY)
    return joined.select(*[_col(F, c) for c in read], group.alias(_KEY))


# ---- bounding -----------------------------------------------------------------------------------
def _bounded(F, Window, rows, unit, group_cols: list[str], secret: str):
    """The rows kept by the unit's contribution bounds (:func:`veil.dp.privacy_unit.bound_contributions`)."""
    person = _col(F, unit.id_column)
    groups = [_col(F, c) for c in group_cols]
    # 512 bits of keyed hash per row: the row's key for the per-group step and for the total step
    digest = F.sha2(F.concat_ws("|", F.lit("row"), F.lit(secret), F.col(_RID).cast("string")), 512)
    rows = rows.withColumn(_ROWKEY, F.substring(digest, 1, 64)).withColumn(_TOTALKEY, F.substring(digest, 65, 64))
    if unit.max_groups is not None:
        pair = F.to_json(F.struct(person.alias("p"), *[g.alias(f"g{i}") for i, g in enumerate(groups)]))
        rows = rows.withColumn(_PAIR, F.sha2(F.concat_ws("|", F.lit("pair"), F.lit(secret), pair), 256))
        w = Window.partitionBy(person).orderBy(_col(F, _PAIR))
        rows = rows.withColumn(_RANK, F.dense_rank().over(w)).where(_col(F, _RANK) <= unit.max_groups)
    if unit.max_rows_per_group is not None:
        w = Window.partitionBy(person, *groups).orderBy(_col(F, _ROWKEY), _col(F, _RID))
        rows = rows.withColumn(_RANK, F.row_number().over(w)).where(_col(F, _RANK) <= unit.max_rows_per_group)
    if unit.max_rows is not None:
        w = Window.partitionBy(person).orderBy(_col(F, _TOTALKEY), _col(F, _RID))
        rows = rows.withColumn(_RANK, F.row_number().over(w)).where(_col(F, _RANK) <= unit.max_rows)
    return rows


# ---- statistics ---------------------------------------------------------------------------------
def _value(F, name: str, type_name: str):
    """The column as doubles (null where missing or, for text, not a number) and whether present."""
    data = _col(F, name)
    value = data.try_cast("double") if type_name == "StringType" else data.cast("double")
    return value, value.isNotNull() & ~F.isnan(value)


def _statistic_columns(F, wanted: list, types: dict, own=None):
    """Per statistic, its Spark aggregate (scalars) or its bin expression (histograms); with
    ``own``, a scalar aggregate reads only the entries where ``own`` holds."""
    def only(condition):
        return condition if own is None else own & condition

    scalars, hists = {}, {}
    for stat in wanted:
        kind = stat[0]
        if kind == "rows":
            scalars[stat] = F.count(F.lit(1)) if own is None else F.count(F.when(own, F.lit(1)))
            continue
        value, present = _value(F, stat[1], types[stat[1]])
        if kind == "count":
            scalars[stat] = F.count(F.when(only(present), F.lit(1)))
            continue
        low, high = float(stat[2]), float(stat[3])
        clamped = F.least(F.greatest(value, F.lit(low)), F.lit(high))
        if kind == "sum":
            scalars[stat] = F.sum(F.when(only(present), clamped))
        elif kind in ("csum", "csq"):
            centred = clamped - F.lit((low + high) / 2.0)
            scalars[stat] = F.sum(F.when(only(present), centred if kind == "csum" else centred * centred))
        else:  # the same floating-point steps as veil.dp.statistics
            bins = stat[4]
            b = F.least(F.lit(bins - 1).cast("long"),
                        F.floor((clamped - F.lit(low)) * F.lit(float(bins)) / F.lit(high - low)))
            hists[stat] = F.when(present, b)
    return scalars, hists


def spark_true_statistics(query, columns, keys, wanted: Iterable, src: NoiseSource) -> tuple[pd.DataFrame, dict]:
    """The statistics of a grouped query on a Spark DataFrame, collected in one Spark action.

    The Spark engine of ``veil.dp.true_cells.true_statistics`` (see the module notes): it bounds
    each person's contribution with secret keyed-hash orders drawn from ``src``, computes the
    ``wanted`` statistics (:mod:`veil.dp.statistics`) per key, and collects them.

    Args:
        query: a :class:`~veil.dp.grouped_query.Query` whose ``table`` is a Spark DataFrame, with
            its ``unit``.
        columns: the grouping columns.
        keys: the :class:`~veil.dp.public_keys.PublicKeys` (answered in their order, every one;
            one more "other" key after them when the key set has ``other`` true), or ``None`` for
            the candidate keys present after bounding, sorted.
        wanted: the statistics to compute (tuples of :mod:`veil.dp.statistics`).
        src: the noise source the bounding secret is drawn from (the secure one for a release).

    Returns:
        ``(keys_frame, stats)``: one row per key (a column per grouping column), and
        ``{statistic: array}`` with the shapes of :mod:`veil.dp.statistics` (counts int64, sums float64).

    Raises:
        ParameterError: an unknown statistic, or a session whose master or Spark Connect server
            cannot be reached.
        DataError: a Spark job fails (one sentence, no value of the table in it).
    """
    F, Window = _api(query.table)
    columns = (columns,) if isinstance(columns, str) else tuple(columns)
    wanted = list(dict.fromkeys(check_statistic(s) for s in wanted))
    unit = query.unit
    other = bool(getattr(keys, "other", False)) if keys is not None else False
    with _on_spark("computing the grouped query's statistics"):
        types = {f.name: type(f.dataType).__name__ for f in query.table.schema.fields}
        value_cols = [s[1] for s in wanted if s[0] != "rows"]
        read = list(dict.fromkeys(([unit.id_column] if unit.is_person else []) + list(columns) + value_cols))
        rows = query.table.select(*[_col(F, c) for c in read])
        if unit.is_person:
            ident = _col(F, unit.id_column)
            missing = ident.isNull() | F.isnan(ident) if types[unit.id_column] in _FRACTIONAL else ident.isNull()
            rows = rows.where(~missing).withColumn(_RID, F.monotonically_increasing_id())
            read.append(_RID)
        if keys is not None:
            joined, key_cols, key_types = keys, columns, types
            if keys.generalized:  # a hierarchy level: each row's value to its label first
                rows, key_cols, key_types, joined = generalized_rows(F, rows, keys, columns, types)
            rows = _joined_keys(F, rows, read, joined, key_cols, key_types, other)
            group_cols = [_KEY]
        else:
            for c in columns:
                data = _col(F, c)
                rows = rows.where(data.isNotNull() & ~F.isnan(data.cast("double"))) if types[c] in _FRACTIONAL \
                    else rows.where(data.isNotNull())
            group_cols = list(columns)
        if unit.is_person:
            rows = _bounded(F, Window, rows, unit, group_cols, _secret_hex(src))
        table, hists = _aggregate(F, rows, group_cols, wanted, types)
    return _arrays(table, keys, columns, wanted, hists, other)


def _aggregate(F, rows, group_cols: list[str], wanted: list, types: dict):
    """One Spark action: per key (and, for histograms, per histogram and bin), the statistics,
    collected as an Arrow table. Each kept row is read once; with histograms each row is exploded
    into its own entry (hid = −1, which the scalars read) and one entry per histogram (its bin)."""
    by = [_col(F, c) for c in group_cols]
    scalars, hists = _statistic_columns(F, wanted, types)
    if hists:
        own = F.col(_HID) == -1
        scalars, _ = _statistic_columns(F, wanted, types, own)
        entries = [F.struct(F.lit(-1).alias("h"), F.lit(0).cast("long").alias("b"))]
        entries += [F.struct(F.lit(j).alias("h"), b.cast("long").alias("b")) for j, b in enumerate(hists.values())]
        rows = rows.withColumn("__veil_e", F.explode(F.array(*entries)))
        rows = rows.withColumn(_HID, F.col("__veil_e.h")).withColumn(_BIN, F.col("__veil_e.b")) \
            .where(own | F.col(_BIN).isNotNull())
        by += [F.col(_HID), F.col(_BIN)]
    names = _names(wanted)
    aggs = [expr.alias(names[s]) for s, expr in scalars.items()] + [F.count(F.lit(1)).alias(_ROWS)]
    return rows.groupBy(*by).agg(*aggs).toArrow(), list(hists)


def _names(wanted: list) -> dict:
    return {stat: f"__veil_s{i}" for i, stat in enumerate(wanted)}


def _arrays(table, keys, columns, wanted, hists, other) -> tuple[pd.DataFrame, dict]:
    """The collected Arrow table as ``(keys_frame, stats)`` arrays on the driver."""
    frame = table.to_pandas()
    names = _names(wanted)
    cols = list(columns)
    own = frame[frame[_HID] == -1] if hists else frame
    if keys is not None:
        keys_frame = keys.frame()
        k = len(keys)  # the other bucket, when asked, is one of them
        index = own[_KEY].to_numpy(dtype=np.int64)
        all_index = frame[_KEY].to_numpy(dtype=np.int64)
    else:
        keys_frame = own[cols].sort_values(cols, kind="stable").reset_index(drop=True)
        k = len(keys_frame)
        lookup = keys_frame.assign(__veil_i=np.arange(k))
        index = own[cols].merge(lookup, on=cols, how="left", sort=False)["__veil_i"].to_numpy(dtype=np.int64)
        all_index = frame[cols].merge(lookup, on=cols, how="left", sort=False)["__veil_i"].to_numpy(dtype=np.int64)
    stats: dict = {}
    for stat in wanted:
        if stat in hists:
            rows = (frame[_HID] == hists.index(stat)).to_numpy()
            cells = np.zeros((k, stat[4]), dtype=np.int64)
            np.add.at(cells, (all_index[rows], frame.loc[rows, _BIN].to_numpy(dtype=np.int64)),
                      frame.loc[rows, _ROWS].to_numpy(dtype=np.int64))
            stats[stat] = cells
            continue
        values = own[names[stat]].to_numpy(dtype=float, na_value=0.0)
        if stat[0] in ("rows", "count"):
            out = np.zeros(k, dtype=np.int64)
            out[index] = own[names[stat]].to_numpy(dtype=np.int64)
        else:
            out = np.zeros(k, dtype=float)
            out[index] = values
        stats[stat] = out
    return keys_frame, stats


def spark_answer(frame: pd.DataFrame, session):
    """The noisy answer as a Spark DataFrame of local rows in ``session``: its rows are the
    numbers already drawn, so every action on it reads the same (no noise is drawn by Spark).

    Raises:
        ParameterError: no Spark session to make it in, or it cannot be reached.
    """
    if session is None:
        raise ParameterError("a Spark answer needs the Spark session of the query's table; answer a query on a "
                             "Spark DataFrame, or ask for a pandas, polars or Arrow table.")
    import pyarrow as pa

    with _on_spark("making the answer's Spark DataFrame"):
        return session.createDataFrame(pa.Table.from_pandas(frame, preserve_index=False))
