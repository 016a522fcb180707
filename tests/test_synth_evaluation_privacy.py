"""Privacy measures of veil.synth.evaluation: membership inference, singling out, linkage and the
disclosure checks, on synthetic tables drawn independently of the members (no leak: the holdout
control must show none) and on copies of the members (a total leak: the attacks must show it)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from synth_evaluation_data import NAMES, SIZES, chain

from veil.synth.evaluation.disclosure import disclosure
from veil.synth.evaluation.distance import nearest
from veil.synth.evaluation.intervals import rate_difference, risk_interval, wilson
from veil.synth.evaluation.linkage import linkage
from veil.synth.evaluation.membership import membership, neighbour_counts
from veil.synth.evaluation.singling_out import singling_out


@pytest.fixture(scope="module")
def tables():
    """Members, non-members (the holdout) and an independent synthetic table, all from one distribution."""
    rng = np.random.default_rng(20)
    return chain(2000, rng), chain(2000, rng), chain(2000, rng)


def test_membership_shows_no_advantage_on_a_synthetic_table_independent_of_the_members(tables):
    members, holdout, independent = tables
    result = membership(members, independent, SIZES, holdout=holdout, rng=np.random.default_rng(21))
    for attack in (result.dcr, result.classifier):
        assert attack.ran
        assert abs(attack.advantage) < 0.08
        assert attack.interval[0] <= 0 <= attack.interval[1]
        assert attack.scored_members == attack.scored_non_members == 1000


def test_membership_shows_a_clear_advantage_on_a_copy_of_the_members(tables):
    members, holdout, _ = tables
    result = membership(members, members.copy(), SIZES, holdout=holdout, rng=np.random.default_rng(22))
    assert result.member_copies == 1.0 and result.member_mean_dcr == 0.0
    for attack in (result.dcr, result.classifier):
        assert attack.advantage > 0.7
        assert attack.interval[0] > 0.6
    assert result.dcr.setting == "member when the distance is at most 0"


def test_membership_is_not_run_without_a_holdout(tables):
    members, _, independent = tables
    result = membership(members, independent, SIZES, holdout=None, rng=np.random.default_rng(0))
    assert not result.dcr.ran and not result.classifier.ran
    assert "holdout" in result.dcr.reason
    assert result.section().rows[0].measure == "not run"


def test_singling_out_risk_is_near_zero_for_independent_data_and_high_for_a_copy(tables):
    members, holdout, independent = tables
    none = singling_out(members, independent, SIZES, holdout=holdout, rng=np.random.default_rng(23))
    assert none.ran and none.estimate.attempts >= 1000
    assert abs(none.estimate.risk) < 0.06
    assert none.estimate.interval[0] <= 0 <= none.estimate.interval[1]
    copy = singling_out(members, members.copy(), SIZES, holdout=holdout, rng=np.random.default_rng(23))
    assert copy.estimate.risk > 0.7 and copy.estimate.interval[0] > 0.6


def test_linkage_risk_is_near_zero_for_independent_data_and_high_for_a_copy():
    # columns of 20 values: each half of a record is (nearly) unique, so a copy links them
    rng = np.random.default_rng(24)
    sizes = (20,) * 8
    members, holdout, independent = (chain(2000, rng, sizes=sizes, stay=0.3) for _ in range(3))
    columns = range(len(sizes))
    none = linkage(members, independent, NAMES, sizes, columns=columns, holdout=holdout, rng=np.random.default_rng(24))
    assert none.ran and sorted(none.first + none.second) == list(NAMES)
    assert abs(none.estimate.risk) < 0.06
    assert none.estimate.interval[0] <= 0 <= none.estimate.interval[1]
    copy = linkage(members, members.copy(), NAMES, sizes, columns=columns, holdout=holdout,
                   rng=np.random.default_rng(24))
    assert copy.estimate.risk > 0.8 and copy.estimate.interval[0] > 0.7


def test_linkage_on_the_quasi_identifiers_splits_only_them(tables):
    members, holdout, independent = tables
    result = linkage(members, independent, NAMES, SIZES, columns=(1, 4, 6), holdout=holdout,
                     rng=np.random.default_rng(0))
    assert sorted(result.first + result.second) == ["b", "e", "g"] and len(result.first) == 1


def test_singling_out_and_linkage_need_a_holdout(tables):
    members, _, independent = tables
    assert "holdout" in singling_out(members, independent, SIZES, holdout=None, rng=np.random.default_rng(0)).reason
    assert "holdout" in linkage(members, independent, NAMES, SIZES, columns=range(8), holdout=None,
                                rng=np.random.default_rng(0)).reason


def test_disclosure_counts_copies_unique_matches_and_classes_on_a_hand_made_example():
    real = np.array([[0, 0], [0, 1], [1, 0]])
    synthetic = np.array([[0, 0], [0, 0], [1, 1]])
    holdout = np.array([[0, 1], [1, 1]])
    result = disclosure(real, synthetic, ("x", "y"), (2, 2), quasi_identifiers=(0, 1), holdout=holdout)
    s, b = result.synthetic, result.baseline
    assert (s.rows, s.exact_copies, s.real_unique_matches, s.smallest_class, s.in_small_classes) == (3, 2, 2, 1, 3)
    assert (b.rows, b.exact_copies, b.real_unique_matches, b.smallest_class, b.in_small_classes) == (2, 1, 1, 1, 2)
    on_x = disclosure(real, synthetic, ("x", "y"), (2, 2), quasi_identifiers=(0,), holdout=None)
    # x = 0 is shared by two real records, x = 1 by one: only the synthetic (1, 1) points at one person
    assert (on_x.synthetic.exact_copies, on_x.synthetic.real_unique_matches, on_x.synthetic.smallest_class) == (2, 1, 1)
    assert on_x.baseline is None and on_x.to_dict()["holdout_baseline"] is None


def _brute_nearest(queries, reference, columns):
    distance = (queries[:, None, columns] != reference[None, :, columns]).sum(axis=2)
    return distance.min(axis=1), distance.argmin(axis=1)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=5), st.integers(1, 40), st.integers(1, 40),
       st.integers(0, 2 ** 32 - 1))
def test_the_nearest_record_is_the_first_closest_one(sizes, n, m, seed):
    rng = np.random.default_rng(seed)
    queries = np.column_stack([rng.integers(s, size=n) for s in sizes])
    reference = np.column_stack([rng.integers(s, size=m) for s in sizes])
    for k in range(1, len(sizes) + 1):
        for columns in itertools.combinations(range(len(sizes)), k):
            found = nearest(queries, reference, sizes, columns)
            distance, index = _brute_nearest(queries, reference, list(columns))
            assert np.array_equal(found.distance, distance) and np.array_equal(found.index, index)


def test_wide_columns_are_compared_directly():
    rng = np.random.default_rng(25)
    sizes = (3, 5000, 4)
    queries = np.column_stack([rng.integers(s, size=200) for s in sizes])
    reference = np.column_stack([rng.integers(s, size=300) for s in sizes])
    reference[:50, 1] = queries[:50, 1]
    found = nearest(queries, reference, sizes, (0, 1, 2))
    distance, index = _brute_nearest(queries, reference, [0, 1, 2])
    assert np.array_equal(found.distance, distance) and np.array_equal(found.index, index)


def test_neighbour_counts_count_each_distance_exactly():
    rng = np.random.default_rng(26)
    sizes = (2, 3, 2, 3, 2)
    targets = np.column_stack([rng.integers(s, size=50) for s in sizes])
    synthetic = np.column_stack([rng.integers(s, size=80) for s in sizes])
    distance = (targets[:, None, :] != synthetic[None, :, :]).sum(axis=2)
    expected = np.stack([(distance == r).sum(axis=1) for r in range(3)], axis=1)
    assert np.array_equal(neighbour_counts(targets, synthetic, sizes, 2), expected)


def test_intervals_hold_their_point_and_are_known_values():
    lo, hi = wilson(5, 10)
    assert abs(lo - 0.2366) < 1e-4 and abs(hi - 0.7634) < 1e-4          # Wilson (1927), z = 1.96
    lo, hi = rate_difference(56, 70, 48, 80)                            # Newcombe (1998), table II example (a)
    assert abs(lo - 0.0524) < 1e-3 and abs(hi - 0.3339) < 1e-3
    lo, hi = risk_interval(60, 100, 10, 100)
    assert lo < (0.6 - 0.1) / 0.9 < hi


def test_a_threshold_that_separates_no_tuning_record_is_not_chosen():
    # every record is at distance 2 from every synthetic record: no threshold separates anything,
    # and "always a member" (t = 2) would score an exact 0 with a needlessly tight interval
    rng = np.random.default_rng(27)
    members, holdout = rng.integers(2, size=(40, 2)), rng.integers(2, size=(40, 2))
    result = membership(members, np.full((5, 2), 2), (3, 3), holdout=holdout, rng=rng)
    assert result.dcr.setting == "member when the distance is at most 0"
    assert result.dcr.tpr == result.dcr.fpr == 0 and result.dcr.advantage == 0
