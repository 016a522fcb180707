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
(``K`` every shared column, quasi-identifier or not); the join pairs ``g1`` with each ``g2`` of
the same ``K``. A joined group is a distinct quasi-identifier tuple ``(x1, x2, xs)`` of the join;
its *candidates* are the T1 records of its pairs (a ``g1`` pairs with at most one ``g2`` per
``x2``, so none is counted twice) and its sensitive values the distinct values its pairs hold.
A group breaks k-anonymity when it has fewer than ``k`` candidates and ℓ-diversity when fewer than
``ℓ`` distinct sensitive values. A T1 record is *exposed* when one of the joined groups it is in
breaks either; the check for publishing T2 after T1 passes when no record is exposed.

Everything is computed on distinct groups (integer codes and one merge of groups), never on the
joined rows, whose number can be the product of the releases' sizes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from veil.attacks.intersection import (_as_published, _load_manifest, _release_name, _roles, published_table,
                                      published_texts)
from veil.classes import group_rows
from veil.errors import ColumnError, ParameterError


class NothingToJoinError(ColumnError):
    """The two releases share no column, so there is nothing to join them on."""


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
        candidates: per T1 record, the fewest candidates of a joined group it is in.
        diversity: per T1 record, the fewest distinct sensitive values of a joined group it is
            in (``None`` without a sensitive column).
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
                l: int | None = None, sensitive: str | None = None, delimiter: str | None = None) -> JoinResult:
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
    names, tables, manifests = [], [], []
    for position, release in enumerate((first, second), start=1):
        published = _as_published(release)
        name = _release_name(published, position)
        manifests.append(_load_manifest(published.manifest, name))
        tables.append(published_table(published, delimiter))
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

    # One vocabulary per shared column, so equal texts have equal codes in both releases.
    key_codes, key_radices, shared_qi_codes, shared_qi_radices = [[], []], [], [[], []], []
    for c in shared:
        both = np.concatenate([published_texts(t1.column(c)), published_texts(t2.column(c))])
        code, labels = pd.factorize(both)
        code = code.astype(np.int64)
        for side, part in enumerate((code[:t1.num_rows], code[t1.num_rows:])):
            key_codes[side].append(part)
            if c in shared_qis:
                shared_qi_codes[side].append(part)
        key_radices.append(max(len(labels), 1))
        if c in shared_qis:
            shared_qi_radices.append(max(len(labels), 1))
    key1, key2 = _joint(key_codes, key_radices, t1.num_rows, t2.num_rows)
    sq1, _ = _joint(shared_qi_codes, shared_qi_radices, t1.num_rows, t2.num_rows)
    x1 = _own(t1, own1)
    x2 = _own(t2, own2)
    frame1 = pd.DataFrame({"x1": x1, "key": key1, "sq": sq1})
    frame2 = pd.DataFrame({"x2": x2, "key": key2})
    g1 = frame1.groupby(["x1", "key"], sort=False).agg(c1=("sq", "size"), sq=("sq", "first")).reset_index()
    g1["g1"] = np.arange(len(g1))
    g2 = frame2.drop_duplicates(["x2", "key"]).reset_index(drop=True)
    g2["g2"] = np.arange(len(g2))
    pairs = g1.merge(g2, on="key")
    group, _ = group_rows([pairs["x1"].to_numpy(np.int64), pairs["x2"].to_numpy(np.int64),
                           pairs["sq"].to_numpy(np.int64)],
                          [int(max(x1.max(initial=0), 0)) + 1, int(max(x2.max(initial=0), 0)) + 1,
                           int(max(sq1.max(initial=0), 0)) + 1])
    group = np.asarray(group, dtype=np.int64)
    n_groups = int(group.max(initial=-1)) + 1
    size = np.bincount(group, weights=pairs["c1"].to_numpy(), minlength=n_groups).astype(np.int64)
    pair_g1 = pairs["g1"].to_numpy(np.int64)
    row_g1 = frame1.merge(g1[["x1", "key", "g1"]], on=["x1", "key"], how="left")["g1"].to_numpy(np.int64)
    # Per g1, the fewest candidates of a joined group it is in; a g1 that joins nothing is in
    # no joined group and keeps its own size (the join tells nothing about it).
    fewest = g1["c1"].to_numpy(np.int64).copy()
    joined_any = np.zeros(len(g1), dtype=bool)
    joined_any[pair_g1] = True
    fewest[joined_any] = np.iinfo(np.int64).max
    np.minimum.at(fewest, pair_g1, size[group])
    candidates = fewest[row_g1]
    diversity = None
    notes = []
    if sensitive is not None:
        diversity = _diversity(t1, t2, sensitive, pairs, group, n_groups, frame1, row_g1, g1, x2, key2, joined_any)
    unjoined = int((~joined_any[row_g1]).sum())
    if unjoined:
        notes.append(f"{unjoined:,} records of {names[0]} agree with no tuple of {names[1]} on the shared columns; "
                     "they are not the same records, or a shared column is published differently.")
    before_class = _own(t1, own1 + shared_qis)
    before = np.bincount(before_class)[before_class]
    return JoinResult((names[0], names[1]), shared, qis, sensitive, int(k), None if l is None else int(l), before,
                      candidates, diversity, n_groups, notes)


def _codes(table, column: str) -> np.ndarray:
    """Integer codes of a published column's texts."""
    code, _ = pd.factorize(published_texts(table.column(column)))
    return code.astype(np.int64)


def _own(table, columns: Sequence[str]) -> np.ndarray:
    """Each row's tuple of ``columns`` as one code (0 for every row when there are none)."""
    if not columns:
        return np.zeros(table.num_rows, dtype=np.int64)
    codes = [_codes(table, c) for c in columns]
    tuple_of, _ = group_rows(codes, [int(c.max(initial=0)) + 1 for c in codes])
    return np.asarray(tuple_of, dtype=np.int64)


def _joint(sides: list[list[np.ndarray]], radices: list[int], n1: int, n2: int) -> tuple[np.ndarray, np.ndarray]:
    """One code per tuple of the given columns, shared by both releases' rows (``n1`` and ``n2``
    of them; every row has code 0 when there are no columns)."""
    if not radices:
        return np.zeros(n1, dtype=np.int64), np.zeros(n2, dtype=np.int64)
    stacked = [np.concatenate([a, b]) for a, b in zip(sides[0], sides[1])]
    tuple_of, _ = group_rows(stacked, radices)
    tuple_of = np.asarray(tuple_of, dtype=np.int64)
    return tuple_of[:n1], tuple_of[n1:]


def _diversity(t1, t2, sensitive, pairs, group, n_groups, frame1, row_g1, g1, x2, key2, joined_any) -> np.ndarray:
    """Per T1 record, the fewest distinct sensitive values of a joined group it is in."""
    if sensitive in t1.column_names:
        values = _codes(t1, sensitive)
        held = pd.DataFrame({"g1": row_g1, "s": values}).drop_duplicates()
        per = pd.DataFrame({"g1": pairs["g1"].to_numpy(np.int64), "group": group}).merge(held, on="g1")
        own = held.groupby("g1")["s"].nunique().reindex(range(len(g1)), fill_value=0).to_numpy(np.int64)
    else:
        values = _codes(t2, sensitive)
        g2_of = pd.DataFrame({"x2": x2, "key": key2}).merge(pairs[["x2", "key", "g2"]].drop_duplicates(),
                                                           on=["x2", "key"], how="left")["g2"]
        held = pd.DataFrame({"g2": g2_of.to_numpy(), "s": values}).dropna().astype(np.int64).drop_duplicates()
        per = pd.DataFrame({"g2": pairs["g2"].to_numpy(np.int64), "group": group}).merge(held, on="g2")
        own = np.zeros(len(g1), dtype=np.int64)
    distinct = per.drop_duplicates(["group", "s"]).groupby("group").size()
    group_diversity = distinct.reindex(range(n_groups), fill_value=0).to_numpy(np.int64)
    fewest = own.copy()
    fewest[joined_any] = np.iinfo(np.int64).max
    np.minimum.at(fewest, pairs["g1"].to_numpy(np.int64), group_diversity[group])
    return fewest[row_g1]
