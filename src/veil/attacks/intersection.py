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

**Locating a target** (the paper's *locatability*, Definition 6). A class is a set of released
rows with identical published quasi-identifiers (Definition 2). In a *generalized* release
(full-domain, Mondrian, anything publishing ranges, masks or hierarchy nodes) the target's class
is one whose published value of every quasi-identifier *contains* the target's value; the
published values are read by :func:`parse_published_value` (ranges ``[a-b]``, ``a-b`` as in ARX
hierarchies, intervals ``[a,b)``, comparisons ``<30`` and ``≥40``, ``*``, masks ``130**`` where each
``*`` stands for one character, value sets ``{a,b}``, ``… or missing``, hierarchy nodes when the
column's hierarchy or the release's veil manifest is given, and plain values). In a
*microaggregated* release (MDAV) the published values are group centroids and modes, which do not
contain anyone: the target goes to the group whose centroid is nearest (the paper's heuristic,
Section 2), in the standardized space of :mod:`veil.anonymize.mdav` (z-scores of numeric and
ordinal columns, one per nominal column that differs), with the manifest's means and standard
deviations when it is given and otherwise with the mean and standard deviation of the published
column over the release's rows.

**Several classes, or none.** Relaxed Mondrian partitions may overlap, a release with suppressed
rows shown as ``*`` has a class that contains everyone, and equally near centroids tie. The
adversary then knows only that the target is in one of the matching classes, so ``s_ij`` is the
*union* of their value sets (sound: the true value is in it whenever the target is in one of
them). A target that matches no class (its record was suppressed, or a published value could not
be related to it) learns nothing from that release: ``s_ij`` is every value the release holds.
Both cases are counted per release. An intersection can be empty only when a target was put in a
class it is not in (a nearest-centroid miss): then ``EA^_i = 0`` and ``C_i = 0`` (no breach), and
such targets are counted.

**Vectorized.** Targets with equal quasi-identifiers are located once. Per release and
quasi-identifier, every distinct published value is parsed once and tested against every distinct
target value; each target value then has a bit set over the classes (64 classes a word), and a
target's classes are the AND of its values' bit sets. Nearest centroids come from chunked
targets × classes distance matrices (nominal mismatches as one small matrix product of exact
0/1 counts, numeric columns added column by column), so ties are found exactly. Value sets are
boolean matrices targets × values, intersected with one ``&`` per release.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from veil.classes import group_rows
# published_texts is imported from here by the other attacks on published tables.
from veil.data.encoding import MISSING_LABEL, canonical_numeric_texts, published_texts  # noqa: F401
from veil.data.encoding import text_codes as _text_column
from veil.data.hierarchy import MISSING_LEAVES, Hierarchy
from veil.data.io import read_table
from veil.errors import ColumnError, DataError, ParameterError
from veil.inputs import MANIFEST_LIMIT, read_text

# The paper's confidence levels: perfect breach (100 %) and partial breaches (Section 3.2).
DEFAULT_CONFIDENCE = (1.0, 1 / 2, 1 / 3, 1 / 4, 1 / 5)
GENERALIZED = "generalized"
MICROAGGREGATED = "microaggregated"
KINDS = ("auto", GENERALIZED, MICROAGGREGATED)
# Entries of one block of a targets × classes distance matrix.
DISTANCE_BLOCK = 1 << 21
# Relative slack under which two distances to centroids are a tie.
TIE = 1e-9
# Confidences compare with this relative slack, so that 1/3 meets a level written 0.3333333333333333.
_SLACK = 1e-9


class ReleaseMismatchError(ColumnError):
    """The releases do not all publish the quasi-identifiers and the sensitive column."""


class TargetsError(ColumnError):
    """The targets table lacks a quasi-identifier (or the id column asked for)."""


class UnreadableValueError(DataError):
    """A published quasi-identifier value that veil cannot relate to original values."""


# ---------------------------------------------------------------------------------------------
# Published values


_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_BRACKET_RANGE = re.compile(rf"^\[\s*({_NUM})\s*-\s*({_NUM})\s*\]$")
_BARE_RANGE = re.compile(rf"^({_NUM})\s*-\s*({_NUM})$")
_INTERVAL = re.compile(rf"^([\[(\]])\s*({_NUM}|-inf|-∞)?\s*[,;]\s*({_NUM}|\+?inf|\+?∞)?\s*([\])\[])$")
_COMPARE = re.compile(rf"^(<=|>=|≤|≥|=<|=>|<|>)\s*({_NUM})$")
_NUMBER = re.compile(rf"^{_NUM}$")
_OR_MISSING = " or missing"
_ANY = "*"


def _number(text: str) -> float | None:
    """The finite number a text spells, or ``None``."""
    text = text.strip()
    if not _NUMBER.match(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None


def _bound(text: str | None, default: float) -> float:
    if text is None:
        return default
    text = text.lstrip("+")
    if text in ("inf", "∞"):
        return math.inf
    if text in ("-inf", "-∞"):
        return -math.inf
    return float(text)


@dataclass(frozen=True)
class ColumnValues:
    """The distinct values of one quasi-identifier that cells are tested against.

    Attributes:
        texts: the values as text (the missing value is ``""``).
        numbers: their numeric values (NaN where not a number), or ``None`` for a text column.
    """

    texts: np.ndarray
    numbers: np.ndarray | None

    @property
    def missing(self) -> np.ndarray:
        return self.texts == MISSING_LABEL

    @classmethod
    def of(cls, texts: Sequence[str], numeric: bool) -> "ColumnValues":
        texts = np.asarray(list(texts), dtype=object)
        numbers = None
        if numeric:
            numbers = np.array([_number(t) if t != MISSING_LABEL else None for t in texts], dtype=float)
        return cls(texts, numbers)


@dataclass(frozen=True)
class Cell:
    """What one published quasi-identifier value covers.

    Attributes:
        text: the published text.
        kind: ``"any"`` (``*``), ``"set"`` (values, hierarchy nodes, ``{a,b}``), ``"interval"``
            (ranges and comparisons) or ``"mask"`` (``130**``), or ``"missing"`` (the empty text).
        values: the texts a ``"set"`` covers.
        numbers: the numbers a ``"set"`` covers (numeric columns).
        low, high, low_closed, high_closed: an ``"interval"``'s bounds.
        pattern: a ``"mask"``'s regular expression (each ``*`` one character).
        missing: whether the cell also covers the missing value.
        plain: whether the text was read as a plain value (no pattern, no hierarchy node).
    """

    text: str
    kind: str
    values: frozenset = frozenset()
    numbers: tuple = ()
    low: float = -math.inf
    high: float = math.inf
    low_closed: bool = True
    high_closed: bool = True
    pattern: str | None = None
    missing: bool = False
    plain: bool = False

    def contains(self, values: ColumnValues) -> np.ndarray:
        """Whether the cell covers each of ``values`` (bool array)."""
        texts, numbers = values.texts, values.numbers
        missing = values.missing
        if self.kind == "any":
            return np.ones(len(texts), dtype=bool)
        if self.kind == "missing":
            return missing.copy()
        if self.kind == "set":
            hit = np.isin(texts, list(self.values)) if self.values else np.zeros(len(texts), dtype=bool)
            if numbers is not None and self.numbers:
                hit |= np.isin(numbers, np.asarray(self.numbers, dtype=float))
        elif self.kind == "interval":
            if numbers is None:
                hit = np.zeros(len(texts), dtype=bool)
            else:
                with np.errstate(invalid="ignore"):
                    above = numbers >= self.low if self.low_closed else numbers > self.low
                    below = numbers <= self.high if self.high_closed else numbers < self.high
                hit = above & below
        else:
            regex = re.compile(self.pattern, re.DOTALL)
            hit = np.fromiter((regex.fullmatch(t) is not None for t in texts), dtype=bool, count=len(texts))
        hit &= ~missing
        if self.missing:
            hit |= missing
        return hit


def _set_cell(text: str, members, numeric: bool, missing: bool = False) -> Cell:
    members = [str(m) for m in members]
    present = [m for m in members if m not in MISSING_LEAVES]
    missing = missing or len(present) < len(members)
    numbers = ()
    if numeric:
        numbers = tuple(sorted({v for v in (_number(m) for m in present) if v is not None}))
    return Cell(text, "set", values=frozenset(present), numbers=numbers, missing=missing)


def hierarchy_nodes(hierarchy: Hierarchy) -> dict[str, frozenset]:
    """Every node label of a hierarchy (leaves included) → the leaves below it.

    A label that names nodes at several levels covers the leaves below all of them.
    """
    out: dict[str, set] = {}
    leaves = np.asarray(hierarchy.leaves, dtype=object)
    for level in range(hierarchy.levels):
        codes = hierarchy.codes[:, level]
        order = np.argsort(codes, kind="stable")
        bounds = np.flatnonzero(np.r_[True, codes[order][1:] != codes[order][:-1], True])
        for a, b in zip(bounds[:-1], bounds[1:]):
            label = str(hierarchy.level_labels[level][codes[order[a]]])
            out.setdefault(label, set()).update(str(v) for v in leaves[order[a:b]])
    return {label: frozenset(members) for label, members in out.items()}


def parse_published_value(text: str, *, numeric: bool = False, nodes: Mapping[str, frozenset] | None = None,
                          order: Sequence[str] | None = None, column: str = "", where: str = "the release") -> Cell:
    """Read one published quasi-identifier value as the set of original values it covers.

    In this order: the empty text is the missing value; ``*`` covers everything; a label of
    ``nodes`` (a hierarchy's nodes, or the value map of a veil manifest) covers the leaves below
    it; ``X or missing`` is X plus the missing value; ``{a,b}`` is a set of values. In a numeric
    column: ``[a-b]`` (Mondrian) and ``a-b`` (ARX interval labels) are closed ranges, ``[a,b)``,
    ``(a,b]``, ``[a, b[`` intervals, ``<a``, ``<=a``, ``≤a``, ``>a``, ``>=a``, ``≥a`` comparisons, and a
    number is itself. With a value ``order``, ``[a-b]`` is the run of values from a to b. A text
    holding ``*`` is a mask in which each ``*`` stands for one character (``130**`` covers
    ``13012``; ``3*`` covers ages 30 to 39). Anything else is a plain value.

    Args:
        text: the published value.
        numeric: whether the column's original values are numbers.
        nodes: label → the original values it covers (hierarchy nodes); when given, a text
            column's published values must be nodes or patterns.
        order: the order of a text column's values (for ranges of text values).
        column, where: the column and release, for error messages.

    Raises:
        UnreadableValueError: a numeric column's value is not a number, range, interval,
            comparison, mask, set or hierarchy node; a range runs backwards; a hierarchy is given
            and the value is none of its nodes.
    """
    text = str(text)
    stripped = text.strip()
    if stripped == MISSING_LABEL:
        return Cell(text, "missing", missing=True)
    if stripped == _ANY:
        return Cell(text, "any", missing=True)
    if nodes is not None:
        for candidate in (text, stripped):
            if candidate in nodes:
                return _set_cell(text, nodes[candidate], numeric)
    if stripped.endswith(_OR_MISSING):
        inner = parse_published_value(stripped[:-len(_OR_MISSING)], numeric=numeric, nodes=nodes, order=order,
                                      column=column, where=where)
        return Cell(text, inner.kind, inner.values, inner.numbers, inner.low, inner.high, inner.low_closed,
                    inner.high_closed, inner.pattern, missing=True)
    if len(stripped) >= 2 and stripped[0] == "{" and stripped[-1] == "}":
        members = stripped[1:-1].split(",")
        expanded = set(members) | {m.strip() for m in members}
        if numeric:
            bad = [m for m in members if m.strip() not in MISSING_LEAVES and _number(m) is None]
            if bad:
                raise _unreadable(text, column, where, f"its member {bad[0].strip()!r} is not a number")
        return _set_cell(text, expanded, numeric)
    if numeric:
        cell = _numeric_cell(text, stripped, column, where)
        if cell is not None:
            return cell
    if order is not None and len(stripped) > 2 and stripped[0] == "[" and stripped[-1] == "]":
        cell = _order_range(text, stripped[1:-1], order)
        if cell is not None:
            return cell
    if _ANY in stripped:
        pattern = "".join("." if ch == _ANY else re.escape(ch) for ch in stripped)
        return Cell(text, "mask", pattern=pattern)
    if numeric:
        raise _unreadable(text, column, where, "it is not a number, a range ([a-b], a-b, [a,b)), a comparison "
                                               "(<a, ≥a), a mask (13***), a set ({a,b}) or a hierarchy node")
    if nodes is not None:
        raise _unreadable(text, column, where, "it is not a node of the column's hierarchy, a mask or a set")
    cell = _set_cell(text, [text] if text == stripped else [text, stripped], numeric)
    return Cell(text, "set", values=cell.values, plain=True)


def _numeric_cell(text: str, stripped: str, column: str, where: str) -> Cell | None:
    value = _number(stripped)
    if value is not None:
        return Cell(text, "set", values=frozenset({stripped}), numbers=(value,))
    match = _BRACKET_RANGE.match(stripped) or _BARE_RANGE.match(stripped)
    if match:
        low, high = float(match.group(1)), float(match.group(2))
        if low > high:
            raise _unreadable(text, column, where, "the range runs backwards")
        return Cell(text, "interval", low=low, high=high)
    match = _INTERVAL.match(stripped)
    if match:
        opening, a, b, closing = match.groups()
        low, high = _bound(a, -math.inf), _bound(b, math.inf)
        if low > high:
            raise _unreadable(text, column, where, "the interval runs backwards")
        return Cell(text, "interval", low=low, high=high, low_closed=opening == "[",
                    high_closed=closing == "]")
    match = _COMPARE.match(stripped)
    if match:
        op, number = match.group(1), float(match.group(2))
        if op in ("<", "<=", "≤", "=<"):
            return Cell(text, "interval", high=number, high_closed=op != "<")
        return Cell(text, "interval", low=number, low_closed=op != ">")
    return None


def _order_range(text: str, inner: str, order: Sequence[str]) -> Cell | None:
    position = {str(v): i for i, v in enumerate(order)}
    for at in [i for i, ch in enumerate(inner) if ch == "-"]:
        a, b = inner[:at], inner[at + 1:]
        if a in position and b in position and position[a] <= position[b]:
            return _set_cell(text, [str(v) for v in order[position[a]:position[b] + 1]], False)
    return None


def _unreadable(text: str, column: str, where: str, why: str) -> UnreadableValueError:
    return UnreadableValueError(f"{where} publishes {text!r} in column '{column}', which veil cannot read: {why}; "
                                "give the column's hierarchy (--hierarchy COLUMN=FILE) or the release's manifest.")


# ---------------------------------------------------------------------------------------------
# Releases as the adversary sees them


@dataclass(eq=False)
class PublishedRelease:
    """A release as the adversary holds it: the published table, and what came with it.

    Args:
        table: the released table (a path to a CSV or Parquet file, a pandas or polars frame, or
            a pyarrow Table).
        manifest: the release's veil manifest (a dict or the path of its JSON file), or ``None``.
            It tells the kind of release, the roles, the value map of a full-domain release, the
            boxes of a Mondrian release and the standardization of a microaggregated one.
        hierarchies: per quasi-identifier, a :class:`Hierarchy` (or the path of an ARX hierarchy
            CSV) whose node labels the release may publish.
        orders: per quasi-identifier, the order of its values (text ranges, ordinal columns).
        kind: ``"generalized"`` (locate by containment), ``"microaggregated"`` (nearest centroid),
            or ``"auto"``: microaggregated when the manifest says MDAV, else generalized.
        name: what to call the release in messages (default: the file name, or ``release N``).
        delimiter: the CSV delimiter (sniffed when ``None``).
        target_rows: for evaluation only (experiments): the row of the table that holds each
            target, −1 where none does; the result then tells whether each target was located
            in its true class.
    """

    table: object
    manifest: Mapping | str | os.PathLike | None = None
    hierarchies: Mapping[str, Hierarchy | str | os.PathLike] | None = None
    orders: Mapping[str, Sequence[str]] | None = None
    kind: str = "auto"
    name: str | None = None
    delimiter: str | None = None
    target_rows: np.ndarray | None = None

    @classmethod
    def from_release(cls, release, *, name: str | None = None,
                     target_rows: np.ndarray | None = None) -> "PublishedRelease":
        """A veil :class:`~veil.anonymize.Release` as its curator attacks it in memory: its table,
        the manifest's roles and levels, what its private file adds (the value map, the whole
        recoding), and the hierarchies of its quasi-identifiers."""
        ds = release.dataset
        manifest = {"algorithm": release.algorithm,
                    "roles": {"quasi_identifiers": list(ds.quasi_identifiers), "sensitive": list(ds.sensitive)},
                    "generalization": release.generalization_map()}
        levels = {q: release.classes.cells(j).level for j, q in enumerate(ds.quasi_identifiers)}
        if all(level is not None for level in levels.values()):
            manifest["node"] = levels
            manifest["heights"] = {q: ds.generalizations[q].height if q in ds.generalizations else 0
                                   for q in ds.quasi_identifiers}
        if release.recoding is not None:
            manifest["recoding"] = release.recoding
        hierarchies = {q: h for q, h in ds.hierarchies.items() if q in ds.quasi_identifiers}
        orders = {q: o for q, o in ds.orders.items() if q in ds.quasi_identifiers}
        return cls(release.table, manifest=manifest, hierarchies=hierarchies, orders=orders,
                   name=name or f"{release.algorithm} release", target_rows=target_rows)


def _as_published(source) -> PublishedRelease:
    from veil.anonymize.release import Release

    if isinstance(source, PublishedRelease):
        published = source
    elif isinstance(source, Release):
        published = PublishedRelease.from_release(source)
    else:
        published = PublishedRelease(source)
    if published.kind not in KINDS:
        raise ParameterError(f"the kind of a release is 'auto', 'generalized' or 'microaggregated', "
                             f"not {published.kind!r}.")
    return published


def published_table(published: PublishedRelease, delimiter: str | None = None) -> pa.Table:
    """The released table of ``published``, read when it is a path or a frame; a file its manifest
    says was written with the spreadsheet guard is read as released (:func:`veil.spreadsheet.unguard_table`).

    Raises:
        DataError: the table cannot be read.
    """
    from veil.spreadsheet import is_guarded, unguard_table

    if isinstance(published.table, pa.Table):
        return published.table
    table = read_table(published.table, published.delimiter or delimiter).data
    if published.manifest is not None and is_guarded(_load_manifest(published.manifest, "the release")):
        table = unguard_table(table)
    return table


def _release_name(published: PublishedRelease, position: int) -> str:
    if published.name:
        return f"release {position} ({published.name})"
    if isinstance(published.table, (str, os.PathLike)):
        return f"release {position} ({Path(published.table).name})"
    return f"release {position}"


def _load_manifest(manifest, where: str) -> dict | None:
    if manifest is None or isinstance(manifest, Mapping):
        return None if manifest is None else dict(manifest)
    path = Path(manifest)
    if not path.is_file():
        raise DataError(f"the manifest {str(path)!r} of {where} does not exist; check the path.")
    try:
        loaded = json.loads(read_text(path, "the manifest", MANIFEST_LIMIT))  # a regular file, of a manifest's size
    except json.JSONDecodeError as exc:
        raise DataError(f"the manifest {str(path)!r} of {where} is not valid JSON ({exc}).") from None
    if not isinstance(loaded, dict):
        raise DataError(f"the manifest {str(path)!r} of {where} is not a JSON object; give a veil manifest.")
    return loaded


def _load_hierarchies(hierarchies) -> dict[str, Hierarchy]:
    out = {}
    for name, h in (hierarchies or {}).items():
        out[name] = h if isinstance(h, Hierarchy) else Hierarchy.read_csv(h)
    return out


def _named_hierarchies(published: PublishedRelease, manifest: dict | None, known=()) -> dict[str, Hierarchy]:
    """The hierarchy files a release's manifest names (``hierarchy_files``) for the columns that
    have none in ``known`` nor given with the release, each checked against its SHA-256 and looked
    for where it was given, then in the manifest's folder (see :func:`veil.manifests.referenced_hierarchy`).

    Raises:
        DataError: a file found is not the one the release was made with.
    """
    from veil.manifests import referenced_hierarchy

    named = (manifest or {}).get("hierarchy_files") or {}
    folder = None if published.manifest is None or isinstance(published.manifest, Mapping) else \
        Path(published.manifest).parent
    out = {}
    for column in named:
        if column in known or column in (published.hierarchies or {}):
            continue
        found = referenced_hierarchy(manifest, column, folder)
        if found is not None:
            out[column] = found
    return out


def _roles(manifest: dict | None) -> tuple[list[str], list[str]]:
    roles = (manifest or {}).get("roles") or {}
    return list(roles.get("quasi_identifiers") or []), list(roles.get("sensitive") or [])


def _is_microaggregated(published: PublishedRelease, manifest: dict | None) -> bool:
    if published.kind != "auto":
        return published.kind == MICROAGGREGATED
    if not manifest:
        return False
    recoding = manifest.get("recoding") or {}
    return manifest.get("algorithm") == "mdav" or recoding.get("method") == "mdav"


# ---------------------------------------------------------------------------------------------
# The result


@dataclass(frozen=True, eq=False)
class ReleaseLocation:
    """How the targets were located in one release.

    Attributes:
        name: the release, as messages call it.
        kind: ``"generalized"`` or ``"microaggregated"``.
        rows: released rows.
        classes: its equivalence classes (distinct published quasi-identifier tuples).
        standardization: for a microaggregated release, ``"manifest"`` or ``"release"`` (where the
            means and standard deviations came from); ``None`` otherwise.
        evaluated: whether the targets' true rows were given, so that correct location is known.
    """

    name: str
    kind: str
    rows: int
    classes: int
    standardization: str | None = None
    evaluated: bool = False


# How many of the most frequent intersections the summary lists.
OUTCOMES_SHOWN = 10


@dataclass(frozen=True, eq=False)
class IntersectionResult:
    """The intersection attack's outcome, per target (see the module for the definitions).

    Attributes:
        releases: how each release was read.
        sensitive: the sensitive column.
        values: ``[values]``, the sensitive values (the union over the releases).
        targets: ``[targets]``, each target's id (the id column, or its row number from 0).
        sets: per release, ``bool [targets × values]``: ``s_ij``.
        candidates: ``int [targets × releases]``: classes the target was located in (0: none, so
            ``s_ij`` is every value of the release; more than 1: ``s_ij`` is their union).
        class_sizes: ``int [targets × releases]``: records in those classes (every released record
            for a target located in none).
        ea: ``int [targets × releases]``: ``EA_ij = |s_ij|``.
        posterior: ``bool [targets × values]``: ``∩_j s_ij``.
        ea_posterior: ``int [targets]``: ``EA^_i``.
        anon_drop: ``int [targets]``: ``min_j EA_ij − EA^_i``.
        confidence: ``float [targets]``: ``C_i = 1 / EA^_i`` (0 for an empty intersection).
        levels: the confidence levels C reported.
        truth: ``int [targets]``, the index in ``values`` of each target's true value, when the
            targets table holds the sensitive column; else ``None``.
        correctly_located: ``bool [targets × releases]``: whether the target's true class is among
            those it was located in (only for releases given ``target_rows``; else ``None``).
        notes: remarks worth a reader's attention (one sentence each).
    """

    releases: list[ReleaseLocation]
    sensitive: str
    values: np.ndarray
    targets: np.ndarray
    sets: list[np.ndarray]
    candidates: np.ndarray
    class_sizes: np.ndarray
    ea: np.ndarray
    posterior: np.ndarray
    ea_posterior: np.ndarray
    anon_drop: np.ndarray
    confidence: np.ndarray
    levels: tuple[float, ...]
    truth: np.ndarray | None = None
    correctly_located: np.ndarray | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def n_targets(self) -> int:
        return len(self.targets)

    @property
    def vulnerable(self) -> np.ndarray:
        """``bool [targets]``: the vulnerable population VP, ``Anon_Drop_i > 0``."""
        return self.anon_drop > 0

    def breached(self, level: float) -> np.ndarray:
        """``bool [targets]``: ``VP_C``, the targets whose confidence is at least ``level``."""
        level = _check_level(level)
        return self.confidence >= level * (1 - _SLACK)

    def pvp(self, level: float) -> float:
        """``PVP_C``: the percentage of targets in ``VP_C``."""
        return 100.0 * float(self.breached(level).sum()) / max(self.n_targets, 1)

    @property
    def true_value_kept(self) -> np.ndarray | None:
        """``bool [targets]``: whether the true value survives the intersection (with truth)."""
        if self.truth is None:
            return None
        rows = np.arange(self.n_targets)
        return self.posterior[rows, self.truth]

    def correct_breaches(self, level: float) -> np.ndarray | None:
        """``bool [targets]``: ``VP_C`` restricted to targets whose true value is in the intersection."""
        kept = self.true_value_kept
        return None if kept is None else self.breached(level) & kept

    def summary(self) -> dict:
        """A JSON-ready summary."""
        n = max(self.n_targets, 1)
        releases = []
        for j, rel in enumerate(self.releases):
            cand = self.candidates[:, j]
            entry = {"name": rel.name, "kind": rel.kind, "rows": rel.rows, "classes": rel.classes,
                     "located": int((cand > 0).sum()), "unlocated": int((cand == 0).sum()),
                     "ambiguous": int((cand > 1).sum()),
                     "mean_class_size": float(self.class_sizes[:, j].mean()) if self.n_targets else 0.0,
                     "mean_ea": float(self.ea[:, j].mean()) if self.n_targets else 0.0}
            if rel.standardization is not None:
                entry["standardization"] = rel.standardization
            if rel.evaluated:
                entry["correctly_located"] = int(self.correctly_located[:, j].sum())
            releases.append(entry)
        prior = self.ea.min(axis=1) if self.n_targets else np.zeros(0)
        out = {
            "attack": "intersection",
            "sensitive": self.sensitive,
            "targets": self.n_targets,
            "values": len(self.values),
            "releases": releases,
            "mean_ea_prior": float(prior.mean()) if self.n_targets else 0.0,
            "mean_ea_posterior": float(self.ea_posterior.mean()) if self.n_targets else 0.0,
            "mean_anon_drop": float(self.anon_drop.mean()) if self.n_targets else 0.0,
            "vulnerable": int(self.vulnerable.sum()),
            "vulnerable_share": float(self.vulnerable.sum()) / n,
            "empty_intersections": int((self.ea_posterior == 0).sum()),
            "pvp": [{"confidence": level, "targets": int(self.breached(level).sum()), "percent": self.pvp(level)}
                    for level in self.levels],
        }
        kept = self.true_value_kept
        if kept is not None:
            out["true_value_kept"] = int(kept.sum())
            for entry, level in zip(out["pvp"], self.levels):
                correct = int(self.correct_breaches(level).sum())
                entry["correct"] = correct
                entry["correct_percent"] = 100.0 * correct / n
        out["outcomes"] = self.outcomes(OUTCOMES_SHOWN)
        out["notes"] = list(self.notes)
        return out

    def outcomes(self, limit: int | None = None) -> list[dict]:
        """The distinct intersections (the values left to the adversary), most frequent first.

        Returns:
            ``[{"values": [...], "targets": n}, ...]``: each set of values left and how many
            targets it was left for, at most ``limit`` of them (all when ``None``); ties keep the
            order of the smaller intersection first.
        """
        if self.n_targets == 0:
            return []
        n_values = self.posterior.shape[1]
        if n_values == 0:
            return [{"values": [], "targets": self.n_targets}]
        packed = np.ascontiguousarray(np.packbits(self.posterior, axis=1))
        rows = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
        _, first, counts = np.unique(rows, return_index=True, return_counts=True)
        sizes = self.ea_posterior[first]
        order = np.lexsort((sizes, -counts))[:limit]
        labels = [str(v) for v in self.values]
        return [{"values": [labels[c] for c in np.flatnonzero(self.posterior[first[i]])], "targets": int(counts[i])}
                for i in order]

    def values_left(self) -> list[list[str]]:
        """Per target, the sensitive values its intersection leaves (in the order of ``values``)."""
        labels = np.array([str(v) for v in self.values], dtype=object)
        return [labels[row].tolist() for row in self.posterior]

    def per_target(self) -> pd.DataFrame:
        """One row per target: EA and class size per release, the posterior, the drop, the
        confidence and the values left (``|``-separated)."""
        data = {"target": self.targets}
        for j in range(len(self.releases)):
            data[f"classes_{j + 1}"] = self.candidates[:, j]
            data[f"class_size_{j + 1}"] = self.class_sizes[:, j]
            data[f"ea_{j + 1}"] = self.ea[:, j]
        data["ea_posterior"] = self.ea_posterior
        data["anon_drop"] = self.anon_drop
        data["confidence"] = self.confidence
        labels = [str(v) for v in self.values]
        rows, cols = np.nonzero(self.posterior)
        joined = [""] * self.n_targets
        if len(rows):
            starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
            ends = np.r_[starts[1:], len(rows)]
            for a, b in zip(starts.tolist(), ends.tolist()):
                joined[rows[a]] = "|".join(labels[c] for c in cols[a:b])
        data["values_left"] = joined
        if self.truth is not None:
            data["true_value"] = self.values[self.truth]
            data["true_value_kept"] = self.true_value_kept
        return pd.DataFrame(data)


def _check_level(level) -> float:
    try:
        value = float(level)
    except (TypeError, ValueError):
        raise ParameterError(f"a confidence level is a number in (0, 1], not {level!r}.") from None
    if not 0 < value <= 1:
        raise ParameterError(f"a confidence level must be in (0, 1] (1 is a perfect breach), not {level}.")
    return value


# ---------------------------------------------------------------------------------------------
# The attack


@dataclass(eq=False)
class _Targets:
    """Targets grouped by their quasi-identifier tuple."""

    n: int
    ids: np.ndarray
    tuple_of: np.ndarray            # [targets]: the distinct tuple of each target
    value_index: np.ndarray         # [tuples × quasi-identifiers]: index into each column's values
    values: list[ColumnValues]      # per quasi-identifier, its distinct values
    numeric: list[bool]
    truth_texts: np.ndarray | None  # [targets] true sensitive values as text


def _read_targets(targets, qis: Sequence[str], sensitive: str, id_column: str | None,
                  delimiter: str | None) -> _Targets:
    table = read_table(targets, delimiter).data if not isinstance(targets, pa.Table) else targets
    columns = table.column_names
    missing = [q for q in qis if q not in columns]
    if missing:
        raise TargetsError(f"the targets table has no column '{missing[0]}'; it needs every quasi-identifier "
                           f"({', '.join(qis)}) to locate the targets.")
    if id_column is not None and id_column not in columns:
        raise TargetsError(f"the targets table has no id column '{id_column}'; its columns are {', '.join(columns)}.")
    codes, values, numeric = [], [], []
    for q in qis:
        labels, code = _text_column(table.column(q))
        present = [t for t in labels.tolist() if t != MISSING_LABEL]
        is_numeric = bool(present) and all(_number(t) is not None for t in present)
        values.append(ColumnValues.of(labels, is_numeric))
        numeric.append(is_numeric)
        codes.append(code)
    tuple_of, keys = group_rows(codes, [len(v.texts) for v in values])
    if id_column is not None:
        id_labels, id_codes = _text_column(table.column(id_column))
        ids = id_labels[id_codes]
    else:
        ids = np.arange(table.num_rows)
    truth = None
    if sensitive in columns:
        labels, code = _text_column(table.column(sensitive))
        truth = np.asarray(canonical_numeric_texts(labels), dtype=object)[code]
    return _Targets(table.num_rows, ids, tuple_of.astype(np.int64), np.asarray(keys, dtype=np.int64), values,
                    numeric, truth)


@dataclass(eq=False)
class _Read:
    """One release read for the attack."""

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


def _nodes_for(q: str, hierarchies: dict[str, Hierarchy], manifest: dict | None) -> dict[str, frozenset] | None:
    nodes: dict[str, set] = {}
    if q in hierarchies:
        for label, members in hierarchy_nodes(hierarchies[q]).items():
            nodes.setdefault(label, set()).update(members)
    value_map = ((manifest or {}).get("generalization") or {}).get(q)
    if value_map:
        for original, published in value_map.items():
            nodes.setdefault(str(published), set()).add(str(original))
    # Mondrian's value sets, published as {a,b}: the manifest lists their members exactly (a
    # member may hold a comma).
    for part in ((manifest or {}).get("recoding") or {}).get("partitions") or []:
        members = ((part.get("box") or {}).get(q) or {}).get("values")
        if members:
            members = [str(m) for m in members]
            label = members[0] if len(members) == 1 else "{" + ",".join(members) + "}"
            nodes.setdefault(label, set()).update(members)
    return {label: frozenset(m) for label, m in nodes.items()} if nodes else None


def _check_boxes(name: str, manifest: dict | None, qis: Sequence[str], nodes: dict) -> None:
    """A Mondrian manifest names its hierarchy nodes; refuse those no hierarchy explains."""
    partitions = ((manifest or {}).get("recoding") or {}).get("partitions") or []
    for q in qis:
        known = nodes.get(q) or {}
        for part in partitions:
            box = (part.get("box") or {}).get(q) or {}
            node, level = box.get("node"), box.get("level")
            if node is not None and level and str(node) != _ANY and str(node) not in known:
                raise UnreadableValueError(
                    f"{name} publishes the hierarchy node {str(node)!r} (level {level}) in column '{q}', and no "
                    f"hierarchy says which values it covers; give the column's hierarchy (--hierarchy {q}=FILE).")


def _membership(read: _Read, targets: _Targets, qis: Sequence[str]) -> tuple[np.ndarray, dict[str, list[str]]]:
    """``uint64 [tuples × words]``: per distinct target tuple, the classes that contain it; and
    per quasi-identifier, the published texts read as plain values that no target holds."""
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


def _plural(count: int, one: str, many: str) -> str:
    return f"{count:,} {one if count == 1 else many}"


def _pairs_from_bits(acc: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """``(tuple, class)`` pairs of the set bits, ordered by tuple then class."""
    rows, words = np.nonzero(acc)
    if not len(rows):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    chosen = np.ascontiguousarray(acc[rows, words]).view(np.uint8).reshape(-1, 8)
    bits = np.unpackbits(chosen, axis=1, bitorder="little").astype(bool)       # [pairs × 64]
    at_row, at_bit = np.nonzero(bits)
    classes = words[at_row].astype(np.int64) * 64 + at_bit
    return rows[at_row].astype(np.int64), classes


def _embedding(read: _Read, targets: _Targets, qis: Sequence[str]):
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
            published = [t for t in labels.tolist() if t not in (MISSING_LABEL, _ANY)]
            numeric = targets.numeric[j] and bool(published) and all(_number(t) is not None for t in published)
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
        if text in (MISSING_LABEL, _ANY):
            out[i] = np.nan
            continue
        value = _number(text)
        if value is None:
            raise _unreadable(text, column, where, "a microaggregated numeric column publishes numbers (group "
                                                   "means), and this is not one")
        out[i] = value
    return out


def _nearest(read: _Read, targets: _Targets, qis: Sequence[str]) -> tuple[np.ndarray, np.ndarray, str]:
    """``(tuple, class)`` pairs: each target tuple with its nearest centroid(s), plus every class
    whose published quasi-identifiers are all ``*`` (suppressed records, which contain anyone)."""
    star = np.ones(len(read.sizes), dtype=bool)
    for j in range(len(qis)):
        star &= read.labels[j][read.keys[:, j]] == _ANY
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
    levels = tuple(_check_level(c) for c in confidence)
    if not levels:
        raise ParameterError("give at least one confidence level in (0, 1].")
    releases = list(releases)
    if len(releases) < 2:
        raise ParameterError(f"the intersection attack needs at least two releases, not {len(releases)}.")
    published = [_as_published(r) for r in releases]
    shared_hierarchies = _load_hierarchies(hierarchies)
    shared_orders = {k: [str(v) for v in o] for k, o in (orders or {}).items()}

    loaded = []
    for i, pub in enumerate(published):
        name = _release_name(pub, i + 1)
        manifest = _load_manifest(pub.manifest, name)
        table = published_table(pub, delimiter)
        loaded.append((name, manifest, table))

    qis = [quasi_identifiers] if isinstance(quasi_identifiers, str) else list(quasi_identifiers or [])
    if not qis:
        qis = next((_roles(m)[0] for _, m, _ in loaded if _roles(m)[0]), [])
        if not qis:
            raise ParameterError("name the quasi-identifiers the adversary knows (--qi); no manifest lists them.")
    if len(set(qis)) != len(qis):
        raise ParameterError("a quasi-identifier is listed twice; list each once.")
    if sensitive is None:
        named = next((_roles(m)[1] for _, m, _ in loaded if _roles(m)[1]), [])
        if len(named) != 1:
            raise ParameterError("name the sensitive column to attack (--sensitive)"
                                 + ("; the manifest lists several." if len(named) > 1 else "; no manifest names one."))
        sensitive = named[0]
    if sensitive in qis:
        raise ParameterError(f"column '{sensitive}' cannot be both a quasi-identifier and the sensitive column.")
    first = loaded[0][0]
    for i, (name, _, table) in enumerate(loaded):
        _check_columns(name, table, qis, sensitive, first if i else None)
    tg = _read_targets(targets, qis, sensitive, id_column, delimiter)

    reads = []
    for pub, (name, manifest, table) in zip(published, loaded):
        own = _load_hierarchies(pub.hierarchies)
        merged = {**_named_hierarchies(pub, manifest, shared_hierarchies), **shared_hierarchies, **own}
        nodes = {q: n for q in qis if (n := _nodes_for(q, merged, manifest)) is not None}
        orders_here = dict(shared_orders)
        orders_here.update({k: [str(v) for v in o] for k, o in (pub.orders or {}).items()})
        micro = _is_microaggregated(pub, manifest)
        if not micro:
            _check_boxes(name, manifest, qis, nodes)
        label_codes, labels = [], []
        for q in qis:
            lab, code = _text_column(table.column(q))
            labels.append(lab)
            label_codes.append(code)
        class_of_row, keys = group_rows(label_codes, [len(lab) for lab in labels])
        sens_labels, sens_codes = _text_column(table.column(sensitive))
        target_rows = None
        if pub.target_rows is not None:
            target_rows = np.asarray(pub.target_rows, dtype=np.int64)
            if len(target_rows) != tg.n:
                raise ParameterError(f"{name} gives {len(target_rows)} target rows for {tg.n} targets.")
        reads.append(_Read(name, micro, manifest, nodes, orders_here, table.num_rows,
                           class_of_row.astype(np.int64), np.asarray(keys, dtype=np.int64), labels,
                           np.bincount(class_of_row, minlength=len(keys)).astype(np.int64),
                           np.asarray(canonical_numeric_texts(sens_labels), dtype=object), sens_codes, target_rows))

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
            rows, classes, source = _nearest(read, tg, qis)
        else:
            bits, uncovered = _membership(read, tg, qis)
            rows, classes = _pairs_from_bits(bits, n_classes)
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
