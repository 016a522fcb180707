"""Contingency tables: a set of attributes, a hierarchy level for each, and the number of records
in each cell of those generalized values (:class:`ContingencyTable`), the marginals that
:mod:`veil.marginals` counts, publishes and fits its maximum-entropy estimate to.

Each attribute is read through its :class:`~veil.data.hierarchy.Generalization`
(:func:`attribute_domain`): a cell's code at one level, the code at a coarser level, the original
values it covers (:func:`cell_sizes`). A table is rolled up to coarser levels by
:meth:`ContingencyTable.project`, never by another pass over the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from veil.classes import group_rows, sum_by_group
from veil.data.dataset import Dataset
from veil.data.hierarchy import Generalization
from veil.errors import ColumnError

_KEY_LIMIT = 1 << 62

Variable = tuple[str, int]


def attribute_domain(dataset: Dataset, name: str) -> Generalization:
    """Column ``name`` of ``dataset`` as a :class:`~veil.data.hierarchy.Generalization`: its
    hierarchy, or the single level of its own values when it has none.

    The values are those present in the data (the column's categories), as every utility metric
    of veil counts them.

    Raises:
        ColumnError: the column does not exist.
    """
    gen = dataset.generalizations.get(name)
    if gen is not None:
        return gen
    column = dataset.column(name)
    lut = np.arange(column.cardinality, dtype=np.int32)[:, None]
    return Generalization(name, lut, [np.asarray(column.labels, dtype=object)])


def cell_sizes(domain: Generalization, level: int) -> np.ndarray:
    """The number of original values each cell of ``level`` covers (0 for a hierarchy node that
    covers no value of the data)."""
    return np.bincount(domain.lut[:, level], minlength=domain.radix(level))


@dataclass(frozen=True, eq=False)
class ContingencyTable:
    """A marginal: the number of records in each cell of some attributes at some levels.

    Build with :meth:`from_codes`, which sorts the cells and drops empty ones.

    Attributes:
        attributes: the attributes, in order.
        levels: the hierarchy level of each attribute.
        cells: ``int64 [cells × attributes]``, each non-empty cell's codes at those levels, in
            lexicographic order, no cell twice.
        counts: ``int64 [cells]``, the records in each cell (all ≥ 1).
    """

    attributes: tuple[str, ...]
    levels: tuple[int, ...]
    cells: np.ndarray
    counts: np.ndarray

    @classmethod
    def from_codes(cls, attributes: Sequence[str], levels: Sequence[int], columns: Sequence[np.ndarray],
                   radices: Sequence[int], weights: np.ndarray | None = None) -> "ContingencyTable":
        """The table of rows with the given codes (one array per attribute), each weighing
        ``weights`` records (default 1)."""
        n = len(columns[0]) if columns else 0
        weights = np.ones(n, dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
        group, keys = group_rows([np.asarray(c, dtype=np.int64) for c in columns], radices)
        counts = sum_by_group(group, weights, len(keys))
        keep = counts > 0
        return cls(tuple(attributes), tuple(int(v) for v in levels), keys[keep], counts[keep])

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    @property
    def variables(self) -> tuple[Variable, ...]:
        return tuple(zip(self.attributes, self.levels))

    def column(self, attribute: str) -> np.ndarray:
        return self.cells[:, self.attributes.index(attribute)]

    def project(self, attributes: Sequence[str], levels: Sequence[int],
                domains: Mapping[str, Generalization]) -> "ContingencyTable":
        """The table of these records over some of its attributes, each at its level or above.

        Raises:
            ColumnError: an attribute it lacks, or a level below the table's own.
        """
        columns, radices = [], []
        for name, level in zip(attributes, levels):
            if name not in self.attributes:
                raise ColumnError(f"the marginal over {', '.join(self.attributes)} has no attribute '{name}'.")
            own = self.levels[self.attributes.index(name)]
            if level < own:
                raise ColumnError(f"cannot refine attribute '{name}' from level {own} down to level {level}.")
            codes = self.column(name)
            if level != own:
                codes = domains[name].level_map(own, level)[codes]
            columns.append(codes)
            radices.append(domains[name].radix(level))
        if not columns:
            return ContingencyTable((), (), np.zeros((1, 0), dtype=np.int64), np.array([self.total]))
        return ContingencyTable.from_codes(attributes, levels, columns, radices, self.counts)

    def index(self, columns: Sequence[np.ndarray], domains: Mapping[str, Generalization]) -> np.ndarray:
        """The row of the cell holding each tuple whose codes at this table's levels are
        ``columns`` (one array per attribute), or −1 where that cell is empty."""
        if not self.attributes:
            return np.zeros(len(columns[0]) if columns else 1, dtype=np.int64)
        radices = [domains[a].radix(lv) for a, lv in self.variables]
        here, wanted = _row_keys([self.cells[:, j] for j in range(self.cells.shape[1])], list(columns), radices)
        if not len(here):
            return np.full(len(wanted), -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(here, wanted), len(here) - 1)
        return np.where(here[pos] == wanted, pos, -1)

    def lookup(self, columns: Sequence[np.ndarray], domains: Mapping[str, Generalization]) -> np.ndarray:
        """The count of the cell holding each tuple whose codes at this table's levels are
        ``columns``; 0 where that cell is empty."""
        row = self.index(columns, domains)
        return np.where(row >= 0, self.counts[np.maximum(row, 0)], 0)

    def frame(self, variables: Sequence[Variable], domains: Mapping[str, Generalization]) -> pd.DataFrame:
        """The cells as a frame: one column per variable (an attribute of the table at its level
        or a coarser one, named by :func:`variable_column`) and ``count``."""
        data = {}
        for name, level in variables:
            own = self.levels[self.attributes.index(name)]
            codes = self.column(name)
            if level != own:
                codes = domains[name].level_map(own, level)[codes]
            data[variable_column((name, level))] = codes.astype(np.int64)
        data["count"] = self.counts
        return pd.DataFrame(data)


def variable_column(variable: Variable) -> str:
    """The name of a variable's column in :meth:`ContingencyTable.frame`."""
    return f"{variable[0]}@{variable[1]}"


def _row_keys(table: list[np.ndarray], rows: list[np.ndarray], radices: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Comparable integer keys for the tuples of ``table`` (sorted) and of ``rows``."""
    span = 1
    for radix in radices:
        span *= max(radix, 1)
    if span < _KEY_LIMIT:
        return mixed_radix(table, radices), mixed_radix(rows, radices)
    # Tuples too wide for one int64: rank them among the table's tuples instead.
    here = pd.MultiIndex.from_arrays(table)
    wanted = here.get_indexer(pd.MultiIndex.from_arrays(rows))
    return np.arange(len(here), dtype=np.int64), np.where(wanted >= 0, wanted, -1).astype(np.int64)


def mixed_radix(columns: Sequence[np.ndarray], radices: Sequence[int]) -> np.ndarray:
    """One ``int64`` key per row of ``columns`` (one array of codes per attribute): the codes read
    as the digits of a number in the mixed radix ``radices``, the first column the most
    significant, so the keys sort as the rows do. The product of the radices must stay below
    2⁶³."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for codes, radix in zip(columns, radices):
        key *= max(int(radix), 1)
        key += codes
    return key
