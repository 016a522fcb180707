"""The generalization lattice of full-domain generalization.

A node assigns one hierarchy level to each quasi-identifier; node ``a`` is more general than
``b`` when every level of ``a`` is at least that of ``b``. Nodes are numbered in mixed radix
(the first quasi-identifier varies slowest), so the bottom (all levels 0) is node 0 and the top
is the last node.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


class Lattice:
    """All nodes of a generalization lattice, as an ``int16 [nodes × quasi-identifiers]`` matrix.

    Args:
        heights: the height of each quasi-identifier's hierarchy (0 when it is never generalized).
    """

    def __init__(self, heights: Sequence[int]):
        self.heights = np.asarray(heights, dtype=np.int64)
        shape = tuple(int(h) + 1 for h in self.heights)
        self.levels = np.indices(shape, dtype=np.int16).reshape(len(shape), -1).T
        self.height = self.levels.sum(axis=1, dtype=np.int64)
        self.strides = np.array([int(np.prod(shape[j + 1:])) for j in range(len(shape))], dtype=np.int64)
        self._heights, self._strides = self.heights.tolist(), self.strides.tolist()
        # at_least[j][l] / at_most[j][l]: nodes whose level j is >= l / <= l. An up- or down-set is
        # then an AND of one row per quasi-identifier.
        self._at_least = [np.stack([self.levels[:, j] >= lv for lv in range(int(h) + 1)])
                          for j, h in enumerate(self.heights)]
        self._at_most = [np.stack([self.levels[:, j] <= lv for lv in range(int(h) + 1)])
                         for j, h in enumerate(self.heights)]

    @staticmethod
    def size(heights: Sequence[int]) -> int:
        """Number of nodes of the lattice over hierarchies of these heights."""
        return int(np.prod([int(h) + 1 for h in heights], dtype=object))

    def __len__(self) -> int:
        return len(self.levels)

    @property
    def top(self) -> int:
        return len(self.levels) - 1

    def index(self, levels: Sequence[int]) -> int:
        return int(np.dot(np.asarray(levels, dtype=np.int64), self.strides))

    def above(self, node: int) -> np.ndarray:
        """Mask of the nodes at least as general as ``node`` (``node`` included)."""
        levels = self.levels[node]
        mask = self._at_least[0][levels[0]].copy()
        for j in range(1, len(levels)):
            mask &= self._at_least[j][levels[j]]
        return mask

    def below(self, node: int) -> np.ndarray:
        """Mask of the nodes at most as general as ``node`` (``node`` included)."""
        levels = self.levels[node]
        mask = self._at_most[0][levels[0]].copy()
        for j in range(1, len(levels)):
            mask &= self._at_most[j][levels[j]]
        return mask

    def chain_up(self, node: int) -> np.ndarray:
        """A path from ``node`` to the top, one level at a time.

        Each step raises the quasi-identifier that is relatively least generalized (level over
        height; the first such one on ties), so the path climbs through balanced nodes as Flash's
        paths do. Each quasi-identifier's ratio only grows as it is raised, so the greedy order
        is the sort of all remaining steps by (ratio before the step, column).
        """
        start = self.levels[node].tolist()
        steps = sorted((level / height, j) for j, height in enumerate(self._heights) for level in range(start[j], height))
        path, at = [node], node
        for _, j in steps:
            at += self._strides[j]
            path.append(at)
        return np.array(path, dtype=np.int64)
