"""How a fit reads the measured marginals off the junction tree's cliques, and writes the loss's
gradient back, with as few passes over large tables as it can.

Each measured clique lies in a clique of the tree (its *home*). Reading every measured marginal
straight from a large home table, and broadcasting every measurement's gradient back into it,
would pass over that table once per measurement. Instead the measurements of a home form a tree
of smaller tables: a measurement inside a larger measured clique is read from that one's
marginal, and the rest are joined pairwise (the pair whose union of columns has the fewest cells
first) into *union* tables until one is left, which alone is read from, and written to, the home
table. Marginals flow down that tree (each a sum of its parent), gradients flow up (each
broadcast into its parent and added).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from veil.synth._junction_tree import JunctionTree
from veil.synth._reduction import Reduction, reduction


class _Node:
    __slots__ = ("clique", "shape", "home", "parent", "reduce", "broadcast")

    def __init__(self, clique: tuple[str, ...], shape: tuple[int, ...], home: int):
        self.clique = clique
        self.shape = shape
        self.home = home
        self.parent = -1            # another node, or -1 for the home table
        self.reduce: Reduction | None = None
        self.broadcast: tuple[int, ...] = ()


class Layout:
    """The reading and writing plan of measured cliques (``cliques[i]`` in domain order, each
    inside tree clique ``homes[i]``) on ``tree``."""

    def __init__(self, tree: JunctionTree, cliques: Sequence[tuple[str, ...]], homes: Sequence[int]):
        self.tree = tree
        sizes = tree.sizes
        self.count = len(cliques)
        nodes = [_Node(tuple(c), tuple(sizes[x] for x in c), h) for c, h in zip(cliques, homes)]
        for home in range(len(tree.cliques)):
            mine = sorted((i for i in range(self.count) if nodes[i].home == home),
                          key=lambda i: -math.prod(nodes[i].shape))
            roots = []
            for at, i in enumerate(mine):
                held = set(nodes[i].clique)
                supersets = [j for j in mine[:at] if held <= set(nodes[j].clique)]
                if supersets:
                    nodes[i].parent = min(supersets, key=lambda j: math.prod(nodes[j].shape))
                else:
                    roots.append(i)
            clique = tree.cliques[home]
            while len(roots) > 1:
                best = None
                for x in range(len(roots)):
                    for y in range(x + 1, len(roots)):
                        a, b = nodes[roots[x]].clique, nodes[roots[y]].clique
                        union = tuple(c for c in clique if c in a or c in b)
                        cells = math.prod(sizes[c] for c in union)
                        if best is None or cells < best[0]:
                            best = (cells, roots[x], roots[y], union)
                _, a, b, union = best
                nodes.append(_Node(union, tuple(sizes[c] for c in union), home))
                nodes[a].parent = nodes[b].parent = len(nodes) - 1
                roots = [r for r in roots if r not in (a, b)] + [len(nodes) - 1]
        for node in nodes:
            source = tree.cliques[node.home] if node.parent < 0 else nodes[node.parent].clique
            axes, node.broadcast = tree.plan(source, node.clique)
            node.reduce = reduction(tuple(sizes[c] for c in source), axes, node.shape)
        self.nodes = nodes
        # Parents before children.
        depth = []
        for node in nodes:
            d, at = 0, node
            while at.parent >= 0:
                d, at = d + 1, nodes[at.parent]
            depth.append(d)
        self.down = sorted(range(len(nodes)), key=lambda i: depth[i])

    def marginals(self, probs: Sequence[np.ndarray], total: float) -> list[np.ndarray]:
        """The measured cliques' marginals (counts) from the tree cliques' probability tables."""
        values = [None] * len(self.nodes)
        for i in self.down:
            node = self.nodes[i]
            values[i] = node.reduce(probs[node.home] if node.parent < 0 else values[node.parent])
        return [values[i] * total for i in range(self.count)]

    def gradient(self, grads: Sequence[np.ndarray]) -> list[np.ndarray | None]:
        """Per tree clique, the sum of the measurements' gradients broadcast into it (None where
        no measurement lies)."""
        acc = list(grads) + [None] * (len(self.nodes) - self.count)
        out: list[np.ndarray | None] = [None] * len(self.tree.cliques)
        for i in reversed(self.down):
            node = self.nodes[i]
            g = acc[i].reshape(node.broadcast)
            if node.parent >= 0:
                p = node.parent
                acc[p] = np.broadcast_to(g, self.nodes[p].shape) if acc[p] is None else acc[p] + g
            else:
                shape = self.tree.shapes[node.home]
                out[node.home] = np.broadcast_to(g, shape) if out[node.home] is None else out[node.home] + g
        return out
