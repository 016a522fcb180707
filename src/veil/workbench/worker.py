"""The worker process of one run: ``python -m veil.workbench.worker RUN_FOLDER`` (see jobs.py).

It reads the run's request, runs its task and writes the status as it goes. A task is a function
``task(project, params, out, progress) -> dict`` in :data:`TASKS`: it writes what it makes under
``out`` and returns the run's result (shown on the page; nothing private that the page does not
already show the curator). When the task makes a release (``MAKES_RELEASE``), ``out`` is renamed
to the project's ``releases/ID`` after it returns. The process exits at once if the server that
started it goes away, before anything is renamed.
"""
from __future__ import annotations

import importlib
import json
import os
import shutil
import sys
import threading
import time
import traceback
import warnings
from pathlib import Path

from veil.errors import VeilError
from veil.workbench.jobs import read_status, write_status
from veil.workbench.projects import Project

# task name → "module:function"
TASKS = {
    "anonymize": "veil.workbench.tasks.anonymize:run",
    "attack": "veil.workbench.tasks.attack:run",
}
# the tasks whose ``out`` folder becomes a release
MAKES_RELEASE = {"anonymize"}


class Progress:
    """What a task reports as it goes: a stage (one line of text) and ``done`` of ``total`` steps."""

    def __init__(self, run: Path, status: dict):
        self.run, self.status, self._last = run, status, 0.0

    def stage(self, text: str, total: int = 0) -> None:
        """A new stage of the run (resets the step count)."""
        self.status.update(stage=text, done=0, total=total)
        self._write(force=True)

    def __call__(self, done: int, total: int) -> None:
        """``done`` of ``total`` steps of the current stage (the anonymizers' ``progress`` hook)."""
        self.status.update(done=int(done), total=int(total))
        self._write(force=done >= total)

    def _write(self, force: bool) -> None:
        now = time.monotonic()
        if force or now - self._last > 0.2:
            self._last = now
            write_status(self.run, self.status)


def _watch_parent(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(3)   # the server is gone: stop before anything is released
        time.sleep(0.25)


def run(folder: Path) -> int:
    """Run the task of the run in ``folder``; 0 when it succeeded."""
    request = json.loads((folder / "request.json").read_text(encoding="utf-8"))
    status = read_status(folder)
    project = Project(folder.parent.parent)
    task = request["task"]
    progress = Progress(folder, status)
    out = folder / "out"
    out.mkdir(exist_ok=True)
    try:
        module, function = TASKS[task].split(":")
        result = getattr(importlib.import_module(module), function)(project, request["params"], out, progress)
        if task in MAKES_RELEASE:
            project.releases_dir.mkdir(exist_ok=True)
            os.rename(out, project.releases_dir / folder.name)
        status.update(state="done", stage="done", message="", result=result or {})
        write_status(folder, status)
        return 0
    except VeilError as error:
        status.update(state="failed", message=str(error))
    except Exception:  # noqa: BLE001 - the page says the run failed; the details go to the run's log
        traceback.print_exc()
        status.update(state="failed", message="the run failed on an internal error; its log is in the run's folder.")
    shutil.rmtree(out, ignore_errors=True)
    write_status(folder, status)
    return 1


def main() -> None:
    warnings.simplefilter("ignore")
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    sys.exit(run(Path(sys.argv[1])))


if __name__ == "__main__":
    main()
