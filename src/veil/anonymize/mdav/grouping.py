"""The MDAV grouping: groups of at least k records, each of records near one another.

**The grouping.** MDAV, the maximum-distance-to-average-vector heuristic, as Domingo-Ferrer and
Torra (2005) state it. While at least 3k records remain: take the centroid x̄ of the remaining
records, the record r farthest from x̄ and the record s farthest from r; group r with its k − 1
nearest remaining records, then s with its k − 1 nearest of the records left; remove both
groups. Then, if at least 2k records remain, group the record farthest from their centroid with
its k − 1 nearest and make the rest one group; otherwise the rest is one group. Every group
holds between k and 2k − 1 records. The work is O(n²/k) distance evaluations; each step is a
few vectorized passes over the distinct quasi-identifier tuples that still have records (records
with equal tuples are at equal distance from everything), each distance one look-up per pack of
columns in a table of per-value distances (:mod:`.space`).

**Determinism.** The grouping has no randomness: ties (equally far or near records) go to the
earlier row. Groups are numbered by their first row.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from veil.anonymize.mdav.space import Space
from veil.classes import group_rows


class _Grouping:
    """MDAV over the distinct quasi-identifier tuples of a table, each with its multiplicity.

    Records with the same tuple are at the same distance from everything, so every distance pass
    runs over the tuples with records left (the *items*), not the records. A tuple's records are
    taken in row order, and ties between tuples go to the one whose next record comes first, so
    the groups are those of MDAV over the records with ties broken by row order.
    """

    def __init__(self, space: Space, k: int):
        self.space = space
        self.k = k
        n = space.n
        cards = [c.card for c in space.columns]
        tuple_of, _ = group_rows(list(space.codes), cards, decode=False)
        tuple_of = number_by_first_row(tuple_of)
        n_tuples = int(tuple_of.max()) + 1
        self.rows = np.argsort(tuple_of, kind="stable")            # rows, tuple after tuple
        self.start = np.searchsorted(tuple_of[self.rows], np.arange(n_tuples))  # next record of each tuple
        self.tuple_codes = space.codes[:, self.rows[self.start]]   # [columns × tuples]
        # State over the items (tuples with records left; compacted now and then).
        self.item = np.arange(n_tuples)
        self.left = np.bincount(tuple_of, minlength=n_tuples)      # records left per item
        self.joint = space.joint_codes(self.tuple_codes)
        self.penalty = np.zeros(n_tuples)                          # +inf for exhausted items
        self.counts = np.bincount(space.flat_codes.ravel(), minlength=int(space.offsets[-1])).astype(float)
        self.remaining = n
        self.group = np.full(n, -1, dtype=np.int64)
        self.n_groups = 0

    # -- distances -------------------------------------------------------------------------

    def from_centroid(self) -> np.ndarray:
        return self.space.distances(self.space.centroid_table(self.counts, self.remaining), self.joint)

    def from_item(self, position: int) -> np.ndarray:
        codes = self.tuple_codes[:, self.item[position]]
        return self.space.distances(self.space.record_table(codes), self.joint)

    # -- choosing records --------------------------------------------------------------------

    def next_row(self, positions: np.ndarray) -> np.ndarray:
        return self.rows[self.start[self.item[positions]]]

    def farthest(self, d: np.ndarray) -> int:
        """The item holding the farthest record left (ties to the earliest record)."""
        d = d - self.penalty
        top = d.max()
        at = np.flatnonzero(d == top)
        return int(at[0] if len(at) == 1 else at[np.argmin(self.next_row(at))])

    def nearest(self, d: np.ndarray, need: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``need`` records left nearest (ties to the earliest records), as (items, count
        taken from each)."""
        d = d + self.penalty
        left = self.left
        full: list[np.ndarray] = []
        for _ in range(4):  # usually a few distance levels hold enough records
            v = d.min()
            at = np.flatnonzero(d == v)
            there = int(left[at].sum())
            if there >= need:
                break
            full.append(at)
            need -= there
            d[at] = np.inf
        else:
            # The need-th nearest item bounds the need-th nearest record.
            kth = min(need, int(np.count_nonzero(np.isfinite(d)))) - 1
            bound = np.partition(d, kth)[kth]
            candidates = np.flatnonzero(d <= bound)
            candidates = candidates[np.argsort(d[candidates], kind="stable")]
            held = np.cumsum(left[candidates])
            v = d[candidates[np.searchsorted(held, need)]]
            below = candidates[d[candidates] < v]
            full.append(below)
            need -= int(left[below].sum())
            at = np.flatnonzero(d == v)
        items = [*full]
        counts = [left[a] for a in full]
        if int(left[at].sum()) == need:
            items.append(at)
            counts.append(left[at])
        else:
            # Records of several tuples tie: the earliest rows win, a prefix of each tuple's.
            lengths = left[at]
            starts = self.start[self.item[at]]
            owner = np.repeat(np.arange(len(at)), lengths)
            offset = np.arange(len(owner)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
            rows = self.rows[starts[owner] + offset]
            chosen = owner[np.argsort(rows, kind="stable")[:need]]
            taken = np.bincount(chosen, minlength=len(at))
            items.append(at[taken > 0])
            counts.append(taken[taken > 0])
        return np.concatenate(items), np.concatenate(counts)

    def take(self, items: np.ndarray, counts: np.ndarray) -> None:
        """Make one group of ``counts[i]`` records of each item ``items[i]``."""
        tuples = self.item[items]
        starts = self.start[tuples]
        owner = np.repeat(np.arange(len(items)), counts)
        offset = np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
        rows = self.rows[starts[owner] + offset]
        self.group[rows] = self.n_groups
        self.n_groups += 1
        self.start[tuples] += counts
        self.left[items] -= counts
        self.penalty[items[self.left[items] == 0]] = np.inf
        self.remaining -= len(rows)
        np.subtract.at(self.counts, self.space.flat_codes[:, rows].ravel(), 1.0)

    def around(self, position: int, d: np.ndarray) -> None:
        """Group the next record of an item with its k − 1 nearest records left."""
        # The record itself first (set aside while its k − 1 nearest are found).
        items, counts = np.array([position]), np.array([1])
        self.left[position] -= 1
        self.start[self.item[position]] += 1
        if self.left[position] == 0:
            self.penalty[position] = np.inf
        if self.k > 1:
            more, more_counts = self.nearest(d, self.k - 1)
        else:
            more, more_counts = np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.int64)
        self.left[position] += 1
        self.start[self.item[position]] -= 1
        self.penalty[position] = 0.0
        same = more == position
        if same.any():
            counts = counts + more_counts[same]
            more, more_counts = more[~same], more_counts[~same]
        self.take(np.concatenate([items, more]), np.concatenate([counts, more_counts]))

    def rest(self) -> None:
        alive = np.flatnonzero(self.left > 0)
        if len(alive):
            self.take(alive, self.left[alive].copy())

    def compact(self) -> None:
        alive = self.left > 0
        if 4 * np.count_nonzero(alive) < 3 * len(alive):
            self.item = self.item[alive]
            self.left = self.left[alive]
            self.joint = self.joint[:, alive]
            self.penalty = np.zeros(len(self.item))


def mdav_groups(space: Space, k: int, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """The MDAV group of every row, numbered in the order the groups are formed."""
    state = _Grouping(space, k)
    n = space.n
    step = max(1, n // (200 * k))
    iteration = 0
    while state.remaining >= 3 * k:
        r = state.farthest(state.from_centroid())
        dr = state.from_item(r)
        state.around(r, dr)
        s = state.farthest(dr)
        state.around(s, state.from_item(s))
        state.compact()
        iteration += 1
        if progress is not None and iteration % step == 0:
            progress(n - state.remaining, n)
    if state.remaining >= 2 * k:
        r = state.farthest(state.from_centroid())
        state.around(r, state.from_item(r))
    state.rest()
    if progress is not None:
        progress(n, n)
    return state.group


def number_by_first_row(group: np.ndarray) -> np.ndarray:
    """Renumber groups ``0 .. g-1`` in the order of their first row."""
    _, first = np.unique(group, return_index=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[group]
