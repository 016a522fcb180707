"""The statements every charge runs, compiled once per database and run on the driver's own cursor.

A charge is a handful of small statements (lock and read the anchor, read the head, insert the
charge and its log entry, move the anchor); run through SQLAlchemy's execution layer each costs
tens of microseconds of Python, more than the database spends on it. A :class:`Prepared` statement
is still written once with SQLAlchemy Core (so SQLite and PostgreSQL get their own SQL, quoting
and parameter style), compiled once per dialect, and then executed on the DBAPI cursor of the
connection the transaction already holds: same transaction, same locks, no per-call compilation.
"""

from __future__ import annotations

from sqlalchemy.engine import Connection

__all__ = ["Prepared"]


class Prepared:
    """A Core statement whose parameters are all named ``bindparam`` s, compiled once per dialect.

    Args:
        statement: the statement (every value a ``bindparam``: no literal values to bind).
    """

    def __init__(self, statement):
        self.statement = statement
        self._compiled: dict[str, tuple[str, tuple[str, ...] | None]] = {}

    def _sql(self, conn: Connection) -> tuple[str, tuple[str, ...] | None]:
        name = conn.dialect.name
        found = self._compiled.get(name)
        if found is None:
            compiled = self.statement.compile(dialect=conn.dialect)
            order = tuple(compiled.positiontup) if compiled.positiontup is not None else None
            found = self._compiled[name] = (str(compiled), order)
        return found

    def run(self, conn: Connection, params: dict | None = None):
        """Execute in ``conn``'s transaction; returns the driver's cursor (``fetchone``, ``fetchall``)."""
        sql, order = self._sql(conn)
        params = params or {}
        cursor = conn.connection.dbapi_connection.cursor()
        cursor.execute(sql, tuple(params[k] for k in order) if order is not None else params)
        return cursor

    def one(self, conn: Connection, params: dict | None = None):
        """The first row (a tuple), or ``None``."""
        cursor = self.run(conn, params)
        try:
            return cursor.fetchone()
        finally:
            cursor.close()

    def all(self, conn: Connection, params: dict | None = None) -> list:
        cursor = self.run(conn, params)
        try:
            return cursor.fetchall()
        finally:
            cursor.close()
