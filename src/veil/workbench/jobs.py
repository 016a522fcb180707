"""Long work in worker processes: start, watch, cancel, and recover after a crash.

A run is a folder ``PROJECT/runs/ID`` holding ``request.json`` (the task and its parameters) and
``status.json``, which the worker rewrites atomically as it goes::

    {"state": "running" | "done" | "failed" | "cancelled" | "interrupted",
     "task": NAME, "stage": TEXT, "done": INT, "total": INT, "message": TEXT, "result": {...}}

The worker is ``python -m veil.workbench.worker RUN_FOLDER``, a process of its own, so the server
keeps answering while it works. A task writes what it makes under ``RUN_FOLDER/out``; for a task
that makes a release the worker renames that folder to ``PROJECT/releases/ID`` when the task has
returned, so a run that is killed, cancelled or fails leaves no release behind. The worker exits
when the server that started it is gone.
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from veil.output.store import log_file, replace_file
from veil.workbench.projects import Project

FINISHED = ("done", "failed", "cancelled", "interrupted")


def new_id() -> str:
    """A run id: the UTC time to the second (so ids sort by age) and 6 random hex digits."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def read_status(run: Path) -> dict:
    """A run's status (``interrupted`` when it has none yet and its worker is gone)."""
    try:
        return json.loads((run / "status.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"state": "interrupted", "stage": "", "done": 0, "total": 0, "message": "the run did not start."}


def write_status(run: Path, status: dict) -> None:
    """Replace a run's status atomically."""
    replace_file(run / "status.json", json.dumps(status, indent=1) + "\n")


class Jobs:
    """The worker processes of one server."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[Path, subprocess.Popen] = {}

    def start(self, project: Project, task: str, params: dict) -> str:
        """Start ``task`` (a name in :data:`veil.workbench.worker.TASKS`) on ``project``; the run's id."""
        run_id = new_id()
        run = project.runs_dir / run_id
        run.mkdir(parents=True)
        replace_file(run / "request.json", json.dumps({"task": task, "params": params}, indent=1) + "\n")
        write_status(run, {"state": "running", "task": task, "stage": "starting", "done": 0, "total": 0,
                           "message": "", "result": {}, "started": time.time()})
        with log_file(run / "log") as log:
            process = subprocess.Popen([sys.executable, "-m", "veil.workbench.worker", str(run)],
                                       stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                       env={**os.environ, "PYTHONWARNINGS": "ignore"})
        with self._lock:
            self._running[run] = process
        replace_file(run / "pid", str(process.pid))
        return run_id

    def status(self, project: Project, run_id: str) -> dict:
        """The status of a run; a run whose worker died without saying so is ``interrupted``."""
        run = project.run_dir(run_id)
        status = read_status(run)
        if status.get("state") == "running":
            with self._lock:
                process = self._running.get(run)
            if process is None or process.poll() is not None:
                status = read_status(run)   # it may have finished between the two reads
                if status.get("state") == "running":
                    status = {**status, "state": "interrupted",
                              "message": "the worker stopped before the run finished; nothing was released."}
                    write_status(run, status)
                    shutil.rmtree(run / "out", ignore_errors=True)
        return status

    def cancel(self, project: Project, run_id: str) -> dict:
        """Stop a running run (its worker is killed; it leaves no release)."""
        run = project.run_dir(run_id)
        with self._lock:
            process = self._running.pop(run, None)
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait()
        status = read_status(run)
        if status.get("state") == "running":
            status = {**status, "state": "cancelled", "message": "cancelled; nothing was released."}
            write_status(run, status)
        shutil.rmtree(run / "out", ignore_errors=True)
        return status

    def runs(self, project: Project) -> list[tuple[str, dict]]:
        """Every run of a project with its status, newest first."""
        if not project.runs_dir.is_dir():
            return []
        ids = sorted((p.name for p in project.runs_dir.iterdir() if p.is_dir()), reverse=True)
        return [(run_id, self.status(project, run_id)) for run_id in ids]

    def stop_all(self) -> None:
        """Kill every worker still running (the server is stopping)."""
        with self._lock:
            running, self._running = self._running, {}
        for run, process in running.items():
            if process.poll() is None:
                process.kill()
                process.wait()
            self.settle(run)

    @staticmethod
    def settle(run: Path) -> None:
        """Mark a run whose worker is gone as interrupted and remove what it was writing."""
        status = read_status(run)
        if status.get("state") == "running":
            write_status(run, {**status, "state": "interrupted",
                               "message": "the server stopped before the run finished; nothing was released."})
        shutil.rmtree(run / "out", ignore_errors=True)

    def recover(self, projects: list[Project]) -> None:
        """At start: every run an earlier server left running is interrupted (its worker exits
        when its server is gone)."""
        for project in projects:
            if project.runs_dir.is_dir():
                for run in project.runs_dir.iterdir():
                    if run.is_dir():
                        self.settle(run)
