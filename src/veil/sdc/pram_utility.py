"""The utility of a PRAM release: how far post-randomization moved a column's frequencies, and how
well the unbiased estimator T̂ = (Pᵀ)⁻¹ T* recovers them (Gouweleeuw, Kooiman, Willenborg and de
Wolf 1998; see :mod:`veil.sdc.pram`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.errors import ParameterError
from veil.sdc.pram import PramResult


@dataclass(frozen=True)
class PramUtility:
    """How far PRAM moved a column's frequencies, and how well the estimator recovers them.

    Attributes:
        column, categories: as in :class:`PramResult`.
        original: ``T``, records per original category.
        released: ``T*``, records per released category.
        estimated: ``T̂ = (Pᵀ)⁻¹ T*``, or ``None`` when the matrix is singular.
        standard_error: per category, the standard deviation of ``T̂`` over the draws given the
            table, or ``None`` when the matrix is singular.
        changed: the share of (non-missing) records released as another category.
        expected_changed: its expectation, ``1 − Σ_a p_a P_aa``.
        released_distance: total variation distance between the released and the original
            frequencies, ``½ Σ_a |T*_a − T_a| / n``.
        estimate_distance: the same between ``T̂`` and ``T`` (``None`` when singular).
    """

    column: str
    categories: tuple[str, ...]
    original: np.ndarray
    released: np.ndarray
    estimated: np.ndarray | None
    standard_error: np.ndarray | None
    changed: float
    expected_changed: float
    released_distance: float
    estimate_distance: float | None

    def rows(self) -> list[dict]:
        """One row per category (for a report's utility table)."""
        return [{"category": category, "original": int(self.original[j]), "released": int(self.released[j]),
                 "estimated": None if self.estimated is None else float(self.estimated[j]),
                 "standard_error": None if self.standard_error is None else float(self.standard_error[j])}
                for j, category in enumerate(self.categories)]


def pram_utility(result: PramResult) -> PramUtility:
    """The frequencies before and after PRAM and the estimator's error (see :class:`PramUtility`)."""
    T, released = result.original_counts, result.released_counts
    n = max(int(T.sum()), 1)
    present = result.original >= 0
    try:
        estimated = result.estimate()
        error = np.sqrt(np.clip(np.diag(result.covariance()), 0, None))
    except ParameterError:
        estimated = error = None
    return PramUtility(
        column=result.column, categories=result.categories, original=T, released=released, estimated=estimated,
        standard_error=error, changed=float(np.mean(result.released[present] != result.original[present]))
        if present.any() else 0.0,
        expected_changed=1.0 - result.disclosure().kept,
        released_distance=float(np.abs(released - T).sum() / (2 * n)),
        estimate_distance=None if estimated is None else float(np.abs(estimated - T).sum() / (2 * n)))
