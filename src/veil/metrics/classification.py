"""Metrics for a release meant to train a classifier of a chosen label column: the
classification metric and the information-gain / privacy-loss ratio."""

from __future__ import annotations

import numpy as np

from veil.classes import EquivalenceClasses
from veil.errors import ParameterError
from veil.metrics.base import UtilityMetric, kept_mask, records, split_sizes, xlogx


class _LabelMetric(UtilityMetric):
    needs_label = True

    def __init__(self, label: str | None = None):
        super().__init__()
        if label is None or (isinstance(label, str) and not label.strip()):
            raise ParameterError(f"the {self.name} metric needs a class label; give the label column "
                                 f"(option 'label').")
        if not isinstance(label, str):
            raise ParameterError(f"the label of the {self.name} metric must be a column name, not {label!r}.")
        self.label = label

    @property
    def track(self) -> tuple[str, ...]:
        return (self.label,)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(label={self.label!r})"

    def _counts(self, classes: EquivalenceClasses) -> np.ndarray:
        """The class × label count matrix (the column must exist: ``ColumnError`` otherwise)."""
        classes.dataset.column(self.label)
        return classes.counts(self.label)


class ClassificationMetric(_LabelMetric):
    """The classification metric (Iyengar, "Transforming data to satisfy privacy constraints",
    KDD 2002), normalized by the number of records.

    ``CM = (1/n) · [suppressed records + Σ_{kept classes} (size − count of the class's most
    frequent label)]``: a record is penalized when it is suppressed or when its label is not the
    majority label of its class. In ``[0, 1]``; lower is better.

    Args:
        label: the class label column.

    Raises:
        ParameterError: no label is given.
        ColumnError: the label column does not exist (raised on evaluation).
    """

    name = "classification"
    key = "classification"

    def _minority(self, classes: EquivalenceClasses) -> np.ndarray:
        counts = self._counts(classes)
        if counts.shape[1] == 0:
            return np.zeros(classes.n_classes)
        return (classes.sizes - counts.max(axis=1)).astype(float)

    def value(self, classes: EquivalenceClasses, suppressed: np.ndarray | None = None) -> float:
        n = records(classes)
        if n == 0:
            return 0.0
        minority = self._minority(classes)
        _, n_supp = split_sizes(classes, suppressed)
        mask = kept_mask(classes, suppressed)
        if mask is not None:
            minority = minority[~mask]
        return float(minority.sum() + n_supp) / n

    def loss_bound(self, classes: EquivalenceClasses) -> float:
        """The value without suppression. Proof: merging classes never lowers the minority total
        (``max(a + b) ≤ max a + max b``), and a suppressed record costs 1, at least its minority
        penalty."""
        return self.value(classes)


class InformationGainPrivacyLoss(_LabelMetric):
    """The information-gain / privacy-loss score of top-down specialization (Fung, Wang and Yu,
    "Top-down specialization for information and privacy preservation", ICDE 2005), read as the
    score of a whole release rather than of one specialization step.

    ``IG = H(label) − H(label | class)`` in nats over the published records, the information the
    classes carry about the label; ``PL = A(top) − A(node)`` with ``A`` the anonymity (smallest
    published class size, 0 when nothing is published) and ``A(top) = n``, all records in one
    class; ``score = IG / (PL + 1)``. Higher is better; the loss is ``−score``.

    Args:
        label: the class label column.

    Raises:
        ParameterError: no label is given.
        ColumnError: the label column does not exist (raised on evaluation).
    """

    name = "information gain / privacy loss"
    key = "ig_pl"
    higher_is_better = True

    def value(self, classes: EquivalenceClasses, suppressed: np.ndarray | None = None) -> float:
        counts = self._counts(classes)
        sizes = classes.sizes
        n = records(classes)
        mask = kept_mask(classes, suppressed)
        if mask is not None:
            counts = counts[~mask]
            sizes = sizes[~mask]
        published = float(sizes.sum())
        if published == 0:
            return 0.0
        # H(Y) = ln N − Σ_y T_y ln T_y / N ; H(Y|C) = (Σ_c s_c ln s_c − Σ_{c,y} n_cy ln n_cy) / N.
        h_label = np.log(published) - xlogx(counts.sum(axis=0)).sum() / published
        h_given = (xlogx(sizes).sum() - xlogx(counts).sum()) / published
        gain = max(float(h_label - h_given), 0.0)
        loss = n - int(sizes.min())
        return gain / (loss + 1.0)

    def loss_bound(self, classes: EquivalenceClasses) -> float:
        """``-inf``: none is proven. Suppression can raise the information gain of what remains
        published and generalizing lowers the privacy loss, so the score moves either way above
        a node (only the useless ``−ln(number of labels)`` holds everywhere)."""
        return float("-inf")
