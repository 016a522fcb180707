"""The aggregates of a grouped DP query: count, sum and mean here, variance and quantiles beside
(:mod:`veil.dp.variance_aggregate`, :mod:`veil.dp.quantile_aggregate`), all following
:mod:`veil.dp.aggregate_protocol`.

An aggregate is a frozen description (no data); :func:`measurements` turns it into the noisy
vectors it asks for, one cell per public key, each with the contribution of one row to it (the
L∞ bound) so that the query can state the L1 sensitivity ``contribution · per_row``
(docs/concepts/privacy-units-and-grouped-queries.md):

* ``Count()``: rows per key; per row 1;
* ``Sum(column, low, high)``: clamped values per key; per row max(|low|, |high|);
* ``Mean(column, low, high)``: a sum of the centred values x − (low + high)/2 (per row
  (high − low)/2) over the count of rows with a value (per row 1); the mean is their ratio, a
  post-processing.

Each aggregate turns its noisy measurements into its output columns and their intervals itself
(``post_process``), so the query (:mod:`veil.dp.grouped_query`) knows no aggregate by name.

A missing value (NaN, None) is left out of a sum and of a mean's count, a fixed rule per row.

An engine computes only the sufficient statistics of :mod:`veil.dp.statistics`: an aggregate
names those it needs (:func:`statistics`) and turns them into its true vectors
(:func:`measure_values`), so the same aggregate runs on pandas and on Spark.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from veil.dp.aggregate_protocol import Aggregate, Measurement, Noisy, Output, bounded, column_of
from veil.dp.grouped_answer import mean_interval
from veil.dp.quantile_aggregate import Quantiles, quantiles
from veil.dp.variance_aggregate import Variance, variance
from veil.dp.statistics import compute_statistics
from veil.errors import ColumnError, ParameterError

__all__ = ["Count", "Measurement", "Mean", "Quantiles", "Sum", "Variance", "check_aggregates", "check_numeric", "count",
           "mean", "measure_values", "measurements", "quantiles", "statistics", "sum", "true_values", "variance"]


@dataclass(frozen=True)
class Count(Aggregate):
    """The number of rows of each group (after contribution bounding)."""

    name: str = "count"

    def measurements(self) -> tuple[Measurement, ...]:
        return (Measurement(self.name, True, 1.0),)

    def statistics(self) -> tuple:
        return (("rows",),)

    def post_process(self, noisy: tuple[Noisy, ...], alpha: float) -> Output:
        return _additive(self.name, noisy[0])


@dataclass(frozen=True)
class Sum(Aggregate):
    """The sum of ``column`` clamped to the public ``[low, high]``, per group."""

    column: str
    low: float
    high: float
    name: str | None = None

    def __post_init__(self):
        bounded(self, "sum")

    def measurements(self) -> tuple[Measurement, ...]:
        return (Measurement(self.name, False, max(abs(self.low), abs(self.high))),)

    def statistics(self) -> tuple:
        return (("sum", self.column, self.low, self.high),)

    def post_process(self, noisy: tuple[Noisy, ...], alpha: float) -> Output:
        return _additive(self.name, noisy[0])


@dataclass(frozen=True)
class Mean(Aggregate):
    """The mean of ``column`` clamped to the public ``[low, high]``, per group: a noisy sum of the
    centred values over a noisy count (the answer is clamped to ``[low, high]``; ``(low + high)/2``
    when the noisy count is below 1)."""

    column: str
    low: float
    high: float
    name: str | None = None

    def __post_init__(self):
        bounded(self, "mean")

    @property
    def mid(self) -> float:
        return (self.low + self.high) / 2.0

    def measurements(self) -> tuple[Measurement, ...]:
        return (Measurement(f"{self.name}.sum", False, (self.high - self.low) / 2.0, 0.5, 0.5),
                Measurement(f"{self.name}.count", True, 1.0, 0.5, 0.5))

    def statistics(self) -> tuple:
        return (("csum", self.column, self.low, self.high), ("count", self.column))

    def post_process(self, noisy: tuple[Noisy, ...], alpha: float) -> Output:
        s, c = noisy
        value, lo, hi = mean_interval(np.asarray(s.values), np.asarray(c.values), s.half, c.half, self.low, self.high)
        return Output({self.name: (value, lo, hi)}, MEAN_INTERVAL)


MEAN_INTERVAL = ("approximate: the range of the ratio over the alpha/2 intervals of the centred sum and the count "
                 "(union bound), cut to the bounds; it covers the mean of the bounded, clamped rows")
ADDITIVE_INTERVAL = "exact: from the noise distribution; covers the bounded, clamped cell"


def _additive(name: str, cell: Noisy) -> Output:
    """A count's or a sum's output: the noisy cell ± its half-width (exact)."""
    v = np.asarray(cell.values)
    return Output({name: (v, v - cell.half, v + cell.half)}, ADDITIVE_INTERVAL)


def measurements(agg: Aggregate) -> tuple[Measurement, ...]:
    """The measurements of ``agg`` (one for a count or a sum, two for a mean, ...)."""
    return agg.measurements()


def check_numeric(frame: pd.DataFrame, agg: Aggregate) -> None:
    """Refuse a sum or mean of a column that is missing or not numeric by its type (never by its values).

    Raises:
        ColumnError: the column does not exist or its type is not numeric.
    """
    if column_of(agg) is None:
        return
    if agg.column not in frame.columns:
        raise ColumnError(f"the column '{agg.column}' does not exist; the columns are {', '.join(map(str, frame.columns))}.")
    dtype = frame[agg.column].dtype
    if not pd.api.types.is_numeric_dtype(dtype):
        raise ColumnError(f"{agg.name} needs a numeric column, but '{agg.column}' holds {dtype} values; "
                          "convert it to numbers first.")


def statistics(agg: Aggregate) -> tuple:
    """The sufficient statistics ``agg`` needs from an engine (:mod:`veil.dp.statistics`)."""
    return agg.statistics()


def measure_values(agg: Aggregate, stats: dict) -> tuple[np.ndarray, ...]:
    """The true vector of each measurement of ``agg`` (in :func:`measurements`' order), from the
    statistics an engine computed (a pure function of them)."""
    return agg.measure_values(stats)


def true_values(agg: Aggregate, frame: pd.DataFrame, group: np.ndarray, num_keys: int) -> tuple[np.ndarray, ...]:
    """The true vector of each measurement of ``agg`` over the kept rows (the pandas engine).

    Args:
        agg: the aggregate.
        frame: the kept rows.
        group: the key index of each kept row (0 … num_keys − 1).
        num_keys: the number of public keys.
    """
    return measure_values(agg, compute_statistics(frame, group, num_keys, statistics(agg)))


def check_aggregates(aggs) -> tuple:
    """The aggregates as a tuple, each an :class:`~veil.dp.aggregate_protocol.Aggregate` (count, sum,
    mean, variance, quantiles) with a distinct name.

    Raises:
        ParameterError: none given, something else given, or two with the same name.
    """
    aggs = tuple(aggs)
    if not aggs:
        raise ParameterError("agg needs at least one aggregate, e.g. count().")
    for a in aggs:
        if not isinstance(a, Aggregate):
            raise ParameterError(f"an aggregate is count(), sum(column, low, high), mean(column, low, high), "
                                 f"variance(column, low, high) or quantiles(column, qs, low, high), got {a!r}.")
    names = [a.name for a in aggs]
    if len(set(names)) != len(names):
        raise ParameterError(f"two aggregates are named alike ({names!r}); give each a distinct name.")
    return aggs


# The builder functions of the query style ``agg(count(), sum(col, lo, hi), mean(col, lo, hi))``; ``sum``
# shadows the builtin in this module only (nothing above uses the builtin).
def count(name: str = "count") -> Count:
    """The number of rows per group (see :class:`Count`)."""
    return Count(name)


def sum(column: str, low: float, high: float, name: str | None = None) -> Sum:  # noqa: A001
    """The sum of ``column`` clamped to ``[low, high]`` per group (see :class:`Sum`).

    Raises:
        ParameterError: a bound that is not finite, or ``low >= high``.
    """
    return Sum(column, low, high, name)


def mean(column: str, low: float, high: float, name: str | None = None) -> Mean:
    """The mean of ``column`` clamped to ``[low, high]`` per group (see :class:`Mean`).

    Raises:
        ParameterError: a bound that is not finite, or ``low >= high``.
    """
    return Mean(column, low, high, name)
