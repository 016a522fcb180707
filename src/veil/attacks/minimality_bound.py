"""The minimality attack's bound on large tables: at least how many people's posterior exceeds τ.

When enumeration is out of reach (Adult), or the algorithm cannot be replayed, the attack
(:class:`~veil.attacks.minimality.MinimalityAttack`) says so (``exact_`` is ``False``) and reports
a *lower bound* on the number of people whose posterior exceeds the threshold τ (1/ℓ), from two
arguments that hold whatever the adversary's reasoning:

1. *Class averages.* In every input the adversary considers, the members of a class C hold its
   published values, so Σ_{p ∈ C} P[p has v] = a_v (the count of v in C) for any knowledge he
   adds. With each posterior at most 1, at least ⌈(a_v − |C|τ)/(1 − τ)⌉ members have a posterior
   of v above τ. This needs the class's members to be known exactly (everyone covered by one
   class).
2. *Classes the algorithm's choice does not touch* (full-domain publishers). A node whose verdict
   steers the publisher's choice (one it must have rejected; with ties on the loss, any node the
   search's walk may read) constrains the input only through its classes that can fail the
   models for some assignment; a node with a class that fails for every assignment (at most the
   values its parts hold can be distinct) constrains nothing. When no such constraint reaches a
   class of N, the assignments inside it stay uniform and its members' posteriors are exactly
   a_v/|C|.
   "Can fail" is decided soundly (from the most concentrated values a class of such a node can
   receive, which has the fewest distinct values and the least entropy; models other than k-
   anonymity and distinct and entropy ℓ-diversity: any class may fail), so a class is called
   untouched only when it is.

The count is exact when every class is untouched; otherwise it is a lower bound, and the report
says how many people it is exact for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from veil.attacks.published_classes import PublishedClasses


@dataclass(frozen=True, eq=False)
class ExceedingBound:
    """At least how many members of each class have a posterior above τ.

    Attributes:
        class_bound: ``int [classes]``: per class, at least how many members exceed τ.
        exact_class: ``bool [classes]``: the classes for which that count is exact.
        proven: the source of a proven bound on every posterior that leaves no one above τ
            (then every count is exactly 0), or ``None``.
    """

    class_bound: np.ndarray
    exact_class: np.ndarray
    proven: str | None = None


def exceeding_bound(published: PublishedClasses, publisher, threshold: float, protected: np.ndarray,
                    located: bool) -> ExceedingBound:
    """Bound, per class, the members whose posterior of a counted value exceeds τ (the module's
    two arguments, and a publisher's proven bound on every posterior when it has one).

    Args:
        published: the release's classes.
        publisher: the prepared :class:`~veil.attacks.publisher.Publisher` (its touched classes
            and its proven bound, if any).
        threshold: τ, in (0, 1).
        protected: ``bool [values]``: the sensitive values whose posteriors count.
        located: whether everyone's class is known exactly (the class averages need it).
    """
    tau = Fraction(threshold).limit_denominator(10 ** 6)
    sizes = published.sizes
    bound = np.zeros(published.n_classes, dtype=np.int64)
    if located:
        for c in range(published.n_classes):
            a = int(published.counts[c][protected].max())
            need = (a - int(sizes[c]) * tau) / (1 - tau)
            bound[c] = min(int(sizes[c]), max(0, math.ceil(need)))
    touched = publisher.touched() if located else None
    exact_class = np.zeros(published.n_classes, dtype=bool) if touched is None else ~touched
    # An untouched class's members all have the class frequencies as posteriors.
    frequency_exceeds = published.counts[:, protected].max(axis=1) > sizes * threshold + 1e-12
    bound = np.where(exact_class, np.where(frequency_exceeds, sizes, 0), bound)
    proven = publisher.proven_at_most()
    source = None
    if proven is not None and proven[0] <= threshold + 1e-12:
        # No posterior can exceed the threshold: the count is exactly 0.
        bound = np.zeros(published.n_classes, dtype=np.int64)
        exact_class = np.ones(published.n_classes, dtype=bool)
        source = proven[1]
    return ExceedingBound(bound, exact_class, source)
