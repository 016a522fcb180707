"""What MDAV publishes for each group: the centroid of a numeric quasi-identifier, rounded and
printed, and the mode of any other one.

**What is published.** Each record's quasi-identifiers are replaced by its group's: the mean of a
numeric one, rounded to ``decimals`` (default: to a whole number when every value of the column is
whole, so ages stay ages, else to 3 decimals; halves round away from zero), and the most frequent
value of any other one (ties go to the value first in the column's order). Groups whose
published values print the same text on every quasi-identifier (two groups of ages 36.6 and 37.4
on average both show 37) are one class to a reader, so they are merged into one class; their
published values do not change (a mean stays in the rounding interval both means share, and a mode
of each part is a mode of the union). The manifest lists every released class's size and
published values under ``recoding.groups``, in the order of the released classes; the private
file counts the groups merged so under ``recoding.coincident``. Each class's cell for a quasi-identifier is the
set of original values its records hold (:meth:`Cells.from_sets`), so the utility metrics read
the span (numeric) or the number of values (other columns) each class covers.

**Missing values.** In a numeric column, the group's published mean is taken over the records
that have a value, and every record of the group, the one with the missing value included, is
published with it (as missing only when no record of the group has a value).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from veil.anonymize.mdav.space import SpaceColumn
from veil.data.encoding import MISSING_LABEL

DEFAULT_DECIMALS = 3


def group_values(c: SpaceColumn, group: np.ndarray, n_groups: int):
    """Per group: the codes its records hold (``indptr``, ``indices``), and its exact published
    value: the mean of a numeric column (NaN when no record has a value), else the mode's label
    (ties go to the value first in the column's order).

    Args:
        c: the quasi-identifier, as the distance space holds it.
        group: the group of every row, numbered from 0.
        n_groups: the number of groups.
    """
    col = c.column
    pairs, counts = np.unique(group * col.cardinality + col.codes, return_counts=True)
    owner, codes = np.divmod(pairs, col.cardinality)
    indptr = np.searchsorted(owner, np.arange(n_groups + 1))
    if c.kind == "numeric":
        values = col.numeric[codes]
        has = np.isfinite(values)
        total = np.bincount(owner[has], weights=counts[has] * values[has], minlength=n_groups)
        number = np.bincount(owner[has], weights=counts[has], minlength=n_groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(number > 0, total / np.maximum(number, 1), np.nan)
        return indptr, codes, mean
    top = np.maximum.reduceat(counts, indptr[:-1])
    position = np.where(counts == top[owner], np.arange(len(counts)), len(counts))
    first = np.minimum.reduceat(position, indptr[:-1])
    return indptr, codes, np.asarray(col.labels, dtype=object)[codes[first]]


def published_column(c: SpaceColumn, group: np.ndarray, n_groups: int,
                     decimals_setting: int | Mapping[str, int | None] | None):
    """Per group: its cell (codes held), the exact centroid or mode, its label and the
    value written to the manifest.

    Args:
        c: the quasi-identifier, as the distance space holds it.
        group: the group of every row, numbered from 0.
        n_groups: the number of groups.
        decimals_setting: MDAV's ``decimals``: one number for every numeric quasi-identifier, a
            mapping from column to number (``None`` for the default), or ``None``.
    """
    indptr, indices, exact = group_values(c, group, n_groups)
    labels = group_labels(c, exact, decimals_setting)
    if c.kind != "numeric":
        return indptr, indices, exact, labels, [str(v) for v in labels]
    decimals = _decimals_of(c, decimals_setting)
    rounded = _round_half_away(exact, decimals)
    values = [None if not np.isfinite(v) else (int(v) if decimals == 0 else float(v)) for v in rounded]
    return indptr, indices, exact, labels, values


def group_labels(c: SpaceColumn, exact: np.ndarray,
                 decimals_setting: int | Mapping[str, int | None] | None) -> np.ndarray:
    """The text each group publishes for a column, from its exact mean or mode.

    Args:
        c: the quasi-identifier, as the distance space holds it.
        exact: per group, the exact mean (numeric) or the mode's label (:func:`group_values`).
        decimals_setting: MDAV's ``decimals`` (see :func:`published_column`).
    """
    if c.kind != "numeric":
        return np.asarray(exact, dtype=object)
    decimals = _decimals_of(c, decimals_setting)
    return _number_texts(_round_half_away(exact, decimals), decimals)


def _decimals_of(c: SpaceColumn, decimals_setting) -> int:
    """The decimals of a numeric column's published centroids: those given for it, else 0 for a
    column of whole numbers and ``DEFAULT_DECIMALS`` otherwise."""
    if isinstance(decimals_setting, dict):
        chosen = decimals_setting.get(c.name)
    else:
        chosen = decimals_setting
    if chosen is not None:
        return int(chosen)
    finite = c.column.numeric[np.isfinite(c.column.numeric)]
    return 0 if np.all(finite == np.floor(finite)) else DEFAULT_DECIMALS


def _round_half_away(values: np.ndarray, decimals: int) -> np.ndarray:
    scale = 10.0 ** decimals
    return np.sign(values) * np.floor(np.abs(values) * scale + 0.5) / scale


def _number_texts(values: np.ndarray, decimals: int) -> np.ndarray:
    """Numbers as published: ``decimals`` places without trailing zeros, ``-0`` as ``0``, and
    the missing label where there is no number."""
    finite = np.isfinite(values)
    text = np.char.mod(f"%.{decimals}f", np.where(finite, values, 0.0))
    if decimals > 0:
        text = np.char.rstrip(np.char.rstrip(text, "0"), ".")
    text = np.where((text == "-0") | (text == ""), "0", text)
    return np.where(finite, text, MISSING_LABEL).astype(object)
