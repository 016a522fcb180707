"""Equivalence classes and class × sensitive-value count matrices: the core every model reads.

An equivalence class is a set of records that agree on every quasi-identifier after
generalization (Samarati and Sweeney). Classes are found without a Python loop: each row's
generalized codes are combined into one mixed-radix ``int64`` key, keys are factorized by hashing,
and class sizes and count matrices are ``bincount`` calls. A more general lattice node is reached
by rolling up the classes of a more specific node, without re-reading the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from veil.cells import Cells
from veil.data.dataset import Dataset
from veil.data.encoding import EncodedColumn, canonical_numeric_texts, encode_column, factorize
from veil.data.hierarchy import Generalization
from veil.errors import ColumnError, DataError
from veil.parallel import map_threads, thread_count

# The text every quasi-identifier of a suppressed record is published as, when suppressed
# records are shown rather than removed.
STAR = "*"
_KEY_LIMIT = 1 << 62
# Key spaces up to _DIRECT_FACTOR × rows + _DIRECT_SPAN keys are grouped by direct addressing;
# otherwise up to _SORT_ROWS rows by sorting, and larger inputs by hashing.
_DIRECT_FACTOR = 16
_DIRECT_SPAN = 4096
_SORT_ROWS = 100_000


def group_rows(code_columns: Sequence[np.ndarray], radices: Sequence[int],
               decode: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Group rows by the tuple of their codes.

    Args:
        code_columns: one integer array per column, all of the same length.
        radices: for each column, an upper bound (exclusive) on its codes.
        decode: return the tuples as columns; with ``False`` they may come back packed as one
            mixed-radix ``int64`` per group (a 1-D array), which is cheaper when few are read.

    Returns:
        ``(group, keys)``: the group id of every row, and ``int64 [groups × columns]``, the code
        tuple of each group. Ids follow the lexicographic order of the tuples.
    """
    n = len(code_columns[0])
    radices = [max(int(r), 1) for r in radices]
    span = 1
    for radix in radices:
        span *= radix
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros((0, len(radices)), dtype=np.int64)
    if span >= _KEY_LIMIT:
        return _group_wide(code_columns, radices)
    blocks = row_blocks(n)
    key = np.empty(n, dtype=np.int64)
    map_threads(lambda rows: _mixed_radix_into(key[rows], [c[rows] for c in code_columns], radices), blocks)
    if span <= _DIRECT_FACTOR * n + _DIRECT_SPAN:
        # A small key space is addressed directly: no hashing and no sort. Clearing a flag per
        # possible key costs about a twentieth of sorting one row. Blocks of rows mark and look
        # up their keys on every core (marking a key twice writes the same flag).
        present = np.zeros(span, dtype=bool)
        map_threads(lambda rows: present.__setitem__(key[rows], True), blocks)
        uniques = np.flatnonzero(present)
        # Only the slots of present keys are written, so the table needs no clearing.
        index = np.empty(span, dtype=np.int64)
        index[uniques] = np.arange(len(uniques))
        group = np.empty(n, dtype=np.int64)
        map_threads(lambda rows: np.take(index, key[rows], out=group[rows]), blocks)
    elif n <= _SORT_ROWS:
        uniques, group = np.unique(key, return_inverse=True)
    else:
        # Hashing, then sorting only the distinct keys, beats sorting every row.
        codes, distinct = factorize(key)
        order = np.argsort(distinct)
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        group, uniques = rank[codes], distinct[order]
    if not decode:
        return group, np.asarray(uniques, dtype=np.int64)
    keys = np.empty((len(uniques), len(radices)), dtype=np.int64)
    rest = np.asarray(uniques, dtype=np.int64)
    for j in range(len(radices) - 1, -1, -1):
        rest, keys[:, j] = np.divmod(rest, radices[j])
    return group, keys


def _group_wide(code_columns: Sequence[np.ndarray], radices: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`group_rows` for tuples too wide for an int64 key: compact as we go, then sort."""
    n = len(code_columns[0])
    key = np.zeros(n, dtype=np.int64)
    span = 1
    for codes, radix in zip(code_columns, radices):
        if span * radix >= _KEY_LIMIT:
            key, uniques = factorize(key)
            key = key.astype(np.int64)
            span = len(uniques)
        key *= radix
        key += codes
        span *= radix
    group, _ = factorize(key)
    group = group.astype(np.int64, copy=False)
    # Ids are in order of first appearance: a row starts a group where the running maximum grows.
    running = np.maximum.accumulate(group)
    first = np.flatnonzero(np.r_[True, running[1:] > running[:-1]])
    keys = np.stack([np.asarray(c, dtype=np.int64)[first] for c in code_columns], axis=1)
    order = np.lexsort(keys.T[::-1])
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[group], keys[order]


def _mixed_radix(columns: Sequence[np.ndarray], radices: Sequence[int]) -> np.ndarray:
    return _mixed_radix_into(np.empty(len(columns[0]), dtype=np.int64), columns, radices)


def _mixed_radix_into(key: np.ndarray, columns: Sequence[np.ndarray], radices: Sequence[int]) -> np.ndarray:
    """Write each row's mixed-radix number over ``columns`` into ``key`` (int64) and return it."""
    key[:] = 0
    for codes, radix in zip(columns, radices):
        key *= max(int(radix), 1)
        key += codes
    return key


def _count(ids: np.ndarray, n: int, weights: np.ndarray | None) -> np.ndarray:
    """How many records carry each id ``0 .. n-1``: one per row, or ``weights`` per row for a
    table summarized by its distinct rows (exact while a count stays below 2**53)."""
    if weights is None:
        return np.bincount(ids, minlength=n)
    return np.bincount(ids, weights=weights, minlength=n).astype(np.int64)


# Rows per piece of work handed to a thread.
BLOCK_ROWS = 1 << 20


def row_blocks(n: int) -> list[slice]:
    """The rows ``0 .. n-1`` cut into pieces of :data:`BLOCK_ROWS` (one piece for fewer rows)."""
    return [slice(start, min(start + BLOCK_ROWS, n)) for start in range(0, max(n, 1), BLOCK_ROWS)]


def class_value_counts(row_class: np.ndarray, column: EncodedColumn, n_classes: int,
                       weights: np.ndarray | None = None) -> np.ndarray:
    """The class × value count matrix of a column (``int64 [classes × values]``); rows of class
    -1 (suppressed in a subset) are not counted. With ``weights`` (a table summarized by its
    distinct rows), row ``i`` counts as ``weights[i]`` records.

    When the matrix is small beside the rows, blocks of rows are counted one after the other
    into a matrix per thread, on every core; otherwise all rows are counted in one pass.
    """
    m = column.cardinality
    cells = n_classes * m

    def count(rows: slice) -> np.ndarray:
        classes, codes = row_class[rows], column.codes[rows]
        weight = None if weights is None else weights[rows]
        if classes.size and classes.min() < 0:
            released = classes >= 0
            classes, codes = classes[released], codes[released]
            weight = None if weight is None else weight[released]
        flat = classes * m
        flat += codes
        return _count(flat, cells, weight)

    n = len(row_class)
    if cells > n:
        return count(slice(0, n)).reshape(n_classes, m)
    blocks = row_blocks(n)
    threads = max(1, min(thread_count(), len(blocks), n // max(cells, 1)))

    def count_blocks(share: list[slice]) -> np.ndarray:
        total = np.zeros(cells, dtype=np.int64)
        for rows in share:
            total += count(rows)
        return total

    parts = map_threads(count_blocks, [blocks[i::threads] for i in range(threads)], threads)
    total = parts[0]
    for part in parts[1:]:
        total += part
    return total.reshape(n_classes, m)


def sum_by_group(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Sum the rows of ``values`` (1-D or 2-D, integer) that share a group id.

    A weighted ``bincount`` sums in float64, which is exact for counts below 2**53.
    """
    if values.ndim == 1:
        return np.bincount(group, weights=values, minlength=n_groups).astype(np.int64)
    # One bincount per column beats one over the flattened matrix: no index arithmetic. Large
    # matrices are summed a column per thread.
    out = np.empty((n_groups, values.shape[1]), dtype=np.int64)

    def column(j: int) -> None:
        out[:, j] = np.bincount(group, weights=values[:, j], minlength=n_groups)

    map_threads(column, range(values.shape[1]), None if values.size >= BLOCK_ROWS else 1)
    return out


@dataclass(frozen=True, eq=False)
class SensitiveCounts:
    """How a sensitive column's values spread over the classes.

    Attributes:
        column: the encoded sensitive column.
        counts: ``int64 [classes × values]``, the class × sensitive-value count matrix.
        reference: ``int64 [values]``, the counts over the whole table (by default the
            dataset the classes partition, suppressed records included; see
            :meth:`EquivalenceClasses.with_reference`), the distribution that t-closeness,
            δ-disclosure and β-likeness compare each class with.
        generalization: the sensitive column's hierarchy, for hierarchical EMD, or ``None``.
    """

    column: EncodedColumn
    counts: np.ndarray
    reference: np.ndarray
    generalization: Generalization | None = None

    @property
    def name(self) -> str:
        return self.column.name

    @property
    def ordered(self) -> bool:
        return self.column.ordered

    def class_distribution(self) -> np.ndarray:
        """Row-stochastic matrix: the share of each value within each class."""
        sizes = self.counts.sum(axis=1, keepdims=True)
        return self.counts / np.maximum(sizes, 1)

    def table_distribution(self) -> np.ndarray:
        return self.reference / self.reference.sum()


class EquivalenceClasses:
    """The equivalence classes of a dataset at one generalization node.

    Build them with :meth:`from_dataset`; reach a more general node with :meth:`roll_up`.

    Attributes:
        dataset: the dataset the classes partition.
        levels: the hierarchy level of each quasi-identifier.
        sizes: ``int64 [classes]``, the number of records in each class.
        keys: ``int32 [classes × quasi-identifiers]``, each class's generalized codes.
    """

    def __init__(self, dataset: Dataset, levels: tuple[int, ...] | None, sizes: np.ndarray, keys: np.ndarray | None,
                 row_class: np.ndarray | None, counts: dict[str, np.ndarray],
                 root: "EquivalenceClasses | None" = None,
                 packed: tuple[np.ndarray, Sequence[int]] | None = None,
                 cells: Sequence[Cells] | None = None):
        self.dataset = dataset
        self.levels = levels
        # Local recoding (Mondrian, microaggregation) gives each quasi-identifier its own cells.
        self._cells = list(cells) if cells is not None else None
        self.sizes = sizes
        self._keys = keys
        # (mixed-radix key of each class, radices): the keys, decoded on first use, since a
        # search only needs the class sizes of most nodes it checks.
        self._packed = packed
        self._row_class = row_class
        self._counts = counts
        self._sensitive: dict[str, SensitiveCounts] | None = None
        # A rolled-up node keeps only the classes that were read from the rows and finds its rows
        # through them when asked: a lattice search rolls up many more nodes than it releases.
        self._root = root
        # Per class (and stratum) of these classes, as read from the rows: the records and the
        # sum of their sampling weights, which veil.risk.frequencies keeps here so that every
        # node rolled up from these classes maps them instead of reading the rows again.
        self.key_sums = None

    @property
    def keys(self) -> np.ndarray:
        """``int32 [classes × quasi-identifiers]``, each class's generalized codes, in sorted order."""
        if self._keys is None:
            packed, radices = self._packed
            keys = np.empty((len(packed), len(radices)), dtype=np.int32)
            rest = packed
            for j in range(len(radices) - 1, -1, -1):
                rest, keys[:, j] = np.divmod(rest, radices[j])
            self._keys = keys
        return self._keys

    @property
    def source(self) -> "EquivalenceClasses":
        """The classes read from the rows that these were rolled up from (these classes
        themselves when they were read from the rows)."""
        return self if self._root is None else self._root

    @property
    def row_class(self) -> np.ndarray:
        """The class of every row."""
        if self._row_class is None:
            self._row_class = self.map_from(self._root)[self._root.row_class]
        return self._row_class

    def map_from(self, finer: "EquivalenceClasses") -> np.ndarray:
        """For each class of ``finer`` (classes of the same dataset at this node or below it),
        the index of the class here that contains it.

        Raises:
            ColumnError: ``finer`` is more general than this node in some column.
        """
        columns = self._generalized_keys(finer, self.levels)
        radices = [self.dataset.radix(q, lv) for q, lv in zip(self.dataset.quasi_identifiers, self.levels)]
        span = 1
        for radix in radices:
            span *= max(radix, 1)
        if span < _KEY_LIMIT:
            # Keys are sorted tuples, so their mixed-radix numbers are sorted too.
            here = _mixed_radix([self.keys[:, j] for j in range(len(radices))], radices)
            wanted = _mixed_radix(columns, radices)
            return np.searchsorted(here, wanted)
        import pandas as pd  # tuples wider than 62 bits only

        here = pd.MultiIndex.from_arrays([self.keys[:, j] for j in range(len(radices))])
        return here.get_indexer(pd.MultiIndex.from_arrays(columns))

    def _generalized_keys(self, finer: "EquivalenceClasses", target: tuple[int, ...]) -> list[np.ndarray]:
        """The keys of ``finer``'s classes generalized to the levels ``target``, per column."""
        columns = []
        for j, (q, src, dst) in enumerate(zip(self.dataset.quasi_identifiers, finer.levels, target)):
            if dst < src:
                raise ColumnError(f"cannot roll up column '{q}' from level {src} down to level {dst}.")
            codes = finer.keys[:, j]
            if dst != src:
                codes = self.dataset.generalizations[q].level_map(src, dst)[codes]
            columns.append(codes)
        return columns

    def counts(self, name: str) -> np.ndarray:
        """The class × value count matrix of any column (``int64 [classes × values]``).

        Columns tracked since :meth:`from_dataset` are rolled up with the classes; any other
        column is counted from the rows on first use.
        """
        if name not in self._counts:
            self._counts[name] = class_value_counts(self.row_class, self.dataset.column(name), self.n_classes,
                                                       self.dataset.row_weights)
        return self._counts[name]

    def track(self, names: Sequence[str]) -> None:
        """Build the count matrices of the columns ``names`` (one thread per column)."""
        wanted = [name for name in dict.fromkeys(names) if name not in self._counts]
        self.row_class  # found once, before the threads share it
        for name, matrix in zip(wanted, map_threads(
                lambda name: class_value_counts(self.row_class, self.dataset.column(name), self.n_classes,
                                                  self.dataset.row_weights), wanted)):
            self._counts[name] = matrix

    @property
    def sensitive(self) -> dict[str, SensitiveCounts]:
        """Per sensitive column, its :class:`SensitiveCounts`."""
        if self._sensitive is None:
            self._sensitive = {}
            for name in self.dataset.sensitive:
                col = self.dataset.column(name)
                self._sensitive[name] = SensitiveCounts(col, self.counts(name), col.counts(),
                                                        self.dataset.generalizations.get(name))
        return self._sensitive

    def cells(self, j: int) -> Cells:
        """The cells of the ``j``-th quasi-identifier; ``keys[:, j]`` indexes them."""
        if self._cells is not None:
            return self._cells[j]
        name = self.dataset.quasi_identifiers[j]
        level = self.levels[j]
        col = self.dataset.column(name)
        gen = self.dataset.generalizations.get(name)
        if gen is None:
            return Cells.from_codes(col, np.arange(col.cardinality), col.labels, level=0, height=0)
        return Cells.from_codes(col, gen.lut[:, level], gen.labels[level], level=level, height=gen.height)

    @classmethod
    def from_dataset(cls, dataset: Dataset, levels: Mapping[str, int] | Sequence[int] | None = None,
                     track: Sequence[str] | None = None) -> "EquivalenceClasses":
        """Classes of ``dataset`` with each quasi-identifier generalized to its level (default 0).

        The count matrices of the columns in ``track`` (default: the sensitive columns) are built
        here and carried through roll-ups; a search tracks just what its models and metric read.

        Raises:
            ColumnError: a level for an unknown column, or a level a column's hierarchy lacks.
        """
        levels = _resolve_levels(dataset, levels)
        qis = dataset.quasi_identifiers
        columns = [dataset.generalized_codes(q, lv) for q, lv in zip(qis, levels)]
        radices = [dataset.radix(q, lv) for q, lv in zip(qis, levels)]
        row_class, keys = group_rows(columns, radices)
        keys = keys.astype(np.int32)
        n_classes = len(keys)
        sizes = _count(row_class, n_classes, dataset.row_weights)
        classes = cls(dataset, levels, sizes, keys, row_class, {})
        classes.track(dataset.sensitive if track is None else track)
        return classes

    @property
    def n_classes(self) -> int:
        return len(self.sizes)

    @property
    def n_rows(self) -> int:
        return int(self.sizes.sum())

    @classmethod
    def from_partition(cls, dataset: Dataset, row_class: np.ndarray, keys: np.ndarray, cells: Sequence[Cells],
                       track: Sequence[str] | None = None) -> "EquivalenceClasses":
        """Classes made by a local-recoding algorithm: each row's class, and each class's cell
        per quasi-identifier (``keys[c, j]`` indexes ``cells[j]``).

        Args:
            dataset: the dataset partitioned.
            row_class: the class of every row, ``0 .. classes-1``.
            keys: ``[classes × quasi-identifiers]`` cell indices.
            cells: one :class:`Cells` per quasi-identifier.
            track: columns whose count matrices to build (default: the sensitive columns).
        """
        row_class = np.asarray(row_class, dtype=np.int64)
        keys = np.asarray(keys, dtype=np.int32)
        sizes = _count(row_class, len(keys), dataset.row_weights)
        classes = cls(dataset, None, sizes, keys, row_class, {}, cells=cells)
        classes.track(dataset.sensitive if track is None else track)
        return classes

    def roll_up(self, levels: Mapping[str, int] | Sequence[int]) -> "EquivalenceClasses":
        """The classes at a more general node, merged from these classes without reading rows.

        Raises:
            ColumnError: a target level is below the current level of its column, or these
                classes come from local recoding (they have no levels).
        """
        if self.levels is None:
            raise ColumnError("classes made by local recoding have no hierarchy levels to roll up.")
        target = _resolve_levels(self.dataset, levels)
        columns = self._generalized_keys(self, target)
        radices = [self.dataset.radix(q, lv) for q, lv in zip(self.dataset.quasi_identifiers, target)]
        root = self if self._root is None else self._root
        parent, keys = group_rows(columns, radices, decode=False)
        n_parents = len(keys)
        sizes = sum_by_group(parent, self.sizes, n_parents)
        counts = {name: sum_by_group(parent, matrix, n_parents) for name, matrix in self._counts.items()}
        if keys.ndim == 1:
            return EquivalenceClasses(self.dataset, target, sizes, None, None, counts, root=root,
                                      packed=(keys, radices))
        return EquivalenceClasses(self.dataset, target, sizes, keys.astype(np.int32), None, counts, root=root)

    def subset(self, keep: np.ndarray) -> "EquivalenceClasses":
        """The classes marked in ``keep`` (bool per class), as released after suppressing the rest.

        Rows of dropped classes get class ``-1`` in :attr:`row_class`.
        """
        keep = np.asarray(keep, dtype=bool)
        new_id = np.where(keep, np.cumsum(keep) - 1, -1)
        counts = {name: matrix[keep] for name, matrix in self._counts.items()}
        kept = EquivalenceClasses(self.dataset, self.levels, self.sizes[keep], self.keys[keep],
                                  new_id[self.row_class], counts, cells=self._cells)
        return kept

    def _label_keys(self) -> tuple[list[np.ndarray], list[int]]:
        """Per quasi-identifier, each class's cell as the text a reader sees: an index into that
        column's distinct cell labels (two cells printing the same text share an index), and the
        number of distinct labels."""
        columns, radices = [], []
        for j in range(len(self.dataset.quasi_identifiers)):
            label_of_cell, distinct = factorize(_printed(self.cells(j).labels))
            columns.append(label_of_cell[self.keys[:, j]].astype(np.int64))
            radices.append(len(distinct))
        return columns, radices

    def merge_identical(self, keep: np.ndarray | None = None) -> tuple["EquivalenceClasses", np.ndarray]:
        """The classes as a reader of the published table sees them: classes whose cells print
        the same text on every quasi-identifier are one class.

        A merged class publishes that text; its cell on each quasi-identifier covers every
        value its members' cells cover. Its class × value counts are the sums of its members'.

        Args:
            keep: bool per class; classes outside it (suppressed ones, whose cells are not
                published) are never merged. Default: every class may merge.

        Returns:
            ``(classes, class_of)``: the merged classes, numbered in the order of their first
            member, and for each class here the class it belongs to there. Without identical
            classes these classes themselves are returned, with ``class_of`` the identity.
        """
        columns, radices = self._label_keys()
        if keep is not None and not np.all(keep):
            # Every suppressed class gets a key of its own.
            keep = np.asarray(keep, dtype=bool)
            columns.append(np.where(keep, 0, np.cumsum(~keep)))
            radices.append(int((~keep).sum()) + 1)
        group, _ = group_rows(columns, radices, decode=False)
        n_new = int(group.max()) + 1 if len(group) else 0
        if n_new == self.n_classes:
            return self, np.arange(self.n_classes)
        # Number the merged classes by their first member.
        first = np.full(n_new, self.n_classes, dtype=np.int64)
        np.minimum.at(first, group, np.arange(self.n_classes))
        order = np.argsort(first, kind="stable")
        rank = np.empty(n_new, dtype=np.int64)
        rank[order] = np.arange(n_new)
        class_of = rank[group]
        first = first[order]
        sizes = sum_by_group(class_of, self.sizes, n_new)
        counts = {name: sum_by_group(class_of, matrix, n_new) for name, matrix in self._counts.items()}
        keys = np.empty((n_new, self.keys.shape[1]), dtype=np.int32)
        cells, changed = [], False
        for j in range(self.keys.shape[1]):
            cell = self.keys[:, j]
            head = cell[first]
            if np.array_equal(cell, head[class_of]):
                # Every merged class's members share one cell: it stays as it is.
                keys[:, j] = head
                cells.append(self.cells(j))
                continue
            changed = True
            cells.append(_union_cells(self.cells(j), cell, class_of, n_new, head))
            keys[:, j] = np.arange(n_new, dtype=np.int32)
        rows = self.row_class
        row_class = np.where(rows >= 0, class_of[np.maximum(rows, 0)], -1)
        kept_cells = None if self._cells is None and not changed else cells
        merged = EquivalenceClasses(self.dataset, self.levels if not changed else None, sizes, keys, row_class,
                                    counts, cells=kept_cells)
        return merged, class_of

    def printed_as(self, text: str) -> np.ndarray:
        """Bool per class: whether every quasi-identifier cell of the class prints as ``text``."""
        out = np.ones(self.n_classes, dtype=bool)
        for j in range(len(self.dataset.quasi_identifiers)):
            out &= (_printed(self.cells(j).labels) == text)[self.keys[:, j]]
        return out

    def with_reference(self, reference: Mapping[str, Mapping[str, int]]) -> "EquivalenceClasses":
        """These classes, with the sensitive columns named in ``reference`` compared with the
        distribution given there instead of their distribution in the dataset.

        This is how a released table is judged as ARX and ``veil anonymize`` judge it: after
        suppression, t-closeness, δ-disclosure and β-likeness compare every class with the table
        the release was made from, suppressed records included, which the release's manifest
        records. A column's values become those of the reference (values only there hold no
        record of any class), encoded as the dataset encodes the column (its order and missing
        values), with its hierarchy aligned to them. Entries for columns that are not sensitive
        in the dataset are ignored.

        Args:
            reference: per sensitive column, each value (as text) → its number of records.

        Raises:
            DataError: a count is not a whole number of at least 1, or a value of the column
                in these classes is missing from the reference.
            ColumnError: the column's order does not list a value of the reference.
            HierarchyError: the column's hierarchy does not cover a value of the reference.
        """
        if not isinstance(reference, Mapping):
            raise DataError("a reference gives, per sensitive column, each value's number of records; give the "
                            "release's manifest unchanged.")
        sensitive = dict(self.sensitive)
        for name, distribution in reference.items():
            if name not in sensitive:
                continue
            if not isinstance(distribution, Mapping):
                raise DataError(f"the reference distribution of '{name}' must map each value to its number of "
                                "records; give the release's manifest unchanged.")
            sensitive[name] = self._reference_counts(name, distribution)
        out = EquivalenceClasses(self.dataset, self.levels, self.sizes, self._keys, self._row_class,
                                 self._counts, root=self._root, packed=self._packed, cells=self._cells)
        out._sensitive = sensitive
        return out

    def _reference_counts(self, name: str, distribution: Mapping[str, int]) -> SensitiveCounts:
        col = self.dataset.column(name)
        texts = [str(v) for v in distribution]
        counts = list(distribution.values())
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1 for v in counts):
            raise DataError(f"the reference distribution of '{name}' must give each value a whole number of "
                            "records of at least 1; give the release's manifest unchanged.")
        held = np.asarray(col.labels, dtype=object)
        everything = np.concatenate([np.asarray(texts, dtype=object), held])
        if col.is_numeric:
            # The same number may be spelled 25 or 25.0 in a file and in a manifest.
            everything = canonical_numeric_texts(everything)
        union = encode_column(name, everything, missing_values=self.dataset.missing_values,
                              order=self.dataset.orders.get(name))
        ref_codes, held_codes = union.codes[:len(texts)], union.codes[len(texts):]
        ref = np.bincount(ref_codes, weights=np.asarray(counts, dtype=float),
                          minlength=union.cardinality).astype(np.int64)
        present = np.flatnonzero(col.counts() > 0)
        absent = present[ref[held_codes[present]] == 0]
        if len(absent):
            raise DataError(f"the value {str(held[absent[0]])!r} of '{name}' is missing from the reference "
                            "distribution; give the manifest of the release being checked.")
        counts_matrix = np.zeros((self.n_classes, union.cardinality), dtype=np.int64)
        np.add.at(counts_matrix.T, held_codes, self.counts(name).T)
        hierarchy = self.dataset.hierarchies.get(name)
        generalization = hierarchy.align(union) if hierarchy is not None else None
        return SensitiveCounts(union, counts_matrix, ref, generalization)

    def class_labels(self):
        """One row per class: the generalized value of each quasi-identifier and the class size
        (a pandas DataFrame)."""
        import pandas as pd

        data = {q: np.asarray(self.cells(j).labels, dtype=object)[self.keys[:, j]]
                for j, q in enumerate(self.dataset.quasi_identifiers)}
        data["size"] = self.sizes
        return pd.DataFrame(data)


def _printed(labels) -> np.ndarray:
    """Each cell label as the text a reader sees (``str`` of it), as an object array."""
    return np.array([str(label) for label in labels], dtype=object)


def _union_cells(cells: Cells, cell: np.ndarray, class_of: np.ndarray, n_new: int, head: np.ndarray) -> Cells:
    """One cell per merged class covering the codes of its members' cells (``cell[c]`` is the
    cell of class ``c``), labelled as its first member's (``head``)."""
    indptr, indices = cells.members()
    lengths = indptr[cell + 1] - indptr[cell]
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    codes = indices[np.repeat(indptr[cell], lengths) + offsets]
    owner = np.repeat(class_of, lengths)
    card = cells.column.cardinality
    pairs = np.unique(owner * card + codes)
    owner, codes = np.divmod(pairs, card)
    new_indptr = np.searchsorted(owner, np.arange(n_new + 1))
    labels = np.asarray(cells.labels, dtype=object)[head]
    return Cells.from_sets(cells.column, new_indptr, codes, labels)



def population_view(sample: Dataset, population: Dataset) -> Dataset:
    """The population table read with the sample's quasi-identifiers, hierarchies and missing
    values, so that its records generalize as the sample's do.

    Raises:
        DataError: the population lacks a quasi-identifier of the sample.
        HierarchyError: a hierarchy of the sample does not cover a value of the population.
    """
    missing = [q for q in sample.quasi_identifiers if q not in population.columns]
    if missing:
        raise DataError(f"the population table has no column '{missing[0]}'; it needs every quasi-identifier.")
    return Dataset(population.table, quasi_identifiers=sample.quasi_identifiers,
                   hierarchies={q: h for q, h in sample.hierarchies.items() if q in sample.quasi_identifiers},
                   missing_values=sample.missing_values)


def match_population(classes: EquivalenceClasses, view: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """The population's records per class of a sample, at the classes' generalization levels.

    Args:
        classes: classes of the sample at a full-domain node (they have levels).
        view: the population as :func:`population_view` reads it.

    Returns:
        ``(sizes, class_of_record)``: per sample class, the number of population records with the
        same generalized quasi-identifiers; per population record, the sample class it falls in
        (−1 when its generalized tuple is in no class of the sample).

    Raises:
        DataError: the classes come from local recoding (they have no levels to generalize the
            population to), or a class has more records than its match in the population (the
            population does not cover the sample).
    """
    if classes.levels is None:
        raise DataError("a population can be matched only with a full-domain generalization; local recoding "
                        "publishes cells the population's records cannot be generalized to.")
    import pandas as pd  # its MultiIndex matches tuples of labels; population tables only

    sample = classes.dataset
    pop_classes = EquivalenceClasses.from_dataset(view, classes.levels, track=())
    # Match classes on their generalized labels, since the two tables have their own dictionaries.
    sample_keys = pd.MultiIndex.from_arrays(
        [sample.labels(q, lv)[classes.keys[:, j]] for j, (q, lv) in
         enumerate(zip(sample.quasi_identifiers, classes.levels))])
    pop_keys = pd.MultiIndex.from_arrays(
        [view.labels(q, lv)[pop_classes.keys[:, j]] for j, (q, lv) in
         enumerate(zip(view.quasi_identifiers, pop_classes.levels))])
    where = pop_keys.get_indexer(sample_keys)
    sizes = np.where(where >= 0, pop_classes.sizes[np.maximum(where, 0)], 0)
    if (sizes < classes.sizes).any():
        raise DataError("a class of the table has more records than the population table holds with its "
                        "values; the population must contain every record of the table.")
    sample_of_pop = np.full(pop_classes.n_classes, -1, dtype=np.int64)
    found = where >= 0
    sample_of_pop[where[found]] = np.flatnonzero(found)
    return sizes, sample_of_pop[pop_classes.row_class]


def population_class_sizes(classes: EquivalenceClasses, population: Dataset) -> np.ndarray:
    """For each class, the number of population records with the same generalized QI values.

    Raises:
        DataError: the population lacks a quasi-identifier or does not contain every record of the
            table, or the classes come from local recoding.
    """
    return match_population(classes, population_view(classes.dataset, population))[0]


def _resolve_levels(dataset: Dataset, levels) -> tuple[int, ...]:
    qis = dataset.quasi_identifiers
    if levels is None:
        return (0,) * len(qis)
    if isinstance(levels, Mapping):
        unknown = [k for k in levels if k not in qis]
        if unknown:
            raise ColumnError(f"a level was given for '{unknown[0]}', which is not a quasi-identifier.")
        resolved = tuple(int(levels.get(q, 0)) for q in qis)
    else:
        resolved = tuple(int(v) for v in levels)
        if len(resolved) != len(qis):
            raise ColumnError(f"give one level per quasi-identifier ({len(qis)}), not {len(resolved)}.")
    for q, lv in zip(qis, resolved):
        if lv < 0:
            raise ColumnError(f"the level of column '{q}' must be 0 or more, not {lv}.")
        if lv > 0:
            gen = dataset.generalizations.get(q)
            if gen is None:
                raise ColumnError(f"column '{q}' has no hierarchy, so it cannot be generalized to level {lv}.")
            if lv > gen.height:
                raise ColumnError(f"column '{q}' has levels 0 to {gen.height}, not {lv}.")
    return resolved
