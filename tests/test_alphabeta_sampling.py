"""The αβ algorithm's coins (veil.anonymize.alphabeta.sampling): exact Bernoulli draws and the
Bernoulli process, checked statistically and, where a draw is decided by integer comparisons,
exactly."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from veil.anonymize.alphabeta.sampling import (Coins, RationalProbability, _GeometricDigit, _GeometricTail,
                                               _power_bounds, as_coins, bernoulli, bernoulli_process)
from veil.errors import ParameterError


class ScriptedCoins(Coins):
    """Coins whose words are given in advance (to reach the rare branch that reads more words)."""

    def __init__(self, words):
        super().__init__(None, _secure=False)
        self._script = list(words)

    def words(self, count):
        out, self._script = self._script[:count], self._script[count:]
        return np.asarray(out, dtype=np.uint64)


@pytest.mark.parametrize("p", [Fraction(1, 3), Fraction(1, 10**6), Fraction(999_999, 10**6), Fraction(1, 2)])
def test_bernoulli_rate_is_the_probability(p):
    n = 400_000
    hits = int(bernoulli(Coins.seeded(7), p, n).sum())
    sd = math.sqrt(n * float(p) * (1 - float(p)))
    assert abs(hits - n * float(p)) <= 5 * sd + 1


def test_secure_bernoulli_rate_and_label():
    coins = Coins.secure()
    hits = int(bernoulli(coins, Fraction(1, 4), 100_000).sum())
    assert abs(hits - 25_000) <= 5 * math.sqrt(100_000 * 0.1875)
    assert coins.fit_for_release and "secure" in coins.description
    assert not Coins.seeded(1).fit_for_release and "NOT fit for release" in Coins.seeded(1).description


def test_bernoulli_edges():
    coins = Coins.seeded(1)
    assert not bernoulli(coins, Fraction(0), 1000).any()
    assert bernoulli(coins, Fraction(1), 1000).all()
    assert bernoulli(coins, Fraction(1, 2), 0).shape == (0,)
    with pytest.raises(ParameterError):
        bernoulli(coins, Fraction(3, 2), 5)


def test_a_word_on_the_threshold_is_decided_by_the_next_words():
    third = Fraction(1, 3)
    w = (1 << 64) // 3                              # 1/3·2⁶⁴ lies in [w, w + 1)
    below = (1 << 64) // 3 - 1                      # U = (w + below/2⁶⁴)/2⁶⁴ < 1/3
    above = (1 << 64) // 3 + 1                      # U > 1/3
    assert bernoulli(ScriptedCoins([w, below]), third, 1).tolist() == [True]
    assert bernoulli(ScriptedCoins([w, above]), third, 1).tolist() == [False]
    # the next word equal to the threshold's next digits defers again, to a third word
    assert bernoulli(ScriptedCoins([w, (1 << 64) // 3, 0]), third, 1).tolist() == [True]
    # an exactly dyadic threshold: U = t exactly is not below t
    assert bernoulli(ScriptedCoins([1 << 62, 0]), Fraction(1, 4), 1).tolist() == [False]
    assert bernoulli(ScriptedCoins([(1 << 62) - 1]), Fraction(1, 4), 1).tolist() == [True]


@settings(max_examples=60, deadline=None)
@given(num=st.integers(1, 10**6), den=st.integers(1, 10**6), exponent=st.integers(0, 6),
       bits=st.sampled_from([64, 128, 200]))
def test_power_bounds_enclose_the_exact_power(num, den, exponent, bits):
    q = Fraction(min(num, den), max(num, den))
    lo, hi = _power_bounds(q, exponent, bits)
    exact = q ** (2 ** exponent) * (1 << bits)
    assert lo <= exact <= hi
    assert hi - lo <= 4
    x = q ** (2 ** exponent)
    lo, hi = _GeometricDigit(q, exponent).bounds(bits)
    assert lo <= x / (1 + x) * (1 << bits) <= hi
    lo, hi = _GeometricTail(q, exponent).bounds(bits)
    assert lo <= x * (1 << bits) <= hi


def test_rational_bounds_are_floor_and_ceiling():
    assert RationalProbability(Fraction(1, 3)).bounds(4) == (5, 6)
    assert RationalProbability(Fraction(1, 4)).bounds(4) == (4, 4)


def test_process_count_is_binomial_and_positions_uniform():
    count, p = 2_000, Fraction(3, 100)
    coins = Coins.seeded(11)
    runs = [bernoulli_process(coins, count, p) for _ in range(3_000)]
    sizes = np.array([len(r) for r in runs])
    # the number chosen against Binomial(2000, 0.03), the tails below 45 and above 76 pooled
    observed = np.bincount(np.clip(sizes, 44, 77) - 44, minlength=34)
    cdf = stats.binom.cdf(np.append(np.arange(44, 77), np.inf), count, 0.03)
    expected = np.diff(np.concatenate([[0.0], cdf])) * len(runs)
    assert stats.chisquare(observed, expected).pvalue > 1e-4
    positions = np.concatenate(runs)
    assert positions.min() >= 0 and positions.max() < count
    assert all(np.all(np.diff(r) > 0) for r in runs)
    buckets = np.bincount(positions // 100, minlength=20)
    assert stats.chisquare(buckets).pvalue > 1e-4


def test_process_gaps_are_geometric():
    p = Fraction(1, 7)
    positions = bernoulli_process(Coins.seeded(3), 700_000, p)
    gaps = np.diff(positions) - 1
    top = 40
    observed = np.bincount(np.minimum(gaps, top), minlength=top + 1)
    pmf = stats.geom.pmf(np.arange(1, top + 1), 1 / 7)
    expected = np.append(pmf, 1 - pmf.sum()) * len(gaps)
    assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_process_over_a_large_range_without_enumerating_it():
    count = 10**18
    positions = bernoulli_process(Coins.seeded(5), count, Fraction(1, 10**14))
    assert abs(len(positions) - 10_000) < 5 * 100
    assert positions.max() < count and np.all(np.diff(positions) > 0)
    # uniform over the range: the share in the lower half is about one half
    assert abs(np.mean(positions < count // 2) - 0.5) < 5 * 0.5 / math.sqrt(len(positions))


def test_process_edges_and_refusals():
    coins = Coins.seeded(1)
    assert bernoulli_process(coins, 0, Fraction(1, 2)).size == 0
    assert bernoulli_process(coins, 10, Fraction(0)).size == 0
    assert bernoulli_process(coins, 10, Fraction(1)).tolist() == list(range(10))
    with pytest.raises(ParameterError):
        bernoulli_process(coins, 1 << 63, Fraction(1, 2))
    with pytest.raises(ParameterError):
        bernoulli_process(coins, 10, Fraction(-1, 2))


def test_as_coins():
    assert as_coins(None).fit_for_release
    assert not as_coins(3).fit_for_release
    assert not as_coins(np.random.default_rng(1)).fit_for_release
    coins = Coins.seeded(2)
    assert as_coins(coins) is coins
    with pytest.raises(ParameterError):
        as_coins("seed")
    with pytest.raises(ParameterError):
        as_coins(-1)
