"""The privacy-budget accountant: every differentially private query charges it first.

An accountant holds a budget (ε, δ) for one dataset and a record of every charge made against it
(:mod:`veil.dp.account`). A charge is checked *before* it is recorded: a query that would
overspend raises :class:`BudgetExceededError` and leaves the accountant exactly as it was, so a
mechanism that charges first and draws noise second never draws noise for a refused query. (If
the noise draw then fails, the budget stays spent, which errs on the side of privacy.) Every ε
and δ is kept exactly (:mod:`veil.dp.exact`), and every accountant serializes to JSON
(:meth:`~veil.dp.account.PrivacyAccount.to_json`; :func:`from_json`,
:mod:`veil.dp.budget_file`).

Six accountants, one per way of counting (the composition theorems of McSherry 2009, Dwork,
Rothblum & Vadhan 2010, Farokhi 2020, Kellaris et al. 2014, Rogers et al. 2016 and Cao et al.
2017):

:class:`Accountant` (this module)
    Sequential composition: the ε (and δ) of queries on the same data add up. Parallel
    composition: queries in one *parallel group* touch disjoint partitions of the data, so the
    group costs the largest per-partition total, not the sum
    (``with acc.parallel("by age") as g: g.charge(0.5, partition="age<30")``). Post-processing
    is free (:meth:`~Accountant.postprocess` records it at cost 0). With
    ``composition="advanced"`` the accountant also computes the advanced composition bound of
    Dwork, Rothblum and Vadhan for k-fold ε-DP, ε' = √(2k ln(1/δ')) ε + k ε (e^ε − 1) at the price
    of an extra δ', and reports (and admits charges under) the better of the two bounds.
:class:`TemporalAccountant` (:mod:`veil.dp.discounting`)
    Time-fading releases: a charge made ``i`` time steps ago counts with weight g(i), for a
    non-increasing discount g with g(0) = 1, so the effective ε at time t is Σ g(t − t_i) ε_i.
:class:`WindowAccountant` (:mod:`veil.dp.window_accountant`)
    w-event privacy for streams: the ε spent in any w consecutive time steps stays within ε.
:class:`FilterAccountant` (:mod:`veil.dp.filter_accountant`)
    Charges whose ε and δ are chosen adaptively, admitted under a privacy filter (Rogers, Roth,
    Ullman & Vadhan 2016; :mod:`veil.dp.filters`): basic composition or their advanced filter,
    and it says which one admitted each charge.
:class:`TemporalCorrelationAccountant` (:mod:`veil.dp.correlation_accountant`)
    Releases over time whose data is correlated in time (Cao, Yoshikawa, Xiao & Xiong 2017/2018;
    :mod:`veil.dp.temporal`): the temporal privacy leakage of every step (or window of steps)
    stays within the budget α, given the backward and forward transition matrices.
:class:`ZCDPAccountant` (:mod:`veil.dp.zcdp_accountant`)
    A budget in ρ-zCDP (Bun and Steinke 2016): charges of ρ add up exactly, and the budget and
    what is spent are stated as (ε, δ) by the tight conversion of Canonne, Kamath and Steinke 2020.

This module keeps the :class:`Accountant` and names every accountant, its values and the reading
of a budget back, as before they had modules of their own. The advanced composition bound is
computed in floating point, and compared so that rounding refuses rather than admits.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction

from veil.dp.account import PrivacyAccount
from veil.dp.budget import Budget, BudgetExceededError, Charge, Spent, check_label, timestamp
from veil.dp.budget_file import BudgetFileError, from_document, from_json
from veil.dp.correlation_accountant import TemporalCorrelationAccountant, step_epsilons
from veil.dp.discounting import ExponentialDiscount, HyperbolicDiscount, TemporalAccountant
from veil.dp.exact import exact, exact_delta, exact_epsilon, from_text, show, to_text
from veil.dp.filter_accountant import FilterAccountant
from veil.dp.window_accountant import WindowAccountant
from veil.dp.zcdp_accountant import ZCDPAccountant  # noqa: F401  (defining it registers its budget files)
from veil.errors import ParameterError

__all__ = [
    "Accountant", "Budget", "BudgetExceededError", "BudgetFileError", "Charge", "ExponentialDiscount",
    "FilterAccountant", "HyperbolicDiscount", "ParallelGroup", "Spent", "TemporalAccountant",
    "TemporalCorrelationAccountant", "WindowAccountant", "advanced_composition", "from_document", "from_json",
    "step_epsilons",
]


def advanced_composition(k: int, epsilon, delta_prime) -> float:
    """The advanced composition bound of Dwork, Rothblum and Vadhan (2010) for k-fold ε-DP.

    k mechanisms, each ε-differentially private (adaptively chosen), together satisfy
    (ε', δ')-differential privacy (plus the sum of their own δ's) with
    ε' = √(2k ln(1/δ')) ε + k ε (e^ε − 1).

    Raises:
        ParameterError: k < 0, ε < 0, or δ' outside (0, 1).
    """
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 0:
        raise ParameterError(f"k must be a whole number >= 0, got {k!r}.")
    eps = float(exact(epsilon, "epsilon"))
    dp = float(exact(delta_prime, "delta_prime"))
    if eps < 0:
        raise ParameterError(f"epsilon must be >= 0, got {eps}.")
    if not 0 < dp < 1:
        raise ParameterError(f"delta_prime must be in (0, 1), got {dp}.")
    if k == 0 or eps == 0:
        return 0.0
    return math.sqrt(2 * k * math.log(1 / dp)) * eps + k * eps * math.expm1(eps)


# --------------------------------------------------------------------------- sequential, parallel, advanced

@dataclass
class _State:
    """Running totals of an :class:`Accountant` (one composition unit per solo charge or group)."""

    eps: Fraction = Fraction(0)        # sequential ε: solo charges + group costs
    delta: Fraction = Fraction(0)      # sequential δ
    units: int = 0                     # k, for the advanced bound
    eps_max: Fraction = Fraction(0)    # the largest unit ε
    groups: dict = field(default_factory=dict)   # group -> {partition: (ε, δ)}
    costs: dict = field(default_factory=dict)    # group -> (ε, δ) = per-partition maxima


class ParallelGroup:
    """Charges on disjoint partitions of the data; the group costs the largest partition total.

    Made by :meth:`Accountant.parallel`; usable only inside its ``with`` block. Charging the same
    partition twice adds up on that partition (sequential composition within it).
    """

    def __init__(self, accountant: Accountant, name: str):
        self._accountant = accountant
        self.name = name
        self._open = True

    def charge(self, epsilon, delta=0.0, *, partition: str, label: str | None = None) -> Charge:
        """Charge a query on one partition; ``label`` defaults to ``"<group> [<partition>]"``."""
        if not self._open:
            raise ParameterError(f"parallel group {self.name!r} is closed; charge inside its with block "
                                 "or open a new group.")
        if label is None:
            label = f"{self.name} [{partition}]"
        return self._accountant.charge(epsilon, delta, label=label, partition=partition, group=self.name)

    def can_afford(self, epsilon, delta=0.0, *, partition: str) -> bool:
        return self._accountant.can_afford(epsilon, delta, partition=partition, group=self.name)

    def spent(self) -> tuple:
        """The group's cost so far: (max partition ε, max partition δ)."""
        return self._accountant._state.costs.get(self.name, (Fraction(0), Fraction(0)))


class Accountant(PrivacyAccount):
    """A privacy budget charged under sequential, parallel and (optionally) advanced composition.

    Args:
        budget: the total (ε, δ) for the dataset.
        dataset_id: the dataset the budget belongs to; a saved budget is only loaded for it.
        composition: ``"sequential"`` (sums, exact) or ``"advanced"`` (also the Dwork-Rothblum-Vadhan
            bound; the better of the two is reported and admits charges).
        advanced_delta_prime: the δ' the advanced bound spends, 0 < δ' <= the budget's δ; by
            default half the budget's δ. Only with ``composition="advanced"``.

    The advanced bound is checked before every charge, with k the number of solo charges and
    parallel groups so far and ε the largest of their costs. Used that way, as a stopping rule for
    adaptively chosen charges, the theorem is slightly optimistic: Rogers, Roth, Ullman and Vadhan
    (2016) show a privacy *filter* needs somewhat larger constants; charges chosen adaptively
    belong in a :class:`FilterAccountant`, whose bound is valid for them.

    Raises:
        ParameterError: a bad budget, composition or δ'; advanced composition with a budget δ of 0.
    """

    compositions = ("sequential", "advanced")

    def __init__(self, budget: Budget, *, dataset_id: str, composition: str = "sequential",
                 advanced_delta_prime=None):
        super().__init__(budget, dataset_id=dataset_id)
        if composition not in ("sequential", "advanced"):
            raise ParameterError(f"composition must be 'sequential' or 'advanced', got {composition!r}.")
        self.composition = composition
        self.delta_prime: Fraction | None = None
        if composition == "advanced":
            if budget.delta == 0:
                raise ParameterError("advanced composition spends a δ' > 0, so the budget needs a delta > 0; "
                                     "give Budget(epsilon, delta) or use sequential composition.")
            dp = budget.delta / 2 if advanced_delta_prime is None else exact(advanced_delta_prime,
                                                                              "advanced_delta_prime")
            if not 0 < dp <= budget.delta:
                raise ParameterError(f"advanced_delta_prime must be in (0, {show(budget.delta)}] (the budget's "
                                     f"delta), got {show(dp)}.")
            self.delta_prime = dp
        elif advanced_delta_prime is not None:
            raise ParameterError("advanced_delta_prime applies only to composition='advanced'.")
        self._state = _State()
        self._open_groups: set[str] = set()

    # -- the arithmetic

    def _prospect(self, eps: Fraction, delta: Fraction, group, partition) -> _State:
        """The running totals after a charge, without changing anything."""
        s = self._state
        new = _State(s.eps, s.delta, s.units, s.eps_max, s.groups, s.costs)
        if group is None:
            new.eps, new.delta, new.units = s.eps + eps, s.delta + delta, s.units + 1
            new.eps_max = max(s.eps_max, eps)
            return new
        parts = dict(s.groups.get(group, {}))
        pe, pd = parts.get(partition, (Fraction(0), Fraction(0)))
        parts[partition] = (pe + eps, pd + delta)
        old_e, old_d = s.costs.get(group, (Fraction(0), Fraction(0)))
        cost_e = max(old_e, pe + eps)
        cost_d = max(old_d, pd + delta)
        new.groups = {**s.groups, group: parts}
        new.costs = {**s.costs, group: (cost_e, cost_d)}
        new.eps = s.eps - old_e + cost_e
        new.delta = s.delta - old_d + cost_d
        new.units = s.units + (group not in s.groups)
        new.eps_max = max(s.eps_max, cost_e)
        return new

    def _bounds(self, state: _State, delta_prime=None) -> Spent:
        """Both bounds and the better one: the smaller ε, except that under this accountant's own
        advanced composition a bound whose δ does not fit the budget loses to one that does."""
        seq = (state.eps, state.delta)
        dp = self.delta_prime if delta_prime is None else delta_prime
        if dp is None:
            return Spent(state.eps, state.delta, "sequential", seq, None)
        adv = (advanced_composition(state.units, state.eps_max, dp), state.delta + dp)
        better = adv[0] < seq[0]
        if delta_prime is None and adv[1] > self.budget.delta >= seq[1]:
            better = False
        if better:
            return Spent(adv[0], adv[1], "advanced", seq, adv)
        return Spent(state.eps, state.delta, "sequential", seq, adv)

    def _fits(self, state: _State) -> bool:
        b = self.budget
        if state.delta > b.delta:
            return False
        if state.eps <= b.epsilon:
            return True
        if self.delta_prime is None:
            return False
        adv = advanced_composition(state.units, state.eps_max, self.delta_prime)
        return adv <= b.epsilon and state.delta + self.delta_prime <= b.delta

    # -- the public API

    def _validate(self, epsilon, delta, group, partition):
        eps, dlt = exact_epsilon(epsilon), exact_delta(delta)
        if (group is None) != (partition is None):
            raise ParameterError("a partition needs its parallel group and a group needs the partition charged; "
                                 "charge inside 'with accountant.parallel(name) as group'.")
        if group is not None:
            check_label(group, "parallel group name")
            check_label(partition, "partition name")
        return eps, dlt

    def can_afford(self, epsilon, delta=0.0, *, partition: str | None = None, group: str | None = None) -> bool:
        """Whether a charge of (ε, δ) would fit in what is left (nothing is recorded)."""
        eps, dlt = self._validate(epsilon, delta, group, partition)
        return self._fits(self._prospect(eps, dlt, group, partition))

    def charge(self, epsilon, delta=0.0, *, label: str, partition: str | None = None,
               group: str | None = None) -> Charge:
        """Charge a query (ε, δ), checking the budget first; call it before drawing any noise.

        ``group`` and ``partition`` go together: the query touches only that partition of the
        data, disjoint from the group's other partitions (the caller vouches for disjointness),
        so the group costs its largest partition total. Prefer :meth:`parallel`.

        Raises:
            ParameterError: ε <= 0, δ outside [0, 1), a missing label, a partition without a group.
            BudgetExceededError: the charge would overspend; nothing was recorded.
        """
        label = check_label(label)
        eps, dlt = self._validate(epsilon, delta, group, partition)
        new = self._prospect(eps, dlt, group, partition)
        if not self._fits(new):
            self._refuse(label, eps, dlt, group, partition, new)
        old, self._state = self._state, new
        return self._record(Charge(label, eps, dlt, group=group, partition=partition, at=timestamp()),
                            undo=lambda: setattr(self, "_state", old))

    def _refuse(self, label, eps, dlt, group, partition, new):
        left_e, _left_d = self.remaining(dlt)
        where = f"query {label!r}"
        if group is not None:
            old = self._state.costs.get(group, (Fraction(0), Fraction(0)))[0]
            where += (f" on partition {partition!r} of parallel group {group!r} (raising the group's cost "
                      f"from ε = {show(old)} to ε = {show(new.costs[group][0])})")
        if new.delta > self.budget.delta:
            what = f"δ = {show(dlt)} but only δ = {show(self.budget.delta - self._state.delta)} is left"
        elif left_e <= 0:
            what = f"ε = {show(eps)} but no ε is left"
        else:
            what = f"ε = {show(eps)} but only ε = {show(left_e)} is left"
        raise BudgetExceededError(
            f"{where} asks for {what} of the budget {self.budget} for dataset {self.dataset_id!r}; "
            "ask for less or start a new budget.", label=label, requested=(eps, dlt),
            remaining=(left_e, self.budget.delta - self._state.delta))

    @contextmanager
    def parallel(self, name: str) -> Iterator[ParallelGroup]:
        """A parallel group: queries on disjoint partitions, costing the largest partition total.

        ``with acc.parallel("histogram by age") as g: g.charge(0.5, partition="age<30")``. The name
        must be new: partitions of two different splits of the data are not disjoint.
        """
        name = check_label(name, "parallel group name")
        if name in self._state.groups or name in self._open_groups:
            raise ParameterError(f"parallel group {name!r} already exists; give the new group another name.")
        group = ParallelGroup(self, name)
        self._open_groups.add(name)
        try:
            yield group
        finally:
            group._open = False
            self._open_groups.discard(name)

    def spent(self, *, delta_prime=None) -> Spent:
        """What has been spent, under the better of sequential and (when asked) advanced composition.

        The advanced bound is computed with this accountant's δ' when it uses advanced composition,
        or with ``delta_prime`` when given; it treats every solo charge and every parallel group as
        one mechanism and bounds all of them by the largest ε (k-fold ε-DP), at δ = Σ δ_i + δ'.
        """
        dp = None if delta_prime is None else exact(delta_prime, "delta_prime")
        if dp is not None and not 0 < dp < 1:
            raise ParameterError(f"delta_prime must be in (0, 1), got {show(dp)}.")
        return self._bounds(self._state, dp)

    def remaining(self, delta=0.0) -> tuple:
        """The largest ε one more (solo) charge with this δ could take, and the δ left.

        Exact under sequential composition; with advanced composition, the larger of the
        sequential remainder and the advanced one (found by bisection, a float). The δ left is the
        budget's δ less what :meth:`spent` reports (which includes δ' once the advanced bound is
        the one in use).
        """
        dlt = exact_delta(delta)
        b, s = self.budget, self._state
        left_d = b.delta - self.spent().delta
        seq_left = max(Fraction(0), b.epsilon - s.eps) if s.delta + dlt <= b.delta else Fraction(0)
        if self.delta_prime is None or s.delta + dlt + self.delta_prime > b.delta:
            return seq_left, left_d
        k, dp = s.units + 1, self.delta_prime
        if advanced_composition(k, s.eps_max, dp) > b.epsilon:
            return seq_left, left_d
        lo, hi = float(s.eps_max), float(b.epsilon)
        for _ in range(64):
            if advanced_composition(k, hi, dp) > b.epsilon:
                break
            lo, hi = hi, hi * 2
        else:
            return max(seq_left, lo), left_d
        for _ in range(100):
            mid = (lo + hi) / 2
            if advanced_composition(k, mid, dp) <= b.epsilon:
                lo = mid
            else:
                hi = mid
        return (max(seq_left, lo)), left_d

    def _group_costs(self) -> dict:
        return dict(self._state.costs)

    def _counting(self) -> str:
        if self.delta_prime is not None:
            return f"sequential, parallel and advanced composition with δ' = {show(self.delta_prime)}"
        return "sequential and parallel composition"

    def _options(self) -> dict:
        return {"advanced_delta_prime": None if self.delta_prime is None else to_text(self.delta_prime)}

    def _replay(self, c: Charge) -> None:
        if c.kind == "postprocess":
            self._charges.append(c)
            return
        self._validate(c.epsilon, c.delta, c.group, c.partition)
        new = self._prospect(c.epsilon, c.delta, c.group, c.partition)
        if not self._fits(new):
            raise BudgetExceededError("overspent", label=c.label, requested=(c.epsilon, c.delta), remaining=())
        self._state = new
        self._charges.append(c)

    @classmethod
    def _from_options(cls, budget: Budget, *, dataset_id: str, composition: str, options: dict,
                      discount=None) -> Accountant:
        dp = options.get("advanced_delta_prime")
        return cls(budget, dataset_id=dataset_id, composition=composition,
                   advanced_delta_prime=None if dp is None else from_text(dp))
