"""The candidate inputs of the minimality attack, I(O, A), and the exact posteriors over them.

The adversary considers every input table that could have produced the release, each as likely a
priori (every assignment of the published sensitive values to the people consistent with the
published classes), weighted by the probability that the algorithm publishes the release from it
(a :class:`~veil.attacks.publisher.Publisher`), and reads each person's posterior of each value
off them (Wong, Fu, Wang and Pei, VLDB 2007). They are enumerated: per class, every distinct
arrangement of its published values over its members when everyone's class is known (full-domain
and strict Mondrian releases), otherwise every arrangement of all published values over all people
that some matching of people to published rows allows (overlapping cells: relaxed Mondrian, Ace,
record-level recoding). Posteriors are exact fractions of the weights.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from veil.attacks.published_classes import PublishedClasses
from veil.errors import DataError


def _multiset_permutations(counts: list[int]):
    """Every distinct sequence holding value ``v`` ``counts[v]`` times."""
    total = sum(counts)
    seq = [0] * total

    def fill(i):
        if i == total:
            yield tuple(seq)
            return
        for v, c in enumerate(counts):
            if c:
                counts[v] -= 1
                seq[i] = v
                yield from fill(i + 1)
                counts[v] += 1

    yield from fill(0)


def matchings(published: PublishedClasses, indptr: np.ndarray, covers: np.ndarray, codes: np.ndarray):
    """Every assignment of people to published classes that puts each person in a class covering
    them, with a row of their value left (class sizes and values respected).

    Args:
        published: the release's classes.
        indptr, covers: the classes covering each person (:func:`veil.attacks.locating.locate`).
        codes: each person's value (an index into ``published.values``).

    Yields:
        Each such assignment, as the class of every person (a list).
    """
    left = published.counts.copy()
    n = len(codes)
    chosen = [0] * n

    def place(p):
        if p == n:
            yield list(chosen)
            return
        v = codes[p]
        for c in covers[indptr[p]:indptr[p + 1]].tolist():
            if left[c, v]:
                left[c, v] -= 1
                chosen[p] = c
                yield from place(p + 1)
                left[c, v] += 1

    yield from place(0)


def count_tables(published: PublishedClasses, person_class: np.ndarray | None) -> int:
    """How many value sequences :func:`candidates` goes through: with everyone's class known
    (``person_class``), the product over the classes of the arrangements of their values (each a
    candidate); otherwise the arrangements of all published values over all people (of which those
    no matching allows are skipped)."""
    if person_class is not None:
        total = 1
        for row in published.counts.tolist():
            total *= math.factorial(sum(row)) // math.prod(math.factorial(c) for c in row)
        return total
    counts = published.counts.sum(axis=0).tolist()
    return math.factorial(sum(counts)) // math.prod(math.factorial(c) for c in counts)


def candidates(published: PublishedClasses, person_class: np.ndarray | None, indptr, covers):
    """Every candidate input consistent with the published classes, as the value of every person
    (an ``int64`` array of indices into ``published.values``).

    Args:
        published: the release's classes.
        person_class: each person's class when everyone's is known (each class's values are then
            arranged over its members), else ``None`` (all values over all people, kept when some
            :func:`matchings` allows them).
        indptr, covers: the classes covering each person (:func:`veil.attacks.locating.locate`).
    """
    n = len(person_class) if person_class is not None else len(indptr) - 1
    if person_class is not None:
        members = [np.flatnonzero(person_class == c) for c in range(published.n_classes)]
        per_class = [list(_multiset_permutations(row.tolist())) for row in published.counts]
        for arrangement in itertools.product(*per_class):
            codes = np.empty(n, dtype=np.int64)
            for people, values in zip(members, arrangement):
                codes[people] = values
            yield codes
        return
    for seq in _multiset_permutations(published.counts.sum(axis=0).tolist()):
        codes = np.array(seq, dtype=np.int64)
        if next(matchings(published, indptr, covers, codes), None) is not None:
            yield codes


def exact_posteriors(publisher, published: PublishedClasses, person_class: np.ndarray | None, indptr: np.ndarray,
                     covers: np.ndarray) -> tuple[np.ndarray, int, int]:
    """Every person's posterior of every published value over the candidate inputs, each weighted by
    ``publisher.weight`` (the probability that the algorithm publishes the release from it).

    Args:
        publisher: a prepared :class:`~veil.attacks.publisher.Publisher`.
        published: the release's classes.
        person_class: each person's class when everyone's is known, else ``None``.
        indptr, covers: the classes covering each person (:func:`veil.attacks.locating.locate`).

    Returns:
        ``(posterior, tables, consistent)``: ``float [people × values]``, the candidate inputs
        enumerated, and those the algorithm could have published the release from.

    Raises:
        DataError: no candidate input leads the algorithm to the release.
    """
    n = len(indptr) - 1
    weights = np.zeros((n, len(published.values)))
    total = 0.0
    tables = consistent = 0
    people = np.arange(n)
    for codes in candidates(published, person_class, indptr, covers):
        tables += 1
        w = publisher.weight(codes)
        if w > 0:
            consistent += 1
            total += w
            weights[people, codes] += w
    if total == 0:
        raise DataError(f"none of the {tables:,} inputs this population could have had leads the "
                        f"{publisher.name} to this release; check the models and the algorithm.")
    return weights / total, tables, consistent
