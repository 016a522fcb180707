"""A population's privacy budget as an accountant whose every charge is a ledger transaction.

:meth:`LedgerBudget.opened` verifies the log and the population's charges, rebuilds the
population's accountant (:mod:`veil.dp.accountant`) from them and hands it out with a *sink*: the
accountant checks a charge against what it knows, then calls the sink, which in one transaction
under the ledger's write lock

1. reads the population's charges committed after the last one the binding knows — those other
   processes made meanwhile — and replays them on its *mirror* of the committed budget; then
   checks the new charge there (a charge that no longer fits raises
   :class:`~veil.dp.accountant.BudgetExceededError`, and a parallel group another process opened
   under the same name is refused);
2. inserts the charge and the log entry that records it, and commits; the accountant handed out
   then takes over the mirror's record when other processes had charged.

Only then does ``charge()`` return, so noise is drawn only for charges on record, and the total
committed can never exceed the budget whatever the number of processes: each check-and-insert
sees every charge committed before it. The lock is held for one charge, not for the query.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import bindparam, select

from veil.dp.accountant import BudgetExceededError, _BaseAccountant, _charge_from, _show
from veil.errors import ParameterError, VeilError
from veil.ledger.errors import LedgerError, LedgerTamperedError
from veil.ledger.records import charge_document, charge_values
from veil.ledger.schema import TABLES

CHARGES = TABLES["charges"]

__all__ = ["LedgerBudget"]


def _closed(accountant: _BaseAccountant) -> None:
    raise ParameterError("this accountant came from Ledger.open_budget and its with block has ended; open the "
                         "budget again to charge it.")


def _read_only(accountant: _BaseAccountant) -> None:
    raise ParameterError("this accountant is a snapshot from Ledger.budget; charge through Ledger.open_budget.")


class LedgerBudget:
    """The binding of one population's accountant to its ledger (made by :meth:`Ledger.open_budget`).

    Besides the accountant it hands out, the binding keeps a *mirror*: the population's accountant
    exactly as committed up to charge ``_last`` (every charge is numbered in commit order). A
    commit reads only the charges numbered after ``_last`` — those another process made — and
    replays them, so a charge costs the same whatever the length of the history.
    """

    def __init__(self, ledger, population):
        self.ledger = ledger
        self.population = population
        self._newer = select(CHARGES).where(CHARGES.c.population_id == bindparam("population"),
                                            CHARGES.c.seq > bindparam("last")).order_by(CHARGES.c.seq)
        self._mirror: _BaseAccountant | None = None
        self._last = 0
        self._behind = False  # the mirror holds charges of others the accountant has not taken over
        #: The ledger numbers of the charges committed through this binding, in order.
        self.made: list[int] = []
        self.accountant: _BaseAccountant | None = None

    def _load(self) -> _BaseAccountant:
        """The population's accountant, its history verified; the mirror is set to it."""
        with self.ledger._reading() as conn:
            rows = self.ledger.verify_population(conn, self.population)
        self._mirror = self.ledger._accountant(self.population, rows)
        self._last = rows[-1].seq if rows else 0
        return self.ledger._accountant(self.population, rows)

    def snapshot(self) -> _BaseAccountant:
        """The accountant as it stands, verified; charging it raises."""
        accountant = self._load()
        accountant._sink = _read_only
        return accountant

    @contextmanager
    def opened(self) -> Iterator[_BaseAccountant]:
        """The accountant, its charges committed by :meth:`_commit` before they return."""
        if self.population.relation != "add-remove":
            raise LedgerError(f"population {self.population.name!r} keeps its budget under substitution of a "
                              "record, and veil's queries are private under adding or removing one; charge them to "
                              "a population kept under add-remove.")
        accountant = self._load()
        accountant._sink = self._commit
        self.accountant = accountant
        try:
            yield accountant
        finally:
            accountant._sink = _closed

    def _commit(self, accountant: _BaseAccountant) -> None:
        charge = accountant.charges[-1]
        pop = self.population
        mirror = self._mirror
        self._mirror = None  # until this commit is through, the mirror cannot be trusted
        with self.ledger._writing() as w:
            if mirror is None:  # an earlier commit failed half-way: start again from the rows
                foreign = w.conn.execute(self._newer, {"population": pop.id, "last": 0}).all()
                mirror = self.ledger._accountant(pop, foreign)
                self._behind = True
            else:
                foreign = w.conn.execute(self._newer, {"population": pop.id, "last": self._last}).all()
                try:
                    for row in foreign:
                        mirror._replay(_charge_from(charge_document(row)))
                except (BudgetExceededError, ValueError, TypeError, VeilError):
                    raise LedgerTamperedError(f"population {pop.name!r} of {self.ledger._where} holds charges that "
                                              "its budget cannot have admitted; run veil ledger verify.") from None
            if foreign:
                self._check_group(accountant, mirror, foreign, charge)
            self._behind = self._behind or bool(foreign)
            try:
                mirror._replay(charge)
            except BudgetExceededError:
                self._mirror, self._last = mirror, foreign[-1].seq if foreign else self._last
                raise self._refusal(mirror, charge) from None
            seq = w.add("charges", charge_values(charge, pop, w.by), action="charge",
                        population=pop.name)
        # committed: nothing below may fail, or the accountant would take back a charge on record
        self._mirror, self._last = mirror, seq
        self.made.append(seq)
        if self._behind:
            accountant._adopt(mirror)
            self._behind = False

    def _check_group(self, accountant: _BaseAccountant, mirror: _BaseAccountant, foreign, charge) -> None:
        """Refuse a parallel group that another process opened under the same name meanwhile."""
        if charge.group is None or any(c.group == charge.group for c in accountant.charges[:-1]):
            return
        if any(row.grp == charge.group for row in foreign):
            self._mirror, self._last, self._behind = mirror, foreign[-1].seq, True
            raise ParameterError(f"parallel group {charge.group!r} was opened by another process meanwhile; give the "
                                 "new group another name.")

    def _refusal(self, mirror: _BaseAccountant, charge) -> BudgetExceededError:
        left_e, left_d = mirror.remaining()
        what = (f"δ = {_show(charge.delta)} but only δ = {_show(left_d)}" if charge.delta > left_d
                else f"ε = {_show(charge.epsilon)} but only ε = {_show(left_e)}")
        return BudgetExceededError(
            f"query {charge.label!r} asks for {what} is left of the budget {mirror.budget} for population "
            f"{self.population.name!r}, which other publishers charged meanwhile; ask for less or start a new "
            "budget.", label=charge.label, requested=(charge.epsilon, charge.delta), remaining=(left_e, left_d))
