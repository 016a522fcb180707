"""Basic and enhanced β-likeness (Cao and Karras, "Publishing microdata with a robust privacy
guarantee", VLDB 2012)."""

from __future__ import annotations

import numpy as np

from veil.classes import EquivalenceClasses, SensitiveCounts
from veil.models.base import PrivacyModel, require


def relative_gains(counts: SensitiveCounts) -> tuple[np.ndarray, np.ndarray]:
    """(p(class, s) − p(table, s)) / p(table, s) for every class and value, and p(table, ·)."""
    p, q = counts.class_distribution(), counts.table_distribution()
    gain = np.divide(p - q, q, out=np.zeros_like(p), where=q > 0)
    return gain, q


class BetaLikeness(PrivacyModel):
    """β-likeness: no class raises the frequency of a sensitive value by more than a factor β.

    Basic β-likeness requires (p − q)/q ≤ β for every value whose class frequency p exceeds its
    table frequency q. Enhanced β-likeness requires (p − q)/q ≤ min(β, −ln q), which also limits
    the gain on frequent values. A class's level is the smallest β it satisfies; for the enhanced
    model that is infinite when some gain exceeds −ln q, since no β then helps. (pyCANON reports
    max(min(β_basic, −ln q)) over values for the enhanced model, which is not this definition.)

    Args:
        beta: the threshold (> 0), or ``None`` to measure only.
        enhanced: the enhanced model instead of the basic one.
        sensitive: the sensitive column (``None``: every one).

    Raises:
        ParameterError: ``beta`` ≤ 0.
    """

    higher_is_better = False

    def __init__(self, beta: float | None = None, enhanced: bool = False, sensitive: str | None = None):
        require(beta is None or beta > 0, f"β must be greater than 0, not {beta}.")
        super().__init__(beta, sensitive)
        self.enhanced = enhanced
        self.name = "enhanced β-likeness" if enhanced else "basic β-likeness"
        self.key = "beta_enhanced" if enhanced else "beta_basic"

    def class_levels(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        gain, q = relative_gains(counts)
        levels = np.maximum(gain.max(axis=1), 0.0)
        if self.enhanced:
            with np.errstate(divide="ignore"):
                cap = -np.log(q)
            over_cap = (gain > cap[None, :]) & (gain > 0)
            levels = np.where(over_cap.any(axis=1), np.inf, levels)
        return levels
