"""``veil dp query --engine spark``: the table read and counted by Spark, answered, charged and
written as the local engine does (veil.cli.dp_query_spark).

The CLI starts its own ``local[2]`` session (reused by every invocation of the module, in this
process); the tables are tiny. Without PySpark or Java the tests skip and say why.
"""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
import yaml

from helpers import veil

pytestmark = pytest.mark.service

MASTER = "local[2]"


@pytest.fixture(scope="module", autouse=True)
def _spark_available():
    try:
        import pyspark  # noqa: F401
    except ImportError:
        pytest.skip('PySpark is not installed (pip install "veil[spark]")')
    if shutil.which("java") is None:
        import os

        if not os.environ.get("JAVA_HOME"):
            pytest.skip("Java is not installed (Spark needs Java 17 or later)")


def _files(tmp_path, unit="rows", text_income=False):
    table = tmp_path / "t.csv"
    income = ["10", "20", "30", "", "7", "12"] if not text_income else ["10", "20", "n/a", "", "7", "12"]
    pd.DataFrame({"person": ["a", "b", "c", "d", "e", "a"], "region": ["north", "north", "south", "south", "east",
                                                                      "east"],
                  "income": income}).to_csv(table, index=False)
    spec = tmp_path / "q.yaml"
    spec.write_text(yaml.safe_dump({"unit": unit, "group_by": {"columns": ["region"], "keys": ["north", "south", "east"]},
                                    "aggregates": [{"aggregate": "count"},
                                                   {"aggregate": "sum", "column": "income", "low": 0, "high": 50},
                                                   {"aggregate": "mean", "column": "income", "low": 0, "high": 50}],
                                    "epsilon": 1.0}))
    return table, spec


def _without_tag(manifest: dict) -> dict:
    return {k: v for k, v in manifest.items() if k not in ("seal", "table", "charge", "created")}


@pytest.mark.parametrize("unit", ["rows", {"person": {"id_column": "person", "max_rows": 2, "max_groups": 2,
                                                      "max_rows_per_group": 2}}])
def test_spark_answers_charges_and_writes_as_the_local_engine(tmp_path, unit):
    # Bounds that keep every row: the same seed gives the same answers on both engines, and the
    # budget file made by the local engine is the same table's for Spark (same fingerprint).
    table, spec = _files(tmp_path, unit)
    budget = tmp_path / "b.db"
    local = veil("dp", "query", table, "--spec", spec, "--out", tmp_path / "local", "--seed", 5,
                 "--budget-file", budget, "--budget", 3, "--json")
    assert local.exit_code == 0, local.output
    spark = veil("dp", "query", table, "--spec", spec, "--out", tmp_path / "spark", "--seed", 5,
                 "--budget-file", budget, "--engine", "spark", "--master", MASTER, "--json")
    assert spark.exit_code == 0, spark.output
    a, b = json.loads(local.stdout), json.loads(spark.stdout)
    assert a["answers"] == b["answers"]
    assert _without_tag(a["manifest"]) == _without_tag(b["manifest"])
    assert (a["budget"]["spent"]["epsilon"], b["budget"]["spent"]["epsilon"]) == (1.0, 2.0)
    assert (tmp_path / "local" / "answers.csv").read_bytes() == (tmp_path / "spark" / "answers.csv").read_bytes()


def test_spec_engine_section_runs_on_spark(tmp_path):
    table, spec = _files(tmp_path)
    doc = yaml.safe_load(spec.read_text())
    spec.write_text(yaml.safe_dump({**doc, "engine": {"name": "spark", "master": MASTER,
                                                      "config": {"spark.sql.shuffle.partitions": 2}}}))
    result = veil("dp", "query", table, "--spec", spec, "--out", tmp_path / "o", "--seed", 1)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "o" / "manifest.json").exists()


def test_text_column_refused_on_spark_nothing_charged_nothing_written(tmp_path):
    table, spec = _files(tmp_path, text_income=True)
    budget = tmp_path / "b.db"
    result = veil("dp", "query", table, "--spec", spec, "--out", tmp_path / "o", "--budget-file", budget,
                  "--budget", 3, "--engine", "spark", "--master", MASTER)
    assert result.exit_code == 2
    assert "needs a numeric column, but 'income' holds text" in result.output
    assert "Traceback" not in result.output
    assert not budget.exists() and not (tmp_path / "o").exists()


def test_empty_text_column_refused_as_locally(tmp_path):
    table, spec = _files(tmp_path)
    pd.read_csv(table, dtype=str, keep_default_na=False).assign(income="").to_csv(table, index=False)
    for engine in (["--engine", "spark", "--master", MASTER], []):
        result = veil("dp", "query", table, "--spec", spec, "--out", tmp_path / "o", *engine)
        assert result.exit_code == 2 and "holds text" in result.output, result.output


def test_unreachable_master_refused_fast_nothing_charged(tmp_path):
    import socket

    table, spec = _files(tmp_path)
    budget = tmp_path / "b.db"
    first = veil("dp", "query", table, "--spec", spec, "--out", tmp_path / "o1", "--budget-file", budget,
                 "--budget", 3, "--seed", 1)
    assert first.exit_code == 0, first.output
    before = budget.read_bytes()
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = veil("dp", "query", table, "--spec", spec, "--out", tmp_path / "o2", "--budget-file", budget,
                  "--engine", "spark", "--master", f"spark://127.0.0.1:{port}")
    assert result.exit_code == 2
    assert "cannot be reached" in result.output and len(result.output.strip().splitlines()) == 1
    assert budget.read_bytes() == before and not (tmp_path / "o2").exists()


def test_master_without_spark_refused(tmp_path):
    table, spec = _files(tmp_path)
    result = veil("dp", "query", table, "--spec", spec, "--out", tmp_path / "o", "--master", MASTER)
    assert result.exit_code == 2 and "--master applies only with the Spark engine" in result.output
    assert not (tmp_path / "o").exists()
