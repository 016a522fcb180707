"""Anonymization algorithms; each returns a :class:`Release` (the αβ algorithm an :class:`AlphaBetaView`).

The names below are loaded on first use, so that running one algorithm does not import the
others (the αβ algorithm and MDAV read with pandas, which full-domain generalization never needs).
"""

from __future__ import annotations

import importlib

# Each public name → the module that defines it.
_EXPORTS = {
    "Ace": "veil.anonymize.ace", "AlphaBeta": "veil.anonymize.alphabeta",
    "AlphaBetaView": "veil.anonymize.alphabeta", "FullDomain": "veil.anonymize.fulldomain",
    "InfeasibleError": "veil.anonymize.fulldomain", "SearchResult": "veil.anonymize.fulldomain",
    "MDAV": "veil.anonymize.mdav", "MDAVResult": "veil.anonymize.mdav", "Mondrian": "veil.anonymize.mondrian",
    "Release": "veil.anonymize.release",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'veil.anonymize' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
