"""Optimal full-domain generalization with a suppression limit.

Full-domain generalization (Samarati 2001; LeFevre et al., Incognito, 2005) maps every value of a
quasi-identifier to the same hierarchy level; the solution space is the lattice of level vectors.
:class:`FullDomain` finds the node with the least information loss among those where the records
of the classes failing the privacy models fit within a suppression limit.

The search is exact, in two phases:

1. **Predictive tagging** (as in OLA, El Emam et al. 2009, and Flash, Kohlmayer et al. 2012).
   For the models that are monotonic in the given regime (every model without suppression except
   δ-disclosure; only k-anonymity and distinct ℓ-diversity when failing classes may be
   suppressed), feasibility is monotone along any path up the lattice. A binary search along
   paths from the lowest untagged node finds where each path becomes feasible; a feasible node
   tags everything above it feasible and an infeasible node everything below it infeasible, so
   most nodes are never evaluated. Models that are not monotonic are never used to tag.
2. **Branch and bound** over the nodes not tagged infeasible. Each utility metric gives a lower
   bound on its loss at a node and every node above it, under any suppression; no node whose
   bound exceeds the best loss found is evaluated. A metric with a separable bound (a sum of
   one term per quasi-identifier and level) bounds every node at once, and the nodes go in the
   order of their bounds; for any other metric (discernibility, AECS …) the bound of a node
   needs its class sizes, and the nodes go in a best-first order on the bound known so far
   (their own once rolled up, else that of the node below that queued them), so that exactly
   the nodes bounded within the optimum are evaluated.

Two tests settle a node from its class sizes alone, before any count matrix is summed: a class
smaller than the fewest records that can pass a model (``PrivacyModel.smallest_class``: k, ℓ
distinct values, the records needed to come within t or δ of the table's distribution) fails
whatever its sensitive values, so a node whose such classes hold more records than the limit is
infeasible; and for a metric that more suppression never improves, a node whose loss with just
those classes suppressed exceeds the best loss is not evaluated. The models judge the remaining
classes by exact quick tests (``PrivacyModel.failing``).

Neither changes the answer of the sweep by bounds it replaced: among nodes of equal least loss
the first found in phase 1 wins, then the first in the order of the bounds (separable) or of
(height, node number). Class statistics of a node are rolled up from a node below it that is
held in memory (:mod:`veil.anonymize.rollup`), never re-read from the rows.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from veil.anonymize.base import Anonymizer
from veil.anonymize.lattice import Lattice
from veil.anonymize.rollup import ClassStore
from veil.classes import EquivalenceClasses
from veil.data.dataset import Dataset
from veil.errors import InfeasibleError, ParameterError
from veil.models.anonymity import KAnonymity
from veil.models.base import PrivacyModel

# Lattices larger than this are searched heuristically: tagging walks every node's level vector.
MAX_EXACT_NODES = 2_000_000
# Bytes of classes (keys, sizes, count matrices) kept in memory for roll-ups, the least recently
# used nodes dropped first.
CACHE_BYTES = 256 * 2**20
HEURISTIC_SECONDS = 30.0

SEARCHES = ("optimal", "heuristic")
_SIZE_TAGGING = True


# Relative slack when a bound is compared with the best loss: separable bounds are sums whose
# rounding may differ from the metric's own computation in the last bits.
_TIE = 1e-12


class _Best:
    """The best feasible node found so far (lowest loss; the first found wins ties).

    The minimality attack (:mod:`veil.attacks.search_replay`) replays the search on candidate
    inputs and depends on this: the search must stay deterministic, break ties by a fixed order,
    and read the sensitive values only through which nodes pass which models (its cache key).
    """

    def __init__(self) -> None:
        self.node: int | None = None
        self.loss = math.inf
        self.suppressed = 0

    def offer(self, node: int, loss: float, suppressed: int) -> None:
        if loss < self.loss:
            self.node, self.loss, self.suppressed = node, loss, suppressed


@dataclass(frozen=True)
class SearchResult:
    """The outcome of a lattice search.

    Attributes:
        levels: the chosen level of each quasi-identifier.
        loss: the chosen node's loss under the objective metric.
        suppressed_records: records in classes that fail the models at that node.
        nodes_total: nodes in the lattice.
        nodes_checked: nodes judged against the models (from their class sizes alone where the
            classes too small to pass already exceed the limit).
        proven_optimal: whether the search proved that no node has a lower loss.
        seconds: wall-clock time of the search.
    """

    levels: tuple[int, ...]
    loss: float
    suppressed_records: int
    nodes_total: int
    nodes_checked: int
    proven_optimal: bool
    seconds: float


def _quick(models: Sequence[PrivacyModel], classes: EquivalenceClasses) -> np.ndarray | None:
    """The classes failing some model by the models' quick tests, or ``None`` if one cannot tell."""
    failing = np.zeros(classes.n_classes, dtype=bool)
    for model in models:
        found = model.failing_quick(classes)
        if found is None:
            return None
        failing |= found
    return failing


def failing_classes(classes: EquivalenceClasses, models: Sequence[PrivacyModel]) -> np.ndarray:
    """Mask of the classes that fail at least one model (their records would be suppressed).

    Raises:
        ParameterError: a model has no threshold.
    """
    failing = np.zeros(classes.n_classes, dtype=bool)
    for model in models:
        failing |= model.failing(classes)
    return failing


class FullDomain(Anonymizer):
    """Full-domain generalization with suppression, optimal for a utility metric.

    Args:
        models: the privacy models every released class must satisfy, each with a threshold.
        suppression_limit: the largest share of records that may be suppressed, in [0, 1).
        metric: the utility metric to minimize: a key of :func:`veil.metrics.make_metric` or a
            metric object.
        search: ``"optimal"`` (exact, see the module docstring) or ``"heuristic"`` (best-first
            descent from the top within ``time_limit``; not proven optimal).
        time_limit: seconds the search may take; when it runs out the best node found so far is
            returned and reported as not proven optimal.

    Attributes (after :meth:`fit`):
        result_: the :class:`SearchResult`.
        levels_: the chosen level per quasi-identifier, as a dict.

    Raises:
        ParameterError: no model, a model without threshold, a limit outside [0, 1), an unknown
            search or metric.
    """

    def __init__(self, models: Sequence[PrivacyModel], *, suppression_limit: float = 0.0, metric="loss",
                 search: str = "optimal", time_limit: float | None = None):
        if not models:
            raise ParameterError("give at least one privacy model to anonymize with.")
        for model in models:
            if model.threshold is None:
                raise ParameterError(f"{model.name} needs a threshold to anonymize with.")
        if not 0 <= suppression_limit < 1:
            raise ParameterError(f"the suppression limit is a share of records in [0, 1), not {suppression_limit}.")
        if search not in SEARCHES:
            raise ParameterError(f"unknown search {search!r}; use 'optimal' or 'heuristic'.")
        if time_limit is not None and time_limit <= 0:
            raise ParameterError(f"the time limit must be positive, not {time_limit}.")
        self.models = list(models)
        self.suppression_limit = float(suppression_limit)
        self.metric = metric
        self.search = search
        self.time_limit = time_limit

    def __repr__(self) -> str:
        return (f"FullDomain(models={self.models}, suppression_limit={self.suppression_limit}, "
                f"metric={self._metric().key!r}, search={self.search!r})")

    def _metric(self):
        from veil.metrics import make_metric

        return make_metric(self.metric) if isinstance(self.metric, str) else self.metric

    def fit(self, dataset: Dataset, progress: Callable[[int, int], None] | None = None) -> "FullDomain":
        """Search the lattice of ``dataset``'s hierarchies for the optimal node.

        Args:
            dataset: the table; every quasi-identifier needs a hierarchy.
            progress: called as ``progress(nodes_settled, nodes_total)`` while searching.

        Raises:
            ParameterError: a quasi-identifier has no hierarchy, or k exceeds the number of rows.
            InfeasibleError: no node satisfies the models within the suppression limit.
        """
        missing = [q for q in dataset.quasi_identifiers if q not in dataset.generalizations]
        if missing:
            raise ParameterError(f"quasi-identifier '{missing[0]}' has no hierarchy; full-domain "
                                 "generalization needs one for every quasi-identifier.")
        for model in self.models:
            k = model.threshold if model.key == "k" else getattr(model, "k", None)
            if k is not None and k > dataset.num_rows:
                raise ParameterError(f"k = {k:g} is larger than the table's {dataset.num_rows} records.")
        search = _Search(dataset, self.models, self.suppression_limit, self._metric(), self.time_limit, progress)
        if self.search == "optimal" and search.lattice_size <= MAX_EXACT_NODES:
            result = search.optimal()
        else:
            result = search.heuristic()
        self.result_ = result
        self.levels_ = dict(zip(dataset.quasi_identifiers, result.levels))
        return self

    def transform(self, dataset: Dataset, *, suppressed: str = "remove", shuffle: bool = True,
                  rng: np.random.Generator | None = None):
        """The release of ``dataset`` at the node found by :meth:`fit`.

        Args:
            suppressed: ``"remove"`` drops suppressed records; ``"star"`` keeps them with every
                quasi-identifier published as ``*``.
            shuffle: publish the rows in random order (the default), so that releases of one table
                cannot be joined by position; ``False`` keeps the input order, which the manifest
                and the ledger's gate flag as linkable by position.
            rng: ``None`` (default) shuffles with the secure source; a seed or generator makes a
                reproducible shuffle, not fit for release.
        """
        from veil.anonymize.release import Release

        if not hasattr(self, "result_"):
            raise ParameterError("call fit before transform.")
        classes = EquivalenceClasses.from_dataset(dataset, self.result_.levels)
        failing = failing_classes(classes, self.models)
        return Release(dataset, classes, failing, algorithm="fulldomain", models=self.models,
                       suppression_limit=self.suppression_limit, metric=self._metric(), search=self.result_,
                       suppressed=suppressed, shuffle=shuffle, rng=rng)


class _Search:
    """One search over one dataset's lattice (state shared by the two strategies)."""

    def __init__(self, dataset: Dataset, models: Sequence[PrivacyModel], limit: float, metric,
                 time_limit: float | None, progress):
        self.dataset = dataset
        self.models = list(models)
        self.metric = metric
        self.progress = progress
        self.time_limit = time_limit
        self.deadline = None if time_limit is None else time.perf_counter() + time_limit
        self.started = time.perf_counter()
        self.n = dataset.num_rows
        # The limit in records; a tiny epsilon keeps 0.02 · 30162 = 603.24 from rounding below 603.
        self.max_suppressed = int(math.floor(limit * self.n + 1e-9))
        heights = [dataset.generalizations[q].height for q in dataset.quasi_identifiers]
        self.heights = heights
        self.lattice_size = Lattice.size(heights)
        suppressing = self.max_suppressed > 0
        self.tagging_models = [m for m in self.models
                               if (m.monotonic_with_suppression if suppressing else m.monotonic)]
        self.all_tagging = len(self.tagging_models) == len(self.models)
        track = [name for name in dataset.sensitive if any(m.needs_sensitive for m in self.models)]
        track += [name for name in getattr(metric, "track", ()) if name not in track]
        self.track = track
        self.metric_reads_counts = bool(getattr(metric, "track", ()))
        self.base = EquivalenceClasses.from_dataset(dataset, track=track)
        self.checked_nodes: set = set()

    def timed_out(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline

    def feasible(self, failing: np.ndarray, classes: EquivalenceClasses) -> bool:
        return int(classes.sizes[failing].sum()) <= self.max_suppressed

    def result(self, levels, loss: float, suppressed: int, proven: bool) -> SearchResult:
        return SearchResult(tuple(int(v) for v in levels), float(loss), int(suppressed), self.lattice_size,
                            len(self.checked_nodes), proven, time.perf_counter() - self.started)

    def infeasible(self) -> InfeasibleError:
        """The error for a search with no solution, naming the model to relax and how far.

        The top node is a single class, always a candidate, so a search without solution has
        a model that fails there for every record.
        """
        top = self.base.roll_up(self.heights)
        model, result = next((m, r) for m in self.models for r in [m.evaluate(top)] if not r.passed)
        return InfeasibleError(
            f"no generalization satisfies {model.name} at {model.threshold:g} within the suppression "
            f"limit ({self.max_suppressed} of {self.n} records): even with every quasi-identifier fully "
            f"generalized the table only reaches {result.level:.4g}; relax that threshold.")

    # Exact search -------------------------------------------------------------------------

    def optimal(self) -> SearchResult:
        lattice = Lattice(self.heights)
        self.lattice = lattice
        n_nodes = len(lattice)
        store = ClassStore(self.base, lattice, CACHE_BYTES)
        failing_of: dict[tuple[int, bool], np.ndarray] = {}

        def evaluate(node: int, every_model: bool) -> tuple[EquivalenceClasses, np.ndarray]:
            """Classes and failing mask under every model or the tagging ones (one cache entry
            when they are the same). When the classes too small to pass hold more records than
            the limit, the node is infeasible and the mask holds just them: the count matrices
            are never summed."""
            entry = store.sizes_of(node)
            key = (node, every_model or self.all_tagging)
            if key not in failing_of:
                self.checked_nodes.add(node)
                failing_of[key] = self._judge(store, entry, self.models if key[1] else self.tagging_models,
                                              self.smallest[key[1]])
            store.keep(node, entry)
            return entry.classes, failing_of[key]

        best = _Best()
        bounds = self._node_bounds(lattice, store)
        # The fewest records a class needs to pass every model (or the tagging ones): smaller
        # classes are suppressed whatever their sensitive values.
        self.smallest = {True: max(m.smallest_class(self.base) for m in self.models),
                         False: max([m.smallest_class(self.base) for m in self.tagging_models], default=1)}
        if not self.tagging_models and self.smallest[True] > 1 and _SIZE_TAGGING:
            # No model tags, but every class smaller than that fails: k-anonymity with k that
            # size is necessary for feasibility, and it is monotonic (with suppression too), so
            # it tags the nodes whose small classes alone exceed the limit, and all below them.
            self.tagging_models = [KAnonymity(self.smallest[True])]
            self.smallest[False] = self.smallest[True]

        def settled(node: int) -> bool:
            """Whether a node can be skipped: its known loss bound cannot beat the best found."""
            return bounds is not None and bounds[node] >= best.loss + _TIE * max(abs(best.loss), 1.0)

        def consider(node: int, classes: EquivalenceClasses, failing: np.ndarray) -> None:
            """Score a node known to be feasible under every model."""
            if self.metric_reads_counts:
                classes = store.classes_of(node)
            best.offer(node, self.metric.loss(classes, failing), int(classes.sizes[failing].sum()))

        # Phase 1: feasibility tags from the monotonic models (+1 feasible, -1 infeasible). Nodes
        # whose bound cannot beat the best loss found are never checked.
        tag = np.zeros(n_nodes, dtype=np.int8)
        order = np.argsort(bounds if bounds is not None else lattice.height, kind="stable")
        if self.tagging_models:
            # Without suppression the feasible nodes lie high and a walk up from the bottom finds
            # them fastest; with suppression they reach far down, and the lowest bounds first
            # give a good best loss early, which settles most nodes unchecked.
            starts = order if self.max_suppressed > 0 else np.argsort(lattice.height, kind="stable")
            for node in starts:
                if tag[node] or settled(int(node)):
                    continue
                if self.timed_out():
                    break
                self._tag_chain(lattice, lattice.chain_up(int(node)), tag, evaluate, settled,
                                consider if self.all_tagging else None)
                if self.progress:
                    self.progress(int(np.count_nonzero(tag)), n_nodes)
            if tag[lattice.top] == -1:
                raise self.infeasible()
        # Phase 2: branch and bound over the nodes not known to be infeasible. A node evaluated
        # in full in phase 1 was scored there.
        skip = np.zeros(n_nodes, dtype=bool)
        if self.tagging_models:
            skip |= tag < 0
        for node, every_model in failing_of:
            skip[node] |= every_model
        proven = not self.timed_out()
        if bounds is None:
            proven = self._best_first(lattice, store, tag, skip, evaluate, best) and proven
        else:
            candidates = order[~skip[order]]
            for done, node in enumerate(candidates):
                node = int(node)
                if settled(node):
                    break  # candidates are in bound order: none after this one can do better
                if self.timed_out():
                    proven = False
                    break
                if self.all_tagging and tag[node] == 1 and self.max_suppressed == 0:
                    classes = store.classes_of(node)
                    failing = np.zeros(classes.n_classes, dtype=bool)
                else:
                    if self._hopeless(store.sizes_of(node), best.loss):
                        continue
                    classes, failing = evaluate(node, True)
                    if not self.feasible(failing, classes):
                        continue
                consider(node, classes, failing)
                if self.progress and done % 64 == 0:
                    self.progress(n_nodes - len(candidates) + done, n_nodes)
        if self.progress:
            self.progress(n_nodes, n_nodes)
        if best.node is None:
            if not proven:
                return self.heuristic()
            raise self.infeasible()
        return self.result(lattice.levels[best.node], best.loss, best.suppressed, proven)

    def _best_first(self, lattice: Lattice, store: ClassStore, tag: np.ndarray, skip: np.ndarray, evaluate,
                    best: _Best) -> bool:
        """Phase 2 for a metric without a separable bound: the nodes in order of their loss bound,
        each bounded from its class sizes alone, until no node left can reach the best loss.

        A node's priority is a lower bound on its own bound (its own, once its classes are
        rolled up, or that of the node below it that put it in the queue; bounds never decrease
        upwards), so every node whose bound is within the best loss is evaluated, and nothing
        above a node whose bound exceeds it. Among the nodes of least loss the one returned is
        the first in the order (height, node number), which is the order in which a sweep up the
        lattice meets them; a node from phase 1 keeps its place before them on a tie.

        Returns:
            Whether the search ran to its end (``False`` when the time limit stopped it).
        """
        n_nodes = len(lattice)
        height = lattice.height.tolist()
        # Nodes known to be infeasible (by the monotonic models) are never visited: the queue
        # starts from every other node all of whose predecessors are such (the bottom, without
        # them), and each visited node queues its successors but those.
        out = tag < 0 if self.tagging_models else np.zeros(n_nodes, dtype=bool)
        below = store.below
        seeds = np.flatnonzero(~out & np.all((below < 0) | out[np.maximum(below, 0)], axis=1))
        levels, heights, strides = lattice.levels, lattice.heights.tolist(), lattice.strides.tolist()
        columns = range(len(heights))
        queued = out.tolist()
        tracked_bound = bool(getattr(self.metric, "track", ()))
        # The best loss of this phase and its rank (loss, height, node), and its suppressed records.
        found: tuple[float, int, int, int] | None = None
        limit = best.loss
        stop = limit + _TIE * max(abs(limit), 1.0) if math.isfinite(limit) else math.inf
        queue = [(-math.inf, height[node], node, False) for node in seeds.tolist()]
        heapq.heapify(queue)
        for node in seeds.tolist():
            queued[node] = True
        popped = 0
        while queue:
            priority, _, node, exact = heapq.heappop(queue)
            if priority > stop:
                break  # every node left is bounded above the best loss
            if self.timed_out():
                return False
            if not exact:
                entry = store.sizes_of(node)
                if tracked_bound:
                    store.with_counts(entry)
                bound = self.metric.loss_bound(entry.classes)
                if bound > priority:
                    heapq.heappush(queue, (bound, height[node], node, True))
                    continue
                if priority > stop:
                    continue
            popped += 1
            if not skip[node]:
                if self.all_tagging and tag[node] == 1 and self.max_suppressed == 0:
                    classes = store.classes_of(node)
                    failing = np.zeros(classes.n_classes, dtype=bool)
                    feasible = True
                elif self._hopeless(store.sizes_of(node), limit):
                    feasible = False
                else:
                    classes, failing = evaluate(node, True)
                    feasible = self.feasible(failing, classes)
                if feasible:
                    if self.metric_reads_counts:
                        classes = store.classes_of(node)
                    rank = (self.metric.loss(classes, failing), height[node], node,
                            int(classes.sizes[failing].sum()))
                    if found is None or rank[:3] < found[:3]:
                        found = rank
                        if rank[0] < limit:
                            limit = rank[0]
                            stop = limit + _TIE * max(abs(limit), 1.0)
            at = levels[node].tolist()
            for j in columns:
                if at[j] < heights[j]:
                    up = node + strides[j]
                    if not queued[up]:
                        queued[up] = True
                        heapq.heappush(queue, (priority, height[up], up, False))
            if self.progress and popped % 64 == 0:
                self.progress(popped, n_nodes)
        if found is not None and found[0] < best.loss:
            best.node, best.loss, best.suppressed = found[2], found[0], found[3]
        return True

    def _judge(self, store: ClassStore, entry, models, smallest: int) -> np.ndarray:
        """The classes of a node that fail ``models``, or, for a node whose classes smaller than
        ``smallest`` (which fail whatever their values) already hold more records than the limit,
        just those: its count matrices are then never summed.
        """
        sizes = entry.sizes
        small = sizes < smallest
        out = int(sizes[small].sum())
        if out > self.max_suppressed:
            return small
        if any(m.needs_sensitive for m in models):
            store.with_counts(entry)
        return self._failing(store, entry.classes, models, small)

    @staticmethod
    def _failing(store: ClassStore, classes: EquivalenceClasses, models, small: np.ndarray) -> np.ndarray:
        """:func:`failing_classes`, the models' quick tests asked only about the classes large
        enough to pass (``small`` fail whatever their values); in full where a test cannot tell."""
        if small.any():
            rows = np.flatnonzero(~small)
            found = _quick(models, store.part(classes, rows))
            if found is not None:
                failing = small.copy()
                failing[rows] = found
                return failing
        return failing_classes(classes, models)

    def _hopeless(self, entry, limit: float) -> bool:
        """Whether a node's loss exceeds ``limit`` with only the classes too small to pass
        suppressed, for a metric whose loss more suppression never lowers: then no node of the
        search's interest is lost by not evaluating it."""
        if not getattr(self.metric, "suppression_never_helps", False) or self.metric_reads_counts:
            return False
        if not math.isfinite(limit):
            return False
        small = entry.sizes < self.smallest[True]
        return self.metric.loss(entry.classes, small) > limit + _TIE * max(abs(limit), 1.0)

    def _node_bounds(self, lattice: Lattice, store: ClassStore) -> np.ndarray | None:
        """The metric's loss bound at every node, for a separable metric, else ``None``.

        A separable bound is a sum of one term per quasi-identifier and level: the metric's own
        (``UtilityMetric.level_terms``, from the column and its hierarchy alone) where it has
        them, else read off the node that generalizes only that quasi-identifier (its class
        sizes; the count matrices too for a metric that reads some).
        """
        if not getattr(self.metric, "separable", False):
            return None
        terms = [np.zeros(height + 1) for height in self.heights]
        for j, height in enumerate(self.heights):
            direct = self.metric.level_terms(self.dataset, j)
            if direct is not None:
                terms[j] = direct
                continue
            for level in range(1, height + 1):
                levels = [0] * len(self.heights)
                levels[j] = level
                node = lattice.index(levels)
                entry = store.sizes_of(node)
                if getattr(self.metric, "track", ()):
                    store.with_counts(entry)
                terms[j][level] = self.metric.loss_bound(entry.classes)
                store.keep(node, entry)  # a source with fewer classes than the bottom
        return sum(terms[j][lattice.levels[:, j]] for j in range(len(self.heights)))

    def _tag_chain(self, lattice: Lattice, chain: np.ndarray, tag: np.ndarray, evaluate, settled,
                   consider) -> None:
        """Binary search along a path for where it becomes feasible, tagging what that proves.

        A node that cannot beat the best loss (``settled``) is not checked: it and everything
        above it are pruned anyway, so the search treats it as feasible without tagging it.
        ``consider``, when given, scores each checked node found feasible.
        """
        grid = tag.reshape([int(h) + 1 for h in lattice.heights])  # a view: node numbers are C order

        def check(node) -> bool:
            node = int(node)
            if tag[node]:
                return tag[node] == 1
            if settled(node):
                return True
            classes, failing = evaluate(node, False)
            ok = self.feasible(failing, classes)
            # The nodes above (below) a node are a box of the lattice's grid of levels.
            levels = lattice.levels[node].tolist()
            if ok:
                above = grid[tuple(slice(level, None) for level in levels)]
                above[above == 0] = 1
                if consider is not None:
                    consider(node, classes, failing)
            else:
                grid[tuple(slice(0, level + 1) for level in levels)] = -1
            return ok

        lo, hi = 0, len(chain) - 1
        if not check(chain[hi]):
            return
        while lo < hi:
            mid = (lo + hi) // 2
            if check(chain[mid]):
                hi = mid
            else:
                lo = mid + 1

    # Heuristic search ----------------------------------------------------------------------

    def heuristic(self) -> SearchResult:
        """Best-first descent from the top: expand the node of least loss found so far.

        Feasibility is checked with every model, so the answer always satisfies them. When every
        model is monotonic, nothing below an infeasible node is feasible, so only feasible nodes
        are expanded; otherwise infeasible nodes are expanded too, ranked by their loss bound.
        Without a time limit the descent gets :data:`HEURISTIC_SECONDS`.

        Raises:
            InfeasibleError: the models are monotonic and fail at the top, or the time ran out
                before any feasible node was found.
        """
        if self.deadline is None:
            self.deadline = time.perf_counter() + HEURISTIC_SECONDS
        top = tuple(self.heights)

        def evaluate(levels: tuple) -> tuple[float, bool, int]:
            """(priority, feasible, suppressed records) of a node."""
            classes = self.base.roll_up(levels)
            self.checked_nodes.add(levels)
            failing = failing_classes(classes, self.models)
            if not self.feasible(failing, classes):
                return self.metric.loss_bound(classes), False, 0
            return self.metric.loss(classes, failing), True, int(classes.sizes[failing].sum())

        priority, feasible, suppressed = evaluate(top)
        if not feasible and self.all_tagging:
            raise self.infeasible()
        best = (priority, top, suppressed) if feasible else None
        frontier = [(priority, top)]
        seen = {top}
        exhausted = True
        while frontier:
            if self.timed_out():
                exhausted = False
                break
            _, levels = heapq.heappop(frontier)
            for j in range(len(levels)):
                if levels[j] == 0:
                    continue
                lower = levels[:j] + (levels[j] - 1,) + levels[j + 1:]
                if lower in seen:
                    continue
                seen.add(lower)
                priority, feasible, suppressed = evaluate(lower)
                if feasible or not self.all_tagging:
                    heapq.heappush(frontier, (priority, lower))
                if feasible and (best is None or priority < best[0]):
                    best = (priority, lower, suppressed)
            if self.progress:
                self.progress(len(seen), max(self.lattice_size, len(seen)))
        if best is None:
            if exhausted:
                raise self.infeasible()
            raise InfeasibleError("the heuristic search ran out of time before it found a generalization "
                                  "that satisfies the models; give it a longer time limit.")
        # With monotonic feasibility every feasible node lies on a feasible path down from the
        # top; without it, every node was expanded. Either way an exhausted frontier saw them all.
        return self.result(best[1], best[0], best[2], exhausted)
