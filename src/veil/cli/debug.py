"""What the ``veil`` command does with warnings of other packages and with an error nobody
foresaw, and how ``VEIL_DEBUG`` changes it.

veil never speaks to its user through Python's ``warnings``: what a user must know (a release
kept in input order, a note on a model) is printed by the command as a line of its own. A warning
raised while a command runs therefore comes from a package veil uses (NumPy, SciPy, pandas,
PySpark, …) and says something to veil's developers, not to its user, so by default it is not
shown. An exception that no check foresaw is a bug in veil: the command prints one sentence
that says so and exits with :data:`EXIT_BUG`, without a traceback.

``VEIL_DEBUG`` (an environment variable) shows what is hidden:

* unset, empty or ``0``: the default above;
* ``error``: every warning is an error (but a ResourceWarning, which the garbage collector
  raises wherever it runs, is shown), and an unforeseen error shows its traceback (veil's test
  suite runs every command so, so that a new warning of a package fails a test the day it
  appears);
* anything else (``1``): warnings are shown as Python shows them (``-W`` and ``PYTHONWARNINGS``
  apply), and an unforeseen error shows its traceback.

This module imports nothing outside the standard library, so that the ``veil`` command can route
the warnings raised while it imports Typer, Click and Rich.
"""

from __future__ import annotations

import os
import warnings
from contextlib import contextmanager
from typing import Iterator

#: The variable that shows warnings and tracebacks.
DEBUG_VARIABLE = "VEIL_DEBUG"
#: The exit status of a command stopped by a bug in veil (``EX_SOFTWARE`` of BSD's sysexits).
EXIT_BUG = 70


def debug_mode() -> str:
    """``""`` (the default), ``"error"`` or ``"show"``, as :data:`DEBUG_VARIABLE` says."""
    value = os.environ.get(DEBUG_VARIABLE, "").strip().lower()
    if value in ("", "0"):
        return ""
    return "error" if value == "error" else "show"


@contextmanager
def routed_warnings() -> Iterator[None]:
    """Within the block, warnings go where :func:`debug_mode` says: nowhere (the default), raised
    as errors, or shown; the filters in force before are restored after it."""
    mode = debug_mode()
    with warnings.catch_warnings():
        if mode == "error":
            warnings.simplefilter("error")
            # A ResourceWarning is raised by the garbage collector, wherever it runs; as an error it
            # would fail whatever runs then. It is shown instead.
            warnings.filterwarnings("default", category=ResourceWarning)
        elif mode == "":
            warnings.simplefilter("ignore")
        yield


def bug_sentence(exc: BaseException) -> str:
    """The one sentence printed for an exception no check foresaw (it names its type only: its
    text may quote data)."""
    return (f"veil stopped on an error it did not foresee ({type(exc).__name__}), a bug in veil; please report it "
            f"with the command you ran, and run it again with {DEBUG_VARIABLE}=1 to see where it happened.")


__all__ = ["DEBUG_VARIABLE", "EXIT_BUG", "bug_sentence", "debug_mode", "routed_warnings"]
