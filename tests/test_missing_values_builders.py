"""``missing_values`` reaches the hierarchy builders: a column of numbers with a few cells that
mean "missing" (``unknown``, ``n/a``) gets an interval hierarchy when those texts are listed, from
the Python API and from a configuration file alike (audit item 14)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from veil.cli import app
from veil.config import load_config
from veil.data import builders
from veil.errors import HierarchyError

runner = CliRunner()

AGES = ["25", "unknown", "31", "n/a", "47", "", "52"]


def test_builders_leave_out_the_listed_missing_values():
    h = builders.intervals(AGES, [10], missing_values=("", "unknown", "n/a"))
    assert [row[0] for row in h.rows()] == ["25", "31", "47", "52"]
    assert builders.flat(AGES, missing_values=("unknown", "n/a")).leaves.tolist() == ["25", "31", "47", "52"]
    assert "unknown" not in builders.masking(AGES, missing_values=("unknown", "n/a")).leaves.tolist()
    dates = builders.dates(["2024-01-05", "n/a"], ("month",), missing_values=("n/a",))
    assert dates.leaves.tolist() == ["2024-01-05"]


def test_without_the_markers_an_interval_hierarchy_still_refuses_text():
    with pytest.raises(HierarchyError, match="'n/a'"):
        builders.intervals(AGES, [10], missing_values=("unknown",))


def _table(folder: Path) -> Path:
    rows = ["age,zip,disease"]
    for i in range(60):
        age = ("unknown", "n/a")[i % 2] if i % 10 == 3 else str(20 + i % 40)
        rows.append(f"{age},{13050 + i % 4},{('flu', 'cold', 'hiv')[i % 3]}")
    path = folder / "people.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


CONFIG = """\
data: people.csv
missing_values: ["", unknown, n/a]
columns:
  quasi_identifiers: [age, zip]
  sensitive: [disease]
hierarchies:
  age: {intervals: {widths: [10, 20]}}
  zip: {masking: {}}
models:
  - k_anonymity: {k: 3}
suppression_limit: 0.2
output: {seed: 1}
"""


def test_a_configuration_builds_intervals_over_a_column_with_missing_markers(tmp_path: Path):
    _table(tmp_path)
    (tmp_path / "job.yaml").write_text(CONFIG, encoding="utf-8")
    data = load_config(tmp_path / "job.yaml").dataset()
    labels = set(data.labels("age", 1).tolist())
    assert "20-29" in labels and "" in labels      # the missing category stays one node of its own
    assert not {"unknown", "n/a"} & set(data.hierarchies["age"].leaves.tolist())


def test_init_advice_then_anonymize_works_from_the_cli(tmp_path: Path):
    """What ``veil init`` advises (list the texts under missing_values, use intervals) runs."""
    _table(tmp_path)
    result = runner.invoke(app, ["init", str(tmp_path / "people.csv"), "--out", str(tmp_path / "job.yaml")])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "job.yaml").read_text(encoding="utf-8")
    assert "missing_values" in text and "intervals" in text
    text = text.replace("age: {flat: {}}", "age: {intervals: {widths: [10, 20]}}")
    text = text.replace("\ncolumns:", '\nmissing_values: ["", unknown, n/a]\ncolumns:', 1)
    (tmp_path / "job.yaml").write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["anonymize", "--config", str(tmp_path / "job.yaml"),
                                 "--out", str(tmp_path / "release.csv")])
    assert result.exit_code == 0, result.output
    assert "n/a" not in (tmp_path / "release.csv").read_text(encoding="utf-8")
