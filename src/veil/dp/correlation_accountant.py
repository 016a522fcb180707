"""A privacy budget on the temporal privacy leakage of releases over data correlated in time.

Cao, Yoshikawa, Xiao and Xiong, "Quantifying differential privacy under temporal correlations"
(ICDE 2017) and "Quantifying differential privacy in continuous data release under temporal
correlations" (TKDE 2018). When a user's data follows a Markov chain the adversary knows, an
ε-DP release at one time step also leaks about the others; :class:`TemporalCorrelationAccountant`
admits a release only while the leakage of every step (or window of w steps), computed by
:mod:`veil.dp.temporal` from the backward and forward transition matrices, stays within the budget
α. :func:`step_epsilons` gives the ε of every step of any accountant's charges, for that leakage.
The leakage is computed in floating point (logarithms), and compared so that rounding refuses
rather than admits.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

from veil.dp.account import PrivacyAccount
from veil.dp.budget import Budget, BudgetExceededError, Charge, Spent, check_label, check_step, timestamp
from veil.dp.exact import exact, exact_delta, exact_epsilon, from_text, show
from veil.dp.temporal import LeakageTracker, TemporalCorrelation
from veil.errors import ParameterError

__all__ = ["MAX_CORRELATED_STEPS", "TemporalCorrelationAccountant", "step_epsilons"]

#: the most time steps a temporal-correlation budget follows from its first charge to its last
MAX_CORRELATED_STEPS = 1_000_000


def step_epsilons(charges) -> tuple[int | None, list[Fraction]]:
    """ε_t per time step, from the first charged step to the last (0 where nothing was charged).

    Charges at the same step add up (sequential composition within a step); post-processing and
    charges without a step are left out.

    Args:
        charges: the charges of an accountant (:attr:`Accountant.charges`).

    Returns:
        The first step (``None`` when no charge has a step) and the exact ε of every step from it.

    Raises:
        ParameterError: steps that span more than 1,000,000 time steps.
    """
    steps = [(c.step, c.epsilon) for c in charges if c.kind == "query" and c.step is not None]
    if not steps:
        return None, []
    first = min(s for s, _ in steps)
    span = max(s for s, _ in steps) - first + 1
    if span > MAX_CORRELATED_STEPS:
        raise ParameterError(f"the charges span {span:,} time steps; temporal correlation is followed over at most "
                             f"{MAX_CORRELATED_STEPS:,}.")
    eps = [Fraction(0)] * span
    for s, e in steps:
        eps[s - first] += e
    return first, eps


def _matrix_text(matrix) -> list[list[str]] | None:
    return None if matrix is None else [[repr(float(v)) for v in row] for row in matrix]


def _matrix_from(text):
    if text is None:
        return None
    if not isinstance(text, list) or not all(isinstance(row, list) for row in text):
        raise TypeError("a transition matrix is not a list of rows")
    return [[float(from_text(v)) for v in row] for row in text]


class TemporalCorrelationAccountant(PrivacyAccount):
    """A budget on the temporal privacy leakage of releases over time (Cao et al., ICDE 2017 / TKDE 2018).

    Each charge is an ε-DP release of the data at one time step. When a user's data follows a
    Markov chain the adversary knows (backward and forward transition matrices), a release at
    one step also leaks about the others; the accountant keeps BPL, FPL and TPL of every step
    (:class:`veil.dp.temporal.TemporalCorrelation`) and admits a charge only when, with it,
    the leakage of every window of w steps (TPL_t itself for w = 1) stays within the budget α.
    Adding a release raises the forward loss of every earlier step, so the whole horizon is
    checked at every charge.

    The leakage is computed in floating point; a charge that would bring it to α within
    rounding may be refused, never the other way round.

    Args:
        alpha: the budget α > 0: the most any window of w steps may leak.
        dataset_id: the dataset (stream) the budget belongs to.
        backward: the backward transition matrix P^B, or ``None``.
        forward: the forward transition matrix P^F, or ``None``.
        w: the window length, w >= 1.

    Raises:
        ParameterError: α <= 0, w < 1, or a transition matrix that is not row-stochastic.
    """

    composition = "temporal_correlation"
    compositions = ("temporal_correlation",)

    def __init__(self, alpha, *, dataset_id: str, backward=None, forward=None, w: int = 1):
        super().__init__(Budget(alpha), dataset_id=dataset_id)
        if isinstance(w, bool) or not isinstance(w, numbers.Integral) or w < 1:
            raise ParameterError(f"the window length w must be a whole number >= 1, got {w!r}.")
        self.w = int(w)
        self.correlation = TemporalCorrelation(backward, forward)
        # the first charged step, the exact ε of every step from it, and the leakage they add up to
        self._first: int | None = None
        self._totals: list[Fraction] = []
        self._tracker = LeakageTracker(self.correlation, self.w)

    @property
    def now(self) -> int | None:
        """The step of the latest charge, or ``None`` before the first."""
        steps = [c.step for c in self._charges if c.kind == "query"]
        return steps[-1] if steps else None

    def _check(self, step) -> int:
        step = check_step(step, "step")
        now = self.now
        if now is not None and step < now:
            raise ParameterError(f"step {step} is before the latest charge at step {now}; a stream only moves forward.")
        return step

    def _with(self, charge: Charge) -> tuple:
        """The first step, the per-step totals and the tracker with ``charge`` made (nothing changes)."""
        first = charge.step if self._first is None else self._first
        index = charge.step - first
        if index >= MAX_CORRELATED_STEPS:
            raise ParameterError(f"step {charge.step} is {index:,} steps after the first charge; temporal correlation "
                                 f"is followed over at most {MAX_CORRELATED_STEPS:,} steps.")
        totals = self._totals + [Fraction(0)] * (index + 1 - len(self._totals))
        totals[index] += charge.epsilon
        return first, totals, self._tracker.with_step(index, float(totals[index]))

    def leakage(self):
        """BPL, FPL, TPL and the window leakage of every step charged so far
        (:class:`veil.dp.temporal.Leakage`, steps from the first charge), or ``None`` before any."""
        return None if self._first is None else self.correlation.leakage([float(e) for e in self._totals], self.w)

    def _trial(self, step, epsilon, delta, label: str) -> Charge:
        step, eps, dlt = self._check(step), exact_epsilon(epsilon), exact_delta(delta)
        if dlt != 0:
            raise ParameterError("temporal correlation accounting (Cao et al.) is for pure epsilon-DP releases; "
                                 "charge delta = 0.")
        return Charge(label, eps, dlt, step=step, at=timestamp())

    def can_afford(self, step: int, epsilon, delta=0.0) -> bool:
        """Whether a release of ε at ``step`` keeps every window's leakage within α (nothing is recorded)."""
        return self._with(self._trial(step, epsilon, delta, "trial"))[2].worst <= float(self.budget.epsilon)

    def charge(self, step: int, epsilon, delta=0.0, *, label: str | None = None) -> Charge:
        """Charge a release of ε at ``step``; ``label`` defaults to ``"step <step>"``.

        Raises:
            ParameterError: a bad or earlier step, ε <= 0, or δ > 0.
            BudgetExceededError: some window's leakage would exceed α; nothing was recorded.
        """
        label = check_label(f"step {step}" if label is None else label)
        charge = self._trial(step, epsilon, delta, label)
        new = self._with(charge)
        worst = new[2].worst
        if worst > float(self.budget.epsilon):
            raise BudgetExceededError(
                f"query {label!r} at step {charge.step} asks for ε = {show(charge.epsilon)} but the temporal privacy "
                f"leakage would reach {worst:.6g} > α = {show(self.budget.epsilon)} ({self._counting()}) for dataset "
                f"{self.dataset_id!r}; ask for less.", label=label, requested=(charge.epsilon, charge.delta),
                remaining=self.remaining(charge.step))
        old = self._first, self._totals, self._tracker
        self._first, self._totals, self._tracker = new

        def undo() -> None:
            self._first, self._totals, self._tracker = old

        return self._record(charge, undo=undo)

    def spent(self) -> Spent:
        """The largest leakage of any window of w steps so far (a float; δ is always 0)."""
        worst = self._tracker.worst
        return Spent(worst, Fraction(0), "temporal correlation", (worst, Fraction(0)), None)

    def remaining(self, step: int | None = None) -> tuple:
        """The largest ε one more release at ``step`` (default: the latest charged step, or 0) could
        take, rounded down to a multiple of 1e-12, and δ = 0."""
        step = self._check(step if step is not None else (self.now if self.now is not None else 0))
        alpha = float(self.budget.epsilon)
        lo, hi = 0.0, alpha
        for _ in range(100):
            mid = (lo + hi) / 2
            if mid in (lo, hi):
                break
            if mid > 0 and self._with(Charge("trial", exact(mid, "epsilon"), step=step))[2].worst <= alpha:
                lo = mid
            else:
                hi = mid
        return Fraction(math.floor(lo * 10 ** 12), 10 ** 12), Fraction(0)

    def _counting(self) -> str:
        c = self.correlation
        known = [name for name, m in (("backward", c.backward), ("forward", c.forward)) if m is not None]
        matrices = " and ".join(f"{name} {getattr(c, name).shape[0]}×{getattr(c, name).shape[0]}" for name in known)
        return (f"temporal correlation (Cao et al.), leakage of every window of w = {self.w} step(s), "
                f"{matrices or 'no'} transition matrix{'ces' if len(known) > 1 else ''}")

    def _options(self) -> dict:
        return {"w": self.w, "backward": _matrix_text(self.correlation.backward),
                "forward": _matrix_text(self.correlation.forward)}

    def _replay(self, c: Charge) -> None:
        if c.kind == "postprocess":
            self._charges.append(c)
            return
        if c.step is None:
            raise ParameterError("a temporal-correlation charge has no time step.")
        new = self._with(self._trial(c.step, c.epsilon, c.delta, c.label))
        if new[2].worst > float(self.budget.epsilon):
            raise BudgetExceededError("overspent", label=c.label, requested=(c.epsilon, c.delta), remaining=())
        self._first, self._totals, self._tracker = new
        self._charges.append(c)

    @classmethod
    def _from_options(cls, budget: Budget, *, dataset_id: str, composition: str, options: dict,
                      discount=None) -> TemporalCorrelationAccountant:
        return cls(budget.epsilon, dataset_id=dataset_id, w=options["w"], backward=_matrix_from(options["backward"]),
                   forward=_matrix_from(options["forward"]))
