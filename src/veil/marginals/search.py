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

**Each step** goes best first by divergence from the candidates that no marginal of the
collection implies: a node whose collection is decomposable is scored (the max-ent estimate has
its closed form, and the KL-divergence costs a few milliseconds); the best scored node is checked
against the privacy models and added when it satisfies them all. A node that fails a model, or
whose collection is not decomposable, hands over to its coarser neighbours in the up-set, whose
divergence is no lower, so the marginal added is the best of every node the step reaches.
"""

from __future__ import annotations

import heapq
import itertools
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from veil.errors import InfeasibleError, ParameterError
from veil.marginals.collection import MarginalCollection, MarginalCounter, MarginalSpec
from veil.marginals.contingency import ContingencyTable, cell_sizes
from veil.marginals.decomposable import implies, structure
from veil.marginals.maxent import DEFAULT_MAX_ITER, DEFAULT_TOLERANCE, MAX_DENSE_CELLS
from veil.marginals.privacy import KCombinatorialAnonymity, KLinkAnonymity, MaxEntLDiversity, refusal

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
        candidates: the nodes scored in this step.
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
        max_cells_maxent: the largest dense table the max-ent estimate may build (its
            ``max_cells``, see :class:`~veil.marginals.maxent.MaxEntEstimate`).
        tol: the tolerance at which iterative proportional fitting stops.
        max_iter: the most cycles of iterative proportional fitting.

    Fitted attributes:
        collection_: the chosen collection: the starting marginals, then the added ones.
        steps_: one :class:`SearchStep` per added marginal.
        start_kl_: the KL-divergence of the starting collection.
        kl_: the KL-divergence of the chosen collection.
        candidates_: the minimal nodes each step starts from.
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
        self._lattice(counter, attributes)
        self.candidates_ = [self._feasible[key] for key in self._frontier]
        self.steps_: list[SearchStep] = []
        kl = self.start_kl_
        self.stopped_ = "budget"
        for _ in range(self.max_marginals):
            began = time.perf_counter()
            chosen, scored, checked, undecided = self._step(collection, kl)
            if chosen is None:
                self.stopped_ = "privacy" if checked else "no gain"
                break
            kl, collection, table = chosen
            self.steps_.append(SearchStep(MarginalSpec.of_table(table), kl, len(table.counts), scored, checked,
                                          undecided, time.perf_counter() - began))
            if progress is not None:
                progress(len(self.steps_), self.max_marginals)
        self.collection_ = collection
        self.kl_ = kl
        return self

    def _step(self, collection: MarginalCollection, kl: float):
        """The best marginal to add: ``((divergence, collection with it, marginal) or None,
        candidates scored, privacy checks, checks beyond the limits)``.

        Best first by divergence, from the minimal nodes; a node that fails a model, or whose
        collection is not decomposable, hands over to its coarser neighbours, whose divergence is
        no lower. So the first node that passes is the best of every node reached.
        """
        heap: list = []
        seen: set = set()
        counts = {"scored": 0, "checked": 0, "undecided": 0}

        def offer(key) -> None:
            if key in seen:
                return
            seen.add(key)
            table = self._feasible[key]
            if any(implies(m, table) for m in collection.marginals):
                return  # and so are its coarser neighbours
            trial = collection.with_marginal(table)
            if structure(trial.marginals)[2] is None:
                for parent in self._parents(key):
                    offer(parent)
                return
            counts["scored"] += 1
            heapq.heappush(heap, (trial.kl_divergence(), len(seen), key, trial))

        for key in self._frontier:
            offer(key)
        while heap:
            trial_kl, _, key, trial = heapq.heappop(heap)
            if trial_kl >= kl - _GAIN:
                break
            counts["checked"] += 1
            try:
                passed = all(model.evaluate(trial).passed for model in self.models)
            except InfeasibleError:
                # A collection whose privacy cannot be checked within the limits is not chosen.
                passed = False
                counts["undecided"] += 1
            if passed:
                return (trial_kl, trial, self._feasible[key]), counts["scored"], counts["checked"], counts["undecided"]
            for parent in self._parents(key):
                offer(parent)
        return None, counts["scored"], counts["checked"], counts["undecided"]

    def _parents(self, key) -> list:
        """The feasible nodes one level coarser than ``key`` in one attribute."""
        names, node = key
        out = []
        for j in range(len(node)):
            parent = (names, node[:j] + (node[j] + 1,) + node[j + 1:])
            if parent in self._feasible:
                out.append(parent)
        return out

    def _lattice(self, counter: MarginalCounter, attributes: list[str]) -> None:
        """Every k-link anonymous node within ``max_cells`` of every attribute set
        (``_feasible``, by ``(attributes, levels)``) and the minimal ones (``_frontier``)."""
        k = self._k
        self._feasible: dict[tuple, ContingencyTable] = {}
        self._frontier: list[tuple] = []
        for size in range(1, min(self.max_attributes, len(attributes)) + 1):
            for names in itertools.combinations(attributes, size):
                finest = counter.count(MarginalSpec.of(list(names)))
                # A level whose one cell covers every value says nothing of its attribute: the
                # marginal without it is a node of the smaller set.
                informative = [[lv for lv in range(counter.domains[a].height + 1)
                                if np.count_nonzero(cell_sizes(counter.domains[a], lv)) > 1] for a in names]
                feasible = {}
                for node in itertools.product(*informative):
                    table = finest.project(names, node, counter.domains)
                    if self._fits(table, counter, k):
                        feasible[(names, node)] = table
                for (_, node) in feasible:
                    below = ((names, node[:j] + (node[j] - 1,) + node[j + 1:]) for j in range(size) if node[j] > 0)
                    if not any(b in feasible for b in below):
                        self._frontier.append((names, node))
                self._feasible.update(feasible)

    def _fits(self, table: ContingencyTable, counter: MarginalCounter, k: int) -> bool:
        if self.max_cells is not None and len(table.counts) > self.max_cells:
            return False
        names = [a for a in table.attributes if a != counter.sensitive]
        if not names:
            return True
        levels = [table.levels[table.attributes.index(a)] for a in names]
        return int(table.project(names, levels, counter.domains).counts.min()) >= k

