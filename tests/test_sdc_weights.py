"""Sampling weight, strata and household roles of a Dataset, and the refusal of bad weights."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from veil import Dataset
from veil.errors import ColumnError, DataError

BASE = {"sex": ["M", "F", "M", "F"], "age": ["1", "2", "3", "4"], "region": ["n", "n", "s", "s"],
        "hid": [1, 1, 2, 3]}


def table(weights) -> pd.DataFrame:
    return pd.DataFrame({**BASE, "w": weights})


def test_roles_and_weights_are_read():
    ds = Dataset(table([1, 2.5, 3, 4]), quasi_identifiers=["sex", "age"], weight="w", strata="region",
                 household="hid")
    assert ds.weight == "w" and ds.strata == ["region"] and ds.household == "hid"
    assert ds.sampling_weights.dtype == np.float64
    assert ds.sampling_weights.tolist() == [1, 2.5, 3, 4]
    assert "w" in ds.insensitive  # released unchanged
    with pytest.raises(ValueError):
        ds.sampling_weights[0] = 9  # read-only: nothing the user gave is modified


def test_without_a_weight_column():
    ds = Dataset(table([1, 2, 3, 4]), quasi_identifiers=["sex"])
    assert ds.sampling_weights is None and ds.strata == [] and ds.household is None


def test_weights_read_from_a_csv_file(tmp_path):
    path = tmp_path / "t.csv"
    table([1, 2, 3.5, 4]).to_csv(path, index=False)
    ds = Dataset(path, quasi_identifiers=["sex"], weight="w")
    assert ds.sampling_weights.tolist() == [1, 2, 3.5, 4]


def test_numbers_written_as_text_are_numbers():
    ds = Dataset(pa.table({"sex": ["M", "F"], "w": [" 1.5", "2"]}), quasi_identifiers=["sex"], weight="w")
    assert ds.sampling_weights.tolist() == [1.5, 2.0]


@pytest.mark.parametrize("weights,rows", [
    ([1, -2, 3, 4], "1 row holds"),
    ([1, 0, 0, 4], "2 rows hold"),
    ([1, None, 3, 4], "1 row holds"),
    ([1, np.nan, 3, np.inf], "2 rows hold"),
])
def test_bad_weights_are_refused_in_one_sentence(weights, rows):
    with pytest.raises(DataError) as info:
        Dataset(table(weights), quasi_identifiers=["sex"], weight="w")
    message = str(info.value)
    assert message.startswith("the weight column 'w' must hold a positive number on every row; " + rows)
    assert message.count(". ") == 0 and message.endswith(".")
    assert "-2" not in message and "nan" not in message.lower()  # never a value


def test_text_weights_are_refused_without_showing_them():
    with pytest.raises(DataError) as info:
        Dataset(table(["1", "heavy", "3", "4"]), quasi_identifiers=["sex"], weight="w")
    message = str(info.value)
    assert "'w'" in message and "heavy" not in message and "numbers" in message
    assert message.count(". ") == 0


def test_weights_of_another_type_are_refused():
    frame = pa.table({"sex": ["M", "F"], "w": [True, False]})
    with pytest.raises(DataError, match="the weight column 'w' must hold numbers"):
        Dataset(frame, quasi_identifiers=["sex"], weight="w")


@pytest.mark.parametrize("roles,match", [
    ({"weight": "sex"}, "two roles, quasi-identifier and weight"),
    ({"weight": "w", "strata": "w"}, "two roles, weight and strata"),
    ({"household": "age", "sensitive": "age"}, "two roles"),
    ({"strata": ["region", "region"]}, "listed twice as strata"),
    ({"weight": "weigth"}, "the weight column 'weigth' does not exist"),
    ({"household": "hh"}, "the household column 'hh' does not exist"),
])
def test_a_column_has_one_role(roles, match):
    with pytest.raises(ColumnError, match=match):
        Dataset(table([1, 2, 3, 4]), quasi_identifiers=["sex"], **roles)
