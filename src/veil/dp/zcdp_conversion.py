"""From ρ-zCDP to (ε, δ)-DP by the tight conversion of Canonne, Kamath and Steinke (2020).

A mechanism that is ρ-zero-concentrated differentially private (Bun and Steinke 2016: its Rényi
divergence of every order α > 1 between neighbouring inputs is at most ρα) is (ε, δ)-DP for
every ε ≥ 0 with (Canonne, Kamath and Steinke, "The Discrete Gaussian for Differential
Privacy", NeurIPS 2020, Proposition 12 and Corollary 13)

    δ(ε) = inf over α > 1 of  exp((α − 1)(αρ − ε)) / (α − 1) · (1 − 1/α)^α.

Every α > 1 gives a valid bound; the infimum is the tightest. It is never worse than the simpler
bound of Bun and Steinke, ε = ρ + 2√(ρ ln(1/δ)), and often much better.

**Rounding.** :func:`zcdp_delta` finds a good α in floating point (any α is valid, so the search
only decides how tight the answer is), then evaluates the bound *at that α* with 60-digit decimal
arithmetic, whose every operation is correctly rounded, adds 10⁻³⁰ to the logarithm (far more than
the rounding of a few dozen operations at 60 digits) and rounds the exponential up: the returned δ
is never below the bound at that α, hence never below the infimum, hence a valid δ.
:func:`zcdp_epsilon` bisects on ε and returns the upper end, an ε whose δ so computed is at most
the target: the answer errs on the side of a larger ε, never a smaller one.
"""

from __future__ import annotations

import math
from decimal import MAX_EMAX, MIN_EMIN, ROUND_CEILING, Context, Decimal
from fractions import Fraction

from veil.dp.exact import exact
from veil.errors import ParameterError

__all__ = ["simple_zcdp_epsilon", "zcdp_delta", "zcdp_delta_at", "zcdp_epsilon", "zcdp_rho"]

_DIGITS = 60
_MARGIN = Decimal("1e-30")
#: the smallest ln δ returned (any larger δ is valid too)
_FLOOR = Decimal(-100000)
#: Bisection steps on ε: the answer is within 2^-60 of the interval's length above the tightest.
_STEPS = 60


def _check_rho(rho) -> Fraction:
    value = exact(rho, "rho")
    if value <= 0:
        raise ParameterError(f"rho must be greater than 0, got {value}.")
    return value


def _check_delta(delta) -> Fraction:
    value = exact(delta, "delta")
    if not 0 < value < 1:
        raise ParameterError(f"delta must be in (0, 1) to convert zCDP to (epsilon, delta), got {float(value):g}.")
    return value


def _log_bound(t: float, rho: float, epsilon: float) -> float:
    """ln of the bound at α = 1 + e^t, in floating point (for the search only); ln(1 − 1/α) is
    written t − ln α so that it keeps its digits when α is close to 1."""
    am1 = math.exp(t)
    alpha = 1.0 + am1
    return am1 * (alpha * rho - epsilon) - t + alpha * (t - math.log1p(am1))


def _best_alpha(rho: float, epsilon: float) -> float:
    """α − 1 for an α > 1 near the minimizer of the bound: golden-section search on ln(α − 1), whose bound is
    unimodal there; any α is valid, this only decides how tight the answer is."""
    lo, hi = -40.0, 40.0
    f = lambda t: _log_bound(t, rho, epsilon)  # noqa: E731
    g = (math.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = f(a), f(b)
    for _ in range(200):
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = f(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = f(b)
    return math.exp((lo + hi) / 2)


def zcdp_delta_at(rho, epsilon, alpha) -> Fraction:
    """The CKS 2020 bound exp((α − 1)(αρ − ε)) / (α − 1) · (1 − 1/α)^α at one α, rounded up.

    Args:
        rho: ρ > 0.
        epsilon: ε >= 0.
        alpha: the order, a number > 1 (taken exactly).

    Returns:
        A Fraction at least the bound at α (60-digit decimal arithmetic, the logarithm raised by
        10⁻³⁰, the exponential rounded up), at most 1 and at least e^-100000.

    Raises:
        ParameterError: ρ <= 0, ε < 0, or α <= 1.
    """
    r, e, a = _check_rho(rho), exact(epsilon, "epsilon"), exact(alpha, "alpha")
    if e < 0:
        raise ParameterError(f"epsilon must be >= 0, got {float(e):g}.")
    if a <= 1:
        raise ParameterError(f"alpha must be greater than 1, got {float(a):g}.")
    ctx = Context(prec=_DIGITS)

    def dec(x: Fraction) -> Decimal:
        return ctx.divide(Decimal(x.numerator), Decimal(x.denominator))

    am1 = a - 1
    # (α − 1)(αρ − ε) is exact as a Fraction; only its conversion to a decimal rounds.
    # every operation through ctx: Decimal's operators would round to the thread's 28 digits
    log = ctx.add(ctx.subtract(dec(am1 * (a * r - e)), ctx.ln(dec(am1))), ctx.multiply(dec(a), ctx.ln(dec(am1 / a))))
    # a δ below e^-100000 is shown as e^-100000: larger, so still valid, and a short number
    log = max(ctx.add(log, _MARGIN), _FLOOR)
    if log >= 0:
        return Fraction(1)
    up = Context(prec=_DIGITS, rounding=ROUND_CEILING, Emin=MIN_EMIN, Emax=MAX_EMAX)
    return min(Fraction(1), Fraction(up.exp(log)))


def zcdp_delta(rho, epsilon) -> Fraction:
    """The δ at which ρ-zCDP implies (ε, δ)-DP, by the tight conversion (CKS 2020, Corollary 13).

    Args:
        rho: ρ > 0.
        epsilon: ε >= 0.

    Returns:
        A Fraction δ in (0, 1], a valid upper bound (see the module notes on rounding).

    Raises:
        ParameterError: ρ <= 0 or ε < 0.
    """
    r, e = _check_rho(rho), exact(epsilon, "epsilon")
    if e < 0:
        raise ParameterError(f"epsilon must be >= 0, got {float(e):g}.")
    return zcdp_delta_at(r, e, 1 + Fraction(_best_alpha(float(r), float(e))))


def simple_zcdp_epsilon(rho, delta) -> float:
    """The simpler conversion of Bun and Steinke (2016, Proposition 1.3): ε = ρ + 2√(ρ ln(1/δ)).

    Valid but looser than :func:`zcdp_epsilon`; in floating point, for comparison only.

    Raises:
        ParameterError: ρ <= 0 or δ outside (0, 1).
    """
    r, d = float(_check_rho(rho)), float(_check_delta(delta))
    return r + 2 * math.sqrt(r * math.log(1 / d))


def zcdp_epsilon(rho, delta) -> Fraction:
    """The smallest ε (to within 2^-60 of the search interval) at which ρ-zCDP implies (ε, δ)-DP.

    Bisection on ε between 0 and the simple bound (:func:`simple_zcdp_epsilon`, raised until
    :func:`zcdp_delta` confirms it); the answer is the upper end of the last interval, an ε at
    which the rounded-up δ of :func:`zcdp_delta` is at most ``delta``, so it is valid.

    Args:
        rho: ρ > 0.
        delta: 0 < δ < 1.

    Returns:
        ε as a Fraction.

    Raises:
        ParameterError: ρ <= 0 or δ outside (0, 1).
    """
    r, d = _check_rho(rho), _check_delta(delta)
    hi = Fraction(simple_zcdp_epsilon(r, d)) * Fraction(1001, 1000) + Fraction(1, 10**12)
    while zcdp_delta(r, hi) > d:
        hi *= 2
    lo = Fraction(0)
    if zcdp_delta(r, lo) <= d:
        return lo
    for _ in range(_STEPS):
        # the nearest float keeps the numbers short; any point strictly inside will do
        mid = Fraction(float((lo + hi) / 2))
        if not lo < mid < hi:
            break
        if zcdp_delta(r, mid) <= d:
            hi = mid
        else:
            lo = mid
    return hi


#: significant decimal digits kept by :func:`zcdp_rho` (rounded down, so the answer stays valid)
_RHO_DIGITS = 12


def zcdp_rho(epsilon, delta) -> Fraction:
    """The inverse conversion: the largest ρ, to 11 or 12 significant digits, with ``zcdp_epsilon(ρ, δ) <= ε``.

    Bisection on ρ between 0 and ε (ρ-zCDP never gives an ε below ρ) on the condition
    ``zcdp_delta(ρ, ε) <= δ``, whose bound grows with ρ; the lower end is rounded down to 11 or 12
    significant decimal digits and then lowered, if need be, until :func:`zcdp_epsilon` (the
    function a ledger uses to convert back) confirms ``zcdp_epsilon(ρ, δ) <= ε``. The answer so errs
    on the side of a smaller ρ, never a larger one.

    Args:
        epsilon: ε > 0.
        delta: 0 < δ < 1.

    Returns:
        ρ > 0 as a Fraction with a short decimal expansion.

    Raises:
        ParameterError: ε <= 0 or δ outside (0, 1).
    """
    e, d = exact(epsilon, "epsilon"), _check_delta(delta)
    if e <= 0:
        raise ParameterError(f"epsilon must be greater than 0, got {float(e):g}.")
    lo, hi = Fraction(0), e
    while zcdp_delta(hi, e) <= d:  # cannot happen for δ < 1; kept so the bracket is never assumed
        lo, hi = hi, hi * 2
    for _ in range(_STEPS):
        mid = Fraction(float((lo + hi) / 2))
        if not lo < mid < hi:
            break
        if mid > 0 and zcdp_delta(mid, e) <= d:
            lo = mid
        else:
            hi = mid
    if lo == 0:
        lo = hi / 2
    rho = _round_down(lo)
    while zcdp_epsilon(rho, d) > e:  # the forward conversion has the last word
        lo *= Fraction(999, 1000)
        rho = _round_down(lo)
    return rho


def _round_down(value: Fraction) -> Fraction:
    """``value`` > 0 rounded down to ``_RHO_DIGITS`` (or one fewer) significant decimal digits (never 0)."""
    magnitude = len(str(value.numerator)) - len(str(value.denominator))  # ⌊log10⌋ or one more
    scale = Fraction(10) ** (_RHO_DIGITS - 1 - magnitude)
    return Fraction(math.floor(value * scale)) / scale
