"""A throwaway PostgreSQL server for the tests marked ``service``, started by the test run itself.

The server is made in a temporary folder with ``initdb`` and started with ``pg_ctl``, listening
only on a Unix socket in that folder (no TCP port, so nothing else on the machine can reach it),
and stopped and removed when the session ends. PostgreSQL refuses to run as root, so when the
tests run as root the folder is given to the ``postgres`` user and the server runs as that user.

``$VEIL_TEST_POSTGRES_URL`` points the tests at a server of your own instead. Where no server can
be started (no PostgreSQL binaries, no ``postgres`` user), the tests that need one are skipped
with the reason — unless ``$VEIL_REQUIRE_SERVICES=1`` (CI sets it), which makes that a failure.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from itertools import count
from pathlib import Path

import pytest

REQUIRE = os.environ.get("VEIL_REQUIRE_SERVICES") == "1"
_numbers = count(1)


def unavailable(reason: str):
    """Skip a test for want of a service, or fail it when CI demands the services."""
    if REQUIRE:
        pytest.fail(f"VEIL_REQUIRE_SERVICES=1 but {reason}")
    pytest.skip(reason)


def _binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True) or \
        ([shutil.which("initdb")] if shutil.which("initdb") else [])
    return Path(found[0]).parent if found else None


def _as_server_user(args: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return args
    return ["runuser", "-u", "postgres", "--", *args]


class _Server:
    def __init__(self):
        self.folder: Path | None = None
        self.url: str | None = None
        self.error: str | None = None
        self.bin: Path | None = None

    def start(self) -> None:
        self.bin = _binaries()
        if self.bin is None:
            self.error = "PostgreSQL is not installed (no initdb); apt-get install postgresql"
            return
        if os.geteuid() == 0:
            try:
                owner = pwd.getpwnam("postgres")
            except KeyError:
                self.error = "the tests run as root and there is no 'postgres' user to run the server as"
                return
        # /tmp, not $TMPDIR: the server's socket path must stay under ~100 bytes, and when the tests
        # run as root the 'postgres' user must be able to reach the folder.
        self.folder = Path(tempfile.mkdtemp(prefix="veil-pg-", dir="/tmp" if os.path.isdir("/tmp") else None))
        if os.geteuid() == 0:
            os.chown(self.folder, owner.pw_uid, owner.pw_gid)
        data = self.folder / "data"
        steps = [
            [str(self.bin / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"],
            [str(self.bin / "pg_ctl"), "-D", str(data), "-l", str(self.folder / "server.log"), "-w", "-t", "60",
             "-o", f"-k {self.folder} -c listen_addresses='' -c fsync=off -c max_connections=60", "start"],
        ]
        for step in steps:
            try:
                done = subprocess.run(_as_server_user(step), capture_output=True, text=True, timeout=120)
            except (OSError, subprocess.TimeoutExpired) as exc:
                self.error = f"the PostgreSQL test server could not start ({Path(step[0]).name}: {exc})"
                self.stop()
                return
            if done.returncode != 0:
                tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
                self.error = f"the PostgreSQL test server could not start ({Path(step[0]).name}: {tail[0]})"
                self.stop()
                return
        self.url = f"postgresql://postgres@/postgres?host={self.folder}"

    def stop(self) -> None:
        if self.folder is None:
            return
        if (self.folder / "data" / "postmaster.pid").exists():
            subprocess.run(_as_server_user([str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-m",
                                            "immediate", "-w", "stop"]), capture_output=True, timeout=120)
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder = None


@pytest.fixture(scope="session")
def postgres_server():
    """The URL of the session's PostgreSQL server (``postgres`` database)."""
    try:
        import psycopg  # noqa: F401  (the driver the ledger and the fixture below use)
    except ImportError:
        unavailable("psycopg is not installed; pip install -e '.[postgresql]'")
    given = os.environ.get("VEIL_TEST_POSTGRES_URL")
    if given:
        yield given
        return
    server = _Server()
    server.start()
    try:
        if server.url is None:
            unavailable(server.error)
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server):
    """A new, empty database on the session's server for one test, dropped after it."""
    import psycopg
    from sqlalchemy.engine import make_url

    name = f"veil_test_{os.getpid()}_{next(_numbers)}"
    admin = make_url(postgres_server)
    conninfo = dict(host=admin.query.get("host") or admin.host, port=admin.port, user=admin.username,
                    password=admin.password, dbname=admin.database)
    conninfo = {k: v for k, v in conninfo.items() if v is not None}
    with psycopg.connect(**conninfo, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(**conninfo, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
