"""Many real ``veil dp`` processes on one budget file, and processes killed at awkward moments.

Each process is a small driver that imports veil, waits for a start signal (so that all of them
reach the budget file together, not one import after another) and then runs the ``veil`` command
line in-process. The assertions read the budget back through ``veil dp budget --json``: what the
command line promises, whatever store keeps the budget.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from click.testing import Result
from typer.testing import CliRunner

from veil.cli import app

SRC = Path(__file__).parents[1] / "src"

# A driver: argv = start-file, marker-file, stage, veil arguments. Once veil is imported it writes
# <marker>.ready and waits for the start file; at ``stage`` it writes the marker and sleeps, so the
# test can kill it right there; stage "none" runs straight through.
DRIVER = r'''
import os, sys, time
from pathlib import Path

go, marker, stage, args = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4:]
import veil.cli
import veil.dp.noise
import veil.ledger.chain as chain
veil.dp.noise._opendp()  # imported lazily by the first secure draw: import it before the start
import veil.cli.dp as dp_cli
from veil.dp.noise import NoiseSource


def pause(*_args, **_kwargs):
    marker.write_text(str(os.getpid()))
    time.sleep(600)


def before(function):
    def hooked(*a, **k):
        pause()
        return function(*a, **k)
    return hooked


def after(function):
    def hooked(*a, **k):
        out = function(*a, **k)
        pause()
        return out
    return hooked


if stage == "locked":        # in the charge's transaction: the ledger's write lock held, nothing written
    lock_head = chain.lock_head
    def locked(conn, where, ledger_id, *, for_update=True, **kwargs):
        out = lock_head(conn, where, ledger_id, for_update=for_update, **kwargs)
        if for_update:
            pause()
        return out
    chain.lock_head = locked
elif stage == "written":     # the charge and its log entry written, not committed
    append = chain.append
    def written(*a, **k):
        out = append(*a, **k)
        if k.get("action") == "charge":
            pause()
        return out
    chain.append = written
elif stage == "saved":       # the charge committed, no noise drawn yet
    NoiseSource.discrete_laplace = before(NoiseSource.discrete_laplace)
elif stage == "drawn":       # noise drawn, the answer not printed
    dp_cli._Run.finish = before(dp_cli._Run.finish)
marker.with_suffix(".ready").touch()
while not go.exists():
    time.sleep(0.005)
sys.argv = ["veil", *args]
veil.cli.main()
'''


@pytest.fixture
def setup(tmp_path):
    data = tmp_path / "people.csv"
    pd.DataFrame({"age": range(200), "sex": ["f", "m"] * 100}).to_csv(data, index=False)
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return tmp_path, data, driver, env


def veil(*args) -> Result:
    """The command line, run in this process (setting up and reading back; the racing is done by drivers)."""
    return CliRunner().invoke(app, [str(a) for a in args])


def start(env, driver, go, marker, stage, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(driver), str(go), str(marker), stage, *map(str, args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def release_when_ready(procs, tmp, go) -> None:
    """Wait until every driver has imported veil, then let them all go at once."""
    deadline = time.monotonic() + 120
    while not all((tmp / f"m{i}.ready").exists() for i in range(len(procs))):
        assert all(p.poll() is None for p in procs) and time.monotonic() < deadline
        time.sleep(0.01)
    go.touch()


def ledger(budget) -> dict:
    shown = veil("dp", "budget", budget, "--json")
    assert shown.exit_code == 0, shown.output
    return json.loads(shown.stdout)


def new_budget(data, budget, total, spent):
    made = veil("dp", "count", data, "--epsilon", spent, "--budget-file", budget, "--budget", total)
    assert made.exit_code == 0, made.output


@pytest.mark.parametrize("epsilon, answers", [("0.5", 1), ("0.3", 3)])
def test_concurrent_queries_never_overspend_and_lose_no_charge(setup, epsilon, answers):
    """The audit's case (ε = 1, 0.1 spent, racing queries of 0.5: one answer), and racing queries of
    0.3 that must all be recorded until the budget is exactly spent (0.1 + 3 × 0.3 = 1). Eight
    racers on two cores (the audit had twelve; eight reach the file together as well)."""
    tmp, data, driver, env = setup
    budget = tmp / "budget.json"
    new_budget(data, budget, "1", "0.1")
    go = tmp / "go"
    procs = [start(env, driver, go, tmp / f"m{i}", "none", "dp", "count", data, "--epsilon", epsilon,
                   "--budget-file", budget, "--json") for i in range(8)]
    release_when_ready(procs, tmp, go)  # so that they reach the budget file together
    results = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    released = [json.loads(out) for code, out, _ in results if code == 0]
    refused = [err for code, _, err in results if code != 0]
    assert len(released) == answers and len(refused) == 8 - answers
    for err in refused:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and "asks for ε = " in lines[0] and "Traceback" not in err
    shown = ledger(budget)
    assert [c["label"] for c in shown["charges"]] == ["count"] * (1 + answers)
    assert [c["epsilon"] for c in shown["charges"][1:]] == [float(epsilon)] * answers
    assert round(shown["spent"]["epsilon"], 12) == round(0.1 + answers * float(epsilon), 12) <= 1
    lefts = sorted(round(doc["budget"]["left"]["epsilon"], 12) for doc in released)
    assert len(set(lefts)) == answers  # every answer saw the charges before it: none was lost


STAGES = {"locked": False, "written": False, "saved": True, "drawn": True}  # stage: was the charge saved?


def test_a_process_killed_at_any_moment_loses_no_charge_and_corrupts_nothing(setup):
    """One process per awkward moment, each on a budget file of its own, killed there with SIGKILL."""
    tmp, data, driver, env = setup
    go = tmp / "go"
    go.touch()
    procs = {}
    for stage in STAGES:
        # a folder each: a save sweeps what killed processes left in its folder, the others' included
        (tmp / stage).mkdir()
        new_budget(data, tmp / stage / f"{stage}.json", "1", "0.1")
        procs[stage] = start(env, driver, go, tmp / f"{stage}.marker", stage, "dp", "count", data, "--epsilon",
                             "0.3", "--budget-file", tmp / stage / f"{stage}.json")
    deadline = time.monotonic() + 120
    for stage, proc in procs.items():
        while not (tmp / f"{stage}.marker").exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
    for stage, proc in procs.items():
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL and "answer" not in out  # nothing was released
        budget, charged = tmp / stage / f"{stage}.json", STAGES[stage]
        shown = ledger(budget)  # the ledger is whole and its history verifies
        assert shown["spent"]["epsilon"] == pytest.approx(0.4 if charged else 0.1), stage
        assert len(shown["charges"]) == (2 if charged else 1), stage
        assert json.loads(veil("ledger", "verify", "--ledger", budget, "--json").stdout)["ok"], stage
        # the kernel released the lock: the next process charges at once
        after = veil("dp", "count", data, "--epsilon", "0.1", "--budget-file", budget)
        assert after.exit_code == 0, after.output
        assert len(ledger(budget)["charges"]) == (3 if charged else 2)
        assert not list((tmp / stage).glob(".veil-*"))  # nothing is left behind


def test_processes_killed_at_random_times_leave_a_sound_budget(setup):
    """Six racing processes, each killed at a random moment: before, during or after its charge."""
    tmp, data, driver, env = setup
    budget = tmp / "budget.json"
    new_budget(data, budget, "1", "0.1")
    go = tmp / "go"
    procs = [start(env, driver, go, tmp / f"m{i}", "none", "dp", "count", data, "--epsilon", "0.1",
                   "--budget-file", budget) for i in range(6)]
    release_when_ready(procs, tmp, go)
    started, rng = time.monotonic(), random.Random(2026)
    for moment, proc in sorted(((rng.uniform(0.0, 1.5), proc) for proc in procs), key=lambda pair: pair[0]):
        time.sleep(max(0.0, started + moment - time.monotonic()))
        proc.send_signal(signal.SIGKILL)
    printed = sum("answer:" in proc.communicate(timeout=60)[0] for proc in procs)
    shown = ledger(budget)
    charges = len(shown["charges"]) - 1
    # every released answer is on record, nothing is recorded twice, the total stays in the budget
    assert printed <= charges <= len(procs) and shown["spent"]["epsilon"] <= 1
    assert veil("dp", "count", data, "--epsilon", "0.1", "--budget-file", budget).exit_code == 0
    assert len(ledger(budget)["charges"]) == charges + 2
