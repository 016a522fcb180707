"""A table summarized by its distinct rows: what an engine that cannot hand over its rows collects.

The privacy models, the utility metrics, the full-domain search, strict Mondrian and the DP
counts, sums, means and histograms read a table only through how many records hold each
combination of the columns they use. A :class:`FrequencyDataset` is that summary: one row per
distinct combination of those columns (the quasi-identifiers, the sensitive columns, a metric's
label) with the number of records that hold it, its *weight*. Every count veil takes from it is
weighted (:attr:`veil.data.dataset.Dataset.row_weights`), so each answer equals the one the same
code gives on the records themselves. Its size is the number of distinct combinations, not of
records: for ``veil check`` it is the class × sensitive-value count matrix (its non-zero cells).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa

from veil.data.dataset import Dataset
from veil.data.encoding import EncodedColumn
from veil.data.io import Table
from veil.errors import ColumnError


@dataclass(frozen=True, eq=False)
class WeightedColumn(EncodedColumn):
    """An encoded column of a :class:`FrequencyDataset`: its row ``i`` stands for ``weights[i]``
    records, and :meth:`counts` counts records.

    Attributes:
        weights: ``int64``, the records each row stands for.
    """

    weights: np.ndarray | None = None

    def counts(self) -> np.ndarray:
        """Number of records holding each category (weights summed)."""
        return np.bincount(self.codes, weights=self.weights, minlength=self.cardinality).astype(np.int64)


class FrequencyDataset(Dataset):
    """A :class:`~veil.data.dataset.Dataset` given as its distinct rows and their weights.

    Args:
        distinct: one row per distinct combination of the columns read (a pyarrow Table).
        weights: the number of records holding each row of ``distinct`` (every one at least 1).
        columns: every column of the table summarized, in its order (the ones not read included).
        kind: what the table was read from (``"csv"``, ``"parquet"``, ``"spark"``).
        delimiter: the CSV delimiter of the table, for the manifest.
        **roles: ``quasi_identifiers``, ``sensitive``, ``identifying``, ``hierarchies``,
            ``orders`` and ``missing_values``, as :class:`~veil.data.dataset.Dataset` takes them;
            identifying columns need not be among the columns read.

    Raises:
        ColumnError: a role names a column of neither ``distinct`` nor ``columns``, or a column that
            was not read is asked for.
        HierarchyError: a hierarchy does not cover its column's values.
    """

    def __init__(self, distinct: pa.Table, weights: np.ndarray, *, columns: Sequence[str], kind: str,
                 delimiter: str = ",", **roles):
        self._weights = np.ascontiguousarray(weights, dtype=np.int64)
        self._all_columns = list(columns)
        identifying = roles.pop("identifying", None)
        super().__init__(Table(distinct, kind, delimiter), **roles)
        self.row_weights = self._weights
        self._column_set = frozenset(self._all_columns)
        self.identifying = [] if identifying is None else ([identifying] if isinstance(identifying, str)
                                                           else list(identifying))
        self._check_roles()

    @property
    def columns(self) -> list[str]:
        return list(self._all_columns)

    @property
    def num_rows(self) -> int:
        return int(self._weights.sum())

    @property
    def distinct_rows(self) -> int:
        """Number of distinct rows held (what was collected)."""
        return len(self._weights)

    def column(self, name: str) -> EncodedColumn:
        """The column encoded as :meth:`Dataset.column` encodes it, its rows weighted.

        Raises:
            ColumnError: the column was not read into this summary.
        """
        if name not in self._encoded:
            if name not in self.table.columns:
                self._require_column(name, "requested")
                raise ColumnError(f"column '{name}' was not read into the summary of the table; name it among the "
                                  "columns the task reads.")
        return super().column(name)

    def _encode(self, names: Sequence[str]) -> None:
        """Encode the columns as :class:`~veil.data.dataset.Dataset` does, each one's rows weighted."""
        super()._encode(names)
        for name in names:
            plain = self._encoded[name]
            fields = {field.name: getattr(plain, field.name) for field in dataclasses.fields(plain)}
            self._encoded[name] = WeightedColumn(**{**fields, "weights": self._weights})

    def partition_strict(self, splitter, progress=None):
        """Run strict Mondrian's rounds on this summary (:class:`veil.anonymize.Mondrian` calls it).

        Args:
            splitter: the Mondrian splitter of this summary's distinct rows.
            progress: called as ``progress(records_in_final_partitions, records)`` each round.

        Returns:
            ``(partition, rounds, node, parent)``: the partition of every distinct row, the number
            of rounds, the split-tree node of every partition and the parent of every node.
        """
        return splitter.run(progress)
