"""The peers' side of the benchmarks: each function here runs in the peer environment.

Nothing here imports veil (the peer environment does not have it): a function gets plain JSON
arguments (paths, column names, numbers) and returns JSON values, and veil's side scores and
compares them. See ``peer_env.py`` for how a function is run.
"""

from __future__ import annotations

import importlib.metadata


def versions(*names: str) -> dict[str, str]:
    """The version of each named package installed in this (the peer) environment."""
    return {name: importlib.metadata.version(name) for name in names}
