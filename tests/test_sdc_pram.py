"""PRAM (veil.sdc.pram): hand-computed examples, the estimator's unbiasedness over seeded runs, the
invariance of invariant PRAM, the exactness of the draws, several columns and strata, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.errors import ColumnError, ParameterError
from veil.sdc import pram as pram_module
from veil.sdc.pram import (
    disclosure_summary,
    grid_matrix,
    invariant_matrix,
    pram,
    pram_columns,
    pram_covariance,
    pram_disclosure,
)
from veil.sdc.pram_utility import pram_utility

# ---- hand-computed examples ----------------------------------------------------------------------

# Invariant PRAM on counts (3, 1), alpha = 0.5, worked out on paper:
#   p = (3/4, 1/4); base P = 0.5·I + 0.25·J = [[.75, .25], [.25, .75]]
#   s = p·P = (.75·.75 + .25·.25, .75·.25 + .25·.75) = (.625, .375)
#   Bayes inverse P~[k, j] = p_j P[j, k] / s_k:  row 0: (.5625/.625, .0625/.625) = (.9, .1)
#                                               row 1: (.1875/.375, .1875/.375) = (.5, .5)
#   R = P·P~: row 0 = .75·(.9, .1) + .25·(.5, .5) = (.8, .2)
#             row 1 = .25·(.9, .1) + .75·(.5, .5) = (.6, .4)
#   p·R = (.6 + .15, .15 + .1) = (.75, .25) = p
#   posterior P(orig = a | rel = b) = p_a R_ab / p_b: (0|0) = .6/.75 = .8, (1|0) = .15/.75 = .2,
#                                                     (0|1) = .15/.25 = .6, (1|1) = .1/.25 = .4
#   kept = .75·.8 + .25·.4 = .7; largest posterior .8
INVARIANT = np.array([[0.8, 0.2], [0.6, 0.4]])


def test_the_invariant_matrix_of_a_two_category_column_is_the_one_worked_out_on_paper():
    R = invariant_matrix([3, 1], 0.5)
    np.testing.assert_allclose(R, INVARIANT, atol=1e-15)
    np.testing.assert_allclose(np.array([0.75, 0.25]) @ R, [0.75, 0.25], atol=1e-15)


def test_the_disclosure_of_the_two_category_example_is_the_one_worked_out_on_paper():
    summary = disclosure_summary([3, 1], INVARIANT)
    np.testing.assert_allclose(summary.posterior, [[0.8, 0.6], [0.2, 0.4]], atol=1e-15)
    np.testing.assert_allclose(summary.true_released, [0.8, 0.4], atol=1e-15)
    assert summary.kept == pytest.approx(0.7, abs=1e-15)
    assert summary.largest == pytest.approx(0.8, abs=1e-15)


# A given 3-category matrix P = 0.7·I + 0.1·J, so P⁻¹ = (I − 0.1·J) / 0.7 (P·P⁻¹ = (0.7 I + 0.1 J −
# 0.07 J − 0.03 J)/0.7 = I, as J² = 3 J). Released counts T* = (4, 4, 2), n = 10:
#   T̂ = (Pᵀ)⁻¹ T* = (T* − 0.1·10) / 0.7 = (3, 3, 1) / 0.7 = (30/7, 30/7, 10/7).
# Frequencies p = (.5, .3, .2): column sums of p_a P_ab are
#   b=0: .4 + .03 + .02 = .45; b=1: .05 + .24 + .02 = .31; b=2: .05 + .03 + .16 = .24
#   true-released posteriors: .4/.45 = 8/9, .24/.31 = 24/31, .16/.24 = 2/3; kept = .8.
GIVEN = {"a": {"a": 0.8, "b": 0.1, "c": 0.1}, "b": {"a": 0.1, "b": 0.8, "c": 0.1},
         "c": {"a": 0.1, "b": 0.1, "c": 0.8}}
P3 = np.full((3, 3), 0.1) + 0.7 * np.eye(3)


def test_the_estimator_of_the_three_category_example_is_the_one_worked_out_on_paper():
    frame = pd.DataFrame({"x": list("aaaaabbbcc")})
    result = pram(frame, "x", matrix=GIVEN, rng=0)
    assert result.categories == ("a", "b", "c")
    np.testing.assert_allclose(result.matrix, P3, atol=2**-52)
    np.testing.assert_allclose(result.estimate([4, 4, 2]), [30 / 7, 30 / 7, 10 / 7], rtol=1e-12)
    summary = disclosure_summary([5, 3, 2], P3)
    np.testing.assert_allclose(summary.true_released, [8 / 9, 24 / 31, 2 / 3], rtol=1e-12)
    np.testing.assert_allclose(summary.posterior[:, 0], [0.4 / 0.45, 0.03 / 0.45, 0.02 / 0.45], rtol=1e-12)
    assert summary.kept == pytest.approx(0.8)
    assert summary.largest == pytest.approx(8 / 9)


def test_the_covariance_of_the_estimator_is_the_one_worked_out_on_paper():
    # P = [[.9, .1], [.2, .8]], T = (6, 4): Cov(T*) = 6·.09·vvᵀ + 4·.16·vvᵀ = 1.18·vvᵀ, v = (1, −1);
    # (Pᵀ)⁻¹ = [[.8, −.2], [−.1, .9]] / .7 sends v to v/.7, so Cov(T̂) = 1.18/.49 · vvᵀ.
    cov = pram_covariance([6, 4], [[0.9, 0.1], [0.2, 0.8]])
    np.testing.assert_allclose(cov, 1.18 / 0.49 * np.array([[1, -1], [-1, 1]]), rtol=1e-12)


# ---- unbiasedness and invariance over seeded runs -------------------------------------------------

COUNTS = np.array([120, 50, 30])
COLUMN = pa.table({"x": np.repeat(np.array(["a", "b", "c"]), COUNTS)})
RUNS = 300


def _runs(**kwargs):
    generator = np.random.default_rng(20261129)   # one deterministic stream: the test cannot flake
    return [pram(COLUMN, "x", rng=generator, **kwargs) for _ in range(RUNS)]


def _within_four_standard_errors(mean, truth, covariance):
    standard_error = np.sqrt(np.diag(covariance) / RUNS)
    assert (np.abs(mean - truth) <= 4 * standard_error).all(), (mean, truth, standard_error)


def test_the_estimator_is_unbiased_over_many_seeded_runs():
    matrix = {"a": {"a": 0.7, "b": 0.2, "c": 0.1}, "b": {"a": 0.3, "b": 0.6, "c": 0.1},
              "c": {"a": 0.2, "b": 0.2, "c": 0.6}}
    runs = _runs(matrix=matrix)
    estimates = np.array([r.estimate() for r in runs])
    _within_four_standard_errors(estimates.mean(axis=0), COUNTS, runs[0].covariance())
    # and the released counts themselves are biased here, far beyond the same tolerance
    released = np.array([r.released_counts for r in runs]).mean(axis=0)
    assert np.abs(released - COUNTS).max() > 10


def test_invariant_pram_keeps_the_frequencies_in_expectation_and_its_estimator_is_unbiased():
    runs = _runs(alpha=0.6)
    R = runs[0].matrix
    np.testing.assert_allclose(COUNTS @ R, COUNTS, rtol=1e-12)   # E[T*] = Rᵀ T = T, exactly
    released = np.array([r.released_counts for r in runs]).mean(axis=0)
    released_cov = np.diag(COUNTS @ R) - R.T @ (COUNTS[:, None] * R)
    _within_four_standard_errors(released, COUNTS, released_cov)
    estimates = np.array([r.estimate() for r in runs]).mean(axis=0)
    _within_four_standard_errors(estimates, COUNTS, runs[0].covariance())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=6).filter(lambda f: sum(f) > 0),
       st.floats(0, 1))
def test_an_invariant_matrix_is_stochastic_invariant_and_reversible(frequencies, alpha):
    R = invariant_matrix(frequencies, alpha)
    p = np.array(frequencies) / sum(frequencies)
    assert (R >= 0).all()
    np.testing.assert_allclose(R.sum(axis=1), 1, atol=1e-12)
    np.testing.assert_allclose(p @ R, p, atol=1e-12)
    np.testing.assert_allclose(p[:, None] * R, (p[:, None] * R).T, atol=1e-12)
    assert (R[p > 0][:, p == 0] == 0).all()   # a category nobody holds is never released


def test_invariant_pram_within_strata_keeps_each_strata_frequencies():
    frame = pd.DataFrame({"x": list("aaabbbbccd" * 3), "region": ["n"] * 10 + ["s"] * 20})
    result = pram(frame, "x", alpha=0.5, by="region", rng=1)
    assert result.stratum_labels == ("n", "s")
    for s, label in enumerate(result.stratum_labels):
        counts = np.bincount(result.original[result.strata == s], minlength=4)
        np.testing.assert_allclose(counts @ result.matrices[s], counts, atol=1e-9)
    np.testing.assert_allclose(result.original_counts @ result.matrix, result.original_counts, atol=1e-9)


# ---- the draws --------------------------------------------------------------------------------

def test_a_draw_takes_the_category_whose_stretch_of_the_grid_holds_the_uniform_integer(monkeypatch):
    # Row of 'a' = (1/4, 3/4): u in [0, 2^51) gives 'a', u in [2^51, 2^53) gives 'b'; row of 'b' = (0, 1).
    draws = np.array([0, 2**51 - 1, 2**51, 2**53 - 1, 0, 2**53 - 1], dtype=np.uint64)
    monkeypatch.setattr(pram_module, "_uniform_grid", lambda generator, size: draws[:size])
    frame = pd.DataFrame({"x": ["a", "a", "a", "a", "b", "b"]})
    result = pram(frame, "x", matrix={"a": {"a": 0.25, "b": 0.75}, "b": {"b": 1.0}})
    assert result.released.tolist() == [0, 0, 1, 1, 1, 1]
    assert result.fit_for_release


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 9), min_size=3, max_size=3).filter(any), min_size=3, max_size=3))
def test_the_grid_matrix_sums_to_one_exactly_keeps_zeros_and_stays_within_two_units(weights):
    matrix = np.array(weights, dtype=float)
    matrix /= matrix.sum(axis=1, keepdims=True)
    units = pram_module._grid_units(matrix)
    assert (units.sum(axis=1, dtype=object) == 2**53).all()
    assert ((units == 0) == (matrix == 0)).all()
    assert np.abs(grid_matrix(matrix) - matrix).max() <= 2 * 2**-53


def test_secure_draws_are_the_default_and_a_seed_marks_the_result_not_fit_for_release():
    frame = pd.DataFrame({"x": list("aabbbc")})
    secure = pram(frame, "x", alpha=0.5)
    seeded = pram(frame, "x", alpha=0.5, rng=7)
    assert secure.fit_for_release and not seeded.fit_for_release
    assert set(secure.released.tolist()) <= {0, 1, 2}
    assert np.array_equal(seeded.released, pram(frame, "x", alpha=0.5, rng=7).released)
    described = str(seeded.public_description())
    assert "seed" not in described and "rng" not in described


def test_a_zero_transition_is_never_drawn_and_no_record_is_lost_or_invented():
    frame = pd.DataFrame({"x": list("abc" * 100)})
    matrix = {"a": {"a": 0.5, "b": 0.5}, "b": {"b": 0.5, "c": 0.5}, "c": {"c": 1.0}}
    result = pram(frame, "x", matrix=matrix, rng=3)
    assert len(result.released) == 300
    pairs = set(zip(result.original.tolist(), result.released.tolist()))
    assert pairs <= {(0, 0), (0, 1), (1, 1), (1, 2), (2, 2)}


# ---- tables, several columns, missing values --------------------------------------------------

FRAME = pd.DataFrame({"sex": ["M", "F", "M", None, "F", "M"], "age": [20, 30, 20, 40, None, 30],
                      "region": list("nnnsss"), "id": range(6)})


@pytest.mark.parametrize("kind", ["pandas", "polars", "arrow"])
def test_several_columns_are_perturbed_and_the_table_comes_back_as_given(kind):
    data = {"pandas": FRAME, "polars": pl.from_pandas(FRAME), "arrow": pa.Table.from_pandas(FRAME)}[kind]
    before = FRAME.copy()
    release = pram_columns(data, ["sex", "age"], matrices={"sex": {"F": {"F": 0.5, "M": 0.5}, "M": {"M": 1}}},
                           alpha=0.5, rng=11)
    out = release.data
    assert type(out).__module__.split(".")[0] == type(data).__module__.split(".")[0]
    out = out if kind == "pandas" else (out.to_pandas() if kind == "polars" else out.to_pandas())
    assert list(out.columns) == list(FRAME.columns) and len(out) == len(FRAME)
    pd.testing.assert_frame_equal(FRAME, before)                     # the input is untouched
    assert out["id"].tolist() == list(range(6)) and out["region"].tolist() == list("nnnsss")
    assert out["sex"].isna().tolist() == FRAME["sex"].isna().tolist()   # missing cells stay missing
    assert out["age"].isna().tolist() == FRAME["age"].isna().tolist()
    assert set(out["sex"].dropna()) <= {"M", "F"} and set(out["age"].dropna()) <= {20, 30, 40}
    # the given matrix sends every M to M
    assert (out["sex"][FRAME["sex"] == "M"] == "M").all()
    assert release.results["sex"].kind == "given" and release.results["age"].kind == "invariant"
    assert not release.fit_for_release


def test_missing_values_can_be_perturbed_as_a_category():
    result = pram(FRAME, "sex", matrix={"F": {"F": 1.0}, "M": {"M": 1.0}, None: {"F": 0.5, "M": 0.5}},
                  missing="category", rng=0)
    assert result.categories == ("F", "M", "")
    assert result.released[3] in (0, 1)


def test_a_numeric_column_takes_its_categories_as_numbers_or_their_text():
    result = pram(FRAME, "age", matrix={20: {20: 1.0}, 30: {"30": 0.5, 40: 0.5}, 40.0: {40: 1}}, rng=0)
    assert result.categories == ("20", "30", "40")
    small = pram(pd.DataFrame({"n": [9, 10, 10]}), "n", matrix={9: {9: 1}, 10: {9: 0.25, 10: 0.75}}, rng=0)
    assert small.categories == ("9", "10")                       # numeric order
    assert small.public_description()["matrix"] == [[0.75, 0.25], [0, 1]]   # sorted as text: "10", "9"


def test_the_public_description_withholds_an_invariant_matrix_and_every_count():
    invariant = pram(FRAME, "sex", alpha=0.4, rng=0)
    public = invariant.public_description()
    assert public["kind"] == "invariant" and public["alpha"] == 0.4 and "withheld" in public["matrix"]
    assert "original_counts" not in public
    private = invariant.private_description()
    assert private["original_counts"] == {"F": 2, "M": 3}
    assert private["matrix"]["F"]["F"] == pytest.approx(invariant.matrix[0, 0], rel=1e-14)
    given = pram(FRAME, "sex", matrix={"F": {"F": 0.9, "M": 0.1}, "M": {"F": 0.3, "M": 0.7}}, rng=0)
    public = given.public_description()
    assert public["matrix"] == [[0.9, 0.1], [0.3, 0.7]]   # the probabilities, not the private column's values
    assert "'F'" not in str(public) and "'M'" not in str(public)


def test_the_utility_reports_the_frequencies_and_the_estimator_error():
    result = pram(COLUMN, "x", matrix=GIVEN, rng=5)
    utility = pram_utility(result)
    assert utility.original.tolist() == COUNTS.tolist()
    assert utility.released.sum() == COUNTS.sum()
    np.testing.assert_allclose(utility.estimated, result.estimate())
    np.testing.assert_allclose(utility.standard_error, np.sqrt(np.diag(result.covariance())))
    assert utility.expected_changed == pytest.approx(0.2)
    assert utility.changed == np.mean(result.released != result.original)
    assert utility.released_distance == np.abs(utility.released - COUNTS).sum() / 400
    assert [row["category"] for row in utility.rows()] == ["a", "b", "c"]
    singular = pram_utility(pram(COLUMN, "x", alpha=1.0, rng=5))   # every row is p: rank 1
    assert singular.estimated is None and singular.estimate_distance is None


# ---- bad input --------------------------------------------------------------------------------

def _refused(match, **kwargs):
    with pytest.raises(ParameterError, match=match) as info:
        pram(FRAME, "sex", rng=0, **kwargs)
    message = str(info.value)
    assert message.endswith(".") and "\n" not in message
    return message


def test_a_matrix_that_is_not_stochastic_is_refused():
    _refused("not stochastic: the row of 'M' sums to 0.9", matrix={"F": {"F": 1}, "M": {"F": 0.5, "M": 0.4}})


def test_a_negative_entry_is_refused():
    _refused("negative probability", matrix={"F": {"F": 1.2, "M": -0.2}, "M": {"M": 1}})


def test_an_unknown_category_and_a_missing_row_are_refused():
    _refused("names 'X', which is not a category", matrix={"F": {"F": 1}, "M": {"M": 1}, "X": {"X": 1}})
    _refused("names 'X'", matrix={"F": {"F": 0.5, "X": 0.5}, "M": {"M": 1}})
    _refused("no row for the column's category 'M'", matrix={"F": {"F": 1}})
    _refused("missing='category'", matrix={"F": {"F": 1}, "M": {"M": 1}, None: {"F": 1}})


def test_a_matrix_of_another_shape_or_kind_is_refused():
    _refused("has 3 rows but 2 categories", matrix=(["F", "M"], np.eye(3)))
    _refused("must be square", matrix=(["F", "M"], [[1, 0]]))
    _refused("must be a mapping", matrix=np.eye(2))
    _refused("not a number", matrix={"F": {"F": "1"}, "M": {"M": 1}})


def test_a_singular_matrix_is_refused_by_the_estimator():
    result = pram(FRAME, "sex", matrix={"F": {"F": 0.5, "M": 0.5}, "M": {"F": 0.5, "M": 0.5}}, rng=0)
    with pytest.raises(ParameterError, match="singular"):
        result.estimate()
    with pytest.raises(ParameterError, match="singular"):
        pram_covariance([1, 1], [[0.5, 0.5], [0.5, 0.5]])


def test_bad_parameters_are_refused_in_one_sentence():
    _refused("either a transition matrix or alpha", alpha=0.5, matrix=GIVEN)
    _refused("either a transition matrix or alpha")
    _refused("from 0 to 1", alpha=1.5)
    _refused("from 0 to 1", alpha=True)
    _refused("'unchanged' or 'category'", alpha=0.5, missing="drop")
    with pytest.raises(ParameterError, match="rng must be"):
        pram(FRAME, "sex", alpha=0.5, rng="secure")
    with pytest.raises(ColumnError, match="'sx' does not exist"):
        pram(FRAME, "sx", alpha=0.5)
    with pytest.raises(ParameterError, match="listed twice"):
        pram_columns(FRAME, ["sex", "sex"], alpha=0.5)
    with pytest.raises(ParameterError, match="not among the columns"):
        pram_columns(FRAME, ["sex"], matrices={"age": {}}, alpha=0.5)
    with pytest.raises(ParameterError, match="one per category"):
        pram_disclosure([1, 2, 3], [[1, 0], [0, 1]])
    with pytest.raises(ParameterError, match="every cell is missing"):
        pram(pd.DataFrame({"x": [None, None]}), "x", alpha=0.5)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", None]), st.sampled_from([1, 2, None]),
                          st.sampled_from(["n", "s"])), min_size=1, max_size=25),
       st.floats(0, 1), st.integers(0, 2**32))
def test_no_record_is_lost_or_invented_and_only_the_perturbed_columns_change(rows, alpha, seed):
    frame = pd.DataFrame(rows, columns=["x", "y", "g"])
    frame["id"] = range(len(frame))
    present = [c for c in ("x", "y") if frame[c].notna().any()]
    if not present:
        return
    release = pram_columns(frame, present, alpha=alpha, by="g", rng=seed)
    out = release.data
    assert len(out) == len(frame) and list(out.columns) == list(frame.columns)
    assert out["id"].tolist() == frame["id"].tolist() and out["g"].tolist() == frame["g"].tolist()
    for name in present:
        assert out[name].isna().tolist() == frame[name].isna().tolist()
        assert set(out[name].dropna()) <= set(frame[name].dropna())
        result = release.results[name]
        # invariant PRAM within strata never releases a category its stratum does not hold
        for s in range(len(result.stratum_labels)):
            held = set(result.original[(result.strata == s) & (result.original >= 0)].tolist())
            drawn = set(result.released[(result.strata == s) & (result.released >= 0)].tolist())
            assert drawn <= held
