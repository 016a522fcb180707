"""The merging of MDAV's groups into the classes of the release: groups that print alike are one
class, and classes that fail a privacy model are suppressed within the limit or merged into the
class with the nearest centroid until every class passes.

**Groups that print alike.** Groups whose published values print the same text on every
quasi-identifier (:mod:`.published`) are one class to a reader, so they are merged into one class
before the models are evaluated, and again after every round of merging below.

**Other privacy models.** Groups of k records may fail an ℓ-diversity, t-closeness, δ-disclosure
or β-likeness model, and so may a class of groups that print alike (δ-disclosure is not kept by
a union). After MDAV the groups that print alike are merged and the models are evaluated on the
classes; with a suppression limit, failing classes are first suppressed, fewest records first,
while their records fit within the limit. Then, in rounds until every class passes, each
remaining failing class is merged into the class whose centroid is nearest to its own (in the
space of :mod:`.space`); classes that pick each other, or form chains, become one class, and
classes that now print alike are merged again. The whole table taken as one group must satisfy
every model (:class:`~veil.anonymize.mdav.MDAV` checks it first, and the error names the model
that fails); merging then always ends. Merged groups can exceed 2k − 1 records. Should merging
among the kept groups be unable to finish, the suppressed groups are restored and merged too.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from veil.anonymize.fulldomain import InfeasibleError
from veil.anonymize.mdav.grouping import number_by_first_row
from veil.anonymize.mdav.published import group_labels, group_values
from veil.anonymize.mdav.space import Space
from veil.classes import EquivalenceClasses, group_rows
from veil.data.dataset import Dataset
from veil.models.base import PrivacyModel

# Entries of one block of the failing-groups × groups distance matrix when merging.
MERGE_BLOCK = 1 << 22


def enforce(dataset: Dataset, space: Space, group: np.ndarray, models: Sequence[PrivacyModel],
            suppression_limit: float,
            decimals: int | Mapping[str, int | None] | None) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Merge and suppress groups until every class of the published table satisfies every
    model.

    Args:
        dataset: the table the groups were made for.
        space: its quasi-identifiers in the distance space.
        group: the MDAV group of every row, numbered from 0 by first row.
        models: the models every released class must satisfy (MDAV's ``release_models``); the
            whole table as one group must satisfy them.
        suppression_limit: the largest share of records that may be suppressed, in [0, 1).
        decimals: MDAV's ``decimals`` (see :func:`~veil.anonymize.mdav.published.published_column`),
            which decide whether two groups print alike.

    Returns ``(group, suppressed, merge_rounds, coincident)``: the group of every row, the
    suppressed groups, the rounds of merging into the nearest group, and the groups merged
    because their published values coincided.
    """
    n_groups = int(group.max()) + 1
    sizes = np.bincount(group, minlength=n_groups)
    sensitive = {}
    for name in dataset.sensitive:
        col = dataset.column(name)
        sensitive[name] = np.bincount(group * col.cardinality + col.codes,
                                      minlength=n_groups * col.cardinality).reshape(n_groups, col.cardinality)
    suppressed = np.zeros(n_groups, dtype=bool)
    max_suppressed = int(math.floor(suppression_limit * dataset.num_rows + 1e-9))
    may_suppress = max_suppressed > 0
    sums = None
    rounds = coincident = 0
    while True:
        # Kept groups whose published values coincide are one class to a reader.
        new_id = coinciding(space, group, n_groups, ~suppressed, decimals)
        if new_id is not None:
            n_new = int(new_id.max()) + 1
            coincident += n_groups - n_new
            first = np.full(n_new, n_groups, dtype=np.int64)
            np.minimum.at(first, new_id, np.arange(n_groups))
            sizes = _sum_rows(sizes, new_id, n_new)
            sums = None if sums is None else _sum_rows(sums, new_id, n_new)
            sensitive = {name: _sum_rows(m, new_id, n_new) for name, m in sensitive.items()}
            suppressed = suppressed[first]
            group = new_id[group]
            n_groups = n_new
        failing = _failing(light_classes(dataset, sizes, sensitive), models)
        if may_suppress:
            # Failing groups are suppressed first, fewest records first, within the limit;
            # once only.
            may_suppress = False
            candidates = np.flatnonzero(failing)
            candidates = candidates[np.lexsort((candidates, sizes[candidates]))]
            fits = np.cumsum(sizes[candidates]) <= max_suppressed
            suppressed[candidates[fits]] = True
        todo = failing & ~suppressed
        if not todo.any():
            break
        kept = ~suppressed
        if np.count_nonzero(kept) == 1:
            # Nothing left to merge with among the kept groups: restore the suppressed ones.
            if not suppressed.any():  # pragma: no cover - the whole table was checked to pass
                raise InfeasibleError("the models cannot be satisfied even by the whole table as one group.")
            suppressed[:] = False
            continue
        if sums is None:
            sums = space.embedding_sums(group, n_groups)
        rounds += 1
        centroids = sums / sizes[:, None]
        sources = np.flatnonzero(todo)
        targets = _nearest_groups(centroids, sources, kept)
        # Merge a failing group into its nearest group when that one passes, or when the two
        # are each other's nearest; a failing group whose nearest is a failing group bound
        # elsewhere waits a round (so chains do not snowball into one huge group).
        pointing = np.full(n_groups, -1, dtype=np.int64)
        pointing[sources] = targets
        accept = ~todo[targets] | (pointing[targets] == sources)
        if accept.any():
            sources, targets = sources[accept], targets[accept]
        root = _components(n_groups, sources, targets)
        roots, new_id = np.unique(root, return_inverse=True)
        n_new = len(roots)
        sizes = _sum_rows(sizes, new_id, n_new)
        sums = _sum_rows(sums, new_id, n_new)
        sensitive = {name: _sum_rows(m, new_id, n_new) for name, m in sensitive.items()}
        suppressed = suppressed[roots]  # a suppressed group is never merged
        group = new_id[group]
        n_groups = n_new
    return group, suppressed, rounds, coincident


def coinciding(space: Space, group: np.ndarray, n_groups: int, kept: np.ndarray,
               decimals: int | Mapping[str, int | None] | None) -> np.ndarray | None:
    """The new id of every group after merging the kept groups whose published values print
    the same text on every quasi-identifier (ids in the order of their first group), or
    ``None`` when no two coincide.

    Args:
        space: the quasi-identifiers in the distance space.
        group: the group of every row, numbered from 0.
        n_groups: the number of groups.
        kept: bool per group, the groups not suppressed (a suppressed group is merged with none).
        decimals: MDAV's ``decimals``, which decide how a numeric centroid prints.
    """
    columns, radices = [], []
    for c in space.columns:
        labels = group_labels(c, group_values(c, group, n_groups)[2], decimals)
        code, distinct = pd.factorize(labels, sort=False)
        columns.append(code.astype(np.int64))
        radices.append(len(distinct))
    if not kept.all():
        columns.append(np.where(kept, 0, np.cumsum(~kept)))
        radices.append(int((~kept).sum()) + 1)
    tuple_of, _ = group_rows(columns, radices, decode=False)
    if int(tuple_of.max()) + 1 == n_groups:
        return None
    return number_by_first_row(tuple_of)


def light_classes(dataset: Dataset, sizes: np.ndarray, sensitive: dict[str, np.ndarray]) -> EquivalenceClasses:
    """Classes with only what the privacy models read: sizes and sensitive count matrices.

    Args:
        dataset: the table the classes are of.
        sizes: the records of each class.
        sensitive: per sensitive column, its ``[classes × values]`` count matrix.
    """
    keys = np.zeros((len(sizes), 0), dtype=np.int32)
    return EquivalenceClasses(dataset, None, np.asarray(sizes), keys, None, dict(sensitive))


def _failing(classes: EquivalenceClasses, models: Sequence[PrivacyModel]) -> np.ndarray:
    passed = np.ones(classes.n_classes, dtype=bool)
    for model in models:
        passed &= model.evaluate(classes).class_passed
    return ~passed


def _components(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The smallest node of the connected component of each of ``n`` nodes, given edges."""
    parent = np.arange(n)
    while True:
        a, b = parent[src], parent[dst]
        low, high = np.minimum(a, b), np.maximum(a, b)
        joined = low != high
        if not joined.any():
            return parent
        np.minimum.at(parent, high[joined], low[joined])
        while True:
            jumped = parent[parent]
            if np.array_equal(jumped, parent):
                break
            parent = jumped


def _sum_rows(values: np.ndarray, new_id: np.ndarray, n_new: int) -> np.ndarray:
    """Sum the rows of ``values`` that share a new id."""
    order = np.argsort(new_id, kind="stable")
    starts = np.searchsorted(new_id[order], np.arange(n_new))
    return np.add.reduceat(values[order], starts, axis=0)


def _nearest_groups(centroids: np.ndarray, sources: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """For each source group, the allowed group (not itself) whose centroid is nearest; ties to
    the lower group number."""
    norms = np.einsum("ij,ij->i", centroids, centroids)
    blocked = np.where(allowed, 0.0, np.inf)
    out = np.empty(len(sources), dtype=np.int64)
    block = max(1, MERGE_BLOCK // max(len(centroids), 1))
    for start in range(0, len(sources), block):
        part = sources[start:start + block]
        d = norms[part][:, None] + norms[None, :] - 2.0 * (centroids[part] @ centroids.T)
        d += blocked
        d[np.arange(len(part)), part] = np.inf
        out[start:start + block] = np.argmin(d, axis=1)
    return out
