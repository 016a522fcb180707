"""Local suppression (veil.sdc.local_suppression): a table worked out by hand, the k-anonymity
oracle, properties on small random tables (k-anonymous under the chosen matching, nothing but
quasi-identifier cells touched, no record lost or invented, the exact method between the lower
bound and the greedy count), the importance order, the risk threshold, record suppression, and
bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil import Dataset
from veil.errors import ColumnError, InfeasibleError, ParameterError
from veil.risk.individual import benedetti_franconi
from veil.sdc.local_suppression import (
    LocalSuppression,
    is_k_anonymous,
    local_suppression,
    lower_bound,
    record_suppression_cells,
)

PROPERTY = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}

# The hand-worked table (k = 2), quasi-identifiers sex, age, zip; 'note' is not one.
#   rows   sex age zip  class size
#   0-1    F   30  A    2
#   2-3    F   30  B    2
#   4-5    M   40  A    2
#   6      M   40  C    1   <- below k
#   7      M   50  C    1   <- below k
#   8-9    F   50  A    2
# Distinct values: sex 2, age 3, zip 3, so by default zip (the later of the two widest columns) is
# suppressed first, then age, then sex.
ROWS = [("F", 30, "A"), ("F", 30, "A"), ("F", 30, "B"), ("F", 30, "B"), ("M", 40, "A"), ("M", 40, "A"),
        ("M", 40, "C"), ("M", 50, "C"), ("F", 50, "A"), ("F", 50, "A")]
# Row 10 makes a third record below k: (M, 30, B).
EXTRA = ("M", 30, "B")


def table(rows) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["sex", "age", "zip"])
    frame["note"] = [f"n{i}" for i in range(len(frame))]
    return frame


def dataset(rows=ROWS) -> Dataset:
    return Dataset(table(rows), quasi_identifiers=["sex", "age", "zip"])


def suppressed_cells(result: LocalSuppression) -> dict[int, list[str]]:
    return {int(i): [c for c, s in zip(result.columns, row) if s]
            for i, row in enumerate(result.suppressed) if row.any()}


def codes_of(ds: Dataset) -> list[np.ndarray]:
    return [ds.column(name).codes for name in ds.quasi_identifiers]


# ----------------------------------------------------------------------------------------------
# By hand


def test_category_by_hand():
    # Rows 6 (M,40,C) and 7 (M,50,C). Suppressing zip gives (M,40,*) and (M,50,*): classes of 1;
    # sex gives (*,40,C) and (*,50,C): 1 each; age gives (M,*,C) for both: a class of 2 = k. Age is
    # the least important column that suffices: 2 cells, the lower bound (every record of a class
    # below k loses a cell), hence proven optimal.
    result = local_suppression(dataset(), k=2, matching="category")
    assert suppressed_cells(result) == {6: ["age"], 7: ["age"]}
    assert (result.cells, result.lower_bound, result.optimal) == (2, 2, True)
    assert result.per_column() == {"sex": 0, "age": 2, "zip": 0}
    assert (result.k, result.risk, result.matching, result.method) == (2, None, "category", "greedy")


def test_any_by_hand():
    # Under "any", row 6 with zip suppressed, (M,40,*), matches rows 4, 5 and itself: 3 >= 2, and
    # zip is the least important column, so it goes. Row 7: zip gives (M,50,*) (alone), sex
    # (*,50,C) (alone), age (M,*,C), which matches row 6: 2. Both are suppressed in the same
    # round: 2 cells. One is enough (row 7's age alone puts rows 6 and 7 in each other's class):
    # the exact method finds it, and the lower bound is 1 (min over D of max(Σ_D s, max_{not D} k − s)).
    greedy = local_suppression(dataset(), k=2)
    assert suppressed_cells(greedy) == {6: ["zip"], 7: ["age"]}
    assert (greedy.cells, greedy.lower_bound, greedy.optimal) == (2, 1, False)
    exact = local_suppression(dataset(), k=2, method="optimal")
    assert (exact.cells, exact.lower_bound, exact.optimal) == (1, 1, True)
    assert is_k_anonymous(codes_of(dataset()), exact.suppressed, 2, "any")
    assert not is_k_anonymous(codes_of(dataset()), exact.suppressed, 2, "category")


def test_a_record_with_no_partner_by_hand():
    # Add row 10 (M,30,B). Category greedy: rows 6, 7 lose age as above; row 10 finds no column
    # that suffices and loses zip, then age, then sex (ties go to the least important column).
    # Fully suppressed and alone, it takes in the cheapest whole safe class: rows 6-7, (M,*,C),
    # 2 more cells each: (*,*,*) three times, 9 cells. Then cells are given back, the most
    # important column first: sex, for all three together (a new class (M,*,*) of 3 >= k); age
    # and zip cannot be (each record would be alone). 6 cells. The minimum is 5: rows 6 and 7
    # lose age, rows 2, 3 and 10 lose sex, (*,30,B) three times.
    ds = dataset([*ROWS, EXTRA])
    greedy = local_suppression(ds, k=2, matching="category")
    assert suppressed_cells(greedy) == {6: ["age", "zip"], 7: ["age", "zip"], 10: ["age", "zip"]}
    exact = local_suppression(ds, k=2, matching="category", method="optimal")
    assert (exact.cells, exact.optimal) == (5, True)
    assert suppressed_cells(exact) == {2: ["sex"], 3: ["sex"], 6: ["age"], 7: ["age"], 10: ["sex"]}
    assert greedy.lower_bound == 3 and exact.lower_bound == 5
    # Under "any" a record with two cells suppressed next to rows 6, 7 and 10 is compatible with
    # all three: 2 cells are the minimum.
    exact_any = local_suppression(ds, k=2, method="optimal")
    assert (exact_any.cells, exact_any.optimal) == (2, True)


def test_lower_bounds_by_hand():
    # (0,0) twice and (1,1) once, k = 2. "category": (1,1) with one column hidden agrees with no
    # other record on the other column, so its record needs both cells hidden: d = 2, bound 2.
    # The minimum is 6: (1,1) can only share (*,*), and the two (0,0) records cannot stay a pair
    # of 2 with one of them gone, so all three become (*,*).
    codes = [np.array([0, 0, 1]), np.array([0, 0, 1])]
    assert lower_bound(codes, [2, 2], 2, "category") == 2
    # "any": D = {} needs k − 1 = 1 record outside, D = {(1,1)} needs its 1 record: bound 1. The
    # minimum is 2 (e.g. (*,1) and (0,*): each suppressed where they differ).
    assert lower_bound(codes, [2, 2], 2, "any") == 1
    ds = Dataset(pd.DataFrame({"a": [0, 0, 1], "b": [0, 0, 1]}), quasi_identifiers=["a", "b"])
    assert local_suppression(ds, k=2, matching="category", method="optimal").cells == 6
    assert local_suppression(ds, k=2, matching="any", method="optimal").cells == 2


def test_importance_moves_the_suppression():
    # With age least important, "any" takes age from row 6 too ((M,*,C) matches row 7).
    result = local_suppression(dataset(), k=2, importance=["zip", "sex", "age"])
    assert suppressed_cells(result) == {6: ["age"], 7: ["age"]}
    # Naming only some columns puts them after the others, in the order given.
    assert suppressed_cells(local_suppression(dataset(), k=2, importance=["sex"])) == {6: ["zip"], 7: ["age"]}


def test_importance_on_a_larger_table():
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({name: rng.integers(0, size, 400) for name, size in
                          (("a", 3), ("b", 4), ("c", 5), ("d", 6))})
    ds = Dataset(frame, quasi_identifiers=list(frame.columns))
    for column in frame.columns:
        others = [c for c in frame.columns if c != column]
        kept = local_suppression(ds, k=3, importance=[column] + others, matching="category")
        spent = local_suppression(ds, k=3, importance=others + [column], matching="category")
        assert kept.per_column()[column] < spent.per_column()[column]


def test_the_exact_method_spares_the_important_columns():
    # Among the minimal suppressions (10 cells here) the exact method returns one that spends the
    # least on important columns (a second program, with the count fixed).
    frame = pd.DataFrame([[0, 1, 0], [2, 0, 2], [2, 2, 0], [1, 1, 1], [1, 2, 1], [0, 2, 1], [2, 0, 1], [2, 0, 0]],
                         columns=["a", "b", "c"])
    ds = Dataset(frame, quasi_identifiers=["a", "b", "c"])
    first = local_suppression(ds, k=2, matching="category", method="optimal", importance=["a", "b", "c"])
    last = local_suppression(ds, k=2, matching="category", method="optimal", importance=["c", "b", "a"])
    assert first.cells == last.cells == 10 and first.optimal and last.optimal
    assert first.per_column()["a"] < last.per_column()["a"]
    assert first.per_column()["c"] >= last.per_column()["c"]


def test_record_suppression_cells_by_hand():
    assert record_suppression_cells(dataset(), 2) == 2 * 3
    assert record_suppression_cells(dataset(), 3) == 10 * 3
    assert record_suppression_cells(dataset(), 1) == 0


def test_nothing_to_do():
    result = local_suppression(dataset(), k=1)
    assert result.cells == 0 and result.optimal and result.lower_bound == 0
    assert result.suppressed.shape == (10, 3)


# ----------------------------------------------------------------------------------------------
# The oracle


def test_oracle_by_hand():
    codes = [np.array([0, 0, 1]), np.array([0, 1, 1])]
    none = np.zeros((3, 2), dtype=bool)
    assert is_k_anonymous(codes, none, 1, "any") and not is_k_anonymous(codes, none, 2, "any")
    # Row 1 as (0,*) matches row 0 (0,0), not row 2 (1,1): row 2 stays alone.
    one = none.copy()
    one[1, 1] = True
    assert not is_k_anonymous(codes, one, 2, "any")
    # Row 2 as (*,1) matches row 1 (0,*) (each is suppressed where they differ), not row 0.
    one[2, 0] = True
    assert is_k_anonymous(codes, one, 2, "any")
    # Under "category" (0,*) and (*,1) are different classes of one record each.
    assert not is_k_anonymous(codes, one, 2, "category")
    every = np.ones((3, 2), dtype=bool)
    assert is_k_anonymous(codes, every, 3, "category") and is_k_anonymous(codes, every, 3, "any")


# ----------------------------------------------------------------------------------------------
# Properties


@st.composite
def small_tables(draw, max_rows=14, max_columns=3):
    rows = draw(st.integers(1, max_rows))
    columns = draw(st.integers(1, max_columns))
    values = draw(st.lists(st.lists(st.integers(0, 2), min_size=columns, max_size=columns),
                           min_size=rows, max_size=rows))
    frame = pd.DataFrame(values, columns=[f"q{j}" for j in range(columns)])
    frame["other"] = np.arange(rows) * 7
    k = draw(st.integers(1, rows))
    return frame, k


@settings(max_examples=60, **PROPERTY)
@given(small_tables(), st.sampled_from(["any", "category"]))
def test_greedy_is_k_anonymous_and_touches_only_key_cells(case, matching):
    frame, k = case
    before = frame.copy()
    qis = [c for c in frame.columns if c != "other"]
    ds = Dataset(frame, quasi_identifiers=qis)
    result = local_suppression(ds, k=k, matching=matching)
    pd.testing.assert_frame_equal(frame, before)  # nothing the user gave is modified
    assert result.columns == tuple(qis)  # only quasi-identifier cells can be suppressed
    assert result.suppressed.shape == (len(frame), len(qis))  # no record lost or invented
    assert result.suppressed.dtype == bool
    assert is_k_anonymous(codes_of(ds), result.suppressed, k, matching)
    assert result.lower_bound <= result.cells
    if matching == "any":
        # Only records of classes below k lose cells, never more than all of theirs.
        assert result.cells <= record_suppression_cells(ds, k)
    assert result.lower_bound == lower_bound(codes_of(ds), [ds.column(c).cardinality for c in qis], k, matching)


@settings(max_examples=25, **PROPERTY)
@given(small_tables(max_rows=8, max_columns=3), st.sampled_from(["any", "category"]))
def test_optimal_lies_between_the_bound_and_the_greedy(case, matching):
    frame, k = case
    ds = Dataset(frame, quasi_identifiers=[c for c in frame.columns if c != "other"])
    greedy = local_suppression(ds, k=k, matching=matching)
    exact = local_suppression(ds, k=k, matching=matching, method="optimal")
    assert exact.optimal
    assert is_k_anonymous(codes_of(ds), exact.suppressed, k, matching)
    assert greedy.lower_bound <= exact.cells <= greedy.cells
    assert exact.lower_bound == exact.cells
    if greedy.optimal:
        assert greedy.cells == exact.cells


@settings(max_examples=25, **PROPERTY)
@given(small_tables(max_rows=5, max_columns=2), st.sampled_from(["any", "category"]))
def test_optimal_against_every_suppression(case, matching):
    # Every set of suppressed cells, fewest first: the first k-anonymous one has the minimum count.
    frame, k = case
    ds = Dataset(frame, quasi_identifiers=[c for c in frame.columns if c != "other"])
    n, m = len(frame), len(ds.quasi_identifiers)
    exact = local_suppression(ds, k=k, matching=matching, method="optimal")
    masks = sorted(range(1 << (n * m)), key=lambda x: (x).bit_count())
    smallest = next((mask).bit_count() for mask in masks
                    if is_k_anonymous(codes_of(ds), ((mask >> np.arange(n * m)) & 1).astype(bool).reshape(n, m),
                                      k, matching))
    assert exact.cells == smallest


# ----------------------------------------------------------------------------------------------
# The risk threshold


def brute_risk(ds: Dataset, suppressed: np.ndarray, matching: str) -> np.ndarray:
    """Each record's Benedetti–Franconi risk, with f and F̂ summed over the records in its class
    pair by pair."""
    values = np.stack(codes_of(ds), axis=1)
    weights = ds.sampling_weights if ds.sampling_weights is not None else np.ones(len(values))
    n = len(values)
    f, F = np.zeros(n), np.zeros(n)
    for i in range(n):
        for j in range(n):
            if matching == "any":
                together = all(values[i, c] == values[j, c] or suppressed[i, c] or suppressed[j, c]
                               for c in range(values.shape[1]))
            else:
                together = all((suppressed[i, c] and suppressed[j, c])
                               or (not suppressed[i, c] and not suppressed[j, c] and values[i, c] == values[j, c])
                               for c in range(values.shape[1]))
            if together:
                f[i] += 1
                F[i] += weights[j]
    return benedetti_franconi(f.astype(np.int64), F)


WEIGHTED = pd.DataFrame({
    "sex": ["M", "M", "M", "F", "F", "F", "F", "F", "F", "F", "M", "M"],
    "age": ["young", "old", "old", "young", "young", "young", "old", "old", "old", "old", "middle", "middle"],
    "w": [10, 4, 6, 1, 1, 1, 2, 2, 2, 2, 1.5, 1.5],
})


def test_risk_threshold_by_hand():
    # Risks before (see test_sdc_risk): (M,young) 0.256, (M,old) 0.149, (F,young) 1/3,
    # (F,old) 0.140, (M,middle) 0.378; above 0.3: rows 3-5 and 10-11. Age (3 values) goes first.
    ds = Dataset(WEIGHTED, quasi_identifiers=["sex", "age"], weight="w")
    # "any": rows 3-5 without age match every F row (f = 7, F̂ = 11), rows 10-11 every M row
    # (f = 5, F̂ = 23): both well below 0.3, one cell each.
    result = local_suppression(ds, risk=0.3)
    assert suppressed_cells(result) == {3: ["age"], 4: ["age"], 5: ["age"], 10: ["age"], 11: ["age"]}
    assert (brute_risk(ds, result.suppressed, "any") <= 0.3).all()
    assert (result.risk, result.k, result.optimal, result.lower_bound) == (0.3, None, False, 0)
    # Every record is below 0.4 already: nothing to suppress, which is proven minimal.
    nothing = local_suppression(ds, risk=0.4)
    assert (nothing.cells, nothing.optimal) == (0, True)
    # "category": (F,*) alone is still 1/3 and (M,*) 0.378; then sex goes too: (*,*) holds the
    # five records (f = 5, F̂ = 6), risk 0.18.
    result = local_suppression(ds, risk=0.3, matching="category")
    assert suppressed_cells(result) == {i: ["sex", "age"] for i in (3, 4, 5, 10, 11)}
    assert brute_risk(ds, result.suppressed, "category").max() <= 0.3


def test_risk_without_weights_is_k_anonymity():
    # Without weights F̂ = f and the risk is 1/f: risk 1/3 is 3-anonymity, cell for cell.
    ds = Dataset(table(ROWS + [EXTRA]), quasi_identifiers=["sex", "age", "zip"])
    for matching in ("any", "category"):
        by_risk = local_suppression(ds, risk=1 / 3, matching=matching)
        by_k = local_suppression(ds, k=3, matching=matching)
        np.testing.assert_array_equal(by_risk.suppressed, by_k.suppressed)


@settings(max_examples=25, **PROPERTY)
@given(small_tables(max_rows=12, max_columns=3), st.sampled_from(["any", "category"]),
       st.sampled_from([0.2, 0.35, 0.6]), st.integers(0, 2**31))
def test_risk_threshold_holds(case, matching, risk, seed):
    frame, _ = case
    frame["w"] = np.random.default_rng(seed).uniform(1, 20, len(frame)).round(2)
    ds = Dataset(frame, quasi_identifiers=[c for c in frame.columns if c.startswith("q")], weight="w")
    try:
        result = local_suppression(ds, risk=risk, matching=matching)
    except InfeasibleError:
        # Refused only when even every cell suppressed leaves a record above the threshold.
        assert brute_risk(ds, np.ones((len(frame), len(ds.quasi_identifiers)), dtype=bool),
                          matching).max() > risk
        return
    assert brute_risk(ds, result.suppressed, matching).max() <= risk + 1e-12


def test_strata_keep_records_apart():
    # Two strata of the same keys: the risk of a record is counted within its stratum.
    frame = pd.DataFrame({"a": [0, 0, 1, 1, 0, 1], "b": [0, 1, 0, 1, 0, 0], "s": ["x", "x", "x", "x", "y", "y"]})
    ds = Dataset(frame, quasi_identifiers=["a", "b"], strata="s")
    result = local_suppression(ds, risk=0.5, matching="category")
    rows = np.stack(codes_of(ds), axis=1)
    for stratum in ("x", "y"):
        inside = (frame["s"] == stratum).to_numpy()
        keys = [tuple(np.where(result.suppressed[i], -1, rows[i])) for i in np.flatnonzero(inside)]
        assert min(keys.count(key) for key in keys) >= 2


# ----------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize("kwargs, error, words", [
    ({"k": 0}, ParameterError, "k must be a whole number from 1"),
    ({"k": 11}, ParameterError, "k must be a whole number from 1"),
    ({"k": 2.5}, ParameterError, "k must be a whole number from 1"),
    ({}, ParameterError, "exactly one of k"),
    ({"k": 2, "risk": 0.1}, ParameterError, "exactly one of k"),
    ({"risk": 0}, ParameterError, "risk threshold must be"),
    ({"risk": 1.5}, ParameterError, "risk threshold must be"),
    ({"k": 2, "matching": "exact"}, ParameterError, "unknown matching"),
    ({"k": 2, "method": "best"}, ParameterError, "unknown local suppression method"),
    ({"risk": 0.2, "method": "optimal"}, ParameterError, "optimal method solves k-anonymity only"),
    ({"k": 2, "importance": ["height"]}, ColumnError, "importance column 'height' does not exist"),
    ({"k": 2, "importance": ["note"]}, ColumnError, "'note' is not a quasi-identifier"),
    ({"k": 2, "importance": ["age", "age"]}, ColumnError, "listed twice"),
])
def test_bad_input(kwargs, error, words):
    with pytest.raises(error, match=words) as caught:
        local_suppression(dataset(), **kwargs)
    message = str(caught.value)
    assert message.endswith((".", "?")) and message.count(". ") == 0


def test_too_large_for_the_optimal_method():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({name: rng.integers(0, 9, 300) for name in "abcdef"})
    ds = Dataset(frame, quasi_identifiers=list(frame.columns))
    with pytest.raises(ParameterError, match="use method='greedy'"):
        local_suppression(ds, k=2, method="optimal")
    with pytest.raises(ParameterError, match="unknown matching"):
        is_k_anonymous(codes_of(ds), np.zeros((300, 6), dtype=bool), 2, "star")
    with pytest.raises(ParameterError, match="one row per record and one column per code array"):
        is_k_anonymous(codes_of(ds), np.zeros((300, 5), dtype=bool), 2, "any")
    with pytest.raises(ParameterError, match="k must be"):
        record_suppression_cells(ds, 0)
