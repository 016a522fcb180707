"""The contract every differential privacy mechanism keeps (:func:`check_mechanism`).

A mechanism is registered as a :class:`MechanismCase`: a name and a factory ``make(epsilon)``
whose default ε is the one checked. :data:`MECHANISMS` lists every mechanism of
:mod:`veil.dp.mechanisms` (the queries of :mod:`veil.dp.queries` are in
:mod:`veil.conformance.queries`); a new mechanism of a known kind joins with one line there, and a
new kind adds what it states to :data:`KINDS`. The check draws many times from one seed and
requires that:

* **the draws follow the distribution the guarantee states**, derived from ε, δ and the
  sensitivity (not from the mechanism's own noise attributes): Laplace noise of scale Δ/ε,
  discrete Laplace of scale Δ/ε, Gaussian noise whose σ meets (ε, δ) (Balle and Wang's exact
  condition), the discrete Gaussian's pmf ∝ exp(−z²/(2σ²)) and the
  Gaussian's N(0, σ²) with ρ = Δ²/(2σ²), the exponential mechanism's softmax of ε·u/(2Δ),
  report-noisy-max's arg-max under
  exponential noise of scale 2Δ/ε, randomized response's keep probabilities, and planar Laplace's
  Gamma(2, 1/ε) radius with a uniform angle (a Kolmogorov–Smirnov test for continuous draws, χ²
  or binomial for discrete ones); draws from the secure source are tested too, at a smaller level;
* **the stated error bound holds at the stated level** (a binomial test of how often the error
  exceeds ``error_bound(alpha)``), and **the stated variance** is the draws' (the randomized
  responses' count estimators are also unbiased);
* **a seeded run is marked not fit for release** (and gives the same draws again), and a run from
  the secure source is marked fit, unless the mechanism is never fit for release (planar Laplace);
* **bad parameters** (ε of 0, −1, NaN or infinity, and the case's own) raise a
  :class:`~veil.errors.ParameterError` of one sentence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Sequence

import numpy as np
from scipy import integrate, special, stats

from veil.conformance.base import (LEVEL, SECURE_LEVEL, ConformanceError, chi2_pvalue, ks_pvalue, misses_pvalue,
                                   one_sentence, variance_pvalue)
from veil.dp.discrete_gaussian import DiscreteGaussian
from veil.dp.zcdp_gaussian import ZCDPGaussian
from veil.dp.mechanisms import (ExponentialMechanism, Gaussian, Geometric, KaryRandomizedResponse, Laplace,
                                PlanarLaplace, ReportNoisyMax, WarnerRandomizedResponse, gaussian_delta)

#: Draws from one seed, and from the secure source.
DRAWS, SECURE_DRAWS = 20_000, 4_000
#: The miss probabilities whose error bounds are checked.
ALPHAS = (0.05, 0.3)
#: Repetitions of a randomized response of RESPONDENTS answers, for its estimator.
REPETITIONS, RESPONDENTS = 2_000, 200
#: Scores of the selection mechanisms' candidates.
SCORES = np.array([0.0, 1.0, 2.0, 4.0, 4.5])


@dataclass(frozen=True)
class MechanismCase:
    """A DP mechanism as the suite builds it.

    Attributes:
        name: the case's name (the test's id).
        make: ``make(epsilon)`` builds the mechanism; the default ε is the one checked.
        never_fit: whether the mechanism's releases are never fit for release, whatever the noise
            (planar Laplace's floating-point last step).
        invalid: more bad constructions, each ``call()``, that must raise a one-sentence
            :class:`~veil.errors.ParameterError`.
    """

    name: str
    make: Callable[..., object]
    never_fit: bool = False
    invalid: Sequence[Callable[[], object]] = ()

    def __str__(self) -> str:
        return self.name


#: Every mechanism of :mod:`veil.dp.mechanisms`, with each parameter that changes what it draws.
MECHANISMS = [
    MechanismCase("Laplace", lambda epsilon=0.5: Laplace(epsilon, 2.0), invalid=[lambda: Laplace(1.0, 0)]),
    MechanismCase("geometric", lambda epsilon=0.7: Geometric(epsilon, 1), invalid=[lambda: Geometric(1.0, -1)]),
    MechanismCase("geometric, sensitivity 3", lambda epsilon=2.0: Geometric(epsilon, 3)),
    MechanismCase("Gaussian", lambda epsilon=1.0: Gaussian(epsilon, 1e-5, 2.0),
                  invalid=[lambda: Gaussian(1.0, 0.0), lambda: Gaussian(1.0, 1.5)]),
    MechanismCase("Gaussian, large ε", lambda epsilon=4.0: Gaussian(epsilon, 1e-3)),
    MechanismCase("exponential", lambda epsilon=1.0: ExponentialMechanism(epsilon, 1.0),
                  invalid=[lambda: ExponentialMechanism(1.0, candidates=[])]),
    MechanismCase("exponential, monotonic", lambda epsilon=0.8: ExponentialMechanism(epsilon, 1.0, monotonic=True)),
    MechanismCase("report-noisy-max", lambda epsilon=1.0: ReportNoisyMax(epsilon, 1.0)),
    MechanismCase("Warner randomized response", lambda epsilon=1.0: WarnerRandomizedResponse(epsilon),
                  invalid=[lambda: WarnerRandomizedResponse(1000.0)]),
    MechanismCase("k-ary randomized response", lambda epsilon=1.5: KaryRandomizedResponse(epsilon, list("abcd")),
                  invalid=[lambda: KaryRandomizedResponse(1.0, ["a"]),
                           lambda: KaryRandomizedResponse(1.0, list("aa"))]),
    MechanismCase("planar Laplace", lambda epsilon=0.3: PlanarLaplace(epsilon), never_fit=True),
    MechanismCase("discrete Gaussian (ρ)", lambda rho=0.05: DiscreteGaussian(rho, 2),
                  invalid=[lambda: DiscreteGaussian(0.1, 0)]),
    MechanismCase("Gaussian (ρ)", lambda rho=0.05: ZCDPGaussian(rho, 2.5),
                  invalid=[lambda: ZCDPGaussian(0.1, 0), lambda: ZCDPGaussian(0, 1)]),
]


@dataclass(frozen=True)
class MechanismCheck:
    """What :func:`check_mechanism` checked: the case's name, the kind of mechanism and the
    p-values of the tests (the smallest passed)."""

    name: str
    kind: str
    pvalues: dict


# --------------------------------------------------------------------------- what each kind states

def _laplace(mech: Laplace, noise, n: int, pvalues: dict, secure: bool) -> np.ndarray:
    scale = mech.sensitivity / mech.epsilon
    draws = np.asarray(mech.release(np.zeros(n), noise=noise).value, dtype=float)
    pvalues["distribution"] = ks_pvalue(draws, stats.laplace(scale=scale).cdf)
    if not secure:
        pvalues["variance"] = variance_pvalue(draws, mech.variance)
        _bounds(mech, np.abs(draws), pvalues)
    return draws


def _gaussian(mech: Gaussian, noise, n: int, pvalues: dict, secure: bool) -> np.ndarray:
    draws = np.asarray(mech.release(np.zeros(n), noise=noise).value, dtype=float)
    # The σ the guarantee states must meet (ε, δ) exactly; the draws must have it.
    pvalues["privacy"] = 1.0 if gaussian_delta(mech.epsilon, mech.sigma, mech.sensitivity) <= \
        mech.delta * (1 + 1e-9) else 0.0
    pvalues["distribution"] = ks_pvalue(draws, stats.norm(scale=mech.sigma).cdf)
    if not secure:
        pvalues["variance"] = variance_pvalue(draws, mech.variance)
        _bounds(mech, np.abs(draws), pvalues)
    return draws


def _geometric(mech: Geometric, noise, n: int, pvalues: dict, secure: bool) -> np.ndarray:
    ratio = math.exp(-mech.epsilon / mech.sensitivity)
    draws = np.asarray(mech.release(np.zeros(n, dtype=np.int64), noise=noise).value, dtype=np.int64)
    top = int(np.abs(draws).max()) + 1
    support = np.arange(-top, top + 1)
    expected = (1 - ratio) / (1 + ratio) * ratio ** np.abs(support) * n
    observed = np.bincount(draws + top, minlength=len(support))
    pvalues["distribution"] = chi2_pvalue(observed, expected)
    if not secure:
        pvalues["variance"] = variance_pvalue(draws, mech.variance)
        _bounds(mech, np.abs(draws), pvalues)
    return draws


def _discrete_gaussian(mech: DiscreteGaussian, noise, n: int, pvalues: dict, secure: bool) -> np.ndarray:
    # σ from ρ and Δ as the guarantee states them (ρ = Δ²/(2σ²)), not from the mechanism's attribute
    sigma = mech.sensitivity / math.sqrt(2 * mech.rho)
    draws = np.asarray(mech.release(np.zeros(n, dtype=np.int64), noise=noise).value, dtype=np.int64)
    top = max(int(np.abs(draws).max()), int(40 * sigma)) + 1
    support = np.arange(-top, top + 1)
    weights = np.exp(-(support.astype(float) ** 2) / (2 * sigma**2))
    observed = np.bincount(draws + top, minlength=len(support))
    pvalues["distribution"] = chi2_pvalue(observed, weights / weights.sum() * n)
    if not secure:
        pvalues["variance"] = variance_pvalue(draws, mech.variance)
        _bounds(mech, np.abs(draws), pvalues)
    return draws


def _zcdp_gaussian(mech: ZCDPGaussian, noise, n: int, pvalues: dict, secure: bool) -> np.ndarray:
    # σ must meet ρ = Δ²/(2σ²) exactly, and the draws must have it
    pvalues["privacy"] = 1.0 if Fraction(mech.sensitivity) ** 2 / (2 * Fraction(mech.sigma) ** 2) <= \
        Fraction(mech.rho) else 0.0
    draws = np.asarray(mech.release(np.zeros(n), noise=noise).value, dtype=float)
    pvalues["distribution"] = ks_pvalue(draws, stats.norm(scale=mech.sensitivity / math.sqrt(2 * mech.rho)).cdf)
    if not secure:
        pvalues["variance"] = variance_pvalue(draws, mech.variance)
        _bounds(mech, np.abs(draws), pvalues)
    return draws


def _bounds(mech, errors: np.ndarray, pvalues: dict) -> None:
    for alpha in ALPHAS:
        misses = int((errors > mech.error_bound(alpha)).sum())
        pvalues[f"error-bound {alpha}"] = misses_pvalue(misses, len(errors), alpha)


def _softmax_scale(mech) -> float:
    return (1.0 if mech.monotonic else 2.0) * mech.sensitivity / mech.epsilon


def _exponential(mech: ExponentialMechanism, noise, n: int, pvalues: dict, secure: bool) -> np.ndarray:
    expected = special.softmax(SCORES / _softmax_scale(mech))
    return _selection(mech, expected, noise, n, pvalues, secure)


def _noisy_max(mech: ReportNoisyMax, noise, n: int, pvalues: dict, secure: bool) -> np.ndarray:
    scale = _softmax_scale(mech)
    # P(i) = ∫ density of s_i + Exp(scale) at x · Π_{j≠i} P(s_j + Exp(scale) < x) dx.
    expected = np.empty(len(SCORES))
    for i, s in enumerate(SCORES):
        others = np.delete(SCORES, i)

        def density(x, s=s, others=others):
            return math.exp(-(x - s) / scale) / scale * float(np.prod(-np.expm1(-np.clip(x - others, 0, None) / scale)))

        expected[i] = integrate.quad(density, s, s + 60 * scale, points=[o for o in others if o > s] or None,
                                     limit=200)[0]
    return _selection(mech, expected / expected.sum(), noise, n, pvalues, secure)


def _selection(mech, expected: np.ndarray, noise, n: int, pvalues: dict, secure: bool) -> np.ndarray:
    chosen = np.asarray(mech.release(np.tile(SCORES, (n, 1)), noise=noise).value, dtype=np.int64)
    pvalues["distribution"] = chi2_pvalue(np.bincount(chosen, minlength=len(SCORES)), expected * n)
    if not secure:
        gap = SCORES.max() - SCORES[chosen]
        for alpha in ALPHAS:
            misses = int((gap > mech.error_bound(alpha, n_candidates=len(SCORES))).sum())
            pvalues[f"error-bound {alpha}"] = misses_pvalue(misses, n, alpha)
    return chosen


def _warner(mech: WarnerRandomizedResponse, noise, n: int, pvalues: dict, secure: bool) -> np.ndarray:
    p = 1.0 / (1.0 + math.exp(-mech.epsilon))
    answers = np.arange(n) % 3 == 0
    reports = np.asarray(mech.release(answers, noise=noise).value, dtype=bool)
    pvalues["distribution"] = float(stats.binomtest(int((reports == answers).sum()), n, p).pvalue)
    if not secure:
        rng = noise if isinstance(noise, np.random.Generator) else np.random.default_rng(noise)
        truth = rng.random((REPETITIONS, RESPONDENTS)) < 0.3
        many = np.asarray(mech.release(truth, noise=noise).value, dtype=bool)
        estimates = np.array([mech.estimate_count(row).estimate for row in many])
        _estimator(mech.variance(RESPONDENTS), estimates, truth.sum(axis=1), pvalues,
                   [mech.error_bound(a, RESPONDENTS) for a in ALPHAS])
    return reports


def _kary(mech: KaryRandomizedResponse, noise, n: int, pvalues: dict, secure: bool) -> np.ndarray:
    k = len(mech.categories)
    e = math.exp(mech.epsilon)
    p, q = e / (e + k - 1), 1.0 / (e + k - 1)
    codes = np.arange(n) % k
    values = np.array(mech.categories, dtype=object)[codes]
    reports = mech.encode(mech.release(values, noise=noise).value)
    observed = np.zeros((k, k))
    np.add.at(observed, (codes, reports), 1)
    expected = np.where(np.eye(k, dtype=bool), p, q) * np.bincount(codes, minlength=k)[:, None]
    pvalues["distribution"] = min(chi2_pvalue(o, x) for o, x in zip(observed, expected))
    if not secure:
        rng = noise if isinstance(noise, np.random.Generator) else np.random.default_rng(noise)
        truth = rng.integers(0, k, size=(REPETITIONS, RESPONDENTS))
        many = mech.encode(mech.release(np.array(mech.categories, dtype=object)[truth], noise=noise).value)
        estimates = np.array([mech.estimate_counts(np.array(mech.categories, dtype=object)[row]).estimate[0]
                              for row in many])
        counts = (truth == 0).sum(axis=1)
        # Each repetition's variance depends on its true count; their mean is the variance of the mix.
        variance = float(np.mean(mech.variance(RESPONDENTS, counts)))
        _estimator(variance, estimates, counts, pvalues, [mech.error_bound(a, RESPONDENTS) for a in ALPHAS])
    return reports


def _estimator(variance: float, estimates: np.ndarray, truth: np.ndarray, pvalues: dict, bounds: list) -> None:
    errors = estimates - truth
    pvalues["unbiased"] = float(2 * stats.norm.sf(abs(errors.mean()) / math.sqrt(variance / len(errors))))
    pvalues["variance"] = variance_pvalue(errors, variance)
    for alpha, bound in zip(ALPHAS, bounds):
        pvalues[f"error-bound {alpha}"] = misses_pvalue(int((np.abs(errors) > bound).sum()), len(errors), alpha)


def _planar(mech: PlanarLaplace, noise, n: int, pvalues: dict, secure: bool) -> np.ndarray:
    moved = np.asarray(mech.release(np.zeros((n, 2)), noise=noise).value, dtype=float)
    radius = np.hypot(moved[:, 0], moved[:, 1])
    angle = np.arctan2(moved[:, 1], moved[:, 0])
    pvalues["distribution"] = min(ks_pvalue(radius, stats.gamma(2, scale=1.0 / mech.epsilon).cdf),
                                  ks_pvalue(angle, stats.uniform(-math.pi, 2 * math.pi).cdf))
    if not secure:
        pvalues["variance"] = min(variance_pvalue(moved[:, 0], mech.variance),
                                  variance_pvalue(moved[:, 1], mech.variance))
        _bounds(mech, radius, pvalues)
    return moved


#: Per kind of mechanism (the first class a mechanism is an instance of), how the suite draws from
#: it and tests the draws against what the kind states.
KINDS: list[tuple[type, Callable]] = [
    (Laplace, _laplace), (Geometric, _geometric), (Gaussian, _gaussian), (ExponentialMechanism, _exponential),
    (ReportNoisyMax, _noisy_max), (WarnerRandomizedResponse, _warner), (KaryRandomizedResponse, _kary),
    (PlanarLaplace, _planar), (DiscreteGaussian, _discrete_gaussian), (ZCDPGaussian, _zcdp_gaussian),
]


def check_mechanism(case: MechanismCase, seed: int = 0) -> MechanismCheck:
    """Check a DP mechanism against the contract of the module notes.

    Args:
        case: the mechanism (:class:`MechanismCase`).
        seed: the seed of the draws.

    Returns:
        What was checked (the returned MechanismCheck).

    Raises:
        ConformanceError: a property is broken (the error names it).
        ValueError: the mechanism is of no kind in :data:`KINDS`.
    """
    mech = case.make()
    kind, draw = next(((cls, fn) for cls, fn in KINDS if isinstance(mech, cls)), (None, None))
    if draw is None:
        raise ValueError(f"{case.name}: no kind in KINDS says what a {type(mech).__name__} draws.")
    subject = case.name
    for bad in (0, -1, math.nan, math.inf):
        one_sentence(subject, lambda: case.make(bad), f"epsilon {bad}")
    for i, call in enumerate(case.invalid):
        one_sentence(subject, call, f"its bad construction #{i + 1}")
    pvalues: dict = {}
    draw(mech, np.random.default_rng(seed), DRAWS, pvalues, False)
    _judge(subject, pvalues, LEVEL)
    secure: dict = {}
    draw(mech, None, SECURE_DRAWS, secure, True)
    _judge(subject + " (secure source)", secure, SECURE_LEVEL)
    _check_fitness(case, mech, seed, subject)
    return MechanismCheck(case.name, kind.__name__, {**pvalues, **{f"secure {k}": v for k, v in secure.items()}})


def _judge(subject: str, pvalues: dict, level: float) -> None:
    for name, p in pvalues.items():
        if p < level:
            prop = name.split(" ")[0]
            raise ConformanceError(subject, prop, f"{name}: p = {p:.3g} < {level:g}")


def _sample_input(mech) -> object:
    if isinstance(mech, (ExponentialMechanism, ReportNoisyMax)):
        return SCORES
    if isinstance(mech, WarnerRandomizedResponse):
        return np.array([True, False, True])
    if isinstance(mech, KaryRandomizedResponse):
        return np.array(mech.categories, dtype=object)
    if isinstance(mech, PlanarLaplace):
        return np.zeros((3, 2))
    return np.array([3, 5, 8])


def _check_fitness(case: MechanismCase, mech, seed: int, subject: str) -> None:
    values = _sample_input(mech)
    seeded, again = mech.release(values, noise=seed), mech.release(values, noise=seed)
    if seeded.fit_for_release or not seeded.not_fit_because or not seeded.label.startswith("NOT fit for release"):
        raise ConformanceError(subject, "fitness", f"a seeded run says {seeded.label!r}")
    if not np.array_equal(np.asarray(seeded.value), np.asarray(again.value)):
        raise ConformanceError(subject, "fitness", "two runs from one seed draw differently")
    secure = mech.release(values)
    if case.never_fit:
        if secure.fit_for_release or not secure.not_fit_because:
            raise ConformanceError(subject, "fitness", f"a run it says is never fit says {secure.label!r}")
    elif not secure.fit_for_release or secure.not_fit_because or secure.label != "fit for release":
        raise ConformanceError(subject, "fitness", f"a run from the secure source says {secure.label!r}")
