"""The exact discrete Laplace sampler (veil.dp.discrete_laplace, Canonne, Kamath and Steinke 2020).

The sampler reads bytes from a source it is given; here a seeded stream, so each statistical
check below is one fixed computation that passes or fails the same way on every run.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from scipy import stats

from veil.dp import discrete_laplace as dl
from veil.dp.noise import NoiseSource


def seeded_bytes(seed: int):
    return np.random.default_rng(seed).bytes


def pmf(z: np.ndarray, scale: float) -> np.ndarray:
    a = math.exp(-1 / scale)
    return (1 - a) / (1 + a) * np.exp(-np.abs(z) / scale)


@pytest.mark.parametrize("scale, candidates", [(1.0, None), (1 / 0.3, None), (0.5, None), (0.1, None), (2.5, None),
                                               (10.0, None), (37.7, None), (1 / 0.3, 8), (0.5, 8)])
def test_draws_follow_the_discrete_laplace_distribution(scale, candidates, monkeypatch):
    if candidates:  # every round tries 8 candidates per draw, as the last rounds of a large call do
        monkeypatch.setattr(dl, "_SMALL_ROUND", 1 << 30)
    n = 200_000
    draws = dl.sample(scale, n, seeded_bytes(int(scale * 1000)))
    assert draws.dtype == np.int64 and len(draws) == n
    # Chi-square over the values expected at least 20 times, and the two tails beyond them.
    reach = int(np.floor(scale * math.log(n * pmf(np.array([0]), scale)[0] / 20)))
    support = np.arange(-reach, reach + 1)
    expected = n * pmf(support, scale)
    tail = (n - expected.sum()) / 2
    observed = np.array([(draws < -reach).sum(), *[(draws == z).sum() for z in support], (draws > reach).sum()])
    expected = np.array([tail, *expected, tail])
    keep = expected > 0
    chi2 = ((observed[keep] - expected[keep]) ** 2 / expected[keep]).sum()
    assert chi2 < stats.chi2.ppf(1 - 1e-4, keep.sum() - 1), (scale, chi2)
    assert abs(draws.mean()) < 6 * math.sqrt(2 * math.exp(-1 / scale) / (1 - math.exp(-1 / scale)) ** 2 / n)


def test_a_tiny_scale_draws_zero_and_a_huge_one_is_spread_out():
    assert not dl.sample(1e-3, 10_000, seeded_bytes(1)).any()
    wide = dl.sample(2.0**52, 20_000, seeded_bytes(2)).astype(float) / 2.0**52
    # |Z|/scale is close to Exponential(1) for a large scale.
    assert stats.kstest(np.abs(wide), "expon").pvalue > 1e-4


def test_bernoulli_of_exp_minus_gamma_and_the_geometric_count_have_their_rates():
    n = 400_000
    coins = dl.bernoulli_exp(np.full(n, 1, dtype=np.uint64), 3, seeded_bytes(3))
    assert abs(coins.mean() - math.exp(-1 / 3)) < 6 * math.sqrt(0.25 / n)
    zero = dl.bernoulli_exp(np.zeros(10, dtype=np.uint64), 7, seeded_bytes(4))
    assert zero.all()
    v = dl.geometric_exp1(n, seeded_bytes(5))
    p = 1 - math.exp(-1)
    assert abs(v.astype(float).mean() - (1 - p) / p) < 6 * math.sqrt((1 - p) / p**2 / n)


def test_the_wide_arithmetic_path_is_the_same_arithmetic():
    t = (1 << 53) - 1
    u = np.array([5, t - 1], dtype=np.uint64)
    small = np.array([3, 1], dtype=np.uint64)
    large = np.array([3, 1 << 12], dtype=np.uint64)  # t·v would pass 2^63
    for v in (small, large):
        got = dl.scaled_down(u, t, v, 20)
        assert got.tolist() == [(int(a) + t * int(b)) >> 20 for a, b in zip(u, v)]
    assert dl.scaled_down(u, t, small, 80).tolist() == [0, 0]


def test_scales_beyond_the_sampler_go_to_opendp():
    assert dl.supports(2.0**52) and dl.supports(1e-150)
    assert not dl.supports(2.0**70) and not dl.supports(0.0) and not dl.supports(float("inf"))
    with pytest.raises(ValueError):
        dl.sample(2.0**70, 3, os.urandom)
    noisy = NoiseSource.secure().discrete_laplace(np.array([10, 20]), 2.0**70)
    assert noisy.dtype == np.int64 and noisy.shape == (2,)


def test_the_secure_source_adds_the_exact_noise_to_integers():
    source = NoiseSource.secure()
    values = np.arange(60_000).reshape(200, 300)
    noisy = source.discrete_laplace(values, 1.0)
    assert noisy.shape == values.shape and noisy.dtype == np.int64
    noise = (noisy - values).ravel()
    # Secure draws cannot be seeded: a wide bound that a correct sampler misses once in 10^9 runs.
    assert abs(noise.mean()) < 7 * math.sqrt(2 * math.e / (math.e - 1) ** 2 / noise.size)
    assert abs((noise == 0).mean() - (1 - math.exp(-1)) / (1 + math.exp(-1))) < 0.015
