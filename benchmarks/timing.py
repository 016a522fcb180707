"""Timing and progress, shared by veil's side of the benchmarks and by the peers' side.

This module imports nothing but the standard library, so that the peer environment (which has
no veil, see ``peer_env.py``) can use it too.
"""

from __future__ import annotations

import gc
import math
import sys
import time
from typing import Callable


def progress(message: str) -> None:
    """Show what is being measured on a terminal (stderr); stay quiet when it is redirected."""
    if sys.stderr.isatty():
        sys.stderr.write(f"\r\033[K{message}")
        sys.stderr.flush()


def best_of(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Run ``fn`` ``repeat`` times; return the fastest wall time in seconds and the last result.

    The minimum is the figure least disturbed by the rest of the machine. A collection runs
    before each call so that garbage left by one run is not collected inside the next.
    """
    best, result = math.inf, None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result
