"""Which classes of a full-domain release the publisher's choice of node can touch: the second
argument of the minimality attack's bound on large tables (see :mod:`veil.attacks.minimality`).

The release's node N was chosen over other nodes whose verdicts on the input steer the choice
(the nodes of lower loss it must have beaten; with ties, any node the search's walk may read).
Such a node constrains the input only through its classes that can fail the models for some
assignment of the published values; a node with a class that fails for every assignment has a
certain verdict and constrains nothing. A class of N that no possible failure reaches keeps its
arrangements uniform over the inputs the adversary considers, so its members' posteriors are
exactly its value frequencies.
"""

from __future__ import annotations

import numpy as np

from veil.classes import group_rows
from veil.models.diversity import DistinctLDiversity, EntropyLDiversity


def _most_concentrated(available: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Per row, the value counts of ``size`` records taken from ``available`` (counts per value)
    most frequent value first: every way to take them is majorized by this one, so it has the
    fewest distinct values and the least entropy any of them can have."""
    ranked = -np.sort(-available, axis=1)
    before = np.cumsum(ranked, axis=1) - ranked
    return np.clip(size[:, None] - before, 0, ranked)


def touched_classes(pub) -> np.ndarray | None:
    """The classes of the release's node that the possible failure of some node steering the
    publisher's choice reaches (see the module notes); ``None`` when the models are not all
    understood here.

    Args:
        pub: a prepared full-domain publisher of :mod:`veil.attacks.minimality`: its models,
            the release (``published``), everyone's class in it (``person_class``), and the
            nodes steering its choice (``steering_nodes()``, classes from ``node_classes``).

    A class of such a node holds, from each class of N it meets, some of that class's values.
    It cannot fail distinct ℓ-diversity when even its most concentrated filling (from the values of
    the classes it meets, pooled, or from any one of them) holds ℓ values, nor entropy
    ℓ-diversity when that filling's entropy reaches log ℓ (entropy is Schur-concave); and it fails
    for every assignment when it is smaller than k or cannot hold ℓ distinct values at all.
    """
    published = pub.published
    distinct = [m.threshold for m in pub.models if isinstance(m, DistinctLDiversity)]
    entropy = [m.threshold for m in pub.models if isinstance(m, EntropyLDiversity)]
    sizes_needed = [m.threshold for m in pub.models if m.key == "k"]
    if len(distinct) + len(entropy) + len(sizes_needed) != len(pub.models):
        return None
    touched = np.zeros(published.n_classes, dtype=bool)
    if not distinct and not entropy:
        return touched  # k-anonymity alone never depends on the sensitive values
    need = max(distinct + entropy)
    k = max(sizes_needed) if sizes_needed else 0
    counts = published.counts.astype(float)
    held = (published.counts > 0).sum(axis=1)
    for row_class in pub.node_classes(pub.steering_nodes()):
        pair, keys = group_rows([row_class, pub.person_class], [int(row_class.max()) + 1, published.n_classes])
        size = np.bincount(pair, minlength=len(keys)).astype(float)
        m_class, n_class = keys[:, 0], keys[:, 1]
        n_m = int(m_class.max()) + 1
        m_size = np.bincount(m_class, weights=size, minlength=n_m)
        # A class that fails for every assignment makes the node's rejection certain.
        if k and (m_size < k).any():
            continue
        most = np.bincount(m_class, weights=np.minimum(size, held[n_class]), minlength=n_m)
        if (most < need - 1e-9).any():
            continue
        pooled = np.zeros((n_m, counts.shape[1]))
        np.add.at(pooled, m_class, counts[n_class])
        filled = _most_concentrated(pooled, m_size)
        may_fail = np.zeros(n_m, dtype=bool)
        if distinct:
            fewest = np.count_nonzero(filled, axis=1)
            per_part = np.count_nonzero(_most_concentrated(counts[n_class], size), axis=1)
            np.maximum.at(fewest, m_class, per_part)
            may_fail |= fewest < max(distinct) - 1e-9
        if entropy:
            share = filled / np.maximum(m_size[:, None], 1)
            logs = np.log(share, where=share > 0, out=np.zeros_like(share))
            may_fail |= -(share * logs).sum(axis=1) < np.log(max(entropy)) - 1e-9
        touched[np.unique(n_class[may_fail[m_class]])] = True
    return touched
