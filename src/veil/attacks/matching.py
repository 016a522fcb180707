"""The unsorted matching attack (Sweeney, "k-anonymity: a model for protecting privacy", 2002,
Section 4.1): two releases of the same records published in the same row order.

Row ``i`` of one release and row ``i`` of the other are then the same person, so the adversary
joins the releases by position and each person's published cells intersect: a person is one of
the rows that share both their class in the first release and their class in the second, which
may be far fewer than either class (Sweeney's example: two 2-anonymous releases of one table
joined by position identify every record). A shuffled release defeats the attack: its rows no
longer correspond by position.

**Detection.** The adversary sees whether the releases are in the same order: the columns both
publish identically (the same values, e.g. an ungeneralized sensitive column) agree on every row
when they are. The attack is *linkable* when the releases have as many rows and every row agrees
on those columns while a random order would make them disagree somewhere; when the releases
share no such column nothing contradicts the positional join and it is taken as the adversary
would take it, with a note.

**Measure.** Per row, ``joined`` is the number of rows with the same (first class, second class)
pair, against ``before = min(first class size, second class size)``. A person is *narrowed* when
``joined < before`` and *exposed* when ``joined < k`` (``k``: the smallest class of either
release unless given). Classes are the distinct tuples of the published quasi-identifiers,
grouped as integer codes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from veil.attacks.published_release import as_published, load_manifest, published_table, release_name, roles
from veil.classes import group_rows
from veil.data.encoding import published_texts
from veil.errors import ColumnError, ParameterError


@dataclass(frozen=True, eq=False)
class MatchingResult:
    """The unsorted matching attack's outcome.

    Attributes:
        names: the two releases, as messages call them.
        rows: rows of each release.
        linkable: whether the releases can be joined by position (see the module).
        link_columns: the columns both publish identically, on which the order was tested.
        agreement: share of rows whose link columns agree (``None`` without link columns or
            with different row counts).
        chance: the share expected if the second release's order were random.
        k: the class size under which a joined person counts as exposed.
        before: per row, the smaller of its two class sizes.
        joined: per row, the rows sharing both its classes (``before`` when not linkable).
        notes: remarks worth a reader's attention (one sentence each).
    """

    names: tuple[str, str]
    rows: tuple[int, int]
    linkable: bool
    link_columns: list[str]
    agreement: float | None
    chance: float | None
    k: int
    before: np.ndarray
    joined: np.ndarray
    notes: list[str] = field(default_factory=list)

    @property
    def narrowed(self) -> np.ndarray:
        """Rows whose candidate set shrinks when the releases are joined by position."""
        return np.flatnonzero(self.joined < self.before)

    @property
    def exposed(self) -> np.ndarray:
        """Rows whose joined candidate set is smaller than :attr:`k`."""
        return np.flatnonzero(self.joined < self.k)

    def summary(self) -> dict:
        """A JSON-ready summary."""
        shrink = self.joined / np.maximum(self.before, 1)
        return {"attack": "matching", "releases": list(self.names), "rows": list(self.rows),
                "linkable": self.linkable, "link_columns": self.link_columns, "agreement": self.agreement,
                "chance": self.chance, "k": self.k, "narrowed": int(len(self.narrowed)),
                "exposed": int(len(self.exposed)), "unique": int((self.joined == 1).sum()),
                "mean_candidates_before": float(self.before.mean()) if len(self.before) else 0.0,
                "mean_candidates_after": float(self.joined.mean()) if len(self.joined) else 0.0,
                "mean_shrink": float(shrink.mean()) if len(shrink) else 1.0, "notes": list(self.notes)}


def matching_attack(first, second, *, quasi_identifiers: str | Sequence[str] | None = None,
                    k: int | None = None, delimiter: str | None = None) -> MatchingResult:
    """Join two releases of the same records by row position and measure what each person loses.

    Args:
        first: the earlier release: a veil ``Release``, a
            :class:`~veil.attacks.published_release.PublishedRelease` or a released table.
        second: the later release, in the same forms.
        quasi_identifiers: the columns the adversary knows (each release's published ones among
            them define its classes); default: each release's manifest's.
        k: the joined class size under which a person is exposed; default: the smallest class
            of either release.
        delimiter: the CSV delimiter of tables given as paths (sniffed when ``None``).

    Raises:
        ParameterError: ``k`` < 1; no quasi-identifier named or in a manifest.
        ColumnError: a release publishes none of the quasi-identifiers.
        DataError: a table or manifest cannot be read.
    """
    if k is not None and k < 1:
        raise ParameterError(f"k must be at least 1, not {k}.")
    tables, names, qi_lists = [], [], []
    named = [quasi_identifiers] if isinstance(quasi_identifiers, str) else list(quasi_identifiers or [])
    for position, release in enumerate((first, second), start=1):
        published = as_published(release)
        name = release_name(published, position)
        manifest = load_manifest(published.manifest, name)
        table = published_table(published, delimiter)
        qis = named or roles(manifest)[0]
        if not qis:
            raise ParameterError("name the quasi-identifiers the adversary knows (--qi); no manifest lists them.")
        present = [q for q in qis if q in table.column_names]
        if not present:
            raise ColumnError(f"{name} publishes none of the quasi-identifiers ({', '.join(qis)}); "
                              "name the columns the adversary knows.")
        tables.append(table)
        names.append(name)
        qi_lists.append(present)
    sizes, classes = [], []
    for table, qis in zip(tables, qi_lists):
        class_of, _ = _classes(table, qis)
        counts = np.bincount(class_of)
        classes.append(class_of)
        sizes.append(counts[class_of])
    rows = (tables[0].num_rows, tables[1].num_rows)
    k = int(k if k is not None else min(int(s.min()) if len(s) else 1 for s in sizes))
    notes = []
    if rows[0] != rows[1]:
        notes.append(f"{names[0]} has {rows[0]:,} rows and {names[1]} {rows[1]:,}; they cannot be joined by position.")
        before = sizes[0]
        return MatchingResult((names[0], names[1]), rows, False, [], None, None, k, before, before.copy(), notes)
    links = _link_columns(tables[0], tables[1])
    agreement = chance = None
    if links:
        left, right = _link_codes(tables[0], tables[1], links)
        agreement = float((left == right).mean()) if rows[0] else 1.0
        p = np.bincount(left, minlength=max(left.max(initial=0), right.max(initial=0)) + 1) / max(rows[0], 1)
        q = np.bincount(right, minlength=len(p)) / max(rows[0], 1)
        chance = float((p * q).sum())
        linkable = agreement == 1.0 and chance < 1.0
        if agreement == 1.0 and chance == 1.0:
            notes.append(f"the columns both releases publish alike ({', '.join(links)}) hold one value, so they cannot "
                         "tell whether the rows correspond; the positional join is taken as true.")
            linkable = True
    else:
        linkable = True
        notes.append("the releases publish no column alike, so nothing contradicts joining them by position; "
                     "the positional join is taken as true.")
    before = np.minimum(sizes[0], sizes[1])
    if not linkable:
        return MatchingResult((names[0], names[1]), rows, False, links, agreement, chance, k, before, before.copy(),
                              notes)
    pair, _ = group_rows([classes[0], classes[1]], [int(classes[0].max(initial=0)) + 1,
                                                    int(classes[1].max(initial=0)) + 1])
    joined = np.bincount(pair)[pair]
    return MatchingResult((names[0], names[1]), rows, True, links, agreement, chance, k, before, joined, notes)



def _classes(table, qis: Sequence[str]) -> tuple[np.ndarray, int]:
    """Each row's class (the distinct tuple of its published quasi-identifiers) and the count."""
    codes, radices = [], []
    for q in qis:
        code, labels = pd.factorize(published_texts(table.column(q)))
        codes.append(code.astype(np.int64))
        radices.append(max(len(labels), 1))
    class_of, keys = group_rows(codes, radices)
    return np.asarray(class_of, dtype=np.int64), len(keys)


def _link_columns(left, right) -> list[str]:
    """The columns both tables publish with the same set of values (published alike)."""
    shared = [c for c in left.column_names if c in right.column_names]
    return [c for c in shared
            if set(pd.unique(published_texts(left.column(c)))) == set(pd.unique(published_texts(right.column(c))))]


def _link_codes(left, right, columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's tuple of link columns, coded alike in both tables."""
    n = left.num_rows
    codes, radices = [], []
    for c in columns:
        both = np.concatenate([published_texts(left.column(c)), published_texts(right.column(c))])
        code, labels = pd.factorize(both)
        codes.append(code.astype(np.int64))
        radices.append(max(len(labels), 1))
    tuple_of, _ = group_rows(codes, radices)
    tuple_of = np.asarray(tuple_of, dtype=np.int64)
    return tuple_of[:n], tuple_of[n:]
