"""(ρ,ε)-usefulness of an αβ view, measured over a workload of counting queries.

Definition 2.5 of Rastogi, Suciu and Hong (VLDB 2007): an algorithm is (ρ,ε)-useful when, for every
counting query Q, ``Pr[|Q(I) − Q̃(V)| ≥ ρ√n] ≤ ε``. Over a workload, the share of queries whose
estimate misses by ``ρ√n`` or more is the empirical ε, set beside the bound of Theorem 4.4 in the
form :meth:`.parameters.AlphaBetaParameters.usefulness_bound` gives it (Chebyshev on the largest
variance). The empirical share reads one view; the bound holds for each query over the coins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from veil.anonymize.alphabeta.queries import CountingQuery, count_matching
from veil.anonymize.alphabeta.view import AlphaBetaView
from veil.errors import ParameterError

__all__ = ["Usefulness", "usefulness"]


@dataclass(frozen=True)
class Usefulness:
    """The estimates' errors over a workload.

    Attributes:
        rho: ρ. n: |I|. threshold: ρ√n.
        errors: Q̃(V) − Q(I) per query. true_counts: Q(I) per query.
        share: the share of queries with ``|error| ≥ ρ√n`` (the empirical ε).
        bound: Theorem 4.4's ε for this ρ (Chebyshev on the largest variance).
    """

    rho: float
    n: int
    errors: np.ndarray
    true_counts: np.ndarray
    share: float
    bound: float

    @property
    def threshold(self) -> float:
        return self.rho * math.sqrt(self.n)

    @property
    def mean_absolute_error(self) -> float:
        return float(np.mean(np.abs(self.errors))) if len(self.errors) else 0.0

    @property
    def rms_error(self) -> float:
        return float(np.sqrt(np.mean(self.errors ** 2))) if len(self.errors) else 0.0


def usefulness(view: AlphaBetaView, instance: np.ndarray, queries: Sequence[CountingQuery | dict],
               rho: float) -> Usefulness:
    """Measure (ρ,ε)-usefulness of ``view`` over ``queries``.

    Args:
        view: the published view.
        instance: the sorted distinct tuple ids of I (:attr:`AlphaBeta.instance_`).
        queries: the workload.
        rho: ρ > 0.

    Raises:
        ParameterError: ρ not positive, or a query the view's domain cannot answer.
        ColumnError: a query on a column the view does not have.
    """
    if not (rho > 0 and math.isfinite(rho)):
        raise ParameterError(f"rho must be a positive number, not {rho}.")
    resolved = view.resolve(queries)
    estimate, _ = view.estimates(count_matching(view.codes, resolved), resolved.domain_counts)
    truth = count_matching(view.domain.decode(np.asarray(instance, dtype=np.int64)), resolved)
    n = len(instance)
    errors = estimate - truth
    share = float(np.mean(np.abs(errors) >= rho * math.sqrt(n))) if len(errors) else 0.0
    return Usefulness(float(rho), n, errors, truth, share, view.parameters.usefulness_bound(rho, max(n, 1)))
