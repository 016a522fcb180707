"""SUDA2: minimal sample uniques, SUDA and DIS-SUDA scores, checked by hand and against brute force."""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import veil.risk.suda as suda_module
from veil import ColumnError, Dataset, ParameterError
from veil.risk.suda import SudaScores, minimal_sample_uniques, msu_weights, suda, suda2

# Twelve records, four key columns (ATT = 4). Pairs: rows 0-1, 2-3, 6-7; uniques on all four
# columns: rows 4, 5, 8, 9, 10, 11.
TABLE = pd.DataFrame(
    [["M", "Y", "N", "a"],   # 0
     ["M", "Y", "N", "a"],   # 1
     ["F", "Y", "N", "a"],   # 2
     ["F", "Y", "N", "a"],   # 3
     ["M", "O", "N", "a"],   # 4
     ["M", "O", "S", "a"],   # 5
     ["F", "O", "S", "b"],   # 6
     ["F", "O", "S", "b"],   # 7
     ["M", "Y", "S", "b"],   # 8
     ["F", "Y", "E", "a"],   # 9
     ["M", "O", "S", "b"],   # 10
     ["F", "O", "N", "c"]],  # 11
    columns=["sex", "age", "region", "job"])
KEYS = ["sex", "age", "region", "job"]
SEX, AGE, REGION, JOB = range(4)

# Frequencies of the single values: sex M 6 / F 6; age Y 6 / O 6; region N 6, S 5, E 1 (row 9);
# job a 7, b 4, c 1 (row 11).
# Row 9  (F Y E a): {region} (E is alone). Without region: F·Y, F·a, Y·a, F·Y·a all hold rows 2, 3, 9.
# Row 11 (F O N c): {job} (c is alone); F·O·N holds row 11 only, while F·O = {6, 7, 11},
#        F·N = {2, 3, 11}, O·N = {4, 11}: {sex, age, region} is minimal.
# Row 4  (M O N a): no value or pair is unique (M·O = {4, 5, 10}, M·N = {0, 1, 4}, M·a = {0, 1, 4, 5},
#        O·N = {4, 11}, O·a = {4, 5}, N·a = {0..4}); M·O·N = {4} and O·N·a = {4}: two MSUs of size 3
#        (M·O·a = {4, 5}, M·N·a = {0, 1, 4} are not unique).
# Row 5  (M O S a): S·a = {5}: {region, job}; every other pair is shared (M·O, M·S = {5, 8, 10},
#        M·a, O·S = {5, 6, 7, 10}, O·a = {4, 5}); the triples without {region, job} are M·O·S = {5, 10}
#        and M·O·a = {4, 5}.
# Row 8  (M Y S b): Y·S = {8} and Y·b = {8}: {age, region}, {age, job}; M·Y = {0, 1, 8},
#        M·S = {5, 8, 10}, M·b = {8, 10}, S·b = {6, 7, 8, 10}, and M·S·b = {8, 10}.
# Row 10 (M O S b): every pair is shared (M·O, M·S, M·b = {8, 10}, O·S, O·b = {6, 7, 10},
#        S·b); M·O·b = {10}: {sex, age, job}; M·O·S = {5, 10}, M·S·b = {8, 10}, O·S·b = {6, 7, 10}.
HAND_MSUS = {
    (REGION,): [9], (JOB,): [11],
    (AGE, REGION): [8], (AGE, JOB): [8], (REGION, JOB): [5],
    (SEX, AGE, REGION): [4, 11], (SEX, AGE, JOB): [10], (AGE, REGION, JOB): [4],
}
#                          size 1  2  3  4
HAND_COUNTS = np.array([[0, 0, 0, 0]] * 4
                       + [[0, 0, 2, 0],   # row 4
                          [0, 1, 0, 0],   # row 5
                          [0, 0, 0, 0], [0, 0, 0, 0],
                          [0, 2, 0, 0],   # row 8
                          [1, 0, 0, 0],   # row 9
                          [0, 0, 1, 0],   # row 10
                          [1, 0, 1, 0]])  # row 11
# Weights with ATT = 4 and every size searched: (4 - k)!, so 6, 2, 1, 1 for k = 1..4.
# Row 4: 1 + 1 = 2; row 5: 2; row 8: 2 + 2 = 4; row 9: 6; row 10: 1; row 11: 6 + 1 = 7.
HAND_SCORES = np.array([0, 0, 0, 0, 2, 2, 0, 0, 4, 6, 1, 7], dtype=float)


def codes_of(table: pd.DataFrame, columns=None) -> list[np.ndarray]:
    return [pd.factorize(table[c])[0] for c in (columns or table.columns)]


def brute_force(codes, max_size, counts=None) -> dict[tuple[int, ...], list[int]]:
    """Every column subset, every record: unique on it and on none of its proper subsets."""
    n, width = len(codes[0]), len(codes)
    counts = np.ones(n, dtype=int) if counts is None else counts
    unique = {}
    for size in range(1, width + 1):
        for subset in combinations(range(width), size):
            keys = [tuple(int(codes[j][i]) for j in subset) for i in range(n)]
            held = Counter()
            for i, key in enumerate(keys):
                held[key] += int(counts[i])
            unique[subset] = {i for i, key in enumerate(keys) if held[key] == 1}
    found = {}
    for size in range(1, max_size + 1):
        for subset in combinations(range(width), size):
            rows = [i for i in sorted(unique[subset])
                    if not any(i in unique[smaller] for t in range(1, size) for smaller in combinations(subset, t))]
            if rows:
                found[subset] = rows
    return found


def as_lists(msus) -> dict[tuple[int, ...], list[int]]:
    return {subset: rows.tolist() for subset, rows in msus.items()}


def test_minimal_sample_uniques_by_hand():
    assert as_lists(minimal_sample_uniques(codes_of(TABLE))) == HAND_MSUS
    assert brute_force(codes_of(TABLE), 4) == HAND_MSUS


def test_suda_scores_by_hand():
    result = suda(Dataset(TABLE, quasi_identifiers=KEYS))
    assert isinstance(result, SudaScores)
    assert result.columns == tuple(KEYS) and result.max_size == 4 and result.dis == 0.1
    assert result.msu_counts.dtype == np.int64 and result.msu_counts.shape == (12, 4)
    np.testing.assert_array_equal(result.msu_counts, HAND_COUNTS)
    np.testing.assert_array_equal(msu_weights(4, 4), [6, 2, 1, 1])
    np.testing.assert_array_equal(result.score, HAND_SCORES)
    assert result.records_with_msu == 6 and result.msus.tolist() == HAND_COUNTS.sum(axis=1).tolist()


def test_dis_suda_by_hand():
    # U = 6 records unique on all four columns (4, 5, 8, 9, 10, 11); P = 6 records in pairs.
    # π = 0.1: DIS = Uπ / (Uπ + P(1 - π)) = 0.6 / (0.6 + 5.4) = 0.1, and U/DIS - U = 60 - 6 = 54.
    # Q = 1 + (8 - 4)/20 = 1.2; s^Q for s = 1, 2, 4, 6, 7: 1, 2.297397, 5.278032, 8.585814, 10.330412.
    # A = Σ s^-Q over the six scored records = 1 + 2 × 0.435275 + 0.189465 + 0.116471 + 0.096802
    #   = 2.273288.
    # DIS-SUDA = 1 / (1 + 54 / (s^Q · A)):
    #   s = 1: 1 / (1 + 54 / 2.273288)  = 1 / 24.754141 = 0.040397
    #   s = 2: 1 / (1 + 54 / 5.222644)  = 1 / 11.339590 = 0.088187
    #   s = 4: 1 / (1 + 54 / 11.998485) = 1 / 5.500568  = 0.181799
    #   s = 6: 1 / (1 + 54 / 19.518028) = 1 / 3.766673  = 0.265486
    #   s = 7: 1 / (1 + 54 / 23.484001) = 1 / 3.299438  = 0.303082
    result = suda(Dataset(TABLE, quasi_identifiers=KEYS), dis=0.1)
    assert result.sample_uniques == 6
    assert result.dis_probability == pytest.approx(0.1)
    expected = np.array([0, 0, 0, 0, 0.088187, 0.088187, 0, 0, 0.181799, 0.265486, 0.040397, 0.303082])
    np.testing.assert_allclose(result.dis_score, expected, rtol=2e-5, atol=1e-12)
    # π = 0.5: DIS = 3 / (3 + 3) = 0.5, U/DIS - U = 6, so s = 7 gets 1 / (1 + 6 / 23.484001) = 0.796500.
    half = suda(Dataset(TABLE, quasi_identifiers=KEYS), dis=0.5)
    assert half.dis_probability == pytest.approx(0.5)
    assert half.dis_score[11] == pytest.approx(0.796500, rel=2e-5)
    # π = 1: the table is the population, every unique match is right.
    whole = suda(Dataset(TABLE, quasi_identifiers=KEYS), dis=1)
    assert whole.dis_probability == 1.0
    np.testing.assert_array_equal(whole.dis_score, (HAND_SCORES > 0).astype(float))


def test_column_contributions_by_hand():
    # Rows (2, 0, 0), (1, 3, 6), (1, 0, 0) on columns a, b, c (ATT = 3, weights 2!, 1!, 0!):
    # row 0: {a} → score 2, all from a; row 1: {b}, {c} → score 4, b 2 and c 2;
    # row 2: {a, b}, {a, c} → score 2, a in both (2), b and c in one each (1).
    # Total 8; a: 2 + 2 = 4 (50 %), b: 2 + 1 = 3 (37.5 %), c: 2 + 1 = 3 (37.5 %), as sdcMicro's
    # own test of this table has it.
    result = suda2([np.array([2, 1, 1]), np.array([0, 3, 0]), np.array([0, 6, 0])], names=["a", "b", "c"])
    np.testing.assert_array_equal(result.score, [2, 4, 2])
    np.testing.assert_allclose(result.contributions, [[1, 0, 0], [0, 0.5, 0.5], [1, 0.5, 0.5]])
    assert result.column_contributions() == {"a": 50.0, "b": 37.5, "c": 37.5}
    # Row 11 of the 12-row table: {job} (6) and {sex, age, region} (1) of 7.
    table = suda(Dataset(TABLE, quasi_identifiers=KEYS))
    np.testing.assert_allclose(table.contributions[11], [1 / 7, 1 / 7, 1 / 7, 6 / 7])
    assert not table.contributions[:4].any()


def test_max_size_limits_the_search_by_hand():
    # Sizes 1 and 2 only: rows 9 and 11 keep {region} and {job}, rows 5 and 8 their pairs; rows 4
    # and 10 (MSUs of size 3 only) have none, and row 11 loses {sex, age, region}.
    result = suda2(codes_of(TABLE), max_size=2, names=KEYS)
    np.testing.assert_array_equal(result.msu_counts, HAND_COUNTS[:, :2])
    # The weights stay (4 - k)!: 6 for size 1, 2 for size 2 (row 8: 2 + 2; row 11: 6 without the 1).
    np.testing.assert_array_equal(msu_weights(4, 2), [6, 2])
    np.testing.assert_array_equal(result.score, [0, 0, 0, 0, 0, 2, 0, 0, 4, 6, 0, 6])
    assert as_lists(minimal_sample_uniques(codes_of(TABLE), 2)) == {
        subset: rows for subset, rows in HAND_MSUS.items() if len(subset) <= 2}


def test_counts_stand_for_repeated_rows():
    # Rows 0, 2 and 6 standing for two records each are the table with rows 1, 3 and 7 removed.
    keep = [0, 2, 4, 5, 6, 8, 9, 10, 11]
    counts = np.array([2, 2, 1, 1, 2, 1, 1, 1, 1])
    result = suda2([c[keep] for c in codes_of(TABLE)], counts=counts)
    np.testing.assert_array_equal(result.msu_counts, HAND_COUNTS[keep])
    np.testing.assert_allclose(result.dis_score, suda2(codes_of(TABLE)).dis_score[keep])


def test_missing_values_are_a_category_of_their_own():
    table = pd.DataFrame({"a": ["x", "x", None, None, "y", "y"], "b": ["1", "2", "1", "1", "1", "2"]})
    result = suda(Dataset(table, quasi_identifiers=["a", "b"]))
    # (missing, 1) twice: rows 2 and 3 agree on their missing value, so neither is unique.
    # b = 2 is shared by rows 1 and 5, a = x by 0 and 1: row 0 (x, 1) and row 1 (x, 2) are
    # unique as pairs only; row 4 (y, 1) and row 5 (y, 2) as well.
    np.testing.assert_array_equal(result.msu_counts, [[0, 1], [0, 1], [0, 0], [0, 0], [0, 1], [0, 1]])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_msus_equal_brute_force(data):
    width = data.draw(st.integers(1, 5), label="columns")
    n = data.draw(st.integers(0, 14), label="rows")
    radix = data.draw(st.integers(1, 4), label="radix")
    codes = [np.array(data.draw(st.lists(st.integers(0, radix - 1), min_size=n, max_size=n)), dtype=np.int64)
             for _ in range(width)]
    max_size = data.draw(st.integers(1, width), label="max_size")
    counts = None
    if data.draw(st.booleans(), label="counts"):
        counts = np.array(data.draw(st.lists(st.integers(1, 3), min_size=n, max_size=n)), dtype=np.int64)
    # Sets of tuples kept as indices as soon as they are not all (1), past 1 in 32, or never.
    sparse = data.draw(st.sampled_from([1, 32, 10**9]), label="sparse")
    expected = brute_force(codes, max_size, counts)
    with mock.patch.object(suda_module, "_SPARSE", sparse):
        assert as_lists(minimal_sample_uniques(codes, max_size, counts=counts)) == expected
        result = suda2(codes, max_size, counts=counts)
    per_row = np.zeros((n, max_size), dtype=np.int64)
    holding = np.zeros((n, width))
    for subset, rows in expected.items():
        per_row[rows, len(subset) - 1] += 1
        holding[np.ix_(rows, subset)] += msu_weights(width, max_size)[len(subset) - 1]
    np.testing.assert_array_equal(result.msu_counts, per_row)
    np.testing.assert_allclose(result.score, per_row @ msu_weights(width, max_size))
    np.testing.assert_allclose(result.contributions * result.score[:, None], holding)
    # A record with an MSU is unique on every column; scores are in [0, 1] and 0 without an MSU.
    assert np.all((result.dis_score > 0) == (result.score > 0))
    assert np.all((0 <= result.dis_score) & (result.dis_score <= 1))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_row_order_does_not_matter(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    codes = [rng.integers(0, int(rng.integers(1, 6)), n) for _ in range(4)]
    order = rng.permutation(n)
    plain = suda2(codes, dis=0.2)
    shuffled = suda2([c[order] for c in codes], dis=0.2)
    np.testing.assert_array_equal(shuffled.msu_counts, plain.msu_counts[order])
    np.testing.assert_allclose(shuffled.score, plain.score[order])
    np.testing.assert_allclose(shuffled.dis_score, plain.dis_score[order], rtol=1e-12)


def test_large_or_negative_codes_are_values():
    codes = codes_of(TABLE)
    moved = [c * 10**12 - 5 for c in codes]
    np.testing.assert_array_equal(suda2(moved).msu_counts, HAND_COUNTS)


def test_an_empty_table_has_no_msu():
    result = suda2([np.zeros(0, dtype=np.int64)] * 3)
    assert result.msu_counts.shape == (0, 3) and result.score.shape == (0,) and result.dis_score.shape == (0,)
    assert result.dis_probability == 0.0 and minimal_sample_uniques([np.zeros(0, dtype=np.int64)]) == {}


def test_a_table_without_uniques_scores_zero():
    codes = [np.array([0, 0, 1, 1]), np.array([2, 2, 3, 3])]
    result = suda2(codes)
    assert not result.msu_counts.any() and not result.score.any() and not result.dis_score.any()
    assert result.sample_uniques == 0 and result.dis_probability == 0.0
    assert result.column_contributions() == {"0": 0.0, "1": 0.0}


@pytest.mark.parametrize("kwargs, words", [
    ({"max_size": 0}, "max_size"), ({"max_size": 5}, "max_size"), ({"max_size": 2.0}, "max_size"),
    ({"max_size": True}, "max_size"),
    ({"dis": 0}, "dis"), ({"dis": -0.1}, "dis"), ({"dis": 1.5}, "dis"), ({"dis": float("nan")}, "dis"),
    ({"dis": "0.1"}, "dis"), ({"names": ["a"]}, "name"), ({"counts": np.zeros(12)}, "counts"),
    ({"counts": np.full(12, 1.5)}, "counts"), ({"counts": np.ones(3)}, "counts"),
])
def test_bad_parameters_are_refused_in_one_sentence(kwargs, words):
    with pytest.raises(ParameterError) as caught:
        suda2(codes_of(TABLE), **kwargs)
    message = str(caught.value)
    assert words in message and message.endswith(".") and message.count(". ") == 0


@pytest.mark.parametrize("codes", [[], [np.array([0, 1]), np.array([0])], [np.array([0.5, 1.0])],
                                   [np.zeros((2, 2), dtype=int)]])
def test_bad_key_columns_are_refused(codes):
    with pytest.raises(ParameterError):
        suda2(codes)


def test_suda_on_a_dataset_checks_its_columns():
    dataset = Dataset(TABLE, quasi_identifiers=KEYS)
    with pytest.raises(ColumnError):
        suda(dataset, ["sex", "agee"])
    with pytest.raises(ParameterError, match="twice"):
        suda(dataset, ["sex", "sex"])
    assert suda(dataset, ["region"]).msu_counts[:, 0].tolist() == [0] * 9 + [1, 0, 0]


def test_wide_key_spaces_against_brute_force():
    # Codes up to 60,000 in five columns of 4,000 rows are used as they are (below 16 per row),
    # so the key spaces are too wide for direct addressing and, on four or five columns, for one
    # int64: the hashed and the compacted groupings are the ones at work.
    rng = np.random.default_rng(7)
    n = 4000
    codes = []
    for _ in range(5):
        column = rng.integers(0, 3, n)
        rare = rng.random(n) < 0.01
        column[rare] = rng.integers(3, 60_000, int(rare.sum()))
        column[rng.integers(n)] = 59_999
        codes.append(column)
    assert 60_000**4 > 2**62
    expected = brute_force(codes, 5)
    assert as_lists(minimal_sample_uniques(codes)) == expected
    assert sum(len(rows) for rows in expected.values()) > 50


def test_many_columns_keep_the_scores_finite():
    # 60 columns: weights up to 59! ≈ 1.4e80 and Q = 1 + (8 - 60)/20 = -1.6, so s^Q underflows
    # in plain floats; rows 0 and 1 are a pair, so U/DIS - U > 0.
    rng = np.random.default_rng(3)
    codes = [rng.integers(0, 3, 30) for _ in range(60)]
    for column in codes:
        column[1] = column[0]
    result = suda2(codes, max_size=2)
    scored = result.score > 0
    assert scored.sum() == 28 and np.all(np.isfinite(result.score))
    assert np.all(np.isfinite(result.dis_score)) and np.all(result.dis_score[scored] > 0)
    assert np.all(result.dis_score <= 1) and not result.dis_score[~scored].any()
    with pytest.raises(ParameterError, match="170"):
        suda2([np.arange(3)] * 171, max_size=1)


def test_a_prefix_key_too_wide_for_one_more_column_is_compacted():
    # A prefix key space of 2^41 extended by a column of 2^30 codes would pass 2^62.
    key, span = suda_module._extend((np.array([0, 5, 5, 2**40]), 2**41), np.array([1, 2, 2, 3]), 2**30)
    assert span == 3 and key[1] == key[2] and len({key[0], key[1], key[3]}) == 3
