"""Adaptive w-event privacy (Kellaris, Papadopoulos, Xiao and Papadias, VLDB 2014) and continual
histograms and sums at event, user and w-event level."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from veil.dp.accountant import Accountant
from veil.dp.budget import Budget, BudgetExceededError
from veil.dp.continual import continual_histogram, continual_sum, w_event_counts
from veil.dp.noise import NoiseSource
from veil.dp.wevent import budget_absorption, budget_distribution
from veil.dp.window_accountant import WindowAccountant
from veil.errors import ParameterError


def drifting_stream(seed: int, T: int = 300, d: int = 1) -> np.ndarray:
    """Counts that mostly stay put and sometimes jump: where adaptive budgets pay off."""
    rng = np.random.default_rng(seed)
    level = 50 + np.cumsum(rng.choice([0, 0, 0, 0, 0, 0, 0, 0, 0, 15, -15], size=(T, d)), axis=0)
    return rng.poisson(np.clip(level, 5, None))


# ------------------------------------------------------------------ every window of w steps spends at most ε
@pytest.mark.parametrize("strategy", ["bd", "ba"])
@pytest.mark.parametrize("w, eps, seed", [(1, Fraction(1), 1), (4, Fraction(1, 2), 2), (10, Fraction(3, 2), 3),
                                          (37, Fraction(1), 4)])
def test_every_window_of_w_steps_spends_at_most_epsilon(strategy, w, eps, seed):
    counts = drifting_stream(seed, d=3)
    run = (budget_distribution if strategy == "bd" else budget_absorption)(counts, eps, w, noise=NoiseSource.seeded(seed))
    units = run.step_units
    windows = np.convolve(units, np.ones(w, dtype=np.int64))[:units.size]  # the window ending at every step
    assert int(windows.max()) * run.unit <= eps  # exact: whole units times an exact Fraction
    dis = np.convolve(run.dissimilarity_units, np.ones(w, dtype=np.int64))[:units.size]
    pub = np.convolve(run.publication_units, np.ones(w, dtype=np.int64))[:units.size]
    assert int(dis.max()) * run.unit <= eps / 2 and int(pub.max()) * run.unit <= eps / 2
    assert 0 < run.published.sum() < units.size
    # every step shows the publication it says, and an unpublished step repeats the one before
    shown = run.shown[run.shown >= 0]
    np.testing.assert_array_equal(run.values[run.shown >= 0], run.values[shown])
    assert np.all(run.published[shown])


@pytest.mark.parametrize("strategy", ["bd", "ba"])
def test_the_window_accountant_takes_every_charge_before_its_noise(strategy):
    counts = drifting_stream(5)[:, 0]
    acc = WindowAccountant(6, 1.0, dataset_id="s")
    r = w_event_counts(counts, 1.0, 6, strategy=strategy, accountant=acc, noise=5)
    assert acc.now == counts.size - 1
    for step in range(counts.size):
        assert acc.spent(step).epsilon <= 1
    charged = np.zeros(counts.size, dtype=object)
    for c in acc.charges:
        charged[c.step] += c.epsilon
    np.testing.assert_array_equal(charged, [Fraction(int(u)) * r.epsilon_unit for u in r.step_units])
    assert r.guarantee["strategy"] == strategy and r.window_units.max() * r.epsilon_unit <= 1


def test_an_adaptive_release_is_refused_whole_when_the_window_before_it_spent_budget():
    acc = WindowAccountant(5, 1.0, dataset_id="s")
    acc.charge(0, 0.5)
    with pytest.raises(BudgetExceededError, match="steps before it already spent 0.5"):
        w_event_counts([3, 4, 5], 1.0, 5, strategy="ba", accountant=acc, start=1, noise=1)
    assert len(acc.charges) == 1
    w_event_counts([3, 4, 5], 1.0, 5, strategy="ba", accountant=acc, start=5, noise=1)  # the window moved on


def test_budget_absorption_absorbs_skipped_steps_and_nullifies_as_many_after():
    w, share = 10, 1 << 30
    run = budget_absorption(drifting_stream(11), Fraction(1), w, noise=NoiseSource.seeded(8))
    nullified_until = -1
    for t in np.nonzero(run.published)[0]:
        assert t > nullified_until  # no publication among the steps the previous one nullified
        absorbed = t - nullified_until  # t_A: this step and the skipped ones since the nullified stretch
        assert run.publication_units[t] == share * min(absorbed, w)
        nullified_until = t + run.publication_units[t] // share - 1
    assert run.publication_units.max() > share  # some publication did absorb


def test_adaptive_strategies_publish_rarely_on_a_constant_histogram():
    counts = np.full((200, 50), 1000)  # with many bins the mean dissimilarity is precise
    uniform = continual_histogram(counts, 1.0, level="w-event", w=20, noise=9)
    for strategy in ("bd", "ba"):
        r = continual_histogram(counts, 1.0, level="w-event", w=20, strategy=strategy, noise=9)
        assert r.details["published"].sum() < 20
        assert np.abs(r.values - 1000).mean() < np.abs(uniform.values - 1000).mean() / 2


# ------------------------------------------------------------------ histograms and sums at each level
def test_histogram_levels_state_their_noise():
    counts = drifting_stream(6, T=64, d=4)
    event = continual_histogram(counts, 0.5, level="event", bins=list("abcd"), noise=1)
    assert event.values.shape == (64, 4) and event.scale == 2.0 and event.bins == tuple("abcd")
    user = continual_histogram(counts, 0.5, level="user", max_contribution=3, noise=1)
    assert user.scale == pytest.approx(3 * 7 / 0.5)  # m · L / ε with L = 7 levels for T = 64
    assert user.window_units.max() * user.epsilon_unit == Fraction(1, 2)
    window = continual_histogram(counts, 0.5, level="w-event", w=8, noise=1)
    assert window.scale == pytest.approx(16.0)
    frame = event.to_frame()
    assert list(frame.columns[:4]) == ["step", "bin", "value", "std"] and len(frame) == 256
    np.testing.assert_array_equal(frame["value"].to_numpy().reshape(64, 4), event.values)


def test_running_histogram_is_the_dyadic_sum_of_its_noisy_nodes():
    counts = drifting_stream(7, T=100, d=2)
    r = continual_histogram(counts, 1.0, level="user", running=True, noise=2)
    nodes = r.details["nodes"]
    t = np.arange(1, 101)
    np.testing.assert_array_equal(r.n_terms, [bin(int(k)).count("1") for k in t])
    rebuilt = sum(np.where(((t >> j) & 1)[:, None] == 1, nodes[j][np.maximum((t >> j) - 1, 0)], 0.0)
                  for j in range(len(nodes)))
    np.testing.assert_allclose(r.values, rebuilt, rtol=1e-12)
    csum = np.vstack([np.zeros((1, 2)), np.cumsum(counts, axis=0)])
    leaves = csum[1:] - csum[:-1]
    assert stats.kstest((nodes[0] - leaves).ravel(), stats.laplace(scale=r.scale).cdf).pvalue > 0.001


def test_event_level_sum_noise_is_laplace_of_scale_bound_over_epsilon():
    sums = np.random.default_rng(3).uniform(-500, 500, size=20_000)
    r = continual_sum(sums, 0.8, bound=25, level="event", noise=4)
    assert stats.kstest(r.values - sums, stats.laplace(scale=25 / 0.8).cdf).pvalue > 0.01
    b = continual_sum(sums[:50], 0.8, bound=25, level="w-event", w=5, strategy="bd", noise=4)
    assert np.isnan(b.scale[0]) or b.scale[0] > 0
    assert b.window_units.max() * b.epsilon_unit <= Fraction(4, 5)


def test_user_level_charges_a_sequential_accountant_once():
    acc = Accountant(Budget(1.0), dataset_id="s")
    continual_sum([1.0, 2.0, 3.0], 0.4, bound=5, level="user", accountant=acc, noise=1)
    assert acc.spent().epsilon == Fraction(2, 5)


@pytest.mark.parametrize("call, match", [
    (lambda: continual_histogram([[1, 2]], 1.0, level="w-event", w=0), "w .* whole number >= 1"),
    (lambda: continual_histogram([[1, 2]], 1.0, level="w-event"), "needs the window length w"),
    (lambda: continual_histogram([[1, 2]], 1.0, level="event", strategy="bd"), "strategy applies to w-event"),
    (lambda: continual_histogram([[1, 2]], 1.0, level="event", running=True), "running totals"),
    (lambda: continual_histogram([[1, -2]], 1.0, level="event"), "non-negative"),
    (lambda: continual_histogram([[1, 2]], 1.0, level="day"), "level must be"),
    (lambda: continual_histogram([[1, 2]], 1.0, level="event", bins=["a"]), "1 bin names"),
    (lambda: continual_sum([1.0], 1.0, bound=0, level="event"), "bound"),
    (lambda: w_event_counts([1, 2], 1.0, 2, strategy="greedy"), "strategy must be"),
    (lambda: w_event_counts([1, 2], -1.0, 2), "epsilon must be a positive"),
])
def test_bad_input_is_one_sentence(call, match):
    with pytest.raises(ParameterError, match=match) as err:
        call()
    assert str(err.value).count(". ") == 0
