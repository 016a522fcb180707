"""Aggregate queries over subsets of records, as an auditor sees them.

A query asks for the MAX, MIN or SUM of one numeric column over a subset of the records. The
subset is given by record numbers or by a predicate on other columns; either way the auditor
only sees the set of record numbers (Kenthapadi, Mishra and Nissim, PODS 2005, model a query as
the set of indices it depends on: ``a = f(c₁x₁, …, cₙxₙ)`` with ``cᵢ = 1`` when the query
depends on ``xᵢ``).

**Text form** (one query a line in ``veil audit``)::

    max                                   every record
    sum where gender = M                  a predicate
    min where age >= 30 and race in (A, B)
    max where age between 30 and 39
    sum rows 0, 4, 7                      record numbers, counted from 0

Conditions compare a column with ``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in (…)`` or
``between … and …``; order comparisons need a numeric column. A value holding spaces or
operators is quoted (``'New York'``); the empty text ``''`` is the missing value. Numbers match
numeric cells by value (``25`` matches ``25.0``).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from veil.data.encoding import MISSING_LABEL, EncodedColumn, encode_column
from veil.data.io import Table
from veil.errors import ColumnError, DataError, ParameterError
from veil.untrusted import quoted, shown

AGGREGATES = ("max", "min", "sum")
_OPERATORS = ("<=", ">=", "!=", "==", "=", "<", ">")
_TOKEN = re.compile(r"""\s*(?:'([^']*)'|"([^"]*)"|(<=|>=|!=|==|=|<|>|\(|\)|,)|([^\s'"=<>!(),]+))""")


class QueryError(ParameterError):
    """A query cannot be read or selects no record."""


@dataclass(frozen=True, eq=False)
class Query:
    """One aggregate query: ``aggregate`` over the records ``rows``.

    Attributes:
        aggregate: ``"max"``, ``"min"`` or ``"sum"``.
        rows: the record numbers the query depends on, sorted, without repeats (``int64``).
        text: the query as written, for logs.
    """

    aggregate: str
    rows: np.ndarray
    text: str = ""

    @classmethod
    def of(cls, aggregate: str, rows: Sequence[int] | np.ndarray, n_records: int, text: str = "") -> "Query":
        """A query over explicit record numbers.

        Raises:
            QueryError: an unknown aggregate, no record, or a record number outside the table.
        """
        aggregate = str(aggregate).strip().lower()
        if aggregate not in AGGREGATES:
            raise QueryError(f"a query asks for max, min or sum, not {aggregate!r}.")
        try:
            rows = np.asarray(rows, dtype=np.int64).ravel()
        except OverflowError:  # a number beyond int64, so beyond any table
            bad = next(r for r in rows if not -2**63 <= int(r) < 2**63)
            raise QueryError(f"the query {quoted(text or aggregate)} names record {shown(bad, 40)}, but records are "
                             f"numbered 0 to {n_records - 1}.") from None
        if len(rows) > 1 and not (rows[1:] > rows[:-1]).all():
            rows = np.unique(rows)
        label = text or f"{aggregate} rows {', '.join(str(r) for r in rows[:5])}{', …' if len(rows) > 5 else ''}"
        if len(rows) == 0:
            raise QueryError(f"the query '{label}' selects no record; an aggregate over nobody has no answer.")
        if rows[0] < 0 or rows[-1] >= n_records:
            bad = rows[0] if rows[0] < 0 else rows[-1]
            raise QueryError(f"the query '{label}' names record {bad}, but records are numbered 0 to "
                             f"{n_records - 1}.")
        return cls(aggregate, rows, label)

    @property
    def size(self) -> int:
        return len(self.rows)


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise QueryError(f"cannot read the query '{text}' at {text[pos:]!r}; quote values that hold spaces "
                             "or operators.")
        quoted = match.group(1) if match.group(1) is not None else match.group(2)
        # Quoted values keep a marker so that a quoted 'and' is a value, not the keyword.
        out.append(("\0" + quoted) if quoted is not None else (match.group(3) or match.group(4)))
        pos = match.end()
    return out


def _word(token: str) -> str:
    return token[1:] if token.startswith("\0") else token


class QueryParser:
    """Reads queries in the text form against one table (see the module notes).

    Args:
        table: the table the predicates read (a :class:`veil.data.io.Table`).
        missing_values: cell texts that mean "missing" besides null/NaN.

    Raises (from :meth:`parse`):
        QueryError: the text is not a query, a value does not suit its column, or the query
            selects no record.
        ColumnError: a condition names a column the table lacks (the closest name is suggested).
    """

    def __init__(self, table: Table, missing_values: Sequence[str] = ("",)):
        self.table = table
        self.missing_values = tuple(missing_values)
        self._columns: dict[str, EncodedColumn] = {}

    def column(self, name: str) -> EncodedColumn:
        if name not in self._columns:
            if name not in self.table.columns:
                close = difflib.get_close_matches(name, self.table.columns, n=1, cutoff=0.5)
                hint = f"did you mean '{close[0]}'?" if close else f"the columns are {', '.join(self.table.columns)}."
                raise ColumnError(f"a query names the column '{name}', which the table does not have; {hint}")
            self._columns[name] = encode_column(name, self.table.data.column(name),
                                                missing_values=self.missing_values)
        return self._columns[name]

    def parse(self, text: str) -> Query:
        """The :class:`Query` a line of text asks (see the module notes)."""
        text = str(text).strip()
        tokens = _tokens(text)
        if not tokens:
            raise QueryError("an empty line is not a query; write e.g. 'max where gender = M'.")
        aggregate = _word(tokens[0]).lower()
        if aggregate not in AGGREGATES:
            raise QueryError(f"the query '{text}' must start with max, min or sum, not {_word(tokens[0])!r}.")
        rest = tokens[1:]
        n = self.table.num_rows
        if not rest:
            return Query.of(aggregate, np.arange(n), n, text)
        keyword = rest[0].lower()
        if keyword == "rows":
            numbers = [_word(t) for t in rest[1:] if t != ","]
            try:
                rows = [int(v) for v in numbers]
            except ValueError:
                raise QueryError(f"the query '{text}' lists record numbers; {numbers!r} are not all whole "
                                 "numbers.") from None
            return Query.of(aggregate, rows, n, text)
        if keyword != "where":
            raise QueryError(f"in the query '{text}', the aggregate is followed by 'where' or 'rows', not "
                             f"{_word(rest[0])!r}.")
        selected = np.ones(n, dtype=bool)
        for condition in self._conditions(rest[1:], text):
            selected &= self._evaluate(condition, text)
        return Query.of(aggregate, np.flatnonzero(selected), n, text)

    def _conditions(self, tokens: list[str], text: str) -> list[tuple[str, str, list[str]]]:
        """Split ``column op value (and …)*`` into (column, operator, values) triples."""
        out, i = [], 0
        while True:
            if i >= len(tokens):
                raise QueryError(f"the query '{text}' ends where a condition (column, operator, value) should be.")
            column = _word(tokens[i])
            if i + 1 >= len(tokens):
                raise QueryError(f"in the query '{text}', the column '{column}' has no operator and value.")
            op = tokens[i + 1].lower()
            i += 2
            if op in _OPERATORS:
                if i >= len(tokens):
                    raise QueryError(f"in the query '{text}', '{column} {op}' has no value.")
                values, i = [_word(tokens[i])], i + 1
            elif op == "in":
                if i >= len(tokens) or tokens[i] != "(":
                    raise QueryError(f"in the query '{text}', 'in' takes a list in parentheses: in (a, b).")
                close = tokens.index(")", i) if ")" in tokens[i:] else -1
                if close < 0:
                    raise QueryError(f"in the query '{text}', the list after 'in' is not closed with ')'.")
                values = [_word(t) for t in tokens[i + 1:close] if t != ","]
                if not values:
                    raise QueryError(f"in the query '{text}', the list after 'in' is empty.")
                i = close + 1
            elif op == "between":
                if i + 2 >= len(tokens) or tokens[i + 1].lower() != "and":
                    raise QueryError(f"in the query '{text}', write 'between LOW and HIGH'.")
                values, i = [_word(tokens[i]), _word(tokens[i + 2])], i + 3
            else:
                raise QueryError(f"in the query '{text}', {_word(tokens[i - 1])!r} is not an operator; use =, !=, "
                                 "<, <=, >, >=, in (…) or between … and ….")
            out.append((column, "=" if op == "==" else op, values))
            if i == len(tokens):
                return out
            if tokens[i].lower() != "and":
                raise QueryError(f"in the query '{text}', conditions are joined by 'and', not {_word(tokens[i])!r}.")
            i += 1

    def _evaluate(self, condition: tuple[str, str, list[str]], text: str) -> np.ndarray:
        """Bool per record: whether it meets the condition (evaluated on the distinct values)."""
        name, op, values = condition
        col = self.column(name)
        labels = np.asarray(col.labels, dtype=object)
        if op in ("<", "<=", ">", ">=", "between"):
            if not col.is_numeric:
                raise QueryError(f"in the query '{text}', the column '{name}' holds text, so it is compared with "
                                 "=, != or in (…), not by order.")
            bounds = [self._number(v, name, text) for v in values]
            if op == "between" and bounds[0] > bounds[1]:
                raise QueryError(f"in the query '{text}', 'between {values[0]} and {values[1]}' runs downwards; "
                                 f"write the lower bound first: between {values[1]} and {values[0]}.")
            x = col.numeric
            with np.errstate(invalid="ignore"):
                hit = {"<": x < bounds[0], "<=": x <= bounds[0], ">": x > bounds[0], ">=": x >= bounds[0],
                       "between": (x >= bounds[0]) & (x <= bounds[-1])}[op]
            hit = np.where(np.isnan(x), False, hit)
        else:
            hit = np.zeros(col.cardinality, dtype=bool)
            for value in values:
                if value in self.missing_values or value == MISSING_LABEL:
                    if col.missing_code is not None:
                        hit[col.missing_code] = True
                elif col.is_numeric:
                    hit |= col.numeric == self._number(value, name, text)
                else:
                    hit |= labels == value
            if op == "!=":
                hit = ~hit
        return hit[col.codes]

    @staticmethod
    def _number(value: str, name: str, text: str) -> float:
        try:
            number = float(value)
        except ValueError:
            raise QueryError(f"in the query '{text}', the column '{name}' holds numbers, and {value!r} is not "
                             "one.") from None
        if not np.isfinite(number):
            raise QueryError(f"in the query '{text}', compare '{name}' with a finite number, not {value!r}.")
        return number


def numeric_column(table: Table, name: str, missing_values: Sequence[str] = ("",)) -> np.ndarray:
    """The values of the audited column, one finite float per record.

    Raises:
        ColumnError: the table has no such column (the closest name is suggested).
        DataError: the column holds text, or some record has no number (a missing cell).
    """
    if name not in table.columns:
        close = difflib.get_close_matches(name, table.columns, n=1, cutoff=0.5)
        hint = f"did you mean '{close[0]}'?" if close else f"the columns are {', '.join(table.columns)}."
        raise ColumnError(f"the audited column '{name}' does not exist; {hint}")
    col = encode_column(name, table.data.column(name), missing_values=missing_values)
    if not col.is_numeric:
        example = next((str(v) for v in col.labels if v != MISSING_LABEL), "")
        raise DataError(f"the audited column '{name}' holds text (e.g. {example!r}); MAX, MIN and SUM need a "
                        "numeric column.")
    values = col.numeric[col.codes].astype(float)
    missing = int((~np.isfinite(values)).sum())
    if missing:
        raise DataError(f"the audited column '{name}' has no number in {missing:,} record"
                        f"{'s' if missing != 1 else ''}; audit a column with a number in every record.")
    return values
