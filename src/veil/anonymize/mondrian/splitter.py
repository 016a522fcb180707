"""The Mondrian splitter over the records of a table: the strict and relaxed cuts, round by round.

**Modes.** ``strict`` (strict multidimensional partitioning): the left part holds the values up
to the median and the right part the values above it (when the median is the largest value, the
values below it and the rest), so partitions never overlap. ``relaxed`` (LeFevre's relaxed
multidimensional partitioning): the records are ordered by the value and cut into halves of
equal size, so records equal to the median go to either side; the published cells are computed
from each partition's records and may overlap. A column split along its hierarchy is split into
a part per child of the partition's node, in either mode (:mod:`.dimensions`).

**Vectorized, level-synchronous.** Every round processes all partitions at once: rows are kept
grouped by partition, per-partition minima and maxima are ``reduceat`` calls, the dimensions are
ranked per partition, and the rows of all partitions to split are ordered by (partition, value)
with one stable ``argsort``; medians and part boundaries are read from that order. The privacy
models are evaluated once per round on all candidate parts together (their sizes and
part × sensitive-value count matrices, one ``bincount`` each); a partition whose best dimension
is refused tries its next widest in the same round. A round costs one sort of the active records
within their partitions plus linear passes, and rounds number about log₂(n/k): O(n log n) per
round, O(n log n · log(n/k)) in all.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from veil.anonymize.mondrian.dimensions import HIERARCHY, SET, SET_WIDTH_CELLS, Dimension
from veil.anonymize.mondrian.parts import Parts
from veil.classes import SensitiveCounts
from veil.errors import ParameterError
from veil.models.base import PrivacyModel


def partition_records(n: int, dims: list[Dimension], tracked, sensitive: dict[str, SensitiveCounts],
                      models: Sequence[PrivacyModel], mode: str, min_part: int,
                      progress: Callable[[int, int], None] | None):
    """Partition the ``n`` records of a table, round by round (see the module notes).

    Args:
        n: the records of the table.
        dims: the dimension of every quasi-identifier (:func:`~veil.anonymize.mondrian.dimensions.dimension`).
        tracked: ``(name, column, codes)`` of every sensitive column the models read.
        sensitive: per such column, its counts over the whole table (the models' reference).
        models: the privacy models every part must satisfy.
        mode: ``"strict"`` or ``"relaxed"``.
        min_part: a size every part must reach (:func:`~veil.anonymize.mondrian.parts.min_part_size`).
        progress: called as ``progress(records_in_final_partitions, records)`` each round.

    Returns:
        ``(partition, rounds, node, parent)``: the partition of every row, the number of rounds,
        the split-tree node of every partition, and the parent of every node (-1 for the root,
        the whole table).

    Raises:
        ParameterError: a column has more than 2**32 values.
    """
    return _Splitter(n, dims, tracked, sensitive, models, mode, min_part).run(progress)


def _narrow(limit: int) -> np.dtype:
    """The narrowest unsigned type holding ``0 .. limit - 1`` (at most 32 bits)."""
    for dtype in (np.uint8, np.uint16, np.uint32):
        if limit <= np.iinfo(dtype).max + 1:
            return np.dtype(dtype)
    raise ParameterError(f"a column has {limit} distinct values; Mondrian handles at most 2**32.")


class _Records:
    """The records of the active partitions, one fixed-size block of bytes each.

    A record holds the row's index (``int32``), the rank of every quasi-identifier (the narrowest
    unsigned type that holds them all) and the code of every sensitive column the models read
    (likewise), padded to 8 or 16 bytes or a multiple of 8: NumPy moves records of those sizes as
    single words, so reordering the records costs about as much as reordering integers.
    """

    def __init__(self, n: int, d: int, s: int, rank_limit: int, code_limit: int):
        self.rank_type = _narrow(rank_limit)
        self.code_type = _narrow(code_limit)
        rb, cb = self.rank_type.itemsize, self.code_type.itemsize
        self.rank_at = 4 // rb                        # first rank, in units of rank_type
        code_start = -(-(4 + d * rb) // cb) * cb      # aligned byte offset of the first code
        self.code_at = code_start // cb
        size = code_start + s * cb
        self.size = 8 if size <= 8 else 16 if size <= 16 else -(-size // 8) * 8
        self.record = np.dtype((np.void, self.size))

    def empty(self, n: int) -> np.ndarray:
        return np.zeros((n, self.size), dtype=np.uint8)

    def rows(self, data: np.ndarray) -> np.ndarray:
        return data.view(np.int32)[:, 0]

    def ranks(self, data: np.ndarray) -> np.ndarray:
        """``[records × quasi-identifiers]`` view of the ranks."""
        return data.view(self.rank_type)[:, self.rank_at:]

    def rank_flat(self, data: np.ndarray, pos: np.ndarray | None, dim: np.ndarray) -> np.ndarray:
        """The rank of record ``pos[i]`` (or ``i``) on dimension ``dim[i]``."""
        stride = self.size // self.rank_type.itemsize
        base = np.arange(0, len(data) * stride, stride) if pos is None else pos * stride
        return data.view(self.rank_type).reshape(-1)[base + (self.rank_at + dim)]

    def codes(self, data: np.ndarray, i: int) -> np.ndarray:
        return data.view(self.code_type)[:, self.code_at + i]

    def take(self, data: np.ndarray, pos: np.ndarray) -> np.ndarray:
        return data.view(self.record).reshape(-1)[pos].view(np.uint8).reshape(-1, self.size)


class _Splitter:
    """The level-synchronous partitioning of one table.

    The records of the active partitions are held in ``data`` (see :class:`_Records`), each
    partition a contiguous run whose length is in ``sizes``. Splitting reorders records only
    within runs, so the data moves with the records and is read almost sequentially, never
    gathered at random from the table.

    A round ranks the dimensions of every active partition, tries to split each on its widest
    dimension, then on the next widest for those refused, and so on; the parts of accepted
    splits are the next round's active partitions, the rest are final.
    """

    def __init__(self, n, dims, tracked, sensitive, models, mode, min_part):
        self.dims = dims
        self.d, self.n = len(dims), n
        self.models = models
        self.mode = mode
        self.min_part = min_part
        self.sensitive = sensitive
        self.tracked = [(name, column) for name, column, _ in tracked]
        self.span = max((dim.cardinality for dim in dims), default=1)
        self.along = np.array([dim.kind == HIERARCHY for dim in dims])
        # Ancestors of every hierarchy dimension in one flat table: [dim offset + level·card + rank].
        self.anc_offset = np.zeros(self.d, dtype=np.int64)
        flat, at = [], 0
        for j, dim in enumerate(dims):
            if dim.kind == HIERARCHY:
                self.anc_offset[j] = at
                flat.append(dim.ancestors.ravel())
                at += dim.ancestors.size
        self.ancestors = np.concatenate(flat).astype(np.int64) if flat else np.zeros(0, dtype=np.int64)
        self.cards = np.array([dim.cardinality for dim in dims], dtype=np.int64)
        code_limit = max((column.cardinality for _, column in self.tracked), default=1)
        self.layout = _Records(self.n, self.d, len(tracked), self.span, code_limit)
        data = self.layout.empty(self.n)
        self.layout.rows(data)[:] = np.arange(self.n, dtype=np.int32)
        # Each record's rank on each dimension, a dimension at a time (no rows × dimensions copy).
        for j, dim in enumerate(dims):
            self.layout.ranks(data)[:, j] = dim.rank[dim.column.codes]
        for i, (_, _, codes) in enumerate(tracked):
            self.layout.codes(data, i)[:] = codes
        self.data = data

    def run(self, progress) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
        """Returns ``(partition, rounds, node, parent)``: the partition of every row, the
        number of rounds, the split-tree node of every partition, and the parent of every node
        (-1 for the root, the whole table)."""
        d, n, layout = self.d, self.n, self.layout
        partition = np.empty(n, dtype=np.int64)
        n_final = done = rounds = 0
        data = self.data
        sizes = np.array([n], dtype=np.int64)
        # The split tree: the node of each active partition, the parent of every node so far.
        node = np.zeros(1, dtype=np.int64)
        parents = [np.array([-1], dtype=np.int64)]
        n_nodes = 1
        final_nodes = []
        while len(sizes):
            rounds += 1
            n_seg = len(sizes)
            starts = np.zeros(n_seg, dtype=np.int64)
            np.cumsum(sizes[:-1], out=starts[1:])
            high = np.empty((n_seg, d), dtype=np.int64)
            width = np.empty((n_seg, d))
            level = np.zeros((n_seg, d), dtype=np.int64)
            cuttable = np.empty((n_seg, d), dtype=bool)
            ranks = layout.ranks(data)
            seg_of_pos = np.repeat(np.arange(n_seg), sizes)
            for j, dim in enumerate(self.dims):
                low = np.minimum.reduceat(ranks[:, j], starts).astype(np.int64)
                high[:, j] = np.maximum.reduceat(ranks[:, j], starts)
                cuttable[:, j] = high[:, j] > low
                if dim.kind == SET and n_seg * dim.cardinality <= SET_WIDTH_CELLS:
                    # A value set is published as the values it holds, so its width is how many
                    # there are, (held − 1)/(values − 1), not the span of their text order.
                    held = np.bincount(seg_of_pos * dim.cardinality + ranks[:, j],
                                       minlength=n_seg * dim.cardinality).reshape(n_seg, dim.cardinality)
                    width[:, j] = (np.count_nonzero(held, axis=1) - 1) / max(dim.cardinality - 1, 1)
                    continue
                width[:, j], lv = dim.width(low, high[:, j])
                if lv is not None:
                    level[:, j] = lv
            n_cut = np.where(sizes >= 2 * self.min_part, cuttable.sum(axis=1), 0)
            ranked = np.argsort(np.where(cuttable, -width, np.inf), axis=1, kind="stable")

            accepted = np.zeros(n_seg, dtype=bool)
            blocks, block_sizes, block_parents = [], [], []
            for t in range(d):
                cand = np.flatnonzero(~accepted & (n_cut > t))
                if not len(cand):
                    break
                ok, block, part_sizes, part_seg = self._try(data, cand, ranked[cand, t], seg_of_pos, sizes, high,
                                                            level)
                accepted[cand[ok]] = True
                blocks.append(block)
                block_sizes.append(part_sizes)
                block_parents.append(node[cand[part_seg]])

            final = ~accepted
            if final.any():
                at_final = final[seg_of_pos]
                local = np.cumsum(final) - 1
                partition[layout.rows(data)[at_final]] = n_final + local[seg_of_pos[at_final]]
                n_final += int(final.sum())
                done += int(sizes[final].sum())
                final_nodes.append(node[final])
            if blocks:
                data = blocks[0] if len(blocks) == 1 else np.concatenate(blocks)
                sizes = np.concatenate(block_sizes)
                parents.append(np.concatenate(block_parents))
                node = np.arange(n_nodes, n_nodes + len(sizes), dtype=np.int64)
                n_nodes += len(sizes)
            else:
                sizes = np.zeros(0, dtype=np.int64)
            if progress:
                progress(done, n)
        return partition, rounds, np.concatenate(final_nodes), np.concatenate(parents)

    def _try(self, data, cand, dim_of, seg_of_pos, sizes, high, level):
        """Split the active partitions ``cand`` on the dimensions ``dim_of``.

        Returns:
            ``(ok, block, part_sizes, part_seg)``: whether each candidate's split is allowed, and
            the records of the allowed ones, ordered by part, with the size and the candidate
            (an index into ``cand``) of each part.
        """
        span, layout = self.span, self.layout
        n_seg = len(sizes)
        if len(cand) == n_seg:
            pos = None
            lseg = seg_of_pos
        else:
            local = np.full(n_seg, -1, dtype=np.int64)
            local[cand] = np.arange(len(cand))
            lseg = local[seg_of_pos]
            pos = np.flatnonzero(lseg >= 0)
            lseg = lseg[pos]
        key = lseg * span + layout.rank_flat(data, pos, dim_of[lseg])
        # Partitions are runs already, so a stable sort only sorts within the runs (and leaves
        # lseg, the candidate of each record, as it is).
        perm = np.argsort(key, kind="stable")
        key = key[perm]
        pos = perm if pos is None else pos[perm]
        c_sizes = sizes[cand]
        c_starts = np.zeros(len(cand), dtype=np.int64)
        np.cumsum(c_sizes[:-1], out=c_starts[1:])

        cut = np.zeros(len(pos), dtype=bool)
        cut[c_starts] = True
        along = self.along[dim_of]
        binary = np.flatnonzero(~along)
        if len(binary):
            first = c_starts[binary]
            if self.mode == "strict":
                # Left: values up to the median; when the median is the largest value, below it.
                median = key[first + (c_sizes[binary] - 1) // 2] - binary * span
                top = high[cand[binary], dim_of[binary]]
                threshold = np.where(median < top, median, median - 1)
                left = np.searchsorted(key, binary * span + threshold, side="right") - first
            else:
                # Halves of equal size: records equal to the median fall on either side.
                left = c_sizes[binary] // 2
            cut[first + left] = True
        if along.any():
            # Multi-way split along the hierarchy: a part per child of the partition's node. The
            # child of a record is ancestors[base + rank], rank = key − candidate·span.
            c = np.arange(len(cand))
            base = (self.anc_offset[dim_of] + (level[cand, dim_of] - 1) * self.cards[dim_of]) - c * span
            if along.all():
                child = self.ancestors[base[lseg] + key]
                cut[1:] |= child[1:] != child[:-1]
            else:
                at = np.flatnonzero(along[lseg])
                child = self.ancestors[base[lseg[at]] + key[at]]
                cut[at[1:]] |= child[1:] != child[:-1]

        part_start = np.flatnonzero(cut)
        n_parts = len(part_start)
        part_sizes = np.diff(np.append(part_start, len(pos)))
        counts = {}
        if self.tracked:
            part_of_row = np.cumsum(cut) - 1
            for i, (name, column) in enumerate(self.tracked):
                m = column.cardinality
                codes = layout.codes(data, i)[pos]
                matrix = np.bincount(part_of_row * m + codes, minlength=n_parts * m)
                sc = self.sensitive[name]
                counts[name] = SensitiveCounts(column, matrix.reshape(n_parts, m), sc.reference, sc.generalization)
        parts = Parts(part_sizes, counts)
        passed = np.ones(n_parts, dtype=bool)
        for model in self.models:
            passed &= model.evaluate(parts).class_passed
        ok = np.logical_and.reduceat(passed, np.searchsorted(part_start, c_starts))
        part_seg = np.searchsorted(c_starts, part_start, side="right") - 1
        if ok.all():
            return ok, layout.take(data, pos), part_sizes, part_seg
        kept = ok[part_seg]
        return ok, layout.take(data, pos[ok[lseg]]), part_sizes[kept], part_seg[kept]
