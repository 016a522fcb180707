"""The strict Mondrian splitter over a table summarized by its distinct rows, each with its number
of records (what the Spark engine collects).

It makes the splits the splitter over the records (:mod:`.splitter`) makes in strict mode, with
the same rounds, candidate order and numbering. The Spark engine runs the same rounds on the
distinct rows it keeps, deciding each with this splitter's own code on value histograms
(:meth:`WeightedSplitter.order_dimensions`, :meth:`WeightedSplitter.split`,
:mod:`veil.engines.spark_mondrian`), so both engines give the same partitions.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from veil.anonymize.mondrian.dimensions import HIERARCHY, SET, SET_WIDTH_CELLS
from veil.anonymize.mondrian.parts import Parts
from veil.anonymize.mondrian.runs import run_offsets
from veil.classes import SensitiveCounts


class WeightedSplitter:
    """The strict partitioning of a table summarized by its distinct rows, each standing for
    ``weights[i]`` records (what the Spark engine collects).

    It makes the splits the splitter over the records (:mod:`.splitter`) makes on the records
    themselves: in strict mode the
    records of one distinct row always fall on one side of a cut, so a partition is a set of
    distinct rows, its size the sum of their weights, and its median the value of the record at
    position ``(size − 1) // 2`` in value order, found from the cumulative weights. Rounds,
    candidate order, the order of the parts and the numbering of nodes and final partitions
    follow that splitter's, so both give the same partitions.

    Args:
        ranks: ``[dimensions × distinct rows]``, the rank of each distinct row on each dimension.
        weights: the records each distinct row stands for.
        dims: the dimension of every quasi-identifier (:func:`~veil.anonymize.mondrian.dimensions.dimension`).
        tracked: ``(name, column, codes)`` of every sensitive column the models read, codes per
            distinct row.
        sensitive: per such column, its counts over the whole table (the models' reference).
        models: the privacy models every part must satisfy.
        min_part: a size every part must reach (:func:`~veil.anonymize.mondrian.parts.min_part_size`).
    """

    def __init__(self, ranks, weights, dims, tracked, sensitive, models, min_part):
        self.ranks = np.asarray(ranks, dtype=np.int64)
        self.weights = np.asarray(weights, dtype=np.int64)
        self.dims = dims
        self.d = len(dims)
        self.sensitive = sensitive
        self.tracked = [(name, column, np.asarray(codes, dtype=np.int64)) for name, column, codes in tracked]
        self.models = models
        self.min_part = min_part

    def run(self, progress) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
        """Partition the distinct rows, round by round, as the splitter over the records does.

        Args:
            progress: called as ``progress(records_in_final_partitions, records)`` each round.

        Returns:
            ``(partition, rounds, node, parent)``: the partition of every distinct row, the number
            of rounds, the split-tree node of every partition, and the parent of every node (-1
            for the root, the whole table).
        """
        t, d = self.ranks.shape[1], self.d
        total = int(self.weights.sum())
        partition = np.empty(t, dtype=np.int64)
        rows = np.arange(t, dtype=np.int64)
        lengths = np.array([t], dtype=np.int64)
        sizes = np.array([total], dtype=np.int64)
        node = np.zeros(1, dtype=np.int64)
        parents = [np.array([-1], dtype=np.int64)]
        n_nodes, n_final, done, rounds = 1, 0, 0, 0
        final_nodes = []
        while len(lengths):
            rounds += 1
            n_seg = len(lengths)
            starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
            seg_of_pos = np.repeat(np.arange(n_seg), lengths)
            low = np.empty((n_seg, d), dtype=np.int64)
            high = np.empty((n_seg, d), dtype=np.int64)
            held = {}
            counted = self.held_dimensions(n_seg)
            for j, dim in enumerate(self.dims):
                values = self.ranks[j][rows]
                low[:, j] = np.minimum.reduceat(values, starts)
                high[:, j] = np.maximum.reduceat(values, starts)
                if j in counted:
                    mask = np.zeros(n_seg * dim.cardinality, dtype=bool)
                    mask[seg_of_pos * dim.cardinality + values] = True
                    held[j] = np.count_nonzero(mask.reshape(n_seg, dim.cardinality), axis=1)
            ranked, n_cut, level = self.order_dimensions(low, high, held, sizes)
            accepted, blocks, block_lengths, block_sizes, owners = self.split(rows, starts, lengths, ranked, n_cut,
                                                                              high, level)
            final = ~accepted
            if final.any():
                at_final = final[seg_of_pos]
                local = np.cumsum(final) - 1
                partition[rows[at_final]] = n_final + local[seg_of_pos[at_final]]
                n_final += int(final.sum())
                done += int(sizes[final].sum())
                final_nodes.append(node[final])
            if blocks:
                rows = np.concatenate(blocks)
                lengths = np.concatenate(block_lengths)
                sizes = np.concatenate(block_sizes)
                parents.append(node[np.concatenate(owners)])
                node = np.arange(n_nodes, n_nodes + len(lengths), dtype=np.int64)
                n_nodes += len(lengths)
            else:
                lengths = np.zeros(0, dtype=np.int64)
            if progress:
                progress(done, total)
        return partition, rounds, np.concatenate(final_nodes), np.concatenate(parents)

    def held_dimensions(self, n_partitions: int) -> list[int]:
        """The value-set dimensions whose values held are counted exactly with this many active
        partitions (see ``SET_WIDTH_CELLS``).

        Args:
            n_partitions: the active partitions of the round.
        """
        return [j for j, dim in enumerate(self.dims)
                if dim.kind == SET and n_partitions * dim.cardinality <= SET_WIDTH_CELLS]

    def on_histograms(self, dim: np.ndarray, rank: np.ndarray, weight: np.ndarray,
                      codes: Sequence[np.ndarray]) -> "WeightedSplitter":
        """A splitter of the same dimensions and models whose rows are value-histogram entries
        (its ranks on other dimensions than an entry's own are never read): :meth:`split` with
        ``runs`` decides a round from them as from the distinct rows, since a cut reads the values
        of one dimension only.

        Args:
            dim: the dimension of each entry.
            rank: the value (rank) of each entry on its dimension.
            weight: the records each entry stands for.
            codes: per tracked sensitive column, the code of each entry.
        """
        ranks = np.zeros((self.d, len(rank)), dtype=np.int64)
        ranks[dim, np.arange(len(rank))] = rank
        tracked = [(name, column, code) for (name, column, _), code in zip(self.tracked, codes)]
        return WeightedSplitter(ranks, weight, self.dims, tracked, self.sensitive, self.models, self.min_part)

    def order_dimensions(self, low: np.ndarray, high: np.ndarray, held: Mapping[int, np.ndarray],
                         sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The dimensions each active partition tries, widest first (see :mod:`.dimensions`).

        Args:
            low: ``[partitions × dimensions]``, the smallest rank each partition holds.
            high: ``[partitions × dimensions]``, the largest rank each partition holds.
            held: per value-set dimension (by index), the number of values each partition holds,
                when counted exactly (else its width is the span of its text order).
            sizes: records per partition.

        Returns:
            ``(ranked, n_cut, level)``: the dimensions in the order tried, how many each partition
            may try, and the level of each partition's node along hierarchy dimensions.
        """
        n_seg, d = low.shape
        width = np.empty((n_seg, d))
        level = np.zeros((n_seg, d), dtype=np.int64)
        cuttable = high > low
        for j, dim in enumerate(self.dims):
            if j in held:
                width[:, j] = (held[j] - 1) / max(dim.cardinality - 1, 1)
                continue
            width[:, j], lv = dim.width(low[:, j], high[:, j])
            if lv is not None:
                level[:, j] = lv
        n_cut = np.where(sizes >= 2 * self.min_part, cuttable.sum(axis=1), 0)
        ranked = np.argsort(np.where(cuttable, -width, np.inf), axis=1, kind="stable")
        return ranked, n_cut, level

    def split(self, rows, starts, lengths, ranked, n_cut, high, level, runs: np.ndarray | None = None):
        """One round's splits: each partition tries its widest dimension, those refused their
        next widest, and so on.

        Args:
            rows: the rows of the active partitions, run after run: partition ``p`` holds
                ``rows[starts[p]:starts[p] + lengths[p]]``; or, with ``runs``, partition ``p`` cut
                on dimension ``j`` reads run ``runs[p, j]`` (rows that stand for the partition's
                records as seen on one dimension: a value histogram).
            starts: where each run begins in ``rows``.
            lengths: the rows of each run.
            ranked: the dimensions each partition tries, in order (:meth:`order_dimensions`).
            n_cut: how many dimensions each partition may try.
            high: ``[partitions × dimensions]``, the largest rank each partition holds.
            level: the level of each partition's node along hierarchy dimensions.
            runs: ``[partitions × dimensions]`` run indices, or ``None`` (a run per partition).

        Returns:
            ``(accepted, blocks, block_lengths, block_sizes, owners)``: whether each partition
            splits, and per step the rows of its allowed splits ordered by part, the rows and the
            records of each part, and the partition each part comes from.
        """
        n_seg, d = ranked.shape
        accepted = np.zeros(n_seg, dtype=bool)
        blocks, block_lengths, block_sizes, owners = [], [], [], []
        for step in range(d):
            cand = np.flatnonzero(~accepted & (n_cut > step))
            if not len(cand):
                break
            dim_of = ranked[cand, step]
            ok, block, part_lengths, part_sizes, part_seg = self._try(
                rows, starts, lengths, cand, dim_of, high, level, None if runs is None else runs[cand, dim_of])
            accepted[cand[ok]] = True
            blocks.append(block)
            block_lengths.append(part_lengths)
            block_sizes.append(part_sizes)
            owners.append(cand[part_seg])
        return accepted, blocks, block_lengths, block_sizes, owners

    def _try(self, rows, starts, lengths, cand, dim_of, high, level, runs=None):
        """Split the partitions ``cand`` on the dimensions ``dim_of`` (strict cuts at the weighted
        median, or a part per child of a hierarchy node), reading each one's rows from run
        ``runs[i]`` (default: its own). Returns ``(ok, rows of the allowed splits ordered by part,
        distinct rows per part, records per part, candidate of each part)``."""
        runs = cand if runs is None else runs
        c_lengths = lengths[runs]
        pos = np.repeat(starts[runs], c_lengths) + run_offsets(c_lengths)
        lseg = np.repeat(np.arange(len(cand)), c_lengths)
        members = rows[pos]
        value = self.ranks[dim_of[lseg], members]
        order = np.lexsort((value, lseg))
        members, value = members[order], value[order]
        weight = self.weights[members]
        c_starts = np.concatenate([[0], np.cumsum(c_lengths)[:-1]]).astype(np.int64)
        cut = np.zeros(len(members), dtype=bool)
        cut[c_starts] = True
        along = np.array([self.dims[j].kind == HIERARCHY for j in dim_of], dtype=bool)
        binary = np.flatnonzero(~along)
        if len(binary):
            # The record at position (size − 1) // 2 lies in the first distinct row whose
            # cumulative weight within its partition passes that position.
            cumulative = np.cumsum(weight)
            before = np.concatenate([[0], cumulative])[c_starts]
            first, last = c_starts[binary], c_starts[binary] + c_lengths[binary]
            target = before[binary] + (np.add.reduceat(weight, c_starts)[binary] - 1) // 2
            at = np.searchsorted(cumulative, target, side="right")
            median = value[at]
            top = high[cand[binary], dim_of[binary]]
            threshold = np.where(median < top, median, median - 1)
            in_part = np.repeat(np.arange(len(binary)), last - first)
            spots = np.repeat(first, last - first) + run_offsets(last - first)
            left = np.bincount(in_part, weights=value[spots] <= threshold[in_part], minlength=len(binary))
            cut[first + left.astype(np.int64)] = True
        if along.any():
            # A part per child of the partition's node: the child of a distinct row is its
            # ancestor one level below the node (candidates of one dimension are contiguous
            # runs, and every run starts a part already).
            at = np.flatnonzero(along[lseg])
            child = np.empty(len(at), dtype=np.int64)
            for j in np.unique(dim_of[along]):
                mine = dim_of[lseg[at]] == j
                rows_j = at[mine]
                child[mine] = self.dims[j].ancestors[level[cand[lseg[rows_j]], j] - 1, value[rows_j]]
            cut[at[1:]] |= child[1:] != child[:-1]
        part_start = np.flatnonzero(cut)
        n_parts = len(part_start)
        part_of = np.cumsum(cut) - 1
        part_lengths = np.diff(np.append(part_start, len(members)))
        part_sizes = np.bincount(part_of, weights=weight, minlength=n_parts).astype(np.int64)
        counts = {}
        for name, column, codes in self.tracked:
            m = column.cardinality
            matrix = np.bincount(part_of * m + codes[members], weights=weight, minlength=n_parts * m)
            sc = self.sensitive[name]
            counts[name] = SensitiveCounts(column, matrix.astype(np.int64).reshape(n_parts, m), sc.reference,
                                           sc.generalization)
        passed = np.ones(n_parts, dtype=bool)
        for model in self.models:
            passed &= model.evaluate(Parts(part_sizes, counts)).class_passed
        ok = np.logical_and.reduceat(passed, np.searchsorted(part_start, c_starts))
        part_seg = np.searchsorted(c_starts, part_start, side="right") - 1
        kept = ok[part_seg]
        return ok, members[ok[lseg[order]]], part_lengths[kept], part_sizes[kept], part_seg[kept]
