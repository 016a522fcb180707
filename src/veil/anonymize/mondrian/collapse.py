"""The collapse of Mondrian partitions into their ancestor in the split tree.

Partitions that print alike are one class (:mod:`.cells`), and the models are checked on that
class. Every model but δ-disclosure holds on a union of classes that hold it; should such a union
fail, its partitions are collapsed into their lowest common ancestor in the split tree (a
partition every model accepted), until every class passes.
"""

from __future__ import annotations

import numpy as np


def collapse(partition: np.ndarray, node: np.ndarray, parent: np.ndarray, class_of_part: np.ndarray,
              failing: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Replace, for each failing class, every partition below the lowest common ancestor (in
    the split tree) of its partitions by that ancestor. Returns the new partition of every row,
    the node of every new partition, and the number of classes collapsed.

    Args:
        partition: the partition of every row.
        node: the split-tree node of every partition.
        parent: the parent of every split-tree node (-1 for the root).
        class_of_part: the published class of every partition.
        failing: per class, whether it fails a model.
    """
    # ancestors[p, i]: the i-th ancestor of partition p's node (itself first), -1 above the root.
    chain = [node]
    while (chain[-1] >= 0).any():
        up = chain[-1]
        chain.append(np.where(up >= 0, parent[np.maximum(up, 0)], -1))
    ancestors = np.stack(chain, axis=1)
    depth = (ancestors >= 0).sum(axis=1)
    tops = []
    for c in np.flatnonzero(failing):
        parts = np.flatnonzero(class_of_part == c)
        # Chains end at the root; align them from the root down and keep the common prefix.
        paths = [ancestors[p, :depth[p]][::-1] for p in parts]
        common = min(len(path) for path in paths)
        shared = np.all([path[:common] == paths[0][:common] for path in paths], axis=0)
        last = common if shared.all() else int(np.argmin(shared))
        tops.append(int(paths[0][last - 1]))
    new_of_part = np.arange(len(node))
    new_node = node.copy()
    taken = np.zeros(len(node), dtype=bool)
    for top in sorted(set(tops), key=lambda t: _node_depth(parent, t)):
        under = (ancestors == top).any(axis=1) & ~taken
        if not under.any():
            continue
        first = int(np.flatnonzero(under)[0])
        new_of_part[under] = first
        new_node[first] = top
        taken |= under
    kept, relabel = np.unique(new_of_part, return_inverse=True)
    return relabel[partition], new_node[kept], len(tops)


def _node_depth(parent: np.ndarray, node: int) -> int:
    depth = 0
    while parent[node] >= 0:
        node = int(parent[node])
        depth += 1
    return depth
