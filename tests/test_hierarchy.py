"""Generalization hierarchies, ARX's hierarchy CSV format, and alignment with data
(veil.data.hierarchy)."""

from __future__ import annotations

import csv
import io
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import veil
from helpers import one_sentence_error, reference_file
from veil.data.encoding import encode_column
from veil.data.hierarchy import Generalization, Hierarchy
from veil.errors import HierarchyError

FAST = settings(max_examples=60, deadline=None)

# file -> (leaves, levels), from the data README
SHIPPED = {
    "adult/adult_hierarchy_sex.csv": (2, 2),
    "adult/adult_hierarchy_age.csv": (100, 5),
    "adult/adult_hierarchy_race.csv": (5, 2),
    "adult/adult_hierarchy_marital-status.csv": (7, 3),
    "adult/adult_hierarchy_education.csv": (16, 4),
    "adult/adult_hierarchy_native-country.csv": (41, 3),
    "adult/adult_hierarchy_workclass.csv": (8, 3),
    "adult/adult_hierarchy_occupation.csv": (14, 3),
    "adult/adult_hierarchy_salary-class.csv": (2, 2),
    "arx-toy/test_hierarchy_age.csv": (100, 3),
    "arx-toy/test_hierarchy_gender.csv": (2, 2),
    "arx-toy/test_hierarchy_zipcode.csv": (10_000, 6),
    "arx-toy/test2_hierarchy_Age.csv": (9, 3),
    "arx-toy/test2_hierarchy_Disease.csv": (6, 4),
    "arx-toy/test2_hierarchy_ZIPCode.csv": (9, 6),
}
# These three files have no line break after their last row; a writer that ends every row
# with the terminator cannot reproduce them byte for byte.
NO_FINAL_NEWLINE = {"adult/adult_hierarchy_native-country.csv", "arx-toy/test2_hierarchy_Age.csv",
                    "arx-toy/test2_hierarchy_Disease.csv", "arx-toy/test2_hierarchy_ZIPCode.csv"}


def hierarchy_error(call, *words) -> str:
    return one_sentence_error(HierarchyError, call, *words)


def line_terminator(raw: bytes) -> str:
    return "\r\n" if b"\r\n" in raw else "\n"


def parse_by_hand(raw: bytes) -> list[list[str]]:
    """The shipped files have no quoting: split lines, then split on ';'."""
    return [line.split(";") for line in raw.decode("utf-8").splitlines() if line]


# --------------------------------------------------------------------------- shipped files

@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_read_shipped_hierarchy(name):
    path = reference_file(name)
    raw = path.read_bytes()
    h = Hierarchy.read_csv(path)
    leaves, levels = SHIPPED[name]
    assert len(h.leaves) == leaves
    assert h.levels == levels and h.height == levels - 1
    assert h.rows() == parse_by_hand(raw)
    assert h.codes.shape == (leaves, levels) and h.codes.dtype == np.int32
    assert Path(name).name in h.name


def test_shipped_rows_spot_checks():
    age = Hierarchy.read_csv(reference_file("adult/adult_hierarchy_age.csv"))
    assert age.rows()[0] == ["1", "0-4", "0-9", "0-19", "*"]
    assert age.level_labels[4].tolist() == ["*"]
    edu = {r[0]: r for r in Hierarchy.read_csv(reference_file("adult/adult_hierarchy_education.csv")).rows()}
    assert edu["Bachelors"] == ["Bachelors", "Undergraduate", "Higher education", "*"]
    zips = {r[0]: r for r in Hierarchy.read_csv(reference_file("arx-toy/test_hierarchy_zipcode.csv")).rows()}
    assert zips["81667"] == ["81667", "8166*", "816**", "81***", "8****", "*"]
    disease = Hierarchy.read_csv(reference_file("arx-toy/test2_hierarchy_Disease.csv"))
    assert disease.level_labels[3].tolist() == ["respiratory&digestive disease"]
    assert sorted(disease.level_labels[2].tolist()) == ["digestive system disease", "vascular lung disease"]
    age2 = {r[0]: r for r in Hierarchy.read_csv(reference_file("arx-toy/test2_hierarchy_Age.csv")).rows()}
    assert age2["29"] == ["29", "[20,30[", "*"]


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_write_shipped_hierarchy_byte_for_byte(tmp_path, name):
    raw = reference_file(name).read_bytes()
    out = tmp_path / "out.csv"
    Hierarchy.read_csv(reference_file(name)).to_csv(out, newline=line_terminator(raw))
    assert out.read_bytes() == raw


def test_arx_toy_hierarchies_use_crlf(tmp_path):
    path = reference_file("arx-toy/test_hierarchy_gender.csv")
    raw = path.read_bytes()
    assert raw.count(b"\r\n") == 2
    # By default the file's own line endings are kept; an explicit newline overrides them.
    Hierarchy.read_csv(path).to_csv(tmp_path / "g.csv")
    assert (tmp_path / "g.csv").read_bytes() == raw
    Hierarchy.read_csv(path).to_csv(tmp_path / "g2.csv", newline="\n")
    assert (tmp_path / "g2.csv").read_bytes() == raw.replace(b"\r\n", b"\n")


# --------------------------------------------------------------------------- random trees

LABEL = st.text(alphabet="ab*;,\" 01-é\t", min_size=1, max_size=4)


@st.composite
def trees(draw, max_leaves=8, max_levels=4):
    """Rows of a valid hierarchy: unique leaves, each node one parent at the next level."""
    levels = draw(st.integers(1, max_levels))
    n = draw(st.integers(1, max_leaves))
    rows = [[leaf] for leaf in draw(st.lists(LABEL, min_size=n, max_size=n, unique=True))]
    node_of = list(range(n))
    n_nodes = n
    for _ in range(1, levels):
        m = draw(st.integers(1, n_nodes))
        parent = draw(st.lists(st.integers(0, m - 1), min_size=n_nodes, max_size=n_nodes))
        names = draw(st.lists(LABEL, min_size=m, max_size=m, unique=True))
        for row, node in zip(rows, node_of):
            row.append(names[parent[node]])
        node_of = [parent[node] for node in node_of]
        n_nodes = m
    return rows


@FAST
@given(trees(), st.sampled_from(["\n", "\r\n"]))
def test_roundtrip_random_tree(rows, newline):
    h = Hierarchy(rows, name="random")
    assert h.rows() == rows
    with tempfile.TemporaryDirectory() as tmp:
        first, second = Path(tmp) / "a.csv", Path(tmp) / "b.csv"
        h.to_csv(first, newline=newline)
        back = Hierarchy.read_csv(first)
        assert back.rows() == rows
        back.to_csv(second, newline=newline)
        assert first.read_bytes() == second.read_bytes()
        # what was written is ARX's format: ';'-separated, one row per leaf, no header
        parsed = list(csv.reader(io.StringIO(first.read_text(encoding="utf-8"), newline=""), delimiter=";"))
        assert parsed == rows


@FAST
@given(trees())
def test_codes_decode_to_the_rows(rows):
    h = Hierarchy(rows)
    for i, row in enumerate(rows):
        assert [h.level_labels[L][h.codes[i, L]] for L in range(h.levels)] == row
    for L in range(h.levels):
        assert len(set(h.level_labels[L].tolist())) == len(h.level_labels[L])


@pytest.mark.parametrize("label", ["\r", "x\r\ny", "a\rb"], ids=["CR", "CRLF-inside", "CR-inside"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["LF", "CRLF"])
def test_roundtrip_labels_with_line_breaks(tmp_path, label, newline):
    rows = [[label, "*"], ["plain", "*"]]
    Hierarchy(rows).to_csv(tmp_path / "h.csv", newline=newline)
    assert Hierarchy.read_csv(tmp_path / "h.csv").rows() == rows


def test_roundtrip_label_with_a_quoted_lf(tmp_path):
    rows = [["a\nb", "*"], ["c", "*"]]
    Hierarchy(rows).to_csv(tmp_path / "h.csv")
    assert (tmp_path / "h.csv").read_bytes() == b'"a\nb";*\nc;*\n'
    assert Hierarchy.read_csv(tmp_path / "h.csv").rows() == rows


def test_other_delimiter(tmp_path):
    h = Hierarchy([["a,b", "x"], ["c", "x"]])
    h.to_csv(tmp_path / "h.csv", delimiter=",")
    assert (tmp_path / "h.csv").read_text() == '"a,b",x\nc,x\n'
    assert Hierarchy.read_csv(tmp_path / "h.csv", delimiter=",").rows() == [["a,b", "x"], ["c", "x"]]


def test_read_skips_blank_lines_and_bom(tmp_path):
    path = tmp_path / "h.csv"
    path.write_bytes(b"\xef\xbb\xbfa;x\r\n\r\nb;x\r\n")
    assert Hierarchy.read_csv(path).rows() == [["a", "x"], ["b", "x"]]


def test_single_level_hierarchy():
    h = Hierarchy([["a"], ["b"]])
    assert h.levels == 1 and h.height == 0
    assert h.leaves.tolist() == ["a", "b"]


# --------------------------------------------------------------------------- validation

def test_rows_of_unequal_width_name_the_row():
    hierarchy_error(lambda: Hierarchy([["a", "x", "*"], ["b", "x", "*"], ["c", "*"]], name="h.csv"),
                    "h.csv", "row 3", "2 values", "3")


def test_ragged_file_names_the_file_and_row(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_bytes(b"a;x;*\r\nb;x\r\n")
    hierarchy_error(lambda: Hierarchy.read_csv(path), "ragged.csv", "row 2")


def test_leaf_listed_twice():
    hierarchy_error(lambda: Hierarchy([["a", "x"], ["b", "x"], ["a", "x"]]), "'a'", "twice")


def test_leaf_listed_twice_with_different_parents():
    hierarchy_error(lambda: Hierarchy([["a", "x"], ["a", "y"]]), "'a'", "twice")


def test_value_with_two_parents_names_value_and_both_parents():
    rows = [["a", "X", "P", "*"], ["b", "X", "Q", "*"], ["c", "Y", "Q", "*"]]
    msg = hierarchy_error(lambda: Hierarchy(rows, name="hier"), "hier", "'X'", "'P'", "'Q'", "level 1")
    assert "tree" in msg


def test_two_parents_found_at_a_higher_level():
    rows = [["a", "A", "P", "*"], ["b", "B", "P", "*"], ["c", "C", "Q", "top"], ["d", "D", "Q", "*"]]
    hierarchy_error(lambda: Hierarchy(rows), "'Q'", "'*'", "'top'", "level 2")


def test_no_rows():
    hierarchy_error(lambda: Hierarchy([], name="empty.csv"), "empty.csv", "no rows")


def test_empty_file(tmp_path):
    (tmp_path / "e.csv").write_bytes(b"")
    hierarchy_error(lambda: Hierarchy.read_csv(tmp_path / "e.csv"), "e.csv", "no rows")


def test_missing_file(tmp_path):
    hierarchy_error(lambda: Hierarchy.read_csv(tmp_path / "nope.csv"), "nope.csv", "does not exist")


def test_non_utf8_file(tmp_path):
    (tmp_path / "l.csv").write_bytes("Zürich;*\n".encode("latin-1"))
    hierarchy_error(lambda: Hierarchy.read_csv(tmp_path / "l.csv"), "l.csv", "UTF-8")


def test_folder_instead_of_file(tmp_path):
    hierarchy_error(lambda: Hierarchy.read_csv(tmp_path), str(tmp_path))


# --------------------------------------------------------------------------- alignment with data

def test_value_missing_from_hierarchy_names_the_values():
    frame = pd.DataFrame({"sex": ["Male", "Female", "Other", "Male"]})
    h = Hierarchy([["Male", "*"]], name="sexes")
    msg = hierarchy_error(lambda: veil.Dataset(frame, quasi_identifiers="sex", hierarchies={"sex": h}),
                          "sexes", "'sex'", "'Female'", "'Other'", "2 value")
    assert "'Male'" not in msg


def test_many_uncovered_values_are_abbreviated():
    frame = pd.DataFrame({"n": list(range(20))})
    msg = hierarchy_error(lambda: veil.Dataset(frame, quasi_identifiers="n",
                                               hierarchies={"n": Hierarchy([["0", "*"]])}),
                          "19 value", "'1'", "'5'", "and 14 more")
    assert "'6'" not in msg


def test_hierarchy_file_that_does_not_cover_the_data(tmp_path, toy_frame):
    path = tmp_path / "age.csv"
    path.write_text("34;<50;*\n45;<50;*\n66;>=50;*\n")
    hierarchy_error(lambda: veil.Dataset(toy_frame, quasi_identifiers="age", hierarchies={"age": path}),
                    "age.csv", "'70'")


def test_extra_leaves_are_allowed():
    # Adult's workclass hierarchy lists 'Never-worked', which the data lacks
    frame = pd.DataFrame({"workclass": ["Private", "State-gov", "Private"]})
    ds = veil.Dataset(frame, quasi_identifiers="workclass",
                      hierarchies={"workclass": reference_file("adult/adult_hierarchy_workclass.csv")})
    assert ds.labels("workclass").tolist() == ["Private", "State-gov"]
    gen = ds.generalizations["workclass"]
    lvl1 = gen.labels[1][gen.generalize(ds.column("workclass").codes, 1)]
    assert lvl1.tolist() == ["Non-Government", "Government", "Non-Government"]


def test_pandas_int_column_matches_text_leaves(arx_toy_hierarchy_paths, toy_frame):
    assert toy_frame["age"].dtype == np.int64
    ds = veil.Dataset(toy_frame, quasi_identifiers=["age"], hierarchies={"age": arx_toy_hierarchy_paths["age"]})
    gen = ds.generalizations["age"]
    codes = ds.column("age").codes
    assert gen.labels[1][gen.generalize(codes, 1)].tolist() == ["<50", "<50", ">=50", ">=50", "<50",
                                                                ">=50", "<50"]
    assert gen.labels[2][gen.generalize(codes, 2)].tolist() == ["*"] * 7


def test_zipcode_int_column_matches_text_leaves(arx_toy_hierarchy_paths, toy_frame):
    ds = veil.Dataset(toy_frame, quasi_identifiers=["zipcode"],
                      hierarchies={"zipcode": arx_toy_hierarchy_paths["zipcode"]})
    assert ds.labels("zipcode", 2).tolist()[ds.generalized_codes("zipcode", 2)[0]] == "816**"
    got = ds.labels("zipcode", 3)[ds.generalized_codes("zipcode", 3)].tolist()
    assert got == ["81***"] * 7
    got = ds.labels("zipcode", 1)[ds.generalized_codes("zipcode", 1)].tolist()
    assert got == ["8166*", "8167*", "8192*", "8193*", "8193*", "8193*", "8193*"]


def test_pandas_float_column_matches_text_leaves(arx_toy_hierarchy_paths):
    frame = pd.DataFrame({"age": [34.0, 66.0, np.nan, 45.0]})
    ds = veil.Dataset(frame, quasi_identifiers="age", hierarchies={"age": arx_toy_hierarchy_paths["age"]})
    assert ds.labels("age").tolist() == ["34", "45", "66", ""]
    assert ds.labels("age", 1)[ds.generalized_codes("age", 1)].tolist() == ["<50", ">=50", "", "<50"]
    assert ds.labels("age", 2)[ds.generalized_codes("age", 2)].tolist() == ["*"] * 4


@pytest.mark.parametrize("column", [
    pd.Series([25.0, 30.0, 25.0]),
    pd.Series([25, 30, 25]),
    pd.Series([25, 30, 25], dtype="Int64"),
    pl.Series([25.0, 30.0, 25.0]),
    pa.chunked_array([pa.array(["25", "30", "25"])]),
], ids=["pandas-float", "pandas-int", "pandas-Int64", "polars-float", "csv-text"])
@pytest.mark.parametrize("leaves", [("25", "30"), ("25.0", "30.0")], ids=["leaf-25", "leaf-25.0"])
def test_numbers_match_whatever_their_written_form(column, leaves):
    h = Hierarchy([[leaves[0], "young", "*"], [leaves[1], "old", "*"], ["99", "old", "*"]])
    gen = h.align(encode_column("age", column))
    assert gen.labels[0].tolist() == ["25", "30"]
    assert gen.labels[1][gen.lut[:, 1]].tolist() == ["young", "old"]
    assert gen.lut[:, 2].tolist() == [0, 0]


@pytest.mark.parametrize("cells,leaves", [
    (["25.0", "30.0"], ["25.0", "30.0"]),
    (["02139", "02140"], ["02139", "02140"]),
], ids=["text-25.0", "zip-leading-zero"])
def test_text_cells_match_identical_leaves(cells, leaves):
    col = encode_column("c", pa.chunked_array([pa.array(cells)]))
    gen = Hierarchy([[leaves[0], "x"], [leaves[1], "y"]]).align(col)
    assert gen.labels[1][gen.lut[:, 1]].tolist() == ["x", "y"]


def test_missing_value_uses_a_null_leaf():
    col = encode_column("age", pd.Series([25.0, np.nan, 30.0]))
    gen = Hierarchy([["25", "a", "*"], ["30", "b", "*"], ["NULL", "?", "*"]]).align(col)
    assert gen.labels[0].tolist() == ["25", "30", ""]
    assert gen.labels[1][gen.lut[:, 1]].tolist() == ["a", "b", "?"]
    assert gen.lut[:, 2].tolist() == [0, 0, 0]


def test_missing_value_without_a_leaf_stays_apart_then_joins_the_root():
    col = encode_column("age", pd.Series([25.0, None, 30.0]))
    gen = Hierarchy([["25", "a", "*"], ["30", "b", "*"]]).align(col)
    assert gen.labels[1].tolist() == ["a", "b", ""]
    assert gen.lut.tolist() == [[0, 0, 0], [1, 1, 0], [2, 2, 0]]


def test_missing_value_without_a_leaf_and_several_roots():
    col = encode_column("x", pd.Series(["a", None]))
    gen = Hierarchy([["a", "A"], ["b", "B"]]).align(col)
    assert gen.labels[1].tolist() == ["A", "B", ""]
    assert gen.lut.tolist() == [[0, 0], [1, 2]]


def test_missing_value_joins_a_node_labelled_like_it_and_its_ancestors():
    # Published, the node "" and the missing category print alike: they are one node.
    col = encode_column("x", pd.Series(["a", None, "b", "c"]))
    gen = Hierarchy([["a", "", "p", "*"], ["b", "B", "q", "*"], ["c", "C", "q", "*"]]).align(col)
    assert gen.labels[1].tolist() == ["", "B", "C"]
    assert gen.lut.tolist() == [[0, 0, 0, 0], [1, 1, 1, 0], [2, 2, 1, 0], [3, 0, 0, 0]]
    # Above a level with its own node, the missing category joins the first node labelled "".
    gen = Hierarchy([["a", "A", "", "*"], ["b", "B", "q", "*"], ["c", "C", "q", "*"]]).align(col)
    assert gen.labels[1].tolist() == ["A", "B", "C", ""]
    assert gen.lut[3].tolist() == [3, 3, 0, 0]


def test_missing_value_does_not_count_as_uncovered():
    col = encode_column("x", pd.Series(["a", "", "a"]))
    gen = Hierarchy([["a", "*"]]).align(col)
    assert gen.labels[1][gen.lut[:, 1]].tolist() == ["*", "*"]


# --------------------------------------------------------------------------- Generalization

def test_generalize_adult_equals_file_lookup(adult_csv, adult_hierarchy_paths):
    cols = list(adult_hierarchy_paths)
    ds = veil.Dataset(adult_csv, quasi_identifiers=cols, hierarchies=adult_hierarchy_paths)
    for name in cols:
        by_leaf = {r[0]: r for r in Hierarchy.read_csv(adult_hierarchy_paths[name]).rows()}
        col = ds.column(name)
        gen = ds.generalizations[name]
        values = col.labels[col.codes]
        for level in range(gen.levels):
            expected = np.array([by_leaf[v][level] for v in col.labels], dtype=object)[col.codes]
            got = gen.labels[level][gen.generalize(col.codes, level)]
            assert np.array_equal(got, expected), (name, level)
            assert np.array_equal(ds.labels(name, level)[ds.generalized_codes(name, level)], expected)
        assert np.array_equal(gen.labels[0][gen.generalize(col.codes, 0)], values)


def test_adult_age_spot_checks(adult_csv, adult_hierarchy_paths):
    ds = veil.Dataset(adult_csv, quasi_identifiers="age", hierarchies={"age": adult_hierarchy_paths["age"]})
    first = [ds.labels("age", L)[ds.generalized_codes("age", L)[0]] for L in range(5)]
    assert first == ["39", "35-39", "30-39", "20-39", "*"]  # row 1 is 39 years old
    assert ds.radix("age", 4) == 1
    assert ds.radix("age") == 72


@st.composite
def tree_and_data(draw):
    rows = draw(trees(max_leaves=10))
    leaves = [r[0] for r in rows]
    used = draw(st.lists(st.sampled_from(leaves), min_size=1, max_size=30))
    return rows, used


@FAST
@given(tree_and_data())
def test_generalize_equals_level_lookup(case):
    rows, data = case
    by_leaf = {r[0]: r for r in rows}
    col = encode_column("c", pa.chunked_array([pa.array(data, pa.string())]))
    h = Hierarchy(rows)
    if col.is_numeric:  # leaves that look like numbers are matched in canonical form
        return
    gen = h.align(col)
    assert isinstance(gen, Generalization)
    assert gen.lut.shape == (col.cardinality, h.levels)
    assert gen.lut[:, 0].tolist() == list(range(col.cardinality))
    for level in range(h.levels):
        got = gen.labels[level][gen.generalize(col.codes, level)].tolist()
        assert got == [by_leaf[v][level] for v in data]
        assert gen.radix(level) == len(gen.labels[level])


@FAST
@given(tree_and_data())
def test_level_map_composes(case):
    rows, data = case
    col = encode_column("c", pa.chunked_array([pa.array(data, pa.string())]))
    if col.is_numeric:
        return
    gen = Hierarchy(rows).align(col)
    for a in range(gen.levels):
        assert np.array_equal(gen.level_map(a, a)[gen.lut[:, a]], gen.lut[:, a])
        for b in range(a, gen.levels):
            # mapping the codes at level a lands where generalizing straight to level b does
            assert np.array_equal(gen.level_map(a, b)[gen.generalize(col.codes, a)],
                                  gen.generalize(col.codes, b))
            for c in range(b, gen.levels):
                assert np.array_equal(gen.level_map(a, c)[gen.lut[:, a]],
                                      gen.level_map(b, c)[gen.level_map(a, b)][gen.lut[:, a]])


def test_level_map_by_hand():
    col = encode_column("age", pd.Series([17, 23, 39, 62]))
    gen = Hierarchy.read_csv(reference_file("adult/adult_hierarchy_age.csv")).align(col)
    m01, m12, m02 = gen.level_map(0, 1), gen.level_map(1, 2), gen.level_map(0, 2)
    assert gen.labels[1][m01].tolist() == ["15-19", "20-24", "35-39", "60-64"]
    assert gen.labels[2][m02].tolist() == ["10-19", "20-29", "30-39", "60-69"]
    assert np.array_equal(m02, m12[m01])
    assert np.array_equal(gen.level_map(0, 3), gen.level_map(2, 3)[m12][m01])
    assert gen.labels[4][gen.level_map(0, 4)].tolist() == ["*"] * 4


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_reading_remembers_whether_the_file_ends_with_a_newline(name):
    assert Hierarchy.read_csv(reference_file(name)).final_newline is (name not in NO_FINAL_NEWLINE)
