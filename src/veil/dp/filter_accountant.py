"""A privacy budget for charges whose ε and δ are chosen adaptively, admitted under a privacy filter.

Rogers, Roth, Ullman and Vadhan, "Privacy odometers and filters: pay-as-you-go composition"
(NeurIPS 2016). :class:`FilterAccountant` admits a charge while a valid filter says continue —
basic composition, their advanced filter, or either (:mod:`veil.dp.filters` holds the filters and
why running both at once is valid) — and says which one admitted each charge. The advanced filter
is computed in floating point and compared so that rounding refuses rather than admits.
"""

from __future__ import annotations

import math
from fractions import Fraction

from veil.dp.account import PrivacyAccount
from veil.dp.budget import Budget, BudgetExceededError, Charge, Spent, check_label, timestamp
from veil.dp.exact import exact, exact_delta, exact_epsilon, show
from veil.dp.filters import advanced_filter_bound
from veil.errors import ParameterError

__all__ = ["FilterAccountant"]

_FILTER_RULES = ("basic", "advanced", "best")
_RULE_NAMES = {"basic": "basic composition filter", "advanced": "advanced filter of Rogers et al. (2016)"}


class FilterAccountant(PrivacyAccount):
    """A budget for charges whose ε and δ are chosen adaptively, admitted under a privacy filter.

    Rogers, Roth, Ullman and Vadhan (NeurIPS 2016): when each charge's parameters may depend on
    earlier answers, the advanced composition bound for a fixed number k of mechanisms is not a
    valid stopping rule; a *filter* is. Charges are admitted while the filter says continue, and
    the whole interaction is then (ε_g, δ_g)-differentially private, ε_g and δ_g being the
    budget's. The rules (see :mod:`veil.dp.filters`):

    * ``"basic"``: Σ ε_i ≤ ε_g and Σ δ_i ≤ δ_g (exact arithmetic);
    * ``"advanced"``: their Theorem 5.1, Σ δ_i ≤ δ_g/2 and K ≤ ε_g, for 0 < δ_g < 1/e;
    * ``"best"`` (default): a charge is admitted when the basic filter with δ_g/2 or the advanced
      filter with δ_g/2 admits every charge so far with it (why that is valid: the module notes of
      :mod:`veil.dp.filters`); with a budget δ of 0 only the basic filter applies.

    The accountant says which rule admitted each charge (:meth:`rules`) and which one the
    charges so far stand under (:meth:`spent`'s ``method``). Parallel groups are not offered:
    every charge is one adaptively chosen mechanism on the whole data.

    Args:
        budget: the filter's (ε_g, δ_g).
        dataset_id: the dataset the budget belongs to.
        rule: ``"basic"``, ``"advanced"`` or ``"best"``.

    Raises:
        ParameterError: an unknown rule, or a δ_g the advanced filter cannot use (it needs
            0 < δ_g < 1/e, or 0 < δ_g/2 < 1/e under ``"best"``).
    """

    composition = "filter"
    compositions = ("filter",)

    def __init__(self, budget: Budget, *, dataset_id: str, rule: str = "best"):
        super().__init__(budget, dataset_id=dataset_id)
        if rule not in _FILTER_RULES:
            raise ParameterError(f"rule must be 'basic', 'advanced' or 'best', got {rule!r}.")
        self.rule = rule
        # each filter's δ_g: under "best" the two halves of the budget's δ
        share = budget.delta / 2 if rule == "best" else budget.delta
        self._basic_delta = None if rule == "advanced" else share
        self._advanced_delta = None if rule == "basic" or (rule == "best" and budget.delta == 0) else share
        if self._advanced_delta is not None and not 0 < self._advanced_delta < Fraction(1) / Fraction(math.e):
            raise ParameterError(f"the advanced filter needs 0 < delta_g < 1/e, and this budget gives it "
                                 f"{show(self._advanced_delta)}; give a budget delta in range or use rule='basic'.")

    def _admits(self, epsilons: list[Fraction], deltas: list[Fraction]) -> str | None:
        """The rule that admits these charges, basic first; ``None`` when none does."""
        b = self.budget
        if self._basic_delta is not None and sum(epsilons, Fraction(0)) <= b.epsilon \
                and sum(deltas, Fraction(0)) <= self._basic_delta:
            return "basic"
        if self._advanced_delta is not None and sum(deltas, Fraction(0)) <= self._advanced_delta / 2:
            k = advanced_filter_bound([float(e) for e in epsilons], float(b.epsilon), float(self._advanced_delta))
            if k * (1 + 1e-12) <= float(b.epsilon):
                return "advanced"
        return None

    def _queries(self) -> tuple[list[Fraction], list[Fraction]]:
        done = [c for c in self._charges if c.kind == "query"]
        return [c.epsilon for c in done], [c.delta for c in done]

    def can_afford(self, epsilon, delta=0.0) -> bool:
        """Whether a charge of (ε, δ) would be admitted now (nothing is recorded)."""
        eps, dlt = exact_epsilon(epsilon), exact_delta(delta)
        epsilons, deltas = self._queries()
        return self._admits(epsilons + [eps], deltas + [dlt]) is not None

    def charge(self, epsilon, delta=0.0, *, label: str) -> Charge:
        """Charge an adaptively chosen query (ε, δ) if the filter admits it; call it before drawing noise.

        Raises:
            ParameterError: ε <= 0, δ outside [0, 1), or a missing label.
            BudgetExceededError: the filter says halt; nothing was recorded.
        """
        label = check_label(label)
        eps, dlt = exact_epsilon(epsilon), exact_delta(delta)
        epsilons, deltas = self._queries()
        if self._admits(epsilons + [eps], deltas + [dlt]) is None:
            raise BudgetExceededError(
                f"query {label!r} asks for ε = {show(eps)}, δ = {show(dlt)} but the privacy filter ({self._counting()}) "
                f"halts there for the budget {self.budget} of dataset {self.dataset_id!r}; ask for less or start a "
                "new budget.", label=label, requested=(eps, dlt), remaining=self.remaining(dlt))
        return self._record(Charge(label, eps, dlt, at=timestamp()))

    def rules(self) -> list[str]:
        """For every query charge, in order, the rule that admitted it (``"basic"`` or ``"advanced"``)."""
        epsilons, deltas = self._queries()
        return [self._admits(epsilons[:i + 1], deltas[:i + 1]) for i in range(len(epsilons))]

    def spent(self) -> Spent:
        """The statistic of the rule the charges so far stand under, and Σ δ_i.

        Under the basic filter the exact Σ ε_i; under the advanced filter its K (a float). Either
        way the guarantee of everything admitted is the budget (ε_g, δ_g): a filter is a stopping
        rule, and its statistic says how close the charges are to it.
        """
        epsilons, deltas = self._queries()
        total_d = sum(deltas, Fraction(0))
        rule = self._admits(epsilons, deltas) if epsilons else ("basic" if self._basic_delta is not None
                                                                 else "advanced")
        if rule == "basic":
            total_e = sum(epsilons, Fraction(0))
            return Spent(total_e, total_d, _RULE_NAMES["basic"], (total_e, total_d), None)
        k = advanced_filter_bound([float(e) for e in epsilons], float(self.budget.epsilon),
                                  float(self._advanced_delta))
        return Spent(k, total_d, _RULE_NAMES["advanced"], (sum(epsilons, Fraction(0)), total_d), (k, total_d))

    def remaining(self, delta=0.0) -> tuple:
        """The largest ε one more charge with this δ would be admitted with (0 when none), and the δ left.

        Exact when the basic filter is the one that admits it; otherwise found by bisection on the
        advanced filter (a float, rounded down to a multiple of 1e-12).
        """
        dlt = exact_delta(delta)
        epsilons, deltas = self._queries()
        total_d = sum(deltas, Fraction(0))
        caps = [d for d in (self._basic_delta, None if self._advanced_delta is None else self._advanced_delta / 2)
                if d is not None]
        left_d = max(caps) - total_d
        best = Fraction(0)
        if self._basic_delta is not None and total_d + dlt <= self._basic_delta:
            best = max(best, self.budget.epsilon - sum(epsilons, Fraction(0)))
        if self._advanced_delta is not None and total_d + dlt <= self._advanced_delta / 2:
            lo, hi = 0.0, float(self.budget.epsilon)
            for _ in range(100):
                mid = (lo + hi) / 2
                if mid in (lo, hi):
                    break
                if self._admits(epsilons + [exact(mid, "epsilon")], deltas + [dlt]) == "advanced":
                    lo = mid
                else:
                    hi = mid
            best = max(best, Fraction(math.floor(lo * 10 ** 12), 10 ** 12))
        return max(best, Fraction(0)), max(left_d, Fraction(0))

    def _counting(self) -> str:
        if self._advanced_delta is None:
            return f"{_RULE_NAMES['basic']} (Rogers et al. 2016)"
        if self._basic_delta is None:
            return _RULE_NAMES["advanced"]
        return (f"privacy filter of Rogers et al. (2016): basic composition or their advanced filter, each with "
                f"δ_g = {show(self._advanced_delta)}")

    def _options(self) -> dict:
        return {"rule": self.rule}

    def _replay(self, c: Charge) -> None:
        if c.kind == "postprocess":
            self._charges.append(c)
            return
        if c.group is not None or c.partition is not None or c.step is not None:
            raise ValueError("a filter charge has no group, partition or step")
        epsilons, deltas = self._queries()
        if self._admits(epsilons + [c.epsilon], deltas + [c.delta]) is None:
            raise BudgetExceededError("overspent", label=c.label, requested=(c.epsilon, c.delta), remaining=())
        self._charges.append(c)

    @classmethod
    def _from_options(cls, budget: Budget, *, dataset_id: str, composition: str, options: dict,
                      discount=None) -> FilterAccountant:
        return cls(budget, dataset_id=dataset_id, rule=options["rule"])
