"""Gaussian queries priced in ρ-zCDP through the CLI, and every reader of a zCDP population's
charges: none may take a ρ for an ε (issue 27, item 3).

A zCDP population keeps each charge's ρ in the column where (ε, δ) populations keep ε, and its
composition rule (``zcdp``) says how to read it. The readers checked here: ``veil dp`` charging a
ledger or budget file, ``veil dp budget`` (text and JSON), ``veil ledger status``, ``history``
and ``verify``, the publishing gate (``veil publish``, with the answer's own charge or a new one),
``veil dp report``, and a policy file that declares the population.
"""

from __future__ import annotations

import json
from fractions import Fraction

import pandas as pd
import pytest
import yaml

from veil.config import ConfigError, load_policy
from veil.dp import ZCDPAccountant, ZCDPBudget
from veil.dp.exact import show
from veil.dp.zcdp_conversion import zcdp_epsilon
from veil.ledger import Ledger
from veil.ledger.policy import Policy

from helpers import refused, veil

PEOPLE = pd.DataFrame({"age": [23, 35, 41, 52, 67, 30], "sex": ["f", "m", "f", "m", "f", "f"]})


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "people.csv"
    PEOPLE.to_csv(path, index=False)
    return path


@pytest.fixture
def project(tmp_path, data):
    """A ledger from a policy with a population in ρ and one in ε."""
    policy = tmp_path / "policy.yaml"
    policy.write_text("policy:\n  populations:\n"
                      "    survey:\n      composition: zcdp\n      budget: {rho: 0.5, delta: 1.0e-6}\n"
                      "    census:\n      budget: {epsilon: 1.0}\n", encoding="utf-8")
    ledger = tmp_path / "ledger.db"
    made = veil("ledger", "init", "--ledger", ledger, "--policy", policy)
    assert made.exit_code == 0, made.output
    return tmp_path, data, ledger


def entries(ledger) -> int:
    return len(json.loads(veil("ledger", "history", "--ledger", ledger, "--json").stdout)["entries"])


def gate_refused(result, ledger, words: str) -> None:
    """The gate refused the release (exit 1), logging the refusal and why, and charged nothing."""
    assert result.exit_code == 1 and words in result.stdout, result.output
    last = json.loads(veil("ledger", "history", "--ledger", ledger, "--json").stdout)["entries"][-1]
    assert last["action"] == "refuse"
    status = json.loads(veil("ledger", "status", "--ledger", ledger, "--json").stdout)
    assert all(p["charges"] == 0 and not p["releases"] for p in status["populations"])


# ---------------------------------------------------------------------------------------------
# veil dp … --mechanism gaussian --rho R
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("query", [
    ["count"], ["sum", "--columns", "age", "--bounds", "0,100"], ["mean", "--columns", "age", "--bounds", "0,100"],
    ["histogram", "--columns", "sex", "--categories", "sex=f,m"]])
def test_every_query_answers_in_rho_and_charges_rho(project, query):
    tmp, data, ledger = project
    drawn = veil("dp", *query[:1], data, *query[1:], "--mechanism", "gaussian", "--rho", "0.125", "--ledger", ledger,
                 "--population", "survey", "--json")
    assert drawn.exit_code == 0, drawn.output
    answer = json.loads(drawn.stdout)
    assert answer["rho"] == 0.125 and answer["epsilon"] is None and answer["delta"] is None  # none reads it as free
    assert "gaussian" in answer["mechanism"]
    assert answer["budget"]["rho"] == {"total": 0.5, "spent": 0.125, "left": 0.375}
    assert answer["budget"]["left"]["epsilon"] == pytest.approx(float(zcdp_epsilon(Fraction(3, 8), 1e-6)))
    if query[0] in ("count", "histogram"):  # integer queries keep integer (discrete Gaussian) noise
        assert all(isinstance(v, int) for v in (answer["value"] if isinstance(answer["value"], list)
                                                  else [answer["value"]]))
    assert Ledger(str(ledger)).budget("survey").spent_rho == Fraction(1, 8)


def test_the_text_output_states_rho_and_the_epsilon_it_implies(project):
    tmp, data, ledger = project
    shown = veil("dp", "count", data, "--rho", "0.25", "--ledger", ledger, "--population", "survey")
    assert shown.exit_code == 0, shown.output
    assert "count: ρ = 0.25, sensitivity 1, discrete-gaussian noise" in shown.stdout
    assert "spent ρ = 0.25 of ρ = 0.5 (ε = " in shown.stdout and "left ρ = 0.25 (ε = " in shown.stdout
    assert " ε = 0" not in shown.stdout


@pytest.mark.parametrize("cost, population, words", [
    (["--epsilon", "0.1"], "survey", ("kept in ρ-zCDP", "charge it rho, not epsilon")),
    (["--epsilon", "0.1", "--delta", "1e-6"], "survey", ("kept in ρ-zCDP", "not epsilon and delta")),
    (["--mechanism", "gaussian", "--rho", "0.1"], "census", ("kept in (ε, δ)", "ρ-zCDP cannot be charged")),
])
def test_a_charge_in_the_other_measure_is_one_sentence_and_nothing_is_charged_or_written(project, cost, population,
                                                                                          words):
    tmp, data, ledger = project
    before = entries(ledger)
    refused(veil("dp", "count", data, *cost, "--ledger", ledger, "--population", population, "--out", tmp / "out"),
            *words)
    assert entries(ledger) == before
    assert not (tmp / "out" / "answer.json").exists() and not (tmp / "out" / "manifest.json").exists()
    status = json.loads(veil("ledger", "status", "--ledger", ledger, "--json").stdout)
    assert all(p["charges"] == 0 and p["datasets"] == 0 for p in status["populations"])


def test_a_budget_file_in_the_other_measure_refuses_the_query(tmp_path, data):
    rho_file, eps_file = tmp_path / "rho.db", tmp_path / "eps.db"
    assert veil("dp", "count", data, "--rho", "0.1", "--budget-file", rho_file, "--budget", "1,1e-6").exit_code == 0
    assert veil("dp", "count", data, "--epsilon", "0.1", "--budget-file", eps_file, "--budget", "1").exit_code == 0
    refused(veil("dp", "sum", data, "--columns", "age", "--bounds", "0,100", "--epsilon", "0.1", "--budget-file",
                 rho_file), "charge it rho")
    refused(veil("dp", "mean", data, "--columns", "age", "--bounds", "0,100", "--rho", "0.1", "--budget-file",
                 eps_file), "cannot be charged")
    assert Ledger(str(rho_file)).budget("people.csv").spent_rho == Fraction(1, 10)
    assert Ledger(str(eps_file)).budget("people.csv").spent().epsilon == Fraction(1, 10)


@pytest.mark.parametrize("args, words", [
    (["--epsilon", "1", "--rho", "0.1"], ("not both",)),
    ([], ("--epsilon E",)),
    (["--mechanism", "laplace", "--rho", "0.1"], ("Laplace noise is priced in ε",)),
    (["--mechanism", "gaussian", "--epsilon", "1"], ("--delta > 0",)),
    (["--mechanism", "laplace", "--epsilon", "1", "--delta", "1e-6"], ("pure ε-DP",)),
    (["--rho", "0.1", "--delta", "1e-6"], ("leave --delta out",)),
    (["--rho", "-1"], ("--rho must be a positive",)),
    (["--mechanism", "normal", "--rho", "0.1"], ("laplace or gaussian",)),
    (["--rho", "0.1", "--budget-file", "{tmp}/b.db", "--budget", "1"], ("R,D",)),
    (["--rho", "0.1", "--budget-file", "{tmp}/b.db", "--budget", "1,0"], ("policy's delta",)),
    (["--rho", "0.1", "--budget-file", "{tmp}/b.db"], ("--budget R,D",)),
])
def test_a_bad_price_is_one_sentence_and_makes_no_file(tmp_path, data, args, words):
    refused(veil("dp", "count", data, *[a.format(tmp=tmp_path) for a in args], "--out", tmp_path / "out"), *words)
    assert not (tmp_path / "b.db").exists() and not (tmp_path / "out" / "answer.json").exists()


# ---------------------------------------------------------------------------------------------
# the readers of a zCDP population's charges
# ---------------------------------------------------------------------------------------------
def test_dp_budget_shows_rho_and_its_json_counts_no_rho_as_an_epsilon(project):
    tmp, data, ledger = project
    assert veil("dp", "count", data, "--rho", "0.2", "--ledger", ledger, "--population", "survey").exit_code == 0
    shown = veil("dp", "budget", ledger, "--population", "survey", "--json")
    assert shown.exit_code == 0, shown.output  # it crashed on the charges' exact ρ before
    doc = json.loads(shown.stdout)
    assert doc["composition"] == "zcdp" and doc["rho"] == {"total": 0.5, "spent": 0.2, "left": 0.3}
    (charge,) = doc["charges"]
    assert charge["rho"] == 0.2 and charge["counted"] is None
    assert charge["epsilon"] == pytest.approx(float(zcdp_epsilon(Fraction(1, 5), 1e-6))) and charge["epsilon"] > 1
    text = veil("dp", "budget", ledger, "--population", "survey").stdout
    assert "spent ρ = 0.2 (ε = " in text and "left ρ = 0.3" in text


def test_ledger_status_history_and_verify_read_rho_as_rho(project):
    tmp, data, ledger = project
    assert veil("dp", "count", data, "--rho", "0.2", "--ledger", ledger, "--population", "survey").exit_code == 0
    status = veil("ledger", "status", "--ledger", ledger)
    assert status.exit_code == 0, status.output
    assert "in ρ (zCDP): budget ρ = 0.5, spent ρ = 0.2, left ρ = 0.3" in status.stdout
    budget = next(p for p in json.loads(veil("ledger", "status", "--ledger", ledger, "--json").stdout)["populations"]
                  if p["name"] == "survey")["budget"]
    assert budget["spent"]["epsilon"] == pytest.approx(float(zcdp_epsilon(Fraction(1, 5), 1e-6)))
    history = veil("ledger", "history", "--ledger", ledger).stdout
    epsilon = show(zcdp_epsilon(Fraction(1, 5), Fraction(1, 10**6)))
    assert f"charged 'count': ρ = 0.2 (ε = {epsilon} at δ = 1e-06)" in history
    assert "budget ρ = 0.5, δ = 0.000001 (zcdp)" in history
    assert "ε = 0.2" not in history
    verified = veil("ledger", "verify", "--ledger", ledger)
    assert verified.exit_code == 0, verified.output


def test_an_answer_in_rho_names_no_epsilon_and_is_published_only_to_a_population_in_rho(project):
    tmp, data, ledger = project
    assert veil("dp", "count", data, "--rho", "0.1", "--out", tmp / "free").exit_code == 0
    manifest = json.loads((tmp / "free" / "manifest.json").read_text())
    assert manifest["rho"] == "0.1" and "epsilon" not in manifest and "delta" not in manifest
    gate_refused(veil("publish", tmp / "free" / "manifest.json", "--population", "census", "--data", data,
                      "--ledger", ledger), ledger, "keeps its budget in (ε, δ) and the answer cost ρ")
    published = veil("publish", tmp / "free" / "manifest.json", "--population", "survey", "--data", data, "--ledger",
                     ledger)
    assert published.exit_code == 0, published.output
    assert Ledger(str(ledger)).budget("survey").spent_rho == Fraction(1, 10)  # charged in ρ when published
    # an answer charged when drawn is published with its own charge, and charged once
    drawn = veil("dp", "count", data, "--rho", "0.2", "--ledger", ledger, "--population", "survey", "--out",
                 tmp / "paid")
    assert drawn.exit_code == 0, drawn.output
    published = veil("publish", tmp / "paid" / "manifest.json", "--population", "survey", "--ledger", ledger)
    assert published.exit_code == 0, published.output
    assert Ledger(str(ledger)).budget("survey").spent_rho == Fraction(3, 10)


def test_an_answer_in_epsilon_is_not_published_to_a_population_in_rho(project):
    tmp, data, ledger = project
    assert veil("dp", "count", data, "--epsilon", "0.1", "--out", tmp / "eps").exit_code == 0
    gate_refused(veil("publish", tmp / "eps" / "manifest.json", "--population", "survey", "--data", data,
                      "--ledger", ledger), ledger, "keeps its budget in ρ-zCDP and the answer cost ε")
    assert Ledger(str(ledger)).budget("survey").spent_rho == 0


def test_the_dp_report_shows_an_answer_in_rho_by_its_rho(tmp_path, data):
    drawn = veil("dp", "count", data, "--rho", "0.1", "--json")
    (tmp_path / "answer.json").write_text(drawn.stdout, encoding="utf-8")
    made = veil("dp", "report", tmp_path / "answer.json", "--out", tmp_path / "report.html")
    assert made.exit_code == 0, made.output
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "ρ = 0.1" in html and "ε = 0," not in html


def test_the_dp_report_states_what_is_left_of_a_budget_in_rho_as_the_epsilon_of_the_rho_left(tmp_path, data):
    book = tmp_path / "b.db"
    drawn = veil("dp", "count", data, "--rho", "0.25", "--budget-file", book, "--budget", "0.5,1e-6", "--json")
    (tmp_path / "answer.json").write_text(drawn.stdout, encoding="utf-8")
    budget = veil("dp", "budget", book, "--json")
    (tmp_path / "budget.json").write_text(budget.stdout, encoding="utf-8")
    left = json.loads(budget.stdout)["left"]["epsilon"]
    assert left == pytest.approx(float(zcdp_epsilon(Fraction(1, 4), 1e-6)))  # not ε(0.5) − ε(0.25), which is less
    from veil.report.dp import check_budget, dp_report
    report = dp_report([json.loads(drawn.stdout)], check_budget(json.loads(budget.stdout), "budget.json"))
    assert report.budget["left"]["epsilon"] == left
    made = veil("dp", "report", tmp_path / "answer.json", "--budget", tmp_path / "budget.json", "--out",
                tmp_path / "report.html")
    assert made.exit_code == 0, made.output


def test_a_reader_that_does_not_know_zcdp_refuses_the_population_rather_than_read_rho_as_epsilon(project,
                                                                                               monkeypatch):
    # what a veil from before zCDP does with such a ledger: its readers know the (ε, δ) rules only
    from veil.dp import budget_file
    from veil.errors import VeilError

    tmp, data, ledger = project
    assert veil("dp", "count", data, "--rho", "0.2", "--ledger", ledger, "--population", "survey").exit_code == 0
    monkeypatch.setattr(budget_file, "_READERS", {k: v for k, v in budget_file._READERS.items() if k != "zcdp"})
    with pytest.raises(VeilError):
        Ledger(str(ledger)).budget("survey")
    refused(veil("dp", "count", data, "--epsilon", "0.1", "--ledger", ledger, "--population", "survey"))


# ---------------------------------------------------------------------------------------------
# the policy file
# ---------------------------------------------------------------------------------------------
def test_a_policy_population_in_rho_is_a_zcdp_budget(project):
    tmp, data, ledger = project
    policy = Policy.from_spec(load_policy(tmp / "policy.yaml"))
    assert policy.population("survey").budget == ZCDPBudget(Fraction(1, 2), Fraction(1, 1000000))
    assert isinstance(Ledger(str(ledger)).budget("survey"), ZCDPAccountant)
    spec = load_policy(tmp / "policy.yaml")
    assert next(p for p in spec.populations if p.name == "survey").to_dict()["budget"] == {"rho": 0.5,
                                                                                            "delta": 1e-06}


@pytest.mark.parametrize("population, words", [
    ({"composition": "zcdp", "budget": {"epsilon": 1.0, "delta": 1e-6}}, "zcdp composition, whose budget is in ρ"),
    ({"composition": "zcdp", "budget": {"rho": 0.5}}, "delta above 0"),
    ({"budget": {"rho": 0.5, "delta": 1e-6}}, "needs 'epsilon' under sequential composition"),
    ({"composition": "advanced", "budget": {"rho": 0.5, "delta": 1e-6}}, "needs 'epsilon'"),
    ({"composition": "zcdp"}, "no budget"),
])
def test_a_policy_budget_in_the_wrong_measure_is_refused(tmp_path, population, words):
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump({"policy": {"populations": {"p": population}}}), encoding="utf-8")
    with pytest.raises(ConfigError, match=words):
        load_policy(path)


def test_an_imported_budget_file_in_rho_stays_in_rho(tmp_path):
    # the reader of JSON budget files (veil ledger import) keeps a zcdp budget's charges as ρ
    from test_ledger import sealed_budget_file

    old = ZCDPAccountant(ZCDPBudget("0.5", "0.000001"), dataset_id="veil-data-1:" + "ab" * 32)
    old.charge(rho="0.125", label="count")
    sealed_budget_file(tmp_path / "budget.json", old)
    ledger = tmp_path / "ledger.db"
    assert veil("ledger", "init", "--ledger", ledger).exit_code == 0
    imported = veil("ledger", "import", tmp_path / "budget.json", "--ledger", ledger)
    assert imported.exit_code == 0, imported.output
    kept = Ledger(str(ledger)).budget("budget.json")
    assert isinstance(kept, ZCDPAccountant) and kept.spent_rho == Fraction(1, 8)
    assert kept.budget == ZCDPBudget(Fraction(1, 2), Fraction(1, 10**6))
    assert "charged 'count': ρ = 0.125 (ε = " in veil("ledger", "history", "--ledger", ledger).stdout
