"""The spreadsheet guard (audit item 20): an output option that writes ``'`` before every text cell a
spreadsheet would run as a formula, numbers excepted; the manifest says so, and veil reads a
guarded release back as it was released (the guard is reversible)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from veil.cli import app
from veil.spreadsheet import guard_table, guard_text, unguard_table, unguard_text

runner = CliRunner()


def veil(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.mark.parametrize("cell, written", [
    ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"), ("@SUM(A1)", "'@SUM(A1)"), ("+1+1", "'+1+1"),
    ("-2+3", "'-2+3"), ("-10--6", "'-10--6"), ("\tcmd", "'\tcmd"), ("\rcmd", "'\rcmd"), ("'quoted", "''quoted"),
    ("-5", "-5"), ("+3.25", "+3.25"), ("-1e3", "-1e3"), ("-.5", "-.5"), ("flu", "flu"), ("", ""), ("1305*", "1305*"),
    ("[-10,-5)", "[-10,-5)"),
])
def test_the_rule(cell, written):
    assert guard_text(cell) == written
    assert unguard_text(written) == cell


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(alphabet="=+-@'\t\r0123456789.eE ab", max_size=6)), min_size=1,
                max_size=12))
def test_the_guard_is_reversible_and_leaves_nothing_a_spreadsheet_runs(cells):
    table = pa.table({"c": pa.array(cells, pa.string()), "n": pa.array(range(len(cells)))})
    large = table.set_column(0, "c", table.column("c").cast(pa.large_string()))
    for shape in (table, large, table.set_column(0, "c", table.column("c").dictionary_encode())):
        guarded = guard_table(shape)
        assert unguard_table(guarded).column("c").to_pylist() == cells
        assert guarded.column("n").to_pylist() == list(range(len(cells)))
        for cell in guarded.column("c").to_pylist():
            assert cell is None or cell == guard_text(unguard_text(cell))
            if cell and cell[0] in "=+-@\t\r":
                float(cell)   # only a plain number is left unguarded


ROWS = [("=HYPERLINK(\"http://evil\")", -12, "flu"), ("@SUM(1)", -7, "@cold"), ("+1+1", -3, "flu"),
        ("plain", 4, "@cold"), ("-5", 9, "flu"), ("=cmd", 14, "@cold")]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    body = "".join(f"{note},{age + 20 * (i % 2)},{zip_},{disease}\n"
                   for i, ((note, age, disease), zip_) in enumerate(
                       [(row, z) for row in ROWS for z in ("13053", "13068")]))
    (tmp_path / "people.csv").write_text("note,age,zip,disease\n" + body, encoding="utf-8")
    (tmp_path / "job.yaml").write_text(
        "data: people.csv\ncolumns: {quasi_identifiers: [age, zip], sensitive: [disease]}\n"
        "hierarchies: {age: {intervals: {widths: [10, 20]}}, zip: {masking: {}}}\n"
        "models: [{k_anonymity: {k: 2}}]\noutput: {seed: 1}\n", encoding="utf-8")
    return tmp_path


def _cells(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


def test_anonymize_writes_the_guard_when_asked(project: Path):
    result = veil("anonymize", "--config", project / "job.yaml", "--out", project / "guarded.csv",
                  "--manifest", project / "guarded.json", "--spreadsheet-guard")
    assert result.exit_code == 0, result.output
    rows = _cells(project / "guarded.csv")
    for row in rows[1:]:
        for cell in row:
            assert not cell or cell[0] not in "=+-@\t\r" or float(cell) is not None, row
    notes = {row[0] for row in rows[1:]}
    assert "'=cmd" in notes and "'@SUM(1)" in notes and "-5" in notes and "plain" in notes
    manifest = json.loads((project / "guarded.json").read_text(encoding="utf-8"))
    assert manifest["output"]["spreadsheet_guard"] is True
    assert manifest["config"]["output"]["spreadsheet_guard"] is True
    plain = veil("anonymize", "--config", project / "job.yaml", "--out", project / "plain.csv",
                 "--manifest", project / "plain.json")
    assert plain.exit_code == 0
    assert "spreadsheet_guard" not in json.loads((project / "plain.json").read_text(encoding="utf-8"))["output"]
    assert "=cmd" in {row[0] for row in _cells(project / "plain.csv")[1:]}


def test_the_configuration_asks_for_it_too(project: Path):
    text = (project / "job.yaml").read_text(encoding="utf-8").replace("output: {seed: 1}",
                                                                        "output: {seed: 1, spreadsheet_guard: true}")
    (project / "job.yaml").write_text(text, encoding="utf-8")
    assert veil("anonymize", "--config", project / "job.yaml", "--out", project / "r.csv").exit_code == 0
    assert "'=cmd" in (project / "r.csv").read_text(encoding="utf-8")


def test_veil_reads_a_guarded_release_as_released(project: Path):
    for name, flag in (("guarded", ["--spreadsheet-guard"]), ("plain", [])):
        made = veil("anonymize", "--config", project / "job.yaml", "--out", project / f"{name}.csv",
                    "--manifest", project / f"{name}.json", *flag)
        assert made.exit_code == 0, made.output
    reports = [json.loads(veil("check", project / f"{name}.csv", "--manifest", project / f"{name}.json",
                               "--json").stdout) for name in ("guarded", "plain")]
    assert reports[0] == reports[1]
    (project / "targets.csv").write_text("age,zip\n-12,13053\n8,13068\n", encoding="utf-8")
    attacks = [veil("attack", "intersection", project / "guarded.csv", project / "plain.csv", "--targets",
                    project / "targets.csv", "--manifest", f"1={project / 'guarded.json'}",
                    "--manifest", f"2={project / 'plain.json'}", "--json") for _ in range(1)]
    assert attacks[0].exit_code in (0, 1), attacks[0].output
    summary = json.loads(attacks[0].stdout)
    assert summary["releases"][0]["located"] == summary["releases"][1]["located"] == 2


def test_the_gate_reads_a_guarded_release_as_released(project: Path):
    made = veil("anonymize", "--config", project / "job.yaml", "--out", project / "guarded.csv",
                "--manifest", project / "guarded.json", "--spreadsheet-guard")
    assert made.exit_code == 0, made.output
    (project / "policy.yaml").write_text("policy: {populations: {people: {}}}\n", encoding="utf-8")
    assert veil("ledger", "init", "--ledger", project / "l.db", "--policy", project / "policy.yaml").exit_code == 0
    result = veil("publish", project / "guarded.json", "--population", "people", "--data", project / "people.csv",
                  "--ledger", project / "l.db", "--json")
    assert result.exit_code == 0, result.output
    decision = json.loads(result.stdout)
    assert decision["published"] is True and all(r["passed"] for r in decision["recheck"])
