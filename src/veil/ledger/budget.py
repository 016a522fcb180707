"""A population's privacy budget as an accountant whose every charge is a ledger transaction.

:meth:`LedgerBudget.opened` verifies the whole ledger (:mod:`veil.ledger.verification`), finds the
population — by its name, or as the one the queried table belongs to — rebuilds its accountant
(:mod:`veil.dp.accountant`) from its charges and hands it out with a *sink*: the accountant checks
a charge against what it knows, then calls the sink, which in one transaction under the ledger's
write lock

1. verifies what changed since the session last verified or wrote the ledger
   (:func:`~veil.ledger.verification.catch_up`; the whole ledger again when the charge makes the
   population or registers its table), and replays the charges other processes committed
   meanwhile — read from the log entries it verified, never from unverified rows — on its
   *mirror* of the committed budget; then checks the new charge there (a charge that no longer
   fits raises :class:`~veil.dp.budget.BudgetExceededError`, and a parallel group another
   process opened under the same name is refused);
2. makes the population and registers the table when this charge is the first (so a refused
   query, or one whose table is not the population's, leaves nothing behind), inserts the charge
   and the log entry that records it, and commits; the accountant handed out then takes over the
   mirror's record when other processes had charged.

Only then does ``charge()`` return, so noise is drawn only for charges on record, and the total
committed can never exceed the budget whatever the number of processes: each check-and-insert
sees every charge committed before it. The lock is held for one charge, not for the query.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

from sqlalchemy import select

from veil.dp.account import PrivacyAccount
from veil.dp.budget import BudgetExceededError
from veil.dp.budget_file import read_charge
from veil.dp.exact import show
from veil.errors import ParameterError, VeilError
from veil.ledger import verification
from veil.ledger.errors import LedgerError, LedgerTamperedError
from veil.ledger.records import Population, charge_document, charge_values
from veil.ledger.schema import TABLES

CHARGES, POPULATIONS = TABLES["charges"], TABLES["populations"]

__all__ = ["LedgerBudget"]


def _closed(accountant: PrivacyAccount) -> None:
    raise ParameterError("this accountant came from Ledger.open_budget and its with block has ended; open the "
                         "budget again to charge it.")


def _read_only(accountant: PrivacyAccount) -> None:
    raise ParameterError("this accountant is a snapshot from Ledger.budget; charge through Ledger.open_budget.")


class LedgerBudget:
    """The binding of one population's accountant to its ledger (made by :meth:`Ledger.budget_session`).

    Args:
        ledger: the ledger.
        population: the population's name, or ``None`` for the one ``table`` belongs to.
        create: the budget to make it with when it does not exist (made with its first charge).
        key_column: the key column of a population made here.
        table: the table queried (:class:`~veil.ledger.binding.TableRef`), which must be the
            population's or is registered under it with the first charge.
        alone: the ledger keeps this population's budget and no other's (a budget file).

    Besides the accountant it hands out, the binding keeps a *mirror*: the population's accountant
    exactly as committed when the session last verified or wrote the ledger (its
    :class:`~veil.ledger.verification.Verified` state), so that a charge costs the same whatever
    the length of the history.
    """

    def __init__(self, ledger, population: str | None, *, create=None, key_column: str | None = None, table=None,
                 alone: bool = False):
        if population is None and table is None:
            raise ParameterError("a budget is opened by its population's name or by the table it belongs to.")
        self.ledger = ledger
        self._name, self._create, self._key_column, self._table, self._alone = (population, create, key_column,
                                                                                table, alone)
        self._pop: Population | None = None     # the population, once it exists
        self._values: dict | None = None        # the population to make with the first charge
        self._register = False                  # register the table with the first charge
        self._mirror: PrivacyAccount | None = None
        self._state: verification.Verified | None = None
        self._behind = False  # the mirror holds charges of others the accountant has not taken over
        self._known: set[int] = set()  # the ledger numbers of the charges the accountant holds
        #: The ledger numbers of the charges committed through this binding, in order.
        self.made: list[int] = []
        self.accountant: PrivacyAccount | None = None

    @property
    def population(self) -> str:
        """The population's name (the one to be made, before its first charge)."""
        return self._pop.name if self._pop is not None else self._values["name"]

    # ------------------------------------------------------------------ finding the population

    def _resolve(self, conn, key: bytes) -> None:
        """Find the population (or what to make), and whether the table is to be registered.

        Raises:
            LedgerError: see :meth:`veil.ledger.Ledger.open_budget`.
        """
        ledger, table, where = self.ledger, self._table, self.ledger._where
        pop, values = None, None
        if self._name is not None:
            pop = ledger._population(conn, self._name, missing_ok=True)
            if pop is None and self._create is None:
                raise LedgerError(f"{where} has no population {self._name!r}; give the budget to start it with "
                                  "(--budget E[,D], or create= in Python).")
            name = self._name
        else:
            holders = ledger._holders(conn, table, key)
            if len(holders) > 1:
                raise LedgerError(f"several populations of {where} hold this table "
                                  f"({', '.join(repr(p.name) for p in holders[:5])}); name one with --population.")
            pop = holders[0] if holders else None
            name = table.name or "table"
        if self._alone:
            others = conn.execute(select(POPULATIONS.c.name).where(POPULATIONS.c.accountant.is_not(None))).scalars()
            if any(pop is None or other != pop.name for other in others):
                raise LedgerError(f"{where} keeps the budget of another table; use the budget file of this table.")
        if self._name is None and pop is None and self._create is None:
            raise LedgerError(f"no population of {where} holds this table; give the budget to start one with "
                              "(--budget E[,D]), or name its population (--population).")
        if pop is None:
            if self._name is None and ledger._population(conn, name, missing_ok=True) is not None:
                raise LedgerError(f"{where} has a population {name!r} of another table; name the population of this "
                                  "one with --population.")
            values = ledger._population_values(name, self._create, self._key_column, None, "add-remove")
        else:
            if self._create is not None:
                ledger._same_population(pop, ledger._population_values(pop.name, self._create, pop.key_column,
                                                                       pop.fingerprint, pop.relation))
            if pop.budget is None:
                raise LedgerError(f"population {pop.name!r} of {where} has no privacy budget, so no DP release can "
                                  "be charged to it; give it one in the policy.")
        self._pop, self._values = pop, values
        self._register = table is not None and (pop is None or ledger._held(conn, pop, table, key) is None)

    def _fresh(self) -> PrivacyAccount:
        """The accountant of the population to be made: its budget, nothing charged."""
        values = self._values
        pop = Population(0, values["name"], values["key_column"], None, json.loads(values["accountant"]),
                         values["relation"])
        return self.ledger._accountant(pop, [])

    def _load(self) -> PrivacyAccount:
        """The population's accountant, the whole ledger verified first; the mirror is set to it."""
        ledger = self.ledger
        built: dict = {}
        with ledger._reading() as conn:
            state = verification.require(conn, ledger.store, ledger._where, ledger._id(conn), lock=False,
                                         accountants=built)
            self._resolve(conn, state.key)
            known = [] if self._pop is None else conn.execute(
                select(CHARGES.c.seq).where(CHARGES.c.population_id == self._pop.id)).scalars().all()
        self._state = state
        self._known = set(known)
        if self._pop is None:
            self._mirror = self._fresh()
            return self._fresh()
        self._mirror = built[self._pop.id]  # rebuilt from the rows just verified
        return copy.deepcopy(self._mirror)

    def snapshot(self) -> PrivacyAccount:
        """The accountant as it stands, the ledger verified; charging it raises."""
        accountant = self._load()
        if self._pop is None or self._pop.budget is None:
            raise LedgerError(f"population {self.population!r} of {self.ledger._where} has no privacy budget.")
        accountant._sink = _read_only
        return accountant

    @contextmanager
    def opened(self) -> Iterator[PrivacyAccount]:
        """The accountant, its charges committed by :meth:`_commit` before they return."""
        accountant = self._load()
        relation = self._pop.relation if self._pop is not None else self._values["relation"]
        if relation != "add-remove":
            raise LedgerError(f"population {self.population!r} keeps its budget under substitution of a record, and "
                              "veil's queries are private under adding or removing one; charge them to a population "
                              "kept under add-remove.")
        accountant._sink = self._commit
        self.accountant = accountant
        try:
            yield accountant
        finally:
            accountant._sink = _closed

    # ------------------------------------------------------------------ committing a charge

    def _commit(self, accountant: PrivacyAccount) -> None:
        charge = accountant.charges[-1]
        ledger, store = self.ledger, self.ledger.store
        state, mirror = self._state, self._mirror
        self._state = self._mirror = None  # until this commit is through, neither can be trusted
        kept = (None, None)  # what stays true if the charge is refused
        defines = self._values is not None or self._register  # this charge makes the population or its table
        try:
            with store.write(durable=defines) as conn:
                ledger_id = ledger._id(conn)
                strict = state is None or mirror is None or defines
                if strict:
                    state, added = verification.require(conn, store, ledger._where, ledger_id, lock=True), []
                else:
                    state, added = verification.catch_up(conn, store, ledger._where, ledger_id, state)
                w = ledger._writer(conn, state)
                if strict:
                    mirror, foreign = self._settle(w)
                else:
                    foreign = [SimpleNamespace(**row) for table, row in self._rows(added)
                               if table == "charges" and row.get("population_id") == self._pop.id]
                    self._replay(mirror, foreign)
                if foreign:
                    self._known.update(row.seq for row in foreign)
                    self._behind = True
                    self._check_group(accountant, foreign, charge)
                try:
                    mirror._replay(charge)
                except BudgetExceededError:
                    if not w.added:
                        kept = (state, mirror)
                    raise self._refusal(mirror, charge) from None
                seq = w.add("charges", charge_values(charge, self._pop, w.by), action="charge",
                            population=self._pop.name)
                counts = dict(state.counts)
                for table in w.added:
                    counts[table] = counts.get(table, 0) + 1
                after = verification.Verified(w.head, counts, state.token, state.key)
        except BaseException:
            self._state, self._mirror = kept
            raise
        # committed: nothing below may fail, or the accountant would take back a charge on record
        self._state, self._mirror, self._values, self._register = after, mirror, None, False
        self.made.append(seq)
        self._known.add(seq)
        if self._behind:
            if accountant.dataset_id != mirror.dataset_id:
                accountant.dataset_id = mirror.dataset_id
            accountant._adopt(mirror)
            self._behind = False

    @staticmethod
    def _rows(entries):
        for entry in entries:
            data = entry.data
            if isinstance(data, dict) and isinstance(data.get("row"), dict):
                yield data.get("table"), data["row"]

    def _replay(self, mirror: PrivacyAccount, foreign) -> None:
        try:
            for row in foreign:
                mirror._replay(read_charge(charge_document(row)))
        except (BudgetExceededError, ValueError, TypeError, VeilError):
            raise LedgerTamperedError(f"population {self._pop.name!r} of {self.ledger._where} holds charges that its "
                                      "budget cannot have admitted; run veil ledger verify.") from None

    def _settle(self, w):
        """Under the lock, on a ledger just verified whole: find the population again (another
        process may have made it or registered the table meanwhile), make it and register the
        table if this charge is the first; returns the mirror rebuilt from its charge rows and
        the rows among them the accountant does not know."""
        ledger = self.ledger
        self._resolve(w.conn, w.key)
        if self._pop is None:
            pid = w.add("populations", self._values, action="population", population=self._values["name"])
            self._pop = Population._from_row(w.conn.execute(select(POPULATIONS).where(POPULATIONS.c.id == pid)).one())
        if self._register:
            ledger._register(w, self._pop, self._table)
        rows = w.conn.execute(select(CHARGES).where(CHARGES.c.population_id == self._pop.id)
                              .order_by(CHARGES.c.seq)).all()
        return ledger._accountant(self._pop, rows), [row for row in rows if row.seq not in self._known]

    def _check_group(self, accountant: PrivacyAccount, foreign, charge) -> None:
        """Refuse a parallel group that another process opened under the same name meanwhile."""
        if charge.group is None or any(c.group == charge.group for c in accountant.charges[:-1]):
            return
        if any(row.grp == charge.group for row in foreign):
            raise ParameterError(f"parallel group {charge.group!r} was opened by another process meanwhile; give the "
                                 "new group another name.")

    def _refusal(self, mirror: PrivacyAccount, charge) -> BudgetExceededError:
        left_e, left_d = mirror.remaining()
        if mirror.measure == "zcdp":  # its charges keep ρ where others keep ε
            left_e, left_d = mirror.remaining_rho, mirror.budget.delta
            what = f"ρ = {show(charge.epsilon)} but only ρ = {show(left_e)}"
        else:
            what = (f"δ = {show(charge.delta)} but only δ = {show(left_d)}" if charge.delta > left_d
                    else f"ε = {show(charge.epsilon)} but only ε = {show(left_e)}")
        return BudgetExceededError(
            f"query {charge.label!r} asks for {what} is left of the budget {mirror.budget} for population "
            f"{self.population!r}, which other publishers charged meanwhile; ask for less or start a new "
            "budget.", label=charge.label, requested=(charge.epsilon, charge.delta), remaining=(left_e, left_d))
