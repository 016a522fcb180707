"""The maximum-entropy estimate of a table from generalized marginals, and its KL-divergence from
the data (Kifer and Gehrke, "Injecting utility into anonymized datasets", SIGMOD 2006).

A *marginal* here is a contingency table: a set of attributes, a hierarchy level for each, and
the number of records in each cell (:class:`ContingencyTable`). Kifer and Gehrke view the data
as a sample of a distribution ``F`` and a collection of published marginals as constraints on
``F``; the utility of the collection is ``KL(p ‖ q)``, where ``p`` is the empirical distribution
of the data and ``q`` the maximum-entropy distribution that satisfies every constraint (also the
maximum-likelihood log-linear model with those marginals as sufficient statistics).

**Generalized cells.** A constraint only speaks of the total mass of a generalized cell, so
``q`` spreads that mass uniformly over the original values the cell covers (the values present
in the data, as :class:`veil.metrics.KLDivergence` counts them). For each attribute only the
finest level used by any marginal matters: ``q(x) = Q(x at those levels) / Π_a |cell_a(x_a)|``,
where ``Q`` is the max-ent distribution on the coarse domain, and an attribute in no marginal is
uniform over all of its values.

**Closed form.** Each attribute at each level is a variable; a coarser level is a function of a
finer one, so every marginal may be *saturated* with the coarser levels of its attributes that
other marginals use, without changing what it says. When the saturated attribute sets form an
acyclic hypergraph (the collection is *decomposable*), a junction tree over them gives
``Q = Π_cliques P_C / Π_separators P_S``, read off the marginals themselves.

**Iterative proportional fitting** (Deming and Stephan 1940) finds ``Q`` otherwise, on the dense
coarse table while it fits in ``max_cells`` cells.

**KL on the observed tuples.** ``KL(p ‖ q) = Σ_x p(x) ln p(x) − Σ_x p(x) ln q(x)`` is summed
over the tuples that occur in the data, where ``p > 0``; the full domain is never enumerated.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Sequence

import numpy as np

from veil.classes import group_rows, sum_by_group
from veil.data.dataset import Dataset
from veil.data.hierarchy import Generalization
from veil.errors import ColumnError, InfeasibleError, ParameterError

if TYPE_CHECKING:  # pandas and SciPy are imported where they are used: a release's KL-divergence needs neither
    import pandas as pd

# Dense tables for iterative proportional fitting: 2**24 float64 cells is 128 MiB.
MAX_DENSE_CELLS = 1 << 24
DEFAULT_TOLERANCE = 1e-10
DEFAULT_MAX_ITER = 1000
_KEY_LIMIT = 1 << 62
# IPF cycles after which a fit that has not converged looks for cells that must be 0, and the
# most candidate cells that search (one linear program) may take.
_BOUNDARY_CHECK = 100
_SUPPORT_LP_CELLS = 200_000

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
        import pandas as pd

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
        return _mixed_radix(table, radices), _mixed_radix(rows, radices)
    # Tuples too wide for one int64: rank them among the table's tuples instead.
    import pandas as pd

    here = pd.MultiIndex.from_arrays(table)
    wanted = here.get_indexer(pd.MultiIndex.from_arrays(rows))
    return np.arange(len(here), dtype=np.int64), np.where(wanted >= 0, wanted, -1).astype(np.int64)


def _mixed_radix(columns: Sequence[np.ndarray], radices: Sequence[int]) -> np.ndarray:
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for codes, radix in zip(columns, radices):
        key *= max(int(radix), 1)
        key += codes
    return key


def neg_entropy(counts: np.ndarray) -> float:
    """``Σ p ln p`` of the distribution ``counts / Σ counts`` (0 for no records)."""
    counts = np.asarray(counts, dtype=float)
    n = counts.sum()
    if n <= 0:
        return 0.0
    positive = counts[counts > 0]
    return float((positive * np.log(positive)).sum() / n - np.log(n))


def kl_on_observed(weights: np.ndarray, log_q: np.ndarray, neg_entropy_p: float) -> float:
    """``KL(p ‖ q) = Σ_x p(x) ln p(x) − Σ_x p(x) ln q(x)`` over the observed tuples, in nats.

    Args:
        weights: the records of each observed tuple, or of each group of observed tuples that
            share one ``q`` (an equivalence class of a release).
        log_q: ``ln q`` of each such tuple (−inf where ``q`` is 0).
        neg_entropy_p: ``Σ_x p(x) ln p(x)`` of the observed tuples themselves.

    Returns:
        The divergence, ≥ 0: a difference that rounding leaves within 10⁻¹² of 0 (the data
        themselves) is 0; ``inf`` when ``q`` is 0 on a tuple that occurs.
    """
    weights = np.asarray(weights, dtype=float)
    n = weights.sum()
    if n <= 0:
        return 0.0
    held = weights > 0
    if np.any(np.isneginf(log_q[held])):
        return float("inf")
    cross = float(np.multiply(weights[held], log_q[held]).sum() / n)
    diff = neg_entropy_p - cross
    return 0.0 if diff <= 1e-12 * max(1.0, abs(neg_entropy_p)) else float(diff)


# ------------------------------------------------------------------------------------------
# The structure of a collection: saturated cliques and a junction tree


def drop_implied(marginals: Sequence[ContingencyTable]) -> list[ContingencyTable]:
    """The marginals that no other one implies, in their order.

    ``A`` implies ``B`` when ``A`` holds every attribute of ``B`` at the same or a finer level:
    ``B`` is then a roll-up of ``A`` and adds no constraint. Of two equal marginals the first is
    kept.
    """
    kept = []
    for i, b in enumerate(marginals):
        implied = False
        for j, a in enumerate(marginals):
            if i == j or not implies(a, b):
                continue
            if not implies(b, a) or j < i:
                implied = True
                break
        if not implied:
            kept.append(b)
    return kept


def implies(a: ContingencyTable, b: ContingencyTable) -> bool:
    """Whether marginal ``a`` holds every attribute of ``b`` at the same or a finer level."""
    levels = dict(a.variables)
    return all(name in levels and levels[name] <= level for name, level in b.variables)


def saturate(marginal: ContingencyTable, used: Mapping[str, Sequence[int]]) -> frozenset[Variable]:
    """The variables of ``marginal`` together with every coarser level of its attributes that
    ``used`` lists: functions of what it holds, so they add nothing to what it says."""
    out = set()
    for name, level in marginal.variables:
        out.update((name, lv) for lv in used[name] if lv >= level)
    return frozenset(out)


def junction_tree(cliques: Sequence[frozenset]) -> list[tuple[int, int]] | None:
    """A junction tree over ``cliques`` (no clique a subset of another), or ``None`` when they
    form a cyclic hypergraph (the collection is not decomposable).

    A maximum-weight spanning tree of the clique graph, weighted by the size of each
    intersection, is a junction tree whenever one exists (Jensen and Jensen, UAI 1994); it is one
    exactly when, for every variable, the cliques holding it form a connected subtree (the
    running intersection property), which is checked.

    Returns:
        The tree's edges ``(i, j)``; cliques that share nothing are joined by empty separators.
    """
    m = len(cliques)
    pairs = sorted(((len(cliques[i] & cliques[j]), i, j) for i, j in itertools.combinations(range(m), 2)),
                   key=lambda t: -t[0])
    parent = list(range(m))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    edges = []
    for _, i, j in pairs:
        ri, rj = root(i), root(j)
        if ri != rj:
            parent[ri] = rj
            edges.append((i, j))
    for variable in set().union(*cliques) if cliques else ():
        holding = {i for i in range(m) if variable in cliques[i]}
        inner = [(i, j) for i, j in edges if i in holding and j in holding]
        if len(inner) != len(holding) - 1:
            return None
    return edges


def structure(marginals: Sequence[ContingencyTable]) -> tuple[list[ContingencyTable], list[frozenset],
                                                             list[tuple[int, int]] | None]:
    """The marginals no other implies, their saturated variable sets, and a junction tree over
    those (``None`` when the collection is not decomposable)."""
    kept = drop_implied(list(marginals))
    used: dict[str, set[int]] = {}
    for m in kept:
        for name, level in m.variables:
            used.setdefault(name, set()).add(level)
    ordered = {name: sorted(levels) for name, levels in used.items()}
    cliques = [saturate(m, ordered) for m in kept]
    return kept, cliques, junction_tree(cliques)


def _finest(variables: frozenset) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The attributes of a saturated variable set (in sorted order), each at its finest level."""
    finest: dict[str, int] = {}
    for name, level in variables:
        finest[name] = min(level, finest.get(name, level))
    names = tuple(sorted(finest))
    return names, tuple(finest[n] for n in names)


@dataclass(frozen=True)
class Conditional:
    """The max-ent distribution of one attribute given the others.

    Attributes:
        attribute: the attribute.
        level: its finest level in the collection, whose cells ``probabilities`` spreads over
            (0 when it is in no marginal: then one group and one cell covering every value).
        given: the conditioning attributes that matter (its Markov blanket), with their levels.
        groups: ``int64 [groups × given]``, each combination of their cells that has positive
            probability.
        probabilities: ``float [groups × cells]``, the distribution of the attribute's cells in
            each group.
        cell_values: the number of original values each cell covers (``q`` is uniform over them).
    """

    attribute: str
    level: int
    given: tuple[Variable, ...]
    groups: np.ndarray
    probabilities: np.ndarray
    cell_values: np.ndarray

    def entropy(self) -> np.ndarray:
        """The Shannon entropy (nats) of the attribute's original values in each group: that of
        its cells plus, within each cell, the uniform spread over the values it covers."""
        p = self.probabilities
        logp = np.log(p, where=p > 0, out=np.zeros_like(p))
        spread = np.log(np.maximum(self.cell_values, 1))
        return -(p * logp).sum(axis=1) + (p * spread).sum(axis=1)

    def distinct(self) -> np.ndarray:
        """The number of original values with positive probability in each group."""
        return ((self.probabilities > 0) * self.cell_values).sum(axis=1)


# ------------------------------------------------------------------------------------------
# The estimate


class MaxEntEstimate:
    """The maximum-entropy distribution consistent with a collection of marginals (Kifer and
    Gehrke, SIGMOD 2006, Section 3), in closed form when the collection is decomposable and by
    iterative proportional fitting otherwise.

    Args:
        method: ``"auto"`` (the closed form when the collection is decomposable, IPF otherwise)
            or ``"ipf"`` (always IPF, e.g. to check the closed form).
        max_cells: the largest dense table iterative proportional fitting may build (and the
            largest set of combinations :meth:`conditional` may enumerate).
        tol: IPF stops when, over a whole cycle, no marginal of the fitted table is further
            than ``tol`` (in probability) from its target in any cell.
        max_iter: the most IPF cycles.

    Fitted attributes:
        attributes_: the attributes of the distribution (the keys of ``domains``).
        n_: the number of records every marginal counts.
        marginals_: the marginals that constrain it (those no other marginal implies).
        levels_: per attribute in some marginal, the finest level used.
        decomposable_: whether the collection is decomposable.
        method_: ``"closed form"`` or ``"iterative proportional fitting"``, as used.
        cliques_, tree_: the saturated variable sets of ``marginals_`` and the junction tree's
            edges (closed form only; ``tree_`` is ``None`` otherwise).
        table_: the dense coarse table ``Q`` over ``levels_`` (IPF only), axes in the order of
            ``levels_``.
        iterations_, residual_: IPF cycles run and the last cycle's largest residual (0 and 0.0
            for the closed form).

    Raises (from :meth:`fit`):
        ParameterError: marginals that count different numbers of records or that disagree on
            common attributes; a bad ``max_cells``, ``tol`` or ``max_iter``.
        ColumnError: a marginal names an attribute not in ``domains`` or a level beyond its
            hierarchy.
        InfeasibleError: the collection is not decomposable and its dense table would exceed
            ``max_cells`` (the size is named), or IPF does not converge within ``max_iter``
            cycles (the residual is named).
    """

    METHODS = ("auto", "ipf")

    def __init__(self, *, method: str = "auto", max_cells: int = MAX_DENSE_CELLS, tol: float = DEFAULT_TOLERANCE,
                 max_iter: int = DEFAULT_MAX_ITER):
        self.method = method
        self.max_cells = max_cells
        self.tol = tol
        self.max_iter = max_iter

    def __repr__(self) -> str:
        return (f"MaxEntEstimate(method={self.method!r}, max_cells={self.max_cells}, tol={self.tol}, "
                f"max_iter={self.max_iter})")

    # -- fitting ---------------------------------------------------------------------------

    def fit(self, marginals: Sequence[ContingencyTable], domains: Mapping[str, Generalization]) -> "MaxEntEstimate":
        """Fit the estimate of the distribution over ``domains``' attributes.

        Args:
            marginals: the collection (any order; implied marginals are ignored; none gives the
                uniform distribution).
            domains: every attribute of the distribution → its values and hierarchy
                (:func:`attribute_domain`).
        """
        self._check_parameters()
        self.domains_ = dict(domains)
        self.attributes_ = tuple(self.domains_)
        for m in marginals:
            self._check_marginal(m)
        totals = {m.total for m in marginals}
        if len(totals) > 1:
            raise ParameterError(f"the marginals count different numbers of records ({min(totals):,} and "
                                 f"{max(totals):,}); give marginals of one table.")
        # Without marginals nothing is known and the estimate is uniform.
        self.n_ = totals.pop() if totals else 0
        self.marginals_, self.cliques_, self.tree_ = structure(marginals)
        self._used: dict[str, list[int]] = {}
        for clique in self.cliques_:
            for name, level in clique:
                self._used.setdefault(name, [])
                if level not in self._used[name]:
                    self._used[name].append(level)
        self.levels_ = {name: min(levels) for name, levels in self._used.items()}
        self.decomposable_ = self.tree_ is not None
        self.table_ = None
        self.iterations_, self.residual_ = 0, 0.0
        if self.decomposable_ and self.method == "auto":
            self.method_ = "closed form"
            self._fit_closed_form()
        else:
            self.method_ = "iterative proportional fitting"
            self.tree_ = None
            self._fit_ipf()
        return self

    def _check_parameters(self) -> None:
        if self.method not in self.METHODS:
            raise ParameterError(f"the max-ent method is 'auto' or 'ipf', not {self.method!r}.")
        if not (isinstance(self.max_cells, (int, np.integer)) and self.max_cells >= 1):
            raise ParameterError(f"max_cells must be a whole number of at least 1, not {self.max_cells!r}.")
        if not (isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 1):
            raise ParameterError(f"max_iter must be a whole number of at least 1, not {self.max_iter!r}.")
        if not (isinstance(self.tol, (int, float)) and 0 < self.tol < 1):
            raise ParameterError(f"the IPF tolerance must lie between 0 and 1, not {self.tol!r}.")

    def _check_marginal(self, m: ContingencyTable) -> None:
        if not m.attributes:
            raise ParameterError("a marginal needs at least one attribute.")
        if len(set(m.attributes)) != len(m.attributes):
            raise ParameterError(f"the marginal over {', '.join(m.attributes)} names an attribute twice.")
        for name, level in m.variables:
            if name not in self.domains_:
                raise ColumnError(f"a marginal names '{name}', which is not an attribute of the table "
                                  f"({', '.join(self.attributes_)}).")
            height = self.domains_[name].height
            if not 0 <= level <= height:
                raise ColumnError(f"attribute '{name}' has levels 0 to {height}, not {level}.")

    def _fit_closed_form(self) -> None:
        self._clique_tables = [self._clique_table(c, m) for c, m in zip(self.cliques_, self.marginals_)]
        self._separator_tables = []
        for i, j in self.tree_:
            names, levels = _finest(self.cliques_[i] & self.cliques_[j])
            left = self._clique_tables[i].project(names, levels, self.domains_)
            right = self._clique_tables[j].project(names, levels, self.domains_)
            if not (np.array_equal(left.cells, right.cells) and np.array_equal(left.counts, right.counts)):
                raise ParameterError(f"the marginals over {', '.join(self.marginals_[i].attributes)} and over "
                                     f"{', '.join(self.marginals_[j].attributes)} disagree on "
                                     f"{', '.join(names)}; give marginals of one table.")
            self._separator_tables.append(left)

    def _clique_table(self, clique: frozenset, marginal: ContingencyTable) -> ContingencyTable:
        names, levels = _finest(clique)
        return marginal.project(names, levels, self.domains_)

    # -- iterative proportional fitting ----------------------------------------------------

    def _axes(self) -> tuple[list[str], list[int]]:
        names = [a for a in self.attributes_ if a in self.levels_]
        return names, [self.domains_[a].radix(self.levels_[a]) for a in names]

    def _fit_ipf(self) -> None:
        names, shape = self._axes()
        size = int(np.prod(shape, dtype=object))
        if size > self.max_cells:
            raise InfeasibleError(
                f"the collection is not decomposable and its maximum-entropy estimate needs a dense table of "
                f"{size:,} cells ({' × '.join(f'{a} {r}' for a, r in zip(names, shape))}), more than the limit "
                f"of {self.max_cells:,}; coarsen or drop a marginal, or raise max_cells.")
        # Uniform start over the cells that cover some value of the data (a hierarchy node may
        # cover none): the log of each cell's size lies in the span of the constraints, so IPF
        # from here reaches the same distribution as from the cell sizes.
        present = np.ones(shape, dtype=bool)
        for i, name in enumerate(names):
            held = cell_sizes(self.domains_[name], self.levels_[name]) > 0
            present &= held.reshape([-1 if j == i else 1 for j in range(len(shape))])
        start = present / present.sum()
        plans = [self._ipf_plan(m, names, shape) for m in self.marginals_]
        table, used, residual = self._cycles(start.copy(), plans, min(self.max_iter, _BOUNDARY_CHECK))
        if residual > self.tol:
            # Slow convergence: the estimate may lie on the boundary, where cells that every
            # marginal allows are 0 in every consistent distribution and IPF only creeps towards
            # 0 there. Without those cells it converges geometrically (Fienberg and Rinaldo 2012).
            support = self._support(plans, present)
            if support is not None and (present & ~support).any():
                table = np.where(support, start, 0.0)
            table, more, residual = self._cycles(table, plans, self.max_iter - used)
            used += more
        self.iterations_, self.residual_ = used, residual
        if residual > self.tol:
            raise InfeasibleError(
                f"iterative proportional fitting did not converge in {self.max_iter:,} cycles (largest marginal "
                f"residual {residual:.3g}, tolerance {self.tol:g}); raise max_iter or the tolerance, or give a "
                "decomposable collection.")
        self.table_ = table

    def _cycles(self, table: np.ndarray, plans, budget: int) -> tuple[np.ndarray, int, float]:
        """Up to ``budget`` IPF cycles; the cycles run and the last one's largest residual (how
        far a marginal was from its target before it was fitted)."""
        shape = table.shape
        residual, used = np.inf, 0
        for used in range(1, budget + 1):
            residual = 0.0
            for axes, index, target in plans:
                others = tuple(i for i in range(len(shape)) if i not in axes)
                current = np.bincount(index.ravel(), weights=table.sum(axis=others).ravel(), minlength=len(target))
                residual = max(residual, float(np.abs(current - target).max()))
                ratio = np.divide(target, current, out=np.zeros_like(target), where=current > 0)
                table *= ratio[index].reshape([shape[i] if i in axes else 1 for i in range(len(shape))])
            if residual <= self.tol:
                break
        return table, used, residual

    def _support(self, plans, present: np.ndarray) -> np.ndarray | None:
        """The cells some distribution consistent with the marginals makes positive (a bool
        table), or ``None`` when there are more than ``_SUPPORT_LP_CELLS`` candidates.

        One linear program: maximize ``Σ y`` subject to ``A t = λ b``, ``0 ≤ y ≤ 1``, ``y ≤ t``,
        ``t, λ ≥ 0``, where ``A t = b`` says that ``t`` has the marginals ``b``. Scaling a
        consistent ``t`` makes ``y = 1`` on its support, so the optimum is 1 exactly on the union
        of the supports.
        """
        shape = present.shape
        axes_all = len(shape)
        allowed = present.copy()
        for axes, index, target in plans:
            allowed &= (target[index] > 0).reshape([shape[i] if i in axes else 1 for i in range(axes_all)])
        cells = np.flatnonzero(allowed)
        n = len(cells)
        if n > _SUPPORT_LP_CELLS:
            return None
        import scipy.optimize
        import scipy.sparse

        rows, cols, b, offset = [], [], [], 0
        coords = np.unravel_index(cells, shape)
        for axes, index, target in plans:
            rows.append(offset + index[tuple(coords[i] for i in axes)])
            cols.append(np.arange(n))
            b.append(target)
            offset += len(target)
        membership = scipy.sparse.csr_matrix((np.ones(n * len(plans)), (np.concatenate(rows), np.concatenate(cols))),
                                             shape=(offset, n))
        eye = scipy.sparse.identity(n, format="csr")
        a_eq = scipy.sparse.hstack([membership, scipy.sparse.csr_matrix((offset, n)),
                                    scipy.sparse.csr_matrix(-np.concatenate(b)[:, None])])
        a_ub = scipy.sparse.hstack([-eye, eye, scipy.sparse.csr_matrix((n, 1))])
        result = scipy.optimize.linprog(np.concatenate([np.zeros(n), -np.ones(n), [0.0]]), A_ub=a_ub,
                                        b_ub=np.zeros(n), A_eq=a_eq, b_eq=np.zeros(offset),
                                        bounds=[(0, None)] * n + [(0, 1)] * n + [(0, None)], method="highs")
        if result.status != 0:
            return None
        support = np.zeros(shape, dtype=bool)
        support.flat[cells[result.x[n:2 * n] > 0.5]] = True
        return support

    def _ipf_plan(self, m: ContingencyTable, names: list[str], shape: list[int]):
        """For marginal ``m``: the table's axes it spans, the index of ``m``'s cell for each cell
        of those axes (an array of their shape), and ``m``'s probabilities, dense."""
        axes = tuple(sorted(names.index(a) for a in m.attributes))
        radices = [self.domains_[names[i]].radix(m.levels[m.attributes.index(names[i])]) for i in axes]
        index = np.zeros([shape[i] for i in axes], dtype=np.int64)
        for k, i in enumerate(axes):
            name = names[i]
            level = m.levels[m.attributes.index(name)]
            codes = self.domains_[name].level_map(self.levels_[name], level).astype(np.int64)
            index = index * radices[k] + codes.reshape([-1 if j == k else 1 for j in range(len(axes))])
        target = np.zeros(int(np.prod(radices)))
        ordered = [m.attributes.index(names[i]) for i in axes]
        target[_mixed_radix([m.cells[:, j] for j in ordered], radices)] = m.counts / self.n_
        return axes, index, target

    # -- reading the estimate --------------------------------------------------------------

    def _spread(self, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        """``Σ_a ln |cell_a(x_a)|`` for rows with level-0 codes ``columns``: the uniform spread of
        each coarse cell over the original values it covers."""
        n = len(next(iter(columns.values())))
        out = np.zeros(n)
        for name in self.attributes_:
            domain = self.domains_[name]
            if name in self.levels_:
                sizes = cell_sizes(domain, self.levels_[name])
                out += np.log(np.maximum(sizes, 1))[domain.lut[columns[name], self.levels_[name]]]
            else:
                out += np.log(domain.lut.shape[0])
        return out

    def _columns(self, codes) -> dict[str, np.ndarray]:
        if isinstance(codes, Mapping):
            missing = [a for a in self.attributes_ if a not in codes]
            if missing:
                raise ColumnError(f"give the codes of attribute '{missing[0]}'.")
            return {a: np.asarray(codes[a], dtype=np.int64) for a in self.attributes_}
        codes = np.asarray(codes, dtype=np.int64)
        if codes.ndim != 2 or codes.shape[1] != len(self.attributes_):
            raise ParameterError(f"give one column of codes per attribute ({len(self.attributes_)}).")
        return {a: codes[:, j] for j, a in enumerate(self.attributes_)}

    def log_prob(self, codes) -> np.ndarray:
        """``ln q(x)`` of tuples of original values (level-0 codes): an array
        ``[rows × attributes]`` in the order of ``attributes_``, or a mapping attribute → codes.
        ``-inf`` where ``q`` is 0."""
        columns = self._columns(codes)
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.tree_ is not None:
                out = np.zeros(len(columns[self.attributes_[0]]))
                for table in self._clique_tables:
                    out += self._log_share(table, columns)
                for table in self._separator_tables:
                    out -= self._log_share(table, columns)
                # A tuple outside a separator's support is outside its cliques' too: no inf − inf.
                out = np.where(np.isnan(out), -np.inf, out)
            else:
                names, _ = self._axes()
                index = tuple(self.domains_[a].lut[columns[a], self.levels_[a]] for a in names)
                out = np.log(self.table_[index])
        return out - self._spread(columns)

    def _log_share(self, table: ContingencyTable, columns: Mapping[str, np.ndarray]) -> np.ndarray:
        coarse = [self.domains_[a].lut[columns[a], lv] for a, lv in table.variables]
        return np.log(table.lookup(coarse, self.domains_) / self.n_)

    def kl_divergence(self, observed: ContingencyTable) -> float:
        """``KL(p ‖ q)`` in nats, where ``p`` is the distribution of ``observed`` (the data: every
        attribute of the estimate at level 0), summed over its tuples (see
        :func:`kl_on_observed`).

        Raises:
            ColumnError: ``observed`` lacks an attribute or is not at level 0.
        """
        if set(observed.attributes) != set(self.attributes_) or any(observed.levels):
            raise ColumnError("the observed table must hold every attribute of the estimate at level 0 ("
                              f"{', '.join(self.attributes_)}).")
        columns = {a: observed.column(a) for a in self.attributes_}
        return kl_on_observed(observed.counts, self.log_prob(columns), neg_entropy(observed.counts))

    def conditional(self, attribute: str) -> Conditional:
        """The max-ent distribution of ``attribute`` given every other attribute, for each
        combination of the others with positive probability.

        It depends only on the attribute's Markov blanket: in the closed form, the attributes of
        the cliques that hold it (their product over the junction subtree they form, divided by
        its separators, is ``q`` over their attributes); with IPF, every other axis of the table.
        An attribute in no marginal is uniform over its values in one group.

        Raises:
            ColumnError: ``attribute`` is not an attribute of the estimate.
            InfeasibleError: the combinations would exceed ``max_cells``.
        """
        if attribute not in self.attributes_:
            raise ColumnError(f"'{attribute}' is not an attribute of the estimate ({', '.join(self.attributes_)}).")
        domain = self.domains_[attribute]
        if attribute not in self.levels_:
            return Conditional(attribute, 0, (), np.zeros((1, 0), dtype=np.int64),
                               np.full((1, 1), 1.0), np.array([domain.lut.shape[0]]))
        level = self.levels_[attribute]
        sizes = cell_sizes(domain, level)
        if self.tree_ is not None:
            given, groups, probabilities = self._conditional_closed_form(attribute, level)
        else:
            given, groups, probabilities = self._conditional_dense(attribute, level)
        return Conditional(attribute, level, given, groups, probabilities, sizes)

    def _conditional_dense(self, attribute: str, level: int):
        names, shape = self._axes()
        axis = names.index(attribute)
        moved = np.moveaxis(self.table_, axis, -1).reshape(-1, shape[axis])
        mass = moved.sum(axis=1)
        held = np.flatnonzero(mass > 0)
        others = [n for n in names if n != attribute]
        other_shape = [s for i, s in enumerate(shape) if i != axis]
        groups = np.stack(np.unravel_index(held, other_shape), axis=1) if others else np.zeros((len(held), 0), int)
        given = tuple((n, self.levels_[n]) for n in others)
        return given, groups.astype(np.int64), moved[held] / mass[held, None]

    def _conditional_closed_form(self, attribute: str, level: int):
        # Every clique holding the attribute at some level holds it at its coarsest used level.
        top = max(self._used[attribute])
        holding = {i for i, c in enumerate(self.cliques_) if (attribute, top) in c}
        pending = [(e, i, j) for e, (i, j) in enumerate(self.tree_) if i in holding and j in holding]
        first = min(holding)
        frame = self._log_frame(self._clique_tables[first], self.cliques_[first])
        joined = {first}
        while pending:
            k = next(k for k, (_, i, j) in enumerate(pending) if i in joined or j in joined)
            e, i, j = pending.pop(k)
            new = j if i in joined else i
            joined.add(new)
            # By the running intersection property the new clique shares with the cliques joined
            # so far exactly its separator, which holds the attribute and so is never empty.
            separator = self.cliques_[i] & self.cliques_[j]
            keys = sorted(variable_column(v) for v in separator)
            right = self._log_frame(self._clique_tables[new], self.cliques_[new])
            divisor = self._log_frame(self._separator_tables[e], separator).rename(columns={"_w": "_s"})
            right = right.merge(divisor, on=keys)
            right["_w"] -= right.pop("_s")
            frame = frame.merge(right, on=keys, suffixes=("", "_r"))
            frame["_w"] += frame.pop("_w_r")
            if len(frame) > self.max_cells:
                raise InfeasibleError(
                    f"the maximum-entropy distribution of '{attribute}' given the other attributes needs "
                    f"{len(frame):,} combinations, more than the limit of {self.max_cells:,}; coarsen a marginal "
                    "that holds it, or raise max_cells.")
        finest: dict[str, int] = {}
        for clique in joined:
            for name, lv in self.cliques_[clique]:
                if name != attribute:
                    finest[name] = min(lv, finest.get(name, lv))
        given = tuple(sorted(finest.items()))
        if given:
            group, keys = group_rows([frame[variable_column(v)].to_numpy(np.int64) for v in given],
                                     [self.domains_[n].radix(lv) for n, lv in given])
        else:
            group, keys = np.zeros(len(frame), dtype=np.int64), np.zeros((1, 0), dtype=np.int64)
        # Scale each group by its largest term before exponentiating, so that nothing underflows.
        logw = frame["_w"].to_numpy()
        peak = np.full(len(keys), -np.inf)
        np.maximum.at(peak, group, logw)
        matrix = np.zeros((len(keys), self.domains_[attribute].radix(level)))
        np.add.at(matrix, (group, frame[variable_column((attribute, level))].to_numpy(np.int64)),
                  np.exp(logw - peak[group]))
        return given, keys, matrix / matrix.sum(axis=1, keepdims=True)

    def _log_frame(self, table: ContingencyTable, variables: frozenset) -> pd.DataFrame:
        """``table.frame`` over ``variables`` with ``_w``, the log of each cell's count."""
        frame = table.frame(sorted(variables), self.domains_)
        frame["_w"] = np.log(frame.pop("count").to_numpy(float))
        return frame


