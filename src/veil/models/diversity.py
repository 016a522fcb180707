"""The ℓ-diversity family (Machanavajjhala, Kifer, Gehrke and Venkitasubramaniam, TKDD 2007)."""

from __future__ import annotations

import math

import numpy as np

from veil.classes import EquivalenceClasses, SensitiveCounts
from veil.models.base import NO_CLASS_PASSES, TOLERANCE, PrivacyModel, ceil_threshold, require


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

    def _failing_on(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        return ~self.class_passed(classes, self.class_levels(classes, counts))

    def _smallest_on(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> int:
        """ℓ distinct values need ℓ records."""
        return max(ceil_threshold(self), 1)


# Entropies this close to a threshold's cut are measured again exactly (the table's formula
# differs from class_entropy's by a few units in the last place, about 1e-15).
_NEAR = 1e-10
# The largest count whose c·ln c is tabulated (8 MiB); larger counts are computed.
_TABLE_LIMIT = 1 << 20
_TABLE: list[np.ndarray] = [np.zeros(1)]


def _xlogx(values: np.ndarray) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    return x * np.log(np.where(x > 0, x, 1.0))


def xlogx_table(top: int) -> np.ndarray | None:
    """``c·ln c`` for ``c = 0 .. top`` at least (0 for c = 0), or ``None`` above the table's limit."""
    if top > _TABLE_LIMIT:
        return None
    if len(_TABLE[0]) <= top:
        size = min(max(top + 1, 2 * len(_TABLE[0])), _TABLE_LIMIT + 1)
        table = _xlogx(np.arange(size))
        table.setflags(write=False)
        _TABLE[0] = table
    return _TABLE[0]


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

    def _failing_on(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        """The verdict of :meth:`class_passed` from H = ln s − Σ c·ln c / s, with c·ln c read
        from a table. ``None`` should any class lie within :data:`_NEAR` of the cut."""
        matrix = counts.counts
        cut = np.log(self.threshold) - TOLERANCE
        if matrix.dtype.kind not in "iu":
            return ~self.class_passed(classes, self.class_levels(classes, counts))
        ones = np.ones(matrix.shape[1], dtype=matrix.dtype)
        safe = np.maximum(matrix @ ones, 1)
        table = xlogx_table(int(matrix.max()) if matrix.size else 0)
        terms = table[matrix] if table is not None else _xlogx(matrix)
        entropy = np.log(safe) - (terms @ ones.astype(float)) / safe
        if np.any(np.abs(entropy - cut) <= _NEAR):
            return None
        return entropy < cut

    def _smallest_on(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> int:
        """A class of s records spread over at most min(s, values) values has an entropy of at
        most ln min(s, values), so it needs ln s to reach the cut."""
        cut = np.log(self.threshold) - TOLERANCE - _NEAR
        if np.log(max(counts.counts.shape[1], 1)) < cut:
            return NO_CLASS_PASSES
        size = max(int(np.floor(np.exp(cut))) - 1, 1)
        while np.log(size) < cut:
            size += 1
        return size


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

    def _failing_on(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        """:meth:`class_levels` ≥ ℓ tested at ℓ alone: the condition holds for a prefix of ℓ (its
        bound, computed as there, only shrinks as ℓ grows), so a class reaches ℓ exactly when it
        holds at ℓ = ⌈threshold⌉."""
        slack = TOLERANCE * max(abs(self.threshold), 1.0)
        need = int(np.ceil(self.threshold - slack))
        matrix = counts.counts
        n, m = matrix.shape
        if need <= 0:
            return np.zeros(n, dtype=bool)
        if need > m:
            return np.ones(n, dtype=bool)
        ranked = np.sort(matrix, axis=1)
        # r_ℓ + … + r_m: the m − ℓ + 1 smallest counts, an exact integer as the cumulative sum gives it.
        tail = ranked[:, :m - need + 1].sum(axis=1)
        bound = self.c * tail
        holds = ranked[:, -1] < bound - TOLERANCE * np.maximum(bound, 1.0)
        return ~holds

    def _smallest_on(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> int:
        """With fewer than ℓ records a class has fewer than ℓ values, its tail sum is 0 and the
        condition fails."""
        need = ceil_threshold(self)
        if need > counts.counts.shape[1]:
            return NO_CLASS_PASSES
        return max(need, 1)
