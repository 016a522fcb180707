"""The targets of an attack across releases: the people the adversary attacks, read from a table
of their quasi-identifiers (and, for evaluation, their true sensitive value and an id), grouped by
their quasi-identifier tuple so that each distinct tuple is located once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa

from veil.attacks.published_values import ColumnValues, finite_number
from veil.classes import group_rows
from veil.data.encoding import MISSING_LABEL, canonical_numeric_texts, text_codes
from veil.data.io import read_table
from veil.errors import ColumnError


class TargetsError(ColumnError):
    """The targets table lacks a quasi-identifier (or the id column asked for)."""


@dataclass(eq=False)
class Targets:
    """Targets grouped by their quasi-identifier tuple."""

    n: int
    ids: np.ndarray
    tuple_of: np.ndarray            # [targets]: the distinct tuple of each target
    value_index: np.ndarray         # [tuples × quasi-identifiers]: index into each column's values
    values: list[ColumnValues]      # per quasi-identifier, its distinct values
    numeric: list[bool]
    truth_texts: np.ndarray | None  # [targets] true sensitive values as text


def read_targets(targets, qis: Sequence[str], sensitive: str, id_column: str | None,
                 delimiter: str | None) -> Targets:
    """Read the targets table: each target's id, its quasi-identifier tuple, each column's distinct
    values (numeric when every present value is a number) and the true sensitive values when the
    table holds the sensitive column.

    Args:
        targets: the targets table (a path, a frame or a pyarrow Table).
        qis: the quasi-identifiers the adversary knows.
        sensitive: the sensitive column (read as the truth when the table has it).
        id_column: the targets' id column (default: their row numbers).
        delimiter: the CSV delimiter of a path (sniffed when ``None``).

    Raises:
        TargetsError: the table lacks a quasi-identifier or the id column.
        DataError: the table cannot be read.
    """
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
        labels, code = text_codes(table.column(q))
        present = [t for t in labels.tolist() if t != MISSING_LABEL]
        is_numeric = bool(present) and all(finite_number(t) is not None for t in present)
        values.append(ColumnValues.of(labels, is_numeric))
        numeric.append(is_numeric)
        codes.append(code)
    tuple_of, keys = group_rows(codes, [len(v.texts) for v in values])
    if id_column is not None:
        id_labels, id_codes = text_codes(table.column(id_column))
        ids = id_labels[id_codes]
    else:
        ids = np.arange(table.num_rows)
    truth = None
    if sensitive in columns:
        labels, code = text_codes(table.column(sensitive))
        truth = np.asarray(canonical_numeric_texts(labels), dtype=object)[code]
    return Targets(table.num_rows, ids, tuple_of.astype(np.int64), np.asarray(keys, dtype=np.int64), values,
                   numeric, truth)
