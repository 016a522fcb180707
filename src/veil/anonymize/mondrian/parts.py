"""The candidate parts of a Mondrian split as the privacy models see them, and the size every
part must reach.

A split is kept only if every part satisfies every model; the models read classes through their
sizes and their part × sensitive-value count matrices, which is all a :class:`Parts` holds.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from veil.classes import SensitiveCounts
from veil.models.base import TOLERANCE, PrivacyModel


class Parts:
    """Candidate parts as the privacy models see classes: their sizes and count matrices.

    Args:
        sizes: the records of each part.
        sensitive: per sensitive column the models read, its part × value count matrix.
    """

    def __init__(self, sizes: np.ndarray, sensitive: dict[str, SensitiveCounts]):
        self.sizes = sizes
        self.sensitive = sensitive

    @property
    def n_classes(self) -> int:
        """The number of parts (each a class to the models)."""
        return len(self.sizes)


def min_part_size(models: Sequence[PrivacyModel]) -> int:
    """A size every part must reach under ``models`` (k, or ℓ distinct values), to skip
    partitions too small to split.

    Args:
        models: the privacy models every part must satisfy.
    """
    need = 1
    for model in models:
        t = model.threshold
        if model.key == "k" or (model.key == "l_distinct" and t is not None):
            need = max(need, math.ceil(t - TOLERANCE * max(abs(t), 1.0)))
        k = getattr(model, "k", None)
        if model.key == "alpha" and k is not None:
            need = max(need, int(k))
    return need
