"""The optimal full-domain search as it stood before the search was restructured (issue 25, item 21),
kept verbatim as the reference the tests compare the search with: the same node (tie-break
included), loss and suppressed records on every input.

Only the exact search is kept (``_Search.optimal`` and what it calls); its failing classes come
from each model's full ``evaluate``, as they did then.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from typing import Sequence

import numpy as np

from veil.anonymize.lattice import Lattice
from veil.classes import EquivalenceClasses
from veil.data.dataset import Dataset
from veil.errors import InfeasibleError, ParameterError
from veil.models.base import PrivacyModel
from veil.parallel import map_threads

CACHE_CLASSES = 4_000_000
_TIE = 1e-12


class _Best:
    """The best feasible node found so far (lowest loss; the first found wins ties)."""

    def __init__(self) -> None:
        self.node: int | None = None
        self.loss = math.inf
        self.suppressed = 0

    def offer(self, node: int, loss: float, suppressed: int) -> None:
        if loss < self.loss:
            self.node, self.loss, self.suppressed = node, loss, suppressed


def failing_classes(classes: EquivalenceClasses, models: Sequence[PrivacyModel]) -> np.ndarray:
    """Mask of the classes that fail at least one model (their records would be suppressed)."""
    passed = np.ones(classes.n_classes, dtype=bool)
    for model in models:
        verdict = model.evaluate(classes).class_passed
        if verdict is None:
            raise ParameterError(f"{model.name} needs a threshold to anonymize with.")
        passed &= verdict
    return ~passed


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
        self.base = EquivalenceClasses.from_dataset(dataset, track=track)
        self.checked_nodes: set = set()

    def timed_out(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline

    def feasible(self, failing: np.ndarray, classes: EquivalenceClasses) -> bool:
        return int(classes.sizes[failing].sum()) <= self.max_suppressed

    def result(self, levels, loss: float, suppressed: int, proven: bool) -> tuple:
        return tuple(int(v) for v in levels), float(loss), int(suppressed), proven

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

    def optimal(self) -> tuple:
        lattice = Lattice(self.heights)
        self.lattice = lattice
        n_nodes = len(lattice)
        cache: OrderedDict[int, EquivalenceClasses] = OrderedDict()
        cache[0] = self.base
        # Class counts of the cached nodes (a large number elsewhere), to pick the cheapest source.
        cached_size = np.full(n_nodes, np.iinfo(np.int64).max, dtype=np.int64)
        cached_size[0] = self.base.n_classes
        held = [self.base.n_classes]
        failing_of: dict[tuple[int, bool], np.ndarray] = {}

        def classes_of(node: int) -> EquivalenceClasses:
            if node in cache:
                cache.move_to_end(node)
                return cache[node]
            candidates = np.where(lattice.below(node), cached_size, cached_size.max())
            source = cache[int(np.argmin(candidates))]
            classes = source.roll_up(lattice.levels[node])
            cache[node] = classes
            cached_size[node] = classes.n_classes
            held[0] += classes.n_classes
            while held[0] > CACHE_CLASSES and len(cache) > 1:
                oldest = next(k for k in cache if k != 0)
                held[0] -= cache.pop(oldest).n_classes
                cached_size[oldest] = np.iinfo(np.int64).max
            return classes

        def evaluate(node: int, every_model: bool) -> tuple[EquivalenceClasses, np.ndarray]:
            """Classes and failing mask under every model or the tagging ones (one cache entry
            when they are the same)."""
            classes = classes_of(node)
            key = (node, every_model or self.all_tagging)
            if key not in failing_of:
                self.checked_nodes.add(node)
                failing_of[key] = failing_classes(classes, self.models if key[1] else self.tagging_models)
            return classes, failing_of[key]

        best = _Best()
        bounds = self._node_bounds(lattice)

        def settled(node: int) -> bool:
            """Whether a node can be skipped: its known loss bound cannot beat the best found."""
            return bounds is not None and bounds[node] >= best.loss + _TIE * max(abs(best.loss), 1.0)

        def consider(node: int, classes: EquivalenceClasses, failing: np.ndarray) -> None:
            """Score a node known to be feasible under every model."""
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
        # Phase 2: branch and bound over the nodes not known to be infeasible.
        candidates = order[tag[order] >= 0] if self.tagging_models else order
        if bounds is None:
            candidates = candidates[np.argsort(lattice.height[candidates], kind="stable")]
        pruned = np.zeros(n_nodes, dtype=bool)
        proven = not self.timed_out()
        for done, node in enumerate(candidates):
            node = int(node)
            if pruned[node] or (node, True) in failing_of or (self.all_tagging and (node, False) in failing_of):
                continue
            if settled(node):
                break  # candidates are in bound order: none after this one can do better
            if self.timed_out():
                proven = False
                break
            classes = classes_of(node)
            if bounds is None and self.metric.loss_bound(classes) >= best.loss:
                pruned |= lattice.above(node)
                continue
            if self.all_tagging and tag[node] == 1 and self.max_suppressed == 0:
                failing = np.zeros(classes.n_classes, dtype=bool)
            else:
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
                raise AssertionError("the reference search has no time limit")
            raise self.infeasible()
        return self.result(lattice.levels[best.node], best.loss, best.suppressed, proven)

    def _node_bounds(self, lattice: Lattice) -> np.ndarray | None:
        """The metric's loss bound at every node, for a separable metric, else ``None``.

        A separable bound is a sum of one term per quasi-identifier and level, each read off the
        node that generalizes only that quasi-identifier.
        """
        if not getattr(self.metric, "separable", False):
            return None
        nodes = [(j, level) for j, height in enumerate(self.heights) for level in range(1, height + 1)]

        def bound(node: tuple[int, int]) -> float:
            levels = [0] * len(self.heights)
            levels[node[0]] = node[1]
            return self.metric.loss_bound(self.base.roll_up(levels))

        # The nodes are independent: they are rolled up and bounded on every core.
        terms = [np.zeros(height + 1) for height in self.heights]
        for (j, level), value in zip(nodes, map_threads(bound, nodes)):
            terms[j][level] = value
        return sum(terms[j][lattice.levels[:, j]] for j in range(len(self.heights)))

    def _tag_chain(self, lattice: Lattice, chain: np.ndarray, tag: np.ndarray, evaluate, settled,
                   consider) -> None:
        """Binary search along a path for where it becomes feasible, tagging what that proves.

        A node that cannot beat the best loss (``settled``) is not checked: it and everything
        above it are pruned anyway, so the search treats it as feasible without tagging it.
        ``consider``, when given, scores each checked node found feasible.
        """

        def check(node) -> bool:
            node = int(node)
            if tag[node]:
                return tag[node] == 1
            if settled(node):
                return True
            classes, failing = evaluate(node, False)
            ok = self.feasible(failing, classes)
            if ok:
                tag[lattice.above(node) & (tag == 0)] = 1
                if consider is not None:
                    consider(node, classes, failing)
            else:
                tag[lattice.below(node)] = -1
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


def reference_search(dataset: Dataset, models, limit: float, metric) -> tuple[tuple[int, ...], float, int, bool]:
    """``(levels, loss, suppressed records, proven optimal)`` of the old exact search.

    Raises:
        InfeasibleError: no node satisfies the models within the limit.
    """
    return _Search(dataset, models, limit, metric, None, None).optimal()
