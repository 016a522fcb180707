"""Numeric SDC methods (top/bottom coding, rank swapping, additive noise) and the utility of
perturbed data: hand-computed examples, properties over small random tables, seeded runs for the
expectations (deterministic seeds, tolerances from the observed spread), bad input."""

from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from veil.errors import ColumnError, DataError, ParameterError, VeilError
from veil.randomness import BytePool
from veil.sdc.coding import top_bottom_code
from veil.sdc.noise import _grid, additive_noise, discrete_gaussian
from veil.sdc.swapping import rank_swap, swap_distance
from veil.sdc.utility import frequency_utility, numeric_utility

PROPERTY = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
NAN = math.nan


# ---- top and bottom coding ----------------------------------------------------------------------

def test_top_and_bottom_coding_by_hand():
    r = top_bottom_code([1, 5, 10, 50, NAN, -3, 30], top=20, bottom=0)
    np.testing.assert_array_equal(r.values, [1, 5, 10, 20, NAN, 0, 20])
    assert (r.top, r.bottom, r.top_coded, r.bottom_coded) == (20, 0, 2, 1)
    assert (r.top_replacement, r.bottom_replacement) == (20, 0)


def test_mean_replacement_keeps_the_total_of_the_coded_values():
    r = top_bottom_code(np.array([1.0, 5, 10, 50, NAN, -3, 30]), top=20, replacement="mean")
    np.testing.assert_array_equal(r.values, [1, 5, 10, 40, NAN, -3, 40])  # (50 + 30) / 2
    assert r.top_replacement == 40 and r.bottom is None and r.bottom_coded == 0
    # The mean is private: the manifest's parameters name the rule, never the value.
    assert r.public_parameters() == {"replacement": "mean", "top": {"value": 20.0}}


def test_quantile_threshold_is_computed_and_kept_out_of_the_public_parameters():
    # 1..10: the 0.9 quantile is 9 + 0.1·(10 − 9) = 9.1 (linear interpolation, R's type 7).
    r = top_bottom_code(pd.Series(range(1, 11)), top_quantile=0.9)
    assert r.top == pytest.approx(9.1)
    np.testing.assert_allclose(r.values, [1, 2, 3, 4, 5, 6, 7, 8, 9, 9.1])
    assert r.public_parameters() == {"replacement": "threshold", "top": {"quantile": 0.9}}


def test_values_at_a_threshold_stay_and_a_given_replacement_is_used():
    r = top_bottom_code([0, 5, 10, 11], top=10, replacement=99)
    np.testing.assert_array_equal(r.values, [0, 5, 10, 99])
    assert r.public_parameters() == {"replacement": "value", "top": {"value": 10.0, "replacement": 99.0}}


def test_coding_reads_polars_and_pandas_with_missing_values_and_leaves_them():
    for column in (pl.Series([1.0, None, 7.0]), pd.Series([1, None, 7], dtype="Int64")):
        r = top_bottom_code(column, top=5)
        np.testing.assert_array_equal(r.values, [1, NAN, 5])


@settings(max_examples=40, **PROPERTY)
@given(st.lists(st.one_of(st.integers(-1000, 1000), st.just(None)), min_size=1, max_size=30),
       st.integers(-500, 0), st.integers(0, 500))
def test_coding_changes_only_the_values_beyond_the_thresholds(raw, bottom, top):
    x = np.array([NAN if v is None else v for v in raw], dtype=float)
    before = x.copy()
    r = top_bottom_code(x, top=top, bottom=bottom)
    np.testing.assert_array_equal(x, before)  # the input is not modified
    assert r.values.shape == x.shape
    np.testing.assert_array_equal(np.isnan(r.values), np.isnan(x))
    inside = (x >= bottom) & (x <= top)
    np.testing.assert_array_equal(r.values[inside], x[inside])
    assert np.all(r.values[x > top] == top) and np.all(r.values[x < bottom] == bottom)
    assert r.top_coded == int((x > top).sum()) and r.bottom_coded == int((x < bottom).sum())


# ---- rank swapping ------------------------------------------------------------------------------

def test_swap_distance_is_exact_at_the_boundary():
    assert swap_distance(10, 30) == 3 and swap_distance(100, 7) == 7 and swap_distance(5, 19) == 0
    assert swap_distance(0.1, 1000) == 1


def test_rank_swap_by_hand_small_window():
    # Nine present values, p = 30: P = ⌊2.7⌋ = 2. The NaN stays in its record.
    x = np.array([5.0, 1, NAN, 3, 2, 4, 6, 8, 7, 9])
    y = rank_swap(x, 30, rng=1)
    assert np.isnan(y[2])
    assert sorted(y[~np.isnan(y)]) == sorted(x[~np.isnan(x)])
    # Distinct values: a value's rank is the value − 1; no value moved more than 2 ranks.
    assert np.all(np.abs(y[~np.isnan(y)] - x[~np.isnan(x)]) <= 2)


def test_rank_swap_out_of_reach_returns_the_column_and_keeps_integers():
    x = np.array([3, 1, 2], dtype=np.int64)
    np.testing.assert_array_equal(rank_swap(x, 10, rng=0), x)  # P = ⌊0.3⌋ = 0
    y = rank_swap(np.arange(100, dtype=np.int64), 50, rng=0)
    assert y.dtype == np.int64 and sorted(y) == list(range(100))


def test_rank_swap_is_reproducible_with_a_seed_and_secure_by_default():
    x = np.random.default_rng(3).normal(size=(200, 2))
    np.testing.assert_array_equal(rank_swap(x, 10, rng=7), rank_swap(x, 10, rng=np.random.default_rng(7)))
    secure = rank_swap(x, 10)
    np.testing.assert_array_equal(np.sort(secure, axis=0), np.sort(x, axis=0))
    assert not np.array_equal(secure, x)  # 200 values, P = 20: staying put has probability ~0


@settings(max_examples=50, **PROPERTY)
@given(st.data())
def test_rank_swap_keeps_each_multiset_and_the_p_percent_rank_distance(data):
    n = data.draw(st.integers(1, 40))
    d = data.draw(st.integers(1, 3))
    p = data.draw(st.floats(0.5, 100))
    cells = st.one_of(st.integers(-5, 5).map(float), st.floats(-1e6, 1e6), st.just(NAN))
    x = np.array(data.draw(st.lists(st.lists(cells, min_size=d, max_size=d), min_size=n, max_size=n)))
    before = x.copy()
    y = rank_swap(x, p, rng=data.draw(st.integers(0, 2**32)))
    np.testing.assert_array_equal(x, before)
    assert y.shape == x.shape
    for j in range(d):
        col, out = x[:, j], y[:, j]
        np.testing.assert_array_equal(np.isnan(out), np.isnan(col))  # missing values stay in place
        present = ~np.isnan(col)
        m = int(present.sum())
        np.testing.assert_array_equal(np.sort(out[present]), np.sort(col[present]))  # the multiset, exactly
        big_p = swap_distance(p, m)
        ranked = np.sort(col[present])
        rank = np.argsort(np.argsort(col[present], kind="stable"), kind="stable")
        # The value a record now holds sits at a rank at most P from the record's own rank.
        low = ranked[np.maximum(rank - big_p, 0)]
        high = ranked[np.minimum(rank + big_p, m - 1)]
        assert np.all((out[present] >= low) & (out[present] <= high))


@settings(max_examples=40, **PROPERTY)
@given(st.integers(2, 60), st.floats(1, 100), st.integers(0, 2**32))
def test_rank_swap_exchanges_pairs_of_distinct_values_within_p_ranks(n, p, seed):
    x = np.random.default_rng(seed).permutation(n).astype(float)  # distinct values: value = rank
    y = rank_swap(x, p, rng=seed)
    big_p = swap_distance(p, n)
    assert np.all(np.abs(y - x) <= big_p)
    # An exchange is a pair: record i took record j's value exactly when j took i's.
    holder = np.empty(n, dtype=int)
    holder[x.astype(int)] = np.arange(n)
    source = holder[y.astype(int)]  # the record whose value record i now holds
    np.testing.assert_array_equal(source[source], np.arange(n))


# ---- additive noise -----------------------------------------------------------------------------

def _bytes(seed: int):
    return np.random.default_rng(seed).bytes


def test_discrete_gaussian_follows_its_pmf():
    # σ = 2, 60,000 draws from a fixed seed: chi-square against the exact pmf, the tails beyond
    # ±5 pooled into one cell each.
    draws = discrete_gaussian(2, 60_000, _bytes(11))
    everything = np.arange(-80, 81)
    pmf = np.exp(-everything**2 / 8.0)
    pmf /= pmf.sum()
    inner = np.arange(-4, 5)
    observed = np.r_[(draws < -4).sum(), [(draws == k).sum() for k in inner], (draws > 4).sum()]
    expected = np.r_[pmf[everything < -4].sum(), pmf[np.isin(everything, inner)], pmf[everything > 4].sum()]
    assert stats.chisquare(observed, expected * len(draws)).pvalue > 1e-4


def test_discrete_gaussian_at_grid_scale_has_the_scale_as_its_spread():
    draws = discrete_gaussian(1500, 40_000, BytePool(_bytes(5)))
    se = 1500 / math.sqrt(len(draws))
    assert abs(draws.mean()) < 5 * se
    assert draws.std() / 1500 == pytest.approx(1, abs=5 / math.sqrt(2 * len(draws)))


def test_noise_values_lie_on_the_grid_of_the_exact_sampler():
    x = np.array([0.1, 0.2, 0.35, 0.4, 1.0])
    r = additive_noise(x, amount=0.5, rng=4)
    step, units = _grid(0.5 * float(np.std(x, ddof=1)), 1.0)
    assert 1024 <= units <= 2048 and math.log2(step) == int(math.log2(step))
    assert np.all(r.values / step == np.rint(r.values / step))  # released values: integers × 2^k
    secure = additive_noise(x, amount=0.5)  # the same algorithm on the operating system's bytes
    assert np.all(secure.values / step == np.rint(secure.values / step))


def test_uncorrelated_noise_scales_variances_by_one_plus_amount_squared():
    x = np.random.default_rng(1).normal([10, -3], [2, 0.5], size=(40, 2))
    x[5, 1] = NAN
    a, runs = 0.6, 100
    var = np.array([np.nanvar(additive_noise(x, amount=a, rng=s).values, axis=0, ddof=1) for s in range(runs)])
    sd = np.nanstd(x, axis=0, ddof=1)
    realized = np.array([_grid(a * s, float(np.nanmax(np.abs(x[:, j]))))[1] *
                         _grid(a * s, float(np.nanmax(np.abs(x[:, j]))))[0] for j, s in enumerate(sd)])
    target = sd**2 + realized**2  # (1 + a²)σ² up to the grid's rounding of aσ (< 1/2048)
    assert np.allclose(realized / (a * sd), 1, atol=1 / 2048)
    assert np.all(np.abs(var.mean(axis=0) - target) < 5 * var.std(axis=0) / math.sqrt(runs))


def test_correlated_noise_keeps_the_means_and_the_covariance_in_expectation():
    rng = np.random.default_rng(2)
    x = rng.multivariate_normal([5, 0, 100], [[4, 1.5, -2], [1.5, 1, 0], [-2, 0, 9]], size=30)
    cov = np.cov(x, rowvar=False)
    runs = 100
    covs = []
    for seed in range(runs):
        z = additive_noise(x, amount=0.8, kind="correlated", rng=seed).values
        np.testing.assert_allclose(z.mean(axis=0), x.mean(axis=0), atol=1e-9)  # exactly, up to rounding
        covs.append(np.cov(z, rowvar=False))
        assert not np.allclose(z, x, atol=1e-3)
    covs = np.array(covs)
    se = covs.std(axis=0) / math.sqrt(runs)
    assert np.all(np.abs(covs.mean(axis=0) - cov) < 5 * se + 1e-6 * np.abs(cov).max())
    # The naive construction (noise a²Σ, no rescaling) would have been (1 + a²)Σ: far away.
    assert np.all(np.abs(covs.mean(axis=0) - 1.64 * cov)[np.diag_indices(3)] > 20 * se[np.diag_indices(3)])


def test_correlated_noise_keeps_an_exact_linear_dependence():
    base = np.random.default_rng(8).normal(size=(25, 2))
    x = np.column_stack([base, base[:, 0] + 2 * base[:, 1]])
    z = additive_noise(x, amount=0.5, kind="correlated", rng=1).values
    np.testing.assert_allclose(z[:, 2], z[:, 0] + 2 * z[:, 1], atol=1e-9)


def test_noise_is_secure_by_default_and_reproducible_with_a_seed():
    x = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [2.0, 1, 4, 3]})
    before = x.copy()
    secure = additive_noise(x, amount=0.2)
    assert secure.fit_for_release and secure.values.shape == (4, 2)
    seeded = additive_noise(x, amount=0.2, kind="correlated", rng=5)
    assert not seeded.fit_for_release
    np.testing.assert_array_equal(seeded.values, additive_noise(x, amount=0.2, kind="correlated", rng=5).values)
    pd.testing.assert_frame_equal(x, before)
    assert seeded.public_parameters()["kind"] == "correlated" and "seed" not in str(seeded.public_parameters())


def test_huge_values_get_noise_without_overflow():
    x = np.array([[1e300, 1.0], [-1e300, 2.0], [5e299, 4.0]])
    for kind in ("uncorrelated", "correlated"):
        z = additive_noise(x, amount=0.1, kind=kind, rng=3).values
        assert np.all(np.isfinite(z)) and not np.array_equal(z, x)


def test_a_column_without_spread_is_left_as_it_is():
    r = additive_noise(np.array([[1.0, 7], [2, 7], [3, 7]]), amount=1, rng=0)
    np.testing.assert_array_equal(r.values[:, 1], [7, 7, 7])


@settings(max_examples=30, **PROPERTY)
@given(st.integers(2, 25), st.integers(1, 3), st.floats(0.05, 3), st.sampled_from(["uncorrelated", "correlated"]),
       st.integers(0, 2**32))
def test_noise_loses_and_invents_no_record(n, d, amount, kind, seed):
    x = np.random.default_rng(seed).normal(size=(n, d)) * 100
    if kind == "uncorrelated" and n > 2:
        x[0, 0] = NAN
    r = additive_noise(x, amount=amount, kind=kind, rng=seed)
    assert r.values.shape == x.shape
    np.testing.assert_array_equal(np.isnan(r.values), np.isnan(x))
    assert np.all(np.isfinite(r.values[~np.isnan(x)]))


# ---- utility ------------------------------------------------------------------------------------

def test_utility_of_a_four_row_table_by_hand():
    # a = 1..4, b = 2a: S_a² = 5/3, S_b² = 20/3, Cov = 10/3, r = 1.
    x = np.array([[1.0, 2], [2, 4], [3, 6], [4, 8]])
    z = np.array([[1.0, 2], [2, 4], [4, 6], [3, 10]])
    u = numeric_utility(x, z)
    # IL1s: a's differences 0,0,1,1 over √2·S_a, b's 0,0,0,2 over √2·2S_a; 8 cells.
    assert u.il1s == pytest.approx(3 / (8 * math.sqrt(10 / 3)))
    np.testing.assert_allclose(u.mean_change, [0, 0.1])          # b: 5 → 5.5
    np.testing.assert_allclose(u.variance_change, [0, 0.75])     # b: 20/3 → 35/3
    # Cov(z) = 3 vs 10/3: |Δ| / (S_a·S_b) = (1/3)/(10/3) = 0.1; the diagonal gives 0 and 0.75.
    assert u.covariance_change_max == pytest.approx(0.75)
    assert u.covariance_change_mean == pytest.approx(0.85 / 3)
    assert u.correlation_change_max == pytest.approx(1 - 9 / math.sqrt(175))  # r(z) = 3/√(5/3·35/3)
    assert u.eigen == math.inf  # the original's correlation matrix is singular, the perturbed one not
    assert (u.cells, u.complete_rows, u.columns) == (8, 4, ("0", "1"))


def test_eigen_measures_on_a_two_by_two_case_by_hand():
    # r(x) = 0.8: correlation eigenvalues 1.8, 0.2; covariance (5/3)(1 ± 0.8) = 3, 1/3.
    # r(z) = 0.6: 1.6, 0.4; covariance [[5/3, 1], [1, 5/3]]: 8/3, 2/3.
    x = np.array([[1.0, 1], [2, 3], [3, 2], [4, 4]])
    z = np.array([[1.0, 2], [2, 1], [3, 4], [4, 3]])
    u = numeric_utility(x, z)
    assert u.eigen == pytest.approx(0.2 / 1.8 + 0.2 / 0.2)
    assert u.eigen_covariance == pytest.approx((1 / 3) / 3 + (1 / 3) / (1 / 3))
    assert u.correlation_change_max == pytest.approx(0.2)
    assert u.il1s == pytest.approx(6 / (8 * math.sqrt(10 / 3)))
    assert u.covariance_change_mean == pytest.approx(0.2 / 3)


def test_utility_counts_only_cells_present_in_both():
    x = np.array([[1.0, 1], [2, NAN], [3, 2], [4, 4], [5, 5]])
    z = np.array([[1.0, 1], [2, 9], [NAN, 2], [4, 4], [5, 5]])
    u = numeric_utility(pd.DataFrame(x, columns=["age", "income"]), z)
    assert (u.cells, u.complete_rows, u.columns) == (8, 3, ("age", "income"))
    assert u.il1s == 0 and u.summary()["mean_change_max"] == 0


def test_utility_is_the_same_at_any_scale_without_overflow():
    x = np.array([[1.0, 1], [2, 3], [3, 2], [4, 4]])
    z = np.array([[1.0, 2], [2, 1], [3, 4], [4, 3]])
    small, huge = numeric_utility(x, z).summary(), numeric_utility(x * 2.0**1000, z * 2.0**1000).summary()
    assert huge == pytest.approx(small)


def test_frequency_utility_by_hand():
    f = frequency_utility([10, 20, 30], [12, 18, 30], [9.5, 20.5, 30])
    assert f.total_variation == pytest.approx(2 / 60) and f.max_count_change == 2
    assert f.estimate_max_error == 0.5 and f.estimate_mean_error == pytest.approx(1 / 3)
    assert f.estimate_total_variation == pytest.approx(0.5 / 60)
    assert frequency_utility([5, 5], [5, 5]).hellinger == 0


# ---- bad input ----------------------------------------------------------------------------------

def _one_sentence(error: VeilError) -> None:
    text = str(error)
    assert text.endswith(".") and ". " not in text.rstrip("."), text


@pytest.mark.parametrize("call, error", [
    (lambda: rank_swap([1.0, 2, 3], 0, rng=0), ParameterError),
    (lambda: rank_swap([1.0, 2, 3], 100.5, rng=0), ParameterError),
    (lambda: rank_swap([1.0, 2, 3], NAN, rng=0), ParameterError),
    (lambda: rank_swap([1.0, 2, 3], True, rng=0), ParameterError),
    (lambda: rank_swap(["a", "b"], 10, rng=0), ColumnError),
    (lambda: rank_swap([1.0, 2], 10, rng=-1), ParameterError),
    (lambda: additive_noise([1.0, 2, 3], amount=0, rng=0), ParameterError),
    (lambda: additive_noise([1.0, 2, 3], amount=-1, rng=0), ParameterError),
    (lambda: additive_noise([1.0, 2, 3], amount=math.inf, rng=0), ParameterError),
    (lambda: additive_noise([1.0, 2, 3], amount=1, kind="gaussian", rng=0), ParameterError),
    (lambda: additive_noise(pd.DataFrame({"a": ["x", "y"]}), amount=1, rng=0), ColumnError),
    (lambda: additive_noise([[1.0, 2], [NAN, 3], [2, 2]], amount=1, kind="correlated", rng=0), DataError),
    (lambda: additive_noise([1.0], amount=1, rng=0), DataError),
    (lambda: additive_noise([1e300, 1.0], amount=1e-300, rng=0), ParameterError),
    (lambda: top_bottom_code([1, 2, 3], top=1, bottom=2), ParameterError),
    (lambda: top_bottom_code([1, 2, 3]), ParameterError),
    (lambda: top_bottom_code([1, 2, 3], top=2, top_quantile=0.5), ParameterError),
    (lambda: top_bottom_code([1, 2, 3], top_quantile=1.5), ParameterError),
    (lambda: top_bottom_code([1, 2, 3], top_quantile=0.2, bottom_quantile=0.5), ParameterError),
    (lambda: top_bottom_code([1, 2, 3], top=2, replacement="median"), ParameterError),
    (lambda: top_bottom_code([1, 2, 3], top=2, replacement=1), ParameterError),
    (lambda: top_bottom_code([1, 2, 3], top=2, bottom=1, replacement=5), ParameterError),
    (lambda: top_bottom_code(["a", "b"], top=2), ColumnError),
    (lambda: top_bottom_code(["1", "2"], top=2), ColumnError),
    (lambda: top_bottom_code(pd.Series([True, False]), top=2), ColumnError),
    (lambda: rank_swap(pl.DataFrame({"a": [1, 2], "b": ["x", "y"]}), 50, rng=0), ColumnError),
    (lambda: rank_swap(np.array([1, "2"], dtype=object), 50, rng=0), ColumnError),
    (lambda: top_bottom_code([1.0, math.inf], top=2), ColumnError),
    (lambda: numeric_utility([[1.0, 2]], [[1.0, 2], [3, 4]]), ParameterError),
    (lambda: numeric_utility([1.0, NAN], [1.0, 2]), DataError),
    (lambda: frequency_utility([1, -1], [0, 0]), ParameterError),
    (lambda: frequency_utility([1, 1], [1, 1, 0]), ParameterError),
])
def test_bad_input_is_refused_in_one_sentence(call, error):
    with pytest.raises(error) as caught:
        call()
    _one_sentence(caught.value)


def test_secure_bytes_come_from_the_operating_system(monkeypatch):
    calls = []
    real = os.urandom
    monkeypatch.setattr(os, "urandom", lambda n: calls.append(n) or real(n))
    rank_swap(np.arange(50.0), 20)
    additive_noise(np.arange(50.0), amount=0.3)
    assert calls
