"""The distance space of MDAV: the quasi-identifiers standardized, and the tables that give every
record's distance to a record or to a centroid.

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

**Missing values.** Veil encodes a missing cell as a category of its own. In a nominal or
ordinal column it is a value like any other (for an ordinal one its z-score is 0, the mean). In a
numeric column, with ``missing="impute"`` (the default) it is placed at the column mean (z-score 0)
for the distances only (what the group publishes: :mod:`.published`); ``missing="refuse"``
raises an error naming the column instead.

**Tables of distances.** Each distance is one look-up per pack of columns in a table of
per-value distances: the columns are packed into groups whose joint code space is small, and a
record's (or a centroid's) distance to every value of every column is summed into each pack's
joint table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from veil.data.dataset import Dataset
from veil.data.encoding import EncodedColumn
from veil.errors import ParameterError

# Columns are packed into groups whose joint code space is at most this large; the distance of
# every remaining record is then one table look-up per group.
TABLE_LIMIT = 1024
# Code-by-code distance matrices are precomputed for columns with at most this many values.
PAIRWISE_LIMIT = 1024


@dataclass(eq=False)
class SpaceColumn:
    """One quasi-identifier as the distance space holds it: its kind (``"numeric"``, ``"ordinal"``
    or ``"nominal"``), its encoded column, and for a numeric or ordinal one the z-score of each
    code with the mean and standard deviation they were taken with."""

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


class Space:
    """The quasi-identifiers of a dataset mapped into the standardized space of the distances."""

    def __init__(self, dataset: Dataset, nominal: Sequence[str], missing: str):
        self.n = dataset.num_rows
        self.columns: list[SpaceColumn] = []
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
                self.columns.append(SpaceColumn(name, "numeric", col, z, mean, std, n_missing))
            elif col.ordered and name not in nominal:
                ranks = np.arange(col.cardinality, dtype=float)
                has_value = np.ones(col.cardinality, dtype=bool)
                if col.missing_code is not None:
                    has_value[col.missing_code] = False
                mean, std, z = _standardize(np.where(has_value, ranks, 0.0), counts * has_value)
                self.columns.append(SpaceColumn(name, "ordinal", col, z, mean, std))
            else:
                self.columns.append(SpaceColumn(name, "nominal", col, None))
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
    def _pairwise(c: SpaceColumn) -> np.ndarray:
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
