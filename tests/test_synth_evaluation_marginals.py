"""Marginal fidelity of veil.synth.evaluation: total variation distance and SDNist's score."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from synth_evaluation_data import NAMES, SIZES, chain

from veil.synth.evaluation.keys import joint_keys, row_keys
from veil.synth.evaluation.marginal_distance import marginal_distance, tvd


def _tvd_by_dict(real, synthetic, columns):
    p, q = {}, {}
    for row in real:
        p[tuple(row[list(columns)])] = p.get(tuple(row[list(columns)]), 0) + 1 / len(real)
    for row in synthetic:
        q[tuple(row[list(columns)])] = q.get(tuple(row[list(columns)]), 0) + 1 / len(synthetic)
    return 0.5 * sum(abs(p.get(k, 0) - q.get(k, 0)) for k in set(p) | set(q))


def test_a_table_against_itself_has_distance_zero_and_the_full_score():
    real = chain(500, np.random.default_rng(1))
    result = marginal_distance(real, real.copy(), NAMES, SIZES, rng=np.random.default_rng(2))
    assert [f.mean_tvd for f in result.families] == [0.0, 0.0, 0.0]
    assert result.score == 1000.0
    assert (result.score_order, result.score_marginals, result.score_available) == (3, 56, 56)


def test_shuffling_each_column_keeps_1_way_marginals_and_breaks_the_others():
    rng = np.random.default_rng(3)
    real = chain(2000, rng)
    shuffled = np.column_stack([rng.permutation(real[:, j]) for j in range(real.shape[1])])
    result = marginal_distance(real, shuffled, NAMES, SIZES, rng=np.random.default_rng(4))
    one, two, three = result.families
    assert one.mean_tvd == 0.0
    assert 0.05 < two.mean_tvd < three.mean_tvd < 1
    assert 0 <= result.score <= 1000
    assert result.score == 1000 * (1 - three.mean_tvd)


def test_tvd_matches_its_definition_on_every_pair():
    rng = np.random.default_rng(5)
    real, synthetic = chain(300, rng), chain(200, rng, stay=0.2)
    for columns in itertools.combinations(range(4), 2):
        assert abs(tvd(real, synthetic, SIZES, columns) - _tvd_by_dict(real, synthetic, columns)) < 1e-12


def test_a_marginal_with_more_cells_than_records_is_counted_over_the_records_present():
    rng = np.random.default_rng(6)
    sizes = (5000, 4000, 3000)   # 6·10¹⁰ cells: counted by unique keys, not a bincount
    real = np.column_stack([rng.integers(s, size=400) for s in sizes])
    synthetic = np.concatenate([real[:100], np.column_stack([rng.integers(s, size=100) for s in sizes])])
    assert abs(tvd(real, synthetic, sizes, (0, 1, 2)) - _tvd_by_dict(real, synthetic, (0, 1, 2))) < 1e-12


def test_too_many_marginals_are_sampled_and_the_result_says_so():
    real = chain(300, np.random.default_rng(7))
    result = marginal_distance(real, chain(300, np.random.default_rng(8)), NAMES, SIZES,
                               rng=np.random.default_rng(9), max_marginals=5)
    one, _two, three = result.families
    assert (one.available, one.evaluated, one.sampled) == (8, 5, True)
    assert (three.available, three.evaluated) == (56, 5)
    assert result.score_marginals == 5 and result.score_available == 56
    text = " ".join(row.meaning for row in result.section().rows)
    assert "a random 5 of the 56 3-way marginals" in text


def test_the_workload_family_averages_its_cliques():
    rng = np.random.default_rng(10)
    real, synthetic = chain(400, rng), chain(400, rng, stay=0.1)
    result = marginal_distance(real, synthetic, NAMES, SIZES, rng=rng, workload=[(0, 1), (2, 5, 7)])
    workload = result.families[-1]
    assert workload.label == "workload" and workload.evaluated == 2
    expected = (tvd(real, synthetic, SIZES, (0, 1)) + tvd(real, synthetic, SIZES, (2, 5, 7))) / 2
    assert abs(workload.mean_tvd - expected) < 1e-12


def test_fewer_than_three_columns_score_on_the_widest_marginal():
    real = np.array([[0, 1], [1, 1], [1, 0]])
    result = marginal_distance(real, np.array([[0, 1]]), ("x", "y"), (2, 2), rng=np.random.default_rng(0))
    assert result.score_order == 2
    assert abs(result.score - 1000 * (1 - (1 - 1 / 3))) < 1e-9


def test_keys_of_many_wide_columns_stay_exact():
    rng = np.random.default_rng(11)
    sizes = [1 << 20] * 8   # 2¹⁶⁰ combinations: compressed on the way
    table = rng.integers(4, size=(500, 8)) << 18
    keys = row_keys(table, sizes, range(8))
    _, first = np.unique(table, axis=0, return_inverse=True)
    assert np.array_equal(np.unique(keys, return_inverse=True)[1].ravel(), first.ravel())
    a, b = joint_keys([table[:200], table], sizes, range(8))
    assert np.array_equal(a, b[:200])


tables = st.integers(1, 4).flatmap(lambda d: st.tuples(
    st.lists(st.integers(1, 4), min_size=d, max_size=d),
    st.integers(1, 30), st.integers(1, 30), st.integers(0, 2 ** 32 - 1)))


@settings(max_examples=60, deadline=None)
@given(tables)
def test_tvd_lies_in_0_1_and_is_symmetric(case):
    sizes, n, m, seed = case
    rng = np.random.default_rng(seed)
    a = np.column_stack([rng.integers(s, size=n) for s in sizes])
    b = np.column_stack([rng.integers(s, size=m) for s in sizes])
    for k in range(1, len(sizes) + 1):
        for columns in itertools.combinations(range(len(sizes)), k):
            forward, backward = tvd(a, b, sizes, columns), tvd(b, a, sizes, columns)
            assert 0 <= forward <= 1 + 1e-12
            assert abs(forward - backward) < 1e-12
            assert abs(forward - _tvd_by_dict(a, b, columns)) < 1e-9
