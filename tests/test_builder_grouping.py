"""The grouping hierarchy builder (veil.data.builders.grouping): named groups of values, groups of
groups, then the top."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.data import builders
from veil.data.encoding import encode_column
from veil.errors import HierarchyError, ParameterError

MARITAL = [{"married": ["Married-civ-spouse", "Married-AF-spouse"], "single": ["Never-married", "Divorced"]},
           {"any": ["married", "single"]}]


def test_groups_of_groups_make_the_levels():
    h = builders.grouping(["Divorced", "Married-civ-spouse"], MARITAL)
    assert h.rows() == [["Married-civ-spouse", "married", "any"], ["Married-AF-spouse", "married", "any"],
                        ["Never-married", "single", "any"], ["Divorced", "single", "any"]]


def test_the_top_is_added_unless_the_last_level_has_one_group():
    h = builders.grouping(["a"], [{"ab": ["a", "b"], "c": ["c"]}], top="any")
    assert h.rows() == [["a", "ab", "any"], ["b", "ab", "any"], ["c", "c", "any"]]


def test_a_value_in_no_group_is_refused_with_how_many():
    with pytest.raises(HierarchyError, match=r"2 value\(s\) of the column are in no group of level 1 \('x', 'y'\)"):
        builders.grouping(["a", "x", "y"], [{"g": ["a"]}])


def test_missing_values_need_no_group():
    h = builders.grouping(["a", "", "?"], [{"g": ["a"]}], missing_values=("", "?"))
    assert h.align(encode_column("c", np.array(["a", "", "?"], dtype=object), missing_values=("", "?"))).levels == 2


def test_numbers_match_by_their_value():
    h = builders.grouping(np.array([25, 30]), [{"young": ["25.0", "30"]}])
    h.align(encode_column("age", np.array([25, 30])))


@pytest.mark.parametrize("levels, words", [
    ([], "at least one level"),
    ([{"g": []}], "no members"),
    ([{"g": ["a"], "h": ["a"]}], "in two groups of level 1"),
    ([{"g": ["a"]}, {"all": ["g", "h"]}], "'h' of level 2 is not a group of level 1"),
    ([{"g": ["a"], "h": ["b"]}, {"all": ["g"]}], "group 'h' of level 1 is in no group of level 2"),
])
def test_groups_that_do_not_make_a_tree_are_refused(levels, words):
    with pytest.raises(ParameterError) as info:
        builders.grouping(["a"], levels)
    assert words in str(info.value) and "\n" not in str(info.value)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=30), st.integers(1, 6), st.integers(1, 4))
def test_every_value_gets_one_leaf_and_the_levels_nest(values, per_group, per_top):
    distinct = sorted(set(values))
    first = {f"g{i}": [str(v) for v in distinct[i:i + per_group]] for i in range(0, len(distinct), per_group)}
    names = list(first)
    second = {f"t{i}": names[i:i + per_top] for i in range(0, len(names), per_top)}
    h = builders.grouping(np.array(values), [first, second])
    generalization = h.align(encode_column("v", np.array(values)))   # covers every value
    assert sorted(h.leaves.tolist()) == sorted(str(v) for v in distinct)
    for row in h.rows():
        group = next(g for g, members in first.items() if row[0] in members)
        assert row[1] == group and row[2] == next(t for t, gs in second.items() if group in gs)
    assert generalization.levels == (3 if len(second) == 1 else 4)
