"""The nearest record: for each query record, the Hamming distance (the number of columns whose
codes differ) to the closest record of a reference table, and which reference record that is.

Vectorized without a Python loop over rows: identical rows are grouped first (a query with an
exact copy in the reference is answered by a key lookup, one at distance 1 by a lookup of the keys
that leave out one column); the other distinct queries are compared
with the distinct reference rows in chunks, counting the agreeing columns as a product of one-hot
matrices (``Q · Rᵀ``, a BLAS product) for columns of up to :data:`ONE_HOT_LIMIT` values and by
direct comparison for larger ones. Among reference records at the same smallest distance the one
that comes first in the reference's order is returned, so a caller who wants a random choice
among ties shuffles the reference first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from veil.synth.evaluation.keys import joint_keys

ONE_HOT_LIMIT = 512          # columns with more values are compared directly
_ONE_HOT_WIDTH = 4096        # at most this many one-hot columns in all
_ONE_HOT_CELLS = 1 << 26     # cells of the reference's one-hot matrix at most
_CHUNK_CELLS = 1 << 22       # cells of one chunk's query × reference product


@dataclass(frozen=True)
class Nearest:
    """For each query: ``distance`` to the nearest reference record, and ``index`` of that
    record in the reference (the first in its order among ties)."""
    distance: np.ndarray
    index: np.ndarray


def nearest(queries: np.ndarray, reference: np.ndarray, sizes: Sequence[int], columns: Sequence[int]) -> Nearest:
    """The nearest reference record of each query on ``columns`` (indices); both tables are n × d
    code matrices over the same columns, the reference has at least one row."""
    columns = list(columns)
    n = queries.shape[0]
    if not columns or n == 0:
        return Nearest(np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64))
    query_keys, reference_keys = joint_keys([queries, reference], sizes, columns)
    distinct, first = np.unique(reference_keys, return_index=True)
    # the distinct reference rows in the order of their first occurrence: argmax picks the earliest
    order = np.argsort(first, kind="stable")
    representative = first[order]

    unique_queries, query_first, inverse = np.unique(query_keys, return_index=True, return_inverse=True)
    inverse = inverse.reshape(n)
    distance = np.zeros(unique_queries.size, dtype=np.int64)
    index = np.zeros(unique_queries.size, dtype=np.int64)

    pos = np.minimum(np.searchsorted(distinct, unique_queries), distinct.size - 1)
    exact = distinct[pos] == unique_queries
    index[exact] = first[pos[exact]]
    rest = np.flatnonzero(~exact)
    if rest.size and len(columns) > 1:
        # distance 1: the query agrees with a reference record on every column but one
        q_rows = queries[query_first[rest]]
        found = np.full(rest.size, np.iinfo(np.int64).max)
        for drop in range(len(columns)):
            kept = columns[:drop] + columns[drop + 1:]
            q_keys, r_keys = joint_keys([q_rows, reference], sizes, kept)
            masked, masked_first = np.unique(r_keys, return_index=True)
            at = np.minimum(np.searchsorted(masked, q_keys), masked.size - 1)
            hit = masked[at] == q_keys
            found[hit] = np.minimum(found[hit], masked_first[at[hit]])
        one = found < np.iinfo(np.int64).max
        distance[rest[one]] = 1
        index[rest[one]] = found[one]
        rest = rest[~one]
    if rest.size:
        q_rows = queries[query_first[rest]][:, columns]
        r_rows = reference[representative][:, columns]
        best_distance, best = _closest(q_rows, r_rows, [int(sizes[j]) for j in columns])
        distance[rest] = best_distance
        index[rest] = representative[best]
    return Nearest(distance[inverse], index[inverse])


def _closest(q_rows: np.ndarray, r_rows: np.ndarray, sizes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``q_rows``: the smallest Hamming distance to a row of ``r_rows`` and the
    first row attaining it."""
    d = len(sizes)
    # the reference's one-hot matrix stays within _ONE_HOT_CELLS cells (256 MB of float32)
    budget = min(_ONE_HOT_WIDTH, max(64, _ONE_HOT_CELLS // max(1, r_rows.shape[0])))
    one_hot, direct, width = [], [], 0
    for j, size in enumerate(sizes):
        if size <= ONE_HOT_LIMIT and width + size <= budget:
            one_hot.append((j, width))
            width += size
        else:
            direct.append(j)
    r_hot = _one_hot(r_rows, one_hot, width)
    chunk = max(1, _CHUNK_CELLS // max(1, r_rows.shape[0]))
    out_distance = np.empty(q_rows.shape[0], dtype=np.int64)
    out_index = np.empty(q_rows.shape[0], dtype=np.int64)
    for start in range(0, q_rows.shape[0], chunk):
        block = q_rows[start:start + chunk]
        agree = _one_hot(block, one_hot, width) @ r_hot.T if width else np.zeros((block.shape[0], r_rows.shape[0]),
                                                                                 dtype=np.float32)
        for j in direct:
            agree += block[:, j, None] == r_rows[None, :, j]
        best = agree.argmax(axis=1)
        out_index[start:start + chunk] = best
        out_distance[start:start + chunk] = d - np.rint(agree[np.arange(block.shape[0]), best]).astype(np.int64)
    return out_distance, out_index


def _one_hot(rows: np.ndarray, layout: list[tuple[int, int]], width: int) -> np.ndarray:
    out = np.zeros((rows.shape[0], width), dtype=np.float32)
    if layout:
        at = np.arange(rows.shape[0])[:, None]
        cols = np.stack([rows[:, j] + offset for j, offset in layout], axis=1)
        out[at, cols] = 1.0
    return out
