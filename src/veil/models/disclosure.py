"""δ-disclosure privacy (Brickell and Shmatikov, "The cost of privacy", KDD 2008)."""

from __future__ import annotations

import numpy as np

from veil.classes import EquivalenceClasses, SensitiveCounts
from veil.models.base import PrivacyModel, require


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
