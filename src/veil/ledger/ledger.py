"""The release ledger: every population, dataset, DP charge and published release, in one store.

A :class:`Ledger` is the one source of truth about what was spent and published: privacy budgets
are charged in it (:meth:`Ledger.open_budget`, the contract a DP query charges through), releases
pass its gate before they are recorded (:meth:`Ledger.publish`, :mod:`veil.ledger.gate`), and its
log proves what happened (:meth:`Ledger.verify`, :mod:`veil.ledger.chain`). What is verified
before each decision is set out in :mod:`veil.ledger.verification`.

**Populations.** A population is the set of people whose privacy a budget protects and whose
releases must compose safely. It has a name, which the curator gives (``veil dp --budget-file``
names its one population after the table's file), and is identified either by a *key column*
(every table registered under it holds that column, one value per person, so several tables —
samples, versions, sites — can belong to one population and share its budget and its history) or
is the *one table* first registered under it. A table is recognized by its binding, a fingerprint
of its content keyed with the curator's key (:mod:`veil.ledger.binding`), which the ledger never
shows: nothing an analyst sees of a population is computed from its data.
A population's budget protects a privacy unit, a row or a person by an ID column
(:mod:`veil.dp.budget_unit`), recorded with it; a release at another unit is refused, and a
population kept before units is row-level.

**Who and when.** Every entry records the time (UTC) and who wrote it: ``by`` (``--by``), else the
operating-system user.
"""

from __future__ import annotations

import getpass
import json
import os
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import bindparam, func, insert, select
from sqlalchemy.engine import Connection

from veil.dp.account import PrivacyAccount
from veil.dp.accountant import Accountant
from veil.dp.budget import Budget
from veil.dp.budget_unit import unit_of
from veil.dp.exact import from_text, show
from veil.dp.zcdp_accountant import ZCDPAccountant, ZCDPBudget
from veil.dp.zcdp_conversion import zcdp_epsilon
from veil.errors import ParameterError
from veil.ledger import chain, verification
from veil.ledger.binding import TableRef, binding, matches
from veil.ledger.errors import LedgerError, LedgerTamperedError
from veil.ledger.records import NEIGHBOURING, Population, accountant_of, record_of
from veil.ledger.schema import CURRENT_VERSION, MIGRATIONS, TABLES
from veil.ledger.statements import Prepared
from veil.ledger.store import LEDGER_ENV, Store

__all__ = ["NEIGHBOURING", "Ledger", "Population", "VerifyReport", "current_user"]

POPULATIONS, DATASETS, CHARGES, RELEASES = (TABLES[n] for n in ("populations", "datasets", "charges", "releases"))
META, SCHEMA_VERSIONS = TABLES["meta"], TABLES["schema_version"]
_PRIMARY = verification.PRIMARY
# Every row's insert, compiled once per database (a charge runs one), returning the new primary key.
_INSERTS = {name: Prepared(insert(TABLES[name]).values({c.name: bindparam(c.name) for c in TABLES[name].columns
                                                       if c.name != key})
                           .returning(TABLES[name].c[key])) for name, key in _PRIMARY.items()}
_COLUMNS = {name: [c.name for c in TABLES[name].columns if c.name != key] for name, key in _PRIMARY.items()}


def current_user() -> str:
    """The operating-system user running veil (``uid N`` when the system has no name for it)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class VerifyReport:
    """What :meth:`Ledger.verify` found.

    Attributes:
        location: the ledger.
        entries: entries in the log, all checked.
        head: the newest entry's number and hash.
        problems: one sentence per problem (empty when the ledger verifies).
    """

    location: str
    entries: int
    head: chain.Head
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict:
        return {"ledger": self.location, "ok": self.ok, "entries": self.entries,
                "head": {"seq": self.head.seq, "hash": self.head.hash}, "problems": list(self.problems)}


class _Writer:
    """One write transaction: the lock is held, the anchor checked; rows and entries go in together."""

    def __init__(self, conn: Connection, head: chain.Head, key: bytes, ledger_id: str, by: str):
        self.conn, self.head, self.key, self.ledger_id, self.by = conn, head, key, ledger_id, by
        self.at = _now()
        self.added: list[str] = []  # the tables a row was added to, in order

    def add(self, table: str, values: dict, *, action: str, population: str | None, extra: dict | None = None):
        """Insert a row and the entry that records it; returns the row's primary key."""
        values = {**values, "log_seq": self.head.seq + 1}
        key = _INSERTS[table].one(self.conn, {c: values.get(c) for c in _COLUMNS[table]})[0]
        values[_PRIMARY[table]] = key
        payload = {"table": table, "row": record_of(table, values), **(extra or {})}
        self.note(action, population, payload)
        self.added.append(table)
        return key

    def note(self, action: str, population: str | None, payload: dict) -> None:
        """Append an entry that adds no row (a refusal, an import)."""
        self.head = chain.append(self.conn, self.head, self.key, self.ledger_id, at=self.at, by=self.by,
                                 action=action, population=population, payload=payload)


class Ledger:
    """A release ledger in an SQLite file or a PostgreSQL database.

    Args:
        location: a file path, ``sqlite:///path`` or ``postgresql://…``; default ``$VEIL_LEDGER``.
        by: who writes the entries this object makes (default: the operating-system user).
        timeout: how many seconds a writer waits for another one.

    The ledger must exist (:meth:`init` creates it); nothing is read until it is used.

    Raises:
        LedgerError: no location given and ``$VEIL_LEDGER`` unset, or a location that cannot be one.
    """

    def __init__(self, location=None, *, by: str | None = None, timeout: float = 60.0):
        if location is None:
            location = os.environ.get(LEDGER_ENV)
            if not location:
                raise LedgerError(f"no ledger given; pass --ledger (a file or a postgresql:// URL) or set "
                                  f"{LEDGER_ENV}.")
        self.store = Store(location, timeout=timeout)
        if by is not None and (not isinstance(by, str) or not by.strip()):
            raise ParameterError(f"--by must name who publishes, got {by!r}.")
        self.by = by if by is not None else current_user()
        self._ledger_id: str | None = None

    def __repr__(self) -> str:
        return f"Ledger({self.store.display!r})"

    @property
    def location(self) -> str:
        return self.store.display

    @property
    def _where(self) -> str:
        return f"ledger {self.store.display!r}"

    def close(self) -> None:
        """Release the database connections."""
        self.store.dispose()

    # ------------------------------------------------------------------ creating and migrating

    @classmethod
    def init(cls, location=None, *, by: str | None = None, timeout: float = 60.0) -> tuple[Ledger, list[int]]:
        """Create a ledger, or bring an existing one to this veil's schema; safe to run again.

        A new SQLite ledger is made whole in a scratch file and linked into place in one atomic
        step (:meth:`veil.ledger.store.Store.create`): a process killed at any moment leaves no
        ledger or a complete one, and of processes creating one at once, one makes it and the
        others use it. On PostgreSQL the whole creation is one transaction.

        Returns:
            The ledger and the migrations applied (empty when it was already current, or another
            process made it first).

        Raises:
            LedgerError: the location cannot hold a ledger, holds something else, or holds a
                ledger newer than this veil.
            LedgerTamperedError: an existing ledger's anchor does not verify.
        """
        ledger = cls(location, by=by, timeout=timeout)
        store = ledger.store
        if store.path is not None and store.path.parent.is_dir():
            from veil.output.leftovers import settle

            settle(store.path.parent)  # what creations killed there left behind
        if not store.check_file(must_exist=False):
            def build(scratch: Store) -> None:
                with scratch.write() as conn:
                    _create(conn, ledger.by)

            if store.create(build):
                return ledger, [number for number, _, _ in MIGRATIONS]
            store.check_file(must_exist=True)  # another process made it: check it before connecting
        applied: list[int] = []
        with store.write(durable=True) as conn:
            store.advisory_init_lock(conn)
            version = store.schema_version(conn)
            if version is not None and version > CURRENT_VERSION:
                store.require_current(conn)
            if version is None:
                return ledger, _create(conn, ledger.by)
            for number, description, migrate in MIGRATIONS:
                if number <= version:
                    continue
                migrate(conn)
                conn.execute(insert(SCHEMA_VERSIONS).values(version=number, applied_at=_now(),
                                                            description=description))
                applied.append(number)
            if applied:
                ledger_id = ledger._id(conn)
                head, key = chain.lock_head(conn, ledger._where, ledger_id)
                chain.append(conn, head, key, ledger_id, at=_now(), by=ledger.by, action="migrate",
                             population=None, payload={"schema_versions": applied})
        return ledger, applied

    def _id(self, conn: Connection) -> str:
        if self._ledger_id is None:
            self.store.require_current(conn)
            value = conn.execute(select(META.c.value).where(META.c.name == "ledger_id")).scalar()
            if not value:
                raise LedgerTamperedError(f"{self._where} has lost its id, so its anchor cannot be checked; restore "
                                          "it from a backup.")
            self._ledger_id = value
        return self._ledger_id

    @contextmanager
    def _reading(self) -> Iterator[Connection]:
        self.store.check_file(must_exist=True)
        with self.store.read() as conn:
            self._id(conn)
            yield conn

    @contextmanager
    def _writing(self) -> Iterator[_Writer]:
        """A write transaction on a ledger fully verified under its lock (:mod:`veil.ledger.verification`)."""
        self.store.check_file(must_exist=True)
        with self.store.write(durable=True) as conn:
            ledger_id = self._id(conn)
            state = verification.require(conn, self.store, self._where, ledger_id, lock=True)
            yield _Writer(conn, state.head, state.key, ledger_id, self.by)

    def _writer(self, conn: Connection, state: verification.Verified) -> _Writer:
        """The writer of a transaction whose caller holds the lock and verified the ledger (a budget session)."""
        return _Writer(conn, state.head, state.key, self._id(conn), self.by)

    def _key(self, conn: Connection) -> bytes:
        """The sealing key, checked against the anchor (and the anchor against it)."""
        return chain.lock_head(conn, self._where, self._id(conn), for_update=False)[1]

    # ------------------------------------------------------------------ populations

    def population(self, name: str) -> Population:
        """The population called ``name``.

        Raises:
            LedgerError: there is none.
        """
        with self._reading() as conn:
            return self._population(conn, name)

    def _population(self, conn: Connection, name: str, *, missing_ok: bool = False) -> Population | None:
        row = conn.execute(select(POPULATIONS).where(POPULATIONS.c.name == name)).first()
        if row is None:
            if missing_ok:
                return None
            known = conn.execute(select(POPULATIONS.c.name).order_by(POPULATIONS.c.id)).scalars().all()
            listed = ", ".join(repr(n) for n in known[:5]) + (", …" if len(known) > 5 else "")
            raise LedgerError(f"{self._where} has no population {name!r}"
                              + (f"; it has {listed}." if known else "; it has none yet."))
        return Population._from_row(row)

    def populations(self) -> list[Population]:
        """Every population, in the order they were added."""
        with self._reading() as conn:
            return [Population._from_row(r) for r in conn.execute(select(POPULATIONS).order_by(POPULATIONS.c.id))]

    def add_population(self, name: str, *, budget: Budget | PrivacyAccount | None = None,
                       key_column: str | None = None, fingerprint: str | None = None, table=None,
                       relation: str = "add-remove", unit=None) -> Population:
        """Add a population, or return the one of that name when it is defined the same way.

        Args:
            name: its name, which the curator gives (never anything computed from the data: it
                is shown to whoever reads the ledger).
            budget: its privacy budget: a :class:`~veil.dp.budget.Budget` (sequential and
                parallel composition) or a new accountant with no charges (``Accountant(…,
                composition="advanced")``, ``TemporalAccountant``, ``WindowAccountant``); ``None``
                when it gets no DP releases.
            key_column: the column identifying a person in each of its tables.
            fingerprint: the :func:`~veil.dp.fingerprint.dataset_id` of its one table, kept only
                as its keyed binding (:mod:`veil.ledger.binding`); or give ``table``.
            table: its one table (a path, frame, pyarrow Table or :class:`veil.Dataset`).
            relation: the neighbouring relation of its budget (:data:`NEIGHBOURING`).
            unit: the privacy unit its budget protects (:class:`~veil.dp.budget_unit.BudgetUnit`):
                a row, or a person by an ID column; ``None``: the unit the budget's accountant
                declares, a row unless it declares one. A population kept before units is row-level.

        Raises:
            ParameterError: a bad name, budget, relation or unit (a unit without a budget, or
                another than the accountant given declares); a key column with a table.
            LedgerError: a population of that name exists with another definition (a budget is
                never changed once set).
            LedgerTamperedError: the ledger fails verification.
        """
        if table is not None:
            if fingerprint is not None:
                raise ParameterError("give a population's table or its fingerprint, not both.")
            fingerprint = TableRef.of(table).fingerprint
        with self._writing() as w:
            values = self._population_values(name, budget, key_column,
                                             None if fingerprint is None else binding(w.key, fingerprint), relation,
                                             unit)
            existing = self._population(w.conn, name, missing_ok=True)
            if existing is not None:
                self._same_population(existing, values, fingerprint, w.key)
                return existing
            pid = w.add("populations", values, action="population", population=name)
            return Population._from_row(w.conn.execute(select(POPULATIONS).where(POPULATIONS.c.id == pid)).one())

    def _population_values(self, name, budget, key_column, bound, relation, unit=None) -> dict:
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise ParameterError(f"a population needs a name without surrounding spaces, got {name!r}.")
        if key_column is not None and bound is not None:
            raise ParameterError("a population is identified by a key column or by its one table, not both.")
        if key_column is not None and (not isinstance(key_column, str) or not key_column.strip()):
            raise ParameterError(f"the key column must be a column name, got {key_column!r}.")
        if relation not in NEIGHBOURING:
            raise ParameterError(f"the neighbouring relation is one of {', '.join(NEIGHBOURING)}, not {relation!r}.")
        if unit is not None and budget is None:
            raise ParameterError(f"population {name!r} has a privacy unit but no budget; the unit is what a budget "
                                 "protects, so give it a budget or leave the unit out.")
        return {"name": name, "key_column": key_column, "fingerprint": bound,
                "accountant": None if budget is None else json.dumps(_budget_document(budget, name, unit),
                                                                     sort_keys=True),
                "relation": relation}

    def _same_population(self, existing: Population, values: dict, fingerprint: str | None = None,
                         key: bytes | None = None) -> None:
        """Refuse a definition that differs from the population's (a table by its binding, never shown)."""
        wanted = Population(existing.id, values["name"], values["key_column"], values["fingerprint"],
                            None if values["accountant"] is None else json.loads(values["accountant"]),
                            values["relation"])
        for what, mine, theirs in (("key column", wanted.key_column, existing.key_column),
                                   ("neighbouring relation", wanted.relation, existing.relation)):
            if mine != theirs:
                raise LedgerError(f"population {existing.name!r} of {self._where} has the {what} {theirs!r}, not "
                                  f"{mine!r}; a population's definition never changes, so use another name.")
        if wanted.fingerprint is not None and not (
                existing.fingerprint == wanted.fingerprint
                or (fingerprint is not None and matches(key, existing.fingerprint, fingerprint))):
            raise LedgerError(f"population {existing.name!r} of {self._where} is "
                              f"{'bound to another table' if existing.fingerprint else 'not bound to one table'}; a "
                              "population's definition never changes, so use another name.")
        if wanted.budget is not None and existing.budget is not None and wanted.unit != existing.unit:
            raise LedgerError(f"population {existing.name!r} of {self._where} protects {existing.unit}, not "
                              f"{wanted.unit}; a population's definition never changes, so use another name.")
        if wanted.budget is not None and existing.budget is not None and \
                ("rho" in wanted.budget["budget"]) != ("rho" in existing.budget["budget"]):
            kept, given = (("ρ-zCDP", "(ε, δ)") if "rho" in existing.budget["budget"] else ("(ε, δ)", "ρ-zCDP"))
            raise LedgerError(f"population {existing.name!r} of {self._where} keeps its budget in {kept} "
                              f"({existing.describe_budget()}), not {given}; give its budget in {kept} or use another "
                              "population.")
        if wanted.budget is not None and wanted.budget != existing.budget:
            raise LedgerError(f"population {existing.name!r} of {self._where} already has the budget "
                              f"{existing.describe_budget()}, not {wanted.describe_budget()}; a budget never "
                              "changes once set, so leave the new one out or use another population.")

    # ------------------------------------------------------------------ datasets

    def register_dataset(self, population: str, data, *, delimiter: str | None = None) -> dict:
        """Record that a table belongs to a population (once per distinct content).

        Args:
            population: the population's name.
            data: a table file, frame, pyarrow Table or :class:`veil.Dataset`.
            delimiter: the CSV delimiter (sniffed when ``None``).

        Returns:
            ``{"id", "rows", "columns"}``: the dataset's number in the ledger and the table's shape
            (the ledger keeps its column names, never its number of rows).

        Raises:
            LedgerError: the population is bound to another table (one without a key column that
                already has its table), or the table lacks the population's key column or has a
                key value twice or missing.
            LedgerTamperedError: the ledger fails verification.
        """
        table = data if isinstance(data, TableRef) else TableRef.of(data, delimiter=delimiter)
        with self._writing() as w:
            pop = self._population(w.conn, population)
            return self._register(w, pop, table)

    def _register(self, w: _Writer, pop: Population, table: TableRef) -> dict:
        """Register ``table`` under ``pop`` unless it is one of its tables already (the caller verified the ledger)."""
        held = self._held(w.conn, pop, table, w.key)
        if held is None:
            values = {"population_id": pop.id, "fingerprint": binding(w.key, table.fingerprint),
                      "columns": json.dumps(table.columns)}
            held = w.add("datasets", values, action="dataset", population=pop.name)
        return {"id": held, "rows": table.rows, "columns": table.columns}

    def _held(self, conn: Connection, pop: Population, table: TableRef, key: bytes) -> int | None:
        """The dataset (0 for a population bound to the table itself) under which ``pop`` holds the
        table; ``None`` when it may be registered.

        Raises:
            LedgerError: the population is another table, or the table cannot be one of a keyed
                population's (no key column, a key missing or given twice). The sentences name no
                figure computed from the table.
        """
        if pop.fingerprint is not None:
            if matches(key, pop.fingerprint, table.fingerprint):
                return 0
            raise LedgerError(f"population {pop.name!r} of {self._where} is bound to another table than this one; "
                              "query or publish from the table it was made for, or use the population of this one.")
        rows = conn.execute(select(DATASETS.c.id, DATASETS.c.fingerprint).where(DATASETS.c.population_id == pop.id)
                            .order_by(DATASETS.c.id)).all()
        for row in rows:
            if matches(key, row.fingerprint, table.fingerprint):
                return row.id
        if pop.key_column is None and rows:
            raise LedgerError(f"population {pop.name!r} of {self._where} has no key column, so it is the one table "
                              "first registered under it, and this table is another; query or publish from that "
                              "table, or give the population a key column to keep several tables of the same people.")
        if pop.key_column is not None:
            _check_key_column(pop, table.table)
        return None

    def _holders(self, conn: Connection, table: TableRef, key: bytes) -> list[Population]:
        """The populations a table belongs to: bound to it, or holding it among their tables."""
        found = []
        datasets: dict = {}
        for row in conn.execute(select(DATASETS.c.population_id, DATASETS.c.fingerprint)):
            datasets.setdefault(row.population_id, []).append(row.fingerprint)
        for row in conn.execute(select(POPULATIONS).order_by(POPULATIONS.c.id)):
            pop = Population._from_row(row)
            if matches(key, pop.fingerprint, table.fingerprint) or \
                    any(matches(key, f, table.fingerprint) for f in datasets.get(pop.id, [])):
                found.append(pop)
        return found

    def population_of(self, data, *, delimiter: str | None = None) -> Population | None:
        """The population a table belongs to, or ``None`` when none holds it.

        Raises:
            LedgerError: several populations hold it (name one).
        """
        table = data if isinstance(data, TableRef) else TableRef.of(data, delimiter=delimiter)
        with self._reading() as conn:
            holders = self._holders(conn, table, self._key(conn))
        if len(holders) > 1:
            raise LedgerError(f"several populations of {self._where} hold this table "
                              f"({', '.join(repr(p.name) for p in holders[:5])}); name one.")
        return holders[0] if holders else None

    # ------------------------------------------------------------------ budgets

    @contextmanager
    def open_budget(self, population: str | None, *, create: Budget | PrivacyAccount | None = None,
                    key_column: str | None = None, table=None) -> Iterator[PrivacyAccount]:
        """The population's accountant; every charge made on it is committed to the ledger before it returns.

        The same contract as a budget file's: a query that charges first and draws noise second
        never draws noise that is not on record. Each charge is one transaction under the
        ledger's write lock, checked against every charge committed so far by any process, so
        concurrent publishers can never overspend: a charge that no longer fits (someone else
        spent the budget meanwhile) raises :class:`~veil.dp.budget.BudgetExceededError` and is
        not made (:mod:`veil.ledger.budget`). The whole ledger is verified when the budget is
        opened, and what changed since before each charge (:mod:`veil.ledger.verification`).

        Args:
            population: its name; ``None`` for the population ``table`` belongs to.
            create: the budget to start it with when it does not exist (see
                :meth:`add_population`); when it exists, the same budget or ``None``. A population
                made here is made in the transaction of its first charge, never without one.
            key_column: for a population made here, its key column.
            table: the table the queries read (a path, frame or :class:`~veil.ledger.binding.TableRef`):
                it must be the population's, or is registered under it with the first charge.

        Raises:
            LedgerError: no such population and no ``create``; it has no budget; the table is
                another population's.
            LedgerTamperedError: the ledger fails verification.
        """
        with self.budget_session(population, create=create, key_column=key_column, table=table) as session:
            yield session.accountant

    @contextmanager
    def budget_session(self, population: str | None, *, create: Budget | PrivacyAccount | None = None,
                       key_column: str | None = None, table=None, alone: bool = False):
        """:meth:`open_budget`, yielding the binding (:class:`veil.ledger.budget.LedgerBudget`):
        ``session.accountant`` to charge, ``session.population`` (its name), and ``session.made``,
        the ledger numbers of the charges committed through it (a DP release's manifest names its
        charge, so that the gate does not charge it again). ``alone``: the ledger keeps this one
        population's budget and no other (a budget file)."""
        from veil.ledger.budget import LedgerBudget

        if table is not None and not isinstance(table, TableRef):
            table = TableRef.of(table)
        session = LedgerBudget(self, population, create=create, key_column=key_column, table=table, alone=alone)
        with session.opened():
            yield session

    def budget(self, population: str) -> PrivacyAccount:
        """The population's accountant as it stands (the ledger verified first); it cannot be charged.

        Raises:
            LedgerError: no such population, or it has no budget.
            LedgerTamperedError: the ledger fails verification.
        """
        from veil.ledger.budget import LedgerBudget

        return LedgerBudget(self, population).snapshot()

    def charge(self, population: str, epsilon, delta=0.0, *, label: str):
        """Charge one query (ε, δ) to a population's budget, atomically; see :meth:`open_budget`.

        Raises:
            BudgetExceededError: it does not fit in what is left; nothing was charged.
        """
        with self.open_budget(population) as accountant:
            return accountant.charge(epsilon, delta, label=label)

    def _accountant(self, pop: Population, rows: Sequence) -> PrivacyAccount:
        """The population's accountant rebuilt from its charge rows (the accountant's own checks)."""
        return accountant_of(pop, rows, f"population {pop.name!r} of {self._where}")

    @property
    def ledger_id(self) -> str:
        """The ledger's id (a UUID made when it was created; a DP release names its charge by it)."""
        with self._reading() as conn:
            return self._id(conn)

    def import_budget_file(self, path, *, population: str | None = None) -> str:
        """Move a budget file of an earlier veil into this ledger: :func:`veil.ledger.legacy.import_budget_file`."""
        from veil.ledger.legacy import import_budget_file

        return import_budget_file(self, path, population=population)

    # ------------------------------------------------------------------ the gate

    def publish(self, manifest, *, population: str, data=None, policy=None, hierarchies=None, orders=None,
                delimiter: str | None = None, name: str | None = None, private=None):
        """Pass a release through the publishing gate and record the decision: :func:`veil.ledger.gate.publish`."""
        from veil.ledger.gate import publish

        return publish(self, manifest, population=population, data=data, policy=policy, hierarchies=hierarchies,
                       orders=orders, delimiter=delimiter, name=name, private=private)

    # ------------------------------------------------------------------ inspection

    def status(self) -> dict:
        """Per population: its definition, budget spent and left, tables, releases; and the log's head.

        Reading needs no key and checks nothing; :meth:`verify` does. Nothing shown is computed
        from a population's data (a table is counted, never named by its content).
        """
        with self._reading() as conn:
            head = conn.execute(select(chain.LOG.c.seq, chain.LOG.c.hash).order_by(chain.LOG.c.seq.desc())
                                .limit(1)).first()
            version = self.store.schema_version(conn)
            out = {"ledger": self.location, "ledger_id": self._id(conn), "schema_version": version,
                   "head": {"seq": head.seq, "hash": head.hash} if head else None, "populations": []}
            for row in conn.execute(select(POPULATIONS).order_by(POPULATIONS.c.id)).all():
                pop = Population._from_row(row)
                charges = conn.execute(select(CHARGES).where(CHARGES.c.population_id == pop.id)
                                       .order_by(CHARGES.c.seq)).all()
                releases = conn.execute(select(RELEASES.c.id, RELEASES.c.kind, RELEASES.c.name, RELEASES.c.at,
                                               RELEASES.c.by).where(RELEASES.c.population_id == pop.id)
                                        .order_by(RELEASES.c.id)).all()
                datasets = conn.execute(select(func.count()).select_from(DATASETS)
                                        .where(DATASETS.c.population_id == pop.id)).scalar_one()
                entry = {"name": pop.name, "key_column": pop.key_column, "relation": pop.relation,
                         "unit": pop.unit.to_document(),
                         "datasets": datasets + (1 if pop.fingerprint is not None else 0), "charges": len(charges),
                         "releases": [{"id": r.id, "kind": r.kind, "name": r.name, "at": r.at, "by": r.by}
                                      for r in releases], "budget": None}
                if pop.budget is not None:
                    acc = self._accountant(pop, charges)
                    spent, left = acc.spent(), acc.remaining()
                    entry["budget"] = {"composition": acc.composition,
                                       "total": {"epsilon": float(acc.budget.epsilon),
                                                 "delta": float(acc.budget.delta)},
                                       "spent": {"epsilon": float(spent.epsilon), "delta": float(spent.delta)},
                                       "left": {"epsilon": float(left[0]), "delta": float(left[1])}}
                    if acc.measure == "zcdp":  # composed in ρ; the (ε, δ) above is its tight conversion
                        entry["budget"]["rho"] = {"total": float(acc.budget.rho), "spent": float(acc.spent_rho),
                                                  "left": float(acc.remaining_rho)}
                out["populations"].append(entry)
        return out

    def history(self, population: str | None = None, *, limit: int | None = None) -> list[dict]:
        """The log, oldest first: each entry's number, time, author, action, population, what it says,
        and the warnings its release's manifest gave (a decision to publish or refuse; else none).

        Args:
            population: only the entries about this population.
            limit: only the newest ``limit`` entries.

        Raises:
            LedgerTamperedError: an entry's payload is not what veil wrote.
        """
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise ParameterError(f"--limit must be a whole number >= 1, got {limit!r}.")
        log = chain.LOG
        with self._reading() as conn:
            if population is not None:
                self._population(conn, population)
            query = select(log)
            if population is not None:
                query = query.where(log.c.population == population)
            query = query.order_by(log.c.seq.desc())
            if limit is not None:
                query = query.limit(limit)
            rows = list(reversed(conn.execute(query).all()))
        # a zCDP population's charges are shown in ρ with the ε they imply at the budget's δ
        deltas = {p.name: p.budget["budget"]["delta"] for p in self.populations()
                  if p.budget is not None and p.budget["composition"] == "zcdp"}
        entries = []
        for r in rows:
            payload = self._payload(r)
            entries.append({"seq": r.seq, "at": r.at, "by": r.by, "action": r.action, "population": r.population,
                            "summary": self._summary(r, payload, deltas.get(r.population)), "hash": r.hash,
                            "warnings": [str(w) for w in payload.get("warnings") or []]})
        return entries

    def _payload(self, row) -> dict:
        """A log entry's payload, or the sentence refusing one veil did not write.

        Raises:
            LedgerTamperedError: the payload is not a JSON object.
        """
        try:
            payload = json.loads(row.payload)
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            raise self._altered(row)
        return payload

    def _summary(self, row, payload: dict, zcdp_delta: str | None = None) -> str:
        """What a log entry says (``zcdp_delta``: the δ of its population's budget in ρ, if it has one).

        Raises:
            LedgerTamperedError: the payload is not the JSON object of its action.
        """
        try:
            return summarize(row.action, payload, zcdp_delta)
        except (ValueError, TypeError, KeyError, AttributeError, ParameterError):
            raise self._altered(row) from None

    def _altered(self, row) -> LedgerTamperedError:
        return LedgerTamperedError(f"entry {row.seq} of {self._where} holds a payload veil did not write (it was "
                                   "altered); see every change with veil ledger verify and restore the ledger "
                                   "from a backup.")

    def verify(self) -> VerifyReport:
        """Check the whole ledger: the chain link by link, the anchor, every row against its entry,
        every budget (:func:`veil.ledger.verification.check`).

        Returns:
            A report; ``report.problems`` lists, one sentence each, every edited, inserted or
            removed entry or row found (the chain is checked up to its first break).

        Raises:
            LedgerError: the ledger cannot be read, or the key file does not hold its key.
        """
        with self._reading() as conn:
            entries, head, _, problems = verification.check(conn, self._where, self._id(conn), lock=False)
            return VerifyReport(self.location, len(entries), head, problems)


# ---------------------------------------------------------------------- helpers

def _create(conn: Connection, by: str) -> list[int]:
    """Make every table of an empty database, its id and the log's first entry; returns the migrations."""
    from veil.ledger import keys

    applied = []
    for number, description, migrate in MIGRATIONS:
        migrate(conn)
        conn.execute(insert(SCHEMA_VERSIONS).values(version=number, applied_at=_now(), description=description))
        applied.append(number)
    ledger_id = str(uuid.uuid4())
    conn.execute(insert(META).values(name="ledger_id", value=ledger_id))
    key = keys.load_key(create=True)
    chain.append(conn, chain.Head(0, chain.GENESIS), key, ledger_id, at=_now(), by=by, action="init",
                 population=None, payload={"ledger_id": ledger_id, "schema_version": CURRENT_VERSION}, first=True)
    return applied


def _budget_document(budget, name: str, unit=None) -> dict:
    """The composition rule, budget and options of a new accountant for ``budget`` (validated), and
    its privacy unit when it is a person (``unit``, else the accountant's own)."""
    if isinstance(budget, Budget):
        accountant = Accountant(budget, dataset_id=name)
    elif isinstance(budget, ZCDPBudget):
        accountant = ZCDPAccountant(budget, dataset_id=name)
    elif isinstance(budget, PrivacyAccount):
        if budget.charges:
            raise ParameterError("a population's budget must be a new accountant with no charges.")
        accountant = budget
        options = accountant._options()
        if accountant.composition == "temporal" and options["discount"]["name"] == "custom":
            raise ParameterError("a ledger keeps the exponential or hyperbolic discount, not a custom function; "
                                 "use ExponentialDiscount or HyperbolicDiscount.")
    else:
        raise ParameterError(f"a budget is a Budget(epsilon, delta), a ZCDPBudget(rho, delta) or a new accountant, not "
                             f"{type(budget).__name__}.")
    doc = accountant.to_document()
    declared = accountant.unit if unit is None else unit_of(unit)
    if accountant.unit.is_person and declared != accountant.unit:
        raise ParameterError(f"the accountant given protects {accountant.unit} and the unit given is {declared}; give "
                             "one unit.")
    out = {"composition": doc["composition"], "budget": doc["budget"], "options": doc["options"]}
    if declared.is_person:  # a population kept without a unit is row-level
        out["unit"] = declared.to_document()
    return out


def _check_key_column(pop: Population, table) -> None:
    import pyarrow.compute as pc

    name = pop.key_column
    if name not in table.columns:
        raise LedgerError(f"population {pop.name!r} identifies people by column {name!r}, which this table lacks; "
                          "every table of the population needs it.")
    column = table.data.column(name)
    if column.null_count or (column.type == "string" and pc.any(pc.equal(column, "")).as_py()):
        raise LedgerError(f"key column {name!r} of population {pop.name!r} has missing values; every person needs "
                          "a key.")
    if pc.count_distinct(column).as_py() != table.num_rows:
        raise LedgerError(f"key column {name!r} of population {pop.name!r} holds a value twice; a key names one "
                          "person.")


def summarize(action: str, payload: dict, zcdp_delta: str | None = None) -> str:
    """One line saying what an entry recorded; a charge to a budget in ρ says its ρ and, given the
    budget's δ (``zcdp_delta``, exact text), the ε it alone implies at that δ."""
    row = payload.get("row") or {}
    if action == "init":
        return f"ledger {payload.get('ledger_id')} created (schema {payload.get('schema_version')})"
    if action == "migrate":
        return f"migrated to schema {payload.get('schema_versions')}"
    if action == "population":
        how = f"key column {row.get('key_column')!r}" if row.get("key_column") else \
            "its one table" if row.get("fingerprint") else "the first table registered"
        budget = json.loads(row["accountant"]) if row.get("accountant") else None
        amount = budget and budget["budget"]
        money = "no budget" if budget is None else \
            f"budget ρ = {amount['rho']}, δ = {amount['delta']} ({budget['composition']})" if "rho" in amount else \
            f"budget ε = {amount['epsilon']}, δ = {amount['delta']} ({budget['composition']})"
        unit = budget and budget.get("unit")
        protects = f", protecting a person by column {unit['person']!r}" if isinstance(unit, dict) else ""
        return f"population {row.get('name')!r} added: {how}, {money}{protects}"
    if action == "dataset":
        return f"table registered as dataset {row.get('id')}"
    if action == "charge":
        # a zCDP budget's charge rows keep ρ where (ε, δ) budgets keep ε (veil.dp.zcdp_accountant)
        cost = f"ρ = {row.get('epsilon')}" if row.get("composition") == "zcdp" else \
            f"ε = {row.get('epsilon')}, δ = {row.get('delta')}"
        if row.get("composition") == "zcdp" and zcdp_delta is not None:
            cost += (f" (ε = {show(zcdp_epsilon(from_text(row['epsilon']), from_text(zcdp_delta)))} at "
                     f"δ = {show(from_text(zcdp_delta))})")
        return f"charged {row.get('label')!r}: {cost}" + (f" (release {payload['release']})" if "release" in payload
                                                          else "")
    if action == "publish":
        checks = "; ".join(payload.get("checks", []))
        paid = f", paid by charge {row['charge_seq']}" if row.get("charge_seq") else ""
        return f"published release {row.get('id')} ({row.get('kind')}, {row.get('name')!r}){paid}" + (
            f": {checks}" if checks else "")
    if action == "refuse":
        return f"refused {payload.get('release', {}).get('name')!r}: {payload.get('reason')}"
    if action == "import":
        return f"imported budget file {payload.get('file')!r} ({payload.get('charges')} charges)"
    return action
