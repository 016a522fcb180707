"""Exact draws from random bytes (veil.randomness): proven on every input by enumeration where the
input space is small, and checked statistically on a seeded byte stream where it is not."""

from __future__ import annotations

import math

import numpy as np
import pytest

from veil.randomness import bernoulli_dyadic, uniform_below


class Scripted:
    """A byte source that hands out given blocks, one per call, and checks the sizes asked for."""

    def __init__(self, *blocks: bytes):
        self.blocks = list(blocks)

    def __call__(self, n: int) -> bytes:
        block = self.blocks.pop(0)
        assert len(block) == n, (len(block), n)
        return block


def seeded_bytes(seed: int):
    return np.random.default_rng(seed).bytes


@pytest.mark.parametrize("numerator", [0, 1, 255, 256, 0x1234, 0x8000, 0xFFFF, 0x10000])
def test_a_dyadic_coin_is_exactly_k_below_the_numerator_for_every_16_bit_k(numerator):
    k = np.arange(1 << 16)
    high, low = (k >> 8).astype(np.uint8), (k & 0xFF).astype(np.uint8)
    if numerator in (0, 1 << 16):
        source = Scripted()  # a certain coin reads no byte
    else:
        tied = high == numerator >> 8
        source = Scripted(high.tobytes(), low[tied].tobytes())
    coins = bernoulli_dyadic(numerator, 16, len(k), source)
    assert np.array_equal(coins, k < numerator)


def test_a_dyadic_coin_with_bits_not_a_multiple_of_8_is_exact():
    # 3/2^11: k (11 bits) < 3, read as k' = 32k < 96 over two bytes.
    k = np.arange(1 << 11)
    aligned = k << 5
    high, low = (aligned >> 8).astype(np.uint8), (aligned & 0xFF).astype(np.uint8)
    source = Scripted(high.tobytes(), low[high == 0].tobytes())
    assert np.array_equal(bernoulli_dyadic(3, 11, len(k), source), k < 3)


def test_a_coin_reads_one_byte_unless_it_ties():
    reads = []

    def counting(n: int) -> bytes:
        reads.append(n)
        return np.random.default_rng(len(reads)).bytes(n)

    bernoulli_dyadic(int(0.3 * 2**53), 53, 100_000, counting)
    assert reads[0] == 100_000 and sum(reads[1:]) < 100_000 / 255 * 2


@pytest.mark.parametrize("p", [0.3, 1 / 3, 2**-40, 0.5, 1 - 2**-53])
def test_coins_have_their_rate(p):
    numerator, denominator = p.as_integer_ratio()
    bits = denominator.bit_length() - 1
    n = 400_000
    coins = bernoulli_dyadic(numerator, bits, n, seeded_bytes(7))
    assert abs(coins.mean() - p) <= 6 * math.sqrt(p * (1 - p) / n) + 1e-12


def test_a_probability_outside_0_1_is_refused():
    with pytest.raises(ValueError):
        bernoulli_dyadic(5, 2, 10, seeded_bytes(0))


def test_uniform_draws_reject_the_incomplete_top_stretch():
    # Below 3 from single bytes: 255 is rejected (255 = 3·85 is the first byte outside), 4 gives 1.
    source = Scripted(bytes([255, 7]), bytes([4]))
    assert uniform_below(np.array([3, 3], dtype=np.uint64), source).tolist() == [1, 1]
    # A bound of 1 needs no byte; a bound above 2^32 reads 8-byte words.
    assert uniform_below(1, Scripted(), size=5).tolist() == [0] * 5
    word = (5).to_bytes(8, "little")
    assert uniform_below(np.array([1 << 40], dtype=np.uint64), Scripted(word)).tolist() == [5]


def test_uniform_draws_cover_every_value_evenly():
    bounds = np.array([7, 300, 1 << 20, (1 << 63) + 5], dtype=np.uint64)
    for bound in bounds:
        draws = uniform_below(bound, seeded_bytes(int(bound % 1000)), size=70_000)
        assert draws.dtype == np.uint64 and int(draws.max()) < int(bound)
        if bound == 7:
            counts = np.bincount(draws.astype(np.int64), minlength=7)
            expected = 10_000
            chi2 = ((counts - expected) ** 2 / expected).sum()
            assert chi2 < 30  # 6 degrees of freedom: P(chi2 > 30) < 1e-4
        else:
            # The top half of the range holds about half the draws.
            assert abs((draws >= np.uint64(int(bound) // 2)).mean() - 0.5) < 0.02
