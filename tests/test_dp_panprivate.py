"""Pan-privacy (Dwork, Naor, Pitassi, Rothblum and Yekhanin, ICS 2010): the memory itself is DP.

The state an intruder would see is sampled many times on two neighbouring streams, and the
empirical probability of every set of states (cells of a histogram) must not change by more than
e^ε, beyond sampling error. A control shows the check catches a state that is not private enough.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from veil.dp.panprivate import PanPrivateCounter, PanPrivateDensity
from veil.errors import ParameterError

RUNS = 4000


def worst_ratio(a: list, b: list, min_count: int = 150) -> tuple[float, float]:
    """The largest ratio of empirical probabilities between the two samples, in either direction,
    over the cells both visit at least ``min_count`` times, and a 4-sigma allowance for its
    sampling error (relative standard error of a ratio of two counts)."""
    ca, cb = Counter(a), Counter(b)
    worst, allowance = 1.0, 0.0
    for cell in set(ca) & set(cb):
        x, y = ca[cell], cb[cell]
        if min(x, y) < min_count:
            continue
        ratio = max(x / y, y / x) * (len(b) / len(a) if x >= y else len(a) / len(b))
        if ratio > worst:
            worst, allowance = ratio, 4 * math.sqrt(1 / x + 1 / y)
    return worst, allowance


def counter_states(eps: float, events: list[int], rng, *, announce_after: int | None = None,
                   counter=PanPrivateCounter) -> list:
    """The state after each step of ``events`` (counts per step), for RUNS independent counters;
    with ``announce_after``, the states seen at two announced intrusions around that step."""
    out = []
    for _ in range(RUNS):
        c = counter(eps, noise=rng)
        seen = []
        for i, n in enumerate(events):
            c.update(n)
            seen.append(c.state_)
            if announce_after is not None and i == announce_after:
                c.announce_intrusion()
        out.append(tuple(seen))
    return out


# ------------------------------------------------------------------ the counter
def test_counter_state_is_epsilon_dp_at_every_moment():
    eps, rng = 0.7, np.random.default_rng(1)
    a = counter_states(eps, [2, 0, 1, 3], rng)
    b = counter_states(eps, [2, 1, 1, 3], rng)  # one more event, at the second step
    before, _ = worst_ratio([s[0] for s in a], [s[0] for s in b])
    assert before < 1.25  # identical distributions before the event
    for moment in (1, 2, 3):
        ratio, allowance = worst_ratio([s[moment] for s in a], [s[moment] for s in b])
        assert ratio <= math.exp(eps) * (1 + allowance)
        assert ratio >= math.exp(eps) * (1 - allowance)  # and the bound is attained: the check is sharp


def test_the_check_catches_a_state_that_is_not_private_enough():
    class Leaky(PanPrivateCounter):
        """Claims ε but keeps noise for 3ε in its memory."""

        def __init__(self, epsilon, noise):
            super().__init__(3 * epsilon, noise=noise)

    eps, rng = 0.7, np.random.default_rng(2)
    a = counter_states(eps, [2, 0], rng, counter=Leaky)
    b = counter_states(eps, [2, 1], rng, counter=Leaky)
    ratio, allowance = worst_ratio([s[1] for s in a], [s[1] for s in b])
    assert ratio > math.exp(eps) * (1 + allowance)


def test_announced_intrusions_keep_every_view_epsilon_dp():
    eps, rng = 0.7, np.random.default_rng(3)
    # intrusions seen after step 0 (then announced) and after step 2; the neighbours differ at step 1
    a = counter_states(eps, [1, 0, 2], rng, announce_after=0)
    b = counter_states(eps, [1, 1, 2], rng, announce_after=0)
    clip = lambda v: int(np.clip(v, -6, 9))  # noqa: E731 - sets of states: coarse cells are events too
    ratio, allowance = worst_ratio([(clip(s[0]), clip(s[2])) for s in a], [(clip(s[0]), clip(s[2])) for s in b],
                                   min_count=60)
    assert ratio <= math.exp(eps) * (1 + allowance)


def test_counter_release_is_the_count_plus_noise():
    rng = np.random.default_rng(4)
    values = []
    for _ in range(1000):
        c = PanPrivateCounter(1.0, noise=rng).update(40)
        values.append(c.release().value)
    r = PanPrivateCounter(1.0, noise=rng).release()
    assert abs(np.mean(values) - 40) < 4 * r.std / math.sqrt(1000)
    assert np.var(values) == pytest.approx(r.variance, rel=0.2)
    assert "NOT fit" in r.label and "epsilon-DP together" in r.guarantee["statement"]
    assert PanPrivateCounter(1.0).release().fit_for_release


# ------------------------------------------------------------------ the density estimator
def density_states(eps: float, stream: list[list[int]], rng) -> list:
    out = []
    for _ in range(RUNS):
        d = PanPrivateDensity(3, eps, noise=rng)
        seen = []
        for batch in stream:
            d.update(batch)
            seen.append(tuple(d.state_.tolist()))
        out.append(tuple(seen))
    return out


def test_density_state_is_epsilon_dp_at_every_moment():
    eps, rng = 1.0, np.random.default_rng(5)
    with_user = density_states(eps, [[1], [0, 2, 0], [0, 1]], rng)
    without = density_states(eps, [[1], [2], [1]], rng)  # user 0's every appearance removed
    exact = PanPrivateDensity(3, eps).state_epsilon_
    assert exact == pytest.approx(-math.log(1 - eps / 2), rel=1e-12) and exact <= eps
    first, _ = worst_ratio([s[0] for s in with_user], [s[0] for s in without])
    assert first < 1.3
    for moment in (1, 2):
        ratio, allowance = worst_ratio([s[moment] for s in with_user], [s[moment] for s in without])
        assert ratio <= math.exp(eps) * (1 + allowance)
        assert ratio == pytest.approx(math.exp(exact), rel=allowance)  # the state's exact ε, attained


def test_density_release_estimates_the_fraction_that_appeared():
    rng = np.random.default_rng(6)
    est = PanPrivateDensity(20_000, 0.5, noise=rng)
    users = rng.choice(20_000, size=30_000)
    est.update(users)
    r = est.release()
    truth = np.unique(users).size / 20_000
    assert abs(r.value - truth) < 4 * r.std
    sampled = PanPrivateDensity(20_000, 0.5, sample_size=5000, noise=rng)
    assert len(sampled.sample_) == 5000 and sampled.state_.shape == (5000,)
    assert "2·epsilon-DP together" in r.guarantee["statement"]


@pytest.mark.parametrize("call, match", [
    (lambda: PanPrivateDensity(10, 1.5), "epsilon <= 1"),
    (lambda: PanPrivateDensity(["a", "a"], 0.5), "twice"),
    (lambda: PanPrivateDensity(3, 0.5, sample_size=4), "larger than the universe"),
    (lambda: PanPrivateDensity([], 0.5), "empty"),
    (lambda: PanPrivateCounter(1.0).update(-1), "events"),
    (lambda: PanPrivateCounter(0.0), "epsilon"),
])
def test_bad_input(call, match):
    with pytest.raises(ParameterError, match=match):
        call()
