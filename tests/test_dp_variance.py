"""The variance aggregate of grouped DP queries (issue 27, item 2): three measurements, the
estimate in its range, an interval that holds whenever the three measurements' intervals do, and
coverage of at least 1 − α."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
from hypothesis import example, given, settings
from hypothesis import strategies as st

from veil.dp import PrivacyUnit, Query, ZCDPAccountant, ZCDPBudget
from veil.dp.aggregates import count, variance
from veil.dp.variance_aggregate import variance_interval

TABLE = pd.DataFrame({"g": ["a"] * 6 + ["b"] * 4,
                      "x": [1.0, 2.0, 3.0, 4.0, 50.0, None, 5.0, 5.0, 6.0, -20.0]})


def _truth(values, low, high):
    v = np.clip(np.asarray([x for x in values if x == x], dtype=float), low, high)
    return float(np.var(v)) if len(v) else None


def test_with_negligible_noise_the_variance_is_the_clamped_population_variance():
    frame = Query(TABLE).group_by("g", keys=["a", "b", "c"]).agg(variance("x", 0, 10)).evaluate(1e9, rng=1).table()
    np.testing.assert_allclose(frame["variance(x)"][:2],
                               [_truth(TABLE.x[:6], 0, 10), _truth(TABLE.x[6:], 0, 10)], atol=1e-4)
    assert frame["variance(x)"][2] == 12.5  # an empty group: the middle of [0, 25]
    assert (frame["variance(x)_low"][2], frame["variance(x)_high"][2]) == (0.0, 25.0)


def test_the_record_states_three_measurements_split_in_thirds_and_an_approximate_interval():
    unit = PrivacyUnit.person("p", max_rows=2)
    table = TABLE.assign(p=range(10))
    answer = Query(table, unit=unit).group_by("g", keys=["a", "b"]).agg(count(), variance("x", 0, 10)).evaluate(
        0.9, rng=2)
    entry = answer.record["aggregates"][1]
    assert entry["aggregate"] == "variance" and entry["interval"].startswith("approximate")
    ms = {m["label"]: m for m in entry["measurements"]}
    assert set(ms) == {"variance(x).sq", "variance(x).sum", "variance(x).count"}
    assert all(abs(m["epsilon"] - 0.15) < 1e-15 for m in ms.values())
    assert sum(Fraction(m["epsilon"]) for m in ms.values()) <= Fraction(9, 20)
    # person unit, at most 2 rows: sensitivities 2·R², 2·R, 2 with R = 5
    assert [ms[k]["sensitivity"] for k in ("variance(x).sq", "variance(x).sum", "variance(x).count")] == [50, 10, 2]


def test_rho_is_split_exactly_in_thirds():
    acc = ZCDPAccountant(ZCDPBudget(1.0, 1e-6), dataset_id="t")
    answer = Query(TABLE).group_by("g", keys=["a"]).agg(variance("x", 0, 10)).evaluate(rho=0.3, accountant=acc, rng=3)
    assert acc.spent_rho == Fraction(3, 10)
    assert [m["rho"] for m in answer.record["aggregates"][0]["measurements"]] == [0.1, 0.1, 0.1]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1, 1), min_size=1, max_size=30), st.floats(0, 3), st.floats(0, 3), st.floats(0, 5),
       st.floats(-1, 1), st.floats(-1, 1), st.floats(-1, 1), st.floats(0.1, 10))
@example([5.789585675182272e-155], 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0)  # a square sum so small that s²/q overflows
def test_the_interval_holds_whenever_the_three_measurement_intervals_do(ys, hq, hs, hc, uq, us, uc, radius):
    """Property: for centred values in [−R, R] and noisy measurements within their half-widths,
    the estimate and both ends lie in [0, R²] and the true variance lies in the interval."""
    y = np.asarray(ys) * radius
    q, s, n = float(np.sum(y * y)), float(np.sum(y)), len(y)
    hq, hs = hq * radius * radius, hs * radius
    value, lo, hi = variance_interval([q + uq * hq], [s + us * hs], [n + uc * hc], hq, hs, hc, radius)
    top = radius * radius
    assert 0 <= lo[0] <= hi[0] <= top and 0 <= value[0] <= top
    truth = q / n - (s / n) ** 2
    assert lo[0] - 1e-9 * top <= truth <= hi[0] + 1e-9 * top


def test_coverage_is_at_least_one_minus_alpha():
    """The interval is conservative (a union bound): over 400 seeded runs it misses at most α of
    the time (binomial slack: the count of misses stays below 400·α + 3σ)."""
    rng = np.random.default_rng(7)
    table = pd.DataFrame({"g": ["a"] * 200, "x": rng.uniform(0, 10, 200)})
    truth = _truth(table.x, 0, 10)
    q = Query(table).group_by("g", keys=["a"]).agg(variance("x", 0, 10))
    misses = 0
    for seed in range(400):
        f = q.evaluate(2.0, rng=seed, alpha=0.2).table()
        misses += not (f["variance(x)_low"][0] <= truth <= f["variance(x)_high"][0])
    assert misses <= 400 * 0.2 + 3 * np.sqrt(400 * 0.2 * 0.8)
