"""The intersection attack across independent releases (Ganta, Kasiviswanathan and Smith, KDD 2008).

Several organizations publish anonymized tables about overlapping populations. An adversary who
knows a target's quasi-identifiers and that the target is in every release locates the target's
equivalence class in each release and intersects the sets of sensitive values those classes hold
(the paper's Algorithm 1, Section 2.1). Two hospitals' 4- and 6-anonymous tables that each give
Alice three or four possible conditions may share only one: AIDS.

**Definitions** (Ganta et al., Section 2.1; i a target, j a release):

* ``s_ij``: the set of *distinct* sensitive values of the class ``e_ij`` the target falls into
  (``Sensitive_value_set``);
* ``EA_ij = |s_ij|``, the effective (prior) anonymity (Definition 8: the number of distinct
  sensitive values in the class, not the class size; the size is reported beside it);
* ``EA^_i = |∩_j s_ij|``, the effective posterior anonymity;
* ``Anon_Drop_i = min_j EA_ij − EA^_i``;
* ``VP = {i : Anon_Drop_i > 0}``, the vulnerable population;
* ``C_i = 1 / EA^_i``, the adversary's confidence (Definition 9: every value left in the
  intersection is equally likely to him, as the paper assumes of an adversary without further
  auxiliary information). veil uses this definition, not a frequency-weighted posterior, because
  PVP_C is defined on it and the attack reasons on *sets* of values (Algorithm 1);
* ``VP_C = {i : C_i ≥ C}`` and ``PVP_C = 100 · |VP_C| / |P|``; a perfect breach is C = 1
  (Section 3.2.1: an intersection of size 1).

**Locating a target** (the paper's *locatability*, Definition 6) is
:mod:`veil.attacks.locating`: in a *generalized* release the target's classes are those whose
published values all *contain* its values (read by
:func:`veil.attacks.published_values.parse_published_value`: ranges, intervals, comparisons,
masks, value sets, hierarchy nodes when the column's hierarchy or the release's veil manifest is
given); in a *microaggregated* release (MDAV) it is the group whose centroid is nearest.

**Several classes, or none.** Relaxed Mondrian partitions may overlap, a release with suppressed
rows shown as ``*`` has a class that contains everyone, and equally near centroids tie. The
adversary then knows only that the target is in one of the matching classes, so ``s_ij`` is the
*union* of their value sets (sound: the true value is in it whenever the target is in one of
them). A target that matches no class (its record was suppressed, or a published value could not
be related to it) learns nothing from that release: ``s_ij`` is every value the release holds.
Both cases are counted per release. An intersection can be empty only when a target was put in a
class it is not in (a nearest-centroid miss): then ``EA^_i = 0`` and ``C_i = 0`` (no breach), and
such targets are counted.

**Vectorized.** Targets with equal quasi-identifiers are located once (see
:mod:`veil.attacks.locating`). Value sets are boolean matrices targets × values, intersected with
one ``&`` per release. The result is :class:`~veil.attacks.intersection_result.IntersectionResult`;
the releases are read as :class:`~veil.attacks.published_release.PublishedRelease`.
"""

from __future__ import annotations

import os
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from veil.attacks.intersection_result import DEFAULT_CONFIDENCE, IntersectionResult, ReleaseLocation, check_level
from veil.attacks.locating import ReleaseRead, membership, nearest, pairs_from_bits
from veil.attacks.published_release import (GENERALIZED, MICROAGGREGATED, PublishedRelease, ReleaseMismatchError,
                                            as_published, check_boxes, is_microaggregated, load_hierarchies,
                                            load_manifest, named_hierarchies, nodes_for, published_table,
                                            release_name, roles)
from veil.attacks.published_values import (Cell, ColumnValues, UnreadableValueError, hierarchy_nodes,
                                           parse_published_value)
from veil.attacks.targets import TargetsError, read_targets
from veil.classes import group_rows
from veil.data.encoding import canonical_numeric_texts, text_codes
from veil.data.hierarchy import Hierarchy
from veil.errors import ParameterError

# The names users import from this module (their homes are the modules above).
__all__ = ["DEFAULT_CONFIDENCE", "GENERALIZED", "MICROAGGREGATED", "IntersectionResult", "PublishedRelease",
           "ReleaseLocation", "ReleaseMismatchError", "TargetsError", "UnreadableValueError", "ColumnValues", "Cell",
           "hierarchy_nodes", "intersection_attack", "parse_published_value", "published_table"]


def _check_columns(name: str, table: pa.Table, qis: Sequence[str], sensitive: str, first: str | None) -> None:
    """Refuse a release that lacks a quasi-identifier or the sensitive column (``first``: the
    release the others are compared with, ``None`` for that one itself)."""
    columns = table.column_names
    for q in qis:
        if q not in columns:
            if first is None:
                raise ReleaseMismatchError(f"{name} has no column '{q}', named as a quasi-identifier; its columns are "
                                           f"{', '.join(columns)}.")
            raise ReleaseMismatchError(f"{name} has no column '{q}', which {first} publishes as a quasi-identifier; "
                                       "every release must publish the same quasi-identifiers.")
    if sensitive not in columns:
        if first is None:
            raise ReleaseMismatchError(f"{name} has no column '{sensitive}', named as the sensitive column; its "
                                       f"columns are {', '.join(columns)}.")
        raise ReleaseMismatchError(f"{name} has no sensitive column '{sensitive}', which {first} publishes; "
                                   "every release must publish the sensitive column.")


def _plural(count: int, one: str, many: str) -> str:
    return f"{count:,} {one if count == 1 else many}"


def intersection_attack(releases: Sequence, targets, *, quasi_identifiers: str | Sequence[str] | None = None,
                        sensitive: str | None = None, confidence: Sequence[float] = DEFAULT_CONFIDENCE,
                        hierarchies: Mapping[str, Hierarchy | str | os.PathLike] | None = None,
                        orders: Mapping[str, Sequence[str]] | None = None, id_column: str | None = None,
                        delimiter: str | None = None) -> IntersectionResult:
    """Run the intersection attack of Ganta et al. on independent releases.

    Args:
        releases: at least two releases: veil ``Release`` objects, :class:`PublishedRelease`
            (a table with its manifest, hierarchies, kind), or released tables (paths or frames).
        targets: the people attacked (a path or a frame): their quasi-identifier values, and
            optionally their true sensitive value (then the result tells whether it survived) and
            an id column.
        quasi_identifiers: the columns the adversary knows; default: the first manifest's.
        sensitive: the sensitive column; default: the first manifest's (when it names one).
        confidence: the levels C, in (0, 1], at which ``PVP_C`` is reported (1: perfect breach).
        hierarchies: hierarchies of quasi-identifiers, for every release (a release's own come
            first), to read the node labels they publish.
        orders: value orders of text quasi-identifiers, for every release.
        id_column: the targets' id column (default: their row numbers).
        delimiter: the CSV delimiter of tables given as paths (sniffed when ``None``).

    Raises:
        ParameterError: fewer than two releases, a confidence level outside (0, 1], no
            quasi-identifier or sensitive column named or found in a manifest.
        ReleaseMismatchError: a release lacks a quasi-identifier or the sensitive column.
        TargetsError: the targets table lacks a quasi-identifier or the id column.
        UnreadableValueError: a published value cannot be read (the value and column are named).
        DataError, HierarchyError: a table, manifest or hierarchy cannot be read.
    """
    levels = tuple(check_level(c) for c in confidence)
    if not levels:
        raise ParameterError("give at least one confidence level in (0, 1].")
    releases = list(releases)
    if len(releases) < 2:
        raise ParameterError(f"the intersection attack needs at least two releases, not {len(releases)}.")
    published = [as_published(r) for r in releases]
    shared_hierarchies = load_hierarchies(hierarchies)
    shared_orders = {k: [str(v) for v in o] for k, o in (orders or {}).items()}

    loaded = []
    for i, pub in enumerate(published):
        name = release_name(pub, i + 1)
        manifest = load_manifest(pub.manifest, name)
        table = published_table(pub, delimiter)
        loaded.append((name, manifest, table))

    qis = [quasi_identifiers] if isinstance(quasi_identifiers, str) else list(quasi_identifiers or [])
    if not qis:
        qis = next((roles(m)[0] for _, m, _ in loaded if roles(m)[0]), [])
        if not qis:
            raise ParameterError("name the quasi-identifiers the adversary knows (--qi); no manifest lists them.")
    if len(set(qis)) != len(qis):
        raise ParameterError("a quasi-identifier is listed twice; list each once.")
    if sensitive is None:
        named = next((roles(m)[1] for _, m, _ in loaded if roles(m)[1]), [])
        if len(named) != 1:
            raise ParameterError("name the sensitive column to attack (--sensitive)"
                                 + ("; the manifest lists several." if len(named) > 1 else "; no manifest names one."))
        sensitive = named[0]
    if sensitive in qis:
        raise ParameterError(f"column '{sensitive}' cannot be both a quasi-identifier and the sensitive column.")
    first = loaded[0][0]
    for i, (name, _, table) in enumerate(loaded):
        _check_columns(name, table, qis, sensitive, first if i else None)
    tg = read_targets(targets, qis, sensitive, id_column, delimiter)

    reads = []
    for pub, (name, manifest, table) in zip(published, loaded):
        own = load_hierarchies(pub.hierarchies)
        merged = {**named_hierarchies(pub, manifest, shared_hierarchies), **shared_hierarchies, **own}
        nodes = {q: n for q in qis if (n := nodes_for(q, merged, manifest)) is not None}
        orders_here = dict(shared_orders)
        orders_here.update({k: [str(v) for v in o] for k, o in (pub.orders or {}).items()})
        micro = is_microaggregated(pub, manifest)
        if not micro:
            check_boxes(name, manifest, qis, nodes)
        label_codes, labels = [], []
        for q in qis:
            lab, code = text_codes(table.column(q))
            labels.append(lab)
            label_codes.append(code)
        class_of_row, keys = group_rows(label_codes, [len(lab) for lab in labels])
        sens_labels, sens_codes = text_codes(table.column(sensitive))
        target_rows = None
        if pub.target_rows is not None:
            target_rows = np.asarray(pub.target_rows, dtype=np.int64)
            if len(target_rows) != tg.n:
                raise ParameterError(f"{name} gives {len(target_rows)} target rows for {tg.n} targets.")
        reads.append(ReleaseRead(name, micro, manifest, nodes, orders_here, table.num_rows,
                                 class_of_row.astype(np.int64), np.asarray(keys, dtype=np.int64), labels,
                                 np.bincount(class_of_row, minlength=len(keys)).astype(np.int64),
                                 np.asarray(canonical_numeric_texts(sens_labels), dtype=object), sens_codes,
                                 target_rows))

    # One vocabulary of sensitive values across the releases (and the targets' true values).
    pieces = [r.sensitive_texts for r in reads]
    if tg.truth_texts is not None:
        pieces.append(pd.unique(tg.truth_texts))
    vocabulary = pd.Index(pd.unique(np.concatenate(pieces).astype(object)))
    order = np.argsort(vocabulary.to_numpy().astype(str), kind="stable")
    vocabulary = pd.Index(vocabulary.to_numpy()[order])
    n_values = len(vocabulary)

    n_rel = len(reads)
    T = tg.n
    sets, candidates = [], np.zeros((T, n_rel), dtype=np.int64)
    class_sizes = np.zeros((T, n_rel), dtype=np.int64)
    correctly = np.zeros((T, n_rel), dtype=bool) if any(r.target_rows is not None for r in reads) else None
    locations, notes = [], []
    posterior = np.ones((T, n_values), dtype=bool)
    for j, read in enumerate(reads):
        n_classes = len(read.sizes)
        codes = vocabulary.get_indexer(read.sensitive_texts)[read.sensitive_codes]
        class_values = np.zeros((n_classes, n_values), dtype=bool)
        class_values[read.class_of_row, codes] = True
        source, uncovered = None, None
        if read.microaggregated:
            rows, classes, source = nearest(read, tg, qis)
        else:
            bits, uncovered = membership(read, tg, qis)
            rows, classes = pairs_from_bits(bits, n_classes)
        n_tuples = len(tg.value_index)
        count = np.bincount(rows, minlength=n_tuples)
        size = np.bincount(rows, weights=read.sizes[classes], minlength=n_tuples).astype(np.int64)
        tuple_sets = np.broadcast_to(class_values.any(axis=0), (n_tuples, n_values)).copy()
        size[count == 0] = read.rows
        if len(rows):
            starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
            tuple_sets[rows[starts]] = np.logical_or.reduceat(class_values[classes], starts, axis=0)
        s = tuple_sets[tg.tuple_of]
        sets.append(s)
        posterior &= s
        candidates[:, j] = count[tg.tuple_of]
        class_sizes[:, j] = size[tg.tuple_of]
        if correctly is not None and read.target_rows is not None:
            true_class = np.where(read.target_rows >= 0, read.class_of_row[np.maximum(read.target_rows, 0)], -1)
            pair_keys = rows * n_classes + classes
            wanted = tg.tuple_of * n_classes + true_class
            at = np.searchsorted(pair_keys, wanted)
            hit = (at < len(pair_keys)) & (true_class >= 0)
            hit[hit] = pair_keys[at[hit]] == wanted[hit]
            correctly[:, j] = hit
        unlocated = int((candidates[:, j] == 0).sum())
        if unlocated:
            why = ""
            if uncovered:
                q, texts = max(uncovered.items(), key=lambda item: len(item[1]))
                shown = ", ".join(repr(t) for t in texts[:3])
                why = (f"; column '{q}' publishes {_plural(len(texts), 'value', 'values')} no target holds "
                       f"({shown}{', …' if len(texts) > 3 else ''}): if they are hierarchy nodes, give the column's "
                       "hierarchy or the release's manifest")
            notes.append(f"{_plural(unlocated, 'target', 'targets')} of {T:,} match no class of {read.name}{why}; "
                         "each is given every value that release holds.")
        ambiguous = int((candidates[:, j] > 1).sum())
        if ambiguous:
            notes.append(f"{_plural(ambiguous, 'target matches', 'targets match')} several classes of {read.name} "
                         "(overlapping cells, suppressed rows or tied centroids); each is given the union of "
                         "their values.")
        locations.append(ReleaseLocation(read.name, MICROAGGREGATED if read.microaggregated else GENERALIZED,
                                         read.rows, n_classes, source, read.target_rows is not None))
    ea = np.stack([s.sum(axis=1) for s in sets], axis=1).astype(np.int64)
    ea_post = posterior.sum(axis=1).astype(np.int64)
    drop = ea.min(axis=1) - ea_post
    with np.errstate(divide="ignore"):
        conf = np.where(ea_post > 0, 1.0 / np.maximum(ea_post, 1), 0.0)
    empty = int((ea_post == 0).sum())
    if empty:
        notes.append(f"{_plural(empty, 'target has', 'targets have')} an empty intersection: some release put "
                     "them in a class they are not in (their confidence is 0).")
    truth = None
    if tg.truth_texts is not None:
        truth = vocabulary.get_indexer(tg.truth_texts).astype(np.int64)
    return IntersectionResult(locations, sensitive, vocabulary.to_numpy(), tg.ids, sets, candidates, class_sizes,
                              ea, posterior, ea_post, drop, conf, levels, truth, correctly, notes)
