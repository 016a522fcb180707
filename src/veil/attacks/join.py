"""The join attack on sequential releases (Wang and Fung, "Anonymizing sequential releases",
KDD 2006).

A publisher releases T1 and later T2, two projections of the same records onto different
attribute sets that share some attributes. The adversary joins them on the shared attributes:
a record of T1 can be the record behind a tuple of T2 only when they agree there. A person known
by quasi-identifiers from both releases (``x1`` published by T1 only, ``x2`` by T2 only, ``xs``
by both) is then one of the T1 records that have ``x1`` and a shared value ``K`` (with ``xs``)
for which T2 holds a tuple with ``x2`` and ``K``: the joined view can be far more specific than
either release, which is what Wang and Fung's (X, Y)-anonymity on T1 ⋈ T2 forbids.

**Joined groups.** T1's rows are grouped into ``g1 = (x1, K)`` and T2's into ``g2 = (x2, K)``
(``K`` every shared column, quasi-identifier or not, matched by its published text, or at the
coarser level where the two publish it at two levels of a hierarchy given for it); the join pairs
``g1`` with each ``g2`` of the same ``K``. A joined group is a distinct quasi-identifier tuple ``(x1, x2, xs)`` of the join;
its *candidates* are the T1 records of its pairs (a ``g1`` pairs with at most one ``g2`` per
``x2``, so none is counted twice) and its sensitive values the distinct values its pairs hold.
A group breaks k-anonymity when it has fewer than ``k`` candidates and ℓ-diversity when fewer than
``ℓ`` distinct sensitive values. A T1 record is *exposed* when one of the joined groups it is in
breaks either; the check for publishing T2 after T1 passes when no record is exposed. A T1 record
the join pairs with nothing tells the adversary nothing new: it keeps its class in T1 alone.

The groups are found by :func:`veil.models.sequential.join_groups`, which the privacy model
:class:`~veil.models.JoinKAnonymity` shares, so a second release anonymized with that model is
judged by exactly this join. Everything is computed on distinct groups (integer codes and one merge
of groups), never on the joined rows, whose number can be the product of the releases' sizes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from veil.attacks.intersection import (_as_published, _load_hierarchies, _load_manifest, _named_hierarchies,
                                      _release_name, _roles, published_table)
from veil.classes import group_rows
from veil.data.encoding import text_codes
from veil.errors import ColumnError, ParameterError
from veil.models.sequential import NothingToJoinError, join_groups, shared_codes

__all__ = ["JoinResult", "NothingToJoinError", "join_attack"]


@dataclass(frozen=True, eq=False)
class JoinResult:
    """The join attack's outcome.

    Attributes:
        names: the two releases, as messages call them.
        shared: the columns both publish (the join attributes).
        quasi_identifiers: the columns the adversary knows, from either release.
        sensitive: the sensitive column whose diversity is checked, or ``None``.
        k: the smallest number of candidates a joined group must have.
        l: the smallest number of distinct sensitive values a joined group must have (or ``None``).
        before: per T1 record, its class size in T1 alone (its published quasi-identifiers).
        candidates: per T1 record, the fewest candidates of a joined group it is in (its class
            size in T1 alone when the join pairs it with nothing).
        diversity: per T1 record, the fewest distinct sensitive values of a joined group it is
            in (of its class in T1 alone when unpaired, unbounded when T1 does not publish the
            sensitive column either); ``None`` without a sensitive column.
        joined_groups: the number of joined groups.
        notes: remarks worth a reader's attention (one sentence each).
    """

    names: tuple[str, str]
    shared: list[str]
    quasi_identifiers: list[str]
    sensitive: str | None
    k: int
    l: int | None
    before: np.ndarray
    candidates: np.ndarray
    diversity: np.ndarray | None
    joined_groups: int
    notes: list[str] = field(default_factory=list)

    @property
    def exposed(self) -> np.ndarray:
        """Rows of T1 in a joined group that breaks k-anonymity or ℓ-diversity."""
        bad = self.candidates < self.k
        if self.l is not None and self.diversity is not None:
            bad |= self.diversity < self.l
        return np.flatnonzero(bad)

    @property
    def passed(self) -> bool:
        """Whether T2 may follow T1: no joined group breaks the requirement."""
        return len(self.exposed) == 0

    def summary(self) -> dict:
        """A JSON-ready summary."""
        return {"attack": "join", "releases": list(self.names), "shared": self.shared,
                "quasi_identifiers": self.quasi_identifiers, "sensitive": self.sensitive, "k": self.k, "l": self.l,
                "rows": int(len(self.before)), "joined_groups": self.joined_groups,
                "exposed": int(len(self.exposed)), "passed": self.passed,
                "narrowed": int((self.candidates < self.before).sum()),
                "below_k_before": int((self.before < self.k).sum()), "notes": list(self.notes)}


def join_attack(first, second, *, quasi_identifiers: str | Sequence[str] | None = None, k: int = 2,
                l: int | None = None, sensitive: str | None = None, hierarchies=None,
                delimiter: str | None = None) -> JoinResult:
    """Join two releases of the same records on their shared columns and report who is exposed.

    Args:
        first: the earlier release T1 (whose records are the people): a veil ``Release``, a
            :class:`~veil.attacks.intersection.PublishedRelease` or a released table.
        second: the later release T2, in the same forms.
        quasi_identifiers: the columns the adversary knows, from either release; default: the
            union of both manifests'.
        k: the fewest candidates a joined group must have.
        l: the fewest distinct sensitive values a joined group must have (``None``: no check).
        sensitive: the sensitive column (in either release); default: the first manifest that
            names one. Needed with ``l``.
        hierarchies: per shared column, a :class:`~veil.data.hierarchy.Hierarchy` (or an ARX
            hierarchy file) whose levels the releases publish it at; with one, a column the two
            publish at different levels is joined at the coarser (the releases' own hierarchies,
            given with a ``PublishedRelease``, serve too). Without, equal texts only are joined.
        delimiter: the CSV delimiter of tables given as paths (sniffed when ``None``).

    Raises:
        ParameterError: ``k`` or ``l`` < 1; no quasi-identifier named or in a manifest; ``l``
            without a sensitive column.
        NothingToJoinError: the releases share no column.
        ColumnError: the sensitive column is in neither release, or a quasi-identifier is in
            neither.
        DataError: a table or manifest cannot be read.
    """
    if k < 1:
        raise ParameterError(f"k must be at least 1, not {k}.")
    if l is not None and l < 1:
        raise ParameterError(f"ℓ must be at least 1, not {l}.")
    names, tables, manifests, published = [], [], [], []
    for position, release in enumerate((first, second), start=1):
        published.append(_as_published(release))
        name = _release_name(published[-1], position)
        manifests.append(_load_manifest(published[-1].manifest, name))
        tables.append(published_table(published[-1], delimiter))
        names.append(name)
    t1, t2 = tables
    qis = [quasi_identifiers] if isinstance(quasi_identifiers, str) else list(quasi_identifiers or [])
    if not qis:
        qis = list(dict.fromkeys(_roles(manifests[0])[0] + _roles(manifests[1])[0]))
    if not qis:
        raise ParameterError("name the quasi-identifiers the adversary knows (--qi); no manifest lists them.")
    missing = [q for q in qis if q not in t1.column_names and q not in t2.column_names]
    if missing:
        raise ColumnError(f"neither release publishes '{missing[0]}', named as a quasi-identifier.")
    if sensitive is None:
        sensitive = next((s[0] for s in (_roles(m)[1] for m in manifests) if s), None)
    if sensitive is not None and sensitive not in t1.column_names and sensitive not in t2.column_names:
        raise ColumnError(f"neither release publishes the sensitive column '{sensitive}'.")
    if l is not None and sensitive is None:
        raise ParameterError("ℓ-diversity on the join needs a sensitive column; name it (--sensitive).")
    shared = [c for c in t1.column_names if c in t2.column_names]
    if not shared:
        raise NothingToJoinError(f"{names[0]} and {names[1]} share no column, so there is nothing to join them on.")
    own1 = [q for q in qis if q in t1.column_names and q not in shared]
    own2 = [q for q in qis if q in t2.column_names and q not in shared]
    shared_qis = [q for q in shared if q in qis]

    # One code space per shared column, so equal texts (or texts one level of its hierarchy apart,
    # lifted to the coarser) have equal codes in both releases.
    given = _load_hierarchies(hierarchies)
    trees = {**{c: h for p, m in zip(reversed(published), reversed(manifests))
                for c, h in {**_named_hierarchies(p, m, given), **_load_hierarchies(p.hierarchies)}.items()},
             **given}
    key_codes, shared_qi_codes = [[], []], []
    for c in shared:
        codes1, codes2 = shared_codes(text_codes(t1.column(c)), text_codes(t2.column(c)), trees.get(c))
        key_codes[0].append(codes1)
        key_codes[1].append(codes2)
        if c in shared_qis:
            shared_qi_codes.append(_codes(t1, c))
    key1, key2 = _joint(key_codes, t1.num_rows, t2.num_rows)
    sq1 = _tuple_of(shared_qi_codes, t1.num_rows)
    s1 = _codes(t1, sensitive) if sensitive is not None and sensitive in t1.column_names else None
    s2 = _codes(t2, sensitive) if sensitive is not None and s1 is None else None
    join = join_groups(_own(t1, own1), key1, sq1, _own(t2, own2), key2, sensitive1=s1, sensitive2=s2)
    notes = []
    unjoined = int((~join.joined).sum())
    if unjoined:
        notes.append(f"{unjoined:,} records of {names[0]} agree with no tuple of {names[1]} on the shared columns; "
                     "they are not the same records, or a shared column is published differently.")
    return JoinResult((names[0], names[1]), shared, qis, sensitive, int(k), None if l is None else int(l),
                      join.before, join.candidates, join.diversity, join.n_groups, notes)


def _codes(table, column: str) -> np.ndarray:
    """Integer codes of a published column's texts."""
    return text_codes(table.column(column))[1]


def _own(table, columns: Sequence[str]) -> np.ndarray:
    """Each row's tuple of ``columns`` as one code (0 for every row when there are none)."""
    return _tuple_of([_codes(table, c) for c in columns], table.num_rows)


def _tuple_of(codes: list[np.ndarray], n: int) -> np.ndarray:
    """Each of ``n`` rows' tuple of ``codes`` as one code (0 for every row when there are none)."""
    if not codes:
        return np.zeros(n, dtype=np.int64)
    tuple_of, _ = group_rows(codes, [int(c.max(initial=0)) + 1 for c in codes])
    return np.asarray(tuple_of, dtype=np.int64)


def _joint(sides: list[list[np.ndarray]], n1: int, n2: int) -> tuple[np.ndarray, np.ndarray]:
    """One code per tuple of the given columns, shared by both releases' rows (``n1`` and ``n2``
    of them; every row has code 0 when there are no columns)."""
    stacked = [np.concatenate([a, b]) for a, b in zip(sides[0], sides[1])]
    tuple_of = _tuple_of(stacked, n1 + n2)
    return tuple_of[:n1], tuple_of[n1:]
