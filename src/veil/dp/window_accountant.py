"""A privacy budget for w-event privacy over a stream: every window of w consecutive time steps
spends at most the budget.

Kellaris, Papadopoulos, Xiao and Papadias, "Differentially private event sequences over infinite
streams" (VLDB 2014). A mechanism over a stream is w-event (ε, δ)-differentially private when the
ε (and δ) it spends in any w consecutive time steps stays within (ε, δ); what was spent more than
w steps ago is forgotten. :class:`WindowAccountant` keeps that budget; the releases that charge it
are :func:`veil.dp.continual.w_event_counts` and its siblings, with the adaptive budgets of
:mod:`veil.dp.wevent`.
"""

from __future__ import annotations

import numbers
from fractions import Fraction

from veil.dp.account import PrivacyAccount
from veil.dp.budget import Budget, BudgetExceededError, Charge, Spent, check_label, check_step, timestamp
from veil.dp.exact import exact_delta, exact_epsilon, show
from veil.errors import ParameterError

__all__ = ["WindowAccountant"]


class WindowAccountant(PrivacyAccount):
    """w-event privacy for a stream (Kellaris et al. 2014): the ε (and δ) spent in any w consecutive
    time steps stays within the budget; charges older than the window are forgotten.

    Steps are whole numbers that never go back, so checking the window that ends at each new
    charge's step covers every window.

    Args:
        w: the window length in time steps, w >= 1.
        epsilon: the budget per window; ``delta`` likewise (default 0).
        dataset_id: the dataset (stream) it belongs to.
    """

    composition = "window"
    compositions = ("window",)

    def __init__(self, w: int, epsilon, *, dataset_id: str, delta=0.0):
        if isinstance(w, bool) or not isinstance(w, numbers.Integral) or w < 1:
            raise ParameterError(f"the window length w must be a whole number >= 1, got {w!r}.")
        super().__init__(Budget(epsilon, delta), dataset_id=dataset_id)
        self.w = int(w)

    @property
    def now(self) -> int | None:
        steps = [c.step for c in self._charges if c.kind == "query"]
        return steps[-1] if steps else None

    def _check(self, step) -> int:
        step = check_step(step, "step")
        now = self.now
        if now is not None and step < now:
            raise ParameterError(f"step {step} is before the latest charge at step {now}; a stream only moves forward.")
        return step

    def _window(self, step: int) -> tuple[Fraction, Fraction]:
        eps, delta = Fraction(0), Fraction(0)
        for c in reversed(self._charges):
            if c.kind != "query":
                continue
            if c.step <= step - self.w:
                break
            if c.step <= step:
                eps += c.epsilon
                delta += c.delta
        return eps, delta

    def can_afford(self, step: int, epsilon, delta=0.0) -> bool:
        step, eps, dlt = self._check(step), exact_epsilon(epsilon), exact_delta(delta)
        used_e, used_d = self._window(step)
        return used_e + eps <= self.budget.epsilon and used_d + dlt <= self.budget.delta

    def charge(self, step: int, epsilon, delta=0.0, *, label: str | None = None) -> Charge:
        """Charge a release at ``step``; ``label`` defaults to ``"step <step>"``.

        Raises:
            ParameterError: bad step (or one before the latest), ε or δ.
            BudgetExceededError: the window ending at ``step`` would exceed the budget; nothing recorded.
        """
        label = check_label(f"step {step}" if label is None else label)
        step, eps, dlt = self._check(step), exact_epsilon(epsilon), exact_delta(delta)
        used_e, used_d = self._window(step)
        b = self.budget
        if used_e + eps > b.epsilon or used_d + dlt > b.delta:
            what = (f"δ = {show(dlt)} but only δ = {show(b.delta - used_d)}" if used_d + dlt > b.delta
                    else f"ε = {show(eps)} but only ε = {show(b.epsilon - used_e)}")
            raise BudgetExceededError(
                f"query {label!r} at step {step} asks for {what} is left in the window of steps "
                f"{step - self.w + 1}..{step} (w = {self.w}, {b} per window) "
                f"for dataset {self.dataset_id!r}; ask for less or wait for the window to move on.",
                label=label, requested=(eps, dlt), remaining=(b.epsilon - used_e, b.delta - used_d))
        return self._record(Charge(label, eps, dlt, step=step, at=timestamp()))

    def spent(self, step: int | None = None) -> Spent:
        """The ε and δ spent in the window of w steps ending at ``step`` (default: the latest charge)."""
        if step is None:
            step = self.now if self.now is not None else 0
        else:
            step = check_step(step, "step")
        eps, delta = self._window(step)
        return Spent(eps, delta, "window", (eps, delta), None)

    def remaining(self, step: int | None = None) -> tuple:
        eps, delta = self.spent(step)
        return self.budget.epsilon - eps, self.budget.delta - delta

    def _counting(self) -> str:
        return f"w-event privacy, w = {self.w}"

    def _options(self) -> dict:
        return {"w": self.w}

    def _replay(self, c: Charge) -> None:
        if c.kind == "postprocess":
            self._charges.append(c)
            return
        if c.step is None:
            raise ParameterError("a window charge has no time step.")
        step = self._check(c.step)
        used_e, used_d = self._window(step)
        if used_e + c.epsilon > self.budget.epsilon or used_d + c.delta > self.budget.delta:
            raise BudgetExceededError("overspent", label=c.label, requested=(c.epsilon, c.delta), remaining=())
        self._charges.append(c)

    @classmethod
    def _from_options(cls, budget: Budget, *, dataset_id: str, composition: str, options: dict,
                      discount=None) -> WindowAccountant:
        return cls(options["w"], budget.epsilon, delta=budget.delta, dataset_id=dataset_id)
