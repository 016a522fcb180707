"""What a release does to each column of its input, and which columns it publishes as is that
single people out.

Every column of the input has a **role** (:mod:`veil.data.dataset`) and a **disposition** in
the release:

* ``dropped``: not published (the identifying columns);
* ``as is``: published with the input's values (the sensitive and insensitive columns, and a
  quasi-identifier left at level 0 of its hierarchy, or recoded locally into cells that each
  hold one value);
* ``generalized``: published as cells that cover several values (a hierarchy level above 0, or
  the ranges and groups of local recoding);
* ``suppressed``: a quasi-identifier that shows one value for every released record (the top of
  a hierarchy, such as ``*``), so that nothing of it is published.

Records can be suppressed as well (left out, or shown with ``*`` in every quasi-identifier); that
is a fact of the whole table (``Release.suppressed_records``), not of a column.

**Columns published as is that single people out.** The privacy models protect the
quasi-identifiers only: a column published as is that someone can know from elsewhere links
people to their rows as an undeclared quasi-identifier would. A column published as is that is
not a quasi-identifier is flagged, judged on its published values alone (the records a release
leaves out are never read) and ignoring missing values, when:

* ``date``: it holds dates or timestamps (an Arrow date or timestamp column, or text of which at
  least :data:`DATE_SHARE` of the distinct values read as a calendar day, such as ``2021-03-07``,
  ``07/03/2021`` or ``7 Mar 2021``), with more than one distinct value. A person's exact dates
  (birth, admission, death) are known to their family, employer or hospital; the HIPAA Safe
  Harbor method removes every element of a date but its year for that reason.
* ``free_text``: it holds free text: text with at least :data:`FREE_TEXT_WORDS` words per value
  on average, at least :data:`FREE_TEXT_DISTINCT` of the values distinct. Text written about a
  person can name them or tell their circumstances, which no model reads.
* ``rare_values``: an insensitive column of which more than :data:`RARE_SHARE` of the published
  records that hold a value hold one that fewer than :data:`RARE_RECORDS` published records share
  (a number or a code with many distinct values: amounts, record numbers, exact times). Whoever
  knows such a value finds the few records that hold it. 5 is the smallest class size most
  guidance on k-anonymity accepts; the 1 % leaves out the thin tail of an ordinary category or
  number (the few oldest ages of a census) and catches a column that works as a key. A sensitive
  column's values are what the release publishes for its models to protect (a salary under
  t-closeness), so they are counted but not flagged.

Only the most telling kind is reported per column, in that order. The sentences say which rule
fired and never quote a value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from veil.cells import Cells
from veil.data import arrays
from veil.errors import ParameterError

ROLES = ("identifying", "quasi-identifying", "sensitive", "insensitive")
DISPOSITIONS = ("as is", "generalized", "suppressed", "dropped")
WARNING_KINDS = ("date", "free_text", "rare_values")

RARE_RECORDS = 5      # a value held by fewer published records than this is rare
RARE_SHARE = 0.01     # a column is flagged when more than this share of its records hold a rare value
DATE_SHARE = 0.9      # a text column is dates when at least this share of its distinct values read as one
FREE_TEXT_WORDS = 3   # free text: at least this many words per value on average ...
FREE_TEXT_DISTINCT = 0.5   # ... and at least this share of its values distinct

_DAY = r"(0?[1-9]|[12][0-9]|3[01])"
_MONTH = r"(0?[1-9]|1[0-2])"
_MONTH_NAME = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_TIME = r"([ T]([01]?[0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]+)?)?( ?(z|[+-][0-9]{2}:?[0-9]{2}))?)?"
DATE_PATTERN = ("^(" + "|".join([
    rf"[0-9]{{4}}[-/.]{_MONTH}[-/.]{_DAY}",                       # 2021-03-07, 2021/3/7
    rf"{_DAY}[-/.]{_MONTH}[-/.]([0-9]{{4}}|[0-9]{{2}})",           # 07/03/2021 (day first)
    rf"{_MONTH}[-/.]{_DAY}[-/.]([0-9]{{4}}|[0-9]{{2}})",           # 03/07/2021 (month first)
    rf"{_DAY}[ -]{_MONTH_NAME}[ ,-]*[0-9]{{4}}",                   # 7 Mar 2021, 07-mar-2021
    rf"{_MONTH_NAME} {_DAY},? [0-9]{{4}}",                         # March 7, 2021
]) + f"){_TIME}$")

ROLE_ADVICE = {
    "date": "declare it a quasi-identifier with a date hierarchy (the dates builder) or drop it as identifying",
    "free_text": "drop it as identifying, or publish it only after reading it",
    "rare_values": "declare it a quasi-identifier with a hierarchy, or drop it as identifying",
}


@dataclass(frozen=True)
class ColumnProfile:
    """What a column's published values show (counts of the published table, never values).

    Attributes:
        records: published records that hold a value (missing values left out).
        distinct: distinct published values.
        rare_records: published records holding a value fewer than :data:`RARE_RECORDS`
            published records share.
        kind: the warning the values call for (one of :data:`WARNING_KINDS`), or ``None``.
    """

    records: int
    distinct: int
    rare_records: int
    kind: str | None


@dataclass(frozen=True)
class ColumnDisposition:
    """One input column: its role, what the release does with it, and what its published values show.

    Attributes:
        name: the column.
        role: one of :data:`ROLES`.
        disposition: one of :data:`DISPOSITIONS`.
        level: for a quasi-identifier generalized through a hierarchy, the level published.
        height: that hierarchy's height.
        profile: for a column published as is (other than a quasi-identifier), what its published
            values show; ``None`` for the other columns, and for columns the engine did not read.
    """

    name: str
    role: str
    disposition: str
    level: int | None = None
    height: int | None = None
    profile: ColumnProfile | None = field(default=None, compare=False)

    @property
    def warning(self) -> str | None:
        """The kind of risk its published values show (see the module notes), or ``None``. Values
        few records share are a warning for an insensitive column only: a sensitive column's values
        are what the release publishes for the models to protect."""
        kind = self.profile.kind if self.profile is not None else None
        if kind == "rare_values" and self.role != "insensitive":
            return None
        return kind

    def describe(self) -> str:
        """The disposition in words, e.g. ``"generalized to level 2 of 4"``."""
        if self.disposition == "dropped":
            return "dropped"
        if self.disposition == "as is":
            if self.profile is None and self.role != "quasi-identifying":
                return "published as is (not judged: the engine did not read it)"
            return "published as is"
        if self.disposition == "suppressed":
            at = f"level {self.level} of {self.height}, " if self.level is not None and self.height else ""
            return f"suppressed ({at}one value for every released record)"
        if self.level is None:
            return "generalized (recoded locally: ranges or groups per class)"
        return f"generalized to level {self.level}" + (f" of {self.height}" if self.height is not None else "")

    def warning_sentence(self) -> str | None:
        """One sentence saying which rule the column's published values break and what to do,
        without quoting a value; ``None`` without a warning."""
        kind = self.warning
        if kind is None:
            return None
        role = "" if self.role == "insensitive" else f" ({self.role})"
        what = {
            "date": "holds exact dates, which the people themselves and those around them know and which "
                    "single records out",
            "free_text": "holds free text, which can name a person or tell their circumstances and which no "
                         "privacy model reads",
            "rare_values": f"more than {RARE_SHARE:.0%} of its records hold a value that fewer than {RARE_RECORDS} "
                           "records share, so whoever knows such a value finds those records",
        }[kind]
        return (f"column '{self.name}'{role} is published as is and {what}; if anyone can know it from elsewhere, "
                f"{ROLE_ADVICE[kind]}.")

    def to_manifest(self) -> dict:
        """The JSON-ready entry of a release manifest: name, role, disposition, level and height
        when generalized through a hierarchy, and the warning kinds (transformation facts and
        judgements of the published table only)."""
        entry: dict = {"name": self.name, "role": self.role, "disposition": self.disposition}
        if self.level is not None:
            entry["level"] = self.level
        if self.height is not None:
            entry["height"] = self.height
        entry["warnings"] = [self.warning] if self.warning else []
        return entry


def profile_column(values: pa.Array | pa.ChunkedArray, *, rows: np.ndarray | None = None,
                   weights: np.ndarray | None = None, missing: Sequence[str] = ("",)) -> ColumnProfile:
    """Judge a column's published values by the rules of the module notes.

    Args:
        values: the column (every row of the table it comes from).
        rows: bool per row, the rows published (default: every row).
        weights: per row, the number of records it stands for (a table summarized by its
            distinct rows); default one each.
        missing: texts that mean a value is missing, besides null (and NaN).

    Raises:
        ParameterError: ``rows`` or ``weights`` does not hold one entry per row.
    """
    n = len(values)
    for given, what in ((rows, "rows"), (weights, "weights")):
        if given is not None and len(given) != n:
            raise ParameterError(f"{what} holds {len(given)} entries for a column of {n}; give one per row.")
    array = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    if not pa.types.is_dictionary(array.type):
        array = pc.dictionary_encode(array)
    dictionary = array.dictionary
    codes = arrays.to_numpy(array.indices, null=-1)
    absent = _missing(dictionary, missing)
    keep = codes >= 0
    keep[keep] = ~absent[codes[keep]]
    if rows is not None:
        keep &= np.asarray(rows, dtype=bool)
    counts = np.bincount(codes[keep], weights=None if weights is None else np.asarray(weights)[keep],
                         minlength=len(dictionary)).astype(np.int64)
    records = int(counts.sum())
    held = counts > 0
    distinct = int(held.sum())
    rare = int(counts[held & (counts < RARE_RECORDS)].sum())
    kind = None
    if distinct > 1 and _dates(dictionary, held):
        kind = "date"
    elif distinct > 1 and _free_text(dictionary, counts, records, distinct):
        kind = "free_text"
    elif rare > RARE_SHARE * records:
        kind = "rare_values"
    return ColumnProfile(records, distinct, rare, kind)


def _is_text(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _missing(dictionary: pa.Array, missing: Sequence[str]) -> np.ndarray:
    """Bool per dictionary entry: whether it means a missing value."""
    if _is_text(dictionary.type):
        # compared in Python: the dictionary holds each distinct value once, and pa.array on a list
        # would import pandas (pyarrow looks for its types), which a release does not otherwise need
        marks = {"", *map(str, missing)}
        values = dictionary.to_pylist()
        return np.fromiter((v is not None and v in marks for v in values), dtype=bool, count=len(values))
    if pa.types.is_floating(dictionary.type):
        return arrays.to_numpy(pc.is_nan(dictionary), null=True)
    return np.zeros(len(dictionary), dtype=bool)


def _dates(dictionary: pa.Array, held: np.ndarray) -> bool:
    if pa.types.is_date(dictionary.type) or pa.types.is_timestamp(dictionary.type):
        return True
    if not _is_text(dictionary.type):
        return False
    present = dictionary.filter(arrays.from_numpy(held))
    trimmed = pc.utf8_trim_whitespace(present)
    hits = arrays.to_numpy(pc.match_substring_regex(trimmed, DATE_PATTERN, ignore_case=True), null=False)
    return bool(hits.mean() >= DATE_SHARE) if len(hits) else False


def _free_text(dictionary: pa.Array, counts: np.ndarray, records: int, distinct: int) -> bool:
    if not _is_text(dictionary.type) or distinct < FREE_TEXT_DISTINCT * records:
        return False
    words = arrays.to_numpy(pc.count_substring_regex(dictionary, r"\S+"), null=0).astype(float)
    return bool(words @ counts >= FREE_TEXT_WORDS * records)


def quasi_identifier_disposition(cells: Cells, used: np.ndarray) -> tuple[str, int | None, int | None]:
    """How a release publishes one quasi-identifier: ``(disposition, level, height)``.

    Args:
        cells: the quasi-identifier's cells in the release.
        used: the cells the released (not suppressed) classes publish.

    A hierarchy level of 0, or local cells that each cover one value, publish the column as is;
    one cell covering several values for every released record suppresses it (nothing released
    shows it, as at ``*``); anything else generalizes it. Without released records the column is
    suppressed.
    """
    level, height = cells.level, cells.height
    if len(used) == 0:
        return "suppressed", level, height
    coverage = cells.coverage()[used]
    if len(used) == 1 and coverage[0] > 1:
        return "suppressed", level, height
    if (level == 0) if level is not None else bool(np.all(coverage <= 1)):
        return "as is", level, height
    return "generalized", level, height


def column_dispositions(columns: Sequence[str], roles: Mapping[str, Sequence[str]],
                        quasi_identifiers: Mapping[str, tuple[str, int | None, int | None]],
                        profiles: Mapping[str, ColumnProfile | None]) -> list[ColumnDisposition]:
    """Every input column, in order, with its role and disposition.

    Args:
        columns: the input's columns, in order.
        roles: ``quasi_identifiers``, ``sensitive``, ``identifying`` (lists of names); every other
            column is insensitive.
        quasi_identifiers: per quasi-identifier, ``(disposition, level, height)``.
        profiles: per column published as is (not a quasi-identifier), its profile, or ``None``
            where the values were not read.
    """
    qis = set(roles.get("quasi_identifiers") or [])
    sensitive = set(roles.get("sensitive") or [])
    identifying = set(roles.get("identifying") or [])
    out = []
    for name in columns:
        if name in identifying:
            out.append(ColumnDisposition(name, "identifying", "dropped"))
        elif name in qis:
            disposition, level, height = quasi_identifiers.get(name, ("generalized", None, None))
            out.append(ColumnDisposition(name, "quasi-identifying", disposition, level, height))
        else:
            role = "sensitive" if name in sensitive else "insensitive"
            out.append(ColumnDisposition(name, role, "as is", profile=profiles.get(name)))
    return out
