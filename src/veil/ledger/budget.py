"""A population's privacy budget as an accountant whose every charge is a ledger transaction.

:meth:`LedgerBudget.opened` verifies the log and the population's charges, rebuilds the
population's accountant (:mod:`veil.dp.accountant`) from them and hands it out with a *sink*: the
accountant checks a charge against what it knows, then calls the sink, which in one transaction
under the ledger's write lock

1. counts the population's charges: if another process committed some since this accountant was
   loaded, rebuilds the accountant from all of them and checks the new charge again there (a
   charge that no longer fits raises :class:`~veil.dp.accountant.BudgetExceededError`, and a
   parallel group another process opened under the same name is refused);
2. inserts the charge and the log entry that records it, and commits.

Only then does ``charge()`` return, so noise is drawn only for charges on record, and the total
committed can never exceed the budget whatever the number of processes: each check-and-insert
sees every charge committed before it. The lock is held for one charge, not for the query.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import bindparam, func, select

from veil.dp.accountant import BudgetExceededError, _BaseAccountant, _show
from veil.errors import ParameterError
from veil.ledger.errors import LedgerError

__all__ = ["LedgerBudget"]


def _closed(accountant: _BaseAccountant) -> None:
    raise ParameterError("this accountant came from Ledger.open_budget and its with block has ended; open the "
                         "budget again to charge it.")


def _read_only(accountant: _BaseAccountant) -> None:
    raise ParameterError("this accountant is a snapshot from Ledger.budget; charge through Ledger.open_budget.")


class LedgerBudget:
    """The binding of one population's accountant to its ledger (made by :meth:`Ledger.open_budget`)."""

    def __init__(self, ledger, population):
        from veil.ledger.ledger import CHARGES

        self.ledger = ledger
        self.population = population
        self._charges = CHARGES
        self._tally = select(func.count(), func.max(CHARGES.c.seq)).where(
            CHARGES.c.population_id == bindparam("population"))
        self._seqs: list[int] = []
        #: The ledger numbers of the charges committed through this binding, in order.
        self.made: list[int] = []
        self.accountant: _BaseAccountant | None = None

    def _load(self) -> _BaseAccountant:
        with self.ledger._reading() as conn:
            rows = self.ledger.verify_population(conn, self.population)
        self._seqs = [r.seq for r in rows]
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
        from veil.ledger.ledger import charge_values

        charge = accountant.charges[-1]
        pop = self.population
        table = self._charges
        fresh = None
        with self.ledger._writing() as w:
            count, last = w.conn.execute(self._tally, {"population": pop.id}).one()
            if count != len(self._seqs) or last != (self._seqs[-1] if self._seqs else None):
                rows = w.conn.execute(select(table).where(table.c.population_id == pop.id)
                                      .order_by(table.c.seq)).all()
                fresh = self.ledger._accountant(pop, rows)
                self._recheck(accountant, fresh, charge)
            seq = w.add("charges", charge_values(charge, pop.id, pop.relation, w.by), action="charge",
                        population=pop.name)
        # committed: nothing below may fail, or the accountant would take back a charge on record
        self.made.append(seq)
        if fresh is not None:
            accountant._adopt(fresh)
            self._seqs = [r.seq for r in rows] + [seq]
        else:
            self._seqs.append(seq)

    def _recheck(self, accountant: _BaseAccountant, fresh: _BaseAccountant, charge) -> None:
        """Check ``charge`` against the charges every process has committed (appending it to ``fresh``)."""
        if charge.group is not None:
            mine = any(c.group == charge.group for c in accountant.charges[:-1])
            theirs = any(c.group == charge.group for c in fresh.charges)
            if theirs and not mine:
                raise ParameterError(f"parallel group {charge.group!r} was opened by another process meanwhile; give "
                                     "the new group another name.")
        try:
            fresh._replay(charge)
        except BudgetExceededError:
            left_e, left_d = fresh.remaining()
            what = (f"δ = {_show(charge.delta)} but only δ = {_show(left_d)}" if charge.delta > left_d
                    else f"ε = {_show(charge.epsilon)} but only ε = {_show(left_e)}")
            raise BudgetExceededError(
                f"query {charge.label!r} asks for {what} is left of the budget {fresh.budget} for population "
                f"{self.population.name!r}, which other publishers charged meanwhile; ask for less or start a new "
                "budget.", label=charge.label, requested=(charge.epsilon, charge.delta),
                remaining=(left_e, left_d)) from None
