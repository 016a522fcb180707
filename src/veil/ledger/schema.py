"""The ledger's tables, one schema for SQLite and PostgreSQL, and the ordered migrations that make it.

Defined with SQLAlchemy Core, which emits each back end's own DDL from one definition and binds
parameters the way each driver wants; veil keeps its own migration list rather than a migration
framework because the schema is small and is created by ``veil ledger init`` on either back end.

**The log is the record; the other tables are an index of it.** Every change to a ledger is one
entry of ``log``, chained by hash to the entry before it (:mod:`veil.ledger.chain`), whose payload
holds the exact row it adds to ``populations``, ``datasets``, ``charges`` or ``releases`` (a
release's blobs by their SHA-256). Budgets are summed from ``charges`` and the gate reads
``releases``, so both stay fast, and :func:`veil.ledger.chain.verify` proves that every row is
the one its entry recorded and that no entry was changed, inserted or removed.

**Nothing computed from a private table but its keyed binding.** A budget file may be readable
by those who query the data, so no row holds a figure of a table: ``datasets`` keeps the table's
binding (:mod:`veil.ledger.binding`) and its column names. Version 1 also kept its number of rows;
version 2 drops that column (the entries an older ledger wrote keep what they recorded).

``schema_version`` has one row per migration applied, in order; :data:`MIGRATIONS` lists them.
A ledger whose newest migration is older than this veil's is migrated by ``veil ledger init``
(never silently on open); one whose migration is newer than this veil knows is refused.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import (BigInteger, Column, ForeignKey, Index, Integer, LargeBinary, MetaData, String, Table, Text,
                        UniqueConstraint)
from sqlalchemy.engine import Connection

__all__ = ["CURRENT_VERSION", "MIGRATIONS", "TABLES", "metadata"]


def _tables(metadata: MetaData, version: int) -> dict[str, Table]:
    """The tables of schema ``version`` (1 or 2)."""
    auto = {"sqlite_autoincrement": True}  # SQLite never reuses the id of a deleted row
    tables = [
        Table("schema_version", metadata,
              Column("version", Integer, primary_key=True, autoincrement=False),
              Column("applied_at", String(40), nullable=False),
              Column("description", Text, nullable=False)),
        Table("meta", metadata,
              Column("name", String(64), primary_key=True),
              Column("value", Text, nullable=False)),
        Table("log", metadata,
              Column("seq", BigInteger, primary_key=True, autoincrement=False),
              Column("at", String(40), nullable=False),
              Column("by", Text, nullable=False),
              Column("action", String(32), nullable=False),
              Column("population", Text),
              Column("payload", Text, nullable=False),
              Column("prev", String(64), nullable=False),
              Column("hash", String(64), nullable=False)),
        # One row (id 1): the chain's head and its HMAC. Every write locks it first.
        Table("anchor", metadata,
              Column("id", Integer, primary_key=True, autoincrement=False),
              Column("seq", BigInteger, nullable=False),
              Column("hash", String(64), nullable=False),
              Column("key_id", String(16), nullable=False),
              Column("mac", String(64), nullable=False)),
        Table("populations", metadata,
              Column("id", Integer, primary_key=True),
              Column("name", String(400), nullable=False, unique=True),
              Column("key_column", Text),
              Column("fingerprint", String(100)),
              Column("accountant", Text),   # the budget and its composition rule (JSON), or null
              Column("relation", String(32), nullable=False),
              Column("log_seq", BigInteger, nullable=False),
              **auto),
        Table("datasets", metadata,
              Column("id", Integer, primary_key=True),
              Column("population_id", Integer, ForeignKey("populations.id"), nullable=False),
              Column("fingerprint", String(100), nullable=False),
              *([Column("rows", BigInteger, nullable=False)] if version == 1 else []),
              Column("columns", Text, nullable=False),
              Column("log_seq", BigInteger, nullable=False),
              UniqueConstraint("population_id", "fingerprint"),
              **auto),
        Table("charges", metadata,
              Column("seq", Integer, primary_key=True),
              Column("population_id", Integer, ForeignKey("populations.id"), nullable=False),
              Column("label", Text, nullable=False),
              Column("kind", String(16), nullable=False),
              Column("epsilon", Text, nullable=False),
              Column("delta", Text, nullable=False),
              Column("grp", Text),
              Column("part", Text),
              Column("step", BigInteger),
              Column("composition", String(32), nullable=False),  # the rule the budget counts it by
              Column("relation", String(32), nullable=False),
              Column("by", Text, nullable=False),
              Column("at", String(40), nullable=False),
              Column("log_seq", BigInteger, nullable=False),
              Index("charges_by_population", "population_id", "seq"),
              **auto),
        Table("releases", metadata,
              Column("id", Integer, primary_key=True),
              Column("population_id", Integer, ForeignKey("populations.id"), nullable=False),
              Column("dataset_id", Integer, ForeignKey("datasets.id")),
              Column("kind", String(32), nullable=False),
              Column("name", Text, nullable=False),
              Column("manifest", LargeBinary, nullable=False),   # zlib of the manifest's JSON
              Column("manifest_sha256", String(64), nullable=False),
              Column("file_name", Text, nullable=False),
              Column("file_sha256", String(64), nullable=False),
              Column("content", LargeBinary, nullable=False),    # zlib of the published file's bytes
              # zlib of the JSON {column: hierarchy rows, "orders": {column: values}} a reader needs
              # to know which values a published label covers
              Column("reading", LargeBinary, nullable=False),
              Column("charge_seq", Integer, ForeignKey("charges.seq"), unique=True),
              Column("by", Text, nullable=False),
              Column("at", String(40), nullable=False),
              Column("log_seq", BigInteger, nullable=False),
              Index("releases_by_population", "population_id", "id"),
              **auto),
    ]
    return {t.name: t for t in tables}


metadata = MetaData()
#: The current schema's tables, by name.
TABLES = _tables(metadata, 2)


def _create_version_1(conn: Connection) -> None:
    frozen = MetaData()  # version 1 as it was, whatever later migrations change in TABLES
    _tables(frozen, 1)
    frozen.create_all(conn)


def _drop_rows(conn: Connection) -> None:
    conn.exec_driver_sql('ALTER TABLE datasets DROP COLUMN "rows"')


#: ``(version, description, migrate)``, in the order they are applied; never edit a released one.
MIGRATIONS: tuple[tuple[int, str, Callable[[Connection], None]], ...] = (
    (1, "populations, datasets, releases, charges, the chained log and its anchor", _create_version_1),
    (2, "datasets keep no count of a table's rows", _drop_rows),
)
CURRENT_VERSION = MIGRATIONS[-1][0]
