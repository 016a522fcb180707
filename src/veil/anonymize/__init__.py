"""Anonymization algorithms; each returns a :class:`Release`."""

from veil.anonymize.fulldomain import FullDomain, InfeasibleError, SearchResult
from veil.anonymize.release import Release

__all__ = ["FullDomain", "InfeasibleError", "Release", "SearchResult"]
