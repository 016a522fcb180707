"""The ℓ-diversity family (Machanavajjhala, Kifer, Gehrke and Venkitasubramaniam, TKDD 2007)."""

from __future__ import annotations

import math

import numpy as np

from veil.classes import EquivalenceClasses, SensitiveCounts
from veil.models.base import TOLERANCE, PrivacyModel, require


class DistinctLDiversity(PrivacyModel):
    """Distinct ℓ-diversity: every class holds at least ℓ distinct sensitive values.

    Args:
        l: the threshold (≥ 1), or ``None`` to measure only.
        sensitive: the sensitive column (``None``: every one).

    Raises:
        ParameterError: ``l`` < 1.
    """

    name = "distinct ℓ-diversity"
    key = "l_distinct"
    monotonic_with_suppression = True  # a merged class holds every value of its parts

    def __init__(self, l: float | None = None, sensitive: str | None = None):
        require(l is None or l >= 1, f"ℓ must be at least 1, not {l}.")
        super().__init__(l, sensitive)

    def class_levels(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        return np.count_nonzero(counts.counts, axis=1)


def class_entropy(counts: np.ndarray) -> np.ndarray:
    """Shannon entropy (natural log) of each row of a count matrix; 0·log 0 = 0."""
    sizes = counts.sum(axis=1, keepdims=True)
    p = counts / np.maximum(sizes, 1)
    logp = np.log(p, where=p > 0, out=np.zeros_like(p))
    return -(p * logp).sum(axis=1)


class EntropyLDiversity(PrivacyModel):
    """Entropy ℓ-diversity: every class has −Σ p(s) log p(s) ≥ log ℓ.

    A class's level is exp(entropy), the largest ℓ it satisfies (a real number; pyCANON
    truncates it to an integer).

    Args:
        l: the threshold (≥ 1), or ``None`` to measure only.
        sensitive: the sensitive column (``None``: every one).

    Raises:
        ParameterError: ``l`` < 1.
    """

    name = "entropy ℓ-diversity"
    key = "l_entropy"

    def __init__(self, l: float | None = None, sensitive: str | None = None):
        require(l is None or l >= 1, f"ℓ must be at least 1, not {l}.")
        super().__init__(l, sensitive)

    def class_levels(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        return np.exp(class_entropy(counts.counts))

    def class_passed(self, classes: EquivalenceClasses, levels: np.ndarray) -> np.ndarray | None:
        if self.threshold is None:
            return None
        # Compare entropies, not their exponentials, so that ℓ = e^H is judged without rounding.
        return np.log(levels) >= np.log(self.threshold) - TOLERANCE


class RecursiveCLDiversity(PrivacyModel):
    """Recursive (c,ℓ)-diversity.

    With a class's value counts sorted r₁ ≥ r₂ ≥ … ≥ r_m, the class is (c,ℓ)-diverse when
    r₁ < c·(r_ℓ + r_{ℓ+1} + … + r_m). The tail sum shrinks as ℓ grows, so a class's level is the
    largest ℓ it satisfies for the given c (0 when even ℓ = 1 fails, which needs c ≤ 1).

    Args:
        c: the constant c (> 0).
        l: the threshold ℓ (≥ 1), or ``None`` to measure only.
        sensitive: the sensitive column (``None``: every one).

    Raises:
        ParameterError: ``c`` ≤ 0 or ``l`` < 1.
    """

    name = "recursive (c,ℓ)-diversity"
    key = "c_l_recursive"

    def __init__(self, c: float = 2.0, l: float | None = None, sensitive: str | None = None):
        require(math.isfinite(c) and c > 0, f"c must be greater than 0 and finite, not {c}.")
        require(l is None or l >= 1, f"ℓ must be at least 1, not {l}.")
        super().__init__(l, sensitive)
        self.c = float(c)

    def class_levels(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        ranked = -np.sort(-counts.counts, axis=1)
        # tails[:, i] = r_{i+1} + … + r_m, the tail sum for ℓ = i + 1.
        tails = np.cumsum(ranked[:, ::-1], axis=1)[:, ::-1]
        bound = self.c * tails
        # Strict inequality with a relative tolerance: 2.2·25 is 55.00000000000001 in floats.
        holds = ranked[:, :1] < bound - TOLERANCE * np.maximum(bound, 1.0)
        # The condition holds for a prefix ℓ = 1, 2, …, so counting where it holds gives the largest ℓ.
        return holds.sum(axis=1)
