"""The equivalence classes of lattice nodes during a full-domain search, rolled up and cached.

A search visits thousands of nodes of one dataset's generalization lattice. Each node's classes
are merged from those of a more specific node already held, never re-read from the rows, and the
work is split so that a node costs only what the search asks of it:

* its **class sizes**, which every metric's lower bound reads: each source class's key (its
  codes in mixed radix) is rewritten in the digit of the column that changes (or, when several
  change, looked up a run of adjacent columns at a time: their codes combined, a table of
  their digits), the keys are grouped through a table indexed by key or by sorting, and the
  sizes summed;
* its **count matrices** (class × value counts of the columns the models and the metric read),
  summed over the same grouping only when the node is evaluated (a node settled from its sizes
  never gets them), from the nearest node below that has them: a ``bincount`` per column, a
  large source's nonzero cells, or, once a search is long, SciPy's sparse product in integers.

The classes come out exactly as :meth:`veil.classes.EquivalenceClasses.roll_up` makes them (in
the order of their keys, with the same sizes and counts), so models and metrics give the same
answers on them.
"""

from __future__ import annotations

import sys
from collections import OrderedDict

import numpy as np

from veil.anonymize.lattice import Lattice
from veil.classes import _KEY_LIMIT, EquivalenceClasses, SensitiveCounts, group_rows

# Bytes of class keys, sizes and count matrices kept for roll-ups; the least recently used nodes
# are dropped first (the bottom node is always kept).
CACHE_BYTES = 256 * 2**20
# Above this many classes a source is grouped by veil.classes.group_rows (hashing) rather than
# by its keys.
_SORT_CLASSES = 100_000
# Keys of at most _DIRECT_FACTOR × classes + _DIRECT_SPAN possible values are grouped in a table
# indexed by key; larger key spaces by sorting.
_DIRECT_FACTOR = 16
_DIRECT_SPAN = 4096
# Count matrices merged with NumPy before SciPy's compiled kernel is imported and used.
_MERGES_BEFORE_KERNEL = 64
# Before that, a source of at least this many classes is merged from its nonzero cells.
_SPARSE_CLASSES = 4096
_NONE = np.iinfo(np.int64).max
# A roll-up that changes several columns reads the source's codes by runs of adjacent columns
# with at most this many combined codes (a table of that many digits each).
_RUN_CODES = 8192
# ... and at most this many per class of the source (a table costs more than it spares below).
_RUN_SHARE = 0.1


def merge_rows(parent: np.ndarray, n_groups: int, matrix: np.ndarray, compiled: bool = True) -> np.ndarray:
    """``[n_groups × columns]``: the rows of the integer ``matrix`` summed by ``parent`` id, in the
    matrix's own integer type (int32 or int64; the caller makes sure the sums fit).

    With ``compiled``, the sum is the product of a sparse 0/1 matrix (one entry per row of
    ``matrix``) with ``matrix`` by SciPy's kernel, in integers; otherwise a ``bincount`` per
    column (in float64, exact below 2**53), which spares importing SciPy.
    """
    matrix = np.ascontiguousarray(matrix)
    if matrix.dtype not in (np.int32, np.int64):
        matrix = matrix.astype(np.int64)
    rows, columns = matrix.shape
    kernel = _sparse_kernel() if compiled else None
    if kernel is None:
        out = np.empty((n_groups, columns), dtype=matrix.dtype)
        for j in range(columns):
            out[:, j] = np.bincount(parent, weights=matrix[:, j], minlength=n_groups)
        return out
    parent = np.ascontiguousarray(parent, dtype=np.int64)
    out = np.zeros((n_groups, columns), dtype=matrix.dtype)
    kernel(n_groups, rows, columns, np.arange(rows + 1, dtype=np.int64), parent, np.ones(rows, dtype=matrix.dtype),
           matrix.ravel(), out.ravel())
    return out


_KERNEL: list = []


def _sparse_kernel():
    """SciPy's compiled kernel behind a compressed-column matrix times a dense one (``Y += A·X``,
    called directly: building a matrix object per node costs more than the product), or ``None``
    if this SciPy has none."""
    if not _KERNEL:
        try:
            from scipy.sparse._sparsetools import csc_matvecs
        except ImportError:  # pragma: no cover - a SciPy without the private module
            csc_matvecs = None
        _KERNEL.append(csc_matvecs)
    return _KERNEL[0]


def sorted_groups(key: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` for non-negative int64 keys below ``span``.

    When the keys leave room, each is sorted with its position in its low bits: a plain sort of
    those pairs is several times faster than the argsort ``np.unique`` runs.
    """
    n = len(key)
    shift = max(int(n - 1).bit_length(), 1)
    if span < 1 << (62 - shift):
        pairs = np.sort(key << shift | np.arange(n))
        order, ordered = pairs & ((1 << shift) - 1), pairs >> shift
    else:
        order = np.argsort(key)
        ordered = key[order]
    new = np.empty(n, dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    group = np.empty(n, dtype=np.int64)
    group[order] = np.cumsum(new) - 1
    return ordered[new], group


def _span(radices) -> int:
    span = 1
    for radix in radices:
        span *= max(int(radix), 1)
    return span


class NodeClasses:
    """The classes of one node as a search holds them.

    Attributes:
        levels: the node's level per quasi-identifier.
        classes: the :class:`~veil.classes.EquivalenceClasses` (count matrices filled in once
            :meth:`ClassStore.with_counts` asked for them).
        packed: each class's key, its codes in mixed radix over ``radices`` (sorted), or
            ``None`` when the key does not fit an int64.
        radices: the number of codes of each quasi-identifier at ``levels``.
    """

    __slots__ = ("levels", "classes", "packed", "radices", "_pending", "bytes", "columns", "cells")

    def __init__(self, levels: tuple[int, ...], classes: EquivalenceClasses, packed: np.ndarray | None,
                 radices: tuple[int, ...], pending: tuple[np.ndarray, "NodeClasses"] | None):
        self.levels = levels
        self.classes = classes
        self.packed = packed
        self.radices = radices
        # (each source class's class here, the source) while the count matrices are not summed.
        self._pending = pending
        self.bytes = 0
        # The classes' codes by runs of columns, once a roll-up needed them; the nonzero
        # cells of the count matrices, once a merge from a large source needed them.
        self.columns: list | None = None
        self.cells: dict | None = None

    @property
    def sizes(self) -> np.ndarray:
        return self.classes.sizes

    @property
    def n_classes(self) -> int:
        return len(self.classes.sizes)


class ClassStore:
    """Classes of the nodes of one dataset's lattice, each rolled up from a cached node below it
    (a cached node just below, else the cached node below with the fewest classes).

    Args:
        base: the classes of the bottom node, with the count matrices of the columns the models
            and the metric read.
        lattice: the lattice searched.
        cache_bytes: how much the cache may hold (keys, sizes and count matrices).
    """

    def __init__(self, base: EquivalenceClasses, lattice: Lattice, cache_bytes: int = CACHE_BYTES):
        self.dataset = base.dataset
        self.base = base
        self.lattice = lattice
        self.cache_bytes = cache_bytes
        # Whether the classes carry count matrices (of the columns the models and metric read).
        self.counted = bool(base._counts)
        qis = self.dataset.quasi_identifiers
        self.generalizations = [self.dataset.generalizations.get(q) for q in qis]
        self.radix_at = [[self.dataset.radix(q, lv) for lv in range(int(h) + 1)]
                         for q, h in zip(qis, lattice.heights)]
        # Each sensitive column's distribution over the whole table, read once.
        self.reference = {name: self.dataset.column(name).counts() for name in self.dataset.sensitive}
        # Each node's predecessors (one level down in one column), -1 where a column is at 0.
        self.below = np.where(lattice.levels > 0, np.arange(len(lattice))[:, None] - lattice.strides, -1)
        levels = tuple(lattice.levels[0].tolist())
        radices = tuple(self.radix_at[j][0] for j in range(len(qis)))
        packed = None
        if _span(radices) < _KEY_LIMIT:
            packed = np.zeros(base.n_classes, dtype=np.int64)
            for j, radix in enumerate(radices):
                packed *= radix
                packed += base.keys[:, j]
        # The bottom's classes, with the count matrices in int32 when every count fits (half the
        # memory to sum and to hold; the models read the same numbers).
        counts = {name: self._compact(matrix) for name, matrix in base._counts.items()}
        bottom_classes = SearchClasses(self.dataset, base.levels, base.sizes, base.keys, base._row_class, counts)
        bottom_classes.reference = self.reference
        bottom = NodeClasses(levels, bottom_classes, packed, radices, None)
        self.cache: OrderedDict[int, NodeClasses] = OrderedDict({0: bottom})
        self.held = self._bytes(bottom)
        # Class counts of the cached nodes (the largest int64 elsewhere), to pick a source fast.
        self.cached_classes = np.full(len(lattice), _NONE, dtype=np.int64)
        self.cached_classes[0] = bottom.n_classes
        # Nodes rolled up but not (yet) cached: their sizes were asked for, not their counts.
        self.probed: dict[int, NodeClasses] = {}
        self.probed_bytes = 0
        self.merges = 0
        # Whether every node's key fits an int64 at any mix of levels (the keys are rewritten a
        # column at a time), and the tables that group keys by direct addressing.
        self.narrow = _span(max(r) for r in self.radix_at) < _KEY_LIMIT
        self._step_cache: dict[tuple[int, int, int], np.ndarray] = {}
        self._digit_cache: dict[tuple[int, int, int, int], np.ndarray] = {}
        self._present = np.zeros(0, dtype=bool)
        self._index = np.zeros(0, dtype=np.int64)

    # ---------------------------------------------------------------------------------------

    def sizes_of(self, node: int) -> NodeClasses:
        """The classes of ``node`` with their sizes (count matrices summed on demand by
        :meth:`with_counts`). Until :meth:`keep` caches it as a source for other nodes it is held
        apart, so that asking again costs nothing."""
        entry = self.cache.get(node)
        if entry is not None:
            self.cache.move_to_end(node)
            return entry
        entry = self.probed.get(node)
        if entry is None:
            source = self.cache[self._source(node)]
            entry = self._roll_up(source, tuple(self.lattice.levels[node].tolist()))
            self.probed[node] = entry
            entry.bytes = self._bytes(entry)
            self.probed_bytes += entry.bytes
            if self.probed_bytes > self.cache_bytes // 4:
                # Held apart only to spare a second roll-up: dropped wholesale when they grow.
                self.probed = {node: entry}
                self.probed_bytes = entry.bytes
        return entry

    def classes_of(self, node: int) -> EquivalenceClasses:
        """The classes of ``node`` with every count matrix, cached."""
        entry = self.sizes_of(node)
        self.keep(node, entry)
        return self.with_counts(entry)

    def with_counts(self, entry: NodeClasses) -> EquivalenceClasses:
        """``entry``'s classes, with the count matrices summed if they were not yet."""
        if entry._pending is not None:
            parent, source = entry._pending
            # A source that was never asked for its count matrices does not get them now: the
            # merge runs from the nearest node below that has them, the groupings composed.
            while source._pending is not None:
                below, source = source._pending
                parent = parent[below]
            n = entry.n_classes
            # SciPy's kernel sums faster than NumPy, once a search is long enough to pay for
            # importing it.
            self.merges += 1
            compiled = self.merges > _MERGES_BEFORE_KERNEL or "scipy.sparse" in sys.modules
            if compiled or source.cells is None and source.n_classes < _SPARSE_CLASSES:
                entry.classes._counts.update((name, merge_rows(parent, n, matrix, compiled))
                                             for name, matrix in source.classes._counts.items())
            else:
                entry.classes._counts.update(self._merge_cells(source, parent, n))
            entry._pending = None
            if entry.bytes:  # cached already: count the matrices in
                grown = self._bytes(entry)
                self.held += grown - entry.bytes
                entry.bytes = grown
                self._evict()
        return entry.classes

    @staticmethod
    def _merge_cells(source: NodeClasses, parent: np.ndarray, n: int):
        """The count matrices summed from the source's nonzero cells (kept from one merge to the
        next): a source of many small classes holds far fewer nonzero cells than cells."""
        if source.cells is None:
            source.cells = {}
            for name, matrix in source.classes._counts.items():
                flat = np.flatnonzero(matrix)
                rows, columns = np.divmod(flat, matrix.shape[1])
                source.cells[name] = (rows, columns, matrix.ravel()[flat].astype(float), matrix.shape[1], matrix.dtype)
        for name, (rows, columns, weights, width, dtype) in source.cells.items():
            cell = np.take(parent, rows)
            cell *= width
            cell += columns
            yield name, np.bincount(cell, weights=weights, minlength=n * width).astype(dtype).reshape(n, width)

    def keep(self, node: int, entry: NodeClasses) -> None:
        """Cache ``entry`` as the classes of ``node`` (a source for later roll-ups; its count
        matrices, if still pending, are summed when some node rolled up from it needs them)."""
        if self.probed.pop(node, None) is not None:
            self.probed_bytes -= entry.bytes
        if node in self.cache:
            return
        if entry._pending is not None and entry._pending[1]._pending is not None:
            # Its source has no count matrices either: point it at the nearest node below that
            # has them, so that a cached node never keeps a chain of uncounted nodes alive.
            parent, source = entry._pending
            while source._pending is not None:
                below, source = source._pending
                parent = parent[below]
            entry._pending = (parent, source)
        entry.bytes = self._bytes(entry)
        self.cache[node] = entry
        self.cached_classes[node] = entry.n_classes
        self.held += entry.bytes
        self._evict()

    def part(self, classes: EquivalenceClasses, rows: np.ndarray) -> EquivalenceClasses:
        """The classes ``rows`` of ``classes`` (their sizes and count matrices; no keys), for a
        model whose verdict on a class reads that class alone."""
        counts = {name: matrix[rows] for name, matrix in classes._counts.items()}
        part = SearchClasses(self.dataset, classes.levels, classes.sizes[rows], None, None, counts)
        part.reference = self.reference
        return part

    def _evict(self) -> None:
        """Drop the least recently used nodes (never the bottom) until the cache fits."""
        while self.held > self.cache_bytes and len(self.cache) > 1:
            oldest = next(k for k in self.cache if k != 0)
            self.held -= self.cache.pop(oldest).bytes
            self.cached_classes[oldest] = _NONE

    # ---------------------------------------------------------------------------------------

    def _source(self, node: int) -> int:
        """A cached node below ``node``: of those just below, the one with the fewest classes;
        when none is cached, of all below."""
        below = self.below[node]
        near = self.cached_classes[below[below >= 0]]
        if len(near) and near.min() < _NONE:
            return int(below[below >= 0][np.argmin(near)])
        cached = np.fromiter(self.cache.keys(), dtype=np.int64, count=len(self.cache))
        below = np.all(self.lattice.levels[cached] <= self.lattice.levels[node], axis=1)
        cached = cached[below]
        return int(cached[np.argmin(self.cached_classes[cached])])

    def _roll_up(self, source: NodeClasses, target: tuple[int, ...]) -> NodeClasses:
        """The classes at ``target`` merged from those of ``source`` (sizes summed; count
        matrices pending)."""
        radices = tuple(self.radix_at[j][b] for j, b in enumerate(target))
        src = source.classes
        if source.packed is None or src.n_classes > _SORT_CLASSES or not self.narrow:
            return self._roll_up_grouped(source, target, radices)
        changed = [j for j, (a, b) in enumerate(zip(source.levels, target)) if a != b]
        if len(changed) == 1:
            # Each source class's key at the target levels, from its key at the source levels:
            # only the digit of the column that changes is rewritten, and its radix.
            j = changed[0]
            stride = _span(radices[j + 1:])
            if src._keys is not None:  # the codes are at hand: one division instead of two
                code = src._keys[:, j]
                high = source.packed // (stride * source.radices[j])
            else:
                high, code = np.divmod(source.packed // stride, source.radices[j])
            key = high * (radices[j] - source.radices[j])
            key += np.take(self._steps(j, source.levels[j], target[j]), code)
            key *= stride
            key += source.packed
        else:
            # Several columns change: the key from each class's codes, a lookup per run of
            # adjacent columns (their codes combined, a table of their digits at the target).
            if source.columns is None:
                source.columns = self._combined_codes(source)
            strides = [1] * len(radices)
            for j in range(len(radices) - 2, -1, -1):
                strides[j] = strides[j + 1] * radices[j + 1]
            key = None
            for run, codes in source.columns:
                table = self._digits(run[0], source.levels[run[0]], target[run[0]], strides[run[0]])
                for j in run[1:]:
                    digits = self._digits(j, source.levels[j], target[j], strides[j])
                    table = np.add.outer(table, digits).ravel()
                if key is None:
                    key = np.take(table, codes)
                else:
                    key += np.take(table, codes)
        span = _span(radices)
        n = len(key)
        if span <= _DIRECT_FACTOR * n + _DIRECT_SPAN:
            # Few possible keys: mark them in a table (kept between nodes, cleared after use).
            present = self._scratch(span)
            present[key] = True
            packed = np.flatnonzero(present[:span])
            present[packed] = False
            index = self._index
            index[packed] = np.arange(len(packed))
            parent = np.take(index, key)
        else:
            # Grouping by sorting: the classes end up in key order, as group_rows gives them.
            packed, parent = sorted_groups(key, span)
        sizes = np.bincount(parent, weights=src.sizes, minlength=len(packed)).astype(np.int64)
        keys = None
        if len(changed) == 1 and src._keys is not None:
            # The source's codes are at hand (a metric read them): the classes' codes are those of
            # one member each, the changed column generalized (a gather instead of a decoding).
            first = np.empty(len(packed), dtype=np.int64)
            first[parent] = np.arange(n)
            keys = np.take(src._keys, first, axis=0)
            j = changed[0]
            keys[:, j] = np.take(self.generalizations[j].level_map(source.levels[j], target[j]), keys[:, j])
        return self._entry(source, target, sizes, packed, radices, parent, keys)

    @staticmethod
    def _combined_codes(source: NodeClasses) -> list[tuple[tuple[int, ...], np.ndarray]]:
        """The source's columns in runs of adjacent ones whose codes combine (in mixed radix over
        the source's radices) into at most :data:`_RUN_SHARE` codes per class and
        :data:`_RUN_CODES` in all, each run with its classes' combined codes: a roll-up from a
        node of many classes then reads one table per run instead of one per column."""
        keys = source.classes.keys
        limit = min(_RUN_CODES, source.n_classes * _RUN_SHARE)
        runs: list[list[int]] = []
        width = 0
        for j, radix in enumerate(source.radices):
            if runs and width * radix <= limit:
                runs[-1].append(j)
                width *= radix
            else:
                runs.append([j])
                width = radix
        out = []
        for run in runs:
            # Combined codes of a run of several columns stay below _RUN_CODES.
            codes = keys[:, run[0]].astype(np.int32)
            for j in run[1:]:
                codes = codes * source.radices[j] + keys[:, j]
            out.append((tuple(run), np.ascontiguousarray(codes)))
        return out

    def _steps(self, j: int, a: int, b: int) -> np.ndarray:
        """For each code of column ``j`` at level ``a``, its code at level ``b`` minus itself."""
        cached = self._step_cache.get((j, a, b))
        if cached is None:
            cached = self.generalizations[j].level_map(a, b).astype(np.int64) - np.arange(self.radix_at[j][a])
            self._step_cache[(j, a, b)] = cached
        return cached

    def _digits(self, j: int, a: int, b: int, stride: int) -> np.ndarray:
        """For each code of column ``j`` at level ``a``, its code at level ``b`` times ``stride``."""
        cached = self._digit_cache.get((j, a, b, stride))
        if cached is None:
            cached = self.generalizations[j].level_map(a, b).astype(np.int64) * stride if a != b else \
                np.arange(self.radix_at[j][a], dtype=np.int64) * stride
            self._digit_cache[(j, a, b, stride)] = cached
        return cached

    def _scratch(self, span: int) -> np.ndarray:
        """A cleared table of at least ``span`` flags, and an index table as long."""
        if len(self._present) < span:
            self._present = np.zeros(span, dtype=bool)
            self._index = np.empty(span, dtype=np.int64)
        return self._present

    def _roll_up_grouped(self, source: NodeClasses, target: tuple[int, ...], radices: tuple[int, ...]) -> NodeClasses:
        """:meth:`_roll_up` through :func:`veil.classes.group_rows` (many classes, or keys too wide
        for an int64)."""
        src = source.classes
        keys = src.keys
        columns = [keys[:, j] if a == b else self.generalizations[j].level_map(a, b)[keys[:, j]]
                   for j, (a, b) in enumerate(zip(source.levels, target))]
        parent, packed = group_rows(columns, radices, decode=False)
        sizes = np.bincount(parent, weights=src.sizes, minlength=len(packed)).astype(np.int64)
        return self._entry(source, target, sizes, packed, radices, parent)

    def _entry(self, source: NodeClasses, target: tuple[int, ...], sizes: np.ndarray, packed: np.ndarray,
               radices: tuple[int, ...], parent: np.ndarray, keys: np.ndarray | None = None) -> NodeClasses:
        src = source.classes
        root = self.base if src._root is None else src._root
        if packed.ndim == 1:
            classes = SearchClasses(self.dataset, target, sizes, keys, None, {}, root=root, packed=(packed, list(radices)))
        else:  # tuples wider than an int64 key come back decoded
            classes = SearchClasses(self.dataset, target, sizes, packed.astype(np.int32), None, {}, root=root)
            packed = None
        classes.reference = self.reference
        return NodeClasses(target, classes, packed, radices, (parent, source) if self.counted else None)

    @staticmethod
    def _compact(matrix: np.ndarray) -> np.ndarray:
        """A count matrix in int32 when its counts all fit (they sum to at most the records)."""
        return matrix.astype(np.int32) if matrix.size and int(matrix.sum()) < 2**31 else matrix

    @staticmethod
    def _bytes(entry: NodeClasses) -> int:
        classes = entry.classes
        total = classes.sizes.nbytes + (entry.packed.nbytes if entry.packed is not None else 0)
        total += classes._keys.nbytes if classes._keys is not None else 0
        return total + sum(m.nbytes for m in classes._counts.values())


class SearchClasses(EquivalenceClasses):
    """The classes of a node in a search: their sensitive counts compare each class with the
    table's distribution the store read once (``reference``), as
    :attr:`EquivalenceClasses.sensitive` would after counting the rows again."""

    reference: dict[str, np.ndarray] = {}

    @property
    def sensitive(self) -> dict[str, SensitiveCounts]:
        if self._sensitive is None and all(name in self._counts for name in self.reference):
            self._sensitive = {
                name: SensitiveCounts(self.dataset.column(name), self._counts[name], reference,
                                      self.dataset.generalizations.get(name))
                for name, reference in self.reference.items()}
        return super().sensitive
