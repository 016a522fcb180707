"""The sufficient statistics of grouped DP queries (veil.dp.statistics): each against a brute-force
loop over the rows, for random tables, groups and bounds."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.dp.aggregates import Count, Mean, Sum, measure_values, statistics, true_values
from veil.dp.statistics import check_statistic, compute_statistics
from veil.errors import ParameterError

values = st.one_of(st.none(), st.floats(min_value=-1e6, max_value=1e6),
                   st.sampled_from([math.inf, -math.inf, math.nan]), st.integers(-1000, 1000))


def clamp(x, lo, hi):
    return min(max(x, lo), hi)


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(-1, 4), values), max_size=40),
       lo=st.integers(-50, 10), width=st.integers(1, 100), bins=st.integers(1, 9))
def test_every_statistic_matches_a_loop_over_the_rows(rows, lo, width, bins):
    k = 5
    hi = lo + width
    frame = pd.DataFrame({"x": pd.array([v for _, v in rows], dtype="object")})
    group = np.array([g for g, _ in rows], dtype=np.int64)
    wanted = [("rows",), ("count", "x"), ("sum", "x", lo, hi), ("csum", "x", lo, hi), ("csq", "x", lo, hi),
              ("hist", "x", lo, hi, bins)]
    got = compute_statistics(frame, group, k, wanted)
    mid = (lo + hi) / 2
    expect = {s: np.zeros((k, bins) if s[0] == "hist" else k) for s in wanted}
    for g, v in rows:
        if g < 0:
            continue
        expect[("rows",)][g] += 1
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        c = clamp(float(v), lo, hi)
        expect[("count", "x")][g] += 1
        expect[("sum", "x", lo, hi)][g] += c
        expect[("csum", "x", lo, hi)][g] += c - mid
        expect[("csq", "x", lo, hi)][g] += (c - mid) ** 2
        expect[("hist", "x", lo, hi, bins)][g, min(bins - 1, math.floor((c - lo) * bins / (hi - lo)))] += 1
    for s in wanted:
        assert got[s].shape == expect[s].shape
        np.testing.assert_allclose(got[s], expect[s], rtol=1e-9, atol=1e-6)
    # no row is lost or invented: the histogram and the count agree, and every taken row is counted once
    assert got[("hist", "x", lo, hi, bins)].sum(axis=1).tolist() == got[("count", "x")].tolist()
    assert int(got[("rows",)].sum()) == int((group >= 0).sum())


def test_aggregates_read_only_their_statistics():
    frame = pd.DataFrame({"x": [1.0, np.nan, 7.0, 3.0]})
    group = np.array([0, 0, 1, -1])
    for agg in (Count(), Sum("x", 0, 5), Mean("x", 0, 10)):
        stats = compute_statistics(frame, group, 2, statistics(agg))
        assert set(stats) == set(statistics(agg))
        for a, b in zip(measure_values(agg, stats), true_values(agg, frame, group, 2)):
            np.testing.assert_array_equal(a, b)
    assert true_values(Count(), frame, group, 2)[0].tolist() == [2, 1]
    assert true_values(Sum("x", 0, 5), frame, group, 2)[0].tolist() == [1.0, 5.0]
    s, c = true_values(Mean("x", 0, 10), frame, group, 2)
    assert s.tolist() == [-4.0, 2.0] and c.tolist() == [1, 1]


@pytest.mark.parametrize("bad", [("nope",), ("sum", "x"), ("hist", "x", 0, 1, 0), ("hist", "x", 0, 1, 2.5), ()])
def test_a_statistic_that_is_not_one_is_refused(bad):
    with pytest.raises(ParameterError):
        check_statistic(bad)


def test_group_must_match_the_rows():
    with pytest.raises(ParameterError):
        compute_statistics(pd.DataFrame({"x": [1, 2]}), np.array([0]), 1, [("rows",)])


@pytest.mark.parametrize("frame, group", [
    (pd.DataFrame({"x": pd.Series([], dtype=float)}), np.array([], dtype=np.int64)),
    (pd.DataFrame({"x": [1.0, 2.0]}), np.array([-1, -1])),
], ids=["no-rows", "no-row-taken"])
@pytest.mark.parametrize("k", [0, 3])
def test_sums_are_floats_and_counts_integers_on_no_rows(frame, group, k):
    # np.bincount gives int64 on empty weights: the sums must still be float64
    wanted = [("rows",), ("count", "x"), ("sum", "x", 0, 1), ("csum", "x", 0, 1), ("csq", "x", 0, 1),
              ("hist", "x", 0, 1, 2)]
    got = compute_statistics(frame, group, k, wanted)
    for s in wanted:
        assert got[s].dtype == (np.float64 if s[0] in ("sum", "csum", "csq") else np.int64), s
        assert got[s].shape == ((k, 2) if s[0] == "hist" else (k,)) and not got[s].any(), s
