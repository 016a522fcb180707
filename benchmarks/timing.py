"""Timing and progress, shared by veil's side of the benchmarks and by the peers' side.

This module imports nothing but the standard library, so that the peer environment (which has
no veil, see ``peer_env.py``) can use it too.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from typing import Callable


def progress(message: str) -> None:
    """Show what is being measured on a terminal (stderr); stay quiet when it is redirected."""
    if sys.stderr.isatty():
        sys.stderr.write(f"\r\033[K{message}")
        sys.stderr.flush()


# Every wall time best_of measured since the last spread_since(), one list per call: the spread
# around the best is reported beside the figures, since the machine may be busy with other jobs.
SAMPLES: list[list[float]] = []


def best_of(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Run ``fn`` ``repeat`` times; return the fastest wall time in seconds and the last result.

    The minimum is the figure least disturbed by the rest of the machine. A collection runs
    before each call so that garbage left by one run is not collected inside the next. Every
    time is kept in ``SAMPLES`` for :func:`spread_since`.
    """
    times, result = [], None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    SAMPLES.append(times)
    return min(times), result


def spread_since(mark: int) -> dict | None:
    """How far the runs of the figures measured since ``len(SAMPLES) == mark`` strayed from their
    best: over the figures timed more than once, the median of (median run / best) and the largest
    (slowest run / best); ``None`` when no figure was timed more than once."""
    ratios = [(statistics.median(t) / min(t), max(t) / min(t)) for t in SAMPLES[mark:] if len(t) > 1 and min(t) > 0]
    if not ratios:
        return None
    return {"figures": len(ratios), "median_over_best": statistics.median(r[0] for r in ratios),
            "worst_over_best": max(r[1] for r in ratios)}
