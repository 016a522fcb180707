"""Differentially private queries over a table: count, sum, mean, quantiles, histograms.

Every query follows the same three steps, in this order:

1. **Check everything** a user can get wrong (ε ≤ 0, δ outside [0, 1), missing or inverted
   bounds, an unknown or non-numeric column, a bad ``noise=`` argument) and compute the true
   answer. Any error here raises a :class:`veil.VeilError` with nothing charged and no noise drawn.
2. **Charge** the accountant (when one is given) with the query's (ε, δ). A charge that would
   overspend raises :class:`~veil.dp.accountant.BudgetExceededError` before anything is recorded,
   so no noise is drawn for a refused query.
3. **Draw** the noise (once per released number: one draw per histogram cell) and return a
   :class:`QueryResult` with the noisy answer, its 95 % error bar, the (ε, δ) charged, the
   sensitivity used and ``fit_for_release``.

Neighbouring relation
---------------------
All sensitivities are under **add/remove-one** neighbouring (unbounded DP): two tables are
neighbours when one is the other with one record added or removed. Then

* a count has sensitivity 1;
* a sum of values clamped to [lo, hi] has sensitivity max(|lo|, |hi|);
* a histogram or contingency table over fixed categories has L1 (and L2) sensitivity 1: the record
  adds or removes 1 in exactly one cell. (Under *substitution* it would be 2.)
* the quantile utility −|rank − q·n| changes by at most max(q, 1 − q) ≤ 1.

Missing cells (veil's one missing category, see :mod:`veil.data.encoding`) are left out of sums,
means and quantiles; they are a category of their own in histograms. Dropping them is a fixed
per-record rule, so the sensitivities above still hold.

Bounds
------
The clamping range of a sum, mean or quantile **must come from the user**, from knowledge that is
public, and never from the data: a range taken from the data's minimum and maximum would itself
disclose the extreme records. Values outside [lo, hi] are clamped to it, which biases the answer
but bounds the sensitivity.

Noise
-----
``noise=None`` (the default) draws from the secure OpenDP-backed source and the result is
``fit_for_release=True``; an integer seed, a ``numpy.random.Generator`` or a seeded
:class:`~veil.dp.noise.NoiseSource` makes a reproducible experiment that is *not* fit for release.
With δ = 0 counts and histograms get discrete Laplace (geometric) noise and sums Laplace noise;
with δ > 0 they get Gaussian noise (analytic calibration, L2 sensitivity).

Post-processing (:func:`postprocess`, :func:`nonnegative`, :func:`integral`,
:func:`consistent_total`) reads only released numbers, so it costs no budget and never touches
an accountant.
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from veil.data.encoding import EncodedColumn, encode_column
from veil.dp.accountant import Accountant
from veil.dp.mechanisms import (
    ExponentialMechanism,
    Gaussian,
    Geometric,
    Laplace,
    _check_alpha,
    _check_delta,
    _check_epsilon,
)
from veil.dp.noise import NoiseSource, as_noise_source
from veil.errors import ColumnError, ParameterError

__all__ = [
    "MAX_CELLS", "QueryResult", "consistent_total", "dp_contingency", "dp_count", "dp_histogram", "dp_mean",
    "dp_quantile", "dp_sum", "integral", "nonnegative", "postprocess", "sum_sensitivity",
]

#: The largest contingency table (number of cells) a histogram query builds.
MAX_CELLS = 50_000_000

NoiseArg = NoiseSource | np.random.Generator | int | None


# ---------------------------------------------------------------------------------------------
# the result
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class QueryResult:
    """The answer of one DP query.

    Attributes:
        query: what was asked, e.g. ``"sum(age)"``; also the accountant's label.
        value: the noisy answer (a float or int, an array for histograms, a float or array of floats for
            quantiles).
        low, high: the (1 − alpha) error bar: an interval that holds the true (clamped) answer with
            probability at least 1 − alpha, per cell. ``None`` when there is no data-independent
            interval (quantiles, see :func:`dp_quantile`).
        alpha: the miss probability of the error bar (0.05: a 95 % interval).
        epsilon, delta: what the query was charged.
        sensitivity: the sensitivity the noise was calibrated to (see the module's neighbouring relation).
        mechanism: the mechanism that drew the noise.
        fit_for_release: True only when the noise came from the secure source.
        noise_source: a description of the noise source.
        columns: the columns read.
        categories: for histograms, the categories of each axis (the labels, in cell order).
        bounds: the clamping range of a sum, mean or quantile.
        postprocessing: the free post-processing steps applied, in order.
        notes: anything the reader of the answer should know.
    """

    query: str
    value: Any
    low: Any
    high: Any
    alpha: float
    epsilon: float
    delta: float
    sensitivity: float
    mechanism: str
    fit_for_release: bool
    noise_source: str
    columns: tuple = ()
    categories: tuple | None = None
    bounds: tuple | None = None
    postprocessing: tuple = ()
    notes: tuple = ()
    #: per-cell noise variance (for post-processing and tests); not part of the published answer
    variance: float | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        return "fit for release" if self.fit_for_release else "seeded experiment: NOT fit for release"

    def to_dict(self) -> dict:
        """A JSON-ready dict (arrays become nested lists)."""
        def plain(x):
            if x is None:
                return None
            if isinstance(x, np.ndarray):
                return x.tolist()
            if isinstance(x, (np.integer,)):
                return int(x)
            if isinstance(x, (np.floating,)):
                return float(x)
            return x

        return {
            "query": self.query, "value": plain(self.value), "low": plain(self.low), "high": plain(self.high),
            "confidence": 1.0 - self.alpha, "epsilon": self.epsilon, "delta": self.delta,
            "sensitivity": self.sensitivity, "mechanism": self.mechanism,
            "fit_for_release": self.fit_for_release, "noise_source": self.noise_source,
            "columns": list(self.columns),
            "categories": None if self.categories is None else [list(map(str, c)) for c in self.categories],
            "bounds": None if self.bounds is None else list(self.bounds),
            "postprocessing": list(self.postprocessing), "notes": list(self.notes),
        }


# ---------------------------------------------------------------------------------------------
# reading columns
# ---------------------------------------------------------------------------------------------
class _Columns:
    """Encoded columns of any table veil reads (a Dataset, a frame, a pyarrow Table, a path)."""

    def __init__(self, data: Any, delimiter: str | None = None) -> None:
        from veil.data.dataset import Dataset
        from veil.data.io import Table, read_table

        if isinstance(data, Dataset):
            self._dataset = data
            self.names = list(data.columns)
            self.num_rows = data.num_rows
            return
        self._dataset = None
        self._table = data if isinstance(data, Table) else read_table(data, delimiter)
        self.names = list(self._table.columns)
        self.num_rows = self._table.num_rows
        self._cache: dict[str, EncodedColumn] = {}

    def column(self, name: str) -> EncodedColumn:
        if not isinstance(name, str) or name not in self.names:
            close = difflib.get_close_matches(str(name), self.names, n=1, cutoff=0.5)
            hint = f"; did you mean '{close[0]}'?" if close else f"; the columns are {', '.join(self.names)}."
            raise ColumnError(f"the column '{name}' does not exist{hint}")
        if self._dataset is not None:
            return self._dataset.column(name)
        if name not in self._cache:
            self._cache[name] = encode_column(name, self._table.data.column(name))
        return self._cache[name]

    def numeric(self, name: str) -> EncodedColumn:
        col = self.column(name)
        if not col.is_numeric:
            raise ColumnError(f"column '{name}' is not numeric, so it has no sum, mean or quantile; "
                              "pick a numeric column or use a histogram.")
        return col


def _as_columns(data: Any) -> _Columns:
    return data if isinstance(data, _Columns) else _Columns(data)


# ---------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------
def _check_bounds(bounds: Any, what: str) -> tuple[float, float]:
    if bounds is None:
        raise ParameterError(f"{what} needs bounds (lo, hi) that come from public knowledge, never from the data; "
                             "give bounds=(lo, hi) or --bounds LO,HI.")
    try:
        lo, hi = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise ParameterError(f"bounds must be two numbers (lo, hi), got {bounds!r}.") from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ParameterError(f"bounds must be finite numbers, got ({lo:g}, {hi:g}).")
    if not lo < hi:
        raise ParameterError(f"the lower bound must be below the upper bound, got ({lo:g}, {hi:g}).")
    return lo, hi


def sum_sensitivity(lo: float, hi: float) -> float:
    """Sensitivity of a sum of values clamped to [lo, hi] under add/remove-one: max(|lo|, |hi|)."""
    return max(abs(lo), abs(hi))


def _additive(epsilon: float, delta: float, sensitivity: float, integer: bool):
    if delta > 0:
        return Gaussian(epsilon, delta, sensitivity)
    return Geometric(epsilon, sensitivity) if integer else Laplace(epsilon, sensitivity)


def _charge(accountant: Accountant | None, epsilon: float, delta: float, label: str) -> None:
    if accountant is None:
        return
    if not isinstance(accountant, Accountant):
        raise ParameterError(f"accountant must be a veil.dp.Accountant, got {type(accountant).__name__}.")
    accountant.charge(epsilon, delta, label=label)


def _clamped_values(col: EncodedColumn, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Per category: the clamped value and the number of rows; the missing category has 0 rows."""
    counts = np.bincount(col.codes, minlength=col.cardinality).astype(np.int64)
    values = np.clip(np.asarray(col.numeric, dtype=float), lo, hi)
    missing = ~np.isfinite(np.asarray(col.numeric, dtype=float))
    counts[missing] = 0
    values[missing] = 0.0
    return values, counts


def _half_width(mech, alpha: float) -> float:
    """The error bar's half width, computed before anything is charged.

    (A geometric mechanism whose ratio e^(−ε/Δ) underflows to 0 adds no noise at all; its bound is 0.)
    """
    if isinstance(mech, Geometric) and mech.ratio == 0.0:
        return 0
    return mech.error_bound(alpha)


def _result(query, noisy, mech, src, alpha, epsilon, delta, half, **kw) -> QueryResult:
    c = np.asarray(noisy)
    low, high = c - half, c + half
    if c.ndim == 0:
        low, high = low.item(), high.item()
    return QueryResult(query, noisy, low, high, alpha, epsilon, delta, mech.sensitivity, mech.name,
                       src.fit_for_release, src.description, variance=mech.variance, **kw)


# ---------------------------------------------------------------------------------------------
# count, sum, mean
# ---------------------------------------------------------------------------------------------
def dp_count(data: Any, epsilon: float, delta: float = 0.0, *, column: str | None = None,
             accountant: Accountant | None = None, noise: NoiseArg = None, alpha: float = 0.05) -> QueryResult:
    """The number of records (or of non-missing values in ``column``), sensitivity 1.

    Discrete Laplace noise when δ = 0 (the answer stays an integer), Gaussian when δ > 0.
    """
    eps, dlt, alpha = _check_epsilon(epsilon), _check_delta(delta), _check_alpha(alpha)
    cols = _as_columns(data)
    if column is None:
        true, query, used = cols.num_rows, "count", ()
    else:
        col = cols.column(column)
        miss = 0 if col.missing_code is None else int(np.count_nonzero(col.codes == col.missing_code))
        true, query, used = cols.num_rows - miss, f"count({column})", (column,)
    mech = _additive(eps, dlt, 1.0, integer=True)
    half = _half_width(mech, alpha)
    src = as_noise_source(noise)
    _charge(accountant, eps, dlt, query)
    noisy = mech.release(true, noise=src).value
    return _result(query, noisy, mech, src, alpha, eps, dlt, half, columns=used)


def dp_sum(data: Any, column: str, bounds: Sequence[float] | None, epsilon: float, delta: float = 0.0, *,
           accountant: Accountant | None = None, noise: NoiseArg = None, alpha: float = 0.05) -> QueryResult:
    """The sum of ``column`` with every value clamped to ``bounds`` = (lo, hi); sensitivity max(|lo|, |hi|).

    ``bounds`` must come from public knowledge, never from the data. Missing cells are left out.
    """
    eps, dlt, alpha = _check_epsilon(epsilon), _check_delta(delta), _check_alpha(alpha)
    lo, hi = _check_bounds(bounds, f"the sum of '{column}'")
    col = _as_columns(data).numeric(column)
    values, counts = _clamped_values(col, lo, hi)
    true = float(counts @ values)
    mech = _additive(eps, dlt, sum_sensitivity(lo, hi), integer=False)
    half = _half_width(mech, alpha)
    src = as_noise_source(noise)
    query = f"sum({column})"
    _charge(accountant, eps, dlt, query)
    noisy = float(mech.release(true, noise=src).value)
    return _result(query, noisy, mech, src, alpha, eps, dlt, half, columns=(column,), bounds=(lo, hi))


def dp_mean(data: Any, column: str, bounds: Sequence[float] | None, epsilon: float, delta: float = 0.0, *,
            split: float = 0.5, accountant: Accountant | None = None, noise: NoiseArg = None,
            alpha: float = 0.05) -> QueryResult:
    """The mean of ``column`` clamped to ``bounds``: a noisy sum over a noisy count.

    The budget is split: ``split``·ε (and ``split``·δ) for the sum, the rest for the count
    (sequential composition; the accountant is charged once, with the whole ε and δ). The sum is
    taken of the *centred* values x − m, m = (lo + hi)/2, whose sensitivity is (hi − lo)/2, never
    more than max(|lo|, |hi|); the mean is then m + noisy_sum / noisy_count, a post-processing.
    The answer is clamped to [lo, hi] (free post-processing, so it never leaves the range); when
    the noisy count is below 1 the answer is m.

    Error bar: a 1 − alpha/2 interval for the centred sum and one for the count hold together
    with probability 1 − alpha; the interval is the range of m + S/C over both, cut to [lo, hi]
    (all of [lo, hi] when the count's interval reaches 0). It covers the mean of the *clamped*
    values.
    """
    eps, dlt, alpha = _check_epsilon(epsilon), _check_delta(delta), _check_alpha(alpha)
    lo, hi = _check_bounds(bounds, f"the mean of '{column}'")
    split = float(split)
    if not 0.0 < split < 1.0:
        raise ParameterError(f"split (the share of epsilon for the sum) must lie in (0, 1), got {split!r}.")
    col = _as_columns(data).numeric(column)
    values, counts = _clamped_values(col, lo, hi)
    mid = (lo + hi) / 2.0
    true_sum = float(counts @ np.where(counts > 0, values - mid, 0.0))
    true_count = int(counts.sum())
    sum_mech = _additive(eps * split, dlt * split, (hi - lo) / 2.0, integer=False)
    count_mech = _additive(eps * (1 - split), dlt * (1 - split), 1.0, integer=True)
    s_half, c_half = _half_width(sum_mech, alpha / 2), _half_width(count_mech, alpha / 2)
    src = as_noise_source(noise)
    query = f"mean({column})"
    _charge(accountant, eps, dlt, query)
    s = float(sum_mech.release(true_sum, noise=src).value)
    c = float(count_mech.release(true_count, noise=src).value)
    mean = mid + s / c if c >= 1 else mid
    mean = float(min(hi, max(lo, mean)))
    s_lo, s_hi = s - s_half, s + s_half
    c_lo, c_hi = c - c_half, c + c_half
    if c_lo <= 0:
        low, high = lo, hi
    else:
        corners = [mid + a / b for a in (s_lo, s_hi) for b in (c_lo, c_hi)]
        low, high = min(hi, max(lo, min(corners))), min(hi, max(lo, max(corners)))
    return QueryResult(query, mean, float(low), float(high), alpha, eps, dlt, sum_mech.sensitivity,
                       f"{sum_mech.name} sum / {count_mech.name} count", src.fit_for_release, src.description,
                       columns=(column,), bounds=(lo, hi), postprocessing=("clamped to bounds",),
                       notes=((f"epsilon split {split:g} for the centred sum (sensitivity {(hi - lo) / 2:g}) and "
                               f"{1 - split:g} for the count (sensitivity 1)"),))


# ---------------------------------------------------------------------------------------------
# quantiles
# ---------------------------------------------------------------------------------------------
def dp_quantile(data: Any, column: str, q: float | Sequence[float], bounds: Sequence[float] | None,
                epsilon: float, *, delta: float = 0.0, accountant: Accountant | None = None,
                noise: NoiseArg = None, alpha: float = 0.05) -> QueryResult:
    """The q-quantile (or several) of ``column`` clamped to ``bounds``, by the exponential mechanism.

    The algorithm (Smith 2011; the one in OpenDP, diffprivlib and Google's DP library): sort the
    n clamped values z_1 ≤ … ≤ z_n and add z_0 = lo, z_{n+1} = hi. They cut [lo, hi] into n + 1
    intervals I_i = [z_i, z_{i+1}], i = 0 … n; every point of I_i has i values below it, so its
    utility is u_i = −|i − q·n| (sensitivity ≤ 1 under add/remove-one). The mechanism picks
    interval i with probability ∝ (z_{i+1} − z_i)·exp(ε·u_i / 2), i.e. it draws a *point* of [lo, hi]
    with density ∝ exp(ε·u(x)/2), and returns a uniform point of the chosen interval. Empty
    intervals (repeated values) have probability 0 and are dropped, so the work is over the distinct
    values (one bincount over the encoded codes), not over the rows.

    Several quantiles split ε evenly (sequential composition); the accountant is charged once with
    the whole ε. The answer always lies in [lo, hi]. Quantiles are pure ε-DP: δ must be 0.

    Error bar: none in value units (``low`` and ``high`` are ``None``). The mechanism's accuracy is
    about ranks, and turning it into an interval of values would need the data.
    """
    eps, alpha = _check_epsilon(epsilon), _check_alpha(alpha)
    if _check_delta(delta) != 0.0:
        raise ParameterError("quantiles use the exponential mechanism and are pure epsilon-DP; leave delta at 0.")
    many = not isinstance(q, (int, float, np.integer, np.floating))
    qs = list(q) if many else [q]
    if not qs:
        raise ParameterError("give at least one quantile q in [0, 1].")
    for v in qs:
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not 0.0 <= v <= 1.0:
            raise ParameterError(f"a quantile q must be a number in [0, 1], got {v!r}.")
    lo, hi = _check_bounds(bounds, f"the quantile of '{column}'")
    col = _as_columns(data).numeric(column)
    values, counts = _clamped_values(col, lo, hi)
    keep = counts > 0
    distinct, inverse = np.unique(values[keep], return_inverse=True)
    weights = np.bincount(inverse, weights=counts[keep], minlength=len(distinct)).astype(np.int64)
    n = int(weights.sum())
    edges = np.concatenate(([lo], distinct, [hi]))          # interval j = [edges[j], edges[j+1]]
    below = np.concatenate(([0], np.cumsum(weights)))       # below[j]: values < every inner point of interval j
    widths = np.diff(edges)
    live = widths > 0
    mech = ExponentialMechanism(eps / len(qs), sensitivity=1.0)
    src = as_noise_source(noise)
    query = f"quantile({column}, {', '.join(f'{v:g}' for v in qs)})"
    _charge(accountant, eps, 0.0, query)
    out = []
    for v in qs:
        scores = -np.abs(below[live] - v * n) + mech.scale * np.log(widths[live])
        j = int(mech.release(scores, noise=src).value)
        a, b = edges[:-1][live][j], edges[1:][live][j]
        out.append(float(min(hi, max(lo, a + (b - a) * float(src.uniform(1)[0])))))
    value = np.asarray(out) if many else out[0]
    return QueryResult(query, value, None, None, alpha, eps, 0.0, 1.0, "exponential", src.fit_for_release,
                       src.description, columns=(column,), bounds=(lo, hi),
                       notes=("no error bar in value units: the exponential mechanism's accuracy is in ranks",)
                       + ((f"epsilon split evenly over {len(qs)} quantiles",) if len(qs) > 1 else ()))


# ---------------------------------------------------------------------------------------------
# histograms and contingency tables
# ---------------------------------------------------------------------------------------------
def _axis(col: EncodedColumn, given: Sequence | None) -> tuple[np.ndarray, list]:
    """Per row, the index of its category on this axis (−1: not among the given categories)."""
    if given is None:
        return col.codes.astype(np.int64), [str(v) for v in col.labels]
    given = [str(v) for v in given]
    if not given:
        raise ParameterError(f"the categories given for column '{col.name}' are empty; list at least one.")
    if len(set(given)) != len(given):
        raise ParameterError(f"the categories given for column '{col.name}' repeat a value; list each once.")
    index = {v: i for i, v in enumerate(given)}
    lookup = np.array([index.get(str(label), -1) for label in col.labels], dtype=np.int64)
    return lookup[col.codes], given


def dp_histogram(data: Any, columns: str | Sequence[str], epsilon: float, delta: float = 0.0, *,
                 categories: Mapping[str, Sequence] | None = None, accountant: Accountant | None = None,
                 noise: NoiseArg = None, alpha: float = 0.05) -> QueryResult:
    """Noisy counts over the full cross-product of the columns' categories (a contingency table).

    One column gives a histogram, several a contingency table whose axes follow ``columns``. Every
    cell of the cross-product gets noise, the empty ones too (otherwise which cells are empty would
    leak); L1 and L2 sensitivity 1 under add/remove-one. Discrete Laplace noise when δ = 0,
    Gaussian when δ > 0; one draw per cell. The counting is one bincount over a mixed-radix key of
    the encoded codes, so ten million rows take well under a second.

    **The category set is itself a disclosure.** By default the categories of a column are those
    found in the data (its dictionary); publishing them reveals that some record holds each value
    (a rare diagnosis, a one-off ZIP code), which no noise on the counts hides. Unless the
    categories are public, pass ``categories={column: [values…]}`` with a list fixed in advance:
    then exactly those cells are released, and rows whose value is not listed are left out of the
    counts (a fixed per-row rule, so the guarantee holds; their number is not reported).
    """
    eps, dlt, alpha = _check_epsilon(epsilon), _check_delta(delta), _check_alpha(alpha)
    names = [columns] if isinstance(columns, str) else list(columns)
    if not names:
        raise ParameterError("a histogram needs at least one column.")
    if len(set(names)) != len(names):
        raise ParameterError("a histogram lists a column twice; list each column once.")
    categories = dict(categories or {})
    for name in categories:
        if name not in names:
            raise ParameterError(f"categories are given for column '{name}', which the histogram does not use.")
    cols = _as_columns(data)
    axes, labels = [], []
    for name in names:
        idx, lab = _axis(cols.column(name), categories.get(name))
        axes.append(idx)
        labels.append(lab)
    shape = tuple(len(lab) for lab in labels)
    cells = math.prod(shape)
    if cells > MAX_CELLS:
        raise ParameterError(f"the table would have {cells:,} cells, more than {MAX_CELLS:,}; use fewer columns "
                             "or coarser categories.")
    key = np.zeros(cols.num_rows, dtype=np.int64)
    valid = np.ones(cols.num_rows, dtype=bool)
    for idx, k in zip(axes, shape):
        key = key * k + idx
        valid &= idx >= 0
    counts = np.bincount(key[valid] if not valid.all() else key, minlength=cells).astype(np.int64)
    mech = _additive(eps, dlt, 1.0, integer=True)
    half = _half_width(mech, alpha)
    src = as_noise_source(noise)
    query = f"histogram({', '.join(names)})"
    _charge(accountant, eps, dlt, query)
    noisy = np.asarray(mech.release(counts, noise=src).value).reshape(shape)
    low, high = noisy - half, noisy + half
    notes = () if categories.keys() >= set(names) else (
        "the categories of " + ", ".join(n for n in names if n not in categories)
        + " come from the data; publishing them discloses that they occur unless they are public",)
    return QueryResult(query, noisy, np.asarray(low), np.asarray(high), alpha, eps, dlt, 1.0, mech.name,
                       src.fit_for_release, src.description, columns=tuple(names),
                       categories=tuple(tuple(lab) for lab in labels), notes=notes, variance=mech.variance)


#: a contingency table is a histogram over several columns
dp_contingency = dp_histogram


# ---------------------------------------------------------------------------------------------
# post-processing (free: reads released numbers only)
# ---------------------------------------------------------------------------------------------
def nonnegative(counts: Any) -> np.ndarray:
    """Clip negative noisy counts to 0 (biases small cells upwards; free post-processing)."""
    return np.clip(np.asarray(counts, dtype=float), 0.0, None)


def integral(counts: Any, total: float | None = None) -> np.ndarray:
    """Round to integers; with ``total`` (a whole number), round so that the cells add up to it exactly.

    With a total: floor every cell, then give the missing units to the cells with the largest
    fractional parts (largest-remainder rounding), so no cell moves by a whole unit or more.
    """
    x = np.asarray(counts, dtype=float)
    if total is None:
        return np.rint(x).astype(np.int64)
    t = round(float(total))
    flat = x.ravel()
    base = np.floor(flat)
    short = t - int(base.sum())
    out = base.astype(np.int64)
    if short > 0:
        order = np.argsort(-(flat - base), kind="stable")[:short]
        out[order] += 1
    elif short < 0:
        order = np.argsort(flat - base, kind="stable")[:-short]
        out[order] -= 1
    return out.reshape(x.shape)


def consistent_total(counts: Any, total: float, *, method: str = "least_squares",
                     nonnegative_cells: bool = True) -> np.ndarray:
    """Adjust noisy cells so that they add up to ``total`` (a released noisy total or a public one).

    ``method="least_squares"``: the closest cells in squared error with that sum, i.e. the
    Euclidean projection onto {x : Σx = total} (every cell moves by the same (total − Σy)/cells), or,
    with ``nonnegative_cells``, onto {x ≥ 0 : Σx = total} (the simplex projection of Duchi et al.
    2008: subtract one threshold from every cell and clip at 0). Under equal-variance noise this
    is the maximum-likelihood consistent table.

    ``method="rescale"``: clip at 0 and multiply by total / Σ; simple, keeps zeros at zero, but
    moves big cells more than small ones. (All-zero cells are spread evenly.)
    """
    y = np.asarray(counts, dtype=float)
    flat = y.ravel()
    t = float(total)
    if not math.isfinite(t):
        raise ParameterError(f"the total must be a finite number, got {total!r}.")
    if nonnegative_cells or method == "rescale":
        t = max(t, 0.0)
    if method == "rescale":
        pos = np.clip(flat, 0.0, None)
        s = pos.sum()
        out = pos * (t / s) if s > 0 else np.full_like(flat, t / flat.size)
    elif method == "least_squares":
        if not nonnegative_cells:
            out = flat + (t - flat.sum()) / flat.size
        else:
            srt = np.sort(flat)[::-1]
            css = np.cumsum(srt) - t
            rho = np.nonzero(srt - css / np.arange(1, flat.size + 1) > 0)[0]
            theta = css[rho[-1]] / (rho[-1] + 1) if rho.size else srt[0]  # no rho only when total = 0: all cells 0
            out = np.clip(flat - theta, 0.0, None)
    else:
        raise ParameterError(f"method must be 'least_squares' or 'rescale', got {method!r}.")
    return out.reshape(y.shape)


_integral, _nonnegative = integral, nonnegative


def postprocess(result: QueryResult, *, nonnegative: bool = True, integral: bool = False,
                consistent: bool = False, total: float | None = None,
                method: str = "least_squares") -> QueryResult:
    """Free post-processing of a released histogram or count: never charges any accountant.

    Args:
        nonnegative: clip cells at 0.
        integral: round cells to integers (keeping the total when ``consistent``).
        consistent: make the cells add up to ``total`` (:func:`consistent_total`).
        total: the total to match: a public one, or one released before; by default the sum of
            the noisy cells themselves (an unbiased estimate of the count, no extra budget).
        method: ``"least_squares"`` or ``"rescale"`` (see :func:`consistent_total`).

    The error bar is kept as released (it is for the raw noisy cells).
    """
    y = np.asarray(result.value, dtype=float)
    steps = list(result.postprocessing)
    if consistent:
        t = float(y.sum()) if total is None else float(total)
        y = consistent_total(y, t, method=method, nonnegative_cells=nonnegative)
        steps.append(f"consistent total {t:g} ({method}{', non-negative' if nonnegative else ''})")
        if integral:
            y = _integral(y, total=max(t, 0.0) if nonnegative else t)
            steps.append("rounded to integers keeping the total")
    else:
        if nonnegative:
            y = np.clip(y, 0.0, None)
            steps.append("clipped at 0")
        if integral:
            y = _integral(y)
            steps.append("rounded to integers")
    if isinstance(result.value, np.ndarray):
        value = y
    else:
        value = y.item()
        if integral:
            value = int(value)
    if result.bounds is not None and not isinstance(value, np.ndarray):
        value = min(result.bounds[1], max(result.bounds[0], value))
    return replace(result, value=value, postprocessing=tuple(steps))


def dataset_id_of(path: str | os.PathLike) -> str:
    """The id a budget file ties to a data file: ``sha256:`` and the SHA-256 of the file's bytes.

    Any change to the file (even re-saving it) gives a new id, so the old budget file no longer
    matches: copying or moving the file keeps its budget, editing it does not.
    """
    import hashlib
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return "sha256:" + digest.hexdigest()
