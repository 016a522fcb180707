"""The greedy heuristic of local suppression (see :mod:`veil.sdc.local_suppression`): the
frequencies of a record's class under either matching, computed for many records and many
hypothetical suppressions at once (:class:`Problem`), the rounds of suppression
(:func:`_greedy_any`, :func:`_greedy_category`) and, under ``"category"``, the cells given back
afterwards (:func:`restore_category`).

Every round is a handful of NumPy passes over the records at risk; groupings on a subset of the
columns are made over the original classes' tuples (not the records) and kept per subset. The
result is k-anonymous by construction (each function says why), not minimal: the exact method
(:mod:`veil.sdc._suppression_exact`) and the lower bound measure how far it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from veil.classes import group_rows
from veil.errors import InfeasibleError

# Pairs of records below which two sets are compared pair by pair rather than grouped.
_DIRECT_PAIRS = 4096


def popcount(pattern: np.ndarray) -> np.ndarray:
    count = np.zeros(len(pattern), dtype=np.int64)
    rest = pattern.copy()
    while rest.any():
        count += rest & 1
        rest >>= 1
    return count



class Problem:
    """The quasi-identifier codes, their radices and the order of suppression of one run."""

    def __init__(self, codes: Sequence[np.ndarray], radices: Sequence[int], rank: np.ndarray,
                 weights: np.ndarray | None = None, block: np.ndarray | None = None):
        # ``block``: the stratum of each record; records of different strata never share a class.
        self.block = block
        self.block_radix = int(block.max()) + 1 if block is not None and len(block) else 1
        self.codes = [np.asarray(c) for c in codes]
        self.radices = [int(r) for r in radices]
        self.rank = rank
        self.m = len(self.codes)
        self.n = len(self.codes[0]) if self.codes else 0
        self.weights = weights
        self.values = np.stack([c.astype(np.int64) for c in self.codes], axis=1)
        # The original classes (records with the same tuple, in the same stratum): each record's
        # class and each class's tuple. Groupings on fewer columns group these tuples, not the
        # records, and are kept per set of columns.
        columns, radices = list(self.codes), list(self.radices)
        if block is not None:
            columns.append(block)
            radices.append(self.block_radix)
        if self.n:
            self.original, self.original_keys = group_rows(columns, radices)
        else:
            self.original, self.original_keys = np.zeros(0, dtype=np.int64), np.zeros((0, len(columns)), dtype=np.int64)
        self.n_original = len(self.original_keys)
        self._groups: dict[int, tuple[np.ndarray, int]] = {}

    # -- frequencies ----------------------------------------------------------------------------

    def _union_groups(self, union: int) -> tuple[np.ndarray, int]:
        """Each original class's group on the columns outside ``union`` (and its stratum), and the
        number of groups; computed once per set of columns."""
        cached = self._groups.get(union)
        if cached is None:
            keep = [c for c in range(self.m) if not (union >> c) & 1]
            if self.block is not None:
                keep.append(self.m)
            radices = [*self.radices, self.block_radix]
            group = group_rows([self.original_keys[:, c] for c in keep], [radices[c] for c in keep],
                               decode=False)[0].astype(np.int32)
            cached = self._groups[union] = (group, int(group.max()) + 1 if len(group) else 0)
        return cached

    def any_frequencies(self, pattern: np.ndarray, targets: np.ndarray,
                        target_pattern: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sample (f) and population (F) frequencies of the ``targets`` records, each given the
        suppression pattern ``target_pattern``, against every record with its ``pattern``, under
        ``"any"`` matching: record j counts for target i when they agree on every column outside
        the union of their patterns."""
        f = np.zeros(len(targets), dtype=np.int64)
        F = np.zeros(len(targets), dtype=np.float64)
        weights = self.weights
        target_sets = list(_split(target_pattern, np.arange(len(targets))))
        for q, q_rows in _split(pattern, np.arange(self.n)):
            q_weight = float(weights[q_rows].sum()) if weights is not None else float(len(q_rows))
            q_classes = self.original[q_rows]
            # A large set is counted per original class once, then rolled up per set of columns.
            per_class = None
            if len(q_rows) * 4 >= self.n_original:
                per_class = np.bincount(q_classes, minlength=self.n_original).astype(np.float64)
                per_class_weight = (np.bincount(q_classes, weights=weights[q_rows], minlength=self.n_original)
                                    if weights is not None else None)
            for p, where in target_sets:
                union = int(p) | int(q)
                if union == (1 << self.m) - 1 and self.block is None:
                    f[where] += len(q_rows)
                    F[where] += q_weight
                    continue
                t_rows = targets[where]
                if len(t_rows) * len(q_rows) <= _DIRECT_PAIRS:
                    # Few pairs: compare them directly rather than grouping.
                    keep = np.array([not (union >> c) & 1 for c in range(self.m)])
                    same = (self.values[t_rows][:, None, keep] == self.values[q_rows][None, :, keep]).all(axis=2)
                    if self.block is not None:
                        same &= self.block[t_rows][:, None] == self.block[q_rows][None, :]
                    f[where] += same.sum(axis=1)
                    if weights is not None:
                        F[where] += same @ weights[q_rows]
                    continue
                group, size = self._union_groups(union)
                t_group = group[self.original[t_rows]]
                if per_class is not None:
                    f[where] += np.rint(np.bincount(group, weights=per_class, minlength=size)[t_group]).astype(np.int64)
                    if weights is not None:
                        F[where] += np.bincount(group, weights=per_class_weight, minlength=size)[t_group]
                else:
                    q_group = group[q_classes]
                    f[where] += np.bincount(q_group, minlength=size)[t_group]
                    if weights is not None:
                        F[where] += np.bincount(q_group, weights=weights[q_rows], minlength=size)[t_group]
        if weights is None:
            F = f.astype(np.float64)
        return f, F

    def category_frequencies(self, pattern: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(group, f, F)`` per record under ``"category"`` matching: its class (the records with
        the same pattern and the same values outside it) and the class's sample and population
        frequencies."""
        group = self.class_ids(np.arange(self.n), pattern)
        f = np.bincount(group)
        F = np.bincount(group, weights=self.weights) if self.weights is not None else f.astype(np.float64)
        return group, f[group], F[group]

    def class_ids(self, rows: np.ndarray, row_pattern: np.ndarray) -> np.ndarray:
        """One id per (record, pattern) pair, equal for two pairs exactly when the records with
        those patterns are in one class under ``"category"`` matching. A record without a
        suppressed cell keeps its original class's id (grouped once); the others are grouped
        with their cells starred, after those ids."""
        ids = self.original[rows]
        starred = np.flatnonzero(row_pattern != 0)
        if starred.size:
            ids[starred] = self.n_original + self._star_groups(rows[starred], row_pattern[starred])
        return ids

    def _star_groups(self, rows: np.ndarray, row_pattern: np.ndarray) -> np.ndarray:
        """Group ids of ``rows`` with their cells starred where ``row_pattern`` says."""
        columns = []
        for c in range(self.m):
            starred = ((row_pattern >> c) & 1).astype(bool)
            columns.append(np.where(starred, self.radices[c], self.codes[c][rows]))
        radices = [r + 1 for r in self.radices]
        if self.block is not None:
            columns.append(self.block[rows])
            radices.append(self.block_radix)
        return group_rows(columns, radices, decode=False)[0]

    # -- the search -----------------------------------------------------------------------------

    def greedy(self, matching: str, safe: Callable, score: Callable, k: int | None) -> np.ndarray:
        pattern = np.zeros(self.n, dtype=np.int64)
        if self.n == 0:
            return pattern
        if matching == "any":
            return _greedy_any(self, pattern, safe, score, monotone=k is not None)
        return _greedy_category(self, pattern, safe, score, k)

    def choose(self, candidates: np.ndarray, columns: np.ndarray, reach: np.ndarray,
               value: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """For each of ``count`` targets, the column to suppress among its candidate columns: the
        least important one whose suppression makes it safe, else the one that gains most
        (ties: the least important). Returns ``(has_reach, column)`` per target."""
        big = np.iinfo(np.int64).max
        # Least important reaching column.
        reach_rank = np.full(count, big, dtype=np.int64)
        np.minimum.at(reach_rank, candidates[reach], self.rank[columns[reach]])
        has_reach = reach_rank < big
        # Best value, ties by rank.
        best = np.full(count, -np.inf)
        np.maximum.at(best, candidates, value)
        top = value >= best[candidates]
        top_rank = np.full(count, big, dtype=np.int64)
        np.minimum.at(top_rank, candidates[top], self.rank[columns[top]])
        chosen_rank = np.where(has_reach, reach_rank, top_rank)
        column_of_rank = np.argsort(self.rank)
        chosen = np.where(chosen_rank < big, column_of_rank[np.minimum(chosen_rank, self.m - 1)], -1)
        return has_reach, chosen


def _split(keys: np.ndarray, items: np.ndarray):
    """``(key, items holding it)`` for each distinct key (key 0, the records without a suppressed
    cell and most of them, is taken out before sorting the others)."""
    zero = keys == 0
    if zero.any():
        yield np.int64(0), items[zero]
    rest = np.flatnonzero(~zero)
    if rest.size == 0:
        return
    order = rest[np.argsort(keys[rest], kind="stable")]
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    ends = np.r_[starts[1:], len(order)]
    for start, end in zip(starts, ends):
        yield sorted_keys[start], items[order[start:end]]


def _candidates(problem: Problem, pattern: np.ndarray, targets: np.ndarray):
    """Every (target, column not yet suppressed in it) pair: the target's index, the column and
    the pattern with that column added."""
    free = ((pattern[targets][:, None] >> np.arange(problem.m)) & 1) == 0
    index, column = np.nonzero(free)
    return index, column, pattern[targets][index] | (np.int64(1) << column)


def _greedy_any(problem: Problem, pattern: np.ndarray, safe: Callable, score: Callable,
                monotone: bool) -> np.ndarray:
    """Greedy local suppression under ``"any"`` matching.

    Round after round, the records not yet safe (the targets) are scored on every column they
    still hold: the exact frequencies their class would have with that cell suppressed (and every
    other record as it is). If some target can be made safe by one cell, only such targets are
    suppressed this round, each on its least important column that suffices (their suppressions
    enlarge the others' classes, which may then need fewer cells); otherwise every target loses
    the cell that enlarges its class most (ties: the least important column). Under k, a
    suppression only ever enlarges classes, so a safe record stays safe and only the targets are
    re-examined; under a risk threshold (not monotone in general) every record is.
    """
    everyone = np.arange(problem.n)
    targets = everyone
    while True:
        f, F = problem.any_frequencies(pattern, targets, pattern[targets])
        targets = targets[~safe(f, F)]
        if targets.size == 0:
            return pattern
        index, column, hypothetical = _candidates(problem, pattern, targets)
        if index.size == 0 or (pattern[targets] == (1 << problem.m) - 1).any():
            raise InfeasibleError("no local suppression meets the risk threshold: a record with every "
                                  "quasi-identifier suppressed is still above it; raise the threshold.")
        hf, hF = problem.any_frequencies(pattern, targets[index], hypothetical)
        reach = safe(hf, hF)
        has_reach, chosen = problem.choose(index, column, reach, score(hf, hF), len(targets))
        act = has_reach if has_reach.any() else np.ones(len(targets), dtype=bool)
        pattern[targets[act]] |= np.int64(1) << chosen[act]
        if not monotone:
            targets = everyone


def _greedy_category(problem: Problem, pattern: np.ndarray, safe: Callable, score: Callable,
                     k: int | None) -> np.ndarray:
    """Greedy local suppression under ``"category"`` matching.

    Round after round, every record of an unsafe class (a target) is scored on every column it
    still holds: the frequencies of the class it would join if that cell were suppressed and every
    target with the same pattern and the same other values did the same (the records already
    holding that pattern and those values count too). It loses the least important column that
    makes it safe, else the one giving the largest class (ties: the least important). Only
    targets lose cells, and a class below the threshold is made of targets alone, so no safe
    class is broken. After at most one round per column the unsafe records are fully suppressed;
    if their class is still too small it takes in, fully suppressed too, the records safe classes
    can spare or whole safe classes, whichever costs fewer cells (see :func:`_fill`).
    """
    full = np.int64((1 << problem.m) - 1)
    for _ in range(problem.m + 1):
        group, f, F = problem.category_frequencies(pattern)
        unsafe = ~safe(f, F)
        targets = np.flatnonzero(unsafe & (pattern != full))
        if targets.size == 0:
            break
        index, column, hypothetical = _candidates(problem, pattern, targets)
        # A hypothetical pattern is never empty: only records with a suppressed cell can share
        # a class with it.
        others = np.flatnonzero((~unsafe | (pattern == full)) & (pattern != 0))
        hf = np.zeros(len(index), dtype=np.int64)
        hF = np.zeros(len(index), dtype=np.float64)
        weights = problem.weights
        for c in range(problem.m):
            pick = np.flatnonzero(column == c)
            if pick.size == 0:
                continue
            rows = np.concatenate([others, targets[index[pick]]])
            g = problem.class_ids(rows, np.concatenate([pattern[others], hypothetical[pick]]))
            hf[pick] = np.bincount(g)[g[len(others):]]
            if weights is not None:
                hF[pick] = np.bincount(g, weights=weights[rows])[g[len(others):]]
            else:
                hF[pick] = hf[pick]
        _, chosen = problem.choose(index, column, safe(hf, hF), score(hf, hF), len(targets))
        pattern[targets] |= np.int64(1) << chosen
    group, f, F = problem.category_frequencies(pattern)
    unsafe = ~safe(f, F)
    # Only fully suppressed records are left unsafe: one class (per stratum), too small.
    for star in np.unique(group[unsafe]):
        within = np.ones(problem.n, dtype=bool) if problem.block is None else (
            problem.block == problem.block[np.flatnonzero(group == star)[0]])
        _fill(problem, pattern, group, f, F, group == star, within, safe, k)
    return pattern


def _fill(problem: Problem, pattern: np.ndarray, group: np.ndarray, f: np.ndarray, F: np.ndarray,
          star: np.ndarray, within: np.ndarray, safe: Callable, k: int | None) -> None:
    """Make the class of fully suppressed records ``star`` safe by fully suppressing more
    records of the same stratum (``within``): either records that safe classes can spare (under
    k: a class keeps at least k), or whole safe classes, whichever costs fewer cells."""
    full = np.int64((1 << problem.m) - 1)
    star_f, star_F = int(star.sum()), float(F[star][0])
    extra = problem.m - popcount(pattern)
    candidates = within & ~star & safe(f, F)
    spare_cost, spare_rows = np.inf, None
    if k is not None:
        spare = f - k
        donors = np.flatnonzero(candidates & (spare > 0))
        donors = donors[np.lexsort((donors, extra[donors]))]
        donors = donors[_take_per_group(group[donors], spare[donors])]
        if len(donors) >= k - star_f:
            spare_rows = donors[np.argsort(extra[donors], kind="stable")[:k - star_f]]
            spare_cost = float(extra[spare_rows].sum())
    safe_group = np.flatnonzero(np.bincount(group, weights=candidates.astype(np.float64)) > 0)
    class_cost = np.bincount(group, weights=extra)[safe_group]
    class_f = np.bincount(group)[safe_group]
    class_F = np.bincount(group, weights=problem.weights)[safe_group] if problem.weights is not None else class_f
    order = np.lexsort((safe_group, class_cost))
    enough = safe(star_f + np.cumsum(class_f[order]), star_F + np.cumsum(class_F[order]))
    whole_cost, whole_groups = np.inf, None
    if enough.any():
        last = int(np.argmax(enough))
        whole_groups = safe_group[order[:last + 1]]
        whole_cost = float(class_cost[order[:last + 1]].sum())
    if spare_rows is not None and spare_cost <= whole_cost:
        pattern[spare_rows] = full
    elif whole_groups is not None:
        pattern[np.isin(group, whole_groups)] = full
    else:
        raise InfeasibleError("no local suppression meets the risk threshold: even with every "
                              "quasi-identifier suppressed the class of every record is above it; raise "
                              "the threshold.")


def _take_per_group(group: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """Whether each item is among the first ``limit`` items of its group (in the given order)."""
    order = np.argsort(group, kind="stable")
    g = group[order]
    starts = np.r_[0, np.flatnonzero(g[1:] != g[:-1]) + 1]
    position = np.arange(len(g)) - np.repeat(starts, np.diff(np.r_[starts, len(g)]))
    keep = np.empty(len(g), dtype=bool)
    keep[order] = position < limit[order]
    return keep


def restore_category(problem: Problem, pattern: np.ndarray, k: int) -> None:
    """Give suppressed cells back, under ``"category"`` matching and k, while every class keeps
    at least k records (``pattern`` is changed in place and stays k-anonymous).

    Column by column, from the most important, the records holding a suppressed cell there are
    considered together: giving the cell back moves a record from its class to the class of its
    pattern without that column and its own value there. A move is made when the class it joins
    already holds k records (any number of records may join) or when all the records going to a
    new class are k or more and go together; the class they leave must keep k records or none
    (a class whose every record can move moves whole; the others let at most their surplus over
    k go). Classes only a move joins grow, so no class falls below k. Two sweeps over the columns.
    """
    n = problem.n
    for _ in range(2):
        changed = False
        for c in np.argsort(-problem.rank, kind="stable"):
            bit = np.int64(1) << int(c)
            holders = np.flatnonzero(pattern & bit)
            if holders.size == 0:
                continue
            group, f, _ = problem.category_frequencies(pattern)
            rows = np.concatenate([np.arange(n), holders])
            keys = problem.class_ids(rows, np.concatenate([pattern, pattern[holders] & ~bit]))
            joined = np.bincount(keys[:n], minlength=int(keys.max()) + 1)[keys[n:]]
            part = np.bincount(keys[n:])[keys[n:]]
            source, size = group[holders], f[holders]
            alone = joined >= k
            movable = alone | ((joined == 0) & (part >= k))
            stuck = np.bincount(source, weights=~movable, minlength=int(group.max()) + 1)
            move = stuck[source] == 0
            rest = np.flatnonzero(~move & alone)
            move[rest[_take_per_group(source[rest], size[rest] - k)]] = True
            if move.any():
                pattern[holders[move]] &= ~bit
                changed = True
        if not changed:
            return
