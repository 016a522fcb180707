"""Full-domain publishers as the minimality adversary knows them: the release's node N of the
generalization lattice is published from an input T only when N satisfies the models on T and the
nodes the algorithm would have preferred do not.

* :class:`OptimalFullDomain` — veil's optimal full-domain search (:class:`~veil.anonymize.FullDomain`):
  N is returned from T iff N satisfies the models on T, no node with a lower loss (the metric
  reads only the quasi-identifiers) does, and, when other nodes tie with N on loss, the search
  finds N first; that last part is replayed with the search's own code
  (:mod:`veil.attacks.search_replay`). A heuristic or time-limited search cannot be replayed: the
  attack then reports only its bound and says why.
* :class:`MinimalFullDomain` — a minimal single-node generalization (Wong, Fu, Wang and Pei, VLDB
  2007): N satisfies the models on T and no node below N does.

Both name the classes whose members' posteriors the knowledge of the algorithm may move
(:mod:`veil.attacks.untouched`), for the bound on large tables.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from veil.anonymize.lattice import Lattice
from veil.attacks.published_classes import PublishedClasses
from veil.attacks.publisher import Parts, Publisher, model_threshold
from veil.classes import EquivalenceClasses, SensitiveCounts
from veil.data.dataset import Dataset
from veil.data.encoding import encode_column
from veil.errors import ParameterError
from veil.models.base import PrivacyModel


class _NodePublisher(Publisher):
    """What full-domain publishers share: the release's node and the nodes it beat."""

    located = True

    def __init__(self, models: Sequence[PrivacyModel]):
        if not models:
            raise ParameterError("give the privacy models the release was made to satisfy.")
        self.models = list(models)

    def threshold(self) -> float | None:
        return model_threshold(self.models)

    def rejected_nodes(self, lattice: Lattice, node: int) -> np.ndarray:
        raise NotImplementedError

    def prepare(self, published, population, person_class):
        super().prepare(published, population, person_class)
        missing = [q for q in published.qis if q not in population.generalizations]
        if missing:
            raise ParameterError(f"quasi-identifier '{missing[0]}' has no hierarchy; a full-domain release is read "
                                 "through the hierarchies of every quasi-identifier.")
        self.levels = _node_of(published, population, person_class)
        heights = [population.generalizations[q].height for q in published.qis]
        self.lattice = Lattice(heights)
        self.node = self.lattice.index(self.levels)
        self.base = EquivalenceClasses.from_dataset(population, track=())
        self.rejected = [int(m) for m in np.flatnonzero(self.rejected_nodes(self.lattice, self.node))]
        self._column = encode_column(published.sensitive, pd.Series(np.asarray(published.values, dtype=object)))
        self._node_classes: list[np.ndarray] | None = None

    def node_classes(self, nodes: Sequence[int] | None = None):
        """Each rejected node's (or each of ``nodes``') class of every person (the rejected
        nodes' are kept for the enumeration, which reads them for every candidate; computed one
        at a time otherwise)."""
        if nodes is None and self._node_classes is not None:
            yield from self._node_classes
            return
        for m in self.rejected if nodes is None else nodes:
            yield self.base.roll_up(self.lattice.levels[m]).row_class

    def steering_nodes(self) -> list[int]:
        """The nodes whose verdicts on an input decide whether the publisher returns the node."""
        return self.rejected

    def _parts(self, row_class: np.ndarray, codes: np.ndarray, n_classes: int) -> Parts:
        v = len(self.published.values)
        counts = np.bincount(row_class * v + codes, minlength=n_classes * v).reshape(n_classes, v)
        reference = counts.sum(axis=0)
        name = self.published.sensitive
        return Parts(counts.sum(axis=1), {name: SensitiveCounts(self._column, counts, reference)})

    def _passes(self, row_class: np.ndarray, codes: np.ndarray) -> bool:
        n_classes = int(row_class.max()) + 1
        parts = self._parts(row_class, codes, n_classes)
        return all(model.evaluate(parts).passed for model in self.models)

    def weight(self, codes: np.ndarray) -> float:
        if self._node_classes is None:
            self._node_classes = list(self.node_classes())
        if not self._passes(self.person_class, codes):
            return 0.0
        return 0.0 if any(self._passes(rc, codes) for rc in self._node_classes) else 1.0

    def touched(self) -> np.ndarray | None:
        from veil.attacks.untouched import touched_classes

        return touched_classes(self)


class OptimalFullDomain(_NodePublisher):
    """veil's optimal full-domain search (:class:`~veil.anonymize.FullDomain`, ``search="optimal"``,
    no suppression), replayed: an input could have produced the release iff the search, run on
    it, returns a node that publishes it; among nodes tied on loss, the one the search finds
    first (see :mod:`veil.attacks.search_replay`).

    Args:
        models: the privacy models of the release.
        metric: the utility metric searched (a key of :func:`veil.metrics.make_metric` whose loss
            reads only the quasi-identifiers; default ``"loss"``).
        search: the configuration's search, ``"optimal"`` or ``"heuristic"``.
        time_limit: the configuration's time limit, if any.

    A heuristic search, or one with a time limit, stops on a clock, so no replay can say which
    node it returns: the attack then reports only what holds whatever the adversary reasons (a
    lower bound), and says why.

    Raises:
        ParameterError: no model, a metric that needs a label column, an unknown search.
    """

    name = "optimal full-domain search"

    def __init__(self, models: Sequence[PrivacyModel], metric="loss", search: str = "optimal",
                 time_limit: float | None = None):
        super().__init__(models)
        from veil.metrics import make_metric

        self.metric = make_metric(metric) if isinstance(metric, str) else metric
        if getattr(self.metric, "needs_label", False):
            raise ParameterError(f"the {self.metric.key} metric reads a label column the adversary does not hold; "
                                 "attack releases searched with a metric of the quasi-identifiers.")
        if search not in ("optimal", "heuristic"):
            raise ParameterError(f"unknown search {search!r}; use 'optimal' or 'heuristic'.")
        self.search, self.time_limit = search, time_limit
        if search == "heuristic":
            self.name = "heuristic full-domain search"

    @property
    def unreplayable(self) -> str | None:
        from veil.anonymize.fulldomain import MAX_EXACT_NODES

        if self.search != "optimal":
            return "veil's heuristic search stops on a clock, so no replay can say which node it returns"
        if len(getattr(self, "lattice", ())) > MAX_EXACT_NODES:
            return ("the lattice is too large for the optimal search, which then searches heuristically on a "
                    "clock, so no replay can say which node it returns")
        if self.time_limit is not None:
            return "the search had a time limit, so which node it returns depends on the clock"
        return None

    def rejected_nodes(self, lattice: Lattice, node: int) -> np.ndarray:
        from veil.attacks.search_replay import SearchReplay, levels_showing, publishing_nodes, rank_nodes

        if self.unreplayable:
            return np.zeros(len(lattice), dtype=bool)  # only the class averages are reported
        publishing = publishing_nodes(lattice, levels_showing(self.published, self.population, self.person_class))
        self.replay = SearchReplay(self, rank_nodes(self.base, lattice, self.metric, publishing))
        return self.replay.ranking.lower

    def steering_nodes(self) -> list[int]:
        return self.replay.steering_nodes().tolist()

    def weight(self, codes: np.ndarray) -> float:
        if super().weight(codes) == 0.0:
            return 0.0
        return 1.0 if self.replay.returns_release(codes) else 0.0

    def touched(self) -> np.ndarray | None:
        return None if self.unreplayable else super().touched()


class MinimalFullDomain(_NodePublisher):
    """A minimal single-node generalization (Wong et al., VLDB 2007): the release's node satisfies
    the models and no node below it does.

    Args:
        models: the privacy models of the release.
    """

    name = "minimal full-domain generalization"

    def rejected_nodes(self, lattice: Lattice, node: int) -> np.ndarray:
        below = lattice.below(node)
        below[node] = False
        return below


def _node_of(published: PublishedClasses, population: Dataset, person_class: np.ndarray) -> tuple[int, ...]:
    """The lowest hierarchy level of every quasi-identifier at which each person's generalized
    value is the published text of their class.

    Raises:
        DataError: no level of some column's hierarchy gives the published values.
    """
    from veil.attacks.search_replay import levels_showing

    return tuple(found[0] for found in levels_showing(published, population, person_class))
