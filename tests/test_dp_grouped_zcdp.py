"""Grouped queries priced in ρ-zCDP (issue 27, items 2 and 3): ``evaluate(rho=...)`` draws the
discrete Gaussian for counts and the Gaussian for sums and means, each σ calibrated to its exact
share of ρ and to the L2 sensitivity the unit's bounds allow; the shares add up to the ρ charged
to a budget in ρ, exactly; a query and a budget in different measures are refused before anything
is drawn or charged; the intervals come from the Gaussian and cover."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.conformance.glue import recording
from veil.dp import (Accountant, Budget, BudgetExceededError, BudgetUnit, MeasureMismatchError, PrivacyUnit, Query,
                     ZCDPAccountant, ZCDPBudget)
from veil.dp.aggregates import count, mean, sum
from veil.dp.grouped_query import pure_laplace, zcdp_gaussian
from veil.errors import ParameterError
from veil.ledger import Ledger

from helpers import one_sentence_error

VISITS = pd.DataFrame({"pid": [1, 1, 1, 2, 2, 3, 4, 4, 5, 6],
                       "region": ["n", "n", "s", "s", "s", "n", "e", "e", "w", "n"],
                       "spend": [10.0, 20.0, 5.0, 300.0, -7.0, 40.0, 12.0, 13.0, 8.0, 9.0]})
PERSON = PrivacyUnit.person("pid", max_groups=2, max_rows_per_group=2)


def query(unit=PERSON):
    return (Query(VISITS, unit=unit).group_by("region", keys=["n", "s", "z"])
            .agg(count(), sum("spend", 0, 100), mean("spend", 0, 100)))


def zcdp_accountant(unit=PERSON, rho=1.0):
    return ZCDPAccountant(ZCDPBudget(rho, 1e-6), dataset_id="visits").declare_unit(unit)


def test_rho_is_split_exactly_and_charged_whole_with_gaussian_noise():
    acc = zcdp_accountant()
    answer = query().evaluate(rho=0.3, accountant=acc, rng=3, weights=[1, 1, 2])
    assert [c.epsilon for c in acc.charges] == [Fraction(3, 10)] and acc.spent_rho == Fraction(3, 10)
    record = answer.record
    assert record["measure"] == "rho-zCDP" and record["rho"] == 0.3
    assert record["epsilon"] is None and record["delta"] is None  # not 0, which would read as free
    ms = {m["label"]: m for a in record["aggregates"] for m in a["measurements"]}
    assert {label: m["mechanism"] for label, m in ms.items()} == {
        "count": "discrete-gaussian", "sum(spend)": "gaussian (zCDP)",
        "mean(spend).sum": "gaussian (zCDP)", "mean(spend).count": "discrete-gaussian"}
    assert all(m["norm"] == "L2" and "epsilon" not in m for m in ms.values())
    # the exact parts: 3/10 · (1/4, 1/4, 1/2·1/2, 1/2·1/2) add up to the ρ charged, and each σ is the
    # smallest float with Δ²/(2σ²) <= its part, exactly
    parts = {"count": Fraction(3, 40), "sum(spend)": Fraction(3, 40), "mean(spend).sum": Fraction(3, 40),
             "mean(spend).count": Fraction(3, 40)}
    l2 = query().sensitivities("L2")  # person: 2 groups of 2 rows, Δ² = 8 rows²
    assert l2["count"] == pytest.approx(8 ** 0.5) and l2["sum(spend)"] == pytest.approx(100 * 8 ** 0.5)
    for label, m in ms.items():
        sigma, delta = Fraction(m["scale"]), Fraction(m["sensitivity"])
        assert m["sensitivity"] == l2[label]
        assert delta ** 2 / (2 * sigma ** 2) <= parts[label]
        smaller = Fraction(np.nextafter(m["scale"], 0.0))
        assert delta ** 2 / (2 * smaller ** 2) > parts[label]
        assert m["rho"] == float(parts[label])
    assert answer.table()["count"].dtype == np.int64  # the discrete Gaussian keeps counts whole


def test_a_mean_in_rho_splits_exactly_even_when_the_float_split_would_not():
    """ρ = 0.1 in three shares: a float split (0.1/3 each, rounded) could draw noise costing a hair
    more than charged; the exact parts add up to 1/10."""
    acc = zcdp_accountant(rho=0.5)
    answer = query().evaluate(rho=0.1, accountant=acc, rng=1)
    ms = [m for a in answer.record["aggregates"] for m in a["measurements"]]
    spent = Fraction(0)
    for m in ms:
        sigma, delta = Fraction(m["scale"]), Fraction(m["sensitivity"])
        spent += delta ** 2 / (2 * sigma ** 2)  # what each draw costs, exactly
    assert spent <= Fraction(1, 10) == acc.spent_rho


def brute_l2_squared(unit: PrivacyUnit, k: int) -> int:
    """The largest Σ c_g² over every way one person may spread rows over k cells within the bounds."""
    cap = unit.max_rows_per_group or unit.max_rows
    best = 0
    for c in itertools.product(range(cap + 1), repeat=k):
        if unit.max_rows is not None and sum_of(c) > unit.max_rows:
            continue
        if unit.max_groups is not None and len([x for x in c if x]) > unit.max_groups:
            continue
        best = max(best, sum_of(x * x for x in c))
    return best


def sum_of(values):
    total = 0
    for v in values:
        total += v
    return total


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 4), rows=st.one_of(st.none(), st.integers(1, 6)),
       groups=st.one_of(st.none(), st.integers(1, 4)), per=st.one_of(st.none(), st.integers(1, 3)))
def test_the_l2_sensitivity_is_the_largest_a_person_reaches_within_the_bounds(k, rows, groups, per):
    if rows is None and (groups is None or per is None):
        rows = 3
    unit = PrivacyUnit.person("pid", max_rows=rows, max_groups=groups, max_rows_per_group=per)
    assert unit.cell_contribution_l2_squared(k) == brute_l2_squared(unit, k)
    assert PrivacyUnit.rows().cell_contribution_l2_squared(k) == 1


def test_the_l2_sensitivity_of_a_sum_is_rounded_up():
    q = Query(VISITS, unit=PrivacyUnit.person("pid", max_groups=2, max_rows_per_group=1)).group_by(
        "region", keys=["n", "s"]).agg(sum("spend", 0, 0.1))
    value = q.sensitivities("L2")["sum(spend)"]
    assert Fraction(value) ** 2 >= Fraction(0.1) ** 2 * 2 and value == pytest.approx(0.1 * 2 ** 0.5)


@pytest.mark.parametrize("call, error, words", [
    (lambda rng: query().evaluate(rho=0.3, accountant=Accountant(Budget(1.0), dataset_id="v").declare_unit(PERSON),
                                  rng=rng), MeasureMismatchError, "kept in (ε, δ)"),
    (lambda rng: query().evaluate(0.3, accountant=zcdp_accountant(), rng=rng), MeasureMismatchError, "kept in ρ-zCDP"),
    (lambda rng: query().evaluate(0.3, rho=0.3, rng=rng), ParameterError, "one of them"),
    (lambda rng: query().evaluate(rng=rng), ParameterError, "one of them"),
    (lambda rng: query().evaluate(0.3, mechanism=zcdp_gaussian, rng=rng), ParameterError, "priced in rho"),
    (lambda rng: query().evaluate(rho=0.3, mechanism=pure_laplace, rng=rng), ParameterError, "priced in epsilon"),
    (lambda rng: query().evaluate(rho=-1, rng=rng), ParameterError, "rho"),
])
def test_a_query_and_a_budget_in_different_measures_are_refused_before_anything_is_drawn(call, error, words):
    rng = np.random.default_rng(2)
    before = rng.bit_generator.state
    with recording() as seen:
        one_sentence_error(error, lambda: call(rng), words)
    assert seen.draws == [] and rng.bit_generator.state == before


def test_a_refused_budget_in_rho_charges_nothing_and_draws_no_noise():
    acc = zcdp_accountant(rho=0.2)
    with recording() as seen, pytest.raises(BudgetExceededError, match="only ρ"):
        query().evaluate(rho=0.3, accountant=acc, rng=1)
    assert seen.draws == [] and acc.charges == ()


def test_the_gaussian_intervals_cover_at_their_level():
    """At the row unit each count's interval holds the true count in at least 1 − α of seeded runs
    (α = 0.2, 300 runs, 3 cells: a binomial lower tail far below the level)."""
    q = Query(VISITS).group_by("region", keys=["n", "s", "z"]).agg(count(), sum("spend", 0, 100))
    truth_count = np.array([4, 3, 0])
    truth_sum = np.array([79.0, 105.0, 0.0])
    hits, total = 0, 0
    for seed in range(300):
        frame = q.evaluate(rho=0.05, rng=seed, alpha=0.2).to_pandas()
        hits += int(((frame["count_low"] <= truth_count) & (truth_count <= frame["count_high"])).sum())
        hits += int(((frame["sum(spend)_low"] <= truth_sum) & (truth_sum <= frame["sum(spend)_high"])).sum())
        total += 6
    assert hits / total >= 0.8 - 0.03


def test_a_ledger_population_in_rho_at_the_person_unit_is_charged_by_a_grouped_query(tmp_path):
    ledger, _ = Ledger.init(tmp_path / "ledger.db", by="ana")
    try:
        ledger.add_population("visits", budget=ZCDPBudget(0.5, 1e-6), unit=BudgetUnit.person("pid"))
        with ledger.open_budget("visits") as acc:
            query().evaluate(rho=0.2, accountant=acc, rng=1)
        kept = ledger.budget("visits")
        assert kept.spent_rho == Fraction(1, 5) and [c.label for c in kept.charges] == [
            "grouped query count, sum(spend), mean(spend) by region"]
        assert ledger.verify().ok
    finally:
        ledger.close()
