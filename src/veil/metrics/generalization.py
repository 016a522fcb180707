"""Metrics that read only how far each quasi-identifier is generalized: height and precision."""

from __future__ import annotations

import numpy as np

from veil.classes import EquivalenceClasses
from veil.metrics.base import UtilityMetric, records, require_levels, split_sizes


class GeneralizationHeight(UtilityMetric):
    """Generalization height: the sum over quasi-identifiers of the hierarchy level used.

    ``height = Σ_j level_j`` (the node's height in the generalization lattice, as in Samarati's
    and Sweeney's minimal-generalization searches and LeFevre et al.'s Incognito). Suppression
    does not change it. Lower is better.

    Raises:
        ParameterError: a quasi-identifier's cells do not come from a hierarchy level.
    """

    name = "generalization height"
    key = "height"
    separable = True
    needs_levels = True

    def value(self, classes: EquivalenceClasses, suppressed: np.ndarray | None = None) -> float:
        split_sizes(classes, suppressed)  # validates the mask
        return float(sum(c.level for c in require_levels(self, classes)))

    def loss_bound(self, classes: EquivalenceClasses) -> float:
        """The value itself. Proof: the loss ignores suppression, and a roll-up never lowers a level."""
        return self.value(classes)


class Precision(UtilityMetric):
    """Sweeney's precision (Sweeney, "Achieving k-anonymity privacy protection using
    generalization and suppression", IJUFKS 2002).

    ``Prec = 1 − Σ_records Σ_j (level_j / height_j) / (n · |QI|)``, where ``height_j`` is the height
    of quasi-identifier ``j``'s hierarchy. A quasi-identifier with height 0 (no hierarchy)
    contributes 0; a suppressed record counts ``level/height = 1`` on every quasi-identifier (it is
    published as ``*``). Higher is better; the loss is ``1 − Prec``, in ``[0, 1]``.

    Raises:
        ParameterError: a quasi-identifier's cells do not come from a hierarchy level.
    """

    name = "precision"
    key = "precision"
    separable = True
    higher_is_better = True
    needs_levels = True

    def _mean_ratio(self, classes: EquivalenceClasses) -> float:
        cells = require_levels(self, classes)
        return float(np.mean([c.level / c.height if c.height else 0.0 for c in cells]))

    def value(self, classes: EquivalenceClasses, suppressed: np.ndarray | None = None) -> float:
        return 1.0 - self.loss(classes, suppressed)

    def loss(self, classes: EquivalenceClasses, suppressed: np.ndarray | None = None) -> float:
        kept, n_supp = split_sizes(classes, suppressed)
        n = records(classes)
        if n == 0:
            return 0.0
        return (float(kept.sum()) * self._mean_ratio(classes) + n_supp) / n

    def loss_bound(self, classes: EquivalenceClasses) -> float:
        """``1 − Prec`` without suppression. Proof: a suppressed record costs 1 ≥ its
        ``level/height`` on every column, and a roll-up never lowers a level."""
        return self.loss(classes)
