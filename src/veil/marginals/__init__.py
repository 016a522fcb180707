"""Anonymized marginals (Kifer and Gehrke, "Injecting utility into anonymized datasets", SIGMOD
2006): contingency tables over a few generalized attributes, published beside (or instead of) an
anonymized table, measured by the KL-divergence of the data from their maximum-entropy estimate
and guarded by privacy models of the whole collection.

* :mod:`~veil.marginals.contingency`: contingency tables, the marginals themselves.
* :mod:`~veil.marginals.decomposable`: implied marginals, decomposable collections, junction trees.
* :mod:`~veil.marginals.maxent`: the maximum-entropy estimate of a collection and its KL-divergence.
* :mod:`~veil.marginals.ipf`: iterative proportional fitting, for collections that are not decomposable.
* :mod:`~veil.marginals.collection`: marginals counted from the class core, and collections.
* :mod:`~veil.marginals.privacy`: k-link, k-combinatorial and MaxEnt ℓ-diversity.
* :mod:`~veil.marginals.search`: the greedy choice of marginals.
* :mod:`~veil.marginals.release`: checking and publishing a collection.
"""

from veil.marginals.collection import MarginalCollection, MarginalCounter, MarginalSpec
from veil.marginals.privacy import (CellFailure, CollectionResult, KCombinatorialAnonymity, KLinkAnonymity,
                                    MaxEntLDiversity)
from veil.marginals.release import MarginalRelease
from veil.marginals.search import GreedyMarginalSearch, SearchStep, optimal_base

__all__ = ["CellFailure", "CollectionResult", "GreedyMarginalSearch", "KCombinatorialAnonymity", "KLinkAnonymity",
           "MarginalCollection", "MarginalCounter", "MarginalRelease", "MarginalSpec", "MaxEntLDiversity",
           "SearchStep", "optimal_base"]
