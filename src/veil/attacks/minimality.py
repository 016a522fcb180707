"""The minimality attack (Wong, Fu, Wang and Pei, "Minimality attack in privacy preserving data
publishing", VLDB 2007): the adversary knows the algorithm.

The adversary knows every person's quasi-identifiers (an external table, the *population*), the
privacy model, and how the publisher chose the release: a generalization that is *minimal* (no
less generalized one satisfies the model), or veil's optimal full-domain search, or Mondrian, or
Ace. He considers every input table that could have produced the release, I(O, A), each as likely
a priori (every assignment of the published sensitive values to the people consistent with the
published classes), weighted by the probability that the algorithm publishes O from it, and reads
each person's posterior of each sensitive value off them (Xiao, Tao and Koudas, TODS 2010, call a
release *transparently* ℓ-diverse when no posterior exceeds 1/ℓ).

The seed lecture's example: one quasi-identifier with values q1 and q2 under Q, a model that
wants P[Cancer = yes] ≤ ½ in every class, and the release Q yes, Q yes, Q no, Q no, q2 no, q2 no.
Of the tables two q1 people and four q2 people could have, only the one where both q1 people have
cancer needed any generalization, so P[Cancer = yes | q1] = 1.

**What the adversary knows of the algorithm** (a :class:`Publisher`):

* :class:`OptimalFullDomain` — veil's optimal full-domain search (:class:`~veil.anonymize.FullDomain`):
  the release's node N is returned from T iff N satisfies the models on T, no node with a lower
  loss (the metric reads only the quasi-identifiers) does, and, when other nodes tie with N on
  loss, the search finds N first; that last part is replayed with the search's own code
  (:mod:`veil.attacks.search_replay`). A heuristic or time-limited search cannot be replayed:
  the attack then reports the bound below and says why.
* :class:`MinimalFullDomain` — a minimal single-node generalization (Wong et al.'s setting): N
  satisfies the models on T and no node below N does.
* :class:`MinimalRecoding` — a minimal record-level generalization (the seed's example): the
  release satisfies the models on T and publishing any set of its generalized records with their
  original quasi-identifiers would not.
* :class:`MondrianProcess`, :class:`AceProcess` — the algorithm itself, run on each candidate
  (Ace's Assign is randomized: its draws are enumerated and the candidate weighted by the share
  that publishes O).

**Exactly on small tables.** The candidate inputs are enumerated: per class, every distinct
arrangement of its published values over its members when everyone's class is known (full-domain
and strict Mondrian releases), otherwise every arrangement of all published values over all people
that some matching of people to published rows allows (overlapping cells: relaxed Mondrian, Ace,
record-level recoding). Posteriors are exact fractions of the weights.

**A bound on large tables** (Adult): enumeration is out of reach (or the algorithm cannot be
replayed), and the attack says so (``exact_`` is ``False``) and reports a *lower bound* on the
number of people whose posterior exceeds the threshold τ (1/ℓ), from two arguments that hold
whatever the adversary's reasoning:

1. *Class averages.* In every input the adversary considers, the members of a class C hold its
   published values, so Σ_{p ∈ C} P[p has v] = a_v (the count of v in C) for any knowledge he
   adds. With each posterior at most 1, at least ⌈(a_v − |C|τ)/(1 − τ)⌉ members have a posterior
   of v above τ. This needs the class's members to be known exactly (everyone covered by one
   class).
2. *Classes the algorithm's choice does not touch* (full-domain publishers). A node whose verdict
   steers the publisher's choice (one it must have rejected; with ties on the loss, any node the
   search's walk may read) constrains the input only through its classes that can fail the
   models for some assignment; a node with a class that fails for every assignment (at most the
   values its parts hold can be distinct) constrains nothing. When no such constraint reaches a
   class of N, the assignments inside it stay uniform and its members' posteriors are exactly
   a_v/|C|.
   "Can fail" is decided soundly (from the most concentrated values a class of such a node can
   receive, which has the fewest distinct values and the least entropy; models other than k-
   anonymity and distinct and entropy ℓ-diversity: any class may fail), so a class is called
   untouched only when it is.

The count is exact when every class is untouched; otherwise it is a lower bound, and the report
says how many people it is exact for.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction
from typing import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from veil.anonymize.lattice import Lattice
from veil.attacks.published_classes import PublishedClasses
from veil.classes import EquivalenceClasses, SensitiveCounts, group_rows
from veil.data.dataset import Dataset
from veil.data.encoding import encode_column
from veil.errors import ColumnError, DataError, ParameterError
from veil.models.base import PrivacyModel
from veil.models.diversity import DistinctLDiversity, EntropyLDiversity

# Candidate inputs enumerated at most before the attack falls back to the bound.
MAX_TABLES = 200_000
# Distinct person tuples located against the classes at a time.
_LOCATE_CHUNK = 512


# ---------------------------------------------------------------------------------------------
# The release and the population as the adversary holds them


def locate(published: PublishedClasses, population: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """Which published classes cover each person (every quasi-identifier's cell covers the
    person's value; cells read as :func:`veil.attacks.intersection.parse_published_value` reads
    them, hierarchy nodes from the population's hierarchies).

    Returns:
        ``(indptr, classes)``: person ``p`` is covered by ``classes[indptr[p]:indptr[p+1]]``.

    Raises:
        ColumnError: the population lacks a quasi-identifier.
        UnreadableValueError: a published value cannot be related to original values.
    """
    from veil.attacks.intersection import ColumnValues, hierarchy_nodes, parse_published_value

    for name in published.qis:
        if name not in population.columns:
            raise ColumnError(f"the population table has no column '{name}'; it needs every quasi-identifier "
                              f"({', '.join(published.qis)}) to locate people.")
    contains, person_value = [], []
    for j, name in enumerate(published.qis):
        col = population.column(name)
        texts = np.asarray(col.labels, dtype=object).astype(str)
        values = ColumnValues.of(texts, col.is_numeric)
        hierarchy = population.hierarchies.get(name)
        nodes = hierarchy_nodes(hierarchy) if hierarchy is not None else None
        order = population.orders.get(name)
        cells = [parse_published_value(str(text), numeric=col.is_numeric, nodes=nodes, order=order, column=name,
                                       where="the release") for text in published.labels[j].tolist()]
        contains.append(np.stack([cell.contains(values) for cell in cells]))  # [labels × values]
        person_value.append(col.codes.astype(np.int64))
    tuple_of, tuples = group_rows(person_value, [c.shape[1] for c in contains])
    pairs_tuple, pairs_class = [], []
    for lo in range(0, len(tuples), _LOCATE_CHUNK):
        chunk = tuples[lo:lo + _LOCATE_CHUNK]
        hit = np.ones((len(chunk), published.n_classes), dtype=bool)
        for j in range(len(published.qis)):
            hit &= contains[j][:, chunk[:, j]][published.keys[:, j]].T
        t, c = np.nonzero(hit)
        pairs_tuple.append(t + lo)
        pairs_class.append(c)
    pt = np.concatenate(pairs_tuple) if pairs_tuple else np.zeros(0, dtype=np.int64)
    pcl = np.concatenate(pairs_class) if pairs_class else np.zeros(0, dtype=np.int64)
    per_tuple = np.bincount(pt, minlength=len(tuples))
    tuple_indptr = np.r_[0, np.cumsum(per_tuple)]
    order = np.argsort(pt, kind="stable")
    pcl = pcl[order]
    lengths = per_tuple[tuple_of]
    indptr = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    starts = tuple_indptr[tuple_of]
    gather = np.repeat(starts - (indptr[:-1]), lengths) + np.arange(int(lengths.sum()))
    return indptr, pcl[gather].astype(np.int64)


# ---------------------------------------------------------------------------------------------
# Publishers: what the adversary knows of the algorithm


class _Parts:
    """Classes as the privacy models read them: sizes and class × value counts."""

    def __init__(self, sizes: np.ndarray, sensitive: dict[str, SensitiveCounts]):
        self.sizes = sizes
        self.sensitive = sensitive

    @property
    def n_classes(self) -> int:
        return len(self.sizes)


class Publisher:
    """What the adversary knows of how a release was made (see the module notes).

    Subclasses implement :meth:`weight`; :meth:`prepare` is called once per attack.
    """

    name = "publisher"
    located = False  # whether everyone's class must be known exactly (full-domain)
    # Why the algorithm cannot be replayed exactly, if it cannot (then only a bound is reported).
    unreplayable: str | None = None

    def prepare(self, published: PublishedClasses, population: Dataset, person_class: np.ndarray | None) -> None:
        self.published = published
        self.population = population
        self.person_class = person_class

    def weight(self, codes: np.ndarray) -> float:
        """The probability that the algorithm publishes the release from the input in which
        person ``p`` holds value ``codes[p]`` (an index into the published values)."""
        raise NotImplementedError

    def touched(self) -> np.ndarray | None:
        """For the bound: the published classes whose members' posteriors the knowledge of the
        algorithm may move away from the class frequencies (``None``: every class)."""
        return None

    def threshold(self) -> float | None:
        """The posterior bound the models promise (1/ℓ), if any."""
        return None

    def proven_at_most(self) -> tuple[float, str] | None:
        """A proven upper bound on every posterior over I(O, A), with its source, if the
        algorithm has one (Ace's)."""
        return None

    # -- helpers -----------------------------------------------------------------------------

    def _candidate_dataset(self, codes: np.ndarray) -> Dataset:
        """The population (its own columns, missing values and orders) with the sensitive column of a
        candidate input."""
        pop, qis = self.population, self.published.qis
        values = pa.array(np.asarray(self.published.values, dtype=object)[codes].tolist(), pa.string())
        data = pop.table.data.select(qis).append_column(self.published.sensitive, values)
        return Dataset(data, quasi_identifiers=qis, sensitive=self.published.sensitive,
                       hierarchies={q: h for q, h in pop.hierarchies.items() if q in qis},
                       orders={q: o for q, o in pop.orders.items() if q in qis}, missing_values=pop.missing_values)


def _model_threshold(models: Sequence[PrivacyModel]) -> float | None:
    ls = [m.threshold for m in models if isinstance(m, (DistinctLDiversity, EntropyLDiversity))
          and m.threshold is not None]
    return 1.0 / max(ls) if ls else None


class _NodePublisher(Publisher):
    """What full-domain publishers share: the release's node and the nodes it beat."""

    located = True

    def __init__(self, models: Sequence[PrivacyModel]):
        if not models:
            raise ParameterError("give the privacy models the release was made to satisfy.")
        self.models = list(models)

    def threshold(self) -> float | None:
        return _model_threshold(self.models)

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

    def _parts(self, row_class: np.ndarray, codes: np.ndarray, n_classes: int) -> _Parts:
        v = len(self.published.values)
        counts = np.bincount(row_class * v + codes, minlength=n_classes * v).reshape(n_classes, v)
        reference = counts.sum(axis=0)
        name = self.published.sensitive
        return _Parts(counts.sum(axis=1), {name: SensitiveCounts(self._column, counts, reference)})

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


class MinimalRecoding(Publisher):
    """A minimal record-level generalization (the seed lecture's example): the release satisfies
    the models, and publishing any non-empty set of its generalized records with their original
    quasi-identifiers instead would not. Exponential in the generalized records: small tables only.

    Args:
        models: the privacy models of the release.
    """

    name = "minimal record-level generalization"

    def __init__(self, models: Sequence[PrivacyModel]):
        if not models:
            raise ParameterError("give the privacy models the release was made to satisfy.")
        self.models = list(models)

    def threshold(self) -> float | None:
        return _model_threshold(self.models)

    def prepare(self, published, population, person_class):
        super().prepare(published, population, person_class)
        self._column = encode_column(published.sensitive, pd.Series(np.asarray(published.values, dtype=object)))
        # Each person's own quasi-identifier texts, and each class's.
        own = [np.asarray(population.column(q).labels, dtype=object).astype(str)[population.column(q).codes]
               for q in published.qis]
        self._own = list(zip(*own))
        self._class_text = [tuple(str(published.labels[j][published.keys[c, j]]) for j in range(len(published.qis)))
                            for c in range(published.n_classes)]
        self._indptr, self._covers = locate(published, population)

    def _satisfies(self, texts: list[tuple], codes: np.ndarray) -> bool:
        keys = {t: i for i, t in enumerate(dict.fromkeys(texts))}
        row_class = np.array([keys[t] for t in texts], dtype=np.int64)
        v = len(self.published.values)
        counts = np.bincount(row_class * v + codes, minlength=len(keys) * v).reshape(len(keys), v)
        parts = _Parts(counts.sum(axis=1), {self.published.sensitive: SensitiveCounts(self._column, counts,
                                                                                      counts.sum(axis=0))})
        return all(model.evaluate(parts).passed for model in self.models)

    def weight(self, codes: np.ndarray) -> float:
        for matching in _matchings(self.published, self._indptr, self._covers, codes):
            texts = [self._class_text[c] for c in matching]
            generalized = [p for p, t in enumerate(texts) if t != self._own[p]]
            minimal = True
            for size in range(1, len(generalized) + 1):
                for restored in itertools.combinations(generalized, size):
                    trial = list(texts)
                    for p in restored:
                        trial[p] = self._own[p]
                    if self._satisfies(trial, codes):
                        minimal = False
                        break
                if not minimal:
                    break
            if minimal:
                return 1.0
        return 0.0


class MondrianProcess(Publisher):
    """Mondrian itself (:class:`~veil.anonymize.Mondrian`), run on every candidate input: it could
    have published the release iff it does.

    Args:
        models: the privacy models of the release.
        mode: Mondrian's mode (``"strict"`` or ``"relaxed"``).
        categorical: how Mondrian split categorical columns (as for :class:`~veil.anonymize.Mondrian`).
    """

    name = "Mondrian"

    def __init__(self, models: Sequence[PrivacyModel], mode: str = "strict", categorical="hierarchy"):
        from veil.anonymize.mondrian import Mondrian

        self.mondrian = Mondrian(models, mode=mode, categorical=categorical)
        self.models = list(models)

    def threshold(self) -> float | None:
        return _model_threshold(self.models)

    def prepare(self, published, population, person_class):
        super().prepare(published, population, person_class)
        self._target = published.multiset()

    def weight(self, codes: np.ndarray) -> float:
        from veil.anonymize.fulldomain import InfeasibleError

        ds = self._candidate_dataset(codes)
        try:
            # Compared as a multiset and never published: the row order does not matter.
            release = self.mondrian.fit_transform(ds, shuffle=False)
        except InfeasibleError:
            return 0.0
        out = PublishedClasses.read(release, self.published.qis, self.published.sensitive)
        return 1.0 if out.multiset() == self._target else 0.0


class AceProcess(Publisher):
    """Ace (:class:`~veil.anonymize.Ace`) on every candidate input, weighted by the share of
    Assign's equally likely draws from which Split publishes the release.

    Args:
        l: Ace's ℓ.
        categorical: as for :class:`~veil.anonymize.Ace`.
    """

    name = "Ace"

    def __init__(self, l: int, categorical="hierarchy"):
        from veil.anonymize.ace import Ace

        self.ace = Ace(l=l, categorical=categorical)
        self.l = int(l)

    def threshold(self) -> float | None:
        return 1.0 / self.l

    def proven_at_most(self) -> tuple[float, str] | None:
        return 1.0 / self.l, "Xiao, Tao and Koudas (TODS 2010), Lemmas 1 and 2: every posterior is at most 1/ℓ"

    def prepare(self, published, population, person_class):
        super().prepare(published, population, person_class)
        self._target = published.multiset()

    def weight(self, codes: np.ndarray) -> float:
        from veil.anonymize.ace import _local_groups, assign_rounds, split
        from veil.anonymize.mondrian import _publish

        ds = self._candidate_dataset(codes)
        column = ds.column(self.published.sensitive)
        value_codes = column.codes.astype(np.int64)
        counts = column.counts()
        if self.l * counts.max() > len(value_codes):
            return 0.0
        rounds = assign_rounds(counts, self.l)
        alpha = np.array([a for _, a in rounds], dtype=np.int64)
        dims = self.ace._dimensions(ds)
        ranks = np.stack([dim.rank[dim.column.codes] for dim in dims]).astype(np.int32)
        hits = total = 0
        for bucket in _assign_outcomes(value_codes, rounds):
            total += 1
            partition, _ = split(ranks, dims, bucket, _local_groups(bucket, value_codes), alpha)
            classes, _, _, _ = _publish(ds, dims, partition)
            texts = [np.asarray(classes.cells(j).labels, dtype=object)[classes.keys[classes.row_class, j]]
                     for j in range(len(dims))]
            sens = np.asarray(column.labels, dtype=object)[value_codes]
            rows = Counter(tuple(str(t[p]) for t in texts) + (str(sens[p]),) for p in range(len(value_codes)))
            hits += rows == self._target
        return hits / total


def _assign_outcomes(codes: np.ndarray, rounds):
    """Every outcome of Assign's draws (the round of every tuple), each equally likely: per value,
    every way to deal its tuples into its rounds."""
    per_value = []
    for v in np.unique(codes).tolist():
        tuples = np.flatnonzero(codes == v).tolist()
        slots = [(r, a) for r, (values, a) in enumerate(rounds) if v in set(values.tolist())]
        ways = []

        def deal(rest, k, chosen):
            if k == len(slots):
                ways.append(list(chosen))
                return
            r, a = slots[k]
            for pick in itertools.combinations(rest, a):
                left = [t for t in rest if t not in pick]
                deal(left, k + 1, chosen + [(t, r) for t in pick])

        deal(tuples, 0, [])
        per_value.append(ways)
    for combination in itertools.product(*per_value):
        bucket = np.empty(len(codes), dtype=np.int64)
        for way in combination:
            for t, r in way:
                bucket[t] = r
        yield bucket


# ---------------------------------------------------------------------------------------------
# Enumerating the candidate inputs


def _multiset_permutations(counts: list[int]):
    """Every distinct sequence holding value ``v`` ``counts[v]`` times."""
    total = sum(counts)
    seq = [0] * total

    def fill(i):
        if i == total:
            yield tuple(seq)
            return
        for v, c in enumerate(counts):
            if c:
                counts[v] -= 1
                seq[i] = v
                yield from fill(i + 1)
                counts[v] += 1

    yield from fill(0)


def _matchings(published: PublishedClasses, indptr: np.ndarray, covers: np.ndarray, codes: np.ndarray):
    """Every assignment of people to published classes that puts each person in a class covering
    them, with a row of their value left (class sizes and values respected)."""
    left = published.counts.copy()
    n = len(codes)
    chosen = [0] * n

    def place(p):
        if p == n:
            yield list(chosen)
            return
        v = codes[p]
        for c in covers[indptr[p]:indptr[p + 1]].tolist():
            if left[c, v]:
                left[c, v] -= 1
                chosen[p] = c
                yield from place(p + 1)
                left[c, v] += 1

    yield from place(0)


def _count_tables(published: PublishedClasses, person_class: np.ndarray | None) -> int:
    if person_class is not None:
        total = 1
        for row in published.counts.tolist():
            total *= math.factorial(sum(row)) // math.prod(math.factorial(c) for c in row)
        return total
    counts = published.counts.sum(axis=0).tolist()
    return math.factorial(sum(counts)) // math.prod(math.factorial(c) for c in counts)


def _candidates(published: PublishedClasses, person_class: np.ndarray | None, indptr, covers):
    """Every candidate input (the value of every person) consistent with the published classes."""
    n = len(person_class) if person_class is not None else len(indptr) - 1
    if person_class is not None:
        members = [np.flatnonzero(person_class == c) for c in range(published.n_classes)]
        per_class = [list(_multiset_permutations(row.tolist())) for row in published.counts]
        for arrangement in itertools.product(*per_class):
            codes = np.empty(n, dtype=np.int64)
            for people, values in zip(members, arrangement):
                codes[people] = values
            yield codes
        return
    for seq in _multiset_permutations(published.counts.sum(axis=0).tolist()):
        codes = np.array(seq, dtype=np.int64)
        if next(_matchings(published, indptr, covers, codes), None) is not None:
            yield codes


# ---------------------------------------------------------------------------------------------
# The bound


def _node_of(published: PublishedClasses, population: Dataset, person_class: np.ndarray) -> tuple[int, ...]:
    """The lowest hierarchy level of every quasi-identifier at which each person's generalized
    value is the published text of their class.

    Raises:
        DataError: no level of some column's hierarchy gives the published values.
    """
    from veil.attacks.search_replay import levels_showing

    return tuple(found[0] for found in levels_showing(published, population, person_class))


# ---------------------------------------------------------------------------------------------
# The attack


class MinimalityAttack:
    """The minimality attack: posteriors over the inputs that could have produced a release.

    Args:
        publisher: what the adversary knows of the algorithm (a :class:`Publisher`).
        threshold: the posterior τ above which a person counts as exposed (default: the
            publisher's 1/ℓ).
        max_tables: enumerate at most this many candidate inputs; beyond, bound (see the module
            notes).
        values: the sensitive values whose posteriors count (as text; default every value), e.g.
            only ``yes`` when learning that someone does *not* have cancer is acceptable.

    Attributes (after :meth:`fit`):
        exact_: whether posteriors were computed exactly (enumeration, the algorithm replayed).
        unreplayable_: why the algorithm cannot be replayed exactly (then only the bound is
            reported), or ``None``.
        values_: the sensitive values (text).
        posterior_: exact mode: ``[people × values]`` posteriors; else ``None``.
        tables_: exact mode: the candidate inputs enumerated, and ``consistent_``: those the
            algorithm could have published the release from.
        person_class_: each person's class, or −1 when several classes cover them.
        exceeding_: the number of people whose posterior exceeds τ (exact mode), or a lower bound.
        exact_people_: the people for whom that is known exactly (everyone in exact mode).
        class_bound_: bound mode: per class, at least how many members exceed τ.

    Raises:
        ParameterError: a threshold outside (0, 1); no threshold can be found or given.
    """

    def __init__(self, publisher: Publisher, *, threshold: float | None = None, max_tables: int = MAX_TABLES,
                 values: Sequence[str] | None = None):
        if threshold is not None and not 0 < threshold < 1:
            raise ParameterError(f"the posterior threshold is a probability strictly between 0 and 1, not "
                                 f"{threshold:g}.")
        self.publisher = publisher
        self.threshold = threshold
        self.max_tables = int(max_tables)
        self.values = None if values is None else [str(v) for v in values]

    def fit(self, release, population: Dataset, *, sensitive: str | None = None,
            quasi_identifiers: Sequence[str] | None = None) -> "MinimalityAttack":
        """Attack ``release`` (a veil Release, a frame, a pyarrow Table or a path) knowing
        ``population`` (a Dataset of everyone's quasi-identifiers, with their hierarchies).

        Raises:
            ColumnError: the release or the population lacks a column.
            DataError: the population does not match the release (class sizes), or no input
                the algorithm could have published the release from exists.
            ParameterError: a value of ``values`` that the release's sensitive column does not hold.
        """
        from veil.anonymize.release import Release

        if isinstance(release, Release):
            quasi_identifiers = quasi_identifiers or release.dataset.quasi_identifiers
            sensitive = sensitive or self._sensitive_of(release)
        qis = list(quasi_identifiers or population.quasi_identifiers)
        if sensitive is None:
            raise ParameterError("name the sensitive column of the release to attack.")
        published = PublishedClasses.read(release, qis, sensitive)
        tau = self.threshold if self.threshold is not None else self.publisher.threshold()
        if tau is None:
            raise ParameterError("give the posterior threshold to report (the models name no ℓ to take 1/ℓ from).")
        if population.num_rows != int(published.sizes.sum()):
            raise DataError(f"the population has {population.num_rows:,} people and the release {int(published.sizes.sum()):,} "
                            "rows; the attack needs one row per person (a release without suppressed records).")
        indptr, covers = locate(published, population)
        n_cover = np.diff(indptr)
        if (n_cover == 0).any():
            p = int(np.flatnonzero(n_cover == 0)[0])
            raise DataError(f"person {p} of the population lies in no published class; the population does not "
                            "match the release.")
        unique = n_cover == 1
        person_class = np.full(len(n_cover), -1, dtype=np.int64)
        person_class[unique] = covers[indptr[:-1][unique]]
        located = bool(unique.all()) and np.array_equal(
            np.bincount(person_class, minlength=published.n_classes), published.sizes)
        if self.publisher.located and not located:
            raise DataError("some people lie in several published classes or the class sizes do not match the "
                            "population, so this is not a full-domain release of this population.")
        self.values_ = published.values
        held = published.values.astype(str)
        unknown = [] if self.values is None else [v for v in self.values if v not in held]
        if unknown:
            shown = ", ".join(held[:8].tolist()) + (f" and {len(held) - 8} more" if len(held) > 8 else "")
            raise ParameterError(f"the release's column '{sensitive}' holds no value {unknown[0]!r} to count; its "
                                 f"values are {shown}.")
        self.protected_ = np.ones(len(held), dtype=bool) if self.values is None else np.isin(held, self.values)
        self.threshold_ = float(tau)
        self.person_class_ = person_class
        self.published_ = published
        self.publisher.prepare(published, population, person_class if located else None)
        self.unreplayable_ = self.publisher.unreplayable
        if (self.unreplayable_ is None
                and _count_tables(published, person_class if located else None) <= self.max_tables):
            self._enumerate(published, person_class if located else None, indptr, covers)
        else:
            self._bound(published, person_class, located)
        return self

    @property
    def count_exact_(self) -> bool:
        """Whether :attr:`exceeding_` is the exact number (else a lower bound)."""
        return self.exact_people_ == len(self.person_class_)

    @staticmethod
    def _sensitive_of(release) -> str:
        targets = {m.sensitive for m in release.models if getattr(m, "sensitive", None)}
        if len(targets) == 1:
            return targets.pop()
        if len(release.dataset.sensitive) == 1:
            return release.dataset.sensitive[0]
        raise ParameterError("the release has several sensitive columns; name the one to attack.")

    def _enumerate(self, published, person_class, indptr, covers) -> None:
        self.proven_ = None
        n = len(indptr) - 1
        weights = np.zeros((n, len(published.values)))
        total = 0.0
        tables = consistent = 0
        people = np.arange(n)
        for codes in _candidates(published, person_class, indptr, covers):
            tables += 1
            w = self.publisher.weight(codes)
            if w > 0:
                consistent += 1
                total += w
                weights[people, codes] += w
        if total == 0:
            raise DataError(f"none of the {tables:,} inputs this population could have had leads the "
                            f"{self.publisher.name} to this release; check the models and the algorithm.")
        self.exact_ = True
        self.tables_ = tables
        self.consistent_ = consistent
        self.posterior_ = weights / total
        exceeding = self.posterior_[:, self.protected_].max(axis=1) > self.threshold_ + 1e-12
        self.exceeding_ = int(exceeding.sum())
        self.exact_people_ = n
        self.class_bound_ = None

    def _bound(self, published, person_class, located) -> None:
        self.exact_ = False
        self.posterior_ = None
        self.tables_ = self.consistent_ = None
        tau = Fraction(self.threshold_).limit_denominator(10 ** 6)
        sizes = published.sizes
        bound = np.zeros(published.n_classes, dtype=np.int64)
        if located:
            for c in range(published.n_classes):
                a = int(published.counts[c][self.protected_].max())
                need = (a - int(sizes[c]) * tau) / (1 - tau)
                bound[c] = min(int(sizes[c]), max(0, math.ceil(need)))
        touched = self.publisher.touched() if located else None
        exact_class = np.zeros(published.n_classes, dtype=bool) if touched is None else ~touched
        # An untouched class's members all have the class frequencies as posteriors.
        frequency_exceeds = published.counts[:, self.protected_].max(axis=1) > sizes * self.threshold_ + 1e-12
        bound = np.where(exact_class, np.where(frequency_exceeds, sizes, 0), bound)
        proven = self.publisher.proven_at_most()
        self.proven_ = None
        if proven is not None and proven[0] <= self.threshold_ + 1e-12:
            # No posterior can exceed the threshold: the count is exactly 0.
            bound = np.zeros(published.n_classes, dtype=np.int64)
            exact_class = np.ones(published.n_classes, dtype=bool)
            self.proven_ = proven[1]
        self.class_bound_ = bound
        self.exact_class_ = exact_class
        self.exceeding_ = int(bound.sum())
        self.exact_people_ = int(sizes[exact_class].sum())

    def summary(self) -> dict:
        """The result as a JSON-ready dict."""
        n = len(self.person_class_)
        out = {"publisher": self.publisher.name, "people": n, "classes": self.published_.n_classes,
               "threshold": self.threshold_, "enumerated": self.exact_, "count_exact": self.count_exact_,
               "exceeding" if self.count_exact_ else "exceeding_at_least": self.exceeding_,
               "share": self.exceeding_ / n if n else 0.0, "people_known_exactly": self.exact_people_}
        if self.exact_:
            out.update({"inputs_enumerated": self.tables_, "inputs_consistent": self.consistent_})
        elif self.proven_ is not None:
            out["proven"] = self.proven_
        if not self.exact_:
            out["not_enumerated"] = self.unreplayable_ or "too many inputs to enumerate"
        return out

    def per_person(self, ids: Sequence | None = None) -> pd.DataFrame:
        """One row per person: class, most likely value and its posterior (exact mode), or the
        class frequency when it is exact and nothing otherwise (bound mode), and whether the
        posterior exceeds the threshold (``None`` when unknown)."""
        n = len(self.person_class_)
        frame = pd.DataFrame({"person": list(ids) if ids is not None else np.arange(n), "class": self.person_class_})
        protected = np.flatnonzero(self.protected_)
        if self.exact_:
            best = protected[self.posterior_[:, protected].argmax(axis=1)]
            frame["value"] = self.values_[best]
            frame["posterior"] = self.posterior_[np.arange(n), best]
            frame["exceeds"] = frame["posterior"] > self.threshold_ + 1e-12
            return frame
        if self.proven_ is not None:
            frame["value"], frame["posterior"] = None, np.nan
            frame["exceeds"] = pd.array(np.zeros(n, dtype=bool), dtype="boolean")
            return frame
        counts = self.published_.counts[:, protected]
        cls = np.maximum(self.person_class_, 0)
        known = (self.person_class_ >= 0) & self.exact_class_[cls]
        share = counts[cls].max(axis=1) / counts[cls].sum(axis=1)
        frame["value"] = np.where(known, self.values_[protected[counts[cls].argmax(axis=1)]], None)
        frame["posterior"] = np.where(known, share, np.nan)
        frame["exceeds"] = pd.array(np.where(known, share > self.threshold_ + 1e-12, False), dtype="boolean")
        frame.loc[~known, "exceeds"] = pd.NA
        return frame
