"""The privacy unit of a budget (issue 27, item 1, the ledger's part): a population, an accountant
and a budget file declare the unit their budget protects (a row, or a person by an ID column), the
ledger records it with the population, and a release at another unit is refused in one sentence
with nothing charged and nothing drawn; populations and budgets kept before units are row-level."""

from __future__ import annotations

import json
import sqlite3

import jsonschema
import numpy as np
import pandas as pd
import pytest
import yaml

from veil.config import ConfigError, load_policy
from veil.config.schema import configuration_schema
from veil.conformance.glue import recording
from veil.dp import (Accountant, Budget, BudgetFileError, BudgetUnit, PrivacyUnit, Query, UnitMismatchError,
                     ZCDPAccountant, ZCDPBudget, dp_count)
from veil.dp.aggregates import count, sum
from veil.dp.budget_unit import ROWS
from veil.errors import ParameterError
from veil.ledger import Ledger, LedgerError
from veil.ledger.policy import Policy, PopulationPolicy

from helpers import one_sentence_error

VISITS = pd.DataFrame({"pid": [1, 1, 1, 2, 2, 3], "other": [9, 8, 7, 6, 5, 4],
                       "g": ["a", "b", "a", "a", "b", "b"], "x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})
BY_PERSON = PrivacyUnit.person("pid", max_rows=2)
BUDGET_PERSON = BudgetUnit.person("pid")


def grouped(unit=BY_PERSON):
    return Query(VISITS, unit=unit).group_by("g", keys=["a", "b"]).agg(count(), sum("x", 0, 10))


@pytest.fixture
def ledger(tmp_path):
    made, _ = Ledger.init(tmp_path / "ledger.db", by="ana")
    yield made
    made.close()


def refused_without_drawing(call, *words):
    """``call(rng)`` is refused with a one-sentence UnitMismatchError, and draws nothing: no noise
    sampler is called and the generator it is given is left where it was."""
    rng = np.random.default_rng(5)
    before = rng.bit_generator.state
    with recording() as seen:
        one_sentence_error(UnitMismatchError, lambda: call(rng), *words)
    assert seen.draws == [] and rng.bit_generator.state == before


# --------------------------------------------------------------------------- the ledger

def test_a_person_level_query_is_refused_by_a_row_level_population(ledger):
    ledger.add_population("visits", budget=Budget(1.0))
    assert ledger.population("visits").unit == ROWS
    with ledger.open_budget("visits") as acc:
        refused_without_drawing(lambda rng: grouped().evaluate(0.5, accountant=acc, rng=rng),
                                "protects a row", "a person by column 'pid'")
    assert ledger.budget("visits").charges == ()
    assert [e["action"] for e in ledger.history("visits")] == ["population"]
    # the accountant a ledger hands out keeps its population's unit
    with ledger.open_budget("visits") as acc:
        one_sentence_error(ParameterError, lambda: acc.declare_unit(BudgetUnit.person("pid")), "ledger population")
        assert acc.declare_unit(ROWS) is acc
    assert ledger.budget("visits").charges == ()


def test_a_person_level_population_takes_person_level_queries_and_refuses_row_level_ones(ledger):
    ledger.add_population("visits", budget=Budget(1.0), unit=BudgetUnit.person("pid"))
    assert ledger.population("visits").unit == BudgetUnit.person("pid")
    with ledger.open_budget("visits") as acc:
        assert acc.unit == BudgetUnit.person("pid")
        grouped().evaluate(0.25, accountant=acc, rng=1)
        # a row-level grouped query, a person named by another column, and a row-level query of old
        refused_without_drawing(lambda rng: grouped(PrivacyUnit.rows()).evaluate(0.25, accountant=acc, rng=rng),
                                "protects a person by column 'pid'", "this release protects a row")
        refused_without_drawing(
            lambda rng: grouped(PrivacyUnit.person("other", max_rows=1)).evaluate(0.25, accountant=acc, rng=rng),
            "column 'other'")
        refused_without_drawing(lambda rng: dp_count(VISITS, epsilon=0.25, accountant=acc, noise=rng),
                                "this release protects a row")
    kept = ledger.budget("visits")
    assert [c.label for c in kept.charges] == ["grouped query count, sum(x) by g"]
    assert kept.unit == BudgetUnit.person("pid")
    assert ledger.verify().ok


def test_the_ledger_records_the_unit_and_never_changes_it(ledger):
    ledger.add_population("visits", budget=Budget(1.0), unit=BudgetUnit.person("pid"))
    ledger.add_population("rows", budget=Budget(1.0))
    summary = ledger.history("visits")[0]["summary"]
    assert "protecting a person by column 'pid'" in summary
    status = {p["name"]: p for p in ledger.status()["populations"]}
    assert status["visits"]["unit"] == {"person": "pid"} and status["rows"]["unit"] == "rows"
    # the same definition again is the same population; another unit is refused
    assert ledger.add_population("visits", budget=Budget(1.0), unit=BudgetUnit.person("pid")).unit.is_person
    one_sentence_error(LedgerError, lambda: ledger.add_population("visits", budget=Budget(1.0)),
                       "protects a person by column 'pid', not a row")
    one_sentence_error(LedgerError, lambda: ledger.add_population("rows", budget=Budget(1.0),
                                                                  unit=BudgetUnit.person("pid")),
                       "protects a row, not a person")
    one_sentence_error(ParameterError, lambda: ledger.add_population("none", unit=BudgetUnit.person("pid")),
                       "no budget")
    # an accountant declaring its unit makes a person-level population too, in ρ as in ε
    zcdp = ZCDPAccountant(ZCDPBudget(0.5, 1e-6), dataset_id="z").declare_unit(BudgetUnit.person("pid"))
    assert ledger.add_population("z", budget=zcdp).unit == BudgetUnit.person("pid")
    one_sentence_error(ParameterError, lambda: ledger.add_population("z2", budget=zcdp, unit=BudgetUnit.person("o")),
                       "one unit")


def test_veil_ledger_status_says_a_population_protects_a_person(ledger):
    from typer.testing import CliRunner

    from veil.cli import app

    ledger.add_population("visits", budget=Budget(1.0), unit=BudgetUnit.person("pid"))
    ledger.add_population("rows", budget=Budget(1.0))
    result = CliRunner().invoke(app, ["ledger", "status", "--ledger", ledger.location])
    assert result.exit_code == 0, result.output
    assert result.stdout.count("protects a person by column 'pid'") == 1
    as_json = json.loads(CliRunner().invoke(app, ["ledger", "status", "--ledger", ledger.location, "--json"]).stdout)
    assert [p["unit"] for p in as_json["populations"]] == [{"person": "pid"}, "rows"]


def test_a_population_kept_before_units_is_row_level(ledger, tmp_path):
    ledger.add_population("old", budget=Budget(1.0))
    with sqlite3.connect(tmp_path / "ledger.db") as conn:  # what an earlier veil wrote: no unit
        kept = json.loads(conn.execute("SELECT accountant FROM populations WHERE name = 'old'").fetchone()[0])
    assert "unit" not in kept
    assert ledger.population("old").unit == ROWS and ledger.budget("old").unit == ROWS
    with ledger.open_budget("old") as acc:
        dp_count(VISITS, epsilon=0.1, accountant=acc, noise=1)
        grouped(PrivacyUnit.rows()).evaluate(0.1, accountant=acc, rng=1)
    assert len(ledger.budget("old").charges) == 2


# --------------------------------------------------------------------------- accountants and budget files

def test_an_accountant_declares_its_unit_before_charging_and_its_file_keeps_it():
    acc = Accountant(Budget(1.0), dataset_id="v")
    assert acc.unit == ROWS  # a budget that declares nothing protects rows
    refused_without_drawing(lambda rng: grouped().evaluate(0.5, accountant=acc, rng=rng), "protects a row")
    assert acc.charges == ()
    assert acc.declare_unit(BUDGET_PERSON) is acc and acc.unit == BUDGET_PERSON
    grouped().evaluate(0.5, accountant=acc, rng=1)
    one_sentence_error(ParameterError, lambda: acc.declare_unit(ROWS), "cannot change")
    back = Accountant.from_json(acc.to_json(), dataset_id="v")
    assert back.unit == BUDGET_PERSON and len(back.charges) == 1
    assert "unit" not in Accountant(Budget(1.0), dataset_id="v").to_document()  # as before units
    doc = json.loads(acc.to_json())
    doc["unit"] = {"people": "pid"}
    one_sentence_error(BudgetFileError, lambda: Accountant.from_json(json.dumps(doc), dataset_id="v"), "corrupt")


# --------------------------------------------------------------------------- the policy

def test_a_policy_population_declares_its_unit(tmp_path, ledger):
    policy = {"policy": {"populations": {
        "visits": {"budget": {"epsilon": 1.0}, "unit": {"person": "pid"}},
        "rows": {"budget": {"epsilon": 1.0}, "unit": "rows"},
        "plain": {"budget": {"epsilon": 1.0}}}}}
    jsonschema.validate(policy, configuration_schema())
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(policy), encoding="utf-8")
    spec = load_policy(path)
    rules = Policy.from_spec(spec)
    units = {p.name: p.unit for p in rules.populations}
    assert units == {"visits": BUDGET_PERSON, "rows": ROWS, "plain": ROWS}
    for pop in rules.populations:
        ledger.add_population(pop.name, budget=pop.template(), key_column=pop.key_column, relation=pop.relation)
    assert ledger.population("visits").unit == BUDGET_PERSON and ledger.population("plain").unit == ROWS
    assert "unit" not in rules.population("plain").to_dict()  # a row-level policy's digest is as before units


@pytest.mark.parametrize("unit, words", [
    ({"person": "pid"}, "no budget"),
    ("people", "rows"),
    ({"people": "pid"}, "person: ID_COLUMN"),
])
def test_a_bad_unit_in_a_policy_is_refused_in_one_sentence(tmp_path, unit, words):
    population = {"unit": unit} if words == "no budget" else {"budget": {"epsilon": 1.0}, "unit": unit}
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump({"policy": {"populations": {"visits": population}}}), encoding="utf-8")
    one_sentence_error(ConfigError, lambda: load_policy(path), words)
    if words != "no budget":
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"policy": {"populations": {"visits": population}}}, configuration_schema())


def test_a_population_policy_refuses_a_unit_without_a_budget():
    one_sentence_error(ParameterError, lambda: PopulationPolicy("v", unit=BUDGET_PERSON), "no budget")
    one_sentence_error(ParameterError, lambda: PopulationPolicy("v", budget=Budget(1.0), unit="pid"), "BudgetUnit")
