"""Which node veil's optimal full-domain search returns on an input the minimality adversary
considers: replayed, ties included.

veil's search (:class:`veil.anonymize.FullDomain`, ``search="optimal"``) returns a feasible node
of least loss, and when several feasible nodes tie on loss, the first one it finds (see
``veil.anonymize.fulldomain._Best``). Which one it finds first follows from its walk: the chains
its predictive tagging climbs, the binary searches along them, the order of its loss bounds and
what its pruning skips; and the walk reads, of the sensitive values, which nodes pass which
models, at nodes of any loss. So among tied nodes the search's choice is fixed and replayable, and
an adversary who knows the algorithm uses it: an input counts as one that could have produced a
release only when the search, run on that input, returns the release.

:class:`SearchReplay` decides that for a candidate input (everyone's quasi-identifiers known, the
sensitive values of the candidate) without running the search where the answer is certain:

1. The release's node fails the models on the input: the search cannot return it.
2. A node whose loss is clearly lower (below the release's by more than :data:`TIE_WINDOW`,
   relative) passes: the search, being exact, returns a node of that loss or less.
3. No other node's loss lies within :data:`TIE_WINDOW` of the release's: the search returns a
   node of least loss, and every such node gives the release.
4. Otherwise veil's own search is run on the input, and its answer is kept for every input on
   which each model gives the same verdict at each node still undecided: without suppression
   and with a metric that reads only the quasi-identifiers, those verdicts are all the search
   reads of the sensitive values, so it returns the same node on all such inputs.

Case 4 runs the real search, so the replay follows the search wherever its code goes; the
key of its cache assumes only that the search stays a deterministic function of the model
verdicts (the test suite compares the replay with the search on every candidate input).

A release is read through its published texts: a node whose levels give every person the same
generalized texts as the release's node publishes the same table, so the search returning any
such node produces the release.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from veil.anonymize.lattice import Lattice
from veil.errors import DataError

if TYPE_CHECKING:  # the attack's own types, imported there
    from veil.attacks.published_classes import PublishedClasses
    from veil.classes import EquivalenceClasses
    from veil.data.dataset import Dataset

# Relative distance of two losses under which the search's floating-point comparisons could go
# either way (its own slack is 1e-12): such nodes are replayed, not ranked.
TIE_WINDOW = 1e-9


def levels_showing(published: "PublishedClasses", population: "Dataset", person_class: np.ndarray) -> list[list[int]]:
    """Per quasi-identifier, every hierarchy level at which each person's generalized value is
    the published text of their class (lowest first).

    Raises:
        DataError: no level of some column's hierarchy gives the published values.
    """
    out = []
    for j, name in enumerate(published.qis):
        gen = population.generalizations[name]
        shown = published.labels[j][published.keys[person_class, j]].astype(str)
        found = []
        for level in range(gen.levels):
            labels = np.asarray(population.labels(name, level), dtype=object).astype(str)
            if np.array_equal(labels[population.generalized_codes(name, level)], shown):
                found.append(level)
        if not found:
            raise DataError(f"column '{name}' of the release is no level of its hierarchy for these people; the "
                            "release is not a full-domain generalization of this population.")
        out.append(found)
    return out


def publishing_nodes(lattice: Lattice, levels: list[list[int]]) -> np.ndarray:
    """Mask of the lattice nodes whose every level is one of ``levels`` (the nodes that publish
    the release, from :func:`levels_showing`)."""
    mask = np.ones(len(lattice), dtype=bool)
    for j, allowed in enumerate(levels):
        mask &= np.isin(lattice.levels[:, j], allowed)
    return mask


@dataclass(frozen=True)
class NodeRanking:
    """The lattice's nodes against the release's loss.

    Attributes:
        target: the least loss of a node that publishes the release.
        publishing: mask of the nodes that publish the release.
        lower: mask of the nodes of clearly lower loss (below ``target`` by more than the window).
        tied: mask of the other nodes whose loss lies within the window of ``target``.
    """

    target: float
    publishing: np.ndarray
    lower: np.ndarray
    tied: np.ndarray


def rank_nodes(base: "EquivalenceClasses", lattice: Lattice, metric, publishing: np.ndarray) -> NodeRanking:
    """Rank every node's loss (the metric reads only the quasi-identifiers) against the release's.

    A separable metric's bound (a sum of one term per column and level, as the search uses it)
    rules out most nodes without building their classes.
    """
    def loss_at(m: int) -> float:
        return metric.loss(base.roll_up(lattice.levels[m]))

    target = min(loss_at(m) for m in np.flatnonzero(publishing).tolist())
    window = TIE_WINDOW * max(abs(target), 1.0)
    if getattr(metric, "separable", False):
        heights = lattice.heights
        terms = []
        for j, height in enumerate(heights):
            column = [0.0]
            for level in range(1, int(height) + 1):
                levels = [0] * len(heights)
                levels[j] = level
                column.append(metric.loss_bound(base.roll_up(levels)))
            terms.append(np.asarray(column))
        bound = sum(terms[j][lattice.levels[:, j]] for j in range(len(heights)))
        candidates = np.flatnonzero((bound <= target + 2 * window) & ~publishing)
    else:
        candidates = np.flatnonzero(~publishing)
    lower = np.zeros(len(lattice), dtype=bool)
    tied = np.zeros(len(lattice), dtype=bool)
    for m in candidates.tolist():
        loss = loss_at(m)
        lower[m] = loss < target - window
        tied[m] = abs(loss - target) <= window
    return NodeRanking(float(target), publishing, lower, tied)


class SearchReplay:
    """Whether veil's optimal full-domain search, run on a candidate input, returns the release
    (see the module notes).

    Args:
        publisher: the attack's :class:`~veil.attacks.minimality.OptimalFullDomain`, prepared:
            its models, metric, lattice, the release's node and the population.
        ranking: the nodes ranked against the release (:func:`rank_nodes`).

    Attributes:
        runs: how many times the search was run (the rest came from the cache).
    """

    def __init__(self, publisher, ranking: NodeRanking):
        self.publisher = publisher
        self.ranking = ranking
        self.runs = 0
        self._memo: dict[bytes, bool] = {}
        lattice: Lattice = publisher.lattice
        undecided = ~(ranking.publishing | ranking.lower)
        if all(m.monotonic for m in publisher.models):
            # Above a node that passes every (monotonic) model every node passes too.
            undecided &= ~lattice.above(publisher.node)
        self.steering = np.flatnonzero(undecided)
        self._classes: list[np.ndarray] | None = None

    @property
    def ties(self) -> bool:
        """Whether some node outside the release's ties with it on loss (case 4 can arise)."""
        return bool(self.ranking.tied.any())

    def steering_nodes(self) -> np.ndarray:
        """The nodes whose verdicts can change the search's answer among inputs on which the
        release's node passes and every node of lower loss fails: the nodes of lower loss, and,
        when some node ties, every node still undecided."""
        lower = np.flatnonzero(self.ranking.lower)
        return np.union1d(lower, self.steering) if self.ties else lower

    def returns_release(self, codes: np.ndarray) -> bool:
        """Whether the search returns the release on the input in which person ``p`` holds
        published value ``codes[p]``, given that the release's node passes there and no node of
        lower loss does (cases 1 and 2 are the caller's)."""
        if not self.ties:
            return True
        key = self._verdicts(codes)
        if key not in self._memo:
            self._memo[key] = self._run(codes)
        return self._memo[key]

    def _verdicts(self, codes: np.ndarray) -> bytes:
        pub = self.publisher
        if self._classes is None:
            self._classes = [pub.base.roll_up(pub.lattice.levels[m]).row_class for m in self.steering.tolist()]
        bits = np.zeros((len(self._classes), len(pub.models)), dtype=bool)
        for i, row_class in enumerate(self._classes):
            parts = pub._parts(row_class, codes, int(row_class.max()) + 1)
            bits[i] = [model.evaluate(parts).passed for model in pub.models]
        return np.packbits(bits).tobytes()

    def _run(self, codes: np.ndarray) -> bool:
        from veil.anonymize.fulldomain import FullDomain

        pub = self.publisher
        self.runs += 1
        search = FullDomain(pub.models, metric=pub.metric).fit(pub._candidate_dataset(codes))
        return bool(self.ranking.publishing[pub.lattice.index(search.result_.levels)])
