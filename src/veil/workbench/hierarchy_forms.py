"""The Columns page's hierarchy forms, as pure functions: a builder's form read into veil's
configuration (``hierarchies.<column>``), the groups textarea, an uploaded ARX file, and the
preview of a hierarchy against the column (its levels, and whether it covers every value).

A form is a mapping of field name → text (the browser's form). A field that cannot be read raises
:class:`FieldError`, whose ``field`` names the form field the page shows the sentence beside.

The groups textarea (the ``grouping`` builder, :func:`veil.data.builders.grouping`) holds one
group a line, ``name: value, value, …``; a blank line starts the next level, whose members are
groups of the level before. A name or value that holds ``,``, ``:`` or ``"`` or starts or ends with
a space is written between double quotes, and a quote inside such a text is doubled (``"a, b"``).
"""
from __future__ import annotations

import hashlib
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from veil.data import builders
from veil.data.encoding import EncodedColumn, canonical_numeric_texts
from veil.data.hierarchy import Hierarchy
from veil.errors import HierarchyError, ParameterError, VeilError, lower_first

BUILDERS = ("intervals", "masking", "dates", "grouping", "flat")
#: how many values a level or a coverage check shows
EXAMPLES = 5
_SAFE_FILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class FieldError(ParameterError):
    """A form field that cannot be read: ``field`` is its name, the message what to fix."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


# ------------------------------------------------------------------------------- the groups text

def _quoted(text: str) -> str:
    """``text`` as the groups textarea writes it (quoted when it must be)."""
    if text != text.strip() or any(c in text for c in ',:"'):
        return '"' + text.replace('"', '""') + '"'
    return text


def _split(line: str, separator: str, number: int) -> list[str]:
    """``line`` split at ``separator`` outside double quotes, each piece unquoted and stripped.

    Raises:
        FieldError: a quote is not closed, or text follows a closing quote.
    """
    pieces: list[str] = []
    i, n = 0, len(line)
    while True:
        while i < n and line[i] in " \t":
            i += 1
        if i < n and line[i] == '"':
            i += 1
            out = []
            while True:
                if i >= n:
                    raise FieldError("groups", f"line {number} of the groups opens a quote it does not close; "
                                               'close it with ", and write a quote inside one as "".')
                if line[i] == '"':
                    if i + 1 < n and line[i + 1] == '"':
                        out.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                out.append(line[i])
                i += 1
            while i < n and line[i] in " \t":
                i += 1
            if i < n and line[i] != separator:
                raise FieldError("groups", f"line {number} of the groups has text after a closing quote; put "
                                           "the whole name or value between the quotes.")
            pieces.append("".join(out))
        else:
            end = line.find(separator, i)
            end = n if end < 0 else end
            if '"' in line[i:end]:
                raise FieldError("groups", f"line {number} of the groups has a quote inside a name or value; "
                                           'quote the whole of it, and write a quote inside as "".')
            pieces.append(line[i:end].strip())
            i = end
        if i >= n:
            return pieces
        i += 1   # the separator
        if separator == ":":   # a group's name, then the rest of the line as it is
            pieces.append(line[i:])
            return pieces


def parse_groups(text: str) -> list[dict[str, list[str]]]:
    """The levels of groups the textarea holds (see the module's notes), finest level first.

    Returns:
        One mapping per level, group name → members, in the order written.

    Raises:
        FieldError: (field ``groups``) nothing given, a line without ``name:``, an empty name,
            a group without members, a group named twice in a level, or an unclosed quote.
    """
    levels: list[dict[str, list[str]]] = []
    current: dict[str, list[str]] = {}
    for number, raw in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), start=1):
        if not raw.strip():
            if current:
                levels.append(current)
                current = {}
            continue
        pieces = _split(raw, ":", number)
        if len(pieces) != 2:
            raise FieldError("groups", f"line {number} of the groups has no ':'; write each group as "
                                       "'name: value, value'.")
        name, rest = pieces
        if name == "":
            raise FieldError("groups", f"line {number} of the groups has no group name before its ':'.")
        if not rest.strip():
            raise FieldError("groups", f"group {name!r} (line {number}) has no members; list them after the ':'.")
        members = _split(rest, ",", number)
        if "" in members:
            raise FieldError("groups", f"group {name!r} (line {number}) has an empty member; remove the extra comma.")
        if name in current:
            raise FieldError("groups", f"group {name!r} is named twice in one level (line {number}); merge the "
                                       "two lines.")
        current[name] = members
    if current:
        levels.append(current)
    if not levels:
        raise FieldError("groups", "give the groups, one a line as 'name: value, value', a blank line between "
                                   "levels.")
    return levels


def format_groups(levels: Sequence[Mapping[str, Sequence[str]]]) -> str:
    """The textarea's text of ``levels`` (the inverse of :func:`parse_groups`)."""
    return "\n\n".join("\n".join(f"{_quoted(name)}: {', '.join(_quoted(m) for m in members)}"
                                 for name, members in level.items()) for level in levels)


def groups_of(hierarchy: Hierarchy, top: str = builders.TOP) -> list[dict[str, list[str]]]:
    """The levels of groups that make ``hierarchy`` (the inverse of
    :func:`veil.data.builders.grouping`): an ARX file loaded, as the groups textarea edits it.

    The last level is left out when it is ``top`` alone, which the builder adds back.
    """
    rows = hierarchy.rows()
    last = hierarchy.levels - 1
    if last >= 1 and len(hierarchy.level_labels[last]) == 1 and hierarchy.level_labels[last][0] == top \
            and len(hierarchy.level_labels[last - 1]) > 1:
        last -= 1
    levels = []
    for level in range(1, last + 1):
        groups: dict[str, list[str]] = {}
        for row in rows:
            members = groups.setdefault(row[level], [])
            if row[level - 1] not in members:
                members.append(row[level - 1])
        levels.append(groups)
    return levels


# ------------------------------------------------------------------------------- builder forms

def parse_widths(text: str) -> list[int | float]:
    """The band widths of ``5,10,20`` (commas or spaces between them).

    Raises:
        FieldError: (field ``widths``) nothing given, a width that is not a positive number, or
            widths that do not nest (each a multiple of the one before).
    """
    items = [t for t in re.split(r"[,\s;]+", text.strip()) if t]
    if not items:
        raise FieldError("widths", "give the band widths, one per level, like 5,10,20.")
    widths: list[int | float] = []
    for item in items:
        try:
            value = float(item)
        except ValueError:
            raise FieldError("widths", f"band width {item[:40]!r} is not a number; give numbers like 5,10,20.") \
                from None
        if not np.isfinite(value) or value <= 0:
            raise FieldError("widths", f"band width {item[:40]!r} is not a positive number; give widths above 0.")
        widths.append(int(value) if value.is_integer() and abs(value) < 2 ** 53 else value)
    for a, b in pairwise(widths):
        ratio = b / a
        if b < a or abs(ratio - round(ratio)) > 1e-9 * ratio:
            raise FieldError("widths", f"band width {b:g} is not a multiple of {a:g}; each width must be a "
                                       "multiple of the one before, so the bands nest.")
    return widths


def _number(text: str, field: str) -> int | float:
    try:
        value = float(text)
    except ValueError:
        raise FieldError(field, f"{field} must be a number, not {text[:40]!r}.") from None
    if not np.isfinite(value):
        raise FieldError(field, f"{field} must be a finite number.")
    return int(value) if value.is_integer() and abs(value) < 2 ** 53 else value


def builder_entry(form: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
    """The builder a form names and its options as the configuration writes them.

    Fields: ``builder`` (one of :data:`BUILDERS`); ``widths`` and ``start`` (intervals), ``char``
    (masking), ``units`` (dates, e.g. ``month, year``) and ``format`` (dates), ``groups``
    (grouping, see :func:`parse_groups`; its options are ``{"levels": […]}``).

    Returns:
        ``(kind, options)``: ``("intervals", {"widths": [5, 10], "start": 0})``.

    Raises:
        FieldError: a field that cannot be read, named by the error's ``field``.
    """
    kind = (form.get("builder") or "").strip()
    if kind not in BUILDERS:
        raise FieldError("builder", f"choose a builder: {', '.join(BUILDERS)}.")
    options: dict[str, Any] = {}
    if kind == "intervals":
        options["widths"] = parse_widths(form.get("widths") or "")
        start = (form.get("start") or "").strip()
        if start:
            options["start"] = _number(start, "start")
    elif kind == "masking":
        char = form.get("char") or ""
        if char not in ("", "*"):
            if len(char) != 1:
                raise FieldError("char", f"the masking character must be one character, not {char[:20]!r}.")
            options["char"] = char
    elif kind == "dates":
        units = [u for u in re.split(r"[,\s]+", (form.get("units") or "").strip().lower()) if u]
        if units:
            wrong = [u for u in units if u not in builders.DATE_GRANULARITIES]
            if wrong:
                raise FieldError("units", f"unknown date unit {wrong[0][:20]!r}; use "
                                          f"{', '.join(builders.DATE_GRANULARITIES)}, from fine to coarse.")
            ranks = [builders.DATE_GRANULARITIES.index(u) for u in units]
            if ranks != sorted(set(ranks)):
                raise FieldError("units", "the date units must go from fine to coarse, each once "
                                          f"({', '.join(builders.DATE_GRANULARITIES)}).")
            if "week" in units and len(units) > 1:
                raise FieldError("units", "weeks do not nest in months or years; use 'week' alone.")
            options["units"] = units
        fmt = (form.get("format") or "").strip()
        if fmt:
            options["format"] = fmt
    elif kind == "grouping":
        options["levels"] = parse_groups(form.get("groups") or "")
    return kind, options


def builder_form(entry: Any) -> dict[str, str]:
    """The form fields that show a configuration's ``hierarchies.<column>`` entry (empty for a file)."""
    if not isinstance(entry, Mapping) or len(entry) != 1 or "file" in entry:
        return {}
    kind, options = next(iter(entry.items()))
    options = options if isinstance(options, Mapping) else {}
    form = {"builder": str(kind)}
    if kind == "intervals":
        widths = options.get("widths", [])
        widths = widths if isinstance(widths, list) else [widths]
        form["widths"] = ",".join(str(w) for w in widths)
        if options.get("start") is not None:
            form["start"] = str(options["start"])
    elif kind == "masking" and options.get("char"):
        form["char"] = str(options["char"])
    elif kind == "dates":
        units = options.get("units", [])
        form["units"] = ", ".join(units if isinstance(units, list) else [str(units)])
        if options.get("format"):
            form["format"] = str(options["format"])
    return form


def read_entry(entry: Any) -> tuple[str, dict[str, Any]]:
    """A configuration's ``hierarchies.<column>`` entry as ``(kind, options)``: ``("file", {"file":
    path, "delimiter": …})`` or a builder with the keyword arguments :func:`build` takes.

    Raises:
        FieldError: (field ``builder``) an entry that is neither a file nor one known builder.
    """
    if isinstance(entry, str):
        return "file", {"file": entry}
    if isinstance(entry, Mapping) and "file" in entry:
        return "file", {key: str(entry[key]) for key in ("file", "delimiter") if entry.get(key) is not None}
    if not isinstance(entry, Mapping) or len(entry) != 1 or next(iter(entry)) not in BUILDERS:
        raise FieldError("builder", "the configuration's hierarchy of this column is neither a file nor a builder; "
                                    "build or load one here.")
    kind, options = next(iter(entry.items()))
    options = dict(options) if isinstance(options, Mapping) else {}
    if kind == "intervals" and not isinstance(options.get("widths"), list):
        options["widths"] = [options.get("widths")]
    if kind == "dates" and isinstance(options.get("units"), str):
        options["units"] = [options["units"]]
    return kind, options


_FIELD_OF = {"intervals": "widths", "masking": "char", "dates": "format", "grouping": "groups", "flat": "builder"}


def build(kind: str, options: Mapping[str, Any], values, missing_values: Sequence[str] = ("",)) -> Hierarchy:
    """Run the builder ``kind`` of :mod:`veil.data.builders` on a column's values.

    For ``grouping`` the hierarchy is made of the groups alone (leaves: the values listed), so
    that :func:`coverage` can say which values of the column it leaves out.

    Raises:
        FieldError: the builder refuses its options or the values (the field is the one the
            builder reads most: ``widths``, ``char``, ``format``, ``groups``).
    """
    missing = {"missing_values": tuple(missing_values)}
    try:
        if kind == "intervals":
            return builders.intervals(values, **options, **missing)
        if kind == "masking":
            return builders.masking(values, **options, **missing)
        if kind == "dates":
            rest = dict(options)
            units = rest.pop("units", ("month", "year"))
            return builders.dates(values, units, **rest, **missing)
        if kind == "grouping":
            return builders.grouping([], options["levels"], top=options.get("top", builders.TOP))
        return builders.flat(values, **options, **missing)
    except VeilError as exc:
        raise FieldError(_FIELD_OF.get(kind, "builder"), str(exc)) from None


def config_entry(kind: str, options: Mapping[str, Any]) -> dict:
    """``hierarchies.<column>`` for a builder (a grouping is saved as a file: see :func:`file_name`)."""
    return {kind: {key: value for key, value in options.items()}}


# ------------------------------------------------------------------------------- orders

def parse_order(text: str, column: EncodedColumn) -> list[str]:
    """The order of a text column's values (``orders.<column>``): one value a line, first the
    lowest; blank lines are skipped, and an empty text means no order.

    Raises:
        FieldError: (field ``order``) a value listed twice, or a value of the column left out.
    """
    values = [line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n") if line.strip()]
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise FieldError("order", f"{value!r} is listed twice in the order; list each value once.")
        seen.add(value)
    if values:
        left = [t for t in _present(column) if t not in seen]
        if left:
            shown = ", ".join(repr(t) for t in left[:EXAMPLES]) + (f" and {len(left) - EXAMPLES} more"
                                                                   if len(left) > EXAMPLES else "")
            noun = "value of the column is" if len(left) == 1 else "values of the column are"
            raise FieldError("order", f"{len(left)} {noun} not in the order: {shown}; list every value.")
    return values


# ------------------------------------------------------------------------------- files

def file_name(column: str) -> str:
    """The file of ``column``'s hierarchy in the project's ``hierarchies/`` folder: ``<column>.csv``
    when the name is safe as a file name, else a name made from its SHA-256."""
    if _SAFE_FILE.fullmatch(column) and column not in (".", ".."):
        return f"{column}.csv"
    return f"column-{hashlib.sha256(column.encode()).hexdigest()[:16]}.csv"


def read_upload(data: bytes) -> Hierarchy:
    """An uploaded ARX hierarchy file (see :meth:`veil.Hierarchy.read_csv`), read from its bytes.

    Raises:
        FieldError: (field ``file``) nothing uploaded, or a file that is not a hierarchy.
    """
    if not data:
        raise FieldError("file", "choose an ARX hierarchy file (CSV, ';' between levels, one row per value).")
    with tempfile.TemporaryDirectory(prefix="veil-hierarchy-") as folder:
        path = Path(folder) / "uploaded.csv"
        path.write_bytes(data)
        try:
            hierarchy = Hierarchy.read_csv(path)
        except VeilError as exc:
            message = str(exc)
            for named in (f"hierarchy file {str(path)!r}", f"hierarchy file {path.name!r}", f"{str(path)!r}"):
                message = message.replace(named, "the uploaded file")
            raise FieldError("file", message[:1].upper() + message[1:]) from None
    hierarchy.path = None
    return hierarchy


# ------------------------------------------------------------------------------- preview

@dataclass(frozen=True)
class Level:
    """One level of a hierarchy as the preview shows it."""

    number: int
    distinct: int                 # distinct values at this level among the column's (covered) values
    examples: tuple[str, ...]     # at most EXAMPLES of them


@dataclass(frozen=True)
class Coverage:
    """Which of the column's values a hierarchy has no leaf for."""

    uncovered: int
    examples: tuple[str, ...]     # at most EXAMPLES of them

    @property
    def covered(self) -> bool:
        return self.uncovered == 0

    def sentence(self) -> str:
        """What the page says about the coverage."""
        if self.covered:
            return "Every value of the column is covered."
        shown = ", ".join(repr(v) for v in self.examples)
        more = f" and {self.uncovered - len(self.examples)} more" if self.uncovered > len(self.examples) else ""
        noun = "value of the column is" if self.uncovered == 1 else "values of the column are"
        return f"{self.uncovered} {noun} not covered: {shown}{more}; add a row (or a group) for each."


def _present(column: EncodedColumn) -> np.ndarray:
    labels = np.asarray(column.labels, dtype=object)
    keep = np.ones(len(labels), dtype=bool)
    if column.missing_code is not None:
        keep[column.missing_code] = False
    return np.asarray([str(v) for v in labels[keep]], dtype=object)


def _matched(texts: np.ndarray, leaves: np.ndarray, numeric: bool) -> np.ndarray:
    """Which of ``texts`` is a leaf, by its text or, for a numeric column, its canonical number."""
    known = set(leaves.tolist())
    hit = np.fromiter((t in known for t in texts), dtype=bool, count=len(texts))
    if numeric and not hit.all():
        canonical = set(canonical_numeric_texts(leaves).tolist())
        hit |= np.fromiter((t in canonical for t in canonical_numeric_texts(texts)), dtype=bool, count=len(texts))
    return hit


def coverage(hierarchy: Hierarchy, column: EncodedColumn) -> Coverage:
    """The values of ``column`` (missing ones aside) that ``hierarchy`` has no leaf for, matched as
    :meth:`veil.Hierarchy.align` matches them."""
    texts = _present(column)
    left = texts[~_matched(texts, np.asarray(hierarchy.leaves, dtype=object), column.is_numeric)]
    return Coverage(len(left), tuple(str(v) for v in left[:EXAMPLES]))


def levels(hierarchy: Hierarchy, column: EncodedColumn) -> list[Level]:
    """Each level of ``hierarchy``: how many distinct values the column's values become there, and
    a few of them (counted over the leaves the column holds; over every leaf when it holds none)."""
    texts = _present(column)
    leaves = np.asarray(hierarchy.leaves, dtype=object)
    # rows of the hierarchy (leaf i is row i's level 0) whose leaf the column holds
    rows = np.flatnonzero(_matched(leaves, texts, column.is_numeric))
    if not len(rows):
        rows = np.arange(len(leaves))
    out = []
    for level in range(hierarchy.levels):
        codes = hierarchy.codes[rows, level]
        distinct = list(dict.fromkeys(codes.tolist()))
        labels = hierarchy.level_labels[level]
        out.append(Level(level, len(distinct), tuple(str(labels[c]) for c in distinct[:EXAMPLES])))
    return out


def check_covers(hierarchy: Hierarchy, column: EncodedColumn) -> Coverage:
    """The coverage, confirmed by aligning the hierarchy with the column as an anonymization will.

    Raises:
        FieldError: (field ``coverage``) the hierarchy leaves a value out, or cannot be aligned.
    """
    found = coverage(hierarchy, column)
    if not found.covered:
        raise FieldError("coverage", found.sentence())
    try:
        hierarchy.align(column)
    except HierarchyError as exc:
        raise FieldError("coverage", f"The hierarchy cannot serve this column: {lower_first(str(exc))}") from None
    return found
