"""The inputs of the evaluation, checked: code matrices, column names and sizes.

A table is a 2-D integer array of codes, n × d, column j holding codes 0..sizes[j]−1 of the j-th
named column (the representation every part of ``veil.synth`` shares). Every check raises a
:class:`~veil.errors.VeilError` with one sentence naming what to fix; nothing given is modified
(the checked tables are read-only int64 views or copies).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from veil.errors import ColumnError, DataError, ParameterError


@dataclass(frozen=True)
class Tables:
    """The checked tables and their columns."""
    real: np.ndarray
    synthetic: np.ndarray
    holdout: np.ndarray | None
    names: tuple[str, ...]
    sizes: tuple[int, ...]

    def index(self, name: str) -> int:
        return self.names.index(name)


def _table(codes, label: str, sizes: tuple[int, ...], *, allow_empty: bool = False) -> np.ndarray:
    array = np.asarray(codes)
    if array.ndim != 2:
        raise DataError(f"the {label} table must be a 2-D array of codes (rows × columns), not {array.ndim}-D.")
    if array.shape[1] != len(sizes):
        raise DataError(f"the {label} table has {array.shape[1]} columns but {len(sizes)} names were given.")
    if array.shape[0] == 0 and not allow_empty:
        raise DataError(f"the {label} table has no rows; give at least one.")
    if array.dtype.kind == "b" or array.dtype.kind not in "iu":
        raise DataError(f"the {label} table must hold integer codes, not values of type {array.dtype}.")
    out = array.astype(np.int64, copy=True)
    if out.size:
        low, high = out.min(axis=0), out.max(axis=0)
        bad = np.flatnonzero((low < 0) | (high >= np.asarray(sizes)))
        if bad.size:
            j = int(bad[0])
            raise DataError(f"column {j} of the {label} table holds codes outside 0..{sizes[j] - 1}; "
                            "encode it with the same domain as the other tables.")
    out.setflags(write=False)
    return out


def check_tables(real, synthetic, names: Sequence[str], sizes: Sequence[int], holdout=None) -> Tables:
    """The tables checked against the names and sizes."""
    if isinstance(names, str):
        raise ColumnError(f"give the column names as a list, not the text {names!r}.")
    names = tuple(names)
    if not names:
        raise ColumnError("give at least one column name.")
    if any(not isinstance(n, str) for n in names):
        raise ColumnError("column names must be text.")
    if len(set(names)) != len(names):
        duplicate = next(n for n in names if names.count(n) > 1)
        raise ColumnError(f"column {duplicate!r} is named twice; give each column once.")
    sizes_list = list(sizes)
    if len(sizes_list) != len(names):
        raise ParameterError(f"give one size per column: {len(names)} names but {len(sizes_list)} sizes.")
    checked = []
    for name, size in zip(names, sizes_list):
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise ParameterError(f"the size of column {name!r} must be a whole number of at least 1, not {size!r}.")
        checked.append(int(size))
    sizes_t = tuple(checked)
    return Tables(real=_table(real, "real", sizes_t), synthetic=_table(synthetic, "synthetic", sizes_t),
                  holdout=None if holdout is None else _table(holdout, "holdout", sizes_t),
                  names=names, sizes=sizes_t)


def column_indices(tables: Tables, columns: Sequence[str], what: str) -> tuple[int, ...]:
    """The indices of named columns; a ColumnError names an unknown or repeated one."""
    if isinstance(columns, str):
        raise ColumnError(f"give the {what} as a list of column names, not the text {columns!r}.")
    out = []
    for name in columns:
        if name not in tables.names:
            raise ColumnError(f"unknown column {name!r} in {what}; use one of {', '.join(map(repr, tables.names))}.")
        j = tables.index(name)
        if j in out:
            raise ColumnError(f"column {name!r} appears twice in {what}; give it once.")
        out.append(j)
    return tuple(out)
