"""Differential privacy mechanisms that state their guarantee and their error before they draw.

Each mechanism is a small object built from explicit parameters (``epsilon``, ``delta``,
``sensitivity``, ...). Before anything is drawn it answers what a release will cost:

* ``guarantee`` — a dict with the privacy model, its parameters and a one-sentence statement;
* ``variance`` / ``error_bound(alpha)`` / ``confidence_interval(alpha, center)`` — the accuracy.

``release(values, noise=None)`` then draws, vectorized over arrays, and returns a :class:`NoisyRelease`
that carries ``fit_for_release``: ``noise=None`` (the default) uses the secure OpenDP-backed
source (see :mod:`veil.dp.noise`); passing a ``numpy.random.Generator`` or an integer seed runs a
reproducible experiment that is labelled *not fit for release*.

Sensitivities are those of the whole query: an array released by :class:`Laplace` is one vector
query whose L1 sensitivity is ``sensitivity`` (L2 for :class:`Gaussian`); every coordinate gets
noise of the same scale.

Noise scales are checked when a mechanism is built: a scale outside [``MIN_SCALE``, ``MAX_SCALE``]
(10^-150 to 10^150; 2^52 for integer noise, which must stay within 64-bit integers) is refused with
a :class:`~veil.errors.ParameterError`, because its variance would overflow to infinity or
underflow to 0 and the error bar with it (``epsilon=1e-300`` asks for Laplace noise of scale
10^300).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from veil.dp.noise import NoiseSource, as_noise_source
from veil.dp.planar_radius import planar_radius_cdf, planar_radius_quantile
from veil.errors import ParameterError

__all__ = [
    "MAX_INTEGER_SCALE", "MAX_SCALE", "MIN_SCALE", "MIN_RR_EPSILON", "MAX_RR_EPSILON",
    "CountEstimate", "ExponentialMechanism", "Gaussian", "Geometric", "KaryRandomizedResponse", "Laplace",
    "PlanarLaplace", "NoisyRelease", "ReportNoisyMax", "WarnerRandomizedResponse", "analytic_gaussian_sigma",
    "classical_gaussian_sigma", "gaussian_delta", "planar_radius_cdf", "planar_radius_quantile",
]

NoiseArg = NoiseSource | np.random.Generator | int | None

#: The noise scales veil computes with: beyond them a variance overflows or underflows a float.
MIN_SCALE, MAX_SCALE = 1e-150, 1e150
#: Integer (discrete Laplace) noise of a larger scale would routinely leave the 64-bit integers.
MAX_INTEGER_SCALE = float(2**52)
#: Randomized response needs 0 < q < p < 1 in floating point: below MIN_RR_EPSILON, e^ε − 1 keeps
#: too few digits to tell p from q; above MAX_RR_EPSILON, e^ε overflows and q becomes 0 (no noise).
MIN_RR_EPSILON, MAX_RR_EPSILON = 1e-9, 700.0

SEEDED_REASON = "seeded noise: a reproducible experiment"


# ---------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NoisyRelease:
    """The output of one mechanism run.

    ``fit_for_release`` is True only when the noise came from the secure source; a seeded run is
    an experiment and must not be published.
    """

    value: Any
    mechanism: str
    guarantee: dict
    fit_for_release: bool
    noise_source: str
    #: why the release is not fit for publishing (empty when it is)
    not_fit_because: tuple = ()

    @property
    def label(self) -> str:
        return release_label(self.fit_for_release, self.not_fit_because)


def release_label(fit: bool, reasons: tuple) -> str:
    """``"fit for release"``, or ``"NOT fit for release: "`` and the reasons."""
    if fit:
        return "fit for release"
    return "NOT fit for release: " + "; ".join(reasons or (SEEDED_REASON,))


def unfit_reasons(source: NoiseSource) -> tuple:
    """The reasons a release drawn from ``source`` is not fit for publishing (none for the secure source)."""
    return () if source.fit_for_release else (SEEDED_REASON,)


@dataclass(frozen=True)
class CountEstimate:
    """An unbiased estimate of true count(s) from randomized responses, with its uncertainty."""

    estimate: Any
    variance: Any
    n: int
    alpha: float = 0.05
    #: copied from the NoisyRelease the responses came in; None when raw responses were given (unknown).
    fit_for_release: bool | None = None
    low: Any = field(init=False)
    high: Any = field(init=False)

    def __post_init__(self) -> None:
        from scipy import stats
        half = stats.norm.ppf(1 - self.alpha / 2) * np.sqrt(self.variance)
        object.__setattr__(self, "low", self.estimate - half)
        object.__setattr__(self, "high", self.estimate + half)

    @property
    def stderr(self) -> Any:
        return np.sqrt(self.variance)


# ---------------------------------------------------------------------------------------------
# parameter checks (one sentence each)
# ---------------------------------------------------------------------------------------------
def _check_epsilon(epsilon: Any) -> float:
    try:
        eps = float(epsilon)
    except (TypeError, ValueError):
        raise ParameterError(f"epsilon must be a positive number, got {epsilon!r}.") from None
    if not (math.isfinite(eps) and eps > 0):
        raise ParameterError(f"epsilon must be a positive finite number, got {epsilon!r}.")
    return eps


def _check_delta(delta: Any, *, positive: bool = False) -> float:
    try:
        d = float(delta)
    except (TypeError, ValueError):
        raise ParameterError(f"delta must be a number in [0, 1), got {delta!r}.") from None
    if not (0.0 <= d < 1.0):
        raise ParameterError(f"delta must lie in [0, 1), got {delta!r}.")
    if positive and d == 0.0:
        raise ParameterError("delta must be greater than 0 for the Gaussian mechanism; use Laplace for pure "
                             "epsilon-DP.")
    return d


def _check_sensitivity(sensitivity: Any) -> float:
    try:
        s = float(sensitivity)
    except (TypeError, ValueError):
        raise ParameterError(f"sensitivity must be a positive number, got {sensitivity!r}.") from None
    if not (math.isfinite(s) and s > 0):
        raise ParameterError(f"sensitivity must be a positive finite number, got {sensitivity!r}.")
    return s


def _check_alpha(alpha: Any) -> float:
    a = float(alpha)
    if not (0.0 < a < 1.0):
        raise ParameterError(f"alpha (the miss probability of a confidence interval) must lie in (0, 1), "
                             f"got {alpha!r}.")
    return a


def check_scale(scale: float, mechanism: str, epsilon: float, factor: float | None,
                highest: float = MAX_SCALE) -> float:
    """Refuse a noise scale whose variance would overflow or underflow (see the module notes).

    ``factor`` is the numerator of ``scale = factor / epsilon`` (the sensitivity, or 2·sensitivity for
    the exponential mechanism), used to say which ε would do; ``None`` when the scale has no such form.

    Raises:
        ParameterError: the scale is not within [MIN_SCALE, ``highest``].
    """
    if MIN_SCALE <= scale <= highest:
        return float(scale)
    large = not scale < MIN_SCALE  # NaN counts as too large
    if factor is None:
        fix = "use a larger epsilon or delta" if large else "use a smaller epsilon"
    elif large:
        fix = f"use epsilon >= {factor / highest:.3g}"
    else:
        fix = f"use epsilon <= {factor / MIN_SCALE:.3g}"
    raise ParameterError(f"epsilon = {epsilon:g} gives {mechanism} noise of scale {scale:g}, outside the scales veil "
                         f"computes with ({MIN_SCALE:.3g} to {highest:.3g}); {fix}.")


def _check_rr_epsilon(epsilon: Any, what: str) -> float:
    eps = _check_epsilon(epsilon)
    if not MIN_RR_EPSILON <= eps <= MAX_RR_EPSILON:
        raise ParameterError(f"{what} needs epsilon between {MIN_RR_EPSILON:g} and {MAX_RR_EPSILON:g}, got "
                             f"{eps:g}: beyond, its report probabilities are not distinct numbers in floating "
                             "point.")
    return eps


def _check_rr_probabilities(p: float, q: float, what: str, epsilon: float) -> None:
    """Randomized response must keep 0 < q < p < 1: p = 1 would never randomize (no noise at all)."""
    if not 0.0 < q < p < 1.0:
        raise ParameterError(f"epsilon = {epsilon:g} is too large for {what}: the probability of a truthful "
                             "report rounds to 1 in floating point, so nothing would be randomized; use a smaller "
                             "epsilon.")


def _scalar_or_array(arr: np.ndarray) -> Any:
    return arr.item() if arr.ndim == 0 else arr


def _pure_guarantee(epsilon: float, statement: str, **extra: Any) -> dict:
    return {"model": "epsilon-DP", "epsilon": epsilon, "delta": 0.0, "statement": statement, **extra}


# ---------------------------------------------------------------------------------------------
# additive noise
# ---------------------------------------------------------------------------------------------
class _Additive:
    name = "additive"

    def variance(self) -> float:  # pragma: no cover - overridden
        raise NotImplementedError

    def error_bound(self, alpha: float = 0.05) -> float:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def std(self) -> float:
        return math.sqrt(self.variance)

    def confidence_interval(self, alpha: float = 0.05, center: Any = 0.0) -> tuple[Any, Any]:
        """Interval that holds the true value with probability 1 − alpha, per coordinate.

        With ``center`` = a released value this is a confidence interval for the true value; with
        the default 0 it is the range the noise stays in.
        """
        half = self.error_bound(alpha)
        c = np.asarray(center, dtype=float)
        return _scalar_or_array(c - half), _scalar_or_array(c + half)

    def _release(self, noisy: np.ndarray, source: NoiseSource) -> NoisyRelease:
        return NoisyRelease(_scalar_or_array(noisy), self.name, self.guarantee, source.fit_for_release,
                            source.description, unfit_reasons(source))


class Laplace(_Additive):
    """Laplace mechanism: adds Lap(Δ/ε) noise; ε-DP for a query of L1 sensitivity Δ."""

    name = "laplace"

    def __init__(self, epsilon: float, sensitivity: float = 1.0) -> None:
        self.epsilon = _check_epsilon(epsilon)
        self.sensitivity = _check_sensitivity(sensitivity)
        self.scale = check_scale(self.sensitivity / self.epsilon, "Laplace", self.epsilon, self.sensitivity)

    @property
    def guarantee(self) -> dict:
        return _pure_guarantee(self.epsilon, (
            f"epsilon-DP with epsilon = {self.epsilon:g} for a query whose L1 sensitivity is at most "
            f"{self.sensitivity:g}: Laplace noise of scale {self.scale:g} per coordinate."), scale=self.scale)

    @property
    def variance(self) -> float:
        return 2.0 * self.scale**2

    def error_bound(self, alpha: float = 0.05) -> float:
        """|noise| ≤ scale·ln(1/alpha) with probability 1 − alpha (per coordinate)."""
        return self.scale * math.log(1.0 / _check_alpha(alpha))

    def release(self, values: Any, noise: NoiseArg = None) -> NoisyRelease:
        src = as_noise_source(noise)
        return self._release(src.laplace(values, self.scale), src)


class Geometric(_Additive):
    """Geometric (discrete Laplace) mechanism for integer queries: P(z) ∝ exp(−ε|z|/Δ); ε-DP."""

    name = "geometric"

    def __init__(self, epsilon: float, sensitivity: float = 1) -> None:
        self.epsilon = _check_epsilon(epsilon)
        self.sensitivity = _check_sensitivity(sensitivity)
        self.scale = check_scale(self.sensitivity / self.epsilon, "discrete Laplace", self.epsilon,
                                 self.sensitivity, highest=MAX_INTEGER_SCALE)
        self.ratio = math.exp(-1.0 / self.scale)  # a = e^{-ε/Δ}; 1 in floating point for a large scale
        self._one_minus_ratio = -math.expm1(-1.0 / self.scale)  # 1 − a, accurate whatever the scale

    @property
    def guarantee(self) -> dict:
        return _pure_guarantee(self.epsilon, (
            f"epsilon-DP with epsilon = {self.epsilon:g} for an integer query whose L1 sensitivity is at most "
            f"{self.sensitivity:g}: discrete Laplace noise with P(z) proportional to exp(-|z|/{self.scale:g})."),
            scale=self.scale)

    @property
    def variance(self) -> float:
        return 2.0 * self.ratio / self._one_minus_ratio**2

    def _tail(self, j: int) -> float:
        """P(|Z| ≥ j) = 2a^j/(1+a) for j ≥ 1, with a^j = e^{−j/scale} (never a power of a rounded a)."""
        return 2.0 * math.exp(-j / self.scale) / (1.0 + self.ratio)

    def error_bound(self, alpha: float = 0.05) -> int:
        """Smallest integer m with P(|noise| > m) ≤ alpha; P(|Z| ≥ j) = 2a^j/(1+a) for j ≥ 1."""
        alpha = _check_alpha(alpha)
        if self.ratio == 0.0:
            return 0  # e^{-ε/Δ} underflows: the noise is 0 with probability 1 − 10^-300 and more
        # need j with 2a^j/(1+a) <= alpha, i.e. j >= scale·ln(2/(alpha(1+a)))
        j = math.ceil(self.scale * math.log(2.0 / (alpha * (1.0 + self.ratio))) - 1e-9)
        m = max(0, j - 1)
        while m > 0 and self._tail(m) <= alpha:  # guard the floating-point ceiling
            m -= 1
        while self._tail(m + 1) > alpha:
            m += 1
        return m

    def pmf(self, z: Any) -> np.ndarray:
        a = self.ratio
        return (1.0 - a) / (1.0 + a) * a ** np.abs(np.asarray(z, dtype=float))

    def release(self, values: Any, noise: NoiseArg = None) -> NoisyRelease:
        src = as_noise_source(noise)
        return self._release(src.discrete_laplace(values, self.scale), src)


def gaussian_delta(epsilon: float, sigma: float, sensitivity: float = 1.0) -> float:
    """The exact δ(ε) of the Gaussian mechanism N(0, σ²) for L2 sensitivity Δ (Balle & Wang 2018, Thm 8):

    δ = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ).
    """
    from scipy import special
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    # log-space for the tails; the difference of two small positives keeps its relative precision.
    return max(0.0, math.exp(special.log_ndtr(a - b)) - math.exp(epsilon + special.log_ndtr(-a - b)))


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """The smallest σ with gaussian_delta(ε, σ, Δ) ≤ δ (analytic Gaussian mechanism, Balle & Wang, ICML 2018).

    δ(σ) is strictly decreasing in σ, so the root is found by bracketing and Brent's method on log σ.
    """
    from scipy import optimize
    eps = _check_epsilon(epsilon)
    dlt = _check_delta(delta, positive=True)
    sens = _check_sensitivity(sensitivity)

    def gap(log_sigma: float) -> float:
        return gaussian_delta(eps, math.exp(log_sigma), sens) - dlt

    lo = hi = math.log(sens)
    while gap(lo) < 0:
        lo -= 1.0
    while gap(hi) > 0:
        hi += 1.0
    root = optimize.brentq(gap, lo, hi, xtol=1e-14, rtol=1e-14, maxiter=500)
    sigma = math.exp(root)
    # brentq may land a hair on the wrong side; step up until the guarantee holds.
    while gaussian_delta(eps, sigma, sens) > dlt:
        sigma = math.nextafter(sigma, math.inf) * (1 + 1e-15)
    return sigma


def classical_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Dwork & Roth's σ = Δ·sqrt(2 ln(1.25/δ))/ε (valid for ε < 1), for comparison with the analytic σ."""
    eps = _check_epsilon(epsilon)
    dlt = _check_delta(delta, positive=True)
    return _check_sensitivity(sensitivity) * math.sqrt(2.0 * math.log(1.25 / dlt)) / eps


class Gaussian(_Additive):
    """Gaussian mechanism with the analytic calibration: (ε, δ)-DP for L2 sensitivity Δ, any ε > 0."""

    name = "gaussian"

    def __init__(self, epsilon: float, delta: float, sensitivity: float = 1.0) -> None:
        self.epsilon = _check_epsilon(epsilon)
        self.delta = _check_delta(delta, positive=True)
        self.sensitivity = _check_sensitivity(sensitivity)
        self.sigma = check_scale(analytic_gaussian_sigma(self.epsilon, self.delta, self.sensitivity), "Gaussian",
                                 self.epsilon, None)
        self.scale = self.sigma

    @property
    def guarantee(self) -> dict:
        return {"model": "(epsilon, delta)-DP", "epsilon": self.epsilon, "delta": self.delta, "sigma": self.sigma,
                "statement": (f"(epsilon, delta)-DP with epsilon = {self.epsilon:g} and delta = {self.delta:g} for "
                              f"a query whose L2 sensitivity is at most {self.sensitivity:g}: Gaussian noise with "
                              f"sigma = {self.sigma:.6g} (analytic calibration, Balle & Wang 2018).")}

    @property
    def variance(self) -> float:
        return self.sigma**2

    def error_bound(self, alpha: float = 0.05) -> float:
        """|noise| ≤ z_{1−α/2}·σ with probability 1 − alpha (per coordinate)."""
        from scipy import stats
        return float(stats.norm.ppf(1.0 - _check_alpha(alpha) / 2.0)) * self.sigma

    def release(self, values: Any, noise: NoiseArg = None) -> NoisyRelease:
        src = as_noise_source(noise)
        return self._release(src.gaussian(values, self.sigma), src)


# ---------------------------------------------------------------------------------------------
# selection
# ---------------------------------------------------------------------------------------------
class _Selection:
    name = "selection"

    def __init__(self, epsilon: float, sensitivity: float = 1.0, candidates: Sequence | None = None, *,
                 utility: Callable[[Any, Any], float] | None = None, monotonic: bool = False) -> None:
        self.epsilon = _check_epsilon(epsilon)
        self.sensitivity = _check_sensitivity(sensitivity)
        if candidates is not None:
            candidates = list(candidates)
            if not candidates:
                raise ParameterError("The candidate set is empty; give at least one candidate output.")
        if utility is not None and candidates is None:
            raise ParameterError("A utility function needs the list of candidates it scores.")
        self.candidates = candidates
        self.utility = utility
        self.monotonic = bool(monotonic)
        # Exponential mechanism: P ∝ exp(ε u / (2Δ)), i.e. Gumbel-max with scale 2Δ/ε (Δ/ε if monotonic).
        factor = (1.0 if self.monotonic else 2.0) * self.sensitivity
        self.scale = check_scale(factor / self.epsilon, self.name.replace("_", "-"), self.epsilon, factor)

    def _scores(self, data_or_scores: Any) -> np.ndarray:
        if self.utility is not None:
            scores = np.array([self.utility(data_or_scores, c) for c in self.candidates], dtype=float)
        else:
            scores = np.asarray(data_or_scores, dtype=float)
        if scores.ndim == 0 or scores.shape[-1] == 0:
            raise ParameterError("The candidate set is empty; give at least one score per candidate.")
        if self.candidates is not None and scores.shape[-1] != len(self.candidates):
            raise ParameterError(f"Got {scores.shape[-1]} scores for {len(self.candidates)} candidates; give one "
                                 f"score per candidate.")
        if not np.all(np.isfinite(scores)):
            raise ParameterError("The scores must be finite numbers; drop a candidate instead of scoring it -inf.")
        return scores

    def error_bound(self, alpha: float = 0.05, n_candidates: int | None = None) -> float:
        """Utility gap: u(output) ≥ max u − scale·(ln|R| + ln(1/alpha)) with probability ≥ 1 − alpha."""
        n = n_candidates if n_candidates is not None else (len(self.candidates) if self.candidates else None)
        if n is None or n < 1:
            raise ParameterError("The number of candidates is unknown or below 1; pass n_candidates.")
        return self.scale * (math.log(n) + math.log(1.0 / _check_alpha(alpha)))

    def _draw(self, scores: np.ndarray, src: NoiseSource) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def release(self, data_or_scores: Any, noise: NoiseArg = None) -> NoisyRelease:
        """Select one candidate per score row (the last axis indexes candidates).

        Pass the scores u(x, r) directly, or the data when the mechanism was built with ``utility``.
        Each row is an independent selection costing the full epsilon.
        """
        scores = self._scores(data_or_scores)
        src = as_noise_source(noise)
        idx = self._draw(scores, src)
        if self.candidates is not None:
            cands = np.empty(len(self.candidates), dtype=object)
            cands[:] = self.candidates
            value = _scalar_or_array(np.asarray(cands[idx])) if idx.ndim else self.candidates[int(idx)]
        else:
            value = _scalar_or_array(idx)
        return NoisyRelease(value, self.name, self.guarantee, src.fit_for_release, src.description,
                            unfit_reasons(src))


class ExponentialMechanism(_Selection):
    """Exponential mechanism (McSherry & Talwar 2007): outputs r with probability ∝ exp(ε·u(x, r)/(2Δu)).

    ε-DP when the utility's sensitivity is Δu (ε/2 in the exponent's place if ``monotonic``, i.e. every
    score moves in the same direction between neighbours). Drawn as Gumbel-max, which has exactly
    these probabilities; in secure mode by OpenDP's ``make_noisy_max`` with Gumbel noise.
    """

    name = "exponential"

    @property
    def guarantee(self) -> dict:
        return _pure_guarantee(self.epsilon, (
            f"epsilon-DP with epsilon = {self.epsilon:g} for a utility of sensitivity {self.sensitivity:g}: "
            f"outputs r with probability proportional to exp(u(x, r) / {self.scale:g})."), scale=self.scale)

    def probabilities(self, data_or_scores: Any) -> np.ndarray:
        """The exact output distribution: the softmax of scores / scale."""
        from scipy import special
        return special.softmax(self._scores(data_or_scores) / self.scale, axis=-1)

    def _draw(self, scores: np.ndarray, src: NoiseSource) -> np.ndarray:
        return src.gumbel_argmax(scores, self.scale)


class ReportNoisyMax(_Selection):
    """Report-noisy-max with exponential noise (McKenna & Sheldon 2020, = permute-and-flip): ε-DP.

    Adds Exponential(2Δ/ε) noise (Δ/ε if ``monotonic``) to each score and reports the arg-max; its
    expected error is never worse than the exponential mechanism's.
    """

    name = "report_noisy_max"

    @property
    def guarantee(self) -> dict:
        return _pure_guarantee(self.epsilon, (
            f"epsilon-DP with epsilon = {self.epsilon:g} for scores of sensitivity {self.sensitivity:g}: the "
            f"arg-max of the scores plus Exponential noise of scale {self.scale:g}."), scale=self.scale)

    def probabilities(self, data_or_scores: Any) -> np.ndarray:
        """Output distribution for one score vector, by numerical integration (for checks; O(n²))."""
        from scipy import integrate
        s = self._scores(data_or_scores)
        if s.ndim != 1:
            raise ParameterError("probabilities() takes one score vector at a time.")
        b = self.scale
        hi = s.max() + 60.0 * b
        out = np.empty(len(s))
        for i, si in enumerate(s):
            others = np.delete(s, i)

            def dens(x: float, si: float = si, others: np.ndarray = others) -> float:
                return math.exp(-(x - si) / b) / b * float(np.prod(-np.expm1(-np.clip(x - others, 0, None) / b)))

            pts = sorted(set(float(v) for v in others if si < v < hi))
            out[i] = integrate.quad(dens, si, hi, points=pts or None, limit=200)[0]
        return out / out.sum()

    def _draw(self, scores: np.ndarray, src: NoiseSource) -> np.ndarray:
        return src.exponential_argmax(scores, self.scale)


# ---------------------------------------------------------------------------------------------
# randomized response
# ---------------------------------------------------------------------------------------------
class WarnerRandomizedResponse:
    """Warner's randomized response on a yes/no answer: truthful with probability p = e^ε/(1+e^ε), else flipped.

    ε-local DP for each respondent. The unbiased count estimate from Y "yes" answers among n is
    n̂ = (Y − n·q)/(p − q) with q = 1 − p, of variance n·p·q/(p − q)² whatever the true count.
    """

    name = "warner_rr"

    def __init__(self, epsilon: float) -> None:
        self.epsilon = _check_rr_epsilon(epsilon, "Warner randomized response")
        self.p = 1.0 / (1.0 + math.exp(-self.epsilon))
        self.q = 1.0 / (1.0 + math.exp(self.epsilon))
        _check_rr_probabilities(self.p, self.q, "Warner randomized response", self.epsilon)

    @classmethod
    def from_probability(cls, p: float) -> "WarnerRandomizedResponse":
        """From the probability of a truthful report (e.g. 0.75 for Warner's 'answer randomly on tails' coin)."""
        p = float(p)
        if not (0.5 < p < 1.0):
            raise ParameterError(f"The probability of a truthful answer must lie in (0.5, 1), got {p!r}.")
        return cls(math.log(p / (1.0 - p)))

    @property
    def guarantee(self) -> dict:
        return {"model": "epsilon-local DP", "epsilon": self.epsilon, "delta": 0.0, "p_truthful": self.p,
                "statement": (f"epsilon-local DP with epsilon = {self.epsilon:g} for each respondent: the true "
                              f"answer is reported with probability {self.p:.6g} and flipped otherwise.")}

    def variance(self, n: int) -> float:
        """Variance of the count estimate from n responses (exact, independent of the true count)."""
        return n * self.p * self.q / (self.p - self.q) ** 2

    def error_bound(self, alpha: float = 0.05, n: int = 1) -> float:
        """Normal-approximation half-width of the (1 − alpha) interval for the count from n responses."""
        from scipy import stats
        return float(stats.norm.ppf(1.0 - _check_alpha(alpha) / 2.0)) * math.sqrt(self.variance(n))

    def release(self, answers: Any, noise: NoiseArg = None) -> NoisyRelease:
        arr = np.asarray(answers)
        if arr.dtype != bool and not np.all(np.isin(arr, (0, 1))):
            raise ParameterError("Warner randomized response takes yes/no answers as booleans or 0/1.")
        src = as_noise_source(noise)
        out = src.flip_bits(arr.astype(bool), self.p)
        return NoisyRelease(_scalar_or_array(out), self.name, self.guarantee, src.fit_for_release, src.description,
                            unfit_reasons(src))

    def estimate_count(self, responses: Any, alpha: float = 0.05) -> CountEstimate:
        """Unbiased estimate of the number of true "yes" answers from the randomized responses."""
        fit = None
        if isinstance(responses, NoisyRelease):
            fit = responses.fit_for_release
            responses = responses.value
        r = np.asarray(responses, dtype=bool).ravel()
        n = r.size
        est = (float(r.sum()) - n * self.q) / (self.p - self.q)
        return CountEstimate(est, self.variance(n), n, _check_alpha(alpha), fit)


class KaryRandomizedResponse:
    """k-ary randomized response (direct encoding / generalized RR) over ``categories``.

    Keeps the true category with p = e^ε/(e^ε + k − 1), else reports one of the k − 1 others
    uniformly (each with q = 1/(e^ε + k − 1)); ε-local DP. The unbiased estimate of category v's
    count from I_v reports among n is ĉ_v = (I_v − n·q)/(p − q), with variance
    [c_v·p(1 − p) + (n − c_v)·q(1 − q)]/(p − q)².
    """

    name = "kary_rr"

    def __init__(self, epsilon: float, categories: Sequence | int) -> None:
        self.epsilon = _check_rr_epsilon(epsilon, "k-ary randomized response")
        if isinstance(categories, (int, np.integer)) and not isinstance(categories, bool):
            categories = list(range(int(categories)))
        categories = list(categories)
        if len(categories) < 2:
            raise ParameterError(f"k-ary randomized response needs k >= 2 categories, got {len(categories)}.")
        if len(set(categories)) != len(categories):
            raise ParameterError("The categories of k-ary randomized response must be distinct.")
        self.categories = categories
        self.k = len(categories)
        e = math.exp(self.epsilon)
        self.p = e / (e + self.k - 1)
        self.q = 1.0 / (e + self.k - 1)
        _check_rr_probabilities(self.p, self.q, "k-ary randomized response", self.epsilon)
        self._index = {c: i for i, c in enumerate(categories)}

    @property
    def guarantee(self) -> dict:
        return {"model": "epsilon-local DP", "epsilon": self.epsilon, "delta": 0.0, "p_keep": self.p, "q_other": self.q,
                "statement": (f"epsilon-local DP with epsilon = {self.epsilon:g} for each respondent: the true "
                              f"category of {self.k} is kept with probability {self.p:.6g}, otherwise another is "
                              f"reported uniformly.")}

    def variance(self, n: int, count: Any = None) -> Any:
        """Variance of a category's count estimate from n reports; worst case over the true count if None."""
        vp, vq = self.p * (1 - self.p), self.q * (1 - self.q)
        if count is None:
            count = n if vp > vq else 0
        c = np.asarray(count, dtype=float)
        return _scalar_or_array((c * vp + (n - c) * vq) / (self.p - self.q) ** 2)

    def error_bound(self, alpha: float = 0.05, n: int = 1) -> float:
        """Normal-approximation half-width (worst case over the true count) for one category's count."""
        from scipy import stats
        return float(stats.norm.ppf(1.0 - _check_alpha(alpha) / 2.0)) * math.sqrt(self.variance(n))

    def encode(self, values: Any) -> np.ndarray:
        arr = np.asarray(values, dtype=object)
        try:
            codes = np.fromiter((self._index[v] for v in arr.ravel()), dtype=np.int64, count=arr.size)
        except (KeyError, TypeError):
            bad = next(v for v in arr.ravel() if v not in self._index)
            raise ParameterError(f"The value {bad!r} is not one of the {self.k} categories of this randomized "
                                 f"response.") from None
        return codes.reshape(arr.shape)

    def release(self, values: Any, noise: NoiseArg = None) -> NoisyRelease:
        codes = self.encode(values)
        src = as_noise_source(noise)
        out = src.randomize_categories(codes, self.k, self.p)
        cats = np.empty(self.k, dtype=object)
        cats[:] = self.categories
        value = cats[out]
        return NoisyRelease(value if value.ndim else value.item(), self.name, self.guarantee, src.fit_for_release,
                            src.description, unfit_reasons(src))

    def estimate_counts(self, responses: Any, alpha: float = 0.05) -> CountEstimate:
        """Unbiased estimates of every category's true count (in ``categories`` order), plug-in variances."""
        fit = None
        if isinstance(responses, NoisyRelease):
            fit = responses.fit_for_release
            responses = responses.value
        codes = self.encode(responses).ravel()
        n = codes.size
        observed = np.bincount(codes, minlength=self.k).astype(float)
        est = (observed - n * self.q) / (self.p - self.q)
        var = np.asarray(self.variance(n, np.clip(est, 0, n)), dtype=float)
        return CountEstimate(est, var, n, _check_alpha(alpha), fit)

# ---------------------------------------------------------------------------------------------
# planar Laplace
# ---------------------------------------------------------------------------------------------
class PlanarLaplace:
    """Planar Laplace mechanism for locations: ε-geo-indistinguishability (Andrés et al., CCS 2013).

    ``epsilon`` is per unit of distance of the (planar, projected) coordinates: any two locations
    at distance d produce output distributions within a factor e^{ε·d}. Noise: a uniform angle and
    a radius with density ε²·r·e^{−εr} (Gamma(2, 1/ε)).

    **Not fit for release, whatever the noise source.** The guarantee above holds for the
    mechanism over the reals. The radius comes from OpenDP's sampler, but the angle is a 53-bit
    uniform and the final step x + r·cos θ, y + r·sin θ is ordinary floating point, so which
    outputs are reachable depends on the true location, the same weakness Mironov (CCS 2012)
    exploited in textbook Laplace noise. Andrés et al. (CCS 2013) repair it by snapping the output
    to a grid and truncating it to a bounded area, at the price of a larger ε that their
    discretization theorem states; veil does not implement that step, so every release says
    ``fit_for_release=False`` with this reason (:attr:`NOT_FIT_REASON`). Use it for experiments
    and for the error figures (variance, confidence disc), not to publish locations.
    """

    name = "planar_laplace"
    NOT_FIT_REASON = ("planar Laplace's last step (polar to Cartesian) is plain floating point, not "
                      "floating-point-safe")

    def __init__(self, epsilon: float) -> None:
        self.epsilon = _check_epsilon(epsilon)
        check_scale(1.0 / self.epsilon, "planar Laplace", self.epsilon, 1.0)

    def guarantee_at(self, radius: float) -> float:
        """The privacy level l = ε·r enjoyed within a protection radius r."""
        return self.epsilon * float(radius)

    @property
    def guarantee(self) -> dict:
        return {"model": "epsilon-geo-indistinguishability", "epsilon_per_unit": self.epsilon, "delta": 0.0,
                "statement": (f"epsilon*d-privacy with epsilon = {self.epsilon:g} per unit distance: two locations "
                              f"at distance d are distinguishable by at most a factor exp({self.epsilon:g}*d).")}

    @property
    def variance(self) -> float:
        """Variance of each coordinate's noise: E[r²]/2 = 3/ε²."""
        return 3.0 / self.epsilon**2

    @property
    def expected_distance(self) -> float:
        return 2.0 / self.epsilon

    def error_bound(self, alpha: float = 0.05) -> float:
        """Radius within which the reported location falls with probability 1 − alpha."""
        return float(planar_radius_quantile(1.0 - _check_alpha(alpha), self.epsilon))

    def confidence_interval(self, alpha: float = 0.05, center: Any = (0.0, 0.0)) -> tuple[np.ndarray, float]:
        """A confidence disc (center, radius) for the true location around a reported one."""
        return np.asarray(center, dtype=float), self.error_bound(alpha)

    def release(self, points: Any, noise: NoiseArg = None) -> NoisyRelease:
        """Perturb each (x, y) point (last axis of length 2)."""
        pts = np.asarray(points, dtype=float)
        if pts.ndim == 0 or pts.shape[-1] != 2:
            raise ParameterError("Planar Laplace takes points as (x, y) pairs: an array whose last axis has length 2.")
        if not np.all(np.isfinite(pts)):
            raise ParameterError("The locations must be finite numbers; remove NaN and infinite coordinates.")
        src = as_noise_source(noise)
        shape = pts.shape[:-1]
        r = src.gamma2(shape, 1.0 / self.epsilon)
        theta = 2.0 * math.pi * src.uniform(shape)
        out = pts + np.stack([r * np.cos(theta), r * np.sin(theta)], axis=-1)
        return NoisyRelease(out, self.name, self.guarantee, False, src.description,
                            unfit_reasons(src) + (self.NOT_FIT_REASON,))
