"""The Adult census extract (30,162 records, UCI; cleaned as ARX ships it) bundled with veil."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Sequence

from veil.data.dataset import Dataset

ADULT_QUASI_IDENTIFIERS = ("sex", "age", "race", "marital-status", "education", "native-country", "workclass")
ADULT_SENSITIVE = ("occupation",)
ADULT_COLUMNS = ADULT_QUASI_IDENTIFIERS + ("occupation", "salary-class")


def adult_folder() -> Path:
    """The folder holding ``adult.csv`` and its ARX hierarchies ``adult_hierarchy_<column>.csv``."""
    return Path(str(resources.files("veil") / "resources" / "adult"))


def adult_csv() -> Path:
    return adult_folder() / "adult.csv"


def adult_hierarchies() -> dict[str, Path]:
    """The path of the hierarchy file of every Adult column."""
    return {name: adult_folder() / f"adult_hierarchy_{name}.csv" for name in ADULT_COLUMNS}


def load_adult(quasi_identifiers: Sequence[str] = ADULT_QUASI_IDENTIFIERS,
               sensitive: Sequence[str] = ADULT_SENSITIVE) -> Dataset:
    """The bundled Adult table with the given roles and the hierarchies of those columns."""
    files = adult_hierarchies()
    used = list(quasi_identifiers) + list(sensitive)
    return Dataset(adult_csv(), quasi_identifiers=quasi_identifiers, sensitive=sensitive,
                   hierarchies={c: files[c] for c in used if c in files}, delimiter=";")
