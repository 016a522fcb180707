"""The privacy unit of a release, a row or a person, and the bounding of a person's contribution.

Definitions (docs/concepts/privacy-units-and-grouped-queries.md):

* **row unit**: neighbouring tables differ by one row added or removed;
* **person unit** (user-level DP): they differ by *every* row of one person, the rows sharing a
  value of the ID column. A query bounds what one person contributes, as in Wilson et al.,
  "Differentially Private SQL with Bounded User Contribution" (PoPETs 2020) and Amin et al.,
  "Bounding User Contributions" (ICML 2019): at most ``max_groups`` groups per person (L0), at
  most ``max_rows_per_group`` rows in each, at most ``max_rows`` rows in all, each choice uniformly
  at random; values are clamped per aggregate (L∞).

:func:`bound_contributions` is a pure function of the rows' person and group codes and of random
keys (:func:`selection_keys`); it is vectorized (sorts, no loop per row or person).
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.dp.noise import NoiseSource
from veil.errors import ParameterError

__all__ = ["PrivacyUnit", "bound_contributions", "selection_keys"]


def _positive_int(value, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ParameterError(f"{name} must be a whole number of at least 1, got {value!r}.")
    return int(value)


@dataclass(frozen=True)
class PrivacyUnit:
    """What a release protects: a row (``id_column=None``) or a person named by ``id_column``.

    Make one with :meth:`rows` or :meth:`person`.

    Attributes:
        id_column: the column identifying a person, or ``None`` for the row unit.
        max_rows: at most this many rows per person in all (None: no such bound).
        max_groups: at most this many groups per person (L0; None: no such bound).
        max_rows_per_group: at most this many rows per person in each group (None: no such bound).
    """

    id_column: str | None = None
    max_rows: int | None = None
    max_groups: int | None = None
    max_rows_per_group: int | None = None

    def __post_init__(self):
        for name in ("max_rows", "max_groups", "max_rows_per_group"):
            object.__setattr__(self, name, _positive_int(getattr(self, name), name))
        if self.id_column is None:
            if (self.max_rows, self.max_groups, self.max_rows_per_group) != (None, None, None):
                raise ParameterError("contribution bounds need a person's ID column; give "
                                     "PrivacyUnit.person(id_column, ...).")
            return
        if not isinstance(self.id_column, str) or not self.id_column:
            raise ParameterError(f"the ID column must be a column name, got {self.id_column!r}.")
        if self.max_rows is None and (self.max_groups is None or self.max_rows_per_group is None):
            raise ParameterError("a person's contribution needs max_rows, or both max_groups and "
                                 "max_rows_per_group, else no sensitivity bounds it.")

    @classmethod
    def rows(cls) -> "PrivacyUnit":
        """The row unit: neighbouring tables differ by one row."""
        return cls()

    @classmethod
    def person(cls, id_column: str, *, max_rows: int | None = None, max_groups: int | None = None,
               max_rows_per_group: int | None = None) -> "PrivacyUnit":
        """The person unit, with the bounds a query enforces on each person's rows.

        Raises:
            ParameterError: a bound that is not a whole number >= 1, or neither ``max_rows`` nor
                both ``max_groups`` and ``max_rows_per_group``.
        """
        return cls(id_column, max_rows, max_groups, max_rows_per_group)

    @property
    def is_person(self) -> bool:
        return self.id_column is not None

    def cell_contribution(self, num_keys: int) -> int:
        """The most rows one unit adds to all ``num_keys`` cells together (the L1 sensitivity of
        the vector of counts): 1 for a row; min(max_rows, min(max_groups, k)·max_rows_per_group)
        for a person, a missing bound counting as infinite."""
        if not self.is_person:
            return 1
        bounds = []
        if self.max_rows is not None:
            bounds.append(self.max_rows)
        if self.max_rows_per_group is not None:
            groups = num_keys if self.max_groups is None else min(self.max_groups, num_keys)
            bounds.append(max(groups, 1) * self.max_rows_per_group)
        return min(bounds)

    def cell_contribution_l2_squared(self, num_keys: int) -> int:
        """The square of the L2 sensitivity of the vector of counts over ``num_keys`` cells: the
        most Σ c_g² one unit reaches with c_g rows in cell g. 1 for a row; for a person, the rows
        packed into as few cells as the bounds allow (Σ c_g² is largest at the most uneven c):
        max_rows in one cell without max_rows_per_group; min(max_groups, k)·max_rows_per_group²
        without max_rows; with both, q = max_rows // max_rows_per_group full cells and the
        remainder r in one more: q·max_rows_per_group² + r² (capped at min(max_groups, k) cells)."""
        if not self.is_person:
            return 1
        if self.max_rows_per_group is None:
            return self.max_rows ** 2
        cells = max(num_keys if self.max_groups is None else min(self.max_groups, num_keys), 1)
        per = self.max_rows_per_group
        if self.max_rows is None:
            return cells * per ** 2
        full, rest = divmod(self.max_rows, per)
        if full >= cells:
            return cells * per ** 2
        return full * per ** 2 + rest ** 2

    def describe(self) -> dict:
        """The unit and its bounds, for an answer's record."""
        if not self.is_person:
            return {"unit": "row"}
        return {"unit": "person", "id_column": self.id_column, "max_rows": self.max_rows,
                "max_groups": self.max_groups, "max_rows_per_group": self.max_rows_per_group}


def selection_keys(source: NoiseSource, size: int) -> np.ndarray:
    """``size`` independent uniform 64-bit keys that decide which rows and groups bounding keeps.

    The secure source reads them from the operating system's CSPRNG in one call; a seeded source
    (an experiment, not fit for release) from a generator seeded by one draw of its own, so that
    the noise drawn afterwards does not depend on how many keys the data needed.
    """
    if size < 0:
        raise ParameterError(f"a number of keys must be 0 or more, got {size}.")
    if source.fit_for_release:
        return np.frombuffer(os.urandom(8 * size), dtype=np.uint64).copy()
    # One draw from the source's generator, whatever the size (see the docstring).
    child = np.random.default_rng(int(source._rng.integers(0, 2**63)))
    return child.integers(0, 2**64, size=size, dtype=np.uint64, endpoint=False)


def _rank_within(owner: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The rank of each item among the items of the same owner, in the order of ``keys``.

    One sort of a 64-bit word per item, the owner in the high bits and the key's top bits below
    (the order of the truncated keys is the order of the keys while no two of one owner tie); when
    two do tie, or the owners need more than 40 bits, the two-key sort of the full keys decides.
    """
    n = len(owner)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    bits = int(owner.max()).bit_length()
    order = None
    if bits <= 40:
        combined = keys if bits == 0 else (owner.astype(np.uint64) << np.uint64(64 - bits)) | (keys >> np.uint64(bits))
        order = np.argsort(combined)
        ordered = combined[order]
        if (ordered[1:] == ordered[:-1]).any():
            order = None
    if order is None:
        order = np.lexsort((keys, owner))
    sorted_owner = owner[order]
    starts = np.r_[0, np.flatnonzero(sorted_owner[1:] != sorted_owner[:-1]) + 1]
    run_start = np.repeat(starts, np.diff(np.r_[starts, n]))
    ranks = np.empty(n, dtype=np.int64)
    ranks[order] = np.arange(n) - run_start
    return ranks


def _within_bound(owner: np.ndarray, keys: np.ndarray, bound: int) -> np.ndarray:
    """Whether each item is among the ``bound`` smallest keys of its owner (the owners with at most
    ``bound`` items keep all of them, so only the others are ranked)."""
    over = np.bincount(owner)[owner] > bound
    ok = np.ones(len(owner), dtype=bool)
    if over.any():
        ok[over] = _rank_within(owner[over], keys[over]) < bound
    return ok


def _pairs(person: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's (person, group) pair as a dense code, and the first row of each pair (codes are
    given in order of first appearance, so a pair's first row is where the running maximum of the
    codes first reaches it)."""
    codes, uniques = pd.factorize(person * (int(group.max()) + 1) + group)
    first = np.searchsorted(np.maximum.accumulate(codes), np.arange(len(uniques)))
    return codes.astype(np.int64, copy=False), first


def bound_contributions(unit: PrivacyUnit, person: np.ndarray, group: np.ndarray, row_keys: np.ndarray,
                        group_keys: np.ndarray, total_keys: np.ndarray) -> np.ndarray:
    """The rows kept by the unit's contribution bounds, as a boolean mask.

    Steps (each on one person's rows alone): keep at most ``max_groups`` of the person's groups
    (the pairs with the smallest ``group_keys``: a uniformly random subset), then at most
    ``max_rows_per_group`` rows in each kept (person, group) (smallest ``row_keys``), then at most
    ``max_rows`` of what is left (smallest ``total_keys``). A row with ``person`` < 0 (no ID) or
    ``group`` < 0 (a key outside the public set) is never kept.

    Args:
        unit: the privacy unit; for the row unit every row with a group is kept.
        person: the person code of each row (int64, -1: none).
        group: the public key's index of each row (int64, -1: none).
        row_keys, group_keys, total_keys: one uniform key per row each (:func:`selection_keys`);
            a pair's key is the ``group_keys`` entry of its first row; ``None`` for a bound the
            unit does not set.

    Returns:
        A boolean array, True for the rows kept.
    """
    person = np.asarray(person, dtype=np.int64)
    group = np.asarray(group, dtype=np.int64)
    keep = group >= 0
    if not unit.is_person:
        return keep
    keep &= person >= 0
    idx = np.flatnonzero(keep)
    p, g = person[idx], group[idx]
    pair_of_row = None
    if unit.max_groups is not None and len(idx):
        # one key per (person, group) pair: factorize the pairs, take the first row's key
        pair_of_row, first = _pairs(p, g)
        pair_person = p[first]
        ok = _within_bound(pair_person, group_keys[idx][first], unit.max_groups)[pair_of_row]
        idx, p, g, pair_of_row = idx[ok], p[ok], g[ok], pair_of_row[ok]
    if unit.max_rows_per_group is not None and len(idx):
        pairs = _pairs(p, g)[0] if pair_of_row is None else pair_of_row  # the kept rows keep their codes
        ok = _within_bound(pairs, row_keys[idx], unit.max_rows_per_group)
        idx, p, g = idx[ok], p[ok], g[ok]
    if unit.max_rows is not None and len(idx):
        ok = _within_bound(p, total_keys[idx], unit.max_rows)
        idx = idx[ok]
    out = np.zeros(len(person), dtype=bool)
    out[idx] = True
    return out


def _finite(value, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{what} must be a number, got {value!r}.") from None
    if not math.isfinite(number):
        raise ParameterError(f"{what} must be a finite number, got {value!r}.")
    return number


def clamp_bounds(low, high, column: str) -> tuple[float, float]:
    """Public clamping bounds (L∞): two finite numbers with ``low < high``.

    Raises:
        ParameterError: a bound that is not a finite number, or ``low >= high``.
    """
    lo, hi = _finite(low, f"the lower bound of '{column}'"), _finite(high, f"the upper bound of '{column}'")
    if not lo < hi:
        raise ParameterError(f"the bounds of '{column}' must have low < high, got ({lo:g}, {hi:g}).")
    return lo, hi
