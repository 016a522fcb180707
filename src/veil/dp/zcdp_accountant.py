"""A privacy budget kept in ρ-zCDP: charges add up in ρ, exactly, and the (ε, δ) they imply is
shown by the tight conversion of Canonne, Kamath and Steinke 2020.

A :class:`ZCDPBudget` is ρ > 0 with the δ (0 < δ < 1) at which the budget is stated as (ε, δ):
its ``epsilon`` is the tight ε of ρ at that δ (:func:`veil.dp.zcdp_conversion.zcdp_epsilon`), so
anything that shows a budget as (ε, δ) shows a true statement. A :class:`ZCDPAccountant` admits a
charge of ρ when the ρ spent plus it stays within the budget's ρ (Bun and Steinke 2016, Lemma 2.3:
zCDP composes additively), checked in exact arithmetic before anything is recorded.

**One measure.** A charge in ε or (ε, δ) is refused with a :class:`~veil.dp.measures.MeasureMismatchError`
and nothing is recorded, as a charge of ρ to an (ε, δ) accountant is (:func:`charge_cost`).
Converting is explicit: a pure ε-DP release may be charged as ρ = ε²/2
(:meth:`veil.dp.measures.PureDP.to_zcdp`).

**How charges are kept.** A budget document (:mod:`veil.dp.budget_file`) keeps
``{"rho": ..., "delta": ...}`` under the composition rule ``"zcdp"``; a charge entry, like a
ledger's charge row, keeps its ρ where (ε, δ) budgets keep ε, with δ = 0: the composition rule of
the budget (``"zcdp"``, also on every ledger charge row) says how the number is read. Budget files
and ledgers written before this accountant existed are (ε, δ) budgets and read as before.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from veil.dp.account import PrivacyAccount
from veil.dp.budget import BudgetExceededError, Charge, Spent, check_label, timestamp
from veil.dp.exact import exact, from_text, show, to_text
from veil.dp.measures import ZCDP, ApproxDP, MeasureMismatchError, PureDP, exact_rho
from veil.dp.zcdp_conversion import zcdp_epsilon
from veil.errors import ParameterError

__all__ = ["ZCDPAccountant", "ZCDPBudget", "charge_cost"]


@dataclass(frozen=True)
class ZCDPBudget:
    """A ρ-zCDP budget and the δ at which it is stated as (ε, δ)-DP.

    Attributes:
        rho: ρ > 0, exact.
        delta: 0 < δ < 1, exact (the policy's δ).
        epsilon: the tight ε of ρ at δ (CKS 2020), computed; a valid ε, rounded up.

    Raises:
        ParameterError: ρ <= 0, or δ outside (0, 1).
    """

    rho: Fraction
    delta: Fraction
    epsilon: Fraction = field(init=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "rho", exact_rho(self.rho, "the budget's rho"))
        d = exact(self.delta, "the budget's delta")
        if not 0 < d < 1:
            raise ParameterError(f"a zCDP budget is stated as (ε, δ) at a δ in (0, 1), got δ = {show(d)}; give the "
                                 "policy's delta.")
        object.__setattr__(self, "delta", d)
        object.__setattr__(self, "epsilon", zcdp_epsilon(self.rho, d))

    def __str__(self) -> str:
        return f"ρ = {show(self.rho)} (ε = {show(self.epsilon)} at δ = {show(self.delta)})"


class ZCDPAccountant(PrivacyAccount):
    """A ρ-zCDP budget charged in ρ; charges compose by adding ρ, exactly.

    Args:
        budget: the :class:`ZCDPBudget`.
        dataset_id: the dataset the budget belongs to.

    Raises:
        ParameterError: ``budget`` is not a :class:`ZCDPBudget`, or the dataset id is empty.
    """

    composition = "zcdp"
    measure = "zcdp"
    compositions = ("zcdp",)
    _budget_type = ZCDPBudget

    def __init__(self, budget: ZCDPBudget, *, dataset_id: str):
        super().__init__(budget, dataset_id=dataset_id)
        self._rho = Fraction(0)

    def _mismatch(self, what: str) -> MeasureMismatchError:
        return MeasureMismatchError(
            f"the budget of dataset {self.dataset_id!r} is kept in ρ-zCDP ({self.budget}), so charge it rho, not "
            f"{what} (a pure ε-DP release costs ρ = ε²/2).")

    def _validate(self, epsilon, delta, rho, group, partition) -> Fraction:
        if epsilon is not None or delta is not None:
            raise self._mismatch("epsilon and delta" if delta else "epsilon")
        if group is not None or partition is not None:
            raise ParameterError("a zCDP budget has no parallel groups; charge each partition's ρ, or keep the "
                                 "budget in (ε, δ).")
        if rho is None:
            raise ParameterError("a charge to a zCDP budget needs its rho.")
        return exact_rho(rho)

    def can_afford(self, epsilon=None, delta=None, *, rho=None, partition=None, group=None) -> bool:
        """Whether a charge of ρ would fit in what is left (nothing is recorded)."""
        return self._rho + self._validate(epsilon, delta, rho, group, partition) <= self.budget.rho

    def charge(self, epsilon=None, delta=None, *, rho=None, label: str, partition=None, group=None) -> Charge:
        """Charge a release of ρ-zCDP, checking the budget first; call it before drawing any noise.

        Raises:
            MeasureMismatchError: ε or δ given (this budget is kept in ρ); nothing was recorded.
            ParameterError: ρ <= 0, a missing label, a parallel group.
            BudgetExceededError: the charge would overspend; nothing was recorded.
        """
        label = check_label(label)
        r = self._validate(epsilon, delta, rho, group, partition)
        if self._rho + r > self.budget.rho:
            left = self.budget.rho - self._rho
            raise BudgetExceededError(
                f"query {label!r} asks for ρ = {show(r)} but only ρ = {show(left)} is left of the budget "
                f"{self.budget} for dataset {self.dataset_id!r}; ask for less or start a new budget.",
                label=label, requested=(r, Fraction(0)), remaining=(left, Fraction(0)))
        old, self._rho = self._rho, self._rho + r
        return self._record(Charge(label, r, Fraction(0), at=timestamp()), undo=lambda: setattr(self, "_rho", old))

    @property
    def spent_rho(self) -> Fraction:
        """The ρ spent so far (exact)."""
        return self._rho

    @property
    def remaining_rho(self) -> Fraction:
        """The ρ left (exact)."""
        return self.budget.rho - self._rho

    def spent(self) -> Spent:
        """What has been spent as (ε, δ): the tight ε of the ρ spent at the budget's δ (0 and 0
        before any charge); ``sequential`` is ``(ρ spent,)``."""
        if self._rho == 0:
            return Spent(Fraction(0), Fraction(0), "zcdp", (self._rho,))
        return Spent(zcdp_epsilon(self._rho, self.budget.delta), self.budget.delta, "zcdp", (self._rho,))

    def remaining(self, delta=None) -> tuple:
        """The (ε, δ) one more charge of all the ρ left would imply at the budget's δ (0 and the
        budget's δ when nothing is left). ``remaining_rho`` is the exact ρ left."""
        left = self.remaining_rho
        return (zcdp_epsilon(left, self.budget.delta) if left > 0 else Fraction(0)), self.budget.delta

    def report(self) -> list[dict]:
        """Rows of what was spent by what, as :meth:`PrivacyAccount.report`, each with its ``rho``
        (``epsilon`` and ``delta`` are the (ε, δ) the charge alone implies at the budget's δ; ``counted``
        is ``None``, since what adds up is the ρ, not an ε)."""
        rows = []
        for c in self._charges:
            eps = Fraction(0) if c.kind == "postprocess" else zcdp_epsilon(c.epsilon, self.budget.delta)
            dlt = Fraction(0) if c.kind == "postprocess" else self.budget.delta
            rows.append({"label": c.label, "kind": c.kind, "rho": c.epsilon, "epsilon": eps, "delta": dlt,
                         "group": None, "partition": None, "step": c.step, "at": c.at,
                         "counted": None})  # what is counted is the ρ, never an ε
        return rows

    def format_report(self) -> str:
        """:meth:`report` as a text table: each charge's ρ, what is spent and left in ρ and as (ε, δ)."""
        lines = [f"privacy budget of dataset {self.dataset_id!r}: {self.budget} (zCDP, composed in ρ)"]
        rows = self.report()
        if rows:
            table = [("label", "kind", "ρ")] + [(r["label"], r["kind"], show(r["rho"])) for r in rows]
            widths = [max(len(row[i]) for row in table) for i in range(3)]
            lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
        else:
            lines.append("nothing charged yet")
        spent = self.spent()
        lines.append(f"spent ρ = {show(self._rho)} (ε = {show(spent.epsilon)} at δ = {show(self.budget.delta)}); "
                     f"left ρ = {show(self.remaining_rho)}")
        return "\n".join(lines)

    def _budget_document(self) -> dict:
        return {"rho": to_text(self.budget.rho), "delta": to_text(self.budget.delta)}

    @classmethod
    def _read_budget(cls, budget: dict) -> ZCDPBudget:
        return ZCDPBudget(from_text(budget["rho"]), from_text(budget["delta"]))

    def _replay(self, c: Charge) -> None:
        if c.kind == "postprocess":
            self._charges.append(c)
            return
        if c.delta != 0 or c.group is not None or c.partition is not None:
            raise ValueError("a zCDP charge has a δ or a parallel group")
        r = exact_rho(c.epsilon)
        if self._rho + r > self.budget.rho:
            raise BudgetExceededError("overspent", label=c.label, requested=(r, Fraction(0)), remaining=())
        self._rho += r
        self._charges.append(c)

    @classmethod
    def _from_options(cls, budget, *, dataset_id: str, composition: str, options: dict,
                      discount=None) -> ZCDPAccountant:
        if options:
            raise ValueError("a zCDP budget has no options")
        return cls(budget, dataset_id=dataset_id)


def charge_cost(accountant: PrivacyAccount, cost, *, label: str) -> Charge:
    """Charge ``cost`` (:class:`~veil.dp.measures.PureDP`, :class:`~veil.dp.measures.ApproxDP` or
    :class:`~veil.dp.measures.ZCDP`) to ``accountant`` in the accountant's own measure.

    Raises:
        MeasureMismatchError: the cost's measure is not the accountant's; nothing was charged.
        ParameterError: a cost that is not a measure.
        BudgetExceededError: the charge would overspend; nothing was charged.
    """
    if isinstance(cost, ZCDP):
        if accountant.measure != "zcdp":
            raise MeasureMismatchError(
                f"the budget of dataset {accountant.dataset_id!r} is kept in (ε, δ) ({accountant.budget}), so a "
                f"release costing {cost} in ρ-zCDP cannot be charged to it; use a mechanism priced in ε, or a zCDP "
                "budget.")
        return accountant.charge(rho=cost.rho, label=label)
    if isinstance(cost, (PureDP, ApproxDP)):
        # a zCDP accountant refuses ε with a MeasureMismatchError of its own
        return accountant.charge(cost.epsilon, getattr(cost, "delta", Fraction(0)), label=label)
    raise ParameterError(f"a cost is a PureDP, ApproxDP or ZCDP, not {type(cost).__name__}.")
