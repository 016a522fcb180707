"""Public keys of a grouped DP query on Spark (veil.dp.spark_statistics) against the pandas engine:
keys from a hierarchy level (rows grouped by their value's generalization: text, numbers of other
spellings, missing and uncovered values), levels mixed with domains, and the "other" bucket.

One classic ``local[2]`` session for the module, as in ``tests/test_dp_spark.py``; without PySpark
or Java the tests skip and say why (they fail instead under ``VEIL_REQUIRE_SERVICES=1``). The
tables are tiny: every comparison is exact (the row unit, or bounds that keep every row).
"""

from __future__ import annotations

import datetime

import numpy as np
import pandas as pd
import pytest

from veil.data.hierarchy import Hierarchy
from veil.dp import aggregates as A
from veil.dp.grouped_query import Query
from veil.dp.noise import as_noise_source
from veil.dp.privacy_unit import PrivacyUnit
from veil.dp.public_keys import PublicKeys
from veil.dp.spark_statistics import spark_true_statistics
from veil.dp.true_cells import true_statistics
from veil.errors import ParameterError

from spark_session import classic_session

pytestmark = pytest.mark.service

WANTED = [("rows",), ("count", "x"), ("sum", "x", 0.0, 10.0), ("hist", "x", 0.0, 10.0, 2)]
KEEP_ALL = PrivacyUnit.person("pid", max_rows=10_000, max_groups=100, max_rows_per_group=10_000)


@pytest.fixture(scope="module")
def spark():
    """A classic local[2] session (the one the run already has, if any)."""
    yield from classic_session()


def both_engines(spark, frame: pd.DataFrame, columns, keys, unit=None, wanted=WANTED, schema=None):
    """``(pandas, spark)``: each engine's ``(keys_frame, stats)`` for the same table and keys."""
    unit = PrivacyUnit.rows() if unit is None else unit
    local = true_statistics(Query(frame, unit=unit), columns, keys, wanted, as_noise_source(1))
    remote = spark_true_statistics(Query(spark.createDataFrame(frame, schema=schema), unit=unit), columns, keys,
                                   wanted, as_noise_source(1))
    return local, remote


def assert_same(local, remote) -> None:
    (local_keys, local_stats), (remote_keys, remote_stats) = local, remote
    pd.testing.assert_frame_equal(remote_keys, local_keys)
    assert set(remote_stats) == set(local_stats)
    for stat, expected in local_stats.items():
        got = remote_stats[stat]
        assert got.shape == expected.shape, stat
        assert got.dtype == (np.float64 if stat[0] == "sum" else np.int64), stat
        if stat[0] == "sum":
            np.testing.assert_allclose(got, expected, rtol=1e-12, err_msg=str(stat))
        else:
            assert got.tolist() == expected.tolist(), stat


CITIES = Hierarchy([["paris", "north", "*"], ["lille", "north", "*"], ["nice", "south", "*"],
                    ["NULL", "unknown", "*"]], name="cities")


def text_table() -> pd.DataFrame:
    # "rome" is in no leaf (no key, or the other bucket); None reads the leaf NULL
    return pd.DataFrame({"pid": [1, 1, 2, 3, 4, 5, 6, 7],
                         "city": ["paris", "nice", "lille", "rome", None, "paris", "north", "nice"],
                         "x": [1.0, 2.0, 3.0, 4.0, 5.0, np.nan, 7.0, 9.0]})


# ---- one column from a hierarchy level ----------------------------------------------------------------
@pytest.mark.parametrize("other", [False, True], ids=["no-other", "other"])
@pytest.mark.parametrize("unit", [PrivacyUnit.rows(), KEEP_ALL], ids=["rows", "person-keeps-all"])
def test_a_text_columns_hierarchy_level_groups_rows_as_pandas_does(spark, unit, other):
    frame = text_table()
    keys = PublicKeys.from_hierarchy("city", CITIES, 1, other=other)
    local, remote = both_engines(spark, frame, ("city",), keys, unit=unit)
    assert_same(local, remote)
    rows = remote[1][("rows",)].tolist()
    # north: paris ×2, lille; south: nice ×2; unknown: the missing city; the value "north" is no leaf
    assert rows[:3] == [3, 2, 1]
    assert rows[3:] == ([2] if other else [])  # rome and "north" in the other bucket


NUMBERS = Hierarchy([["23", "young"], ["27.0", "young"], ["25.50", "young"], ["1e3", "old"], [" 40", "old"],
                     ["9007199254740992.0", "huge"], ["inf", "huge"], ["NULL", "unknown"]], name="numbers")


@pytest.mark.parametrize("other", [False, True], ids=["no-other", "other"])
def test_a_float_columns_hierarchy_level_matches_canonical_numbers_as_pandas_does(spark, other):
    # 27.0 matches the leaf "27.0" by its text; 23.0, 25.5, 1000.0 and 40.0 by their canonical
    # numbers; NaN and None are missing (the leaf NULL); -inf and 99.5 are in no leaf
    frame = pd.DataFrame({"v": [23.0, 27.0, 25.5, 1000.0, 40.0, np.nan, np.inf, -np.inf, 99.5, 2.0**53],
                          "x": np.arange(10, dtype=float)})
    keys = PublicKeys.from_hierarchy("v", NUMBERS, 1, other=other)
    local, remote = both_engines(spark, frame, ("v",), keys)
    assert_same(local, remote)
    assert remote[1][("rows",)].tolist() == [3, 2, 2, 1] + ([2] if other else [])


@pytest.mark.parametrize("other", [False, True], ids=["no-other", "other"])
def test_an_integer_columns_hierarchy_level_matches_canonical_numbers_as_pandas_does(spark, other):
    # 2**53 + 1 reads as the float 2**53, whose canonical text is the leaf "9007199254740992.0";
    # None is missing (the leaf NULL), 24 is in no leaf
    frame = pd.DataFrame({"v": pd.array([23, 27, 1000, 40, None, 2**53 + 1, 24, 23], dtype="Int64"),
                          "x": np.arange(8, dtype=float)})
    keys = PublicKeys.from_hierarchy("v", NUMBERS, 1, other=other)
    local, remote = both_engines(spark, frame, ("v",), keys, schema="v long, x double")
    assert_same(local, remote)
    assert remote[1][("rows",)].tolist() == [3, 2, 1, 1] + ([1] if other else [])


def test_boolean_and_date_columns_match_the_leaves_text_as_pandas_does(spark):
    flags = Hierarchy([["True", "yes"], ["False", "no"]], name="flags")
    days = Hierarchy([["2024-01-02", "january"], ["2024-02-03", "february"], ["20240102", "odd spelling"]],
                     name="days")
    frame = pd.DataFrame({"b": [True, False, True, None], "d": [datetime.date(2024, 1, 2), datetime.date(2024, 2, 3),
                                                                datetime.date(2024, 3, 4), None],
                          "x": [1.0, 2.0, 3.0, 4.0]})
    for column, keys in (("b", PublicKeys.from_hierarchy("b", flags, 1, other=True)),
                         ("d", PublicKeys.from_hierarchy("d", days, 1, other=True))):
        local, remote = both_engines(spark, frame, (column,), keys, schema="b boolean, d date, x double")
        assert_same(local, remote)
    assert remote[1][("rows",)].tolist() == [1, 1, 0, 2]


def test_a_hierarchy_level_without_a_missing_leaf_gives_missing_values_no_key(spark):
    h = Hierarchy([["a", "A"], ["b", "B"]], name="h")
    frame = pd.DataFrame({"s": ["a", None, "b", "c", "a"], "x": [1.0, 2.0, 3.0, 4.0, 5.0]})
    for other in (False, True):
        local, remote = both_engines(spark, frame, ("s",), PublicKeys.from_hierarchy("s", h, 1, other=other))
        assert_same(local, remote)
        assert remote[1][("rows",)].tolist() == [2, 1] + ([2] if other else [])


def test_a_column_spark_cannot_match_to_leaves_is_one_sentence_naming_no_value(spark):
    h = Hierarchy([["2024-01-02 00:00:00", "day"]], name="h")
    frame = pd.DataFrame({"t": pd.to_datetime(["2024-01-02", "2031-05-06"]), "x": [1.0, 2.0]})
    query = Query(spark.createDataFrame(frame))
    with pytest.raises(ParameterError) as caught:
        spark_true_statistics(query, ("t",), PublicKeys.from_hierarchy("t", h, 1), WANTED, as_noise_source(1))
    message = str(caught.value)
    assert "'t'" in message and "2031" not in message and "2024" not in message and message.count(". ") == 0


# ---- several columns: levels and domains ------------------------------------------------------------
@pytest.mark.parametrize("other", [False, True], ids=["no-other", "other"])
def test_levels_mixed_with_domains_group_rows_as_pandas_does(spark, other):
    frame = text_table().assign(v=[23.0, 27.0, 1000.0, 23.0, np.nan, 99.0, 40.0, 25.5],
                                r=["n", "s", "n", "n", "s", "e", "n", "s"])
    keys = PublicKeys.from_levels(("r", "city", "v"), {"city": (CITIES, 1), "v": (NUMBERS, 1)},
                                  {"r": ["s", "n", "w"]}, other=other)
    local, remote = both_engines(spark, frame, ("r", "city", "v"), keys, unit=KEEP_ALL)
    assert_same(local, remote)
    stats = remote[1]
    assert int(stats[("rows",)][:len(keys.keys)].sum()) == 5  # rome, (e, paris), "north" have no key
    assert int(stats[("rows",)].sum()) == (8 if other else 5)


# ---- the other bucket ------------------------------------------------------------------------------------
@pytest.mark.parametrize("unit", [PrivacyUnit.rows(), KEEP_ALL], ids=["rows", "person-keeps-all"])
def test_the_other_bucket_of_plain_keys_is_the_last_key_as_on_pandas(spark, unit):
    frame = text_table()
    for keys in (PublicKeys.from_list("city", ["nice", "paris", "oslo"], other=True),
                 PublicKeys.from_domains({"city": ["nice", "paris"], "pid": [1, 2, 3]}, other=True)):
        local, remote = both_engines(spark, frame, keys.columns, keys, unit=unit)
        assert_same(local, remote)
        assert len(remote[0]) == len(keys) and remote[0].iloc[-1, 0] == "other"


# ---- whole queries -------------------------------------------------------------------------------------
@pytest.mark.parametrize("other", [False, True], ids=["no-other", "other"])
def test_a_hierarchy_query_on_spark_answers_as_on_pandas(spark, other):
    frame = text_table().assign(v=[23.0, 27.0, 1000.0, 23.0, np.nan, 99.0, 40.0, 25.5])
    answers = []
    for data in (frame, spark.createDataFrame(frame)):
        query = Query(data).group_by(["city", "v"], hierarchy={"city": (CITIES, 1), "v": (NUMBERS, 1)},
                                     other=other).agg(A.count(), A.sum("x", 0, 10))
        answers.append(query.evaluate(epsilon=1.0, rng=7))
    local, remote = answers
    assert remote.kind == "spark" and remote.record == local.record
    pd.testing.assert_frame_equal(remote.to_pandas(), local.to_pandas(), rtol=1e-9)
