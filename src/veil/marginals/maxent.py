"""The maximum-entropy estimate of a table from generalized marginals, and its KL-divergence from
the data (Kifer and Gehrke, "Injecting utility into anonymized datasets", SIGMOD 2006).

A *marginal* here is a contingency table (:class:`~veil.marginals.contingency.ContingencyTable`).
Kifer and Gehrke view the data as a sample of a distribution ``F`` and a collection of published
marginals as constraints on ``F``; the utility of the collection is ``KL(p ‖ q)``, where ``p`` is
the empirical distribution of the data and ``q`` the maximum-entropy distribution that satisfies
every constraint (also the maximum-likelihood log-linear model with those marginals as sufficient
statistics).

**Generalized cells.** A constraint only speaks of the total mass of a generalized cell, so
``q`` spreads that mass uniformly over the original values the cell covers (the values present
in the data, as :class:`veil.metrics.KLDivergence` counts them). For each attribute only the
finest level used by any marginal matters: ``q(x) = Q(x at those levels) / Π_a |cell_a(x_a)|``,
where ``Q`` is the max-ent distribution on the coarse domain, and an attribute in no marginal is
uniform over all of its values.

**Closed form.** When the collection, its marginals saturated with the coarser levels other
marginals use, is *decomposable* (:mod:`veil.marginals.decomposable`), a junction tree over the
saturated attribute sets gives ``Q = Π_cliques P_C / Π_separators P_S``, read off the marginals
themselves.

**Iterative proportional fitting** (Deming and Stephan 1940; :mod:`veil.marginals.ipf`) finds
``Q`` otherwise, on the dense coarse table while it fits in ``max_cells`` cells.

**KL on the observed tuples.** ``KL(p ‖ q) = Σ_x p(x) ln p(x) − Σ_x p(x) ln q(x)`` is summed
over the tuples that occur in the data, where ``p > 0``; the full domain is never enumerated
(:func:`veil.metrics.information.kl_on_observed`, which the ``kl`` utility metric sums by too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from veil.classes import group_rows
from veil.data.hierarchy import Generalization
from veil.errors import ColumnError, InfeasibleError, ParameterError
from veil.marginals import ipf
from veil.marginals.contingency import ContingencyTable, Variable, cell_sizes, variable_column
from veil.marginals.decomposable import structure
from veil.metrics.information import kl_on_observed, neg_entropy

# Dense tables for iterative proportional fitting: 2**24 float64 cells is 128 MiB.
MAX_DENSE_CELLS = 1 << 24
DEFAULT_TOLERANCE = 1e-10
DEFAULT_MAX_ITER = 1000


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
                (:func:`~veil.marginals.contingency.attribute_domain`).
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
        table, used, residual = ipf.fit(self.marginals_, self.domains_, self.levels_, names, self.n_, tol=self.tol,
                                        max_iter=self.max_iter)
        self.iterations_, self.residual_ = used, residual
        if residual > self.tol:
            raise InfeasibleError(
                f"iterative proportional fitting did not converge in {self.max_iter:,} cycles (largest marginal "
                f"residual {residual:.3g}, tolerance {self.tol:g}); raise max_iter or the tolerance, or give a "
                "decomposable collection.")
        self.table_ = table

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
        :func:`~veil.metrics.information.kl_on_observed`).

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


