"""The peak resident memory of a process and of every process it starts (a Spark JVM, say), sampled.

``ru_maxrss`` counts one process only, and a JVM that PySpark starts is a child the Python process
never waits for, so its memory would be missed. :class:`PeakTreeMemory` sums the resident memory
(``/proc/<pid>/statm``) of the process and all its descendants every ``interval`` seconds in a
thread and keeps the largest sum, never less than the process's own peak (``VmHWM``; not
``ru_maxrss``, which a child inherits from its parent across exec). Linux only
(elsewhere it reports ``None``). Standard library only, so the peer environments use it too.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def _rss(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    except (OSError, IndexError, ValueError):
        return 0


def tree_rss(pid: int) -> int:
    """The resident bytes of ``pid`` and all its descendants now."""
    total, todo, seen = 0, [pid], set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        total += _rss(p)
        todo += _children(p)
    return total


class PeakTreeMemory:
    """Samples the process tree's resident memory in a daemon thread from :meth:`start` to :meth:`stop`."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        pid = os.getpid()
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss(pid))
            self._stop.wait(self.interval)

    def start(self) -> PeakTreeMemory:
        if Path("/proc/self/statm").exists():
            self._thread.start()
        return self

    def stop(self) -> int | None:
        """The peak in bytes (``None`` where /proc is missing)."""
        if not self._thread.is_alive():
            return None
        self._stop.set()
        self._thread.join()
        return max(self.peak, _high_water(), tree_rss(os.getpid()))


def _high_water() -> int:
    """The process's own peak resident memory, ``VmHWM``: unlike ``ru_maxrss``, which Linux carries
    over from the parent through fork and exec, it is the peak of this program's memory alone."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0
