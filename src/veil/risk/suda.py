"""SUDA2: the minimal sample uniques of every record, and the SUDA and DIS-SUDA scores.

A record is *sample unique* on a set of key columns when no other record of the table holds the
same values on those columns. A set of columns is a **minimal sample unique** (MSU) of a record
when the record is unique on it and on none of its proper subsets (Elliot, Manning and Ford 2002,
"A computational algorithm for handling the special uniques problem", IJUFKS 10(5)). A record with
a small MSU is at risk: few of its values single it out.

Finding them (Manning, Haglin and Keane 2008, "A recursive search algorithm for statistical
disclosure assessment", DMKD 16:165-196) rests on two properties, which this module uses level by
level (sizes 1, 2, ...) with NumPy rather than with SUDA2's recursion over value items:

* uniqueness is monotone: a record unique on a set is unique on every superset, so a set ``S`` is
  an MSU of record ``i`` exactly when ``i`` is unique on ``S`` and on none of the sets ``S``
  minus one column (it is then unique on no smaller subset either);
* only records that are non-unique on every subset of ``S`` can have ``S`` as an MSU, and only
  records that share their values on ``S`` with such a record can make it non-unique on ``S``;
  those share their values on every subset of ``S`` with it too. So each set is grouped (one
  mixed-radix key and a count, no Python loop over rows) only on the records its one-smaller
  subsets kept, which are few after the first levels on most tables; a set none of whose
  records can still be a candidate is never grouped, nor are its supersets.

Records are first collapsed to their distinct value tuples, with the number of records each
stands for: only a tuple held by one record can be unique anywhere.

**Scores.** With ``ATT`` key columns, an MSU of size ``k`` adds ``(ATT - k)!`` to its record's
SUDA score (Elliot, Manning, Mayes, Gurd and Bane 2005, "SUDA: a program for detecting special
uniques"), the weight sdcMicro's ``suda2`` gives with ``original_scores = TRUE``: the fewer values
single a record out, the more it weighs. Searching up to a smaller ``max_size`` leaves out the
larger MSUs and their terms, so each score is the part of the full score their sizes give.

**DIS-SUDA** (Skinner and Elliot 2002, "A measure of disclosure risk for microdata", JRSS B 64(4);
as sdcMicro's ``suda2`` computes it): with ``π`` the sampling fraction (``dis``, sdcMicro's
``DisFraction``), ``U`` the number of records unique on all the key columns and ``P`` the number
of records in a pair (a tuple held by exactly two records), the file-level probability that a
unique match is correct is ``DIS = Uπ / (Uπ + P(1 - π))``. It is shared out over the records by
``score^Q`` with ``Q = 1 + (8 - ATT)/20``: a record with score ``s > 0`` gets
``1 / (1 + (U/DIS - U) / (s^Q · Σ_j s_j^(-Q)))``, the sum over the records with a positive score;
a record without an MSU gets 0. (Scaling every score by one constant changes nothing; beyond 28
key columns ``Q`` is negative and a higher score gets a lower DIS-SUDA, as sdcMicro's formula
has it. ``U`` here is every record unique on all the key columns; sdcMicro's C++, ``Suda2.h``,
counts a unique only when no other record falls in its 16-bit hash bucket, so on tables of more
than a few thousand distinct records its ``U``, and its DIS-SUDA, come out lower.)

**Missing values** are one category of their own (veil's single missing-value policy): two
records both missing a value agree on it, and a record can be unique through a missing value.
Sampling weights play no part: SUDA counts records of the sample.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import combinations
from math import factorial, prod

import numpy as np

from veil.classes import group_rows
from veil.data.dataset import Dataset
from veil.data.encoding import factorize
from veil.errors import ParameterError
from veil.parallel import map_threads

_KEY_LIMIT = 1 << 62
# The most key columns whose SUDA scores (below e · columns!) are finite floats.
_MAX_COLUMNS = 170
# Key spaces up to this many keys per row (plus a constant) are counted by direct addressing.
_DIRECT_FACTOR = 16
_DIRECT_SPAN = 4096
# A set of tuples is kept as indices (8 bytes each) rather than a mask (1 byte per tuple) when it
# holds fewer than one tuple in this many.
_SPARSE = 32


@dataclass(frozen=True)
class SudaScores:
    """SUDA2's findings on a table, one entry per row.

    Attributes:
        columns: the key columns, in the order given.
        max_size: the largest MSU size searched.
        dis: the sampling fraction used for DIS-SUDA (sdcMicro's ``DisFraction``).
        msu_counts: ``int64 [rows × max_size]``; column ``s`` holds the number of the row's
            minimal sample uniques of size ``s + 1``.
        score: ``float64`` per row, the SUDA score (0 for a row without an MSU).
        dis_score: ``float64`` per row, the DIS-SUDA score, in [0, 1].
        dis_probability: the file-level DIS probability that a unique match is correct,
            ``Uπ / (Uπ + P(1 - π))`` (0 when no record is unique on all the key columns).
        sample_uniques: ``U``, the number of records unique on all the key columns.
    """

    columns: tuple[str, ...]
    max_size: int
    dis: float
    msu_counts: np.ndarray
    score: np.ndarray
    dis_score: np.ndarray
    dis_probability: float = 0.0
    sample_uniques: int = 0
    # Each row's distinct tuple, and per column and tuple the share of the tuple's score from
    # MSUs holding the column: the per-row shares are built from them when asked for.
    _row_tuple: np.ndarray | None = field(default=None, repr=False, compare=False)
    _tuple_shares: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def msus(self) -> np.ndarray:
        """``int64`` per row: the number of its minimal sample uniques of any searched size."""
        return self.msu_counts.sum(axis=1)

    @property
    def records_with_msu(self) -> int:
        """The number of rows with at least one minimal sample unique."""
        return int(np.count_nonzero(self.score > 0))

    @cached_property
    def contributions(self) -> np.ndarray:
        """``float64 [rows × columns]``: the share of each row's score that comes from MSUs
        holding the column (sdcMicro's ``ContributionPercent``, as a fraction; a row's shares add
        up to more than 1 when its MSUs have several columns; 0 without an MSU)."""
        if self._row_tuple is None or self._tuple_shares is None:
            return np.zeros((len(self.score), len(self.columns)))
        return _rows_of(self._tuple_shares, self._row_tuple)

    def column_contributions(self) -> dict[str, float]:
        """Per key column, the percentage of the table's total SUDA score that comes from MSUs
        holding it (sdcMicro's ``attribute_contributions``): the columns to recode first. All 0
        when no row has an MSU."""
        total = float(self.score.sum())
        if total == 0 or self._row_tuple is None or self._tuple_shares is None:
            return {name: 0.0 for name in self.columns}
        # Σ_rows share × score, summed per tuple: each tuple's score times its records.
        records = np.bincount(self._row_tuple, minlength=self._tuple_shares.shape[1])
        tuple_scores = np.zeros(self._tuple_shares.shape[1])
        tuple_scores[self._row_tuple] = self.score
        shares = 100.0 * (self._tuple_shares @ (tuple_scores * records)) / total
        return {name: float(share) for name, share in zip(self.columns, shares)}


def msu_weights(n_columns: int, max_size: int) -> np.ndarray:
    """``float64 [max_size]``: what one MSU of size ``k`` (entry ``k - 1``) adds to a SUDA score
    among ``n_columns`` key columns, ``(n_columns - k)!`` (Elliot et al. 2005; sdcMicro)."""
    return np.array([float(factorial(n_columns - k)) for k in range(1, max_size + 1)])


def suda2(codes: Sequence[np.ndarray], max_size: int | None = None, dis: float = 0.1,
          names: Sequence[str] | None = None, *, counts: np.ndarray | None = None) -> SudaScores:
    """Minimal sample uniques, SUDA and DIS-SUDA scores of every row (Manning, Haglin and Keane
    2008; Elliot et al. 2005; DIS-SUDA as sdcMicro's ``suda2``), with definitions in the module's
    docstring.

    Args:
        codes: one integer array per key column, all of one length: equal integers are equal
            values (give missing values a code of their own, as :class:`Dataset` does).
        max_size: the largest MSU size to search, from 1 to the number of columns (default: the
            number of columns).
        dis: the sampling fraction of the table, in (0, 1] (sdcMicro's ``DisFraction``).
        names: the columns' names (default ``"0"``, ``"1"``, ...).
        counts: the number of records each row stands for (a table summarized by its distinct
            rows); default one each.

    Raises:
        ParameterError: no column, columns of different lengths or not integers, ``max_size``
            outside 1..columns, ``dis`` outside (0, 1], names not one per column, or counts that
            are not positive whole numbers, one per row.
    """
    columns, names, max_size, mult_rows = _check(codes, max_size, names, counts)
    dis = _check_dis(dis)
    n, width = len(columns[0]), len(columns)
    tuples, group, mult = _distinct_tuples(columns, mult_rows)
    # Kept by size (and by column) so that each set found adds to contiguous rows.
    per_tuple = np.zeros((max_size, len(mult)), dtype=np.int64)
    weights = msu_weights(width, max_size)
    # Per tuple and column: the weights of the tuple's MSUs that hold the column.
    weight_by_column = np.zeros((width, len(mult)))

    def found(size: int, subset: tuple[int, ...], unique: np.ndarray) -> None:
        per_tuple[size - 1, unique] += 1
        for j in subset:
            weight_by_column[j, unique] += weights[size - 1]

    _search(tuples, mult, max_size, found)
    msu_counts = _rows_of(per_tuple, group)
    score_tuple = weights @ per_tuple if len(mult) else np.zeros(0)
    scored = score_tuple > 0
    weight_by_column[:, scored] /= score_tuple[scored]
    uniques = int(np.count_nonzero(mult == 1))
    paired = 2 * int(np.count_nonzero(mult == 2))
    dis_tuple, probability = _dis_scores(score_tuple, uniques, paired, dis, width)
    return SudaScores(columns=tuple(names), max_size=max_size, dis=dis, msu_counts=msu_counts,
                      score=score_tuple[group] if n else np.zeros(0),
                      dis_score=dis_tuple[group] if n else np.zeros(0),
                      dis_probability=probability, sample_uniques=uniques,
                      _row_tuple=group, _tuple_shares=weight_by_column)


def _rows_of(by_column: np.ndarray, group: np.ndarray) -> np.ndarray:
    """``[rows × k]`` (C order): row ``i`` is column ``group[i]`` of ``by_column`` ``[k × tuples]``."""
    out = np.empty((len(group), by_column.shape[0]), dtype=by_column.dtype)
    for j, values in enumerate(by_column):
        out[:, j] = values[group]
    return out


def minimal_sample_uniques(codes: Sequence[np.ndarray], max_size: int | None = None, *,
                           counts: np.ndarray | None = None) -> dict[tuple[int, ...], np.ndarray]:
    """Every minimal sample unique: for each set of columns (a sorted tuple of column positions)
    that is an MSU of some row, the rows whose MSU it is (sorted ``int64``). Sets that are no
    row's MSU are left out.

    Args:
        codes: as :func:`suda2`.
        max_size: as :func:`suda2`.
        counts: as :func:`suda2`.

    Raises:
        ParameterError: as :func:`suda2`.
    """
    columns, _, max_size, mult_rows = _check(codes, max_size, None, counts)
    tuples, group, mult = _distinct_tuples(columns, mult_rows)
    n = len(group)
    # A tuple that can be unique stands for one row: the last row holding it is that row.
    row_of = np.zeros(len(mult), dtype=np.int64)
    row_of[group] = np.arange(n)
    found_sets: dict[tuple[int, ...], np.ndarray] = {}

    def found(size: int, subset: tuple[int, ...], unique: np.ndarray) -> None:
        found_sets[subset] = np.sort(row_of[unique])

    _search(tuples, mult, max_size, found)
    return found_sets


def suda(dataset: Dataset, columns: Sequence[str] | None = None, max_size: int | None = None,
         dis: float = 0.1) -> SudaScores:
    """:func:`suda2` on key columns of a :class:`Dataset`, at level 0 (to score a recoded table,
    build a Dataset of it). A row of a table summarized by its distinct rows
    (``dataset.row_weights``) counts as that many records.

    Args:
        dataset: the table.
        columns: the key columns (default: the dataset's quasi-identifiers).
        max_size: as :func:`suda2`.
        dis: as :func:`suda2`.

    Raises:
        ColumnError: a column does not exist.
        ParameterError: a column is named twice, or as :func:`suda2`.
    """
    names = list(dataset.quasi_identifiers if columns is None else ([columns] if isinstance(columns, str)
                                                                     else columns))
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ParameterError(f"name each key column once; '{repeated[0]}' is named twice.")
    codes = [dataset.column(name).codes for name in names]
    return suda2(codes, max_size, dis, names, counts=dataset.row_weights)


# --------------------------------------------------------------------------------------------
# Checks


def _check(codes, max_size, names, counts):
    """The key columns as integer arrays, their names, the MSU size limit and the row counts."""
    columns = [np.asarray(c) for c in codes]
    if not columns:
        raise ParameterError("SUDA needs at least one key column.")
    n = len(columns[0])
    for j, column in enumerate(columns):
        if column.ndim != 1 or len(column) != n:
            raise ParameterError(f"every key column must be a 1-D array of {n} codes; column {j} is not.")
        if not (np.issubdtype(column.dtype, np.integer) or np.issubdtype(column.dtype, np.bool_)):
            raise ParameterError(f"key columns must hold integer codes; column {j} holds {column.dtype}.")
    width = len(columns)
    if width > _MAX_COLUMNS:
        raise ParameterError(f"SUDA scores take at most {_MAX_COLUMNS} key columns (a score must fit in a float), "
                             f"not {width}.")
    if max_size is None:
        max_size = width
    if isinstance(max_size, bool) or not isinstance(max_size, (int, np.integer)) or not 1 <= max_size <= width:
        raise ParameterError(f"max_size must be a whole number from 1 to the {width} key columns, not {max_size!r}.")
    if names is None:
        names = [str(j) for j in range(width)]
    else:
        names = [str(name) for name in names]
        if len(names) != width:
            raise ParameterError(f"give one name per key column: {width} columns, {len(names)} names.")
    mult = None
    if counts is not None:
        mult = np.asarray(counts)
        if mult.shape != (n,) or not np.issubdtype(mult.dtype, np.number) or not np.all(np.isfinite(mult)) \
                or np.any(mult < 1) or np.any(mult != np.floor(mult)):
            raise ParameterError(f"counts must give each of the {n} rows a whole number of records of at least 1.")
        mult = mult.astype(np.int64)
    return columns, names, int(max_size), mult


def _check_dis(dis) -> float:
    if isinstance(dis, bool) or not isinstance(dis, (int, float, np.integer, np.floating)) \
            or not 0 < float(dis) <= 1:
        raise ParameterError(f"dis (the sampling fraction) must be a number in (0, 1], not {dis!r}.")
    return float(dis)


# --------------------------------------------------------------------------------------------
# The search


def _dense(column: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """The column as codes ``0 ..`` (kept as they are when already small and non-negative) and its radix."""
    column = column.astype(np.int64, copy=False) if column.dtype != np.int64 else column
    if n == 0:
        return column, 1
    low, high = int(column.min()), int(column.max())
    if low >= 0 and high < _DIRECT_FACTOR * n + _DIRECT_SPAN:
        return column, high + 1
    ids, distinct = factorize(column)
    return ids.astype(np.int64, copy=False), len(distinct)


def _distinct_tuples(columns: list[np.ndarray], mult_rows: np.ndarray | None):
    """``(tuples, group, mult)``: the distinct value tuples as one ``(codes, radix)`` per column,
    each row's tuple, and the number of records holding each tuple."""
    n = len(columns[0])
    dense = [_dense(c, n) for c in columns]
    group, keys = group_rows([c for c, _ in dense], [r for _, r in dense])
    mult = np.bincount(group, weights=mult_rows, minlength=len(keys))
    mult = mult.astype(np.int64) if mult_rows is not None else mult
    tuples = [(np.ascontiguousarray(keys[:, j]), radix) for j, (_, radix) in enumerate(dense)]
    return tuples, group, mult


def _keys(columns: list[np.ndarray], radices: list[int]) -> tuple[np.ndarray, int]:
    """``(key, span)``: each row's group as an integer below ``span``, equal exactly for rows that
    agree on every column. Direct mixed-radix numbers while the key space is small, hashed ids
    otherwise (a wider key space is compacted as it grows)."""
    n = len(columns[0])
    span = prod(max(int(r), 1) for r in radices)
    if span >= _KEY_LIMIT:
        key, _ = group_rows(columns, radices, decode=False)
        return key, (int(key.max()) + 1 if n else 1)
    key = np.zeros(n, dtype=np.int64)
    for codes, radix in zip(columns, radices):
        key *= max(int(radix), 1)
        key += codes
    if span > _DIRECT_FACTOR * n + _DIRECT_SPAN:
        key, distinct = factorize(key)
        span = len(distinct)
    return key, span


def _extend(base: tuple[np.ndarray, int] | None, codes: np.ndarray, radix: int) -> tuple[np.ndarray, int]:
    """:func:`_keys` of the columns ``base`` groups on plus one more column."""
    if base is None:
        return _keys([codes], [radix])
    key, span = base
    radix = max(int(radix), 1)
    if span * radix >= _KEY_LIMIT:
        return _keys([key, codes], [span, radix])
    key = key * radix
    key += codes
    span *= radix
    if span > _DIRECT_FACTOR * len(key) + _DIRECT_SPAN:
        key, distinct = factorize(key)
        span = len(distinct)
    return key, span


class _Search:
    """The level-by-level search of :func:`_search`, one column set at a time.

    ``alive[S]`` holds the tuples a superset of ``S`` still needs: those in a group on ``S`` of
    two records or more that holds a candidate (a tuple of one record, non-unique on every subset
    of ``S``); ``None`` when there are none. A set ``S'`` is grouped on the tuples alive for all
    its one-smaller subsets: that holds every candidate for ``S'`` and every tuple that shares its
    values on ``S'`` with one (such a tuple shares them on each subset too), so the group sizes
    of the candidates are their sizes in the whole table. A set of tuples is kept as a boolean
    mask while it is large, as sorted indices once it is small (a level may have many sets).
    """

    def __init__(self, tuples: list[tuple[np.ndarray, int]], mult: np.ndarray):
        self.columns = [c for c, _ in tuples]
        self.radices = [r for _, r in tuples]
        self.m = len(mult)
        self.single = mult == 1
        self.weights = mult.astype(np.float64)
        self.alive: dict[tuple[int, ...], np.ndarray | None] = {(): np.ones(self.m, dtype=bool)}

    def _kept(self, rows: np.ndarray) -> np.ndarray:
        """The tuples ``rows`` (sorted indices) as they are kept: indices when few, else a mask."""
        if _SPARSE * len(rows) < self.m:
            return rows
        mask = np.zeros(self.m, dtype=bool)
        mask[rows] = True
        return mask

    def _members(self, subset: tuple[int, ...]) -> tuple[np.ndarray | None, np.ndarray | None] | None:
        """``(mask, rows)``: the tuples alive for every one-smaller subset of ``subset``, as a
        mask (or ``None`` when some parent is held as indices) and as sorted indices; ``None``
        when there are none."""
        parents = []
        for drop in range(len(subset)):
            parent = self.alive.get(subset[:drop] + subset[drop + 1:])
            if parent is None:
                return None
            parents.append(parent)
        masks = [p for p in parents if p.dtype == bool]
        listed = sorted((p for p in parents if p.dtype != bool), key=len)
        if not listed:
            mask = masks[0]
            for other in masks[1:]:
                mask = mask & other
            return mask, np.flatnonzero(mask)
        rows = listed[0]
        for other in listed[1:]:
            at = np.minimum(np.searchsorted(other, rows), len(other) - 1)
            rows = rows[other[at] == rows]
        for mask in masks:
            rows = rows[mask[rows]]
        return None, rows

    def family(self, prefix: tuple[int, ...], last: bool) -> list[tuple[np.ndarray | None, np.ndarray | None]]:
        """:meth:`evaluate` for ``prefix`` extended by each column after its last, in order. The
        prefix's key over every tuple is computed once, when a set first needs it."""
        start = prefix[-1] + 1 if prefix else 0
        cached: list[tuple[np.ndarray, int]] = []

        def prefix_key() -> tuple[np.ndarray, int] | None:
            if not prefix:
                return None
            if not cached:
                cached.append(_keys([self.columns[j] for j in prefix], [self.radices[j] for j in prefix]))
            return cached[0]

        return [self.evaluate(prefix + (j,), last, prefix_key) for j in range(start, len(self.columns))]

    def evaluate(self, subset: tuple[int, ...], last: bool,
                 prefix_key: Callable[[], tuple[np.ndarray, int] | None] = lambda: None,
                 ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """``(unique, alive)`` for ``subset``: the candidates unique on it (tuple indices, or
        ``None``), and the tuples its supersets need (``None`` for none, or when ``last``).
        ``prefix_key`` gives the key of ``subset`` without its last column over every tuple."""
        members = self._members(subset)
        if members is None:
            return None, None
        mask, rows = members
        if mask is not None and 3 * len(rows) >= self.m:
            # Most tuples take part: group them all, the others weighing nothing (they share no
            # group with a candidate, so the candidates' group sizes are unchanged).
            candidates = self.single & mask
            if not candidates.any():
                return None, None
            key, span = _extend(prefix_key(), self.columns[subset[-1]], self.radices[subset[-1]])
            weights = np.where(mask, self.weights, 0.0)
            rows = None
        else:
            candidates = self.single[rows]
            if not candidates.any():
                return None, None
            key, span = _keys([self.columns[j][rows] for j in subset], [self.radices[j] for j in subset])
            weights = self.weights[rows]
        size = np.bincount(key, weights=weights, minlength=span)[key]
        unique = candidates & (size == 1)
        where = np.flatnonzero(unique)
        found = (where if rows is None else rows[where]) if len(where) else None
        if last:
            return found, None
        # A group stays when it holds a candidate that is not unique (its size is then 2 or more).
        held = np.zeros(span, dtype=bool)
        held[key[candidates & ~unique]] = True
        keep = held[key]
        if rows is None:
            keep &= mask
            kept = np.flatnonzero(keep)
            return found, (None if len(kept) == 0 else kept if _SPARSE * len(kept) < self.m else keep)
        return found, (self._kept(rows[keep]) if keep.any() else None)


def _search(tuples: list[tuple[np.ndarray, int]], mult: np.ndarray, max_size: int,
            found: Callable[[int, tuple[int, ...], np.ndarray], None]) -> None:
    """Call ``found(size, subset, unique_tuples)`` for every column set up to ``max_size`` that is
    an MSU of some tuple held by one record, with those tuples (indices into ``mult``), in order
    of size, then of columns. The sets of one size are independent and go to threads."""
    if len(mult) == 0 or not np.any(mult == 1):
        return
    search = _Search(tuples, mult)
    width = len(tuples)
    for size in range(1, max_size + 1):
        # The sets of this size, by their first size - 1 columns (which share one prefix key).
        prefixes = [prefix for prefix in combinations(range(width), size - 1) if not prefix or prefix[-1] < width - 1]
        last = size == max_size
        families = map_threads(lambda prefix, last=last: search.family(prefix, last), prefixes)
        subsets = [prefix + (j,) for prefix in prefixes for j in range(prefix[-1] + 1 if prefix else 0, width)]
        results = [result for family in families for result in family]
        search.alive = {subset: alive for subset, (_, alive) in zip(subsets, results)}
        for subset, (unique, _) in zip(subsets, results):
            if unique is not None:
                found(size, subset, unique)
        if not any(alive is not None for alive in search.alive.values()):
            return


def _dis_scores(score: np.ndarray, uniques: int, paired: int, dis: float, width: int) -> tuple[np.ndarray, float]:
    """DIS-SUDA score per entry of ``score`` and the file-level DIS probability (sdcMicro's definition)."""
    if uniques == 0:
        return np.zeros_like(score), 0.0
    probability = uniques * dis / (uniques * dis + paired * (1.0 - dis))
    scored = score > 0
    out = np.zeros_like(score)
    if not scored.any():
        return out, probability
    # U/DIS - U = U(1 - DIS)/DIS = P(1 - π)/π: written this way it is exact when P = 0.
    excess = paired * (1.0 - dis) / dis
    if excess == 0:
        out[scored] = 1.0
        return out, probability
    # s^Q · Σ_j s_j^-Q in logarithms (Q is negative beyond 28 columns, and the powers of large
    # scores leave the floats): log s^Q + log Σ_j exp(-Q log s_j).
    q = 1.0 + (8.0 - width) / 20.0
    logs = np.log(score[scored])
    terms = -q * logs
    top = terms.max()
    spread = q * logs + top + np.log(np.sum(np.exp(terms - top)))
    out[scored] = 1.0 / (1.0 + np.exp(np.log(excess) - spread))
    return out, probability
