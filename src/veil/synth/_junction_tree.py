"""The junction tree of a set of cliques over categorical columns, and its axis plans.

The cliques (sets of columns a model must hold jointly) are the edges of an undirected graph on
the columns; the graph is triangulated by greedy elimination (at each step the column whose
elimination adds the fewest fill-in edges, ties broken by the fewest cells of the clique it makes,
then by column order), the maximal elimination cliques are the tree's nodes, and a maximum
spanning tree on separator sizes joins them (Jensen and Jensen, UAI 1994; reused from
:func:`veil.marginals.decomposable.junction_tree`). Every clique of the tree is a tuple of columns
in the domain's order, so the separator of two cliques is, on both sides, a subsequence of their
axes and arrays broadcast between them by reshaping alone.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from veil.errors import ParameterError
from veil.marginals.decomposable import junction_tree
from veil.synth._reduction import Reduction, reduction


def check_cliques(sizes: Mapping[str, int], cliques: Sequence[Sequence[str]], what: str = "clique") -> None:
    """Refuse a clique naming an unknown column or one column twice."""
    for clique in cliques:
        if isinstance(clique, str):
            raise ParameterError(f"the {what} {clique!r} is a string; give a tuple of column names.")
        for name in clique:
            if name not in sizes:
                raise ParameterError(f"the {what} {tuple(clique)!r} names the unknown column {name!r}; "
                                     "use the domain's columns.")
        if len(set(clique)) != len(tuple(clique)):
            raise ParameterError(f"the {what} {tuple(clique)!r} names a column twice; name each once.")


def _elimination_cliques(n: int, weights: Sequence[float], edges: set) -> list[frozenset[int]]:
    adjacent = [set() for _ in range(n)]
    for a, b in edges:
        adjacent[a].add(b)
        adjacent[b].add(a)
    alive = set(range(n))
    out = []
    while alive:
        best, best_key = -1, None
        for v in alive:
            nb = adjacent[v]
            fill = 0
            nbl = sorted(nb)
            for i, a in enumerate(nbl):
                fill += len(nb) - 1 - i - len(adjacent[a].intersection(nbl[i + 1:]))
            key = (fill, weights[v] + sum(weights[u] for u in nb), v)
            if best_key is None or key < best_key:
                best, best_key = v, key
        nb = adjacent[best]
        out.append(frozenset(nb | {best}))
        for a in nb:
            adjacent[a] |= nb - {a}
            adjacent[a].discard(best)
        alive.discard(best)
        adjacent[best] = set()
    return out


def maximal_cliques(sizes: Mapping[str, int], cliques: Sequence[Sequence[str]]) -> list[frozenset[int]]:
    """The maximal cliques (sets of column positions in ``sizes``) of the triangulation of the
    graph that joins every two columns sharing a clique, in a fixed order (largest first)."""
    names = tuple(sizes)
    index = {n: i for i, n in enumerate(names)}
    edges = set()
    for clique in cliques:
        ids = sorted(index[c] for c in clique)
        for a in range(len(ids)):
            for b in range(a + 1, len(ids)):
                edges.add((ids[a], ids[b]))
    weights = [math.log(max(int(sizes[n]), 1)) for n in names]
    found = _elimination_cliques(len(names), weights, edges)
    maximal = [c for c in set(found) if not any(c < other for other in found)]
    maximal.sort(key=lambda c: (-len(c), sorted(c)))
    return maximal


def tree_cells(sizes: Mapping[str, int], cliques: Sequence[Sequence[str]]) -> int:
    """The sum of the cell counts of the cliques of the junction tree of ``cliques``."""
    sz = [int(sizes[n]) for n in sizes]
    return sum(math.prod(sz[i] for i in c) for c in maximal_cliques(sizes, cliques))


class JunctionTree:
    """A junction tree over columns ``names`` of sizes ``sizes``.

    Attributes:
        names: every column, in domain order.
        cliques: the tree's cliques, each a tuple of columns in domain order.
        parent: each clique's parent index (-1 for the root, clique 0).
        order: the cliques root first, each after its parent (breadth first).
        children: each clique's children.
    """

    def __init__(self, names: Sequence[str], sizes: Mapping[str, int], cliques: Sequence[tuple[str, ...]],
                 edges: Sequence[tuple[int, int]]):
        self.names = tuple(names)
        self.sizes = {n: int(sizes[n]) for n in self.names}
        self.cliques = tuple(tuple(c) for c in cliques)
        m = len(self.cliques)
        neighbours = [[] for _ in range(m)]
        for i, j in edges:
            neighbours[i].append(j)
            neighbours[j].append(i)
        self.parent = [-1] * m
        self.children = [[] for _ in range(m)]
        self.order = [0]
        seen = {0}
        for i in self.order:
            for j in sorted(neighbours[i]):
                if j not in seen:
                    seen.add(j)
                    self.parent[j] = i
                    self.children[i].append(j)
                    self.order.append(j)
        self.shapes = [tuple(self.sizes[c] for c in clique) for clique in self.cliques]
        # For each non-root clique: its separator with its parent, the axes each side sums out to
        # reach it, and the shape that broadcasts a separator array into each side.
        self.separator: list[tuple[str, ...]] = [()] * m
        self.child_axes: list[tuple[int, ...]] = [()] * m
        self.parent_axes: list[tuple[int, ...]] = [()] * m
        self.child_shape: list[tuple[int, ...]] = [()] * m
        self.parent_shape: list[tuple[int, ...]] = [()] * m
        # The sums of a child's table to the separator (shaped to broadcast into the parent) and of
        # the parent's (shaped to broadcast into the child).
        self.child_sum: list[Reduction | None] = [None] * m
        self.parent_sum: list[Reduction | None] = [None] * m
        for c in range(1, m) if m else ():
            p = self.parent[c]
            sep = tuple(x for x in self.cliques[c] if x in self.cliques[p])
            self.separator[c] = sep
            self.child_axes[c], self.child_shape[c] = self.plan(self.cliques[c], sep)
            self.parent_axes[c], self.parent_shape[c] = self.plan(self.cliques[p], sep)
            self.child_sum[c] = reduction(self.shapes[c], self.child_axes[c], self.parent_shape[c])
            self.parent_sum[c] = reduction(self.shapes[p], self.parent_axes[c], self.child_shape[c])

    def plan(self, clique: tuple[str, ...], sub: Sequence[str]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """For ``sub`` (a subsequence of ``clique``): the axes of ``clique`` outside ``sub``, and
        the shape that broadcasts an array on ``sub`` into ``clique``."""
        held = set(sub)
        axes = tuple(i for i, x in enumerate(clique) if x not in held)
        shape = tuple(self.sizes[x] if x in held else 1 for x in clique)
        return axes, shape

    @classmethod
    def build(cls, sizes: Mapping[str, int], cliques: Sequence[Sequence[str]]) -> "JunctionTree":
        """The junction tree of ``cliques`` over every column of ``sizes`` (columns in no clique
        are cliques of their own)."""
        names = tuple(sizes)
        maximal = maximal_cliques(sizes, cliques)
        tree_edges = junction_tree(maximal)
        if tree_edges is None:   # cannot happen: the cliques of a triangulated graph form a junction tree
            raise AssertionError("triangulation failed to give a junction tree")
        tuples = [tuple(names[i] for i in sorted(c)) for c in maximal]
        return cls(names, sizes, tuples, tree_edges)

    @property
    def cells(self) -> int:
        """The sum over the tree's cliques of their cell counts."""
        return sum(math.prod(s) for s in self.shapes)

    def containing(self, columns: Sequence[str]) -> int | None:
        """The index of the smallest clique holding every column of ``columns``, or None."""
        want = set(columns)
        best = None
        for i, clique in enumerate(self.cliques):
            if want <= set(clique) and (best is None or math.prod(self.shapes[i]) < math.prod(self.shapes[best])):
                best = i
        return best

    def steiner(self, columns: Sequence[str]) -> list[int]:
        """The cliques of the smallest subtree whose cliques cover ``columns``, in tree order
        (each after its parent within the subtree), found by pruning leaves that add nothing."""
        want = set(columns)
        keep = set(range(len(self.cliques)))
        # Prune, repeatedly, leaves of the kept subtree whose wanted columns their neighbour also holds.
        changed = True
        while changed:
            changed = False
            for c in list(keep):
                nbrs = [j for j in ([self.parent[c]] if self.parent[c] >= 0 else []) + self.children[c] if j in keep]
                if len(keep) > 1 and len(nbrs) == 1:
                    mine = want & set(self.cliques[c])
                    if mine <= set(self.cliques[nbrs[0]]):
                        keep.discard(c)
                        changed = True
        return [c for c in self.order if c in keep]
