"""The release ledger: every population, dataset, DP charge and published release, in one store.

A :class:`Ledger` is the one source of truth about what was spent and published: privacy budgets
are charged in it (:meth:`Ledger.open_budget`, the contract a DP query charges through), releases
pass its gate before they are recorded (:meth:`Ledger.publish`, :mod:`veil.ledger.gate`), and its
log proves what happened (:meth:`Ledger.verify`, :mod:`veil.ledger.chain`).

**Populations.** A population is the set of people whose privacy a budget protects and whose
releases must compose safely. It has a name and is identified either by a *key column* (every
table registered under it holds that column, one value per person, so several tables — samples,
versions, sites — can belong to one population and share its budget and its history) or by the
*fingerprint* of one table (:func:`veil.dp.fingerprint.dataset_id`: the table's content as
parsed). ``veil dp --budget-file`` uses the second kind, named by the fingerprint, with
sequential composition.

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

from sqlalchemy import func, insert, select
from sqlalchemy.engine import Connection

from veil.dp.accountant import (FORMAT, SCHEMA_VERSION, Accountant, Budget, BudgetFileError, _BaseAccountant,
                                from_document)
from veil.errors import ParameterError
from veil.ledger import chain
from veil.ledger.errors import LedgerError, LedgerTamperedError
from veil.ledger.records import NEIGHBOURING, Population, charge_document, record_of
from veil.ledger.schema import CURRENT_VERSION, MIGRATIONS, TABLES
from veil.ledger.store import LEDGER_ENV, Store

__all__ = ["NEIGHBOURING", "Ledger", "Population", "VerifyReport", "current_user"]

POPULATIONS, DATASETS, CHARGES, RELEASES = (TABLES[n] for n in ("populations", "datasets", "charges", "releases"))
META, SCHEMA_VERSIONS = TABLES["meta"], TABLES["schema_version"]
_PRIMARY = {"populations": "id", "datasets": "id", "charges": "seq", "releases": "id"}
_INSERTS = {name: insert(TABLES[name]) for name in _PRIMARY}

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

    def add(self, table: str, values: dict, *, action: str, population: str | None, extra: dict | None = None):
        """Insert a row and the entry that records it; returns the row's primary key."""
        values = {**values, "log_seq": self.head.seq + 1}
        result = self.conn.execute(_INSERTS[table], values)
        key = result.inserted_primary_key[0]
        values[_PRIMARY[table]] = key
        payload = {"table": table, "row": record_of(table, values), **(extra or {})}
        self.note(action, population, payload)
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

        Returns:
            The ledger and the migrations applied (empty when it was already current).

        Raises:
            LedgerError: the location cannot hold a ledger, holds something else, or holds a
                ledger newer than this veil.
            LedgerTamperedError: an existing ledger's anchor does not verify.
        """
        ledger = cls(location, by=by, timeout=timeout)
        store = ledger.store
        if not store.check_file(must_exist=False):
            store.set_wal()
        applied: list[int] = []
        with store.write() as conn:
            store.advisory_init_lock(conn)
            version = store.schema_version(conn)
            if version is not None and version > CURRENT_VERSION:
                store.require_current(conn)
            fresh = version is None
            for number, description, migrate in MIGRATIONS:
                if version is not None and number <= version:
                    continue
                migrate(conn)
                conn.execute(insert(SCHEMA_VERSIONS).values(version=number, applied_at=_now(),
                                                            description=description))
                applied.append(number)
            if fresh:
                from veil.ledger import keys

                ledger_id = str(uuid.uuid4())
                conn.execute(insert(META).values(name="ledger_id", value=ledger_id))
                key = keys.load_key(create=True)
                writer = _Writer(conn, chain.Head(0, chain.GENESIS), key, ledger_id, ledger.by)
                writer.head = chain.append(conn, writer.head, key, ledger_id, at=writer.at, by=ledger.by,
                                           action="init", population=None,
                                           payload={"ledger_id": ledger_id, "schema_version": CURRENT_VERSION},
                                           first=True)
            elif applied:
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
        self.store.check_file(must_exist=True)
        with self.store.write() as conn:
            ledger_id = self._id(conn)
            head, key = chain.lock_head(conn, self._where, ledger_id)
            yield _Writer(conn, head, key, ledger_id, self.by)

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

    def add_population(self, name: str, *, budget: Budget | _BaseAccountant | None = None,
                       key_column: str | None = None, fingerprint: str | None = None,
                       relation: str = "add-remove") -> Population:
        """Add a population, or return the one of that name when it is defined the same way.

        Args:
            name: its name (for a fingerprint population, conventionally the fingerprint).
            budget: its privacy budget: a :class:`~veil.dp.accountant.Budget` (sequential and
                parallel composition) or a new accountant with no charges (``Accountant(…,
                composition="advanced")``, ``TemporalAccountant``, ``WindowAccountant``); ``None``
                when it gets no DP releases.
            key_column: the column identifying a person in each of its tables.
            fingerprint: the dataset id of its one table (exclusive with ``key_column``).
            relation: the neighbouring relation of its budget (:data:`NEIGHBOURING`).

        Raises:
            ParameterError: a bad name, budget or relation, both a key column and a fingerprint.
            LedgerError: a population of that name exists with another definition (a budget is
                never changed once set).
        """
        values = self._population_values(name, budget, key_column, fingerprint, relation)
        with self._writing() as w:
            existing = self._population(w.conn, name, missing_ok=True)
            if existing is not None:
                self._same_population(existing, values)
                return existing
            pid = w.add("populations", values, action="population", population=name)
            return Population._from_row(w.conn.execute(select(POPULATIONS).where(POPULATIONS.c.id == pid)).one())

    def _population_values(self, name, budget, key_column, fingerprint, relation) -> dict:
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise ParameterError(f"a population needs a name without surrounding spaces, got {name!r}.")
        if key_column is not None and fingerprint is not None:
            raise ParameterError("a population is identified by a key column or by a fingerprint, not both.")
        if key_column is not None and (not isinstance(key_column, str) or not key_column.strip()):
            raise ParameterError(f"the key column must be a column name, got {key_column!r}.")
        if relation not in NEIGHBOURING:
            raise ParameterError(f"the neighbouring relation is one of {', '.join(NEIGHBOURING)}, not {relation!r}.")
        return {"name": name, "key_column": key_column, "fingerprint": fingerprint,
                "accountant": None if budget is None else json.dumps(_budget_document(budget, name), sort_keys=True),
                "relation": relation}

    def _same_population(self, existing: Population, values: dict) -> None:
        wanted = Population(existing.id, values["name"], values["key_column"], values["fingerprint"],
                            None if values["accountant"] is None else json.loads(values["accountant"]),
                            values["relation"])
        for what, mine, theirs in (("key column", wanted.key_column, existing.key_column),
                                   ("fingerprint", wanted.fingerprint, existing.fingerprint),
                                   ("neighbouring relation", wanted.relation, existing.relation)):
            if mine != theirs:
                raise LedgerError(f"population {existing.name!r} of {self._where} has the {what} {theirs!r}, not "
                                  f"{mine!r}; a population's definition never changes, so use another name.")
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
            ``{"id", "fingerprint", "rows", "columns"}``.

        Raises:
            LedgerError: the population is bound to another table (a fingerprint population,
                or one without a key column that already has its table), or the table lacks
                the population's key column or has a key value twice or missing.
        """
        from veil.data.dataset import Dataset
        from veil.data.io import Table, read_table
        from veil.dp.fingerprint import dataset_id

        if isinstance(data, Dataset):
            table = data.table
        else:
            table = data if isinstance(data, Table) else read_table(data, delimiter)
        fingerprint = dataset_id(data if isinstance(data, Dataset) else table)
        with self._writing() as w:
            pop = self._population(w.conn, population)
            return self._register(w, pop, table, fingerprint)

    def _register(self, w: _Writer, pop: Population, table, fingerprint: str) -> dict:
        row = w.conn.execute(select(DATASETS).where(DATASETS.c.population_id == pop.id,
                                                    DATASETS.c.fingerprint == fingerprint)).first()
        if row is not None:
            return {"id": row.id, "fingerprint": fingerprint, "rows": row.rows, "columns": json.loads(row.columns)}
        if pop.fingerprint is not None and pop.fingerprint != fingerprint:
            raise LedgerError(f"population {pop.name!r} is the table {pop.fingerprint}, and this table is "
                              f"{fingerprint}; query or publish from that table, or use the population of this one.")
        if pop.key_column is None and pop.fingerprint is None:
            other = w.conn.execute(select(DATASETS.c.fingerprint).where(DATASETS.c.population_id == pop.id)).first()
            if other is not None:
                raise LedgerError(f"population {pop.name!r} has no key column, so it is the one table {other[0]}, "
                                  f"and this table is {fingerprint}; give the population a key column to keep several "
                                  "tables of the same people.")
        if pop.key_column is not None:
            _check_key_column(pop, table)
        values = {"population_id": pop.id, "fingerprint": fingerprint, "rows": table.num_rows,
                  "columns": json.dumps(table.columns)}
        did = w.add("datasets", values, action="dataset", population=pop.name)
        return {"id": did, "fingerprint": fingerprint, "rows": table.num_rows, "columns": table.columns}

    def _holds_table(self, pop: Population, fingerprint: str) -> bool:
        """Whether a table (by its dataset id) is one of the population's."""
        if pop.fingerprint == fingerprint:
            return True
        with self._reading() as conn:
            return conn.execute(select(DATASETS.c.id).where(DATASETS.c.population_id == pop.id,
                                                            DATASETS.c.fingerprint == fingerprint)).first() is not None

    # ------------------------------------------------------------------ budgets

    @contextmanager
    def open_budget(self, population: str, *, create: Budget | _BaseAccountant | None = None,
                    key_column: str | None = None) -> Iterator[_BaseAccountant]:
        """The population's accountant; every charge made on it is committed to the ledger before it returns.

        The same contract as a budget file's: a query that charges first and draws noise second
        never draws noise that is not on record. Each charge is one transaction under the
        ledger's write lock, checked against every charge committed so far by any process, so
        concurrent publishers can never overspend: a charge that no longer fits (someone else
        spent the budget meanwhile) raises :class:`~veil.dp.accountant.BudgetExceededError` and is
        not made (:mod:`veil.ledger.budget`).

        Args:
            population: its name. When it does not exist and ``create`` is given, it is added
                (named by a dataset id, as ``veil dp --budget-file`` does, it is that table's).
            create: the budget to start it with (see :meth:`add_population`); when it exists, the
                same budget or ``None``.
            key_column: for a population made here, its key column.

        Raises:
            LedgerError: no such population and no ``create``; it has no budget.
            LedgerTamperedError: the log or this population's charges fail verification.
        """
        with self.budget_session(population, create=create, key_column=key_column) as session:
            yield session.accountant

    @contextmanager
    def budget_session(self, population: str, *, create: Budget | _BaseAccountant | None = None,
                       key_column: str | None = None):
        """:meth:`open_budget`, yielding the binding (:class:`veil.ledger.budget.LedgerBudget`):
        ``session.accountant`` to charge, and ``session.made``, the ledger numbers of the charges
        committed through it (a DP release's manifest names its charge, so that the gate does not
        charge it again)."""
        from veil.ledger.budget import LedgerBudget

        with self._reading() as conn:
            pop = self._population(conn, population, missing_ok=True)
        if pop is None:
            if create is None:
                raise LedgerError(f"{self._where} has no population {population!r}; give the budget to start it with "
                                  "(--budget E[,D], or create= in Python).")
            fingerprint = population if key_column is None and population.startswith("veil-data-") else None
            pop = self.add_population(population, budget=create, key_column=key_column, fingerprint=fingerprint)
        elif create is not None:
            self._same_population(pop, self._population_values(pop.name, create, pop.key_column, pop.fingerprint,
                                                               pop.relation))
        if pop.budget is None:
            raise LedgerError(f"population {pop.name!r} of {self._where} has no privacy budget, so no DP release can "
                              "be charged to it; give it one in the policy.")
        session = LedgerBudget(self, pop)
        with session.opened():
            yield session

    def budget(self, population: str) -> _BaseAccountant:
        """The population's accountant as it stands (verified); it cannot be charged.

        Raises:
            LedgerError: no such population, or it has no budget.
            LedgerTamperedError: the log or the population's charges fail verification.
        """
        from veil.ledger.budget import LedgerBudget

        pop = self.population(population)
        if pop.budget is None:
            raise LedgerError(f"population {pop.name!r} of {self._where} has no privacy budget.")
        return LedgerBudget(self, pop).snapshot()

    def charge(self, population: str, epsilon, delta=0.0, *, label: str):
        """Charge one query (ε, δ) to a population's budget, atomically; see :meth:`open_budget`.

        Raises:
            BudgetExceededError: it does not fit in what is left; nothing was charged.
        """
        with self.open_budget(population) as accountant:
            return accountant.charge(epsilon, delta, label=label)

    def _accountant(self, pop: Population, rows: Sequence) -> _BaseAccountant:
        """The population's accountant rebuilt from its charge rows (the accountant's own checks)."""
        doc = {"format": FORMAT, "version": SCHEMA_VERSION, "dataset_id": pop.name, **pop.budget,
               "charges": [charge_document(r) for r in rows]}
        try:
            return from_document(doc, dataset_id=pop.name, where=f"population {pop.name!r} of {self._where}")
        except BudgetFileError as exc:
            raise LedgerTamperedError(str(exc)) from None

    @property
    def ledger_id(self) -> str:
        """The ledger's id (a UUID made when it was created; a DP release names its charge by it)."""
        with self._reading() as conn:
            return self._id(conn)

    def import_budget_file(self, path) -> str:
        """Move a budget file of an earlier veil into this ledger: :func:`veil.ledger.legacy.import_budget_file`."""
        from veil.ledger.legacy import import_budget_file

        return import_budget_file(self, path)

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

        Reading needs no key and checks nothing; :meth:`verify` does.
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
                entry = {"name": pop.name, "key_column": pop.key_column, "fingerprint": pop.fingerprint,
                         "relation": pop.relation, "datasets": datasets, "charges": len(charges),
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
        entries = []
        for r in rows:
            payload = self._payload(r)
            entries.append({"seq": r.seq, "at": r.at, "by": r.by, "action": r.action, "population": r.population,
                            "summary": self._summary(r, payload), "hash": r.hash,
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

    def _summary(self, row, payload: dict) -> str:
        """What a log entry says.

        Raises:
            LedgerTamperedError: the payload is not the JSON object of its action.
        """
        try:
            return summarize(row.action, payload)
        except (ValueError, TypeError, KeyError, AttributeError):
            raise self._altered(row) from None

    def _altered(self, row) -> LedgerTamperedError:
        return LedgerTamperedError(f"entry {row.seq} of {self._where} holds a payload veil did not write (it was "
                                   "altered); see every change with veil ledger verify and restore the ledger "
                                   "from a backup.")

    def verify(self) -> VerifyReport:
        """Check the whole ledger: the chain link by link, the anchor, and every row against its entry.

        Returns:
            A report; ``report.problems`` lists, one sentence each, every edited, inserted or
            removed entry or row found (the chain is checked up to its first break).

        Raises:
            LedgerError: the ledger cannot be read, or the key file does not hold its key.
        """
        with self._reading() as conn:
            ledger_id = self._id(conn)
            problems: list[str] = []
            head = chain.Head(0, chain.GENESIS)
            try:
                entries = chain.walk(conn, self._where)
                if entries:
                    head = chain.Head(entries[-1].seq, entries[-1].hash)
            except LedgerTamperedError as exc:
                problems.append(str(exc))
                entries = []
            try:
                chain.lock_head(conn, self._where, ledger_id, for_update=False)
            except LedgerTamperedError as exc:
                problems.append(str(exc))
            if entries:
                if entries[0].action != "init" or entries[0].data.get("ledger_id") != ledger_id:
                    problems.append(f"{self._where}'s first entry is not the one that created this ledger; restore "
                                    "it from a backup.")
                for name in _PRIMARY:
                    problems.extend(self._compare_rows(conn, entries, name))
                problems.extend(self._check_budgets(conn))
            return VerifyReport(self.location, len(entries), head, problems)

    def _compare_rows(self, conn: Connection, entries: Sequence[chain.Entry], table: str,
                      population_id: int | None = None) -> list[str]:
        """Every row of ``table`` against the entries that recorded them (optionally one population's)."""
        primary = _PRIMARY[table]
        expected: dict = {}
        for entry in entries:
            data = entry.data
            if data.get("table") == table:
                row = data["row"]
                if population_id is None or row.get("population_id" if table != "populations" else "id") \
                        == population_id:
                    expected[row[primary]] = (entry.seq, row)
        tbl = TABLES[table]
        query = select(tbl)
        if population_id is not None:
            query = query.where((tbl.c.id if table == "populations" else tbl.c.population_id) == population_id)
        actual = {getattr(r, primary): record_of(table, r._asdict()) for r in conn.execute(query)}
        problems = []
        noun = table[:-1]
        for key in sorted(set(expected) - set(actual)):
            problems.append(f"{self._where} lost {noun} {key}, which entry {expected[key][0]} recorded: it was "
                            "deleted by hand, so restore the ledger from a backup.")
        for key in sorted(set(actual) - set(expected)):
            problems.append(f"{self._where} holds {noun} {key}, which no entry of its log recorded: it was added by "
                            "hand, so restore the ledger from a backup.")
        for key in sorted(set(actual) & set(expected)):
            if actual[key] != expected[key][1]:
                changed = sorted(k for k in actual[key] if actual[key][k] != expected[key][1].get(k))
                problems.append(f"{self._where}'s {noun} {key} differs from what entry {expected[key][0]} recorded "
                                f"({', '.join(changed)}): it was edited by hand, so restore the ledger from a backup.")
        return problems

    def _check_budgets(self, conn: Connection) -> list[str]:
        problems = []
        for row in conn.execute(select(POPULATIONS).where(POPULATIONS.c.accountant.is_not(None))).all():
            pop = Population._from_row(row)
            charges = conn.execute(select(CHARGES).where(CHARGES.c.population_id == pop.id)
                                   .order_by(CHARGES.c.seq)).all()
            try:
                self._accountant(pop, charges)
            except LedgerTamperedError as exc:
                problems.append(str(exc))
        return problems

    def verify_population(self, conn: Connection, pop: Population) -> list:
        """Before a budget is used: the chain, the anchor, and this population's row and charges.

        Returns:
            The population's charge rows, in order.

        Raises:
            LedgerTamperedError: any of them fails.
        """
        ledger_id = self._id(conn)
        entries = chain.walk(conn, self._where)
        chain.lock_head(conn, self._where, ledger_id, for_update=False)
        mine = [e for e in entries if e.population == pop.name]
        problems = self._compare_rows(conn, mine, "populations", pop.id) + \
            self._compare_rows(conn, mine, "charges", pop.id)
        if problems:
            extra = f" ({len(problems) - 1} more problems: run veil ledger verify)" if len(problems) > 1 else ""
            raise LedgerTamperedError(problems[0].rstrip(".") + extra + ".")
        return conn.execute(select(CHARGES).where(CHARGES.c.population_id == pop.id).order_by(CHARGES.c.seq)).all()


# ---------------------------------------------------------------------- helpers

def _budget_document(budget, name: str) -> dict:
    """The composition rule, budget and options of a new accountant for ``budget`` (validated)."""
    if isinstance(budget, Budget):
        accountant = Accountant(budget, dataset_id=name)
    elif isinstance(budget, _BaseAccountant):
        if budget.charges:
            raise ParameterError("a population's budget must be a new accountant with no charges.")
        accountant = budget
        options = accountant._options()
        if accountant.composition == "temporal" and options["discount"]["name"] == "custom":
            raise ParameterError("a ledger keeps the exponential or hyperbolic discount, not a custom function; "
                                 "use ExponentialDiscount or HyperbolicDiscount.")
    else:
        raise ParameterError(f"a budget is a Budget(epsilon, delta) or a new accountant, not {type(budget).__name__}.")
    doc = accountant.to_document()
    return {"composition": doc["composition"], "budget": doc["budget"], "options": doc["options"]}


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


def summarize(action: str, payload: dict) -> str:
    """One line saying what an entry recorded."""
    row = payload.get("row") or {}
    if action == "init":
        return f"ledger {payload.get('ledger_id')} created (schema {payload.get('schema_version')})"
    if action == "migrate":
        return f"migrated to schema {payload.get('schema_versions')}"
    if action == "population":
        how = f"key column {row.get('key_column')!r}" if row.get("key_column") else \
            f"table {row.get('fingerprint')}" if row.get("fingerprint") else "its first table"
        budget = json.loads(row["accountant"]) if row.get("accountant") else None
        money = "no budget" if budget is None else \
            f"budget ε = {budget['budget']['epsilon']}, δ = {budget['budget']['delta']} ({budget['composition']})"
        return f"population {row.get('name')!r} added: {how}, {money}"
    if action == "dataset":
        return f"table {row.get('fingerprint')} ({row.get('rows')} rows) registered"
    if action == "charge":
        cost = f"ε = {row.get('epsilon')}, δ = {row.get('delta')}"
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
