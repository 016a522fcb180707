"""The αβ algorithm of Rastogi, Suciu and Hong (VLDB 2007): a randomized view with (d,γ)-privacy
and an unbiased estimator for every counting query.

* :mod:`.parameters`: α and β per Theorem 4.3, the usefulness bound (Theorem 4.4), Theorem 3.3;
* :mod:`.domain`: the public domain D, never enumerated;
* :mod:`.sampling`: exact coins from a secure (or seeded) source;
* :mod:`.publish`: :class:`AlphaBeta`, the algorithm;
* :mod:`.view`: :class:`AlphaBetaView`, the published view and its estimator;
* :mod:`.queries`: counting queries and how they are counted;
* :mod:`.usefulness`: empirical (ρ,ε)-usefulness over a workload.
"""

from veil.anonymize.alphabeta.domain import AttributeDomain, Domain
from veil.anonymize.alphabeta.parameters import (AlphaBetaParameters, choose_parameters, parameters_for_usefulness,
                                                 prior_bound)
from veil.anonymize.alphabeta.publish import AlphaBeta
from veil.anonymize.alphabeta.queries import Between, CountingQuery, random_queries, read_queries
from veil.anonymize.alphabeta.sampling import Coins
from veil.anonymize.alphabeta.usefulness import Usefulness, usefulness
from veil.anonymize.alphabeta.view import AlphaBetaView, Answers, Estimate

__all__ = ["AlphaBeta", "AlphaBetaParameters", "AlphaBetaView", "Answers", "AttributeDomain", "Between", "Coins",
           "CountingQuery", "Domain", "Estimate", "Usefulness", "choose_parameters", "parameters_for_usefulness",
           "prior_bound", "random_queries", "read_queries", "usefulness"]
