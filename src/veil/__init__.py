"""veil: privacy-preserving data publishing.

Anonymize a table, release statistics under differential privacy, and attack your own release
the way an adversary who knows the algorithm would.
"""

from veil.check import CheckReport, check
from veil.classes import EquivalenceClasses
from veil.data import Dataset, Hierarchy, builders, load_adult
from veil.errors import (ColumnError, ConfigError, DataError, HierarchyError, InfeasibleError, ParameterError,
                         VeilError)
from veil.models import (AlphaKAnonymity, BetaLikeness, DeltaDisclosure, DistinctLDiversity,
                         EntropyLDiversity, KAnonymity, ModelResult, PrivacyModel, RecursiveCLDiversity,
                         TCloseness)
from veil.risk import ReidentificationRisk, reidentification_risk

__version__ = "0.1.0"

__all__ = [
    "AlphaKAnonymity", "BetaLikeness", "CheckReport", "ColumnError", "ConfigError", "DataError", "Dataset",
    "DeltaDisclosure", "DistinctLDiversity", "EntropyLDiversity", "EquivalenceClasses", "Hierarchy",
    "HierarchyError", "InfeasibleError", "KAnonymity", "ModelResult", "ParameterError", "PrivacyModel",
    "RecursiveCLDiversity", "ReidentificationRisk", "TCloseness", "VeilError", "builders", "check",
    "load_adult", "reidentification_risk",
]
