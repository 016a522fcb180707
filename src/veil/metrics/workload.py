"""The relative error of a workload of random counting queries answered from the release."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

from veil.cells import Cells
from veil.classes import EquivalenceClasses
from veil.data.dataset import Dataset
from veil.data.encoding import MISSING_LABEL, canonical_number
from veil.errors import ParameterError
from veil.metrics.base import UtilityMetric, split_sizes

# At most this many query × class products are held in memory at once.
_BLOCK = 1 << 22
# Answer over distinct cell combinations when a group would take more products than this.
_GROUP_ABOVE = 1 << 17


@dataclass(frozen=True, eq=False)
class _Group:
    """The queries that constrain the same set of quasi-identifiers."""

    columns: tuple[int, ...]
    rows: np.ndarray  # which queries of the workload
    predicates: tuple[np.ndarray, ...]  # per column, float [len(rows) × cardinality] of 0/1


@dataclass(frozen=True, eq=False)
class _Workload:
    groups: tuple[_Group, ...]
    n_queries: int
    suppressed_share: np.ndarray  # per query, Π_j |pred_j| / cardinality_j
    truth: np.ndarray
    sanity: float


def _int_option(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ParameterError(f"the workload option '{name}' must be an integer of at least {minimum}, "
                             f"not {value!r}.")
    return int(value)


def _values(value) -> list:
    """A query's allowed values for one column: one value, or a collection of values."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        return [value]
    return list(value)


def _as_labels(values, numeric: bool) -> list[str]:
    """Query values spelled as a column's labels (numbers in canonical form: 25.0 is ``25``)."""
    out = []
    for v in values:
        if v is None or (isinstance(v, float) and np.isnan(v)):
            out.append(MISSING_LABEL)  # the missing category
            continue
        if numeric and not isinstance(v, str):
            try:
                v = canonical_number(float(v))
            except (TypeError, ValueError):
                pass
        out.append(str(v))
    return out


def _distinct(columns: list[np.ndarray], radices: list[int]) -> tuple[np.ndarray | None, np.ndarray]:
    """``(combination of each row, first row of each combination)`` of the code tuples, or
    ``(None, _)`` when the tuples do not fit a 63-bit key."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    span = 1
    for codes, radix in zip(columns, radices):
        span *= max(int(radix), 1)
        if span >= 1 << 62:
            return None, np.zeros(0, dtype=np.int64)
        key = key * max(int(radix), 1) + codes
    _, first, combo = np.unique(key, return_index=True, return_inverse=True)
    return combo.ravel(), first


def _overlap_rows(cells: Cells, weights: np.ndarray) -> np.ndarray:
    """``cells.overlap`` of each row of ``weights`` (``[rows × cardinality]`` → ``[rows × cells]``)."""
    rows, card = weights.shape
    if card <= rows:
        # Linear in the weights: overlap of each unit vector gives the membership matrix once.
        eye = np.eye(card)
        membership = np.stack([cells.overlap(eye[v]) for v in range(card)]) if card else \
            np.zeros((0, cells.n_cells))
        return weights @ membership
    return np.stack([cells.overlap(w) for w in weights]) if rows else np.zeros((0, cells.n_cells))


class QueryWorkload(UtilityMetric):
    """Mean relative error of a workload of counting queries (as in LeFevre, DeWitt and
    Ramakrishnan, "Workload-aware anonymization", KDD 2006, and Xiao and Tao's Anatomy, VLDB 2006).

    Each query is a conjunction over quasi-identifiers, each constrained to a set of its values.
    Random queries constrain 1 to ``max_attributes`` quasi-identifiers: on an ordered column a
    random contiguous range of values, on any other a random non-empty set of values. A query's
    true count is read from the original data; the release answers it assuming records are spread
    uniformly within their cells, ``Σ_{kept classes} size · Π_j overlap_j / coverage_j`` (the share
    of each cell's values the predicate holds), plus every suppressed record times
    ``Π_j |pred_j| / cardinality_j``. The value is ``mean |estimate − truth| / max(truth, sanity)``;
    lower is better, 0 at the original data. A random workload is drawn once per dataset with
    ``numpy.random.default_rng(seed)``, so every node of a search answers the same queries.

    Args:
        queries: the number of random queries (default 1000), or the queries themselves: a
            sequence of mappings from a quasi-identifier to the values it may take, e.g.
            ``[{"age": [30, 31, 32], "sex": ["Male"]}]`` (values as they appear in the data).
        max_attributes: the most quasi-identifiers one random query constrains (default 3).
        seed: seed of the generator that draws the workload (default 0).
        sanity: the smallest denominator of a relative error (default ``max(1, 0.001·n)``), so
            that queries with tiny true counts do not dominate.

    Raises:
        ParameterError: an option is out of range, or a given query is empty, names a column that
            is not a quasi-identifier, or a value the column does not hold (on evaluation).
    """

    name = "workload relative error"
    key = "workload"

    def __init__(self, queries: int | Sequence[Mapping[str, Sequence]] = 1000, max_attributes: int = 3,
                 seed: int = 0, sanity: float | None = None):
        super().__init__()
        if isinstance(queries, (int, np.integer)) and not isinstance(queries, bool):
            self.queries: int | list[dict[str, list]] = _int_option(queries, "queries", 1)
        elif isinstance(queries, Sequence) and not isinstance(queries, str) and len(queries) \
                and all(isinstance(q, Mapping) for q in queries):
            self.queries = [{str(k): _values(v) for k, v in q.items()} for q in queries]
        else:
            raise ParameterError("the workload option 'queries' must be a number of random queries or "
                                 f"a non-empty list of mappings column -> values, not {queries!r}.")
        self.max_attributes = _int_option(max_attributes, "max_attributes", 1)
        self.seed = _int_option(seed, "seed", 0)
        if sanity is not None and (isinstance(sanity, bool) or not isinstance(sanity, (int, float))
                                   or not np.isfinite(sanity) or sanity <= 0):
            raise ParameterError(f"the workload option 'sanity' must be a positive number, not {sanity!r}.")
        self.sanity = None if sanity is None else float(sanity)

    def __repr__(self) -> str:
        queries = self.queries if isinstance(self.queries, int) else f"<{len(self.queries)} given>"
        return (f"QueryWorkload(queries={queries}, max_attributes={self.max_attributes}, "
                f"seed={self.seed}, sanity={self.sanity})")

    # ---------------------------------------------------------------------------------------

    def _workload(self, dataset: Dataset) -> _Workload:
        cache = self._cache(dataset)
        if "workload" not in cache:
            cache["workload"] = self._build(dataset)
        return cache["workload"]

    def predicates(self, dataset: Dataset) -> list[dict[str, np.ndarray]]:
        """The workload on ``dataset``: per query, each constrained quasi-identifier's allowed
        values (as the column's labels)."""
        workload = self._workload(dataset)
        out: list[dict[str, np.ndarray]] = [{} for _ in range(workload.n_queries)]
        for group in workload.groups:
            for i, j in enumerate(group.columns):
                name = dataset.quasi_identifiers[j]
                labels = dataset.column(name).labels
                for row, pred in zip(group.rows, group.predicates[i]):
                    out[row][name] = labels[pred > 0]
        return out

    def _draw(self, dataset: Dataset) -> list[dict[int, np.ndarray]]:
        """Random queries: per query, column index -> 0/1 weight per code."""
        columns = [dataset.column(q) for q in dataset.quasi_identifiers]
        d = len(columns)
        rng = np.random.default_rng(self.seed)
        widest = min(self.max_attributes, d)
        drawn = []
        for _ in range(self.queries):
            k = int(rng.integers(1, widest + 1))
            chosen = sorted(int(j) for j in rng.choice(d, size=k, replace=False))
            query = {}
            for j in chosen:
                card = columns[j].cardinality
                pred = np.zeros(card)
                if columns[j].ordered:
                    lo, hi = sorted(int(v) for v in rng.integers(0, card, size=2))
                    pred[lo:hi + 1] = 1.0
                else:
                    size = int(rng.integers(1, card + 1))
                    pred[rng.choice(card, size=size, replace=False)] = 1.0
                query[j] = pred
            drawn.append(query)
        return drawn

    def _given(self, dataset: Dataset) -> list[dict[int, np.ndarray]]:
        """The queries the user gave, as column index -> 0/1 weight per code."""
        qis = dataset.quasi_identifiers
        built = []
        for number, query in enumerate(self.queries, start=1):
            if not query:
                raise ParameterError(f"workload query {number} constrains no column; name at least one.")
            out = {}
            for name, values in query.items():
                if name not in qis:
                    raise ParameterError(f"workload query {number} constrains '{name}', which is not a "
                                         f"quasi-identifier; use one of {', '.join(qis)}.")
                column = dataset.column(name)
                import pandas as pd  # its index matches the values given with the labels

                codes = pd.Index(column.labels).get_indexer(_as_labels(values, column.is_numeric))
                if (codes < 0).any():
                    bad = list(values)[int(np.flatnonzero(codes < 0)[0])]
                    raise ParameterError(f"workload query {number} asks for {name} = {bad!r}, a value "
                                         f"the column does not hold.")
                pred = np.zeros(column.cardinality)
                pred[codes] = 1.0
                out[qis.index(name)] = pred
            built.append(out)
        return built

    def _build(self, dataset: Dataset) -> _Workload:
        queries = self._draw(dataset) if isinstance(self.queries, int) else self._given(dataset)
        cards = [dataset.column(q).cardinality for q in dataset.quasi_identifiers]
        by_columns: dict[tuple[int, ...], list[int]] = {}
        share = np.ones(len(queries))
        for number, query in enumerate(queries):
            by_columns.setdefault(tuple(sorted(query)), []).append(number)
            for j, pred in query.items():
                share[number] *= pred.sum() / cards[j]
        groups = tuple(
            _Group(cols, np.array(rows, dtype=np.int64),
                   tuple(np.stack([queries[r][j] for r in rows]) for j in cols))
            for cols, rows in by_columns.items())
        n = dataset.num_rows
        sanity = self.sanity if self.sanity is not None else max(1.0, 0.001 * n)
        partial = _Workload(groups, len(queries), share, np.zeros(len(queries)), sanity)
        # The true counts are the answers of the original data: its level-0 classes, whose cells
        # are single values, answer exactly.
        base = EquivalenceClasses.from_dataset(dataset, track=())
        truth = self._answers(partial, base, base.sizes.astype(float), 0)
        return _Workload(groups, len(queries), share, truth, sanity)

    def _fractions(self, classes: EquivalenceClasses, group: _Group, i: int) -> np.ndarray:
        """For each query of ``group`` and each cell of its ``i``-th column, the share of the
        cell's values the query's predicate holds (``[queries × cells]``)."""
        j = group.columns[i]

        def compute(cells: Cells) -> np.ndarray:
            covered = _overlap_rows(cells, group.predicates[i])
            return covered / np.maximum(cells.coverage(), 1.0)

        return self._per_cells(classes, j, ("workload", group.columns, i), compute)

    def _answers(self, workload: _Workload, classes: EquivalenceClasses, kept: np.ndarray,
                 n_supp: int) -> np.ndarray:
        answers = np.empty(workload.n_queries)
        published = np.flatnonzero(kept > 0)
        weights = kept[published]
        keys = classes.keys[published]
        for group in workload.groups:
            fractions = [self._fractions(classes, group, i) for i in range(len(group.columns))]
            cells = [keys[:, j] for j in group.columns]
            combo_weights = weights
            if len(group.rows) * len(cells) * len(published) > _GROUP_ABOVE:
                # Only the distinct combinations of cells on these columns matter: answer over
                # them, weighted by their records, when that is fewer products.
                combo, first = _distinct(cells, [f.shape[1] for f in fractions])
                if combo is not None and 2 * len(first) < len(published):
                    combo_weights = np.bincount(combo, weights=weights, minlength=len(first))
                    cells = [c[first] for c in cells]
            step = max(1, _BLOCK // max(len(combo_weights), 1))
            for start in range(0, len(group.rows), step):
                block = slice(start, start + step)
                product = fractions[0][block][:, cells[0]]
                for i in range(1, len(cells)):
                    product *= fractions[i][block][:, cells[i]]
                answers[group.rows[block]] = product @ combo_weights
        if n_supp:
            answers += n_supp * workload.suppressed_share
        return answers

    def value(self, classes: EquivalenceClasses, suppressed: np.ndarray | None = None) -> float:
        kept, n_supp = split_sizes(classes, suppressed)
        workload = self._workload(classes.dataset)
        answers = self._answers(workload, classes, kept, n_supp)
        errors = np.abs(answers - workload.truth) / np.maximum(workload.truth, workload.sanity)
        return float(errors.mean())

    def loss_bound(self, classes: EquivalenceClasses) -> float:
        """``-inf``: none is proven. A coarser cell can answer a query better (errors of finer
        cells need not cancel the same way), so the error is not monotone above a node; only the
        useless bound 0 holds everywhere."""
        return float("-inf")
