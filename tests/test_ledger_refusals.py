"""A refusal records its refusal and nothing else (audit item 9).

Before, a refused command had already registered the table it was given as the population's, so
the population was bound to the wrong table for ever. Every kind of refusal — bad input (exit 2),
an overspend, a gate's refusal (exit 1) — is made here with a wrong table, and afterwards the
right table still publishes and queries, and the log holds at most the refusal.
"""

from __future__ import annotations

import json

import pytest

from test_ledger import PEOPLE, release_at

from helpers import veil

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.service)]


def actions(ledger) -> list[str]:
    return [e["action"] for e in json.loads(veil("ledger", "history", "--ledger", ledger, "--json").stdout)["entries"]]


@pytest.fixture(params=BACKENDS)
def project(request, tmp_path):
    data, onerow = tmp_path / "people.csv", tmp_path / "onerow.csv"
    PEOPLE.to_csv(data, index=False)
    PEOPLE.head(1).to_csv(onerow, index=False)
    for name, levels in (("a", {"age": 1, "zip": 1}), ("b", {"age": 2, "zip": 0})):
        (tmp_path / name).mkdir()
        release_at(levels).write(tmp_path / name / "release.csv", tmp_path / name / "manifest.json")
    policy = tmp_path / "policy.yaml"
    policy.write_text("policy:\n  populations:\n    people: {}\n    adult:\n      budget: {epsilon: 1.0}\n")
    ledger = str(tmp_path / "ledger.db") if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    assert veil("ledger", "init", "--ledger", ledger, "--policy", policy).exit_code == 0
    return tmp_path, data, onerow, ledger


def test_a_publish_refused_for_the_wrong_table_leaves_the_population_unbound(project):
    tmp, data, onerow, ledger = project
    before = actions(ledger)
    wrong = veil("publish", tmp / "a" / "manifest.json", "--population", "people", "--data", onerow, "--ledger", ledger)
    assert wrong.exit_code == 2 and "the table given is another" in wrong.stderr, wrong.output
    assert "1 row" not in wrong.stderr  # no figure of the table given
    assert actions(ledger) == before
    right = veil("publish", tmp / "a" / "manifest.json", "--population", "people", "--data", data, "--ledger", ledger)
    assert right.exit_code == 0, right.output
    assert actions(ledger)[len(before):] == ["dataset", "publish"]


def test_a_refused_overspend_with_the_wrong_table_registers_nothing(project):
    tmp, data, onerow, ledger = project
    before = actions(ledger)
    over = veil("dp", "count", onerow, "--epsilon", "5", "--ledger", ledger, "--population", "adult")
    assert over.exit_code == 2 and "asks for ε = 5" in over.stderr, over.output
    assert actions(ledger) == before
    right = veil("dp", "count", data, "--epsilon", "0.5", "--ledger", ledger, "--population", "adult")
    assert right.exit_code == 0, right.output
    assert actions(ledger)[len(before):] == ["dataset", "charge"]
    # Now the population is that table: another is refused, and still registers nothing.
    mark = actions(ledger)
    other = veil("dp", "count", onerow, "--epsilon", "0.1", "--ledger", ledger, "--population", "adult")
    assert other.exit_code == 2 and "this table is another" in other.stderr, other.output
    assert actions(ledger) == mark


def test_a_gate_refusal_records_the_refusal_and_nothing_else(project):
    tmp, data, onerow, ledger = project
    assert veil("publish", tmp / "a" / "manifest.json", "--population", "people", "--data", data,
                "--ledger", ledger).exit_code == 0
    before = actions(ledger)
    # b composes badly with a: refused (exit 1) and recorded, and no charge, table or release with it
    second = veil("publish", tmp / "b" / "manifest.json", "--population", "people", "--data", data, "--ledger", ledger)
    assert second.exit_code == 1
    assert actions(ledger)[len(before):] == ["refuse"]
    status = json.loads(veil("ledger", "status", "--ledger", ledger, "--json").stdout)
    people = next(p for p in status["populations"] if p["name"] == "people")
    assert people["datasets"] == 1 and len(people["releases"]) == 1


def test_an_unfit_answer_refused_at_the_gate_registers_no_table(project):
    tmp, data, onerow, ledger = project
    drawn = veil("dp", "count", onerow, "--epsilon", "0.1", "--seed", "1", "--out", tmp / "q")
    assert drawn.exit_code == 0, drawn.output
    before = actions(ledger)
    unfit = veil("publish", tmp / "q" / "manifest.json", "--population", "adult", "--data", onerow, "--ledger", ledger)
    assert unfit.exit_code == 1 and "not fit for release" in unfit.stdout, unfit.output
    assert actions(ledger)[len(before):] == ["refuse"]
    right = veil("dp", "count", data, "--epsilon", "0.5", "--ledger", ledger, "--population", "adult")
    assert right.exit_code == 0, right.output


def test_a_refused_first_query_leaves_a_new_budget_file_unbound(tmp_path):
    data, onerow = tmp_path / "people.csv", tmp_path / "onerow.csv"
    PEOPLE.to_csv(data, index=False)
    PEOPLE.head(1).to_csv(onerow, index=False)
    budget = tmp_path / "b.db"
    over = veil("dp", "count", onerow, "--epsilon", "5", "--budget-file", budget, "--budget", "1")
    assert over.exit_code == 2 and "asks for ε = 5" in over.stderr, over.output
    status = json.loads(veil("ledger", "status", "--ledger", budget, "--json").stdout)
    assert status["populations"] == []
    right = veil("dp", "count", data, "--epsilon", "0.5", "--budget-file", budget, "--budget", "1", "--json")
    assert right.exit_code == 0, right.output
    assert json.loads(right.stdout)["budget"]["population"] == "people.csv"
