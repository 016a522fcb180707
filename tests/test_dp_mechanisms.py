"""DP mechanisms: distributions (KS / χ² at fixed seeds), calibration, estimators, secure vs seeded noise.

Seeded tests are deterministic (fixed seeds) and use a 1e-3 significance level. Secure-mode tests
draw through OpenDP and cannot be seeded; they use small samples and a 1e-6 level, so a false
failure is a one-in-a-million event.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

import veil
from veil.dp import (ExponentialMechanism, Gaussian, Geometric, KaryRandomizedResponse, Laplace, NoiseSource,
                     PlanarLaplace, NoisyRelease, ReportNoisyMax, WarnerRandomizedResponse, analytic_gaussian_sigma,
                     classical_gaussian_sigma, gaussian_delta, planar_radius_cdf, planar_radius_quantile)

N = 20_000
LEVEL = 1e-3
SECURE_LEVEL = 1e-6


def _chi2_p(observed: np.ndarray, expected_prob: np.ndarray) -> float:
    expected = expected_prob / expected_prob.sum() * observed.sum()
    return stats.chisquare(observed, expected).pvalue


def _discrete_laplace_binned(samples: np.ndarray, mech: Geometric, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Counts and probabilities on bins (−∞, −m], −m+1, …, m−1, [m, ∞)."""
    z = np.clip(samples, -m, m)
    observed = np.bincount(z + m, minlength=2 * m + 1).astype(float)
    probs = mech.pmf(np.arange(-m, m + 1))
    tail = 2 * mech.ratio**m / (1 + mech.ratio) / 2  # P(Z >= m) = a^m/(1+a)
    probs[0] = probs[-1] = tail
    return observed, probs


# ---------------------------------------------------------------------------------------------
# additive noise matches its distribution
# ---------------------------------------------------------------------------------------------
def test_laplace_noise_ks_seeded():
    mech = Laplace(epsilon=0.5, sensitivity=2.0)
    out = mech.release(np.full(N, 10.0), noise=np.random.default_rng(11))
    assert stats.kstest(out.value - 10.0, stats.laplace(scale=4.0).cdf).pvalue > LEVEL
    assert mech.variance == pytest.approx(2 * 4.0**2)
    assert (out.value - 10.0).var() == pytest.approx(mech.variance, rel=0.05)


def test_gaussian_noise_ks_seeded():
    mech = Gaussian(epsilon=1.0, delta=1e-5, sensitivity=1.0)
    out = mech.release(np.zeros(N), noise=12)
    assert stats.kstest(out.value, stats.norm(scale=mech.sigma).cdf).pvalue > LEVEL


def test_discrete_laplace_chi2_seeded():
    mech = Geometric(epsilon=0.7, sensitivity=1)
    out = mech.release(np.zeros(N, dtype=int), noise=13)
    assert out.value.dtype == np.int64
    observed, probs = _discrete_laplace_binned(out.value, mech, m=8)
    assert probs.sum() == pytest.approx(1.0)
    assert _chi2_p(observed, probs) > LEVEL
    assert out.value.var() == pytest.approx(mech.variance, rel=0.05)


def test_secure_noise_follows_the_same_distributions():
    lap = Laplace(epsilon=1.0, sensitivity=1.5).release(np.zeros(3000))
    assert stats.kstest(lap.value, stats.laplace(scale=1.5).cdf).pvalue > SECURE_LEVEL
    gau = Gaussian(epsilon=0.5, delta=1e-6).release(np.zeros(3000))
    assert stats.kstest(gau.value, stats.norm(scale=analytic_gaussian_sigma(0.5, 1e-6)).cdf).pvalue > SECURE_LEVEL
    geo_mech = Geometric(epsilon=0.5)
    geo = geo_mech.release(np.zeros(4000, dtype=int))
    observed, probs = _discrete_laplace_binned(geo.value, geo_mech, m=10)
    assert _chi2_p(observed, probs) > SECURE_LEVEL


def test_additive_error_bounds():
    lap = Laplace(epsilon=1.0)
    assert lap.error_bound(0.05) == pytest.approx(math.log(20))
    noise = lap.release(np.zeros(N), noise=1).value
    assert np.mean(np.abs(noise) <= lap.error_bound(0.1)) == pytest.approx(0.9, abs=0.01)
    low, high = lap.confidence_interval(0.05, center=np.array([1.0, 2.0]))
    assert np.allclose(high - low, 2 * math.log(20))

    gau = Gaussian(1.0, 1e-5)
    assert gau.error_bound(0.05) == pytest.approx(1.959964 * gau.sigma, rel=1e-6)

    geo = Geometric(epsilon=0.3, sensitivity=2)
    for alpha in (0.5, 0.1, 0.05, 0.01, 0.001):
        m = geo.error_bound(alpha)
        inside = geo.pmf(np.arange(-m, m + 1)).sum()
        inside_smaller = geo.pmf(np.arange(-m + 1, m)).sum() if m > 0 else 0.0
        assert inside >= 1 - alpha - 1e-12 > inside_smaller


def test_values_are_released_around_the_truth_and_shapes_kept():
    vals = np.array([[1.0, 2.0], [3.0, 4.0]])
    out = Laplace(epsilon=1.0).release(vals, noise=5)
    assert out.value.shape == (2, 2)
    scalar = Laplace(epsilon=1.0).release(7.0, noise=5)
    assert isinstance(scalar.value, float)
    big = Geometric(epsilon=1.0).release(np.array([2**40, -(2**40)]))
    assert np.all(np.abs(big.value - np.array([2**40, -(2**40)])) < 100)


# ---------------------------------------------------------------------------------------------
# Gaussian analytic calibration
# ---------------------------------------------------------------------------------------------
def _hockey_stick(epsilon: float, sigma: float, sens: float) -> float:
    """δ(ε) = ∫ max(0, p(x) − e^ε q(x)) dx for p = N(Δ, σ²), q = N(0, σ²), by direct integration."""
    p, q = stats.norm(loc=sens, scale=sigma), stats.norm(scale=sigma)
    # the integrand is positive exactly where the privacy loss exceeds ε: x > σ²ε/Δ + Δ/2
    x0 = sigma**2 * epsilon / sens + sens / 2
    val, _ = integrate.quad(lambda x: p.pdf(x) - math.exp(epsilon) * q.pdf(x), x0, x0 + 60 * sigma,
                            epsabs=1e-16, epsrel=1e-10, limit=400)
    return val


@pytest.mark.parametrize("epsilon, delta, sens", [(1.0, 1e-5, 1.0), (0.1, 1e-5, 1.0), (0.5, 1e-3, 3.0),
                                                 (4.0, 1e-8, 1.0), (10.0, 1e-6, 0.5)])
def test_analytic_gaussian_meets_privacy_loss_condition_exactly(epsilon, delta, sens):
    sigma = analytic_gaussian_sigma(epsilon, delta, sens)
    assert gaussian_delta(epsilon, sigma, sens) <= delta
    assert _hockey_stick(epsilon, sigma, sens) == pytest.approx(delta, rel=1e-5)
    # tight: a slightly smaller sigma breaks the condition
    assert _hockey_stick(epsilon, sigma * 0.999, sens) > delta


def test_analytic_gaussian_known_values_and_beats_classical():
    # ε = 1, δ = 1e-5, Δ = 1: analytic σ ≈ 3.73 versus the classical sqrt(2 ln(1.25/δ)) ≈ 4.84
    assert analytic_gaussian_sigma(1.0, 1e-5) == pytest.approx(3.7306, abs=1e-3)
    assert classical_gaussian_sigma(1.0, 1e-5) == pytest.approx(4.8448, abs=1e-3)
    for eps in (0.05, 0.2, 0.5, 0.9):
        classical = classical_gaussian_sigma(eps, 1e-5)
        assert analytic_gaussian_sigma(eps, 1e-5) < classical
        assert gaussian_delta(eps, classical, 1.0) <= 1e-5  # the classical bound is valid, just loose
    # σ scales linearly with the sensitivity
    assert analytic_gaussian_sigma(0.5, 1e-6, 7.0) == pytest.approx(7 * analytic_gaussian_sigma(0.5, 1e-6))


# ---------------------------------------------------------------------------------------------
# selection
# ---------------------------------------------------------------------------------------------
SCORES = np.array([0.0, 1.0, 2.5, 3.0, 3.0])


def test_exponential_mechanism_frequencies_match_softmax_seeded():
    mech = ExponentialMechanism(epsilon=1.0, sensitivity=1.0)
    probs = mech.probabilities(SCORES)
    expected = np.exp(SCORES / 2.0)
    assert probs == pytest.approx(expected / expected.sum())
    out = mech.release(np.tile(SCORES, (N, 1)), noise=21)
    assert out.value.shape == (N,)
    counts = np.bincount(out.value, minlength=len(SCORES)).astype(float)
    assert _chi2_p(counts, probs) > LEVEL


def test_exponential_mechanism_secure_frequencies_and_candidates():
    mech = ExponentialMechanism(epsilon=2.0, sensitivity=1.0, candidates=list("abcde"))
    out = mech.release(np.tile(SCORES, (3000, 1)))
    assert out.fit_for_release
    counts = np.array([np.sum(out.value == c) for c in "abcde"], dtype=float)
    assert _chi2_p(counts, mech.probabilities(SCORES)) > SECURE_LEVEL


def test_exponential_mechanism_with_utility_function():
    data = ["x", "y", "y", "z", "y"]
    mech = ExponentialMechanism(epsilon=50.0, sensitivity=1.0, candidates=["x", "y", "z"],
                                utility=lambda d, c: d.count(c))
    assert mech.probabilities(data).argmax() == 1
    assert mech.release(data, noise=3).value == "y"
    assert mech.error_bound(0.05) == pytest.approx(2 / 50 * (math.log(3) + math.log(20)))


def test_report_noisy_max_frequencies_seeded():
    mech = ReportNoisyMax(epsilon=1.0, sensitivity=1.0)
    probs = mech.probabilities(SCORES)
    assert probs.sum() == pytest.approx(1.0)
    assert probs[3] == pytest.approx(probs[4])
    out = mech.release(np.tile(SCORES, (N, 1)), noise=22)
    counts = np.bincount(out.value, minlength=len(SCORES)).astype(float)
    assert _chi2_p(counts, probs) > LEVEL
    secure = mech.release(np.tile(SCORES, (3000, 1)))
    assert _chi2_p(np.bincount(secure.value, minlength=len(SCORES)).astype(float), probs) > SECURE_LEVEL


# ---------------------------------------------------------------------------------------------
# randomized response
# ---------------------------------------------------------------------------------------------
def test_warner_estimator_is_unbiased_and_its_variance_right():
    rr = WarnerRandomizedResponse(epsilon=1.0)
    n, true_count, runs = 2000, 600, 400
    truth = np.zeros(n, dtype=bool)
    truth[:true_count] = True
    rng = np.random.default_rng(31)
    estimates = np.array([rr.estimate_count(rr.release(truth, noise=rng)).estimate for _ in range(runs)])
    # the mean of `runs` estimates lies within its own 99.9% confidence interval around the truth
    half = stats.norm.ppf(1 - LEVEL / 2) * math.sqrt(rr.variance(n) / runs)
    assert abs(estimates.mean() - true_count) < half
    assert estimates.var(ddof=1) == pytest.approx(rr.variance(n), rel=0.2)
    one = rr.estimate_count(rr.release(truth, noise=1))
    assert one.low < one.estimate < one.high and not one.fit_for_release


def test_warner_coin_of_the_textbook():
    # "answer truthfully on heads, randomly on tails": truthful with p = 0.75, i.e. ε = ln 3
    rr = WarnerRandomizedResponse.from_probability(0.75)
    assert rr.epsilon == pytest.approx(math.log(3))
    # c = (I − 0.25 n)/0.5
    est = rr.estimate_count(np.array([True] * 40 + [False] * 60))
    assert est.estimate == pytest.approx((40 - 25) / 0.5)
    assert est.fit_for_release is None  # raw responses: provenance unknown


def test_kary_estimator_is_unbiased():
    cats = ["a", "b", "c", "d"]
    rr = KaryRandomizedResponse(epsilon=1.5, categories=cats)
    truth = np.array(["a"] * 700 + ["b"] * 200 + ["c"] * 100)
    true_counts = np.array([700, 200, 100, 0])
    rng = np.random.default_rng(32)
    runs = 300
    est = np.array([rr.estimate_counts(rr.release(truth, noise=rng)).estimate for _ in range(runs)])
    exact_var = np.asarray(rr.variance(len(truth), true_counts), dtype=float)
    half = stats.norm.ppf(1 - LEVEL / 2) * np.sqrt(exact_var / runs)
    assert np.all(np.abs(est.mean(axis=0) - true_counts) < half)
    assert np.allclose(est.var(axis=0, ddof=1), exact_var, rtol=0.25)
    assert est.sum(axis=1) == pytest.approx(np.full(runs, len(truth)))


def test_randomized_response_secure_mode_through_opendp():
    rr = WarnerRandomizedResponse(epsilon=1.0)
    out = rr.release(np.ones(3000, dtype=bool))
    assert out.fit_for_release
    assert stats.binomtest(int(out.value.sum()), 3000, rr.p).pvalue > SECURE_LEVEL
    k = KaryRandomizedResponse(epsilon=1.0, categories=3)
    out = k.release(np.zeros(3000, dtype=int))
    counts = np.bincount(np.asarray(out.value, dtype=int), minlength=3).astype(float)
    assert _chi2_p(counts, np.array([k.p, k.q, k.q])) > SECURE_LEVEL


# ---------------------------------------------------------------------------------------------
# planar Laplace
# ---------------------------------------------------------------------------------------------
def test_planar_laplace_radius_and_angle_seeded():
    mech = PlanarLaplace(epsilon=0.2)
    out = mech.release(np.zeros((N, 2)), noise=41)
    r = np.hypot(out.value[:, 0], out.value[:, 1])
    assert stats.kstest(r, lambda x: planar_radius_cdf(x, 0.2)).pvalue > LEVEL
    angle = np.arctan2(out.value[:, 1], out.value[:, 0])
    assert stats.kstest(angle, stats.uniform(loc=-math.pi, scale=2 * math.pi).cdf).pvalue > LEVEL
    assert out.value.var(axis=0) == pytest.approx([mech.variance] * 2, rel=0.06)


def test_planar_laplace_secure_radius_and_never_fit_for_release():
    mech = PlanarLaplace(epsilon=2.0)
    out = mech.release(np.full((3000, 2), 5.0))
    # the last step is plain floating point (audit, issue 10 item 3): secure noise does not make it fit
    assert not out.fit_for_release and out.not_fit_because == (PlanarLaplace.NOT_FIT_REASON,)
    assert "floating point" in out.label and "seeded" not in out.label
    r = np.hypot(*(out.value - 5.0).T)
    assert stats.kstest(r, lambda x: planar_radius_cdf(x, 2.0)).pvalue > SECURE_LEVEL


def test_planar_radius_quantile_inverts_cdf():
    p = np.array([0.0, 0.1, 0.5, 0.9, 0.99, 0.999999])
    assert planar_radius_cdf(planar_radius_quantile(p, 0.3), 0.3) == pytest.approx(p, abs=1e-12)
    mech = PlanarLaplace(epsilon=0.01)
    assert planar_radius_cdf(mech.error_bound(0.05), 0.01) == pytest.approx(0.95)
    assert mech.guarantee_at(100.0) == pytest.approx(1.0)


# ---------------------------------------------------------------------------------------------
# secure vs seeded
# ---------------------------------------------------------------------------------------------
def test_seeded_runs_are_reproducible_and_not_fit_for_release():
    for mech, data in [(Laplace(1.0), np.zeros(50)), (Gaussian(1.0, 1e-5), np.zeros(50)),
                       (Geometric(1.0), np.zeros(50, dtype=int)),
                       (ExponentialMechanism(1.0), np.zeros((50, 4))), (ReportNoisyMax(1.0), np.zeros((50, 4))),
                       (WarnerRandomizedResponse(1.0), np.zeros(50, dtype=bool)),
                       (KaryRandomizedResponse(1.0, 5), np.zeros(50, dtype=int)), (PlanarLaplace(1.0), np.zeros((50, 2)))]:
        a = mech.release(data, noise=7)
        b = mech.release(data, noise=np.random.default_rng(7))
        c = mech.release(data, noise=NoiseSource.seeded(7))
        assert isinstance(a, NoisyRelease) and not a.fit_for_release and "NOT fit" in a.label
        assert np.array_equal(a.value, b.value) and np.array_equal(a.value, c.value), mech.name


def test_secure_runs_are_not_reproducible_and_fit_for_release():
    for mech, data in [(Laplace(1.0), np.zeros(50)), (Gaussian(1.0, 1e-5), np.zeros(50)),
                       (Geometric(0.1), np.zeros(50, dtype=int)),
                       (ExponentialMechanism(0.01), np.zeros((50, 10))), (ReportNoisyMax(0.01), np.zeros((50, 10))),
                       (WarnerRandomizedResponse(0.1), np.zeros(50, dtype=bool)),
                       (KaryRandomizedResponse(0.1, 5), np.zeros(50, dtype=int))]:
        a, b = mech.release(data), mech.release(data, noise=NoiseSource.secure())
        assert a.fit_for_release and b.fit_for_release and a.label == "fit for release"
        assert not np.array_equal(a.value, b.value), mech.name


def test_opendp_privacy_maps_agree_with_our_guarantees():
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    from veil.dp import noise

    lap = Laplace(epsilon=0.3, sensitivity=2.0)
    assert noise._laplace_float(lap.scale).map(2.0) == pytest.approx(0.3)
    geo = Geometric(epsilon=0.4, sensitivity=3)
    assert noise._geometric_int(geo.scale).map(3) == pytest.approx(0.4)
    rnm = ReportNoisyMax(epsilon=0.8, sensitivity=2.0)
    assert noise._noisy_max(rnm.scale, False).map(2.0) == pytest.approx(0.8)
    em = ExponentialMechanism(epsilon=0.8, sensitivity=2.0)
    assert noise._noisy_max(em.scale, True).map(2.0) == pytest.approx(0.8**2 / 8)  # ε-DP ⇒ ε²/8-zCDP
    # veil tosses OpenDP's randomized-response coins itself (vectorized); their maps at veil's p:
    rr = WarnerRandomizedResponse(epsilon=1.2)
    assert dp.m.make_randomized_response_bool(rr.p).map(1) == pytest.approx(1.2)
    kr = KaryRandomizedResponse(epsilon=1.2, categories=6)
    assert dp.m.make_randomized_response(list(range(6)), kr.p, T="i64").map(1) == pytest.approx(1.2)


def test_guarantees_are_stated_before_drawing():
    g = Gaussian(1.0, 1e-5).guarantee
    assert g["model"] == "(epsilon, delta)-DP" and g["delta"] == 1e-5 and g["statement"].endswith(".")
    assert Laplace(2.0).guarantee["epsilon"] == 2.0
    assert "local" in WarnerRandomizedResponse(1.0).guarantee["model"]
    assert "geo" in PlanarLaplace(0.1).guarantee["model"]
    assert KaryRandomizedResponse(1.0, 4).variance(100) > 0


# ---------------------------------------------------------------------------------------------
# bad input: ParameterError with one sentence
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: Laplace(0.0), lambda: Laplace(-1.0), lambda: Laplace(float("nan")), lambda: Laplace(float("inf")),
    lambda: Geometric(0), lambda: Gaussian(0.0, 1e-5), lambda: ExponentialMechanism(-0.1),
    lambda: WarnerRandomizedResponse(0), lambda: KaryRandomizedResponse(0, 3), lambda: PlanarLaplace(-2),
    lambda: Laplace("abc"),
    lambda: Gaussian(1.0, 1.0), lambda: Gaussian(1.0, -0.1), lambda: Gaussian(1.0, 1.5), lambda: Gaussian(1.0, 0.0),
    lambda: Laplace(1.0, sensitivity=0), lambda: Gaussian(1.0, 1e-5, sensitivity=-1),
    lambda: ReportNoisyMax(1.0, sensitivity=float("inf")),
    lambda: KaryRandomizedResponse(1.0, 1), lambda: KaryRandomizedResponse(1.0, ["only"]),
    lambda: KaryRandomizedResponse(1.0, ["a", "a"]),
    lambda: ExponentialMechanism(1.0, candidates=[]), lambda: ReportNoisyMax(1.0, candidates=[]),
    lambda: ExponentialMechanism(1.0).release([], noise=1),
    lambda: ExponentialMechanism(1.0, candidates=["a", "b"]).release([1.0], noise=1),
    lambda: ExponentialMechanism(1.0).release([1.0, float("nan")], noise=1),
    lambda: KaryRandomizedResponse(1.0, ["a", "b"]).release(["c"], noise=1),
    lambda: WarnerRandomizedResponse(1.0).release([0, 2], noise=1),
    lambda: WarnerRandomizedResponse.from_probability(0.4),
    lambda: Laplace(1.0).release([1.0, float("nan")], noise=1),
    lambda: Geometric(1.0).release([1.5], noise=1),
    lambda: PlanarLaplace(1.0).release([1.0, 2.0, 3.0], noise=1),
    lambda: Laplace(1.0).error_bound(0.0), lambda: Laplace(1.0).release([1.0], noise="secure"),
    # noise scales whose variance or error bar would overflow or underflow (issue 10, item 10)
    lambda: Laplace(1e-300), lambda: Laplace(1e300, sensitivity=1e-10), lambda: Geometric(1e-300),
    lambda: Geometric(1e-17), lambda: Gaussian(1e-300, 1e-5, sensitivity=1e149), lambda: ExponentialMechanism(5e-324),
    lambda: ReportNoisyMax(1e-300), lambda: PlanarLaplace(1e-300), lambda: WarnerRandomizedResponse(1e-300),
    lambda: WarnerRandomizedResponse(40.0), lambda: KaryRandomizedResponse(1e-300, 3),
    lambda: KaryRandomizedResponse(800.0, 3), lambda: KaryRandomizedResponse(45.0, 2),
    lambda: NoiseSource.secure().laplace([1.0], float("inf")), lambda: NoiseSource.seeded(1).laplace([1.0], -1.0),
    lambda: NoiseSource.secure().discrete_laplace([1], 0.0), lambda: NoiseSource.secure().gaussian([1.0], "x"),
    lambda: NoiseSource.secure().gumbel_argmax([0.0, 1.0], float("inf")), lambda: NoiseSource.seeded(-1),
])
def test_bad_input_raises_parameter_error_with_one_sentence(make):
    with pytest.raises(veil.ParameterError) as info:
        make()
    msg = str(info.value)
    assert msg.endswith(".") and msg.count(". ") == 0 and "\n" not in msg


def test_extreme_but_computable_scales_give_finite_figures():
    """At the edges of the accepted range every figure a mechanism states is a finite number."""
    additive = (Laplace(1e-150), Laplace(1e150), Geometric(2.3e-16), Geometric(1e3), Gaussian(1e-300, 1e-5),
                PlanarLaplace(1e-149))
    figures = [(m, m.variance, m.error_bound(0.05)) for m in additive]
    figures += [(m, m.variance(100), m.error_bound(0.05, 100)) for m in (
        WarnerRandomizedResponse(1e-9), WarnerRandomizedResponse(36.0), KaryRandomizedResponse(1e-9, 10))]
    figures += [(ExponentialMechanism(1e-149), 0.0, ExponentialMechanism(1e-149).error_bound(0.05, 10))]
    for mech, variance, bound in figures:
        assert math.isfinite(variance) and variance >= 0 and math.isfinite(bound) and bound >= 0, mech
    huge = Geometric(1e-15)  # scale 10^15: e^(-1/scale) is 1 in floating point, the variance is not infinite
    assert huge.variance == pytest.approx(2e30, rel=1e-6)
    assert huge.error_bound(0.05) == pytest.approx(1e15 * math.log(1 / 0.05), rel=1e-6)
    assert Geometric(1e3).error_bound(0.05) == 0 and Geometric(1e3).variance == 0.0


def test_secure_randomized_response_keeps_at_its_rate_and_refuses_a_certain_coin():
    source = NoiseSource.secure()
    n = 200_000
    kept = source.flip_bits(np.ones(n, dtype=bool), 0.75)
    # Secure coins cannot be seeded: a bound a correct coin misses once in 10^9 runs.
    assert abs(kept.mean() - 0.75) < 7 * math.sqrt(0.75 * 0.25 / n)
    codes = np.full(n, 2)
    out = source.randomize_categories(codes, 5, 0.6)
    assert abs((out == 2).mean() - 0.6) < 7 * math.sqrt(0.24 / n)
    others = np.bincount(out[out != 2], minlength=5)[[0, 1, 3, 4]]
    assert np.all(np.abs(others / others.sum() - 0.25) < 0.01)
    with pytest.raises(veil.ParameterError, match="truthful"):
        source.flip_bits(np.ones(3, dtype=bool), 1.0)
    with pytest.raises(veil.ParameterError, match="truthful"):
        source.randomize_categories(np.zeros(3, dtype=int), 4, 0.2)
