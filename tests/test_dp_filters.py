"""Privacy filters for adaptively chosen charges (Rogers, Roth, Ullman and Vadhan, NeurIPS 2016)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from veil.dp.accountant import advanced_composition
from veil.dp.budget import Budget, BudgetExceededError
from veil.dp.budget_file import from_json
from veil.dp.filter_accountant import FilterAccountant
from veil.dp.filters import RRUV_CONSTANT, advanced_filter, advanced_filter_bound, basic_filter
from veil.errors import ParameterError


def test_advanced_filter_bound_is_theorem_5_1():
    eps, eps_g, delta_g = [0.1, 0.05, 0.2, 0.01], 1.5, 1e-5
    s = sum(e * e for e in eps)
    h = eps_g ** 2 / (RRUV_CONSTANT * math.log(1 / delta_g))
    expected = (sum(e * (math.exp(e) - 1) / 2 for e in eps)
                + math.sqrt(2 * (s + h) * (1 + 0.5 * math.log(s / h + 1)) * math.log(2 / delta_g)))
    assert advanced_filter_bound(eps, eps_g, delta_g) == pytest.approx(expected, rel=1e-14)


def test_the_filter_costs_more_than_the_fixed_k_bound_and_less_than_basic_composition():
    k, eps = 2000, 0.01
    filtered = advanced_filter_bound([eps] * k, 3.0, 1e-6)
    assert advanced_composition(k, eps, 1e-6) < filtered < k * eps


def test_filters_halt_on_delta_and_epsilon():
    assert basic_filter([0.5, 0.5], [0, 0], 1.0, 0.0) and not basic_filter([0.5, 0.5, 0.01], [0] * 3, 1.0, 0.0)
    assert not basic_filter([0.1], [1e-6], 1.0, 0.0)
    assert advanced_filter([0.01] * 130, [0] * 130, 1.0, 1e-6) and not advanced_filter([0.01] * 160, [0] * 160, 1.0, 1e-6)
    assert not advanced_filter([0.01] * 130, [3e-7] * 2 + [0] * 128, 1.0, 1e-6)  # Σδ > δ_g / 2
    with pytest.raises(ParameterError, match="0 < delta_g < 1/e"):
        advanced_filter([0.1], [0], 1.0, 0.5)


def test_basic_rule_is_exact():
    acc = FilterAccountant(Budget(1.0), dataset_id="d", rule="basic")
    for i in range(10):
        acc.charge(0.1, label=f"q{i}")
    assert acc.spent().epsilon == Fraction(1) and acc.spent().method == "basic composition filter"
    with pytest.raises(BudgetExceededError):
        acc.charge(1e-9, label="one more")
    assert len(acc.charges) == 10


def test_best_rule_moves_from_basic_to_the_advanced_filter_and_says_so():
    acc = FilterAccountant(Budget(1.0, 1e-6), dataset_id="d")
    admitted = 0
    with pytest.raises(BudgetExceededError, match="privacy filter"):
        while True:
            acc.charge(0.01, label=f"q{admitted}")
            admitted += 1
    rules = acc.rules()
    assert rules[:100] == ["basic"] * 100 and rules[-1] == "advanced" and admitted > 100
    assert acc.spent().method == "advanced filter of Rogers et al. (2016)"
    assert acc.spent().epsilon <= 1.0
    # every admitted prefix passed one of the two filters, each with half of δ_g
    assert advanced_filter([0.01] * admitted, [0] * admitted, 1.0, 5e-7)
    assert not advanced_filter([0.01] * (admitted + 1), [0] * (admitted + 1), 1.0, 5e-7)
    again = from_json(acc.to_json(), dataset_id="d")
    assert type(again) is FilterAccountant and again.rules() == rules
    left, _ = acc.remaining()
    assert left < 0.01 and acc.can_afford(float(left)) is (left > 0)


def test_bad_filter_settings():
    with pytest.raises(ParameterError, match="rule must be"):
        FilterAccountant(Budget(1.0), dataset_id="d", rule="fixed-k")
    with pytest.raises(ParameterError, match="1/e"):
        FilterAccountant(Budget(1.0, 0.9), dataset_id="d", rule="advanced")
