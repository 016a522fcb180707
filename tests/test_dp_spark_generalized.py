"""The driver's half of hierarchy-level keys on Spark (veil.dp.spark_generalized): the tables the
rows are joined with give every value the label the pandas engine gives it. Pure Python (no
Spark): the join is replayed as dictionary look-ups, the way the Spark plan matches values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.data.hierarchy import Hierarchy
from veil.dp.public_keys import PublicKeys, _generalized_index
from veil.dp.spark_generalized import leaf_tables

BIG = 2**53
# whole numbers where floats are exact, where they are not, and at the ends of a long
WHOLES = st.one_of(st.integers(-300, 300), st.integers(BIG - 4, BIG + 6), st.integers(-BIG - 6, -BIG + 4),
                   st.integers(2**62 - 3000, 2**62 + 3000), st.sampled_from([2**63 - 1, -2**63, 10**18]))
FLOATS = st.one_of(st.floats(allow_nan=False, width=64), st.integers(-300, 300).map(lambda n: n / 4),
                   WHOLES.map(float))


def _spellings(number) -> list[str]:
    """Ways a hierarchy file may write ``number``."""
    f = float(number)
    out = [str(number), repr(f), f"{f:.6e}", f" {number}", f"{f:.2f}"]
    if isinstance(number, int):
        out += [f"+{number}", f"{number}.0", f"{number}.50"]
    return out


@st.composite
def hierarchies(draw, numbers):
    # one spelling per number: many spellings of one number would leave the canonical table
    # empty (two leaves of one canonical text), and the pandas engine then matches texts alone
    texts = {draw(st.sampled_from(_spellings(n))) for n in draw(st.lists(numbers, min_size=1, max_size=8))}
    texts |= set(draw(st.lists(st.sampled_from(["NULL", "", "inf", "-inf", "nan", "x", "1_0", "True"]),
                               max_size=3)))
    leaves = sorted(texts)
    labels = [f"L{draw(st.integers(0, 3))}" for _ in leaves]
    table = PublicKeys.from_hierarchy("v", Hierarchy(list(zip(leaves, labels)), name="h"), 1).generalized["v"]
    return table


def _replayed_long(table, values):
    pairs, large = leaf_tables(table, "long")
    exact, rounded = dict(pairs), dict(large)
    return [exact.get(v, rounded.get(float(v), -1) if abs(v) >= BIG else -1) for v in values]


def _replayed_double(table, values):
    exact = dict(leaf_tables(table, "double")[0])
    return [table["missing"] if math.isnan(v) else exact.get(v, -1) for v in values]


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_whole_numbers_take_the_label_pandas_gives_them(data):
    table = data.draw(hierarchies(WHOLES))
    values = data.draw(st.lists(WHOLES, min_size=1, max_size=30))
    expected = _generalized_index(pd.Series(values, dtype="int64"), table).tolist()
    assert _replayed_long(table, values) == expected


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_floats_take_the_label_pandas_gives_them(data):
    table = data.draw(hierarchies(st.one_of(WHOLES, FLOATS.filter(math.isfinite))))
    # + 0.0: Spark's joins see -0.0 as 0.0 (the module notes)
    values = [v + 0.0 for v in data.draw(st.lists(st.one_of(FLOATS, st.just(math.nan)), min_size=1, max_size=30))]
    expected = _generalized_index(pd.Series(values, dtype="float64"), table).tolist()
    assert _replayed_double(table, values) == expected


def test_text_boolean_and_date_tables_hold_the_leaves_that_read_as_such():
    h = Hierarchy([["a", "A"], ["True", "A"], ["2024-01-02", "B"], ["20240103", "B"], ["NULL", "C"]], name="h")
    table = PublicKeys.from_hierarchy("v", h, 1).generalized["v"]
    assert sorted(leaf_tables(table, "string")[0]) == sorted(table["text"].items())
    assert leaf_tables(table, "boolean")[0] == [(True, 0)]
    import datetime

    dates = dict(leaf_tables(table, "date")[0])
    # the pandas engine matches a date by its text, 2024-01-03 is not "20240103"
    assert dates == {datetime.date(2024, 1, 2): 1}
    assert np.array_equal(leaf_tables(table, "long")[1], [])
