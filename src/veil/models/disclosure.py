"""δ-disclosure privacy (Brickell and Shmatikov, "The cost of privacy", KDD 2008)."""

from __future__ import annotations

import numpy as np

from veil.classes import EquivalenceClasses, SensitiveCounts
from veil.models.base import TOLERANCE, PrivacyModel, require, smallest_covering

# Ratios this close (relatively) to e^±δ are judged by their logarithm, as the level is.
_NEAR = 1e-9


def log_ratios(counts: SensitiveCounts) -> np.ndarray:
    """|log(p(class, s) / p(table, s))| for every class and value; NaN where s is not in the class."""
    p, q = counts.class_distribution(), counts.table_distribution()
    ratio = np.divide(p, q, out=np.zeros_like(p), where=q > 0)
    out = np.full(p.shape, np.nan)
    present = p > 0
    out[present] = np.abs(np.log(ratio[present]))
    return out


class DeltaDisclosure(PrivacyModel):
    """δ-disclosure privacy: |log(p(class, s) / p(table, s))| < δ for every value s in the class.

    Values absent from a class are not constrained, as in the issue's definition and pyCANON; the
    paper's reading over every value of the table would make any class that misses a value
    infinitely disclosive. A class's level is its largest |log ratio|.

    Args:
        delta: the threshold (> 0), or ``None`` to measure only.
        sensitive: the sensitive column (``None``: every one).

    Raises:
        ParameterError: ``delta`` ≤ 0.
    """

    name = "δ-disclosure privacy"
    key = "delta"
    higher_is_better = False
    strict = True
    # Merging can dilute a value present in only one part below e^-δ of its table share.
    monotonic = False

    def __init__(self, delta: float | None = None, sensitive: str | None = None):
        require(delta is None or delta > 0, f"δ must be greater than 0, not {delta}.")
        super().__init__(delta, sensitive)

    def class_levels(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        return np.nanmax(log_ratios(counts), axis=1)

    def _failing_on(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray | None:
        """The verdict of :meth:`class_passed` (every |log ratio| below δ, up to the tolerance)
        from the ratios themselves against e^±δ, without a logarithm; ``None`` should a ratio lie
        within :data:`_NEAR` of those bounds."""
        p, q = counts.class_distribution(), counts.table_distribution()
        ratio = np.divide(p, q, out=np.zeros_like(p), where=q > 0)
        cut = self.threshold - TOLERANCE * max(abs(self.threshold), 1.0)
        low, high = np.exp(-cut), np.exp(cut)
        present = p > 0
        near = present & (((ratio > low * (1 - _NEAR)) & (ratio < low * (1 + _NEAR)))
                          | ((ratio > high * (1 - _NEAR)) & (ratio < high * (1 + _NEAR))))
        if near.any():
            return None
        return (present & ((ratio <= low) | (ratio >= high))).any(axis=1)

    def _smallest_on(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> int:
        """A class whose values hold a share Q of the table has a value whose ratio p/q is at
        least 1/Q (the shares p sum to 1 over them), so it needs ln(1/Q) below δ; a class of s
        records holds at most the s largest shares."""
        cut = self.threshold - TOLERANCE * max(abs(self.threshold), 1.0) + _NEAR
        return smallest_covering(counts.table_distribution(), lambda share: share > 0 and -np.log(share) < cut)
