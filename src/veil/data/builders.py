"""Builders that make a :class:`~veil.data.hierarchy.Hierarchy` from a column's values.

Each builder returns the same structure a hierarchy file gives (one row per distinct value), so a
built hierarchy can be written to ARX's CSV format and edited by hand.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import numpy as np

from veil.data.encoding import canonical_number, canonical_numeric_texts, encode_column, parse_numbers
from veil.data.hierarchy import Hierarchy
from veil.errors import HierarchyError, ParameterError

TOP = "*"


def _distinct_texts(values: Iterable, missing_values: Sequence[str] = ("",)) -> list[str]:
    """The distinct non-missing values, spelled exactly as a dataset column encodes them, so a
    built hierarchy always covers the column it was built from. Null, NaN and the cells whose
    text is one of ``missing_values`` are missing: the dataset keeps them as a category of its
    own, which needs no leaf."""
    column = encode_column("values", values, missing_values=tuple(missing_values))
    labels = [str(v) for code, v in enumerate(column.labels) if code != column.missing_code]
    return sorted(labels)


def _edge(value: float) -> str:
    """A band edge without floating-point noise (0.30000000000000004 is written 0.3)."""
    return canonical_number(float(f"{value:.12g}"))


def flat(values: Iterable, top: str = TOP, *, missing_values: Sequence[str] = ("",)) -> Hierarchy:
    """Two levels: every value, then ``top`` (full suppression).

    Args:
        values: the values to cover.
        top: label of the last level.
        missing_values: cell texts that mean "missing" (as the dataset is given them); they get
            no leaf.
    """
    return Hierarchy([[v, top] for v in _distinct_texts(values, missing_values)], name="flat hierarchy")


def intervals(values: Iterable, widths: Sequence[float], *, start: float | None = None,
              top: str = TOP, missing_values: Sequence[str] = ("",)) -> Hierarchy:
    """Numeric bands of growing width, then ``top``.

    Level ``i`` (1-based) puts a value ``x`` in the band ``[start + j·w, start + (j+1)·w)`` with
    ``w = widths[i-1]``. Integer data gets inclusive labels ``lo-hi`` (``20-24``), as in ARX's
    shipped hierarchies; other data gets half-open labels ``[lo,hi)``.

    Args:
        values: the numeric values to cover.
        widths: band width per level, each a multiple of the one before so the bands nest.
        start: the lower edge of the first band (default: the largest multiple of the widest band
            that is not above the smallest value, so every level's bands start there).
        top: label of the last level.
        missing_values: cell texts that mean "missing" (as the dataset is given them, e.g.
            ``unknown``, ``n/a``); they get no leaf, so they need not be numbers.

    Raises:
        ParameterError: no widths, a width that is not positive, or widths that do not nest.
        HierarchyError: a value that is not missing is not a number.
    """
    if not widths:
        raise ParameterError("give at least one band width for an interval hierarchy.")
    widths = [float(w) for w in widths]
    if any(w <= 0 for w in widths):
        raise ParameterError("interval band widths must be positive.")
    for a, b in zip(widths, widths[1:]):
        if not np.isclose(b / a, round(b / a)) or b < a:
            raise ParameterError(f"band width {b:g} is not a multiple of {a:g}; widths must nest.")
    texts = _distinct_texts(values, missing_values)
    nums = parse_numbers(texts)
    bad = [t for t, x in zip(texts, nums) if not np.isfinite(x)]
    if bad:
        raise HierarchyError(f"an interval hierarchy needs numbers but got {bad[0]!r}; list it among the "
                             "missing values if it means \"missing\", or use a masking or flat hierarchy for text.")
    integral = all(float(x).is_integer() for x in nums) and all(float(w).is_integer() for w in widths)
    if start is None:
        start = np.floor(nums.min() / widths[-1]) * widths[-1] if len(nums) else 0.0
    rows = []
    for text, x in zip(texts, nums):
        row = [text]
        for w in widths:
            # A small tolerance keeps 0.6 in [0.6,0.7) although 0.6 / 0.1 = 5.999….
            lo = start + np.floor((x - start) / w + 1e-9) * w
            hi = lo + w
            row.append(f"{_edge(lo)}-{_edge(hi - 1)}" if integral else f"[{_edge(lo)},{_edge(hi)})")
        row.append(top)
        rows.append(row)
    return Hierarchy(rows, name="interval hierarchy")


def masking(values: Iterable, *, char: str = "*", top: str = TOP,
            missing_values: Sequence[str] = ("",)) -> Hierarchy:
    """Mask characters from the right, one more per level, then ``top``.

    ``13053`` becomes ``1305*``, ``130**``, ``13***``, ``1****`` and finally ``top``. Values
    shorter than the longest are masked as far as their length allows. Cells whose text is one
    of ``missing_values`` get no leaf (the dataset keeps them as its missing category).
    """
    texts = _distinct_texts(values, missing_values)
    length = max((len(t) for t in texts), default=0)
    rows = []
    for t in texts:
        row = [t]
        for i in range(1, length):
            keep = max(len(t) - i, 0)
            row.append(t[:keep] + char * (len(t) - keep))
        row.append(top)
        rows.append(row)
    return Hierarchy(rows, name="masking hierarchy")


DATE_GRANULARITIES = ("week", "month", "quarter", "year", "decade")


def dates(values: Iterable, granularities: Sequence[str] = ("month", "year"), *,
          format: str | None = None, top: str = TOP, missing_values: Sequence[str] = ("",)) -> Hierarchy:
    """Dates generalized to coarser calendar units, then ``top``.

    The default is day → month (``2024-03``) → year (``2024``) → ``*``. Other units: ``week``
    (``2024-W09``), ``quarter`` (``2024-Q1``), ``decade`` (``2020s``). Units must grow coarser.
    Cells whose text is one of ``missing_values`` get no leaf.

    Raises:
        ParameterError: an unknown unit, or units out of order.
        HierarchyError: a value is not a date (under ``format`` when given).
    """
    import pandas as pd  # its date parser, for this builder only

    for g in granularities:
        if g not in DATE_GRANULARITIES:
            raise ParameterError(f"unknown date unit {g!r}; use one of {', '.join(DATE_GRANULARITIES)}.")
    ranks = [DATE_GRANULARITIES.index(g) for g in granularities]
    if ranks != sorted(ranks) or len(set(ranks)) != len(ranks):
        raise ParameterError("date units must go from fine to coarse, each once.")
    if "week" in granularities and len(granularities) > 1:
        raise ParameterError("weeks do not nest in months or years; use 'week' alone.")
    texts = _distinct_texts(values, missing_values)
    parsed = pd.to_datetime(pd.Series(texts, dtype=object), format=format, errors="coerce")
    if parsed.isna().any():
        bad = texts[int(np.flatnonzero(parsed.isna().to_numpy())[0])]
        raise HierarchyError(f"{bad!r} is not a date{' in format ' + repr(format) if format else ''}.")
    rows = [[t] for t in texts]
    for g in granularities:
        if g == "week":
            iso = parsed.dt.isocalendar()
            col = [f"{y}-W{w:02d}" for y, w in zip(iso.year, iso.week)]
        elif g == "month":
            col = parsed.dt.strftime("%Y-%m").tolist()
        elif g == "quarter":
            col = [f"{y}-Q{q}" for y, q in zip(parsed.dt.year, parsed.dt.quarter)]
        elif g == "year":
            col = parsed.dt.strftime("%Y").tolist()
        else:
            col = [f"{(y // 10) * 10}s" for y in parsed.dt.year]
        for row, v in zip(rows, col):
            row.append(v)
    for row in rows:
        row.append(top)
    return Hierarchy(rows, name="date hierarchy")


def grouping(values: Iterable, levels: Sequence[Mapping[str, Sequence[str]]], *, top: str = TOP,
             missing_values: Sequence[str] = ("",)) -> Hierarchy:
    """Named groups of values, then groups of those groups, and so on, then ``top``.

    ``levels[0]`` maps each group of level 1 to the values it holds; ``levels[i]`` maps each group
    of level ``i + 1`` to groups of ``levels[i - 1]``. The leaves are the values listed in
    ``levels[0]`` (a value the column does not hold may be listed). ``top`` is added as the last
    level unless the last level given has a single group, which is then the top.

    Args:
        values: the column's values; each one that is not missing must be listed in ``levels[0]``.
        levels: one mapping per level, group name → its members (values, or groups of the level
            below), in order from fine to coarse.
        top: label of the last level.
        missing_values: cell texts that mean "missing"; they need no group.

    Raises:
        ParameterError: no levels, a group without members, a member listed in two groups of one
            level, or a member of a level that is not a group of the level below.
        HierarchyError: a value of the column is in no group of the first level.
    """
    if not levels:
        raise ParameterError("give at least one level of groups, like {'young': ['17', '18']}.")
    parents: list[dict[str, str]] = []
    for number, groups in enumerate(levels, start=1):
        parent: dict[str, str] = {}
        for group, members in groups.items():
            if not members:
                raise ParameterError(f"group {group!r} of level {number} has no members; list at least one.")
            for member in members:
                if member in parent and parent[member] != group:
                    raise ParameterError(f"{member!r} is in two groups of level {number}, {parent[member]!r} and "
                                         f"{group!r}; put it in one.")
                parent[member] = group
        if parents:
            below = set(parents[-1].values())
            stray = [m for m in parent if m not in below]
            if stray:
                raise ParameterError(f"{stray[0]!r} of level {number} is not a group of level {number - 1}; each "
                                     "level groups the groups of the level before.")
            left = [g for g in dict.fromkeys(parents[-1].values()) if g not in parent]
            if left:
                raise ParameterError(f"group {left[0]!r} of level {number - 1} is in no group of level {number}; "
                                     "put every group of a level in a group of the next.")
        parents.append(parent)
    rows = []
    for leaf in parents[0]:
        row, node = [leaf], leaf
        for parent in parents:
            node = parent[node]
            row.append(node)
        rows.append(row)
    if len(levels[-1]) != 1:
        for row in rows:
            row.append(top)
    listed = set(parents[0])
    listed |= set(canonical_numeric_texts(np.array(list(listed), dtype=object)))
    left_out = [t for t in _distinct_texts(values, missing_values) if t not in listed]
    if left_out:
        shown = ", ".join(repr(t) for t in left_out[:5]) + (f" and {len(left_out) - 5} more" if len(left_out) > 5
                                                             else "")
        raise HierarchyError(f"{len(left_out)} value(s) of the column are in no group of level 1 ({shown}); add "
                             "each to a group.")
    return Hierarchy(rows, name="grouping hierarchy")
