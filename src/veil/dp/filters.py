"""Privacy filters: when to stop charges whose ε and δ are chosen adaptively.

Rogers, Roth, Ullman and Vadhan, "Privacy odometers and filters: pay-as-you-go composition"
(NeurIPS 2016). The composition theorems of Dwork, Rothblum and Vadhan let each mechanism be
chosen adaptively, but fix the *number* k of mechanisms and their privacy parameters in advance.
When an analyst picks the next ε_i and δ_i after seeing earlier answers, a bound computed for a
fixed k is no longer a valid stopping rule. A **privacy filter** COMP_{ε_g, δ_g} looks at the
parameters chosen so far and says CONT or HALT; it is *valid* when every interaction that stops
as soon as it says HALT is (ε_g, δ_g)-differentially private, for every adaptive choice.

Two valid filters from the paper:

* **basic composition** (:func:`basic_filter`): CONT while Σ ε_i ≤ ε_g and Σ δ_i ≤ δ_g;
* **the advanced filter** (their Theorem 5.1, :func:`advanced_filter_bound`, :func:`advanced_filter`),
  for 0 < δ_g < 1/e: CONT while Σ δ_i ≤ δ_g / 2 and

      K = Σ ε_i (e^{ε_i} − 1) / 2
          + √( 2 (Σ ε_i² + H) · (1 + ½ ln(Σ ε_i² / H + 1)) · ln(2/δ_g) )  ≤  ε_g,
      where H = ε_g² / (28.04 · ln(1/δ_g)).

  K grows like √(Σ ε_i²) rather than Σ ε_i, so many small charges fit where basic composition
  would stop, at the price of the constants (for a few charges basic composition wins).

Both statistics only grow with every charge, which is what lets
:class:`veil.dp.filter_accountant.FilterAccountant` use both at once: it continues while *either* filter
would, with each filter run on half of δ_g. An interaction that stopped inside the basic region
stayed inside it at every step, so on those runs it is exactly the interaction the basic filter
alone would have allowed, and likewise for the advanced one; splitting any event of the output
by where the run stopped and adding the two filters' guarantees gives (ε_g, δ_g/2 + δ_g/2).

The statistics are computed in floating point and compared with a relative margin of 10⁻¹² that
errs on the side of halting.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from veil.errors import ParameterError

__all__ = ["RRUV_CONSTANT", "advanced_filter", "advanced_filter_bound", "basic_filter"]

#: the constant of Rogers, Roth, Ullman and Vadhan's advanced filter (Theorem 5.1)
RRUV_CONSTANT = 28.04
#: relative margin by which a statistic must stay under its bound (floating point never admits more)
MARGIN = 1e-12


def _globals(epsilon_g: float, delta_g: float, *, advanced: bool) -> tuple[float, float]:
    eps, delta = float(epsilon_g), float(delta_g)
    if not math.isfinite(eps) or eps <= 0:
        raise ParameterError(f"the filter's epsilon_g must be a finite number > 0, got {epsilon_g!r}.")
    if advanced and not 0 < delta < 1 / math.e:
        raise ParameterError(f"the advanced filter needs 0 < delta_g < 1/e, got {delta_g!r}; use the basic filter "
                             "for a budget without delta.")
    if not advanced and not 0 <= delta < 1:
        raise ParameterError(f"the filter's delta_g must lie in [0, 1), got {delta_g!r}.")
    return eps, delta


def basic_filter(epsilons: Sequence[float], deltas: Sequence[float], epsilon_g: float, delta_g: float) -> bool:
    """Basic composition as a filter: CONT (``True``) while Σ ε_i ≤ ε_g and Σ δ_i ≤ δ_g.

    Rogers et al. (2016) show it stays valid when the ε_i and δ_i are chosen adaptively.

    Args:
        epsilons: ε_i of every charge so far (the next one included).
        deltas: δ_i of every charge, in the same order.
        epsilon_g: the filter's ε_g > 0.
        delta_g: the filter's δ_g in [0, 1).

    Raises:
        ParameterError: ε_g <= 0, δ_g outside [0, 1).
    """
    eps_g, delta_g = _globals(epsilon_g, delta_g, advanced=False)
    return math.fsum(epsilons) <= eps_g and math.fsum(deltas) <= delta_g


def advanced_filter_bound(epsilons: Sequence[float], epsilon_g: float, delta_g: float) -> float:
    """K, the statistic of Rogers et al.'s advanced filter (Theorem 5.1), for the ε_i so far.

    Args:
        epsilons: ε_i of every charge so far.
        epsilon_g: the filter's ε_g > 0 (it enters through H).
        delta_g: the filter's δ_g, 0 < δ_g < 1/e.

    Raises:
        ParameterError: ε_g <= 0, or δ_g outside (0, 1/e).
    """
    eps_g, delta_g = _globals(epsilon_g, delta_g, advanced=True)
    squares = math.fsum(e * e for e in epsilons)
    h = eps_g * eps_g / (RRUV_CONSTANT * math.log(1 / delta_g))
    drift = math.fsum(e * math.expm1(e) / 2 for e in epsilons)
    spread = 2 * (squares + h) * (1 + 0.5 * math.log(squares / h + 1)) * math.log(2 / delta_g)
    return drift + math.sqrt(spread)


def advanced_filter(epsilons: Sequence[float], deltas: Sequence[float], epsilon_g: float, delta_g: float) -> bool:
    """Rogers et al.'s advanced filter: CONT (``True``) while Σ δ_i ≤ δ_g/2 and K ≤ ε_g.

    Args:
        epsilons: ε_i of every charge so far (the next one included).
        deltas: δ_i of every charge, in the same order.
        epsilon_g: the filter's ε_g > 0.
        delta_g: the filter's δ_g, 0 < δ_g < 1/e.

    Raises:
        ParameterError: ε_g <= 0, or δ_g outside (0, 1/e).
    """
    bound = advanced_filter_bound(epsilons, epsilon_g, delta_g)
    return math.fsum(deltas) <= float(delta_g) / 2 and bound * (1 + MARGIN) <= float(epsilon_g)
