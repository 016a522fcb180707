"""Choosing the anonymized marginals to publish (Kifer and Gehrke, "Injecting utility into
anonymized datasets", SIGMOD 2006, Section 5): the anonymized table to start from, and the
marginals to add to it.

**The base table** (:func:`optimal_base`) is veil's optimal full-domain generalization under
privacy models of one table (k-anonymity and ℓ-diversity, say), without suppression (every
record stays, so the table is a marginal of the data), minimizing the KL-divergence of the data
from the table's max-ent distribution over the quasi-identifiers and the sensitive attribute:
the paper's starting point.

**The greedy search** (:class:`GreedyMarginalSearch`) starts from a collection (typically the
anonymized table itself, as one marginal over every attribute); each step adds the marginal that
lowers the KL-divergence of the max-ent estimate the most while the collection keeps satisfying
the privacy models, until the budget of marginals is spent or no marginal helps.

**Candidates.** For every set of up to ``max_attributes`` attributes, the levels at which the
marginal is k-link anonymous and has at most ``max_cells`` cells form an up-set of the
generalization lattice (merging cells keeps every count 0 or ≥ k, and never adds cells), and a
finer marginal says everything a coarser one does, so the KL-divergence can only be lower at a
finer node: the candidates are the minimal nodes of that up-set (without the levels where an
attribute is one cell, which say nothing of it). They are computed once, by rolling up the
marginal at level 0, itself rolled up from the table's class core. Here k is the
largest k of the k-link and k-combinatorial models given (k-combinatorial anonymity implies
k-link anonymity at the same k).

**Each step** scores every candidate that no marginal of the collection implies and that keeps
the collection decomposable (so that the max-ent estimate has its closed form and the
KL-divergence costs a few milliseconds), then checks the privacy models on the candidates in
order of increasing divergence and adds the first that satisfies them all.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from veil.errors import InfeasibleError, ParameterError
from veil.marginals.collection import MarginalCollection, MarginalCounter, MarginalSpec
from veil.marginals.privacy import KCombinatorialAnonymity, KLinkAnonymity, MaxEntLDiversity, refusal
from veil.metrics.maxent import (DEFAULT_MAX_ITER, DEFAULT_TOLERANCE, MAX_DENSE_CELLS, ContingencyTable,
                                 cell_sizes, implies, structure)

PrivacyModel = KLinkAnonymity | KCombinatorialAnonymity | MaxEntLDiversity


def optimal_base(counter: MarginalCounter, models: Sequence) -> tuple[ContingencyTable, object]:
    """The optimal full-domain generalization of ``counter``'s table under the privacy models
    ``models`` (:mod:`veil.models`, e.g. k-anonymity and entropy ℓ-diversity), without
    suppression, minimizing the KL-divergence (the ``kl`` metric over the quasi-identifiers and
    the sensitive attribute).

    Returns:
        ``(marginal, result)``: the table as a marginal, and the search's
        :class:`~veil.anonymize.fulldomain.SearchResult` (levels, proof of optimality).

    Raises:
        ParameterError: no model.
        InfeasibleError: no full-domain generalization satisfies the models (the message names
            the model to relax).
    """
    from veil.anonymize import FullDomain
    from veil.metrics import make_metric

    if not models:
        raise ParameterError("give the privacy models of the base table (k-anonymity, say).")
    anonymizer = FullDomain(list(models), suppression_limit=0.0, metric=make_metric("kl", sensitive=counter.sensitive))
    anonymizer.fit(counter.dataset)
    result = anonymizer.result_
    return counter.count(counter.base_spec(result.levels)), result


# A step must lower the divergence by more than this (nats) to add a marginal.
_GAIN = 1e-12


@dataclass(frozen=True)
class SearchStep:
    """One marginal added by the search.

    Attributes:
        marginal: what was added.
        kl: the KL-divergence of the collection with it.
        cells: its number of cells.
        candidates: the candidates scored in this step.
        checked: the candidates whose privacy was checked (the best ones, until one passed).
        undecided: those among them whose privacy could not be checked within the models'
            limits (the k-combinatorial check's ``lp_limit``, the max-ent estimate's
            ``max_cells``), and which were therefore not chosen.
        seconds: the time the step took.
    """

    marginal: MarginalSpec
    kl: float
    cells: int
    candidates: int
    checked: int
    undecided: int
    seconds: float


class GreedyMarginalSearch:
    """Add anonymized marginals greedily, minimizing the KL-divergence of the max-ent estimate
    under privacy models (Kifer and Gehrke 2006).

    Args:
        models: the privacy models every collection must satisfy (:class:`KLinkAnonymity`,
            :class:`KCombinatorialAnonymity`, :class:`MaxEntLDiversity`).
        max_marginals: the most marginals to add.
        max_attributes: the most attributes in one added marginal.
        max_cells: the most cells in one added marginal (``None``: no limit).
        attributes: the attributes marginals may hold (default: every attribute of the table).
        max_cells_maxent, tol, max_iter: the max-ent estimate's parameters (see
            :class:`~veil.metrics.maxent.MaxEntEstimate`).

    Fitted attributes:
        collection_: the chosen collection: the starting marginals, then the added ones.
        steps_: one :class:`SearchStep` per added marginal.
        start_kl_: the KL-divergence of the starting collection.
        kl_: the KL-divergence of the chosen collection.
        candidates_: the candidate marginals considered.
        stopped_: why the search stopped: ``"budget"`` (``max_marginals`` added), ``"no gain"``
            (no candidate lowers the divergence), or ``"privacy"`` (every candidate that lowers
            it fails a privacy model).

    Raises:
        ParameterError: a bad budget, an unknown model, or no model.
    """

    def __init__(self, models: Sequence[PrivacyModel], *, max_marginals: int = 5, max_attributes: int = 3,
                 max_cells: int | None = None, attributes: Sequence[str] | None = None,
                 max_cells_maxent: int = MAX_DENSE_CELLS, tol: float = DEFAULT_TOLERANCE,
                 max_iter: int = DEFAULT_MAX_ITER):
        self.models = list(models)
        self.max_marginals = max_marginals
        self.max_attributes = max_attributes
        self.max_cells = max_cells
        self.attributes = attributes
        self.max_cells_maxent = max_cells_maxent
        self.tol = tol
        self.max_iter = max_iter
        self._check()

    def __repr__(self) -> str:
        return (f"GreedyMarginalSearch({self.models!r}, max_marginals={self.max_marginals}, "
                f"max_attributes={self.max_attributes}, max_cells={self.max_cells})")

    def _check(self) -> None:
        if not self.models:
            raise ParameterError("give at least one privacy model for the marginals (k-link anonymity, say).")
        for model in self.models:
            if not isinstance(model, (KLinkAnonymity, KCombinatorialAnonymity, MaxEntLDiversity)):
                raise ParameterError(f"{model!r} is not a privacy model of marginals; use k-link, k-combinatorial "
                                     "or MaxEnt ℓ-diversity.")
        for name, value, low in (("max_marginals", self.max_marginals, 0), ("max_attributes", self.max_attributes, 1)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ParameterError(f"{name} must be a whole number of at least {low}, not {value!r}.")
        if self.max_cells is not None and (isinstance(self.max_cells, bool) or
                                           not isinstance(self.max_cells, (int, np.integer)) or self.max_cells < 1):
            raise ParameterError(f"max_cells must be a whole number of at least 1, not {self.max_cells!r}.")

    @property
    def _k(self) -> int:
        ks = [m.k for m in self.models if isinstance(m, (KLinkAnonymity, KCombinatorialAnonymity))]
        return max(ks, default=1)

    def fit(self, counter: MarginalCounter, start: Sequence[ContingencyTable] = (),
            progress: Callable[[int, int], None] | None = None) -> "GreedyMarginalSearch":
        """Choose the marginals to add to ``start`` (marginals of ``counter``'s table);
        ``progress`` is called after each step with the steps done and ``max_marginals``.

        Raises:
            ColumnError: an attribute that is not one of the table's.
            InfeasibleError: the starting collection fails a privacy model (the marginal and cell
                are named), or the max-ent estimate exceeds its limits.
        """
        attributes = list(self.attributes) if self.attributes is not None else list(counter.attributes)
        for name in attributes:
            counter.check(MarginalSpec.of([name]))
        collection = MarginalCollection(counter, start, max_cells=self.max_cells_maxent, tol=self.tol,
                                        max_iter=self.max_iter)
        for model in self.models:
            result = model.evaluate(collection)
            if not result.passed:
                raise InfeasibleError(f"the search cannot start: {refusal(result, collection)}")
        self.start_kl_ = collection.kl_divergence()
        self.candidates_ = self._candidates(counter, attributes)
        self.steps_: list[SearchStep] = []
        kl = self.start_kl_
        self.stopped_ = "budget"
        for _ in range(self.max_marginals):
            began = time.perf_counter()
            scored = []
            for table in self.candidates_:
                if any(implies(m, table) for m in collection.marginals):
                    continue
                trial = collection.with_marginal(table)
                if structure(trial.marginals)[2] is None:
                    continue
                scored.append((trial.kl_divergence(), len(scored), trial, table))
            scored.sort(key=lambda s: (s[0], s[1]))
            chosen, checked, undecided = None, 0, 0
            for trial_kl, _, trial, table in scored:
                if trial_kl >= kl - _GAIN:
                    break
                checked += 1
                try:
                    passed = all(model.evaluate(trial).passed for model in self.models)
                except InfeasibleError:
                    # A collection whose privacy cannot be checked within the limits is not chosen.
                    passed = False
                    undecided += 1
                if passed:
                    chosen = (trial_kl, trial, table)
                    break
            if chosen is None:
                self.stopped_ = "privacy" if checked else "no gain"
                break
            kl, collection, table = chosen
            self.steps_.append(SearchStep(MarginalSpec.of_table(table), kl, len(table.counts), len(scored), checked,
                                          undecided, time.perf_counter() - began))
            if progress is not None:
                progress(len(self.steps_), self.max_marginals)
        self.collection_ = collection
        self.kl_ = kl
        return self

    def _candidates(self, counter: MarginalCounter, attributes: list[str]) -> list[ContingencyTable]:
        """The minimal k-link anonymous nodes within ``max_cells`` of every attribute set."""
        k = self._k
        out = []
        for size in range(1, min(self.max_attributes, len(attributes)) + 1):
            for names in itertools.combinations(attributes, size):
                finest = counter.count(MarginalSpec.of(list(names)))
                # A level whose one cell covers every value says nothing of its attribute: the
                # marginal without it is a candidate of the smaller set.
                informative = [[lv for lv in range(counter.domains[a].height + 1)
                                if np.count_nonzero(cell_sizes(counter.domains[a], lv)) > 1] for a in names]
                feasible: dict[tuple[int, ...], ContingencyTable] = {}
                for node in itertools.product(*informative):
                    table = finest.project(names, node, counter.domains)
                    if self._fits(table, counter, k):
                        feasible[node] = table
                for node, table in feasible.items():
                    below = (node[:j] + (node[j] - 1,) + node[j + 1:] for j in range(size) if node[j] > 0)
                    if not any(b in feasible for b in below):
                        out.append(table)
        return out

    def _fits(self, table: ContingencyTable, counter: MarginalCounter, k: int) -> bool:
        if self.max_cells is not None and len(table.counts) > self.max_cells:
            return False
        names = [a for a in table.attributes if a != counter.sensitive]
        if not names:
            return True
        levels = [table.levels[table.attributes.index(a)] for a in names]
        return int(table.project(names, levels, counter.domains).counts.min()) >= k

