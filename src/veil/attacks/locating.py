"""Locating people in a release's equivalence classes (Ganta, Kasiviswanathan and Smith, KDD 2008,
Definition 6, locatability).

A class is a set of released rows with identical published quasi-identifiers (Definition 2). In
a *generalized* release (full-domain, Mondrian, anything publishing ranges, masks or hierarchy
nodes) a person's class is one whose published value of every quasi-identifier *contains* the
person's value, as :func:`veil.attacks.published_values.parse_published_value` reads it
(:func:`membership` for the targets of an attack across releases, :func:`locate` for a whole
population). In a *microaggregated* release (MDAV) the published values are group centroids and
modes, which do not contain anyone: the target goes to the group whose centroid is nearest (the
paper's heuristic, Section 2), in the standardized space of :mod:`veil.anonymize.mdav.space` (z-scores
of numeric and ordinal columns, one per nominal column that differs), with the manifest's means
and standard deviations when it is given and otherwise with the mean and standard deviation of
the published column over the release's rows (:func:`nearest`). Equally near centroids tie, and
a class whose published quasi-identifiers are all ``*`` (suppressed records) contains anyone.

**Vectorized.** Targets with equal quasi-identifiers are located once. Per release and
quasi-identifier, every distinct published value is parsed once and tested against every distinct
target value; each target value then has a bit set over the classes (64 classes a word), and a
target's classes are the AND of its values' bit sets. Nearest centroids come from chunked
targets × classes distance matrices (nominal mismatches as one small matrix product of exact
0/1 counts, numeric columns added column by column), so ties are found exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from veil.attacks.published_classes import PublishedClasses
from veil.attacks.published_values import (ColumnValues, finite_number, hierarchy_nodes, parse_published_value,
                                           unreadable)
from veil.attacks.targets import Targets
from veil.classes import STAR, group_rows
from veil.data.dataset import Dataset
from veil.data.encoding import MISSING_LABEL
from veil.errors import ColumnError

# Entries of one block of a targets × classes distance matrix.
DISTANCE_BLOCK = 1 << 21
# Relative slack under which two distances to centroids are a tie.
TIE = 1e-9
# Distinct person tuples located against the classes at a time.
_LOCATE_CHUNK = 512


@dataclass(eq=False)
class ReleaseRead:
    """One release read for locating targets: its classes, their published labels and sizes, and
    the sensitive value of every row."""

    name: str
    microaggregated: bool
    manifest: dict | None
    nodes: dict[str, dict[str, frozenset]]
    orders: dict[str, list[str]]
    rows: int
    class_of_row: np.ndarray
    keys: np.ndarray                 # [classes × qis] label index per column
    labels: list[np.ndarray]         # per qi, the distinct published labels
    sizes: np.ndarray
    sensitive_texts: np.ndarray      # distinct sensitive texts
    sensitive_codes: np.ndarray      # per row, index into sensitive_texts
    target_rows: np.ndarray | None


def membership(read: ReleaseRead, targets: Targets, qis: Sequence[str]) -> tuple[np.ndarray, dict[str, list[str]]]:
    """The classes of a generalized release that contain each distinct target tuple: those whose
    published value of every quasi-identifier covers the target's (as
    :func:`~veil.attacks.published_values.parse_published_value` reads it).

    Args:
        read: the release, read.
        targets: the targets, grouped by tuple.
        qis: the quasi-identifiers, in the order of ``read`` and ``targets``.

    Returns:
        ``(bits, uncovered)``: ``uint64 [tuples × words]``, bit ``b`` of word ``w`` set when class
        ``64·w + b`` contains the tuple (see :func:`pairs_from_bits`); and per quasi-identifier, the
        published texts read as plain values that no target holds.

    Raises:
        UnreadableValueError: a published value cannot be read.
    """
    n_classes = len(read.sizes)
    words = max(1, -(-n_classes // 64))
    acc = None
    uncovered = {}
    for j, q in enumerate(qis):
        values = targets.values[j]
        cells = [parse_published_value(label, numeric=targets.numeric[j], nodes=read.nodes.get(q),
                                       order=read.orders.get(q), column=q, where=read.name)
                 for label in read.labels[j].tolist()]
        contains = np.stack([cell.contains(values) for cell in cells]) if cells else \
            np.zeros((0, len(values.texts)), dtype=bool)                      # [labels × values]
        unused = [cell.text for cell, hit in zip(cells, contains.any(axis=1).tolist()) if cell.plain and not hit]
        if unused:
            uncovered[q] = unused
        member = contains[read.keys[:, j]].T                                 # [values × classes]
        packed = np.packbits(member, axis=1, bitorder="little")
        padded = np.zeros((member.shape[0], words * 8), dtype=np.uint8)
        padded[:, :packed.shape[1]] = packed
        bits = padded.view(np.uint64)                                        # [values × words]
        gathered = bits[targets.value_index[:, j]]
        acc = gathered if acc is None else np.bitwise_and(acc, gathered, out=acc)
    return acc, uncovered


def pairs_from_bits(acc: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``(row, class)`` pairs of the set bits of ``acc`` (``uint64 [rows × words]``, where bit
    ``b`` of word ``w`` stands for class ``64·w + b``), ordered by row then class, as two int64 arrays.
    ``n_classes`` is the number of classes the bits cover."""
    rows, words = np.nonzero(acc)
    if not len(rows):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    chosen = np.ascontiguousarray(acc[rows, words]).view(np.uint8).reshape(-1, 8)
    bits = np.unpackbits(chosen, axis=1, bitorder="little").astype(bool)       # [pairs × 64]
    at_row, at_bit = np.nonzero(bits)
    classes = words[at_row].astype(np.int64) * 64 + at_bit
    return rows[at_row].astype(np.int64), classes


def _embedding(read: ReleaseRead, targets: Targets, qis: Sequence[str]):
    """The targets' tuples and the classes in the standardized space of MDAV.

    Returns ``(numeric_t, numeric_c, nominal_t, nominal_c, source)``: z-scores ``[tuples × n]``
    and ``[classes × n]`` of the numeric and ordinal columns, one-hot ``float32`` matrices of the
    nominal ones, and where the standardization came from.
    """
    standardization = ((read.manifest or {}).get("recoding") or {}).get("standardization") or {}
    source = "manifest" if standardization else "release"
    num_t, num_c, nom_t, nom_c = [], [], [], []
    for j, q in enumerate(qis):
        spec = standardization.get(q) or {}
        kind = spec.get("kind")
        labels = read.labels[j]
        key = read.keys[:, j]
        values = targets.values[j]
        if kind is None:
            published = [t for t in labels.tolist() if t not in (MISSING_LABEL, STAR)]
            numeric = targets.numeric[j] and bool(published) and all(finite_number(t) is not None for t in published)
            kind = "numeric" if numeric else "nominal"
        if kind in ("numeric", "ordinal"):
            if kind == "numeric":
                label_x = _numbers_of(labels, q, read.name)
                target_x = values.numbers if values.numbers is not None else np.full(len(values.texts), np.nan)
            else:
                position = {str(v): i for i, v in enumerate(spec.get("order") or [])}
                label_x = np.array([position.get(t, np.nan) for t in labels.tolist()], dtype=float)
                target_x = np.array([position.get(t, np.nan) for t in values.texts.tolist()], dtype=float)
            mean, std = spec.get("mean"), spec.get("std")
            if mean is None:
                row_x = label_x[read.keys[read.class_of_row, j]]
                finite = row_x[np.isfinite(row_x)]
                mean = float(finite.mean()) if len(finite) else 0.0
                std = float(finite.std()) if len(finite) else 0.0
            std = float(std or 0.0)
            z_label = (label_x - mean) / std if std > 0 else np.zeros(len(label_x))
            z_target = (target_x - mean) / std if std > 0 else np.zeros(len(target_x))
            z_label = np.where(np.isfinite(z_label), z_label, 0.0)
            z_target = np.where(np.isfinite(z_target), z_target, 0.0)
            num_c.append(z_label[key])
            num_t.append(z_target[targets.value_index[:, j]])
        else:
            vocabulary = pd.Index(pd.unique(np.concatenate([labels, values.texts]).astype(object)))
            c_code = vocabulary.get_indexer(labels)[key]
            t_code = vocabulary.get_indexer(values.texts)[targets.value_index[:, j]]
            width = len(vocabulary)
            onehot_c = np.zeros((len(key), width), dtype=np.float32)
            onehot_c[np.arange(len(key)), c_code] = 1.0
            onehot_t = np.zeros((len(t_code), width), dtype=np.float32)
            onehot_t[np.arange(len(t_code)), t_code] = 1.0
            nom_c.append(onehot_c)
            nom_t.append(onehot_t)
    stack = (lambda parts, n: np.stack(parts, axis=1) if parts else np.zeros((n, 0)))
    n_tuples, n_classes = len(targets.value_index), len(read.sizes)
    hstack = (lambda parts, n: np.hstack(parts) if parts else np.zeros((n, 0), dtype=np.float32))
    return (stack(num_t, n_tuples), stack(num_c, n_classes), hstack(nom_t, n_tuples), hstack(nom_c, n_classes),
            len(nom_t), source)


def _numbers_of(labels: np.ndarray, column: str, where: str) -> np.ndarray:
    out = np.empty(len(labels))
    for i, text in enumerate(labels.tolist()):
        if text in (MISSING_LABEL, STAR):
            out[i] = np.nan
            continue
        value = finite_number(text)
        if value is None:
            raise unreadable(text, column, where, "a microaggregated numeric column publishes numbers (group "
                                                  "means), and this is not one")
        out[i] = value
    return out


def nearest(read: ReleaseRead, targets: Targets, qis: Sequence[str]) -> tuple[np.ndarray, np.ndarray, str]:
    """The classes of a microaggregated release each distinct target tuple is put in: its nearest
    centroid(s) in MDAV's standardized space (ties within a relative ``TIE`` all kept), plus every
    class whose published quasi-identifiers are all ``*`` (suppressed records, which contain anyone).

    Args:
        read: the release, read.
        targets: the targets, grouped by tuple.
        qis: the quasi-identifiers, in the order of ``read`` and ``targets``.

    Returns:
        ``(tuples, classes, source)``: the pairs, ordered by tuple then class, and where the
        standardization came from (``"manifest"`` or ``"release"``).

    Raises:
        UnreadableValueError: a numeric column publishes a value that is not a number.
    """
    star = np.ones(len(read.sizes), dtype=bool)
    for j in range(len(qis)):
        star &= read.labels[j][read.keys[:, j]] == STAR
    num_t, num_c, nom_t, nom_c, n_nominal, source = _embedding(read, targets, qis)
    candidates = np.flatnonzero(~star)
    n_tuples = len(targets.value_index)
    rows_out, classes_out = [], []
    if len(candidates):
        num_c, nom_c = num_c[candidates], nom_c[candidates]
        nom_c_t = np.ascontiguousarray(nom_c.T)
        num_c_cols = [np.ascontiguousarray(num_c[:, col]) for col in range(num_c.shape[1])]
        block = min(n_tuples, max(1, DISTANCE_BLOCK // len(candidates)))
        # Buffers reused block after block (fresh ones would cost a page fault per entry).
        d = np.empty((block, len(candidates)))
        diff = np.empty_like(d) if num_t.shape[1] else None
        products = np.empty((block, len(candidates)), dtype=np.float32) if n_nominal else None
        near = np.empty((block, len(candidates)), dtype=bool)
        for start in range(0, n_tuples, block):
            stop = min(start + block, n_tuples)
            n = stop - start
            if n_nominal:
                np.matmul(nom_t[start:stop], nom_c_t, out=products[:n])
                np.subtract(n_nominal, products[:n], out=d[:n])
            else:
                d[:n] = 0.0
            for col in range(num_t.shape[1]):
                np.subtract.outer(num_t[start:stop, col], num_c_cols[col], out=diff[:n])
                np.square(diff[:n], out=diff[:n])
                d[:n] += diff[:n]
            best = d[:n].min(axis=1)
            np.less_equal(d[:n], (best + TIE * np.maximum(best, 1.0))[:, None], out=near[:n])
            r, c = np.nonzero(near[:n])
            rows_out.append(r + start)
            classes_out.append(candidates[c])
    stars = np.flatnonzero(star)
    if len(stars):
        rows_out.append(np.repeat(np.arange(n_tuples), len(stars)))
        classes_out.append(np.tile(stars, n_tuples))
    if not rows_out:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), source
    rows, classes = np.concatenate(rows_out), np.concatenate(classes_out)
    order = np.lexsort((classes, rows))
    return rows[order].astype(np.int64), classes[order].astype(np.int64), source


def locate(published: PublishedClasses, population: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """Which published classes cover each person (every quasi-identifier's cell covers the
    person's value; cells read as :func:`~veil.attacks.published_values.parse_published_value` reads
    them, hierarchy nodes from the population's hierarchies).

    Args:
        published: the release's classes.
        population: everyone's quasi-identifiers, with their hierarchies and value orders.

    Returns:
        ``(indptr, classes)``: person ``p`` is covered by ``classes[indptr[p]:indptr[p+1]]``.

    Raises:
        ColumnError: the population lacks a quasi-identifier.
        UnreadableValueError: a published value cannot be related to original values.
    """
    for name in published.qis:
        if name not in population.columns:
            raise ColumnError(f"the population table has no column '{name}'; it needs every quasi-identifier "
                              f"({', '.join(published.qis)}) to locate people.")
    contains, person_value = [], []
    for j, name in enumerate(published.qis):
        col = population.column(name)
        texts = np.asarray(col.labels, dtype=object).astype(str)
        values = ColumnValues.of(texts, col.is_numeric)
        hierarchy = population.hierarchies.get(name)
        nodes = hierarchy_nodes(hierarchy) if hierarchy is not None else None
        order = population.orders.get(name)
        cells = [parse_published_value(str(text), numeric=col.is_numeric, nodes=nodes, order=order, column=name,
                                       where="the release") for text in published.labels[j].tolist()]
        contains.append(np.stack([cell.contains(values) for cell in cells]))  # [labels × values]
        person_value.append(col.codes.astype(np.int64))
    tuple_of, tuples = group_rows(person_value, [c.shape[1] for c in contains])
    pairs_tuple, pairs_class = [], []
    for lo in range(0, len(tuples), _LOCATE_CHUNK):
        chunk = tuples[lo:lo + _LOCATE_CHUNK]
        hit = np.ones((len(chunk), published.n_classes), dtype=bool)
        for j in range(len(published.qis)):
            hit &= contains[j][:, chunk[:, j]][published.keys[:, j]].T
        t, c = np.nonzero(hit)
        pairs_tuple.append(t + lo)
        pairs_class.append(c)
    pt = np.concatenate(pairs_tuple) if pairs_tuple else np.zeros(0, dtype=np.int64)
    pcl = np.concatenate(pairs_class) if pairs_class else np.zeros(0, dtype=np.int64)
    per_tuple = np.bincount(pt, minlength=len(tuples))
    tuple_indptr = np.r_[0, np.cumsum(per_tuple)]
    order = np.argsort(pt, kind="stable")
    pcl = pcl[order]
    lengths = per_tuple[tuple_of]
    indptr = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    starts = tuple_indptr[tuple_of]
    gather = np.repeat(starts - (indptr[:-1]), lengths) + np.arange(int(lengths.sum()))
    return indptr, pcl[gather].astype(np.int64)
