"""A publishing policy: the checks the gate runs with their thresholds, and each population's budget.

The policy is plain data the gate reads (the ``policy:`` section of a veil configuration file is
parsed into it by :mod:`veil.config`); every decision records the policy it was made under.

* ``checks``: the cross-release attacks (:mod:`veil.ledger.checks`), each with its threshold. The
  default runs the intersection attack refusing any person newly perfectly breached, the unsorted
  matching attack, the join attack and the tuple-correspondence attacks on incremental versions,
  each refusing any record left less anonymous than the releases claim.
  Checks of the release alone (``presence``: membership disclosure against a population table
  the policy names) run only when the policy gives them.
* ``populations``: per population, how a person is identified (a key column, or the one table it
  is) and its privacy budget with the composition rule that counts it: ``sequential`` (and
  parallel), ``advanced`` (Dwork–Rothblum–Vadhan, reporting the better bound), ``temporal``
  (discounted by an exponential or hyperbolic g), ``window`` (w-event) or ``zcdp`` (a
  :class:`~veil.dp.zcdp_accountant.ZCDPBudget` in ρ, stated as (ε, δ) at its δ; every charge in
  ρ); see :mod:`veil.dp.accountant`.
* ``recheck``: check the release's own models on the published file (default on).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from veil.dp.account import PrivacyAccount
from veil.dp.accountant import Accountant
from veil.dp.budget import Budget
from veil.dp.budget_unit import ROWS, BudgetUnit
from veil.dp.discounting import ExponentialDiscount, HyperbolicDiscount, TemporalAccountant
from veil.dp.exact import to_text
from veil.dp.window_accountant import WindowAccountant
from veil.dp.zcdp_accountant import ZCDPAccountant, ZCDPBudget
from veil.errors import ParameterError
from veil.ledger.checks import (CorrespondenceCheck, CrossReleaseCheck, IntersectionCheck, JoinCheck,
                                MatchingCheck, SingleReleaseCheck)
from veil.ledger.records import NEIGHBOURING

__all__ = ["COMPOSITIONS", "Policy", "PopulationPolicy"]

COMPOSITIONS = ("sequential", "advanced", "temporal", "window", "zcdp")


@dataclass(frozen=True)
class PopulationPolicy:
    """One population's identity and budget.

    Args:
        name: the population's name.
        key_column: the column identifying a person in each of its tables; ``None``: it is the
            one table first registered under it.
        budget: its privacy budget, or ``None`` when it gets no DP release: a
            :class:`~veil.dp.budget.Budget` (ε, δ), or a :class:`~veil.dp.zcdp_accountant.ZCDPBudget`
            (ρ, δ) exactly when the composition is ``zcdp``.
        composition: the rule that counts the budget (:data:`COMPOSITIONS`).
        delta_prime: advanced composition's δ' (default: half the budget's δ).
        discount: temporal composition's g: ``("exponential", base)`` or ``("hyperbolic", rate)``.
        window: window composition's w (time steps).
        relation: the neighbouring relation (:data:`veil.ledger.NEIGHBOURING`).
        unit: the privacy unit its budget protects (:class:`~veil.dp.budget_unit.BudgetUnit`; a
            row by default): a charge for a release at another unit is refused.

    Raises:
        ParameterError: an unknown rule, an option of another rule, a rule without its option, or
            a unit that is not a BudgetUnit or comes without a budget.
    """

    name: str
    key_column: str | None = None
    budget: Budget | None = None
    composition: str = "sequential"
    delta_prime: float | None = None
    discount: tuple | None = None
    window: int | None = None
    relation: str = "add-remove"
    unit: BudgetUnit = ROWS

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ParameterError(f"a population needs a name, got {self.name!r}.")
        if self.composition not in COMPOSITIONS:
            raise ParameterError(f"population {self.name!r}: composition is one of {', '.join(COMPOSITIONS)}, not "
                                 f"{self.composition!r}.")
        if self.relation not in NEIGHBOURING:
            raise ParameterError(f"population {self.name!r}: the neighbouring relation is one of "
                                 f"{', '.join(NEIGHBOURING)}, not {self.relation!r}.")
        for option, rule in (("delta_prime", "advanced"), ("discount", "temporal"), ("window", "window")):
            if getattr(self, option) is not None and self.composition != rule:
                raise ParameterError(f"population {self.name!r}: {option} applies only to {rule} composition.")
        if self.budget is None and self.composition != "sequential":
            raise ParameterError(f"population {self.name!r} has a composition rule but no budget; give its budget.")
        if self.composition == "temporal" and self.discount is None:
            raise ParameterError(f"population {self.name!r}: temporal composition needs a discount (exponential "
                                 "base or hyperbolic rate).")
        if self.composition == "window" and self.window is None:
            raise ParameterError(f"population {self.name!r}: window composition needs w, the window's length.")
        if self.budget is not None and (self.composition == "zcdp") != isinstance(self.budget, ZCDPBudget):
            raise ParameterError(f"population {self.name!r}: a zcdp composition takes a budget in rho (ZCDPBudget) and "
                                 "the other rules one in epsilon (Budget); give the budget in the rule's measure.")
        if not isinstance(self.unit, BudgetUnit):
            raise ParameterError(f"population {self.name!r}: unit must be a BudgetUnit (rows() or person(column)), "
                                 f"got {self.unit!r}.")
        if self.unit.is_person and self.budget is None:
            raise ParameterError(f"population {self.name!r} has a privacy unit but no budget; the unit is what a "
                                 "budget protects, so give it a budget or leave the unit out.")
        if self.budget is not None:
            self.template()  # the accountant's own checks, now rather than at the first charge

    def template(self):
        """The budget as :meth:`veil.ledger.Ledger.add_population` takes it (``None`` without one),
        an accountant declaring the unit when it is a person."""
        made = self._accountant()
        if made is None or not self.unit.is_person:
            return made
        if not isinstance(made, PrivacyAccount):
            made = (ZCDPAccountant if isinstance(made, ZCDPBudget) else Accountant)(made, dataset_id=self.name)
        return made.declare_unit(self.unit)

    def _accountant(self):
        b = self.budget
        if b is None:
            return None
        if self.composition in ("sequential", "zcdp"):
            return b
        if self.composition == "advanced":
            return Accountant(b, dataset_id=self.name, composition="advanced", advanced_delta_prime=self.delta_prime)
        if self.composition == "temporal":
            name, value = self.discount
            kinds = {"exponential": ExponentialDiscount, "hyperbolic": HyperbolicDiscount}
            if name not in kinds:
                raise ParameterError(f"population {self.name!r}: the discount is exponential or hyperbolic, not "
                                     f"{name!r}.")
            return TemporalAccountant(b, dataset_id=self.name, discount=kinds[name](value))
        return WindowAccountant(self.window, b.epsilon, delta=b.delta, dataset_id=self.name)

    def to_dict(self) -> dict:
        return {"name": self.name, "key_column": self.key_column,
                "budget": None if self.budget is None else (
                    {"rho": to_text(self.budget.rho), "delta": to_text(self.budget.delta)}
                    if isinstance(self.budget, ZCDPBudget) else
                    {"epsilon": to_text(self.budget.epsilon), "delta": to_text(self.budget.delta)}),
                "composition": self.composition, "delta_prime": self.delta_prime,
                "discount": None if self.discount is None else list(self.discount), "window": self.window,
                "relation": self.relation,
                # a row-level population's dict is as before units (its digest does not change)
                **({"unit": self.unit.to_document()} if self.unit.is_person else {})}


@dataclass(frozen=True)
class Policy:
    """What the gate enforces.

    Args:
        checks: the cross-release checks and the checks of the release alone, each with its
            threshold (at most one of each kind).
        populations: the populations the policy defines.
        recheck: check the release's own models on the published file.

    Raises:
        ParameterError: a check that is not a check, a check or population named twice.
    """

    checks: tuple[CrossReleaseCheck, ...] = field(
        default_factory=lambda: (IntersectionCheck(), MatchingCheck(), JoinCheck(), CorrespondenceCheck()))
    populations: tuple[PopulationPolicy, ...] = ()
    recheck: bool = True

    def __post_init__(self):
        object.__setattr__(self, "checks", tuple(self.checks))
        object.__setattr__(self, "populations", tuple(self.populations))
        for check in self.checks:
            if not isinstance(check, (CrossReleaseCheck, SingleReleaseCheck)):
                raise ParameterError(f"a policy's checks are veil.ledger checks, not {type(check).__name__}.")
        names = [c.name for c in self.checks]
        for name in names:
            if names.count(name) > 1:
                raise ParameterError(f"the policy names the {name} check twice; give it once.")
        pops = [p.name for p in self.populations]
        for name in pops:
            if pops.count(name) > 1:
                raise ParameterError(f"the policy defines population {name!r} twice; define it once.")

    @classmethod
    def from_spec(cls, spec) -> Policy:
        """The policy a configuration's ``policy:`` section describes (:class:`veil.config.PolicySpec`).

        Raises:
            ParameterError: a check the gate does not know, or values a check refuses.
        """
        from veil.dp.budget import Budget
        from veil.ledger.checks import CHECKS, SINGLE_CHECKS

        unknown = [name for name in spec.checks if name not in CHECKS]
        if unknown:
            raise ParameterError(f"the policy names the check {unknown[0]!r}, which the gate does not know; it knows "
                                 f"{', '.join(CHECKS)}.")
        populations = tuple(
            PopulationPolicy(p.name, key_column=p.key, budget=None if p.budget is None else
                             ZCDPBudget(*p.budget) if p.composition == "zcdp" else Budget(*p.budget),
                             composition=p.composition, delta_prime=p.delta_prime, discount=p.discount,
                             window=p.window, relation=p.relation,
                             unit=ROWS if p.unit is None else BudgetUnit.person(p.unit))
            for p in spec.populations)
        single = tuple(SINGLE_CHECKS[name](**options) for name, options in (spec.single or {}).items())
        return cls(checks=tuple(CHECKS[name](**options) for name, options in spec.checks.items()) + single,
                   populations=populations, recheck=spec.recheck)

    def population(self, name: str) -> PopulationPolicy | None:
        """The policy's definition of a population, or ``None``."""
        return next((p for p in self.populations if p.name == name), None)

    def to_dict(self) -> dict:
        return {"checks": {c.name: c.to_dict() for c in self.checks},
                "populations": [p.to_dict() for p in self.populations], "recheck": self.recheck}

    @property
    def digest(self) -> str:
        """SHA-256 of the policy's canonical JSON (decisions record it)."""
        text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()
