"""The discrete Gaussian mechanism for integer queries, ρ-zCDP (Canonne, Kamath and Steinke 2020).

The discrete Gaussian N_Z(0, σ²) on the integers has P(Z = z) = exp(−z²/(2σ²)) / Σ_k exp(−k²/(2σ²)).
Adding it to an integer-valued query whose L2 sensitivity is Δ (a count, a sum of integers on a
public grid) is ρ-zCDP with ρ = Δ²/(2σ²) (CKS 2020, Theorem 4), so the mechanism takes ρ and uses
σ = Δ/√(2ρ), the smallest float σ with Δ²/(2σ²) <= ρ checked in exact arithmetic. Its answers are
integers (no floating-point leak: OpenDP's exact sampler draws them, :mod:`veil.dp.noise`), its
variance is below σ² (CKS 2020, Corollary 9) and its tails are those of the pmf, summed here.

Under a zCDP budget, releases compose by adding ρ (:mod:`veil.dp.measures`); the (ε, δ) a
release implies comes from :func:`veil.dp.zcdp_conversion.zcdp_epsilon`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from veil.dp.exact import exact
from veil.dp.mechanisms import (MAX_INTEGER_SCALE, MIN_SCALE, NoiseArg, NoisyRelease, _Additive, _check_alpha,
                                _check_sensitivity)
from veil.dp.noise import as_noise_source
from veil.dp.zcdp_conversion import zcdp_epsilon
from veil.errors import ParameterError

__all__ = ["DiscreteGaussian", "check_rho", "discrete_gaussian_sigma"]

#: Below this σ the pmf is summed exactly enough in floats (its support to 40σ); above, the tail
#: and variance use the bounds of CKS 2020 (variance <= σ², tails of N(0, σ²) shifted by one).
_SUMMED_SIGMA = 1e5


def check_rho(rho: Any) -> Fraction:
    """ρ as an exact Fraction (a float is read as the decimal it prints as).

    Raises:
        ParameterError: ρ is not a positive finite number.
    """
    try:
        value = exact(rho, "rho")
    except ParameterError:
        raise ParameterError(f"rho must be a positive finite number, got {rho!r}.") from None
    if value <= 0:
        raise ParameterError(f"rho must be a positive finite number, got {rho!r}.")
    return value


def discrete_gaussian_sigma(rho, sensitivity=1) -> float:
    """The smallest float σ with Δ²/(2σ²) <= ρ, checked exactly: the discrete Gaussian of that σ
    is ρ-zCDP for a query of L2 sensitivity Δ (CKS 2020, Theorem 4).

    Raises:
        ParameterError: ρ or Δ not a positive finite number.
    """
    r = check_rho(rho)
    delta = Fraction(_check_sensitivity(sensitivity))
    need = delta ** 2 / (2 * r)  # σ² must be at least this
    sigma = math.sqrt(float(need))
    while Fraction(sigma) ** 2 < need:
        sigma = math.nextafter(sigma, math.inf)
    while sigma > 0 and Fraction(math.nextafter(sigma, 0.0)) ** 2 >= need:
        sigma = math.nextafter(sigma, 0.0)
    return sigma


class DiscreteGaussian(_Additive):
    """Discrete Gaussian mechanism: adds N_Z(0, σ²) noise, σ = Δ/√(2ρ); ρ-zCDP for an integer
    query of L2 sensitivity Δ (Canonne, Kamath and Steinke 2020).

    Args:
        rho: ρ > 0, the zCDP cost of one release.
        sensitivity: Δ > 0, the L2 sensitivity of the (integer-valued) query.

    Raises:
        ParameterError: ρ or Δ not positive and finite, or a σ outside the scales veil draws
            (``MIN_SCALE`` to 2^52).
    """

    name = "discrete-gaussian"

    def __init__(self, rho: float, sensitivity: float = 1) -> None:
        self.rho = float(check_rho(rho))
        self.sensitivity = _check_sensitivity(sensitivity)
        self.sigma = discrete_gaussian_sigma(rho, sensitivity)
        if not MIN_SCALE <= self.sigma <= MAX_INTEGER_SCALE:
            raise ParameterError(f"rho = {self.rho:g} gives discrete Gaussian noise of σ = {self.sigma:g}, outside the "
                                 f"scales veil draws ({MIN_SCALE:.3g} to {MAX_INTEGER_SCALE:.3g}); use another rho.")
        self.scale = self.sigma
        self._support = None

    def _pmf_table(self) -> tuple[np.ndarray, np.ndarray]:
        """(z, P(Z = z)) for |z| up to 40σ + 1, normalized (only for σ <= 10^5)."""
        if self._support is None:
            top = int(math.ceil(40 * self.sigma)) + 1
            z = np.arange(-top, top + 1)
            w = np.exp(-(z.astype(float) ** 2) / (2 * self.sigma**2))
            self._support = (z, w / w.sum())
        return self._support

    @property
    def guarantee(self) -> dict:
        return {"model": "rho-zCDP", "rho": self.rho, "delta": 0.0, "sigma": self.sigma, "statement": (
            f"rho-zCDP with rho = {self.rho:g} for an integer query whose L2 sensitivity is at most "
            f"{self.sensitivity:g}: discrete Gaussian noise with P(z) proportional to "
            f"exp(-z^2/(2*{self.sigma:g}^2)).")}

    def epsilon_at(self, delta) -> float:
        """The ε of the (ε, δ)-DP one release implies at ``delta``, by the tight conversion."""
        return float(zcdp_epsilon(Fraction(self.rho), delta))

    @property
    def variance(self) -> float:
        """E[Z²]: summed from the pmf for σ <= 10^5, else σ², an upper bound (CKS 2020, Corollary 9)."""
        if self.sigma > _SUMMED_SIGMA:
            return self.sigma**2
        z, p = self._pmf_table()
        return float(np.sum(z.astype(float) ** 2 * p))

    def pmf(self, z: Any) -> np.ndarray:
        """P(Z = z), element-wise (normalized over |z| <= 40σ + 1; only for σ <= 10^5)."""
        zs, p = self._pmf_table()
        z = np.asarray(z, dtype=np.int64)
        idx = z + zs[-1]
        inside = (idx >= 0) & (idx < len(p))
        return np.where(inside, p[np.clip(idx, 0, len(p) - 1)], 0.0)

    def error_bound(self, alpha: float = 0.05) -> int:
        """The smallest integer m with P(|noise| > m) <= alpha, from the pmf for σ <= 10^5; above,
        m = ⌈σ·Φ⁻¹(1 − alpha/2)⌉ + 1, valid since P(Z >= m) <= P(N(0, σ²) >= m − 1) (CKS 2020)."""
        from scipy import stats
        alpha = _check_alpha(alpha)
        if self.sigma > _SUMMED_SIGMA:
            return int(math.ceil(self.sigma * stats.norm.isf(alpha / 2))) + 1
        z, p = self._pmf_table()
        half = len(z) // 2
        # P(|Z| > m) = 2 Σ_{k > m} p(k): the upper tail summed from the far end, so small tails keep digits
        upper = np.cumsum(p[half + 1:][::-1])[::-1]  # upper[m] = P(Z > m) for m = 0, 1, ...
        tails = 2 * upper
        return int(np.argmax(tails <= alpha)) if np.any(tails <= alpha) else len(tails)

    def release(self, values: Any, noise: NoiseArg = None) -> NoisyRelease:
        """``values`` (integers) plus discrete Gaussian noise; secure by default (:mod:`veil.dp.noise`)."""
        src = as_noise_source(noise)
        return self._release(src.discrete_gaussian(values, self.sigma), src)
