"""Exact coins for the αβ algorithm, drawn from uniform 64-bit words.

The αβ algorithm (Rastogi, Suciu and Hong, VLDB 2007, Section 4) flips one coin per tuple of the
domain D: a tuple of the instance I is kept with probability α + β, a tuple of D \\ I is inserted
with probability β. Its privacy theorem (4.3) holds for those probabilities exactly, so the coins
here realize them exactly, with no floating point anywhere:

* **A Bernoulli coin** with probability ``t`` is ``U < t`` for a uniform real ``U`` in [0, 1),
  read lazily as 64-bit words: the first word ``w`` decides the coin unless ``t·2⁶⁴`` lies in
  ``[w, w + 1)``, which happens with probability 2⁻⁶⁴ or less; then further words are read, one at
  a time, until the coin is decided. ``t`` is either a rational number (α + β and β are exact
  fractions, see :mod:`.parameters`) or a number known through bounds that can be made as tight
  as needed (the ones below); every decision is certain, never rounded.
* **The Bernoulli process** over ``N`` positions (every position chosen independently with
  probability ``p``): the gaps between chosen positions are geometric, and the binary digits of a
  geometric variable are independent: digit ``i`` of a gap is 1 with probability
  ``x/(1 + x)``, ``x = q^(2^i)``, ``q = 1 − p``, and the gap reaches ``2^B`` with probability
  ``q^(2^B)``. So a gap is ``B + 1`` Bernoulli coins, with ``2^B > N``; these probabilities are
  bounded by repeated squaring in integer fixed point, rounding down for the lower bound and up
  for the upper one. Drawing the gaps costs ``O(log N)`` words per chosen position, so a domain of
  10⁹ tuples, of which some 30,000 are inserted, takes a few megabytes of randomness, not 10⁹
  coins. The number of chosen positions is Binomial(N, p), and given that number they are a
  uniform subset of the positions: exactly the binomial count and the uniform draw without
  replacement the algorithm asks for.

:class:`Coins` supplies the words: ``Coins.secure()`` reads them from the operating system's
CSPRNG (``os.urandom``) in bulk, for a real release; ``Coins.seeded(seed)`` from a
``numpy.random.Generator``, reproducible and labelled not fit for release (as
:class:`veil.dp.noise.NoiseSource` and :class:`veil.ldp.Randomness` do).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Protocol

import numpy as np

from veil.errors import ParameterError
from veil.randomness import RandomSource

__all__ = ["Coins", "RationalProbability", "bernoulli", "bernoulli_process"]

_WORD = 64
_FIRST_BITS = 2 * _WORD        # precision of the bounds the first word is compared with
_BATCH = 1 << 18               # gaps drawn per round of the Bernoulli process (bounds memory)


class Coins(RandomSource):
    """Uniform 64-bit words: ``secure`` (the OS CSPRNG, for releases) or ``seeded`` (experiments)."""

    @classmethod
    def secure(cls) -> "Coins":
        """Words from ``os.urandom``: cryptographically secure, not reproducible."""
        return cls(None, _secure=True)

    @property
    def description(self) -> str:
        if self._secure:
            return "secure: os.urandom (cryptographically secure), exact integer comparisons"
        return "seeded experiment: numpy.random.Generator, reproducible, NOT fit for release"

    def words(self, count: int) -> np.ndarray:
        """``count`` independent uniform 64-bit words (``uint64``)."""
        if self._secure:
            return np.frombuffer(os.urandom(8 * count), dtype=np.uint64)
        return self._rng.integers(0, 1 << 64, size=count, dtype=np.uint64)


def as_coins(rng: "Coins | np.random.Generator | int | None") -> Coins:
    """Normalize an ``rng`` argument: ``None`` → secure; a :class:`Coins` → itself; a
    ``numpy.random.Generator`` or a seed → seeded (not fit for release).

    Raises:
        ParameterError: anything else, or a negative seed.
    """
    if rng is None:
        return Coins.secure()
    if isinstance(rng, Coins):
        return rng
    if isinstance(rng, (np.random.Generator, int, np.integer)) and not isinstance(rng, bool):
        return Coins.seeded(rng)
    raise ParameterError("rng must be None (secure), a veil Coins source, a numpy.random.Generator or an "
                         "integer seed.")


class Probability(Protocol):
    """A probability ``t`` in [0, 1] known through integer bounds at any precision."""

    def bounds(self, bits: int) -> tuple[int, int]:
        """Integers ``lo ≤ t·2^bits ≤ hi``, with ``hi − lo`` bounded independently of ``bits``."""


@dataclass(frozen=True)
class RationalProbability:
    """A rational probability, e.g. the α + β or the β of the αβ algorithm."""

    value: Fraction

    def bounds(self, bits: int) -> tuple[int, int]:
        lo, rest = divmod(self.value.numerator << bits, self.value.denominator)
        return lo, lo + (rest != 0)


@lru_cache(maxsize=512)
def _power_bounds(q: Fraction, exponent_log2: int, bits: int) -> tuple[int, int]:
    """Integers ``lo ≤ q^(2^exponent_log2)·2^bits ≤ hi`` for ``0 ≤ q ≤ 1``.

    Each squaring at precision ``P`` at most doubles the width of the bounds and adds 2, so
    ``exponent_log2 + 4`` guard bits keep the width at ``bits`` within a few units.
    """
    precision = bits + exponent_log2 + 4
    lo, rest = divmod(q.numerator << precision, q.denominator)
    hi = lo + (rest != 0)
    for _ in range(exponent_log2):
        lo = (lo * lo) >> precision
        hi = -((-(hi * hi)) >> precision)          # ceiling division by 2^precision
    shift = precision - bits
    return lo >> shift, -((-hi) >> shift)


@dataclass(frozen=True)
class _GeometricDigit:
    """Probability that binary digit ``i`` of a geometric gap with failure probability ``q`` is 1:
    ``x/(1 + x)`` with ``x = q^(2^i)``."""

    q: Fraction
    i: int

    def bounds(self, bits: int) -> tuple[int, int]:
        lo, hi = _power_bounds(self.q, self.i, bits)
        one = 1 << bits
        # x/(1 + x) increases with x; at precision ``bits`` it is X·2^bits/(2^bits + X).
        return (lo << bits) // (one + lo), -((-(hi << bits)) // (one + hi))


@dataclass(frozen=True)
class _GeometricTail:
    """Probability that a geometric gap with failure probability ``q`` reaches ``2^B``: ``q^(2^B)``."""

    q: Fraction
    b: int

    def bounds(self, bits: int) -> tuple[int, int]:
        return _power_bounds(self.q, self.b, bits)


def _less_than(words: np.ndarray, bound: int) -> np.ndarray:
    """``words < bound`` for an integer bound in [0, 2⁶⁴]."""
    if bound >= 1 << _WORD:
        return np.ones(words.shape, dtype=bool)
    return words < np.uint64(bound)


def _settle(coins: Coins, probability: Probability, prefix: int) -> bool:
    """Decide a coin whose first word ``prefix`` did not: read more words until ``U < t`` or
    ``U ≥ t`` is certain (the loop runs once with probability about 1 − 2⁻⁶⁴)."""
    bits = _WORD
    while True:
        prefix = (prefix << _WORD) | int(coins.words(1)[0])
        bits += _WORD
        lo, hi = probability.bounds(bits + _WORD)
        if (prefix + 1) << _WORD <= lo:
            return True
        if prefix << _WORD >= hi:
            return False


def bernoulli(coins: Coins, probability: Probability | Fraction, size: int) -> np.ndarray:
    """``size`` independent coins, each True with probability ``probability`` exactly.

    Args:
        coins: the source of words.
        probability: a :class:`fractions.Fraction` in [0, 1], or any object with ``bounds``.
        size: the number of coins.

    Returns:
        A boolean array of length ``size``.

    Raises:
        ParameterError: a rational probability outside [0, 1].
    """
    if isinstance(probability, Fraction):
        if not 0 <= probability <= 1:
            raise ParameterError(f"a probability must lie in [0, 1], not {probability}.")
        probability = RationalProbability(probability)
    size = int(size)
    if size == 0:
        return np.zeros(0, dtype=bool)
    words = coins.words(size)
    lo, hi = probability.bounds(_FIRST_BITS)
    # The word w holds U in [w, w + 1)·2⁻⁶⁴: surely below t when (w + 1)·2⁶⁴ ≤ lo, surely not
    # when w·2⁶⁴ ≥ hi; between the two the next words decide.
    surely_below = lo >> _WORD
    surely_not = -((-hi) >> _WORD)
    out = _less_than(words, surely_below)
    undecided = np.flatnonzero(~out & _less_than(words, surely_not))
    for index in undecided:
        out[index] = _settle(coins, probability, int(words[index]))
    return out


def bernoulli_process(coins: Coins, count: int, probability: Fraction) -> np.ndarray:
    """The positions in ``[0, count)`` chosen when each is chosen independently with
    ``probability`` (exactly), sorted, without enumerating the positions.

    Their number is Binomial(``count``, ``probability``), and given it they are a uniform subset.
    Gaps between chosen positions are geometric, drawn digit by digit (see the module notes);
    the work is proportional to the number of positions chosen times ``log2(count)``.

    Args:
        coins: the source of words.
        count: the number of positions, below 2⁶³.
        probability: a fraction in [0, 1].

    Returns:
        ``int64`` positions, strictly increasing.

    Raises:
        ParameterError: a probability outside [0, 1] or a count outside [0, 2⁶³).
    """
    count = int(count)
    if not 0 <= count < 1 << 63:
        raise ParameterError(f"the Bernoulli process needs between 0 and 2^63 - 1 positions, not {count}.")
    if not 0 <= probability <= 1:
        raise ParameterError(f"a probability must lie in [0, 1], not {probability}.")
    if count == 0 or probability == 0:
        return np.zeros(0, dtype=np.int64)
    if probability == 1:
        return np.arange(count, dtype=np.int64)
    q = 1 - Fraction(probability)
    digits = count.bit_length()                      # 2^digits > count: a longer gap ends the process
    coin_of_digit = [_GeometricDigit(q, i) for i in range(digits)]
    tail = _GeometricTail(q, digits)
    limit = np.uint64(count)
    chunks = []
    start = 0                                        # the first position not yet decided
    expected = float(count * probability)
    while True:
        remaining = expected * (count - start) / count
        size = int(min(_BATCH, remaining + 4.0 * math.sqrt(remaining) + 16))
        gaps = np.zeros(size, dtype=np.uint64)
        for i, digit in enumerate(coin_of_digit):
            gaps |= bernoulli(coins, digit, size).astype(np.uint64) << np.uint64(i)
        too_long = bernoulli(coins, tail, size)
        # A gap of at least 2^digits (too_long) or a position past the end stops the process.
        # Positions stay below 2·count ≤ 2⁶⁴ up to the first one past the end, so the uint64
        # sums cannot wrap before it.
        steps = np.minimum(gaps + np.uint64(1), limit)
        positions = np.uint64(start) + np.cumsum(steps, dtype=np.uint64) - np.uint64(1)
        stop = np.flatnonzero(too_long | (positions >= limit))
        if stop.size:
            chunks.append(positions[:stop[0]].astype(np.int64))
            break
        chunks.append(positions.astype(np.int64))
        start = int(positions[-1]) + 1
        if start >= count:
            break
    return np.concatenate(chunks)
