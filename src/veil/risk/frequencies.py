"""Sample and estimated population frequencies of the key groups of a table.

A survey table is a sample of a population. The records sharing one combination of the
(generalized) quasi-identifiers, the *key*, form a key group; when the sample was drawn within
strata, a key group is a key within one stratum. For a group k:

* **f_k**, its sample frequency: the records of the sample in the group;
* **F̂_k**, its estimated population frequency: the sum of the sampling weights of those records
  (the Horvitz–Thompson estimate of the population records with that key, as sdcMicro's
  ``freqCalc`` and μ-Argus estimate it). Without a weight column every record weighs 1 and
  F̂_k = f_k: the sample is the population.

Every risk measure of :mod:`veil.risk.individual` reads these two numbers per group.

A lattice search (:class:`veil.anonymize.FullDomain`) asks for them on thousands of nodes rolled
up from one set of classes read from the rows. The records and weight sums per class (and per
stratum) of those classes are computed once and kept on them
(:attr:`veil.classes.EquivalenceClasses.key_sums`); a rolled-up node maps them to its own classes
(:meth:`~veil.classes.EquivalenceClasses.map_from`), never reading the rows again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.classes import EquivalenceClasses, group_rows


@dataclass(frozen=True)
class KeyFrequencies:
    """The key groups of a table and their frequencies.

    Attributes:
        group: ``int64`` per row: its key group (its class, within its stratum when strata are
            given); -1 for a suppressed row (class -1), which belongs to no group.
        sample: ``int64`` per group: f_k, the sample records in the group.
        population: ``float64`` per group: F̂_k, the sum of the sampling weights of the group's
            records (f_k without weights).
        group_class: ``int64`` per group: the equivalence class it belongs to (the group itself
            without strata).
    """

    group: np.ndarray
    sample: np.ndarray
    population: np.ndarray
    group_class: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class _KeySums:
    """Per group of classes read from the rows: its class, its stratum, f and F̂, and each row's group."""

    group_class: np.ndarray
    stratum: np.ndarray | None
    n_strata: int
    sample: np.ndarray
    population: np.ndarray
    row_group: np.ndarray


def key_frequencies(classes: EquivalenceClasses) -> KeyFrequencies:
    """f_k and F̂_k of every key group of ``classes`` (see the module docstring).

    The dataset's sampling weights (:attr:`veil.data.dataset.Dataset.sampling_weights`) and
    strata are read; a table summarized by its distinct rows (``row_weights``) counts each row as
    that many records, each with the row's sampling weight.

    Args:
        classes: equivalence classes of a dataset at any node, or a subset of them (the rows of
            a suppressed class belong to no group).

    Raises:
        DataError: the weight column is not numeric or holds a missing, zero, negative or
            infinite weight.
    """
    group_class, sample, population, row_map = group_frequencies(classes)
    sums = _key_sums(classes.source)
    group = sums.row_group if row_map is None else _gather(row_map, sums.row_group)
    return KeyFrequencies(group, sample, population, group_class)


def group_frequencies(classes: EquivalenceClasses) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """The key groups of ``classes`` without the per-row map (what a lattice search needs).

    Returns:
        ``(group_class, sample, population, group_of)``: per group its class, f_k and F̂_k; and,
        for each group of the classes read from the rows (``classes.source``), the group here
        it falls in (``None`` when these classes are that source, whose groups are these).
    """
    source = classes.source
    sums = _key_sums(source)
    if classes is source:
        return sums.group_class, sums.sample, sums.population, None
    class_of = classes.map_from(source)[sums.group_class]
    n = classes.n_classes
    if sums.stratum is None:
        sample = np.asarray(classes.sizes, dtype=np.int64)
        population = np.bincount(class_of, weights=sums.population, minlength=n)
        return np.arange(n, dtype=np.int64), sample, population, class_of
    group_of, keys = group_rows([class_of, sums.stratum], [n, sums.n_strata])
    n_groups = len(keys)
    sample = np.bincount(group_of, weights=sums.sample, minlength=n_groups).astype(np.int64)
    population = np.bincount(group_of, weights=sums.population, minlength=n_groups)
    return keys[:, 0].astype(np.int64), sample, population, group_of


def _gather(mapping: np.ndarray, row_group: np.ndarray) -> np.ndarray:
    """``mapping[row_group]``, keeping -1 (a suppressed row) as -1."""
    if len(row_group) and row_group.min() < 0:
        return np.where(row_group >= 0, mapping[np.maximum(row_group, 0)], -1)
    return mapping[row_group]


def _key_sums(source: EquivalenceClasses) -> _KeySums:
    """The groups of classes read from the rows, computed once and kept on them."""
    cached = source.key_sums
    if cached is not None:
        return cached
    dataset = source.dataset
    row_class = np.asarray(source.row_class, dtype=np.int64)
    weights = dataset.sampling_weights
    records = dataset.row_weights
    if records is not None:
        records = np.asarray(records, dtype=np.float64)
        weights = records if weights is None else weights * records
    released = None
    if len(row_class) and row_class.min() < 0:
        released = np.flatnonzero(row_class >= 0)
    n = source.n_classes
    if not dataset.strata:
        rows = row_class if released is None else row_class[released]
        sample = np.bincount(rows, weights=None if records is None else _take(records, released),
                             minlength=n).astype(np.int64)
        if weights is None:
            population = sample.astype(np.float64)
        else:
            population = np.bincount(rows, weights=_take(weights, released), minlength=n)
        sums = _KeySums(np.arange(n, dtype=np.int64), None, 1, sample, population, row_class)
    else:
        columns = [dataset.column(name) for name in dataset.strata]
        stratum, strata = group_rows([c.codes for c in columns], [c.cardinality for c in columns], decode=False)
        n_strata = len(strata)
        rows = row_class if released is None else row_class[released]
        in_stratum = stratum if released is None else stratum[released]
        group, keys = group_rows([rows, in_stratum], [n, n_strata])
        n_groups = len(keys)
        sample = np.bincount(group, weights=None if records is None else _take(records, released),
                             minlength=n_groups).astype(np.int64)
        if weights is None:
            population = sample.astype(np.float64)
        else:
            population = np.bincount(group, weights=_take(weights, released), minlength=n_groups)
        if released is None:
            row_group = group
        else:
            row_group = np.full(len(row_class), -1, dtype=np.int64)
            row_group[released] = group
        sums = _KeySums(keys[:, 0].astype(np.int64), keys[:, 1].astype(np.int64), n_strata, sample, population,
                        row_group)
    source.key_sums = sums
    return sums


def _take(values: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    return values if rows is None else values[rows]
