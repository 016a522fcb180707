"""What every source of randomness in veil shares: a secure mode for real releases and a seeded
mode for reproducible experiments, which says it is not fit for release."""

from __future__ import annotations

from typing import Callable

import numpy as np

from veil.errors import ParameterError


class RandomSource:
    """Base of :class:`veil.dp.noise.NoiseSource` and :class:`veil.ldp.randomness.Randomness`.

    Subclasses provide ``secure()`` (their cryptographically secure draws) and ``description``.
    """

    def __init__(self, rng: np.random.Generator | None, *, _secure: bool) -> None:
        self._rng = rng
        self._secure = _secure

    @classmethod
    def seeded(cls, seed: int | np.random.Generator | np.random.SeedSequence):
        """Reproducible draws from ``numpy.random.Generator``: for experiments, never for release.

        Raises:
            ParameterError: ``seed`` is neither a whole number >= 0, a SeedSequence nor a Generator.
        """
        if isinstance(seed, np.random.Generator):
            return cls(seed, _secure=False)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer, np.random.SeedSequence)):
            raise ParameterError("a seeded source needs an integer seed or a numpy.random.Generator.")
        if isinstance(seed, (int, np.integer)) and seed < 0:
            # numpy's SeedSequence takes only non-negative entropy
            raise ParameterError(f"a seed must be a whole number >= 0, got {int(seed)}.")
        return cls(np.random.default_rng(seed), _secure=False)

    @property
    def fit_for_release(self) -> bool:
        """True only for the secure source; a seeded run is an experiment."""
        return self._secure

    def __repr__(self) -> str:
        return f"{type(self).__name__}({'secure' if self._secure else 'seeded'})"


# Exact draws from random bytes. Every secure source reads the operating system's CSPRNG in large
# blocks (``os.urandom``, one call per block, never one per value) and turns the bytes into draws
# with integer arithmetic only, so each draw has exactly the distribution it claims.

RandomBytes = Callable[[int], bytes]

_WIDTHS = ((1, np.uint8), (2, np.dtype("<u2")), (4, np.dtype("<u4")), (8, np.dtype("<u8")))


def uniform_below(high: np.ndarray | int, random_bytes: RandomBytes, size: int | None = None) -> np.ndarray:
    """Uniform integers in ``[0, high)``, exactly: each is a random whole number of the fewest
    bytes that reach ``high``, redrawn while it lies in the incomplete top stretch
    ``[width − width mod high, width)`` (rejection, so no value is favoured), then taken mod ``high``.

    Args:
        high: the bound of each draw (``uint64``, at least 1), or one bound for ``size`` draws.
        random_bytes: the source of uniform bytes, e.g. ``os.urandom``.
        size: the number of draws when ``high`` is one number.

    Returns:
        ``uint64`` array, one draw per bound.
    """
    high = np.asarray(high, dtype=np.uint64)
    if size is not None:
        high = np.full(size, high, dtype=np.uint64)
    out = np.zeros(len(high), dtype=np.uint64)
    pending = np.flatnonzero(high > 1)  # [0, 1) holds 0 alone
    if not len(pending):
        return out
    top = int(high[pending].max())
    width, dtype = next((w, d) for w, d in _WIDTHS if top <= 1 << (8 * w))
    bound = high[pending]
    # The number of accepted words: the largest multiple of the bound that fits.
    if width < 8:
        accept = np.uint64(1 << (8 * width)) - np.uint64(1 << (8 * width)) % bound
        every = np.zeros(len(bound), dtype=bool)
    else:
        rest = (np.uint64(0) - bound) % bound  # 2^64 mod bound
        accept, every = np.uint64(0) - rest, rest == 0
    while len(pending):
        words = np.frombuffer(random_bytes(width * len(pending)), dtype=dtype).astype(np.uint64)
        ok = every | (words < accept)
        out[pending[ok]] = words[ok] % bound[ok]
        pending, bound, accept, every = pending[~ok], bound[~ok], accept[~ok], every[~ok]
    return out


def bernoulli_dyadic(numerator: int, bits: int, size: int, random_bytes: RandomBytes) -> np.ndarray:
    """Coins that are True with probability ``numerator / 2**bits`` exactly.

    A coin is ``k < numerator`` for a uniform ``bits``-bit integer ``k``, compared a byte at a
    time from the most significant one: the first byte that differs from the threshold's
    decides, so a coin reads one byte unless it ties (probability 1/256 per byte). Every float
    probability is such a fraction (its exact value: ``p.as_integer_ratio()``).

    Raises:
        ValueError: the probability is not in [0, 1].
    """
    if not 0 <= numerator <= 1 << bits:
        raise ValueError(f"{numerator}/2**{bits} is not a probability")
    if numerator in (0, 1 << bits):
        return np.full(size, numerator > 0, dtype=bool)
    width = -(-bits // 8)
    # k < numerator exactly when the byte-aligned k' = k·2^pad is below numerator·2^pad.
    threshold = (numerator << (8 * width - bits)).to_bytes(width, "big")
    drawn = np.frombuffer(random_bytes(size), dtype=np.uint8)
    out = drawn < threshold[0]
    pending = np.flatnonzero(drawn == threshold[0])
    for byte in threshold[1:]:
        if not len(pending):
            break
        drawn = np.frombuffer(random_bytes(len(pending)), dtype=np.uint8)
        out[pending] = drawn < byte
        pending = pending[drawn == byte]
    return out  # a k equal to the threshold on every byte is not below it: False, as set
