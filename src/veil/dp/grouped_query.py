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
  sum and half to its count (the whole share to its sum when it divides by the query's count(),
  :mod:`veil.dp.shared_count`); each share is rounded *down* to a float so that the shares never
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
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from veil.dp.account import PrivacyAccount
from veil.dp.accountant import Accountant
from veil.dp.aggregate_protocol import Noisy
from veil.dp.aggregates import check_aggregates, check_numeric, measure_values, measurements, statistics
from veil.dp.grouped_answer import GroupedAnswer
from veil.dp.measures import MeasureMismatchError
from veil.dp.mechanisms import Geometric, _check_alpha, unfit_reasons
from veil.dp.noise import NoiseSource, as_noise_source
from veil.dp.privacy_unit import PrivacyUnit
from veil.dp.partition_selection import UNBOUNDED_KEYS, PartitionSelection, plan_selection
from veil.dp.public_keys import PublicKeys, _columns
from veil.dp.true_cells import true_statistics
from veil.dp.spark_statistics import is_spark_frame, spark_schema_frame
from veil.dp.query_pricing import _l2, _price, _share, pure_laplace, zcdp_gaussian
from veil.dp.shared_count import Borrowed, denominators, shared_measurements
from veil.errors import ColumnError, ParameterError

__all__ = ["GroupedQuery", "Query", "pure_laplace", "zcdp_gaussian"]

BOUNDING_REASON = "contribution bounding chose rows with a seeded generator"
ROWS = ("rows",)


def _plain(value):
    """A numpy scalar as the Python value it holds."""
    return value.item() if isinstance(value, np.generic) else value


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
        table: a pandas, polars or Arrow table, or a Spark DataFrame (classic or Spark Connect:
            its schema is read here, its rows by the Spark engine); it is never modified.
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
                 domains: Mapping[str, Sequence] | None = None, keys_file: str | os.PathLike | None = None,
                 hierarchy: tuple | None = None, private: PartitionSelection | None = None,
                 other: bool = False) -> "GroupedQuery":
        """Group by ``columns``, with the keys given by exactly one of:

        * ``keys``: a list of key tuples (a bare value each for one column);
        * ``domains``: ``{column: values}``, their cross product (its columns must be ``columns``);
        * ``keys_file``: a CSV file whose header names the grouping columns, one row per key, its
          values read as the table's column types (:meth:`PublicKeys.from_file`);
        * ``hierarchy``: ``(hierarchy, level)``, a :class:`~veil.data.hierarchy.Hierarchy` (or
          the path of its file) and a level, for one grouping column: rows are grouped by their
          value generalized to that level, the keys are the level's values
          (:meth:`PublicKeys.from_hierarchy`); for several columns, ``{column: (hierarchy,
          level)}`` with ``domains`` for the columns without a hierarchy, their cross product
          (:meth:`PublicKeys.from_levels`);
        * ``private``: a :class:`~veil.dp.partition_selection.PartitionSelection`: the keys are
          released privately from those present after contribution bounding.

        ``other=True`` answers the rows whose key is outside the public set in one more key, the
        other bucket (:mod:`veil.dp.public_keys`); it counts as a key in every sensitivity.

        Raises:
            ParameterError: not exactly one source of keys, an empty key list or file, a duplicate
                key, a bad hierarchy level, ``other`` with private keys.
            ColumnError: a grouping column that does not exist.
        """
        given = [name for name, v in (("keys", keys), ("domains", domains), ("keys_file", keys_file),
                                      ("hierarchy", hierarchy), ("private", private)) if v is not None]
        if given == ["domains", "hierarchy"] and isinstance(hierarchy, Mapping):
            given = ["hierarchy"]  # levels for some columns, domains for the others
        if len(given) != 1:
            raise ParameterError("group_by needs one source of keys, the public keys (keys=[...], domains={...}, "
                                 "keys_file=... or hierarchy=(hierarchy, level)) or "
                                 "private=PartitionSelection(...); got "
                                 f"{' and '.join(given) if given else 'none'}.")
        wanted = _columns(columns)
        for name in wanted:
            _missing_column(self.frame, name, "grouping column")
        if private is not None:
            if not isinstance(private, PartitionSelection):
                raise ParameterError(f"private must be a PartitionSelection(delta, ...), got {private!r}.")
            if other:
                raise ParameterError("the other bucket answers rows outside public keys; private keys have none, "
                                     "so drop other=True.")
            return GroupedQuery(self, None, (), wanted, private)
        if isinstance(hierarchy, Mapping):
            public = PublicKeys.from_levels(wanted, hierarchy, domains, other=other)
        elif keys is not None:
            public = PublicKeys.from_list(wanted, keys, other=other)
        elif domains is not None:
            public = PublicKeys.from_domains(domains, other=other)
            if public.columns != wanted:
                raise ParameterError(f"the domains must name the grouping columns {list(wanted)} in order.")
        elif keys_file is not None:
            public = PublicKeys.from_file(keys_file, wanted, types=self.frame.dtypes.to_dict(), other=other)
        else:
            if not isinstance(hierarchy, tuple) or len(hierarchy) != 2:
                raise ParameterError("hierarchy must be a pair (hierarchy, level), e.g. (Hierarchy.read_csv(path), 2).")
            if len(wanted) != 1:
                raise ParameterError("a hierarchy level gives the keys of one grouping column; group by that column "
                                     "alone.")
            public = PublicKeys.from_hierarchy(wanted[0], hierarchy[0], hierarchy[1], other=other)
        return GroupedQuery(self, public, (), wanted)


@dataclass(frozen=True, eq=False)
class GroupedQuery:
    """A grouped query: a :class:`Query`, its keys (public, or released by ``private`` partition
    selection when ``keys`` is None) and aggregates. Build it with :meth:`Query.group_by` and
    :meth:`agg`; nothing is spent until :meth:`evaluate`."""

    query: Query
    keys: PublicKeys | None
    aggregates: tuple = ()
    columns: tuple = ()
    private: PartitionSelection | None = None

    def __post_init__(self):
        if not self.columns and self.keys is not None:
            object.__setattr__(self, "columns", self.keys.columns)

    @property
    def num_cells(self) -> int:
        """The number of keys the sensitivities count: the public keys (with the other bucket), or,
        for private keys, unbounded (only the unit's bounds count, never the candidates present)."""
        return UNBOUNDED_KEYS if self.keys is None else len(self.keys)

    def agg(self, *aggregates) -> "GroupedQuery":
        """A query with these aggregates added (:func:`veil.dp.aggregates.count`, ``sum``, ``mean``).

        Raises:
            ParameterError: no aggregate, something else, or two with the same name.
            ColumnError: a sum or mean of a column that is missing or not numeric.
        """
        aggs = check_aggregates(self.aggregates + tuple(aggregates))
        for a in aggs:
            check_numeric(self.query.frame, a)
        return replace(self, aggregates=aggs)

    def sensitivities(self, norm: str = "L1") -> dict:
        """The L1 (or, with ``norm="L2"``, the L2) sensitivity of each measurement's vector of
        cells, from the unit's bounds and the clamping ranges: ``per_row`` times the unit's
        :meth:`~veil.dp.privacy_unit.PrivacyUnit.cell_contribution` (L1) or the square root of its
        :meth:`~veil.dp.privacy_unit.PrivacyUnit.cell_contribution_l2_squared` (L2, rounded up)."""
        if norm not in ("L1", "L2"):
            raise ParameterError(f"norm is L1 or L2, not {norm!r}.")
        k = self.num_cells
        if norm == "L1":
            c = self.query.unit.cell_contribution(k)
            return {m.label: c * m.per_row for a in self.aggregates for m in measurements(a)}
        c2 = self.query.unit.cell_contribution_l2_squared(k)
        return {m.label: _l2(Fraction(m.per_row) ** 2 * c2) for a in self.aggregates for m in measurements(a)}

    def plan(self, target, alpha: float = 0.05, measure: str = "epsilon", weights=None, *,
             group_size: int | None = None, mechanism=None):
        """The smallest ε (or ρ) per aggregate whose reported half-width is at most ``target``, the
        total and the weights that give each its part: see :func:`veil.dp.accuracy_plan.plan`.
        Nothing is read from the table and nothing is spent."""
        from veil.dp.accuracy_plan import plan

        return plan(self, target, alpha=alpha, measure=measure, weights=weights, group_size=group_size,
                    mechanism=mechanism)

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
        self = self._for_measure(zcdp)  # noqa: PLW0642 - the aggregates resolved for the measure
        alpha = _check_alpha(alpha)
        _check_accountant(accountant, zcdp)
        if accountant is not None:
            accountant.check_unit(self.query.unit)  # before anything is read, drawn or charged
        delta = self._check_delta(accountant, zcdp)
        shares = self._shares(weights)
        src = as_noise_source(rng)
        unit, k = self.query.unit, self.num_cells
        contribution = unit.cell_contribution(k)
        plan = self._mechanisms(zcdp, total, shares, mechanism, alpha)  # all before any data is read
        selection = None
        if self.private is not None:  # the selection's noisy counts: the last share (partition_selection)
            if zcdp:
                selection = plan_selection(self.private, unit, zcdp, total * shares[-1],
                                           _l2(Fraction(unit.cell_contribution_l2_squared(k))))
            else:
                selection = plan_selection(self.private, unit, zcdp, _share(total, shares[-1]), contribution)
        keys_frame, truths, counts = self._true_cells(src)
        label = f"grouped query {', '.join(a.name for a in self.aggregates)} by {', '.join(self.columns)}"
        if accountant is not None:
            with accountant.charging_at(self.query.unit):
                if zcdp:
                    accountant.charge(rho=total, label=label)
                else:
                    accountant.charge(amount, delta, label=label)
        if selection is not None:  # drawn for every candidate key, before the aggregates
            released = selection.select(selection.mechanism.release(counts, noise=src).value)
        noisy = [mech.release(truths[m.label], noise=src).value for _, m, _, mech, _ in plan
                 if not isinstance(m, Borrowed)]
        if selection is None:
            return self._answer(plan, noisy, amount, zcdp, alpha, src, contribution)
        # only the keys that pass, sorted; nothing about the others (no row, no count, no message)
        noisy = [np.asarray(v)[released] for v in noisy]
        kept = [tuple(_plain(v) for v in row) for row in keys_frame.loc[released].itertuples(index=False, name=None)]
        answer = replace(self, keys=PublicKeys(self.columns, tuple(kept)))._answer(plan, noisy, amount, zcdp, alpha,
                                                                                  src, contribution)
        answer.record.update({"delta": self.private.delta, "partition_selection": selection.record(zcdp),
                              "measure": "delta-approximate rho-zCDP" if zcdp else "approximate (epsilon, delta)-DP"})
        return answer

    # ---- the steps ------------------------------------------------------------------------------
    def _mechanisms(self, zcdp: bool, total: Fraction, shares, mechanism, alpha: float) -> list:
        """(aggregate, measurement, ε or ρ, mechanism, half-width at α·alpha_share) for every
        measurement, from the query alone (also what :mod:`veil.dp.accuracy_plan` plans with).

        A mean or variance that divides by the query's count (:mod:`veil.dp.shared_count`, decided
        from the schema and the shares) has its count measurement as a
        :class:`~veil.dp.shared_count.Borrowed` row: no cost, the count's mechanism, its half-width
        at the aggregate's α share; it is never drawn."""
        contribution = self.query.unit.cell_contribution(self.num_cells)
        l2 = self.sensitivities("L2") if zcdp else {}
        shared = denominators(self.query, self.aggregates, shares)
        plan = []
        for i, (agg, share) in enumerate(zip(self.aggregates, shares)):
            for m in (shared_measurements(agg, shared[i]) if i in shared else measurements(agg)):
                if isinstance(m, Borrowed):  # filled below, once the count's mechanism is built
                    plan.append((agg, m, Fraction(0), None, None))
                    continue
                if zcdp:  # ρ split exactly: the parts add up to the ρ charged
                    cost = total * share * Fraction(m.share)
                    mech = mechanism(cost, l2[m.label], m.integer)
                else:
                    cost = _share(total, share * Fraction(m.share))
                    mech = mechanism(cost, contribution * m.per_row, m.integer)
                a = alpha * m.alpha_share
                half = 0 if isinstance(mech, Geometric) and mech.ratio == 0.0 else mech.error_bound(a)
                plan.append((agg, m, cost, mech, half))
        built = {m.label: mech for _, m, _, mech, _ in plan if mech is not None}
        for i, (agg, m, cost, mech, half) in enumerate(plan):
            if isinstance(m, Borrowed):
                mech = built[m.source]
                a = alpha * m.alpha_share
                half = 0 if isinstance(mech, Geometric) and mech.ratio == 0.0 else mech.error_bound(a)
                plan[i] = (agg, m, cost, mech, half)
        return plan

    def _for_measure(self, zcdp: bool) -> "GroupedQuery":
        """The query with each aggregate's choices for the measure made (a quantiles aggregate's
        ``method="auto"``: the tree under ρ, the flat histogram under ε)."""
        aggs = tuple(a.for_measure(zcdp) if hasattr(a, "for_measure") else a for a in self.aggregates)
        return self if aggs == self.aggregates else replace(self, aggregates=aggs)

    def _shares(self, weights) -> list[Fraction]:
        """Each aggregate's fraction of ε or ρ, then (private keys) the selection's, adding up to 1."""
        n = len(self.aggregates)
        extra = [] if self.private is None else [Fraction(self.private.weight)]
        if weights is None:
            ws = [Fraction(1)] * n + extra
            return [w / sum(ws) for w in ws]
        try:
            ws = [Fraction(float(w)) for w in weights]
        except (TypeError, ValueError):
            raise ParameterError(f"weights must be numbers, one per aggregate, got {weights!r}.") from None
        if len(ws) != n or not all(w > 0 and math.isfinite(float(w)) for w in ws):
            raise ParameterError(f"weights must be {n} positive finite numbers, one per aggregate, got {weights!r}.")
        ws += extra
        total = sum(ws)
        return [w / total for w in ws]

    def _true_cells(self, src: NoiseSource) -> tuple[pd.DataFrame, dict, np.ndarray | None]:
        """The keys answered (public, or the candidates of private selection), every measurement's
        true vector, and the candidates' kept rows (``None`` for public keys), from the engine's
        statistics (:func:`veil.dp.true_cells.true_statistics`: bounding, then the statistics per key)."""
        wanted = [s for agg in self.aggregates for s in statistics(agg)]
        if self.private is not None:
            wanted.append(ROWS)
        keys_frame, stats = true_statistics(self.query, self.columns, self.keys, list(dict.fromkeys(wanted)), src)
        out = {}
        for agg in self.aggregates:
            for m, values in zip(measurements(agg), measure_values(agg, stats)):
                out[m.label] = values
        return keys_frame, out, (stats[ROWS] if self.private is not None else None)

    def _check_delta(self, accountant, zcdp: bool) -> float:
        """The δ the query spends (0 with public keys), refusing an accountant that cannot hold it.

        Raises:
            MeasureMismatchError: private keys priced in ρ with a zCDP accountant (it keeps no δ).
            ParameterError: private keys with an (ε, δ) budget whose δ is 0.
        """
        if self.private is None:
            return 0.0
        delta = self.private.delta
        if accountant is not None and zcdp:
            raise MeasureMismatchError(f"private partition selection spends δ = {delta:g}, and the budget of "
                                       f"{accountant.dataset_id!r} is kept in ρ-zCDP, which holds no δ; price the "
                                       "query in epsilon with an (ε, δ) budget, or give public keys.")
        if accountant is not None and accountant.budget.delta == 0:
            raise ParameterError(f"private partition selection spends δ = {delta:g}, and the budget of "
                                 f"{accountant.dataset_id!r} has δ = 0; give the budget a δ, or give public keys.")
        return delta

    def _notes(self) -> list[str]:
        """The notes of an answer's record: how keys and rows were treated."""
        if self.keys is None:
            keys = ["the keys were released by private partition selection: only those whose noisy count reached "
                    "the threshold, sorted; rows with a missing grouping value take no key"]
        elif self.keys.other:
            keys = ["every public key is answered, an empty group like any other",
                    "the rows whose key is not public are answered in the last key, the other bucket"]
        else:
            keys = ["every public key is answered, an empty group like any other",
                    "rows whose key is not public are dropped (group_by(..., other=True) answers them)"]
        return keys + ["rows without a person ID are dropped" if self.query.unit.is_person else "each row is a unit"]

    def _answer(self, plan, noisy, amount, zcdp, alpha, src, contribution) -> GroupedAnswer:
        """Each aggregate post-processes its noisy measurements into its output columns and its
        record entry (:meth:`veil.dp.aggregate_protocol.Aggregate.post_process`)."""
        values, low, high, record_aggs, shared_notes = {}, {}, {}, [], []
        drawn = [row for row in plan if not isinstance(row[1], Borrowed)]
        cells = {m.label: Noisy(np.asarray(v), mech, m_eps, half) for (_, m, m_eps, mech, half), v in zip(drawn, noisy)}
        for _, m, m_eps, mech, half in plan:  # a count's released cells, at the borrower's α share
            if isinstance(m, Borrowed):
                cells[m.label] = Noisy(cells[m.source].values, mech, m_eps, half)
        for agg in self.aggregates:
            rows = [row for row in plan if row[0] is agg]
            out = agg.post_process(tuple(cells[m.label] for _, m, *_ in rows), alpha)
            for column, (v, lo, hi) in out.columns.items():
                values[column], low[column], high[column] = v, lo, hi
            entry = {**agg.describe(), "interval": out.interval, "measurements": []}
            for _, m, *_ in rows:
                if isinstance(m, Borrowed):
                    entry["denominator"] = m.source
                    shared_notes.append(f"{agg.name} divides by the noisy cells of {m.source}: its column cannot be "
                                        f"missing by its type, so its count of values is the count of rows; its "
                                        f"interval takes {m.source}'s half-width at alpha x {m.alpha_share:.4g}, and "
                                        "its share of the budget goes to its other measurements")
                    continue
                cell = cells[m.label]
                mech = cell.mechanism
                entry["measurements"].append({"label": m.label, ("rho" if zcdp else "epsilon"): float(cell.cost),
                                              "mechanism": mech.name, "sensitivity": mech.sensitivity,
                                              "norm": "L2" if zcdp else "L1", "scale": mech.scale,
                                              "half_width": float(cell.half)})
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
                  "notes": self._notes() + shared_notes}
        session = self.query.table.sparkSession if self.query.kind == "spark" else None
        return GroupedAnswer(self.keys, values, low, high, alpha, record, self.query.kind, session)
