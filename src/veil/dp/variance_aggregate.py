"""The variance of a column per group in a grouped DP query, from three noisy measurements.

``Variance(column, low, high)`` is the population variance (divided by n) of the values of
``column`` clamped to the public ``[low, high]``, over the rows of the group that have a value
(after contribution bounding). With m = (low + high)/2 and R = (high − low)/2, the centred values
y = clamp(x) − m lie in [−R, R], and

    Var = Q/n − (S/n)²,  Q = Σ y²,  S = Σ y,  n = #rows with a value,

so three measurements suffice, the statistics ``csq``, ``csum`` and ``count`` of
:mod:`veil.dp.statistics`, each of per-row contribution R², R and 1. Centring makes the per-row
bounds R² and R instead of max(|low|, |high|)² and max(|low|, |high|), and the variance is the
same for the centred values.

The budget is split equally, a third to each. Why: to first order the error of Q/n − (S/n)² is
(ΔQ − 2(S/n)ΔS + (2(S/n)² − Q/n)Δn)/n, whose coefficients are at most R², 2R and R² times the
measurements' scales R²/ε_Q, R/ε_S, 1/ε_n: the sum of the worst cases R²(1/ε_Q + 2/ε_S + 1/ε_n) is
least for ε_Q : ε_S : ε_n = 1 : √2 : 1, where it is 3 % below its value at equal thirds; equal
thirds are simpler to state and within that.

The estimate is Q̃/ñ − (S̃/ñ)² clamped to its range [0, R²] (R²/2, the middle of the range, when the
noisy count ñ is below 1). Its interval is approximate (conservative): the range of Q/n − (S/n)²
over the box of the three measurements' intervals, each at α/3 (a union bound, so it holds with
probability at least 1 − α, not exactly 1 − α), cut to [0, R²]; all of [0, R²] when the count's
interval reaches 0. It covers the variance of the bounded, clamped rows, not of the raw table.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from veil.dp.aggregate_protocol import Aggregate, Measurement, Noisy, Output, bounded

__all__ = ["VARIANCE_INTERVAL", "Variance", "variance", "variance_interval"]

VARIANCE_INTERVAL = ("approximate (conservative): the range of Q/n - (S/n)^2 over the alpha/3 intervals of the "
                     "centred square sum Q, the centred sum S and the count n (union bound, so at least 1 - alpha), "
                     "cut to [0, ((high - low)/2)^2]; it covers the population variance of the bounded, clamped rows")


@dataclass(frozen=True)
class Variance(Aggregate):
    """The population variance of ``column`` clamped to the public ``[low, high]``, per group (see
    the module notes)."""

    column: str
    low: float
    high: float
    name: str | None = None

    def __post_init__(self):
        bounded(self, "variance")

    @property
    def radius(self) -> float:
        """R = (high − low)/2: the most a centred value is from 0."""
        return (self.high - self.low) / 2.0

    def measurements(self) -> tuple[Measurement, ...]:
        third = Fraction(1, 3)
        r = self.radius
        return (Measurement(f"{self.name}.sq", False, r * r, third, 1 / 3),
                Measurement(f"{self.name}.sum", False, r, third, 1 / 3),
                Measurement(f"{self.name}.count", True, 1.0, third, 1 / 3))

    def statistics(self) -> tuple:
        return (("csq", self.column, self.low, self.high), ("csum", self.column, self.low, self.high),
                ("count", self.column))

    def post_process(self, noisy: tuple[Noisy, ...], alpha: float) -> Output:
        q, s, c = noisy
        value, lo, hi = variance_interval(q.values, s.values, c.values, q.half, s.half, c.half, self.radius)
        return Output({self.name: (value, lo, hi)}, VARIANCE_INTERVAL)


def _extreme(q: np.ndarray, s2: np.ndarray, n_lo: np.ndarray, n_hi: np.ndarray, take) -> np.ndarray:
    """The max (``take=np.maximum``) or min of f(n) = q/n − s2/n² over n in [n_lo, n_hi] (n_lo > 0):
    at an end or at the one critical point n = 2·s2/q (when q > 0 and it lies inside)."""
    def f(n):
        return q / n - s2 / (n * n)

    best = take(f(n_lo), f(n_hi))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        crit = np.where(q > 0, 2.0 * s2 / np.where(q > 0, q, 1.0), n_lo)
    inside = (crit > n_lo) & (crit < n_hi)
    return np.where(inside, take(best, f(np.where(inside, crit, n_lo))), best)


def variance_interval(q, s, c, q_half: float, s_half: float, c_half: float,
                      radius: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The variance estimate and its interval, element-wise over the cells (see the module notes).

    Args:
        q, s, c: the noisy centred square sums, centred sums and counts.
        q_half, s_half, c_half: their half-widths.
        radius: R = (high − low)/2; the variance lies in [0, R²].

    Returns:
        (value, low, high), each clamped to [0, R²].
    """
    q, s, c = (np.asarray(v, dtype=float) for v in (q, s, c))
    top = radius * radius
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        n = np.where(c >= 1, c, 1.0)
        value = np.where(c >= 1, np.clip(q / n - (s / n) ** 2, 0.0, top), top / 2.0)
        n_lo, n_hi = c - c_half, c + c_half
        known = n_lo > 0
        n_lo = np.where(known, n_lo, 1.0)
        n_hi = np.where(known, n_hi, 2.0)
        s_a, s_b = np.abs(s - s_half), np.abs(s + s_half)
        s_least = np.where((s - s_half <= 0) & (s + s_half >= 0), 0.0, np.minimum(s_a, s_b))
        s_most = np.maximum(s_a, s_b)
        hi = _extreme(q + q_half, s_least ** 2, n_lo, n_hi, np.maximum)
        lo = _extreme(q - q_half, s_most ** 2, n_lo, n_hi, np.minimum)
    lo = np.where(known, np.clip(lo, 0.0, top), 0.0)
    hi = np.where(known, np.clip(hi, 0.0, top), top)
    return value, lo, hi


def variance(column: str, low: float, high: float, name: str | None = None) -> Variance:
    """The population variance of ``column`` clamped to ``[low, high]`` per group (see :class:`Variance`).

    Raises:
        ParameterError: a bound that is not finite, or ``low >= high``.
    """
    return Variance(column, low, high, name)
