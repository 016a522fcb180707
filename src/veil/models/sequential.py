"""Join privacy of a second release given a first (Wang and Fung, "Anonymizing sequential
releases", KDD 2006).

A publisher has released T1 and now releases T2, another projection of the same records; the two
share some columns. The adversary joins them on the shared columns (the join attack,
:func:`veil.attacks.join.join_attack`) and learns, of a person known by quasi-identifiers from
both, that they are one of the T1 records of a *joined group*. Wang and Fung ask that T2 be
anonymized so that the join still puts everyone among at least k records (their (X, Y)-anonymity
on T1 ⋈ T2), and veil adds the ℓ-diversity of the group's sensitive values.

**Joined groups.** T1's rows are grouped into ``g1 = (x1, K)`` and T2's into ``g2 = (x2, K)``:
``x1`` the known quasi-identifiers only T1 publishes, ``x2`` those only T2 publishes, ``K`` every
shared column (quasi-identifier or not), matched by its published text, or, when the two
releases publish a column at different levels of its hierarchy, at the coarser level
(:func:`lift_to_common_level`: ``35`` meets ``[30-40)``). The join pairs each
``g1`` with each ``g2`` of the same ``K``. A joined group is a distinct tuple ``(x1, x2, xs)`` of
the join (``xs`` the shared quasi-identifiers); its candidates are the T1 records of its pairs
and its sensitive values the distinct values its pairs hold. A T1 record in some joined group has
the fewest candidates (and values) of the groups it is in; a T1 record the join pairs with
nothing learns the adversary nothing new and keeps its class in T1 alone. :func:`join_groups`
computes all of this on integer codes, for the attack and for the model alike.

**The model.** :class:`JoinKAnonymity` holds T1 and measures a candidate T2 given as
equivalence classes (the table a search is about to publish): a class of T2 fails when one of the
joined groups its records are in has fewer than ``k`` candidates or ``ℓ`` values, and so does every
class holding T2 tuples with the same ``x2`` and shared quasi-identifiers as joined (where T2 is
finer than the level joined at, those tuples span several classes). Suppressing the failing
classes therefore removes whole joined groups, which leaves every other group as it was; a T1
record the suppression unpairs falls back on T1 alone, which the model requires to be safe (no
second release can repair T1). So what passes the model passes the join attack.

**Not monotone in general.** Generalizing a quasi-identifier only T2 publishes merges joined
groups, and generalizing a shared column that T1 publishes at a level of T2's hierarchy joins at
a coarser level, which pairs more tuples: neither takes a candidate or a value away. But a shared
column T1 publishes in texts that T2's hierarchy does not hold (a Mondrian release, another
hierarchy) is joined on equal texts only, and texts that match at one level of T2 may not at the
next (or match again at ``*``), so a class can fail above a node where every class passed. The
model therefore does not claim monotonicity (``monotonic = False``): lattice searches evaluate it
on every node instead of pruning with it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from veil.classes import EquivalenceClasses, SensitiveCounts, group_rows
from veil.data.encoding import text_codes
from veil.data.hierarchy import Hierarchy
from veil.errors import ColumnError, DataError
from veil.models.base import ModelResult, PrivacyModel, require

#: A figure that does not bound anything (a T2 class the join pairs with no T1 record).
UNBOUNDED = np.iinfo(np.int64).max


class NothingToJoinError(ColumnError):
    """The two releases share no column, so there is nothing to join them on."""


class EarlierReleaseExposedError(DataError):
    """The first release alone leaves records under the requirement, which no second release can repair."""


@dataclass(frozen=True, eq=False)
class JoinedGroups:
    """The join of two releases, per row of each.

    Attributes:
        candidates: per T1 row, the fewest candidates of a joined group it is in, or its class
            size in T1 alone when the join pairs it with nothing.
        diversity: per T1 row, the fewest distinct sensitive values of a joined group it is in (or
            of its class in T1 alone when unpaired; :data:`UNBOUNDED` when unpaired and T1 does not
            publish the sensitive column); ``None`` without a sensitive column.
        joined: per T1 row, whether the join pairs it with some T2 tuple.
        before: per T1 row, its class size in T1 alone (``x1`` and the shared quasi-identifiers).
        alone_diversity: per T1 row, the distinct sensitive values of that class (``None`` when T1
            does not publish the sensitive column).
        second_candidates: per T2 row, the fewest candidates of a joined group its tuple is in
            (:data:`UNBOUNDED` when it pairs with no T1 record).
        second_diversity: the same for distinct sensitive values (``None`` without a sensitive column).
        n_groups: the number of joined groups.
    """

    candidates: np.ndarray
    diversity: np.ndarray | None
    joined: np.ndarray
    before: np.ndarray
    alone_diversity: np.ndarray | None
    second_candidates: np.ndarray
    second_diversity: np.ndarray | None
    n_groups: int


def _tuples(columns: Sequence[np.ndarray]) -> np.ndarray:
    """One code per distinct tuple of the integer ``columns`` (all of one length)."""
    group, _ = group_rows(columns, [int(c.max(initial=0)) + 1 for c in columns])
    return np.asarray(group, dtype=np.int64)


def _distinct_pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct pairs ``(a[i], b[i])``, as two arrays."""
    pair = _tuples([a, b])
    one = np.zeros(int(pair.max(initial=-1)) + 1, dtype=np.int64)
    one[pair] = np.arange(len(pair))  # any row holding each pair
    return a[one], b[one]


def _distinct_per(owner: np.ndarray, values: np.ndarray, n_owners: int) -> np.ndarray:
    """For each owner ``0 .. n_owners-1``, the number of distinct ``values`` among its rows."""
    return np.bincount(_distinct_pairs(owner, values)[0], minlength=n_owners).astype(np.int64)


def join_groups(x1: np.ndarray, key1: np.ndarray, shared1: np.ndarray, x2: np.ndarray, key2: np.ndarray, *,
                sensitive1: np.ndarray | None = None, sensitive2: np.ndarray | None = None) -> JoinedGroups:
    """Join two releases on their shared columns, given as integer codes (see the module notes).

    Args:
        x1: per T1 row, the code of its tuple of known quasi-identifiers only T1 publishes.
        key1: per T1 row, the code of its tuple of every shared column, as the two are joined.
        shared1: per T1 row, the code of its tuple of shared quasi-identifiers as T1 publishes them
            (finer than ``key1`` where the join lifts them to T2's coarser level).
        x2: per T2 row, the code of its tuple of known quasi-identifiers only T2 publishes.
        key2: per T2 row, the code of its shared tuple, in the same code space as ``key1``.
        sensitive1: per T1 row, its sensitive value's code, when T1 publishes the sensitive column.
        sensitive2: per T2 row, its sensitive value's code, when only T2 publishes it.

    Returns:
        The :class:`JoinedGroups`.
    """
    import pandas as pd  # its merge pairs the groups; loaded only when a join is made

    x1, key1, shared1 = (np.asarray(a, dtype=np.int64) for a in (x1, key1, shared1))
    x2, key2 = np.asarray(x2, dtype=np.int64), np.asarray(key2, dtype=np.int64)
    # A T1 row keeps the shared quasi-identifiers it publishes even where the join lifts them to a
    # coarser level: the adversary who knows them reads them in T1.
    row_g1 = _tuples([x1, key1, shared1])
    n_g1 = int(row_g1.max(initial=-1)) + 1
    first1 = np.zeros(n_g1, dtype=np.int64)
    first1[row_g1[::-1]] = np.arange(len(row_g1))[::-1]
    c1 = np.bincount(row_g1, minlength=n_g1)
    row_g2 = _tuples([x2, key2])
    n_g2 = int(row_g2.max(initial=-1)) + 1
    first2 = np.zeros(n_g2, dtype=np.int64)
    first2[row_g2[::-1]] = np.arange(len(row_g2))[::-1]
    g1 = pd.DataFrame({"g1": np.arange(n_g1), "key": key1[first1]})
    g2 = pd.DataFrame({"g2": np.arange(n_g2), "key": key2[first2]})
    pairs = g1.merge(g2, on="key")
    pair_g1, pair_g2 = pairs["g1"].to_numpy(np.int64), pairs["g2"].to_numpy(np.int64)
    group = _tuples([x1[first1][pair_g1], x2[first2][pair_g2], shared1[first1][pair_g1]]) if len(pairs) \
        else np.zeros(0, dtype=np.int64)
    n_groups = int(group.max(initial=-1)) + 1
    size = np.bincount(group, weights=c1[pair_g1], minlength=n_groups).astype(np.int64)

    alone = _tuples([x1, shared1])
    before = np.bincount(alone)[alone]
    joined_g1 = np.zeros(n_g1, dtype=bool)
    joined_g1[pair_g1] = True
    joined = joined_g1[row_g1]

    def fewest(per_group: np.ndarray, pair_side: np.ndarray, n_side: int) -> np.ndarray:
        out = np.full(n_side, UNBOUNDED, dtype=np.int64)
        np.minimum.at(out, pair_side, per_group[group])
        return out

    candidates = np.where(joined, fewest(size, pair_g1, n_g1)[row_g1], before)
    second_candidates = fewest(size, pair_g2, n_g2)[row_g2]
    diversity = second_diversity = alone_diversity = None
    if sensitive1 is not None or sensitive2 is not None:
        if sensitive1 is not None:
            sensitive1 = np.asarray(sensitive1, dtype=np.int64)
            alone_diversity = _distinct_per(alone, sensitive1, int(alone.max(initial=-1)) + 1)[alone]
            held = _distinct_pairs(row_g1, sensitive1)
            side, owner_of_pair = pair_g1, g1
        else:
            held = _distinct_pairs(row_g2, np.asarray(sensitive2, dtype=np.int64))
            side, owner_of_pair = pair_g2, g2
        held = pd.DataFrame({owner_of_pair.columns[0]: held[0], "s": held[1]})
        per = pd.DataFrame({owner_of_pair.columns[0]: side, "group": group}).merge(held)
        group_values = np.zeros(n_groups, dtype=np.int64)
        if len(per):
            group_values = _distinct_per(per["group"].to_numpy(np.int64), per["s"].to_numpy(np.int64), n_groups)
        unpaired = alone_diversity if alone_diversity is not None else np.full(len(x1), UNBOUNDED, dtype=np.int64)
        diversity = np.where(joined, fewest(group_values, pair_g1, n_g1)[row_g1], unpaired)
        second_diversity = fewest(group_values, pair_g2, n_g2)[row_g2]
    return JoinedGroups(candidates, diversity, joined, before, alone_diversity, second_candidates, second_diversity,
                        n_groups)


def _worst_per(owner: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each row's smallest value over the rows of its owner."""
    worst = np.full(int(owner.max(initial=-1)) + 1, UNBOUNDED, dtype=np.int64)
    np.minimum.at(worst, owner, values)
    return worst[owner]


def _worst_together(owners: Sequence[np.ndarray], values: np.ndarray) -> np.ndarray:
    """Each row's smallest value over every row it is linked to by sharing an owner of any kind
    (the rows of one connected component): the smallest is spread until nothing changes."""
    while True:
        spread = values
        for owner in owners:
            spread = _worst_per(owner, spread)
        if np.array_equal(spread, values):
            return values
        values = spread


def lift_to_common_level(hierarchy, first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The texts two releases publish for a shared column, lifted to the coarser of their levels.

    When each release publishes the column at one level of ``hierarchy`` (all its texts are
    labels of that level) and the levels differ, the adversary maps the finer texts up the tree
    and joins there: ``35`` in one release meets ``[30-40)`` in the other.

    Args:
        hierarchy: the column's :class:`~veil.data.hierarchy.Hierarchy`.
        first: the distinct texts the first release publishes.
        second: the distinct texts the second release publishes.

    Returns:
        Both arrays of texts lifted to the coarser level, or ``None`` when the releases publish the
        column at one level already or one of them is not at a single level of the hierarchy.
    """
    import pandas as pd  # its index looks the texts up; loaded only when a join is made

    def level_of(texts: np.ndarray) -> int | None:
        return next((level for level in range(hierarchy.levels)
                     if np.isin(texts, hierarchy.level_labels[level]).all()), None)

    levels = level_of(first), level_of(second)
    if None in levels or levels[0] == levels[1]:
        return None
    top = max(levels)

    def lift(texts: np.ndarray, level: int) -> np.ndarray:
        nodes = hierarchy.codes[:, level]
        # any leaf under each node of the level; the tree gives every leaf under it one ancestor at ``top``
        leaf = np.zeros(len(hierarchy.level_labels[level]), dtype=np.int64)
        leaf[nodes] = np.arange(len(nodes))
        node = pd.Index(hierarchy.level_labels[level]).get_indexer(texts)
        return hierarchy.level_labels[top][hierarchy.codes[leaf[node], top]]

    return lift(first, levels[0]), lift(second, levels[1])


def shared_codes(first: tuple[np.ndarray, np.ndarray], second: tuple[np.ndarray, np.ndarray],
                 hierarchy=None) -> tuple[np.ndarray, np.ndarray]:
    """Per row of each release, the code of a shared column's text in one code space for both.

    Args:
        first: the first release's ``(distinct texts, code of each row)``.
        second: the same for the second release.
        hierarchy: the column's hierarchy, to join texts published at different levels at the
            coarser one (:func:`lift_to_common_level`); ``None`` joins equal texts only.

    Returns:
        The codes of the first release's rows and of the second's.
    """
    import pandas as pd  # one factorization of both releases' texts; loaded only when a join is made

    labels1, labels2 = np.asarray(first[0], dtype=object), np.asarray(second[0], dtype=object)
    lifted = None if hierarchy is None else lift_to_common_level(hierarchy, labels1, labels2)
    if lifted is not None:
        labels1, labels2 = lifted
    code, _ = pd.factorize(np.concatenate([labels1, labels2]))
    code = code.astype(np.int64)
    return code[:len(labels1)][first[1]], code[len(labels1):][second[1]]


def _read_earlier(earlier, manifest, delimiter: str | None):
    """The first release's table (pyarrow) and manifest (dict or ``None``)."""
    import pyarrow as pa

    from veil.data.io import read_table
    from veil.output.reading import load_manifest

    if isinstance(earlier, (str, os.PathLike)) and Path(earlier).suffix.lower() == ".json":
        if manifest is not None:
            raise DataError("the earlier release is given by its manifest, which names its table; leave out the "
                            "second manifest.")
        path = Path(earlier)
        doc = load_manifest(path)
        return read_table(path.parent / doc["release"]["file"], delimiter).data, doc
    if isinstance(manifest, (str, os.PathLike)):
        manifest = load_manifest(manifest, earlier if isinstance(earlier, (str, os.PathLike)) else None)
    table = earlier if isinstance(earlier, pa.Table) else read_table(earlier, delimiter).data
    return table, None if manifest is None else dict(manifest)


class JoinKAnonymity(PrivacyModel):
    """Join k-anonymity of a second release given a first (Wang and Fung, KDD 2006; module notes).

    Every joined group of T1 ⋈ T2 (T1 the earlier release, T2 the classes evaluated) has at least
    ``k`` candidates and, with ``l``, at least ``l`` distinct sensitive values. A class's level is
    the fewest candidates of a joined group its records are in (infinite when the join pairs it
    with nothing); the table's level is the smallest. With ``l``, a class passes when both figures
    meet their thresholds; the level reported stays the candidates.

    Args:
        earlier: the first release: the path of its manifest (``.json``, which names and hashes
            the table) or its table (a path, a frame or a pyarrow Table).
        k: the fewest candidates a joined group must have, or ``None`` to measure only.
        l: the fewest distinct sensitive values a joined group must have (``None``: no check).
        manifest: the first release's manifest (a path or a dict) when ``earlier`` is its table:
            its quasi-identifiers are known to the adversary and its sensitive column is the default.
        sensitive: the sensitive column (published by either release); default: the first one the
            first release's manifest names, else the first of the classes' dataset.
        quasi_identifiers: the columns the adversary knows; default: those of the first release's
            manifest and of the classes' dataset.
        hierarchies: per shared column, the :class:`~veil.data.hierarchy.Hierarchy` (or ARX
            hierarchy file) whose levels the releases publish it at; default: the hierarchies of the
            classes' dataset (a table read back from a release has none for its quasi-identifiers).
        delimiter: the CSV delimiter of a table given as a path (sniffed when ``None``).

    Raises:
        ParameterError: ``k`` or ``l`` < 1.
        DataError: the first release, its manifest or a hierarchy file cannot be read.
    """

    name = "join k-anonymity"
    key = "join"
    needs_sensitive = False
    monotonic = False

    def __init__(self, earlier, k: int | None = None, l: int | None = None, *, manifest=None,
                 sensitive: str | None = None, quasi_identifiers: Sequence[str] | None = None,
                 hierarchies=None, delimiter: str | None = None):
        require(k is None or k >= 1, f"k must be at least 1, not {k}.")
        require(l is None or l >= 1, f"ℓ must be at least 1, not {l}.")
        super().__init__(k, sensitive)
        self.l = l
        self.earlier = earlier
        self.earlier_table, self.earlier_manifest = _read_earlier(earlier, manifest, delimiter)
        self.quasi_identifiers = None if quasi_identifiers is None else list(quasi_identifiers)
        self.hierarchies = {c: h if isinstance(h, Hierarchy) else Hierarchy.read_csv(h)
                            for c, h in (hierarchies or {}).items()}
        # What depends on the dataset only (the first release's codes), built once per dataset:
        # a search evaluates the model on many nodes of one dataset.
        self._prepared: dict[int, tuple] = {}

    def __repr__(self) -> str:
        return f"JoinKAnonymity(k={self.threshold}, l={self.l}, sensitive={self.sensitive!r})"

    @property
    def earlier_name(self) -> str:
        """How messages call the first release."""
        if isinstance(self.earlier, (str, os.PathLike)):
            return f"the earlier release {Path(self.earlier).name!r}"
        return "the earlier release"

    def class_levels(self, classes: EquivalenceClasses, counts: SensitiveCounts | None) -> np.ndarray:
        return self._measure(classes)[0]

    def evaluate(self, classes: EquivalenceClasses) -> ModelResult:
        """Join the first release with ``classes`` as published and check every joined group.

        Raises:
            NothingToJoinError: the first release and the dataset share no published column.
            ColumnError: the sensitive column or a quasi-identifier is in neither release.
            ParameterError: ``l`` without a sensitive column.
            EarlierReleaseExposedError: with a threshold, the first release alone leaves records in
                classes (on the known quasi-identifiers it publishes) under ``k`` or ``l``.
            ParameterError: ``classes`` are parts of a table an algorithm is still splitting
                (Mondrian), not the classes of a table as it would be published.
        """
        require(isinstance(classes, EquivalenceClasses),
                f"{self.name} joins the whole second release with the earlier one, so it needs the classes of a "
                "table as published; anonymize with full-domain generalization (or MDAV), not Mondrian.")
        candidates, diversity = self._measure(classes)
        passed = None
        if self.threshold is not None:
            passed = candidates >= self.threshold
            if self.l is not None:
                passed &= diversity >= self.l
        level = float(candidates.min()) if len(candidates) else float("nan")
        return ModelResult(self.name, self.key, level, self.threshold,
                           None if passed is None else bool(passed.all()), candidates, passed, True)

    def _prepare(self, dataset) -> tuple:
        """The first release's side of the join for ``dataset``'s columns (cached per dataset)."""
        cached = self._prepared.get(id(dataset))
        if cached is not None and cached[0] is dataset:
            return cached[1:]
        t1 = self.earlier_table
        roles = (self.earlier_manifest or {}).get("roles") or {}
        published2 = [c for c in dataset.columns if c not in dataset.identifying]
        known = self.quasi_identifiers or list(dict.fromkeys(list(roles.get("quasi_identifiers") or [])
                                                             + list(dataset.quasi_identifiers)))
        missing = [q for q in known if q not in t1.column_names and q not in published2]
        if missing:
            raise ColumnError(f"neither {self.earlier_name} nor the new table publishes '{missing[0]}', named as a "
                              "quasi-identifier.")
        sensitive = self.sensitive or next(iter(list(roles.get("sensitive") or []) + list(dataset.sensitive)), None)
        if sensitive is not None and sensitive not in t1.column_names and sensitive not in published2:
            raise ColumnError(f"neither {self.earlier_name} nor the new table publishes the sensitive column "
                              f"'{sensitive}'.")
        require(self.l is None or sensitive is not None,
                "ℓ-diversity on the join needs a sensitive column; name it (sensitive).")
        shared = [c for c in t1.column_names if c in published2]
        if not shared:
            raise NothingToJoinError(f"{self.earlier_name} and the new table share no column, so there is nothing "
                                     "to join them on.")
        own1 = [q for q in known if q in t1.column_names and q not in shared]
        own2 = [q for q in known if q in published2 and q not in shared]
        first = {c: text_codes(t1.column(c)) for c in shared}
        x1 = self._tuple_codes([text_codes(t1.column(q))[1] for q in own1], t1.num_rows)
        sq1 = self._tuple_codes([first[c][1] for c in shared if c in known], t1.num_rows)
        s1 = s2 = None
        if sensitive is not None and sensitive in t1.column_names:
            s1 = text_codes(t1.column(sensitive))[1]
        elif sensitive is not None:
            s2 = text_codes(dataset.table.data.column(sensitive))[1]
        # T2's columns that are not quasi-identifiers are published as the input holds them.
        raw2 = {c: text_codes(dataset.table.data.column(c))
                for c in shared + own2 if c not in dataset.quasi_identifiers}
        prepared = (known, own2, shared, first, x1, sq1, s1, s2, raw2)
        self._prepared = {id(dataset): (dataset, *prepared)}
        return prepared

    @staticmethod
    def _tuple_codes(columns: list[np.ndarray], n: int) -> np.ndarray:
        if not columns:
            return np.zeros(n, dtype=np.int64)
        return _tuples([np.asarray(c, dtype=np.int64) for c in columns])

    def _measure(self, classes: EquivalenceClasses) -> tuple[np.ndarray, np.ndarray | None]:
        """Per class, the fewest candidates and distinct sensitive values of its joined groups."""
        dataset = classes.dataset
        known, own2, shared, first, x1, sq1, s1, s2, raw2 = self._prepare(dataset)
        # The rows of classes set aside (a release's suppressed records) are not published as T2's.
        kept = np.flatnonzero(classes.row_class >= 0)
        rows = classes.row_class[kept]
        qis = dataset.quasi_identifiers

        def second(c: str) -> tuple[np.ndarray, np.ndarray]:
            """The distinct texts T2 publishes in column ``c`` and the code of each of its rows."""
            if c not in qis:
                return raw2[c][0], raw2[c][1][kept]
            j = qis.index(c)
            labels = np.array([str(label) for label in classes.cells(j).labels], dtype=object)
            return labels, classes.keys[:, j][rows]

        x2 = self._tuple_codes([second(q)[1] for q in own2], len(rows))
        key_columns, joined_qis = [[], []], []
        for c in shared:
            codes1, codes2 = shared_codes(first[c], second(c),
                                          self.hierarchies.get(c, dataset.hierarchies.get(c)))
            key_columns[0].append(codes1)
            key_columns[1].append(codes2)
            if c in known:
                joined_qis.append(codes2)
        n1 = len(x1)
        both = _tuples([np.concatenate(pair) for pair in zip(*key_columns)])
        join = join_groups(x1, both[:n1], sq1, x2, both[n1:], sensitive1=s1,
                           sensitive2=None if s2 is None else s2[kept])
        if self.threshold is not None:
            self._require_safe_alone(join)
        # A joined group's T2 tuples all have its x2 and its shared quasi-identifiers as joined, and T2's
        # classes may split them (T2 finer than the level joined at): the classes linked so fail together.
        owners = (rows, self._tuple_codes([x2] + joined_qis, len(rows)))
        n_classes = classes.n_classes
        candidates = np.full(n_classes, UNBOUNDED, dtype=np.int64)
        candidates[rows] = _worst_together(owners, join.second_candidates)
        diversity = None
        if join.second_diversity is not None:
            diversity = np.full(n_classes, UNBOUNDED, dtype=np.int64)
            diversity[rows] = _worst_together(owners, join.second_diversity)
        candidates = np.where(candidates == UNBOUNDED, np.inf, candidates.astype(float))
        return candidates, diversity

    def _require_safe_alone(self, join: JoinedGroups) -> None:
        short = join.before < self.threshold
        if self.l is not None and join.alone_diversity is not None:
            short |= join.alone_diversity < self.l
        if short.any():
            what = f"fewer than {self.threshold:g} records" + (f" or {self.l} sensitive values" if self.l else "")
            raise EarlierReleaseExposedError(
                f"{self.earlier_name} alone leaves {int(short.sum()):,} records in classes with {what} on the "
                "quasi-identifiers it publishes, which no second release can repair; publish it again first.")
