"""Reading a published quasi-identifier value back as the set of original values it covers.

A generalized release publishes ranges, masks, value sets and hierarchy nodes in place of its
quasi-identifiers. An adversary who knows someone's value locates them in the classes whose cells
*contain* it (Ganta, Kasiviswanathan and Smith, KDD 2008, Definition 6, locatability). The cells
are read by :func:`parse_published_value`: ranges ``[a-b]``, ``a-b`` as in ARX hierarchies,
intervals ``[a,b)``, comparisons ``<30`` and ``≥40``, ``*``, masks ``130**`` where each ``*`` stands
for one character, value sets ``{a,b}``, ``… or missing``, hierarchy nodes (:func:`hierarchy_nodes`,
or the value map of a release's manifest) and plain values. A :class:`Cell` then tests which of a
column's distinct values (:class:`ColumnValues`) it covers, all at once.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from veil.data.encoding import MISSING_LABEL
from veil.data.hierarchy import MISSING_LEAVES, Hierarchy
from veil.errors import DataError


class UnreadableValueError(DataError):
    """A published quasi-identifier value that veil cannot relate to original values."""


_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_BRACKET_RANGE = re.compile(rf"^\[\s*({_NUM})\s*-\s*({_NUM})\s*\]$")
_BARE_RANGE = re.compile(rf"^({_NUM})\s*-\s*({_NUM})$")
_INTERVAL = re.compile(rf"^([\[(\]])\s*({_NUM}|-inf|-∞)?\s*[,;]\s*({_NUM}|\+?inf|\+?∞)?\s*([\])\[])$")
_COMPARE = re.compile(rf"^(<=|>=|≤|≥|=<|=>|<|>)\s*({_NUM})$")
_NUMBER = re.compile(rf"^{_NUM}$")
_OR_MISSING = " or missing"
_ANY = "*"


def finite_number(text: str) -> float | None:
    """The finite number a published text spells (surrounding whitespace ignored), or ``None``."""
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
            numbers = np.array([finite_number(t) if t != MISSING_LABEL else None for t in texts], dtype=float)
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
        numbers = tuple(sorted({v for v in (finite_number(m) for m in present) if v is not None}))
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
        column: the column, for error messages.
        where: the release, for error messages.

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
            bad = [m for m in members if m.strip() not in MISSING_LEAVES and finite_number(m) is None]
            if bad:
                raise unreadable(text, column, where, f"its member {bad[0].strip()!r} is not a number")
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
        raise unreadable(text, column, where, "it is not a number, a range ([a-b], a-b, [a,b)), a comparison "
                                              "(<a, ≥a), a mask (13***), a set ({a,b}) or a hierarchy node")
    if nodes is not None:
        raise unreadable(text, column, where, "it is not a node of the column's hierarchy, a mask or a set")
    cell = _set_cell(text, [text] if text == stripped else [text, stripped], numeric)
    return Cell(text, "set", values=cell.values, plain=True)


def _numeric_cell(text: str, stripped: str, column: str, where: str) -> Cell | None:
    value = finite_number(stripped)
    if value is not None:
        return Cell(text, "set", values=frozenset({stripped}), numbers=(value,))
    match = _BRACKET_RANGE.match(stripped) or _BARE_RANGE.match(stripped)
    if match:
        low, high = float(match.group(1)), float(match.group(2))
        if low > high:
            raise unreadable(text, column, where, "the range runs backwards")
        return Cell(text, "interval", low=low, high=high)
    match = _INTERVAL.match(stripped)
    if match:
        opening, a, b, closing = match.groups()
        low, high = _bound(a, -math.inf), _bound(b, math.inf)
        if low > high:
            raise unreadable(text, column, where, "the interval runs backwards")
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


def unreadable(text: str, column: str, where: str, why: str) -> UnreadableValueError:
    """The error for a published value ``text`` of ``column`` in ``where`` that cannot be read
    (``why``: the reason, a clause), in one sentence that says to give the hierarchy or manifest."""
    return UnreadableValueError(f"{where} publishes {text!r} in column '{column}', which veil cannot read: {why}; "
                                "give the column's hierarchy (--hierarchy COLUMN=FILE) or the release's manifest.")
