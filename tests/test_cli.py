"""The ``veil`` command line: summaries, JSON, exit statuses, and every bad input refused cleanly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veil.cli import app
from veil.manifests import combined

REQUIRED_KEYS = {"rows", "classes", "k", "alpha", "l_distinct", "l_entropy", "c_l_recursive", "t_equal",
                 "t_ordered", "t_hierarchical", "delta", "beta_basic", "beta_enhanced", "prosecutor_risk_max",
                 "prosecutor_risk_avg", "marketer_risk"}

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args))


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "people.csv"
    path.write_text("name,zip,age,disease\n"
                    "Ann,13053,28,flu\nBob,13068,29,cancer\nCid,13068,21,flu\n"
                    "Dee,13053,23,cold\nEve,14853,50,cancer\nFay,14853,55,flu\n", encoding="utf-8")
    return path


def test_check_json_has_every_key_and_exact_levels(table: Path):
    result = invoke("check", str(table), "--qi", "zip", "--sensitive", "disease", "--identifying", "name",
                    "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert REQUIRED_KEYS <= out.keys()
    # zip classes: 13053 {flu, cold}, 13068 {cancer, flu}, 14853 {cancer, flu}
    assert out["rows"] == 6 and out["classes"] == 3
    assert out["k"] == 2 and out["l_distinct"] == 2 and out["alpha"] == 0.5
    assert out["l_entropy"] == pytest.approx(2.0)
    assert out["t_ordered"] is None and out["t_hierarchical"] is None
    assert out["prosecutor_risk_max"] == 0.5
    assert out["prosecutor_risk_avg"] == pytest.approx(0.5)
    assert out["marketer_risk"] == pytest.approx(0.5)


def test_check_prints_readable_summary(table: Path):
    result = invoke("check", str(table), "--qi", "zip,age", "--sensitive", "disease")
    assert result.exit_code == 0, result.output
    assert "k-anonymity" in result.stdout and "prosecutor" in result.stdout
    assert "6 records in 6 equivalence classes" in result.stdout


def test_threshold_failure_exits_1_and_success_exits_0(table: Path):
    failing = invoke("check", str(table), "--qi", "zip", "--sensitive", "disease", "--k", "3")
    assert failing.exit_code == 1
    assert "fail" in failing.stdout
    passing = invoke("check", str(table), "--qi", "zip", "--sensitive", "disease", "--k", "2", "--l", "2")
    assert passing.exit_code == 0
    assert "pass" in passing.stdout


def test_hierarchy_and_order_options(arx_toy2_csv, arx_toy2_hierarchy_paths):
    result = invoke("check", str(arx_toy2_csv), "--qi", "ZIPCode,Age", "--sensitive", "Salary,Disease",
                    "--hierarchy", f"Disease={arx_toy2_hierarchy_paths['Disease']}", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["rows"] == 9 and out["k"] == 1
    assert out["t_ordered"] is not None and out["t_hierarchical"] is not None
    assert set(out["by_sensitive"]) == {"Salary", "Disease"}
    assert "t_ordered" in out["by_sensitive"]["Salary"] and "t_ordered" not in out["by_sensitive"]["Disease"]


def test_order_option_makes_text_column_ordinal(table: Path):
    result = invoke("check", str(table), "--qi", "zip", "--sensitive", "disease",
                    "--order", "disease=cold,flu,cancer", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["t_ordered"] is not None


def test_single_valued_sensitive_column_is_reported_not_divided_by_zero(tmp_path: Path):
    path = tmp_path / "same.csv"
    path.write_text("zip,age,disease\n1,2,flu\n1,3,flu\n2,3,flu\n", encoding="utf-8")
    result = invoke("check", str(path), "--qi", "zip", "--sensitive", "disease", "--order", "disease=flu",
                    "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["l_distinct"] == 1 and out["t_equal"] == 0 and out["t_ordered"] == 0
    assert any("single value" in note for note in out["notes"])


def test_population_gives_journalist_risk(tmp_path: Path, table: Path):
    population = tmp_path / "population.csv"
    population.write_text(table.read_text() + "Gus,13053,70,flu\nHal,13068,71,cold\n", encoding="utf-8")
    result = invoke("check", str(table), "--qi", "zip", "--sensitive", "disease", "--population", str(population),
                    "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    # population classes: 13053 → 3, 13068 → 3, 14853 → 2
    assert out["journalist_risk_max"] == pytest.approx(0.5)
    assert out["marketer_risk"] == pytest.approx((2 / 3 + 2 / 3 + 2 / 2) / 6)


def test_demo_anonymizes_bundled_adult_and_writes_its_outputs(tmp_path: Path):
    out = tmp_path / "demo"
    result = invoke("demo", "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert json.loads((out / "manifest.json").read_text()) == printed  # the published manifest
    assert "rows" not in printed["input"] and "attacks" not in printed
    manifest = combined(printed, json.loads((out / "manifest.private.json").read_text()))
    assert manifest["input"]["rows"] == 30162
    assert manifest["roles"]["quasi_identifiers"] == ["sex", "age", "race", "marital-status", "education",
                                                      "native-country", "workclass"]
    assert manifest["suppression"]["records"] <= 0.02 * 30162
    assert all(row["passed"] for row in manifest["models"])
    assert {row["key"] for row in manifest["models"]} == {"k", "l_entropy"}
    assert manifest["search"]["proven_optimal"] is True
    lines = (out / "release.csv").read_text().splitlines()
    # Same delimiter and column order as the bundled input; suppressed records removed.
    assert lines[0] == "sex;age;race;marital-status;education;native-country;workclass;occupation;salary-class"
    assert len(lines) - 1 == 30162 - manifest["suppression"]["records"]
    # The report describes this release: its class count appears on the page.
    page = (out / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and f"{manifest['classes']['released']:,}" in page


def test_demo_prints_a_summary(tmp_path: Path):
    result = invoke("demo", "--out", str(tmp_path / "d"))
    assert result.exit_code == 0, result.output
    for words in ("generalization levels", "suppressed", "proven optimal", "entropy ℓ-diversity", "loss"):
        assert words in result.stdout
    # The ledger step: the release is published, a second one of the same people refused, with the reason.
    assert "published 'd/release.csv' as release 1 of population 'adult'" in result.stdout
    assert "refused 'd/refused/release.csv (optimized for discernibility)'" in result.stdout
    assert ("intersected with release 1 ('d/release.csv', published " in result.stdout
            and "perfectly breaches 1 of 30,162 people (0.0033%) on 'occupation'" in result.stdout)
    # Run again into the same folder, the demo would publish a second release under the same name:
    # it is refused, and nothing there changes.
    before = {path: path.read_bytes() for path in (tmp_path / "d").rglob("*") if path.is_file()}
    again = invoke("demo", "--out", str(tmp_path / "d"))
    assert again.exit_code == 2 and again.stdout == "" and "holds an earlier demo" in again.stderr
    assert {path: path.read_bytes() for path in (tmp_path / "d").rglob("*") if path.is_file()} == before


BAD_INPUTS = [
    (["check", "{missing}", "--qi", "zip"], "does not exist"),
    (["check", "{ragged}", "--qi", "zip"], "line 3"),
    (["check", "{table}", "--qi", "zipp"], "did you mean 'zip'"),
    (["check", "{table}", "--qi", "zip", "--sensitive", "zip"], "two roles"),
    (["check", "{table}", "--qi", ","], "no quasi-identifier"),
    (["check", "{table}", "--qi", "zip", "--hierarchy", "zip={short_hierarchy}"], "does not cover"),
    (["check", "{table}", "--qi", "zip", "--hierarchy", "zip={bad_hierarchy}"], "row 2"),
    (["check", "{table}", "--qi", "zip", "--hierarchy", "zip"], "COLUMN=VALUE"),
    (["check", "{table}", "--qi", "zip", "--sensitive", "disease", "--c", "0"], "c must be greater than 0"),
    (["check", "{table}", "--qi", "zip", "--sensitive", "disease", "--l", "0.5"], "ℓ must be at least 1"),
    (["check", "{table}", "--qi", "zip", "--k", "0"], "k must be at least 1"),
    (["check", "{table}", "--qi", "zip", "--sensitive", "disease", "--t", "2"], "t must be between 0 and 1"),
    (["check", "{empty}", "--qi", "zip"], "no records"),
    (["check", "{table}", "--qi", "zip", "--sensitive", "disease", "--order", "disease=flu"], "does not list"),
]


@pytest.mark.parametrize("args, words", BAD_INPUTS)
def test_bad_input_is_one_sentence_and_exit_2(tmp_path: Path, table: Path, args, words):
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("zip,age\n1,2\n3,4,5\n", encoding="utf-8")
    empty = tmp_path / "empty.csv"
    empty.write_text("zip,age\n", encoding="utf-8")
    short_hierarchy = tmp_path / "short.csv"
    short_hierarchy.write_text("13053;*\n", encoding="utf-8")
    bad_hierarchy = tmp_path / "bad.csv"
    bad_hierarchy.write_text("13053;130**;*\n13068;*\n14853;148**;*\n", encoding="utf-8")
    names = dict(missing=tmp_path / "nope.csv", ragged=ragged, table=table, empty=empty,
                 short_hierarchy=short_hierarchy, bad_hierarchy=bad_hierarchy)
    result = invoke(*[a.format(**names) for a in args])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
    assert words in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_installed_command_fails_without_traceback(tmp_path: Path):
    """The real console script, not the in-process runner: exit 2, one line, no traceback."""
    proc = subprocess.run([sys.executable, "-m", "veil.cli", "check", str(tmp_path / "absent.csv"), "--qi", "a"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.strip().startswith("error: file")
    assert "Traceback" not in proc.stderr


def test_input_file_is_untouched(table: Path):
    before = table.read_bytes()
    invoke("check", str(table), "--qi", "zip", "--sensitive", "disease", "--json")
    assert table.read_bytes() == before
    assert sorted(p.name for p in table.parent.iterdir()) == ["people.csv"]
