"""Anonymization algorithms; each returns a :class:`Release` (the αβ algorithm an :class:`AlphaBetaView`)."""

from veil.anonymize.ace import Ace
from veil.anonymize.alphabeta import AlphaBeta, AlphaBetaView
from veil.anonymize.fulldomain import FullDomain, InfeasibleError, SearchResult
from veil.anonymize.mdav import MDAV, MDAVResult
from veil.anonymize.mondrian import Mondrian
from veil.anonymize.release import Release

__all__ = ["Ace", "AlphaBeta", "AlphaBetaView", "FullDomain", "InfeasibleError", "MDAV", "MDAVResult", "Mondrian",
           "Release", "SearchResult"]
