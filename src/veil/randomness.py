"""What every source of randomness in veil shares: a secure mode for real releases and a seeded
mode for reproducible experiments, which says it is not fit for release."""

from __future__ import annotations

import secrets
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

class BytePool:
    """Bytes from ``random_bytes`` read in blocks of at least ``block`` and handed out in order,
    each byte once: many small draws cost one system call per block, not one each."""

    def __init__(self, random_bytes: RandomBytes, block: int = 1 << 16):
        self._random_bytes = random_bytes
        self._block = block
        self._buffer = b""
        self._used = 0

    def __call__(self, n: int) -> bytes:
        if self._used + n > len(self._buffer):
            rest = self._buffer[self._used:]
            self._buffer, self._used = rest + self._random_bytes(max(self._block, n - len(rest))), 0
        out = self._buffer[self._used:self._used + n]
        self._used += n
        return out


_WIDTHS = ((1, np.dtype(np.uint8)), (2, np.dtype("<u2")), (4, np.dtype("<u4")), (8, np.dtype("<u8")))


def _words_below_multiple(bound: int, size: int, random_bytes: RandomBytes) -> tuple[np.ndarray, int]:
    """``size`` uniform whole numbers in ``[0, q·bound)``, with ``q`` as large as the fewest whole
    bytes that reach ``bound`` allow, and ``q``. A word in the incomplete top stretch is drawn
    again (rejection), so every value below ``q·bound`` is equally likely."""
    width, dtype = next((w, d) for w, d in _WIDTHS if bound <= 1 << (8 * w))
    span = 1 << (8 * width)
    q = span // bound
    words = np.frombuffer(random_bytes(width * size), dtype=dtype)
    if q * bound == span:
        return words, q
    limit = dtype.type(q * bound)
    redo = np.flatnonzero(words >= limit)
    if len(redo):
        words = words.copy()
    while len(redo):
        again = np.frombuffer(random_bytes(width * len(redo)), dtype=dtype)
        words[redo] = again
        redo = redo[again >= limit]
    return words, q


def uniform_below(high: int, random_bytes: RandomBytes, size: int) -> np.ndarray:
    """``size`` uniform integers in ``[0, high)``, exactly (``uint64``): ⌊w/q⌋ for a uniform ``w``
    in ``[0, q·high)`` (see :func:`_words_below_multiple`), so no value is favoured."""
    if high == 1:
        return np.zeros(size, dtype=np.uint64)
    words, q = _words_below_multiple(int(high), size, random_bytes)
    return (words // q).astype(np.uint64, copy=False)


def bernoulli_ratio(numerator: np.ndarray | int, denominator: int, size: int,
                    random_bytes: RandomBytes) -> np.ndarray:
    """Coins that are True with probability ``numerator / denominator`` exactly (numerators of
    0 to ``denominator``, one for all coins or one per coin): ``w < numerator·q`` for a uniform
    ``w`` in ``[0, q·denominator)``."""
    if denominator == 1 or np.isscalar(numerator) and numerator in (0, denominator):
        return np.broadcast_to(np.asarray(numerator) >= denominator, (size,)).copy()
    words, q = _words_below_multiple(int(denominator), size, random_bytes)
    return words < np.asarray(numerator, dtype=np.uint64) * np.uint64(q)


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


def secure_permutation(n: int) -> np.ndarray:
    """A uniformly random order of ``0 .. n-1`` drawn from the operating system's secure source.

    Each position gets a 64-bit key from :func:`secrets.token_bytes` and the positions are sorted
    by key (a stable sort, so the rare equal keys, with probability below n²/2⁶⁵, keep their
    order). Used to shuffle released rows, so that two releases of one table cannot be joined by
    position (Sweeney's unsorted matching attack) and the order reveals nothing reproducible.

    Args:
        n: the number of positions, at least 0.

    Raises:
        ParameterError: ``n`` is negative.
    """
    if n < 0:
        raise ParameterError(f"a permutation needs 0 or more positions, not {n}.")
    keys = np.frombuffer(secrets.token_bytes(8 * n), dtype=np.uint64)
    return np.argsort(keys, kind="stable").astype(np.int64)
