"""Where the clients' coins come from: a secure source for real deployments, a seeded one for
simulations.

Local DP randomizes on the *client*, so what matters is that the coins of a real deployment
cannot be predicted or replayed. ``numpy.random.Generator(PCG64(secrets.randbits(128)))`` is not
enough: PCG64 is a statistical generator whose state can be recovered from its outputs. The
secure mode therefore reads every random bit from the operating system's CSPRNG
(``os.urandom``), in large blocks (one call per block of draws, never one per value), and turns
it into draws with exact integer arithmetic (:mod:`veil.randomness`):

* a Bernoulli(p) coin is ``k < T`` for a uniform 53-bit integer ``k`` and the integer threshold
  ``T = floor(p·2⁵³)`` (``rounding="down"``) or ``ceil(p·2⁵³)`` (``"up"``), so the coin's real
  probability is ``T/2⁵³`` exactly. The protocols round each probability in the direction that
  keeps the likelihood ratio at or below e^ε (keep-probabilities down, flip-to-one
  probabilities up), so rounding can only make a report *more* private, never less; the
  estimator's bias from it is below 2⁻⁵³ relative. ``k`` is compared with ``T`` a byte at a
  time from the top and drawn only as far as it ties, so a coin costs one random byte on
  average (1 + 1/255), not seven;
* a uniform integer in ``[0, m)`` is drawn by rejection from the fewest whole bytes that reach
  ``m`` (no modulo bias);
* a uniform 61-bit hash seed in ``[low, 2⁶¹ − 1)`` is the top 61 bits of a 64-bit word, with
  rejection.

The secure path thus costs about what the seeded one does: the operating system delivers random
bytes about as fast as NumPy's generator makes doubles. Simulations use the seeded mode
(``Randomness.seeded``): ``numpy.random.Generator``, reproducible, and labelled
``fit_for_release=False`` as in :mod:`veil.dp.noise`.
"""

from __future__ import annotations

import os

import numpy as np

from veil.errors import ParameterError
from veil.randomness import RandomSource, bernoulli_dyadic, uniform_below

__all__ = ["MERSENNE_61", "Randomness", "as_randomness"]

MERSENNE_61 = (1 << 61) - 1
_TWO53 = 1 << 53


def _shape(size) -> tuple[int, ...]:
    return (int(size),) if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)


class Randomness(RandomSource):
    """The client's coins: ``secure`` (OS CSPRNG, for deployments) or ``seeded`` (simulations)."""

    @classmethod
    def secure(cls) -> Randomness:
        """Coins from ``os.urandom``: cryptographically secure, not reproducible."""
        return cls(None, _secure=True)

    @property
    def description(self) -> str:
        if self._secure:
            return "secure: os.urandom (cryptographically secure), exact integer thresholds"
        return "seeded simulation: numpy.random.Generator, reproducible, NOT fit for release"

    # ---- raw words ------------------------------------------------------------------------------
    @staticmethod
    def _words(count: int) -> np.ndarray:
        """``count`` uniform 64-bit words from the OS CSPRNG."""
        return np.frombuffer(os.urandom(8 * count), dtype=np.uint64)

    # ---- draws ----------------------------------------------------------------------------------
    def uniform(self, size) -> np.ndarray:
        """Uniform floats on the grid {j·2⁻⁵³} in [0, 1)."""
        shape = _shape(size)
        if self._secure:
            n = int(np.prod(shape, dtype=np.int64))
            return ((self._words(n) >> np.uint64(11)).astype(np.float64) * 2.0**-53).reshape(shape)
        return self._rng.random(shape)

    def bernoulli(self, prob: float, size, rounding: str = "down") -> np.ndarray:
        """Boolean coins that are True with probability ``prob``.

        Secure mode realizes ``floor(prob·2⁵³)/2⁵³`` (``rounding="down"``) or
        ``ceil(prob·2⁵³)/2⁵³`` (``"up"``) exactly; see the module notes.
        """
        shape = _shape(size)
        if not self._secure:
            return self._rng.random(shape) < prob
        scaled = prob * _TWO53  # exact: multiplying by a power of two
        threshold = int(np.floor(scaled)) if rounding == "down" else int(np.ceil(scaled))
        n = int(np.prod(shape, dtype=np.int64))
        return bernoulli_dyadic(threshold, 53, n, os.urandom).reshape(shape)

    def integers(self, high: int, size) -> np.ndarray:
        """Uniform integers in ``[0, high)`` (int64), exactly uniform."""
        shape = _shape(size)
        if not self._secure:
            return self._rng.integers(0, high, size=shape, dtype=np.int64)
        n = int(np.prod(shape, dtype=np.int64))
        return uniform_below(int(high), os.urandom, n).astype(np.int64).reshape(shape)

    def hash_seeds(self, low: int, size: int) -> np.ndarray:
        """Uniform uint64 in ``[low, 2⁶¹ − 1)``: the ``a`` (low 1) and ``b`` (low 0) of a hash."""
        if not self._secure:
            return self._rng.integers(low, MERSENNE_61, size=int(size), dtype=np.uint64)
        n = int(size)
        out = np.empty(n, dtype=np.uint64)
        filled = 0
        while filled < n:
            words = self._words(n - filled + 8) >> np.uint64(3)
            words = words[(words < np.uint64(MERSENNE_61)) & (words >= np.uint64(low))]
            take = min(len(words), n - filled)
            out[filled:filled + take] = words[:take]
            filled += take
        return out


def as_randomness(rng: Randomness | np.random.Generator | int | None) -> Randomness:
    """Normalize the ``rng=`` argument of a client: ``None`` → secure; a ``Randomness`` → itself;
    a ``numpy.random.Generator`` or an ``int`` seed → a seeded simulation (not fit for release)."""
    if rng is None:
        return Randomness.secure()
    if isinstance(rng, Randomness):
        return rng
    if isinstance(rng, (np.random.Generator, int, np.integer)) and not isinstance(rng, bool):
        return Randomness.seeded(rng)
    raise ParameterError("rng must be None (secure), a veil.ldp.Randomness, a numpy.random.Generator "
                         "or an integer seed.")
