"""k-anonymity and (α,k)-anonymity."""

from __future__ import annotations

import numpy as np

from veil.classes import EquivalenceClasses, SensitiveCounts
from veil.models.base import PrivacyModel, ceil_threshold, require


class KAnonymity(PrivacyModel):
    """k-anonymity (Samarati and Sweeney 1998; Sweeney 2002).

    Every equivalence class holds at least ``k`` records. A class's level is its size; the
    table's level is the size of its smallest class.

    Args:
        k: the threshold, or ``None`` to measure only.

    Raises:
        ParameterError: ``k`` < 1.
    """

    name = "k-anonymity"
    key = "k"
    needs_sensitive = False
    monotonic_with_suppression = True  # a merged class is at least as large as its parts

    def __init__(self, k: int | None = None):
        require(k is None or k >= 1, f"k must be at least 1, not {k}.")
        super().__init__(k)

    def class_levels(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        return classes.sizes

    def _failing_on(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        return ~self.class_passed(classes, classes.sizes)

    def _smallest_on(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> int:
        return max(ceil_threshold(self), 1)


class AlphaKAnonymity(PrivacyModel):
    """(α,k)-anonymity (Wong, Li, Fu and Wang, KDD 2006).

    Every class holds at least ``k`` records and no sensitive value makes up more than a share
    ``α`` of it. The measured level is α: the largest share of one value in a class. With
    ``value``, only that value's share is bounded (the paper's simple (α,k)-anonymity, which
    protects one sensitive value, e.g. ``Cancer = yes``, and lets a class be all ``no``).

    Args:
        alpha: the largest share allowed, in (0, 1], or ``None`` to measure only.
        k: the smallest class size allowed (``None``: no size condition).
        sensitive: the sensitive column (``None``: every one).
        value: the one sensitive value to protect (as text), or ``None`` for every value.

    Raises:
        ParameterError: ``alpha`` outside (0, 1] or ``k`` < 1.
    """

    name = "(α,k)-anonymity"
    key = "alpha"
    higher_is_better = False

    def __init__(self, alpha: float | None = None, k: int | None = None, sensitive: str | None = None,
                 value: str | None = None):
        require(alpha is None or 0 < alpha <= 1, f"α must be in (0, 1], not {alpha}.")
        require(k is None or k >= 1, f"k must be at least 1, not {k}.")
        super().__init__(alpha, sensitive)
        self.k = k
        self.value = None if value is None else str(value)

    def class_levels(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        if self.value is None:
            return counts.counts.max(axis=1) / classes.sizes
        held = np.flatnonzero(np.asarray(counts.column.labels, dtype=object).astype(str) == self.value)
        if not len(held):
            return np.zeros(len(classes.sizes))
        return counts.counts[:, held[0]] / classes.sizes

    def class_passed(self, classes: EquivalenceClasses, levels: np.ndarray) -> np.ndarray | None:
        passed = super().class_passed(classes, levels)
        if self.k is None:
            return passed
        big_enough = classes.sizes >= self.k
        return big_enough if passed is None else passed & big_enough
