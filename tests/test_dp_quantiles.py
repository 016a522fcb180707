"""Several quantiles per group from one noisy tree of histograms (issue 27, item 2): one mechanism
call per level, whatever the number of quantiles; outputs monotone in q and inside the bounds;
intervals that cover; noise that does not depend on the data (replay)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil.conformance.glue import check_release, neighbour, recording
from veil.dp import PrivacyUnit, Query
from veil.dp.aggregates import count, quantiles, variance
from veil.dp.quantile_aggregate import Quantiles, consistent_tree
from veil.errors import ParameterError

RNG = np.random.default_rng(5)
TABLE = pd.DataFrame({"pid": RNG.integers(0, 60, 300), "g": RNG.choice(["a", "b"], 300),
                      "x": RNG.normal(40, 12, 300).round()})
QS = [0.1, 0.25, 0.5, 0.75, 0.9]


def _truth(values, q, low, high):
    return float(np.quantile(np.clip(values, low, high), q, method="inverted_cdf"))


@pytest.mark.parametrize("method", ["tree", "flat"])
def test_with_negligible_noise_each_quantile_is_within_its_bin(method):
    agg = quantiles("x", QS, 0, 100, bins=50, method=method)
    answer = Query(TABLE).group_by("g", keys=["a", "b"]).agg(agg).evaluate(1e6, rng=1)
    frame = answer.to_pandas()
    for i, key in enumerate(["a", "b"]):
        for q, column in zip(QS, agg.columns()):
            truth = _truth(TABLE.x[TABLE.g == key], q, 0, 100)
            assert abs(frame[column][i] - truth) <= 2.0  # the resolution limit, the bin width
            assert frame[column + "_low"][i] <= truth <= frame[column + "_high"][i]
            assert frame[column + "_high"][i] - frame[column + "_low"][i] <= 4.0
    entry = answer.record["aggregates"][0]
    assert entry["resolution"] == 2.0 and entry["qs"] == QS and "bin width 2" in entry["interval"]
    assert entry["interval"].startswith("approximate (conservative)")


def test_one_mechanism_call_per_level_whatever_the_number_of_quantiles():
    shapes = []
    for qs in ([0.5], QS):
        with recording() as seen:
            Query(TABLE).group_by("g", keys=["a", "b", "c"]).agg(quantiles("x", qs, 0, 100, bins=50, method="tree")).evaluate(
                1.0, rng=2)
        shapes.append([(d.sampler, d.cells) for d in seen.draws])
    assert shapes[0] == shapes[1]
    # 50 bins padded to 64 leaves: levels of 64, 32, ..., 1 cells per key, one draw each
    assert shapes[0] == [("NoiseSource.discrete_laplace", (3, 64 >> level)) for level in range(7)]


def test_each_level_has_the_units_cell_contribution_as_sensitivity_and_an_equal_share():
    unit = PrivacyUnit.person("pid", max_groups=2, max_rows_per_group=3)
    answer = Query(TABLE, unit=unit).group_by("g", keys=["a", "b"]).agg(quantiles("x", QS, 0, 100, bins=8, method="tree")).evaluate(
        0.8, rng=3)
    ms = answer.record["aggregates"][0]["measurements"]
    assert len(ms) == 4 and {m["sensitivity"] for m in ms} == {6.0}
    assert all(abs(m["epsilon"] - 0.2) < 1e-15 for m in ms)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.floats(-50, 150, allow_nan=False), max_size=40), st.integers(0, 2 ** 32 - 1),
       st.sampled_from(["tree", "flat"]), st.integers(1, 40), st.floats(0.05, 5))
def test_quantiles_are_monotone_in_q_inside_the_bounds_and_inside_their_intervals(xs, seed, method, bins, eps):
    table = pd.DataFrame({"g": ["a"] * len(xs), "x": xs})
    qs = [0.05, 0.2, 0.5, 0.51, 0.8, 0.99]
    agg = quantiles("x", qs, 0, 100, bins=bins, method=method)
    frame = Query(table).group_by("g", keys=["a", "b"]).agg(agg).evaluate(eps, rng=seed).to_pandas()
    for suffix in ("", "_low", "_high"):
        cells = frame[[c + suffix for c in agg.columns()]].to_numpy()
        assert (np.diff(cells, axis=1) >= 0).all()
        assert ((cells >= 0) & (cells <= 100)).all()
    for c in agg.columns():
        assert (frame[c + "_low"] <= frame[c]).all() and (frame[c] <= frame[c + "_high"]).all()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 1000), min_size=1, max_size=64))
def test_a_consistent_tree_is_left_as_it_is(hist):
    agg = Quantiles("x", (0.5,), 0, 1, bins=len(hist))
    levels = agg.measure_values({agg.statistics()[0]: np.asarray([hist])})
    np.testing.assert_allclose(consistent_tree(levels)[0, :len(hist)], hist, atol=1e-6)


@pytest.mark.parametrize("method, price", [("tree", {"epsilon": 0.5}), ("flat", {"epsilon": 0.5}),
                                           ("tree", {"rho": 0.02})])
def test_coverage_is_at_least_one_minus_alpha(method, price):
    """The intervals are conservative (a union bound over the cells): over 200 seeded runs, all
    five quantiles of a key are covered at once at least 1 − α of the time (with binomial slack)."""
    agg = quantiles("x", QS, 0, 100, bins=32, method=method)
    q = Query(TABLE).group_by("g", keys=["a", "b"]).agg(agg)
    truths = [[_truth(TABLE.x[TABLE.g == k], qq, 0, 100) for qq in QS] for k in ("a", "b")]
    misses = 0
    for seed in range(200):
        f = q.evaluate(**price, rng=seed, alpha=0.3).to_pandas()
        for i in range(2):
            misses += not all(f[c + "_low"][i] <= t <= f[c + "_high"][i] for c, t in zip(agg.columns(), truths[i]))
    assert misses <= 400 * 0.3 + 3 * np.sqrt(400 * 0.3 * 0.7)


@pytest.mark.parametrize("bad", [dict(qs=[]), dict(qs=[0.0]), dict(qs=[1.0]), dict(qs=[0.5, 0.5]), dict(qs="x"),
                                 dict(bins=0), dict(bins=2.5), dict(method="wavelet"), dict(low=5, high=5)])
def test_bad_parameters_are_refused_in_one_sentence(bad):
    args = {"column": "x", "qs": [0.5], "low": 0, "high": 10, **bad}
    with pytest.raises(ParameterError) as e:
        quantiles(**args)
    assert str(e.value).count(". ") == 0 and str(e.value).endswith(".")


@pytest.mark.parametrize("aggs", [(quantiles("x", QS, 0, 100, bins=20),), (variance("x", 0, 80), count()),
                                  (quantiles("x", [0.5], 0, 100, bins=16, method="flat"),)])
def test_a_person_more_or_less_draws_the_same_noise(aggs):
    unit = PrivacyUnit.person("pid", max_rows=3)

    def release(table):
        Query(table, unit=unit).group_by("g", keys=["a", "b"]).agg(*aggs).evaluate(0.7, rng=9)

    small = TABLE.head(40)
    heavy = {"pid": 999, "g": "a", "x": 1e9}
    check_release("quantiles/variance", release, small,
                  [("removed", neighbour(small, "removed", row=3, unit="pid")),
                   ("added", neighbour(small, "added", row=0, record=heavy, unit="pid"))])


@pytest.mark.parametrize("method", ["tree", "flat"])
def test_quantiles_of_keys_released_by_partition_selection_belong_to_their_key(method):
    from veil.dp import PartitionSelection

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"pid": np.arange(4000), "g": np.repeat(["low", "high", "rare"], [2000, 1995, 5]),
                          "x": np.r_[rng.uniform(0, 20, 2000), rng.uniform(80, 100, 1995), np.full(5, 50.0)]})
    q = (Query(frame, unit=PrivacyUnit.person("pid", max_rows=1)).group_by("g", private=PartitionSelection(1e-9))
         .agg(quantiles("x", [0.25, 0.5, 0.75], 0, 100, bins=32, method=method)))
    out = q.evaluate(4.0, rng=5).to_pandas().set_index("g")
    assert sorted(out.index) == ["high", "low"]  # the five-person key is not released, and nothing says so
    assert out.loc["low", "quantiles(x)[0.5]"] < 25 < 75 < out.loc["high", "quantiles(x)[0.5]"]


def test_the_default_method_is_the_flat_histogram_under_epsilon_and_the_tree_under_rho():
    frame = pd.DataFrame({"g": ["a"] * 50, "x": np.linspace(0, 100, 50)})
    q = Query(frame).group_by("g", keys=["a"]).agg(quantiles("x", [0.5], 0, 100, bins=16))
    assert q.aggregates[0].method == "auto"
    under_eps = q.evaluate(1.0, rng=1).record["aggregates"][0]
    under_rho = q.evaluate(rho=0.5, rng=1).record["aggregates"][0]
    assert (under_eps["method"], under_eps["levels"]) == ("flat", 1)
    assert (under_rho["method"], under_rho["levels"]) == ("tree", 5)
    assert q.plan(10.0, group_size=50).aggregates[0]["epsilon"] > 0  # the plan resolves it too
