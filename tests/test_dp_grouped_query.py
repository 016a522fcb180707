"""Grouped DP queries with public keys (issue 27, item 2): every public key answered (an empty
group too), rows outside the keys dropped, pandas/polars/Arrow in and out, nothing spent until
evaluate, ε split and stated, intervals that cover, and bad input refused in one sentence."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.conformance.glue import recording
from veil.dp import Accountant, Budget, BudgetExceededError, PrivacyUnit, Query
from veil.dp.aggregates import count, mean, sum
from veil.dp.exact import exact_epsilon
from veil.errors import ColumnError, ParameterError, VeilError

VISITS = pd.DataFrame({"pid": [1, 1, 1, 2, 2, 3, 4, 4, 5, 6],
                       "region": ["n", "n", "s", "s", "s", "n", "e", "e", "w", "n"],
                       "band": ["a", "b", "a", "a", "b", "b", "a", "a", "b", "a"],
                       "spend": [10.0, 20.0, 5.0, 300.0, -7.0, 40.0, 12.0, 13.0, 8.0, 9.0],
                       "note": ["x"] * 10})
PERSON = PrivacyUnit.person("pid", max_groups=2, max_rows_per_group=2)


def _query(table=VISITS, unit=PERSON):
    return (Query(table, unit=unit).group_by(["region", "band"], domains={"region": ["n", "s", "z"], "band": ["a", "b"]})
            .agg(count(), sum("spend", 0, 100), mean("spend", 0, 100)))


def test_every_public_key_is_answered_in_order_and_other_keys_are_dropped():
    answer = _query().evaluate(1.0, rng=1)
    frame = answer.table()
    assert list(zip(frame["region"], frame["band"])) == [("n", "a"), ("n", "b"), ("s", "a"), ("s", "b"),
                                                         ("z", "a"), ("z", "b")]
    assert set(frame.columns) >= {"count", "count_low", "count_high", "sum(spend)", "mean(spend)_high"}
    assert frame["count"].dtype == np.int64
    # the empty groups (z, *) are answered; e and w are not public and appear nowhere
    assert not frame["region"].isin(["e", "w"]).any()
    assert answer.record["num_keys"] == 6 and "other=True" in " ".join(answer.record["notes"])


def test_the_true_cells_come_out_with_negligible_noise():
    """With a huge ε the noise vanishes and the cells are the bounded, clamped truths."""
    frame = (Query(VISITS).group_by("region", keys=["n", "s", "z"]).agg(count(), sum("spend", 0, 100))
             .evaluate(1e9, rng=1).table())
    assert frame["count"].tolist() == [4, 3, 0]
    np.testing.assert_allclose(frame["sum(spend)"], [79.0, 105.0, 0.0], atol=1e-5)


@pytest.mark.parametrize("kind, convert, out_type", [
    ("pandas", lambda t: t, pd.DataFrame),
    ("polars", pl.from_pandas, pl.DataFrame),
    ("arrow", lambda t: pa.Table.from_pandas(t, preserve_index=False), pa.Table),
])
def test_a_table_of_each_kind_gives_an_answer_of_that_kind(kind, convert, out_type):
    a = _query(convert(VISITS)).evaluate(1.0, rng=4)
    b = _query(VISITS).evaluate(1.0, rng=4)
    out = a.table()
    assert isinstance(out, out_type) and a.kind == kind
    pd.testing.assert_frame_equal(a.to_pandas(), b.to_pandas())  # the same seed, the same answer
    assert isinstance(a.table("arrow"), pa.Table) and isinstance(a.table("polars"), pl.DataFrame)


def test_building_spends_nothing_and_evaluate_charges_once_before_drawing():
    # a person-level query is charged to a budget kept at its unit (tests/test_dp_budget_unit.py)
    acc = Accountant(Budget(1.0), dataset_id="visits").declare_unit(PERSON)
    with recording() as seen:
        q = _query()
    assert acc.charges == () and seen.draws == []
    answer = q.evaluate(0.6, accountant=acc, rng=2)
    assert [c.epsilon for c in acc.charges] == [Fraction(6, 10)]
    assert answer.record["epsilon"] == 0.6
    with recording() as seen:
        with pytest.raises(BudgetExceededError):
            q.evaluate(0.6, accountant=acc, rng=2)
    assert seen.draws == [] and len(acc.charges) == 1


def test_the_split_is_stated_and_never_adds_up_to_more_than_epsilon():
    answer = _query().evaluate(0.3, rng=1, weights=[1, 1, 2])
    shares = [m["epsilon"] for a in answer.record["aggregates"] for m in a["measurements"]]
    assert sum_exact(shares) <= Fraction(3, 10)
    assert shares[0] == pytest.approx(0.075) and shares[2] == pytest.approx(0.075) and shares[3] == pytest.approx(0.075)
    for a in answer.record["aggregates"]:
        for m in a["measurements"]:
            assert m["scale"] == pytest.approx(m["sensitivity"] / m["epsilon"])


def sum_exact(values):
    total = Fraction(0)
    for v in values:
        total += Fraction(v)
    return total


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(eps=st.floats(1e-3, 10), n=st.integers(1, 7))
def test_shares_of_any_epsilon_add_up_to_at_most_epsilon(eps, n):
    frame = pd.DataFrame({"g": [0], "x": [1.0]})
    aggs = [sum("x", 0, 1, name=f"s{i}") for i in range(n)]
    answer = Query(frame).group_by("g", keys=[0]).agg(*aggs).evaluate(eps, rng=0)
    charged = exact_epsilon(eps)  # what an accountant is charged
    assert sum_exact(m["epsilon"] for a in answer.record["aggregates"] for m in a["measurements"]) <= charged


def test_the_intervals_cover_the_true_cells_at_their_level():
    """Over 400 seeded runs, each count and sum interval misses its true cell at most about alpha of the time."""
    q = Query(VISITS).group_by("region", keys=["n", "s", "z"]).agg(count(), sum("spend", 0, 100), mean("spend", 0, 100))
    truth = {"count": np.array([4, 3, 0]), "sum(spend)": np.array([79.0, 105.0, 0.0])}
    misses = {name: 0 for name in truth}
    mean_misses = 0
    for seed in range(400):
        a = q.evaluate(1.0, rng=seed, alpha=0.1)
        for name, cells in truth.items():
            misses[name] += int(((cells < a.low[name]) | (cells > a.high[name])).sum())
        mean_misses += int(((np.array([79 / 4, 35.0]) < a.low["mean(spend)"][:2])
                            | (np.array([79 / 4, 35.0]) > a.high["mean(spend)"][:2])).sum())
    for name in truth:
        assert misses[name] / 1200 <= 0.13, name
    assert mean_misses / 800 <= 0.13


def test_a_person_release_with_a_seed_is_not_fit_for_release():
    answer = _query().evaluate(1.0, rng=3)
    assert not answer.fit_for_release
    assert "contribution bounding" in answer.label
    assert _query().evaluate(1.0).fit_for_release  # the secure source


def test_nothing_the_user_gave_is_modified():
    before = VISITS.copy()
    _query().evaluate(1.0, rng=1)
    pd.testing.assert_frame_equal(VISITS, before)


def test_the_record_states_the_unit_bounds_and_sensitivities():
    record = _query().evaluate(1.0, rng=1).record
    assert record["unit"] == {"unit": "person", "id_column": "pid", "max_rows": None, "max_groups": 2,
                              "max_rows_per_group": 2}
    assert record["cell_contribution"] == 4
    sens = {m["label"]: m["sensitivity"] for a in record["aggregates"] for m in a["measurements"]}
    assert sens == {"count": 4, "sum(spend)": 400, "mean(spend).sum": 200, "mean(spend).count": 4}
    assert record["aggregates"][2]["interval"].startswith("approximate")


@pytest.mark.parametrize("build, error, message", [
    (lambda: Query(VISITS, unit=PrivacyUnit.person("person", max_rows=2)), ColumnError, "ID column 'person'"),
    (lambda: Query(VISITS).group_by("region", keys=[]), ParameterError, "non-empty list"),
    (lambda: Query(VISITS).group_by("region", keys=["n", "s", "n"]), ParameterError, "twice"),
    (lambda: Query(VISITS).group_by("region", domains={"region": ["n", "n"]}), ParameterError, "twice"),
    (lambda: Query(VISITS).group_by("region"), ParameterError, "public keys"),
    (lambda: Query(VISITS).group_by("city", keys=["n"]), ColumnError, "grouping column 'city'"),
    (lambda: Query(VISITS).group_by(["region", "band"], keys=[("n",)]), ParameterError, "one value per"),
    (lambda: sum("spend", 0, float("inf")), ParameterError, "finite"),
    (lambda: mean("spend", float("nan"), 1), ParameterError, "finite"),
    (lambda: sum("spend", 10, 1), ParameterError, "low < high"),
    (lambda: sum("spend", "a", 1), ParameterError, "a number"),
    (lambda: Query(VISITS).group_by("region", keys=["n"]).agg(sum("note", 0, 1)), ColumnError, "numeric"),
    (lambda: Query(VISITS).group_by("region", keys=["n"]).agg(mean("nope", 0, 1)), ColumnError, "does not exist"),
    (lambda: Query(VISITS).group_by("region", keys=["n"]).agg(count(), count()), ParameterError, "named alike"),
    (lambda: Query(VISITS).group_by("region", keys=["n"]).agg(), ParameterError, "at least one"),
    (lambda: Query([1, 2]), ParameterError, "pandas, polars or Arrow"),
    (lambda: Query(VISITS).group_by("region", keys=["n"]).agg(count()).evaluate(0), ParameterError, "psilon"),
    (lambda: Query(VISITS).group_by("region", keys=["n"]).agg(count(), count("c2")).evaluate(1, weights=[1]),
     ParameterError, "weights"),
    (lambda: Query(VISITS).group_by("region", keys=["n"]).agg(count()).evaluate(1, accountant=3), ParameterError,
     "Accountant"),
    (lambda: Query(VISITS).group_by("region", keys=["n"]).evaluate(1), ParameterError, "no aggregate"),
])
def test_bad_input_is_refused_in_one_sentence_before_anything_is_charged_or_drawn(build, error, message):
    with recording() as seen:
        with pytest.raises(error, match=message) as info:
            build()
    assert isinstance(info.value, VeilError) and seen.draws == []
    text = str(info.value)
    assert text.endswith((".", "?")) and "\n" not in text


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups=st.lists(st.sampled_from(["a", "b", "c", "d", None]), max_size=30),
       keys=st.lists(st.sampled_from(["a", "b", "c", "q", "r"]), min_size=1, unique=True))
def test_exactly_the_public_keys_come_out_and_no_row_is_lost_or_invented(groups, keys):
    """At the row unit with negligible noise, each public key's count is the number of rows with
    that key, and the answer has one row per key, in the order given."""
    frame = pd.DataFrame({"g": pd.Series(groups, dtype=object)})
    out = Query(frame).group_by("g", keys=keys).agg(count()).evaluate(1e9, rng=0).table()
    assert out["g"].tolist() == keys
    assert out["count"].tolist() == [groups.count(k) for k in keys]


def test_rows_without_a_person_id_are_dropped():
    frame = pd.DataFrame({"pid": pd.array([1, None, None, 2], dtype="Int64"), "g": ["a"] * 4})
    q = Query(frame, unit=PrivacyUnit.person("pid", max_rows=5)).group_by("g", keys=["a"]).agg(count())
    assert q.evaluate(1e9, rng=0).table()["count"].tolist() == [2]


def test_the_noise_scales_are_stated_and_follow_from_the_bounds():
    scales = _query().evaluate(1.0, rng=1).noise_scales
    # eps 1/3 per aggregate, a mean's share halved; contribution 4 (2 groups x 2 rows)
    assert scales == pytest.approx({"count": 12.0, "sum(spend)": 1200.0, "mean(spend).sum": 1200.0,
                                    "mean(spend).count": 24.0})
