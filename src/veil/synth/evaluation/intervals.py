"""Confidence intervals of the evaluation's rates, their differences and Anonymeter's risk.

- a rate: Wilson's score interval (Wilson 1927);
- the difference of two independent rates (an attack's true-positive rate minus its
  false-positive rate): Newcombe's hybrid score interval (Newcombe 1998, method 10), built from the
  two Wilson intervals;
- the risk of Anonymeter (Giomi et al., PoPETs 2023), ``(attack − control) / (1 − control)``:
  it grows with the attack rate and falls with the control rate, so its bounds are the risk at
  the Wilson bounds of the two rates, each taken at level ``1 − α/2`` so that both hold together
  with probability at least ``1 − α`` (Bonferroni), whatever the dependence between the two.
"""

from __future__ import annotations

import math
from statistics import NormalDist


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval of a binomial rate; (0, 1) when there are no trials."""
    if trials <= 0:
        return 0.0, 1.0
    z = _z(confidence)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def rate_difference(x1: int, n1: int, x2: int, n2: int, confidence: float = 0.95) -> tuple[float, float]:
    """Newcombe's hybrid score interval of ``x1/n1 − x2/n2`` for two independent samples."""
    p1, p2 = x1 / n1, x2 / n2
    l1, u1 = wilson(x1, n1, confidence)
    l2, u2 = wilson(x2, n2, confidence)
    d = p1 - p2
    return (max(-1.0, d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)),
            min(1.0, d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)))


def risk(attack: float, control: float) -> float:
    """Anonymeter's risk ``(attack − control) / (1 − control)``; the attack rate itself when
    the control rate is 1 would divide by zero (then nothing beats the control: 0)."""
    if control >= 1:
        return 0.0
    return (attack - control) / (1 - control)


def risk_interval(attack_hits: int, attack_trials: int, control_hits: int, control_trials: int,
                  confidence: float = 0.95) -> tuple[float, float]:
    """A confidence interval of Anonymeter's risk (Bonferroni over two Wilson intervals)."""
    level = 1 - (1 - confidence) / 2
    a_lo, a_hi = wilson(attack_hits, attack_trials, level)
    c_lo, c_hi = wilson(control_hits, control_trials, level)
    return risk(a_lo, c_hi), risk(a_hi, c_lo)
