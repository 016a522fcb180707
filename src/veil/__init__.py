"""veil: privacy-preserving data publishing.

Anonymize a table, release statistics under differential privacy, and attack your own release
the way an adversary who knows the algorithm would.

The names below are loaded on first use, so that ``import veil`` (and every ``veil`` command,
which imports it first) pays only for the modules it actually uses.
"""

from __future__ import annotations

import importlib
import sys
import types

__version__ = "0.1.0"

# Each public name → the module that defines it.
_EXPORTS = {
    "CheckReport": "veil.check", "check": "veil.check",
    "EquivalenceClasses": "veil.classes",
    "Dataset": "veil.data", "Hierarchy": "veil.data", "builders": "veil.data", "load_adult": "veil.data",
    "ColumnError": "veil.errors", "ConfigError": "veil.errors", "DataError": "veil.errors",
    "HierarchyError": "veil.errors", "InfeasibleError": "veil.errors", "ParameterError": "veil.errors",
    "VeilError": "veil.errors",
    "AlphaKAnonymity": "veil.models", "BetaLikeness": "veil.models", "DeltaDisclosure": "veil.models",
    "DistinctLDiversity": "veil.models", "EntropyLDiversity": "veil.models", "KAnonymity": "veil.models",
    "ModelResult": "veil.models", "PrivacyModel": "veil.models", "RecursiveCLDiversity": "veil.models",
    "TCloseness": "veil.models",
    "ReidentificationRisk": "veil.risk", "reidentification_risk": "veil.risk",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'veil' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


class _Package(types.ModuleType):
    """The ``veil`` module, whose ``check`` stays the function when the submodule is imported.

    Importing a submodule binds it as an attribute of its package; ``veil.check`` names both the
    module and the function it defines, and has always meant the function.
    """

    def __setattr__(self, name: str, value) -> None:
        if name == "check" and isinstance(value, types.ModuleType):
            value = value.check
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
