"""veil check with survey roles: the Benedetti–Franconi sample risk, household risk, SUDA2 and
population uniqueness figures, in the library, the tables and the JSON; bad input exits 2."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from veil import Dataset
from veil.check import check
from veil.cli import app

runner = CliRunner()

# The hand-computed table of tests/test_sdc_risk.py (its risks are worked out there).
R1 = 0.1 * math.log(10) / 0.9
R2 = 0.25 - 0.0625 * math.log(5)
R3 = 1 / 3
R4 = 5 / 6 - math.log(2)
R5 = 2 - 4 * math.log(1.5)
EXPECTED = R1 + 2 * R2 + 3 * R3 + 4 * R4 + 2 * R5
FRAME = pd.DataFrame({
    "sex": ["M", "M", "M", "F", "F", "F", "F", "F", "F", "F", "M", "M"],
    "age": ["young", "old", "old", "young", "young", "young", "old", "old", "old", "old", "middle", "middle"],
    "w": [10, 4, 6, 1, 1, 1, 2, 2, 2, 2, 1.5, 1.5],
    "hid": ["h1", "h2", "h2", "h1", "h3", "h4", "h5", "h6", "h7", "h5", "h8", "h9"],
})


@pytest.fixture
def survey(tmp_path: Path) -> Path:
    path = tmp_path / "survey.csv"
    FRAME.to_csv(path, index=False)
    return path


def invoke(*args: str):
    return runner.invoke(app, list(args))


def test_library_reports_the_sample_risk_only_for_a_survey():
    plain = check(Dataset(FRAME, quasi_identifiers=["sex", "age"]))
    assert plain.sample is None and "sample_risk" not in plain.to_dict()
    report = check(Dataset(FRAME, quasi_identifiers=["sex", "age"], weight="w", household="hid"),
                   risk_threshold=0.3)
    figures = report.to_dict()["sample_risk"]
    assert figures["expected_reidentifications"] == pytest.approx(EXPECTED)
    assert figures["global_risk_rate"] == pytest.approx(EXPECTED / 12)
    assert figures["individual_risk_max"] == pytest.approx(R5)
    assert figures["records_at_risk"] == pytest.approx(5 / 12)  # k3 and k5 above 0.3
    # households: h1 = rows 0, 3; h2 = rows 1, 2; h5 = rows 6, 9; the rest alone
    h1, h2, h5 = 1 - (1 - R1) * (1 - R3), 1 - (1 - R2) ** 2, 1 - (1 - R4) ** 2
    household = 2 * h1 + 2 * h2 + 2 * h5 + 2 * R3 + 2 * R4 + 2 * R5
    assert figures["household_expected_reidentifications"] == pytest.approx(household)
    assert figures["household_risk_max"] == pytest.approx(h1)


def test_cli_json_and_tables(survey: Path):
    result = invoke("check", str(survey), "--qi", "sex,age", "--weight", "w", "--household", "hid", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["sample_risk"]["weight"] == "w" and out["sample_risk"]["household"] == "hid"
    assert out["sample_risk"]["expected_reidentifications"] == pytest.approx(EXPECTED)
    shown = invoke("check", str(survey), "--qi", "sex,age", "--weight", "w", "--household", "hid")
    assert shown.exit_code == 0, shown.output
    assert "Sample risk" in shown.stdout and "household" in shown.stdout
    assert f"{EXPECTED:.4g}" in shown.stdout


def test_default_output_is_unchanged_without_survey_options(survey: Path):
    out = json.loads(invoke("check", str(survey), "--qi", "sex,age", "--json").stdout)
    assert not {"sample_risk", "suda", "population_uniqueness"} & out.keys()
    assert "Sample risk" not in invoke("check", str(survey), "--qi", "sex,age").stdout


def test_strata_and_approx_method(survey: Path):
    exact = json.loads(invoke("check", str(survey), "--qi", "sex,age", "--weight", "w", "--json").stdout)
    approx = json.loads(invoke("check", str(survey), "--qi", "sex,age", "--weight", "w", "--risk-method", "approx",
                               "--json").stdout)
    # only k4 (f = 4) differs: p/(f − q) = 0.5/3.5 instead of 5/6 − ln 2, for its 4 records
    assert approx["sample_risk"]["expected_reidentifications"] == pytest.approx(EXPECTED - 4 * R4 + 4 * 0.5 / 3.5)
    assert exact["sample_risk"]["strata"] == [] and approx["sample_risk"]["method"] == "approx"
    stratified = json.loads(invoke("check", str(survey), "--qi", "sex,age", "--weight", "w", "--strata", "hid",
                                   "--json").stdout)
    assert stratified["sample_risk"]["strata"] == ["hid"]


def test_suda_figures(survey: Path):
    result = invoke("check", str(survey), "--qi", "sex,age", "--suda", "2", "--dis", "0.2", "--json")
    assert result.exit_code == 0, result.output
    suda = json.loads(result.stdout)["suda"]
    # only (M, young), row 0, is unique; neither M nor young is unique alone: one MSU of size 2
    assert suda["records_with_msu"] == 1 and suda["msus"] == {"1": 0, "2": 1}
    assert suda["max_size"] == 2 and suda["dis"] == 0.2
    assert "SUDA2" in invoke("check", str(survey), "--qi", "sex,age", "--suda", "2").stdout


@pytest.mark.parametrize("args,message", [
    (["--weight", "weigth"], "the weight column 'weigth' does not exist"),
    (["--household", "sex"], "two roles"),
    (["--estimator", "pitman"], "give --population-size too"),
    (["--dis", "0.5"], "give --suda too"),
    (["--risk-method", "approx"], "give --weight, --strata or --household too"),
    (["--weight", "w", "--risk-method", "bayes"], "unknown individual risk method"),
    (["--suda", "3"], "max_size"),
])
def test_bad_input_exits_2_with_one_sentence(survey: Path, args, message):
    result = invoke("check", str(survey), "--qi", "sex,age", *args)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("weights", [[-1], [0], [None], ["x"]])
def test_bad_weights_exit_2(tmp_path: Path, weights):
    frame = FRAME.copy()
    frame["w"] = frame["w"].astype(object)
    frame.loc[0, "w"] = weights[0]
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    result = invoke("check", str(path), "--qi", "sex,age", "--weight", "w")
    assert result.exit_code == 2, result.output
    assert "the weight column 'w' must hold" in result.output


def test_population_uniqueness_figures(survey: Path):
    result = invoke("check", str(survey), "--qi", "sex,age", "--population-size", "1000", "--json")
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)["population_uniqueness"]
    # one sample unique (row 0) of 12 records
    assert figures["sample_uniques"] == pytest.approx(1 / 12)
    assert figures["population_size"] == 1000 and figures["estimator"] == "dankar"
    assert 0 <= figures["population_uniques"] <= 1
    # an estimate whose equation has no root is null in the JSON and said in the table
    pitman = invoke("check", str(survey), "--qi", "sex,age", "--population-size", "100", "--estimator", "pitman",
                    "--json")
    assert json.loads(pitman.stdout)["population_uniqueness"]["population_uniques"] is None
    shown = invoke("check", str(survey), "--qi", "sex,age", "--population-size", "100", "--estimator", "pitman")
    assert "not available" in shown.stdout


@pytest.mark.parametrize("args,message", [
    (["--population-size", "5"], "must be at least the sample's 12 records"),
    (["--population-size", "100", "--estimator", "chen"], "estimator must be one of"),
])
def test_bad_population_size_exits_2(survey: Path, args, message):
    result = invoke("check", str(survey), "--qi", "sex,age", *args)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_risk_thresholds_are_checked_and_decide_the_exit_status(survey: Path):
    """The risk models as thresholds of veil check: the average risk is the rate Σr/n of the hand
    table, the records above 0.2 are those of R1, R3 and R5 (1 + 3 + 2 of 12), and a threshold
    missed exits 1 with the verdict in the JSON."""
    args = ("check", str(survey), "--qi", "sex,age", "--weight", "w", "--json")
    rate = EXPECTED / 12
    met = invoke(*args, "--max-risk-rate", f"{rate + 1e-6}", "--max-share-at-risk", "0.5")
    assert met.exit_code == 0, met.output
    out = json.loads(met.stdout)
    assert out["average_risk"] == pytest.approx(rate, rel=1e-9) and out["records_at_risk"] == pytest.approx(0.5)
    assert out["passed"]["average_risk"] is True and out["passed"]["records_at_risk"] is True
    missed = invoke(*args, "--max-risk-rate", f"{rate - 1e-6}", "--max-share-at-risk", "0.4")
    assert missed.exit_code == 1
    out = json.loads(missed.stdout)
    assert out["passed"] == {"average_risk": False, "records_at_risk": False}
    unique = invoke(*args, "--population-size", "1000", "--max-uniqueness", "0")
    assert unique.exit_code == 1 and json.loads(unique.stdout)["passed"] == {"population_uniqueness": False}
    without = invoke(*args)
    assert "average_risk" not in json.loads(without.stdout)   # measured as a model only when asked


@pytest.mark.parametrize("extra, message", [
    (("--max-risk-rate", "1.5"), "the average risk is a number in [0, 1], not 1.5."),
    (("--max-uniqueness", "0.1"), "--max-uniqueness bounds the estimated population uniqueness; give "
                                  "--population-size too."),
])
def test_bad_risk_thresholds_exit_2(survey: Path, extra, message):
    result = invoke("check", str(survey), "--qi", "sex,age", "--weight", "w", *extra)
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
