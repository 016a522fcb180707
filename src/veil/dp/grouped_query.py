"""Grouped DP queries with public keys, at the row or person level.

``Query(table, unit=...).group_by(columns, keys=... | domains=...).agg(count(), sum(c, lo, hi),
mean(c, lo, hi)).evaluate(epsilon, accountant=..., rng=...)`` answers every (public key,
aggregate) cell with pure ε-DP noise, or ρ-zCDP noise with ``evaluate(rho=...)``
(docs/concepts/privacy-units-and-grouped-queries.md).

* Building a query reads only the table's schema and spends nothing; a bad column, type, bound
  or key list is refused there, in one sentence.
* An accountant (a ledger population's) is kept at one privacy unit; a query at another unit is
  refused before anything is read, drawn or charged (:mod:`veil.dp.budget_unit`).
* :meth:`GroupedQuery.evaluate` checks its parameters, bounds each person's contribution
  (:mod:`veil.dp.privacy_unit`), computes the true cells, charges the accountant once with the
  whole ε (a refused charge draws nothing), then draws one noise vector per measurement, one
  cell per public key: how many draws and at which scales depend only on the query, never on the
  data (the replay harness of :mod:`veil.conformance.glue` checks it).
* ε is split over the aggregates by ``weights`` (equal by default), a mean's share half to its
  sum and half to its count; each share is rounded *down* to a float so that the shares never
  add up to more than ε. The L1 sensitivity of a measurement is ``c · per_row`` with ``c`` the
  unit's :meth:`~veil.dp.privacy_unit.PrivacyUnit.cell_contribution` over the keys.
* The mechanism is a parameter: a function ``(epsilon, sensitivity, integer) -> mechanism``
  returning an object with ``release(values, noise)``, ``error_bound(alpha)``, ``scale`` and
  ``name`` (:func:`pure_laplace` by default: discrete Laplace for counts, Laplace for sums).
* Priced in ρ-zCDP instead (``evaluate(rho=...)``): :func:`zcdp_gaussian` (the discrete
  Gaussian for counts, the Gaussian for sums and means) gets ``(ρ part, L2 sensitivity,
  integer)``; ρ is split by the same weights as ε, but exactly (fractions: the parts add up to the
  ρ charged, and each σ is calibrated to its part exactly); the L2 sensitivity is ``per_row``
  times the square root of :meth:`~veil.dp.privacy_unit.PrivacyUnit.cell_contribution_l2_squared`,
  rounded up. The accountant must keep its budget in ρ (a ZCDPAccountant, a zcdp population);
  the record states ρ, with ε and δ null.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from veil.dp.account import PrivacyAccount
from veil.dp.accountant import Accountant
from veil.dp.discrete_gaussian import DiscreteGaussian
from veil.dp.exact import exact_epsilon
from veil.dp.aggregates import (Count, Mean, check_aggregates, check_numeric, measure_values, measurements,
                                 statistics, true_values)
from veil.dp.grouped_answer import GroupedAnswer, mean_interval
from veil.dp.measures import MeasureMismatchError, exact_rho
from veil.dp.mechanisms import Geometric, Laplace, _check_alpha, _check_epsilon, unfit_reasons
from veil.dp.noise import NoiseSource, as_noise_source
from veil.dp.privacy_unit import PrivacyUnit, bound_contributions, selection_keys
from veil.dp.public_keys import PublicKeys
from veil.dp.spark_statistics import is_spark_frame, spark_schema_frame, spark_true_statistics
from veil.dp.zcdp_gaussian import ZCDPGaussian
from veil.errors import ColumnError, ParameterError

__all__ = ["GroupedQuery", "Query", "pure_laplace", "zcdp_gaussian"]

BOUNDING_REASON = "contribution bounding chose rows with a seeded generator"


def pure_laplace(epsilon: float, sensitivity: float, integer: bool):
    """The default mechanism under pure ε-DP: discrete Laplace (geometric) for whole-number
    cells, Laplace for real ones, each of scale sensitivity/ε (``sensitivity``: L1)."""
    return Geometric(epsilon, sensitivity) if integer else Laplace(epsilon, sensitivity)


pure_laplace.measure = "pure"


def zcdp_gaussian(rho: Fraction, sensitivity: float, integer: bool):
    """The mechanism under ρ-zCDP (Bun and Steinke 2016): the discrete Gaussian for whole-number
    cells (Canonne, Kamath and Steinke 2020; :class:`~veil.dp.discrete_gaussian.DiscreteGaussian`),
    the Gaussian for real ones (:class:`~veil.dp.zcdp_gaussian.ZCDPGaussian`), each of the
    smallest σ with Δ²/(2σ²) <= ρ checked exactly (``sensitivity``: Δ, the L2 sensitivity).
    :meth:`GroupedQuery.evaluate` gives it ρ as an exact fraction and charges ρ."""
    return DiscreteGaussian(rho, sensitivity) if integer else ZCDPGaussian(rho, sensitivity)


zcdp_gaussian.measure = "zcdp"


def _l2(squared: Fraction) -> float:
    """The smallest float whose square is at least ``squared`` (an L2 sensitivity rounded up, so
    that σ is never a hair too small)."""
    value = math.sqrt(float(squared))
    while Fraction(value) ** 2 < squared:
        value = math.nextafter(value, math.inf)
    return value


def _frame_of(table: Any) -> tuple[pd.DataFrame, str]:
    """The table as a pandas frame (the user's own frame is read, never modified) and its kind."""
    if isinstance(table, pd.DataFrame):
        return table, "pandas"
    kind = type(table).__module__.split(".")[0]
    if kind == "polars" and type(table).__name__ == "DataFrame":
        return table.to_pandas(), "polars"
    if kind == "pyarrow" and type(table).__name__ == "Table":
        return table.to_pandas(), "arrow"
    if is_spark_frame(table):  # its schema only, as an empty frame: the rows stay in Spark
        return spark_schema_frame(table), "spark"
    raise ParameterError(f"a query reads a pandas, polars or Arrow table or a Spark DataFrame, got "
                         f"{type(table).__name__}.")


def _missing_column(frame: pd.DataFrame, name: str, what: str) -> None:
    if name not in frame.columns:
        raise ColumnError(f"the {what} '{name}' does not exist; the columns are "
                          f"{', '.join(map(str, frame.columns))}.")


def _share(epsilon: Fraction, part: Fraction) -> float:
    """``epsilon · part`` as a float no larger than the exact product (``epsilon`` read as the
    accountant reads it, :func:`veil.dp.exact.exact_epsilon`, so the shares never add up to more
    than what is charged)."""
    exact = epsilon * part
    value = float(exact)
    if Fraction(value) > exact:
        value = math.nextafter(value, 0.0)
    return value


def _price(epsilon, rho, mechanism) -> tuple[bool, Fraction, float, Callable]:
    """Whether the query is priced in ρ, its whole ε or ρ exactly (as the accountant reads it)
    and as a float, and its mechanism (the measure's default when ``None``).

    Raises:
        ParameterError: neither or both of ε and ρ, one out of range, or a mechanism priced in the
            other measure.
    """
    if (epsilon is None) == (rho is None):
        raise ParameterError("a grouped query is priced in epsilon or in rho; give one of them.")
    zcdp = rho is not None
    if mechanism is None:
        mechanism = zcdp_gaussian if zcdp else pure_laplace
    if (getattr(mechanism, "measure", "pure") == "zcdp") != zcdp:
        given, wanted = ("rho", "epsilon") if zcdp else ("epsilon", "rho")
        raise ParameterError(f"the mechanism is priced in {wanted}, and the query was given {given}; give {wanted} "
                             "or a mechanism priced in it.")
    if zcdp:
        return True, exact_rho(rho), float(rho), mechanism
    eps = _check_epsilon(epsilon)
    return False, exact_epsilon(eps), eps, mechanism


def _check_accountant(accountant, zcdp: bool) -> None:
    """Refuse an accountant of another type or measure than the query's, before anything is drawn.

    Raises:
        ParameterError: not an accountant, or an (ε, δ) accountant of another kind than Accountant.
        MeasureMismatchError: a budget in ρ for a query in ε, or the other way round.
    """
    if accountant is None:
        return
    if not isinstance(accountant, PrivacyAccount):
        raise ParameterError(f"accountant must be a veil.dp.Accountant or ZCDPAccountant, got "
                             f"{type(accountant).__name__}.")
    if zcdp != (accountant.measure == "zcdp"):
        kept, asked = ("ρ-zCDP", "epsilon") if accountant.measure == "zcdp" else ("(ε, δ)", "rho")
        raise MeasureMismatchError(f"the budget of {accountant.dataset_id!r} is kept in {kept}, and the query asks for "
                                   f"{asked}; price the query in the budget's measure.")
    if not zcdp and not isinstance(accountant, Accountant):
        raise ParameterError(f"accountant must be a veil.dp.Accountant or ZCDPAccountant, got "
                             f"{type(accountant).__name__}.")


@dataclass(frozen=True, eq=False)
class Query:
    """A table and its privacy unit: the start of a grouped query (nothing is read or spent).

    Args:
        table: a pandas, polars, Arrow or Spark table (a DataFrame of a classic or Spark Connect
            session, read by :mod:`veil.dp.spark_statistics`); it is never modified.
        unit: a :class:`PrivacyUnit` (the row unit by default).

    Raises:
        ParameterError: a table of another kind, or a unit that is not a PrivacyUnit.
        ColumnError: the unit's ID column does not exist.
    """

    table: Any = field(repr=False)
    unit: PrivacyUnit = PrivacyUnit()
    #: the table as pandas (the user's own frame when it is one) and its kind, read once
    frame: pd.DataFrame = field(init=False, repr=False, compare=False)
    kind: str = field(init=False, compare=False)

    def __post_init__(self):
        if not isinstance(self.unit, PrivacyUnit):
            raise ParameterError(f"unit must be a PrivacyUnit (rows() or person(...)), got {self.unit!r}.")
        frame, kind = _frame_of(self.table)
        object.__setattr__(self, "frame", frame)
        object.__setattr__(self, "kind", kind)
        if self.unit.is_person:
            _missing_column(frame, self.unit.id_column, "ID column")

    def group_by(self, columns: str | Sequence[str], keys: Sequence | None = None, *,
                 domains: Mapping[str, Sequence] | None = None) -> "GroupedQuery":
        """Group by ``columns`` with public keys: ``keys`` (a list of key tuples) or ``domains``
        (``{column: values}``, their cross product; its columns must be ``columns``).

        Raises:
            ParameterError: neither or both of keys and domains, an empty key list, a duplicate key.
            ColumnError: a grouping column that does not exist.
        """
        if (keys is None) == (domains is None):
            raise ParameterError("group_by needs the public keys: give keys=[...] or domains={...}, one of them.")
        if keys is not None:
            public = PublicKeys.from_list(columns, keys)
        else:
            public = PublicKeys.from_domains(domains)
            wanted = (columns,) if isinstance(columns, str) else tuple(columns)
            if public.columns != wanted:
                raise ParameterError(f"the domains must name the grouping columns {list(wanted)} in order.")
        for name in public.columns:
            _missing_column(self.frame, name, "grouping column")
        return GroupedQuery(self, public, ())


@dataclass(frozen=True, eq=False)
class GroupedQuery:
    """A grouped query: a :class:`Query`, its public keys and aggregates. Build it with
    :meth:`Query.group_by` and :meth:`agg`; nothing is spent until :meth:`evaluate`."""

    query: Query
    keys: PublicKeys
    aggregates: tuple = ()

    def agg(self, *aggregates) -> "GroupedQuery":
        """A query with these aggregates added (:func:`veil.dp.aggregates.count`, ``sum``, ``mean``).

        Raises:
            ParameterError: no aggregate, something else, or two with the same name.
            ColumnError: a sum or mean of a column that is missing or not numeric.
        """
        aggs = check_aggregates(self.aggregates + tuple(aggregates))
        for a in aggs:
            check_numeric(self.query.frame, a)
        return GroupedQuery(self.query, self.keys, aggs)

    def sensitivities(self, norm: str = "L1") -> dict:
        """The L1 (or, with ``norm="L2"``, the L2) sensitivity of each measurement's vector of
        cells, from the unit's bounds and the clamping ranges: ``per_row`` times the unit's
        :meth:`~veil.dp.privacy_unit.PrivacyUnit.cell_contribution` (L1) or the square root of its
        :meth:`~veil.dp.privacy_unit.PrivacyUnit.cell_contribution_l2_squared` (L2, rounded up)."""
        if norm not in ("L1", "L2"):
            raise ParameterError(f"norm is L1 or L2, not {norm!r}.")
        k = len(self.keys)
        if norm == "L1":
            c = self.query.unit.cell_contribution(k)
            return {m.label: c * m.per_row for a in self.aggregates for m in measurements(a)}
        c2 = self.query.unit.cell_contribution_l2_squared(k)
        return {m.label: _l2(Fraction(m.per_row) ** 2 * c2) for a in self.aggregates for m in measurements(a)}

    def evaluate(self, epsilon: float | None = None, *, rho: float | None = None,
                 accountant: PrivacyAccount | None = None,
                 rng: NoiseSource | np.random.Generator | int | None = None, alpha: float = 0.05,
                 weights: Sequence[float] | None = None,
                 mechanism: Callable[[Any, float, bool], Any] | None = None) -> GroupedAnswer:
        """Answer every (public key, aggregate) cell with ε-DP noise, or ρ-zCDP noise given ``rho``.

        Args:
            epsilon: the whole ε of the query, split over the aggregates (pure ε-DP).
            rho: instead of ε, the whole ρ of the query (ρ-zCDP): split exactly, as fractions,
                over the aggregates and measurements, each drawn by :func:`zcdp_gaussian` (the
                discrete Gaussian for counts, the Gaussian for sums and means) calibrated to its
                L2 sensitivity; the accountant (a :class:`~veil.dp.zcdp_accountant.ZCDPAccountant`)
                is charged the whole ρ.
            accountant: charged once with ``epsilon`` (or ``rho``) before any noise is drawn.
            rng: ``None`` for the secure source (a release); a seed, Generator or seeded
                NoiseSource makes an experiment that is not fit for release.
            alpha: each cell's interval misses with probability at most ``alpha``.
            weights: one positive weight per aggregate (equal by default): aggregate i gets
                ε·w_i/Σw.
            mechanism: see the module notes; :func:`pure_laplace` with ε, :func:`zcdp_gaussian`
                with ρ (a mechanism's ``measure`` attribute says which it is priced in; one
                without is priced in ε).

        Raises:
            ParameterError: no aggregate, neither or both of ε and ρ, ε, ρ or alpha out of
                range, bad weights, a mechanism priced in the other measure, an accountant of
                another type; nothing is charged.
            MeasureMismatchError: an accountant kept in another measure than the query's (ρ for
                an (ε, δ) budget, ε for a zCDP one); nothing is drawn or charged.
            UnitMismatchError: the accountant's budget (a ledger population's) is kept at another
                privacy unit than the query's (:mod:`veil.dp.budget_unit`); nothing is drawn or charged.
            BudgetExceededError: the accountant refuses the charge; no noise is drawn.
        """
        if not self.aggregates:
            raise ParameterError("the query has no aggregate; add some with .agg(count(), ...).")
        zcdp, total, amount, mechanism = _price(epsilon, rho, mechanism)
        alpha = _check_alpha(alpha)
        _check_accountant(accountant, zcdp)
        if accountant is not None:
            accountant.check_unit(self.query.unit)  # before anything is read, drawn or charged
        shares = self._shares(weights)
        src = as_noise_source(rng)
        unit, k = self.query.unit, len(self.keys)
        contribution = unit.cell_contribution(k)
        l2 = self.sensitivities("L2") if zcdp else {}
        plan = []  # (aggregate, measurement, ε or ρ, mechanism, half width), all before any data is read
        for agg, share in zip(self.aggregates, shares):
            for m in measurements(agg):
                if zcdp:  # ρ split exactly: the parts add up to the ρ charged
                    cost = total * share * Fraction(m.share)
                    mech = mechanism(cost, l2[m.label], m.integer)
                else:
                    cost = _share(total, share * Fraction(m.share))
                    mech = mechanism(cost, contribution * m.per_row, m.integer)
                a = alpha / 2 if isinstance(agg, Mean) else alpha
                half = 0 if isinstance(mech, Geometric) and mech.ratio == 0.0 else mech.error_bound(a)
                plan.append((agg, m, cost, mech, half))
        truths = self._true_cells(src)
        label = f"grouped query {', '.join(a.name for a in self.aggregates)} by {', '.join(self.keys.columns)}"
        if accountant is not None:
            with accountant.charging_at(self.query.unit):
                if zcdp:
                    accountant.charge(rho=total, label=label)
                else:
                    accountant.charge(amount, 0.0, label=label)
        noisy = [mech.release(truths[m.label], noise=src).value for _, m, _, mech, _ in plan]
        return self._answer(plan, noisy, amount, zcdp, alpha, src, contribution)

    # ---- the steps ------------------------------------------------------------------------------
    def _shares(self, weights) -> list[Fraction]:
        n = len(self.aggregates)
        if weights is None:
            return [Fraction(1, n)] * n
        try:
            ws = [Fraction(float(w)) for w in weights]
        except (TypeError, ValueError):
            raise ParameterError(f"weights must be numbers, one per aggregate, got {weights!r}.") from None
        if len(ws) != n or not all(w > 0 and math.isfinite(float(w)) for w in ws):
            raise ParameterError(f"weights must be {n} positive finite numbers, one per aggregate, got {weights!r}.")
        total = sum(ws)
        return [w / total for w in ws]

    def _true_cells(self, src: NoiseSource) -> dict:
        """Bound the contributions and compute every measurement's true vector."""
        if self.query.kind == "spark":
            wanted = [s for agg in self.aggregates for s in statistics(agg)]
            _, stats = spark_true_statistics(self.query, self.keys.columns, self.keys, wanted, src)
            return {m.label: v for agg in self.aggregates
                    for m, v in zip(measurements(agg), measure_values(agg, stats))}
        frame = self.query.frame
        unit, k, n = self.query.unit, len(self.keys), len(frame)
        group = self.keys.index_of_rows(frame)
        if unit.is_person:
            person, _ = pd.factorize(frame[unit.id_column], use_na_sentinel=True)
            keys = selection_keys(src, 3 * n).reshape(3, n)
            kept = bound_contributions(unit, person, group, keys[0], keys[1], keys[2])
        else:
            kept = group >= 0
        rows = frame.loc[kept] if not kept.all() else frame
        kept_group = group[kept]
        out = {}
        for agg in self.aggregates:
            for m, values in zip(measurements(agg), true_values(agg, rows, kept_group, k)):
                out[m.label] = values
        return out

    def _answer(self, plan, noisy, amount, zcdp, alpha, src, contribution) -> GroupedAnswer:
        values, low, high, cells, record_aggs = {}, {}, {}, {}, []
        for (agg, m, m_eps, mech, half), v in zip(plan, noisy):
            cells[m.label] = (np.asarray(v), half, mech, m_eps)
        for agg in self.aggregates:
            ms = measurements(agg)
            if isinstance(agg, Mean):
                (s, s_half, s_mech, s_eps), (c, c_half, c_mech, c_eps) = (cells[m.label] for m in ms)
                values[agg.name], low[agg.name], high[agg.name] = mean_interval(s, c, s_half, c_half,
                                                                                agg.low, agg.high)
                interval = ("approximate: the range of the ratio over the alpha/2 intervals of the centred sum "
                            "and the count (union bound), cut to the bounds; it covers the mean of the bounded, "
                            "clamped rows")
            else:
                v, half, mech, _ = cells[ms[0].label]
                values[agg.name], low[agg.name], high[agg.name] = v, v - half, v + half
                interval = "exact: from the noise distribution; covers the bounded, clamped cell"
            entry = {"name": agg.name, "aggregate": type(agg).__name__.lower(),
                     "column": None if isinstance(agg, Count) else agg.column,
                     "bounds": None if isinstance(agg, Count) else [agg.low, agg.high],
                     "interval": interval, "measurements": []}
            for m in ms:
                _, half, mech, cost = cells[m.label]
                entry["measurements"].append({"label": m.label, ("rho" if zcdp else "epsilon"): float(cost),
                                              "mechanism": mech.name, "sensitivity": mech.sensitivity,
                                              "norm": "L2" if zcdp else "L1", "scale": mech.scale,
                                              "half_width": float(half)})
            record_aggs.append(entry)
        unfit = unfit_reasons(src)
        if self.query.unit.is_person and not src.fit_for_release:
            unfit = unfit + (BOUNDING_REASON,)
        record = {"unit": self.query.unit.describe(), "cell_contribution": contribution,
                  "group_by": list(self.keys.columns), "num_keys": len(self.keys),
                  # priced in ρ: ε and δ are null, not 0 (which a reader would take for free)
                  **({"epsilon": None, "delta": None, "rho": amount, "measure": "rho-zCDP"} if zcdp else
                     {"epsilon": amount, "delta": 0.0, "measure": "pure epsilon-DP"}),
                  "alpha": alpha, "aggregates": record_aggs,
                  "fit_for_release": src.fit_for_release, "not_fit_because": list(unfit),
                  "noise_source": src.description,
                  "notes": ["every public key is answered, an empty group like any other",
                            "rows whose key is not public are dropped (no 'other' bucket yet)",
                            "rows without a person ID are dropped" if self.query.unit.is_person else
                            "each row is a unit"]}
        session = self.query.table.sparkSession if self.query.kind == "spark" else None
        return GroupedAnswer(self.keys, values, low, high, alpha, record, self.query.kind, session)
