"""MDAV microaggregation (Domingo-Ferrer and Mateo-Sanz, 2002; Domingo-Ferrer and Torra, 2005).

Microaggregation partitions the records into groups of at least k similar records and publishes,
for every record, its group's representative instead of its own quasi-identifiers: the group
centroid (mean) of a numeric quasi-identifier and the group mode of any other one. Every group is
then an equivalence class of at least k records, so the release is k-anonymous.

**The grouping.** MDAV, the maximum-distance-to-average-vector heuristic, as Domingo-Ferrer and
Torra (2005) state it. While at least 3k records remain: take the centroid x̄ of the remaining
records, the record r farthest from x̄ and the record s farthest from r; group r with its k − 1
nearest remaining records, then s with its k − 1 nearest of the records left; remove both
groups. Then, if at least 2k records remain, group the record farthest from their centroid with
its k − 1 nearest and make the rest one group; otherwise the rest is one group. Every group
holds between k and 2k − 1 records. The work is O(n²/k) distance evaluations; each step is a
few vectorized passes over the distinct quasi-identifier tuples that still have records (records
with equal tuples are at equal distance from everything), each distance one look-up per pack of
columns in a table of per-value distances.

**The distance.** Squared Euclidean distance in a space where every quasi-identifier is
standardized:

* a *numeric* quasi-identifier contributes ((x − mean) / std)², its z-score, with the mean and
  the (population) standard deviation over the records that have a value (a column with a single
  value contributes 0);
* an *ordinal* one (a text column with a given value order) is replaced by the rank of its value
  in that order, then z-scored like a numeric one;
* a *nominal* one (any other text column, or a numeric column listed in ``nominal``, such as a
  ZIP code) is one-hot encoded and scaled by 1/√2, so two records that differ on it are at
  distance 1 and a record is at distance ½ (1 − 2 p_v + Σ p²) from a centroid whose share of its
  value v is p_v.

Two records are thus at distance Σ Δz² + (number of nominal quasi-identifiers that differ). The
means, standard deviations and orders are the input's (suppressed records included), so they are
recorded under ``recoding.standardization`` in the release's private file only
(:mod:`veil.manifests`); an adversary maps a person's values into the space of the published
columns' own means and deviations to find the nearest published group (the nearest-centroid
attack of Ganta, Kasiviswanathan and Smith, KDD 2008), and the curator's tools into the exact one.

**What is published.** Each record's quasi-identifiers are replaced by its group's: the mean of a
numeric one, rounded to ``decimals`` (default: to a whole number when every value of the column is
whole, so ages stay ages, else to 3 decimals; halves round away from zero), and the most frequent
value of any other one (ties go to the value first in the column's order). Groups whose
published values print the same text on every quasi-identifier (two groups of ages 36.6 and 37.4
on average both show 37) are one class to a reader, so they are merged into one class; their
published values do not change (a mean stays in the rounding interval both means share, and a mode
of each part is a mode of the union). The manifest lists every released class's size and
published values under ``recoding.groups``, in the order of the released classes; the private
file counts the groups merged so under ``recoding.coincident``. Each class's cell for a quasi-identifier is the
set of original values its records hold (:meth:`Cells.from_sets`), so the utility metrics read
the span (numeric) or the number of values (other columns) each class covers.

**Missing values.** Veil encodes a missing cell as a category of its own. In a nominal or
ordinal column it is a value like any other (for an ordinal one its z-score is 0, the mean). In a
numeric column, with ``missing="impute"`` (the default) it is placed at the column mean (z-score 0)
for the distances only; the group's published mean is taken over the records that have a value,
and every record of the group, the one with the missing value included, is published with it (as
missing only when no record of the group has a value). ``missing="refuse"`` raises an error naming
the column instead.

**Other privacy models.** Groups of k records may fail an ℓ-diversity, t-closeness, δ-disclosure
or β-likeness model, and so may a class of groups that print alike (δ-disclosure is not kept by
a union). After MDAV the groups that print alike are merged and the models are evaluated on the
classes; with a suppression limit, failing classes are first suppressed, fewest records first,
while their records fit within the limit. Then, in rounds until every class passes, each
remaining failing class is merged into the class whose centroid is nearest to its own (in the
space above); classes that pick each other, or form chains, become one class, and classes that
now print alike are merged again. The whole table taken as one group must satisfy every model (it is
checked first, and the error names the model that fails); merging then always ends. Merged groups
can exceed 2k − 1 records. Should merging among the kept groups be unable to finish, the
suppressed groups are restored and merged too.

**Order and determinism.** Released rows are shuffled (with the secure source unless a seed is
given) unless the input's order is explicitly kept. The grouping has no randomness: ties
(equally far or near records) go to the earlier row. Groups are numbered by their first row.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from veil.anonymize.base import Anonymizer
from veil.anonymize.fulldomain import InfeasibleError
from veil.cells import Cells
from veil.classes import STAR, EquivalenceClasses, group_rows
from veil.data.dataset import Dataset
from veil.data.encoding import MISSING_LABEL, EncodedColumn
from veil.errors import ColumnError, ParameterError
from veil.models.anonymity import AlphaKAnonymity, KAnonymity
from veil.models.base import PrivacyModel

MISSING_POLICIES = ("impute", "refuse")
# Columns are packed into groups whose joint code space is at most this large; the distance of
# every remaining record is then one table look-up per group.
TABLE_LIMIT = 1024
# Code-by-code distance matrices are precomputed for columns with at most this many values.
PAIRWISE_LIMIT = 1024
# Entries of one block of the failing-groups × groups distance matrix when merging.
MERGE_BLOCK = 1 << 22
DEFAULT_DECIMALS = 3
# Entries of the manifest's recoding derived from the whole input (the standardization's means,
# deviations and value orders, suppressed records included; the merges): kept in the private
# file (veil.manifests).
PRIVATE_RECODING = ("standardization", "merge_rounds", "coincident")


@dataclass(frozen=True)
class MDAVResult:
    """What :meth:`MDAV.fit` did.

    Attributes:
        k: the minimum group size used.
        groups: groups after MDAV, before merging.
        classes: groups in the release (after merging), suppressed ones included.
        merge_rounds: rounds of merging into the nearest group, needed to satisfy the models.
        coincident: groups merged because their published values coincided (one class to a
            reader).
        suppressed_records: records in suppressed groups.
        seconds: wall-clock time of the fit.
    """

    k: int
    groups: int
    classes: int
    merge_rounds: int
    coincident: int
    suppressed_records: int
    seconds: float


# --------------------------------------------------------------------------------------------
# The distance space


@dataclass(eq=False)
class _Column:
    name: str
    kind: str                  # "numeric", "ordinal" or "nominal"
    column: EncodedColumn
    z: np.ndarray | None       # standardized value of each code (numeric and ordinal)
    mean: float | None = None
    std: float | None = None
    missing: int = 0           # records without a value (numeric columns)

    @property
    def card(self) -> int:
        return self.column.cardinality


class _Space:
    """The quasi-identifiers of a dataset mapped into the standardized space of the distances."""

    def __init__(self, dataset: Dataset, nominal: Sequence[str], missing: str):
        self.n = dataset.num_rows
        self.columns: list[_Column] = []
        for name in dataset.quasi_identifiers:
            col = dataset.column(name)
            counts = col.counts().astype(float)
            if col.is_numeric and name not in nominal:
                values = col.numeric
                has_value = np.isfinite(values)
                n_missing = int(counts[~has_value].sum())
                if n_missing and missing == "refuse":
                    raise ParameterError(
                        f"numeric quasi-identifier '{name}' has {n_missing} missing value"
                        f"{'s' if n_missing > 1 else ''}; fill or drop those records, or let MDAV impute "
                        "them (missing='impute').")
                mean, std, z = _standardize(np.where(has_value, values, 0.0), counts * has_value)
                self.columns.append(_Column(name, "numeric", col, z, mean, std, n_missing))
            elif col.ordered and name not in nominal:
                ranks = np.arange(col.cardinality, dtype=float)
                has_value = np.ones(col.cardinality, dtype=bool)
                if col.missing_code is not None:
                    has_value[col.missing_code] = False
                mean, std, z = _standardize(np.where(has_value, ranks, 0.0), counts * has_value)
                self.columns.append(_Column(name, "ordinal", col, z, mean, std))
            else:
                self.columns.append(_Column(name, "nominal", col, None))
        cards = [c.card for c in self.columns]
        self.offsets = np.concatenate([[0], np.cumsum(cards)]).astype(np.intp)
        self.codes = np.stack([c.column.codes.astype(np.intp) for c in self.columns])  # [columns × rows]
        self.flat_codes = self.codes + self.offsets[:-1, None]
        width = int(self.offsets[-1])
        self.column_of = np.repeat(np.arange(len(cards)), cards)
        self.nominal_mask = np.repeat([c.kind == "nominal" for c in self.columns], cards)
        self.z_flat = np.concatenate([c.z if c.z is not None else np.zeros(c.card) for c in self.columns])
        self.pairwise = [self._pairwise(c) if c.card <= PAIRWISE_LIMIT else None for c in self.columns]
        # Packs of columns: each pack's joint codes index a slice of one joint table, built from
        # the per-column tables (one flat array, column after column, plus a trailing zero) by
        # summing gathers: joint = Σ_slots flat[gather[slot]].
        self.packs = _pack(cards)
        slots = max(len(pack) for pack in self.packs)
        sizes = [int(np.prod([cards[j] for j in pack])) for pack in self.packs]
        self.joint_offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
        gather = np.full((slots, int(self.joint_offsets[-1])), width, dtype=np.intp)
        for p, pack in enumerate(self.packs):
            digits = np.indices([cards[j] for j in pack]).reshape(len(pack), -1)
            lo, hi = self.joint_offsets[p], self.joint_offsets[p + 1]
            for slot, j in enumerate(pack):
                gather[slot, lo:hi] = self.offsets[j] + digits[slot]
        self.gather = gather

    def joint_codes(self, codes: np.ndarray) -> np.ndarray:
        """``[packs × items]``: each item's position in the joint table of each pack, from its
        codes ``[columns × items]``."""
        out = np.empty((len(self.packs), codes.shape[1]), dtype=np.intp)
        for p, pack in enumerate(self.packs):
            code = np.zeros(codes.shape[1], dtype=np.intp)
            for j in pack:
                code *= self.columns[j].card
                code += codes[j]
            out[p] = code + self.joint_offsets[p]
        return out

    # -- distance tables ---------------------------------------------------------------------

    @staticmethod
    def _pairwise(c: _Column) -> np.ndarray:
        if c.kind == "nominal":
            return 1.0 - np.eye(c.card)
        return (c.z[:, None] - c.z[None, :]) ** 2

    def record_table(self, codes: np.ndarray) -> np.ndarray:
        """Flat table: the distance from a record with these codes to each code of each column."""
        parts = []
        for j, c in enumerate(self.columns):
            code = int(codes[j])
            if self.pairwise[j] is not None:
                parts.append(self.pairwise[j][code])
            elif c.kind == "nominal":
                row = np.ones(c.card)
                row[code] = 0.0
                parts.append(row)
            else:
                parts.append((c.z - c.z[code]) ** 2)
        parts.append(np.zeros(1))
        return np.concatenate(parts)

    def centroid_table(self, counts: np.ndarray, n: float) -> np.ndarray:
        """Flat table: the distance from the centroid of ``n`` records whose code counts are
        ``counts`` (flat) to each code of each column."""
        share = counts / n
        starts = self.offsets[:-1]
        means = np.add.reduceat(share * self.z_flat, starts)
        squares = np.add.reduceat(share * share, starts)
        numeric = (self.z_flat - means[self.column_of]) ** 2
        nominal = 0.5 * (1.0 - 2.0 * share + squares[self.column_of])
        return np.append(np.where(self.nominal_mask, nominal, numeric), 0.0)

    def distances(self, table: np.ndarray, joint: np.ndarray) -> np.ndarray:
        """Each item's distance, from a flat table and the items' joint codes."""
        full = table.take(self.gather).sum(axis=0) if len(self.gather) > 1 else table.take(self.gather[0])
        out = full.take(joint[0])
        for p in range(1, len(joint)):
            out += full.take(joint[p])
        return out

    # -- group centroids, for merging ---------------------------------------------------------

    def embedding_sums(self, group: np.ndarray, n_groups: int) -> np.ndarray:
        """``[groups × dimensions]``: per group, the sum of its records' coordinates."""
        blocks = []
        for j, c in enumerate(self.columns):
            codes = self.codes[j]
            if c.kind == "nominal":
                counts = np.bincount(group * c.card + codes, minlength=n_groups * c.card)
                blocks.append(counts.reshape(n_groups, c.card) / math.sqrt(2.0))
            else:
                blocks.append(np.bincount(group, weights=c.z[codes], minlength=n_groups)[:, None])
        return np.concatenate(blocks, axis=1)

    def describe(self) -> dict:
        """The standardization, for the manifest."""
        out = {}
        for c in self.columns:
            if c.kind == "numeric":
                out[c.name] = {"kind": "numeric", "mean": c.mean, "std": c.std, "missing": c.missing}
            elif c.kind == "ordinal":
                labels = [str(v) for v in c.column.labels]
                if c.column.missing_code is not None:
                    labels = labels[:c.column.missing_code]
                out[c.name] = {"kind": "ordinal", "order": labels, "mean": c.mean, "std": c.std}
            else:
                out[c.name] = {"kind": "nominal", "mismatch": 1.0}
        return out


def _standardize(values: np.ndarray, weights: np.ndarray) -> tuple[float | None, float | None, np.ndarray]:
    """Mean and population standard deviation of ``values`` weighted by record counts, and the
    z-score of each value (0, the mean, where the weight is 0: the missing category)."""
    total = weights.sum()
    if total == 0:
        return None, None, np.zeros(len(values))
    mean = float(weights @ values / total)
    std = math.sqrt(max(float(weights @ (values - mean) ** 2) / total, 0.0))
    z = (values - mean) / std if std > 0 else np.zeros(len(values))
    return mean, std, np.where(weights > 0, z, 0.0)


def _pack(cards: Sequence[int]) -> list[list[int]]:
    """Group columns (largest first, first fit) so that each group's code space is at most
    :data:`TABLE_LIMIT`; a larger column forms a group of its own."""
    packs: list[list[int]] = []
    sizes: list[int] = []
    for j in sorted(range(len(cards)), key=lambda j: (-cards[j], j)):
        for p, size in enumerate(sizes):
            if size * cards[j] <= TABLE_LIMIT:
                packs[p].append(j)
                sizes[p] *= cards[j]
                break
        else:
            packs.append([j])
            sizes.append(max(cards[j], 1))
    return packs


class _Grouping:
    """MDAV over the distinct quasi-identifier tuples of a table, each with its multiplicity.

    Records with the same tuple are at the same distance from everything, so every distance pass
    runs over the tuples with records left (the *items*), not the records. A tuple's records are
    taken in row order, and ties between tuples go to the one whose next record comes first, so
    the groups are those of MDAV over the records with ties broken by row order.
    """

    def __init__(self, space: _Space, k: int):
        self.space = space
        self.k = k
        n = space.n
        cards = [c.card for c in space.columns]
        tuple_of, _ = group_rows(list(space.codes), cards, decode=False)
        tuple_of = _number_by_first_row(tuple_of)
        n_tuples = int(tuple_of.max()) + 1
        self.rows = np.argsort(tuple_of, kind="stable")            # rows, tuple after tuple
        self.start = np.searchsorted(tuple_of[self.rows], np.arange(n_tuples))  # next record of each tuple
        self.tuple_codes = space.codes[:, self.rows[self.start]]   # [columns × tuples]
        # State over the items (tuples with records left; compacted now and then).
        self.item = np.arange(n_tuples)
        self.left = np.bincount(tuple_of, minlength=n_tuples)      # records left per item
        self.joint = space.joint_codes(self.tuple_codes)
        self.penalty = np.zeros(n_tuples)                          # +inf for exhausted items
        self.counts = np.bincount(space.flat_codes.ravel(), minlength=int(space.offsets[-1])).astype(float)
        self.remaining = n
        self.group = np.full(n, -1, dtype=np.int64)
        self.n_groups = 0

    # -- distances -------------------------------------------------------------------------

    def from_centroid(self) -> np.ndarray:
        return self.space.distances(self.space.centroid_table(self.counts, self.remaining), self.joint)

    def from_item(self, position: int) -> np.ndarray:
        codes = self.tuple_codes[:, self.item[position]]
        return self.space.distances(self.space.record_table(codes), self.joint)

    # -- choosing records --------------------------------------------------------------------

    def next_row(self, positions: np.ndarray) -> np.ndarray:
        return self.rows[self.start[self.item[positions]]]

    def farthest(self, d: np.ndarray) -> int:
        """The item holding the farthest record left (ties to the earliest record)."""
        d = d - self.penalty
        top = d.max()
        at = np.flatnonzero(d == top)
        return int(at[0] if len(at) == 1 else at[np.argmin(self.next_row(at))])

    def nearest(self, d: np.ndarray, need: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``need`` records left nearest (ties to the earliest records), as (items, count
        taken from each)."""
        d = d + self.penalty
        left = self.left
        full: list[np.ndarray] = []
        for _ in range(4):  # usually a few distance levels hold enough records
            v = d.min()
            at = np.flatnonzero(d == v)
            there = int(left[at].sum())
            if there >= need:
                break
            full.append(at)
            need -= there
            d[at] = np.inf
        else:
            # The need-th nearest item bounds the need-th nearest record.
            kth = min(need, int(np.count_nonzero(np.isfinite(d)))) - 1
            bound = np.partition(d, kth)[kth]
            candidates = np.flatnonzero(d <= bound)
            candidates = candidates[np.argsort(d[candidates], kind="stable")]
            held = np.cumsum(left[candidates])
            v = d[candidates[np.searchsorted(held, need)]]
            below = candidates[d[candidates] < v]
            full.append(below)
            need -= int(left[below].sum())
            at = np.flatnonzero(d == v)
        items = [*full]
        counts = [left[a] for a in full]
        if int(left[at].sum()) == need:
            items.append(at)
            counts.append(left[at])
        else:
            # Records of several tuples tie: the earliest rows win, a prefix of each tuple's.
            lengths = left[at]
            starts = self.start[self.item[at]]
            owner = np.repeat(np.arange(len(at)), lengths)
            offset = np.arange(len(owner)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
            rows = self.rows[starts[owner] + offset]
            chosen = owner[np.argsort(rows, kind="stable")[:need]]
            taken = np.bincount(chosen, minlength=len(at))
            items.append(at[taken > 0])
            counts.append(taken[taken > 0])
        return np.concatenate(items), np.concatenate(counts)

    def take(self, items: np.ndarray, counts: np.ndarray) -> None:
        """Make one group of ``counts[i]`` records of each item ``items[i]``."""
        tuples = self.item[items]
        starts = self.start[tuples]
        owner = np.repeat(np.arange(len(items)), counts)
        offset = np.arange(len(owner)) - np.repeat(np.cumsum(counts) - counts, counts)
        rows = self.rows[starts[owner] + offset]
        self.group[rows] = self.n_groups
        self.n_groups += 1
        self.start[tuples] += counts
        self.left[items] -= counts
        self.penalty[items[self.left[items] == 0]] = np.inf
        self.remaining -= len(rows)
        np.subtract.at(self.counts, self.space.flat_codes[:, rows].ravel(), 1.0)

    def around(self, position: int, d: np.ndarray) -> None:
        """Group the next record of an item with its k − 1 nearest records left."""
        # The record itself first (set aside while its k − 1 nearest are found).
        items, counts = np.array([position]), np.array([1])
        self.left[position] -= 1
        self.start[self.item[position]] += 1
        if self.left[position] == 0:
            self.penalty[position] = np.inf
        if self.k > 1:
            more, more_counts = self.nearest(d, self.k - 1)
        else:
            more, more_counts = np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.int64)
        self.left[position] += 1
        self.start[self.item[position]] -= 1
        self.penalty[position] = 0.0
        same = more == position
        if same.any():
            counts = counts + more_counts[same]
            more, more_counts = more[~same], more_counts[~same]
        self.take(np.concatenate([items, more]), np.concatenate([counts, more_counts]))

    def rest(self) -> None:
        alive = np.flatnonzero(self.left > 0)
        if len(alive):
            self.take(alive, self.left[alive].copy())

    def compact(self) -> None:
        alive = self.left > 0
        if 4 * np.count_nonzero(alive) < 3 * len(alive):
            self.item = self.item[alive]
            self.left = self.left[alive]
            self.joint = self.joint[:, alive]
            self.penalty = np.zeros(len(self.item))


def mdav_groups(space: _Space, k: int, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """The MDAV group of every row, numbered in the order the groups are formed."""
    state = _Grouping(space, k)
    n = space.n
    step = max(1, n // (200 * k))
    iteration = 0
    while state.remaining >= 3 * k:
        r = state.farthest(state.from_centroid())
        dr = state.from_item(r)
        state.around(r, dr)
        s = state.farthest(dr)
        state.around(s, state.from_item(s))
        state.compact()
        iteration += 1
        if progress is not None and iteration % step == 0:
            progress(n - state.remaining, n)
    if state.remaining >= 2 * k:
        r = state.farthest(state.from_centroid())
        state.around(r, state.from_item(r))
    state.rest()
    if progress is not None:
        progress(n, n)
    return state.group


def _number_by_first_row(group: np.ndarray) -> np.ndarray:
    """Renumber groups ``0 .. g-1`` in the order of their first row."""
    _, first = np.unique(group, return_index=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return rank[group]


def _components(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The smallest node of the connected component of each of ``n`` nodes, given edges."""
    parent = np.arange(n)
    while True:
        a, b = parent[src], parent[dst]
        low, high = np.minimum(a, b), np.maximum(a, b)
        joined = low != high
        if not joined.any():
            return parent
        np.minimum.at(parent, high[joined], low[joined])
        while True:
            jumped = parent[parent]
            if np.array_equal(jumped, parent):
                break
            parent = jumped


def _sum_rows(values: np.ndarray, new_id: np.ndarray, n_new: int) -> np.ndarray:
    """Sum the rows of ``values`` that share a new id."""
    order = np.argsort(new_id, kind="stable")
    starts = np.searchsorted(new_id[order], np.arange(n_new))
    return np.add.reduceat(values[order], starts, axis=0)


# --------------------------------------------------------------------------------------------
# The anonymizer


class MDAV(Anonymizer):
    """MDAV microaggregation: groups of at least k records, published as centroids and modes.

    See the module docstring for the algorithm, the distance, the published values and the
    policies for missing values and for models beyond k-anonymity.

    Args:
        models: privacy models every released group must satisfy, each with a threshold. Models
            other than k-anonymity are enforced by merging groups (and, with a suppression limit,
            by suppressing failing groups first).
        k: the minimum group size (default: the largest k of the k-anonymity and (α,k)-anonymity
            models). The release is checked against k-anonymity at k when no k-anonymity model is
            given.
        suppression_limit: the largest share of records that may be suppressed, in [0, 1).
            MDAV needs none for k-anonymity; a failing group is suppressed instead of merged
            while the records suppressed fit within the limit.
        metric: the utility metric recorded with the release: a key of
            :func:`veil.metrics.make_metric` or a metric object (every metric is reported).
        decimals: decimals of a published numeric centroid: one number for every numeric
            quasi-identifier, or a mapping from column to number (``None`` for a column: the
            default, 0 for a column of whole numbers and 3 otherwise).
        nominal: numeric quasi-identifiers to treat as categories (codes such as ZIP codes):
            compared by equality and published as the group's mode.
        missing: ``"impute"`` or ``"refuse"``: the policy for missing values in a numeric
            quasi-identifier (see the module docstring).

    Attributes (after :meth:`fit`):
        result_: the :class:`MDAVResult`.
        groups_: the class of every row in the release (``int64``, numbered by first row): MDAV's
            groups, merged where they print alike or fail a model.
        suppressed_: bool per class, the suppressed ones.
        centroids_: a ``pandas.DataFrame`` with one row per class: its size and, per
            quasi-identifier, the exact mean (numeric; NaN when no record has a value) or the mode.

    Raises:
        ParameterError: no k and no k-anonymity model, k below a k-anonymity model's k, a model
            without threshold, a limit outside [0, 1), bad ``decimals``, ``nominal`` or
            ``missing``, an unknown metric.
    """

    def __init__(self, models: Sequence[PrivacyModel] = (), *, k: int | None = None,
                 suppression_limit: float = 0.0, metric="loss",
                 decimals: int | Mapping[str, int | None] | None = None,
                 nominal: str | Sequence[str] = (), missing: str = "impute"):
        models = list(models)
        for model in models:
            if model.threshold is None:
                raise ParameterError(f"{model.name} needs a threshold to anonymize with.")
        required = [int(math.ceil(m.threshold)) for m in models if isinstance(m, KAnonymity)]
        required += [int(m.k) for m in models if isinstance(m, AlphaKAnonymity) and m.k is not None]
        if k is None:
            if not required:
                raise ParameterError("MDAV needs a group size: give k, or a k-anonymity model.")
            k = max(required)
        elif isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ParameterError(f"k must be a whole number of at least 1, not {k!r}.")
        elif required and k < max(required):
            raise ParameterError(f"k = {k} is below the {max(required)} a k-anonymity model asks for; raise k, "
                                 "or leave it out to use the model's.")
        if not 0 <= suppression_limit < 1:
            raise ParameterError(f"the suppression limit is a share of records in [0, 1), not {suppression_limit}.")
        if missing not in MISSING_POLICIES:
            raise ParameterError(f"missing values in a numeric quasi-identifier are 'impute'd or 'refuse'd, "
                                 f"not {missing!r}.")
        if decimals is not None:
            for column, value in (decimals.items() if isinstance(decimals, Mapping) else [(None, decimals)]):
                if value is None and column is not None:
                    continue
                if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                    where = f" for column '{column}'" if column is not None else ""
                    raise ParameterError(f"decimals{where} must be a whole number of at least 0, not {value!r}.")
        if isinstance(metric, str):
            from veil.metrics import make_metric

            make_metric(metric)
        self.models = models
        self.k = int(k)
        self.suppression_limit = float(suppression_limit)
        self.metric = metric
        self.decimals = dict(decimals) if isinstance(decimals, Mapping) else decimals
        self.nominal = [nominal] if isinstance(nominal, str) else list(nominal)
        self.missing = missing

    def __repr__(self) -> str:
        return (f"MDAV(models={self.models}, k={self.k}, suppression_limit={self.suppression_limit}, "
                f"missing={self.missing!r})")

    @property
    def release_models(self) -> list[PrivacyModel]:
        """The models a release is checked against: those given, plus k-anonymity at k when none is."""
        if any(isinstance(m, KAnonymity) for m in self.models):
            return list(self.models)
        return list(self.models) + [KAnonymity(self.k)]

    def _metric(self):
        from veil.metrics import make_metric

        return make_metric(self.metric) if isinstance(self.metric, str) else self.metric

    # -- checks ----------------------------------------------------------------------------

    def _check(self, dataset: Dataset) -> None:
        qis = dataset.quasi_identifiers
        for name in self.nominal:
            if name not in qis:
                raise ColumnError(f"nominal lists '{name}', which is not a quasi-identifier; list quasi-identifiers "
                                  "only.")
        if isinstance(self.decimals, dict):
            for name in self.decimals:
                if name not in qis:
                    raise ColumnError(f"decimals were given for '{name}', which is not a quasi-identifier.")
                if not dataset.column(name).is_numeric or name in self.nominal:
                    what = "listed as nominal" if name in self.nominal else "a text column"
                    raise ParameterError(f"decimals were given for '{name}', which is {what}; it is published as "
                                         "its group's most frequent value, so only numeric quasi-identifiers "
                                         "take decimals.")
        if self.k > dataset.num_rows:
            raise ParameterError(f"k = {self.k} is larger than the table's {dataset.num_rows} records.")

    def _feasible(self, dataset: Dataset) -> None:
        """Raise unless the whole table, as one group, satisfies every model."""
        counts = {name: dataset.column(name).counts()[None, :] for name in dataset.sensitive}
        whole = _light_classes(dataset, np.array([dataset.num_rows]), counts)
        for model in self.release_models:
            result = model.evaluate(whole)
            if not result.passed:
                on = f" of '{result.sensitive}'" if result.sensitive else ""
                raise InfeasibleError(
                    f"no grouping satisfies {model.name}{on} at {model.threshold:g}: even the whole table as one "
                    f"group only reaches {result.level:.4g}; relax that threshold.")

    # -- fit ---------------------------------------------------------------------------------

    def fit(self, dataset: Dataset, progress: Callable[[int, int], None] | None = None) -> "MDAV":
        """Group the records of ``dataset``.

        Args:
            dataset: the table.
            progress: called as ``progress(records_grouped, records)`` while grouping.

        Raises:
            ParameterError: k exceeds the number of rows; a numeric quasi-identifier has missing
                values under ``missing="refuse"``; ``decimals`` names a text column; a model needs
                a sensitive column the dataset lacks; the dataset is a summary of distinct rows
                (the Spark engine's).
            ColumnError: ``nominal`` or ``decimals`` names a column that is not a quasi-identifier.
            InfeasibleError: the whole table fails a model, so no grouping can satisfy it.
        """
        if dataset.row_weights is not None:
            # MDAV groups records k at a time, splitting records with equal values across groups;
            # a summary holds one row per distinct value combination, not the records.
            raise ParameterError("MDAV groups records one by one, which a table summarized by its distinct rows "
                                 "(the Spark engine's) does not hold; use full-domain or strict Mondrian.")
        started = time.perf_counter()
        self._check(dataset)
        self._feasible(dataset)
        space = _Space(dataset, self.nominal, self.missing)
        group = _number_by_first_row(mdav_groups(space, self.k, progress))
        n_groups = int(group.max()) + 1
        group, suppressed, rounds, coincident = self._enforce(dataset, space, group)
        self.space_ = space
        self.groups_ = group
        self.suppressed_ = suppressed
        self.centroids_ = self._centroids(dataset, space, group, len(suppressed))
        sizes = np.bincount(group, minlength=len(suppressed))
        self.result_ = MDAVResult(self.k, n_groups, len(suppressed), rounds, coincident,
                                  int(sizes[suppressed].sum()), time.perf_counter() - started)
        self._fitted_rows = dataset.num_rows
        return self

    def _failing(self, classes: EquivalenceClasses) -> np.ndarray:
        passed = np.ones(classes.n_classes, dtype=bool)
        for model in self.release_models:
            passed &= model.evaluate(classes).class_passed
        return ~passed

    def _enforce(self, dataset: Dataset, space: _Space,
                 group: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, int]:
        """Merge and suppress groups until every class of the published table satisfies every
        model.

        Returns ``(group, suppressed, merge_rounds, coincident)``: the group of every row, the
        suppressed groups, the rounds of merging into the nearest group, and the groups merged
        because their published values coincided.
        """
        n_groups = int(group.max()) + 1
        sizes = np.bincount(group, minlength=n_groups)
        sensitive = {}
        for name in dataset.sensitive:
            col = dataset.column(name)
            sensitive[name] = np.bincount(group * col.cardinality + col.codes,
                                          minlength=n_groups * col.cardinality).reshape(n_groups, col.cardinality)
        suppressed = np.zeros(n_groups, dtype=bool)
        max_suppressed = int(math.floor(self.suppression_limit * dataset.num_rows + 1e-9))
        may_suppress = max_suppressed > 0
        sums = None
        rounds = coincident = 0
        while True:
            # Kept groups whose published values coincide are one class to a reader.
            new_id = self._coinciding(space, group, n_groups, ~suppressed)
            if new_id is not None:
                n_new = int(new_id.max()) + 1
                coincident += n_groups - n_new
                first = np.full(n_new, n_groups, dtype=np.int64)
                np.minimum.at(first, new_id, np.arange(n_groups))
                sizes = _sum_rows(sizes, new_id, n_new)
                sums = None if sums is None else _sum_rows(sums, new_id, n_new)
                sensitive = {name: _sum_rows(m, new_id, n_new) for name, m in sensitive.items()}
                suppressed = suppressed[first]
                group = new_id[group]
                n_groups = n_new
            failing = self._failing(_light_classes(dataset, sizes, sensitive))
            if may_suppress:
                # Failing groups are suppressed first, fewest records first, within the limit;
                # once only.
                may_suppress = False
                candidates = np.flatnonzero(failing)
                candidates = candidates[np.lexsort((candidates, sizes[candidates]))]
                fits = np.cumsum(sizes[candidates]) <= max_suppressed
                suppressed[candidates[fits]] = True
            todo = failing & ~suppressed
            if not todo.any():
                break
            kept = ~suppressed
            if np.count_nonzero(kept) == 1:
                # Nothing left to merge with among the kept groups: restore the suppressed ones.
                if not suppressed.any():  # pragma: no cover - the whole table was checked to pass
                    raise InfeasibleError("the models cannot be satisfied even by the whole table as one group.")
                suppressed[:] = False
                continue
            if sums is None:
                sums = space.embedding_sums(group, n_groups)
            rounds += 1
            centroids = sums / sizes[:, None]
            sources = np.flatnonzero(todo)
            targets = _nearest_groups(centroids, sources, kept)
            # Merge a failing group into its nearest group when that one passes, or when the two
            # are each other's nearest; a failing group whose nearest is a failing group bound
            # elsewhere waits a round (so chains do not snowball into one huge group).
            pointing = np.full(n_groups, -1, dtype=np.int64)
            pointing[sources] = targets
            accept = ~todo[targets] | (pointing[targets] == sources)
            if accept.any():
                sources, targets = sources[accept], targets[accept]
            root = _components(n_groups, sources, targets)
            roots, new_id = np.unique(root, return_inverse=True)
            n_new = len(roots)
            sizes = _sum_rows(sizes, new_id, n_new)
            sums = _sum_rows(sums, new_id, n_new)
            sensitive = {name: _sum_rows(m, new_id, n_new) for name, m in sensitive.items()}
            suppressed = suppressed[roots]  # a suppressed group is never merged
            group = new_id[group]
            n_groups = n_new
        return group, suppressed, rounds, coincident

    def _coinciding(self, space: _Space, group: np.ndarray, n_groups: int, kept: np.ndarray) -> np.ndarray | None:
        """The new id of every group after merging the kept groups whose published values print
        the same text on every quasi-identifier (ids in the order of their first group), or
        ``None`` when no two coincide."""
        columns, radices = [], []
        for c in space.columns:
            labels = self._labels(c, _group_values(c, group, n_groups)[2])
            code, distinct = pd.factorize(labels, sort=False)
            columns.append(code.astype(np.int64))
            radices.append(len(distinct))
        if not kept.all():
            columns.append(np.where(kept, 0, np.cumsum(~kept)))
            radices.append(int((~kept).sum()) + 1)
        tuple_of, _ = group_rows(columns, radices, decode=False)
        if int(tuple_of.max()) + 1 == n_groups:
            return None
        return _number_by_first_row(tuple_of)

    def _centroids(self, dataset: Dataset, space: _Space, group: np.ndarray, n_groups: int) -> pd.DataFrame:
        data = {"size": np.bincount(group, minlength=n_groups)}
        for c in space.columns:
            data[c.name] = _group_values(c, group, n_groups)[2]
        return pd.DataFrame(data)

    # -- transform ---------------------------------------------------------------------------

    def transform(self, dataset: Dataset, *, suppressed: str = "remove", shuffle: bool = True,
                  rng: np.random.Generator | None = None):
        """The release of ``dataset`` (the dataset given to :meth:`fit`) with the groups found.

        Args:
            suppressed: ``"remove"`` drops suppressed records; ``"star"`` keeps them with every
                quasi-identifier published as ``*``.
            shuffle: publish the rows in random order (the default), so that releases of one table
                cannot be joined by position; ``False`` keeps the input order, which the manifest
                and the ledger's gate flag as linkable by position.
            rng: ``None`` (default) shuffles with the secure source; a seed or generator makes a
                reproducible shuffle, not fit for release.

        Raises:
            ParameterError: not fitted, or ``dataset`` has another number of rows than the one
                fitted.
        """
        from veil.anonymize.release import Release

        if not hasattr(self, "result_"):
            raise ParameterError("call fit before transform.")
        if dataset.num_rows != self._fitted_rows:
            raise ParameterError(f"transform the table MDAV was fitted on: it has {dataset.num_rows} records, "
                                 f"the groups were made for {self._fitted_rows}.")
        group, n_groups = self.groups_, len(self.suppressed_)
        keys = np.repeat(np.arange(n_groups, dtype=np.int32)[:, None], len(self.space_.columns), axis=1)
        cells, published = [], {}
        for c in self.space_.columns:
            indptr, indices, _, labels, values = self._published(c, group, n_groups)
            cells.append(Cells.from_sets(c.column, indptr, indices, labels))
            published[c.name] = values
        classes = EquivalenceClasses.from_partition(dataset, group, keys, cells)
        sizes = classes.sizes
        failing = self.suppressed_.copy()
        if suppressed == "star" and failing.any():
            # A group published as all * is one of the suppressed records to a reader.
            failing |= classes.printed_as(STAR)
        released = np.flatnonzero(~failing)

        def recoding() -> dict:
            groups = [{"size": int(sizes[g]), **{name: published[name][g] for name in published}}
                      for g in released]
            return {
                "method": "mdav",
                "k": self.k,
                "distance": "squared Euclidean: z-scores of numeric and ordinal quasi-identifiers, plus 1 per "
                            "nominal quasi-identifier that differs",
                "missing": self.missing,
                "standardization": self.space_.describe(),
                "merge_rounds": self.result_.merge_rounds,
                "coincident": self.result_.coincident,
                "groups": groups,
            }

        return Release(dataset, classes, failing, algorithm="mdav", models=self.release_models,
                       suppression_limit=self.suppression_limit, metric=self._metric(), search=None,
                       suppressed=suppressed, shuffle=shuffle, rng=rng, recoding=recoding,
                       private_recoding=PRIVATE_RECODING)

    def _published(self, c: _Column, group: np.ndarray, n_groups: int):
        """Per group: its cell (codes held), the exact centroid or mode, its label and the
        value written to the manifest."""
        indptr, indices, exact = _group_values(c, group, n_groups)
        labels = self._labels(c, exact)
        if c.kind != "numeric":
            return indptr, indices, exact, labels, [str(v) for v in labels]
        decimals = self._decimals_of(c)
        rounded = _round_half_away(exact, decimals)
        values = [None if not np.isfinite(v) else (int(v) if decimals == 0 else float(v)) for v in rounded]
        return indptr, indices, exact, labels, values

    def _labels(self, c: _Column, exact: np.ndarray) -> np.ndarray:
        """The text each group publishes for a column, from its exact mean or mode."""
        if c.kind != "numeric":
            return np.asarray(exact, dtype=object)
        decimals = self._decimals_of(c)
        return _number_texts(_round_half_away(exact, decimals), decimals)

    def _decimals_of(self, c: _Column) -> int:
        if isinstance(self.decimals, dict):
            chosen = self.decimals.get(c.name)
        else:
            chosen = self.decimals
        if chosen is not None:
            return int(chosen)
        finite = c.column.numeric[np.isfinite(c.column.numeric)]
        return 0 if np.all(finite == np.floor(finite)) else DEFAULT_DECIMALS


def _light_classes(dataset: Dataset, sizes: np.ndarray, sensitive: dict[str, np.ndarray]) -> EquivalenceClasses:
    """Classes with only what the privacy models read: sizes and sensitive count matrices."""
    keys = np.zeros((len(sizes), 0), dtype=np.int32)
    return EquivalenceClasses(dataset, None, np.asarray(sizes), keys, None, dict(sensitive))


def _nearest_groups(centroids: np.ndarray, sources: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """For each source group, the allowed group (not itself) whose centroid is nearest; ties to
    the lower group number."""
    norms = np.einsum("ij,ij->i", centroids, centroids)
    blocked = np.where(allowed, 0.0, np.inf)
    out = np.empty(len(sources), dtype=np.int64)
    block = max(1, MERGE_BLOCK // max(len(centroids), 1))
    for start in range(0, len(sources), block):
        part = sources[start:start + block]
        d = norms[part][:, None] + norms[None, :] - 2.0 * (centroids[part] @ centroids.T)
        d += blocked
        d[np.arange(len(part)), part] = np.inf
        out[start:start + block] = np.argmin(d, axis=1)
    return out


def _group_values(c: _Column, group: np.ndarray, n_groups: int):
    """Per group: the codes its records hold (``indptr``, ``indices``), and its exact published
    value: the mean of a numeric column (NaN when no record has a value), else the mode's label."""
    col = c.column
    pairs, counts = np.unique(group * col.cardinality + col.codes, return_counts=True)
    owner, codes = np.divmod(pairs, col.cardinality)
    indptr = np.searchsorted(owner, np.arange(n_groups + 1))
    if c.kind == "numeric":
        values = col.numeric[codes]
        has = np.isfinite(values)
        total = np.bincount(owner[has], weights=counts[has] * values[has], minlength=n_groups)
        number = np.bincount(owner[has], weights=counts[has], minlength=n_groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(number > 0, total / np.maximum(number, 1), np.nan)
        return indptr, codes, mean
    top = np.maximum.reduceat(counts, indptr[:-1])
    position = np.where(counts == top[owner], np.arange(len(counts)), len(counts))
    first = np.minimum.reduceat(position, indptr[:-1])
    return indptr, codes, np.asarray(col.labels, dtype=object)[codes[first]]


def _round_half_away(values: np.ndarray, decimals: int) -> np.ndarray:
    scale = 10.0 ** decimals
    return np.sign(values) * np.floor(np.abs(values) * scale + 0.5) / scale


def _number_texts(values: np.ndarray, decimals: int) -> np.ndarray:
    """Numbers as published: ``decimals`` places without trailing zeros, ``-0`` as ``0``, and
    the missing label where there is no number."""
    finite = np.isfinite(values)
    text = np.char.mod(f"%.{decimals}f", np.where(finite, values, 0.0))
    if decimals > 0:
        text = np.char.rstrip(np.char.rstrip(text, "0"), ".")
    text = np.where((text == "-0") | (text == ""), "0", text)
    return np.where(finite, text, MISSING_LABEL).astype(object)
