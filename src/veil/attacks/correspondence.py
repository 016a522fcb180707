"""Tuple-correspondence attacks on incremental releases: forward, cross and backward.

The setting is Fung, Wang, Fu and Pei's ("Anonymity for continuous data publishing", EDBT 2008):
a publisher releases R1, an anonymization of a table T1, and later R2, an anonymization of
T2 = T1 ∪ ΔT (every record of T1 is also in T2). Each T1 record then has one published version in
R1 and one in R2, its two *buddies*. The adversary knows a target's exact quasi-identifiers x and
timestamp (whether the target's record was in T1 or is new in ΔT), and both releases, but not
which records are buddies. The definitions below are veil's own sound formulation of the three
attacks the paper names; they only remove candidates that no pairing of buddies consistent with
the releases can keep.

**Nodes.** A node is a class of identical published rows (quasi-identifier cells and sensitive
values) with its size ``|u|``; nodes of R1 are ``u``, of R2 ``v``. ``u`` and ``v`` are
*comparable* (can hold buddies) when they publish the same sensitive values and every
quasi-identifier cell of ``u`` intersects the corresponding cell of ``v`` as sets of original
values; ``N(u)`` is the set of R2 nodes comparable to ``u`` (and ``N(v)`` of R1 nodes to ``v``).
A node *matches* x when x lies in every one of its cells. Cells are read as the intersection
attack reads them (:func:`veil.attacks.intersection.parse_published_value`: hierarchy nodes,
ranges, intervals, masks, value sets; ``*`` covers everything).

**Forward attack** (F: a target of T1, attacking R1). The buddy of the target's R1 record matches
x, and buddies are distinct records, so of a node ``u`` matching x at least
``crackF(x, u) = max(0, |u| − Σ_{v ∈ N(u), v matches x} |v|)`` records are not the target's.
Candidates left: ``F(x) = Σ_{u matches x} (|u| − crackF(x, u))``.

**Cross attack** (C: a target of T1, attacking R2). Symmetrically,
``crackC(x, v) = max(0, |v| − Σ_{u ∈ N(v), u matches x} |u|)`` for ``v`` matching x, and
``C(x) = Σ_{v matches x} (|v| − crackC(x, v))``.

**Backward attack** (B: a target new in ΔT, attacking R2). Records of R2 that must be buddies of
R1 records are old, so not the target's. Every record of the R1 nodes comparable to ``v`` has its
buddy in ``N(N(v))``; what the other nodes of ``N(N(v))`` cannot take lands on ``v``:
``need(v) = min(|v|, max(0, Σ_{u ∈ N(v)} |u| − Σ_{w ∈ N(N(v)), w ≠ v} |w|))`` and
``B(x) = Σ_{v matches x} (|v| − need(v))``.

**Exposure and BCF-anonymity.** A target is exposed by an attack when its candidates left fall
under k (``0 < left < k``; ``left = 0`` says the target is not in the release the attack reads,
e.g. a person of T1 attacked backward, and is counted as *ruled out*). R2 is *BCF-k-anonymous*
with respect to R1 when no target of T1 is exposed by F or C and no target of ΔT by B (the
paper's check for publishing the next version safely, here with the definitions above).

**Why nobody's true record is removed.** A target of T1 has records ``t1`` in ``u`` and ``t2`` in
``v``, both matching x and comparable, so ``v`` counts in ``u``'s sum and ``u`` in ``v``'s: F and C
keep at least one candidate. A new target's node holds ``need(v)`` old records at least and the
target besides, so ``|v| − need(v) ≥ 1``. This needs every record of T1 in both releases with
cells that contain its values: releases that show suppressed records as ``*`` rather than removing
them, and generalized (not microaggregated) ones.

**Vectorized.** Targets are grouped by distinct x. Per quasi-identifier, each published cell is
read once and tested against the distinct target values and against the other release's cells;
classes that match a target and pairs of classes that are comparable come from bit sets (per
quasi-identifier, each value's classes packed 64 to a word, gathered per row and AND-ed over the
quasi-identifiers), then nodes expand them by a merge on the sensitive values. The sums are sparse products: ``M1`` (x × R1 nodes, *matches*),
``M2`` (x × R2 nodes) and ``A`` (R1 nodes × R2 nodes, *comparable*) give
``Σ_{v ∈ N(u), v matches x} |v| = (M2 · diag|v| · Aᵀ)[x, u]``, and ``N(N(v))`` is the pattern of
``Aᵀ · A``, built in blocks of R2 nodes.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import scipy.sparse as sp

from veil.attacks.intersection import (ColumnValues, PublishedRelease, ReleaseMismatchError, TargetsError,
                                       _as_published, _check_boxes, _is_microaggregated, _load_hierarchies,
                                       _load_manifest, _named_hierarchies, _nodes_for, _pairs_from_bits, _read_targets,
                                       _release_name, _roles, _text_column, hierarchy_nodes, parse_published_value,
                                       published_table)
from veil.classes import group_rows
from veil.data.encoding import MISSING_LABEL, canonical_numeric_texts
from veil.data.hierarchy import Hierarchy
from veil.errors import DataError, ParameterError

__all__ = ["CorrespondenceResult", "NotIncrementalError", "correspondence_attack"]

# Entries of one block of a boolean [rows × classes] lookup.
BLOCK = 1 << 22


class NotIncrementalError(DataError):
    """The later release cannot be an anonymization of a superset of the earlier one's records."""


@dataclass(frozen=True, eq=False)
class CorrespondenceResult:
    """The forward, cross and backward attacks' outcome, per target (see the module).

    Attributes:
        names: the two releases, as messages call them.
        quasi_identifiers: the columns the adversary knows.
        sensitive: the sensitive columns that comparable nodes share.
        k: the candidates under which a target is exposed.
        rows: rows of each release.
        nodes: nodes (distinct published rows) of each release.
        targets: each target's id (the id column, or its row number from 0).
        new: ``bool [targets]``: targets new in ΔT (attacked backward); the others are of T1
            (attacked forward and cross).
        before_first: ``int [targets]``: records of R1 that match the target.
        before_second: ``int [targets]``: records of R2 that match the target.
        forward: ``int [targets]``: ``F(x)``, candidates left in R1.
        cross: ``int [targets]``: ``C(x)``, candidates left in R2 for a target of T1.
        backward: ``int [targets]``: ``B(x)``, candidates left in R2 for a new target.
        notes: remarks worth a reader's attention (one sentence each).
    """

    names: tuple[str, str]
    quasi_identifiers: list[str]
    sensitive: list[str]
    k: int
    rows: tuple[int, int]
    nodes: tuple[int, int]
    targets: np.ndarray
    new: np.ndarray
    before_first: np.ndarray
    before_second: np.ndarray
    forward: np.ndarray
    cross: np.ndarray
    backward: np.ndarray
    notes: list[str] = field(default_factory=list)

    def _under(self, left: np.ndarray) -> np.ndarray:
        return (left > 0) & (left < self.k)

    @property
    def exposed_forward(self) -> np.ndarray:
        """``bool [targets]``: targets of T1 that the forward attack leaves under k candidates."""
        return ~self.new & self._under(self.forward)

    @property
    def exposed_cross(self) -> np.ndarray:
        """``bool [targets]``: targets of T1 that the cross attack leaves under k candidates."""
        return ~self.new & self._under(self.cross)

    @property
    def exposed_backward(self) -> np.ndarray:
        """``bool [targets]``: new targets that the backward attack leaves under k candidates."""
        return self.new & self._under(self.backward)

    @property
    def exposed(self) -> np.ndarray:
        """``bool [targets]``: targets exposed by any of the three attacks."""
        return self.exposed_forward | self.exposed_cross | self.exposed_backward

    @property
    def passed(self) -> bool:
        """Whether R2 is BCF-k-anonymous with respect to R1 (no target exposed)."""
        return not bool(self.exposed.any())

    def summary(self) -> dict:
        """A JSON-ready summary."""
        old = ~self.new
        ruled_out = (old & (self.before_first > 0) & ((self.forward == 0) | (self.cross == 0))) | \
                    (self.new & (self.before_second > 0) & (self.backward == 0))
        mean = (lambda values, mask: float(values[mask].mean()) if mask.any() else 0.0)
        return {"attack": "correspondence", "releases": list(self.names), "rows": list(self.rows),
                "nodes": list(self.nodes), "quasi_identifiers": list(self.quasi_identifiers),
                "sensitive": list(self.sensitive), "k": self.k, "targets": int(len(self.targets)),
                "targets_old": int(old.sum()), "targets_new": int(self.new.sum()),
                "exposed_forward": int(self.exposed_forward.sum()), "exposed_cross": int(self.exposed_cross.sum()),
                "exposed_backward": int(self.exposed_backward.sum()), "exposed": int(self.exposed.sum()),
                "bcf_anonymous": self.passed, "ruled_out": int(ruled_out.sum()),
                "mean_candidates_first": mean(self.before_first, old),
                "mean_forward": mean(self.forward, old), "mean_candidates_second": mean(self.before_second, old),
                "mean_cross": mean(self.cross, old), "mean_candidates_new": mean(self.before_second, self.new),
                "mean_backward": mean(self.backward, self.new), "notes": list(self.notes)}

    def per_target(self) -> pd.DataFrame:
        """One row per target: whether new, candidates before and after each attack, exposures."""
        return pd.DataFrame({"target": self.targets, "new": self.new, "candidates_first": self.before_first,
                             "candidates_second": self.before_second, "forward": self.forward, "cross": self.cross,
                             "backward": self.backward, "exposed_forward": self.exposed_forward,
                             "exposed_cross": self.exposed_cross, "exposed_backward": self.exposed_backward})


@dataclass(eq=False)
class _Version:
    """One release read as nodes."""

    cells: list[list]            # per quasi-identifier, the Cell of each text
    keys: np.ndarray             # [classes × qis] label index per column
    node_class: np.ndarray       # [nodes] the node's class
    node_sensitive: np.ndarray   # [nodes] the node's sensitive tuple (a code shared by both releases)
    sizes: np.ndarray            # [nodes]


def correspondence_attack(first, second, targets, *, quasi_identifiers: str | Sequence[str] | None = None,
                          sensitive: str | Sequence[str] | None = None, k: int | None = None, new=None,
                          hierarchies: Mapping[str, Hierarchy | str | os.PathLike] | None = None,
                          orders: Mapping[str, Sequence[str]] | None = None, id_column: str | None = None,
                          delimiter: str | None = None) -> CorrespondenceResult:
    """Run the forward, cross and backward attacks of the module on two versions of a table.

    Args:
        first: R1, the earlier release: a veil ``Release``, a
            :class:`~veil.attacks.intersection.PublishedRelease` or a released table.
        second: R2, the later release of T2 ⊇ T1, in the same forms.
        targets: the people attacked (a path, a frame or a pyarrow Table) with their
            quasi-identifier values.
        quasi_identifiers: the columns the adversary knows; default: the manifests' (they must
            agree).
        sensitive: the sensitive columns comparable nodes share; default: the manifests'.
        k: the candidates under which a target is exposed; default: the smaller of the two
            releases' own k (their manifests' k-anonymity, else their smallest class).
        new: which targets are new in ΔT: a boolean column of the targets table (its name), or
            one boolean per target; default: the targets that match no node of R1 (they cannot
            be in T1, whose every record R1 publishes with cells that contain its values).
        hierarchies: hierarchies of quasi-identifiers, to read the node labels releases publish.
        orders: value orders of text quasi-identifiers.
        id_column: the targets' id column (default: their row numbers).
        delimiter: the CSV delimiter of tables given as paths (sniffed when ``None``).

    Raises:
        ParameterError: ``k`` < 1; no quasi-identifier named or in a manifest; a microaggregated
            release; ``new`` of the wrong length.
        ReleaseMismatchError: the releases name different quasi-identifiers or sensitive columns,
            or one lacks a column.
        NotIncrementalError: R2 has fewer rows than R1, or some records of R1 have no records of
            R2 they could be versions of (the releases are of different populations).
        TargetsError: the targets table lacks a quasi-identifier, the id column or ``new``'s column.
        UnreadableValueError: a published value cannot be read.
        DataError, HierarchyError: a table, manifest or hierarchy cannot be read.
    """
    if k is not None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise ParameterError(f"k must be a whole number of at least 1, not {k!r}.")
    published = [_as_published(r) for r in (first, second)]
    loaded = []
    for position, pub in enumerate(published, start=1):
        name = _release_name(pub, position)
        manifest = _load_manifest(pub.manifest, name)
        if _is_microaggregated(pub, manifest):
            raise ParameterError(f"{name} publishes group centroids (microaggregation), whose cells contain nobody; "
                                 "the correspondence attacks read generalized releases.")
        loaded.append((name, manifest, published_table(pub, delimiter)))
    (name1, manifest1, table1), (name2, manifest2, table2) = loaded
    qis = _columns(quasi_identifiers, manifest1, manifest2, 0, "quasi-identifiers", name1, name2)
    if not qis:
        raise ParameterError("name the quasi-identifiers the adversary knows (--qi); no manifest lists them.")
    sens = _columns(sensitive, manifest1, manifest2, 1, "sensitive columns", name1, name2)
    overlap = [c for c in sens if c in qis]
    if overlap:
        raise ParameterError(f"column '{overlap[0]}' cannot be both a quasi-identifier and a sensitive column.")
    for name, _, table in loaded:
        lacking = [c for c in qis + sens if c not in table.column_names]
        if lacking:
            raise ReleaseMismatchError(f"{name} has no column '{lacking[0]}'; both versions must publish the "
                                       f"quasi-identifiers ({', '.join(qis)}) and the sensitive columns.")
    if table2.num_rows < table1.num_rows:
        raise NotIncrementalError(f"{name2} has {table2.num_rows:,} rows and {name1} {table1.num_rows:,}; the later "
                                  "version of a growing table holds at least the records of the earlier one.")
    tg = _read_targets(targets, qis, sens[0] if sens else "", id_column, delimiter)
    shared = _load_hierarchies(hierarchies)
    shared_orders = {c: [str(v) for v in o] for c, o in (orders or {}).items()}
    sensitive_codes = _sensitive_codes(table1, table2, sens)
    nodes = _node_labels(published, loaded, qis, shared)
    versions = [_version(pub, name, manifest, table, qis, tg, nodes, shared_orders, codes)
                for pub, (name, manifest, table), codes in zip(published, loaded, sensitive_codes)]
    r1, r2 = versions

    n1 = r1.sizes.astype(np.int64)
    n2 = r2.sizes.astype(np.int64)
    match1 = _expand(_matches(r1, tg), r1.node_class)          # [x × R1 nodes]
    match2 = _expand(_matches(r2, tg), r2.node_class)          # [x × R2 nodes]
    comparable = _comparable(r1, r2, tg)                        # [R1 nodes × R2 nodes]

    # Every R1 node needs its records' buddies among the R2 nodes comparable to it.
    reach1 = comparable @ n2
    short = np.flatnonzero(reach1 < n1)
    if len(short):
        raise NotIncrementalError(f"{_plural(int(n1[short].sum()), 'record')} of {name1} have fewer comparable "
                                  f"records in {name2} than they need (same sensitive values, overlapping cells); "
                                  "the releases are not versions of one growing table of the same population.")

    before1 = np.asarray(match1 @ n1).ravel()
    before2 = np.asarray(match2 @ n2).ravel()
    # Counts stay whole numbers: the diagonal keeps the sizes' int64 (SciPy casts it to float64 unless told).
    forward = _left(match1, match2 @ sp.diags(n2, dtype=np.int64) @ comparable.T, n1)
    cross = _left(match2, match1 @ sp.diags(n1, dtype=np.int64) @ comparable, n2)
    backward = np.asarray(match2 @ (n2 - _need(comparable, n1, n2))).ravel()

    if new is None:
        is_new = before1[tg.tuple_of] == 0
    else:
        is_new = _new_flags(new, targets, tg.n, delimiter)
    if k is None:
        k = min(_own_k(manifest, version) for manifest, version in ((manifest1, r1), (manifest2, r2)))
    notes = [f"{name} removed {_plural(removed, 'suppressed record')}; the attacks take every record to be in both "
             "releases, so a person whose record was removed may be placed wrongly."
             for (name, manifest, _) in loaded if (removed := _removed(manifest))]
    return CorrespondenceResult((name1, name2), qis, sens, int(k), (table1.num_rows, table2.num_rows),
                                (len(n1), len(n2)), tg.ids, np.asarray(is_new, dtype=bool), before1[tg.tuple_of],
                                before2[tg.tuple_of], forward[tg.tuple_of], cross[tg.tuple_of],
                                backward[tg.tuple_of], notes)


def _columns(named, manifest1, manifest2, role: int, what: str, name1: str, name2: str) -> list[str]:
    """The columns named, or the manifests' (which must agree when both list them)."""
    if named is not None:
        columns = [named] if isinstance(named, str) else list(named)
        if len(set(columns)) != len(columns):
            raise ParameterError(f"a column is listed twice among the {what}; list each once.")
        return columns
    first, second = _roles(manifest1)[role], _roles(manifest2)[role]
    if first and second and set(first) != set(second):
        raise ReleaseMismatchError(f"{name1} names the {what} {', '.join(first)} and {name2} "
                                   f"{', '.join(second)}; versions of one table publish the same ones.")
    return list(first or second)


def _sensitive_codes(table1: pa.Table, table2: pa.Table, sens: Sequence[str]) -> list[np.ndarray]:
    """Per release, each row's tuple of sensitive values as one code shared by both releases."""
    n1, n2 = table1.num_rows, table2.num_rows
    if not sens:
        return [np.zeros(n1, dtype=np.int64), np.zeros(n2, dtype=np.int64)]
    codes, radices = [], []
    for column in sens:
        texts = []
        for table in (table1, table2):
            labels, code = _text_column(table.column(column))
            texts.append(np.asarray(canonical_numeric_texts(labels), dtype=object)[code])
        code, labels = pd.factorize(np.concatenate(texts))
        codes.append(code.astype(np.int64))
        radices.append(max(len(labels), 1))
    joint, _ = group_rows(codes, radices)
    joint = np.asarray(joint, dtype=np.int64)
    return [joint[:n1], joint[n1:]]


def _node_labels(published: Sequence[PublishedRelease], loaded: Sequence[tuple], qis: Sequence[str],
                 shared: dict) -> dict[str, dict[str, frozenset]]:
    """Per quasi-identifier, every hierarchy node label either release's hierarchies, value maps or
    boxes name, with the union of the values each says it covers: a version of a grown table comes
    with a hierarchy over more values, and the earlier release's labels stand for the same nodes."""
    out: dict[str, dict[str, set]] = {}
    for pub, (_, manifest, _) in zip(published, loaded):
        own = {**_named_hierarchies(pub, manifest, shared), **_load_hierarchies(pub.hierarchies)}
        for q in qis:
            # the manifest's own labels, then each hierarchy's nodes
            sources = [_nodes_for(q, {}, manifest)] + [hierarchy_nodes(h[q]) for h in (shared, own) if q in h]
            for nodes in sources:
                for label, members in (nodes or {}).items():
                    out.setdefault(q, {}).setdefault(label, set()).update(members)
    return {q: {label: frozenset(m) for label, m in labels.items()} for q, labels in out.items()}


def _version(pub: PublishedRelease, name: str, manifest, table: pa.Table, qis: Sequence[str], tg,
             nodes_by_column: dict, shared_orders: dict, sensitive: np.ndarray) -> _Version:
    """A release read as classes and nodes, its cells parsed."""
    _check_boxes(name, manifest, qis, nodes_by_column)
    orders = {**shared_orders, **{c: [str(v) for v in o] for c, o in (pub.orders or {}).items()}}
    labels, codes, cells = [], [], []
    for j, q in enumerate(qis):
        lab, code = _text_column(table.column(q))
        labels.append(lab)
        codes.append(code)
        cells.append([parse_published_value(text, numeric=tg.numeric[j], nodes=nodes_by_column.get(q),
                                            order=orders.get(q), column=q, where=name) for text in lab.tolist()])
    class_of_row, keys = group_rows(codes, [max(len(lab), 1) for lab in labels])
    class_of_row = np.asarray(class_of_row, dtype=np.int64)
    keys = np.asarray(keys, dtype=np.int64).reshape(-1, len(qis))
    node_of_row, node_keys = group_rows([class_of_row, sensitive],
                                        [max(len(keys), 1), int(sensitive.max(initial=0)) + 1])
    node_keys = np.asarray(node_keys, dtype=np.int64).reshape(-1, 2)
    sizes = np.bincount(np.asarray(node_of_row, dtype=np.int64), minlength=len(node_keys))
    return _Version(cells, keys, node_keys[:, 0], node_keys[:, 1], sizes)


def _all_columns(tables: Sequence[np.ndarray], left: np.ndarray, right: np.ndarray) -> sp.csr_matrix:
    """``bool [len(left) × len(right)]``: the pairs ``(i, j)`` with ``tables[q][left[i, q], right[j, q]]``
    for every column ``q``.

    Bit sets: per column, each left value's allowed rows of ``right`` packed 64 to a word, gathered
    for every row of ``left`` and AND-ed over the columns; the few pairs left are read off the set
    bits. The rows of ``right`` go in blocks that keep each array near :data:`BLOCK` entries.
    """
    n_left, n_right = left.shape[0], right.shape[0]
    if not tables:
        return sp.csr_matrix(np.ones((n_left, n_right), dtype=bool))
    widest = max(max(table.shape[0] for table in tables), n_left // 8, 1)
    span = max(64, (BLOCK // widest) // 64 * 64)
    rows_out, cols_out = [], []
    for start in range(0, n_right, span):
        stop = min(start + span, n_right)
        acc = None
        for q, table in enumerate(tables):
            bits = _packed(table[:, right[start:stop, q]])                # [left values × words]
            gathered = bits[left[:, q]]
            acc = gathered if acc is None else np.bitwise_and(acc, gathered, out=acc)
        i, j = _pairs_from_bits(acc, stop - start)
        rows_out.append(i)
        cols_out.append(j + start)
    i = np.concatenate(rows_out) if rows_out else np.zeros(0, dtype=np.int64)
    j = np.concatenate(cols_out) if cols_out else np.zeros(0, dtype=np.int64)
    out = sp.csr_matrix((np.ones(len(i), dtype=bool), (i, j)), shape=(n_left, n_right))
    out.sort_indices()
    return out


def _packed(member: np.ndarray) -> np.ndarray:
    """``bool [rows × n]`` as ``uint64 [rows × ⌈n/64⌉]`` bit sets (bit ``b`` of word ``w`` is column
    ``64 w + b``)."""
    words = max(1, -(-member.shape[1] // 64))
    padded = np.zeros((member.shape[0], words * 8), dtype=np.uint8)
    packed = np.packbits(member, axis=1, bitorder="little")
    padded[:, :packed.shape[1]] = packed
    return padded.view(np.uint64)


def _matches(version: _Version, tg) -> sp.csr_matrix:
    """``bool [distinct target tuples × classes]``: the classes whose every cell holds the tuple."""
    tables = [np.stack([cell.contains(tg.values[j]) for cell in cells]).T if cells else
              np.zeros((len(tg.values[j].texts), 0), dtype=bool)
              for j, cells in enumerate(version.cells)]                     # [values × labels]
    return _all_columns(tables, tg.value_index, version.keys)


def _expand(by_class: sp.csr_matrix, node_class: np.ndarray) -> sp.csr_matrix:
    """A matrix over classes as one over nodes (each node takes its class's column), as integers."""
    return by_class[:, node_class].astype(np.int64).tocsr()


def _universe(cells: list, tg_values: ColumnValues, numeric: bool) -> ColumnValues:
    """The original values two releases' cells are compared on: the targets' values, every value
    a set cell names, and the missing value."""
    texts = list(tg_values.texts.tolist())
    for cell in cells:
        if cell.kind == "set":
            texts.extend(sorted(cell.values))
            texts.extend(_number_text(n) for n in cell.numbers)
    texts.append(MISSING_LABEL)
    return ColumnValues.of(list(dict.fromkeys(texts)), numeric)


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _intersecting(cells1: list, cells2: list, tg_values: ColumnValues, numeric: bool) -> np.ndarray:
    """``bool [cells1 × cells2]``: whether two cells may share an original value.

    Exact for sets (their members are listed), intervals (compared by their bounds) and ``*``; a
    mask against an interval or another mask is taken to intersect, which can only keep
    candidates (never remove a true one).
    """
    if not cells1 or not cells2:
        return np.zeros((len(cells1), len(cells2)), dtype=bool)
    universe = _universe(cells1 + cells2, tg_values, numeric)
    hold1 = sp.csr_matrix(np.stack([c.contains(universe) for c in cells1]), dtype=np.int64)
    hold2 = sp.csr_matrix(np.stack([c.contains(universe) for c in cells2]), dtype=np.int64)
    out = (hold1 @ hold2.T).toarray() > 0
    kind1 = np.array([c.kind for c in cells1], dtype=object)
    kind2 = np.array([c.kind for c in cells2], dtype=object)
    out |= (kind1 == "any")[:, None] | (kind2 == "any")[None, :]
    loose = {"interval", "mask"}
    out |= ((kind1 == "mask")[:, None] & np.isin(kind2, list(loose))[None, :]) | \
        (np.isin(kind1, list(loose))[:, None] & (kind2 == "mask")[None, :])
    i1, i2 = np.flatnonzero(kind1 == "interval"), np.flatnonzero(kind2 == "interval")
    if len(i1) and len(i2):
        bounds = [np.array([[cells[i].low, cells[i].high, cells[i].low_closed, cells[i].high_closed] for i in idx],
                           dtype=float) for cells, idx in ((cells1, i1), (cells2, i2))]
        (l1, h1, lc1, hc1), (l2, h2, lc2, hc2) = ([b[:, i] for i in range(4)] for b in bounds)
        low = np.maximum(l1[:, None], l2[None, :])
        high = np.minimum(h1[:, None], h2[None, :])
        # At a shared end point both intervals must be closed there.
        point = ((low > l1[:, None]) | (lc1[:, None] > 0)) & ((low > l2[None, :]) | (lc2[None, :] > 0)) & \
                ((low < h1[:, None]) | (hc1[:, None] > 0)) & ((low < h2[None, :]) | (hc2[None, :] > 0))
        out[np.ix_(i1, i2)] |= (low < high) | ((low == high) & point)
    return out


def _comparable(r1: _Version, r2: _Version, tg) -> sp.csr_matrix:
    """``int [R1 nodes × R2 nodes]``: 1 where the nodes are comparable (same sensitive values,
    every cell intersecting)."""
    tables = [_intersecting(r1.cells[j], r2.cells[j], tg.values[j], tg.numeric[j]) for j in range(len(r1.cells))]
    classes = _all_columns(tables, r1.keys, r2.keys).tocoo()
    pairs = pd.DataFrame({"c1": classes.row.astype(np.int64), "c2": classes.col.astype(np.int64)})
    nodes1 = pd.DataFrame({"c1": r1.node_class, "s": r1.node_sensitive, "u": np.arange(len(r1.node_class))})
    nodes2 = pd.DataFrame({"c2": r2.node_class, "s": r2.node_sensitive, "v": np.arange(len(r2.node_class))})
    joined = pairs.merge(nodes1, on="c1").merge(nodes2, on=["c2", "s"])
    data = np.ones(len(joined), dtype=np.int64)
    return sp.csr_matrix((data, (joined["u"].to_numpy(np.int64), joined["v"].to_numpy(np.int64))),
                         shape=(len(r1.node_class), len(r2.node_class)))


def _left(match: sp.csr_matrix, supply: sp.csr_matrix, sizes: np.ndarray) -> np.ndarray:
    """Per target tuple, ``Σ_{node matches x} min(|node|, supply[x, node])``: the candidates the
    attack leaves (``|node| − crack = min(|node|, supply)``)."""
    kept = match.multiply(supply).tocsr()
    kept.data = np.minimum(kept.data, sizes[kept.indices])
    return np.asarray(kept.sum(axis=1)).ravel().astype(np.int64)


def _need(comparable: sp.csr_matrix, n1: np.ndarray, n2: np.ndarray) -> np.ndarray:
    """Per R2 node ``v``, ``need(v)``: records of ``v`` that must be buddies of R1 records."""
    by_v = comparable.T.tocsr()
    reach = np.asarray(by_v @ n1).ravel()
    second_ring = np.zeros(len(n2), dtype=np.int64)
    block = max(1, BLOCK // max(len(n2), 1))
    for start in range(0, len(n2), block):
        ring = (by_v[start:start + block] @ comparable).tocsr()
        ring.data[:] = 1
        second_ring[start:start + block] = ring @ n2
    # v is in N(N(v)) whenever N(v) is not empty; the others are every node of it but v.
    others = np.where(reach > 0, second_ring - n2, 0)
    return np.minimum(n2, np.maximum(0, reach - others))


def _new_flags(new, targets, n: int, delimiter: str | None) -> np.ndarray:
    """One boolean per target from a column of the targets table or an array."""
    from veil.data.io import read_table

    if isinstance(new, str):
        table = targets if isinstance(targets, pa.Table) else read_table(targets, delimiter).data
        if new not in table.column_names:
            raise TargetsError(f"the targets table has no column '{new}' saying which targets are new; its columns "
                                f"are {', '.join(table.column_names)}.")
        labels, code = _text_column(table.column(new))
        truth = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
        read = [truth.get(str(t).strip().lower()) for t in labels.tolist()]
        bad = [t for t, r in zip(labels.tolist(), read) if r is None]
        if bad:
            raise TargetsError(f"column '{new}' of the targets holds {bad[0]!r}; write true or false (1 or 0) for "
                                "whether each target is new.")
        return np.asarray(read, dtype=bool)[code]
    flags = np.asarray(new, dtype=bool).ravel()
    if len(flags) != n:
        raise ParameterError(f"new gives {len(flags)} flags for {n} targets; give one per target.")
    return flags


def _own_k(manifest: dict | None, version: _Version) -> int:
    """A release's own k: its manifest's k-anonymity, else its smallest class."""
    for model in (manifest or {}).get("models") or []:
        if model.get("model") == "k-anonymity" and isinstance(model.get("threshold"), (int, float)):
            return max(1, int(math.floor(model["threshold"])))
    smallest = ((manifest or {}).get("classes") or {}).get("smallest")
    if isinstance(smallest, (int, float)) and smallest >= 1:
        return int(smallest)
    classes = np.bincount(version.node_class, weights=version.sizes)
    return int(classes.min()) if len(classes) else 1


def _removed(manifest: dict | None) -> int:
    """Records a release says it removed (suppressed and not shown as ``*``)."""
    if ((manifest or {}).get("output") or {}).get("suppressed") != "remove":
        return 0
    records = ((manifest or {}).get("suppression") or {}).get("records")
    return int(records) if isinstance(records, (int, float)) else 0


def _plural(count: int, one: str) -> str:
    return f"{count:,} {one if count == 1 else one + 's'}"

