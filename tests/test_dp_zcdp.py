"""ρ-zCDP in veil: the measures and their exact composition, the tight ρ → (ε, δ) conversion of
Canonne, Kamath and Steinke 2020 (valid and tight), the discrete Gaussian mechanism, and budgets
(accountant, budget file, ledger) that are charged only in their own measure."""

from __future__ import annotations

import math
from decimal import Context, Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.dp import (Accountant, ApproxDP, Budget, BudgetExceededError, BudgetFileError, DiscreteGaussian,
                     MeasureMismatchError, PureDP, ZCDP, ZCDPAccountant, ZCDPBudget, compose, gaussian_delta,
                     zcdp_delta, zcdp_epsilon)
from veil.dp.accountant import from_json
from veil.dp.discrete_gaussian import discrete_gaussian_sigma
from veil.dp.exact import exact
from veil.dp.zcdp_accountant import charge_cost
from veil.dp.zcdp_conversion import simple_zcdp_epsilon, zcdp_delta_at
from veil.errors import ParameterError
from veil.ledger import Ledger, LedgerError
from veil.ledger.policy import PopulationPolicy

from helpers import one_sentence_error

RHOS = st.floats(1e-6, 20, allow_nan=False)
DELTAS = st.sampled_from([1e-12, 1e-9, 1e-6, 1e-5, 1e-3, 0.05])


# --------------------------------------------------------------------------- measures

@given(st.lists(st.fractions(Fraction(1, 10**6), 10), min_size=1, max_size=30))
def test_zcdp_composes_exactly_in_rho(rhos):
    assert compose(ZCDP(r) for r in rhos).rho == sum(rhos)


def test_ten_charges_of_a_decimal_exhaust_the_budget_exactly():
    assert compose([ZCDP(0.1)] * 10) == ZCDP(1)
    assert compose([ApproxDP(0.1, 1e-7)] * 10) == ApproxDP(1, Fraction(1, 10**6))
    assert PureDP(0.3).to_zcdp() == ZCDP(Fraction(9, 200))


def test_measures_never_mix():
    for a, b in ((ZCDP(1), PureDP(1)), (PureDP(1), ApproxDP(1, 0)), (ApproxDP(1, 1e-6), ZCDP(1))):
        one_sentence_error(MeasureMismatchError, lambda: compose([a, b]), "convert it explicitly")
    one_sentence_error(ParameterError, lambda: ZCDP(0), "greater than 0")
    one_sentence_error(ParameterError, lambda: ZCDP(float("nan")), "finite")


# --------------------------------------------------------------------------- the conversion

def _log_bound_decimal(rho: Fraction, eps: Fraction, alpha: Fraction) -> Decimal:
    """ln of the CKS bound at α, with 100 digits (independent of the module's 60-digit code)."""
    ctx = Context(prec=100)
    d = lambda x: ctx.divide(Decimal(x.numerator), Decimal(x.denominator))  # noqa: E731
    first = ctx.subtract(d((alpha - 1) * (alpha * rho - eps)), ctx.ln(d(alpha - 1)))
    return ctx.add(first, ctx.multiply(d(alpha), ctx.ln(d((alpha - 1) / alpha))))


@settings(max_examples=60, deadline=None)
@given(RHOS, st.floats(0, 60))
def test_delta_is_never_below_the_bound_and_as_tight_as_a_fine_grid(rho, eps):
    r, e = Fraction(rho), Fraction(eps)
    got = zcdp_delta(r, e)
    assert 0 < got <= 1
    # tight: no α on a fine log grid (around the optimum too) does better by more than 10^-6 relative
    centre = math.log(max((eps + rho) / (2 * rho), 1e-12))
    grid = [Fraction(1) + Fraction(math.exp(t)) for t in np.linspace(centre - 6, centre + 6, 400)]
    best = min(_log_bound_decimal(r, e, a) for a in grid)
    log_got = math.log(got.numerator) - math.log(got.denominator)
    if -100000 < best < 0:
        assert log_got <= float(best) + 1e-6
    # valid: never below the Gaussian mechanism's exact δ (Balle and Wang), a ρ-zCDP mechanism
    sigma = 1 / math.sqrt(2 * rho)
    assert float(got) >= gaussian_delta(eps, sigma) * (1 - 1e-9)


@settings(max_examples=40, deadline=None)
@given(RHOS, st.floats(0, 30), st.floats(1.0001, 1e4))
def test_the_bound_at_an_alpha_is_rounded_up(rho, eps, alpha):
    r, e, a = Fraction(rho), Fraction(eps), Fraction(alpha)
    got = zcdp_delta_at(r, e, a)
    exact_log = _log_bound_decimal(r, e, a)
    ctx = Context(prec=100)
    assert got == 1 or ctx.subtract(ctx.ln(Decimal(got.numerator)), ctx.ln(Decimal(got.denominator))) >= exact_log


@settings(max_examples=60, deadline=None)
@given(RHOS, DELTAS)
def test_epsilon_is_valid_and_tighter_than_the_simple_bound(rho, delta):
    eps = zcdp_epsilon(rho, delta)
    target = exact(delta, "delta")  # veil reads a float as the decimal it prints as
    assert zcdp_delta(rho, eps) <= target
    assert float(eps) <= simple_zcdp_epsilon(rho, delta)
    # and not needlessly large: a little less ε no longer meets δ
    if eps > 0:
        assert zcdp_delta(rho, eps * Fraction(999, 1000)) > target


@settings(max_examples=40, deadline=None)
@given(RHOS, st.floats(0, 30), st.floats(0.01, 5))
def test_delta_falls_as_epsilon_grows_and_rises_with_rho(rho, eps, more):
    assert zcdp_delta(rho, eps + more) <= zcdp_delta(rho, eps)
    assert zcdp_delta(rho * (1 + more), eps) >= zcdp_delta(rho, eps)


def test_published_figure():
    # ρ = 1/2 (a Gaussian of σ = 1 at sensitivity 1) at δ = 1e-6: the tight ε is about 5.22, the
    # simple bound about 5.76
    assert 5.2 < float(zcdp_epsilon(0.5, 1e-6)) < 5.25 < simple_zcdp_epsilon(0.5, 1e-6)


# --------------------------------------------------------------------------- the discrete Gaussian

@given(st.floats(1e-4, 100), st.integers(1, 50))
def test_sigma_meets_rho_exactly_and_is_the_smallest_float_that_does(rho, sensitivity):
    sigma = discrete_gaussian_sigma(rho, sensitivity)
    need = Fraction(sensitivity) ** 2 / (2 * Fraction(repr(rho)))  # a float is the decimal it prints as
    assert Fraction(sigma) ** 2 >= need > Fraction(math.nextafter(sigma, 0)) ** 2


def test_discrete_gaussian_answers_integers_with_its_stated_error():
    mech = DiscreteGaussian(0.05, 2)
    out = mech.release(np.array([10, 20]), noise=3)
    assert out.value.dtype == np.int64 and not out.fit_for_release
    m = mech.error_bound(0.05)
    tails = 2 * mech.pmf(np.arange(m + 1, m + 400)).sum()
    assert tails <= 0.05 < 2 * mech.pmf(np.arange(m, m + 400)).sum()
    assert mech.confidence_interval(0.05, 7) == (7 - m, 7 + m)
    assert mech.variance <= mech.sigma ** 2 * (1 + 1e-12)  # below σ² by far less than a float keeps here
    assert DiscreteGaussian(2).variance < DiscreteGaussian(2).sigma ** 2 * 0.99  # σ = 1/2: well below
    assert mech.guarantee["model"] == "rho-zCDP"
    one_sentence_error(ParameterError, lambda: DiscreteGaussian(0), "rho")
    one_sentence_error(ParameterError, lambda: mech.release([1.5]), "whole numbers")


# --------------------------------------------------------------------------- budgets

def test_a_zcdp_budget_is_charged_in_rho_only_and_exactly():
    acc = ZCDPAccountant(ZCDPBudget("0.5", 1e-6), dataset_id="d")
    for i in range(10):
        acc.charge(rho=0.05, label=f"q{i}")
    assert acc.spent_rho == Fraction(1, 2) and acc.remaining_rho == 0
    assert acc.spent().epsilon == zcdp_epsilon(Fraction(1, 2), Fraction(1, 10**6))
    one_sentence_error(BudgetExceededError, lambda: acc.charge(rho=1e-30, label="x"), "only ρ = 0")
    for call in (lambda: acc.charge(0.1, label="x"), lambda: acc.charge(0.1, 1e-6, label="x"),
                 lambda: charge_cost(acc, PureDP(0.1), label="x")):
        one_sentence_error(MeasureMismatchError, call, "ρ-zCDP", "charge it rho")
    assert len(acc.charges) == 10


def test_an_epsilon_budget_refuses_rho_and_charges_nothing():
    acc = Accountant(Budget(1), dataset_id="d")
    one_sentence_error(MeasureMismatchError, lambda: charge_cost(acc, ZCDP(0.1), label="g"), "(ε, δ)", "ρ-zCDP")
    assert acc.charges == ()
    charge_cost(acc, PureDP(0.25), label="l")
    assert acc.spent().epsilon == Fraction(1, 4)


def test_a_zcdp_budget_file_reads_back_and_old_files_still_read():
    acc = ZCDPAccountant(ZCDPBudget(1, 1e-5), dataset_id="d")
    acc.charge(rho=Fraction(1, 3), label="count")
    acc.postprocess("rounding")
    text = acc.to_json()
    back = from_json(text, dataset_id="d")
    assert isinstance(back, ZCDPAccountant) and back.spent_rho == Fraction(1, 3) and back.budget == acc.budget
    overspent = text.replace('"1/3"', '"2"')
    one_sentence_error(BudgetFileError, lambda: from_json(overspent, dataset_id="d"), "exceed its own budget")
    old = Accountant(Budget(1, 1e-6), dataset_id="d")
    old.charge(0.5, label="x")
    assert '"rho"' not in old.to_json()  # (ε, δ) documents are written as before
    assert from_json(old.to_json(), dataset_id="d").spent().epsilon == Fraction(1, 2)


@pytest.fixture
def ledger(tmp_path) -> Ledger:
    return Ledger.init(tmp_path / "ledger.db", by="steward")[0]


def test_the_ledger_charges_a_zcdp_population_in_rho(ledger):
    with ledger.open_budget("survey", create=ZCDPBudget("0.5", 1e-6)) as acc:
        acc.charge(rho=0.2, label="count")
        acc.charge(rho=0.3, label="sum")
        one_sentence_error(BudgetExceededError, lambda: acc.charge(rho=0.01, label="more"), "ρ")
    snapshot = ledger.budget("survey")
    assert isinstance(snapshot, ZCDPAccountant) and snapshot.spent_rho == Fraction(1, 2)
    status = ledger.status()["populations"][0]["budget"]
    assert status["composition"] == "zcdp" and status["rho"] == {"total": 0.5, "spent": 0.5, "left": 0.0}
    assert status["total"]["epsilon"] == pytest.approx(float(zcdp_epsilon(0.5, 1e-6)))
    assert status["spent"]["delta"] == 1e-6
    summaries = [entry["summary"] for entry in ledger.history()]
    assert "budget ρ = 0.5, δ = 0.000001 (zcdp)" in summaries[1]
    assert summaries[2] == "charged 'count': ρ = 0.2 (ε = 3.131055681 at δ = 1e-06)"


def test_a_budget_in_another_measure_is_refused_and_nothing_is_written(ledger):
    with ledger.open_budget("survey", create=ZCDPBudget(1, 1e-6)) as acc:
        acc.charge(rho=0.1, label="count")
    before = len(ledger.history())
    one_sentence_error(LedgerError, lambda: ledger.open_budget("survey", create=Budget(1)).__enter__(),
                       "keeps its budget in ρ-zCDP", "not (ε, δ)")
    with ledger.open_budget("survey") as acc:
        one_sentence_error(MeasureMismatchError, lambda: acc.charge(0.1, label="laplace"), "charge it rho")
    assert len(ledger.history()) == before and ledger.budget("survey").spent_rho == Fraction(1, 10)
    with ledger.open_budget("eps", create=Budget(1)) as acc:
        acc.charge(0.1, label="count")
    one_sentence_error(LedgerError, lambda: ledger.open_budget("eps", create=ZCDPBudget(1, 1e-6)).__enter__(),
                       "keeps its budget in (ε, δ)", "not ρ-zCDP")
    with ledger.open_budget("eps") as acc:
        one_sentence_error(MeasureMismatchError, lambda: charge_cost(acc, ZCDP(0.1), label="g"), "(ε, δ)")
    assert len(ledger.history()) == before + 2


def test_a_policy_declares_the_measure_with_its_rule():
    pop = PopulationPolicy("p", budget=ZCDPBudget(1, 1e-6), composition="zcdp")
    assert pop.to_dict()["budget"] == {"rho": "1", "delta": "0.000001"}
    one_sentence_error(ParameterError, lambda: PopulationPolicy("p", budget=Budget(1), composition="zcdp"),
                       "measure")
    one_sentence_error(ParameterError, lambda: PopulationPolicy("p", budget=ZCDPBudget(1, 1e-6)), "measure")
    one_sentence_error(ParameterError, lambda: ZCDPBudget(1, 0), "policy's delta")


@settings(max_examples=60, deadline=None)
@given(rho=st.floats(1e-4, 10), split=st.floats(0.01, 0.99), lo=st.integers(-50, 0), width=st.integers(1, 100))
def test_the_noise_drawn_costs_at_most_the_rho_charged(rho, split, lo, width):
    # every draw's ρ = Δ²/(2σ²), summed exactly, stays within the ρ the accountant was charged
    from veil.conformance.glue import recording
    from veil.dp.queries import dp_count, dp_mean, dp_sum

    table = pd.DataFrame({"x": [lo, lo + width, lo + width / 2]})
    hi = lo + width
    for query, sensitivities in (
            (lambda acc: dp_count(table, rho=rho, accountant=acc, noise=1), [1]),
            (lambda acc: dp_sum(table, "x", (lo, hi), rho=rho, accountant=acc, noise=1), [max(abs(lo), abs(hi))]),
            (lambda acc: dp_mean(table, "x", (lo, hi), rho=rho, split=split, accountant=acc, noise=1),
             [Fraction(width) / 2, 1])):
        acc = ZCDPAccountant(ZCDPBudget(100, 1e-6), dataset_id="t")
        with recording() as seen:
            query(acc)
        drawn = sum(Fraction(s) ** 2 / (2 * Fraction(dict(d.parameters)["scale"]) ** 2)
                    for d, s in zip(seen.draws, sensitivities))
        assert len(seen.draws) == len(sensitivities) and drawn <= acc.spent_rho
