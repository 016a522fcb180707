"""Privacy models, each measured on equivalence classes and checked against a threshold."""

from veil.models.anonymity import AlphaKAnonymity, KAnonymity
from veil.models.base import ModelResult, PrivacyModel
from veil.models.closeness import TCloseness
from veil.models.disclosure import DeltaDisclosure
from veil.models.diversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity
from veil.models.likeness import BetaLikeness
from veil.models.presence import DeltaPresence, KMap
from veil.models.sequential import JoinKAnonymity

__all__ = [
    "AlphaKAnonymity",
    "BetaLikeness",
    "DeltaDisclosure",
    "DeltaPresence",
    "DistinctLDiversity",
    "EntropyLDiversity",
    "JoinKAnonymity",
    "KAnonymity",
    "KMap",
    "ModelResult",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "TCloseness",
]
from veil.models.risk import AverageRisk, RecordsAtRisk
from veil.models.uniqueness import PopulationUniqueness

__all__ += ["PopulationUniqueness"]
__all__ += ["AverageRisk", "RecordsAtRisk"]
