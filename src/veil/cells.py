"""The generalized cells of one quasi-identifier in a release.

Every release, whatever algorithm made it, publishes each record's quasi-identifier values as a
*cell*: a set of original values (a hierarchy node such as ``20-29``, a range ``[21-34]`` for
local recoding, or the single original value). Utility metrics and attacks only need to know
what each cell covers, so they work unchanged on full-domain and local-recoding releases.

A class's cell for quasi-identifier ``j`` is ``classes.keys[:, j]``, an index into that
quasi-identifier's :class:`Cells`.
"""

from __future__ import annotations

import numpy as np

from veil.data.encoding import EncodedColumn


class Cells:
    """What each cell of one quasi-identifier covers.

    Build with :meth:`from_codes` (each original value maps to one cell, as with a hierarchy
    level), :meth:`from_ranges` (each cell is a contiguous range of codes of an ordered column)
    or :meth:`from_sets` (each cell is any set of codes, e.g. the values a microaggregated group
    or a Mondrian partition holds).

    Attributes:
        column: the encoded original column.
        labels: the published text of each cell.
        level: the hierarchy level the cells come from, or ``None`` for local recoding.
        height: the height of that hierarchy (``None`` for local recoding).
    """

    def __init__(self, column: EncodedColumn, labels: np.ndarray, *, cell_of_code: np.ndarray | None = None,
                 low: np.ndarray | None = None, high: np.ndarray | None = None,
                 sets: tuple[np.ndarray, np.ndarray] | None = None, level: int | None = None,
                 height: int | None = None):
        self.column = column
        self.labels = labels
        self.level = level
        self.height = height
        self._cell_of_code = cell_of_code
        self._low = low
        self._high = high
        self._sets = sets

    @classmethod
    def from_codes(cls, column: EncodedColumn, cell_of_code: np.ndarray, labels: np.ndarray, *,
                   level: int | None = None, height: int | None = None) -> "Cells":
        """Cells given by a map from each original code to its cell (a hierarchy level)."""
        return cls(column, labels, cell_of_code=np.asarray(cell_of_code), level=level, height=height)

    @classmethod
    def from_ranges(cls, column: EncodedColumn, low: np.ndarray, high: np.ndarray, labels: np.ndarray) -> "Cells":
        """Cells that each cover the codes ``low[i] .. high[i]`` (inclusive) of an ordered column."""
        return cls(column, labels, low=np.asarray(low), high=np.asarray(high))

    @classmethod
    def from_sets(cls, column: EncodedColumn, indptr: np.ndarray, indices: np.ndarray, labels: np.ndarray) -> "Cells":
        """Cells that each cover a set of codes, in compressed-row form: cell ``i`` covers
        ``indices[indptr[i]:indptr[i+1]]`` (no code twice within one cell; no cell empty)."""
        return cls(column, labels, sets=(np.asarray(indptr, dtype=np.int64), np.asarray(indices, dtype=np.int64)))

    @property
    def n_cells(self) -> int:
        return len(self.labels)

    @property
    def cell_of_code(self) -> np.ndarray | None:
        """For cells from a map (:meth:`from_codes`), the cell of each original code; else ``None``."""
        return self._cell_of_code

    def members(self) -> tuple[np.ndarray, np.ndarray]:
        """The codes each cell covers, in compressed-row form ``(indptr, indices)``: cell ``i``
        covers ``indices[indptr[i]:indptr[i+1]]``, in code order."""
        if self._sets is not None:
            return self._sets
        if self._cell_of_code is not None:
            indices = np.argsort(self._cell_of_code, kind="stable").astype(np.int64)
            lengths = np.bincount(self._cell_of_code, minlength=self.n_cells)
        else:
            lengths = (self._high - self._low + 1).astype(np.int64)
            starts = np.repeat(self._low - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
            indices = (np.arange(int(lengths.sum())) + starts).astype(np.int64)
        return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64), indices

    def overlap(self, weights: np.ndarray) -> np.ndarray:
        """For each cell, the sum of ``weights`` (one per original code) over the codes it covers."""
        weights = np.asarray(weights, dtype=float)
        if self._cell_of_code is not None:
            return np.bincount(self._cell_of_code, weights=weights, minlength=self.n_cells)
        if self._sets is not None:
            indptr, indices = self._sets
            return np.add.reduceat(weights[indices], indptr[:-1]) if len(indices) else np.zeros(self.n_cells)
        cumulative = np.concatenate([[0.0], np.cumsum(weights)])
        return cumulative[self._high + 1] - cumulative[self._low]

    def coverage(self) -> np.ndarray:
        """Number of distinct original values (present in the data) each cell covers."""
        return self.overlap(np.ones(self.column.cardinality))

    def record_counts(self) -> np.ndarray:
        """Number of records of the original table whose value lies in each cell."""
        return self.overlap(self.column.counts())

    def numeric_span(self) -> tuple[np.ndarray, np.ndarray]:
        """Smallest and largest numeric value each cell covers (NaN for an empty cell).

        Only for numeric columns; the missing category is ignored.
        """
        values = self.column.numeric
        if self._sets is not None:
            indptr, indices = self._sets
            covered = values[indices]
            return (np.fmin.reduceat(covered, indptr[:-1]), np.fmax.reduceat(covered, indptr[:-1]))
        if self._cell_of_code is None:
            return values[self._low], values[self._high]
        finite = np.isfinite(values)
        low = np.full(self.n_cells, np.inf)
        high = np.full(self.n_cells, -np.inf)
        np.minimum.at(low, self._cell_of_code[finite], values[finite])
        np.maximum.at(high, self._cell_of_code[finite], values[finite])
        low[np.isinf(low)] = np.nan
        high[np.isinf(high)] = np.nan
        return low, high
