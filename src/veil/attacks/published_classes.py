"""A released table as the minimality adversary reads it: its classes (rows whose published
quasi-identifiers print alike) and the sensitive values each holds. The attack
(:mod:`veil.attacks.minimality`) and its replay of veil's search
(:mod:`veil.attacks.search_replay`) both read it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from veil.classes import group_rows
from veil.data.encoding import MISSING_LABEL
from veil.data.io import read_table
from veil.errors import ColumnError, DataError

__all__ = ["PublishedClasses"]


def _texts(column: pa.ChunkedArray) -> np.ndarray:
    """A column as text, nulls (and NaN) as ``""``, numbers in their canonical spelling."""
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    if pa.types.is_floating(column.type):
        values = column.to_numpy(zero_copy_only=False).astype(float)
        out = np.array([MISSING_LABEL if not np.isfinite(v) else (str(int(v)) if float(v).is_integer()
                                                                   else repr(float(v))) for v in values],
                       dtype=object)
        return out
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        column = column.cast(pa.string())
    return np.asarray(pc.fill_null(column, MISSING_LABEL).to_pylist(), dtype=object)


@dataclass(eq=False)
class PublishedClasses:
    """A released table as the adversary reads it: its classes (rows with the same published
    quasi-identifiers) and the sensitive values each holds.

    Attributes:
        qis: the quasi-identifiers.
        sensitive: the sensitive column.
        labels: per quasi-identifier, the distinct published texts.
        keys: ``[classes × quasi-identifiers]``, each class's text (index into ``labels``).
        values: the distinct sensitive values (text), in sorted order.
        counts: ``[classes × values]``, each class's sensitive values.
        row_class: the class of every published row; ``row_value``: its value (index).
    """

    qis: list[str]
    sensitive: str
    labels: list[np.ndarray]
    keys: np.ndarray
    values: np.ndarray
    counts: np.ndarray
    row_class: np.ndarray
    row_value: np.ndarray

    @property
    def n_classes(self) -> int:
        return len(self.keys)

    @property
    def sizes(self) -> np.ndarray:
        return self.counts.sum(axis=1)

    def multiset(self) -> Counter:
        """The published table as a multiset of (quasi-identifier texts…, sensitive text) rows."""
        rows = [tuple(str(self.labels[j][self.keys[c, j]]) for j in range(len(self.qis))) + (str(self.values[v]),)
                for c, v in zip(self.row_class.tolist(), self.row_value.tolist())]
        return Counter(rows)

    @classmethod
    def read(cls, table, qis: Sequence[str], sensitive: str, *, delimiter: str | None = None,
             where: str = "the release") -> "PublishedClasses":
        """Read a released table (a path, a frame, a pyarrow Table or a veil Release).

        Raises:
            ColumnError: the table lacks a quasi-identifier or the sensitive column.
            DataError: the table cannot be read or has no rows.
        """
        from veil.anonymize.release import Release

        if isinstance(table, Release):
            data = table.table
        elif isinstance(table, pa.Table):
            data = table
        else:
            data = read_table(table, delimiter).data
        for name in list(qis) + [sensitive]:
            if name not in data.column_names:
                role = "sensitive column" if name == sensitive else "quasi-identifier"
                raise ColumnError(f"{where} has no column '{name}', which the configuration names as a {role}; "
                                  f"its columns are {', '.join(data.column_names)}.")
        if data.num_rows == 0:
            raise DataError(f"{where} has no rows; there is nothing to attack.")
        labels, codes = [], []
        for name in qis:
            texts = _texts(data.column(name))
            uniq, code = np.unique(texts.astype(str), return_inverse=True)
            labels.append(uniq.astype(object))
            codes.append(code.astype(np.int64))
        row_class, keys = group_rows(codes, [len(lab) for lab in labels])
        values, row_value = np.unique(_texts(data.column(sensitive)).astype(str), return_inverse=True)
        counts = np.zeros((len(keys), len(values)), dtype=np.int64)
        np.add.at(counts, (row_class, row_value), 1)
        return cls(list(qis), sensitive, labels, keys.astype(np.int64), values.astype(object), counts,
                   row_class.astype(np.int64), row_value.astype(np.int64))
