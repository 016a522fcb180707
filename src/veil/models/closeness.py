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
from veil.models.base import TOLERANCE, PrivacyModel, require, smallest_covering

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


# EMDs this close to the cut are measured as class_levels measures them: the closed form sums the
# same terms in another order (a few units in the last place, about 1e-15).
_NEAR = 1e-10


def _emd_steps(hierarchy: Generalization) -> list[tuple[np.ndarray, int]]:
    """Per level above the leaves, each node's parent and the number of nodes there, the last
    step to a virtual root above a top level with several nodes (as :func:`hierarchical_emd`)."""
    steps = [(hierarchy.level_map(level - 1, level), hierarchy.radix(level)) for level in range(1, hierarchy.levels)]
    top_nodes = hierarchy.radix(hierarchy.height)
    if top_nodes > 1:
        steps.append((np.zeros(top_nodes, dtype=np.int32), 1))
    return steps


def _level_sums(hierarchy: Generalization) -> list[np.ndarray]:
    """Per level between the leaves and the root (exclusive), the 0/1 matrix that sums the
    previous level's columns into that level's (float, for the matrix products)."""
    cache = hierarchy.__dict__.setdefault("_emd_level_sums", [])
    if not cache:
        for parent, width in _emd_steps(hierarchy)[:-1]:
            onehot = np.zeros((len(parent), width))
            onehot[np.arange(len(parent)), parent] = 1.0
            onehot.setflags(write=False)
            cache.append(onehot)
    return cache


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

    def _failing_on(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray | None:
        """The verdict of :meth:`class_passed` from the EMD in closed form on the counts: with
        the deviations c − s·q of a class of s records, the equal-distance EMD is Σ|c − s·q| / 2s
        (the total variation), the hierarchical one the mean over the levels below the root of
        the same sum with the deviations summed up to that level. ``None`` should any class lie
        within :data:`_NEAR` of the cut."""
        if self.distance == "ordered":
            return ~self.class_passed(classes, self.class_levels(classes, counts))
        matrix = np.asarray(counts.counts, dtype=float)
        ones = np.ones(matrix.shape[1])
        sizes = matrix @ ones
        deviation = matrix - np.multiply.outer(sizes, counts.table_distribution())
        total = np.abs(deviation) @ ones
        levels = 1
        if self.distance == "hierarchical":
            for onehot in _level_sums(counts.generalization):
                deviation = deviation @ onehot
                total += np.abs(deviation) @ np.ones(onehot.shape[1])
                levels += 1
        over = total / (2.0 * levels * np.maximum(sizes, 1.0))
        over -= self.threshold + TOLERANCE * max(abs(self.threshold), 1.0)
        if len(over) and np.abs(over).min() <= _NEAR:
            return None
        return over > 0

    def _smallest_on(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> int:
        """Two distinct values are at least 1/D apart (D = 1 for the equal distance, the
        hierarchy's height, m − 1 for m ordered values), so a class whose values hold a share Q
        of the table moves at least 1 − Q of its mass: EMD ≥ (1 − Q) / D. A class of s records
        holds at most the s largest shares."""
        m = counts.counts.shape[1]
        if self.distance == "equal":
            far = 1
        elif self.distance == "hierarchical":
            far = len(_emd_steps(counts.generalization))
        else:
            far = m - 1
        if far < 1:
            return 1
        cut = self.threshold + TOLERANCE * max(abs(self.threshold), 1.0) + 10 * _NEAR
        return smallest_covering(counts.table_distribution(), lambda share: (1.0 - share) / far <= cut)

    def class_levels(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        p, q = counts.class_distribution(), counts.table_distribution()
        if self.distance == "equal":
            return equal_emd(p, q)
        if self.distance == "ordered":
            return ordered_emd(p, q)
        return hierarchical_emd(p, q, counts.generalization)
