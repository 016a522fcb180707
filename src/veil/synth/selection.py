"""Choosing a marginal to measure: the exponential mechanism under ρ-zCDP.

The exponential mechanism (McSherry and Talwar 2007) picks candidate i with probability
∝ exp(ε·q_i / (2Δ)), where q_i is its score and Δ the score's sensitivity (the most one row added
or removed can change any q_i). It is ε-DP, and, being bounded-range, ε²/8-zCDP (Cesar and Rogers,
"Bounding, Concentrating, and Truncating", 2021). veil draws it as Gumbel-max
(:meth:`veil.dp.noise.NoiseSource.gumbel_argmax`, OpenDP's ``make_noisy_max`` under zCDP in secure
mode): P(i) ∝ exp(q_i / s) for a scale s, that is ε = 2Δ/s and a cost of ρ = ε²/8 = Δ²/(2s²).

:func:`selection_scale` takes the ρ to charge and returns a float s whose exact cost Δ²/(2s²),
computed with fractions, is at most that ρ less a margin of 2⁻³² of it, so that OpenDP's own
privacy map, which rounds its float arithmetic up, also stays at or below the ρ charged (the tests
check both).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from veil.dp.noise import NoiseSource

__all__ = ["exponential_mechanism", "selection_cost", "selection_scale"]

#: the relative margin left below the ρ charged, for OpenDP's rounding of its privacy map
_MARGIN = Fraction(1, 2**32)


def selection_cost(scale: float, sensitivity: float) -> Fraction:
    """The exact ρ-zCDP cost Δ²/(2s²) of Gumbel-max of scale s on scores of sensitivity Δ."""
    return Fraction(sensitivity) ** 2 / (2 * Fraction(scale) ** 2)


def selection_scale(rho: Fraction, sensitivity: float) -> float:
    """The smallest float scale s with Δ²/(2s²) <= ρ·(1 − 2⁻³²), checked exactly.

    Args:
        rho: the ρ to charge (> 0).
        sensitivity: Δ > 0, the sensitivity of every score.
    """
    target = Fraction(rho) * (1 - _MARGIN)
    need = Fraction(sensitivity) ** 2 / (2 * target)  # s² must be at least this
    scale = math.sqrt(float(need))
    while Fraction(scale) ** 2 < need:
        scale = math.nextafter(scale, math.inf)
    while Fraction(math.nextafter(scale, 0.0)) ** 2 >= need:
        scale = math.nextafter(scale, 0.0)
    return scale


def exponential_mechanism(scores: np.ndarray, *, rho: Fraction, sensitivity: float,
                          source: NoiseSource) -> tuple[int, float]:
    """Pick an index of ``scores`` with P(i) ∝ exp(score_i / s), ρ-zCDP for scores of sensitivity Δ.

    Args:
        scores: one finite float per candidate (1-D, not empty).
        rho: the ρ charged for this selection (a Fraction > 0).
        sensitivity: Δ > 0.
        source: where the Gumbel noise comes from.

    Returns:
        (the chosen index, the selection's ε = 2Δ/s).
    """
    scale = selection_scale(rho, sensitivity)
    index = int(source.gumbel_argmax(np.asarray(scores, dtype=float), scale))
    return index, 2 * float(sensitivity) / scale
