"""How a grouped DP query is priced: ε or ρ read exactly as the accountant reads it, the default
mechanism of each measure, and the rounding of each part so that the parts never add up to more
than what is charged (shared by :mod:`veil.dp.grouped_query` and :mod:`veil.dp.accuracy_plan`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

from veil.dp.discrete_gaussian import DiscreteGaussian
from veil.dp.exact import exact_epsilon
from veil.dp.measures import exact_rho
from veil.dp.mechanisms import Geometric, Laplace, _check_epsilon
from veil.dp.zcdp_gaussian import ZCDPGaussian
from veil.errors import ParameterError

__all__ = ["pure_laplace", "zcdp_gaussian"]


def pure_laplace(epsilon: float, sensitivity: float, integer: bool):
    """The default mechanism under pure ε-DP: discrete Laplace (geometric) for whole-number
    cells, Laplace for real ones, each of scale sensitivity/ε (``sensitivity``: L1)."""
    return Geometric(epsilon, sensitivity) if integer else Laplace(epsilon, sensitivity)


pure_laplace.measure = "pure"


def zcdp_gaussian(rho: Fraction, sensitivity: float, integer: bool):
    """The mechanism under ρ-zCDP (Bun and Steinke 2016): the discrete Gaussian for whole-number
    cells (Canonne, Kamath and Steinke 2020; :class:`~veil.dp.discrete_gaussian.DiscreteGaussian`),
    the Gaussian for real ones (:class:`~veil.dp.zcdp_gaussian.ZCDPGaussian`), each of the
    smallest σ with Δ²/(2σ²) <= ρ checked exactly (``sensitivity``: Δ, the L2 sensitivity).
    :meth:`GroupedQuery.evaluate` gives it ρ as an exact fraction and charges ρ."""
    return DiscreteGaussian(rho, sensitivity) if integer else ZCDPGaussian(rho, sensitivity)


zcdp_gaussian.measure = "zcdp"


def _l2(squared: Fraction) -> float:
    """The smallest float whose square is at least ``squared`` (an L2 sensitivity rounded up, so
    that σ is never a hair too small)."""
    value = math.sqrt(float(squared))
    while Fraction(value) ** 2 < squared:
        value = math.nextafter(value, math.inf)
    return value


def _share(epsilon: Fraction, part: Fraction) -> float:
    """``epsilon · part`` as a float no larger than the exact product (``epsilon`` read as the
    accountant reads it, :func:`veil.dp.exact.exact_epsilon`, so the shares never add up to more
    than what is charged)."""
    exact = epsilon * part
    value = float(exact)
    if Fraction(value) > exact:
        value = math.nextafter(value, 0.0)
    return value


def _price(epsilon, rho, mechanism) -> tuple[bool, Fraction, float, Callable]:
    """Whether the query is priced in ρ, its whole ε or ρ exactly (as the accountant reads it)
    and as a float, and its mechanism (the measure's default when ``None``).

    Raises:
        ParameterError: neither or both of ε and ρ, one out of range, or a mechanism priced in the
            other measure.
    """
    if (epsilon is None) == (rho is None):
        raise ParameterError("a grouped query is priced in epsilon or in rho; give one of them.")
    zcdp = rho is not None
    if mechanism is None:
        mechanism = zcdp_gaussian if zcdp else pure_laplace
    if (getattr(mechanism, "measure", "pure") == "zcdp") != zcdp:
        given, wanted = ("rho", "epsilon") if zcdp else ("epsilon", "rho")
        raise ParameterError(f"the mechanism is priced in {wanted}, and the query was given {given}; give {wanted} "
                             "or a mechanism priced in it.")
    if zcdp:
        return True, exact_rho(rho), float(rho), mechanism
    eps = _check_epsilon(epsilon)
    return False, exact_epsilon(eps), eps, mechanism
