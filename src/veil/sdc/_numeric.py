"""What the numeric SDC methods share: reading a numeric column or matrix, and the bytes their
randomness comes from (secure or seeded)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from veil.errors import ColumnError, ParameterError
from veil.randomness import BytePool, RandomBytes

RngArg = np.random.Generator | int | None


def random_bytes(rng: RngArg) -> tuple[RandomBytes, bool]:
    """The byte source of ``rng`` and whether a release drawn from it is fit for release.

    ``None`` is the secure mode: the operating system's CSPRNG (``os.urandom``) read in blocks.
    An integer seed or a ``numpy.random.Generator`` is a reproducible experiment: its bytes come
    from ``Generator.bytes`` and the result says ``fit_for_release=False``. Every draw is made
    from these bytes with exact integer arithmetic (:mod:`veil.randomness`), so both modes run
    the same algorithm.

    Raises:
        ParameterError: ``rng`` is not None, a whole number >= 0 or a Generator.
    """
    if rng is None:
        return BytePool(os.urandom), True
    if isinstance(rng, np.random.Generator):
        return rng.bytes, False
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)) and rng >= 0:
        return np.random.default_rng(int(rng)).bytes, False
    raise ParameterError("rng must be None (secure), a numpy.random.Generator or a whole number >= 0 as a seed.")


def float_matrix(values: Any, what: str) -> tuple[np.ndarray, bool]:
    """``values`` as a new float64 matrix [rows × columns] and whether it came as one column.

    A pandas or polars DataFrame or Series, a NumPy array or a nested list is read; missing values
    (None, NaN, pandas NA) become NaN. The input is never modified.

    Raises:
        ColumnError: the values are not numbers (strings, booleans, dates), are infinite, or have
            more than two dimensions.
    """
    refused = ColumnError(f"The {what} must hold numbers only; convert or drop the other columns first.")
    if hasattr(values, "to_numpy") and not isinstance(values, np.ndarray):
        if not all(_numeric_dtype(dtype) for dtype in _dtypes(values)):
            raise refused
        try:
            arr = values.to_numpy(dtype=float, na_value=np.nan)  # pandas, nullable dtypes included
        except TypeError:
            arr = values.to_numpy()  # polars: nulls of a numeric column become NaN
    else:
        arr = np.asarray(values)
    if arr.dtype.kind == "O":
        cells = arr.ravel()
        if not all(v is None or isinstance(v, (int, float, np.integer, np.floating))
                   and not isinstance(v, (bool, np.bool_)) for v in cells):
            raise refused
        arr = np.array([np.nan if v is None else v for v in cells], dtype=float).reshape(arr.shape)
    if arr.dtype.kind not in "iuf":
        raise refused
    if arr.ndim > 2:
        raise ColumnError(f"The {what} must be one column or a table of columns, not a {arr.ndim}-dimensional array.")
    single = arr.ndim <= 1
    out = np.array(arr, dtype=np.float64, copy=True)
    out = out.reshape(-1, 1) if single else out
    if np.isinf(out).any():
        raise ColumnError(f"The {what} hold an infinite value; replace it by a number or a missing value first.")
    return out, single


def restore_shape(matrix: np.ndarray, single: bool) -> np.ndarray:
    """The matrix back in the shape it came in (one column → a 1-D array)."""
    return matrix[:, 0].copy() if single else matrix


def _dtypes(values: Any) -> list:
    """The dtypes of a pandas or polars DataFrame's columns, or of a Series."""
    dtypes = getattr(values, "dtypes", None)
    if dtypes is None:
        return [getattr(values, "dtype", None)]
    if isinstance(dtypes, list):  # polars DataFrame
        return dtypes
    return list(dtypes) if hasattr(dtypes, "__iter__") else [dtypes]  # pandas DataFrame or Series


def _numeric_dtype(dtype: Any) -> bool:
    """Integers and floats (nullable pandas ones included); not booleans, text, dates."""
    if hasattr(dtype, "is_numeric"):  # polars
        return bool(dtype.is_numeric())
    from pandas.api.types import is_bool_dtype, is_numeric_dtype
    return bool(is_numeric_dtype(dtype) and not is_bool_dtype(dtype))
