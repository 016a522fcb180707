"""Dictionary encoding of one column (veil.data.encoding)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.data.encoding import (MISSING_LABEL, canonical_number, canonical_numeric_texts,
                                encode_column, parse_numbers, stray_texts)
from veil.errors import ColumnError, VeilError

FAST = settings(max_examples=80, deadline=None)


def decoded(col) -> list[str]:
    """The text of every row, read back through the dictionary."""
    return [str(x) for x in col.labels[col.codes]]


def text_form(value) -> str:
    """What a cell looks like as text; every missing value reads as ''."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING_LABEL
    return str(value)


def assert_well_formed(col, n_rows: int) -> None:
    assert col.codes.dtype == np.int32
    assert col.codes.shape == (n_rows,)
    assert col.cardinality == len(col.labels)
    if n_rows:
        assert 0 <= col.codes.min() and col.codes.max() < col.cardinality
    # each category appears in the data and has its own label
    assert set(col.codes.tolist()) == set(range(col.cardinality))
    assert len(set(col.labels.tolist())) == col.cardinality, f"two categories share a label: {col.labels}"
    if col.missing_code is not None:
        assert col.missing_code == col.cardinality - 1
        assert col.labels[col.missing_code] == MISSING_LABEL
    else:
        assert MISSING_LABEL not in col.labels.tolist()


# --------------------------------------------------------------------------- properties

cells = st.one_of(
    st.text(max_size=6),
    st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
    st.none(),
)


@FAST
@given(st.lists(cells, max_size=40))
def test_labels_at_codes_reproduce_every_cell(values):
    col = encode_column("x", pd.Series(values, dtype=object))
    assert decoded(col) == [text_form(v) for v in values]
    assert_well_formed(col, len(values))
    missing = any(text_form(v) == "" for v in values)
    assert (col.missing_code is not None) == missing


@FAST
@given(st.lists(st.one_of(st.integers(-10**6, 10**6), st.none()), min_size=1, max_size=40)
       .filter(lambda v: any(x is not None for x in v)))
def test_integer_codes_follow_numeric_order(values):
    col = encode_column("x", pd.Series(values, dtype=object))
    assert decoded(col) == [text_form(v) for v in values]
    present = [v for v in values if v is not None]
    expected = [str(v) for v in sorted(set(present))] + ([""] if None in values else [])
    assert col.labels.tolist() == expected
    assert col.is_numeric and col.ordered
    # a smaller value always gets a smaller code
    for a, ca in zip(values, col.codes):
        for b, cb in zip(values, col.codes):
            if a is not None and b is not None and a < b:
                assert ca < cb


@FAST
@given(st.lists(st.one_of(st.text(min_size=1, max_size=5).map(lambda s: "k" + s), st.none()),
                min_size=1, max_size=40))
def test_text_codes_follow_text_order(values):
    # the "k" prefix keeps the values from parsing as numbers
    col = encode_column("x", pd.Series(values, dtype=object))
    assert decoded(col) == [text_form(v) for v in values]
    present = sorted({v for v in values if v is not None})
    assert col.labels.tolist() == present + ([""] if None in values else [])
    assert not col.ordered and not col.is_numeric


@FAST
@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=False, width=32), st.none()),
                min_size=1, max_size=30))
def test_float_labels_are_canonical_numbers(values):
    col = encode_column("x", pd.Series(values, dtype=float))
    expected = ["" if v is None or math.isnan(v) else canonical_number(v) for v in values]
    assert decoded(col) == expected
    numbers = [float(x) for x in col.labels.tolist() if x != ""]
    assert numbers == sorted(numbers)


# --------------------------------------------------------------------------- numbers

def test_canonical_number():
    assert canonical_number(25.0) == "25"
    assert canonical_number(25) == "25"
    assert canonical_number(-3.0) == "-3"
    assert canonical_number(2.5) == "2.5"
    assert canonical_number(0.1) == "0.1"
    assert canonical_number(float("inf")) == "inf"


number_like = st.one_of(
    st.text(alphabet="0123456789+-.eE _\t\n\x0b\x0c\r\xa0infaINFAy\u0661", max_size=12),
    st.from_regex(r"\A\s?[+-]?([0-9]{1,25}\.?[0-9]{0,25}|\.[0-9]{1,25})([eE][+-]?[0-9]{1,4})?\s?\Z"),
    st.floats(allow_nan=False).map(repr),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(number_like, max_size=20))
def test_parse_numbers_reads_what_pandas_reads(texts):
    # A text is a number exactly where pandas.to_numeric says so; its value is the correctly
    # rounded one, float()'s (pandas slips by an ulp on some signed integers beyond 2**53).
    ours = parse_numbers(np.array(texts, dtype=object))
    theirs = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=float)
    assert np.array_equal(np.isfinite(ours), np.isfinite(theirs))
    finite = np.flatnonzero(np.isfinite(theirs))
    assert ours[finite].tolist() == [float(texts[i]) for i in finite]


def test_parse_numbers_takes_null_cells_and_arrow_arrays():
    out = parse_numbers(np.array([" 25 ", None, np.nan, "x", "1e400", "1_000"], dtype=object))
    assert out[0] == 25 and np.isnan(out[1:4]).all() and out[4] == np.inf and np.isnan(out[5])
    assert parse_numbers(pa.array(["3.5", None])).tolist()[0] == 3.5
    assert np.isnan(parse_numbers(pa.array(["3.5", None]))[1])


def test_canonical_numeric_texts_rewrites_only_numbers():
    out = canonical_numeric_texts(np.array(["25.0", "25", "0-4", "*", "3.50", "abc"], dtype=object))
    assert out.tolist() == ["25", "25", "0-4", "*", "3.5", "abc"]


def test_25_and_25_point_0_in_a_float_column_are_one_category_labelled_25():
    col = encode_column("age", pd.Series([25.0, 25, 3.5, np.nan, 40.0]))
    assert col.labels.tolist() == ["3.5", "25", "40", ""]
    assert col.codes.tolist() == [1, 1, 0, 3, 2]
    assert col.missing_code == 3
    assert col.is_numeric and col.ordered
    np.testing.assert_array_equal(col.numeric[:3], [3.5, 25.0, 40.0])
    assert np.isnan(col.numeric[3])


def test_integer_valued_floats_read_like_integers():
    ints = encode_column("a", pd.Series([30, 25, 30]))
    floats = encode_column("a", pd.Series([30.0, 25.0, 30.0]))
    assert ints.labels.tolist() == floats.labels.tolist() == ["25", "30"]
    assert ints.codes.tolist() == floats.codes.tolist() == [1, 0, 1]


def test_numeric_text_uses_numeric_order():
    # CSV cells arrive as text; "9" < "10" < "100" numerically, not as text
    col = encode_column("age", pa.chunked_array([pa.array(["10", "9", "100", "9"])]))
    assert col.labels.tolist() == ["9", "10", "100"]
    assert col.codes.tolist() == [1, 0, 2, 0]
    assert col.is_numeric and col.ordered


def test_text_uses_code_point_order():
    col = encode_column("x", pd.Series(["b", "B", "a", "é", "10"]))
    assert col.labels.tolist() == ["10", "B", "a", "b", "é"]
    assert col.codes.tolist() == [3, 1, 2, 4, 0]
    assert not col.ordered and col.numeric is None


def test_a_non_numeric_text_makes_the_column_text():
    col = encode_column("x", pd.Series(["10", "9", "x"]))
    assert col.labels.tolist() == ["10", "9", "x"]
    assert not col.is_numeric


def test_large_integers_keep_their_exact_text():
    values = [2**53 + 1, 2**53, 10**17 + 3, 5]
    col = encode_column("id", pd.Series(values, dtype="int64"))
    assert decoded(col) == [str(v) for v in values]
    assert col.labels.tolist() == ["5", str(2**53), str(2**53 + 1), str(10**17 + 3)]


def test_integers_beyond_int64_are_encoded_as_text():
    values = [2**70, 1]
    col = encode_column("id", pd.Series(values, dtype=object))
    assert decoded(col) == [str(v) for v in values]


def test_negative_zero_is_zero():
    col = encode_column("x", pd.Series([-0.0, 0.0, 1.5]))
    assert col.labels.tolist() == ["0", "1.5"]
    assert col.codes.tolist() == [0, 0, 1]


# --------------------------------------------------------------------------- ordinal columns

def test_given_order_sets_the_codes():
    col = encode_column("size", pd.Series(["lo", "hi", "mid", None, "lo"]), order=["lo", "mid", "hi"])
    assert col.labels.tolist() == ["lo", "mid", "hi", ""]
    assert col.codes.tolist() == [0, 2, 1, 3, 0]
    assert col.ordered and col.missing_code == 3


def test_given_order_may_list_values_that_do_not_occur():
    col = encode_column("size", pd.Series(["hi", "lo"]), order=["lo", "mid", "hi", "max"])
    assert col.labels.tolist() == ["lo", "hi"]
    assert col.codes.tolist() == [1, 0]


def test_given_order_overrides_numeric_order():
    col = encode_column("n", pd.Series([30, 25, 30]), order=["30", "25"])
    assert col.labels.tolist() == ["30", "25"]
    assert col.codes.tolist() == [0, 1, 0]


def test_order_that_misses_a_value_is_a_column_error():
    with pytest.raises(ColumnError) as info:
        encode_column("size", pd.Series(["lo", "hi", "huge"]), order=["lo", "hi"])
    msg = str(info.value)
    assert "'size'" in msg and "'huge'" in msg and "order" in msg
    assert isinstance(info.value, VeilError)


# --------------------------------------------------------------------------- missing values

def test_none_nan_empty_and_custom_markers_form_one_last_category():
    values = ["a", None, "", "NULL", "b", np.nan]
    col = encode_column("x", pd.Series(values, dtype=object), missing_values=("", "NULL"))
    assert col.labels.tolist() == ["a", "b", ""]
    assert col.codes.tolist() == [0, 2, 2, 2, 1, 2]
    assert col.missing_code == 2
    assert col.counts().tolist() == [1, 1, 4]


def test_missing_does_not_spoil_numeric_order_of_text():
    col = encode_column("n", pa.chunked_array([pa.array(["10", "NULL", "9", ""])]),
                        missing_values=("", "NULL"))
    assert col.labels.tolist() == ["9", "10", ""]
    assert col.codes.tolist() == [1, 2, 0, 2]
    assert col.is_numeric
    assert np.isnan(col.numeric[-1])


def test_null_text_is_a_value_unless_declared_missing():
    col = encode_column("x", pd.Series(["a", "NULL"]))
    assert col.labels.tolist() == ["NULL", "a"]
    assert col.missing_code is None


def test_empty_cell_is_missing_even_with_custom_markers():
    col = encode_column("x", pd.Series(["a", "", "NULL", None], dtype=object), missing_values=("NULL",))
    assert col.labels.tolist() == ["a", ""]
    assert col.codes.tolist() == [0, 1, 1, 1]


def test_nan_and_none_in_a_float_column_are_one_category():
    col = encode_column("x", pd.Series([1.0, np.nan, None, 2.0]))
    assert col.labels.tolist() == ["1", "2", ""]
    assert col.codes.tolist() == [0, 2, 2, 1]


def test_polars_null_and_nan_are_one_category():
    col = encode_column("x", pl.Series([25.0, None, float("nan"), 3.5]))
    assert col.labels.tolist() == ["3.5", "25", ""]
    assert col.codes.tolist() == [1, 2, 2, 0]


def test_all_missing_column():
    col = encode_column("x", pd.Series([None, None], dtype=object))
    assert col.labels.tolist() == [""]
    assert col.codes.tolist() == [0, 0]
    assert col.missing_code == 0


def test_nothing_missing_means_no_missing_code():
    col = encode_column("x", pd.Series(["a", "b"]))
    assert col.missing_code is None
    assert col.counts().tolist() == [1, 1]


def test_empty_column():
    col = encode_column("x", pd.Series([], dtype=object))
    assert col.cardinality == 0 and len(col.codes) == 0


# --------------------------------------------------------------------------- same result from any source

TEXT = ["b", None, "a", "b", "c"]
INTS = [30, None, 25, 30, 40]


@pytest.mark.parametrize("make", [
    lambda v: pd.Series(v, dtype=object),
    lambda v: pd.Series(v, dtype="string"),
    lambda v: pd.Series(v, dtype="category"),
    lambda v: pl.Series(v),
    lambda v: pl.Series(v, dtype=pl.Categorical),
    lambda v: pa.array(v),
    lambda v: pa.chunked_array([pa.array(v[:2]), pa.array(v[2:])]),
    lambda v: np.array(v, dtype=object),
], ids=["pandas-object", "pandas-string", "pandas-category", "polars", "polars-categorical",
        "arrow", "arrow-chunked", "numpy-object"])
def test_text_column_encodes_the_same_from_every_source(make):
    col = encode_column("x", make(TEXT))
    assert col.labels.tolist() == ["a", "b", "c", ""]
    assert col.codes.tolist() == [1, 3, 0, 1, 2]


@pytest.mark.parametrize("make", [
    lambda v: pd.Series(v, dtype=object),
    lambda v: pd.Series(v, dtype="Int64"),
    lambda v: pd.Series([np.nan if x is None else float(x) for x in v]),
    lambda v: pl.Series(v),
    lambda v: pl.Series(v, dtype=pl.Float64),
    lambda v: pa.array(v),
    lambda v: pa.chunked_array([pa.array(v[:3]), pa.array(v[3:])]),
    lambda v: pa.chunked_array([pa.array(["" if x is None else str(x) for x in v])]),
], ids=["pandas-object", "pandas-Int64", "pandas-float", "polars-int", "polars-float", "arrow",
        "arrow-chunked", "csv-text"])
def test_integer_column_encodes_the_same_from_every_source(make):
    col = encode_column("x", make(INTS))
    assert col.labels.tolist() == ["25", "30", "40", ""]
    assert col.codes.tolist() == [1, 3, 0, 1, 2]
    assert col.is_numeric


def dictionary_chunks(values: list, unused: list) -> pa.ChunkedArray:
    """``values`` dictionary-encoded in two chunks with dictionaries of their own, each listing
    ``unused`` values too (and the first listing one value twice)."""
    chunks = []
    for part in (values[: len(values) // 2], values[len(values) // 2:]):
        dictionary = list(dict.fromkeys([v for v in part if v is not None])) + unused
        if dictionary:
            dictionary.append(dictionary[0])
        position = {v: i for i, v in enumerate(dictionary)}
        indices = pa.array([None if v is None else position[v] for v in part], type=pa.int8())
        chunks.append(pa.DictionaryArray.from_arrays(indices, pa.array(dictionary, type=pa.string())))
    return pa.chunked_array(chunks)


@FAST
@given(st.lists(st.one_of(st.sampled_from(["b", "a", "10", "9", "", "NULL", "é"]), st.none()), min_size=1,
                max_size=30),
       st.lists(st.sampled_from(["zz", "a", "11"]), max_size=2, unique=True))
def test_a_dictionary_encoded_column_encodes_as_its_values_do(values, unused):
    given_codes = encode_column("x", dictionary_chunks(values, unused), missing_values=("", "NULL"))
    plain = encode_column("x", pa.chunked_array([pa.array(values, type=pa.string())]), missing_values=("", "NULL"))
    assert given_codes.labels.tolist() == plain.labels.tolist()
    assert given_codes.codes.tolist() == plain.codes.tolist()
    assert given_codes.missing_code == plain.missing_code and given_codes.ordered == plain.ordered
    assert (given_codes.numeric is None) == (plain.numeric is None)


def test_chunks_introducing_new_values_share_one_dictionary():
    arr = pa.chunked_array([pa.array(["b", None, "a"]), pa.array(["c", "a", ""]), pa.array(["z"])])
    col = encode_column("x", arr)
    assert col.labels.tolist() == ["a", "b", "c", "z", ""]
    assert col.codes.tolist() == [1, 4, 0, 2, 0, 4, 3]


def test_input_series_is_not_modified():
    s = pd.Series(["b", None, "NULL", "a"], dtype=object)
    before = s.copy()
    encode_column("x", s, missing_values=("", "NULL"))
    pd.testing.assert_series_equal(s, before)
    p = pl.Series([1.0, None, float("nan")])
    p_before = p.clone()
    encode_column("x", p)
    assert p.equals(p_before)


def test_plain_list_with_mixed_types():
    col = encode_column("x", ["a", 1, None])
    assert col.labels.tolist() == ["1", "a", ""]
    assert col.codes.tolist() == [1, 0, 2]


# --------------------------------------------------------------------------- numbers with stray text

@pytest.mark.parametrize("values, expected", [
    ([str(a) for a in range(20, 60)] + ["unknown"] * 2 + ["n/a"], {"unknown": 2, "n/a": 1}),
    (["30", "40", "", "unknown"], {"unknown": 1}),              # missing cells are not stray text
    ([30, 40, 50], {}),                                         # numeric
    (["a", "b", "c", "1", "2"], {}),                            # mostly text
    (["1", "x", "y"], {}),                                      # a single number
    ([str(i) for i in range(10)] + list("abcdef"), {}),         # six distinct texts: too many
    (["1", "2"] * 3 + ["x"] * 7, {}),                           # the texts hold more records
])
def test_stray_texts_in_a_column_of_numbers(values, expected):
    assert stray_texts(encode_column("c", pd.Series(values, dtype=object))) == expected


def test_an_ordered_column_has_no_stray_text():
    column = encode_column("c", pd.Series(["1", "2", "3", "x"]), order=["1", "2", "3", "x"])
    assert stray_texts(column) == {}
