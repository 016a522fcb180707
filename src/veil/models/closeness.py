"""t-closeness with the three ground distances of Li, Li and Venkatasubramanian (ICDE 2007).

A class is t-close when the Earth Mover's Distance between the distribution of the sensitive
attribute in the class (P) and in the whole table (Q) is at most t. The EMD depends on the
ground distance between values:

* **equal distance** (every two values at distance 1): EMD = ½ Σᵢ |pᵢ − qᵢ|;
* **ordered distance** (values ranked 1..m, distance |i − j| / (m − 1)):
  EMD = 1/(m − 1) · Σᵢ |Σ_{j≤i} (p_j − q_j)|;
* **hierarchical distance** (values are the leaves of a hierarchy of height H): with
  extra(leaf) = p − q and extra(N) the sum over N's children, each node N costs
  height(N)/H · min(pos_extra(N), neg_extra(N)), where pos_extra and neg_extra sum the positive
  and the negative extras of N's children; the EMD is the sum of the costs.
"""

from __future__ import annotations

import numpy as np

from veil.classes import EquivalenceClasses, SensitiveCounts
from veil.data.hierarchy import Generalization
from veil.models.base import PrivacyModel, require

DISTANCES = ("equal", "ordered", "hierarchical")


def equal_emd(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """EMD under the equal ground distance, for each row of ``p`` against ``q``."""
    return 0.5 * np.abs(p - q).sum(axis=1)


def ordered_emd(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """EMD under the ordered ground distance (columns in value order); 0 when m = 1."""
    m = p.shape[1]
    if m < 2:
        return np.zeros(p.shape[0])
    return np.abs(np.cumsum(p - q, axis=1)[:, :-1]).sum(axis=1) / (m - 1)


def hierarchical_emd(p: np.ndarray, q: np.ndarray, hierarchy: Generalization) -> np.ndarray:
    """EMD under the hierarchical ground distance; columns are the hierarchy's level-0 codes.

    A hierarchy whose top level has several nodes gets a virtual root above them (one more
    level), so values in different top-level groups are at distance 1, not 0.
    """
    steps = [(hierarchy.level_map(level - 1, level), hierarchy.radix(level))
             for level in range(1, hierarchy.levels)]
    top_nodes = hierarchy.radix(hierarchy.height)
    if top_nodes > 1:
        steps.append((np.zeros(top_nodes, dtype=np.int32), 1))
    height = len(steps)
    extra = p - q
    cost = np.zeros(p.shape[0])
    for level, (parent, width) in enumerate(steps, start=1):
        # One-hot child → parent matrix: products sum the children of each node at once.
        onehot = np.zeros((len(parent), width))
        onehot[np.arange(len(parent)), parent] = 1.0
        pos = np.maximum(extra, 0.0) @ onehot
        neg = np.maximum(-extra, 0.0) @ onehot
        cost += (level / height) * np.minimum(pos, neg).sum(axis=1)
        extra = pos - neg
    return cost


class TCloseness(PrivacyModel):
    """t-closeness: every class's sensitive distribution is within EMD t of the table's.

    Args:
        t: the threshold in [0, 1], or ``None`` to measure only.
        distance: ``"equal"`` (categorical), ``"ordered"`` (numeric or ordinal column) or
            ``"hierarchical"`` (column with a hierarchy).
        sensitive: the sensitive column (``None``: every one the distance applies to).

    Raises:
        ParameterError: ``t`` outside [0, 1] or an unknown distance.
    """

    higher_is_better = False

    def __init__(self, t: float | None = None, distance: str = "equal", sensitive: str | None = None):
        require(t is None or 0 <= t <= 1, f"t must be between 0 and 1, not {t}.")
        require(distance in DISTANCES, f"unknown t-closeness distance {distance!r}; use one of "
                                       f"{', '.join(DISTANCES)}.")
        super().__init__(t, sensitive)
        self.distance = distance
        self.name = f"t-closeness, {distance} EMD"
        self.key = f"t_{distance}"

    def applies_to(self, counts: SensitiveCounts) -> bool:
        if self.distance == "ordered":
            return counts.ordered
        if self.distance == "hierarchical":
            return counts.generalization is not None
        return True

    def why_not(self, counts: SensitiveCounts) -> str:
        if self.distance == "ordered":
            return (f"ordered-distance t-closeness needs a numeric or ordinal column, and '{counts.name}' "
                    "is text; give the order of its values.")
        return (f"hierarchical-distance t-closeness needs a hierarchy for column '{counts.name}'; "
                "give one.")

    def class_levels(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        p, q = counts.class_distribution(), counts.table_distribution()
        if self.distance == "equal":
            return equal_emd(p, q)
        if self.distance == "ordered":
            return ordered_emd(p, q)
        return hierarchical_emd(p, q, counts.generalization)
