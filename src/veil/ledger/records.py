"""What the ledger's rows hold, as the log records them: populations, charges and stored blobs.

Shared by the ledger, its budgets, its gate and the import of old budget files, so that none of
them needs another's module.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from dataclasses import dataclass
from fractions import Fraction

from veil.dp.budget_file import FORMAT, SCHEMA_VERSION, BudgetFileError, from_document
from veil.dp.budget_unit import BudgetUnit
from veil.dp.exact import show, to_text
from veil.ledger.errors import LedgerTamperedError
from veil.ledger.schema import TABLES

__all__ = ["COLUMNS", "NEIGHBOURING", "Population", "accountant_of", "charge_document", "charge_values", "compress",
           "decompress", "record_of", "sha256"]

#: The neighbouring relations a budget can be kept under: a record added or removed (unbounded DP,
#: under which veil's queries are private), or one record's values changed (bounded DP). A charge
#: is counted only against a budget kept under its own relation.
NEIGHBOURING = ("add-remove", "substitute")


def sha256(data: bytes) -> str:
    """The SHA-256 of bytes, as hex."""
    return hashlib.sha256(data).hexdigest()


# Every table's column names, once (iterating a SQLAlchemy column collection is slow).
COLUMNS = {name: tuple(c.name for c in table.columns) for name, table in TABLES.items()}
_BINARY = (bytes, bytearray, memoryview)


def record_of(table: str, values: dict) -> dict:
    """A row as its log entry records it: every column, binary ones by their SHA-256."""
    out = {}
    for name in COLUMNS[table]:
        value = values.get(name)
        if isinstance(value, _BINARY):
            value = sha256(bytes(value))
        out[name] = value
    return out


@dataclass(frozen=True)
class Population:
    """A population as the ledger keeps it.

    Attributes:
        id, name: its number and name.
        key_column: the column that identifies a person in every table of it, or ``None``.
        fingerprint: the binding of its one table (:mod:`veil.ledger.binding`: keyed, never shown),
            or ``None`` (then its first registered table binds it, unless it has a key column).
        budget: its privacy budget document (composition rule, budget, options), or ``None``
            when no DP release may be charged to it.
        relation: the neighbouring relation its budget is kept under.
    """

    id: int
    name: str
    key_column: str | None
    fingerprint: str | None
    budget: dict | None
    relation: str

    @classmethod
    def _from_row(cls, row) -> Population:
        return cls(row.id, row.name, row.key_column, row.fingerprint,
                   None if row.accountant is None else json.loads(row.accountant), row.relation)

    @property
    def unit(self) -> BudgetUnit:
        """The privacy unit its budget protects (:mod:`veil.dp.budget_unit`): a row unless the
        budget document declares a person (a population kept before units is row-level)."""
        try:
            return BudgetUnit.from_document(None if self.budget is None else self.budget.get("unit"))
        except ValueError:
            raise LedgerTamperedError(f"population {self.name!r} records a privacy unit veil did not write; "
                                      "restore the ledger from a backup.") from None

    def describe_budget(self) -> str:
        if self.budget is None:
            return "no budget"
        b = self.budget["budget"]
        if "rho" in b:
            return f"ρ = {show(Fraction(b['rho']))}, δ = {show(Fraction(b['delta']))} ({self.budget['composition']})"
        amount = f"ε = {show(Fraction(b['epsilon']))}, δ = {show(Fraction(b['delta']))}"
        return f"{amount} ({self.budget['composition']})"


def charge_document(row) -> dict:
    """A charge row as the accountant's JSON has it."""
    return {"label": row.label, "kind": row.kind, "epsilon": row.epsilon, "delta": row.delta, "group": row.grp,
            "partition": row.part, "step": row.step, "at": row.at}


def accountant_of(pop: Population, rows, where: str):
    """The population's accountant rebuilt from its charge rows, by the accountant's own checks.

    Raises:
        LedgerTamperedError: the charges do not fit the budget, or a charge is malformed.
    """
    doc = {"format": FORMAT, "version": SCHEMA_VERSION, "dataset_id": pop.name, **pop.budget,
           "charges": [charge_document(r) for r in rows]}
    try:
        return from_document(doc, dataset_id=pop.name, where=where)
    except BudgetFileError as exc:
        raise LedgerTamperedError(str(exc)) from None


def charge_values(charge, pop: Population, by: str) -> dict:
    """The row of a new charge to a population: what it cost, how it is counted, who made it and when."""
    return {"population_id": pop.id, "label": charge.label, "kind": charge.kind,
            "epsilon": to_text(charge.epsilon), "delta": to_text(charge.delta), "grp": charge.group,
            "part": charge.partition, "step": charge.step, "composition": pop.budget["composition"],
            "relation": pop.relation, "by": by, "at": charge.at}


def compress(data: bytes) -> bytes:
    return zlib.compress(data, 6)


def decompress(data: bytes, where: str) -> bytes:
    try:
        return zlib.decompress(data)
    except zlib.error:
        raise LedgerTamperedError(f"{where} is corrupt (its stored bytes do not decompress); restore the ledger from "
                                  "a backup.") from None
