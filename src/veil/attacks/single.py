"""Attacks on a single release: homogeneity, background knowledge, skewness and similarity.

The adversary knows a target's quasi-identifiers, so he knows the target's equivalence class in
the release, and he reads the sensitive values published in that class. The attacks are those
Machanavajjhala et al. ("ℓ-diversity: privacy beyond k-anonymity", ICDE 2006 / TKDD 2007) and
Li, Li and Venkatasubramanian ("t-closeness: privacy beyond k-anonymity and ℓ-diversity",
ICDE 2007) used against k-anonymity and ℓ-diversity.

Every attack reads one sensitive column's class × value count matrix (vectorized over classes)
and returns a result with the exposed classes (indices into the classes) and the exposed records
(indices of rows of the released table, found through ``classes.row_class``), and a JSON-ready
:meth:`summary`. Shuffling the released rows changes only the order of the record indices, not
which records are exposed.

Any release can be attacked: a veil :class:`~veil.anonymize.release.Release`, or a released
table someone else produced, as a file or a frame. A released table's generalized
quasi-identifier values are read as plain text, so its classes are the groups of records with
equal quasi-identifier tuples; nothing needs to be parsed. A hierarchy is only needed on the
sensitive column, for the similarity attack.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from veil.attacks.disclosure import DisclosureResult, disclosure, json_number, released_counts, rows_where
from veil.classes import EquivalenceClasses
from veil.data.dataset import Dataset
from veil.data.hierarchy import Hierarchy
from veil.errors import ParameterError
from veil.models.base import TOLERANCE

DEFAULT_THRESHOLD = 0.8
DEFAULT_SKEW = 2.0
DEFAULT_LEVEL = 1


@dataclass(frozen=True, eq=False)
class AttackResult:
    """What an attack exposes.

    Attributes:
        attack: the attack's name.
        sensitive: the sensitive column attacked.
        n_classes: the number of classes in the release.
        n_records: the number of records in the release.
        classes: indices of the exposed classes.
        records: indices of the exposed records (rows of the released table).
    """

    attack: str
    sensitive: str
    n_classes: int
    n_records: int
    classes: np.ndarray
    records: np.ndarray

    def summary(self) -> dict:
        """A JSON-ready summary: how many classes and records are exposed, and their shares."""
        return {"attack": self.attack, "sensitive": self.sensitive,
                "classes": int(len(self.classes)), "records": int(len(self.records)),
                "class_share": json_number(len(self.classes) / max(self.n_classes, 1)),
                "record_share": json_number(len(self.records) / max(self.n_records, 1))}


def _tally(labels: np.ndarray, codes: np.ndarray, weights: np.ndarray) -> dict[str, int]:
    """``{label: total weight}`` over ``codes``, largest first (ties by label)."""
    totals = np.bincount(codes, weights=weights, minlength=len(labels)).astype(np.int64)
    used = np.flatnonzero(totals)
    order = sorted(used, key=lambda i: (-totals[i], str(labels[i])))
    return {str(labels[i]): int(totals[i]) for i in order}


# ---------------------------------------------------------------------------------------------
# Homogeneity


@dataclass(frozen=True, eq=False)
class HomogeneityResult(AttackResult):
    """The homogeneity attack's outcome: every record of an exposed class is exposed.

    Attributes:
        values: for each exposed class, the code of the one sensitive value it holds.
        sizes: the size of each exposed class.
        labels: the label of every code of the sensitive column.
    """

    values: np.ndarray
    sizes: np.ndarray
    labels: np.ndarray

    def summary(self) -> dict:
        out = super().summary()
        out["values"] = _tally(self.labels, self.values, self.sizes)
        return out


def homogeneity(classes: EquivalenceClasses, sensitive: str | None = None) -> HomogeneityResult:
    """Homogeneity attack: classes whose records all hold the same sensitive value.

    Anyone who knows a target is in such a class learns the target's value, whatever k is
    (Machanavajjhala et al.: Bob, a 31-year-old from 13053, in a class where everyone has cancer).
    Every record of an exposed class is exposed.

    Args:
        classes: the released equivalence classes.
        sensitive: the sensitive column; ``None`` picks the only one.

    Raises:
        ParameterError, ColumnError: as :func:`veil.attacks.disclosure.released_counts`.
    """
    sc = released_counts(classes, sensitive)
    counts = sc.counts
    exposed = np.count_nonzero(counts, axis=1) == 1
    ids = np.flatnonzero(exposed)
    return HomogeneityResult("homogeneity", sc.name, classes.n_classes, classes.n_rows, ids,
                             rows_where(classes, exposed), counts[ids].argmax(axis=1), counts[ids].sum(axis=1),
                             sc.column.labels)


# ---------------------------------------------------------------------------------------------
# Background knowledge


@dataclass(frozen=True, eq=False)
class BackgroundKnowledgeResult(AttackResult):
    """The background-knowledge attack's outcome for m = 0 … ``max_m``.

    ``classes`` and ``records`` are those exposed (posterior ≥ ``threshold``) by an adversary
    who knows ``max_m`` negative facts; :meth:`records_at` gives them for a smaller m.

    Attributes:
        threshold: the posterior at or above which a record counts as exposed.
        max_m: the largest number of values ruled out.
        m: ``0 … max_m``.
        classes_pinned, records_pinned: for each m, the classes (records) whose value is
            pinned (posterior 1).
        classes_exposed, records_exposed: for each m, the classes holding an exposed record and
            the exposed records.
        pinned_m: ``int64 [classes]``, the m at which each class's records are pinned: its
            number of distinct values minus one.
        exposed_m: ``int64 [classes × values]``, the smallest m at which a record of that class
            and value is exposed, or −1 when no m ≤ ``max_m`` exposes it.
        top_posterior: ``float [m × classes]``, the largest posterior in each class for each m.
    """

    threshold: float
    max_m: int
    m: np.ndarray
    classes_pinned: np.ndarray
    records_pinned: np.ndarray
    classes_exposed: np.ndarray
    records_exposed: np.ndarray
    pinned_m: np.ndarray
    exposed_m: np.ndarray
    top_posterior: np.ndarray

    def records_at(self, m: int, classes: EquivalenceClasses, *, pinned: bool = False) -> np.ndarray:
        """The records exposed (or, with ``pinned``, pinned) by an adversary who rules out m values.

        Args:
            m: the number of values ruled out, ``0 … max_m``.
            classes: the classes the attack ran on.
            pinned: count only records whose value is pinned.

        Raises:
            ParameterError: m outside ``0 … max_m``.
        """
        if not 0 <= m <= self.max_m:
            raise ParameterError(f"m must be between 0 and {self.max_m}, not {m}.")
        if pinned:
            return rows_where(classes, self.pinned_m <= m)
        cells = (self.exposed_m >= 0) & (self.exposed_m <= m)
        return rows_where(classes, None, cells, classes.dataset.column(self.sensitive).codes)

    def summary(self) -> dict:
        out = super().summary()
        out.update(threshold=json_number(self.threshold), max_m=int(self.max_m))
        out["by_m"] = [{"m": int(m), "classes_pinned": int(self.classes_pinned[m]),
                        "records_pinned": int(self.records_pinned[m]),
                        "classes_exposed": int(self.classes_exposed[m]),
                        "records_exposed": int(self.records_exposed[m]),
                        "record_share_exposed": json_number(self.records_exposed[m] / max(self.n_records, 1))}
                       for m in self.m]
        return out


def background_knowledge(classes: EquivalenceClasses, sensitive: str | None = None, *,
                         max_m: int | None = None, threshold: float = DEFAULT_THRESHOLD
                         ) -> BackgroundKnowledgeResult:
    """Background-knowledge attack: an adversary who can rule out m sensitive values for a target.

    Machanavajjhala et al.'s adversary knows facts of the form "the target does not have s"
    (Umeko is Japanese, and Japanese have a very low incidence of heart disease). Take a target
    holding value ``s`` in class ``C``, with ``n(C, v)`` records of each value ``v``. The adversary
    rules out ``m`` values the target does not hold (facts must be true, so never ``s``); the most
    damaging choice is the ``m`` most frequent other values of the class. His posterior on the
    target's true value is then::

        P_m = n(C, s) / (n(C, s) + Σ n(C, v) over the other values v of C not ruled out)

    The record is **pinned** when ``P_m = 1``, i.e. the class holds at most m values besides
    ``s`` (at m ≥ distinct values − 1, which is why distinct ℓ-diversity resists ℓ − 2 facts),
    and **exposed** when ``P_m ≥ threshold``. ``P_m`` grows with m. A class is pinned (exposed)
    when its records are (when one of them is: its most frequent value has the largest
    posterior).

    Args:
        classes: the released equivalence classes.
        sensitive: the sensitive column; ``None`` picks the only one.
        max_m: report m = 0 … ``max_m``; default: the number of distinct values in the release
            minus 2 (ruling out all but one of the table's values pins a target without reading
            the release at all), or less when every class is already pinned at a smaller m (the
            most distinct values in a class minus 1), and at least 0.
        threshold: the posterior at or above which a record is exposed, in (0, 1]; 1 counts only
            pinned records.

    Raises:
        ParameterError: ``threshold`` outside (0, 1], ``max_m`` negative or not below the
            column's number of distinct values; and as :func:`released_counts`.
    """
    if not 0 < threshold <= 1:
        raise ParameterError(f"the posterior threshold must be in (0, 1], not {threshold}.")
    sc = released_counts(classes, sensitive)
    counts = sc.counts
    n_values = int(np.count_nonzero(sc.reference))
    distinct = np.count_nonzero(counts, axis=1)
    if max_m is None:
        max_m = max(min(n_values - 2, int(distinct.max()) - 1), 0)
    if isinstance(max_m, bool) or int(max_m) != max_m or not 0 <= max_m <= max(n_values - 1, 0):
        raise ParameterError(f"m must be a whole number between 0 and {max(n_values - 1, 0)} for column "
                             f"'{sc.name}', which holds {n_values} distinct values, not {max_m}.")
    max_m = int(max_m)
    n_classes, width = counts.shape
    # Each class's counts in decreasing order, and where each value landed in that order.
    order = np.argsort(-counts, axis=1, kind="stable")
    ranked = np.take_along_axis(counts, order, axis=1)
    prefix = np.zeros((n_classes, width + 1), dtype=np.int64)
    np.cumsum(ranked, axis=1, out=prefix[:, 1:])
    sizes = prefix[:, -1]
    position = np.arange(width)
    present = ranked > 0
    never = -1
    first = np.full((n_classes, width), never, dtype=np.int64)
    stats = np.zeros((4, max_m + 1), dtype=np.int64)
    top = np.zeros((max_m + 1, n_classes))
    # One pass per m (a handful): everything inside is vectorized over classes and values.
    for m in range(max_m + 1):
        # A value ranked within the top m+1 loses the other m of them; one ranked lower loses the top m.
        inside = prefix[:, [min(m + 1, width)]] - ranked
        outside = prefix[:, [min(m, width)]]
        ruled_out = np.where(position[None, :] <= m, inside, outside)
        posterior = np.divide(ranked, sizes[:, None] - ruled_out, out=np.zeros(ranked.shape),
                              where=present)
        exposed = present & (posterior >= threshold - TOLERANCE)
        first[exposed & (first == never)] = m
        top[m] = posterior[:, 0] if width else 0.0
        pinned = (distinct - 1 <= m) & (sizes > 0)
        stats[:, m] = (pinned.sum(), sizes[pinned].sum(), exposed.any(axis=1).sum(), ranked[exposed].sum())
    # Back from rank order to value order. Tied counts get the same posterior whatever their ranks.
    exposed_m = np.empty_like(first)
    np.put_along_axis(exposed_m, order, first, axis=1)
    exposed_classes = np.flatnonzero((exposed_m >= 0).any(axis=1))
    records = rows_where(classes, None, exposed_m >= 0, sc.column.codes)
    return BackgroundKnowledgeResult(
        "background knowledge", sc.name, classes.n_classes, classes.n_rows, exposed_classes, records,
        threshold=float(threshold), max_m=max_m, m=np.arange(max_m + 1), classes_pinned=stats[0],
        records_pinned=stats[1], classes_exposed=stats[2], records_exposed=stats[3],
        pinned_m=np.where(sizes > 0, distinct - 1, 0).astype(np.int64), exposed_m=exposed_m, top_posterior=top)


# ---------------------------------------------------------------------------------------------
# Skewness


@dataclass(frozen=True, eq=False)
class SkewnessResult(AttackResult):
    """The skewness attack's outcome.

    ``classes`` are the skewed classes; ``records`` are the records holding a value that is
    skewed in their class (the adversary's belief in their true value grew at least ``factor``
    times). ``class_records`` counts every record of the skewed classes.

    Attributes:
        factor: the ratio at or above which a value is skewed.
        rare: the largest table share of a value that can count as skewed (``None``: no limit
            besides the one the factor implies, 1/factor).
        ratio: ``float [classes × values]``, ``p(class, s) / p(T, s)`` (0 where s is absent).
        skewed: ``bool [classes × values]``, the skewed (class, value) cells.
        class_records: the number of records in skewed classes.
        labels: the label of every code of the sensitive column.
    """

    factor: float
    rare: float | None
    ratio: np.ndarray
    skewed: np.ndarray
    class_records: int
    labels: np.ndarray

    def summary(self) -> dict:
        out = super().summary()
        cells = np.nonzero(self.skewed)
        out.update(factor=json_number(self.factor), rare=None if self.rare is None else json_number(self.rare),
                   class_records=int(self.class_records),
                   max_ratio=json_number(self.ratio.max()) if self.ratio.size else None,
                   values=_tally(self.labels, cells[1], np.ones(len(cells[1]))))
        return out


def skewness(classes: EquivalenceClasses, sensitive: str | None = None, *, factor: float = DEFAULT_SKEW,
             rare: float | None = None) -> SkewnessResult:
    """Skewness attack: classes where a value is far more common than in the whole table.

    Li et al.: when 1 % of a table is HIV-positive, a class that is half positive tells the
    adversary each of its members is 50 times more likely to be positive than he thought, even
    though the class is perfectly 2-diverse. A (class, value) cell is **skewed** when
    ``p(class, s) ≥ factor · p(T, s)``, and a class is skewed when one of its cells is. Because a
    share is at most 1, only values whose table share is at most 1/factor can be skewed: the
    factor itself restricts the attack to the table's rarer values; ``rare`` restricts it further.
    The largest ratio of a class is its A_quot (:mod:`veil.attacks.disclosure`).

    Args:
        classes: the released equivalence classes.
        sensitive: the sensitive column; ``None`` picks the only one.
        factor: the ratio (> 1) at or above which a value is skewed.
        rare: only values whose table share is at most this (in (0, 1]) count; ``None``: all.

    Raises:
        ParameterError: ``factor`` ≤ 1 or ``rare`` outside (0, 1]; and as :func:`released_counts`.
    """
    if not factor > 1:
        raise ParameterError(f"the skewness factor must be greater than 1, not {factor}.")
    if rare is not None and not 0 < rare <= 1:
        raise ParameterError(f"the rare share must be in (0, 1], not {rare}.")
    sc = released_counts(classes, sensitive)
    p, q = sc.class_distribution(), sc.table_distribution()
    ratio = np.divide(p, q[None, :], out=np.zeros_like(p), where=q[None, :] > 0)
    skewed = (sc.counts > 0) & (ratio >= factor * (1 - TOLERANCE))
    if rare is not None:
        skewed &= (q <= rare * (1 + TOLERANCE))[None, :]
    exposed = skewed.any(axis=1)
    sizes = sc.counts.sum(axis=1)
    return SkewnessResult("skewness", sc.name, classes.n_classes, classes.n_rows, np.flatnonzero(exposed),
                          rows_where(classes, None, skewed, sc.column.codes), factor=float(factor),
                          rare=None if rare is None else float(rare), ratio=ratio, skewed=skewed,
                          class_records=int(sizes[exposed].sum()), labels=sc.column.labels)


# ---------------------------------------------------------------------------------------------
# Similarity


@dataclass(frozen=True, eq=False)
class SimilarityResult(AttackResult):
    """The similarity attack's outcome: every record of an exposed class is exposed.

    Attributes:
        level: the hierarchy level whose nodes are the semantic groups.
        groups: for each exposed class, the code of its group at ``level``.
        group_labels: the label of every group at ``level``.
        homogeneous: for each exposed class, whether it holds a single value (the homogeneity
            attack already exposes it).
        sizes: the size of each exposed class.
    """

    level: int
    groups: np.ndarray
    group_labels: np.ndarray
    homogeneous: np.ndarray
    sizes: np.ndarray

    def summary(self) -> dict:
        out = super().summary()
        out.update(level=int(self.level), beyond_homogeneity=int((~self.homogeneous).sum()),
                   groups=_tally(self.group_labels, self.groups, self.sizes))
        return out


def similarity(classes: EquivalenceClasses, sensitive: str | None = None, *,
               level: int = DEFAULT_LEVEL) -> SimilarityResult:
    """Similarity attack: classes whose sensitive values all fall in one semantic group.

    Li et al.: a 3-diverse class holding gastric ulcer, gastritis and stomach cancer still tells
    the adversary that Bob has a stomach disease. The groups are the nodes at ``level`` of the
    sensitive column's hierarchy (level 1: the values' parents); a class is exposed when all its
    values lie under one node, which is reported. Homogeneous classes are exposed at every level
    and are flagged in the result.

    Args:
        classes: the released equivalence classes; the sensitive column needs a hierarchy.
        sensitive: the sensitive column; ``None`` picks the only one.
        level: the hierarchy level of the groups, 1 … the hierarchy's height.

    Raises:
        ParameterError: the column has no hierarchy, or ``level`` is not one of its levels above
            0; and as :func:`released_counts`.
    """
    sc = released_counts(classes, sensitive)
    gen = sc.generalization
    if gen is None:
        raise ParameterError(f"the similarity attack needs a hierarchy on the sensitive column '{sc.name}'; "
                             "give one to group its values.")
    if isinstance(level, bool) or int(level) != level or not 1 <= level <= gen.height:
        raise ParameterError(f"the similarity level must be between 1 and {gen.height} (the height of "
                             f"the hierarchy of '{sc.name}'), not {level}.")
    level = int(level)
    group = gen.lut[:, level].astype(np.int64)
    n_groups = gen.radix(level)
    # Sum each class's counts per group: sort the values by group, then add up each run.
    order = np.argsort(group, kind="stable")
    sorted_group = group[order]
    starts = np.flatnonzero(np.r_[True, sorted_group[1:] != sorted_group[:-1]])
    group_counts = np.zeros((sc.counts.shape[0], n_groups), dtype=np.int64)
    group_counts[:, sorted_group[starts]] = np.add.reduceat(sc.counts[:, order], starts, axis=1)
    exposed = np.count_nonzero(group_counts, axis=1) == 1
    ids = np.flatnonzero(exposed)
    return SimilarityResult("similarity", sc.name, classes.n_classes, classes.n_rows, ids,
                            rows_where(classes, exposed), level=level,
                            groups=group_counts[ids].argmax(axis=1), group_labels=gen.labels[level],
                            homogeneous=np.count_nonzero(sc.counts[ids], axis=1) == 1,
                            sizes=group_counts[ids].sum(axis=1))


# ---------------------------------------------------------------------------------------------
# Every attack on a release


@dataclass(frozen=True, eq=False)
class ColumnAttacks:
    """Every single-release attack and the disclosure measures on one sensitive column.

    ``similarity`` is ``None`` when the column has no hierarchy.
    """

    sensitive: str
    homogeneity: HomogeneityResult
    background_knowledge: BackgroundKnowledgeResult
    skewness: SkewnessResult
    similarity: SimilarityResult | None
    disclosure: DisclosureResult

    def summary(self) -> dict:
        return {"homogeneity": self.homogeneity.summary(),
                "background_knowledge": self.background_knowledge.summary(),
                "skewness": self.skewness.summary(),
                "similarity": None if self.similarity is None else self.similarity.summary(),
                "disclosure": self.disclosure.summary()}


@dataclass(frozen=True, eq=False)
class SingleReleaseReport:
    """The single-release attacks on every sensitive column of a release.

    Attributes:
        classes: the released equivalence classes attacked.
        by_sensitive: per sensitive column, its :class:`ColumnAttacks`.
        notes: remarks worth a reader's attention (one sentence each).
    """

    classes: EquivalenceClasses
    by_sensitive: dict[str, ColumnAttacks]
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """A JSON-ready summary."""
        ds = self.classes.dataset
        return {"rows": self.classes.n_rows, "classes": self.classes.n_classes,
                "quasi_identifiers": list(ds.quasi_identifiers), "sensitive": list(self.by_sensitive),
                "attacks": {name: col.summary() for name, col in self.by_sensitive.items()},
                "notes": list(self.notes)}


def release_classes(source, *, quasi_identifiers: str | Sequence[str] | None = None,
                    sensitive: str | Sequence[str] | None = None,
                    hierarchies: Mapping[str, Hierarchy | str | os.PathLike] | None = None,
                    delimiter: str | None = None) -> EquivalenceClasses:
    """The equivalence classes an adversary reads off a release.

    Args:
        source: a veil ``Release`` (its published table is read, so record indices are its rows),
            :class:`EquivalenceClasses` (used as they are), a :class:`Dataset` of a released
            table, or a released table as a path or a pandas/polars frame.
        quasi_identifiers: the quasi-identifying columns; for a ``Release`` or a ``Dataset`` they
            default to its own.
        sensitive: the sensitive columns; for a ``Release`` or a ``Dataset`` they default to its
            own.
        hierarchies: hierarchies of sensitive columns (the similarity attack's groups); for a
            ``Release`` they default to the input's.
        delimiter: the CSV delimiter when ``source`` is a CSV path (sniffed when ``None``).

    Raises:
        ColumnError, DataError, HierarchyError: the table cannot be read, a column is unknown, or
            a hierarchy does not cover the sensitive values.
    """
    from veil.anonymize.release import Release

    if isinstance(source, EquivalenceClasses):
        return source
    if isinstance(source, Release):
        ds = source.dataset
        if hierarchies is None:
            wanted = ds.sensitive if sensitive is None else ([sensitive] if isinstance(sensitive, str)
                                                              else list(sensitive))
            hierarchies = {n: h for n, h in ds.hierarchies.items() if n in wanted}
        source = Dataset(source.table, quasi_identifiers=quasi_identifiers or ds.quasi_identifiers,
                         sensitive=ds.sensitive if sensitive is None else sensitive, hierarchies=hierarchies)
    elif isinstance(source, Dataset):
        if quasi_identifiers is not None or sensitive is not None or hierarchies is not None:
            source = Dataset(source.table, quasi_identifiers=quasi_identifiers or source.quasi_identifiers,
                             sensitive=source.sensitive if sensitive is None else sensitive,
                             hierarchies=hierarchies if hierarchies is not None else source.hierarchies)
    else:
        source = Dataset(source, quasi_identifiers=quasi_identifiers, sensitive=sensitive,
                         hierarchies=hierarchies, delimiter=delimiter)
    return EquivalenceClasses.from_dataset(source)


def attack_release(source, *, quasi_identifiers: str | Sequence[str] | None = None,
                   sensitive: str | Sequence[str] | None = None,
                   hierarchies: Mapping[str, Hierarchy | str | os.PathLike] | None = None,
                   delimiter: str | None = None, max_m: int | None = None,
                   threshold: float = DEFAULT_THRESHOLD, skew: float = DEFAULT_SKEW, rare: float | None = None,
                   level: int = DEFAULT_LEVEL) -> SingleReleaseReport:
    """Run every single-release attack and the disclosure measures on every sensitive column.

    Args:
        source: the release, as :func:`release_classes` reads it.
        quasi_identifiers: as :func:`release_classes` reads them.
        sensitive: as :func:`release_classes` reads them.
        hierarchies: as :func:`release_classes` reads them.
        delimiter: as :func:`release_classes` reads it.
        max_m: the most values the background-knowledge adversary rules out
            (:func:`background_knowledge`); capped per column at its number of distinct values
            minus one.
        threshold: the posterior at which the background-knowledge adversary counts a record as
            disclosed (:func:`background_knowledge`).
        skew: the skewness factor (:func:`skewness`).
        rare: the skewness attack's rarity limit (:func:`skewness`).
        level: the hierarchy level of the similarity groups (:func:`similarity`); columns
            without a hierarchy skip the similarity attack, with a note.

    Raises:
        ParameterError: a parameter out of range, or no sensitive column; and as
            :func:`release_classes`.
    """
    # Parameters are checked before any table is read.
    if max_m is not None and (isinstance(max_m, bool) or int(max_m) != max_m or max_m < 0):
        raise ParameterError(f"m must be a whole number of at least 0, not {max_m}.")
    if not 0 < threshold <= 1:
        raise ParameterError(f"the posterior threshold must be in (0, 1], not {threshold}.")
    if not skew > 1:
        raise ParameterError(f"the skewness factor must be greater than 1, not {skew}.")
    if rare is not None and not 0 < rare <= 1:
        raise ParameterError(f"the rare share must be in (0, 1], not {rare}.")
    if isinstance(level, bool) or int(level) != level or level < 1:
        raise ParameterError(f"the similarity level must be at least 1, not {level}.")
    classes = release_classes(source, quasi_identifiers=quasi_identifiers, sensitive=sensitive,
                              hierarchies=hierarchies, delimiter=delimiter)
    names = list(classes.dataset.sensitive)
    if not names:
        raise ParameterError("the attacks need a sensitive column; declare one.")
    if classes.n_rows == 0:
        raise ParameterError("the release has no records to attack.")
    notes: list[str] = []
    by_sensitive = {}
    for name in names:
        n_values = int(np.count_nonzero(classes.sensitive[name].counts.sum(axis=0)))
        m = None if max_m is None else min(int(max_m), max(n_values - 1, 0))
        if max_m is not None and m < max_m:
            notes.append(f"column '{name}' holds {n_values} distinct values, so m stops at {m}.")
        sim = None
        if classes.sensitive[name].generalization is None:
            notes.append(f"column '{name}' has no hierarchy, so the similarity attack was skipped.")
        else:
            height = classes.sensitive[name].generalization.height
            if level > height:
                raise ParameterError(f"the similarity level must be between 1 and {height} (the height of "
                                     f"the hierarchy of '{name}'), not {level}.")
            sim = similarity(classes, name, level=level)
        if n_values == 1:
            notes.append(f"column '{name}' holds a single value, so every record's value is disclosed.")
        by_sensitive[name] = ColumnAttacks(
            name, homogeneity(classes, name), background_knowledge(classes, name, max_m=m, threshold=threshold),
            skewness(classes, name, factor=skew, rare=rare), sim, disclosure(classes, name))
    return SingleReleaseReport(classes, by_sensitive, notes)
