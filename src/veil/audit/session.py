"""An auditing session over one numeric column: each query is answered truthfully or denied.

The session separates the query (what is asked, :mod:`veil.audit.queries`) from the decision (the
auditor's, :mod:`veil.audit.auditors`), and keeps a log of every decision and why. With a
simulatable auditor the true answer is computed only once the auditor has allowed the query.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from veil.audit.auditors import answer_of, make_auditor
from veil.audit.queries import Query, QueryError, QueryParser, numeric_column
from veil.data.encoding import encode_column
from veil.data.io import Table, read_table
from veil.errors import ColumnError, DataError
from veil.inputs import read_text


@dataclass(frozen=True)
class Decision:
    """One decision of the auditor.

    Attributes:
        number: the query's position in the session, from 1.
        query: the query as written.
        aggregate: ``"max"``, ``"min"`` or ``"sum"``.
        records: the number of records it depends on.
        answered: whether it was answered (``False``: denied).
        answer: the true answer, or ``None`` when denied.
        reason: why it was answered or denied.
        record: the record a denial protects (its number), or ``None``.
    """

    number: int
    query: str
    aggregate: str
    records: int
    answered: bool
    answer: float | None
    reason: str
    record: int | None = None

    def to_dict(self) -> dict:
        answer = self.answer
        if answer is not None and float(answer).is_integer():
            answer = int(answer)
        return {"number": self.number, "query": self.query, "aggregate": self.aggregate, "records": self.records,
                "decision": "answered" if self.answered else "denied", "answer": answer, "reason": self.reason,
                "record": self.record}


class AuditSession:
    """Answer MAX, MIN and SUM queries over one numeric column, through an auditor.

    Args:
        data: the table (a path to a CSV or Parquet file, a pandas or polars frame, a pyarrow
            Table).
        column: the numeric column the queries aggregate.
        auditor: ``"simulatable"`` (default), ``"value-based"``, or an auditor object.
        id_column: a column naming each record in the reasons (default: record numbers).
        missing_values: cell texts that mean "missing" besides null/NaN.
        delimiter: the CSV delimiter (sniffed when ``None``).

    Attributes:
        log_: every :class:`Decision`, in order.
        transcript_: ``(Query, Decision)`` pairs, what an adversary holds.

    Raises:
        ColumnError: the column or the id column does not exist.
        DataError: the table cannot be read, or the column holds text or has a record without
            a number.
        ParameterError: an unknown auditor.
    """

    def __init__(self, data, column: str, *, auditor="simulatable", id_column: str | None = None,
                 missing_values: Sequence[str] = ("",), delimiter: str | None = None):
        table = data if isinstance(data, Table) else read_table(data, delimiter)
        self.column = column
        self.values = numeric_column(table, column, missing_values)
        self.parser = QueryParser(table, missing_values)
        self.auditor = make_auditor(auditor) if isinstance(auditor, str) else auditor
        self.auditor.start(len(self.values))
        self._names = None
        if id_column is not None:
            if id_column not in table.columns:
                raise ColumnError(f"the id column '{id_column}' does not exist; the columns are "
                                  f"{', '.join(table.columns)}.")
            ids = encode_column(id_column, table.data.column(id_column), missing_values=())
            self._names = np.asarray(ids.labels, dtype=object)[ids.codes]
        self.log_: list[Decision] = []
        self.transcript_: list[tuple[Query, Decision]] = []

    @property
    def n_records(self) -> int:
        return len(self.values)

    def name(self, record: int | None) -> str:
        """How reasons name a record."""
        if record is None:
            return "a record"
        return f"record {record}" if self._names is None else f"{self._names[record]} (record {record})"

    def parse(self, text: str) -> Query:
        """The query a line of text asks (see :mod:`veil.audit.queries`)."""
        return self.parser.parse(text)

    def parse_file(self, path: str | os.PathLike) -> list[Query]:
        """The queries of a file (see :func:`read_numbered_queries`), all read before any is answered.

        Raises:
            DataError: the file does not exist or is not UTF-8 text.
            QueryError: a line is not a query, or selects no record; the message starts with the
                line's number, so the user finds it in the file.
            ColumnError: a line names a column the table lacks (with its line number too).
        """
        parsed = []
        for number, text in read_numbered_queries(path):
            try:
                parsed.append(self.parse(text))
            except (QueryError, ColumnError) as error:
                raise type(error)(f"line {number} of {str(path)!r}: {error}") from None
        return parsed

    def ask(self, query: str | Query) -> Decision:
        """Audit one query: answer it or deny it, and log the decision.

        Raises:
            QueryError: the text is not a query, or it selects no record.
            ColumnError: a condition names a column the table lacks.
        """
        if not isinstance(query, Query):
            query = self.parse(query)
        auditor = self.auditor
        if auditor.simulatable:
            denial = auditor.decide(query)
            answer = None if denial is not None else answer_of(self.values, query)
        else:
            true = answer_of(self.values, query)
            denial = auditor.decide(query, true)
            answer = None if denial is not None else true
        number = len(self.log_) + 1
        if denial is not None:
            decision = Decision(number, query.text, query.aggregate, query.size, False, None,
                                denial.reason.format(record=self.name(denial.record)), denial.record)
        else:
            decision = Decision(number, query.text, query.aggregate, query.size, True, answer,
                                auditor.why_safe(query))
            auditor.record(query, answer)
        self.log_.append(decision)
        self.transcript_.append((query, decision))
        return decision

    def run(self, queries: Sequence[str | Query]) -> list[Decision]:
        """Audit several queries in order; every text is read before any is answered, so a bad
        one stops the run before anything is decided."""
        parsed = [q if isinstance(q, Query) else self.parse(q) for q in queries]
        return [self.ask(q) for q in parsed]

    def log(self) -> list[dict]:
        """The decisions as JSON-ready dicts."""
        return [d.to_dict() for d in self.log_]


def read_queries(path: str | os.PathLike) -> list[str]:
    """The queries of a file: one a line; blank lines and lines starting with ``#`` are skipped.

    Raises:
        DataError: the file does not exist or is not UTF-8 text.
    """
    return [text for _, text in read_numbered_queries(path)]


def read_numbered_queries(path: str | os.PathLike) -> list[tuple[int, str]]:
    """The queries of a file with their line numbers (from 1), skipping blank and ``#`` lines.

    Raises:
        DataError: the file does not exist or is not UTF-8 text.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"the queries file {str(path)!r} does not exist; check the path.")
    text = read_text(path, "the queries file")  # a regular file (a pipe never ends), of a document's size
    lines = [(number, line.strip()) for number, line in enumerate(text.splitlines(), start=1)]
    return [(number, line) for number, line in lines if line and not line.startswith("#")]
