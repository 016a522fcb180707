"""Shared fixtures: where the reference data lives, and a tiny frame.

The reference data (``/work/shared/data``, see its README.md) sits next to the repository, not in
it: ``<repo>/../shared/data``. Tests that need it are skipped, with the reason, when it is absent.
Only general fixtures belong here; fixtures used by one test module live in that module.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

DATA_DIR = Path(__file__).parents[1].parent / "shared" / "data"

ADULT_COLUMNS = ("sex", "age", "race", "marital-status", "education", "native-country", "workclass",
                 "occupation", "salary-class")
ADULT_ROWS = 30_162


def _require(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"reference data {path} is absent (expected the shared data folder at {DATA_DIR})")
    return path


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared reference data folder ``<repo>/../shared/data``."""
    return _require(DATA_DIR)


@pytest.fixture(scope="session")
def adult_dir(data_dir) -> Path:
    return _require(data_dir / "adult")


@pytest.fixture(scope="session")
def adult_csv(adult_dir) -> Path:
    """ARX's Adult: 30,162 rows, 9 columns, ``;``-separated, CRLF line endings."""
    return _require(adult_dir / "adult.csv")


@pytest.fixture(scope="session")
def adult_subset_csv(adult_dir) -> Path:
    return _require(adult_dir / "adult_subset.csv")


@pytest.fixture(scope="session")
def adult_hierarchy_paths(adult_dir) -> dict[str, Path]:
    """Column name -> ARX hierarchy file, for each of Adult's 9 columns."""
    return {c: _require(adult_dir / f"adult_hierarchy_{c}.csv") for c in ADULT_COLUMNS}


@pytest.fixture(scope="session")
def arx_toy_dir(data_dir) -> Path:
    return _require(data_dir / "arx-toy")


@pytest.fixture(scope="session")
def arx_toy_csv(arx_toy_dir) -> Path:
    """ARX "Example 1": 7 rows, ``age;gender;zipcode``."""
    return _require(arx_toy_dir / "test.csv")


@pytest.fixture(scope="session")
def arx_toy_hierarchy_paths(arx_toy_dir) -> dict[str, Path]:
    """Column of ``test.csv`` -> its hierarchy file."""
    return {c: _require(arx_toy_dir / f"test_hierarchy_{c}.csv") for c in ("age", "gender", "zipcode")}


@pytest.fixture(scope="session")
def arx_toy2_csv(arx_toy_dir) -> Path:
    """Li et al.'s t-closeness table: 9 rows, ``ZIPCode;Age;Salary;Disease``."""
    return _require(arx_toy_dir / "test2.csv")


@pytest.fixture(scope="session")
def arx_toy2_hierarchy_paths(arx_toy_dir) -> dict[str, Path]:
    """Column of ``test2.csv`` -> its hierarchy file (no ``Salary`` hierarchy is shipped)."""
    return {c: _require(arx_toy_dir / f"test2_hierarchy_{c}.csv") for c in ("ZIPCode", "Age", "Disease")}


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
