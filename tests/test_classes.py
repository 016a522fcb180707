"""Equivalence classes: grouping, class sizes, count matrices and roll-up.

Every result is compared with an independent pandas computation (``groupby``/``crosstab``) or,
for roll-up, with the classes built directly from the rows at the target node.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import one_sentence_error
from veil import ColumnError, DataError, Dataset, EquivalenceClasses, builders
from veil.cells import Cells
from veil.classes import group_rows

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------------------------
# helpers


def _pandas_groups(columns: list[np.ndarray]) -> np.ndarray:
    """Group ids numbered in the sorted order of the code tuples, computed by pandas."""
    frame = pd.DataFrame({f"c{i}": c for i, c in enumerate(columns)})
    return frame.groupby(list(frame.columns), sort=True).ngroup().to_numpy()


def _partition(row_class: np.ndarray) -> set[frozenset[int]]:
    """The classes as a set of sets of row indices."""
    return {frozenset(np.flatnonzero(row_class == c).tolist()) for c in np.unique(row_class)}


def _match(reference: np.ndarray, other: np.ndarray) -> np.ndarray:
    """For each class id of ``reference``, the class id of ``other`` holding the same rows.

    Fails unless the two labelings describe the same partition of the rows.
    """
    n_ref = int(reference.max()) + 1
    mapping = np.full(n_ref, -1)
    for row, (a, b) in enumerate(zip(reference, other)):
        if mapping[a] == -1:
            mapping[a] = b
        assert mapping[a] == b, f"row {row} is split from its class"
    assert len(set(mapping.tolist())) == n_ref, "two classes were merged"
    return mapping


@st.composite
def code_tables(draw, max_rows: int = 80, max_cols: int = 4, max_radix: int = 6):
    n = draw(st.integers(1, max_rows))
    k = draw(st.integers(1, max_cols))
    radices = [draw(st.integers(1, max_radix)) for _ in range(k)]
    columns = [np.array(draw(st.lists(st.integers(0, r - 1), min_size=n, max_size=n)), dtype=np.int32)
               for r in radices]
    # Declared radices are upper bounds: sometimes larger than needed.
    slack = [draw(st.integers(0, 3)) for _ in range(k)]
    return columns, [r + s for r, s in zip(radices, slack)]


# --------------------------------------------------------------------------------------------
# group_rows


@SETTINGS
@given(code_tables())
def test_group_rows_groups_exactly_like_pandas_groupby(table):
    columns, radices = table
    group, keys = group_rows(columns, radices)
    expected = _pandas_groups(columns)
    # Same ids, numbered in the sorted order of the tuples, as pandas' ngroup(sort=True).
    np.testing.assert_array_equal(group, expected)
    # keys[g] is the code tuple of group g.
    n_groups = expected.max() + 1
    assert len(keys) == n_groups
    for g in range(n_groups):
        row = np.flatnonzero(expected == g)[0]
        assert tuple(keys[g]) == tuple(int(c[row]) for c in columns)


def test_group_rows_of_an_empty_table():
    group, keys = group_rows([np.zeros(0, dtype=np.int32)], [3])
    assert len(group) == 0 and len(keys) == 0


def test_group_rows_keys_beyond_int64_do_not_collide():
    # Five columns of radix 2**16 need an 80-bit key. A key that simply wrapped modulo 2**64 would
    # drop the first column (it is multiplied by 2**64), merging rows 0 and 1 and rows 2 and 3.
    columns = [np.array([0, 1, 0, 1, 0]), np.array([5, 5, 7, 7, 5]), np.array([7, 7, 7, 7, 7]),
               np.array([1, 1, 1, 1, 1]), np.array([2, 2, 2, 2, 2])]
    group, keys = group_rows(columns, [2 ** 16] * 5)
    np.testing.assert_array_equal(group, [0, 2, 1, 3, 0])
    np.testing.assert_array_equal(keys[:, 0], [0, 0, 1, 1])


def test_group_rows_single_column_with_huge_radix():
    codes = np.array([3, 2 ** 40, 3, 2 ** 40 + 1], dtype=np.int64)
    group, _ = group_rows([codes, np.array([1, 1, 1, 1])], [2 ** 41, 2 ** 30])
    np.testing.assert_array_equal(group, [0, 1, 0, 2])


def test_from_dataset_overflow_path_with_many_high_cardinality_columns():
    rng = np.random.default_rng(7)
    card, n_cols = 8192, 5  # 8192**5 = 2**65 > int64
    n = 9000
    data = rng.integers(0, card, size=(n, n_cols))
    for j in range(n_cols):
        data[:card, j] = rng.permutation(card)  # every code occurs, so every radix is 8192
    # Twins that differ only in the first column, by 4096 = 2**12: with a key that wrapped modulo
    # 2**64, c0 * 2**52 would lose its top bit and each twin would join its original's class.
    twins = data[:200].copy()
    twins[:, 0] = (twins[:, 0] + 4096) % card
    table = pd.DataFrame(np.vstack([data, twins]), columns=[f"q{j}" for j in range(n_cols)])
    ds = Dataset(table, quasi_identifiers=list(table.columns))
    radices = [ds.radix(q) for q in ds.quasi_identifiers]
    assert math.prod(radices) > 2 ** 63
    ec = EquivalenceClasses.from_dataset(ds)
    expected = table.groupby(list(table.columns), sort=False).ngroup().to_numpy()
    assert ec.n_classes == expected.max() + 1
    _match(expected, ec.row_class)
    np.testing.assert_array_equal(ec.sizes, np.bincount(expected))
    # Each class's keys decode to its rows' values.
    labels = ec.class_labels()
    for j, q in enumerate(ds.quasi_identifiers):
        np.testing.assert_array_equal(labels[q].to_numpy()[ec.row_class], table[q].astype(str).to_numpy())


# --------------------------------------------------------------------------------------------
# from_dataset: sizes, count matrices, keys


@st.composite
def int_tables(draw, max_rows: int = 60):
    n = draw(st.integers(1, max_rows))
    n_qi = draw(st.integers(1, 3))
    cols = {}
    for j in range(n_qi):
        dom = draw(st.integers(1, 4))
        cols[f"q{j}"] = draw(st.lists(st.integers(0, dom - 1), min_size=n, max_size=n))
    sdom = draw(st.integers(1, 5))
    cols["s"] = draw(st.lists(st.integers(0, sdom - 1), min_size=n, max_size=n))
    cols["t"] = draw(st.lists(st.sampled_from(["flu", "ulcer", "cold"]), min_size=n, max_size=n))
    return pd.DataFrame(cols)


@SETTINGS
@given(int_tables())
def test_classes_sizes_and_count_matrices_match_pandas(table):
    qis = [c for c in table.columns if c.startswith("q")]
    ds = Dataset(table, quasi_identifiers=qis, sensitive=["s", "t"])
    ec = EquivalenceClasses.from_dataset(ds)
    grouped = table.groupby(qis, sort=False).ngroup().to_numpy()
    # The same partition as pandas (ids may be numbered differently).
    pairs = set(zip(ec.row_class.tolist(), grouped.tolist()))
    assert len(pairs) == len(set(grouped.tolist())) == ec.n_classes
    expected = ec.row_class
    assert ec.sizes.sum() == len(table) == ec.n_rows
    np.testing.assert_array_equal(ec.sizes, np.bincount(expected, minlength=ec.n_classes))
    for name in ("s", "t"):
        sc = ec.sensitive[name]
        assert sc.counts.shape == (ec.n_classes, ds.column(name).cardinality)
        np.testing.assert_array_equal(sc.counts.sum(axis=1), ec.sizes)
        cross = pd.crosstab(expected, table[name].astype(str))
        labels = list(ds.column(name).labels)
        cross = cross.reindex(columns=labels, fill_value=0)
        np.testing.assert_array_equal(sc.counts, cross.to_numpy())
        np.testing.assert_array_equal(sc.reference, table[name].astype(str).value_counts()
                                      .reindex(labels, fill_value=0).to_numpy())
        np.testing.assert_allclose(sc.class_distribution().sum(axis=1), 1.0)
    # keys / class labels: each class's labels are the values of its rows.
    labels = ec.class_labels()
    np.testing.assert_array_equal(labels["size"].to_numpy(), ec.sizes)
    for q in qis:
        np.testing.assert_array_equal(labels[q].to_numpy()[ec.row_class], table[q].astype(str).to_numpy())


def test_from_dataset_rejects_bad_levels():
    table = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "x"]})
    ds = Dataset(table, quasi_identifiers=["a", "b"], hierarchies={"a": builders.intervals(table["a"], [2])})
    with pytest.raises(ColumnError):
        EquivalenceClasses.from_dataset(ds, {"a": 3})  # height is 2
    with pytest.raises(ColumnError):
        EquivalenceClasses.from_dataset(ds, {"b": 1})  # no hierarchy
    with pytest.raises(ColumnError):
        EquivalenceClasses.from_dataset(ds, {"zz": 1})  # not a QI
    with pytest.raises(ColumnError):
        EquivalenceClasses.from_dataset(ds, [1])  # one level per QI
    with pytest.raises(ColumnError):
        EquivalenceClasses.from_dataset(ds, {"a": -1})
    ec = EquivalenceClasses.from_dataset(ds, {"a": 1})
    with pytest.raises(ColumnError):
        ec.roll_up({"a": 0})  # cannot roll down


# --------------------------------------------------------------------------------------------
# roll-up


@st.composite
def generalizable_tables(draw):
    """A random table with three QIs whose hierarchies come from the builders, and levels lo ≤ hi."""
    n = draw(st.integers(1, 60))
    ages = draw(st.lists(st.integers(0, 40), min_size=n, max_size=n))
    zips = draw(st.lists(st.sampled_from(["4767", "4760", "4790", "4791", "5760", "4707"]),
                         min_size=n, max_size=n))
    colors = draw(st.lists(st.sampled_from(["red", "green", "blue"]), min_size=n, max_size=n))
    s = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    s2 = draw(st.lists(st.sampled_from(["a", "b"]), min_size=n, max_size=n))
    table = pd.DataFrame({"age": ages, "zip": zips, "color": colors, "s": s, "s2": s2})
    base = draw(st.sampled_from([1, 2, 3, 5]))
    mult = draw(st.lists(st.sampled_from([1, 2, 3]), min_size=0, max_size=2))
    widths = [base]
    for m in mult:
        widths.append(widths[-1] * m)
    hierarchies = {"age": builders.intervals(table["age"], widths),
                   "zip": builders.masking(table["zip"]),
                   "color": builders.flat(table["color"])}
    ds = Dataset(table, quasi_identifiers=["age", "zip", "color"], sensitive=["s", "s2"],
                 hierarchies=hierarchies)
    heights = [ds.generalizations[q].height for q in ds.quasi_identifiers]
    lo = [draw(st.integers(0, h)) for h in heights]
    hi = [draw(st.integers(a, h)) for a, h in zip(lo, heights)]
    return table, hierarchies, ds, lo, hi


def _generalized_labels(table: pd.DataFrame, hierarchies, qis, levels) -> pd.DataFrame:
    """Generalize every QI by looking its value up in the hierarchy rows (independent of veil's LUTs)."""
    out = {}
    for q, lv in zip(qis, levels):
        lookup = {row[0]: row[lv] for row in hierarchies[q].rows()}
        out[q] = table[q].astype(str).map(lookup)
    return pd.DataFrame(out)


@SETTINGS
@given(generalizable_tables())
def test_roll_up_equals_classes_built_at_the_target_node(case):
    table, hierarchies, ds, lo, hi = case
    lower = EquivalenceClasses.from_dataset(ds, lo)
    rolled = lower.roll_up(hi)
    direct = EquivalenceClasses.from_dataset(ds, hi)
    assert rolled.levels == direct.levels == tuple(hi)
    # The same classes, as sets of rows.
    assert _partition(rolled.row_class) == _partition(direct.row_class)
    m = _match(direct.row_class, rolled.row_class)
    assert rolled.n_classes == direct.n_classes
    np.testing.assert_array_equal(rolled.sizes[m], direct.sizes)
    np.testing.assert_array_equal(rolled.keys[m], direct.keys)
    for name in ("s", "s2"):
        np.testing.assert_array_equal(rolled.sensitive[name].counts[m], direct.sensitive[name].counts)
        np.testing.assert_array_equal(rolled.sensitive[name].reference, direct.sensitive[name].reference)
    pd.testing.assert_frame_equal(rolled.class_labels().iloc[m].reset_index(drop=True),
                                  direct.class_labels())
    # And both agree with pandas on the generalized labels.
    generalized = _generalized_labels(table, hierarchies, ds.quasi_identifiers, hi)
    expected = generalized.groupby(list(generalized.columns), sort=False).ngroup().to_numpy()
    assert _partition(expected) == _partition(direct.row_class)
    labels = direct.class_labels()
    for q in ds.quasi_identifiers:
        np.testing.assert_array_equal(labels[q].to_numpy()[direct.row_class], generalized[q].to_numpy())


@SETTINGS
@given(generalizable_tables())
def test_roll_up_in_two_steps_equals_one_step(case):
    _, _, ds, lo, hi = case
    mid = [(a + b) // 2 for a, b in zip(lo, hi)]
    base = EquivalenceClasses.from_dataset(ds, lo)
    two = base.roll_up(mid).roll_up(hi)
    one = base.roll_up(hi)
    assert _partition(two.row_class) == _partition(one.row_class)
    m = _match(one.row_class, two.row_class)
    np.testing.assert_array_equal(two.sizes[m], one.sizes)
    np.testing.assert_array_equal(two.sensitive["s"].counts[m], one.sensitive["s"].counts)


def test_roll_up_by_hand():
    table = pd.DataFrame({"age": [21, 23, 27, 34, 36, 21], "s": ["a", "b", "a", "c", "c", "c"]})
    ds = Dataset(table, quasi_identifiers="age", sensitive="s",
                 hierarchies={"age": builders.intervals(table["age"], [5, 10])})
    leaf = EquivalenceClasses.from_dataset(ds)
    assert leaf.n_classes == 5
    rolled = leaf.roll_up({"age": 2})  # 20-29, 30-39
    assert rolled.class_labels()["age"].tolist() == ["20-29", "30-39"]
    np.testing.assert_array_equal(rolled.sizes, [4, 2])
    # columns of the count matrix: a, b, c
    np.testing.assert_array_equal(rolled.sensitive["s"].counts, [[2, 1, 1], [0, 0, 2]])
    np.testing.assert_array_equal(rolled.row_class, [0, 0, 0, 1, 1, 0])


def test_classes_of_zip_codes_with_leading_zeros():
    table = pd.DataFrame({"zip": ["02138", "02139", "02141", "01002"], "s": ["a", "b", "a", "b"]})
    ds = Dataset(table, quasi_identifiers="zip", sensitive="s",
                 hierarchies={"zip": builders.masking(table["zip"])})
    ec = EquivalenceClasses.from_dataset(ds, {"zip": 2})
    assert sorted(ec.class_labels()["zip"]) == ["010**", "021**"]
    np.testing.assert_array_equal(sorted(ec.sizes), [1, 3])


# --------------------------------------------------------------------------------------------
# merging classes that print alike, and another reference distribution


def test_members_of_every_kind_of_cell():
    col = Dataset(pd.DataFrame({"x": [1, 2, 3, 4, 5]}), quasi_identifiers=["x"]).column("x")
    labels = np.array(["a", "b"], dtype=object)
    for cells in (Cells.from_codes(col, np.array([0, 1, 0, 1, 1]), labels),
                  Cells.from_sets(col, np.array([0, 2, 5]), np.array([0, 2, 1, 3, 4]), labels)):
        indptr, indices = cells.members()
        assert [indices[indptr[i]:indptr[i + 1]].tolist() for i in range(2)] == [[0, 2], [1, 3, 4]]
    indptr, indices = Cells.from_ranges(col, np.array([0, 3]), np.array([2, 4]), labels).members()
    assert [indices[indptr[i]:indptr[i + 1]].tolist() for i in range(2)] == [[0, 1, 2], [3, 4]]


def _microaggregated(frame: pd.DataFrame, group: np.ndarray, published: dict) -> EquivalenceClasses:
    """Classes as MDAV makes them: one cell per group per column, holding the group's values."""
    ds = Dataset(frame, quasi_identifiers=list(published), sensitive=["s"])
    n_groups = int(group.max()) + 1
    cells = []
    for name, labels in published.items():
        col = ds.column(name)
        pairs = np.unique(group * col.cardinality + col.codes)
        owner, codes = np.divmod(pairs, col.cardinality)
        cells.append(Cells.from_sets(col, np.searchsorted(owner, np.arange(n_groups + 1)), codes,
                                     np.array(labels, dtype=object)))
    keys = np.repeat(np.arange(n_groups)[:, None], len(published), axis=1)
    return EquivalenceClasses.from_partition(ds, group, keys, cells)


def test_classes_that_print_alike_are_merged_with_their_cells_and_counts():
    frame = pd.DataFrame({"age": [30, 31, 40, 41, 29, 30, 50, 52], "sex": list("mmffmmff"),
                          "s": list("abababbb")})
    group = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    # Groups 0 and 2 publish (30, m); group 3 prints like nobody else on age.
    classes = _microaggregated(frame, group, {"age": ["30", "40", "30", "51"], "sex": ["m", "f", "m", "f"]})
    merged, class_of = classes.merge_identical()
    assert class_of.tolist() == [0, 1, 0, 2]
    assert merged.sizes.tolist() == [4, 2, 2]
    assert merged.row_class.tolist() == [0, 0, 1, 1, 0, 0, 2, 2]
    assert merged.counts("s").tolist() == [[2, 2], [1, 1], [0, 2]]
    age = merged.cells(0)
    indptr, indices = age.members()
    covered = [sorted(age.column.labels[indices[indptr[c]:indptr[c + 1]]].tolist()) for c in merged.keys[:, 0]]
    assert covered == [["29", "30", "31"], ["40", "41"], ["50", "52"]]
    assert [age.labels[c] for c in merged.keys[:, 0]] == ["30", "40", "51"]
    assert merged.class_labels()[["age", "sex", "size"]].values.tolist() == \
        [["30", "m", 4], ["40", "f", 2], ["51", "f", 2]]
    # Suppressed classes are not published, so they never merge.
    kept, class_of = classes.merge_identical(keep=np.array([True, True, False, True]))
    assert kept is classes and class_of.tolist() == [0, 1, 2, 3]


def test_classes_that_print_differently_are_returned_unchanged():
    ds = Dataset(pd.DataFrame({"a": [1, 1, 2], "b": list("xyx")}), quasi_identifiers=["a", "b"])
    classes = EquivalenceClasses.from_dataset(ds)
    merged, class_of = classes.merge_identical()
    assert merged is classes and class_of.tolist() == [0, 1, 2]


def test_hierarchy_cells_with_one_label_merge_and_lose_their_level():
    ds = Dataset(pd.DataFrame({"a": list("xyzx")}), quasi_identifiers=["a"])
    col = ds.column("a")
    # x and y are different cells that print alike.
    cells = [Cells.from_codes(col, np.array([0, 1, 2]), np.array(["v", "v", "w"], dtype=object), level=1,
                              height=2)]
    classes = EquivalenceClasses.from_partition(ds, np.array([0, 1, 2, 0]), np.array([[0], [1], [2]]), cells)
    merged, class_of = classes.merge_identical()
    assert class_of.tolist() == [0, 0, 1] and merged.sizes.tolist() == [3, 1]
    assert merged.cells(0).level is None
    assert merged.cells(0).coverage().tolist() == [2, 1]


def test_printed_as_marks_classes_whose_every_cell_prints_the_text():
    ds = Dataset(pd.DataFrame({"a": ["1", "2", "*"], "b": ["*", "x", "*"]}), quasi_identifiers=["a", "b"])
    classes = EquivalenceClasses.from_dataset(ds)
    assert classes.class_labels()[["a", "b"]].values[classes.printed_as("*")].tolist() == [["*", "*"]]


def test_with_reference_compares_with_the_given_distribution():
    frame = pd.DataFrame({"q": ["a", "a", "b", "b"], "s": [1, 2, 2, 3]})
    ds = Dataset(frame, quasi_identifiers=["q"], sensitive=["s"])
    classes = EquivalenceClasses.from_dataset(ds)
    # The reference also holds the value 4, which no released record holds.
    ref = classes.with_reference({"s": {"1": 1, "2": 2, "3": 1, "4": 4}, "other": {"x": 1}})
    sc = ref.sensitive["s"]
    assert sc.column.labels.tolist() == ["1", "2", "3", "4"]
    assert sc.reference.tolist() == [1, 2, 1, 4]
    assert sc.counts.tolist() == [[1, 1, 0, 0], [0, 1, 1, 0]]
    assert sc.ordered
    assert classes.sensitive["s"].reference.tolist() == [1, 2, 1]  # the original is untouched
    assert ref.sizes is classes.sizes


@pytest.mark.parametrize("reference, words", [
    ({"s": {"1": 1, "2": 2}}, ["'3'", "missing from the reference"]),
    ({"s": {"1": 1, "2": 0, "3": 1}}, ["whole number"]),
    ({"s": {"1": 1.5, "2": 1, "3": 1}}, ["whole number"]),
    ({"s": ["1", "2"]}, ["map each value"]),
    (["s"], ["per sensitive column"]),
])
def test_with_reference_refuses_a_reference_that_cannot_be_one(reference, words):
    ds = Dataset(pd.DataFrame({"q": ["a", "b", "b"], "s": [1, 2, 3]}), quasi_identifiers=["q"], sensitive=["s"])
    classes = EquivalenceClasses.from_dataset(ds)
    one_sentence_error(DataError, lambda: classes.with_reference(reference), *words)
