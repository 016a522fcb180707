"""The shared count on Spark (veil.dp.shared_count): a non-nullable integral field shares the
query's count() and answers exactly as pandas does on an integer column; a nullable one (what
Spark gives a frame made from pandas) keeps the mean's own count, whatever its values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from veil.dp import Query
from veil.dp.aggregates import count, mean

from spark_session import classic_session

TABLE = pd.DataFrame({"g": ["a", "b", "a", "c", "b", "a"] * 5, "x": np.arange(30, dtype=np.int64) % 11})


@pytest.fixture(scope="module")
def spark():
    """A classic local[2] session (the one the run already has, if any)."""
    yield from classic_session()


def _answer(table):
    return Query(table).group_by("g", keys=["a", "b", "c"]).agg(count(), mean("x", 0, 10)).evaluate(1.0, rng=4)


def test_a_non_nullable_long_field_shares_the_count_as_pandas_does(spark):
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    schema = StructType([StructField("g", StringType(), False), StructField("x", LongType(), False)])
    strict = spark.createDataFrame([tuple(r) for r in TABLE.itertuples(index=False)], schema)
    remote, local = _answer(strict), _answer(TABLE)
    assert remote.record["aggregates"][1]["denominator"] == "count"
    pd.testing.assert_frame_equal(remote.to_pandas(), local.to_pandas(), rtol=1e-9)


def test_a_nullable_long_field_keeps_the_mean_own_count(spark):
    loose = spark.createDataFrame(TABLE)
    assert dict(loose.dtypes)["x"] == "bigint" and loose.schema["x"].nullable
    assert "denominator" not in _answer(loose).record["aggregates"][1]
