"""α and β of the αβ algorithm (Theorem 4.3), the posterior they allow, and the usefulness bound."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.anonymize.alphabeta.parameters import (AlphaBetaParameters, choose_parameters, exact, impossibility_note,
                                                 parameters_for_usefulness, prior_bound)
from veil.errors import ParameterError

fractions = st.fractions(min_value=Fraction(1, 10**6), max_value=Fraction(999_999, 10**6), max_denominator=10**6)


@settings(max_examples=200, deadline=None)
@given(d=fractions, gamma=fractions)
def test_chosen_parameters_meet_both_conditions_with_equality(d, gamma):
    if d >= gamma:
        with pytest.raises(ParameterError):
            choose_parameters(gamma, m=10**9, d=d)
        return
    p = choose_parameters(gamma, m=10**9, d=d)
    assert p.conditions() == {"beta_share": True, "keep_probability": True}
    assert p.alpha > 0 and p.beta > 0
    assert p.beta / (p.alpha + p.beta) == d * (1 - gamma) / (gamma * (1 - d))
    assert p.alpha + p.beta == 1 - d / gamma


@settings(max_examples=100, deadline=None)
@given(d=fractions, gamma=fractions, shrink=st.fractions(min_value=Fraction(1, 100), max_value=1),
       grow=st.fractions(min_value=1, max_value=100), true=st.integers(0, 1000), extra=st.integers(0, 10**6))
def test_no_other_admissible_pair_has_a_smaller_variance(d, gamma, shrink, grow, true, extra):
    """Any pair within Theorem 4.3 (a smaller α + β, a larger β share) estimates no query better."""
    if d >= gamma:
        return
    best = choose_parameters(gamma, m=10**9, d=d)
    keep = (best.alpha + best.beta) * shrink
    share = min(Fraction(99, 100), best.beta / (best.alpha + best.beta) * grow)
    if share < best.beta / (best.alpha + best.beta):
        return
    other = AlphaBetaParameters(alpha=keep * (1 - share), beta=keep * share, d=d, gamma=gamma, m=10**9)
    assert all(other.conditions().values())
    assert other.variance(true, true + extra) >= best.variance(true, true + extra) * (1 - 1e-12)


def _posteriors(alpha: Fraction, beta: Fraction, priors: list[Fraction]):
    """Exact Pr[t ∈ I | V] for every tuple t and view V of a tiny domain, under a tuple-independent
    prior, by enumerating every instance I and view V (Bayes' rule over the αβ algorithm's law)."""
    m = len(priors)
    subsets = [frozenset(s) for r in range(m + 1) for s in itertools.combinations(range(m), r)]

    def prior(instance):
        return math.prod((p if t in instance else 1 - p) for t, p in enumerate(priors))

    def likelihood(view, instance):
        out = Fraction(1)
        for t in range(m):
            keep = alpha + beta if t in instance else beta
            out *= keep if t in view else 1 - keep
        return out

    for view in subsets:
        joint = {instance: prior(instance) * likelihood(view, instance) for instance in subsets}
        total = sum(joint.values())
        for t in range(m):
            yield t, view, sum(v for inst, v in joint.items() if t in inst) / total


@pytest.mark.parametrize("d, gamma", [(Fraction(1, 10), Fraction(1, 2)), (Fraction(1, 20), Fraction(1, 5)),
                                      (Fraction(3, 10), Fraction(9, 10))])
def test_exact_posterior_on_a_tiny_domain_stays_within_the_bounds(d, gamma):
    """Definition 2.3: Pr[t | V] ≤ γ and Pr[t | V] ≥ (d/γ)·Pr[t] for a d-independent prior."""
    p = choose_parameters(gamma, m=4, d=d)
    priors = [d, d / 2, d / 7, d]
    worst_high, worst_low = Fraction(0), Fraction(10)
    for t, view, posterior in _posteriors(p.alpha, p.beta, priors):
        assert posterior <= gamma
        assert posterior >= d / gamma * priors[t]
        worst_high = max(worst_high, posterior)
        worst_low = min(worst_low, posterior / priors[t])
    # The parameters sit on the theorem's boundary: a tuple of prior d found in V has posterior γ
    # exactly; a tuple missing from V keeps (1 − α − β)/(Pr[t](1 − α − β) + (1 − Pr[t])(1 − β)) of its
    # prior, which tends to 1 − α − β = d/γ as Pr[t] → 0.
    keep, beta = p.alpha + p.beta, p.beta
    assert worst_high == gamma
    assert worst_low == min((1 - keep) / (q * (1 - keep) + (1 - q) * (1 - beta)) for q in priors)
    assert 1 - keep == d / gamma


def test_the_posterior_check_fails_outside_theorem_4_3():
    d, gamma = Fraction(1, 10), Fraction(1, 2)
    p = choose_parameters(gamma, m=3, d=d)
    priors = [d, d, d]
    # a smaller β share: a tuple in V is too likely to come from I
    low_beta = [post for _, v, post in _posteriors(p.alpha + p.beta / 2, p.beta / 2, priors)]
    assert max(low_beta) > gamma
    # a larger α + β: a tuple missing from V is too surely not in I
    keep = p.alpha + p.beta + Fraction(1, 20)
    share = p.beta / (p.alpha + p.beta)
    ratios = [post / d for _, v, post in _posteriors(keep * (1 - share), keep * share, priors)]
    assert min(ratios) < d / gamma


def test_d_from_k_and_exact_decimals():
    assert prior_bound(2, 10, 1000) == Fraction(1, 50)
    assert exact(0.1, "gamma") == Fraction(1, 10)
    assert exact("0.25", "gamma") == Fraction(1, 4)
    p = choose_parameters(0.5, m=1000, k=2, n=10)
    assert p.d == Fraction(1, 50) and p.k == 2 and p.n == 10
    assert p.to_dict()["gamma_exact"] == "1/2"


@pytest.mark.parametrize("kwargs, message", [
    ({"gamma": 1.0, "d": 0.1}, "strictly between 0 and 1"),
    ({"gamma": 0.0, "d": 0.1}, "strictly between 0 and 1"),
    ({"gamma": float("nan"), "d": 0.1}, "finite number"),
    ({"gamma": 0.3, "d": 0.3}, "not below gamma"),
    ({"gamma": 0.3, "d": 0.5}, "not below gamma"),
    ({"gamma": 0.3, "d": 0.0}, "positive"),
    ({"gamma": 0.3}, "give the adversary's prior bound, as d or as k"),
    ({"gamma": 0.3, "d": 0.1, "k": 1}, "both"),
    ({"gamma": 0.3, "k": 1}, "needs the instance's size"),
    ({"gamma": 0.3, "k": -1, "n": 5}, "k must be positive"),
    ({"gamma": 0.3, "k": 100, "n": 5}, "raise gamma or lower k"),
    ({"gamma": "abc", "d": 0.1}, "finite number"),
    ({"gamma": True, "d": 0.1}, "must be a number"),
])
def test_bad_parameters_get_one_sentence(kwargs, message):
    with pytest.raises(ParameterError, match=message) as info:
        choose_parameters(m=1000, **kwargs)
    assert str(info.value).count(". ") == 0 and str(info.value).endswith(".")


def test_usefulness_bound_is_chebyshev_on_the_largest_variance():
    n, m = 20_000, 10**9
    p = choose_parameters(0.5, m=m, k=1, n=n)
    var = (n * float(p.alpha + p.beta) * float(1 - p.alpha - p.beta)
           + (m - n) * float(p.beta) * float(1 - p.beta)) / float(p.alpha) ** 2
    assert p.max_variance(n) == pytest.approx(var)
    assert p.usefulness_bound(2.0, n) == pytest.approx(var / (4 * n))
    assert p.usefulness_bound(1e-9, n) == 1.0
    # ρ = √(k/(γε)) gives about ε: the paper's √(k/γ) trade-off
    assert p.usefulness_bound(math.sqrt(1 / (0.5 * 0.1)), n) == pytest.approx(0.1 * (1 - 0.5), rel=0.01)
    assert p.usefulness_bound(p.rho_for(0.2, n), n) == pytest.approx(0.2)


def test_parameters_for_a_target_error_give_the_strongest_privacy_that_reaches_it():
    n, m = 20_000, 10**9
    p = parameters_for_usefulness(3.0, 0.1, n=n, m=m, k=1)
    assert p.usefulness_bound(3.0, n) <= 0.1
    weaker_gamma = p.gamma - Fraction(1, 10**4)
    assert choose_parameters(weaker_gamma, m=m, k=1, n=n).usefulness_bound(3.0, n) > 0.1
    assert p.k == 1 and all(p.conditions().values())
    with pytest.raises(ParameterError, match="no gamma below 1"):
        parameters_for_usefulness(1e-3, 1e-3, n=n, m=m, k=1)
    with pytest.raises(ParameterError, match="epsilon"):
        parameters_for_usefulness(3.0, 1.5, n=n, m=m, k=1)


def test_theorem_3_3_note_for_a_strong_prior():
    n, m = 1000, 10**8
    assert impossibility_note(choose_parameters(0.5, m=m, k=1, n=n), n) is None
    note = impossibility_note(choose_parameters(0.5, m=m, k=20_000, n=n), n)
    assert note is not None and "Theorem 3.3" in note


def test_parameters_round_trip_and_refuse_a_broken_manifest():
    p = choose_parameters(0.3, m=12345, d=Fraction(1, 1000))
    assert AlphaBetaParameters.from_dict(p.to_dict()) == p
    broken = p.to_dict() | {"alpha_exact": "999/1000"}   # α + β above 1 − d/γ
    with pytest.raises(ParameterError, match="Theorem 4.3"):
        AlphaBetaParameters.from_dict(broken)
    with pytest.raises(ParameterError, match="alpha_exact"):
        AlphaBetaParameters.from_dict({"alpha": 0.5})
