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

**Cost.** A record stays a witness of ``j`` exactly while its bound equals ``a_j`` (bounds only
fall, and a record of ``Q_j`` has a bound of at most ``a_j`` from ``j`` on), so witness sets are
never stored: ``W_j = {i ∈ Q_j : u_i = a_j}`` is read off the query's records when needed. To find
the answered queries a new query Q could leave with at most one witness, each keeps a *sketch*: its
three live witnesses first in a fixed random order of the records. A query with at most one
witness outside Q has at least two sketch records in Q, so one pass over the sketches (three
entries per answered query) gives every candidate; each candidate is then checked exactly,
scanning its witnesses in chunks and stopping at the second one outside Q. Candidates are taken
by decreasing answer and the scan stops at the first query Q would empty (it sets θ), so a query
costs O(answered queries) plus the witnesses of the few candidates. A sketch is refreshed when
one of its records is lowered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Witnesses per sketch, and the chunk in which candidates' witnesses are scanned.
_SKETCH = 3
_CHUNK = 256


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
        self._answers = np.zeros(16)
        self._sketch = np.full((16, _SKETCH), -1, dtype=np.int64)  # −1: fewer live witnesses
        self._rows: list[np.ndarray] = []
        # A fixed random order of the records for the sketches (it only affects speed).
        self._order = np.random.default_rng(0x5EED).permutation(n).astype(np.int64)
        self._mask = np.zeros(n, dtype=bool)  # scratch: the records of the query at hand
        self.answered = 0

    # -- reading the state -------------------------------------------------------------------

    @property
    def answered_any(self) -> bool:
        return self.answered > 0

    @property
    def answers(self) -> np.ndarray:
        """Each answered query's answer (in the sign of the state)."""
        return self._answers[:self.answered]

    def witnesses(self, j: int) -> np.ndarray:
        """The live witnesses of answered query ``j``: its records still bounded by its answer."""
        rows = self._rows[j]
        return rows[self.bound[rows] == self._answers[j]]

    def remaining_witness(self, j: int, excluded: np.ndarray) -> np.ndarray:
        """The live witnesses of answered query ``j`` outside the records ``excluded``."""
        witnesses = self.witnesses(j)
        return witnesses[~np.isin(witnesses, excluded)]

    def _make_sketch(self, witnesses: np.ndarray) -> np.ndarray:
        out = np.full(_SKETCH, -1, dtype=np.int64)
        if len(witnesses) > _SKETCH:
            witnesses = witnesses[np.argpartition(self._order[witnesses], _SKETCH - 1)[:_SKETCH]]
        out[:len(witnesses)] = witnesses
        return out

    def _outside(self, j: int, cap: int) -> int:
        """How many live witnesses of ``j`` lie outside the query at hand (the scratch mask),
        counting no further than ``cap``."""
        rows, a = self._rows[j], self._answers[j]
        found = 0
        for start in range(0, len(rows), _CHUNK):
            chunk = rows[start:start + _CHUNK]
            found += int(np.count_nonzero((self.bound[chunk] == a) & ~self._mask[chunk]))
            if found >= cap:
                return cap
        return found

    def _candidates(self) -> tuple[np.ndarray, np.ndarray]:
        """The answered queries with at most one sketch record outside the query at hand (every
        query it could leave with one witness or none), by decreasing answer and, among equal
        answers, those with their whole sketch inside first; and that number of sketch records."""
        sketch = self._sketch[:self.answered]
        inside = np.where(sketch >= 0, self._mask[np.maximum(sketch, 0)], True).sum(axis=1)
        found = np.flatnonzero(inside >= _SKETCH - 1)
        order = np.lexsort((-inside[found], -self._answers[found]))
        return found[order], inside[found[order]]

    def _exposed(self, rows: np.ndarray, above: float, first_only: bool) -> tuple[float, list[int]]:
        """Among the answered queries with answers above ``above``: θ (the largest answer of a
        query Q would leave without witness, −∞ if none) and the queries with answers above θ
        it would leave with one. With ``first_only``, stop at the first answer that has such
        queries (enough to decide)."""
        self._mask[rows] = True
        try:
            candidates, _ = self._candidates()
            candidates = candidates[self._answers[candidates] > above]
            answers = self._answers[candidates]
            bounds = np.flatnonzero(np.r_[True, answers[1:] != answers[:-1], True])
            risky: list[int] = []
            for lo, hi in zip(bounds[:-1], bounds[1:]):
                found = []
                for j in candidates[lo:hi].tolist():
                    outside = self._outside(j, 2)
                    if outside == 0:
                        # Q would empty j: no answer below its answer is possible, so queries
                        # answered at or below it cannot be left with one witness either.
                        return float(answers[lo]), risky
                    if outside == 1:
                        found.append(j)
                risky += found
                if risky and first_only:
                    return -np.inf, risky
            return -np.inf, risky
        finally:
            self._mask[rows] = False

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
        theta, risky = self._exposed(rows, -np.inf, first_only=True)
        if not risky:
            return None
        j = risky[0]
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
        theta, risky = self._exposed(rows, probe, first_only=False)
        if theta > -np.inf:
            return Outcome(low, high, False, {}, lowered)
        pinned = {}
        if len(own) == 1:
            pinned[int(own[0])] = None
        for j in risky:
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
        for j in range(self.answered):
            witnesses = self.witnesses(j)
            if len(witnesses) == 1:
                out[int(witnesses[0])] = float(self._answers[j]) * self.sign
        return out

    # -- answering -----------------------------------------------------------------------------

    def record(self, rows: np.ndarray, answer: float) -> None:
        """Take the answered query ``max(rows) = answer`` (``min`` for ``sign = −1``) into account."""
        a = answer * self.sign
        t = self.answered
        bounds = self.bound[rows]
        lowered = rows[bounds > a]
        witnesses = rows[bounds >= a]
        self.bound[lowered] = a
        if len(lowered) and t:
            # Sketches holding a lowered record lost a witness: take the next ones.
            sketch = self._sketch[:t]
            dead = (sketch >= 0) & (self.bound[np.maximum(sketch, 0)] != self._answers[:t, None])
            for j in np.flatnonzero(dead.any(axis=1)).tolist():
                self._sketch[j] = self._make_sketch(self.witnesses(j))
        if t == len(self._answers):
            self._answers = np.concatenate([self._answers, np.zeros(t)])
            self._sketch = np.concatenate([self._sketch, np.full((t, _SKETCH), -1, dtype=np.int64)])
        self._answers[t] = a
        self._sketch[t] = self._make_sketch(witnesses)
        self._rows.append(rows)
        self.answered = t + 1
