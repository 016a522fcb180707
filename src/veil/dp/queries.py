"""Differentially private queries over a table: count, sum, mean, quantiles, histograms.

Every query follows the same three steps, in this order:

1. **Check everything** a user can get wrong (ε ≤ 0, δ outside [0, 1), missing or inverted
   bounds, an unknown column, categories that are not public, a bad ``noise=`` argument) and
   compute the true answer. Any error here raises a :class:`veil.VeilError` with nothing charged
   and no noise drawn. Whether a query runs, and the shape of its answer, never depend on the
   values in the data (that would itself disclose them): only on the parameters, the column names
   and the schema.
2. **Charge** the accountant (when one is given) with the query's (ε, δ). A charge that would
   overspend raises :class:`~veil.dp.budget.BudgetExceededError` before anything is recorded,
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

Column types
------------
A sum, mean or quantile declares its column numeric; the values never decide it. A cell counts
as the number it holds when its type is numeric (Parquet, a frame) or when its text parses as a
finite number (CSV cells are text; so are text columns of any table); any other cell — empty,
``unknown``, ``NaN``, ``inf`` — is *missing* and left out. One record with age ``unknown`` only
drops out of the sum; the query runs either way. Dropping is a fixed per-record rule, so the
sensitivities above still hold. In histograms a missing cell counts where the categories say
(see :func:`dp_histogram`).

Malformed records
-----------------
A CSV file given by its path is read line by line by a public rule (:mod:`veil.data.lenient`):
a line with fewer or more fields than the header, or with bytes that are not UTF-8, is not a
record and is left out; a quote left open closes at the end of its line, so no line changes how
another one is read; the delimiter is sniffed from the header alone. Like dropping a missing
cell, this is a fixed per-record rule: adding or removing one line adds or removes at most one
record, so every sensitivity below holds and one malformed line never decides whether anything is
answered. The number of lines left out depends on the data and is reported nowhere. To refuse a
file at its first malformed line instead (a curator checking their file), read it with
``veil.data.io.read_table(path, allow_empty=True)`` and pass the table, or give ``--strict`` to
``veil dp``.

Bounds
------
The clamping range of a sum, mean or quantile **must come from the user**, from knowledge that is
public, and never from the data: a range taken from the data's minimum and maximum would itself
disclose the extreme records. Values outside [lo, hi] are clamped to it, which biases the answer
but bounds the sensitivity.

Noise
-----
``noise=None`` (the default) draws from the secure OpenDP-backed source and the result is
``fit_for_release=True`` (unless categories came from the data); an integer seed, a
``numpy.random.Generator`` or a seeded :class:`~veil.dp.noise.NoiseSource` makes a reproducible
experiment that is *not* fit for release. ``not_fit_because`` says why.
With δ = 0 counts and histograms get discrete Laplace (geometric) noise and sums Laplace noise;
with δ > 0 they get Gaussian noise (analytic calibration, L2 sensitivity).
Priced in ρ-zCDP instead (``rho=`` in place of ε; a budget kept in ρ, a
:class:`~veil.dp.zcdp_accountant.ZCDPAccountant`), counts and histograms get discrete Gaussian
noise and sums Gaussian noise, σ = Δ/√(2ρ) (:mod:`veil.dp.discrete_gaussian`,
:mod:`veil.dp.zcdp_gaussian`); the result says its ``rho`` and ε = δ = 0. An accountant in the
other measure refuses the charge (:class:`~veil.dp.measures.MeasureMismatchError`) before any
noise is drawn.

Post-processing (:func:`postprocess`, :func:`nonnegative`, :func:`integral`,
:func:`consistent_total`) reads only released numbers, so it costs no budget and never touches
an accountant.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from veil.data.encoding import EncodedColumn, canonical_numeric_texts, encode_column
from veil.data.hierarchy import MISSING_LEAVES, Hierarchy
from veil.dp.accountant import Accountant
from veil.dp.mechanisms import (
    ExponentialMechanism,
    Gaussian,
    Geometric,
    Laplace,
    _check_alpha,
    _check_delta,
    _check_epsilon,
    release_label,
    unfit_reasons,
)
from veil.dp.discrete_gaussian import DiscreteGaussian
from veil.dp.measures import ZCDP, exact_rho
from veil.dp.noise import NoiseSource, as_noise_source
from veil.dp.zcdp_accountant import ZCDPAccountant, charge_cost
from veil.dp.zcdp_gaussian import ZCDPGaussian
from veil.errors import ColumnError, ParameterError

__all__ = [
    "DEFAULT_GRID", "MAX_CELLS", "MAX_GRID", "QueryResult", "consistent_total", "dp_contingency", "dp_count",
    "dp_histogram", "dp_mean", "dp_quantile", "dp_sum", "integral", "nonnegative", "postprocess",
    "quantile_grid", "sum_sensitivity",
]

#: The largest contingency table (number of cells) a histogram query builds.
MAX_CELLS = 50_000_000
#: The number of steps of a quantile's public output grid, by default and at most.
DEFAULT_GRID, MAX_GRID = 1000, 100_000

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
        epsilon, delta: what the query was charged (both 0 when it was charged in ρ, and ``None`` in
            :meth:`to_dict`).
        rho: what the query was charged in ρ-zCDP (the Gaussian mechanisms), else ``None``.
        sensitivity: the sensitivity the noise was calibrated to (see the module's neighbouring relation).
        mechanism: the mechanism that drew the noise.
        fit_for_release: True only when the noise came from the secure source and nothing in the
            answer's shape came from the data.
        noise_source: a description of the noise source.
        columns: the columns read.
        categories: for histograms, the categories of each axis (the labels, in cell order).
        bounds: the clamping range of a sum, mean or quantile.
        postprocessing: the free post-processing steps applied, in order.
        notes: anything the reader of the answer should know.
        not_fit_because: why the answer is not fit for release (empty when it is).
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
    not_fit_because: tuple = ()
    #: per-cell noise variance (for post-processing and tests); not part of the published answer
    variance: float | None = field(default=None, repr=False)
    #: the ρ charged when the query was priced in ρ-zCDP (``epsilon`` and ``delta`` are then 0)
    rho: float | None = None

    @property
    def label(self) -> str:
        return release_label(self.fit_for_release, self.not_fit_because)

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
            # an answer priced in ρ has no ε or δ of its own: null, so that none reads it as free
            "confidence": 1.0 - self.alpha, **({"epsilon": self.epsilon, "delta": self.delta} if self.rho is None
                                               else {"epsilon": None, "delta": None, "rho": self.rho}),
            "sensitivity": self.sensitivity, "mechanism": self.mechanism,
            "fit_for_release": self.fit_for_release, "not_fit_because": list(self.not_fit_because),
            "noise_source": self.noise_source,
            "columns": list(self.columns),
            "categories": None if self.categories is None else [list(map(str, c)) for c in self.categories],
            "bounds": None if self.bounds is None else list(self.bounds),
            "postprocessing": list(self.postprocessing), "notes": list(self.notes),
        }


# ---------------------------------------------------------------------------------------------
# reading columns
# ---------------------------------------------------------------------------------------------
class _Columns:
    """Encoded columns of any table veil reads (a Dataset, a frame, a pyarrow Table, a path).

    A CSV path is read by the public rule for malformed lines (see the module notes), or, with
    ``strict``, refused at its first malformed line.
    """

    def __init__(self, data: Any, delimiter: str | None = None, strict: bool = False) -> None:
        from veil.data.dataset import Dataset
        from veil.data.io import Table, read_table

        if isinstance(data, Dataset):
            self._dataset = data
            self.names = list(data.columns)
            self.num_rows = data.num_rows
            # A table summarized by its distinct rows (a Spark engine's): each row stands for
            # this many records, and every count below is weighted by it.
            self.weights = data.row_weights
            return
        self._dataset = None
        self.weights = None
        self.table = data if isinstance(data, Table) else read_table(data, delimiter, allow_empty=True,
                                                                     malformed="refuse" if strict else "drop")
        self.names = list(self.table.columns)
        self.num_rows = self.table.num_rows
        self._cache: dict[str, EncodedColumn] = {}

    def column(self, name: str) -> EncodedColumn:
        if not isinstance(name, str) or name not in self.names:
            close = difflib.get_close_matches(str(name), self.names, n=1, cutoff=0.5)
            hint = f"; did you mean '{close[0]}'?" if close else f"; the columns are {', '.join(self.names)}."
            raise ColumnError(f"the column '{name}' does not exist{hint}")
        if self._dataset is not None:
            return self._dataset.column(name)
        if name not in self._cache:
            self._cache[name] = encode_column(name, self.table.data.column(name))
        return self._cache[name]

    def numbers(self, name: str) -> tuple[EncodedColumn, np.ndarray]:
        """The column and the number each of its categories holds (NaN: missing, see the module notes).

        Read by a query that declares the column numeric; never refused for what the values are.
        """
        col = self.column(name)
        if col.is_numeric:
            values = np.asarray(col.numeric, dtype=float)
        else:  # text cells (CSV, or a text type): parsed one category at a time
            values = pd.to_numeric(pd.Series(col.labels, dtype=object), errors="coerce").to_numpy(dtype=float)
        return col, np.where(np.isfinite(values), values, np.nan)


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


def _price(epsilon, delta, rho) -> tuple[float, float, float | None]:
    """(ε, δ, ρ) of a query, checked: ε (and δ), or ρ alone (a Gaussian release in ρ-zCDP)."""
    if rho is None:
        return _check_epsilon(epsilon), _check_delta(delta), None
    if epsilon is not None or delta:
        raise ParameterError("a query is priced in epsilon (and delta) or in rho, not both; give one.")
    return 0.0, 0.0, float(exact_rho(rho))


def _additive(epsilon: float, delta: float, sensitivity: float, integer: bool, rho: float | None = None):
    if rho is not None:  # ρ-zCDP: integers keep integer (discrete Gaussian) noise
        return DiscreteGaussian(rho, sensitivity) if integer else ZCDPGaussian(rho, sensitivity)
    if delta > 0:
        return Gaussian(epsilon, delta, sensitivity)
    return Geometric(epsilon, sensitivity) if integer else Laplace(epsilon, sensitivity)


def _charge(accountant: Accountant | None, epsilon: float, delta: float, label: str, rho: float | None = None) -> None:
    """Charge the query's cost in its own measure; a budget kept in the other one refuses it
    (:class:`~veil.dp.measures.MeasureMismatchError`) and nothing is charged."""
    if accountant is None:
        return
    if not isinstance(accountant, (Accountant, ZCDPAccountant)):
        raise ParameterError(f"accountant must be a veil.dp.Accountant or ZCDPAccountant, got "
                             f"{type(accountant).__name__}.")
    if rho is not None:
        charge_cost(accountant, ZCDP(rho), label=label)
    else:  # a ZCDPAccountant refuses ε and δ with a sentence of its own
        accountant.charge(epsilon, delta, label=label)


def _clamped_values(data: Any, column: str, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Per category: the clamped value and the number of rows; missing categories have 0 rows."""
    col, numbers = _as_columns(data).numbers(column)
    counts = col.counts().astype(np.int64)
    missing = np.isnan(numbers)
    counts[missing] = 0
    return np.where(missing, 0.0, np.clip(numbers, lo, hi)), counts


def _half_width(mech, alpha: float) -> float:
    """The error bar's half width, computed before anything is charged.

    (A geometric mechanism whose ratio e^(−ε/Δ) underflows to 0 adds no noise at all; its bound is 0.)
    """
    if isinstance(mech, Geometric) and mech.ratio == 0.0:
        return 0
    return mech.error_bound(alpha)


def _result(query, noisy, mech, src, alpha, epsilon, delta, half, rho=None, **kw) -> QueryResult:
    c = np.asarray(noisy)
    low, high = c - half, c + half
    if c.ndim == 0:
        low, high = low.item(), high.item()
    return QueryResult(query, noisy, low, high, alpha, epsilon, delta, mech.sensitivity, mech.name,
                       src.fit_for_release, src.description, variance=mech.variance,
                       not_fit_because=unfit_reasons(src), rho=rho, **kw)


# ---------------------------------------------------------------------------------------------
# count, sum, mean
# ---------------------------------------------------------------------------------------------
def dp_count(data: Any, epsilon: float | None = None, delta: float = 0.0, *, column: str | None = None,
             accountant: Accountant | None = None, noise: NoiseArg = None, alpha: float = 0.05,
             rho: float | None = None) -> QueryResult:
    """The number of records (or of non-missing values in ``column``), sensitivity 1.

    Discrete Laplace noise when δ = 0 (the answer stays an integer), Gaussian when δ > 0; with
    ``rho`` (instead of ε) discrete Gaussian noise, ρ-zCDP, charged in ρ.
    """
    (eps, dlt, rho), alpha = _price(epsilon, delta, rho), _check_alpha(alpha)
    cols = _as_columns(data)
    if column is None:
        true, query, used = cols.num_rows, "count", ()
    else:
        col = cols.column(column)
        miss = 0 if col.missing_code is None else int(col.counts()[col.missing_code])
        true, query, used = cols.num_rows - miss, f"count({column})", (column,)
    mech = _additive(eps, dlt, 1.0, integer=True, rho=rho)
    half = _half_width(mech, alpha)
    src = as_noise_source(noise)
    _charge(accountant, eps, dlt, query, rho)
    noisy = mech.release(true, noise=src).value
    return _result(query, noisy, mech, src, alpha, eps, dlt, half, rho, columns=used)


def dp_sum(data: Any, column: str, bounds: Sequence[float] | None, epsilon: float | None = None,
           delta: float = 0.0, *, accountant: Accountant | None = None, noise: NoiseArg = None,
           alpha: float = 0.05, rho: float | None = None) -> QueryResult:
    """The sum of ``column`` with every value clamped to ``bounds`` = (lo, hi); sensitivity max(|lo|, |hi|).

    ``bounds`` must come from public knowledge, never from the data. Cells that are not numbers
    are missing and left out (see the module notes). With ``rho`` (instead of ε): Gaussian noise,
    ρ-zCDP (:class:`~veil.dp.zcdp_gaussian.ZCDPGaussian`), charged in ρ.
    """
    (eps, dlt, rho), alpha = _price(epsilon, delta, rho), _check_alpha(alpha)
    lo, hi = _check_bounds(bounds, f"the sum of '{column}'")
    values, counts = _clamped_values(data, column, lo, hi)
    true = float(counts @ values)
    mech = _additive(eps, dlt, sum_sensitivity(lo, hi), integer=False, rho=rho)
    half = _half_width(mech, alpha)
    src = as_noise_source(noise)
    query = f"sum({column})"
    _charge(accountant, eps, dlt, query, rho)
    noisy = float(mech.release(true, noise=src).value)
    return _result(query, noisy, mech, src, alpha, eps, dlt, half, rho, columns=(column,), bounds=(lo, hi))


def dp_mean(data: Any, column: str, bounds: Sequence[float] | None, epsilon: float | None = None,
            delta: float = 0.0, *, split: float = 0.5, accountant: Accountant | None = None,
            noise: NoiseArg = None, alpha: float = 0.05, rho: float | None = None) -> QueryResult:
    """The mean of ``column`` clamped to ``bounds``: a noisy sum over a noisy count.

    The budget is split: ``split``·ε (and ``split``·δ) for the sum, the rest for the count
    (sequential composition; the accountant is charged once, with the whole ε and δ); with ``rho``
    (instead of ε) ``split``·ρ for a Gaussian sum and the rest for a discrete Gaussian count,
    which add up to ρ in zCDP. The sum is
    taken of the *centred* values x − m, m = (lo + hi)/2, whose sensitivity is (hi − lo)/2, never
    more than max(|lo|, |hi|); the mean is then m + noisy_sum / noisy_count, a post-processing.
    The answer is clamped to [lo, hi] (free post-processing, so it never leaves the range); when
    the noisy count is below 1 the answer is m.

    Error bar: a 1 − alpha/2 interval for the centred sum and one for the count hold together
    with probability 1 − alpha; the interval is the range of m + S/C over both, cut to [lo, hi]
    (all of [lo, hi] when the count's interval reaches 0). It covers the mean of the *clamped*
    values.
    """
    (eps, dlt, rho), alpha = _price(epsilon, delta, rho), _check_alpha(alpha)
    lo, hi = _check_bounds(bounds, f"the mean of '{column}'")
    split = float(split)
    if not 0.0 < split < 1.0:
        raise ParameterError(f"split (the share of epsilon for the sum) must lie in (0, 1), got {split!r}.")
    values, counts = _clamped_values(data, column, lo, hi)
    mid = (lo + hi) / 2.0
    true_sum = float(counts @ np.where(counts > 0, values - mid, 0.0))
    true_count = int(counts.sum())
    # the two parts of ρ add up to the ρ charged exactly (each mechanism's σ meets its part exactly)
    part = (None, None) if rho is None else (exact_rho(rho) * Fraction(split), exact_rho(rho) * (1 - Fraction(split)))
    sum_mech = _additive(eps * split, dlt * split, (hi - lo) / 2.0, integer=False, rho=part[0])
    count_mech = _additive(eps * (1 - split), dlt * (1 - split), 1.0, integer=True, rho=part[1])
    s_half, c_half = _half_width(sum_mech, alpha / 2), _half_width(count_mech, alpha / 2)
    src = as_noise_source(noise)
    query = f"mean({column})"
    _charge(accountant, eps, dlt, query, rho)
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
                       not_fit_because=unfit_reasons(src), rho=rho,
                       notes=((f"{'epsilon' if rho is None else 'rho'} split {split:g} for the centred sum "
                               f"(sensitivity {(hi - lo) / 2:g}) and "
                               f"{1 - split:g} for the count (sensitivity 1)"),))


# ---------------------------------------------------------------------------------------------
# quantiles
# ---------------------------------------------------------------------------------------------
def quantile_grid(bounds: Sequence[float], grid: int = DEFAULT_GRID) -> np.ndarray:
    """The public candidate outputs of :func:`dp_quantile`: g_i = lo + i·(hi − lo)/grid, i = 0 … grid.

    Each point is computed exactly (as a fraction, the bounds read as the decimals they print as:
    0.1 is 1/10) and rounded once to the nearest float, so the set depends on ``bounds`` and
    ``grid`` alone, never on the data.

    Raises:
        ParameterError: bad bounds; ``grid`` not a whole number in [1, MAX_GRID]; a step below the
            floating-point resolution at these bounds (two points would coincide).
    """
    lo, hi = _check_bounds(bounds, "a quantile grid")
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or not 1 <= grid <= MAX_GRID:
        raise ParameterError(f"grid (the number of steps between the bounds) must be a whole number from 1 to "
                             f"{MAX_GRID:,}, got {grid!r}.")
    first, last = Fraction(repr(lo)), Fraction(repr(hi))
    step = (last - first) / int(grid)
    points = np.array([float(first + i * step) for i in range(int(grid) + 1)])
    if not np.all(np.diff(points) > 0):
        raise ParameterError(f"a grid of {grid} steps between {lo:g} and {hi:g} is finer than floating point can "
                             "tell apart; use a smaller grid.")
    return points


def _quantile_scores(values: np.ndarray, counts: np.ndarray, points: np.ndarray, q: float) -> np.ndarray:
    """u(g) = −|#{x < g} − q·n| for every grid point g, from the clamped values per category."""
    keep = counts > 0
    distinct, inverse = np.unique(values[keep], return_inverse=True)
    weights = np.bincount(inverse, weights=counts[keep], minlength=len(distinct)).astype(np.int64)
    below = np.concatenate(([0], np.cumsum(weights)))       # below[j]: values smaller than distinct[j]
    n = int(below[-1])
    return -np.abs(below[np.searchsorted(distinct, points, side="left")] - q * n)


def dp_quantile(data: Any, column: str, q: float | Sequence[float], bounds: Sequence[float] | None,
                epsilon: float, *, delta: float = 0.0, grid: int = DEFAULT_GRID,
                accountant: Accountant | None = None, noise: NoiseArg = None, alpha: float = 0.05) -> QueryResult:
    """The q-quantile (or several) of ``column`` clamped to ``bounds``, by the exponential mechanism
    over a public grid.

    The candidates are the ``grid`` + 1 points of :func:`quantile_grid` (lo, hi and the points
    between, 1,000 steps by default), fixed before the data is read; the answer is one of them,
    so which answers are reachable never depends on the data (a uniform draw inside a
    data-dependent interval, the textbook last step, is plain floating point whose reachable
    values do). Each point g scores u(g) = −|#{x < g} − q·n| over the n clamped values, of
    sensitivity ≤ max(q, 1 − q) ≤ 1 under add/remove-one, and the exponential mechanism (McSherry
    and Talwar 2007) picks g with probability ∝ exp(ε·u(g)/2), drawn by OpenDP's noisy-max sampler
    (Gumbel). The counts #{x < g} for all points are one ``searchsorted`` over the distinct values.

    Several quantiles split ε evenly (sequential composition); the accountant is charged once with
    the whole ε. Cells that are not numbers are missing and left out. Quantiles are pure ε-DP: δ
    must be 0.

    Error bar: none in value units (``low`` and ``high`` are ``None``). The mechanism's accuracy is
    about ranks, and turning it into an interval of values would need the data. The grid adds at
    most one step, (hi − lo)/grid, of rounding.
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
    points = quantile_grid((lo, hi), grid)
    values, counts = _clamped_values(data, column, lo, hi)
    scores = np.stack([_quantile_scores(values, counts, points, float(v)) for v in qs])
    mech = ExponentialMechanism(eps / len(qs), sensitivity=1.0)
    src = as_noise_source(noise)
    query = f"quantile({column}, {', '.join(f'{v:g}' for v in qs)})"
    _charge(accountant, eps, 0.0, query)
    chosen = points[np.asarray(mech.release(scores, noise=src).value, dtype=np.int64)]
    value = chosen if many else float(chosen[0])
    return QueryResult(query, value, None, None, alpha, eps, 0.0, 1.0, "exponential", src.fit_for_release,
                       src.description, columns=(column,), bounds=(lo, hi), not_fit_because=unfit_reasons(src),
                       notes=(f"the answer is a point of the public grid of {grid} steps between the bounds",
                              "no error bar in value units: the exponential mechanism's accuracy is in ranks")
                       + ((f"epsilon split evenly over {len(qs)} quantiles",) if len(qs) > 1 else ()))


# ---------------------------------------------------------------------------------------------
# histograms and contingency tables
# ---------------------------------------------------------------------------------------------
def _public_categories(name: str, given: Any) -> list[str]:
    """The categories given for one axis: a list of values or a Hierarchy (its leaves), as text."""
    if isinstance(given, Hierarchy):
        values = [str(v) for v in given.leaves]
    elif isinstance(given, (str, bytes)) or not isinstance(given, (Sequence, np.ndarray, pd.Index, pd.Series)):
        raise ParameterError(f"the categories of column '{name}' must be a list of values or a Hierarchy, got "
                             f"{type(given).__name__}.")
    else:
        values = [str(v) for v in given]
    if not values:
        raise ParameterError(f"the categories given for column '{name}' are empty; list at least one.")
    if len(set(values)) != len(values):
        raise ParameterError(f"the categories given for column '{name}' repeat a value; list each once.")
    return values


def _axis(col: EncodedColumn, given: list[str] | None) -> tuple[np.ndarray, list]:
    """Per row, the index of its category on this axis (−1: not among the given categories).

    Given categories match a cell by its text, else by number (``25`` matches ``25.0``, in any
    column: the rule must not depend on whether the column's other values are numbers); the
    missing cell matches a category ``""`` or ``NULL`` (as in hierarchies). The matching runs over
    the column's distinct values, then one gather maps the rows.
    """
    if given is None:
        return col.codes.astype(np.int64), [str(v) for v in col.labels]
    labels = np.asarray([str(v) for v in col.labels], dtype=object)
    lookup = pd.Index(given).get_indexer(labels).astype(np.int64)
    unmatched = lookup < 0
    if unmatched.any():
        canonical = pd.Index(canonical_numeric_texts(np.asarray(given, dtype=object)))
        if canonical.is_unique:
            lookup[unmatched] = canonical.get_indexer(canonical_numeric_texts(labels[unmatched]))
    if col.missing_code is not None:
        lookup[col.missing_code] = next((given.index(m) for m in MISSING_LEAVES if m in given), -1)
    return lookup[col.codes], given


def dp_histogram(data: Any, columns: str | Sequence[str], epsilon: float | None = None, delta: float = 0.0, *,
                 categories: Mapping[str, Sequence | Hierarchy] | None = None, data_categories: bool = False,
                 accountant: Accountant | None = None, noise: NoiseArg = None, alpha: float = 0.05,
                 rho: float | None = None) -> QueryResult:
    """Noisy counts over the full cross-product of the columns' public categories (a contingency table).

    One column gives a histogram, several a contingency table whose axes follow ``columns``. Every
    cell of the cross-product gets noise, the empty ones too (otherwise which cells are empty would
    leak); L1 and L2 sensitivity 1 under add/remove-one. Discrete Laplace noise when δ = 0,
    Gaussian when δ > 0, discrete Gaussian (ρ-zCDP) with ``rho`` instead of ε; one draw per cell.
    The counting is one bincount over a mixed-radix key of the encoded codes, so ten million rows
    take well under a second.

    **The categories are public.** Which categories a table has is itself a disclosure: a cell
    that appears because one record holds a rare value (race ``Martian``) reveals that record
    whatever the noise. So every axis's categories must be given, fixed before the data is read:
    ``categories={column: [values…]}`` or ``{column: hierarchy}`` (a :class:`veil.Hierarchy`; its
    leaves are the column's public domain). Exactly those cells are released, in that order;
    rows whose value is none of them are left out of the counts by that fixed rule, and their
    number is not reported. A category ``""`` or ``NULL`` counts the missing cells.

    ``data_categories=True`` takes the categories of the columns without given ones from the data
    (each distinct value, the missing one included) instead; the result then says
    ``fit_for_release=False`` and why, because publishing those categories discloses that some
    record holds each of them.

    Raises:
        ParameterError: a column has no given categories and ``data_categories`` is False; empty or
            repeated categories; categories for a column the histogram does not use; too many cells;
            a bad ε, δ or alpha.
        ColumnError: an unknown column.
    """
    (eps, dlt, rho), alpha = _price(epsilon, delta, rho), _check_alpha(alpha)
    names = [columns] if isinstance(columns, str) else list(columns)
    if not names:
        raise ParameterError("a histogram needs at least one column.")
    if len(set(names)) != len(names):
        raise ParameterError("a histogram lists a column twice; list each column once.")
    given = {}
    for name, values in dict(categories or {}).items():
        if name not in names:
            raise ParameterError(f"categories are given for column '{name}', which the histogram does not use.")
        given[name] = _public_categories(name, values)
    from_data = [name for name in names if name not in given]
    if from_data and not data_categories:
        raise ParameterError(f"the categories of {', '.join(repr(n) for n in from_data)} must be public, not read "
                             f"from the data: give categories={{{from_data[0]!r}: [...]}} or a Hierarchy, or pass "
                             "data_categories=True, which makes the result not fit for release.")
    cols = _as_columns(data)
    axes, labels = [], []
    for name in names:
        idx, lab = _axis(cols.column(name), given.get(name))
        axes.append(idx)
        labels.append(lab)
    shape = tuple(len(lab) for lab in labels)
    cells = math.prod(shape)
    if cells > MAX_CELLS:
        what = "coarser categories" if not from_data else "fewer columns or given categories"
        raise ParameterError(f"the table would have {cells:,} cells, more than {MAX_CELLS:,}; use {what}.")
    key = np.zeros(len(axes[0]), dtype=np.int64)
    valid = np.ones(len(axes[0]), dtype=bool)
    for idx, k in zip(axes, shape):
        key = key * k + idx
        valid &= idx >= 0
    if cols.weights is None:
        counts = np.bincount(key[valid] if not valid.all() else key, minlength=cells).astype(np.int64)
    else:
        counts = np.bincount(key[valid], weights=cols.weights[valid], minlength=cells).astype(np.int64)
    mech = _additive(eps, dlt, 1.0, integer=True, rho=rho)
    half = _half_width(mech, alpha)
    src = as_noise_source(noise)
    query = f"histogram({', '.join(names)})"
    _charge(accountant, eps, dlt, query, rho)
    noisy = np.asarray(mech.release(counts, noise=src).value).reshape(shape)
    low, high = noisy - half, noisy + half
    reasons = unfit_reasons(src)
    notes = ()
    if from_data:
        reason = (f"the categories of {', '.join(from_data)} come from the data, and publishing them discloses that "
                  "some record holds each of them")
        reasons, notes = reasons + (reason,), (reason,)
    return QueryResult(query, noisy, np.asarray(low), np.asarray(high), alpha, eps, dlt, 1.0, mech.name,
                       src.fit_for_release and not from_data, src.description, columns=tuple(names),
                       categories=tuple(tuple(lab) for lab in labels), notes=notes, not_fit_because=reasons,
                       variance=mech.variance, rho=rho)


dp_contingency = dp_histogram
"""A contingency table is a histogram over several columns: :func:`dp_histogram` under the name
statisticians use for it."""


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
        out = (pos / s) * t if s > 0 else np.full_like(flat, t / flat.size)  # pos/s first: t/s overflows for subnormal s
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
