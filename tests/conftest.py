"""Shared fixtures: where the reference data lives, and a tiny frame.

Every file a test reads is in the repository, so the suite runs, whole, on a bare clone: Adult
and its ARX hierarchies are the copies veil bundles (``src/veil/resources/adult``), and the
other reference tables (ARX's textbook examples, Adult's research subset) are byte-exact copies
in ``tests/data``, whose README.md says where each comes from. The paths are in ``helpers.py``
(modules that need one at import time take it from there); the fixtures below hand them out.
Only general fixtures belong here; fixtures used by one test module live in that module.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from helpers import ADULT_DIR, ADULT_SUBSET_CSV, ARX_TOY_DIR

# Every veil command a test runs, in this process or as a child, turns a warning into an error
# and shows the traceback of an unforeseen one (veil.cli.debug): a test fails where a user would
# only have been spared the warning. Tests of the default behaviour unset it themselves.
os.environ["VEIL_DEBUG"] = "error"

# The throwaway PostgreSQL server of the tests marked ``service`` (started only when one asks).
pytest_plugins = ("postgres_server",)

ADULT_COLUMNS = ("sex", "age", "race", "marital-status", "education", "native-country", "workclass",
                 "occupation", "salary-class")


@pytest.fixture(scope="session")
def adult_csv() -> Path:
    """ARX's Adult: 30,162 rows, 9 columns, ``;``-separated, CRLF line endings."""
    return ADULT_DIR / "adult.csv"


@pytest.fixture(scope="session")
def adult_subset_csv() -> Path:
    """ARX's research subset of Adult: 3,016 of its rows, in the same format."""
    return ADULT_SUBSET_CSV


@pytest.fixture(scope="session")
def adult_hierarchy_paths() -> dict[str, Path]:
    """Column name -> ARX hierarchy file, for each of Adult's 9 columns."""
    return {c: ADULT_DIR / f"adult_hierarchy_{c}.csv" for c in ADULT_COLUMNS}


@pytest.fixture(scope="session")
def arx_toy_csv() -> Path:
    """ARX "Example 1": 7 rows, ``age;gender;zipcode``."""
    return ARX_TOY_DIR / "test.csv"


@pytest.fixture(scope="session")
def arx_toy_hierarchy_paths() -> dict[str, Path]:
    """Column of ``test.csv`` -> its hierarchy file."""
    return {c: ARX_TOY_DIR / f"test_hierarchy_{c}.csv" for c in ("age", "gender", "zipcode")}


@pytest.fixture(scope="session")
def arx_toy2_csv() -> Path:
    """Li et al.'s t-closeness table: 9 rows, ``ZIPCode;Age;Salary;Disease``."""
    return ARX_TOY_DIR / "test2.csv"


@pytest.fixture(scope="session")
def arx_toy2_hierarchy_paths() -> dict[str, Path]:
    """Column of ``test2.csv`` -> its hierarchy file (no ``Salary`` hierarchy is shipped)."""
    return {c: ARX_TOY_DIR / f"test2_hierarchy_{c}.csv" for c in ("ZIPCode", "Age", "Disease")}


@pytest.fixture(autouse=True)
def budget_key_file(tmp_path_factory, monkeypatch) -> Path:
    """Every test seals DP budget files with a key in a temporary folder, never the user's own
    (``$XDG_CONFIG_HOME/veil/budget.key``); subprocesses inherit it through the environment."""
    path = tmp_path_factory.getbasetemp() / "veil-budget.key"
    monkeypatch.setenv("VEIL_KEY_FILE", str(path))
    return path


@pytest.fixture
def toy_frame() -> pd.DataFrame:
    """ARX "Example 1" as a pandas DataFrame (no file needed); a fresh copy for every test."""
    return pd.DataFrame({
        "age": [34, 45, 66, 70, 34, 70, 45],
        "gender": ["male", "female", "male", "female", "female", "male", "male"],
        "zipcode": [81667, 81675, 81925, 81931, 81931, 81931, 81931],
    })


@pytest.fixture
def bench(tmp_path):
    """A signed-in test client of the workbench over a fresh data folder (tests/workbench_client.py)."""
    pytest.importorskip("flask", reason="the workbench needs the serve extra (Flask)")
    from tests.workbench_client import Bench

    bench = Bench(tmp_path / "data")
    yield bench
    bench.jobs.stop_all()
