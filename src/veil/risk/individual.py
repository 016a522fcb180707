"""Individual, global and household re-identification risk of a sample (Benedetti and Franconi).

The table is a sample of a population; an intruder who holds a population register matches a
released record on its key (the generalized quasi-identifiers) and picks one of the F_k people of
the population with that key at random. The record's risk is then 1/F_k, and F_k is unknown.
Benedetti and Franconi ("Statistical and technological solutions for controlled data
dissemination", 1998; the model μ-Argus and sdcMicro implement, reviewed by Franconi and
Polettini, "Individual risk estimation in μ-Argus: a review", PSD 2004) take F_k given the
sample frequency f_k as negative binomial,

    P(F_k = h | f_k) = C(h−1, f_k−1) · p_k^f_k · (1−p_k)^(h−f_k),   h = f_k, f_k+1, …

with p_k = f_k / F̂_k, F̂_k the sum of the sampling weights of the group
(:mod:`veil.risk.frequencies`). The **individual risk** of each record of group k is

    r_k = E[1/F_k | f_k] = Σ_h (1/h) · P(F_k = h | f_k).

Summing the series in closed form (with q = 1 − p, x = q/p):

    r_k = ∫₀¹ s^(f−1) / (1 + x·s) ds = (p/f) · ₂F₁(1, 1; f+1; q),

so r = log(1+x)/x = p·log(1/p)/q for f = 1, r = p/q − (p/q)²·log(1/p) for f = 2 (the formulas
of sdcMicro's ``indivRisk``), and r = 1/f when F̂ = f (the sample is the population). veil
evaluates it for every group at once: the series in q, whose terms n!·qⁿ/((f+1)…(f+n)) fall by
at least a half per term when q ≤ 1/2 or f ≥ 50, and otherwise (p < 1/2 with f < 50) the
recurrence r_f = (1/(f−1) − r_(f−1))/x from r₁ = log(1+x)/x, which loses no precision for
x > 1. sdcMicro's default (``method="approx"``) instead takes r = p/(f − q) for f ≥ 3 (Franconi
and Polettini 2004); ``method="approx"`` here gives the same.

The **global risk** is the expected number of re-identifications, Σ_records r, and its rate per
released record (sdcMicro's ``global_risk_ER`` and ``global_risk``). The **household risk** of a
record is the probability that at least one member of its household is re-identified, the
members taken as independent: 1 − Π_members (1 − r_i) (sdcMicro's ``hier_risk``); every member
of a household gets it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veil.classes import EquivalenceClasses
from veil.errors import ParameterError
from veil.risk.frequencies import KeyFrequencies, key_frequencies

METHODS = ("exact", "approx")
# The series in q is used where its terms fall by at least a half each: q ≤ 1/2 or f this large.
_SERIES_F = 50
# A term below this share of the running sum ends a group's series (checked every few terms).
_SERIES_EPS = 1e-17
_SERIES_STEPS = 8


def benedetti_franconi(sample: np.ndarray, population: np.ndarray, method: str = "exact") -> np.ndarray:
    """The Benedetti–Franconi individual risk r_k = E[1/F_k | f_k] of each key group (see the
    module docstring), vectorized.

    Args:
        sample: f_k per group (whole numbers of at least 1).
        population: F̂_k per group (positive, finite). A group whose weights sum to less than its
            records (weights below 1) is taken as its own population (F̂_k = f_k, risk 1/f_k).
        method: ``"exact"`` (the expectation itself) or ``"approx"`` (sdcMicro's default:
            p/(f − q) for f ≥ 3, the same closed forms for f = 1 and 2).

    Returns:
        ``float64`` per group, in (0, 1].

    Raises:
        ParameterError: an unknown method, arrays of different lengths, a sample frequency below
            1 or a population estimate that is not a positive finite number.
    """
    if method not in METHODS:
        raise ParameterError(f"unknown individual risk method {method!r}; use 'exact' or 'approx'.")
    f = np.asarray(sample, dtype=np.float64).ravel()
    big = np.asarray(population, dtype=np.float64).ravel()
    if f.shape != big.shape:
        raise ParameterError(f"give one population estimate per group: {len(f)} sample frequencies but "
                             f"{len(big)} population estimates.")
    if len(f) and not (np.all(np.isfinite(f)) and np.all(f >= 1) and np.all(f == np.floor(f))):
        raise ParameterError("every sample frequency must be a whole number of at least 1.")
    if len(f) and not np.all(np.isfinite(big) & (big > 0)):
        raise ParameterError("every population estimate must be a positive finite number.")
    big = np.maximum(big, f)
    excess = big - f
    q = excess / big          # 1 − p, computed without cancellation
    x = excess / f            # q / p
    risk = np.empty_like(f)
    ones = f == 1
    if ones.any():
        risk[ones] = _log_ratio(x[ones])
    rest = np.flatnonzero(~ones)
    if not len(rest):
        return risk
    if method == "approx":
        more = rest[f[rest] > 2]
        risk[more] = (f[more] / big[more]) / (f[more] - q[more])
        rest = rest[f[rest] == 2]
    series = rest[(q[rest] <= 0.5) | (f[rest] >= _SERIES_F)]
    risk[series] = _series(f[series], q[series], f[series] / big[series])
    recurring = rest[(q[rest] > 0.5) & (f[rest] < _SERIES_F)]
    if len(recurring):
        risk[recurring] = _recurrence(f[recurring], x[recurring])
    return risk


def _log_ratio(x: np.ndarray) -> np.ndarray:
    """log(1+x)/x, 1 at x = 0: the risk of a sample unique (f = 1) with odds x = q/p."""
    positive = x > 0
    safe = np.where(positive, x, 1.0)
    return np.where(positive, np.log1p(safe) / safe, 1.0)


def _series(f: np.ndarray, q: np.ndarray, p: np.ndarray) -> np.ndarray:
    """(p/f)·Σₙ n!·qⁿ/((f+1)…(f+n)), each group summed until its terms stop counting (checked
    every few terms, when the groups still summing are gathered again)."""
    out = np.empty_like(f)
    active = np.arange(len(f))
    fa, qa = f, q
    total = np.ones_like(f)
    term = np.ones_like(f)
    n = 0
    while len(active):
        for _ in range(_SERIES_STEPS):
            n += 1
            term *= qa * n / (fa + n)
            total += term
        going = term > _SERIES_EPS * total
        if not going.all():
            out[active[~going]] = total[~going]
            active, fa, qa, total, term = active[going], fa[going], qa[going], total[going], term[going]
    return p / f * out


def _recurrence(f: np.ndarray, x: np.ndarray) -> np.ndarray:
    """r_f by r_j = (1/(j−1) − r_(j−1))/x from r₁ = log(1+x)/x (stable for x > 1; used there).

    The groups go in order of f, so those still climbing at step j are a tail of that order.
    """
    order = np.argsort(f, kind="stable")
    fs, xs = f[order], x[order]
    done = np.empty_like(fs)
    current = _log_ratio(xs)
    top = int(fs[-1]) if len(fs) else 1
    starts = np.searchsorted(fs, np.arange(1, top + 2), side="left")
    for j in range(2, top + 1):
        lo, hi = starts[j - 1], starts[j]   # the groups with f = j
        current = (1.0 / (j - 1) - current[lo - starts[j - 2]:]) / xs[lo:]
        done[lo:hi] = current[:hi - lo]
    out = np.empty_like(f)
    out[order] = done
    return out


@dataclass(frozen=True, eq=False)
class SampleRisk:
    """The Benedetti–Franconi risk of a sample's records (see the module docstring).

    Attributes:
        record: ``float64`` per row: its individual risk (NaN for a suppressed row).
        household: ``float64`` per row: 1 − Π(1 − r_i) over the released members of its
            household (NaN for a suppressed row); ``None`` without a household column.
        expected_reidentifications: the global risk, Σ r over the released records.
        rate: ``expected_reidentifications`` per released record (0 when none is released).
        frequencies: the key groups with their f_k and F̂_k.
        group: ``float64`` per key group: its individual risk.
        records: records per row (a table summarized by its distinct rows), or ``None`` when
            every row is one record.
        method: ``"exact"`` or ``"approx"``, as :func:`benedetti_franconi`.
    """

    record: np.ndarray
    household: np.ndarray | None
    expected_reidentifications: float
    rate: float
    frequencies: KeyFrequencies | None = None
    group: np.ndarray | None = None
    records: np.ndarray | None = None
    method: str = "exact"

    @property
    def released(self) -> int:
        """The number of released records."""
        if self.frequencies is not None:
            return int(self.frequencies.sample.sum())
        return int(np.count_nonzero(~np.isnan(self.record)))

    @property
    def max(self) -> float:
        """The highest individual risk of a released record (0 when none is released)."""
        if self.group is not None:
            return float(self.group.max()) if len(self.group) else 0.0
        released = self.record[~np.isnan(self.record)]
        return float(released.max()) if len(released) else 0.0

    @property
    def household_expected(self) -> float | None:
        """Σ of the household risk over the released records (sdcMicro's ``hier_risk_ER``), or
        ``None`` without a household column."""
        if self.household is None:
            return None
        return float(np.nansum(self.household if self.records is None else self.household * self.records))

    @property
    def household_rate(self) -> float | None:
        """``household_expected`` per released record, or ``None`` without a household column."""
        expected = self.household_expected
        if expected is None:
            return None
        released = self.released
        return expected / released if released else 0.0

    def share_above(self, threshold: float, household: bool = False) -> float:
        """The share of released records whose individual (or household) risk exceeds ``threshold``.

        Raises:
            ParameterError: ``household`` without a household column.
        """
        if household and self.household is None:
            raise ParameterError("the household risk needs a household column; declare one.")
        values = self.household if household else self.record
        released = self.released
        if not released:
            return 0.0
        above = values > threshold  # NaN (suppressed) compares False
        if self.records is None:
            return int(np.count_nonzero(above)) / released
        return float(self.records[above].sum()) / released


def sample_risk(classes: EquivalenceClasses, method: str = "exact") -> SampleRisk:
    """The individual, global and household risk of the released records of ``classes``.

    Args:
        classes: equivalence classes of a dataset (its sampling weights, strata and household
            column are read), or a subset of them: suppressed rows (class -1) get NaN and count
            nowhere, household risk included.
        method: ``"exact"`` or ``"approx"``, as :func:`benedetti_franconi`.

    Raises:
        DataError: the weight column is not numeric or holds a missing, zero, negative or
            infinite weight.
        ParameterError: an unknown method.
    """
    frequencies = key_frequencies(classes)
    group_risk = benedetti_franconi(frequencies.sample, frequencies.population, method)
    # Index -1 (a suppressed row) reads the NaN appended at the end.
    record = np.append(group_risk, np.nan)[frequencies.group]
    released = int(frequencies.sample.sum())
    expected = float(np.dot(frequencies.sample.astype(np.float64), group_risk))
    dataset = classes.dataset
    records = None if dataset.row_weights is None else np.asarray(dataset.row_weights, dtype=np.float64)
    household = None
    if dataset.household is not None:
        household = household_risk(record, household_codes(dataset.column(dataset.household)), records)
    return SampleRisk(record, household, expected, expected / released if released else 0.0, frequencies,
                      group_risk, records, method)


def household_codes(column) -> np.ndarray:
    """Each row's household (``int64`` codes of an encoded column); a row whose household ID is
    missing is a household of its own, not one with every other such row."""
    codes = np.asarray(column.codes, dtype=np.int64)
    if column.missing_code is None:
        return codes
    alone = np.flatnonzero(codes == column.missing_code)
    if len(alone):
        codes = codes.copy()
        codes[alone] = column.cardinality + np.arange(len(alone))
    return codes


def household_risk(record: np.ndarray, household: np.ndarray, records: np.ndarray | None = None) -> np.ndarray:
    """1 − Π(1 − r_i) over each household's members, for every member (NaN rows are not
    members: their own value stays NaN).

    Args:
        record: individual risk per row (NaN for a suppressed row).
        household: household code per row (non-negative integers).
        records: records per row (each counts that many times), or ``None``.
    """
    household = np.asarray(household, dtype=np.int64)
    n = int(household.max()) + 1 if len(household) else 0
    member = ~np.isnan(record)
    risk = np.where(member, record, 0.0)
    certain = risk >= 1.0
    logs = np.log1p(-np.where(certain, 0.0, risk))
    if records is not None:
        logs = logs * records
    total = np.bincount(household, weights=logs, minlength=n)
    sure = np.bincount(household, weights=certain, minlength=n) > 0
    at_risk = np.where(sure, 1.0, -np.expm1(total))
    return np.where(member, at_risk[household], np.nan)
