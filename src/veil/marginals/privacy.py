"""Privacy models of a collection of anonymized marginals (Kifer and Gehrke, "Injecting utility
into anonymized datasets", SIGMOD 2006, Section 4).

* **k-link anonymity** (Definition 4.1): in every marginal ``M_i``, the count of every cell of its
  non-sensitive attributes is 0 or at least k.
* **k-combinatorial anonymity** (Definition 4.2): for every tuple ``t`` of the domain of the
  non-sensitive attributes, either every table consistent with the marginals holds no record
  at ``t``, or some consistent table holds at least k there. It implies k-link anonymity (a
  marginal's cell count bounds every tuple in the cell, and the data is a consistent table).
* **MaxEnt ℓ-diversity** (Definition 4.3): the maximum-entropy distribution consistent with the
  marginals is ℓ-diverse: for every combination of the other attributes with positive
  probability, the distribution of the sensitive attribute is ℓ-diverse (entropy or distinct).

Each model is a small object whose :meth:`evaluate` returns a :class:`CollectionResult`: the
level reached, the verdict for the threshold, and the cells that fail.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.optimize
import scipy.sparse

from veil.classes import group_rows
from veil.errors import InfeasibleError, ParameterError
from veil.marginals.collection import MarginalCollection, MarginalSpec
from veil.marginals.contingency import ContingencyTable, variable_column
from veil.marginals.decomposable import structure
from veil.models.base import TOLERANCE, require

EXACT = "exact"
LP = "lp"
AUTO = "auto"
METHODS = (AUTO, EXACT, LP)
# Tables (variables of the integer program) up to this size are checked exactly by default.
EXACT_LIMIT = 2_000
LP_LIMIT = 100_000
# A real-valued table "reaches" a count when it is within this of it.
_SLACK = 1e-7


@dataclass(frozen=True)
class CellFailure:
    """One cell that fails a model.

    Attributes:
        cell: each attribute of the cell → its published value.
        value: the measure that fails: the cell's count (k-link), the most records any consistent
            table holds there (k-combinatorial, at most k − 1), or the group's ℓ.
        marginal: the index of the marginal holding the cell (k-link), else ``None``.
    """

    cell: dict[str, str]
    value: float
    marginal: int | None = None

    def text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.cell.items())


@dataclass(frozen=True)
class CollectionResult:
    """The outcome of one privacy model on a collection of marginals.

    Attributes:
        model: the model's name, e.g. ``"k-link anonymity"``.
        key: its short key, e.g. ``"k_link"``.
        threshold: the k or ℓ checked.
        level: the level the collection reaches (largest k met, smallest ℓ over groups), or
            ``None`` where the model gives a verdict only (k-combinatorial) or has nothing to
            measure (k-link without a non-sensitive cell).
        passed: whether the threshold is met.
        failures: the failing cells, worst first.
        method: how a k-combinatorial verdict was reached, ``"exact"`` or ``"lp"`` (the LP
            relaxation); ``None`` for the other models, which are computed exactly.
        note: a sentence on how to read the verdict, or ``None``.
        details: more figures for the manifest (the ℓ-diversity variant, the number of groups
            or tuples checked).
    """

    model: str
    key: str
    threshold: float
    level: float | None
    passed: bool
    failures: tuple[CellFailure, ...] = ()
    method: str | None = None
    note: str | None = None
    details: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {"model": self.model, "threshold": self.threshold, "level": self.level, "passed": self.passed,
               "failures": len(self.failures)}
        if self.method is not None:
            out["method"] = self.method
        if self.failures:
            first = self.failures[0]
            out["first_failure"] = {"cell": first.cell, "value": first.value, "marginal": first.marginal}
        if self.note:
            out["note"] = self.note
        return {**out, **self.details}


def _whole(value, name: str, minimum: int = 1) -> int:
    require(isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= minimum,
            f"{name} must be a whole number of at least {minimum}, not {value!r}.")
    return int(value)


def _non_sensitive(marginal: ContingencyTable, sensitive: str | None, collection: MarginalCollection):
    names = [a for a in marginal.attributes if a != sensitive]
    if not names:
        return None
    levels = [marginal.levels[marginal.attributes.index(a)] for a in names]
    return marginal.project(names, levels, collection.counter.domains)


class KLinkAnonymity:
    """k-link anonymity (Kifer and Gehrke 2006, Definition 4.1): every cell of every marginal's
    non-sensitive attributes holds 0 or at least k records. A marginal over the sensitive
    attribute alone has no such cell.

    Args:
        k: the threshold (≥ 1).

    Raises:
        ParameterError: ``k`` is not a whole number ≥ 1.
    """

    name = "k-link anonymity"
    key = "k_link"

    def __init__(self, k: int):
        self.k = _whole(k, "k")

    def __repr__(self) -> str:
        return f"KLinkAnonymity({self.k})"

    def evaluate(self, collection: MarginalCollection) -> CollectionResult:
        """The smallest non-zero cell count (the largest k met) and the cells below k."""
        failures, level = [], float("inf")
        for index, marginal in enumerate(collection.marginals):
            table = _non_sensitive(marginal, collection.sensitive, collection)
            if table is None:
                continue
            level = min(level, float(table.counts.min()))
            for row in np.flatnonzero(table.counts < self.k):
                failures.append(CellFailure(dict(zip(table.attributes, self._labels(collection, table, row))),
                                            float(table.counts[row]), index))
        failures.sort(key=lambda f: (f.value, f.marginal))
        # Without a non-sensitive cell there is no count to bound: no level.
        return CollectionResult(self.name, self.key, self.k, None if level == float("inf") else level,
                                not failures, tuple(failures))

    @staticmethod
    def _labels(collection: MarginalCollection, table: ContingencyTable, row: int) -> list[str]:
        domains = collection.counter.domains
        return [str(domains[a].labels[lv][table.cells[row, j]]) for j, (a, lv) in enumerate(table.variables)]


class MaxEntLDiversity:
    """MaxEnt ℓ-diversity (Kifer and Gehrke 2006, Definition 4.3): the maximum-entropy
    distribution consistent with the marginals is ℓ-diverse.

    For every combination of the other attributes with positive max-ent probability, the
    conditional distribution of the sensitive attribute (uniform over the values of a
    generalized cell) must have entropy ≥ ln ℓ (``variant="entropy"``) or at least ℓ values with
    positive probability (``"distinct"``). The conditional depends only on the attributes the
    sensitive one shares a marginal with (see :meth:`veil.marginals.maxent.MaxEntEstimate.conditional`).

    Args:
        l: the threshold (≥ 1).
        variant: ``"entropy"`` or ``"distinct"``.

    Raises:
        ParameterError: ``l`` < 1 or an unknown variant.
    """

    name = "MaxEnt ℓ-diversity"
    key = "maxent_l_diversity"
    VARIANTS = ("entropy", "distinct")

    def __init__(self, l: float, variant: str = "entropy"):
        require(isinstance(l, (int, float, np.integer, np.floating)) and not isinstance(l, bool) and l >= 1,
                f"ℓ must be a number of at least 1, not {l!r}.")
        require(variant in self.VARIANTS, f"the ℓ-diversity variant is 'entropy' or 'distinct', not {variant!r}.")
        self.l = float(l)
        self.variant = variant

    def __repr__(self) -> str:
        return f"MaxEntLDiversity({self.l:g}, variant={self.variant!r})"

    def evaluate(self, collection: MarginalCollection) -> CollectionResult:
        """The smallest ℓ over the groups and the groups below the threshold.

        Raises:
            ParameterError: the table has no sensitive attribute.
            InfeasibleError: the max-ent estimate or its conditional exceeds its limits.
        """
        sensitive = collection.sensitive
        if sensitive is None:
            raise ParameterError("MaxEnt ℓ-diversity needs a sensitive column; give the table one.")
        conditional = collection.estimate.conditional(sensitive)
        if self.variant == "entropy":
            levels = np.exp(conditional.entropy())
            failing = np.log(levels) < np.log(self.l) - TOLERANCE
        else:
            levels = conditional.distinct().astype(float)
            failing = levels < self.l
        domains = collection.counter.domains
        order = np.flatnonzero(failing)[np.argsort(levels[failing], kind="stable")]
        failures = tuple(
            CellFailure({a: str(domains[a].labels[lv][conditional.groups[g, j]])
                         for j, (a, lv) in enumerate(conditional.given)}, float(levels[g]))
            for g in order)
        name = f"MaxEnt {self.variant} ℓ-diversity"
        return CollectionResult(name, self.key, self.l, float(levels.min()), not failures, failures,
                                details={"variant": self.variant, "groups": int(len(levels))})


class KCombinatorialAnonymity:
    """k-combinatorial anonymity (Kifer and Gehrke 2006, Definition 4.2).

    A *consistent table* gives every tuple of the attributes a whole number of records so that
    each marginal's cells hold their published counts. For each tuple ``t`` of the non-sensitive
    attributes (generalized to the finest level any marginal uses; finer tuples inside one cell
    behave alike, since any table may put a cell's records on any one of them), let ``T(t)`` be
    its records summed over the sensitive values. The collection fails at ``t`` when some
    consistent table has ``T(t) ≥ 1`` but none has ``T(t) ≥ k``.

    **Decomposable collections** whose sensitive attribute lies in at most one marginal (after
    the implied ones are dropped) are decided in closed form. Summing that marginal over the
    sensitive values leaves a decomposable collection of the non-sensitive attributes, whose
    consistent tables reach, at any tuple, the smallest count of the marginal cells holding it
    (the upper bound of Dobra and Fienberg, PNAS 2000, which whole tables attain): the collection
    is then k-combinatorially anonymous exactly when it is k-link anonymous.

    **Otherwise** the tuples that every marginal allows are enumerated (the consistent tables'
    cells) and most are decided by bounds: the data is a consistent table, so tuples it holds k
    times pass; no table holds more at a tuple than the smallest marginal count over it, nor more
    than the sum over the sensitive values of each cell's smallest count, so tuples with a bound
    below k cannot reach k; and when the collection is decomposable, some whole table holds any
    one cell's smallest count (Dobra and Fienberg), which decides more tuples. The rest go to
    SciPy's HiGHS solver: ``method="exact"`` solves integer programs (``scipy.optimize.milp``),
    each of which maximizes how many undecided tuples one table brings to k (then to 1), until
    none is left or the optimum is 0, which proves the rest unreachable; ``method="lp"`` answers
    the *LP relaxation* instead, where a table may hold fractions of records (linear programs
    that each bring as many undecided tuples to k as one table can, then one per tuple left, each
    solution deciding every tuple it reaches). The relaxation can miss
    a failure (a fractional table reaches k where no whole one does) and can report one the exact
    check would not (a fractional table is positive where every whole one is 0), so its verdict
    is labelled as such. ``"auto"`` (the default) is exact up to ``exact_limit`` table cells and
    the relaxation up to ``lp_limit``.

    Args:
        k: the threshold (≥ 1).
        method: ``"auto"``, ``"exact"`` or ``"lp"``.
        exact_limit: the most table cells (variables) checked exactly.
        lp_limit: the most table cells checked at all.

    Raises:
        ParameterError: a bad ``k``, method or limit.
    """

    name = "k-combinatorial anonymity"
    key = "k_combinatorial"

    def __init__(self, k: int, method: str = AUTO, exact_limit: int = EXACT_LIMIT, lp_limit: int = LP_LIMIT):
        self.k = _whole(k, "k")
        require(method in METHODS, f"the k-combinatorial method is 'auto', 'exact' or 'lp', not {method!r}.")
        self.method = method
        self.exact_limit = _whole(exact_limit, "exact_limit")
        self.lp_limit = _whole(lp_limit, "lp_limit")

    def __repr__(self) -> str:
        return f"KCombinatorialAnonymity({self.k}, method={self.method!r})"

    def evaluate(self, collection: MarginalCollection) -> CollectionResult:
        """The verdict and the failing tuples.

        Raises:
            InfeasibleError: the consistent tables have more cells than the method allows (the
                message says which answer a larger domain gets), or the solver fails.
        """
        counter = collection.counter
        sensitive = collection.sensitive
        marginals, cliques, tree = structure(collection.marginals)
        holding = sum(any(name == sensitive for name, _ in clique) for clique in cliques)
        if tree is not None and holding <= 1:
            return self._closed_form(MarginalCollection(counter, marginals))
        limit = self.exact_limit if self.method == EXACT else self.lp_limit
        system = _System(marginals, counter.domains, sensitive, limit, self.method, decomposable=tree is not None)
        size = system.n_variables
        method = self.method if self.method != AUTO else (EXACT if size <= self.exact_limit else LP)
        system.witness(counter.observed)
        reach_k, reach_1 = system.decide(self.k, method)
        failing = np.flatnonzero(reach_1 & ~reach_k)
        failing = failing[np.argsort(system.best[failing], kind="stable")]
        failures = tuple(CellFailure(system.tuple_cell(t), float(system.best[t])) for t in failing)
        note = None
        if method == LP:
            note = (f"the tables consistent with the marginals have {size:,} cells, more than the exact check's "
                    f"limit of {self.exact_limit:,}, so the LP relaxation's answer is given: tables may hold "
                    "fractions of records." if self.method == AUTO else
                    "the LP relaxation's answer: tables may hold fractions of records.")
        decided = "integer programs" if method == EXACT else "LP relaxation"
        return CollectionResult(self.name, self.key, self.k, None, not failures, failures, method, note,
                                details={"decided_by": f"bounds and {decided}", "tuples": int(system.n_tuples),
                                         "cells": int(size), "solved": system.solved})

    def _closed_form(self, collection: MarginalCollection) -> CollectionResult:
        """The verdict of a decomposable collection whose sensitive attribute lies in at most one
        marginal: that of k-link anonymity, each failing cell holding failing tuples."""
        link = KLinkAnonymity(self.k).evaluate(collection)
        failures = tuple(CellFailure(f.cell, f.value) for f in link.failures)
        n = collection.counter.n
        if link.level is None and 0 < n < self.k:
            # No marginal holds a non-sensitive attribute: any tuple may hold all n records.
            failures = (CellFailure({}, float(n)),)
        return CollectionResult(self.name, self.key, self.k, None, not failures, failures, EXACT,
                                details={"decided_by": "closed form (decomposable; Dobra and Fienberg 2000)"})


def refusal(result: CollectionResult, collection: MarginalCollection) -> str:
    """One sentence saying why ``collection`` fails ``result``'s model and what to change."""
    failure = result.failures[0]
    more = len(result.failures) - 1
    unit = {"k_link": "cell", "k_combinatorial": "tuple"}.get(result.key, "group")
    others = f" (and {more} more {unit}{'s' if more != 1 else ''})" if more else ""
    if result.key == "k_link":
        label = MarginalSpec.of_table(collection.marginals[failure.marginal]).label
        return (f"marginal {failure.marginal + 1} ({label}) fails {result.threshold}-link anonymity: its cell "
                f"{failure.text()} holds {failure.value:g} record{'s' if failure.value != 1 else ''}{others}; "
                "coarsen that marginal or drop it.")
    if result.key == "k_combinatorial":
        how = "the LP relaxation" if result.method == "lp" else "the exact check"
        return (f"the marginals fail {result.threshold}-combinatorial anonymity by {how}: some table consistent "
                f"with them holds {failure.text() or 'some tuple'} between 1 and {result.threshold - 1} times and none "
                f"holds it {result.threshold} times{others}; coarsen or drop a marginal that holds those attributes.")
    sensitive = collection.sensitive
    return (f"the marginals fail {result.model} (ℓ = {result.threshold:g}): where {failure.text() or 'anything'}, "
            f"the maximum-entropy distribution of {sensitive} reaches ℓ = {failure.value:.3g} only{others}; coarsen "
            f"or drop a marginal that holds {sensitive}.")


class _System:
    """The consistent tables of a collection as a linear system ``A x = b, x ≥ 0``: one variable
    per cell (every attribute of the marginals at its finest level) that every marginal allows,
    one equation per cell of each marginal; each variable belongs to one non-sensitive tuple."""

    def __init__(self, marginals: list[ContingencyTable], domains, sensitive: str | None, limit: int, method: str,
                 decomposable: bool):
        self.domains = domains
        self.decomposable = decomposable
        self.solved = 0
        self.marginals = marginals
        self.sensitive = sensitive
        _, cliques, _ = structure(marginals)
        self.levels: dict[str, int] = {}
        for name, level in set().union(*cliques) if cliques else ():
            self.levels[name] = min(level, self.levels.get(name, level))
        frame = None
        for m, clique in zip(marginals, cliques):
            part = m.frame(sorted(clique), domains).drop(columns="count")
            frame = part if frame is None else _join(frame, part, limit, method)
        if frame is not None and len(frame) > limit:
            raise _too_large(len(frame), limit, method)
        self.names = sorted(self.levels)
        self.n_variables = len(frame) if frame is not None else 0
        cols = {n: frame[variable_column((n, self.levels[n]))].to_numpy(np.int64) for n in self.names}
        rows, b, offset = [], [], 0
        # The smallest count of a marginal cell holding each cell: no table holds more there.
        self.cell_bound = np.full(self.n_variables, np.inf)
        for m in marginals:
            coarse = [domains[a].level_map(self.levels[a], lv)[cols[a]] for a, lv in m.variables]
            index = m.index(coarse, domains)
            self.cell_bound = np.minimum(self.cell_bound, m.counts[index])
            rows.append(index + offset)
            offset += len(m.counts)
            b.append(m.counts)
        self.A = None
        if rows:
            self.A = scipy.sparse.csr_matrix(
                (np.ones(len(rows) * self.n_variables), (np.concatenate(rows), np.tile(np.arange(self.n_variables),
                                                                                          len(rows)))),
                shape=(offset, self.n_variables))
            self.b = np.concatenate(b).astype(float)
        self.qi = [n for n in self.names if n != sensitive]
        if self.qi and self.n_variables:
            self.tuple_of, self.tuple_keys = group_rows([cols[n] for n in self.qi],
                                                        [domains[n].radix(self.levels[n]) for n in self.qi])
        else:
            # No non-sensitive attribute in any marginal: the whole domain is one tuple.
            self.tuple_of = np.zeros(self.n_variables, dtype=np.int64)
            self.tuple_keys = np.zeros((1, len(self.qi)), dtype=np.int64)
        self.n_tuples = len(self.tuple_keys)
        # The most records a consistent table found so far holds at each tuple.
        self.best = np.zeros(self.n_tuples)

    def _coarse(self, name: str, level: int) -> np.ndarray:
        """Each tuple's code of ``name`` at ``level``."""
        j = self.qi.index(name)
        return self.domains[name].level_map(self.levels[name], level)[self.tuple_keys[:, j]]

    def witness(self, table: ContingencyTable) -> None:
        """Record the records the data itself (a consistent table) holds at each tuple."""
        if not self.qi:
            self.best[:] = table.total
            return
        counts = table.project(self.qi, [self.levels[n] for n in self.qi], self.domains)
        held = counts.lookup([self.tuple_keys[:, j] for j in range(len(self.qi))], self.domains)
        self.best = np.maximum(self.best, held)

    def bound(self) -> np.ndarray:
        """At each tuple, a number of records no consistent table exceeds: the fewest records of a
        marginal cell holding it (its sensitive attribute summed out), and the sum over its cells
        of each cell's bound."""
        bound = np.bincount(self.tuple_of, weights=self.cell_bound, minlength=self.n_tuples)
        for m in self.marginals:
            names = [a for a in m.attributes if a != self.sensitive]
            if not names:
                bound = np.minimum(bound, m.total)
                continue
            levels = [m.levels[m.attributes.index(a)] for a in names]
            table = m.project(names, levels, self.domains)
            bound = np.minimum(bound, table.lookup([self._coarse(a, lv) for a, lv in zip(names, levels)],
                                                   self.domains))
        return bound

    def tuple_cell(self, t: int) -> dict[str, str]:
        return {n: str(self.domains[n].labels[self.levels[n]][self.tuple_keys[t, j]]) for j, n in enumerate(self.qi)}

    def _record(self, x: np.ndarray) -> np.ndarray:
        sums = np.bincount(self.tuple_of, weights=x, minlength=self.n_tuples)
        self.best = np.maximum(self.best, sums)
        return sums

    def decide(self, k: int, method: str) -> tuple[np.ndarray, np.ndarray]:
        """For each tuple: whether some consistent table holds ≥ k records there, and whether
        some holds ≥ 1 (decided where it matters: for tuples that reach k it is true)."""
        slack = 0.0 if method == EXACT else _SLACK
        cover = self._cover_exact if method == EXACT else self._cover_lp
        if self.decomposable and self.n_variables:
            # Some whole table holds any one cell's bound (Dobra and Fienberg 2000).
            np.maximum.at(self.best, self.tuple_of, self.cell_bound)
        if self.A is not None:
            cover(k, (self.best < k - slack) & (self.bound() >= k))
            cover(1, self.best < 1 - slack)
        return self.best >= k - slack, self.best >= 1 - slack

    def _cover_exact(self, target: int, todo: np.ndarray) -> None:
        """Integer programs, each bringing as many open tuples to ``target`` as one table can,
        until every one is reached or the optimum is 0."""
        n, nt = self.n_variables, self.n_tuples
        member = scipy.sparse.csr_matrix((np.ones(n), (self.tuple_of, np.arange(n))), shape=(nt, n))
        todo = todo.copy()
        while todo.any():
            open_ids = np.flatnonzero(todo)
            m = len(open_ids)
            # Variables: x ≥ 0 whole per cell, then z ∈ {0, 1} per open tuple with Σ_{cells of t} x ≥ target·z_t.
            link = scipy.sparse.hstack([member[open_ids], scipy.sparse.diags(np.full(m, -float(target)))])
            equal = scipy.sparse.hstack([self.A, scipy.sparse.csr_matrix((self.A.shape[0], m))])
            result = scipy.optimize.milp(
                np.concatenate([np.zeros(n), -np.ones(m)]),
                constraints=[scipy.optimize.LinearConstraint(equal, self.b, self.b),
                             scipy.optimize.LinearConstraint(link, 0, np.inf)],
                integrality=np.ones(n + m),
                bounds=scipy.optimize.Bounds(np.zeros(n + m), np.concatenate([np.full(n, np.inf), np.ones(m)])))
            if result.status != 0 or result.x is None:
                raise InfeasibleError(f"the k-combinatorial integer program failed ({result.message}); method 'lp' "
                                      "gives the LP relaxation's answer instead.")
            self.solved += 1
            reached = todo & (self._record(np.round(result.x[:n])) >= target)
            if not reached.any():
                return
            todo &= ~reached

    def _cover_lp(self, target: int, todo: np.ndarray) -> None:
        """Linear programs that bring as many open tuples to ``target`` as one fractional table
        can, while each reaches some; then one per tuple left, maximizing its records. Every
        solution is a consistent table, so it decides each tuple it reaches: the verdict is that
        of one program per tuple, with far fewer programs when most tuples can be reached."""
        n, nt = self.n_variables, self.n_tuples
        member = scipy.sparse.csr_matrix((np.ones(n), (self.tuple_of, np.arange(n))), shape=(nt, n))
        todo = todo & (self.best < target - _SLACK)
        while todo.any():
            open_ids = np.flatnonzero(todo)
            m = len(open_ids)
            # As in the integer program, with z_t ∈ [0, 1]: maximize Σ z_t where target·z_t ≤ Σ_{cells of t} x.
            link = scipy.sparse.hstack([-member[open_ids], scipy.sparse.diags(np.full(m, float(target)))])
            equal = scipy.sparse.hstack([self.A, scipy.sparse.csr_matrix((self.A.shape[0], m))])
            bounds = np.column_stack([np.zeros(n + m), np.concatenate([np.full(n, np.inf), np.ones(m)])])
            result = scipy.optimize.linprog(np.concatenate([np.zeros(n), -np.ones(m)]), A_ub=link, b_ub=np.zeros(m),
                                            A_eq=equal, b_eq=self.b, bounds=bounds, method="highs")
            if result.status != 0:
                raise InfeasibleError(f"the k-combinatorial linear program failed ({result.message}).")
            self.solved += 1
            reached = todo & (self._record(result.x[:n]) >= target - _SLACK)
            if not reached.any():
                break
            todo &= ~reached
        for t in np.flatnonzero(todo):
            if self.best[t] >= target - _SLACK:
                continue
            result = scipy.optimize.linprog(-(self.tuple_of == t).astype(float), A_eq=self.A, b_eq=self.b,
                                            bounds=(0, None), method="highs")
            if result.status != 0:
                raise InfeasibleError(f"the k-combinatorial linear program failed ({result.message}).")
            self.solved += 1
            self._record(result.x)


def _join(left: pd.DataFrame, right: pd.DataFrame, limit: int, method: str) -> pd.DataFrame:
    """The combinations of ``left`` and ``right`` that agree on their common columns, refused
    before it is built when it would exceed ``limit`` rows."""
    common = [c for c in right.columns if c in left.columns]
    if common:
        sizes = left.groupby(common).size().to_frame("l").join(right.groupby(common).size().to_frame("r"),
                                                                how="inner")
        rows = int((sizes["l"] * sizes["r"]).sum())
    else:
        rows = len(left) * len(right)
    if rows > limit:
        raise _too_large(rows, limit, method)
    return left.merge(right, on=common) if common else left.merge(right, how="cross")


def _too_large(cells: int, limit: int, method: str) -> InfeasibleError:
    if method == EXACT:
        return InfeasibleError(
            f"the tables consistent with the marginals have at least {cells:,} cells, more than the exact "
            f"k-combinatorial check's limit of {limit:,}; method 'lp' (or 'auto') gives the LP relaxation's answer "
            "instead, or raise exact_limit.")
    return InfeasibleError(
        f"the tables consistent with the marginals have at least {cells:,} cells, more than the k-combinatorial "
        f"check's limit of {limit:,} even for the LP relaxation; coarsen or drop a marginal, or raise lp_limit.")
