"""Record-level publishers as the minimality adversary knows them, replayed on every candidate
input; their published cells may overlap, so a person may lie in several classes.

* :class:`MinimalRecoding` — a minimal record-level generalization (the seed lecture's example):
  the release satisfies the models on T and publishing any set of its generalized records with
  their original quasi-identifiers would not.
* :class:`MondrianProcess`, :class:`AceProcess` — the algorithm itself, run on each candidate
  (Ace's Assign is randomized: its draws are enumerated and the candidate weighted by the share
  that publishes the release; Xiao, Tao and Koudas, TODS 2010).
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Sequence

import numpy as np
import pandas as pd

from veil.attacks.candidate_inputs import matchings
from veil.attacks.locating import locate
from veil.attacks.published_classes import PublishedClasses
from veil.attacks.publisher import Parts, Publisher, model_threshold
from veil.classes import SensitiveCounts
from veil.data.encoding import encode_column
from veil.errors import ParameterError
from veil.models.base import PrivacyModel


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
        return model_threshold(self.models)

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
        parts = Parts(counts.sum(axis=1), {self.published.sensitive: SensitiveCounts(self._column, counts,
                                                                                     counts.sum(axis=0))})
        return all(model.evaluate(parts).passed for model in self.models)

    def weight(self, codes: np.ndarray) -> float:
        for matching in matchings(self.published, self._indptr, self._covers, codes):
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
        return model_threshold(self.models)

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
        from veil.anonymize.mondrian.cells import publish

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
            classes, _, _, _ = publish(ds, dims, partition)
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
