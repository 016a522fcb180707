"""Many processes charging one budget of one ledger, and processes killed inside a charge, against
SQLite and against a real PostgreSQL server (started by the test run: ``postgres_server.py``).

Each process is a small driver that imports veil, waits for a start signal (so that all of them
charge together, not one import after another) and charges through the API. Every accepted charge
is printed, flushed, the moment ``charge()`` returns, so a killed process has printed exactly the
charges it knew were made.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

from veil.dp import Budget
from veil.ledger import Ledger

SRC = Path(__file__).parents[1] / "src"

# argv: start file, marker file, stage, ledger, population, charges, epsilon. At ``stage`` the
# driver writes the marker and sleeps, so that the test can kill it right there:
#   locked    - in a charge's transaction, the write lock held and the anchor read, nothing written;
#   written   - the charge and its log entry inserted, not committed;
#   committed - the transaction committed, charge() not yet returned;
#   none      - no pause.
DRIVER = r'''
import os, sys, time
from pathlib import Path

go, marker, stage, location, population, n, epsilon = sys.argv[1:]
import veil.ledger.chain as chain
from veil.dp import BudgetExceededError
from veil.ledger import Ledger
from veil.ledger.budget import LedgerBudget


def pause():
    marker.write_text(str(os.getpid()))
    time.sleep(600)


marker = Path(marker)
if stage == "locked":
    lock_head = chain.lock_head
    def hooked(conn, where, ledger_id, *, for_update=True, **kwargs):
        out = lock_head(conn, where, ledger_id, for_update=for_update, **kwargs)
        if for_update:
            pause()
        return out
    chain.lock_head = hooked
elif stage == "written":
    append = chain.append
    def hooked(*args, **kwargs):
        out = append(*args, **kwargs)
        if kwargs.get("action") == "charge":
            pause()
        return out
    chain.append = hooked
elif stage == "committed":
    commit = LedgerBudget._commit
    def hooked(self, accountant):
        commit(self, accountant)
        pause()
    LedgerBudget._commit = hooked
ledger = Ledger(location, by=f"driver {os.getpid()}")
Path(str(marker) + ".ready").touch()
while not Path(go).exists():
    time.sleep(0.005)
refused = 0
with ledger.open_budget(population) as accountant:
    for i in range(int(n)):
        try:
            accountant.charge(epsilon, label=f"{os.getpid()}-{i}")
        except BudgetExceededError:
            refused += 1
            continue
        print("accepted", epsilon, flush=True)
print("refused", refused, flush=True)
'''

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.service)]


@pytest.fixture(params=BACKENDS)
def location(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "ledger.db")
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def driver(tmp_path):
    path = tmp_path / "driver.py"
    path.write_text(DRIVER)
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}

    def start(go, marker, stage, location, population, n, epsilon) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, str(path), str(go), str(marker), stage, location, population,
                                 str(n), str(epsilon)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    return start


def new_ledger(location: str, budget) -> Ledger:
    ledger, _ = Ledger.init(location)
    ledger.add_population("survey", budget=budget)
    return ledger


def wait_for(path: Path, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.01)


def accepted(out: str) -> list[Fraction]:
    """The charges a driver printed in full: a process killed while it printed leaves its last line
    cut short (``accepted`` without its amount), a charge committed but not yet printed."""
    whole = out.split("\n")[:-1]  # the text after the last newline was cut by the kill
    return [Fraction(line.split()[1]) for line in whole if line.startswith("accepted")]


def recorded(ledger: Ledger) -> tuple[int, Fraction]:
    acc = ledger.budget("survey")
    return len(acc.charges), acc.spent().epsilon


def test_eight_processes_charging_fifty_times_never_overspend(location, driver, tmp_path):
    """8 × 50 charges of ε = 0.05 on a budget of 10: exactly 200 fit, whatever the interleaving."""
    ledger = new_ledger(location, Budget(10))
    go = tmp_path / "go"
    procs = [driver(go, tmp_path / f"m{i}", "none", location, "survey", 50, "0.05") for i in range(8)]
    for i, proc in enumerate(procs):
        wait_for(tmp_path / f"m{i}.ready", proc)
    go.touch()
    outs = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        outs.append(out)
    made = [charge for out in outs for charge in accepted(out)]
    refused = sum(int(line.split()[1]) for out in outs for line in out.splitlines() if line.startswith("refused"))
    count, spent = recorded(ledger)
    assert len(made) == count == 200 and refused == 200
    assert spent == sum(made) == 10
    assert ledger.verify().ok


@pytest.mark.parametrize("stage, kept", [("locked", False), ("written", False), ("committed", True)])
def test_a_process_killed_inside_a_charge_loses_and_doubles_nothing(location, driver, tmp_path, stage, kept):
    ledger = new_ledger(location, Budget(1))
    ledger.charge("survey", 0.1, label="first")
    go = tmp_path / "go"
    go.touch()
    proc = driver(go, tmp_path / "marker", stage, location, "survey", 1, "0.3")
    wait_for(tmp_path / "marker", proc)
    proc.send_signal(signal.SIGKILL)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL and accepted(out) == []
    assert recorded(ledger) == ((2, Fraction(4, 10)) if kept else (1, Fraction(1, 10)))
    assert ledger.verify().ok
    # The lock died with the process: the next charge goes through at once.
    started = time.monotonic()
    ledger.charge("survey", 0.1, label="after")
    assert time.monotonic() - started < 10
    assert recorded(ledger)[0] == (3 if kept else 2) and ledger.verify().ok


def test_processes_killed_at_random_times_leave_a_sound_ledger(location, driver, tmp_path):
    """Four processes charging without end, each killed at a random moment: every charge printed is
    on record, none twice, at most one more per process (committed, not yet printed)."""
    ledger = new_ledger(location, Budget(1000))
    go = tmp_path / "go"
    procs = [driver(go, tmp_path / f"m{i}", "none", location, "survey", 100000, "0.01") for i in range(4)]
    for i, proc in enumerate(procs):
        wait_for(tmp_path / f"m{i}.ready", proc)
    go.touch()
    started, rng = time.monotonic(), random.Random(2027)
    for moment, proc in sorted(((rng.uniform(0.3, 2.0), proc) for proc in procs), key=lambda pair: pair[0]):
        time.sleep(max(0.0, started + moment - time.monotonic()))
        proc.send_signal(signal.SIGKILL)
    printed = sum(len(accepted(proc.communicate(timeout=60)[0])) for proc in procs)
    count, spent = recorded(ledger)
    assert printed <= count <= printed + len(procs)
    assert spent == count * Fraction(1, 100)
    assert ledger.verify().ok
    ledger.charge("survey", 0.01, label="after")
    assert recorded(ledger)[0] == count + 1
