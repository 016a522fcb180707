"""Running independent pieces of work on several cores.

veil's kernels are NumPy and Arrow calls, most of which release the GIL, so a pool of threads
runs independent pieces (columns to encode, sensitive columns to count, lattice nodes to check)
on every core without copying any data. Results never depend on the number of threads: every
piece is computed on its own and the pieces are combined in a fixed order.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, TypeVar

from veil.errors import ParameterError

T = TypeVar("T")
R = TypeVar("R")

ENVIRONMENT = "VEIL_THREADS"


def thread_count(threads: int | None = None) -> int:
    """The number of threads to use: ``threads`` when given, else ``$VEIL_THREADS``, else the
    number of cores this process may run on.

    Raises:
        ParameterError: ``threads`` (or ``$VEIL_THREADS``) is not a whole number of at least 1.
    """
    if threads is None:
        setting = os.environ.get(ENVIRONMENT, "").strip()
        if not setting:
            try:
                return max(1, len(os.sched_getaffinity(0)))
            except AttributeError:  # pragma: no cover - not Linux
                return max(1, os.cpu_count() or 1)
        try:
            threads = int(setting)
        except ValueError:
            raise ParameterError(f"${ENVIRONMENT} must be a whole number of threads, not {setting!r}.") from None
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ParameterError(f"the number of threads must be a whole number of at least 1, not {threads!r}.")
    return threads


def map_threads(fn: Callable[[T], R], items: Iterable[T], threads: int | None = None) -> list[R]:
    """``[fn(item) for item in items]``, on up to ``threads`` threads (see :func:`thread_count`),
    in the order of ``items``. One item, or one thread, runs in the calling thread."""
    items = list(items)
    workers = min(thread_count(threads), len(items))
    if workers <= 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))
