"""Transactions: the id that names one process's writes, and whether that process still runs.

Every temporary file veil writes is named ``.veil-<txid>.<n>.<name>.tmp`` (``txid`` is
``<pid>-<process start>-<random>``, ``n`` the target's position, ``name`` the target's), so that
whoever later finds it in a folder can tell whether the process that wrote it still runs (its pid
is gone, is a zombie, or started at another time: it does not) and settle it
(:mod:`veil.output.leftovers`).
"""

from __future__ import annotations

import os
import secrets

PREFIX = ".veil-"       # of every file a transaction writes beside its targets
NAME_CHARS = 100        # of a target's name kept in its temporary file's name


def _process_state(pid: int) -> tuple[str, int] | None:
    """A process's state letter and start time (clock ticks after boot), or ``None`` without ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    # The command name is in parentheses and may itself hold spaces or parentheses.
    fields = stat.rsplit(b")", 1)[-1].split()
    try:
        return fields[0].decode(), int(fields[19])
    except (IndexError, ValueError):
        return None


def _start_time(pid: int) -> int:
    state = _process_state(pid)
    return state[1] if state else 0


def new_txid() -> str:
    """A name for one process's writes that tells, later, whether that process still runs."""
    return f"{os.getpid()}-{_start_time(os.getpid())}-{secrets.token_hex(4)}"


def alive(pid: int, start: int) -> bool:
    """Whether the process that wrote a leftover still runs (a recycled pid does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        pass  # it exists but belongs to someone else
    state = _process_state(pid)
    if state is None:
        return True
    letter, started = state
    if letter in ("Z", "X"):
        return False
    return start == 0 or started == start
