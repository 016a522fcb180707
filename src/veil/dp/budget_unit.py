"""The privacy unit a budget protects, and the refusal to charge it for a release at another unit.

A privacy budget (an accountant, a ledger population) protects either a *row* (neighbouring
tables differ by one row) or a *person* named by an ID column (they differ by every row of one
person; :mod:`veil.dp.privacy_unit`). ε spent at one unit says nothing exact about the other: a
person-level ε-DP release is guaranteed only 2ε-DP for a row removed (the row's table and the full table
are each one person away from the table without that person), and a row-level ε-DP release is
ε·m-DP for a person of m rows (group privacy). So a budget is kept at one unit and a charge made
for a release at another is refused (:class:`UnitMismatchError`), nothing charged.

A :class:`BudgetUnit` is the unit alone (the ID column, no bounds: the contribution bounds
belong to each query). Budgets and ledgers written before units existed hold no unit and are
row-level, which every earlier veil release was.
"""

from __future__ import annotations

from dataclasses import dataclass

from veil.errors import ParameterError, VeilError

__all__ = ["ROWS", "BudgetUnit", "UnitMismatchError", "refusal", "unit_of"]


class UnitMismatchError(VeilError):
    """A release at one privacy unit was offered to a budget kept at another."""


@dataclass(frozen=True)
class BudgetUnit:
    """The unit a budget protects: a row (``id_column=None``) or a person named by ``id_column``.

    Make one with :meth:`rows` or :meth:`person`.

    Raises:
        ParameterError: an ID column that is not a non-empty column name.
    """

    id_column: str | None = None

    def __post_init__(self):
        if self.id_column is not None and (not isinstance(self.id_column, str) or not self.id_column.strip()):
            raise ParameterError(f"a person's ID column must be a column name, got {self.id_column!r}.")

    @classmethod
    def rows(cls) -> BudgetUnit:
        """The row unit (what every budget written before units existed protects)."""
        return cls()

    @classmethod
    def person(cls, id_column: str) -> BudgetUnit:
        """The person unit, a person being the rows that share a value of ``id_column``."""
        if id_column is None:
            raise ParameterError("a person's ID column must be a column name, got None.")
        return cls(id_column)

    @property
    def is_person(self) -> bool:
        return self.id_column is not None

    def __str__(self) -> str:
        return f"a person by column {self.id_column!r}" if self.is_person else "a row"

    def to_document(self) -> str | dict:
        """``"rows"`` or ``{"person": id_column}``, as budgets, ledgers and policies keep it."""
        return {"person": self.id_column} if self.is_person else "rows"

    @classmethod
    def from_document(cls, value) -> BudgetUnit:
        """The unit :meth:`to_document` wrote; ``None`` (a budget kept before units) is the row unit.

        Raises:
            ValueError: anything else (a corrupt document).
        """
        if value is None or value == "rows":
            return cls()
        if isinstance(value, dict) and set(value) == {"person"} and isinstance(value["person"], str) \
                and value["person"].strip():
            return cls(value["person"])
        raise ValueError(f"unknown privacy unit {value!r}")


#: The row unit.
ROWS = BudgetUnit()


def unit_of(unit) -> BudgetUnit:
    """The :class:`BudgetUnit` of a query's :class:`~veil.dp.privacy_unit.PrivacyUnit`, or of a
    :class:`BudgetUnit` itself (a person's ID column; the bounds are the query's own).

    Raises:
        ParameterError: something else.
    """
    if isinstance(unit, BudgetUnit):
        return unit
    from veil.dp.privacy_unit import PrivacyUnit

    if isinstance(unit, PrivacyUnit):
        return BudgetUnit(unit.id_column)
    raise ParameterError(f"a privacy unit is a BudgetUnit or a PrivacyUnit, got {type(unit).__name__}.")


def refusal(budget_unit: BudgetUnit, release_unit: BudgetUnit, dataset_id: str) -> UnitMismatchError:
    """The one sentence refusing a release at ``release_unit`` charged to a budget at ``budget_unit``."""
    return UnitMismatchError(
        f"the budget of {dataset_id!r} protects {budget_unit} and this release protects {release_unit}, and "
        "charges at different privacy units do not compose; charge it to a budget kept at its unit.")
