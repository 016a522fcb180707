"""Rows mapped to the keys of a hierarchy level on Spark, as the pandas engine maps them.

Public keys from a level of a generalization hierarchy (:meth:`PublicKeys.from_hierarchy
<veil.dp.public_keys.PublicKeys.from_hierarchy>`, :meth:`~veil.dp.public_keys.PublicKeys.from_levels`)
group a row by its value's generalization. The pandas engine finds it from the value's text
(``str`` of the value), or, for a column of numbers, from its canonical numeric text
(:func:`veil.data.encoding.canonical_numeric_texts`: ``25.0`` and ``2.5e1`` read as ``25``); a
missing value takes the leaf ``""`` or ``NULL`` when the hierarchy has one; any other value takes
no key (or the other bucket).

Spark writes numbers as text by rules of its own (``1.0E16`` where Python writes ``1e+16``), so
the mapping is not computed from texts on Spark. Instead the driver lists, from the hierarchy's
leaves alone, every value of the column's type that can map to a key (the *candidates*: each leaf
and canonical text read as a number, a whole number, a date …), asks the pandas engine's own rule
(:func:`veil.dp.public_keys._generalized_index`) which label each candidate takes, and the rows
are joined on their value with that small table (broadcast). A value that is no candidate cannot
map to a key: a value ``v`` that matches a leaf text ``t = str(v)`` is ``t`` read back; one whose
canonical text ``c`` matches is ``c`` read back (canonical texts are exact: a whole number below
2⁵³ or Python's shortest round-trip text), except for whole numbers of 2⁵³ or more, which read as
the nearest float (Spark's conversion of a long to a double rounds to nearest as Python's does):
those are matched by a second join on that double. So Spark groups every row as pandas would, for
columns of text, whole numbers, floats (a ``FloatType`` value as the double it is, a decimal as the
double Spark casts it to, as the engine reads decimals), booleans and dates.

Refused, with one sentence naming the column and its type: any other type (timestamps, whose text
depends on the session's time zone and on Spark's spelling of fractions of a second; binary,
arrays, maps, structs). Refusals depend on the table's schema only, never on its values.

One difference remains, for floats: Spark's joins do not tell ``-0.0`` from ``0.0``, so a ``-0.0``
is matched as ``0.0`` would be; the two differ only when a leaf's text is exactly ``0.0`` or
``-0.0`` with different labels.
"""

from __future__ import annotations

import datetime
import math
from dataclasses import replace

import pandas as pd

from veil.data.encoding import canonical_number
from veil.dp.public_keys import PublicKeys, _generalized_index
from veil.errors import ParameterError

__all__ = ["generalized_rows", "leaf_tables"]

_INTEGRAL = ("ByteType", "ShortType", "IntegerType", "LongType")
_FRACTIONAL = ("FloatType", "DoubleType", "DecimalType")
_TEXT = ("StringType", "VarcharType", "CharType")
#: whole numbers from this magnitude on are not all floats: their canonical text is the nearest float's
_EXACT = 2**53
_LONG = 2**63


def _kind(type_name: str) -> str | None:
    """The kind of value a Spark column of this type holds for the mapping, or None when refused."""
    if type_name in _INTEGRAL:
        return "long"
    if type_name in _FRACTIONAL:
        return "double"
    if type_name == "BooleanType":
        return "boolean"
    if type_name == "DateType":
        return "date"
    if type_name.startswith(_TEXT):
        return "string"
    return None


def _number(text: str) -> float | None:
    try:
        return float(text)
    except (ValueError, OverflowError):
        return None


def _whole(text: str) -> list[int]:
    """The whole numbers ``text`` may spell (as an integer or as a whole float), within a long."""
    out = []
    try:
        out.append(int(text))
    except ValueError:
        pass
    number = _number(text)
    if number is not None and math.isfinite(number) and number.is_integer():
        out.append(int(number))
    return [v for v in out if -_LONG <= v < _LONG]


def _candidates(table: dict, kind: str) -> pd.Series:
    """The values of ``kind`` that may take a key (the module notes), as the pandas column that
    would hold them."""
    texts = [*table["text"], *table["numeric"]]
    if kind == "string":
        return pd.Series(list(table["text"]), dtype=object)
    if kind == "boolean":
        return pd.Series([True, False], dtype=bool)
    if kind == "long":
        return pd.Series(sorted({v for t in texts for v in _whole(t)}), dtype="int64")
    if kind == "double":  # + 0.0: -0.0 as 0.0, as Spark's joins see it
        numbers = {n + 0.0 for n in map(_number, texts) if n is not None and not math.isnan(n)}
        return pd.Series(sorted(numbers), dtype="float64")
    dates = set()
    for text in table["text"]:
        try:
            dates.add(datetime.date.fromisoformat(text))
        except ValueError:
            pass
    return pd.Series(sorted(dates), dtype=object)


def _large_wholes(table: dict) -> list[tuple[float, int]]:
    """``(float, label)`` for the canonical texts of whole numbers of 2⁵³ or more: a long that
    rounds to that float takes the label (the module notes)."""
    out = []
    for text, label in table["numeric"].items():
        number = _number(text)
        if (number is not None and math.isfinite(number) and number.is_integer() and _EXACT <= abs(number) <= _LONG
                and canonical_number(number) == text and label >= 0):
            out.append((number, label))
    return out


def leaf_tables(table: dict, kind: str) -> tuple[list[tuple], list[tuple[float, int]]]:
    """The two tables a column of ``kind`` is joined with (the module notes): ``(value, label)``
    for every candidate value that takes a label by the pandas engine's rule, and, for whole
    numbers, ``(float, label)`` for those of 2⁵³ or more, matched by the float they round to.

    Args:
        table: a column's entry of :attr:`PublicKeys.generalized <veil.dp.public_keys.PublicKeys>`.
        kind: ``"string"``, ``"long"``, ``"double"``, ``"boolean"`` or ``"date"``.
    """
    candidates = _candidates(table, kind)
    labels = _generalized_index(candidates, table) if len(candidates) else []
    pairs = [(v.item() if hasattr(v, "item") else v, int(label)) for v, label in zip(candidates, labels) if label >= 0]
    large = _large_wholes(table) if kind == "long" and table["numeric"] else []
    return pairs, large


def _mapping(session, pairs: list, value_type, F):
    """A broadcast table of ``(value, label)`` rows."""
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField("__veil_leaf", value_type, True),
                           T.StructField("__veil_label", T.LongType(), False)])
    return F.broadcast(session.createDataFrame(pairs, schema))


def _labelled(F, rows, data, kind: str, table: dict, slot: int, missing):
    """``rows`` with ``__veil_g{slot}``: the index of the label each row's value takes, null for none."""
    from pyspark.sql import types as T

    value_types = {"string": T.StringType(), "long": T.LongType(), "double": T.DoubleType(),
                   "boolean": T.BooleanType(), "date": T.DateType()}
    value = data.cast(kind) if kind in ("long", "double") else data
    pairs, large = leaf_tables(table, kind)
    out = f"__veil_g{slot}"
    found = F.lit(None).cast("long")
    if pairs:
        leaves = _mapping(rows.sparkSession, pairs, value_types[kind], F).withColumnsRenamed(
            {"__veil_leaf": f"__veil_leaf{slot}", "__veil_label": f"__veil_label{slot}"})
        rows = rows.join(leaves, value == F.col(f"__veil_leaf{slot}"), "left").drop(f"__veil_leaf{slot}")
        found = F.col(f"__veil_label{slot}")
    if large:
        leaves = _mapping(rows.sparkSession, large, T.DoubleType(), F).withColumnsRenamed(
            {"__veil_leaf": f"__veil_big{slot}", "__veil_label": f"__veil_biglabel{slot}"})
        beyond = (value >= F.lit(_EXACT)) | (value <= F.lit(-_EXACT))
        rows = rows.join(leaves, beyond & (value.cast("double") == F.col(f"__veil_big{slot}")), "left") \
            .drop(f"__veil_big{slot}")
        found = F.coalesce(found, F.col(f"__veil_biglabel{slot}"))
    on_missing = F.lit(int(table["missing"])).cast("long") if table["missing"] >= 0 else F.lit(None).cast("long")
    rows = rows.withColumn(out, F.when(missing, on_missing).otherwise(found))
    return rows.drop(*[c for c in (f"__veil_label{slot}", f"__veil_biglabel{slot}") if c in rows.columns])


def _col(F, name: str):
    return F.col("`" + name.replace("`", "``") + "`")


def _missing(F, name: str, type_name: str):
    """Whether the column's value is missing: null, or NaN in a column of floats."""
    data = _col(F, name)
    return data.isNull() | F.isnan(data.cast("double")) if type_name in _FRACTIONAL else data.isNull()


def generalized_rows(F, rows, keys: PublicKeys, columns: tuple[str, ...], types: dict):
    """``rows`` with each column of a hierarchy level replaced, for the key join, by the index of
    the level's label its value takes (``__veil_g{j}``, a long, null for none), and the keys
    rewritten to match: ``(rows, columns, types, keys)`` for the join of public keys.

    Args:
        F: the functions module of the table's kind of session.
        rows: the Spark DataFrame of rows.
        keys: public keys whose ``generalized`` is set.
        columns: the grouping columns.
        types: ``{column: Spark type name}``.

    Raises:
        ParameterError: a column of a hierarchy level whose type Spark cannot match to its leaves
            as the pandas engine does (the module notes).
    """
    names, kinds = list(columns), {}
    for name in keys.generalized:
        kind = _kind(types[name])
        if kind is None:
            raise ParameterError(f"the grouping column '{name}' is a Spark {types[name]}, whose values cannot be "
                                 "matched to the hierarchy's leaves on Spark; cast it to text first.")
        kinds[name] = kind
    types = dict(types)
    rewritten = [list(key) for key in keys.keys]
    for j, name in enumerate(columns):
        if name not in keys.generalized:
            continue
        table = keys.generalized[name]
        rows = _labelled(F, rows, _col(F, name), kinds[name], table, j, _missing(F, name, types[name]))
        names[j] = f"__veil_g{j}"
        types[names[j]] = "LongType"
        position = {label: i for i, label in enumerate(table["labels"])}
        for key in rewritten:
            key[j] = position[key[j]]
    keys = replace(keys, columns=tuple(names), keys=tuple(tuple(k) for k in rewritten), generalized=None)
    return rows, tuple(names), types, keys
