"""Exact discrete Laplace noise from random bytes, vectorized.

The discrete Laplace distribution of scale b has P(Z = z) = (1 − a)/(1 + a) · a^|z| with
a = exp(−1/b). Canonne, Kamath and Steinke ("The Discrete Gaussian for Differential Privacy",
NeurIPS 2020, Algorithms 1 and 2) draw it exactly with integer arithmetic only, for a scale
that is a ratio of integers b = t/s; every float is one (``b.as_integer_ratio()``, s a power of
two), so the draw follows the distribution of the float scale exactly, with no rounding
anywhere. It is the algorithm OpenDP's sampler implements; OpenDP asks the operating system for
a few bytes at a time, per sample, while here every step runs on all the samples still drawing
and the bytes come in large blocks (:mod:`veil.randomness`), about a hundred per sample.

Algorithm 2 (discrete Laplace of scale t/s), repeated until it returns:

1. U uniform in {0, …, t − 1}; D ~ Bernoulli(exp(−U/t)); restart if D = 0.
2. V = the number of successes of Bernoulli(exp(−1)) before the first failure.
3. X = U + t·V, Y = ⌊X/s⌋, B ~ Bernoulli(1/2); restart if B = 1 and Y = 0.
4. Return (1 − 2B)·Y.

Algorithm 1 (Bernoulli(exp(−γ)) for a rational γ = n/d in [0, 1]): K = 1; while
Bernoulli(γ/K) succeeds, K = K + 1; the coin is 1 when K is odd. Bernoulli(γ/K) is drawn as
Bernoulli(n/d) and Bernoulli(1/K) together, each a uniform integer compared with its numerator.
"""

from __future__ import annotations

import numpy as np

from veil.randomness import BytePool, RandomBytes, bernoulli_dyadic, bernoulli_ratio, uniform_below

# The largest scale numerator t drawn with 64-bit words; veil's integer noise scales stay below
# 2^52 (MAX_INTEGER_SCALE), whose numerators have at most 53 bits.
MAX_NUMERATOR_BITS = 62
# Candidates tried in one round when few draws are left (a round's fixed cost is then what counts).
_SMALL_ROUND = 1 << 14
# Bernoulli(exp(−1)) coins drawn per draw at a time for V.
_COINS = 3


def supports(scale: float) -> bool:
    """Whether :func:`sample` draws this scale (a positive finite float whose numerator t, once
    the scale is written t/2^k, fits in 62 bits: every scale up to 2^62)."""
    return scale > 0 and np.isfinite(scale) and scale.as_integer_ratio()[0].bit_length() <= MAX_NUMERATOR_BITS


def sample(scale: float, size: int, random_bytes: RandomBytes) -> np.ndarray:
    """``size`` independent draws of discrete Laplace noise of scale ``scale``, exactly (int64).

    Each round tries several candidates per draw still running (a candidate is accepted with
    probability about 1/2) and keeps each draw's first accepted one: independent candidates
    taken in order are what repeating Algorithm 2 until it returns does, in fewer rounds.

    Args:
        scale: b > 0, with P(z) ∝ exp(−|z|/b); see :func:`supports`.
        size: the number of draws.
        random_bytes: the source of uniform bytes (``os.urandom`` for a release).

    Raises:
        ValueError: a scale :func:`supports` refuses.
    """
    if not supports(scale):
        raise ValueError(f"discrete Laplace noise of scale {scale!r} is beyond the exact sampler")
    t, s = float(scale).as_integer_ratio()
    shift = s.bit_length() - 1  # s = 2^shift
    # About a hundred bytes make a draw: blocks of that order, so that a few draws read little.
    random_bytes = BytePool(random_bytes, block=min(1 << 16, 4096 + 64 * size))
    out = np.empty(size, dtype=np.int64)
    pending = np.arange(size)
    while len(pending):
        # Few draws left: more candidates each, since a round's cost is then mostly fixed.
        tries = max(1, min(8, _SMALL_ROUND // len(pending)))
        owner = np.repeat(pending, tries)
        u = uniform_below(t, random_bytes, size=len(owner))
        accepted = np.flatnonzero(bernoulli_exp(u, t, random_bytes))
        u, owner = u[accepted], owner[accepted]
        v = geometric_exp1(len(u), random_bytes)
        y = scaled_down(u, t, v, shift)
        negative = bernoulli_dyadic(1, 1, len(u), random_bytes)
        kept = np.flatnonzero(~(negative & (y == 0)))
        owner = owner[kept]
        # A draw's first accepted candidate: candidates of one draw are adjacent, in order.
        first = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]) if len(owner) else owner
        out[owner[first]] = np.where(negative, -y, y)[kept[first]]
        done = np.zeros(size, dtype=bool)
        done[owner[first]] = True
        pending = pending[~done[pending]]
    return out


def bernoulli_exp(numerator: np.ndarray, denominator: int, random_bytes: RandomBytes) -> np.ndarray:
    """Coins that are True with probability exp(−numerator/denominator), exactly, for
    ``numerator`` (uint64, one per coin) at most ``denominator`` (CKS20 Algorithm 1).

    Every coin still running in a round has the same K (the round's number), so Bernoulli(1/K)
    is one fraction for all of them."""
    coin = np.ones(len(numerator), dtype=bool)  # K = 1 is odd
    running = np.flatnonzero(numerator > 0)  # γ = 0: the first Bernoulli(0) fails at once
    k = 1
    while len(running):
        if k > 1:
            running = running[bernoulli_ratio(1, k, len(running), random_bytes)]
        running = running[bernoulli_ratio(numerator[running], denominator, len(running), random_bytes)]
        coin[running] = ~coin[running]  # K ← K + 1 changes its parity
        k += 1
    return coin


def geometric_exp1(size: int, random_bytes: RandomBytes) -> np.ndarray:
    """The number of successes of Bernoulli(exp(−1)) before the first failure, per draw (uint64):
    P(V = v) = e^(−v)·(1 − e^(−1)). The coins come :data:`_COINS` per draw at a time; a draw
    whose coins all succeed (e^−3, 5 %) goes on with more."""
    v = np.zeros(size, dtype=np.uint64)
    running = np.arange(size)
    while len(running):
        coins = bernoulli_exp(np.ones(len(running) * _COINS, dtype=np.uint64), 1, random_bytes)
        coins = coins.reshape(len(running), _COINS)
        successes = np.argmin(coins, axis=1)  # the first failure; 0 when none (see below)
        all_succeed = coins.all(axis=1)
        v[running] += np.where(all_succeed, _COINS, successes).astype(np.uint64)
        running = running[all_succeed]
    return v


def scaled_down(u: np.ndarray, t: int, v: np.ndarray, shift: int) -> np.ndarray:
    """⌊(u + t·v) / 2^shift⌋ per draw (u < t), exactly, as int64: in 64-bit words when no
    u + t·v can reach 2^63, else with Python's integers."""
    if int(v.max(initial=0)) < 1 << (63 - t.bit_length()):
        x = u + np.uint64(t) * v
        if shift >= 64:
            return np.zeros(len(x), dtype=np.int64)
        return (x >> np.uint64(shift)).astype(np.int64)
    return np.array([(int(a) + t * int(b)) >> shift for a, b in zip(u, v)], dtype=np.int64)
