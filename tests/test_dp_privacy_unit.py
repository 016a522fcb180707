"""The privacy unit and contribution bounding (issue 27, item 1): bounding never keeps more than the
bounds allow, chooses uniformly at random, drops rows without an ID or a public key, and the
sensitivity a grouped query states is the largest change one person can make to its true cells
(brute force over small random tables, with the bounding coupled on the other persons' rows)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from veil.dp.aggregates import count, mean, measurements, sum, true_values
from veil.dp.grouped_query import Query
from veil.dp.noise import NoiseSource
from veil.dp.privacy_unit import PrivacyUnit, bound_contributions, selection_keys
from veil.dp.public_keys import PublicKeys
from veil.errors import ParameterError

SOME = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def tables(draw, max_people=6, max_rows=25):
    """A small table: person ids (some missing), a group among 0..4 (4 is not a public key), values."""
    n = draw(st.integers(0, max_rows))
    pid = draw(st.lists(st.one_of(st.integers(0, max_people - 1), st.none()), min_size=n, max_size=n))
    grp = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    val = draw(st.lists(st.one_of(st.floats(-100, 100), st.sampled_from([np.nan, 1e9, -1e9])), min_size=n, max_size=n))
    return pd.DataFrame({"pid": pd.array(pid, dtype="Int64"), "g": grp, "x": val})


@st.composite
def units(draw):
    rows = draw(st.one_of(st.none(), st.integers(1, 6)))
    groups = draw(st.one_of(st.none(), st.integers(1, 5)))
    per = draw(st.one_of(st.none(), st.integers(1, 4)))
    if rows is None and (groups is None or per is None):
        rows = draw(st.integers(1, 6))
    return PrivacyUnit.person("pid", max_rows=rows, max_groups=groups, max_rows_per_group=per)


KEYS = PublicKeys.from_list("g", [0, 1, 2, 3])


def _kept(unit, frame, keys):
    """The mask of rows kept, with one key triple per row (so a neighbour can reuse the keys)."""
    person, _ = pd.factorize(frame["pid"], use_na_sentinel=True)
    return bound_contributions(unit, person, KEYS.index_of_rows(frame), keys[:, 0], keys[:, 1], keys[:, 2])


@SOME
@given(frame=tables(), unit=units(), seed=st.integers(0, 2**32 - 1))
def test_bounding_never_keeps_more_than_the_bounds(frame, unit, seed):
    keys = np.random.default_rng(seed).integers(0, 2**63, size=(len(frame), 3)).astype(np.uint64)
    kept = frame[_kept(unit, frame, keys)]
    assert kept["pid"].notna().all() and kept["g"].isin([0, 1, 2, 3]).all()
    if unit.max_rows is not None:
        assert (kept.groupby("pid").size() <= unit.max_rows).all()
    if unit.max_groups is not None:
        assert (kept.groupby("pid")["g"].nunique() <= unit.max_groups).all()
    if unit.max_rows_per_group is not None:
        assert (kept.groupby(["pid", "g"]).size() <= unit.max_rows_per_group).all()
    # nothing is dropped that the bounds allow to keep: a person within every bound keeps every row
    eligible = frame[frame["pid"].notna() & frame["g"].isin([0, 1, 2, 3])]
    for pid, rows in eligible.groupby("pid"):
        small = ((unit.max_rows is None or len(rows) <= unit.max_rows)
                 and (unit.max_groups is None or rows["g"].nunique() <= unit.max_groups)
                 and (unit.max_rows_per_group is None or rows.groupby("g").size().max() <= unit.max_rows_per_group))
        if small:
            assert (kept["pid"] == pid).sum() == len(rows)


def test_the_rows_kept_are_a_uniformly_random_subset():
    """One person, 5 rows in one group, max_rows=2: each of the 10 pairs equally likely (χ²)."""
    frame = pd.DataFrame({"pid": [7] * 5, "g": [1] * 5})
    unit = PrivacyUnit.person("pid", max_rows=2)
    src = NoiseSource.seeded(2026)
    tally = {pair: 0 for pair in itertools.combinations(range(5), 2)}
    for _ in range(3000):
        keys = selection_keys(src, 15).reshape(5, 3)
        tally[tuple(np.flatnonzero(_kept(unit, frame, keys)))] += 1
    assert stats.chisquare(list(tally.values())).pvalue > 1e-3
    # and a biased choice (the first rows) fails the same test
    first = dict.fromkeys(tally, 0)
    first[(0, 1)] = 3000
    assert stats.chisquare(list(first.values())).pvalue < 1e-3


def test_the_groups_kept_are_a_uniformly_random_subset():
    """One person in 4 groups (3, 1, 1, 2 rows), max_groups=1: each group kept w.p. 1/4, whatever its rows."""
    frame = pd.DataFrame({"pid": ["a"] * 7, "g": [0, 0, 0, 1, 2, 3, 3]})
    unit = PrivacyUnit.person("pid", max_groups=1, max_rows_per_group=5)
    src = NoiseSource.seeded(11)
    tally = np.zeros(4)
    for _ in range(2000):
        keys = selection_keys(src, 21).reshape(7, 3)
        kept = frame[_kept(unit, frame, keys)]
        assert kept["g"].nunique() == 1 and len(kept) == (frame["g"] == kept["g"].iloc[0]).sum()
        tally[kept["g"].iloc[0]] += 1
    assert stats.chisquare(tally).pvalue > 1e-3


def test_values_are_clamped_and_missing_values_left_out():
    frame = pd.DataFrame({"g": [0, 0, 1, 1, 1], "x": [-50.0, 5.0, np.inf, np.nan, 300.0]})
    group = np.array([0, 0, 1, 1, 1])
    assert true_values(sum("x", 0, 10), frame, group, 3)[0].tolist() == [5.0, 20.0, 0.0]
    s, c = true_values(mean("x", 0, 10), frame, group, 3)
    assert s.tolist() == [-5.0, 10.0, 0.0] and c.tolist() == [2, 2, 0]
    assert true_values(count(), frame, group, 3)[0].tolist() == [2, 3, 0]


def _cells(unit, frame, keys, aggs, num_keys=4):
    kept = _kept(unit, frame, keys)
    group = KEYS.index_of_rows(frame)[kept]
    out = {}
    for a in aggs:
        for m, v in zip(measurements(a), true_values(a, frame[kept], group, num_keys)):
            out[m.label] = np.asarray(v, dtype=float)
    return out


AGGS = (count(), sum("x", -20, 50), mean("x", -20, 50))


@SOME
@given(frame=tables(), unit=units(), seed=st.integers(0, 2**32 - 1))
def test_the_stated_sensitivity_bounds_the_change_one_person_makes(frame, unit, seed):
    """Remove each person in turn (the other rows keep their coins: the bounding is per person) and
    compare the L1 change of every measurement's true cells with the sensitivity the query states."""
    keys = np.random.default_rng(seed).integers(0, 2**63, size=(len(frame), 3)).astype(np.uint64)
    stated = Query(frame, unit=unit).group_by("g", keys=[0, 1, 2, 3]).agg(*AGGS).sensitivities()
    base = _cells(unit, frame, keys, AGGS)
    for pid in frame["pid"].dropna().unique():
        stay = (frame["pid"] != pid).fillna(True).to_numpy()
        other = _cells(unit, frame[stay].reset_index(drop=True), keys[stay], AGGS)
        for label, cells in base.items():
            change = np.abs(cells - other[label]).sum()
            assert change <= stated[label] * (1 + 1e-9), (label, pid, change, stated[label])


@pytest.mark.parametrize("unit", [PrivacyUnit.person("pid", max_rows=5),
                                  PrivacyUnit.person("pid", max_groups=2, max_rows_per_group=3),
                                  PrivacyUnit.person("pid", max_groups=9, max_rows_per_group=2),
                                  PrivacyUnit.person("pid", max_rows=4, max_groups=3, max_rows_per_group=2)])
def test_the_stated_sensitivity_is_reached_by_some_person(unit):
    """The bound is tight: a person with many rows at the extreme value in every key changes the
    cells by exactly the stated sensitivity."""
    rest = pd.DataFrame({"pid": pd.array([1, 1, 2], dtype="Int64"), "g": [0, 1, 1], "x": [3.0, 4.0, 5.0]})
    heavy = pd.DataFrame({"pid": pd.array([99] * 40, dtype="Int64"), "g": [0, 1, 2, 3] * 10, "x": [50.0] * 40})
    frame = pd.concat([rest, heavy], ignore_index=True)
    keys = np.random.default_rng(5).integers(0, 2**63, size=(len(frame), 3)).astype(np.uint64)
    stated = Query(frame, unit=unit).group_by("g", keys=[0, 1, 2, 3]).agg(*AGGS).sensitivities()
    base = _cells(unit, frame, keys, AGGS)
    without = _cells(unit, rest, keys[:3], AGGS)
    for label in ("count", "sum(x)", "mean(x).count"):
        assert math.isclose(np.abs(base[label] - without[label]).sum(), stated[label]), label
    # the mean's centred sum reaches (hi − lo)/2 per row at the upper bound: 50 − 15 = 35
    assert math.isclose(np.abs(base["mean(x).sum"] - without["mean(x).sum"]).sum(), stated["mean(x).sum"])


def test_the_row_unit_has_sensitivity_one_per_row():
    frame = pd.DataFrame({"g": [0, 1], "x": [1.0, 2.0]})
    q = Query(frame).group_by("g", keys=[0, 1, 2, 3]).agg(*AGGS)
    assert q.sensitivities() == {"count": 1, "sum(x)": 50.0, "mean(x).sum": 35.0, "mean(x).count": 1}


@pytest.mark.parametrize("make, message", [
    (lambda: PrivacyUnit.person("pid"), "max_rows, or both"),
    (lambda: PrivacyUnit.person("pid", max_groups=2), "max_rows, or both"),
    (lambda: PrivacyUnit.person("pid", max_rows=0), "at least 1"),
    (lambda: PrivacyUnit.person("pid", max_rows=2.5), "whole number"),
    (lambda: PrivacyUnit.person("pid", max_rows=True), "whole number"),
    (lambda: PrivacyUnit(None, max_rows=3), "ID column"),
    (lambda: PrivacyUnit.person("", max_rows=3), "column name"),
])
def test_a_bad_unit_is_refused_in_one_sentence(make, message):
    with pytest.raises(ParameterError, match=message) as info:
        make()
    assert str(info.value).count(". ") == 0 and str(info.value).endswith(".")


@settings(max_examples=200, deadline=None)
@given(owners=st.lists(st.integers(0, 2**45), min_size=1, max_size=60), key_bits=st.sampled_from([2, 30, 64]),
       data=st.data())
def test_the_rank_within_an_owner_is_the_rank_of_the_full_keys(owners, key_bits, data):
    """The one-sort fast path (owner in the high bits, truncated keys below) ranks each owner's
    items in the order of their full keys, ties of the truncated keys (few key bits) and owners
    past 40 bits included; and bounding keeps exactly the items whose rank is under the bound."""
    from veil.dp.privacy_unit import _rank_within, _within_bound

    owner = np.asarray(owners, dtype=np.int64)
    keys = np.asarray(data.draw(st.lists(st.integers(0, 2**key_bits - 1), min_size=len(owners),
                                         max_size=len(owners))), dtype=np.uint64)
    if key_bits == 64:
        keys = keys | np.uint64(1) << np.uint64(63)  # keys with their top bit set survive the shift too
    ranks = _rank_within(owner, keys)
    # equal keys of one owner may be ranked either way; distinct keys must be ranked as the slow way
    for o in set(owners):
        mine = np.flatnonzero(owner == o)
        assert sorted(ranks[mine]) == list(range(len(mine)))
        assert all(keys[i] <= keys[j] for i in mine for j in mine if ranks[i] < ranks[j])
    dense = np.unique(owner, return_inverse=True)[1].ravel()
    for bound in (1, 2, 5):
        assert (_within_bound(dense, keys, bound) == (_rank_within(dense, keys) < bound)).all()
