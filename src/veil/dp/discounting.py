"""Time-fading privacy budgets: a charge counts less as it ages (Farokhi 2020).

F. Farokhi, "Temporally discounted differential privacy for evolving datasets on an infinite
horizon" (ICCPS 2020). A charge made ``i`` time steps ago counts with weight g(i), for a
non-increasing discount g with g(0) = 1, so the effective ε at time t is Σ g(t − t_i) ε_i
(:class:`TemporalAccountant`). Two discounts are built in and kept with the budget:
:class:`ExponentialDiscount`, g(i) = base^i, and :class:`HyperbolicDiscount`, g(i) = 1/(1 + rate·i).

Every weight is exact, rounded *up* to a multiple of 10⁻¹⁸ (:data:`WEIGHT_GRID`), so discounting
never counts a release for less than g says.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from veil.dp.account import PrivacyAccount
from veil.dp.budget import Budget, BudgetExceededError, Charge, Spent, check_label, check_step, timestamp
from veil.dp.budget_file import BudgetFileError
from veil.dp.exact import exact, exact_delta, exact_epsilon, from_text, show, to_text
from veil.errors import ParameterError

__all__ = ["DISCOUNT_SAMPLE_POINTS", "WEIGHT_GRID", "ExponentialDiscount", "HyperbolicDiscount", "TemporalAccountant"]

#: the ages at which a discount g is checked to start at 1, stay in [0, 1] and never increase
DISCOUNT_SAMPLE_POINTS = tuple(range(65)) + tuple(2 ** p for p in range(7, 21))
#: a discount weight is rounded up to a multiple of 1 / WEIGHT_GRID
WEIGHT_GRID = 10 ** 18


def _round_up(w: Fraction) -> Fraction:
    """``w`` rounded up to a multiple of 1e-18 (exact when it already is one): a discount weight is
    never rounded in the user's favour, and sums of weights keep small denominators."""
    if WEIGHT_GRID % w.denominator == 0:
        return w
    return Fraction(-(-w.numerator * WEIGHT_GRID // w.denominator), WEIGHT_GRID)


@dataclass(frozen=True)
class ExponentialDiscount:
    """g(i) = base ** i, for 0 < base <= 1 (a release loses a share 1 − base of its weight per step)."""

    base: Fraction

    def __post_init__(self):
        base = exact(self.base, "base")
        if not 0 < base <= 1:
            raise ParameterError(f"the exponential discount's base must be in (0, 1], got {show(base)}.")
        object.__setattr__(self, "base", base)

    def __call__(self, i: int) -> Fraction:
        if self.base == 1 or i == 0:
            return Fraction(1)
        if i <= 64:
            return _round_up(self.base ** i)
        # beyond, the exact power is too long to be worth it: a float nudged up one ulp, which
        # covers pow's rounding error, so the weight is never smaller than base ** i
        return _round_up(exact(math.nextafter(float(self.base) ** i, math.inf), "g(i)"))

    def to_dict(self) -> dict:
        return {"name": "exponential", "base": to_text(self.base)}

    def __str__(self) -> str:
        return f"exponential discount g(i) = {show(self.base)}^i"


@dataclass(frozen=True)
class HyperbolicDiscount:
    """g(i) = 1 / (1 + rate · i), for rate >= 0 (exact)."""

    rate: Fraction

    def __post_init__(self):
        rate = exact(self.rate, "rate")
        if rate < 0:
            raise ParameterError(f"the hyperbolic discount's rate must be >= 0, got {show(rate)}.")
        object.__setattr__(self, "rate", rate)

    def __call__(self, i: int) -> Fraction:
        return 1 / (1 + self.rate * i)

    def to_dict(self) -> dict:
        return {"name": "hyperbolic", "rate": to_text(self.rate)}

    def __str__(self) -> str:
        return f"hyperbolic discount g(i) = 1/(1 + {show(self.rate)}·i)"


_DISCOUNTS = {"exponential": (ExponentialDiscount, "base"), "hyperbolic": (HyperbolicDiscount, "rate")}


class TemporalAccountant(PrivacyAccount):
    """Sequential composition with temporal discounting (Farokhi 2020).

    A charge made at time t_i counts at time t with weight g(t − t_i), so the effective ε at time t
    is Σ g(t − t_i) ε_i; a charge is admitted when that sum, including it, stays within the budget.
    Because g is non-increasing the effective ε never grows between charges, so checking at each
    charge is enough. δ is not discounted (it adds up, as under sequential composition).

    Args:
        budget: the (ε, δ) budget.
        dataset_id: the dataset it belongs to.
        discount: g, a function of the age i = 0, 1, 2, … with g(0) = 1, 0 <= g(i) <= 1 and
            g non-increasing (checked at sample points up to 2**20). The built-in
            :class:`ExponentialDiscount` and :class:`HyperbolicDiscount` are saved with the
            budget; any other function must be given again when the budget is loaded.

    Raises:
        ParameterError: a bad budget, or a g that breaks the rules at a sample point.
    """

    composition = "temporal"
    compositions = ("temporal",)

    def __init__(self, budget: Budget, *, dataset_id: str, discount: Callable[[int], float]):
        super().__init__(budget, dataset_id=dataset_id)
        if not callable(discount):
            raise ParameterError(f"discount must be a function g(i) of the age i, got {discount!r}.")
        self.discount = discount
        self._weights: dict[int, Fraction] = {}
        self._delta_spent = Fraction(0)
        previous = None
        for i in DISCOUNT_SAMPLE_POINTS:
            g = self._weight(i)
            if i == 0 and g != 1:
                raise ParameterError(f"the discount g must give g(0) = 1 (a release counts in full when made), "
                                     f"got g(0) = {show(g)}.")
            if previous is not None and g > previous[1]:
                raise ParameterError(f"the discount g must be non-increasing, but g({i}) = {show(g)} is larger "
                                     f"than g({previous[0]}) = {show(previous[1])}.")
            previous = (i, g)

    def _weight(self, age: int) -> Fraction:
        w = self._weights.get(age)
        if w is None:
            try:
                value = self.discount(age)
            except Exception as exc:  # noqa: BLE001 - a user function: report, in one sentence, what it did
                raise ParameterError(f"the discount g failed at g({age}): {exc}.") from None
            w = _round_up(exact(value, f"g({age})"))
            if not 0 <= w <= 1:
                raise ParameterError(f"the discount g must stay in [0, 1], got g({age}) = {show(w)}.")
            if len(self._weights) < 1 << 16:
                self._weights[age] = w
        return w

    @property
    def now(self) -> int | None:
        """The time of the latest charge, or ``None`` before the first."""
        steps = [c.step for c in self._charges if c.kind == "query"]
        return steps[-1] if steps else None

    def _effective(self, time: int) -> Fraction:
        return sum((self._weight(time - c.step) * c.epsilon for c in self._charges if c.kind == "query"),
                   Fraction(0))

    def _check_time(self, time) -> int:
        time = check_step(time, "time")
        now = self.now
        if now is not None and time < now:
            raise ParameterError(f"time {time} is before the latest charge at time {now}; time only runs forward.")
        return time

    def can_afford(self, epsilon, delta=0.0, *, time: int) -> bool:
        eps, dlt, time = exact_epsilon(epsilon), exact_delta(delta), self._check_time(time)
        return (self._effective(time) + eps <= self.budget.epsilon
                and self._delta_spent + dlt <= self.budget.delta)

    def charge(self, epsilon, delta=0.0, *, label: str, time: int) -> Charge:
        """Charge a query at ``time`` (a whole time step, never before the latest charge).

        Raises:
            ParameterError: bad ε, δ, label or time.
            BudgetExceededError: the discounted total would exceed the budget; nothing was recorded.
        """
        label = check_label(label)
        eps, dlt, time = exact_epsilon(epsilon), exact_delta(delta), self._check_time(time)
        used = self._effective(time)
        b = self.budget
        if self._delta_spent + dlt > b.delta:
            raise BudgetExceededError(
                f"query {label!r} at time {time} asks for δ = {show(dlt)} but only δ = "
                f"{show(b.delta - self._delta_spent)} is left of the budget {b} for dataset {self.dataset_id!r}; "
                "ask for less or start a new budget.", label=label, requested=(eps, dlt),
                remaining=(max(Fraction(0), b.epsilon - used), b.delta - self._delta_spent))
        if used + eps > b.epsilon:
            raise BudgetExceededError(
                f"query {label!r} at time {time} asks for ε = {show(eps)} but only ε = {show(b.epsilon - used)} "
                f"is left of the budget {b} for dataset {self.dataset_id!r} after discounting earlier releases; "
                "ask for less or wait for older releases to fade.", label=label, requested=(eps, dlt),
                remaining=(b.epsilon - used, b.delta - self._delta_spent))
        old = self._delta_spent
        self._delta_spent += dlt
        return self._record(Charge(label, eps, dlt, step=time, at=timestamp()),
                            undo=lambda: setattr(self, "_delta_spent", old))

    def spent(self, time: int | None = None) -> Spent:
        """The discounted ε at ``time`` (default: the latest charge) and the δ spent."""
        if time is None:
            time = self.now if self.now is not None else 0
        else:
            time = self._check_time(time)
        eps = self._effective(time)
        return Spent(eps, self._delta_spent, "temporal", (eps, self._delta_spent), None)

    def remaining(self, time: int | None = None) -> tuple:
        eps, delta = self.spent(time)
        return max(Fraction(0), self.budget.epsilon - eps), self.budget.delta - delta

    def _counting(self) -> str:
        d = self.discount
        builtin = isinstance(d, (ExponentialDiscount, HyperbolicDiscount))
        return f"temporal discounting, {d if builtin else 'a custom discount g'}"

    def _options(self) -> dict:
        d = self.discount
        return {"discount": d.to_dict() if isinstance(d, (ExponentialDiscount, HyperbolicDiscount))
                else {"name": "custom"}}

    def _replay(self, c: Charge) -> None:
        if c.kind == "postprocess":
            self._charges.append(c)
            return
        if c.step is None:
            raise ParameterError("a temporal charge has no time step.")
        time = self._check_time(c.step)
        if self._effective(time) + c.epsilon > self.budget.epsilon or self._delta_spent + c.delta > self.budget.delta:
            raise BudgetExceededError("overspent", label=c.label, requested=(c.epsilon, c.delta), remaining=())
        self._charges.append(c)
        self._delta_spent += c.delta

    @classmethod
    def from_json(cls, text: str, *, dataset_id: str, discount=None) -> TemporalAccountant:
        """A temporal accountant from :meth:`to_json` text; ``discount`` is the g of one kept with a
        custom (unsaved) discount function.

        Raises:
            BudgetFileError: the text cannot be read back (see :func:`~veil.dp.budget_file.from_json`), or
                it keeps another kind of accountant.
        """
        return cls._read(text, dataset_id=dataset_id, discount=discount)

    @classmethod
    def _from_options(cls, budget: Budget, *, dataset_id: str, composition: str, options: dict,
                      discount=None) -> TemporalAccountant:
        spec = options["discount"]
        name = spec["name"]
        if name in _DISCOUNTS:
            kind, param = _DISCOUNTS[name]
            kept = kind(from_text(spec[param]))
            if discount is not None and discount != kept:
                raise BudgetFileError(f"the budget file keeps the discount {kept}, not the {discount} given; "
                                      "leave discount out.")
            discount = kept
        elif name == "custom":
            if discount is None:
                raise BudgetFileError("the budget file was kept with a custom discount function; pass the same "
                                      "function as discount= when loading it.")
        else:
            raise ValueError(f"unknown discount {name!r}")
        return cls(budget, dataset_id=dataset_id, discount=discount)
