"""Online query auditors: answer a MAX, MIN or SUM query truthfully, or deny it.

Two auditors share one interface and one account of what answered queries imply
(:mod:`veil.audit.extremum` for MAX and MIN, :mod:`veil.audit.sums` for SUM):

* :class:`ValueBasedAuditor`, the naive auditor of the seed lecture: it computes the true answer
  and denies when that answer, with the earlier ones, would determine some record. Its denials
  depend on the data, so they leak: :mod:`veil.audit.attack` reads values off them.
* :class:`SimulatableAuditor` (Kenthapadi, Mishra and Nissim, "Simulatable auditing", PODS 2005):
  it decides from the queries and the answers already given only, and denies when *some* answer
  consistent with them would determine a record. Its :meth:`~SimulatableAuditor.decide` is never
  handed the new answer or the data, so an adversary can run it himself: denials say nothing.

**What is audited, and where this stops.** KMN prove the simulatable auditor for MAX queries
(values real, unbounded, duplicates allowed; a breach is a value determined exactly); MIN is the
same on negated values. For SUM, whether a record is determined depends on the queries only (a
unit vector in their span), so the value-based SUM auditor and the simulatable one coincide
(KMN's Section 3 remark on Chin's sum auditor); KMN's probabilistic partial-compromise auditor for
sums is not implemented. A session whose answers mixed MAX with MIN, or either with SUM, is not
covered by their results (the combined implications are not tracked), so both auditors answer
one aggregate per session: the first answered query fixes it and queries of another aggregate
are denied, a decision that depends on the kinds of the queries only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.audit.extremum import ExtremumState
from veil.audit.queries import Query
from veil.audit.sums import SumPlan, SumState
from veil.errors import ParameterError

@dataclass(frozen=True)
class Denial:
    """Why a query is denied: a sentence with a ``{record}`` field (the record it would reveal,
    or ``None`` when no single record is at stake)."""

    reason: str
    record: int | None = None


class _Auditor:
    """What both auditors share: the state per aggregate and the one-aggregate rule."""

    simulatable = False
    name = "auditor"

    def __init__(self) -> None:
        self.n_records_: int | None = None

    def start(self, n_records: int) -> "_Auditor":
        """Begin a session over ``n_records`` records (forgetting any earlier one)."""
        self.n_records_ = int(n_records)
        self.states_: dict[str, object] = {}
        self.aggregate_: str | None = None
        self._plan: tuple[Query, SumPlan] | None = None
        return self

    def _state(self, aggregate: str):
        if aggregate not in self.states_:
            if aggregate == "sum":
                self.states_[aggregate] = SumState(self.n_records_)
            else:
                self.states_[aggregate] = ExtremumState(self.n_records_, 1 if aggregate == "max" else -1)
        return self.states_[aggregate]

    def _mixing_denial(self, query: Query) -> Denial | None:
        if self.aggregate_ is None or self.aggregate_ == query.aggregate:
            return None
        return Denial(f"this session has answered {self.aggregate_.upper()} queries, and answers mixing "
                      f"{query.aggregate.upper()} with them are not audited: KMN's auditors take one aggregate at a "
                      "time")

    def _sum_plan(self, query: Query) -> SumPlan:
        plan = self._state("sum").plan(query.rows)
        self._plan = (query, plan)
        return plan

    def record(self, query: Query, answer: float) -> None:
        """Take an answered query into account (the session calls this after answering)."""
        state = self._state(query.aggregate)
        if query.aggregate == "sum":
            planned = self._plan
            plan = planned[1] if planned is not None and planned[0] is query else state.plan(query.rows)
            state.commit(plan)
            self._plan = None
        else:
            state.record(query.rows, answer)
        self.aggregate_ = query.aggregate

    def why_safe(self, query: Query) -> str:
        """Why an answered query was safe, for the log."""
        if query.aggregate == "sum":
            plan = self._plan[1] if self._plan is not None else None
            if plan is not None and plan.dependent:
                return "the sum follows from earlier answers, so it adds nothing"
            return "with the earlier sums it determines no record"
        return self._safe_extremum


class SimulatableAuditor(_Auditor):
    """Kenthapadi, Mishra and Nissim's simulatable auditor (PODS 2005; see the module notes).

    Call :meth:`start`, then for each query :meth:`decide` (which sees only the query and the
    answers already given) and, when it returns ``None``, answer and :meth:`record`.

    Attributes (after :meth:`start`):
        n_records_: the number of records of the session.
        aggregate_: the aggregate this session answers (fixed by the first answered query), or
            ``None`` before any.
    """

    simulatable = True
    name = "simulatable"
    _safe_extremum = "no answer consistent with the earlier ones would determine a record"

    def decide(self, query: Query) -> Denial | None:
        """Deny (with the reason) or allow ``query``, from the past queries and answers only."""
        denial = self._mixing_denial(query)
        if denial is not None:
            return denial
        if query.aggregate == "sum":
            plan = self._sum_plan(query)
            if plan.revealed is not None:
                return Denial("with the earlier sums it would determine {record}", plan.revealed)
            return None
        found = self._state(query.aggregate).simulatable_denial(query.rows)
        return None if found is None else Denial(*found)


class ValueBasedAuditor(_Auditor):
    """The naive auditor: deny when the true answer would determine a record (see the module
    notes; its denials leak, which :class:`veil.audit.attack.DenialAttack` shows).

    Call :meth:`start`, then for each query :meth:`decide` with the true answer and, when it
    returns ``None``, :meth:`record`.
    """

    name = "value-based"
    _safe_extremum = "the answer determines no record"

    def decide(self, query: Query, answer: float) -> Denial | None:
        """Deny (with the reason) or allow ``query``, looking at its true ``answer``."""
        denial = self._mixing_denial(query)
        if denial is not None:
            return denial
        if query.aggregate == "sum":
            plan = self._sum_plan(query)
            if plan.revealed is not None:
                return Denial("with the earlier sums it would determine {record}", plan.revealed)
            return None
        found = self._state(query.aggregate).value_based_denial(query.rows, answer)
        return None if found is None else Denial(*found)


AUDITORS = {"simulatable": SimulatableAuditor, "value-based": ValueBasedAuditor}


def make_auditor(name: str) -> _Auditor:
    """The auditor named ``"simulatable"`` or ``"value-based"``.

    Raises:
        ParameterError: another name.
    """
    key = str(name).strip().lower().replace("_", "-")
    if key not in AUDITORS:
        raise ParameterError(f"there is no auditor {name!r}; use 'simulatable' or 'value-based'.")
    return AUDITORS[key]()


def answer_of(values: np.ndarray, query: Query) -> float:
    """The true answer of ``query`` over the column ``values``."""
    picked = values[query.rows]
    if query.aggregate == "max":
        return float(picked.max())
    if query.aggregate == "min":
        return float(picked.min())
    return float(picked.sum())
