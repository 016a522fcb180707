"""The engine entry point of a grouped DP query: bound each person's contribution, then compute the
sufficient statistics of :mod:`veil.dp.statistics` per key (issue 27).

:func:`true_statistics` is what :class:`~veil.dp.grouped_query.GroupedQuery` calls to read the data;
everything before it (checks, the noise plan) and after it (noise, selection, intervals) runs on
the driver without the data. A Spark query dispatches to
:func:`veil.dp.spark_statistics.spark_true_statistics` (same signature and result).

Keys:

* **public** (a :class:`~veil.dp.public_keys.PublicKeys`): exactly its keys, in its order, every
  one of them (an empty group has zero statistics), and its "other" bucket last when it has one
  (rows whose key is outside the public set; without it, those rows are dropped before bounding);
* **private** (``keys=None``): the *candidate* keys, those present after contribution bounding,
  sorted. A row whose key has a missing value in a grouping column takes no key (dropped), a fixed
  rule per row. Bounding runs over every key the rows hold, so the L0 bound (``max_groups``)
  limits the candidates one person creates; :mod:`veil.dp.partition_selection` then decides which
  are released.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from veil.dp.noise import NoiseSource
from veil.dp.privacy_unit import bound_contributions, selection_keys
from veil.dp.public_keys import PublicKeys
from veil.dp.statistics import compute_statistics

__all__ = ["kept_rows", "true_statistics"]


def kept_rows(unit, frame: pd.DataFrame, group: np.ndarray, src: NoiseSource) -> np.ndarray:
    """The rows contribution bounding keeps (a boolean mask): every row with a key at the row unit;
    at the person unit :func:`~veil.dp.privacy_unit.bound_contributions` with one key per row for
    each bound the unit sets (per group, groups, in all), from
    :func:`~veil.dp.privacy_unit.selection_keys` (the CSPRNG for the secure source)."""
    n = len(frame)
    if not unit.is_person:
        return np.asarray(group, dtype=np.int64) >= 0
    person, _ = pd.factorize(frame[unit.id_column], use_na_sentinel=True)
    used = [unit.max_rows_per_group is not None, unit.max_groups is not None, unit.max_rows is not None]
    drawn = iter(selection_keys(src, sum(used) * n).reshape(sum(used), n))
    row_keys, group_keys, total_keys = (next(drawn) if u else None for u in used)
    return bound_contributions(unit, person, group, row_keys, group_keys, total_keys)


def _ordered(tuples: list[tuple]) -> list[int]:
    """The positions of ``tuples`` in sorted order: by value, or, when the values of a column are
    of types that do not compare (text and numbers), by type name and text (never a TypeError)."""
    try:
        return sorted(range(len(tuples)), key=lambda i: tuples[i])
    except TypeError:
        return sorted(range(len(tuples)), key=lambda i: tuple((type(v).__name__, str(v)) for v in tuples[i]))


def _present_groups(frame: pd.DataFrame, columns: tuple[str, ...]) -> np.ndarray:
    """Each row's code among the key tuples the rows hold (−1 when a grouping value is missing):
    the per-column codes combined column by column, compacted whenever the product grows large."""
    code = np.zeros(len(frame), dtype=np.int64)
    missing = np.zeros(len(frame), dtype=bool)
    size = 1
    for name in columns:
        codes, values = pd.factorize(frame[name], use_na_sentinel=True)
        missing |= codes < 0
        radix = max(len(values), 1)
        if size * radix >= 2**62:  # compact the codes so far before they overflow
            _, code = np.unique(code, return_inverse=True)
            size = int(code.max()) + 1 if len(code) else 1
        code = code * radix + np.maximum(codes, 0)
        size *= radix
    code[missing] = -1
    return code


def _plain(value):
    """A numpy scalar as the Python value it holds (keys compare and print as Python values)."""
    return value.item() if isinstance(value, np.generic) else value


def true_statistics(query, columns, keys: PublicKeys | None, wanted: Iterable[tuple],
                    src: NoiseSource) -> tuple[pd.DataFrame, dict]:
    """The keys answered and the ``wanted`` statistics of each, over the rows kept by bounding.

    Args:
        query: the :class:`~veil.dp.grouped_query.Query` (its table, kind and privacy unit).
        columns: the grouping columns.
        keys: the public keys (with their "other" bucket when they have one), or ``None`` for
            the candidate keys of private partition selection (those present after bounding,
            sorted by value; see the module notes).
        wanted: the statistics to compute (:mod:`veil.dp.statistics`).
        src: the noise source; bounding's random keys come from it (the CSPRNG when secure).

    Returns:
        ``(keys_frame, stats)``: one row per key answered (the grouping columns), and
        ``{statistic: array}`` with one entry (a row for ``hist``) per key, in that order.
    """
    if query.kind == "spark":
        from veil.dp.spark_statistics import spark_true_statistics

        return spark_true_statistics(query, columns, keys, wanted, src)
    frame = query.frame
    columns = (columns,) if isinstance(columns, str) else tuple(columns)
    if keys is not None:
        group = keys.index_of_rows(frame)
        kept = kept_rows(query.unit, frame, group, src)
        keys_frame, num = keys.frame(), len(keys)
    else:
        code = _present_groups(frame, columns)
        kept = kept_rows(query.unit, frame, code, src)
        present, first = np.unique(code[kept], return_index=True)
        rows = np.flatnonzero(kept)[first]  # one row holding each candidate key
        values = frame[list(columns)].iloc[rows]
        tuples = [tuple(_plain(v) for v in row) for row in values.itertuples(index=False, name=None)]
        order = _ordered(tuples)
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        group = np.full(len(frame), -1, dtype=np.int64)
        group[kept] = rank[np.searchsorted(present, code[kept])]
        keys_frame = values.iloc[order].reset_index(drop=True)  # the table's own types
        num = len(order)
    group = np.where(kept, group, -1)
    return keys_frame, compute_statistics(frame, group, num, wanted)
