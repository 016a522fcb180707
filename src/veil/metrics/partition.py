"""Metrics that read only the class sizes: discernibility and average equivalence class size."""

from __future__ import annotations

import numpy as np

from veil.classes import EquivalenceClasses
from veil.metrics.base import UtilityMetric, kept_mask, records


class Discernibility(UtilityMetric):
    """The discernibility metric (Bayardo and Agrawal, ICDE 2005), as Kifer and Gehrke
    (SIGMOD 2006) state it.

    ``DM = Σ_{kept classes} size² + |D| · (number of suppressed records)``: each published record
    costs the number of records it is indistinguishable from, and each suppressed record costs
    the whole table. Lower is better; a release of ``n`` records scores at least ``n``.
    """

    name = "discernibility"
    key = "discernibility"
    suppression_never_helps = True  # a suppressed class of size s costs |D|·s ≥ s²

    def value(self, classes: EquivalenceClasses, suppressed: np.ndarray | None = None) -> float:
        # Integer arithmetic: exact (n² < 2**63 for any table that fits in memory).
        sizes = classes.sizes.astype(np.int64, copy=False)
        mask = kept_mask(classes, suppressed)
        n = records(classes)
        n_supp = n - int(sizes.sum())  # records in no class count as suppressed
        if mask is not None:
            n_supp += int(sizes[mask].sum())
            sizes = np.where(mask, 0, sizes)
        return float(int(np.square(sizes).sum()) + n * n_supp)

    def loss_bound(self, classes: EquivalenceClasses) -> float:
        """``Σ size²`` over all classes. Proof: merging classes can only increase ``Σ size²``
        (``(a+b)² ≥ a² + b²``), and a suppressed class of size ``s`` costs ``|D|·s ≥ s²``."""
        return float(np.square(classes.sizes.astype(np.int64, copy=False)).sum())


class AverageClassSize(UtilityMetric):
    """Average equivalence class size, AECS (LeFevre, DeWitt and Ramakrishnan, "Mondrian
    multidimensional k-anonymity", ICDE 2006, without their division by ``k``).

    ``AECS = published records / published classes`` (``n / classes`` without suppression).
    When every class is suppressed the release is one class of ``n`` records published as
    ``*``, so the value is ``n``. Lower is better.
    """

    name = "average equivalence class size"
    key = "aecs"

    def value(self, classes: EquivalenceClasses, suppressed: np.ndarray | None = None) -> float:
        mask = kept_mask(classes, suppressed)
        n = records(classes)
        if mask is None:
            return float(classes.sizes.sum()) / classes.n_classes if classes.n_classes else float(n)
        kept_classes = int((~mask).sum())
        if kept_classes == 0:
            return float(n)
        return float(classes.sizes[~mask].sum()) / kept_classes

    def loss_bound(self, classes: EquivalenceClasses) -> float:
        """The smallest class size. Proof: a mean of published class sizes is at least the
        smallest class size (``n`` when all are suppressed), and every class of a roll-up is a
        union of classes here, so the smallest size never shrinks."""
        return float(classes.sizes.min()) if classes.n_classes else 0.0
