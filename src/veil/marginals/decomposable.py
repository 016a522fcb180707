"""Whether a collection of marginals is decomposable, and its junction tree.

Each attribute at each level is a variable; a coarser level is a function of a finer one, so
every marginal may be *saturated* with the coarser levels of its attributes that other marginals
use, without changing what it says. A marginal that another one *implies* (a roll-up of it) adds
no constraint and is dropped. When the saturated attribute sets form an acyclic hypergraph (the
collection is *decomposable*), a junction tree over them exists (Jensen and Jensen, UAI 1994),
on which the maximum-entropy estimate has a closed form (:mod:`veil.marginals.maxent`) and the
consistent tables have the bounds of Dobra and Fienberg (:mod:`veil.marginals.privacy`).
"""

from __future__ import annotations

import itertools
from typing import Mapping, Sequence

from veil.marginals.contingency import ContingencyTable, Variable


def drop_implied(marginals: Sequence[ContingencyTable]) -> list[ContingencyTable]:
    """The marginals that no other one implies, in their order.

    ``A`` implies ``B`` when ``A`` holds every attribute of ``B`` at the same or a finer level:
    ``B`` is then a roll-up of ``A`` and adds no constraint. Of two equal marginals the first is
    kept.
    """
    kept = []
    for i, b in enumerate(marginals):
        implied = False
        for j, a in enumerate(marginals):
            if i == j or not implies(a, b):
                continue
            if not implies(b, a) or j < i:
                implied = True
                break
        if not implied:
            kept.append(b)
    return kept


def implies(a: ContingencyTable, b: ContingencyTable) -> bool:
    """Whether marginal ``a`` holds every attribute of ``b`` at the same or a finer level."""
    levels = dict(a.variables)
    return all(name in levels and levels[name] <= level for name, level in b.variables)


def saturate(marginal: ContingencyTable, used: Mapping[str, Sequence[int]]) -> frozenset[Variable]:
    """The variables of ``marginal`` together with every coarser level of its attributes that
    ``used`` lists: functions of what it holds, so they add nothing to what it says."""
    out = set()
    for name, level in marginal.variables:
        out.update((name, lv) for lv in used[name] if lv >= level)
    return frozenset(out)


def junction_tree(cliques: Sequence[frozenset]) -> list[tuple[int, int]] | None:
    """A junction tree over ``cliques`` (no clique a subset of another), or ``None`` when they
    form a cyclic hypergraph (the collection is not decomposable).

    A maximum-weight spanning tree of the clique graph, weighted by the size of each
    intersection, is a junction tree whenever one exists (Jensen and Jensen, UAI 1994); it is one
    exactly when, for every variable, the cliques holding it form a connected subtree (the
    running intersection property), which is checked.

    Returns:
        The tree's edges ``(i, j)``; cliques that share nothing are joined by empty separators.
    """
    m = len(cliques)
    pairs = sorted(((len(cliques[i] & cliques[j]), i, j) for i, j in itertools.combinations(range(m), 2)),
                   key=lambda t: -t[0])
    parent = list(range(m))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    edges = []
    for _, i, j in pairs:
        ri, rj = root(i), root(j)
        if ri != rj:
            parent[ri] = rj
            edges.append((i, j))
    for variable in set().union(*cliques) if cliques else ():
        holding = {i for i in range(m) if variable in cliques[i]}
        inner = [(i, j) for i, j in edges if i in holding and j in holding]
        if len(inner) != len(holding) - 1:
            return None
    return edges


def structure(marginals: Sequence[ContingencyTable]) -> tuple[list[ContingencyTable], list[frozenset],
                                                             list[tuple[int, int]] | None]:
    """The marginals no other implies, their saturated variable sets, and a junction tree over
    those (``None`` when the collection is not decomposable)."""
    kept = drop_implied(list(marginals))
    used: dict[str, set[int]] = {}
    for m in kept:
        for name, level in m.variables:
            used.setdefault(name, set()).add(level)
    ordered = {name: sorted(levels) for name, levels in used.items()}
    cliques = [saturate(m, ordered) for m in kept]
    return kept, cliques, junction_tree(cliques)
