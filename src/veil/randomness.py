"""What every source of randomness in veil shares: a secure mode for real releases and a seeded
mode for reproducible experiments, which says it is not fit for release."""

from __future__ import annotations

import secrets

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
