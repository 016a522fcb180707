"""Ace: transparent ℓ-diversity (Xiao, Tao and Koudas, "Transparent anonymization: thwarting
adversaries who know the algorithm", ACM TODS 35(2), 2010).

An adversary who knows the anonymization algorithm can rule out input tables that would not have
produced the release (the minimality attack of Wong, Fu, Wang and Pei, VLDB 2007,
:mod:`veil.attacks.minimality`). *Transparent* ℓ-diversity asks that, over the input tables that
could have produced the release, no person's posterior probability of any sensitive value exceed
1/ℓ. Ace achieves it in two phases, each blind to one half of the data:

**Assign** (randomized; reads only the sensitive values). The tuples are grouped by sensitive
value. Repeatedly, from the β ≥ ℓ most frequent values left, α tuples of each are drawn at random
and form one bucket, with β = ℓ unless taking ℓ values cannot leave an ℓ-eligible rest (then the
values tied with the most frequent are all taken), and α as large as the rest stays ℓ-eligible
(no value on more than 1/ℓ of the tuples left) and the β-th value has tuples. The table is
ℓ-eligible to begin with or no ℓ-diverse bucketization exists (the error says what ℓ the data
allows); every round keeps it eligible, so every tuple ends in a bucket. Ties between equally
frequent values go to the value first in the column's order; which tuples of a value a round
draws is random: from the operating system's secure source, or from ``rng`` when one is given
(reproducible, for experiments: whoever knows the seed can replay Assign, and the argument below
needs its draws to be secret).

**Split** (deterministic; reads only the quasi-identifiers). A bucket holding α > 1 tuples of each
of its values is split in two, ⌊α/2⌋ tuples of each value in one part and the rest in the other,
until every bucket holds one tuple of each value. Split sees which tuples of a bucket share a
value (the groups, numbered by their first row) but never which value a group holds. For each
quasi-identifier it forms the candidate that puts in the first part the ⌊α/2⌋ tuples of every
group lowest on that quasi-identifier (ties: earlier row), and it keeps the candidate with the
least certainty penalty, Σ over the parts and quasi-identifiers of |part| × the normalized width
of the part's cell (as Mondrian measures it; ties: the quasi-identifier listed first).

**Why it is transparent** (the paper's Lemmas 1 and 2). Relabel the values inside one bucket of
the intermediate result (every tuple holding value v there now holds w and vice versa): the
table has the same value counts, Assign reaches the same buckets with the same probability, and
Split, which sees the groups but not their values, makes the same parts. So every input table
that could have produced the release has a twin, equally likely, in which any person holds any
other value of the bucket instead: each person's posterior of each value of their final bucket is
exactly 1/β ≤ 1/ℓ. (The property tests run Split on tables with the values relabelled inside
buckets, and the minimality attack on Ace's releases.) Split cannot
be blind to *which tuples share* a value as well: with values v, v, w, w on four tuples, a split
into two pairs is ℓ-diverse only if each pair holds a v and a w, and for any fixed pairing some
assignment puts both v's in one pair. The argument needs only that Split never sees *which*
value a group holds.

**What is published** is Mondrian's publication of the final buckets (:mod:`veil.anonymize.mondrian.cells`):
per quasi-identifier the range of the bucket's values, or the lowest common hierarchy node, or
the set of values, with every record's own sensitive value; buckets whose cells print alike are
one class (a union of buckets each uniform over ≥ ℓ values is still distinct and entropy
ℓ-diverse, and each person's posterior stays ≤ 1/ℓ). No record is suppressed. Rows are
shuffled by default; keeping the input's order is a choice the manifest flags, and it breaks
transparency when the input's order is known (sorted by name, say), since the adversary then
tells people apart by their row. Other sensitive columns are published unchanged, like
insensitive ones. Other privacy models given to Ace are checked on the release and stop the run if they fail: Ace guarantees transparent ℓ-diversity,
hence distinct and entropy ℓ-diversity (a bucket's values are uniform) and k-anonymity for k ≤ ℓ,
and nothing else.

**Cost.** Assign is a loop over rounds on the value counts (a heap; O(rounds · β log m) for m
values) and one sort of the tuples. Split is level-synchronous: every round handles all buckets
at once; the tuples of each quasi-identifier's order are kept grouped by bucket and group, so a
candidate is a prefix of each group's run, and a split is a stable partition of each run (no
sort after the first). A round costs O(d² · n) for d quasi-identifiers, and there are
⌈log₂ α_max⌉ rounds.
"""

from __future__ import annotations

import heapq
import math
import os
import time
from typing import Callable, Mapping, Sequence

import numpy as np

from veil.anonymize.base import Anonymizer
from veil.anonymize.fulldomain import InfeasibleError
# Ace publishes its buckets exactly as Mondrian publishes its partitions.
from veil.anonymize.mondrian.cells import publish
from veil.anonymize.mondrian.dimensions import CATEGORICAL, Forced, dimension
from veil.data.dataset import Dataset
from veil.errors import ColumnError, ParameterError
from veil.models.base import PrivacyModel
from veil.models.diversity import DistinctLDiversity, EntropyLDiversity
from veil.models.risk import refuse_table_models

# Entries of the manifest's recoding that count what Assign and the splits did on the input, beyond
# what the published table shows: kept in the private file (veil.manifests).
PRIVATE_RECODING = ("assign_rounds", "buckets", "split_rounds", "seconds")

class Ace(Anonymizer):
    """Ace, the transparent ℓ-diversity algorithm (see the module notes).

    Args:
        models: privacy models the release must also satisfy (checked on it; Ace guarantees
            transparent ℓ-diversity, hence distinct and entropy ℓ-diversity, and nothing else).
            Without ``l``, ℓ is the largest ℓ of their distinct or entropy ℓ-diversity models.
        l: ℓ, a whole number ≥ 1: every person's posterior of any sensitive value, over the
            input tables that could have produced the release, is at most 1/ℓ.
        sensitive: the sensitive column to protect (default: the one the ℓ-diversity models
            name, else the dataset's only one).
        categorical: how categorical quasi-identifiers are published and measured, as for
            :class:`~veil.anonymize.Mondrian`: ``"hierarchy"`` (the lowest common node) or
            ``"order"``, or a mapping from columns to either.
        metric: the utility metric recorded with the release.
        suppression_limit: kept for configuration compatibility, in [0, 1): Ace suppresses
            nothing.
        rng: ``None`` (Assign draws from the operating system's secure source), or a seed or
            ``numpy.random.Generator`` (reproducible; the release says it is not fit for release).

    Attributes (after :meth:`fit`):
        l_: the ℓ used.
        rounds_: Assign's rounds, each ``(values, alpha)``: the sensitive values (as text) of
            the bucket it made and the tuples it drew of each.
        intermediate_: the bucket of every record after Assign (its round).
        partition_: the final bucket of every record after Split.
        split_rounds_: rounds of splitting.
        classes_: the :class:`~veil.classes.EquivalenceClasses` of the release.
        seconds_: time :meth:`fit` took.

    Raises:
        ParameterError: ℓ is not a whole number ≥ 1 or is neither given nor found in the models,
            an unknown ``categorical`` choice, a suppression limit outside [0, 1).
    """

    algorithm = "ace"

    def __init__(self, models: Sequence[PrivacyModel] | None = None, *, l: int | None = None,
                 sensitive: str | None = None, categorical: str | Mapping[str, str] = "hierarchy", metric="loss",
                 suppression_limit: float = 0.0, rng: np.random.Generator | int | None = None):
        models = list(models or [])
        refuse_table_models(models, "Ace")
        diversity = [m for m in models if isinstance(m, (DistinctLDiversity, EntropyLDiversity))
                     and m.threshold is not None]
        if l is None:
            if not diversity:
                raise ParameterError("Ace needs ℓ: give l, or a distinct or entropy ℓ-diversity model.")
            l = math.ceil(max(m.threshold for m in diversity) - 1e-9)
        if isinstance(l, bool) or not float(l).is_integer() or l < 1:
            raise ParameterError(f"Ace's ℓ is a whole number of at least 1, not {l!r}.")
        if not 0 <= suppression_limit < 1:
            raise ParameterError(f"the suppression limit is a share of records in [0, 1), not {suppression_limit}.")
        choices = categorical.values() if isinstance(categorical, Mapping) else [categorical]
        for choice in choices:
            if choice not in CATEGORICAL:
                raise ParameterError(f"categorical columns are published along their 'hierarchy' or on their "
                                     f"'order', not {choice!r}.")
        if sensitive is None:
            named = {m.sensitive for m in diversity if m.sensitive is not None}
            sensitive = named.pop() if len(named) == 1 else None
        self.models = models
        self.l = int(l)
        self.sensitive = sensitive
        self.categorical = dict(categorical) if isinstance(categorical, Mapping) else categorical
        self.metric = metric
        self.suppression_limit = float(suppression_limit)
        self.rng = rng

    def __repr__(self) -> str:
        return (f"Ace(models={self.models}, l={self.l}, sensitive={self.sensitive!r}, "
                f"categorical={self.categorical!r})")

    @property
    def seeded(self) -> bool:
        """Whether Assign's draws are reproducible (and so not fit for release)."""
        return self.rng is not None

    def _metric(self):
        from veil.metrics import make_metric

        return make_metric(self.metric) if isinstance(self.metric, str) else self.metric

    def _release_models(self, sensitive: str) -> list[PrivacyModel]:
        """The models the release reports: the given ones, and distinct ℓ-diversity of the
        protected column unless a model already says as much."""
        said = any(isinstance(m, DistinctLDiversity) and m.threshold is not None and m.threshold >= self.l
                   and m.sensitive in (None, sensitive) for m in self.models)
        return self.models + ([] if said else [DistinctLDiversity(self.l, sensitive=sensitive)])

    def _sensitive_column(self, dataset: Dataset) -> str:
        if self.sensitive is not None:
            if self.sensitive not in dataset.sensitive:
                raise ColumnError(f"Ace was asked to protect '{self.sensitive}', which is not a sensitive column; "
                                  f"the sensitive columns are {', '.join(dataset.sensitive) or 'none'}.")
            return self.sensitive
        if len(dataset.sensitive) != 1:
            if not dataset.sensitive:
                raise ColumnError("Ace protects a sensitive column, and the dataset declares none; declare one.")
            raise ColumnError(f"Ace protects one sensitive column and the dataset declares "
                              f"{len(dataset.sensitive)} ({', '.join(dataset.sensitive)}); name the one to protect.")
        return dataset.sensitive[0]

    def _dimensions(self, dataset: Dataset) -> list:
        qis = dataset.quasi_identifiers
        if isinstance(self.categorical, dict):
            for name in self.categorical:
                if name not in qis:
                    raise ColumnError(f"categorical names column '{name}', which is not a quasi-identifier; "
                                      f"the quasi-identifiers are {', '.join(qis)}.")
        dims = []
        for name in qis:
            if isinstance(self.categorical, dict):
                choice = Forced(self.categorical[name]) if name in self.categorical else "hierarchy"
            else:
                choice = self.categorical
            dims.append(dimension(dataset, name, choice))
        return dims

    def fit(self, dataset: Dataset, progress: Callable[[int, int], None] | None = None) -> "Ace":
        """Assign and Split ``dataset``'s records.

        Args:
            dataset: the table (quasi-identifiers need no hierarchy).
            progress: called as ``progress(records_in_final_buckets, records)`` each round.

        Raises:
            ColumnError: the sensitive column is not given and the dataset does not declare
                exactly one.
            InfeasibleError: ℓ exceeds what the sensitive values allow (the message says the
                largest ℓ they allow), or the release fails one of ``models``.
        """
        started = time.perf_counter()
        name = self._sensitive_column(dataset)
        column = dataset.column(name)
        codes = column.codes.astype(np.int64)
        counts = column.counts()
        n = len(codes)
        _check_eligible(self.l, counts, column.labels, name, n)
        rounds = assign_rounds(counts, self.l)
        bucket = _assign_tuples(codes, counts, rounds, self.rng)
        group = _local_groups(bucket, codes)
        alpha = np.array([a for _, a in rounds], dtype=np.int64)
        dims = self._dimensions(dataset)
        ranks = np.empty((len(dims), n), dtype=np.int32)
        for j, dim in enumerate(dims):
            ranks[j] = dim.rank[dim.column.codes]
        partition, split_rounds = split(ranks, dims, bucket, group, alpha, progress)
        classes, keys, boxes, _ = publish(dataset, dims, partition)
        self.release_models_ = self._release_models(name)
        for model in self.release_models_:
            result = model.evaluate(classes)
            if not result.passed:
                raise InfeasibleError(f"Ace's release does not satisfy {model.name} at {model.threshold:g} (it reaches "
                                      f"{result.level:.4g}): Ace guarantees transparent ℓ-diversity only; drop that "
                                      "model or use another algorithm.")
        labels = np.asarray(column.labels, dtype=object)
        self.l_ = self.l
        self.rounds_ = [([str(v) for v in labels[values]], int(a)) for values, a in rounds]
        self.intermediate_ = bucket
        self.partition_ = partition
        self.split_rounds_ = split_rounds
        self.sensitive_ = name
        self.dataset_ = dataset
        self.classes_ = classes
        self.kinds_ = {dim.name: dim.kind for dim in dims}
        self._boxes = (boxes, keys)
        self.seconds_ = time.perf_counter() - started
        return self

    def transform(self, dataset: Dataset, *, suppressed: str = "remove", shuffle: bool = True,
                  rng: np.random.Generator | int | None = None):
        """The release of the buckets found by :meth:`fit`, rows shuffled unless told otherwise.

        Args:
            dataset: the dataset :meth:`fit` anonymized.
            suppressed: ``"remove"`` or ``"star"`` (Ace suppresses no record).
            shuffle: publish the rows in random order (the default), so that releases of one table
                cannot be joined by position; ``False`` keeps the input order, which the manifest
                and the ledger's gate flag as linkable by position.
            rng: ``None`` (default) shuffles with the secure source; a seed or generator makes a
                reproducible shuffle, not fit for release.

        Raises:
            ParameterError: :meth:`fit` was not called, or was called on another dataset.
        """
        from veil.anonymize.release import Release

        if not hasattr(self, "classes_"):
            raise ParameterError("call fit before transform.")
        if dataset is not self.dataset_:
            raise ParameterError("Ace's buckets belong to the dataset it was fitted on; call fit on this one first "
                                 "(or fit_transform).")
        classes = self.classes_
        return Release(dataset, classes, np.zeros(classes.n_classes, dtype=bool), algorithm=self.algorithm,
                       models=self.release_models_, suppression_limit=self.suppression_limit,
                       metric=self._metric(), search=None, suppressed=suppressed, shuffle=shuffle, rng=rng,
                       recoding=self.recoding, private_recoding=PRIVATE_RECODING)

    def recoding(self) -> dict:
        """The manifest entry: the settings, Assign's rounds, and each released class's size and
        box (as Mondrian's manifest gives them)."""
        boxes, keys = self._boxes
        names = list(self.kinds_)
        columns = [[boxes[j][c] for c in keys[:, j]] for j in range(len(names))]
        partitions = [{"size": size, "box": dict(zip(names, cells))}
                      for size, cells in zip(self.classes_.sizes.tolist(), zip(*columns))]
        return {"l": self.l, "sensitive": self.sensitive_, "published": dict(self.kinds_),
                "assign_rounds": len(self.rounds_), "buckets": int(self.partition_.max()) + 1,
                "split_rounds": self.split_rounds_, "seeded": self.seeded, "fit_for_release": not self.seeded,
                **({"not_fit_because": "Assign's draws came from a given seed; whoever knows it can replay them"}
                   if self.seeded else {}),
                "seconds": round(self.seconds_, 4), "partitions": partitions}


# ---------------------------------------------------------------------------------------------
# Assign


def _check_eligible(l: int, counts: np.ndarray, labels, name: str, n: int) -> None:
    """Refuse an ℓ no bucketization can meet: some value on more than 1/ℓ of the records."""
    top = int(counts.max())
    if l * top <= n:
        return
    allowed = n // top
    distinct = int((counts > 0).sum())
    most = str(labels[int(np.argmax(counts))])
    if l > distinct:
        why = f"'{name}' holds only {distinct} distinct value{'s' if distinct != 1 else ''}"
    else:
        why = f"its most frequent value {most!r} holds {top:,} of the {n:,} records"
    raise InfeasibleError(f"ℓ = {l} is more than the data allows: {why}, so Ace can reach at most ℓ = {allowed}; "
                          "lower ℓ.")


def assign_rounds(counts: np.ndarray, l: int) -> list[tuple[np.ndarray, int]]:
    """Assign's rounds on the value counts (see the module notes): per round, the values drawn
    from (codes) and α, the tuples drawn of each.

    Every round keeps the rest ℓ-eligible; the table must be ℓ-eligible to begin with.
    """
    # A heap of (−count, code): the most frequent first, ties to the first code.
    heap = [(-int(c), int(v)) for v, c in enumerate(counts) if c > 0]
    heapq.heapify(heap)
    total = int(counts.sum())
    rounds = []
    while total:
        beta = l
        while True:
            top = [heapq.heappop(heap) for _ in range(min(beta + 1, len(heap)))]
            c = [-k for k, _ in top]
            following = c[beta] if len(c) > beta else 0
            alpha = min(c[beta - 1], (total - l * following) // beta)
            if beta > l:
                alpha = min(alpha, (total - l * c[0]) // (beta - l))
            if alpha >= 1:
                break
            for item in top:
                heapq.heappush(heap, item)
            # Taking ℓ values would leave the next one above 1/ℓ of the rest: take every value
            # tied with the most frequent (the module notes show α = 1 then works).
            beta = sum(1 for k, _ in heap if -k == c[0]) if beta == l else beta + 1
        taken = top[:beta]
        for count, value in taken:
            if -count > alpha:
                heapq.heappush(heap, (count + alpha, value))
        for item in top[beta:]:
            heapq.heappush(heap, item)
        rounds.append((np.array([v for _, v in taken], dtype=np.int64), int(alpha)))
        total -= alpha * beta
    return rounds


def _random_keys(n: int, rng) -> np.ndarray:
    """One random 64-bit key per tuple: secure (the operating system's) without ``rng``."""
    if rng is None:
        return np.frombuffer(os.urandom(8 * n), dtype=np.uint64) if n else np.zeros(0, dtype=np.uint64)
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    return generator.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64, endpoint=True)


def _assign_tuples(codes: np.ndarray, counts: np.ndarray, rounds, rng) -> np.ndarray:
    """The round (bucket) of every tuple: each value's tuples, in random order, fill that value's
    rounds in turn."""
    values = np.concatenate([v for v, _ in rounds])
    round_of = np.concatenate([np.full(len(v), r, dtype=np.int64) for r, (v, _) in enumerate(rounds)])
    alphas = np.concatenate([np.full(len(v), a, dtype=np.int64) for v, a in rounds])
    by_value = np.argsort(values, kind="stable")  # rounds stay in order within a value
    slots = np.repeat(round_of[by_value], alphas[by_value])
    order = np.lexsort((_random_keys(len(codes), rng), codes))
    bucket = np.empty(len(codes), dtype=np.int64)
    bucket[order] = slots
    return bucket


def _local_groups(bucket: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Within each bucket, the number of each tuple's value group, groups numbered by their first
    row: what Split may know of the sensitive values (which tuples share one, not which)."""
    n = len(codes)
    if not n:
        return np.zeros(0, dtype=np.int64)
    radix = int(codes.max()) + 1
    pairs, pair_id = np.unique(bucket * radix + codes, return_inverse=True)
    first = np.full(len(pairs), n, dtype=np.int64)
    np.minimum.at(first, pair_id, np.arange(n))
    pair_bucket = pairs // radix
    order = np.lexsort((first, pair_bucket))
    in_order = pair_bucket[order]
    starts = np.flatnonzero(np.r_[True, in_order[1:] != in_order[:-1]])
    rank = np.empty(len(pairs), dtype=np.int64)
    rank[order] = np.arange(len(pairs)) - np.repeat(starts, np.diff(np.r_[starts, len(pairs)]))
    return rank[pair_id]


# ---------------------------------------------------------------------------------------------
# Split


def split(ranks: np.ndarray, dims: list, bucket: np.ndarray, group: np.ndarray, alpha: np.ndarray,
          progress: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, int]:
    """Ace's Split (see the module notes): the final bucket of every tuple, and the rounds.

    Args:
        ranks: ``[quasi-identifiers × tuples]``, each tuple's rank on each quasi-identifier.
        dims: the quasi-identifiers, as Mondrian describes them (for the widths).
        bucket: the bucket of every tuple after Assign.
        group: within its bucket, the number of every tuple's value group (``0 … β−1``).
        alpha: per bucket, the tuples it holds of each of its values.

    Nothing here reads a sensitive value: only which tuples of a bucket share one (``group``).

    **Layout.** The tuples of the buckets still to split are held in one order per
    quasi-identifier, each sorted by (bucket, group, rank on that quasi-identifier, row): bucket
    ``s`` is the run ``start[s] … start[s] + β·α``, and in every order its group ``g`` is the
    sub-run of ``α`` positions from ``start[s] + g·α``. A candidate's first part is the first
    ``⌊α/2⌋`` positions of each group's run in its own order; a split moves each group's chosen
    tuples to the front of the bucket's run, both parts keeping their order, so the children are
    laid out the same way.
    """
    d, n = ranks.shape
    final = np.empty(n, dtype=np.int64)
    # Ranks in the narrowest integer type that holds them, a row of d per tuple.
    by_row = np.ascontiguousarray(ranks.T).astype(np.min_scalar_type(int(ranks.max()) if n else 0))
    active = alpha[bucket] > 1
    done_rows = np.flatnonzero(~active)
    next_id = 0
    if len(done_rows):
        ids, inverse = np.unique(bucket[done_rows], return_inverse=True)
        final[done_rows] = inverse
        next_id = len(ids)
    rows = np.flatnonzero(active)
    n_groups = int(group.max()) + 1 if n else 1
    orders = []
    for j in range(d):
        key = (bucket[rows] * n_groups + group[rows]) * (int(ranks[j].max()) + 1) + ranks[j][rows]
        orders.append(rows[np.argsort(key, kind="stable")])
    # Each order's ranks travel with it (moves stay within a bucket's run, so they are cheaper
    # than gathering from the table at random).
    blocks = [by_row[o] for o in orders]
    if len(rows):
        held = bucket[orders[0]]
        start = np.flatnonzero(np.r_[True, held[1:] != held[:-1]])
        seg_alpha = alpha[held[start]]
        seg_beta = np.diff(np.r_[start, len(rows)]) // seg_alpha
    rounds = 0
    if progress:
        progress(len(done_rows), n)
    while len(rows):
        rounds += 1
        m, n_seg = len(rows), len(start)
        # Per position (int32: positions fit): its bucket, group g and place i within the group.
        seg = np.repeat(np.arange(n_seg, dtype=np.int32), seg_alpha * seg_beta)
        at = start.astype(np.int32)[seg]
        a = seg_alpha.astype(np.int32)[seg]
        half = a // 2
        beta = seg_beta.astype(np.int32)[seg]
        offset = np.arange(m, dtype=np.int32) - at
        g, i = np.divmod(offset, a)
        in_first = i < half
        # A group's first part goes to the front of the bucket, its second after every first part.
        to_first = at + g * half
        to_second = at + beta * half + g * (a - half) + i
        dest = np.where(in_first, to_first + i, to_second - half)
        second = start + seg_beta * (seg_alpha // 2)
        bounds = np.empty(2 * n_seg, dtype=np.int64)
        bounds[0::2], bounds[1::2] = start, second
        size_first = (seg_beta * (seg_alpha // 2)).astype(float)
        size_second = (seg_beta * seg_alpha).astype(float) - size_first
        costs = np.empty((d, n_seg))
        for c in range(d):
            block = np.empty_like(blocks[c])
            block[dest] = blocks[c]
            low = np.minimum.reduceat(block, bounds, axis=0).astype(np.int64)
            high = np.maximum.reduceat(block, bounds, axis=0).astype(np.int64)
            total = np.zeros(n_seg)
            for j, dim in enumerate(dims):
                width = dim.width(low[:, j], high[:, j])[0]
                total += size_first * width[0::2] + size_second * width[1::2]
            costs[c] = total
        best = np.argmin(costs, axis=0)[seg]  # ties: the quasi-identifier listed first
        chosen = np.zeros(n, dtype=bool)
        for c in range(d):
            chosen[orders[c][in_first & (best == c)]] = True
        # Move each group's chosen tuples to the front of its bucket, in every order: the k-th
        # chosen tuple of a group goes to to_first + k, and the one at i with k chosen before it, if
        # not chosen, to to_second − k.
        group_start = offset - i
        for c in range(d):
            picked = chosen[orders[c]]
            before = np.cumsum(picked, dtype=np.int32) - picked
            taken = before - before[at + group_start]
            place = np.where(picked, to_first + taken, to_second - taken)
            moved = np.empty_like(orders[c])
            moved[place] = orders[c]
            orders[c] = moved
            moved = np.empty_like(blocks[c])
            moved[place] = blocks[c]
            blocks[c] = moved
        # The children: first parts hold ⌊α/2⌋ of each group, second parts the rest.
        child_start = np.empty(2 * n_seg, dtype=np.int64)
        child_start[0::2], child_start[1::2] = start, second
        child_alpha = np.empty(2 * n_seg, dtype=np.int64)
        child_alpha[0::2], child_alpha[1::2] = seg_alpha // 2, seg_alpha - seg_alpha // 2
        child_beta = np.repeat(seg_beta, 2)
        child_size = child_alpha * child_beta
        finished = child_alpha == 1
        if finished.any():
            lengths = child_size[finished]
            runs = np.repeat(child_start[finished] - np.cumsum(np.r_[0, lengths[:-1]]), lengths)
            done = orders[0][runs + np.arange(int(lengths.sum()))]
            final[done] = next_id + np.repeat(np.arange(len(lengths)), lengths)
            next_id += len(lengths)
            kept = np.flatnonzero(np.repeat(~finished, child_size))
            orders = [o[kept] for o in orders]
            blocks = [np.take(b, kept, axis=0) for b in blocks]
        rows = orders[0]
        kept_size = child_size[~finished]
        start = np.r_[0, np.cumsum(kept_size)[:-1]].astype(np.int64)
        seg_alpha, seg_beta = child_alpha[~finished], child_beta[~finished]
        if progress:
            progress(n - len(rows), n)
    # Number the final buckets by their first row, for a layout that does not depend on rounds.
    _, first_row = np.unique(final, return_index=True)
    rank = np.empty(len(first_row), dtype=np.int64)
    rank[np.argsort(first_row, kind="stable")] = np.arange(len(first_row))
    return rank[final], rounds
