"""Local suppression: blank single quasi-identifier cells, not whole records, until every record
is in a class of at least k records (k-anonymity) or its individual re-identification risk is at
most a threshold.

The method is the one statistics offices use after a global recoding (Templ, *Statistical
Disclosure Control for Microdata*, 2017, ch. 3; sdcMicro's ``localSuppression``): the few records
that still stand out lose one or two of their key values instead of being dropped. The objective
is the fewest suppressed cells; the greedy heuristic finds a small number fast and the exact
method (an integer program, for small tables) the minimum.

**What a suppressed cell matches** (``matching``):

* ``"any"`` (sdcMicro's semantics): a suppressed cell may hide any value, so record *j* is
  *compatible* with record *i* when, on every quasi-identifier, they hold the same value or one of
  them is suppressed there. The class of *i* is the set of records compatible with it (itself
  included); it is not an equivalence relation, and suppressing a cell of one record can only make
  every record's class larger.
* ``"category"`` (ARX's view of a suppressed value): a suppressed cell is one more value, ``*``,
  equal only to another ``*`` of the same column; classes are the usual equivalence classes of
  the table with its suppressed cells written as ``*``. Moving a record out of its class can make
  that class smaller.

A missing value in the input is one category of its own (veil's single missing-value policy), not
a suppressed cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from veil.classes import group_rows
from veil.data.dataset import Dataset
from veil.errors import ColumnError, InfeasibleError, ParameterError

MATCHINGS = ("any", "category")
METHODS = ("greedy", "optimal")
# Suppression patterns are bit masks over the quasi-identifiers, one int64 per record.
_MAX_COLUMNS = 62
# Pairs of records below which two sets are compared pair by pair rather than grouped.
_DIRECT_PAIRS = 4096


@dataclass(frozen=True)
class LocalSuppression:
    """Which quasi-identifier cells local suppression blanks.

    Attributes:
        columns: the quasi-identifiers, in the dataset's order (the columns of ``suppressed``).
        suppressed: ``bool [rows × columns]``, True where the cell is suppressed.
        k: the k of k-anonymity the result satisfies, or ``None`` under a risk threshold.
        risk: the individual-risk threshold every record satisfies, or ``None`` under k.
        matching: ``"any"`` or ``"category"`` (see the module's description).
        method: ``"greedy"`` or ``"optimal"``.
        optimal: True only when the number of suppressed cells is proven minimal (the integer
            program was solved to optimality, or the count equals ``lower_bound``).
        lower_bound: a proven lower bound on the minimal number of suppressed cells.
    """

    columns: tuple[str, ...]
    suppressed: np.ndarray
    k: int | None
    risk: float | None
    matching: str
    method: str
    optimal: bool
    lower_bound: int

    @property
    def cells(self) -> int:
        """The number of suppressed cells."""
        return int(self.suppressed.sum())

    def per_column(self) -> dict[str, int]:
        """The number of suppressed cells of each quasi-identifier."""
        return {name: int(count) for name, count in zip(self.columns, self.suppressed.sum(axis=0))}


# ----------------------------------------------------------------------------------------------
# The oracle


def is_k_anonymous(codes: Sequence[np.ndarray], suppressed: np.ndarray, k: int, matching: str) -> bool:
    """Whether every record's class holds at least ``k`` records, straight from the definition.

    Args:
        codes: one integer array per quasi-identifier (the original values, one per record).
        suppressed: ``bool [records × columns]``, True where a cell is suppressed.
        k: the least class size.
        matching: ``"any"``: records *i* and *j* are in each other's class when on every column
            they agree or one of them is suppressed; ``"category"``: a suppressed cell is the value
            ``*``, and the class of a record is the records equal to it cell by cell.

    Every pair of records is compared (memory and time grow with the square of the records): this
    is the reference the algorithms are checked against, not a fast path.

    Raises:
        ParameterError: an unknown matching.
    """
    _check_matching(matching)
    suppressed = np.asarray(suppressed, dtype=bool)
    values = np.stack([np.asarray(c, dtype=np.int64) for c in codes], axis=1) if len(codes) else None
    n = suppressed.shape[0]
    if n == 0:
        return True
    block = max(1, 2_000_000 // max(n * suppressed.shape[1], 1))
    for start in range(0, n, block):
        rows = slice(start, min(start + block, n))
        same = values[rows, None, :] == values[None, :, :]
        if matching == "any":
            together = same | suppressed[rows, None, :] | suppressed[None, :, :]
        else:
            both = suppressed[rows, None, :] & suppressed[None, :, :]
            neither = ~suppressed[rows, None, :] & ~suppressed[None, :, :]
            together = both | (neither & same)
        if (together.all(axis=2).sum(axis=1) < k).any():
            return False
    return True


def record_suppression_cells(dataset: Dataset, k: int) -> int:
    """The quasi-identifier cells that suppressing whole records would blank: every record of a
    class smaller than ``k`` (on the quasi-identifiers at level 0) times the number of
    quasi-identifiers, the figure local suppression is compared with.

    Raises:
        ParameterError: ``k`` below 1.
    """
    if int(k) != k or k < 1:
        raise ParameterError(f"k must be a whole number of at least 1, not {k!r}.")
    codes, radices = _codes(dataset)
    group, _ = group_rows(codes, radices, decode=False)
    size = np.bincount(group)
    return int(size[size < k].sum()) * len(codes)


# ----------------------------------------------------------------------------------------------
# The public entry point


def local_suppression(dataset: Dataset, *, k: int | None = None, risk: float | None = None,
                      importance: Sequence[str] | None = None, matching: str = "any",
                      method: str = "greedy") -> LocalSuppression:
    """Suppress the fewest quasi-identifier cells it can so that every record is in a class of at
    least ``k`` records, or has an individual risk of at most ``risk``.

    Args:
        dataset: the table; its quasi-identifiers are read at level 0 (to suppress after a
            recoding, build a Dataset of the recoded table).
        k: the least class size (k-anonymity; Samarati and Sweeney 1998), or
        risk: the highest individual risk allowed, under the Benedetti–Franconi model (Benedetti
            and Franconi 1998; Franconi and Polettini 2004), with the sample and population
            frequencies of each record counted over the records compatible with it under
            ``matching`` (population frequencies from the dataset's sampling weights when it has
            a weight column, else equal to the sample frequencies); give exactly one of the two.
        importance: quasi-identifiers from the most to the least important: the first named is
            suppressed last. Unnamed quasi-identifiers come after the named ones, in the default
            order, which suppresses first the column with the most distinct values (ties: the
            later column first).
        matching: ``"any"`` (a suppressed cell matches every value; sdcMicro's) or
            ``"category"`` (a suppressed cell is its own value ``*``).
        method: ``"greedy"`` (fast, not minimal in general; see :func:`_greedy_any` and
            :func:`_greedy_category`) or ``"optimal"`` (an integer program solved to a proven
            minimum; for small tables and ``k`` only).

    Returns:
        The suppressed cells, whether their number is proven minimal, and a proven lower bound on
        that minimum.

    Raises:
        ParameterError: neither or both of ``k`` and ``risk``, ``k`` below 1 or above the number
            of records, ``risk`` outside (0, 1], an unknown ``matching`` or ``method``, a table
            too large for the optimal method, or ``risk`` with the optimal method.
        ColumnError: ``importance`` names a column twice, an unknown column, or a column that is
            not a quasi-identifier.
        InfeasibleError: no suppression brings every record's risk to ``risk`` (even a record
            with every key suppressed is above it).
    """
    _check_matching(matching)
    if method not in METHODS:
        raise ParameterError(f"unknown local suppression method {method!r}; use 'greedy' or 'optimal'.")
    if (k is None) == (risk is None):
        raise ParameterError("give exactly one of k (k-anonymity) and risk (an individual-risk threshold) "
                             "to local suppression.")
    n = dataset.num_rows
    if getattr(dataset, "row_weights", None) is not None:
        raise ParameterError("local suppression needs one row per record, not a table summarized by its "
                             "distinct rows; collect the records first.")
    if k is not None:
        if isinstance(k, bool) or int(k) != k or k < 1 or k > n:
            raise ParameterError(f"k must be a whole number from 1 to the table's {n} records, not {k!r}.")
        k = int(k)
    else:
        if isinstance(risk, bool) or not (isinstance(risk, (int, float)) and 0 < risk <= 1):
            raise ParameterError(f"the risk threshold must be a number above 0 and at most 1, not {risk!r}.")
        risk = float(risk)
        if method == "optimal":
            raise ParameterError("the optimal method solves k-anonymity only; use method='greedy' with a "
                                 "risk threshold.")
    columns = tuple(dataset.quasi_identifiers)
    if len(columns) > _MAX_COLUMNS:
        raise ParameterError(f"local suppression handles at most {_MAX_COLUMNS} quasi-identifiers, "
                             f"not {len(columns)}.")
    codes, radices = _codes(dataset)
    rank = _suppression_rank(dataset, columns, importance, radices)
    weights, block = (_survey(dataset) if risk is not None else (None, None))
    problem = _Problem(codes, radices, rank, weights, block)
    if risk is not None:
        safe, score = _risk_rule(dataset, risk)
        pattern = problem.greedy(matching, safe, score, k=None)
        return _result(columns, problem, pattern, None, risk, matching, method, False, 0)
    bound = lower_bound(codes, radices, k, matching)
    if method == "optimal":
        from veil.sdc._suppression_exact import exact_suppression

        pattern, proven, solver_bound = exact_suppression(problem.values, k, matching)
        bound = max(bound, solver_bound)
        if pattern is None:  # the solver ran out of time before any solution: the heuristic's
            pattern = problem.greedy(matching, lambda f, F: f >= k, lambda f, F: f.astype(np.float64), k=k)
        cells = _popcount(pattern).sum()
        return _result(columns, problem, pattern, k, None, matching, method, proven or cells == bound, bound)
    pattern = problem.greedy(matching, lambda f, F: f >= k, lambda f, F: f.astype(np.float64), k=k)
    cells = _popcount(pattern).sum()
    return _result(columns, problem, pattern, k, None, matching, method, cells == bound, bound)


def lower_bound(codes: Sequence[np.ndarray], radices: Sequence[int], k: int, matching: str) -> int:
    """A proven lower bound on the fewest cells any local suppression to k-anonymity blanks.

    Let the original classes (identical quasi-identifier tuples) below ``k`` have sizes ``s_C``.

    * ``"category"``: a record left without a suppressed cell stays in a class made of its original
      class's unsuppressed records, fewer than ``k``; so every record of a class below ``k`` loses
      at least one cell: the bound is ``Σ s_C``.
    * ``"any"``: if a record of class C keeps all its cells, the records compatible with it are
      C's records and records with a suppressed cell outside C, so at least ``k − s_C`` records
      outside C lose a cell; otherwise all ``s_C`` records of C lose one. With D the classes of
      the second kind, the records losing a cell number at least
      ``max(Σ_{C∈D} s_C, max_{C∉D} (k − s_C))``, and the bound is its minimum over D (reached by
      putting in D the classes with the largest ``k − s_C``).
    """
    group, _ = group_rows(codes, radices, decode=False)
    size = np.bincount(group)
    small = np.sort(size[size < k])
    if small.size == 0:
        return 0
    if matching == "category":
        return int(small.sum())
    # D = the classes with k − s above a threshold t, i.e. the classes with s below k − t: the
    # smallest sizes first. Try D = the j smallest classes for every j.
    need_outside = k - small                          # decreasing
    inside = np.concatenate([[0], np.cumsum(small)])  # Σ s over the j smallest
    rest = np.concatenate([need_outside, [0]])        # max(k − s) over the classes left out
    return int(np.minimum.reduce(np.maximum(inside, rest)))


# ----------------------------------------------------------------------------------------------
# Input checks


def _check_matching(matching: str) -> None:
    if matching not in MATCHINGS:
        raise ParameterError(f"unknown matching {matching!r}; use 'any' (a suppressed cell matches every "
                             "value) or 'category' (a suppressed cell is its own value).")


def _codes(dataset: Dataset) -> tuple[list[np.ndarray], list[int]]:
    columns = [dataset.column(name) for name in dataset.quasi_identifiers]
    return [c.codes for c in columns], [max(c.cardinality, 1) for c in columns]


def _suppression_rank(dataset: Dataset, columns: tuple[str, ...], importance: Sequence[str] | None,
                      radices: Sequence[int]) -> np.ndarray:
    """Each column's place in the order of suppression: 0 is suppressed first (least important)."""
    named: list[str] = []
    for name in [importance] if isinstance(importance, str) else list(importance or ()):
        if name not in dataset.columns:
            dataset._require_column(name, "importance")
        if name not in columns:
            raise ColumnError(f"the importance column '{name}' is not a quasi-identifier; name only "
                              f"quasi-identifiers ({', '.join(columns)}).")
        if name in named:
            raise ColumnError(f"the importance column '{name}' is listed twice; list it once.")
        named.append(name)
    # Default: more distinct values → suppressed earlier; on ties the later column first.
    distinct = [len(np.unique(dataset.column(name).codes)) for name in columns]
    rest = sorted((c for c in range(len(columns)) if columns[c] not in named),
                  key=lambda c: (-distinct[c], -c))
    order = rest + [columns.index(name) for name in reversed(named)]
    rank = np.empty(len(columns), dtype=np.int64)
    rank[order] = np.arange(len(columns))
    return rank


def _survey(dataset: Dataset) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The sampling weights and the stratum of every record (``None`` when not given)."""
    weights = dataset.sampling_weights
    block = None
    if dataset.strata:
        columns = [dataset.column(name) for name in dataset.strata]
        block = group_rows([c.codes for c in columns], [c.cardinality for c in columns], decode=False)[0]
    return (None if weights is None else np.asarray(weights, dtype=np.float64)), block


def _risk_rule(dataset: Dataset, risk: float) -> tuple[Callable, Callable]:
    from veil.risk.individual import benedetti_franconi

    def rule(f: np.ndarray, F: np.ndarray) -> np.ndarray:
        return np.asarray(benedetti_franconi(f.astype(np.int64), F.astype(np.float64)), dtype=np.float64)

    return (lambda f, F: rule(f, F) <= risk), (lambda f, F: -rule(f, F))


def _popcount(pattern: np.ndarray) -> np.ndarray:
    count = np.zeros(len(pattern), dtype=np.int64)
    rest = pattern.copy()
    while rest.any():
        count += rest & 1
        rest >>= 1
    return count


def _result(columns, problem, pattern, k, risk, matching, method, optimal, bound) -> LocalSuppression:
    bits = np.int64(1) << np.arange(len(columns), dtype=np.int64)
    suppressed = (pattern[:, None] & bits[None, :]) != 0
    return LocalSuppression(columns=columns, suppressed=suppressed, k=k, risk=risk, matching=matching,
                            method=method, optimal=bool(optimal), lower_bound=int(bound))


# ----------------------------------------------------------------------------------------------
# The greedy heuristic


class _Problem:
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
        self._groups: dict[int, tuple[np.ndarray, int]] = {}

    # -- frequencies ----------------------------------------------------------------------------

    def _group(self, rows: np.ndarray, mask: int) -> np.ndarray:
        """Group ids of ``rows`` on the columns outside ``mask``."""
        cols = [c for c in range(self.m) if not (mask >> c) & 1]
        columns = [self.codes[c][rows] for c in cols]
        radices = [self.radices[c] for c in cols]
        if self.block is not None:
            columns.append(self.block[rows])
            radices.append(self.block_radix)
        return group_rows(columns, radices, decode=False)[0]

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
                f[where] += np.bincount(group[q_rows], minlength=size)[group[t_rows]]
                if weights is not None:
                    F[where] += np.bincount(group[q_rows], weights=weights[q_rows], minlength=size)[group[t_rows]]
        if weights is None:
            F = f.astype(np.float64)
        return f, F

    def _union_groups(self, union: int) -> tuple[np.ndarray, int]:
        """Every record's group on the columns outside ``union`` (its original values), and the
        number of groups; computed once per set of columns."""
        cached = self._groups.get(union)
        if cached is None:
            group = self._group(np.arange(self.n), union)
            cached = self._groups[union] = (group, int(group.max()) + 1 if len(group) else 0)
        return cached

    def category_frequencies(self, pattern: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(group, f, F)`` per record under ``"category"`` matching: its class (the records with
        the same pattern and the same values outside it) and the class's sample and population
        frequencies."""
        group = self._star_groups(pattern, np.arange(self.n), pattern)
        f = np.bincount(group)
        F = np.bincount(group, weights=self.weights) if self.weights is not None else f.astype(np.float64)
        return group, f[group], F[group]

    def _star_groups(self, pattern: np.ndarray, rows: np.ndarray, row_pattern: np.ndarray) -> np.ndarray:
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
    """``(key, items holding it)`` for each distinct key."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    ends = np.r_[starts[1:], len(keys)]
    for start, end in zip(starts, ends):
        yield sorted_keys[start], items[order[start:end]]


def _candidates(problem: _Problem, pattern: np.ndarray, targets: np.ndarray):
    """Every (target, column not yet suppressed in it) pair: the target's index, the column and
    the pattern with that column added."""
    free = ((pattern[targets][:, None] >> np.arange(problem.m)) & 1) == 0
    index, column = np.nonzero(free)
    return index, column, pattern[targets][index] | (np.int64(1) << column)


def _greedy_any(problem: _Problem, pattern: np.ndarray, safe: Callable, score: Callable,
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


def _greedy_category(problem: _Problem, pattern: np.ndarray, safe: Callable, score: Callable,
                     k: int | None) -> np.ndarray:
    """Greedy local suppression under ``"category"`` matching.

    Round after round, every record of an unsafe class (a target) is scored on every column it
    still holds: the frequencies of the class it would join if that cell were suppressed and every
    target with the same pattern and the same other values did the same (the records already
    holding that pattern and those values count too). It loses the least important column that
    makes it safe, else the one giving the largest class (ties: the least important). Only
    targets lose cells, and a class below the threshold is made of targets alone, so no safe
    class is broken. After at most one round per column the unsafe records are fully suppressed;
    if their class is still too small it takes in the records, with the most cells already
    suppressed, that safe classes can spare (whole classes, and at last the whole table, if that
    is not enough).
    """
    full = np.int64((1 << problem.m) - 1)
    for _ in range(problem.m + 1):
        group, f, F = problem.category_frequencies(pattern)
        unsafe = ~safe(f, F)
        targets = np.flatnonzero(unsafe & (pattern != full))
        if targets.size == 0:
            break
        index, column, hypothetical = _candidates(problem, pattern, targets)
        others = np.flatnonzero(~unsafe | (pattern == full))
        hf = np.zeros(len(index), dtype=np.int64)
        hF = np.zeros(len(index), dtype=np.float64)
        weights = problem.weights
        for c in range(problem.m):
            pick = np.flatnonzero(column == c)
            if pick.size == 0:
                continue
            rows = np.concatenate([others, targets[index[pick]]])
            row_pattern = np.concatenate([pattern[others], hypothetical[pick]])
            g = problem._star_groups(pattern, rows, row_pattern)
            counts = np.bincount(g)
            hf[pick] = counts[g[len(others):]]
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


def _fill(problem: _Problem, pattern: np.ndarray, group: np.ndarray, f: np.ndarray, F: np.ndarray,
          star: np.ndarray, within: np.ndarray, safe: Callable, k: int | None) -> None:
    """Make the class of fully suppressed records ``star`` safe by fully suppressing more
    records of the same stratum (``within``): either records that safe classes can spare (under
    k: a class keeps at least k), or whole safe classes, whichever costs fewer cells."""
    full = np.int64((1 << problem.m) - 1)
    star_f, star_F = int(star.sum()), float(F[star][0])
    extra = problem.m - _popcount(pattern)
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
