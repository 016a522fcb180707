"""A privacy account: one dataset's budget and the record of every charge made against it, which is
what every accountant keeps, whatever way of counting it adds.

An account holds a budget (ε, δ) for one dataset and a record of every charge made against it,
in order; post-processing is recorded at cost 0. A charge is checked *before* it is recorded; if
the noise draw that follows fails, the budget stays spent, which errs on the side of privacy. An
accountant a ledger opens (:mod:`veil.ledger`) commits every charge there before the charge
returns (a *sink*); a charge the sink could not save is taken back, so the query that asked for it
draws no noise. The account reports what was spent by what (:meth:`PrivacyAccount.report`) and
serializes to JSON (:mod:`veil.dp.budget_file`).

How charges add up is each accountant's own (:mod:`veil.dp.accountant` lists them); every
accountant is a :class:`PrivacyAccount` and defines ``charge()``, ``can_afford()``, ``spent()``,
``remaining()``, the ``_options()`` its JSON keeps, ``_from_options()`` to make a new one from them
and ``_replay(charge)`` to read a kept charge back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from fractions import Fraction

from veil.dp import budget_file
from veil.dp.budget import Budget, Charge, check_label, check_step, timestamp
from veil.dp.budget_file import BudgetFileError
from veil.dp.budget_unit import ROWS, BudgetUnit, refusal, unit_of
from veil.dp.exact import from_text, show, to_text
from veil.errors import ParameterError

__all__ = ["PrivacyAccount"]


class PrivacyAccount:
    """One dataset's privacy budget and the record of its charges: what every accountant is.

    Not used alone: an accountant (:class:`~veil.dp.accountant.Accountant` and the others) adds
    how charges add up. It is the type a ledger hands out for a population's budget, whichever
    accountant that is.

    Args:
        budget: the budget (ε, δ) of the dataset.
        dataset_id: the dataset the budget belongs to; a saved budget is only loaded for it.

    Raises:
        ParameterError: ``budget`` is not a :class:`~veil.dp.budget.Budget`, or the dataset id is empty.
    """

    composition = "sequential"
    #: the privacy measure the budget and every charge are in (:data:`veil.dp.measures.MEASURES`):
    #: ``"approximate"`` (ε, δ), of which pure ε is the case δ = 0; ρ-zCDP is its own accountant
    measure = "approximate"
    #: the budget type the accountant keeps
    _budget_type = Budget
    #: the ``"composition"`` values of the documents the class reads back (:func:`veil.dp.budget_file.register`)
    compositions: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "compositions" in cls.__dict__:
            budget_file.register(cls)

    def __init__(self, budget: Budget, *, dataset_id: str):
        if not isinstance(budget, self._budget_type):
            raise ParameterError(f"budget must be a {self._budget_type.__name__}, got {type(budget).__name__}.")
        if not isinstance(dataset_id, str) or not dataset_id.strip():
            raise ParameterError(f"dataset_id must be a non-empty text naming the dataset, got {dataset_id!r}.")
        self.budget = budget
        self.dataset_id = dataset_id
        self._charges: list[Charge] = []
        # Called with the accountant after every new charge, before the charge returns; a ledger
        # uses it to commit the charge before any noise is drawn (see veil.ledger.budget).
        self._sink: Callable[[PrivacyAccount], None] | None = None
        self._unit = ROWS
        self._release_unit = ROWS  # the unit of the release charging now (see charging_at)

    @property
    def unit(self) -> BudgetUnit:
        """The privacy unit the budget protects (:mod:`veil.dp.budget_unit`; a row unless declared)."""
        return self._unit

    def declare_unit(self, unit) -> PrivacyAccount:
        """Keep the budget at ``unit`` (a :class:`~veil.dp.budget_unit.BudgetUnit` or a query's
        :class:`~veil.dp.privacy_unit.PrivacyUnit`) and return the accountant; a charge for a
        release at another unit is then refused. Declare it before the first charge.

        Raises:
            ParameterError: not a unit, the accountant has charges already (they were made at
                its unit, which therefore cannot change), or it is a ledger population's (whose
                unit the ledger records).
        """
        unit = unit_of(unit)
        if self._sink is not None and unit != self._unit:
            raise ParameterError(f"the budget of {self.dataset_id!r} is a ledger population's, kept at {self._unit}, "
                                 "so its unit cannot change; charge a population kept at the release's unit.")
        if self._charges and unit != self._unit:
            raise ParameterError(f"the budget of {self.dataset_id!r} has charges made at {self._unit}, so its unit "
                                 "cannot change; start a new budget for another unit.")
        self._unit = unit
        return self

    def check_unit(self, unit) -> None:
        """Refuse a release at ``unit`` when the budget is kept at another (nothing is charged).

        Raises:
            UnitMismatchError: the units differ.
        """
        unit = unit_of(unit)
        if unit != self._unit:
            raise refusal(self._unit, unit, self.dataset_id)

    @contextmanager
    def charging_at(self, unit) -> Iterator[PrivacyAccount]:
        """The charges made inside are for a release at ``unit`` (checked first, :meth:`check_unit`);
        outside, a charge is for a row-level release, the unit of every release but grouped queries."""
        self.check_unit(unit)
        self._release_unit = unit_of(unit)
        try:
            yield self
        finally:
            self._release_unit = ROWS

    @property
    def charges(self) -> tuple[Charge, ...]:
        """Every charge, in the order it was made."""
        return tuple(self._charges)

    def postprocess(self, label: str, *, step: int | None = None) -> Charge:
        """Record a post-processing of earlier releases; it costs nothing (ε = δ = 0)."""
        label = check_label(label)
        if step is not None:
            step = check_step(step, "step")
        return self._record(Charge(label, Fraction(0), Fraction(0), kind="postprocess", step=step, at=timestamp()))

    def _record(self, charge: Charge, undo: Callable[[], None] | None = None) -> Charge:
        """Append ``charge`` and hand the accountant to its sink; if the sink fails, take the charge
        back (``undo`` restores the running totals) and let the error through, so a charge that
        was not saved is not spent and the query that asked for it draws no noise. A charge for a
        release at another unit than the budget's is taken back and refused the same way."""
        if charge.kind != "postprocess" and self._release_unit != self._unit:
            if undo is not None:
                undo()
            raise refusal(self._unit, self._release_unit, self.dataset_id)
        self._charges.append(charge)
        if self._sink is not None:
            try:
                self._sink(self)
            except BaseException:
                self._charges.pop()
                if undo is not None:
                    undo()
                raise
        return charge

    # subclasses define charge(), can_afford(), spent(), remaining(), _options(), _from_options() and _replay(charge)

    def to_document(self) -> dict:
        """The accountant as a JSON-ready dict (schema version, dataset id, budget, options, every charge)."""
        return budget_file.to_document(self)

    def to_json(self) -> str:
        """:meth:`to_document` as JSON text."""
        return json.dumps(self.to_document(), indent=2, ensure_ascii=False) + "\n"

    def _options(self) -> dict:
        return {}

    def _budget_document(self) -> dict:
        """The budget as its document keeps it, each number as its exact text."""
        return {"epsilon": to_text(self.budget.epsilon), "delta": to_text(self.budget.delta)}

    @classmethod
    def _read_budget(cls, budget: dict) -> Budget:
        """The budget of a document (:meth:`_budget_document`); KeyError, TypeError or
        ParameterError when it is corrupt."""
        return Budget(from_text(budget["epsilon"]), from_text(budget["delta"]))

    @classmethod
    def from_json(cls, text: str, *, dataset_id: str):
        """An accountant of this class from :meth:`to_json` text (:func:`veil.dp.budget_file.from_json`).

        Raises:
            BudgetFileError: the text cannot be read back (see :func:`~veil.dp.budget_file.from_json`), or
                it keeps another kind of accountant.
        """
        return cls._read(text, dataset_id=dataset_id)

    @classmethod
    def _read(cls, text: str, *, dataset_id: str, discount=None):
        acc = budget_file.from_json(text, dataset_id=dataset_id, discount=discount)
        if not isinstance(acc, cls):
            raise BudgetFileError(f"the budget file keeps a {type(acc).__name__}, not a {cls.__name__}; "
                                  "load it with veil.dp.accountant.load.")
        return acc

    def report(self) -> list[dict]:
        """Rows of what was spent by what, in charge order.

        Each row has ``label``, ``kind`` (``query``, ``postprocess`` or ``parallel``: one row per
        parallel group, placed where the group first appears), ``epsilon``, ``delta``, ``group``,
        ``partition``, ``step``, ``at`` and ``counted``: the ε the row adds to the total (a
        parallel group counts once, at its cost; its members show ``None``).
        """
        rows, seen = [], set()
        costs = self._group_costs()
        for c in self._charges:
            if c.group is not None and c.group not in seen:
                seen.add(c.group)
                eps, delta = costs[c.group]
                rows.append({"label": c.group, "kind": "parallel", "epsilon": eps, "delta": delta,
                             "group": None, "partition": None, "step": c.step, "at": c.at, "counted": eps})
            rows.append({"label": c.label, "kind": c.kind, "epsilon": c.epsilon, "delta": c.delta,
                         "group": c.group, "partition": c.partition, "step": c.step, "at": c.at,
                         "counted": None if c.group is not None else c.epsilon})
        return rows

    def _group_costs(self) -> dict:
        return {}

    def _adopt(self, other: PrivacyAccount) -> None:
        """Take over the charges and running totals of ``other``, the same budget rebuilt from a
        shared store that holds charges made elsewhere since this accountant was loaded. The sink
        and any parallel group open in this process stay."""
        if type(other) is not type(self) or other.budget != self.budget or other.dataset_id != self.dataset_id:
            raise ParameterError("an accountant can only adopt the record of the same budget.")
        kept = {"_sink", "_open_groups", "_release_unit"}
        self.__dict__.update({name: list(value) if isinstance(value, list) else value
                              for name, value in other.__dict__.items() if name not in kept})

    def format_report(self) -> str:
        """:meth:`report` as a text table, with the budget, what is spent and what is left."""
        lines = [f"privacy budget of dataset {self.dataset_id!r}: {self.budget} ({self._counting()})"]
        rows = self.report()
        if rows:
            header = ("label", "kind", "ε", "δ", "counted", "partition", "step")
            table = [header] + [(("  " if r["group"] else "") + r["label"], r["kind"], show(r["epsilon"]),
                                 show(r["delta"]), "-" if r["counted"] is None else show(r["counted"]),
                                 r["partition"] or "", "" if r["step"] is None else str(r["step"]))
                                for r in rows]
            widths = [max(len(row[i]) for row in table) for i in range(len(header))]
            lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
        else:
            lines.append("nothing charged yet")
        spent = self.spent()
        lines.append(f"spent ε = {show(spent.epsilon)}, δ = {show(spent.delta)} ({spent.method}); "
                     f"left {self._left_text()}")
        return "\n".join(lines)

    def _counting(self) -> str:
        return "sequential and parallel composition"

    def _left_text(self) -> str:
        eps, delta = self.remaining()
        return f"ε = {show(eps)}, δ = {show(delta)}"

    def __repr__(self) -> str:
        spent = self.spent()
        return (f"{type(self).__name__}(dataset_id={self.dataset_id!r}, budget=({self.budget}), "
                f"spent=ε {show(spent.epsilon)} δ {show(spent.delta)}, charges={len(self._charges)})")
