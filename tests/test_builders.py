"""Hierarchy builders: intervals, masking, dates, flat (veil.data.builders)."""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import veil
from veil.data import builders
from veil.data.encoding import encode_column
from veil.data.hierarchy import Hierarchy
from veil.errors import HierarchyError, ParameterError, VeilError

FAST = settings(max_examples=60, deadline=None)


def raises(exc_type, call, *words) -> str:
    with pytest.raises(exc_type) as info:
        call()
    msg = str(info.value)
    assert isinstance(info.value, VeilError)
    assert "\n" not in msg
    for word in words:
        assert word in msg, f"{word!r} not in {msg!r}"
    return msg


def by_leaf(h: Hierarchy) -> dict[str, list[str]]:
    return {r[0]: r for r in h.rows()}


def assert_covers(h: Hierarchy, values) -> None:
    """Every value has a leaf, and the hierarchy aligns with the encoded column."""
    col = encode_column("c", pd.Series(list(values), dtype=object))
    gen = h.align(col)  # raises HierarchyError when a value is not covered
    assert gen.levels == h.levels


# --------------------------------------------------------------------------- intervals

def test_intervals_adult_like_ages():
    h = builders.intervals([17, 23, 39, 90], [5, 10, 20])
    assert h.levels == 5
    assert h.rows() == [
        ["17", "15-19", "10-19", "0-19", "*"],
        ["23", "20-24", "20-29", "20-39", "*"],
        ["39", "35-39", "30-39", "20-39", "*"],
        ["90", "90-94", "90-99", "80-99", "*"],
    ]


def test_intervals_on_the_adult_age_column(adult_csv):
    ages = pd.read_csv(adult_csv, sep=";", usecols=["age"])["age"]
    h = builders.intervals(ages, [5, 10, 20])
    rows = by_leaf(h)
    assert len(rows) == 72
    assert rows["20"] == ["20", "20-24", "20-29", "20-39", "*"]
    assert rows["17"] == ["17", "15-19", "10-19", "0-19", "*"]
    assert rows["90"] == ["90", "90-94", "90-99", "80-99", "*"]
    ds = veil.Dataset(pd.DataFrame({"age": ages}), quasi_identifiers="age", hierarchies={"age": h})
    assert ds.radix("age", 1) == 16  # 15-19, 20-24, ..., 90-94
    assert ds.radix("age", 3) == 5   # 0-19, 20-39, 40-59, 60-79, 80-99


def test_intervals_with_a_start():
    assert builders.intervals([17, 23], [5, 10], start=15).rows() == [
        ["17", "15-19", "15-24", "*"],
        ["23", "20-24", "15-24", "*"],
    ]


def test_intervals_negative_values():
    assert builders.intervals([-3, 4], [5]).rows() == [["-3", "-5--1", "*"], ["4", "0-4", "*"]]


def test_intervals_of_decimal_data_are_half_open():
    assert builders.intervals([1.5, 2.25], [1, 2]).rows() == [
        ["1.5", "[1,2)", "[0,2)", "*"],
        ["2.25", "[2,3)", "[2,4)", "*"],
    ]
    assert builders.intervals([1, 2], [0.5]).rows() == [["1", "[1,1.5)", "*"], ["2", "[2,2.5)", "*"]]


def test_intervals_custom_top_and_ignores_missing():
    h = builders.intervals(pd.Series([1.0, np.nan, 7.0]), [5], top="any")
    assert h.rows() == [["1", "0-4", "any"], ["7", "5-9", "any"]]


@pytest.mark.parametrize("values,widths,expected", [
    ([0.2, 0.3], [0.1, 0.3], {"0.3": ["0.3", "[0.3,0.4)", "[0.3,0.6)", "*"]}),
    ([0.6], [0.1], {"0.6": ["0.6", "[0.6,0.7)", "*"]}),
    ([0.4, 0.6], [0.2, 0.6], {"0.6": ["0.6", "[0.6,0.8)", "[0.6,1.2)", "*"]}),
], ids=["0.3-two-parents", "0.6-outside-its-band", "0.6-two-parents"])
def test_intervals_with_decimal_widths(values, widths, expected):
    h = builders.intervals(values, widths)
    for leaf, row in expected.items():
        assert by_leaf(h)[leaf] == row


@pytest.mark.parametrize("widths,words", [
    ([5, 7], ["7", "5", "nest"]),
    ([10, 5], ["nest"]),
    ([5, 10, 25], ["25", "10", "nest"]),
    ([0], ["positive"]),
    ([5, -10], ["positive"]),
    ([], ["width"]),
])
def test_intervals_bad_widths(widths, words):
    raises(ParameterError, lambda: builders.intervals([1, 2, 3], widths), *words)


def test_intervals_of_text_is_a_hierarchy_error():
    raises(HierarchyError, lambda: builders.intervals(["1", "abc", "2"], [5]), "'abc'", "number")


def test_intervals_of_nothing():
    raises(HierarchyError, lambda: builders.intervals([], [5]), "no rows")


def band(label: str) -> tuple[int, int]:
    m = re.fullmatch(r"(-?\d+)-(-?\d+)", label)
    assert m, label
    return int(m.group(1)), int(m.group(2))


@FAST
@given(st.lists(st.integers(-500, 500), min_size=1, max_size=40),
       st.integers(1, 9), st.lists(st.integers(1, 4), max_size=3))
def test_interval_bands_have_their_width_and_nest(values, w0, factors):
    widths = [w0]
    for f in factors:
        widths.append(widths[-1] * f)
    h = builders.intervals(values, widths)  # a Hierarchy, so a valid tree
    assert h.levels == len(widths) + 2
    assert_covers(h, values)
    assert sorted(h.leaves.tolist()) == sorted({str(v) for v in values})
    for row in h.rows():
        x = int(row[0])
        outer = None
        for level in range(len(widths), 0, -1):  # from the widest band inwards
            lo, hi = band(row[level])
            assert hi - lo + 1 == widths[level - 1]
            assert lo <= x <= hi
            if outer is not None:
                assert outer[0] <= lo and hi <= outer[1]
            outer = (lo, hi)
            # the default start is a multiple of the widest band, so every band sits on its grid
            assert lo % widths[level - 1] == 0
        assert row[-1] == "*"


# --------------------------------------------------------------------------- masking

def test_masking_from_the_right():
    assert builders.masking(["13053", "13010"]).rows() == [
        ["13010", "1301*", "130**", "13***", "1****", "*"],
        ["13053", "1305*", "130**", "13***", "1****", "*"],
    ]


def test_masking_reproduces_arx_zipcode_hierarchy(arx_toy_hierarchy_paths):
    arx = Hierarchy.read_csv(arx_toy_hierarchy_paths["zipcode"])
    built = builders.masking(range(80000, 90000))
    assert built.rows() == arx.rows()


def test_masking_shorter_values_and_options():
    assert builders.masking(["13053", "7"]).rows() == [
        ["13053", "1305*", "130**", "13***", "1****", "*"],
        ["7", "*", "*", "*", "*", "*"],
    ]
    assert builders.masking(["ab", "ac"], char="#", top="ANY").rows() == [["ab", "a#", "ANY"],
                                                                         ["ac", "a#", "ANY"]]


def test_masking_of_ints_matches_an_int_column():
    zips = pd.Series([81667, 81675, 81925])
    h = builders.masking(zips)
    gen = h.align(encode_column("zip", zips))
    assert gen.labels[2][gen.lut[:, 2]].tolist() == ["816**", "816**", "819**"]


@FAST
@given(st.lists(st.text(alphabet="0123ab", min_size=1, max_size=6), min_size=1, max_size=30))
def test_masking_is_a_covering_tree(values):
    h = builders.masking(values)
    assert sorted(h.leaves.tolist()) == sorted(set(values))
    longest = max(len(v) for v in values)
    assert h.levels == longest + 1
    for row in h.rows():
        t = row[0]
        for level in range(1, h.levels - 1):
            keep = max(len(t) - level, 0)
            assert row[level] == t[:keep] + "*" * (len(t) - keep)
        assert row[-1] == "*"
    # a valid tree: same value at a level -> same value at the next level
    for level in range(h.levels - 1):
        parent = {}
        for row in h.rows():
            assert parent.setdefault(row[level], row[level + 1]) == row[level + 1]


# --------------------------------------------------------------------------- dates

def test_dates_day_month_year_top():
    assert builders.dates(["2024-03-05", "2023-12-31", "2019-01-01"]).rows() == [
        ["2019-01-01", "2019-01", "2019", "*"],
        ["2023-12-31", "2023-12", "2023", "*"],
        ["2024-03-05", "2024-03", "2024", "*"],
    ]


def test_dates_quarter_year_decade():
    assert builders.dates(["2024-03-05", "2023-12-31", "2009-07-01"], ["quarter", "year", "decade"]).rows() == [
        ["2009-07-01", "2009-Q3", "2009", "2000s", "*"],
        ["2023-12-31", "2023-Q4", "2023", "2020s", "*"],
        ["2024-03-05", "2024-Q1", "2024", "2020s", "*"],
    ]


def test_dates_iso_weeks():
    assert builders.dates(["2024-03-05", "2021-01-01", "2024-12-30"], ["week"]).rows() == [
        ["2021-01-01", "2020-W53", "*"],
        ["2024-03-05", "2024-W10", "*"],
        ["2024-12-30", "2025-W01", "*"],
    ]


def test_dates_with_a_format_and_date_objects():
    assert builders.dates(["05/03/2024", "31/12/2023"], format="%d/%m/%Y").rows() == [
        ["05/03/2024", "2024-03", "2024", "*"],
        ["31/12/2023", "2023-12", "2023", "*"],
    ]
    assert builders.dates([dt.date(2024, 3, 5)], ["year"]).rows() == [["2024-03-05", "2024", "*"]]


@pytest.mark.parametrize("units,words", [
    (["fortnight"], ["'fortnight'", "month"]),
    (["year", "month"], ["fine to coarse"]),
    (["month", "month"], ["once"]),
    (["week", "year"], ["week"]),
])
def test_dates_bad_units(units, words):
    raises(ParameterError, lambda: builders.dates(["2024-03-05"], units), *words)


@pytest.mark.parametrize("values,fmt,words", [
    (["2024-03-05", "yesterday"], None, ["'yesterday'", "not a date"]),
    (["2024-02-30"], None, ["'2024-02-30'"]),
    (["2024-03-05"], "%d/%m/%Y", ["'2024-03-05'", "%d/%m/%Y"]),
])
def test_dates_bad_dates(values, fmt, words):
    raises(HierarchyError, lambda: builders.dates(values, format=fmt), *words)


@FAST
@given(st.lists(st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2099, 12, 31)),
                min_size=1, max_size=20),
       st.sampled_from([("month", "year"), ("quarter", "year", "decade"), ("week",), ("year",),
                        ("month", "quarter", "year", "decade")]))
def test_dates_are_a_covering_tree(days, units):
    texts = [d.isoformat() for d in days]
    h = builders.dates(texts, units)
    assert h.levels == len(units) + 2
    assert_covers(h, texts)
    for row in h.rows():
        d = dt.date.fromisoformat(row[0])
        for unit, label in zip(units, row[1:]):
            expected = {"month": f"{d.year}-{d.month:02d}", "year": str(d.year),
                        "quarter": f"{d.year}-Q{(d.month - 1) // 3 + 1}", "decade": f"{d.year // 10 * 10}s",
                        "week": "{}-W{:02d}".format(*d.isocalendar()[:2])}[unit]
            assert label == expected


def test_dates_on_a_polars_date_column():
    days = pl.Series("d", [dt.date(2024, 3, 5), dt.date(2023, 12, 31), None])
    ds = veil.Dataset(pl.DataFrame({"d": days}), quasi_identifiers="d",
                      hierarchies={"d": builders.dates(days.to_list())})
    assert ds.labels("d", 2)[ds.generalized_codes("d", 2)].tolist() == ["2024", "2023", ""]


def test_dates_on_a_pandas_datetime_column():
    days = pd.Series(pd.to_datetime(["2024-03-05", "2023-12-31"]))
    ds = veil.Dataset(pd.DataFrame({"d": days}), quasi_identifiers="d", hierarchies={"d": builders.dates(days)})
    assert ds.labels("d", 1)[ds.generalized_codes("d", 1)].tolist() == ["2024-03", "2023-12"]


# --------------------------------------------------------------------------- flat

def test_flat():
    assert builders.flat(["b", "a", None, "a"]).rows() == [["a", "*"], ["b", "*"]]
    assert builders.flat(pd.Series([3, 1, 2]), top="ANY").rows() == [["1", "ANY"], ["2", "ANY"], ["3", "ANY"]]


@FAST
@given(st.lists(st.one_of(st.text(min_size=1, max_size=5), st.integers(-99, 99)), min_size=1, max_size=30))
def test_flat_is_a_covering_tree(values):
    h = builders.flat(values)
    assert h.levels == 2
    assert h.level_labels[1].tolist() == ["*"]
    assert sorted(h.leaves.tolist()) == sorted({str(v) for v in values})
    if all(isinstance(v, str) for v in values) or all(isinstance(v, int) for v in values):
        assert_covers(h, values)


def test_flat_on_a_bool_column():
    flags = pd.Series([True, False, True])
    ds = veil.Dataset(pd.DataFrame({"f": flags}), quasi_identifiers="f", hierarchies={"f": builders.flat(flags)})
    assert ds.generalized_codes("f", 1).tolist() == [0, 0, 0]


# --------------------------------------------------------------------------- built hierarchies are ARX files

@pytest.mark.parametrize("build", [
    lambda: builders.intervals(range(0, 100, 7), [5, 10]),
    lambda: builders.masking(["13053", "13010", "1"]),
    lambda: builders.dates(["2024-03-05", "2023-12-31"], ["quarter", "year"]),
    lambda: builders.flat(["x;y", 'say "hi"', "z"]),
], ids=["intervals", "masking", "dates", "flat"])
def test_built_hierarchy_writes_and_reads_back(tmp_path, build):
    h = build()
    h.to_csv(tmp_path / "h.csv", newline="\r\n")
    back = Hierarchy.read_csv(tmp_path / "h.csv")
    assert back.rows() == h.rows()
    assert (tmp_path / "h.csv").read_bytes().count(b"\r\n") == len(h.leaves)
