"""A mean (or variance) that divides by the query's own noisy count instead of measuring one.

A mean of ``column`` measures a noisy centred sum and a noisy count of the rows whose ``column``
has a value (the statistic ``("count", column)`` of :mod:`veil.dp.statistics`), each with half of
its share of the budget. When the column cannot hold a missing value *by its type*, that count is
the count of rows (``("rows",)``) on every table of the schema, so when the query also asks for
``count()`` the mean can divide by the count's released noisy cells, a post-processing, and spend
its whole share on its sum (what PipelineDP does for COUNT and MEAN together). A variance does the
same with its count: its square sum and its sum get half of its share each.

When it is done (:func:`denominators`), decided from public things only, so that the draws of a
query never depend on the data (the replay harness of :mod:`veil.conformance.glue` checks it):

* the query has a :class:`~veil.dp.aggregates.Count` (the one with the largest share, the first
  on a tie) whose share is at least the share the aggregate would give its own count, so that
  every noisy vector the aggregate uses is at least as accurate as without sharing;
* the column cannot be missing by the table's schema (:func:`never_missing`), never by its values.

The aggregate's interval uses the count's cells with the count mechanism's half-width at the
aggregate's own α share (α/2 for a mean, α/3 for a variance), computed from the mechanism's
``error_bound``: the union bound over the aggregate's noisy vectors holds as before, whatever the
count's own interval (at α) is. Nothing else changes: the count is drawn and charged once, in its
own share.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from veil.dp.aggregate_protocol import Aggregate, Measurement, column_of

__all__ = ["Borrowed", "denominators", "never_missing", "shared_measurements"]

@dataclass(frozen=True)
class Borrowed(Measurement):
    """A measurement an aggregate takes from another aggregate's released cells instead of
    drawing it: ``source`` is that measurement's label (a count's name). It costs nothing and is
    never drawn; its half-width is the source mechanism's at ``alpha_share`` of α."""

    source: str = ""


def never_missing(query: Any, column: str) -> bool:
    """Whether ``column`` of the query's table cannot hold a missing value by its type alone.

    * pandas: a numpy integer or boolean dtype (a float, an extension type such as ``Int64``, an
      object column can hold one);
    * Arrow: an integer or boolean field declared not nullable (``to_pandas`` turns an integer
      column into float64 when it holds a null, so its pandas type depends on the values and is
      not used);
    * polars: never (its schema does not say a column has no null);
    * Spark: an integral or boolean field declared not nullable (:func:`veil.dp.spark_statistics.
      spark_schema_frame` records the nullability).

    Args:
        query: a :class:`~veil.dp.grouped_query.Query`.
        column: one of its columns.
    """
    kind = query.kind
    if kind == "pandas":
        dtype = query.frame[column].dtype
        return isinstance(dtype, np.dtype) and dtype.kind in "biu"
    if kind == "arrow":
        import pyarrow as pa

        field = query.table.schema.field(column)
        return (not field.nullable) and (pa.types.is_integer(field.type) or pa.types.is_boolean(field.type))
    if kind == "spark":
        return column in query.frame.attrs.get("never_null_types", ())
    return False


def _count_index(agg: Aggregate) -> int | None:
    """The index of the measurement of ``agg`` that is its count of rows with a value, or None
    (only for an aggregate whose measurements are its statistics in order)."""
    column = column_of(agg)
    if column is None or type(agg).measure_values is not Aggregate.measure_values:
        return None
    stats, ms = agg.statistics(), agg.measurements()
    if len(stats) != len(ms) or ("count", column) not in stats:
        return None
    i = stats.index(("count", column))
    return i if ms[i].integer and ms[i].per_row == 1.0 else None


def denominators(query: Any, aggregates: tuple, shares) -> dict:
    """``{aggregate index: count aggregate}`` for each aggregate that divides by the query's count
    (see the module notes); decided from the schema, the aggregates and their shares only.

    Args:
        query: the :class:`~veil.dp.grouped_query.Query` (its table's schema is read).
        aggregates: the grouped query's aggregates.
        shares: each aggregate's fraction of the budget (exact fractions, in order).
    """
    from veil.dp.aggregates import Count

    counts = [(Fraction(s), -i, a) for i, (a, s) in enumerate(zip(aggregates, shares)) if isinstance(a, Count)]
    if not counts:
        return {}
    best_share, _, best = max(counts, key=lambda t: (t[0], t[1]))
    out = {}
    for i, (agg, share) in enumerate(zip(aggregates, shares)):
        j = _count_index(agg)
        if j is None:
            continue
        own = Fraction(share) * Fraction(agg.measurements()[j].share)
        if best_share >= own and never_missing(query, column_of(agg)):
            out[i] = best
    return out


def shared_measurements(agg: Aggregate, count: Aggregate) -> tuple[Measurement, ...]:
    """The measurements of ``agg`` when it divides by ``count``'s cells: its count measurement
    borrowed from ``count`` (same label, same α share, no cost), the others sharing the freed
    budget in proportion to their shares (exact fractions)."""
    ms = agg.measurements()
    j = _count_index(agg)
    freed = Fraction(ms[j].share)
    out = []
    for i, m in enumerate(ms):
        if i == j:
            out.append(Borrowed(m.label, m.integer, m.per_row, Fraction(0), m.alpha_share, m.width, count.name))
        else:
            out.append(replace(m, share=Fraction(m.share) / (1 - freed)))
    return tuple(out)
