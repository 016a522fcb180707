"""Row keys: the values a record holds on some columns, as one integer per record.

Two records get the same key exactly when they hold the same codes on those columns. The key is
mixed-radix over the columns' sizes (code of the first column most significant); when the product
of the sizes would overflow 62 bits, the partial keys are first compressed to dense ranks, so any
number of columns works. Keys are only comparable between records keyed in the same call, which is
why :func:`joint_keys` keys several tables together.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

_LIMIT = 1 << 62


def row_keys(codes: np.ndarray, sizes: Sequence[int], columns: Sequence[int]) -> np.ndarray:
    """One int64 key per row of ``codes`` (n × d) for its values on ``columns`` (indices); all
    rows get key 0 when ``columns`` is empty."""
    n = codes.shape[0]
    key = np.zeros(n, dtype=np.int64)
    radix = 1
    for j in columns:
        size = max(int(sizes[j]), 1)
        if radix * size >= _LIMIT:
            _, key = np.unique(key, return_inverse=True)
            key = key.astype(np.int64).reshape(n)
            radix = int(key.max()) + 1 if n else 1
        key = key * size + codes[:, j]
        radix *= size
    return key


def joint_keys(tables: Sequence[np.ndarray], sizes: Sequence[int], columns: Sequence[int]) -> list[np.ndarray]:
    """The keys of several tables' rows on ``columns``, comparable across the tables."""
    if math.prod(max(int(sizes[j]), 1) for j in columns) < _LIMIT:   # no compression: keys compare as they are
        return [row_keys(t, sizes, columns) for t in tables]
    lengths = [t.shape[0] for t in tables]
    keys = row_keys(np.concatenate(tables, axis=0), sizes, columns)
    return np.split(keys, np.cumsum(lengths)[:-1])


def counts_in(reference: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """For each key of ``queries``, how many keys of ``reference`` equal it."""
    unique, counts = np.unique(reference, return_counts=True)
    if unique.size == 0:
        return np.zeros(queries.shape[0], dtype=np.int64)
    pos = np.minimum(np.searchsorted(unique, queries), unique.size - 1)
    return np.where(unique[pos] == queries, counts[pos], 0).astype(np.int64)
