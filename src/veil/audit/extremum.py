"""What answered MAX queries imply about the records, and when a new one would reveal a record.

The setting of Kenthapadi, Mishra and Nissim ("Simulatable auditing", PODS 2005), Section 4:
records hold real values ``x₁ … xₙ`` that the adversary knows nothing about beforehand (no bounds,
duplicates allowed), queries ask ``max{xᵢ : i ∈ Q}``, and privacy is breached when some ``xᵢ`` is
*uniquely determined* by the answers. MIN queries are MAX queries on ``−x`` (:class:`ExtremumState`
with ``sign = −1``); a session that mixes MAX and MIN answers is outside what the paper proves and
is not handled here (the auditors deny the second kind, see :mod:`veil.audit.auditors`).

**What answers imply.** After answering ``(Q_j, a_j)``, every record has the upper bound
``u_i = min{a_j : i ∈ Q_j}`` (``+∞`` if no answered query holds it) and each query needs a record
at its answer: its *witnesses* are ``W_j = {i ∈ Q_j : u_i = a_j}``. The answers are consistent iff
every ``W_j`` is non-empty (set every ``x_i = u_i``). A record is determined iff it is the only
witness of some query (then ``x_i = a_j``); any other record can be lowered freely, since every
query it belongs to keeps another witness at its answer. So the state is safe iff every
``|W_j| ≥ 2``, and this module keeps ``c_j = |W_j|`` for every answered query.

**A new query Q with answer a** (``m = max_{i∈Q} u_i``, ``d_j = |W_j ∩ Q|``):

* ``a > m`` is impossible;
* the records of Q with ``u_i > a`` drop to ``a``; they are witnesses only of queries with
  ``a_j = u_i > a``, each of which loses all its ``d_j`` witnesses in Q: ``c_j ← c_j − d_j``;
* Q's own witnesses are ``{i ∈ Q : u_i ≥ a}``.

``a`` is consistent iff no affected query is left without witness, i.e. ``a ≥ θ = max{a_j : c_j =
d_j}``; it reveals a record iff some affected query keeps exactly one witness (``c_j − d_j = 1``
with ``a_j > a``), or Q has a single witness (``|{i ∈ Q : u_i ≥ a}| = 1``).

**The simulatable decision** (KMN's max auditor: deny when *some* answer consistent with the past
would reveal a record, decided without looking at the true answer) follows in closed form: deny
iff the largest bound over Q is held by one record only (an answer at that bound, or above every
other bound when it is ``+∞``, pins it), or some answered query has ``c_j − d_j = 1`` and
``a_j > θ`` (an answer just below ``a_j`` leaves one witness). :meth:`ExtremumState.answer_cells`
enumerates the consistent answers cell by cell (the outcome only changes where ``a`` crosses a
bound of Q), which the attack on the value-based auditor uses and the tests check the closed form
against.

**Cost.** Finding the ``d_j`` needs, for the records of Q, the queries they witness: an index of
(record, query) pairs kept as a log-structured merge of compressed-row blocks (a small buffer,
blocks merged when two reach the same size, stale pairs of lowered records dropped at merges), so
a query costs O(|Q| · log(pairs) + pairs read) and nothing is re-solved.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# (record, query) pairs buffered before they are indexed as a block.
_BUFFER = 4096


def _runs(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``starts[0] … starts[0]+lengths[0]-1, starts[1] …``: the positions of several runs."""
    total = int(lengths.sum())
    return np.arange(total, dtype=np.int64) + np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)


class _PairIndex:
    """(record, query) pairs found by record: a log-structured merge of compressed-row blocks."""

    def __init__(self, n: int):
        self.n = n
        self.blocks: list[tuple[np.ndarray, np.ndarray]] = []  # (indptr [n+1], queries sorted by record)
        self.sizes: list[int] = []
        self._records: list[np.ndarray] = []
        self._queries: list[np.ndarray] = []
        self._buffered = 0

    def add(self, records: np.ndarray, query: int, live) -> None:
        self._records.append(records)
        self._queries.append(np.full(len(records), query, dtype=np.int64))
        self._buffered += len(records)
        if self._buffered >= _BUFFER:
            self._flush(live)

    def _flush(self, live) -> None:
        records = np.concatenate(self._records)
        queries = np.concatenate(self._queries)
        self._records, self._queries, self._buffered = [], [], 0
        # Merge with the newest blocks while they are not larger than what is being added.
        while self.sizes and self.sizes[-1] <= len(records):
            indptr, old = self.blocks.pop()
            self.sizes.pop()
            old_records = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(indptr))
            records = np.concatenate([old_records, records])
            queries = np.concatenate([old, queries])
            keep = live(records, queries)
            records, queries = records[keep], queries[keep]
        order = np.argsort(records, kind="stable")
        indptr = np.concatenate([[0], np.cumsum(np.bincount(records, minlength=self.n))]).astype(np.int64)
        self.blocks.append((indptr, queries[order]))
        self.sizes.append(len(records))

    def pairs(self, rows: np.ndarray, in_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every stored (record, query) pair whose record is in ``rows`` (``in_rows``: their mask)."""
        records, queries = [], []
        for indptr, block in self.blocks:
            starts = indptr[rows]
            lengths = indptr[rows + 1] - starts
            if lengths.any():
                records.append(np.repeat(rows, lengths))
                queries.append(block[_runs(starts, lengths)])
        if self._records:
            buffered = np.concatenate(self._records)
            hit = in_rows[buffered]
            records.append(buffered[hit])
            queries.append(np.concatenate(self._queries)[hit])
        if not records:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty
        return np.concatenate(records), np.concatenate(queries)


def _inside(low: float, high: float) -> float:
    """An answer in the cell: the point itself, or a point inside the open interval."""
    if low == high:
        return low
    if np.isinf(low) and np.isinf(high):
        return 0.0
    if np.isinf(low):
        return high - 1.0
    if np.isinf(high):
        return low + 1.0
    return (low + high) / 2


@dataclass(frozen=True)
class Outcome:
    """What answering a query with answers in one cell would imply.

    Attributes:
        low, high: the cell of answers (a single answer when equal); ``low`` may be −∞ and
            ``high`` +∞ (in the sign of the state: for MIN states, values are negated).
        consistent: whether such an answer is possible given the answers so far.
        pinned: record → the value it would be determined to (``None``: the answer itself).
        lowered: the records of the query whose bound would drop to the answer.
    """

    low: float
    high: float
    consistent: bool
    pinned: dict
    lowered: np.ndarray

    @property
    def point(self) -> bool:
        return self.low == self.high

    @property
    def reveals(self) -> bool:
        return self.consistent and bool(self.pinned)


class ExtremumState:
    """What answered MAX queries (``sign = 1``) or MIN queries (``sign = −1``) imply.

    Args:
        n: the number of records.
        sign: ``1`` for MAX, ``−1`` for MIN (a MIN answer ``a`` is stored as a MAX answer ``−a``).

    Attributes:
        bound: ``u_i`` per record (in the sign of the state; ``+∞`` when unconstrained).
        answered: number of queries answered.
    """

    def __init__(self, n: int, sign: int = 1):
        self.n = n
        self.sign = sign
        self.bound = np.full(n, np.inf)
        # The query that last lowered each record's bound: its older witness pairs are stale.
        self.lowered_at = np.full(n, -1, dtype=np.int64)
        self._answers = np.zeros(16)
        self._counts = np.zeros(16, dtype=np.int64)
        self._witnesses: list[np.ndarray] = []
        self._index = _PairIndex(n)
        self._mask = np.zeros(n, dtype=bool)  # scratch: the records of the query at hand
        self._last = None
        self.answered = 0

    # -- reading the state -------------------------------------------------------------------

    @property
    def answered_any(self) -> bool:
        return self.answered > 0

    @property
    def answers(self) -> np.ndarray:
        """Each answered query's answer (in the sign of the state)."""
        return self._answers[:self.answered]

    @property
    def counts(self) -> np.ndarray:
        """Each answered query's number of witnesses ``c_j``."""
        return self._counts[:self.answered]

    def _live(self, records: np.ndarray, queries: np.ndarray) -> np.ndarray:
        return self.lowered_at[records] <= queries

    def _pairs(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The live (record, answered query) witness pairs of the records ``rows``; the last
        query's are kept, since deciding and then recording it read the same pairs."""
        if self._last is not None and self._last[0] is rows:
            return self._last[1]
        self._mask[rows] = True
        records, queries = self._index.pairs(rows, self._mask)
        self._mask[rows] = False
        live = self._live(records, queries)
        found = records[live], queries[live]
        self._last = (rows, found)
        return found

    def _touched(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For the answered queries with witnesses in ``rows``: (query, d_j, witness records)."""
        records, queries = self._pairs(rows)
        touched, d = np.unique(queries, return_counts=True)
        return touched, d, records

    def remaining_witness(self, query: int, excluded: np.ndarray) -> np.ndarray:
        """The live witnesses of an answered query outside the records ``excluded``."""
        witnesses = self._witnesses[query]
        live = self.lowered_at[witnesses] <= query
        return witnesses[live & ~np.isin(witnesses, excluded)]

    # -- deciding ------------------------------------------------------------------------------

    def simulatable_denial(self, rows: np.ndarray) -> tuple[str, int] | None:
        """Why some answer consistent with the past would reveal a record (a sentence with a
        ``{record}`` field, and the record), or ``None``.

        Decided from the bounds and the answered queries only (see the module notes).
        """
        bounds = self.bound[rows]
        top = bounds.max()
        at_top = rows[bounds == top]
        if len(rows) == 1:
            return "the query holds only {record}, so any answer would be its value", int(rows[0])
        if len(at_top) == 1:
            record = int(at_top[0])
            if np.isinf(top):
                return ("{record} is the only record of the query that no answer bounds yet, so any answer above "
                        "the others' bounds would be its value"), record
            return "{record} alone has the query's highest bound, so an answer equal to it would be its value", record
        touched, d, _ = self._touched(rows)
        if not len(touched):
            return None
        answers, left = self._answers[touched], self._counts[touched] - d
        emptied = answers[left == 0]
        theta = emptied.max() if len(emptied) else -np.inf
        risky = touched[(left == 1) & (answers > theta)]
        if not len(risky):
            return None
        j = int(risky[np.argmax(self._answers[risky])])
        record = int(self.remaining_witness(j, rows)[0])
        side = "below" if self.sign > 0 else "above"
        value = float(self._answers[j]) * self.sign
        shown = f"{int(value)}" if value.is_integer() else f"{value:g}"
        return (f"an answer {side} {shown}, an earlier answer, would leave {{record}} as the only record that can "
                f"reach {shown}, revealing it"), record

    def outcome(self, rows: np.ndarray, low: float, high: float) -> Outcome:
        """What an answer in the cell ``[low, high]`` (a point, or an open interval that crosses no
        bound of the query's records) would imply (see the module notes)."""
        bounds = self.bound[rows]
        probe = _inside(low, high)
        own = rows[bounds >= probe]
        lowered = rows[bounds > probe]
        if not len(own):
            return Outcome(low, high, False, {}, lowered)
        touched, d, records = self._touched(rows)
        affected = self._answers[touched] > probe
        left = self._counts[touched] - d
        if (affected & (left == 0)).any():
            return Outcome(low, high, False, {}, lowered)
        pinned = {}
        if len(own) == 1:
            pinned[int(own[0])] = None
        for j in touched[affected & (left == 1)].tolist():
            for record in self.remaining_witness(j, rows).tolist():
                pinned[int(record)] = float(self._answers[j])
        return Outcome(low, high, True, pinned, lowered)

    def answer_cells(self, rows: np.ndarray) -> list[tuple[float, float]]:
        """The cells of answers within which the outcome of a query cannot change: every distinct
        finite bound of its records (``(b, b)``), the open intervals between them and below the
        lowest, and, when a record is unbounded, the open interval above the highest."""
        bounds = np.unique(self.bound[rows])
        cells, lower = [], -np.inf
        for b in bounds[np.isfinite(bounds)].tolist():
            cells += [(lower, b), (b, b)]
            lower = b
        if np.isinf(bounds[-1]):
            cells.append((lower, np.inf))
        return cells

    def value_based_denial(self, rows: np.ndarray, answer: float) -> tuple[str, int] | None:
        """Why this true answer would reveal a record (a sentence with a ``{record}`` field, and
        the record), or ``None``: the naive auditor's test."""
        a = answer * self.sign
        result = self.outcome(rows, a, a)
        if not result.pinned:
            return None
        record, value = next(iter(result.pinned.items()))
        if value is None:
            return "the answer would be the value of {record}, the only record of the query that can reach it", record
        return "the answer would leave {record} as the only possible extreme of an earlier query", record

    def determined(self) -> dict[int, float]:
        """Record → value, for the records the answers determine (the only witness of a query;
        values in the column's own sign)."""
        out = {}
        for j in np.flatnonzero(self.counts == 1).tolist():
            for record in self.remaining_witness(j, np.zeros(0, dtype=np.int64)).tolist():
                out[int(record)] = float(self._answers[j]) * self.sign
        return out

    # -- answering -----------------------------------------------------------------------------

    def record(self, rows: np.ndarray, answer: float) -> None:
        """Take the answered query ``max(rows) = answer`` (``min`` for ``sign = −1``) into account."""
        a = answer * self.sign
        t = self.answered
        bounds = self.bound[rows]
        lowered = rows[bounds > a]
        if len(lowered):
            records, queries = self._pairs(rows)
            touched, d = np.unique(queries[self.bound[records] > a], return_counts=True)
            self._counts[touched] -= d
        self._last = None
        self.bound[lowered] = a
        self.lowered_at[lowered] = t
        witnesses = rows[bounds >= a]
        if t == len(self._answers):
            self._answers = np.concatenate([self._answers, np.zeros(t)])
            self._counts = np.concatenate([self._counts, np.zeros(t, dtype=np.int64)])
        self._answers[t] = a
        self._counts[t] = len(witnesses)
        self._witnesses.append(witnesses)
        self.answered = t + 1
        self._index.add(witnesses, t, self._live)
