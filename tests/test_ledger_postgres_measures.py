"""A PostgreSQL ledger keeps a population's measure (ρ-zCDP) and privacy unit as the SQLite one
does: grouped queries charged in ρ at the person unit, refusals of the other unit and the other
measure before anything is charged, and the budget read back in ρ after reopening."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd
import pytest

from veil.dp import (BudgetExceededError, BudgetUnit, MeasureMismatchError, PrivacyUnit, Query, UnitMismatchError,
                     ZCDPBudget)
from veil.dp.aggregates import count, mean
from veil.ledger import Ledger

from helpers import one_sentence_error

VISITS = pd.DataFrame({"pid": [1, 1, 1, 2, 2, 3, 4, 4, 5, 6],
                       "region": ["n", "n", "s", "s", "s", "n", "e", "e", "w", "n"],
                       "spend": [10.0, 20.0, 5.0, 300.0, -7.0, 40.0, 12.0, 13.0, 8.0, 9.0]})


def grouped(unit):
    return Query(VISITS, unit=unit).group_by("region", keys=["n", "s"]).agg(count(), mean("spend", 0, 100))


def test_a_postgresql_ledger_charges_a_population_in_rho_at_the_person_unit(postgres_url):
    ledger, _ = Ledger.init(postgres_url, by="steward")
    person = PrivacyUnit.person("pid", max_rows=2)
    try:
        ledger.add_population("visits", budget=ZCDPBudget(0.5, 1e-6), unit=BudgetUnit.person("pid"))
        with ledger.open_budget("visits") as acc:
            grouped(person).evaluate(rho=0.3, accountant=acc, rng=1)
            one_sentence_error(BudgetExceededError, lambda: grouped(person).evaluate(rho=0.3, accountant=acc, rng=2))
            one_sentence_error(UnitMismatchError, lambda: grouped(PrivacyUnit.rows()).evaluate(
                rho=0.1, accountant=acc, rng=3))
            one_sentence_error(MeasureMismatchError, lambda: grouped(person).evaluate(
                epsilon=0.1, accountant=acc, rng=4))
        ledger.close()
        again, _ = Ledger.init(postgres_url)
        try:
            kept = again.budget("visits")
            assert kept.spent_rho == Fraction(3, 10)
            assert [c.label for c in kept.charges] == ["grouped query count, mean(spend) by region"]
            assert again.verify().ok
        finally:
            again.close()
    finally:
        ledger.close()


@pytest.mark.parametrize("unit", [None, BudgetUnit.person("pid")])
def test_a_population_in_epsilon_refuses_a_query_in_rho_on_postgresql(postgres_url, unit):
    from veil.dp import Budget

    ledger, _ = Ledger.init(postgres_url, by="steward")
    try:
        ledger.add_population("visits", budget=Budget(1.0), **({"unit": unit} if unit else {}))
        query_unit = PrivacyUnit.person("pid", max_rows=2) if unit else PrivacyUnit.rows()
        with ledger.open_budget("visits") as acc:
            one_sentence_error(MeasureMismatchError,
                               lambda: grouped(query_unit).evaluate(rho=0.1, accountant=acc, rng=1))
            grouped(query_unit).evaluate(0.25, accountant=acc, rng=1)
        kept = ledger.budget("visits")
        assert [(c.epsilon, c.label) for c in kept.charges] == [(0.25, "grouped query count, mean(spend) by region")]
        assert ledger.verify().ok
    finally:
        ledger.close()
