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

**The weakness of ``"any"``.** A record with every key suppressed is compatible with every
record, so k − 1 such records make *any* table k-anonymous in this sense: the minimum number of
cells is never more than (k − 1) × the number of quasi-identifiers, and the exact method, which
minimizes under the definition as stated, may well return such "wildcard" records on a small
table. They protect nobody in particular: the unique records stay as they were. The greedy
method never aims for this (it suppresses the records that are at risk, one cell at a time), which
is why its count under ``"any"`` can be far above the minimum and the lower bound; sdcMicro's
frequencies count suppressed values the same way. ``"category"`` has no such shortcut: every
record of a class below k loses at least one cell.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from veil.classes import group_rows
from veil.data.dataset import Dataset
from veil.errors import ColumnError, ParameterError
from veil.sdc._suppression_greedy import Problem, popcount, restore_category

MATCHINGS = ("any", "category")
# Patterns the lower bound tries at most, all sizes together (it stops before a size that would
# pass this; what it has proven so far stands).
_BOUND_PATTERNS = 1000
METHODS = ("greedy", "optimal")
# Suppression patterns are bit masks over the quasi-identifiers, one int64 per record.
_MAX_COLUMNS = 62


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
        ParameterError: an unknown matching, or ``suppressed`` not of shape records × columns.
    """
    _check_matching(matching)
    suppressed = np.asarray(suppressed, dtype=bool)
    lengths = {len(c) for c in codes}
    if suppressed.ndim != 2 or suppressed.shape[1] != len(codes) or lengths - {suppressed.shape[0]}:
        raise ParameterError("the suppressed cells must have one row per record and one column per code array.")
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
        method: ``"greedy"`` (fast, not minimal in general; the rounds are described in
            :mod:`veil.sdc._suppression_greedy`) or ``"optimal"`` (an integer program solved to a
            proven minimum, :mod:`veil.sdc._suppression_exact`; for small tables and ``k`` only).

    Strata (``dataset.strata``) count under ``risk``: a record's frequencies are counted within
    its stratum, as veil's risk measures count them. k-anonymity is over the whole table, as
    ``veil check`` measures it. Sampling weights matter only under ``risk``.

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
    problem = Problem(codes, radices, rank, weights, block)
    if risk is not None:
        safe, score = _risk_rule(dataset, risk)
        pattern = problem.greedy(matching, safe, score, k=None)
        # No bound is proven under a risk threshold beyond 0 (the risk of a record is not
        # monotone in the records it is compatible with): only nothing suppressed is proven minimal.
        return _result(columns, problem, pattern, None, risk, matching, method, not pattern.any(), 0)
    bound = lower_bound(codes, radices, k, matching)
    if method == "optimal":
        from veil.sdc._suppression_exact import exact_suppression

        pattern, proven, solver_bound = exact_suppression(problem.values, k, matching, rank)
        bound = max(bound, solver_bound)
        if pattern is None:  # the solver ran out of time before any solution: the heuristic's
            pattern = problem.greedy(matching, lambda f, F: f >= k, lambda f, F: f.astype(np.float64), k=k)
        cells = popcount(pattern).sum()
        return _result(columns, problem, pattern, k, None, matching, method, proven or cells == bound, bound)
    pattern = problem.greedy(matching, lambda f, F: f >= k, lambda f, F: f.astype(np.float64), k=k)
    if matching == "category":
        restore_category(problem, pattern, k)
    cells = popcount(pattern).sum()
    return _result(columns, problem, pattern, k, None, matching, method, cells == bound, bound)


def lower_bound(codes: Sequence[np.ndarray], radices: Sequence[int], k: int, matching: str) -> int:
    """A proven lower bound on the fewest cells any local suppression to k-anonymity blanks.

    Let the original classes (identical quasi-identifier tuples) below ``k`` have sizes ``s_C``.

    * ``"category"``: a record with the suppressed columns P is in a class of records with the
      same pattern that agree with it outside P, so that class holds at most N_P(C), the records
      of the table agreeing with C outside P. A record of C therefore loses at least
      ``d_C = min{|P| : N_P(C) ≥ k}`` cells (at least 1, as N_∅(C) = s_C < k), and the bound is
      ``Σ s_C·d_C``. (Patterns are tried by size, 1,000 at most in all; past that, a class not yet
      settled counts the size reached, still a lower bound.)
    * ``"any"``: if a record of class C keeps all its cells, the records compatible with it are
      C's records and records with a suppressed cell outside C, so at least ``k − s_C`` records
      outside C lose a cell; otherwise all ``s_C`` records of C lose one. With D the classes of
      the second kind, the records losing a cell number at least
      ``max(Σ_{C∈D} s_C, max_{C∉D} (k − s_C))``, and the bound is its minimum over D (reached by
      putting in D the classes with the largest ``k − s_C``).
    """
    group, keys = group_rows(codes, radices)
    size = np.bincount(group)
    below = size < k
    small = np.sort(size[below])
    if small.size == 0:
        return 0
    if matching == "category":
        return _category_bound(keys, radices, size, k)
    # D = the classes with k − s above a threshold t, i.e. the classes with s below k − t: the
    # smallest sizes first. Try D = the j smallest classes for every j.
    need_outside = k - small                          # decreasing
    inside = np.concatenate([[0], np.cumsum(small)])  # Σ s over the j smallest
    rest = np.concatenate([need_outside, [0]])        # max(k − s) over the classes left out
    return int(np.minimum.reduce(np.maximum(inside, rest)))


def _category_bound(keys: np.ndarray, radices: Sequence[int], size: np.ndarray, k: int) -> int:
    """``Σ s_C·d_C`` over the classes below k (see :func:`lower_bound`)."""
    m = keys.shape[1]
    need = np.zeros(len(size), dtype=np.int64)
    open_ = np.flatnonzero(size < k)
    tried = 0
    for width in range(1, m + 1):
        tried += math.comb(m, width)
        if open_.size == 0 or tried > _BOUND_PATTERNS:
            break
        # Every open class failed every pattern narrower than this: it needs at least this many.
        need[open_] = width
        settled = np.zeros(len(open_), dtype=bool)
        for hidden in itertools.combinations(range(m), width):
            kept = [c for c in range(m) if c not in hidden]
            if not kept:
                settled[:] = size.sum() >= k
                break
            group = group_rows([keys[:, c] for c in kept], [radices[c] for c in kept], decode=False)[0]
            settled |= np.bincount(group, weights=size)[group[open_]] >= k
        open_ = open_[~settled]
    return int((size * need).sum())


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


def _result(columns, problem, pattern, k, risk, matching, method, optimal, bound) -> LocalSuppression:
    bits = np.int64(1) << np.arange(len(columns), dtype=np.int64)
    suppressed = (pattern[:, None] & bits[None, :]) != 0
    return LocalSuppression(columns=columns, suppressed=suppressed, k=k, risk=risk, matching=matching,
                            method=method, optimal=bool(optimal), lower_bound=int(bound))
