"""The Gaussian mechanism priced in ρ-zCDP, for real-valued queries (Bun and Steinke 2016).

Adding N(0, σ²) noise to a query whose L2 sensitivity is Δ is ρ-zCDP with ρ = Δ²/(2σ²) (Bun and
Steinke 2016, Proposition 1.6), so the mechanism takes ρ and uses the smallest float σ with
Δ²/(2σ²) <= ρ, checked in exact arithmetic (:func:`veil.dp.discrete_gaussian.discrete_gaussian_sigma`).
The noise comes from the same vetted sampler as veil's (ε, δ) Gaussian mechanism (OpenDP's
``make_gaussian`` on floats, :mod:`veil.dp.noise`). For integer queries (counts, histograms) use
:class:`veil.dp.discrete_gaussian.DiscreteGaussian`, whose answers stay integers.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any


from veil.dp.discrete_gaussian import discrete_gaussian_sigma
from veil.dp.mechanisms import MAX_SCALE, MIN_SCALE, NoiseArg, NoisyRelease, _Additive, _check_alpha, _check_sensitivity
from veil.dp.noise import as_noise_source
from veil.dp.zcdp_conversion import zcdp_epsilon
from veil.errors import ParameterError

__all__ = ["ZCDPGaussian"]


class ZCDPGaussian(_Additive):
    """Gaussian mechanism: adds N(0, σ²) noise, σ = Δ/√(2ρ); ρ-zCDP for L2 sensitivity Δ.

    Args:
        rho: ρ > 0, the zCDP cost of one release.
        sensitivity: Δ > 0, the L2 sensitivity of the query.

    Raises:
        ParameterError: ρ or Δ not positive and finite, or a σ outside the scales veil draws.
    """

    name = "gaussian (zCDP)"

    def __init__(self, rho: float, sensitivity: float = 1.0) -> None:
        self.sensitivity = _check_sensitivity(sensitivity)
        self.sigma = discrete_gaussian_sigma(rho, sensitivity)
        self.rho = float(rho)
        if not MIN_SCALE <= self.sigma <= MAX_SCALE:
            raise ParameterError(f"rho = {self.rho:g} gives Gaussian noise of σ = {self.sigma:g}, outside the scales "
                                 f"veil draws ({MIN_SCALE:.3g} to {MAX_SCALE:.3g}); use another rho.")
        self.scale = self.sigma

    @property
    def guarantee(self) -> dict:
        return {"model": "rho-zCDP", "rho": self.rho, "delta": 0.0, "sigma": self.sigma, "statement": (
            f"rho-zCDP with rho = {self.rho:g} for a query whose L2 sensitivity is at most {self.sensitivity:g}: "
            f"Gaussian noise with sigma = {self.sigma:.6g}.")}

    def epsilon_at(self, delta) -> float:
        """The ε of the (ε, δ)-DP one release implies at ``delta``, by the tight conversion."""
        return float(zcdp_epsilon(Fraction(self.rho), delta))

    @property
    def variance(self) -> float:
        return self.sigma**2

    def error_bound(self, alpha: float = 0.05) -> float:
        """|noise| <= z_{1−α/2}·σ with probability 1 − alpha (per coordinate)."""
        from scipy import stats
        return float(stats.norm.ppf(1.0 - _check_alpha(alpha) / 2.0)) * self.sigma

    def release(self, values: Any, noise: NoiseArg = None) -> NoisyRelease:
        """``values`` plus Gaussian noise of σ; secure by default (:mod:`veil.dp.noise`)."""
        src = as_noise_source(noise)
        return self._release(src.gaussian(values, self.sigma), src)
