"""Where a ledger lives: an SQLite file, or a PostgreSQL database, behind one SQLAlchemy engine.

**Transactions that serialize writers.** Every write runs in one transaction that first takes the
ledger's write lock and holds it to the commit:

* SQLite: ``BEGIN IMMEDIATE`` takes the database's write lock at once (readers go on, in WAL mode);
  writers queue for it on a kernel lock of ``.<ledger>.lock``.
* PostgreSQL (through psycopg 3): ``SELECT … FOR UPDATE`` of the one row of ``anchor``, the head of
  the decision log, which every write reads before it appends (:mod:`veil.ledger.chain`), under
  ``lock_timeout``; the default READ COMMITTED isolation then shows each statement everything
  committed before the lock was granted.

So charges to a budget, and entries of the log, are made one at a time whatever the number of
processes, and a process killed at any point leaves its transaction committed whole or not at
all (the server, or SQLite's journal, rolls back the rest).

**Durability (SQLite).** In WAL mode a commit is written to the log file before it returns. With
``synchronous=NORMAL``, the default for charges, that is all: a committed charge survives the
process being killed at any moment (SIGKILL included: the kernel holds the written pages), but
not the operating system crashing or the machine losing power before the log is next flushed to
disk (at the next checkpoint, the next durable commit, or the kernel's own writeback), which can
lose the newest charges — and so give back budget whose answers were already drawn.
``synchronous=FULL`` flushes the log to disk at every commit (one ``fsync``, a few milliseconds on
a busy disk), so nothing committed is ever lost. Whatever the default, the writes that decide or
define something — the gate's decisions, a population or table made, a ledger created or
migrated, an import — are committed with ``FULL`` (:meth:`Store.write` ``durable=True``), which
also flushes every charge committed before them. Choose ``FULL`` for charges too with
``sqlite:///path?synchronous=full`` or ``$VEIL_LEDGER_SYNCHRONOUS=full``. PostgreSQL commits
durably (its own ``synchronous_commit``).

**Errors.** Whatever the driver says — the file is not a database, is malformed, is a JSON budget
file of an earlier veil, the server cannot be reached, the lock stayed taken — becomes one
:class:`~veil.ledger.errors.LedgerError` sentence naming the ledger; nothing is created or reset
in its place.
"""

from __future__ import annotations

import itertools
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: SQLite's own busy handler queues the writers
    fcntl = None

from sqlalchemy import create_engine, event, inspect, select, text
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError

from veil.inputs import open_regular_file
from veil.ledger.errors import LedgerError, LegacyBudgetFileError
from veil.ledger.schema import CURRENT_VERSION, TABLES

__all__ = ["DEFAULT_SYNCHRONOUS", "LEDGER_ENV", "SYNCHRONOUS_ENV", "Store"]

#: The environment variable naming the ledger when ``--ledger`` is not given.
LEDGER_ENV = "VEIL_LEDGER"
SQLITE_MAGIC = b"SQLite format 3\x00"
_WRITE = "veil_write"
#: The durability of an SQLite ledger's charges when neither its URL nor $VEIL_LEDGER_SYNCHRONOUS
#: says (see the module notes).
DEFAULT_SYNCHRONOUS = "normal"
#: The environment variable that chooses it (``full`` or ``normal``).
SYNCHRONOUS_ENV = "VEIL_LEDGER_SYNCHRONOUS"
_CONNECTION = "veil_connection"
_CONNECTIONS = itertools.count(1)


def _fsync(path: Path) -> None:
    """Flush a file, or a folder's entries, to disk (a folder that cannot be synced is left as it is)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError:
        if not path.is_dir():
            raise
    finally:
        os.close(fd)


def _driver_error(exc: BaseException) -> bool:
    """Whether an error is the database driver's own (raised by a statement run on its cursor)."""
    if isinstance(exc, (sqlite3.Error, SQLAlchemyError)):
        return True
    return type(exc).__module__.split(".")[0] == "psycopg" and isinstance(exc, Exception)


def _one_line(exc: BaseException) -> str:
    """The driver's own reason, on one line and without SQLAlchemy's appendix."""
    orig = getattr(exc, "orig", None) or exc
    first = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
    return re.sub(r"\s+", " ", first).rstrip(".")


class Store:
    """A ledger's database: an SQLite file (any path) or a PostgreSQL URL (``postgresql://…``).

    Args:
        location: a file path, ``sqlite:///path``, or ``postgresql://user@host/db`` (also
            ``postgresql+psycopg://``; a Unix socket folder goes in ``?host=/path``).
        timeout: how many seconds a writer waits for another one to finish.

    Raises:
        LedgerError: the location is empty or names an unknown kind of database.
    """

    def __init__(self, location: str | os.PathLike, *, timeout: float = 60.0, _queued: bool = True):
        synchronous = os.environ.get(SYNCHRONOUS_ENV, "").strip().lower() or DEFAULT_SYNCHRONOUS
        if synchronous not in ("full", "normal"):
            raise LedgerError(f"${SYNCHRONOUS_ENV} is full or normal, not {synchronous!r}.")
        if isinstance(location, os.PathLike) or "://" not in str(location):
            text_location = os.fspath(location)
            if not text_location:
                raise LedgerError("the ledger location is empty; give a file path or a postgresql:// URL.")
            self.path: Path | None = Path(text_location)
            self.url = URL.create("sqlite", database=str(self.path))
        else:
            try:
                url = make_url(str(location))
            except ArgumentError:
                raise LedgerError(f"{str(location)!r} is not a database URL; give a file path or a "
                                  "postgresql://user@host/database URL.") from None
            if url.get_backend_name() == "sqlite":
                if not url.database:
                    raise LedgerError("an in-memory SQLite ledger would be lost at exit; give a file path.")
                self.path = Path(url.database)
                synchronous = url.query.get("synchronous", synchronous)
                if synchronous not in ("full", "normal") or set(url.query) - {"synchronous"}:
                    raise LedgerError(f"an SQLite ledger URL takes one option, synchronous=full or normal, not "
                                      f"{dict(url.query)}.")
                url = URL.create("sqlite", database=url.database)
            elif url.get_backend_name() == "postgresql":
                self.path = None
                url = url.set(drivername="postgresql+psycopg")
            else:
                raise LedgerError(f"a ledger is an SQLite file or a PostgreSQL database, not "
                                  f"{url.get_backend_name()!r}; give a file path or a postgresql:// URL.")
            self.url = url
        self.timeout = float(timeout)
        self.synchronous = synchronous.upper()
        self.dialect = "sqlite" if self.path is not None else "postgresql"
        self.display = str(self.path) if self.path is not None else self.url.render_as_string(hide_password=True)
        self._engine: Engine | None = None
        self._seen = False          # the SQLite file was checked to be a database
        self._lock_fd: int | None = None
        self._queue = _queued       # a scratch file being built needs no queue of writers

    def __repr__(self) -> str:
        return f"Store({self.display!r})"

    # ------------------------------------------------------------------ the engine

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            self._engine = self._make_engine()
        return self._engine

    def _make_engine(self) -> Engine:
        if self.dialect == "sqlite":
            # Every transaction ends in a commit or a rollback of its own, so a connection going
            # back to the pool needs no reset.
            engine = create_engine(self.url, connect_args={"timeout": self.timeout}, pool_reset_on_return=None)

            @event.listens_for(engine, "connect")
            def _connect(dbapi_connection, record):
                record.info[_CONNECTION] = next(_CONNECTIONS)  # see token()
                dbapi_connection.isolation_level = None  # veil issues BEGIN itself, below
                cursor = dbapi_connection.cursor()
                cursor.execute("PRAGMA foreign_keys = ON")
                cursor.execute(f"PRAGMA synchronous = {self.synchronous}")
                cursor.close()

            @event.listens_for(engine, "begin")
            def _begin(conn):
                # on the driver's own connection: a charge begins one transaction, so this is hot
                conn.connection.dbapi_connection.execute(
                    "BEGIN IMMEDIATE" if conn.get_execution_options().get(_WRITE) else "BEGIN").close()

            return engine
        try:
            return create_engine(self.url, connect_args={"connect_timeout": max(1, int(self.timeout))})
        except NoSuchModuleError:
            raise LedgerError("a PostgreSQL ledger needs the psycopg driver; install veil with its 'postgresql' "
                              "extra (pip install 'veil[postgresql]').") from None
        except ImportError:
            raise LedgerError("a PostgreSQL ledger needs the psycopg driver; install veil with its 'postgresql' "
                              "extra (pip install 'veil[postgresql]').") from None

    def dispose(self) -> None:
        """Close the pooled connections (a ledger object can be used again afterwards)."""
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
        self._seen = False

    # ------------------------------------------------------------------ the file

    def check_file(self, *, must_exist: bool) -> bool:
        """For an SQLite ledger, refuse a path that cannot hold one; say whether the file exists.

        Raises:
            LedgerError: the path is a folder or lies in a missing folder, the file is missing
                while ``must_exist``, or it is not an SQLite database.
            LegacyBudgetFileError: it is a JSON budget file of an earlier veil.
        """
        if self.path is None or self._seen:
            return True
        if self._engine is not None:
            # SQLite holds POSIX locks on the file, and closing any other descriptor of it would drop
            # them all (another process could then take this one's WAL for unused and delete it):
            # with connections open, the file is never opened again here; SQLite reports a bad file.
            return True
        if self.path.is_dir():
            raise LedgerError(f"{str(self.path)!r} is a folder; give the ledger's file name.")
        if not self.path.exists():
            if must_exist:
                raise LedgerError(f"ledger {str(self.path)!r} does not exist; create it with veil ledger init.")
            if not self.path.parent.is_dir():
                raise LedgerError(f"folder {str(self.path.parent)!r} of the ledger does not exist; create it or "
                                  "choose another path.")
            return False
        try:
            with open_regular_file(self.path, "ledger", LedgerError, keep_os_errors=True) as fh:  # never a pipe
                head = fh.read(len(SQLITE_MAGIC))
        except OSError as exc:
            raise LedgerError(f"cannot read ledger {str(self.path)!r} ({exc.strerror}).") from None
        if head.lstrip()[:1] == b"{" and self._is_budget_file():
            raise LegacyBudgetFileError(
                f"{str(self.path)!r} is a JSON budget file of an earlier veil, which the ledger replaces; import it "
                f"with veil ledger import {str(self.path)!r} --ledger NEW.db and charge NEW.db from now on.")
        if head != SQLITE_MAGIC:
            what = "an empty file" if not head else "not an SQLite database"
            raise LedgerError(f"{str(self.path)!r} is not a veil ledger ({what}); give the ledger's file, or restore "
                              "it from a backup.")
        self._seen = True
        return True

    def _is_budget_file(self) -> bool:
        """Whether the file is a JSON budget file of an earlier veil (anything else is just not a ledger)."""
        import json

        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return isinstance(doc, dict) and doc.get("format") == "veil-dp-budget"

    # ------------------------------------------------------------------ transactions

    @contextmanager
    def read(self) -> Iterator[Connection]:
        """A read-only transaction that sees one consistent state of the ledger (SQLite's snapshot;
        REPEATABLE READ on PostgreSQL, where each statement would otherwise see newer commits)."""
        with self._translated(), self.engine.connect() as conn:
            if self.dialect == "postgresql":
                conn.execution_options(isolation_level="REPEATABLE READ")
            with conn.begin():
                yield conn

    @contextmanager
    def write(self, *, durable: bool = False) -> Iterator[Connection]:
        """A transaction that holds the ledger's write lock from its start to its commit.

        ``durable``: on SQLite, commit with ``synchronous=FULL`` whatever the ledger's setting
        (see the module notes).

        On SQLite the lock is taken by ``BEGIN IMMEDIATE``, after the writers have queued on
        ``flock`` of ``.<ledger>.lock`` beside it (SQLite's own busy handler sleeps up to 100 ms
        between tries, which starves writers under contention; a kernel lock hands over at once). On
        PostgreSQL it is taken by :func:`veil.ledger.chain.lock_head` (``SELECT … FOR UPDATE``),
        which every writer calls first; ``lock_timeout`` bounds the wait there.
        """
        with self._translated(), self._queued(), self.engine.connect() as conn:
            conn.execution_options(**{_WRITE: True})
            raise_to_full = durable and self.dialect == "sqlite" and self.synchronous != "FULL"
            if raise_to_full:
                conn.connection.dbapi_connection.execute("PRAGMA synchronous = FULL").close()
            try:
                with conn.begin():
                    if self.dialect == "postgresql":
                        conn.exec_driver_sql(f"SET LOCAL lock_timeout = '{int(self.timeout * 1000)}ms'")
                    yield conn
            finally:
                if raise_to_full:
                    conn.connection.dbapi_connection.execute(f"PRAGMA synchronous = {self.synchronous}").close()

    @contextmanager
    def _queued(self) -> Iterator[None]:
        """For SQLite, an exclusive ``flock`` on ``.<ledger>.lock`` (never deleted), held for one write.

        A file of its own: a second descriptor of the database file would, once closed, drop the
        POSIX locks SQLite holds on it in this process."""
        if self.path is None or fcntl is None or not self._queue:
            yield
            return
        if self._lock_fd is None:
            lock = self.path.with_name(f".{self.path.name}.lock")
            try:
                self._lock_fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
            except OSError as exc:
                raise LedgerError(f"cannot open the lock file {str(lock)!r} beside the ledger ({exc.strerror}); the "
                                  "ledger's folder must be writable.") from None
        fd = self._lock_fd
        try:
            deadline = time.monotonic() + self.timeout
            pause = 0.0002
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LedgerError(f"ledger {self.display!r} stayed locked by another process for "
                                          f"{self.timeout:g} s; try again when it has finished.") from None
                    time.sleep(pause)
                    pause = min(pause * 1.5, 0.005)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)  # the process's death releases it too

    @contextmanager
    def _translated(self) -> Iterator[None]:
        """Turn what the driver raises into one sentence naming the ledger."""
        where = f"ledger {self.display!r}"
        try:
            yield
        except Exception as exc:  # noqa: BLE001 - only the drivers' own errors are translated, the rest re-raised
            if not isinstance(exc, DBAPIError) and not _driver_error(exc):
                raise
            reason = _one_line(exc)
            lowered = reason.lower()
            if "locked" in lowered or "lock timeout" in lowered or "canceling statement due to lock" in lowered:
                raise LedgerError(f"{where} stayed locked by another process for {self.timeout:g} s; try again "
                                  "when it has finished.") from None
            if "not a database" in lowered or "malformed" in lowered or "disk image" in lowered:
                raise LedgerError(f"{where} is corrupt (SQLite says: {reason}); restore it from a backup.") from None
            if "no such table" in lowered or ("does not exist" in lowered and "relation" in lowered):
                raise LedgerError(f"{where} lacks a table veil keeps ({reason}); it is not a veil ledger or was cut "
                                  "down by hand, so restore it from a backup.") from None
            if "readonly" in lowered or "read-only" in lowered:
                raise LedgerError(f"{where} cannot be written ({reason}); a ledger needs a writable file and "
                                  "folder.") from None
            if "unable to open" in lowered:
                raise LedgerError(f"cannot open {where} ({reason}); check the path and its permissions.") from None
            if "connection" in lowered or "could not" in lowered or "server" in lowered:
                raise LedgerError(f"cannot reach the PostgreSQL {where} ({reason}); check the URL and that the "
                                  "server runs.") from None
            raise LedgerError(f"{where} failed ({reason}).") from None

    # ------------------------------------------------------------------ the schema

    def schema_version(self, conn: Connection) -> int | None:
        """The newest migration applied, or ``None`` when the database holds no veil ledger at all.

        Raises:
            LedgerError: the database has tables but no ``schema_version``, so it is not a ledger.
        """
        names = set(inspect(conn).get_table_names())
        if "schema_version" not in names:
            if names:
                raise LedgerError(f"{self.display!r} holds a database that is not a veil ledger (it has no "
                                  "schema_version table); give the ledger's location.")
            return None
        versions = TABLES["schema_version"].c.version
        return conn.execute(select(versions).order_by(versions.desc()).limit(1)).scalar()

    def require_current(self, conn: Connection) -> None:
        """Refuse a database that is not a ledger of exactly this veil's schema.

        Raises:
            LedgerError: no ledger there, or one to migrate (``veil ledger init``), or one newer
                than this veil.
        """
        version = self.schema_version(conn)
        if version is None:
            raise LedgerError(f"there is no veil ledger in {self.display!r}; create it with veil ledger init.")
        if version < CURRENT_VERSION:
            raise LedgerError(f"ledger {self.display!r} has schema version {version} and this veil uses "
                              f"{CURRENT_VERSION}; migrate it with veil ledger init.")
        if version > CURRENT_VERSION:
            raise LedgerError(f"ledger {self.display!r} has schema version {version}, newer than this veil knows "
                              f"({CURRENT_VERSION}); upgrade veil.")

    def token(self, conn: Connection) -> tuple | None:
        """What tells, on SQLite, whether another connection committed since: the driver connection
        (a number given when it was opened) and its ``PRAGMA data_version``, which changes when, and
        only when, a change is committed by any other connection (its own commits leave it as it
        is). The same token twice means nobody else wrote in between. ``None`` on PostgreSQL.
        """
        if self.dialect != "sqlite":
            return None
        cursor = conn.connection.dbapi_connection.execute("PRAGMA data_version")
        try:
            version = cursor.fetchone()[0]
        finally:
            cursor.close()
        return conn.connection.info.get(_CONNECTION), version

    def create(self, build: Callable[[Store], None]) -> bool:
        """Make a new SQLite ledger whole or not at all: ``build`` fills a scratch file beside the
        path (:func:`veil.output.scratch_path`, in WAL mode), which is checkpointed, closed, flushed
        to disk and then hard-linked to the path — an atomic step that fails if the path exists.

        A process killed at any moment leaves either no ledger (and a scratch file that the next
        run in the folder removes) or a complete one; of several processes creating the same
        ledger at once, exactly one succeeds and the others find its ledger.

        Returns:
            ``True`` if this call made the ledger, ``False`` if another process made it first.

        Raises:
            LedgerError: the folder cannot be written (permission, full disk).
        """
        from veil.output import link_scratch, scratch_path, settle

        folder = self.path.parent
        settle(folder)
        temporary = scratch_path(self.path)
        scratch = Store(temporary, timeout=self.timeout, _queued=False)
        scratch.synchronous = "FULL"
        companions = [Path(f"{temporary}{suffix}") for suffix in ("-wal", "-shm", "-journal")]
        try:
            scratch.set_wal()
            build(scratch)
            with scratch._translated():
                raw = scratch.engine.raw_connection()
                try:
                    raw.driver_connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                finally:
                    raw.close()
            scratch.dispose()
            _fsync(temporary)
            created = link_scratch(temporary, self.path)
            _fsync(folder)
            return created
        except OSError as exc:
            raise LedgerError(f"cannot create ledger {str(self.path)!r} ({exc.strerror}); its folder must be "
                              "writable.") from None
        finally:
            scratch.dispose()
            for path in [temporary, *companions]:
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass

    def set_wal(self) -> None:
        """Put a new SQLite ledger in WAL mode (it stays so: readers never wait for the writer)."""
        if self.dialect == "sqlite":
            with self._translated():
                raw = self.engine.raw_connection()  # outside any transaction, as SQLite requires
                try:
                    raw.driver_connection.execute("PRAGMA journal_mode = WAL")
                finally:
                    raw.close()

    def advisory_init_lock(self, conn: Connection) -> None:
        """On PostgreSQL, serialize concurrent ``veil ledger init`` runs (no anchor row exists yet to lock)."""
        if self.dialect == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(7746160817)"))
