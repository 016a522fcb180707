"""The distance planar Laplace noise moves a location: its CDF and inverse CDF.

Planar Laplace (Andrés, Bordenabe, Chatzikokolakis and Palamidessi, "Geo-indistinguishability",
CCS 2013) draws a uniform angle and a radius with density ε²·r·e^{−εr}, a Gamma(2, 1/ε)
distribution. The mechanism (:class:`veil.dp.mechanisms.PlanarLaplace`) reads its error bound
from the inverse CDF; the seeded noise source (:meth:`veil.dp.noise.NoiseSource.gamma2`) draws the
radius through it. Both import it from here, so neither depends on the other.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["planar_radius_cdf", "planar_radius_quantile"]


def planar_radius_cdf(r: Any, epsilon: float) -> np.ndarray:
    """CDF of the planar Laplace radius: C(r) = 1 − (1 + εr)·e^{−εr}."""
    x = epsilon * np.asarray(r, dtype=float)
    return np.where(x > 0, -np.expm1(-x) - x * np.exp(-x), 0.0)


def planar_radius_quantile(p: Any, epsilon: float) -> np.ndarray:
    """Inverse of :func:`planar_radius_cdf`: r = −(W₋₁((p − 1)/e) + 1)/ε (Andrés et al., CCS 2013)."""
    from scipy import special
    p = np.asarray(p, dtype=float)
    w = special.lambertw((p - 1.0) / math.e, k=-1).real
    return -(w + 1.0) / epsilon
