"""Anonymized marginals of a table and collections of them (Kifer and Gehrke, "Injecting utility
into anonymized datasets", SIGMOD 2006, Section 3).

An *anonymized marginal* is a set of attributes, a hierarchy level for each, and the number of
records in each cell of those generalized values: a :class:`~veil.marginals.contingency.ContingencyTable`.
The attributes are the table's quasi-identifiers and its sensitive column; a full-domain
release of the table is the marginal over all of them, the sensitive column at level 0.

Every marginal is counted by :class:`MarginalCounter` from the table's equivalence classes (the
class core, :mod:`veil.classes`): the rows are grouped once, into the observed tuples and their
counts (the class × sensitive-value count matrix at level 0), and each marginal is a roll-up of
those tuples, never another pass over the rows.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from veil.classes import EquivalenceClasses
from veil.data.dataset import Dataset
from veil.data.hierarchy import Generalization
from veil.errors import ColumnError, ParameterError
from veil.marginals.contingency import ContingencyTable, attribute_domain
from veil.marginals.maxent import DEFAULT_MAX_ITER, DEFAULT_TOLERANCE, MAX_DENSE_CELLS, MaxEntEstimate


@dataclass(frozen=True)
class MarginalSpec:
    """Which marginal to publish: attributes and the hierarchy level of each.

    Attributes:
        attributes: the attributes, in the order they are published.
        levels: the level of each (0 is the original values).
    """

    attributes: tuple[str, ...]
    levels: tuple[int, ...]

    @classmethod
    def of(cls, attributes: Sequence[str], levels: Mapping[str, int] | Sequence[int] | None = None) -> "MarginalSpec":
        """A spec from attribute names and their levels (a mapping, defaulting to 0, or one level
        per attribute).

        Raises:
            ParameterError: no attribute, an attribute named twice, levels that are not whole
                numbers, or a level for an attribute the marginal lacks.
        """
        if isinstance(attributes, str) or not isinstance(attributes, Sequence) or not attributes:
            raise ParameterError("a marginal needs a list of one or more attributes.")
        names = tuple(str(a) for a in attributes)
        twice = [a for i, a in enumerate(names) if a in names[:i]]
        if twice:
            raise ParameterError(f"the marginal over {', '.join(names)} names '{twice[0]}' twice; name it once.")
        if levels is None:
            levels = {}
        if isinstance(levels, Mapping):
            extra = [a for a in levels if a not in names]
            if extra:
                raise ParameterError(f"a level is given for '{extra[0]}', which the marginal over "
                                     f"{', '.join(names)} does not hold.")
            values = [levels.get(a, 0) for a in names]
        else:
            values = list(levels)
            if len(values) != len(names):
                raise ParameterError(f"give one level per attribute of the marginal over {', '.join(names)}.")
        for name, value in zip(names, values):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise ParameterError(f"the level of '{name}' must be a whole number, not {value!r}.")
        return cls(names, tuple(int(v) for v in values))

    @property
    def label(self) -> str:
        """``age@1 × sex@0``: each attribute at its level."""
        return " × ".join(f"{a}@{lv}" for a, lv in zip(self.attributes, self.levels))

    @classmethod
    def of_table(cls, table: ContingencyTable) -> "MarginalSpec":
        return cls(table.attributes, table.levels)


class MarginalCounter:
    """The marginals of one dataset, counted from its class core.

    Args:
        dataset: the table.
        sensitive: its sensitive column that the marginals and the max-ent distribution hold
            beside the quasi-identifiers (Kifer and Gehrke's one sensitive attribute). Default:
            the dataset's sensitive column when it has exactly one, none when it has none.

    Attributes:
        dataset: the table.
        sensitive: the sensitive attribute, or ``None``.
        attributes: the quasi-identifiers, then the sensitive attribute.
        domains: each attribute's values and hierarchy (the single level of its values when it
            has no hierarchy).
        classes: the equivalence classes at level 0 (the only pass over the rows).
        observed: the observed tuples: every attribute at level 0 with its number of records.

    Raises:
        ColumnError: ``sensitive`` is not a sensitive column of the dataset, or the dataset has
            several and none was chosen.
    """

    def __init__(self, dataset: Dataset, sensitive: str | None = None):
        if sensitive is None:
            if len(dataset.sensitive) > 1:
                raise ColumnError(f"the table has {len(dataset.sensitive)} sensitive columns "
                                  f"({', '.join(dataset.sensitive)}); choose the one the marginals hold.")
            sensitive = dataset.sensitive[0] if dataset.sensitive else None
        elif sensitive not in dataset.sensitive:
            raise ColumnError(f"'{sensitive}' is not a sensitive column of the table; the sensitive columns are "
                              f"{', '.join(dataset.sensitive) or 'none'}.")
        self.dataset = dataset
        self.sensitive = sensitive
        self.attributes = tuple(dataset.quasi_identifiers) + ((sensitive,) if sensitive else ())
        self.domains: dict[str, Generalization] = {a: attribute_domain(dataset, a) for a in self.attributes}
        self.classes = EquivalenceClasses.from_dataset(dataset, track=(sensitive,) if sensitive else ())
        keys = self.classes.keys.astype(np.int64)
        if sensitive:
            matrix = self.classes.counts(sensitive)
            rows, values = np.nonzero(matrix)  # row-major: the tuples stay in lexicographic order
            cells = np.column_stack([keys[rows], values]).astype(np.int64)
            counts = matrix[rows, values].astype(np.int64)
        else:
            cells, counts = keys, self.classes.sizes.astype(np.int64)
        self.observed = ContingencyTable(self.attributes, (0,) * len(self.attributes), cells, counts)

    @property
    def n(self) -> int:
        return self.observed.total

    def check(self, spec: MarginalSpec) -> MarginalSpec:
        """``spec``, once every attribute and level is known to be valid for this table.

        Raises:
            ColumnError: an attribute the table lacks (the closest name is suggested), one that
                is neither a quasi-identifier nor the sensitive attribute, or a level outside
                its hierarchy.
        """
        for name, level in zip(spec.attributes, spec.levels):
            if name not in self.attributes:
                if name in self.dataset.columns:
                    raise ColumnError(f"column '{name}' is neither a quasi-identifier nor the sensitive column, so "
                                      "no marginal may hold it; give it one of those roles.")
                close = difflib.get_close_matches(name, list(self.attributes), n=1, cutoff=0.5)
                hint = f"; did you mean '{close[0]}'?" if close else f"; the attributes are {', '.join(self.attributes)}."
                raise ColumnError(f"the marginal column '{name}' does not exist{hint}")
            height = self.domains[name].height
            if not 0 <= level <= height:
                if height == 0:
                    raise ColumnError(f"column '{name}' has no hierarchy, so a marginal holds it at level 0 only, "
                                      f"not {level}.")
                raise ColumnError(f"column '{name}' has levels 0 to {height}, not {level}.")
        return spec

    def count(self, spec: MarginalSpec) -> ContingencyTable:
        """The marginal ``spec`` of the table, rolled up from the observed tuples.

        Raises:
            ColumnError: see :meth:`check`.
        """
        self.check(spec)
        return self.observed.project(spec.attributes, spec.levels, self.domains)

    def base_spec(self, levels: Mapping[str, int] | Sequence[int]) -> MarginalSpec:
        """The spec of a full-domain release: every quasi-identifier at its level (a mapping,
        default 0, or one level per quasi-identifier) and the sensitive attribute as it is.

        Raises:
            ColumnError: a level for a column that is not a quasi-identifier, or a level outside
                its hierarchy.
        """
        qis = self.dataset.quasi_identifiers
        if isinstance(levels, Mapping):
            extra = [q for q in levels if q not in qis]
            if extra:
                raise ColumnError(f"a base level is given for '{extra[0]}', which is not a quasi-identifier.")
            values = [int(levels.get(q, 0)) for q in qis]
        else:
            values = [int(v) for v in levels]
            if len(values) != len(qis):
                raise ColumnError(f"give one base level per quasi-identifier ({len(qis)}), not {len(values)}.")
        names = tuple(qis) + ((self.sensitive,) if self.sensitive else ())
        return self.check(MarginalSpec(names, tuple(values) + ((0,) if self.sensitive else ())))

    def labels(self, table: ContingencyTable) -> dict[str, np.ndarray]:
        """Each attribute's published value in every cell of ``table``."""
        return {name: np.asarray(self.domains[name].labels[level], dtype=object)[table.column(name)]
                for name, level in table.variables}

    def cell_text(self, table: ContingencyTable, row: int) -> str:
        """``age=20-29, sex=Female``: one cell of ``table`` as a reader sees it."""
        return ", ".join(f"{name}={self.domains[name].labels[level][table.cells[row, j]]}"
                         for j, (name, level) in enumerate(table.variables))


class MarginalCollection:
    """Anonymized marginals of one table, published together.

    Args:
        counter: the table's :class:`MarginalCounter`.
        marginals: the marginals (counted by ``counter``), in publishing order.
        max_cells: the largest dense table the max-ent estimate may build
            (:class:`~veil.marginals.maxent.MaxEntEstimate`).
        tol: the tolerance at which iterative proportional fitting stops.
        max_iter: the most cycles of iterative proportional fitting.

    Attributes:
        counter, marginals: as given.
    """

    def __init__(self, counter: MarginalCounter, marginals: Sequence[ContingencyTable], *,
                 max_cells: int = MAX_DENSE_CELLS, tol: float = DEFAULT_TOLERANCE, max_iter: int = DEFAULT_MAX_ITER):
        self.counter = counter
        self.marginals = tuple(marginals)
        self.max_cells, self.tol, self.max_iter = max_cells, tol, max_iter
        self._estimate: MaxEntEstimate | None = None

    @classmethod
    def from_specs(cls, counter: MarginalCounter, specs: Sequence[MarginalSpec], **params) -> "MarginalCollection":
        """Count each spec's marginal and collect them.

        Raises:
            ColumnError: see :meth:`MarginalCounter.check`.
        """
        return cls(counter, [counter.count(s) for s in specs], **params)

    def __len__(self) -> int:
        return len(self.marginals)

    def with_marginal(self, marginal: ContingencyTable) -> "MarginalCollection":
        """This collection with one more marginal, published last."""
        return MarginalCollection(self.counter, self.marginals + (marginal,), max_cells=self.max_cells,
                                  tol=self.tol, max_iter=self.max_iter)

    @property
    def sensitive(self) -> str | None:
        return self.counter.sensitive

    @property
    def estimate(self) -> MaxEntEstimate:
        """The fitted maximum-entropy estimate of the table from these marginals (fitted once).

        Raises:
            ParameterError, InfeasibleError: see :class:`~veil.marginals.maxent.MaxEntEstimate`.
        """
        if self._estimate is None:
            self._estimate = MaxEntEstimate(max_cells=self.max_cells, tol=self.tol, max_iter=self.max_iter).fit(
                self.marginals, self.counter.domains)
        return self._estimate

    def kl_divergence(self) -> float:
        """``KL(p ‖ q)`` of the data from the max-ent estimate, in nats, on the observed tuples."""
        return self.estimate.kl_divergence(self.counter.observed)
