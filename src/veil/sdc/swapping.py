"""Rank swapping of numeric columns (Moore 1996, "Controlled data-swapping techniques for masking
public use microdata sets", U.S. Bureau of the Census; Domingo-Ferrer and Torra 2001; sdcMicro's
``rankSwap`` with its parameter P).

A column's values are ranked, and values are exchanged between pairs of records whose ranks differ
by at most P = ⌊p·m/100⌋, p percent of the column's m non-missing values. Each column keeps its
multiset of values exactly (only which record holds which value changes), and values move little
in rank, so univariate distributions are exact and correlations are kept approximately; several
columns are swapped independently of each other, which is what breaks a record's link to its own
combination of values.

Pairing. Moore's original walks the ranks in order and gives each record not yet swapped a
partner drawn uniformly among the not yet swapped records at most P ranks above it; that walk is
sequential (each choice depends on all earlier ones) and cannot be vectorized. veil draws the pairs
in one step instead, with the same two guarantees (a partner at most P ranks away, each record in
at most one exchange):

1. the ranks 0 .. m−1 are cut into consecutive blocks of P + 1 ranks, the cuts shifted by a
   uniform random offset in {0, …, P} (so no rank is always at a block's edge);
2. within each block the records are put in a uniformly random order and paired two by two in
   that order (a uniformly random matching of the block); with an odd count, one record of the
   block, chosen by the same random order, keeps its value;
3. the two records of each pair exchange their values.

Any two ranks in a block differ by at most P, so the distance bound holds by construction; the
partner of a record is uniform over the other records of its block. This is the pairwise swapping
of Moore's method with the partner drawn within a randomly placed block rather than in the forward
window of a sequential walk; the realized partner distances therefore follow a different (also
symmetric) distribution. sdcMicro's optional top/bottom grouping and its K0/R0 criteria are not
implemented (use :mod:`veil.sdc.coding` for the extremes first).

Ties and missing values. Values are ranked by a stable sort: equal values get consecutive ranks in
record order. Exchanging two equal values changes nothing, so a run of equal values longer than a
block partly stays in place; the released multiset is the same whatever the tie order. Missing
values (NaN) are left in their records and take no part: ranks, m and P count the non-missing
values only.

Randomness: secure by default (the keys of the random order and the block offset are read from the
operating system's CSPRNG); an integer seed or ``numpy.random.Generator`` is a reproducible
experiment, not fit for release (:mod:`veil.sdc._numeric`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from veil.errors import ParameterError
from veil.randomness import RandomBytes, uniform_below
from veil.sdc._numeric import RngArg, float_matrix, random_bytes

__all__ = ["rank_swap", "swap_distance"]


def swap_distance(p: Any, m: int) -> int:
    """P = ⌊p·m/100⌋, the largest rank difference of a swap among m values, computed exactly from
    the float p (no rounding at the boundary: p = 10 and m = 30 give P = 3).

    Raises:
        ParameterError: p is not a number in (0, 100].
    """
    try:
        value = float(p)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(p, bool) or not 0.0 < value <= 100.0:
        raise ParameterError(f"p must be a percentage of the records in (0, 100], got {p!r}.")
    return int(Fraction(value) * m // 100)


def _partners(m: int, distance: int, source: RandomBytes) -> np.ndarray:
    """For ranks 0 .. m−1, the rank each one takes its value from (itself when it stays): the
    pairing of the module notes, with blocks of ``distance`` + 1 ranks.

    The blocks are the rows of a [blocks × (P + 1)] array of ranks (the first row starts with
    ``offset`` empty slots, the last ends with empty ones); each rank gets a uniform 63-bit key,
    each empty slot the largest 64-bit key, and sorting the keys along each row puts the block's
    records in a uniformly random order with the empty slots last (two equal keys, probability
    below (P + 1)²/2⁶⁴ in a block, are ordered by the sort)."""
    width = distance + 1
    offset = int(uniform_below(width, source, 1)[0])
    blocks = -(-(m + offset) // width)
    slot_rank = np.arange(blocks * width, dtype=np.int64) - offset
    real = (slot_rank >= 0) & (slot_rank < m)
    keys = np.full(blocks * width, np.iinfo(np.uint64).max, dtype=np.uint64)
    keys[real] = np.frombuffer(source(8 * m), dtype=np.uint64) >> np.uint64(1)
    order = np.argsort(keys.reshape(blocks, width), axis=1)
    ranked = np.take_along_axis(slot_rank.reshape(blocks, width), order, axis=1)  # empty slots last
    count = real.reshape(blocks, width).sum(axis=1)
    first, second = ranked[:, 0:width - 1:2], ranked[:, 1:width:2]
    paired = (2 * np.arange(first.shape[1]) + 1)[None, :] < count[:, None]
    first, second = first[paired], second[paired]
    partner = np.arange(m, dtype=np.int64)
    partner[first], partner[second] = second, first
    return partner


def rank_swap(values: Any, p: float, rng: RngArg = None) -> np.ndarray:
    """Rank swap each column of ``values`` independently (see the module notes for the method).

    Args:
        values: one numeric column (1-D) or a matrix [rows × columns]; NumPy array, list, pandas
            or polars object. Not modified.
        p: the swapping range in percent of the column's non-missing values, 0 < p <= 100: two
            exchanged values differ in rank by at most P = ⌊p·m/100⌋. When P < 1 no exchange is
            within reach and the column is returned unchanged.
        rng: None (secure, for a release), or an integer seed or ``numpy.random.Generator`` for a
            reproducible experiment (not fit for release: record ``rng is None`` as the release's
            ``fit_for_release``).

    Returns:
        The swapped values, same shape; an integer array stays integer (its values are only
        moved), anything else comes back as float64 with NaN for a missing value.

    Raises:
        ParameterError: p outside (0, 100], or a bad ``rng``.
        ColumnError: a column holds something other than numbers.
    """
    source, _ = random_bytes(rng)
    arr = values if isinstance(values, np.ndarray) else None
    if arr is not None and arr.dtype.kind in "iu" and arr.ndim in (1, 2):
        matrix, single = (arr.reshape(-1, 1), True) if arr.ndim == 1 else (arr, False)
    else:
        matrix, single = float_matrix(values, "columns to swap")
    swap_distance(p, 0)  # check p before any work
    out = matrix.copy()
    for j in range(matrix.shape[1]):
        column = np.ascontiguousarray(matrix[:, j])
        present = np.flatnonzero(~np.isnan(column)) if column.dtype.kind == "f" else np.arange(len(column))
        distance = swap_distance(p, len(present))
        if distance < 1 or len(present) < 2:
            continue
        ranked = present[np.argsort(column[present], kind="stable")]  # record of each rank
        partner = _partners(len(present), distance, source)
        out[ranked, j] = column[ranked[partner]]
    return out[:, 0] if single else out
