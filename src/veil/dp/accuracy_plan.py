"""Accuracy planning for grouped DP queries: the ε (or ρ) to spend for a target interval half-width.

Before anything is spent, :func:`plan` turns a target half-width per aggregate into the smallest
budget whose *reported* half-width (at level 1 − α) is at most the target, from the mechanisms'
own ``error_bound``, as :meth:`veil.dp.grouped_query.GroupedQuery.evaluate` computes it:

* for each aggregate alone, the smallest float ε (or ρ) with half-width <= target, by bisection
  on floats with the query's own mechanisms and splits (the half-width is non-increasing in the
  budget);
* the total is the sum, and the weights are the aggregates' budgets, so ``evaluate(total,
  weights=weights)`` gives each aggregate at least its part (the total is raised by a few ulps
  when the float splits round a part below it, checked by building the mechanisms again).

A count's and a sum's half-width does not depend on the data: their plan is exact, and the
reported half-width is the planned one. A mean's, a variance's and the quantiles' intervals depend
on the noisy values: their plan is approximate, the largest half-width of their interval
construction at the noise-free values of a group of ``group_size`` rows over a few public
scenarios (all values at the middle, at one bound, half at each bound, spread evenly over the
range; for quantiles only the last, since a quantile on a jump of the CDF is never pinned down);
the plan says so. A mean or variance that divides by the query's count (:mod:`veil.dp.shared_count`)
is planned alone as if it measured its own count (the bisection sees no count), and its planned
half-width is then computed with the whole query, sharing: every noisy vector it uses is at least as
accurate as alone, so the target is still met, and the budget may be more than the least; the plan
says so. Nothing is read from the table and nothing is spent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np
import pandas as pd

from veil.dp.aggregate_protocol import Noisy, column_of
from veil.dp.aggregates import Count, Quantiles, Sum
from veil.dp.query_pricing import _price
from veil.dp.shared_count import Borrowed
from veil.dp.statistics import compute_statistics
from veil.errors import ParameterError

__all__ = ["AccuracyPlan", "plan"]

MEASURES = ("epsilon", "rho")
_LOWEST, _HIGHEST = 1e-9, 1e9


@dataclass(frozen=True)
class AccuracyPlan:
    """What to spend for a target accuracy.

    Attributes:
        measure: ``"epsilon"`` or ``"rho"``.
        alpha: the intervals' miss probability.
        total: the budget to give :meth:`~veil.dp.grouped_query.GroupedQuery.evaluate`.
        weights: one per aggregate, to give ``evaluate(weights=...)``.
        aggregates: per aggregate: name, target, budget, planned half-width, exact (bool), note.
        group_size: the group size the approximate plans assume (None when all are exact).
    """

    measure: str
    alpha: float
    total: float
    weights: tuple
    aggregates: tuple
    group_size: int | None = None

    def evaluate_arguments(self) -> dict:
        """``{"epsilon" | "rho": total, "alpha": alpha, "weights": weights}`` for ``evaluate``."""
        return {self.measure: self.total, "alpha": self.alpha, "weights": list(self.weights)}


def _scenarios(agg, n: int) -> list[dict]:
    """Statistics of one group of ``n`` rows for a few public layouts of its column's values."""
    column = column_of(agg)
    if column is None:
        columns = [np.zeros(n)]
    elif isinstance(agg, Quantiles):  # a quantile on a jump of the CDF is never pinned down: spread evenly
        columns = [np.linspace(agg.low, agg.high, n)]
    else:
        lo, hi = agg.low, agg.high
        half = n // 2
        columns = [np.full(n, (lo + hi) / 2), np.full(n, hi), np.full(n, lo),
                   np.r_[np.full(half, lo), np.full(n - half, hi)], np.linspace(lo, hi, n)]
    out = []
    for values in columns:
        frame = pd.DataFrame({column or "_": values})
        out.append(compute_statistics(frame, np.zeros(n, dtype=np.int64), 1, agg.statistics()))
    return out


def _half_width(agg, rows, alpha: float, n: int | None) -> float:
    """The aggregate's reported half-width from its planned mechanisms: exact for a count or a sum,
    else the largest over the scenarios of a group of ``n`` rows."""
    halves = [float(half) for *_, half in rows]
    if isinstance(agg, (Count, Sum)):
        return halves[0]
    widest = 0.0
    for stats in _scenarios(agg, n):
        truths = agg.measure_values(stats)
        cells = tuple(Noisy(np.asarray(t, dtype=float), mech, cost, half)
                      for t, (_, _, cost, mech, half) in zip(truths, rows))
        for _, lo, hi in agg.post_process(cells, alpha).columns.values():
            widest = max(widest, float(np.max((np.asarray(hi) - np.asarray(lo)) / 2.0)))
    return widest


def _exact(budget: float, zcdp: bool, mechanism) -> Fraction:
    """The budget as evaluate reads it (:func:`veil.dp.grouped_query._price`)."""
    return _price(None, budget, mechanism)[1] if zcdp else _price(budget, None, mechanism)[1]


def _budget_half(single, agg, budget: float, zcdp, mechanism, alpha, n) -> float:
    """The half-width of ``agg`` alone at ``budget`` (∞ where no mechanism can be built)."""
    try:
        rows = single._mechanisms(zcdp, _exact(budget, zcdp, mechanism), [Fraction(1)], mechanism, alpha)
    except ParameterError:
        return math.inf
    return _half_width(agg, rows, alpha, n)


def _smallest_budget(single, agg, target: float, zcdp, mechanism, alpha, n) -> float:
    """The smallest float budget whose half-width is <= target (bisection on the floats)."""
    def ok(b):
        return _budget_half(single, agg, b, zcdp, mechanism, alpha, n) <= target

    hi = 1.0
    while not ok(hi):
        hi *= 2.0
        if hi > _HIGHEST:
            raise ParameterError(f"no budget up to {_HIGHEST:g} gives {agg.name} a half-width of {target:g}; "
                                 "ask for a wider target.")
    lo = hi / 2.0
    while ok(lo):
        lo /= 2.0
        if lo < _LOWEST:
            return _LOWEST
    while math.nextafter(lo, math.inf) < hi:  # ok(hi), not ok(lo)
        mid = math.sqrt(lo * hi) if hi / lo > 2.0 else (lo + hi) / 2.0
        if mid <= lo or mid >= hi:
            mid = math.nextafter(lo, math.inf)
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def plan(query, target, *, alpha: float = 0.05, measure: str = "epsilon", weights=None,
         group_size: int | None = None, mechanism=None) -> AccuracyPlan:
    """The smallest ε (or ρ) per aggregate of ``query`` whose reported half-width is <= its target.

    Args:
        query: a :class:`~veil.dp.grouped_query.GroupedQuery` with its aggregates.
        target: one half-width for every aggregate, or ``{name: half-width}`` for each.
        alpha: the intervals' miss probability.
        measure: ``"epsilon"`` (pure ε-DP) or ``"rho"`` (ρ-zCDP).
        weights: ignored when None; else one positive weight per aggregate, and the plan is the
            smallest total whose split by these weights meets every target.
        group_size: the number of rows a group is assumed to have, for the approximate plans of a
            mean, a variance and quantiles (required when the query has one).
        mechanism: as for ``evaluate`` (the measure's default when None).

    Returns:
        An :class:`AccuracyPlan`; nothing is read from the table and nothing is spent.

    Raises:
        ParameterError: no aggregate, a bad target, measure, alpha, weights or group size, or a
            target no budget reaches.
    """
    from veil.dp.mechanisms import _check_alpha

    if not query.aggregates:
        raise ParameterError("the query has no aggregate; add some with .agg(count(), ...).")
    if measure not in MEASURES:
        raise ParameterError(f"measure is epsilon or rho, got {measure!r}.")
    alpha = _check_alpha(alpha)
    zcdp, _, _, mechanism = _price(*((None, 1.0) if measure == "rho" else (1.0, None)), mechanism)
    query = query._for_measure(zcdp)
    names = [a.name for a in query.aggregates]
    targets = target if isinstance(target, dict) else {name: target for name in names}
    if set(targets) != set(names):
        raise ParameterError(f"target must be one number or a half-width for each aggregate {names!r}.")
    for name, t in targets.items():
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t < math.inf:
            raise ParameterError(f"the target of {name} must be a positive finite half-width, got {t!r}.")
    exact = all(isinstance(a, (Count, Sum)) for a in query.aggregates)
    if not exact and (isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 1):
        raise ParameterError("a mean, variance or quantiles plan needs group_size, the whole number of rows you "
                             f"expect in a group, got {group_size!r}.")
    n = None if exact else group_size

    def single(agg):
        return replace(query, aggregates=(agg,))

    if weights is None:
        budgets = [_smallest_budget(single(a), a, float(targets[a.name]), zcdp, mechanism, alpha, n)
                   for a in query.aggregates]
        # with private keys the selection has weight private.weight beside these: in units of the
        # aggregates' mean budget, so that it gets private.weight times what an average aggregate gets
        mean = sum(budgets) / len(budgets)
        weights = budgets if getattr(query, "private", None) is None else [b / mean for b in budgets]
    shares = query._shares(weights)
    # the smallest total whose split meets every target: each aggregate needs total >= budget/share
    need = [_smallest_budget(single(a), a, float(targets[a.name]), zcdp, mechanism, alpha, n) / float(s)
            for a, s in zip(query.aggregates, shares)]
    total = max(need)
    for _ in range(200):  # the float splits of evaluate may round a part a hair below: raise the total
        rows = query._mechanisms(zcdp, _exact(total, zcdp, mechanism), shares, mechanism, alpha)
        halves = [_half_width(a, [r for r in rows if r[0] is a], alpha, n) for a in query.aggregates]
        borrowed = {r[0].name: r[1].source for r in rows if isinstance(r[1], Borrowed)}
        if all(h <= targets[a.name] for h, a in zip(halves, query.aggregates)):
            break
        total = math.nextafter(total, math.inf) if _ < 100 else total * (1 + 1e-9)
    else:  # pragma: no cover - the half-width is non-increasing in the budget
        raise ParameterError("the plan could not meet the targets; ask for wider targets.")
    entries = tuple({"name": a.name, "target": float(targets[a.name]),
                     measure: float(_exact(total, zcdp, mechanism) * s), "half_width": h,
                     "exact": isinstance(a, (Count, Sum)),
                     "note": ("exact: the reported half-width does not depend on the data"
                              if isinstance(a, (Count, Sum)) else
                              f"approximate: the widest interval of a group of {n} rows over a few layouts of its "
                              "values at their noise-free values; the reported one depends on the data"
                              + ("" if a.name not in borrowed else
                                 f"; it divides by {borrowed[a.name]}'s noisy cells, and its budget was planned as "
                                 "if it measured its own count (an upper bound: sharing only narrows it)"))}
                    for a, s, h in zip(query.aggregates, shares, halves))
    return AccuracyPlan(measure, alpha, total, tuple(float(w) for w in weights), entries, n)
