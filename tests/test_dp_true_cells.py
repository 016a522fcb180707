"""The engine entry point of grouped DP queries (veil.dp.true_cells): bounding, then the
sufficient statistics per key, for public keys (with or without an "other" bucket) and for the
candidate keys of private partition selection."""

from __future__ import annotations

import sys
import types

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.dp import PrivacyUnit, Query
from veil.dp.noise import NoiseSource
from veil.dp.public_keys import PublicKeys
from veil.dp.true_cells import kept_rows, true_statistics

ROWS, COUNT_X, SUM_X = ("rows",), ("count", "x"), ("sum", "x", 0.0, 10.0)


@st.composite
def tables(draw):
    n = draw(st.integers(0, 40))
    pid = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    key = draw(st.lists(st.sampled_from(["a", "b", "c", "d", None]), min_size=n, max_size=n))
    x = draw(st.lists(st.one_of(st.floats(-5, 15), st.just(float("nan"))), min_size=n, max_size=n))
    return pd.DataFrame({"pid": pid, "k": key, "x": x})


UNITS = [PrivacyUnit.rows(), PrivacyUnit.person("pid", max_rows=3),
         PrivacyUnit.person("pid", max_groups=1, max_rows_per_group=2),
         PrivacyUnit.person("pid", max_rows=4, max_groups=2, max_rows_per_group=1)]


@settings(max_examples=60, deadline=None)
@given(table=tables(), unit=st.sampled_from(UNITS), other=st.booleans(), seed=st.integers(0, 10**6))
def test_every_public_key_once_and_no_row_lost_or_invented(table, unit, other, seed):
    keys = PublicKeys.from_list("k", ["a", "b", "z"], other=other)
    frame, stats = true_statistics(Query(table, unit=unit), ("k",), keys, [ROWS, COUNT_X, SUM_X],
                                   NoiseSource.seeded(seed))
    expected = ["a", "b", "z"] + (["other"] if other else [])
    assert frame["k"].tolist() == expected  # every public key exactly once, in order; "other" last
    # the rows counted are exactly the rows bounding keeps (same seed: same keys)
    group = keys.index_of_rows(table)
    kept = kept_rows(unit, table, group, NoiseSource.seeded(seed))
    assert stats[ROWS].sum() == kept.sum()
    assert stats[ROWS][2] == 0  # "z" is empty and answered
    if not other and not unit.is_person:
        assert stats[ROWS].sum() == table["k"].isin(["a", "b"]).sum()
    if other and not unit.is_person:  # every row has a key: public, or the other bucket
        assert stats[ROWS].sum() == len(table)
        assert stats[ROWS][3] == (~table["k"].isin(["a", "b", "z"])).sum()
    assert (stats[COUNT_X] <= stats[ROWS]).all()


@settings(max_examples=60, deadline=None)
@given(table=tables(), unit=st.sampled_from(UNITS), seed=st.integers(0, 10**6))
def test_the_candidate_keys_are_the_keys_present_after_bounding_sorted(table, unit, seed):
    frame, stats = true_statistics(Query(table, unit=unit), ("k",), None, [ROWS], NoiseSource.seeded(seed))
    keys = frame["k"].tolist()
    assert keys == sorted(keys)
    assert set(keys) <= set(table["k"].dropna())
    assert (stats[ROWS] >= 1).all()  # a candidate holds a kept row
    if not unit.is_person:  # nothing bounded away: every key present is a candidate, no row lost
        assert set(keys) == set(table["k"].dropna())
        assert stats[ROWS].sum() == table["k"].notna().sum()
    if unit.max_groups == 1:  # L0: one key per person at most
        assert len(keys) <= table["pid"].nunique()


def test_candidate_keys_of_two_columns_and_mixed_types_sort_without_error():
    table = pd.DataFrame({"a": [2, 1, "x", 1, 2], "b": ["q", "p", "p", "p", None]})
    frame, stats = true_statistics(Query(table), ("a", "b"), None, [ROWS], NoiseSource.seeded(1))
    assert [tuple(r) for r in frame.itertuples(index=False)] == [(1, "p"), (2, "q"), ("x", "p")]
    assert stats[ROWS].tolist() == [2, 1, 1]


def test_candidate_keys_keep_the_tables_types():
    table = pd.DataFrame({"age": np.array([30, 20, 30], dtype=np.int32), "x": [1.0, 2.0, 3.0]})
    frame, stats = true_statistics(Query(table), ("age",), None, [ROWS, SUM_X], NoiseSource.seeded(1))
    assert frame["age"].dtype == np.int32 and frame["age"].tolist() == [20, 30]
    assert stats[SUM_X].tolist() == [2.0, 4.0]


def test_a_spark_query_dispatches_to_the_spark_engine(monkeypatch):
    seen = []
    fake = types.ModuleType("veil.dp.spark_statistics")
    fake.spark_true_statistics = lambda *args: seen.append(args) or ("frame", {})
    monkeypatch.setitem(sys.modules, "veil.dp.spark_statistics", fake)
    query = Query(pd.DataFrame({"k": ["a"]}))
    object.__setattr__(query, "kind", "spark")
    assert true_statistics(query, ("k",), None, [ROWS], NoiseSource.seeded(1)) == ("frame", {})
    assert seen and seen[0][1] == ("k",)


@pytest.mark.parametrize("private", [False, True])
def test_the_grouped_query_reads_the_data_only_through_the_engine_entry_point(monkeypatch, private):
    import veil.dp.grouped_query as gq

    calls = []
    real = gq.true_statistics
    monkeypatch.setattr(gq, "true_statistics", lambda *a: calls.append(a[2]) or real(*a))
    from veil.dp.aggregates import count
    from veil.dp.partition_selection import PartitionSelection

    table = pd.DataFrame({"k": ["a", "b", "b"]})
    q = Query(table).group_by("k", private=PartitionSelection(1e-6)) if private else Query(table).group_by("k", ["a"])
    q.agg(count()).evaluate(1.0, rng=1)
    assert len(calls) == 1 and (calls[0] is None) == private


def test_a_spark_dataframe_is_read_by_its_schema_and_dispatched(monkeypatch):
    """A Spark DataFrame (classic or Connect: the class is named DataFrame in a pyspark module)
    gives the query its columns and types from the schema, without a Spark job; its rows go to the
    Spark engine. A stand-in with a real schema, so that no JVM starts here."""
    T = pytest.importorskip("pyspark.sql.types")
    schema = T.StructType([T.StructField("pid", T.LongType()), T.StructField("k", T.StringType()),
                           T.StructField("x", T.DoubleType()), T.StructField("ok", T.BooleanType())])
    FakeFrame = type("DataFrame", (), {"__module__": "pyspark.sql.connect.dataframe", "schema": schema,
                                        "sparkSession": None})
    query = Query(FakeFrame(), unit=PrivacyUnit.person("pid", max_rows=2))
    assert query.kind == "spark" and len(query.frame) == 0
    assert [str(t) for t in query.frame.dtypes] == ["int64", "object", "float64", "bool"]
    from veil.dp.aggregates import count, mean
    from veil.errors import ColumnError

    with pytest.raises(ColumnError, match="numeric"):
        Query(FakeFrame()).group_by("k", ["a"]).agg(mean("k", 0, 1))
    seen = []
    fake = types.ModuleType("veil.dp.spark_statistics")

    def engine(q, columns, keys, wanted, src):
        seen.append((columns, keys.keys, wanted))
        return keys.frame(), {("rows",): np.array([3, 0])}

    fake.spark_true_statistics = engine
    monkeypatch.setitem(sys.modules, "veil.dp.spark_statistics", fake)
    answer = query.group_by("k", ["a", "b"]).agg(count()).evaluate(1e9, rng=1)
    assert seen == [(("k",), (("a",), ("b",)), [("rows",)])]
    assert answer.values["count"].tolist() == [3, 0]
