"""The attack on an auditor whose denials depend on the data: values read off the denials.

"The enemy knows the system": the adversary holds the session's transcript (every query, every
answer, every denial) and knows the auditor's rule. For each denial he asks which answers the
rule would have denied. If it denies whatever the answer (as a simulatable auditor does, by
construction), the denial tells him nothing. Otherwise he learns that the true answer lies among
the denied ones, and so that each record's value lies in the union, over those answers, of what
the answers would imply about it. The seed lecture's example: after ``max(x₁…x₅) = 10`` the naive
auditor denies ``max(x₁…x₄)``; it would have answered 10, so the true answer is below 10, so
``x₅ = 10`` (Kenthapadi, Mishra and Nissim, PODS 2005, Section 2).

The adversary reasons about each denial with the answers given before it (a sound account: all
he is told is implied by the transcript; combining several denials could tell him more).
For MAX and MIN, the answers a denied query could have had fall into finitely many cells within
which the outcome cannot change (:meth:`~veil.audit.extremum.ExtremumState.answer_cells`). SUM
denials never depend on the answer (:mod:`veil.audit.sums`), nor do denials of a query of another
aggregate than the session's, so neither leaks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence


from veil.audit.auditors import make_auditor
from veil.audit.extremum import ExtremumState, Outcome
from veil.audit.queries import Query
from veil.audit.sums import SumState

# An interval of the real line: (low, low closed, high, high closed).
Interval = tuple[float, bool, float, bool]


def _union(intervals: list[Interval]) -> list[Interval]:
    """The union of intervals, as disjoint intervals in increasing order."""
    ordered = sorted(intervals, key=lambda v: (v[0], not v[1]))
    out: list[list] = []
    for lo, lc, hi, hc in ordered:
        if out:
            plo, plc, phi, phc = out[-1]
            if lo < phi or (lo == phi and (lc or phc)):
                if hi > phi or (hi == phi and hc):
                    out[-1][2], out[-1][3] = hi, hc if hi > phi else (hc or phc)
                continue
        out.append([lo, lc, hi, hc])
    return [tuple(v) for v in out]


def _flip(interval: Interval) -> Interval:
    lo, lc, hi, hc = interval
    return (-hi, hc, -lo, lc)


def _number(x: float) -> str:
    return f"{int(x)}" if float(x).is_integer() else f"{x:g}"


def describe(intervals: list[Interval]) -> str:
    """A set of values in words: ``= 10``, ``> 2``, ``≤ 8``, ``in (2, 5]``, joined by ``or``."""
    parts = []
    for lo, lc, hi, hc in intervals:
        if lo == hi:
            parts.append(f"= {_number(lo)}")
        elif math.isinf(lo) and math.isinf(hi):
            parts.append("anything")
        elif math.isinf(lo):
            parts.append(f"{'≤' if hc else '<'} {_number(hi)}")
        elif math.isinf(hi):
            parts.append(f"{'≥' if lc else '>'} {_number(lo)}")
        else:
            parts.append(f"in {'[' if lc else '('}{_number(lo)}, {_number(hi)}{']' if hc else ')'}")
    return " or ".join(parts)


@dataclass(frozen=True)
class Inference:
    """What one denial told the adversary about one record.

    Attributes:
        step: the number of the denied query in the session (from 1).
        record: the record.
        before: its possible values given the answers before the denial.
        after: its possible values once the denial is read.
        value: the value, when the denial pins it exactly; else ``None``.
    """

    step: int
    record: int
    before: tuple
    after: tuple
    value: float | None

    @property
    def learned(self) -> str:
        return describe(list(self.after))

    def to_dict(self) -> dict:
        return {"step": self.step, "record": self.record, "before": describe(list(self.before)),
                "after": self.learned, "value": self.value}


class DenialAttack:
    """An adversary who knows the auditor's rule and reads a session's transcript.

    Args:
        auditor: the rule the session's auditor followed: ``"value-based"`` or ``"simulatable"``.

    Attributes (after :meth:`run`):
        inferences_: every :class:`Inference`, in the order of the denials.
        denials_read_: the number of denials read.
        uninformative_: the denials that would have been made whatever the answer.
    """

    def __init__(self, auditor: str = "value-based"):
        self.auditor = auditor

    def run(self, transcript: Sequence[tuple[Query, object]], n_records: int) -> "DenialAttack":
        """Replay ``transcript`` (``(Query, Decision)`` pairs, as :attr:`AuditSession.transcript_`).

        Raises:
            ParameterError: an unknown auditor rule.
        """
        rule = make_auditor(self.auditor)
        states: dict[str, object] = {}
        fixed = None
        self.inferences_: list[Inference] = []
        self.denials_read_ = 0
        self.uninformative_ = 0
        for query, decision in transcript:
            agg = query.aggregate
            if agg not in states:
                states[agg] = SumState(n_records) if agg == "sum" else ExtremumState(n_records,
                                                                                   1 if agg == "max" else -1)
            state = states[agg]
            if decision.answered:
                if agg == "sum":
                    state.commit(state.plan(query.rows))
                else:
                    state.record(query.rows, decision.answer)
                fixed = agg
                continue
            self.denials_read_ += 1
            if agg == "sum" or (fixed is not None and fixed != agg):
                self.uninformative_ += 1
                continue
            found = self._read_denial(state, query, decision.number, rule.simulatable)
            if not found:
                self.uninformative_ += 1
            self.inferences_.extend(found)
        return self

    @staticmethod
    def _read_denial(state: ExtremumState, query: Query, step: int, simulatable: bool) -> list[Inference]:
        rows = query.rows
        outcomes = [state.outcome(rows, lo, hi) for lo, hi in state.answer_cells(rows)]
        consistent = [o for o in outcomes if o.consistent]
        if simulatable:
            # The rule never reads the answer: it denies in every cell or in none.
            denied = consistent if state.simulatable_denial(rows) is not None else []
        else:
            denied = [o for o in consistent if o.reveals]
        if len(denied) == len(consistent):
            return []
        candidates = set(rows.tolist())
        for o in denied:
            candidates.update(o.pinned)
        out = []
        for record in sorted(candidates):
            bound = state.bound[record]
            prior = (-math.inf, False, bound, not math.isinf(bound))
            after = _union([_possible(o, record, bound) for o in denied])
            if after == [prior]:
                continue
            if state.sign < 0:
                prior, after = _flip(prior), [_flip(v) for v in reversed(after)]
            value = after[0][0] if len(after) == 1 and after[0][0] == after[0][2] else None
            out.append(Inference(step, record, (prior,), tuple(after), value))
        return out


def _possible(outcome: Outcome, record: int, bound: float) -> Interval:
    """The values ``record`` can take over the answers of one cell (in the state's sign)."""
    lo, hi = outcome.low, outcome.high
    if record in outcome.pinned:
        value = outcome.pinned[record]
        if value is not None:
            return (value, True, value, True)
        return (lo, True, hi, True) if outcome.point else (lo, False, hi, False)
    if record in set(outcome.lowered.tolist()):
        return (-math.inf, False, hi, outcome.point)
    return (-math.inf, False, bound, not math.isinf(bound))
