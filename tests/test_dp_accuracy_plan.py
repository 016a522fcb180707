"""Accuracy planning (issue 27, item 4): the smallest budget whose reported half-width meets the
target, planned from the mechanisms' own error bounds, reading and spending nothing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.conformance.glue import recording
from veil.dp import Accountant, Budget, PrivacyUnit, Query
from veil.dp.aggregates import count, mean, quantiles, sum, variance
from veil.errors import ParameterError

TABLE = pd.DataFrame({"pid": [1, 1, 2, 3, 4], "g": ["a", "a", "b", "b", "a"], "x": [1.0, 5.0, 3.0, 9.0, 2.0]})
UNIT = PrivacyUnit.person("pid", max_groups=1, max_rows_per_group=2)


def _query(*aggs):
    return Query(TABLE, unit=UNIT).group_by("g", keys=["a", "b", "c"]).agg(*aggs)


@settings(max_examples=15, deadline=None)
@given(st.floats(0.5, 500), st.floats(5, 5000), st.sampled_from(["epsilon", "rho"]), st.floats(0.01, 0.3))
def test_evaluating_with_the_planned_budget_meets_every_count_and_sum_target(t_count, t_sum, measure, alpha):
    q = _query(count(), sum("x", -10, 100))
    plan = q.plan({"count": t_count, "sum(x)": t_sum}, alpha=alpha, measure=measure)
    answer = q.evaluate(**plan.evaluate_arguments(), rng=1)
    halves = {e["name"]: e["measurements"][0]["half_width"] for e in answer.record["aggregates"]}
    assert halves["count"] <= t_count and halves["sum(x)"] <= t_sum  # the reported half-widths, exactly
    frame = answer.to_pandas()  # and the cells' intervals (v ± h in floats: to a rounding)
    assert ((frame["count_high"] - frame["count_low"]) / 2 <= t_count).all()
    assert ((frame["sum(x)_high"] - frame["sum(x)_low"]) / 2 <= t_sum * (1 + 1e-12)).all()
    assert all(e["exact"] for e in plan.aggregates)
    # the smallest: a budget a little lower misses one of the targets
    lower = q.evaluate(**{**plan.evaluate_arguments(), measure: plan.total * 0.999}, rng=1).to_pandas()
    assert (((lower["count_high"] - lower["count_low"]) / 2 > t_count).any()
            or ((lower["sum(x)_high"] - lower["sum(x)_low"]) / 2 > t_sum).any())


def test_planning_reads_no_data_and_spends_nothing(monkeypatch):
    q = _query(count(), mean("x", 0, 10), variance("x", 0, 10), quantiles("x", [0.5], 0, 10, bins=8))
    acc = Accountant(Budget(1.0), dataset_id="t").declare_unit(UNIT)

    def no_data(*args, **kwargs):
        raise AssertionError("the plan read the table")

    monkeypatch.setattr("veil.dp.grouped_query.GroupedQuery._true_cells", no_data)
    with recording() as seen:
        plan = q.plan(3.0, group_size=100)
    assert seen.draws == [] and acc.charges == ()
    assert [e["exact"] for e in plan.aggregates] == [True, False, False, False]
    assert all("approximate" in e["note"] for e in plan.aggregates[1:])
    assert plan.group_size == 100 and len(plan.weights) == 4


def test_the_weights_given_are_kept_and_the_total_meets_every_target():
    q = _query(count(), sum("x", 0, 10))
    plan = q.plan(5.0, weights=[1, 3])
    assert plan.weights == (1.0, 3.0)
    frame = q.evaluate(**plan.evaluate_arguments(), rng=2).to_pandas()
    assert ((frame["count_high"] - frame["count_low"]) / 2 <= 5.0).all()
    assert ((frame["sum(x)_high"] - frame["sum(x)_low"]) / 2 <= 5.0).all()


@pytest.mark.parametrize("kwargs", [dict(target=0), dict(target={"count": 1}), dict(target=1, measure="delta"),
                                    dict(target=1, alpha=2), dict(target="x")])
def test_bad_plans_are_refused(kwargs):
    with pytest.raises(ParameterError):
        _query(count(), sum("x", 0, 1)).plan(**kwargs)


def test_a_mean_plan_needs_a_group_size():
    with pytest.raises(ParameterError, match="group_size"):
        _query(mean("x", 0, 1)).plan(0.1)


def test_a_plan_with_private_keys_leaves_the_selection_its_share_and_meets_the_targets():
    from veil.dp import PartitionSelection, PrivacyUnit, Query
    from veil.dp.aggregates import count as count_, sum as sum_

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"pid": rng.integers(0, 300, 2000), "g": rng.choice(list("abc"), 2000),
                          "x": rng.normal(40, 10, 2000)})
    q = (Query(frame, unit=PrivacyUnit.person("pid", max_rows=3)).group_by("g", private=PartitionSelection(1e-6))
         .agg(count_(), sum_("x", 0, 100)))
    p = q.plan({"count": 10, "sum(x)": 500})
    answer = q.evaluate(**p.evaluate_arguments(), rng=1)
    out = answer.to_pandas()
    assert len(out) == 3
    assert (out["count_high"] - out["count"]).max() <= 10 and (out["sum(x)_high"] - out["sum(x)"]).max() <= 500
    # the selection gets what an average aggregate gets (its weight 1), not a fixed ε
    selection = answer.record["partition_selection"]["epsilon"]
    assert selection == pytest.approx(np.sum([a["epsilon"] for a in p.aggregates]) / 2, rel=1e-6)
