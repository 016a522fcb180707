"""A mean or variance divides by the query's noisy count() when its column cannot be missing by its
type (veil.dp.shared_count): the path is taken exactly when the schema (never the values) says so,
the interval keeps its coverage, the budget is charged as before, the draws stay independent of
the data, the accuracy plan stays consistent, and the mean gets more accurate."""

from __future__ import annotations

import builtins
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from veil.conformance.glue import check_release, neighbour
from veil.dp import Accountant, Budget, PrivacyUnit, Query
from veil.dp.aggregates import count, mean, sum, variance
from veil.dp.exact import exact_epsilon
from veil.dp.measures import exact_rho
from veil.dp.query_pricing import _price
from veil.dp.shared_count import Borrowed, never_missing

KEYS = ["a", "b", "c"]


def _table(n_per_key: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = np.repeat(KEYS, n_per_key)
    centres = np.repeat([20, 50, 80], n_per_key)
    x = np.clip(centres + rng.integers(-15, 16, len(g)), 0, 100).astype(np.int64)
    return pd.DataFrame({"g": g, "x": x})


def _entries(answer) -> dict:
    return {e["name"]: e for e in answer.record["aggregates"]}


def _evaluate(table, *aggs, epsilon=1.0, rng=1, **kw):
    return Query(table).group_by("g", keys=KEYS).agg(*aggs).evaluate(epsilon, rng=rng, **kw)


# ---- the path is taken exactly when the schema says so ----------------------------------------
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_a_column_of_a_numpy_integer_or_boolean_type_shares_the_count(dtype):
    t = _table()
    t["x"] = (t["x"] > 50) if dtype == "bool" else t["x"].astype(dtype)
    entry = _entries(_evaluate(t, count(), mean("x", 0, 100)))["mean(x)"]
    assert entry["denominator"] == "count"
    assert [m["label"] for m in entry["measurements"]] == ["mean(x).sum"]


@pytest.mark.parametrize("dtype", ["float64", "Int64", "float32"])
def test_a_column_that_can_hold_a_missing_value_keeps_its_own_count_even_without_one(dtype):
    t = _table()  # no value is missing: only the type decides
    t["x"] = t["x"].astype(dtype)
    entry = _entries(_evaluate(t, count(), mean("x", 0, 100)))["mean(x)"]
    assert "denominator" not in entry
    assert [m["label"] for m in entry["measurements"]] == ["mean(x).sum", "mean(x).count"]


def test_without_a_count_aggregate_the_mean_keeps_its_own_count():
    entry = _entries(_evaluate(_table(), sum("x", 0, 100), mean("x", 0, 100)))["mean(x)"]
    assert "denominator" not in entry and len(entry["measurements"]) == 2


def test_a_count_with_less_budget_than_the_mean_own_count_is_not_shared():
    t = _table()
    assert "denominator" not in _entries(_evaluate(t, count(), mean("x", 0, 100), weights=[1, 3]))["mean(x)"]
    # exactly the mean's own count's share (half of the mean's): shared
    assert _entries(_evaluate(t, count(), mean("x", 0, 100), weights=[1, 2]))["mean(x)"]["denominator"] == "count"


def test_the_count_with_the_largest_share_is_the_denominator():
    q = _evaluate(_table(), count("few"), mean("x", 0, 100), count("many"), weights=[1, 1, 2])
    assert _entries(q)["mean(x)"]["denominator"] == "many"


def test_arrow_shares_only_a_non_nullable_integer_field_and_polars_never():
    t = _table()
    nullable = pa.Table.from_pandas(t, preserve_index=False)
    schema = pa.schema([pa.field("g", pa.string()), pa.field("x", pa.int64(), nullable=False)])
    strict = pa.Table.from_pandas(t, schema=schema, preserve_index=False)
    assert nullable.to_pandas()["x"].dtype == np.int64  # pandas would say int64: the schema decides
    assert "denominator" not in _entries(_evaluate(nullable, count(), mean("x", 0, 100)))["mean(x)"]
    assert _entries(_evaluate(strict, count(), mean("x", 0, 100)))["mean(x)"]["denominator"] == "count"
    pl = pytest.importorskip("polars")
    assert "denominator" not in _entries(_evaluate(pl.from_pandas(t), count(), mean("x", 0, 100)))["mean(x)"]


def test_spark_schema_frame_records_the_non_nullable_integral_fields():
    types = pytest.importorskip("pyspark.sql.types")
    from veil.dp.spark_statistics import spark_schema_frame

    schema = types.StructType([types.StructField("a", types.LongType(), nullable=False),
                               types.StructField("b", types.LongType(), nullable=True),
                               types.StructField("c", types.DoubleType(), nullable=False),
                               types.StructField("d", types.BooleanType(), nullable=False)])
    frame = spark_schema_frame(SimpleNamespace(schema=schema))
    query = SimpleNamespace(kind="spark", frame=frame)
    assert [c for c in "abcd" if never_missing(query, c)] == ["a", "d"]


def test_variance_shares_the_count_too_and_splits_its_share_in_halves():
    entry = _entries(_evaluate(_table(), count(), variance("x", 0, 100), epsilon=1.2))["variance(x)"]
    assert entry["denominator"] == "count"
    assert [m["label"] for m in entry["measurements"]] == ["variance(x).sq", "variance(x).sum"]
    assert [m["epsilon"] for m in entry["measurements"]] == [pytest.approx(0.3)] * 2


# ---- the record, the budget and the interval's half-width --------------------------------------
@pytest.mark.parametrize("zcdp", [False, True])
def test_the_mean_spends_its_whole_share_on_its_sum_and_nothing_more_is_charged(zcdp):
    q = Query(_table()).group_by("g", keys=KEYS).agg(count(), mean("x", 0, 100))
    measure = "rho" if zcdp else "epsilon"
    answer = q.evaluate(**{measure: 0.8}, rng=3)
    costs = [m[measure] for e in answer.record["aggregates"] for m in e["measurements"]]
    assert costs == [pytest.approx(0.4), pytest.approx(0.4)]
    total = (exact_rho if zcdp else exact_epsilon)(0.8)
    zcdp_, _, _, mech = _price(None, 0.8, None) if zcdp else _price(0.8, None, None)
    rows = q._mechanisms(zcdp_, total, q._shares(None), mech, 0.05)  # what evaluate draws, exactly
    assert builtins.sum(Fraction(r[2]) for r in rows) <= total
    assert any("divides by the noisy cells of count" in n for n in answer.record["notes"])
    accountant = Accountant(Budget(1.0, 0.0), dataset_id="t")
    q.evaluate(0.8, rng=3, accountant=accountant)
    assert accountant.spent().epsilon == pytest.approx(0.8)


def test_the_borrowed_count_half_width_is_the_count_mechanism_at_the_mean_alpha_share():
    q = Query(_table()).group_by("g", keys=KEYS).agg(count(), mean("x", 0, 100))
    zcdp, total, _, mech = _price(1.0, None, None)
    rows = q._mechanisms(zcdp, total, q._shares(None), mech, 0.1)
    (count_row,) = [r for r in rows if r[1].label == "count"]
    (borrowed,) = [r for r in rows if isinstance(r[1], Borrowed)]
    assert borrowed[3] is count_row[3] and borrowed[2] == 0
    assert borrowed[4] == count_row[3].error_bound(0.05) > count_row[4]  # α/2, wider than the count's own


# ---- coverage and accuracy (seeded statistical tests) ------------------------------------------
def _truth(table):
    return table.groupby("g")["x"].mean().reindex(KEYS).to_numpy(dtype=float)


def test_the_shared_mean_interval_covers_the_true_mean_at_the_stated_rate():
    t, alpha = _table(n_per_key=12), 0.2
    truth = _truth(t)
    assert _entries(_evaluate(t, count(), mean("x", 0, 100)))["mean(x)"]["denominator"] == "count"
    misses = total = 0
    for seed in range(400):
        a = _evaluate(t, count(), mean("x", 0, 100), rng=seed, alpha=alpha).to_pandas()
        lo, hi = a["mean(x)_low"].to_numpy(), a["mean(x)_high"].to_numpy()
        misses += int(((truth < lo - 1e-9) | (truth > hi + 1e-9)).sum())
        total += len(truth)
    assert misses / total <= alpha  # a union bound: conservative (measured: far below alpha)


def _mae(table, seeds=range(200)):
    truth = _truth(table)
    errors = [np.abs(_evaluate(table, count(), mean("x", 0, 100), rng=s).values["mean(x)"] - truth).mean()
              for s in seeds]
    return float(np.mean(errors))


def test_sharing_the_count_makes_the_mean_more_accurate_at_the_same_epsilon():
    t = _table(n_per_key=15)
    shared = _mae(t)
    own = _mae(t.astype({"x": "float64"}))  # the same values, in a type that could hold NaN
    assert shared < 0.8 * own


# ---- the draws do not depend on the data -------------------------------------------------------
def test_the_shared_path_draws_the_same_noise_on_neighbours():
    t = _table(n_per_key=5)
    unit = PrivacyUnit.rows()

    def release(table):
        Query(table, unit=unit).group_by("g", keys=KEYS).agg(count(), mean("x", 0, 100)).evaluate(0.9, rng=5)

    added = neighbour(t, "added", row=3, record={"g": "b", "x": 1000})
    outside = neighbour(t, "added", row=0, record={"g": "zz", "x": -7})
    neighbours = {"removed": neighbour(t, "removed", row=2), "added": added, "outside": outside,
                  "empty": t.iloc[:0]}
    assert all(n["x"].dtype == np.int64 for n in neighbours.values())
    recording = check_release("shared mean", release, t, neighbours)
    assert len(recording.draws) == 2  # the count and the mean's sum: no count of the mean's own


# ---- the accuracy plan -------------------------------------------------------------------------
def test_the_plan_of_a_shared_mean_is_met_and_says_it_divides_by_the_count():
    t = _table(n_per_key=30)
    q = Query(t).group_by("g", keys=KEYS).agg(count(), mean("x", 0, 100))
    plan = q.plan({"count": 5.0, "mean(x)": 20.0}, alpha=0.05, group_size=30)
    entry = {e["name"]: e for e in plan.aggregates}["mean(x)"]
    assert "divides by count's noisy cells" in entry["note"] and not entry["exact"]
    assert entry["half_width"] <= 20.0
    answer = q.evaluate(**plan.evaluate_arguments(), rng=2)
    assert _entries(answer)["mean(x)"]["denominator"] == "count"  # the plan's weights share, as planned
    assert answer.record["aggregates"][0]["measurements"][0]["half_width"] <= 5.0


def test_a_plan_whose_count_gets_less_than_the_mean_own_count_neither_shares_nor_says_so():
    q = Query(_table(n_per_key=30)).group_by("g", keys=KEYS).agg(count(), mean("x", 0, 100))
    plan = q.plan({"count": 5.0, "mean(x)": 8.0}, alpha=0.05, group_size=30)
    entry = {e["name"]: e for e in plan.aggregates}["mean(x)"]
    assert "divides by" not in entry["note"] and entry["half_width"] <= 8.0
    assert "denominator" not in _entries(q.evaluate(**plan.evaluate_arguments(), rng=2))["mean(x)"]
