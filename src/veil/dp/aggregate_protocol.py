"""The protocol every aggregate of a grouped DP query follows, so that a new aggregate needs no
change in :mod:`veil.dp.grouped_query` nor in an engine.

An aggregate is a frozen description (no data). It says

* which sufficient statistics it needs from an engine (:meth:`Aggregate.statistics`,
  :mod:`veil.dp.statistics`) and how they give the true vector of each of its measurements
  (:meth:`Aggregate.measure_values`, a pure function);
* which noisy vectors it asks for (:meth:`Aggregate.measurements`): each with the most one row
  changes one of its cells (``per_row``, the L∞ bound that the query multiplies by the unit's
  cell contribution), the fraction of the aggregate's budget it gets and the fraction of α its
  reported half-width is computed at;
* how its noisy measurements become its output columns, each a value and a (1 − α) interval
  (:meth:`Aggregate.post_process`), and what its interval means (exact or approximate), all a
  post-processing of the noisy vectors and public parameters;
* what the answer's record says of it (:meth:`Aggregate.describe`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from veil.dp.privacy_unit import clamp_bounds

__all__ = ["Aggregate", "Measurement", "Noisy", "Output", "bounded", "column_of"]


@dataclass(frozen=True)
class Measurement:
    """One noisy vector an aggregate asks for.

    Attributes:
        label: ``"count"``, ``"sum(x)"``, ``"mean(x).sum"``, ``"quantiles(x).level2"``, ...
        integer: the true values are whole numbers (a count), so integer noise fits.
        per_row: the most one row changes one cell (L∞ after clamping).
        share: the fraction of the aggregate's ε (or ρ) it gets.
        alpha_share: the fraction of α at which its cells' half-width is computed (a union bound
            over the cells the aggregate's interval uses).
        width: the number of cells per key (1, or a histogram's bins).
    """

    label: str
    integer: bool
    per_row: float
    share: float | Fraction = 1.0
    alpha_share: float = 1.0
    width: int = 1


@dataclass(frozen=True)
class Noisy:
    """A measurement after noise: its noisy cells (shape (k,) or (k, width)), the mechanism that
    drew them, its ε or ρ, and the half-width of each cell at α·alpha_share."""

    values: np.ndarray
    mechanism: Any
    cost: Any
    half: float


@dataclass(frozen=True)
class Output:
    """An aggregate's answer: per output column its (value, low, high) vectors (one cell per key),
    and what the intervals mean."""

    columns: dict
    interval: str


class Aggregate:
    """The base of the aggregates (see the module notes); subclasses are frozen dataclasses with a
    ``name`` and, when they read a column, ``column`` (see :func:`column_of`)."""

    def measurements(self) -> tuple[Measurement, ...]:  # pragma: no cover - overridden
        raise NotImplementedError

    def statistics(self) -> tuple:  # pragma: no cover - overridden
        raise NotImplementedError

    def measure_values(self, stats: dict) -> tuple[np.ndarray, ...]:
        """The true vector of each measurement (in :meth:`measurements`' order), by default the
        statistics themselves in :meth:`statistics`' order."""
        return tuple(stats[s] for s in self.statistics())

    def post_process(self, noisy: tuple[Noisy, ...], alpha: float) -> Output:  # pragma: no cover - overridden
        raise NotImplementedError

    def describe(self) -> dict:
        """The record's entry of the aggregate (its measurements and interval are added by the query)."""
        column = column_of(self)
        return {"name": self.name, "aggregate": type(self).__name__.lower(), "column": column,
                "bounds": None if column is None else [self.low, self.high]}


def bounded(agg: Aggregate, kind: str) -> None:
    """Check and store a frozen aggregate's clamping bounds ``low``, ``high`` (finite, low < high),
    and name it ``kind(column)`` when it has no name.

    Raises:
        ParameterError: a bound that is not finite, or ``low >= high``.
    """
    lo, hi = clamp_bounds(agg.low, agg.high, agg.column)
    object.__setattr__(agg, "low", lo)
    object.__setattr__(agg, "high", hi)
    if agg.name is None:
        object.__setattr__(agg, "name", f"{kind}({agg.column})")


def column_of(agg: Aggregate) -> str | None:
    """The column ``agg`` reads (``None`` for a count of rows)."""
    return getattr(agg, "column", None)
