"""Population uniqueness as a privacy model: the estimated share of the population's records that
are unique on the quasi-identifiers stays at most a threshold (ARX's "population uniqueness"
criterion, with the estimators of :mod:`veil.risk.uniqueness`).

**A table-level criterion.** The figure belongs to the whole released table (it is estimated from
the frequency of frequencies of all its classes), not to a class. To let an anonymization
suppress records until it holds, the model judges classes by *suppression by size*: let ``t(s)`` be the estimate on the table left after
suppressing every class of at most ``s`` records (the population size unchanged: the records
kept are still a sample of it). The classes that fail are those of at most ``s*`` records, ``s*``
the smallest ``s`` with ``t(s)`` within the threshold. Since every estimator gives 0 on a table
without sample uniques (a class of ``f ≥ 2`` sample records has ``F ≥ 2`` population records, so
none of its released records is a population unique), ``t(1) = 0`` and ``s*`` is 0 or 1: either
the table meets the threshold as it is, or its sample uniques are suppressed. Suppressing them
leaves a table that meets it, which ``veil check`` confirms on the release (its suppressed
records are exempt from the models, as in ARX).

A class's level is its share of that figure: a sample unique's is the table's estimate ``t(0)``,
a larger class's is 0 (it holds no population unique). So a class passes exactly when its level
meets the threshold, the table's level (the largest) is ``t(0)``, the estimate on the table as
given, and the levels are the same without a threshold. An estimate that is not available is
``NaN`` and its sample uniques fail.

**Not monotonic** (``monotonic = monotonic_with_suppression = False``). Merging classes by
generalization can raise the estimate. For Zayatz's: with classes of sizes
``1, 2, 2`` sampled from ``N = 100`` (``n = 5``) the estimate is ``19.8/479 = 4.13 %``; merging the two
classes of 2 into one of 4 gives ``4.42 %``, because a population class of 4 is less likely than two of 2 to
leave exactly one record in the sample, so a sample unique looks more like a population unique.
At a threshold of 4.2 % the first table passes with nothing suppressed and the second fails with
its unique record suppressed, so the records in failing classes can grow along a generalization
too. Lattice searches therefore evaluate the model on every node instead of pruning with it.

**With FullDomain and a suppression limit** the search accepts a node when the table as
generalized meets the threshold, or when its sample uniques fit within the limit (they are then
suppressed, and the node is scored with them suppressed): the release it returns meets the
threshold on its kept records. Without suppression (limit 0) a node passes only when the table
as generalized meets the threshold.

**With the other algorithms.** Mondrian, MDAV and Ace judge one partition or group at a time (a
split, a merge, a bucket is kept when *it* passes), which a figure of the whole table cannot
tell them: ``table_level = True`` makes them refuse the model in one sentence (the anonymizers
call ``refuse_table_models``). Without the refusal, Mondrian's repair loop (which merges each
failing class into an ancestor partition that passed on its own) did not end on Adult's first
2,000 rows.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from veil.classes import EquivalenceClasses, SensitiveCounts
from veil.models.base import TOLERANCE, ModelResult, PrivacyModel, require
from veil.risk.uniqueness import ESTIMATORS, UniquenessEstimate, population_uniqueness


class PopulationUniqueness(PrivacyModel):
    """The estimated share of population uniques is at most ``share`` (ARX's population
    uniqueness criterion; estimators Pitman, Zayatz, SNB and Dankar et al.'s rule, see
    :func:`veil.risk.uniqueness.population_uniqueness`).

    Args:
        share: the largest estimated share of the population's records that may be unique, in
            [0, 1], or ``None`` to measure only.
        population_size: ``N``, the records of the population the table is a sample of; a whole
            number at least the table's records (checked when the model is evaluated).
        estimator: ``"dankar"`` (default), ``"pitman"``, ``"zayatz"`` or ``"snb"``.

    An estimate that is not available (the estimator's equations have no root) fails the
    threshold: it is never taken for "no risk".

    Raises:
        ParameterError: ``share`` outside [0, 1], a population size that is not a positive whole
            number, or an unknown estimator; on evaluation, a population smaller than the table.
    """

    name = "population uniqueness"
    key = "population_uniqueness"
    higher_is_better = False
    needs_sensitive = False
    monotonic = False
    monotonic_with_suppression = False
    #: The verdict is the whole table's, enforced by suppressing its smallest classes.
    table_level = True

    def __init__(self, share: float | None = None, population_size: int | None = None,
                 estimator: str = "dankar"):
        require(share is None or (isinstance(share, numbers.Real) and not isinstance(share, bool)
                                  and 0 <= share <= 1),
                f"the population uniqueness share must be a number in [0, 1], not {share!r}.")
        whole = (isinstance(population_size, numbers.Real) and not isinstance(population_size, bool)
                 and math.isfinite(population_size) and float(population_size).is_integer()
                 and population_size >= 1)
        require(whole, f"the population size must be a positive whole number of records, not {population_size!r}.")
        require(estimator in ESTIMATORS, f"the population uniqueness estimator must be one of "
                                         f"{', '.join(ESTIMATORS)}, not {estimator!r}.")
        super().__init__(share)
        self.population_size = int(population_size)
        self.estimator = estimator

    def __repr__(self) -> str:
        return (f"PopulationUniqueness(share={self.threshold}, population_size={self.population_size}, "
                f"estimator={self.estimator!r})")

    def estimate(self, classes: EquivalenceClasses) -> UniquenessEstimate:
        """The estimate on ``classes`` as given (``t(0)``).

        Raises:
            ParameterError: the population is smaller than the table.
        """
        return population_uniqueness(np.asarray(classes.sizes), self.population_size, self.estimator)

    def class_levels(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        sizes = np.asarray(classes.sizes)
        return np.where(sizes == 1, self._level(sizes), 0.0)

    def evaluate(self, classes: EquivalenceClasses) -> ModelResult:
        """Estimate the table's population uniqueness; when it exceeds the threshold (or is not
        available) its sample uniques fail (see the module's documentation).

        Raises:
            ParameterError: the population is smaller than the table.
        """
        sizes = np.asarray(classes.sizes)
        whole = self._level(sizes)
        unique = sizes == 1
        levels = np.where(unique, whole, 0.0)
        passed = None
        if self.threshold is not None:
            passed = ~unique if not self._meets(whole) else np.ones(len(sizes), dtype=bool)
        return ModelResult(self.name, self.key, whole, self.threshold,
                           None if passed is None else bool(passed.all()), levels, passed, False)

    def _level(self, sizes: np.ndarray) -> float:
        """The estimate on the table whose classes are ``sizes``: NaN when not available."""
        found = population_uniqueness(sizes, self.population_size, self.estimator)
        return found.population_uniques if found.converged else float("nan")

    def _meets(self, level: float) -> bool:
        return not math.isnan(level) and level <= self.threshold + TOLERANCE * max(abs(self.threshold), 1.0)
