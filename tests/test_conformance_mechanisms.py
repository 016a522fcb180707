"""The DP conformance suites (:mod:`veil.conformance.mechanisms`, :mod:`veil.conformance.queries`):
every registered mechanism and query keeps the contract, every mechanism and query of veil is
registered, and one broken on purpose in each property is caught."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import veil.dp.mechanisms
import veil.dp.queries
from veil.conformance import MECHANISMS, QUERIES, ConformanceError, MechanismCase, QueryCase, check_mechanism, \
    check_query
from veil.dp import ExponentialMechanism, Gaussian, Geometric, Laplace, WarnerRandomizedResponse, dp_count, \
    dp_histogram
from veil.dp.noise import as_noise_source


@pytest.mark.parametrize("case", MECHANISMS, ids=str)
def test_every_mechanism_keeps_the_contract(case):
    check_mechanism(case)


@pytest.mark.parametrize("case", QUERIES, ids=str)
def test_every_query_keeps_the_contract(case):
    check_query(case)


def test_every_mechanism_and_query_of_veil_is_registered():
    registered = {type(case.make()) for case in MECHANISMS}
    classes = {getattr(veil.dp.mechanisms, name) for name in veil.dp.mechanisms.__all__}
    mechanisms = {cls for cls in classes if isinstance(cls, type) and hasattr(cls, "release")}
    assert mechanisms <= registered, f"not in MECHANISMS: {sorted(c.__name__ for c in mechanisms - registered)}"
    # every query function of veil.dp.queries appears in a case (dp_contingency is dp_histogram)
    asked = " ".join(case.ask.__code__.co_names.__repr__() for case in QUERIES)
    queries = {name for name in veil.dp.queries.__all__ if name.startswith("dp_") and name != "dp_contingency"}
    assert all(name in asked for name in queries)


# --------------------------------------------------------------------------- broken on purpose

class WideLaplace(Laplace):
    """Draws twice the noise it states."""

    def release(self, values, noise=None):
        src = as_noise_source(noise)
        return self._release(src.laplace(values, 2 * self.scale), src)


class SlightlyWideLaplace(Laplace):
    """Draws 5 % more noise than it states."""

    def release(self, values, noise=None):
        src = as_noise_source(noise)
        return self._release(src.laplace(values, 1.05 * self.scale), src)


class OptimisticLaplace(Laplace):
    """States an error bound half as wide as the noise's."""

    def error_bound(self, alpha=0.05):
        return super().error_bound(alpha) / 2


class UnderstatedLaplace(Laplace):
    """States the variance of noise of scale 1, whatever its scale."""

    @property
    def variance(self):
        return 2.0 * self.scale


class ThinGaussian(Gaussian):
    """States and draws a σ too small for its (ε, δ)."""

    def __init__(self, epsilon, delta=1e-5, sensitivity=2.0):
        super().__init__(epsilon, delta, sensitivity)
        self.sigma = self.scale = self.sigma / 2


class SteepGeometric(Geometric):
    """Draws discrete Laplace noise of a scale 1.5 times the one stated."""

    def release(self, values, noise=None):
        src = as_noise_source(noise)
        return self._release(src.discrete_laplace(values, 1.5 * self.scale), src)


class HalfExponential(ExponentialMechanism):
    """Selects with ε·u/Δ, forgetting the 2 of the exponent."""

    def _draw(self, scores, src):
        return src.gumbel_argmax(scores, self.scale / 2)


class BiasedWarner(WarnerRandomizedResponse):
    """Estimates three yeses too many (a quarter of the estimate's standard deviation)."""

    def estimate_count(self, responses, alpha=0.05):
        out = super().estimate_count(responses, alpha)
        return dataclasses.replace(out, estimate=out.estimate + 3.0)


class AlwaysFit(Laplace):
    """Marks every release fit, seeded ones too."""

    def release(self, values, noise=None):
        return dataclasses.replace(super().release(values, noise), fit_for_release=True, not_fit_because=())


class Careless(Laplace):
    """Takes any ε (draws with the absolute value of it)."""

    def __init__(self, epsilon, sensitivity=2.0):
        self.epsilon = abs(float(epsilon)) or 1.0
        self.sensitivity = sensitivity
        self.scale = sensitivity / self.epsilon


@pytest.mark.parametrize("make, prop", [
    (lambda epsilon=0.5: WideLaplace(epsilon, 2.0), "distribution"),
    # 5 % is at the edge of what the KS test sees in 20,000 draws; the variance's test sees it
    (lambda epsilon=0.5: SlightlyWideLaplace(epsilon, 2.0), ("distribution", "variance")),
    (lambda epsilon=0.5: OptimisticLaplace(epsilon, 2.0), "error-bound"),
    (lambda epsilon=0.5: UnderstatedLaplace(epsilon, 2.0), "variance"),
    (lambda epsilon=1.0: ThinGaussian(epsilon), "privacy"),
    (lambda epsilon=0.7: SteepGeometric(epsilon, 1), "distribution"),
    (lambda epsilon=1.0: HalfExponential(epsilon, 1.0), "distribution"),
    (lambda epsilon=1.0: BiasedWarner(epsilon), "unbiased"),
    (lambda epsilon=0.5: AlwaysFit(epsilon, 2.0), "fitness"),
    (lambda epsilon=0.5: Careless(epsilon), "parameters"),
], ids=["wide Laplace", "5% wide Laplace", "optimistic bound", "understated variance", "thin Gaussian",
        "steep geometric", "half exponential", "biased Warner", "always fit", "careless ε"])
def test_a_broken_mechanism_is_caught(make, prop):
    with pytest.raises(ConformanceError) as caught:
        check_mechanism(MechanismCase("broken", make))
    assert caught.value.property in ((prop,) if isinstance(prop, str) else prop), caught.value


def _narrow_count(data, noise, epsilon=0.5):
    result = dp_count(data, epsilon, noise=noise)
    return dataclasses.replace(result, low=result.value - 1, high=result.value + 1)


def _leaky_count(data, noise, epsilon=0.5):
    # Twice the ε it says: the noise is that of ε = 1.
    return dataclasses.replace(dp_count(data, 2 * epsilon, noise=noise), epsilon=epsilon)


def _fit_histogram(data, noise, epsilon=0.8):
    result = dp_histogram(data, "sex", epsilon, data_categories=True, noise=noise)
    return dataclasses.replace(result, fit_for_release=noise is None, not_fit_because=())


@pytest.mark.parametrize("case, prop", [
    (QueryCase("narrow count", _narrow_count, truth=len), "error-bound"),
    (QueryCase("leaky count", _leaky_count, truth=len), "distribution"),
    (QueryCase("histogram calling its data categories public", _fit_histogram,
               truth=lambda f: np.array([(f["sex"] == s).sum() for s in ("F", "M")]), never_fit=True), "fitness"),
], ids=str)
def test_a_broken_query_is_caught(case, prop):
    with pytest.raises(ConformanceError) as caught:
        check_query(case)
    assert caught.value.property == prop, caught.value
