"""A new ledger appears whole or not at all (audit item 10).

A process creating a budget file is killed with SIGKILL at every step of the creation — each SQL
statement, commit, flush and file operation veil runs while it makes the file — and afterwards the
next ``veil dp`` and ``veil ledger init`` use the path as if nothing had happened: there is no file
(nothing was published) or a complete ledger, never an empty or half-made one, and what the killed
process left is cleared. Twelve processes creating the same budget file at once all get their
answer from one ledger. Each process is a driver that imports veil and runs the command line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from helpers import veil

SRC = Path(__file__).parents[1] / "src"

# argv: start file, marker file, step, veil arguments. While veil creates a ledger
# (veil.ledger.Ledger.init), every SQL statement and commit on a database connection and
# every link, unlink and fsync is a step; at step N the driver writes the marker and sleeps, so
# that it can be killed there. Step "count" runs through and writes the number of steps instead;
# step "none" runs through. Step "sweep" takes the number of steps as the start file's content and
# runs the veil arguments once per step N in a child forked from the driver (veil imported once),
# with "{n}" in them replaced by N, and kills the child with SIGKILL when it reaches step N.
DRIVER = r'''
import json, os, signal, sqlite3, sys, time
from pathlib import Path

go, marker, step, args = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4:]
import veil.cli
import veil.dp.noise
veil.dp.noise._opendp()

state = {"active": False, "steps": 0, "target": None}


def tick():
    if not state["active"]:
        return
    state["steps"] += 1
    if state["target"] is not None and state["steps"] == state["target"]:
        marker.write_text(str(os.getpid()))
        time.sleep(600)


class Cursor(sqlite3.Cursor):
    def execute(self, *a, **k):
        tick()
        return super().execute(*a, **k)


class Connection(sqlite3.Connection):
    def cursor(self, factory=Cursor):
        return super().cursor(factory)

    def execute(self, *a, **k):
        tick()
        return super().execute(*a, **k)

    def commit(self):
        tick()
        return super().commit()


import sqlite3.dbapi2
connect = sqlite3.connect
sqlite3.connect = sqlite3.dbapi2.connect = lambda *a, **k: connect(*a, **{**k, "factory": Connection})
for name in ("link", "unlink", "fsync"):
    original = getattr(os, name)
    def hooked(*a, _original=original, **k):
        tick()
        return _original(*a, **k)
    setattr(os, name, hooked)
from veil.ledger.ledger import Ledger
init = Ledger.init.__func__
def counted(cls, *a, **k):
    state["active"] = True
    try:
        return init(cls, *a, **k)
    finally:
        state["active"] = False
        if step == "count":
            marker.write_text(str(state["steps"]))
Ledger.init = classmethod(counted)


def run(arguments):
    sys.argv = ["veil", *arguments]
    try:
        veil.cli.main()
    except SystemExit:
        pass


if step != "sweep":
    Path(str(marker) + ".ready").touch()
while not go.exists():
    time.sleep(0.005)
if step != "sweep":
    state["target"] = None if step in ("count", "none") else int(step)
    sys.argv = ["veil", *args]
    veil.cli.main()
killed = []
for n in range(1, int(go.read_text()) + 1):
    marker = Path(str(sys.argv[2]).replace("{n}", str(n)))
    pid = os.fork()
    if pid == 0:
        state["target"] = n
        run([a.replace("{n}", str(n)) for a in args])
        os._exit(0)
    while not marker.exists():
        if os.waitpid(pid, os.WNOHANG) != (0, 0):
            break
        time.sleep(0.002)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        killed.append(n)
print(json.dumps(killed))
'''


@pytest.fixture
def setup(tmp_path):
    data = tmp_path / "people.csv"
    pd.DataFrame({"age": range(50), "sex": ["f", "m"] * 25}).to_csv(data, index=False)
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}

    def start(go, marker, step, *args) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, str(driver), str(go), str(marker), str(step), *map(str, args)],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return tmp_path, data, start


def wait_for(path: Path, proc: subprocess.Popen, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.01)


def creation(data, budget):
    return ("dp", "count", data, "--epsilon", "0.1", "--budget-file", budget, "--budget", "1")


def test_a_budget_file_whose_creation_was_killed_at_any_step_can_be_used(setup):
    from veil.ledger import keys

    tmp, data, start = setup
    keys.load_key(create=True)  # made once, before: its creation is no step of a ledger's
    go = tmp / "go"
    go.touch()
    counting = start(go, tmp / "steps", "count", *creation(data, tmp / "counted.db"))
    out, err = counting.communicate(timeout=300)
    assert counting.returncode == 0, err
    steps = int((tmp / "steps").read_text())
    assert steps >= 24  # every statement of the schema, the first entry, the commits, the link
    for n in range(1, steps + 1):
        (tmp / f"step{n}").mkdir()
    go.unlink()
    go.write_text(str(steps))
    sweep = start(go, tmp / "step{n}" / "marker", "sweep", *creation(data, tmp / "step{n}" / "budget.db"))
    out, err = sweep.communicate(timeout=600)
    assert sweep.returncode == 0, err
    assert json.loads(out) == list(range(1, steps + 1))  # each child was killed at its step
    for n in range(1, steps + 1):
        folder = tmp / f"step{n}"
        budget = folder / "budget.db"
        assert not budget.exists() or budget.stat().st_size > 0, n
        if budget.exists():  # linked into place: complete, and verified
            assert json.loads(veil("ledger", "verify", "--ledger", budget, "--json").stdout)["ok"], n
        after = veil(*creation(data, budget), "--json")
        assert after.exit_code == 0, (n, after.output)
        assert json.loads(after.stdout)["budget"]["spent"]["epsilon"] == pytest.approx(0.1), n
        again = veil("ledger", "init", "--ledger", budget)
        assert again.exit_code == 0 and "already current" in again.stdout, (n, again.output)
        assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".veil-")) == [], n


def test_eight_processes_creating_one_budget_file_all_answer_from_one_ledger(setup):
    tmp, data, start = setup
    racers = 8
    go = tmp / "go"
    budget = tmp / "budget.db"
    procs = [start(go, tmp / f"m{i}", "none", "dp", "count", data, "--epsilon", "0.05", "--budget-file", budget,
                   "--budget", "1", "--json") for i in range(racers)]
    for i, proc in enumerate(procs):
        wait_for(tmp / f"m{i}.ready", proc)
    go.touch()
    results = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    assert all(code == 0 for code, _, _ in results), [err for code, _, err in results if code]
    shown = json.loads(veil("dp", "budget", budget, "--json").stdout)
    assert len(shown["charges"]) == racers
    assert shown["spent"]["epsilon"] == pytest.approx(0.05 * racers)
    assert sorted(json.loads(out)["budget"]["left"]["epsilon"] for _, out, _ in results) == \
        pytest.approx([1 - 0.05 * k for k in range(racers, 0, -1)])  # every answer saw the charges before it
    assert json.loads(veil("ledger", "verify", "--ledger", budget, "--json").stdout)["ok"]
    inits = [e for e in json.loads(veil("ledger", "history", "--ledger", budget, "--json").stdout)["entries"]
             if e["action"] in ("init", "population")]
    assert [e["action"] for e in inits] == ["init", "population"]
    assert not [p for p in tmp.iterdir() if p.name.startswith(".veil-")]


def test_eight_ledger_inits_at_once_make_one_ledger(setup):
    tmp, _, start = setup
    go = tmp / "go"
    ledger = tmp / "ledger.db"
    procs = [start(go, tmp / f"m{i}", "none", "ledger", "init", "--ledger", ledger, "--json") for i in range(8)]
    for i, proc in enumerate(procs):
        wait_for(tmp / f"m{i}.ready", proc)
    go.touch()
    results = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    assert all(code == 0 for code, _, _ in results), [err for code, _, err in results if code]
    made = [json.loads(out) for _, out, _ in results]
    assert sum(bool(m["migrations"]) for m in made) == 1 and len({m["ledger_id"] for m in made}) == 1
    assert json.loads(veil("ledger", "verify", "--ledger", ledger, "--json").stdout)["entries"] == 1


def test_the_file_is_never_opened_again_beside_sqlites_own_connections(tmp_path, monkeypatch):
    """Closing any descriptor of the database drops the POSIX locks SQLite holds on it in this
    process; another process may then take its WAL for unused and delete it, losing commits (the
    cause of lost charges when processes raced to create one budget file)."""
    import builtins

    from veil.ledger import Ledger

    made, _ = Ledger.init(tmp_path / "ledger.db")
    made.status()                       # SQLite's connections are open
    made.store._seen = False            # as when another process made the file this one uses
    opened = []
    real = builtins.open
    monkeypatch.setattr(builtins, "open", lambda f, *a, **k: opened.append(str(f)) or real(f, *a, **k))
    made.status()
    assert str(tmp_path / "ledger.db") not in opened
