"""Private partition selection (veil.dp.partition_selection): the threshold keeps the release
probability of a key held by one person within δ (computed exactly, and by simulation), only the
keys that pass are released, nothing about the others leaks, and the budget is charged (ε, δ)."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.conformance.glue import recording
from veil.dp import BudgetUnit, PrivacyUnit, Query
from veil.dp.accountant import Accountant
from veil.dp.aggregates import count, mean, sum
from veil.dp.budget import Budget, BudgetExceededError
from veil.dp.discrete_gaussian import DiscreteGaussian
from veil.dp.measures import MeasureMismatchError
from veil.dp.mechanisms import Geometric
from veil.dp.noise import NoiseSource
from veil.dp.partition_selection import (PartitionSelection, key_bounds, least_threshold, per_key_probability,
                                         plan_selection, upper_tail)
from veil.dp.zcdp_accountant import ZCDPAccountant, ZCDPBudget
from veil.errors import ParameterError


def _laplace_tail(scale: float, t: int) -> float:
    """P(Z >= t) for the discrete Laplace, summed from its mass function (independent of the module)."""
    a = math.exp(-1 / scale)
    z = np.arange(t, t + int(200 * scale) + 200)
    return float(np.sum((1 - a) / (1 + a) * a ** np.abs(z)))


def _gaussian_tail(sigma: float, t: int) -> float:
    z = np.arange(-int(60 * sigma) - 60, int(60 * sigma) + 61)
    w = np.exp(-z.astype(float) ** 2 / (2 * sigma**2))
    return float(w[z >= t].sum() / w.sum())


UNITS = [PrivacyUnit.rows(), PrivacyUnit.person("pid", max_rows=3),
         PrivacyUnit.person("pid", max_groups=2, max_rows_per_group=4),
         PrivacyUnit.person("pid", max_rows=5, max_groups=3, max_rows_per_group=2)]


def test_the_bounds_of_a_key_one_person_holds():
    assert [key_bounds(u) for u in UNITS] == [(1, 1), (3, 3), (2, 4), (3, 2)]


@settings(max_examples=80, deadline=None)
@given(eps=st.floats(0.05, 5), unit=st.sampled_from(UNITS), delta=st.sampled_from([1e-3, 1e-6, 1e-9, 0.05]))
def test_the_laplace_threshold_is_the_least_that_keeps_delta(eps, unit, delta):
    sens = unit.cell_contribution(2**62)
    plan = plan_selection(PartitionSelection(delta), unit, False, eps, sens)
    l0, linf = key_bounds(unit)
    scale = sens / eps
    exact = _laplace_tail(scale, plan.threshold - linf)  # a key of one person: at most linf rows
    assert exact <= per_key_probability(delta, l0) * (1 + 1e-6)
    assert 1 - (1 - exact) ** l0 <= delta * (1 + 1e-6)  # the chance any of the person's keys is released
    assert plan.release_probability == pytest.approx(exact, rel=1e-6)
    if plan.threshold - linf > 1:  # one less would not keep δ
        assert _laplace_tail(scale, plan.threshold - linf - 1) > per_key_probability(delta, l0)
    # the closed form of the module notes
    a = math.exp(-1 / scale)
    assert plan.threshold == linf + max(1, math.ceil(scale * math.log(1 / (per_key_probability(delta, l0) * (1 + a)))))


@settings(max_examples=40, deadline=None)
@given(rho=st.floats(0.01, 3), unit=st.sampled_from(UNITS), delta=st.sampled_from([1e-3, 1e-6, 1e-9]))
def test_the_gaussian_threshold_is_the_least_that_keeps_delta(rho, unit, delta):
    from veil.dp.grouped_query import _l2

    sens = _l2(Fraction(unit.cell_contribution_l2_squared(2**62)))
    plan = plan_selection(PartitionSelection(delta), unit, True, Fraction(rho), sens)
    l0, linf = key_bounds(unit)
    sigma = plan.mechanism.sigma
    exact = _gaussian_tail(sigma, plan.threshold - linf)
    assert exact <= per_key_probability(delta, l0) * (1 + 1e-6)
    if plan.threshold - linf > 1:
        assert _gaussian_tail(sigma, plan.threshold - linf - 1) > per_key_probability(delta, l0) * (1 - 1e-6)


def test_the_gaussian_tail_of_a_wide_noise_is_bounded_by_the_normal():
    mech = DiscreteGaussian(Fraction(1, 10**12), 1.0)  # σ ≈ 7·10^5, beyond the summed pmf
    t = least_threshold(mech, 1, 1e-6) - 1
    assert upper_tail(mech, t) <= 1e-6 and t > 4 * mech.sigma


def test_a_singleton_key_is_released_as_often_as_computed_by_simulation():
    """δ large enough to see: the release frequency of a key of one person (linf rows) over many
    draws matches the exact probability, and stays within δ."""
    unit = PrivacyUnit.person("pid", max_groups=1, max_rows_per_group=2)
    plan = plan_selection(PartitionSelection(0.2), unit, False, 1.0, unit.cell_contribution(2**62))
    n = 200_000
    noisy = plan.mechanism.release(np.full(n, 2), noise=NoiseSource.seeded(7)).value
    freq = plan.select(noisy).mean()
    sd = math.sqrt(plan.release_probability * (1 - plan.release_probability) / n)
    assert abs(freq - plan.release_probability) < 5 * sd
    assert plan.release_probability <= 0.2


def test_the_whole_query_releases_a_persons_own_keys_with_probability_at_most_delta():
    """End to end: one person holds two keys nobody else has; across 400 seeded evaluations the
    share of runs where either is released is close to 1 − (1 − p)^2 and within δ."""
    crowd = pd.DataFrame({"pid": np.arange(300), "k": ["big"] * 300})
    loner = pd.DataFrame({"pid": [999] * 4, "k": ["mine1", "mine1", "mine2", "mine2"]})
    table = pd.concat([crowd, loner], ignore_index=True)
    unit = PrivacyUnit.person("pid", max_groups=2, max_rows_per_group=2)
    q = Query(table, unit=unit).group_by("k", private=PartitionSelection(0.3)).agg(count())
    runs = 400
    leaked = 0
    for seed in range(runs):
        keys = q.evaluate(1.0, rng=seed).to_pandas()["k"].tolist()
        assert "big" in keys
        leaked += bool({"mine1", "mine2"} & set(keys))
    plan = plan_selection(PartitionSelection(0.3), unit, False, 0.5, 4.0)
    expected = 1 - (1 - plan.release_probability) ** 2
    assert expected <= 0.3
    assert abs(leaked / runs - expected) < 5 * math.sqrt(expected * (1 - expected) / runs) + 1e-9


def _people(extra=()):
    rows = [(p, k, float(p % 7)) for p in range(120) for k in ("a", "b")] + [(500 + i, k, 1.0) for i, k in
                                                                          enumerate(extra)]
    return pd.DataFrame(rows, columns=["pid", "k", "x"])


def test_only_the_keys_that_pass_are_released_sorted_with_their_aggregates():
    table = _people(("zz",))
    answer = (Query(table, unit=PrivacyUnit.person("pid", max_rows=2)).group_by("k", private=PartitionSelection(1e-6))
              .agg(count(), mean("x", 0, 10)).evaluate(5.0, rng=2))
    frame = answer.to_pandas()
    assert frame["k"].tolist() == ["a", "b"]  # "zz" (one person) stays out
    assert frame["count"].between(100, 140).all() and frame["mean(x)"].between(1, 5).all()
    assert answer.record["num_keys"] == 2 and answer.record["delta"] == 1e-6
    assert answer.record["measure"] == "approximate (epsilon, delta)-DP"
    assert answer.record["partition_selection"]["threshold"] >= 3


def test_the_record_says_nothing_about_the_keys_not_released():
    """Two tables with the same released keys and different candidates below the threshold give
    the same record (no count of candidates, no key, no message)."""
    q = lambda t: (Query(t, unit=PrivacyUnit.person("pid", max_rows=2)).group_by("k", private=PartitionSelection(1e-6))
                   .agg(count(), sum("x", 0, 10)).evaluate(2.0, rng=3))
    one, other = q(_people()), q(_people(("zz", "yy", "xx")))
    assert one.to_pandas()["k"].tolist() == other.to_pandas()["k"].tolist() == ["a", "b"]
    assert json.dumps(one.record, sort_keys=True) == json.dumps(other.record, sort_keys=True)
    assert "zz" not in json.dumps(other.record)


def test_no_key_passing_gives_an_empty_answer_not_an_error():
    table = pd.DataFrame({"pid": [1, 2], "k": ["a", "b"], "x": [1.0, 2.0]})
    answer = (Query(table, unit=PrivacyUnit.person("pid", max_rows=1)).group_by("k", private=PartitionSelection(1e-9))
              .agg(count(), mean("x", 0, 10)).evaluate(0.5, rng=1))
    frame = answer.to_pandas()
    assert len(frame) == 0 and list(frame.columns)[:2] == ["k", "count"]
    empty = (Query(table.iloc[:0], unit=PrivacyUnit.person("pid", max_rows=1))
             .group_by("k", private=PartitionSelection(1e-9)).agg(count()).evaluate(0.5, rng=1))
    assert len(empty.to_pandas()) == 0


def test_the_sensitivities_do_not_depend_on_the_candidates():
    unit = PrivacyUnit.person("pid", max_rows=3)
    few = Query(_people(), unit=unit).group_by("k", private=PartitionSelection(1e-6)).agg(count())
    many = Query(_people(tuple(f"k{i}" for i in range(50))), unit=unit).group_by(
        "k", private=PartitionSelection(1e-6)).agg(count())
    assert few.sensitivities() == many.sensitivities() == {"count": 3.0}
    assert few.sensitivities("L2") == {"count": 3.0}


def test_the_accountant_is_charged_epsilon_and_delta_once():
    acc = Accountant(Budget(2.0, 1e-5), dataset_id="d").declare_unit(BudgetUnit.person("pid"))
    q = Query(_people(), unit=PrivacyUnit.person("pid", max_rows=2)).group_by("k", private=PartitionSelection(1e-6))
    q.agg(count()).evaluate(1.0, accountant=acc, rng=1)
    spent = acc.spent()
    assert (spent.epsilon, spent.delta) == (Fraction(1), Fraction(1, 10**6))
    assert len(acc.charges) == 1


def test_the_shares_give_the_selection_its_weight():
    q = Query(_people(), unit=PrivacyUnit.person("pid", max_rows=2))
    equal = q.group_by("k", private=PartitionSelection(1e-6)).agg(count(), sum("x", 0, 10)).evaluate(3.0, rng=1)
    assert equal.record["partition_selection"]["epsilon"] == pytest.approx(1.0)
    heavy = q.group_by("k", private=PartitionSelection(1e-6, weight=2)).agg(count()).evaluate(
        3.0, rng=1, weights=[1])
    assert heavy.record["partition_selection"]["epsilon"] == pytest.approx(2.0)
    assert heavy.record["aggregates"][0]["measurements"][0]["epsilon"] == pytest.approx(1.0)


def test_a_zcdp_query_with_private_keys_states_rho_and_delta():
    unit = PrivacyUnit.person("pid", max_rows=2)
    answer = (Query(_people(), unit=unit).group_by("k", private=PartitionSelection(1e-6))
              .agg(count(), mean("x", 0, 10)).evaluate(rho=1.0, rng=1))
    assert answer.record["rho"] == 1.0 and answer.record["delta"] == 1e-6 and answer.record["epsilon"] is None
    assert answer.record["measure"] == "delta-approximate rho-zCDP"
    sel = answer.record["partition_selection"]
    assert sel["mechanism"] == "discrete-gaussian" and sel["norm"] == "L2"
    assert answer.to_pandas()["k"].tolist() == ["a", "b"]


def test_a_given_threshold_is_used_or_refused_when_too_low():
    q = Query(_people(("zz",)), unit=PrivacyUnit.person("pid", max_rows=2))
    least = plan_selection(PartitionSelection(1e-6), q.unit, False, 1.0, 2.0).least
    high = q.group_by("k", private=PartitionSelection(1e-6, threshold=least + 100)).agg(count()).evaluate(2.0, rng=1)
    assert high.record["partition_selection"]["threshold"] == least + 100
    with pytest.raises(ParameterError, match=f"below {least}"):
        q.group_by("k", private=PartitionSelection(1e-6, threshold=least - 1)).agg(count()).evaluate(2.0, rng=1)


@pytest.mark.parametrize("build, error, message", [
    (lambda: PartitionSelection(0), ParameterError, "between 0 and 1"),
    (lambda: PartitionSelection(1), ParameterError, "between 0 and 1"),
    (lambda: PartitionSelection("x"), ParameterError, "must be a number"),
    (lambda: PartitionSelection(1e-6, threshold=2.5), ParameterError, "whole number"),
    (lambda: PartitionSelection(1e-6, threshold=True), ParameterError, "whole number"),
    (lambda: PartitionSelection(1e-6, weight=0), ParameterError, "positive"),
    (lambda: PartitionSelection(1e-6, weight=float("inf")), ParameterError, "positive"),
    (lambda: Query(_people()).group_by("k", private=0.5), ParameterError, "PartitionSelection"),
    (lambda: Query(_people()).group_by("k", private=PartitionSelection(1e-6), other=True), ParameterError,
     "drop other"),
    (lambda: Query(_people()).group_by("k", private=PartitionSelection(1e-6)).agg(count()).evaluate(
        1.0, accountant=Accountant(Budget(5.0), dataset_id="d"), rng=1), ParameterError, "has δ = 0"),
    (lambda: Query(_people()).group_by("k", private=PartitionSelection(1e-6)).agg(count()).evaluate(
        rho=0.1, accountant=ZCDPAccountant(ZCDPBudget(1.0, 1e-6), dataset_id="d"), rng=1), MeasureMismatchError,
     "holds no δ"),
    (lambda: Query(_people()).group_by("k", private=PartitionSelection(1e-3)).agg(count()).evaluate(
        1.0, accountant=Accountant(Budget(5.0, 1e-4), dataset_id="d"), rng=1), BudgetExceededError, "δ"),
])
def test_bad_input_is_refused_in_one_sentence_before_anything_is_drawn(build, error, message):
    with recording() as seen:
        with pytest.raises(error, match=message) as info:
            build()
    assert seen.draws == []
    text = str(info.value)
    assert text.endswith(".") and "\n" not in text


def test_a_refused_charge_leaves_the_budget_as_it_was():
    acc = Accountant(Budget(5.0, 1e-4), dataset_id="d")
    with pytest.raises(BudgetExceededError):
        Query(_people()).group_by("k", private=PartitionSelection(1e-3)).agg(count()).evaluate(1.0, accountant=acc,
                                                                                               rng=1)
    assert acc.spent().epsilon == 0 and acc.charges == ()


def test_the_selection_draws_discrete_laplace_whatever_the_aggregates_mechanism():
    with recording() as seen:
        Query(_people()).group_by("k", private=PartitionSelection(1e-6)).agg(sum("x", 0, 10)).evaluate(1.0, rng=1)
    assert [d.sampler for d in seen.draws] == ["NoiseSource.discrete_laplace", "NoiseSource.laplace"]
    assert isinstance(plan_selection(PartitionSelection(1e-6), PrivacyUnit.rows(), False, 1.0, 1.0).mechanism,
                      Geometric)
