"""Anonymization algorithms; each returns a :class:`Release`."""

from veil.anonymize.ace import Ace
from veil.anonymize.fulldomain import FullDomain, InfeasibleError, SearchResult
from veil.anonymize.mdav import MDAV, MDAVResult
from veil.anonymize.mondrian import Mondrian
from veil.anonymize.release import Release

__all__ = ["Ace", "FullDomain", "InfeasibleError", "MDAV", "MDAVResult", "Mondrian", "Release", "SearchResult"]
