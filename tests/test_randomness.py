"""Exact draws from random bytes (veil.randomness): proven on every input by enumeration where the
input space is small, and checked statistically on a seeded byte stream where it is not."""

from __future__ import annotations

import math

import numpy as np
import pytest

from veil.randomness import BytePool, bernoulli_dyadic, bernoulli_ratio, uniform_below


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
    # Below 3 from single bytes: words from 255 = 3·85 up are drawn again; ⌊w/85⌋ is the draw.
    source = Scripted(bytes([255, 7, 200]), bytes([4]))
    assert uniform_below(3, source, 3).tolist() == [0, 0, 2]
    # A bound of 1 needs no byte; a bound above 2^32 reads 8-byte words.
    assert uniform_below(1, Scripted(), 5).tolist() == [0] * 5
    word = (5 << 20).to_bytes(8, "little")
    assert uniform_below(1 << 40, Scripted(word), 1).tolist() == [5 << 20 >> 24]


@pytest.mark.parametrize("denominator", [3, 7, 256, 1000, (1 << 53) - 1])
def test_a_ratio_coin_is_exact_on_every_accepted_word(denominator):
    # Enumerate every accepted one-byte word where the denominator allows it; larger ones statistically.
    if denominator <= 256:
        q = 256 // denominator
        words = np.arange(q * denominator, dtype=np.uint8)
        for numerator in range(denominator + 1):
            coins = bernoulli_ratio(numerator, denominator, len(words), Scripted(words.tobytes()) if
                                    0 < numerator < denominator else Scripted())
            assert coins.sum() == numerator * q  # each accepted word is one of q·d equally likely ones
    else:
        numerators = np.array([1, denominator // 3, denominator - 1], dtype=np.uint64)
        n = 300_000
        coins = bernoulli_ratio(np.repeat(numerators, n), denominator, 3 * n, seeded_bytes(denominator % 97))
        for i, numerator in enumerate(numerators):
            p = int(numerator) / denominator
            assert abs(coins[i * n:(i + 1) * n].mean() - p) <= 6 * math.sqrt(p * (1 - p) / n) + 1e-9


def test_uniform_draws_cover_every_value_evenly():
    for bound in (7, 300, 1 << 20, (1 << 63) + 5):
        draws = uniform_below(bound, seeded_bytes(bound % 1000), 70_000)
        assert draws.dtype == np.uint64 and int(draws.max()) < bound
        if bound == 7:
            counts = np.bincount(draws.astype(np.int64), minlength=7)
            chi2 = ((counts - 10_000) ** 2 / 10_000).sum()
            assert chi2 < 30  # 6 degrees of freedom: P(chi2 > 30) < 1e-4
        else:
            # The top half of the range holds about half the draws.
            assert abs((draws >= np.uint64(bound // 2)).mean() - 0.5) < 0.02


def test_a_byte_pool_hands_out_each_byte_once_in_order():
    stream = np.random.default_rng(3).bytes(1 << 20)
    position = 0

    def source(n: int) -> bytes:
        nonlocal position
        position += n
        return stream[position - n:position]

    pool = BytePool(source, block=1000)
    got = b"".join(pool(n) for n in (1, 999, 5, 3000, 2))
    assert got == stream[:len(got)] and len(got) == 4007
