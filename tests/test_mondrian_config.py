"""Mondrian's and Ace's per-column ``categorical`` choice in a configuration file: a mapping
``{column: hierarchy|order}`` reaches the algorithm, so ZIP codes with a masking hierarchy are
published as masked codes from the CLI as from the API (audit item 15)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from veil.cli import app
from veil.config import ConfigError, load_config
from veil.config.schema import configuration_schema

runner = CliRunner()

CONFIG = """\
data: people.csv
columns:
  quasi_identifiers: [age, zip]
  sensitive: [disease]
hierarchies:
  zip: {{masking: {{}}}}
models:
  - k_anonymity: {{k: 4}}
algorithm: {{name: {name}, categorical: {categorical}}}
output: {{seed: 3}}
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    rows = ["age,zip,disease"]
    for i in range(80):
        rows.append(f"{20 + i % 37},{(13053, 13068, 13202, 13250, 14850)[i % 5]},{('flu', 'cold', 'hiv')[i % 3]}")
    (tmp_path / "people.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return tmp_path


def _write(folder: Path, categorical: str, name: str = "mondrian") -> Path:
    path = folder / "job.yaml"
    path.write_text(CONFIG.format(categorical=categorical, name=name), encoding="utf-8")
    return path


def test_a_mapping_reaches_mondrian(folder: Path):
    config = load_config(_write(folder, "{zip: hierarchy, age: order}"))
    assert config.algorithm.options["categorical"] == {"zip": "hierarchy", "age": "order"}
    assert config.anonymizer().categorical == {"zip": "hierarchy", "age": "order"}


def test_zip_codes_with_a_masking_hierarchy_are_masked_from_the_cli(folder: Path):
    result = runner.invoke(app, ["anonymize", "--config", str(_write(folder, "{zip: hierarchy}")),
                                 "--out", str(folder / "release.csv")])
    assert result.exit_code == 0, result.output
    zips = set(pd.read_csv(folder / "release.csv", dtype=str)["zip"])
    assert zips and all(re.fullmatch(r"[0-9]*\**", z) for z in zips), zips   # 1305*, 13***, …, not [13053-13202]


def test_ace_takes_the_mapping_too(folder: Path):
    path = folder / "job.yaml"
    path.write_text(CONFIG.format(categorical="{zip: hierarchy}", name="ace").replace(
        "k_anonymity: {k: 4}", "distinct_l_diversity: {l: 2}"), encoding="utf-8")
    assert load_config(path).anonymizer().categorical == {"zip": "hierarchy"}


@pytest.mark.parametrize("categorical,words", [
    ("{sex: hierarchy}", ["'sex'", "quasi-identifier", "age, zip"]),
    ("{disease: order}", ["'disease'", "quasi-identifier"]),
    ("{zip: tree}", ["'tree'", "hierarchy", "order"]),
    ("[zip]", ["categorical", "mapping"]),
])
def test_a_bad_mapping_names_its_line(folder: Path, categorical: str, words: list):
    path = _write(folder, categorical)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}, line 9: "), message
    for word in words:
        assert word in message, message


def test_the_json_schema_accepts_the_mapping():
    mondrian = next(s for s in configuration_schema()["properties"]["algorithm"]["anyOf"][1]["oneOf"]
                    if s["properties"]["name"].get("const") == "mondrian")
    text = json.dumps(mondrian["properties"]["categorical"])
    assert "additionalProperties" in text and "hierarchy" in text
