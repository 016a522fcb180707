"""Continual release of a count: event level, user level (binary tree), w-event level."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import veil
from veil.dp.accountant import Accountant
from veil.dp.budget import Budget, BudgetExceededError
from veil.dp.continual import (
    ContinualRelease,
    binary_tree_counts,
    event_level_counts,
    laplace_sum_half_width,
    laplace_sum_tail,
    tree_levels,
    w_event_counts,
)
from veil.dp.window_accountant import WindowAccountant


@pytest.fixture(scope="module")
def stream() -> np.ndarray:
    return np.random.default_rng(7).poisson(20, size=1024)


# ------------------------------------------------------------------ reproducibility and labels
@pytest.mark.parametrize("release", [
    lambda c, s: event_level_counts(c, 0.5, noise=s),
    lambda c, s: binary_tree_counts(c, 0.5, noise=s),
    lambda c, s: binary_tree_counts(c, 0.5, output="count", noise=s),
    lambda c, s: w_event_counts(c, 0.5, 8, noise=s),
])
def test_seeded_runs_reproduce_and_are_not_fit_for_release(stream, release):
    a, b, other = release(stream, 11), release(stream, 11), release(stream, 12)
    assert isinstance(a, ContinualRelease)
    np.testing.assert_array_equal(a.values, b.values)
    assert not np.array_equal(a.values, other.values)
    assert a.fit_for_release is False and "NOT fit" in a.label
    assert a.values.shape == a.variance.shape == a.low.shape == a.epsilon_step.shape == (stream.size,)
    assert np.all(a.low < a.values) and np.all(a.values < a.high)


def test_secure_default_is_fit_for_release():
    c = [3, 0, 5, 2, 7, 1, 0, 4]
    for r in (event_level_counts(c, 1.0), binary_tree_counts(c, 1.0), w_event_counts(c, 1.0, 3)):
        assert r.fit_for_release is True and "OpenDP" in r.noise_source
        assert np.all(np.isfinite(r.values))


# ------------------------------------------------------------------ event level
def test_event_level_noise_is_laplace_of_scale_one_over_epsilon():
    eps = 0.7
    counts = np.random.default_rng(1).integers(0, 50, size=20_000)
    r = event_level_counts(counts, eps, noise=2)
    noise = r.values - counts
    assert stats.kstest(noise, stats.laplace(scale=1 / eps).cdf).pvalue > 0.01
    np.testing.assert_allclose(r.variance, 2 / eps**2)
    assert np.all(r.epsilon_step == eps) and r.epsilon_window.max() == eps  # w = 1 by default
    assert r.epsilon_cumulative[-1] == pytest.approx(eps * counts.size)
    # the interval is the Laplace mechanism's own: scale · ln(1/alpha); coverage ~ 95 %
    np.testing.assert_allclose(r.high - r.values, math.log(20) / eps)
    assert abs(np.mean((r.low <= counts) & (counts <= r.high)) - 0.95) < 0.01


# ------------------------------------------------------------------ user level: binary tree
def test_tree_levels_and_guarantee():
    assert [tree_levels(t) for t in (1, 2, 3, 4, 1000, 1024, 1025)] == [1, 2, 2, 3, 10, 11, 11]
    r = binary_tree_counts(np.ones(1024, dtype=int), 2.0, max_contribution=3, noise=0)
    assert r.scale == pytest.approx(3 * 11 / 2.0)
    assert r.guarantee["level"] == "user" and r.guarantee["levels"] == 11
    # variance = 2 b^2 popcount(t)
    t = np.arange(1, 1025)
    popcount = np.array([int(x).bit_count() for x in t])
    np.testing.assert_array_equal(r.n_terms, popcount)
    np.testing.assert_allclose(r.variance, 2 * r.scale**2 * popcount)


def test_tree_privacy_per_step_adds_up_to_epsilon_exactly():
    r = binary_tree_counts(np.zeros(1000, dtype=int), 0.3, noise=0)  # L = 10 levels
    assert r.epsilon_unit == Fraction(3, 100)
    assert set(np.flatnonzero(r.step_units) + 1) == {1, 2, 4, 8, 16, 32, 64, 128, 256, 512}
    assert r.cumulative_units[-1] * r.epsilon_unit == Fraction(3, 10)
    assert r.epsilon_cumulative[-1] == 0.3 and np.all(np.diff(r.epsilon_cumulative) >= 0)
    np.testing.assert_array_equal(r.epsilon_window, r.epsilon_cumulative)  # the window is the horizon


def test_tree_without_noise_structure_gives_exact_running_sum(stream):
    # the dyadic decomposition reproduces the prefix sums: check it with (almost) no noise
    r = binary_tree_counts(stream, 1e9, noise=3)
    np.testing.assert_allclose(r.values, np.cumsum(stream), atol=1e-4)
    leaves = binary_tree_counts(stream, 1e9, output="count", noise=3)
    np.testing.assert_allclose(leaves.values, stream, atol=1e-6)
    # a prefix of the stream released under a longer horizon uses that horizon's scale
    part = binary_tree_counts(stream[:100], 1.0, horizon=1024, noise=3)
    assert part.scale == 11.0 and part.values.size == 100


def test_tree_empirical_variance_matches_stated_and_beats_naive(stream):
    eps, T, runs = 1.0, 1024, 3000
    rng = np.random.default_rng(2024)
    truth = np.cumsum(stream)
    err2 = np.zeros(T)
    covered = np.zeros(T)
    for _ in range(runs):
        r = binary_tree_counts(stream, eps, noise=rng)
        err2 += (r.values - truth) ** 2
        covered += (r.low <= truth) & (truth <= r.high)
    emp = err2 / runs
    # pool the steps that sum the same number of nodes k, compare with 2 b^2 k within 10 %
    for k in np.unique(r.n_terms):
        sel = r.n_terms == k
        assert emp[sel].mean() == pytest.approx(2 * r.scale**2 * k, rel=0.10), k
    assert emp.mean() == pytest.approx(r.variance.mean(), rel=0.05)
    assert abs(covered.sum() / (runs * T) - 0.95) < 0.01
    # polylogarithmic: never above 2 (L/eps)^2 L; the naive user-level split (eps/T per step, Laplace T/eps
    # per count) has variance 2 (T/eps)^2 per count and 2 t (T/eps)^2 per running count
    L = tree_levels(T)
    assert emp.max() <= 1.1 * 2 * (L / eps) ** 2 * L
    naive_count = 2 * (T / eps) ** 2
    naive_running = naive_count * np.arange(1, T + 1)
    assert emp.max() < naive_count / 100
    assert np.all(emp < naive_running / 100)


def test_tree_worst_case_variance_grows_polylogarithmically():
    eps = 1.0
    worst = {}
    for p in range(4, 21, 2):
        T = 2**p
        L = tree_levels(T)
        worst[T] = 2 * (L / eps) ** 2 * (L - 1)  # max popcount(t) for t <= 2^p is p = L - 1
        r = binary_tree_counts(np.zeros(min(T, 4096), dtype=int), eps, horizon=T, noise=0)
        assert r.variance.max() <= worst[T]
        assert worst[T] / math.log2(T) ** 3 < 2 * (1 + 1 / 4) ** 3  # ((p+1)/p)^2 · 2 <= bounded constant
    assert worst[2**20] < 2 * (2**20) ** 2 / 1e6  # a million times below the naive per-count variance


# ------------------------------------------------------------------ confidence intervals
def test_laplace_sum_half_width_is_exact():
    assert laplace_sum_half_width(1, 0.05) == pytest.approx(math.log(20))
    for k in (1, 2, 5, 11):
        h = laplace_sum_half_width(k, 0.05)
        assert laplace_sum_tail(k, h) == pytest.approx(0.05, abs=1e-9)
    draws = np.random.default_rng(5).laplace(size=(200_000, 4)).sum(axis=1)
    assert np.mean(np.abs(draws) > laplace_sum_half_width(4, 0.1)) == pytest.approx(0.1, abs=0.003)


# ------------------------------------------------------------------ w-event level
@pytest.mark.parametrize("eps, w", [(0.1, 3), (1.0, 7), (0.3, 1), (2.5, 64)])
def test_w_event_every_window_spends_at_most_epsilon_exactly(stream, eps, w):
    r = w_event_counts(stream, eps, w, noise=4)
    exact_eps = Fraction(repr(eps))
    assert r.epsilon_unit == exact_eps / w
    units = r.step_units
    windows = np.convolve(units, np.ones(w, dtype=np.int64))[: units.size]  # every window ending at each step
    np.testing.assert_array_equal(windows, r.window_units)
    assert max(windows) * r.epsilon_unit == exact_eps  # full windows spend exactly epsilon
    assert np.all(r.epsilon_window <= eps) and r.epsilon_window[-1] == eps
    acc = r.details["accountant"]
    assert all(acc.spent(s).epsilon <= exact_eps for s in range(stream.size))
    assert acc.spent(stream.size - 1).epsilon == exact_eps
    np.testing.assert_allclose(r.variance, 2 * (w / eps) ** 2)
    noise = r.values - stream
    assert stats.kstest(noise, stats.laplace(scale=w / eps).cdf).pvalue > 0.001


def test_w_event_accountant_refuses_an_overspend_and_records_nothing():
    counts = np.arange(10)
    acc = WindowAccountant(4, 1.0, dataset_id="stream")
    acc.charge(0, 0.5, label="earlier release")
    with pytest.raises(BudgetExceededError):
        w_event_counts(counts, 1.0, 4, accountant=acc, noise=0)  # steps 1..: window 0..3 would hold 1.25
    assert len(acc.charges) == 1
    # after the window has moved past the earlier charge the same release fits
    r = w_event_counts(counts, 1.0, 4, accountant=acc, start=4, noise=0)
    assert r.details["steps"] == (4, 13) and len(acc.charges) == 11
    with pytest.raises(BudgetExceededError):  # the window of steps 10..13 is already full
        w_event_counts(counts[:1], 0.01, 4, accountant=acc, start=13, noise=0)
    assert len(acc.charges) == 11
    with pytest.raises(veil.ParameterError):
        w_event_counts(counts, 1.0, 5, accountant=acc, noise=0)


def test_event_level_and_tree_charge_their_accountants():
    acc = WindowAccountant(1, 1.0, dataset_id="s")
    event_level_counts([1, 2, 3], 1.0, accountant=acc, noise=0)
    assert [c.step for c in acc.charges] == [0, 1, 2]
    with pytest.raises(BudgetExceededError):
        event_level_counts([1], 1.0, accountant=acc, start=2, noise=0)
    seq = Accountant(Budget(1.0), dataset_id="s")
    binary_tree_counts([1, 2, 3], 0.6, accountant=seq, noise=0)
    with pytest.raises(BudgetExceededError):
        binary_tree_counts([1, 2, 3], 0.6, accountant=seq, noise=0)
    assert len(seq.charges) == 1


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("call", [
    lambda: event_level_counts([1, 2], 0),
    lambda: event_level_counts([1, 2], -1.0),
    lambda: event_level_counts([1, 2], float("nan")),
    lambda: event_level_counts([], 1.0),
    lambda: event_level_counts([1, -2], 1.0),
    lambda: event_level_counts([1, 2.5], 1.0),
    lambda: event_level_counts([[1, 2]], 1.0),
    lambda: event_level_counts(["a"], 1.0),
    lambda: event_level_counts([1, 2], 1.0, w=0),
    lambda: binary_tree_counts([1, 2], 0.0),
    lambda: binary_tree_counts([1, 2], 1.0, horizon=0),
    lambda: binary_tree_counts([1, 2, 3], 1.0, horizon=2),
    lambda: binary_tree_counts([1, 2], 1.0, max_contribution=0),
    lambda: binary_tree_counts([1, 2], 1.0, output="prefix"),
    lambda: binary_tree_counts([1, 2], 1.0, alpha=1.5),
    lambda: w_event_counts([1, 2], 1.0, 0),
    lambda: w_event_counts([1, 2], 1.0, 2.0),
    lambda: w_event_counts([1, 2], -0.5, 2),
    lambda: w_event_counts([1, np.nan], 1.0, 2),
])
def test_bad_input_is_one_sentence_parameter_error(call):
    with pytest.raises(veil.ParameterError) as info:
        call()
    msg = str(info.value)
    assert msg.endswith(".") and "\n" not in msg
