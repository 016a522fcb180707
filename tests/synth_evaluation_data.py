"""Code tables for the tests of veil.synth.evaluation: a chain of dependent columns, so that
marginals carry structure and records are mostly unique."""

from __future__ import annotations

import numpy as np

NAMES = ("a", "b", "c", "d", "e", "f", "g", "h")
SIZES = (6, 8, 5, 9, 7, 10, 6, 8)


def chain(n: int, rng: np.random.Generator, sizes=SIZES, stay: float = 0.6) -> np.ndarray:
    """n records: column 0 uniform, each next column the previous code (mod its size) with
    probability ``stay``, else uniform."""
    out = np.empty((n, len(sizes)), dtype=np.int64)
    out[:, 0] = rng.integers(sizes[0], size=n)
    for j in range(1, len(sizes)):
        keep = rng.random(n) < stay
        out[:, j] = np.where(keep, out[:, j - 1] % sizes[j], rng.integers(sizes[j], size=n))
    return out
