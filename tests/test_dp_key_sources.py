"""Where a grouped DP query's public keys come from (issue 27, item 2): a key file, a level of a
generalization hierarchy, a list, declared domains, and the "other" bucket for rows outside them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.conformance.glue import recording
from veil.data.hierarchy import Hierarchy
from veil.dp import PrivacyUnit, Query
from veil.dp.aggregates import count, sum
from veil.dp.public_keys import PublicKeys
from veil.errors import ColumnError, ParameterError

TABLE = pd.DataFrame({"pid": [1, 1, 2, 3, 4, 5], "age": [23, 27, 35, 41, 88, 23],
                      "region": ["n", "s", "n", "e", "w", "s"], "member": [True, False, True, True, False, True],
                      "score": [1.5, 2.0, 2.5, 3.0, 3.5, 4.0], "spend": [10.0, 20.0, 30.0, 40.0, 50.0, 60.0]})
AGES = Hierarchy([[str(a), f"{a // 10 * 10}-{a // 10 * 10 + 9}", "adult" if a >= 20 else "minor", "*"]
                  for a in range(0, 80)], name="ages")


def _exact(q):
    """The answer with negligible noise (a huge ε), as a list of (key..., count) rows."""
    frame = q.agg(count()).evaluate(1e9, rng=1).to_pandas()
    return [tuple(r) for r in frame[[*q.columns, "count"]].itertuples(index=False)]


# ---------------------------------------------------------------------------------------------
# a key file
# ---------------------------------------------------------------------------------------------
def _file(tmp_path, text, name="keys.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_key_file_is_read_as_the_tables_types_in_its_order(tmp_path):
    path = _file(tmp_path, "member,age\ntrue,23\n0,35\nTRUE,99\n")
    keys = PublicKeys.from_file(path, ["age", "member"], types=TABLE.dtypes.to_dict())
    assert keys.keys == ((23, True), (35, False), (99, True))  # columns reordered to the grouping's
    q = Query(TABLE).group_by(["age", "member"], keys_file=path)
    assert _exact(q) == [(23, True, 2), (35, False, 0), (99, True, 0)]  # an empty key answered
    floats = PublicKeys.from_file(_file(tmp_path, "score\n2.5\n1e0\n"), "score", types=TABLE.dtypes.to_dict())
    assert floats.keys == ((2.5,), (1.0,))
    text = PublicKeys.from_file(_file(tmp_path, "\ufeffregion\nn\n 007\n"), "region", types=TABLE.dtypes.to_dict())
    assert text.keys == (("n",), (" 007",))  # text kept as it is; the byte-order mark dropped


@pytest.mark.parametrize("text, message", [
    ("", "is empty"),
    ("age\n", "is empty"),
    ("\n\n", "is empty"),
    ("region\nn\n", "no column 'age'"),
    ("age,region\n23,n\n", "not a grouping column"),
    ("age,age\n23,23\n", "named twice"),
    ("age\n23\n23.0\n", "twice"),
    ("age\n23\nold\n", "line 3 .* 'old' for 'age'"),
    ("age\n23.5\n", "int64; give a value of that type"),  # a fraction for an integer column
    ("age\n23,1\n", "line 2 .* 2 values"),
])
def test_a_bad_key_file_is_refused_in_one_sentence(tmp_path, text, message):
    path = _file(tmp_path, text)
    with pytest.raises(ParameterError, match=message) as info:
        Query(TABLE).group_by("age", keys_file=path)
    assert str(info.value).count(". ") == 0 and str(info.value).endswith(".")


def test_a_fraction_for_an_integer_column_names_the_type(tmp_path):
    with pytest.raises(ParameterError, match="int64"):
        PublicKeys.from_file(_file(tmp_path, "age\n23.5\n"), "age", types={"age": np.int64})


def test_a_missing_or_unreadable_key_file_is_refused(tmp_path):
    with pytest.raises(ParameterError, match="does not exist"):
        Query(TABLE).group_by("age", keys_file=tmp_path / "nope.csv")
    with pytest.raises(ParameterError, match="cannot be read"):
        Query(TABLE).group_by("age", keys_file=tmp_path)
    bad = tmp_path / "latin.csv"
    bad.write_bytes(b"region\n\xe9\n")
    with pytest.raises(ParameterError, match="not UTF-8"):
        Query(TABLE).group_by("region", keys_file=bad)


def test_a_key_file_is_not_modified(tmp_path):
    path = _file(tmp_path, "region\nn\ns\n")
    before = path.read_bytes()
    Query(TABLE).group_by("region", keys_file=path).agg(count()).evaluate(1.0, rng=1)
    assert path.read_bytes() == before


# ---------------------------------------------------------------------------------------------
# a hierarchy level
# ---------------------------------------------------------------------------------------------
def test_rows_are_grouped_by_their_value_generalized_to_the_level():
    q = Query(TABLE).group_by("age", hierarchy=(AGES, 1))
    assert q.keys.keys == tuple((f"{d}-{d + 9}",) for d in range(0, 80, 10))  # the hierarchy's order
    got = dict((k, c) for k, c in _exact(q))
    assert got["20-29"] == 3 and got["30-39"] == 1 and got["40-49"] == 1 and got["0-9"] == 0
    assert sum_rows(got) == 5  # 88 is not in the hierarchy: dropped, never an error
    top = Query(TABLE).group_by("age", hierarchy=(AGES, 3))
    assert _exact(top) == [("*", 5)]
    leaves = Query(TABLE).group_by("age", hierarchy=(AGES, 0))
    assert len(leaves.keys) == 80


def sum_rows(cells: dict) -> int:
    return int(np.sum(list(cells.values())))


def test_a_hierarchy_matches_numbers_of_another_spelling_and_missing_values():
    table = pd.DataFrame({"age": [23.0, 27.0, np.nan, 99.0]})
    h = Hierarchy([["23", "young"], ["27", "young"], ["NULL", "unknown"]], name="h")
    assert _exact(Query(table).group_by("age", hierarchy=(h, 1))) == [("young", 2), ("unknown", 1)]
    assert _exact(Query(table).group_by("age", hierarchy=(h, 1), other=True)) == [
        ("young", 2), ("unknown", 1), ("other", 1)]


def test_several_columns_mix_hierarchy_levels_and_domains():
    q = Query(TABLE).group_by(["region", "age"], domains={"region": ["n", "s"]}, hierarchy={"age": (AGES, 1)},
                              other=True)
    got = _exact(q)
    assert [k[:2] for k in got] == [(r, f"{d}-{d + 9}") for r in ("n", "s") for d in range(0, 80, 10)] + [
        ("other", "other")]
    cells = {k[:2]: k[2] for k in got}
    assert cells[("n", "20-29")] == 1 and cells[("s", "20-29")] == 2 and cells[("n", "30-39")] == 1
    assert cells[("other", "other")] == 2  # (e, 41) is not public and 88 has no leaf
    two = Query(TABLE).group_by(["age", "score"], hierarchy={"age": (AGES, 2), "score": (Hierarchy(
        [["1.5", "low"], ["2.5", "low"], ["3.5", "high"]], name="s"), 1)})
    assert _exact(two) == [("minor", "low", 0), ("minor", "high", 0), ("adult", "low", 2), ("adult", "high", 0)]


def test_a_hierarchy_file_path_is_read(tmp_path):
    path = tmp_path / "ages.csv"
    AGES.to_csv(path)
    assert _exact(Query(TABLE).group_by("age", hierarchy=(str(path), 2))) == [("minor", 0), ("adult", 5)]


@pytest.mark.parametrize("build, message", [
    (lambda: Query(TABLE).group_by("age", hierarchy=(AGES, 4)), "from 0 to 3"),
    (lambda: Query(TABLE).group_by("age", hierarchy=(AGES, -1)), "from 0 to 3"),
    (lambda: Query(TABLE).group_by("age", hierarchy=(AGES, True)), "whole number"),
    (lambda: Query(TABLE).group_by("age", hierarchy=("x", "y", "z")), "pair"),
    (lambda: Query(TABLE).group_by("age", hierarchy=(42, 1)), "Hierarchy"),
    (lambda: Query(TABLE).group_by(["age", "region"], hierarchy=(AGES, 1)), "one grouping column"),
    (lambda: Query(TABLE).group_by(["age", "region"], hierarchy={"age": (AGES, 1)}), "'region' needs"),
    (lambda: Query(TABLE).group_by(["age", "region"], hierarchy={"age": (AGES, 1)},
                                   domains={"age": [1], "region": ["n"]}), "'age' needs"),
    (lambda: Query(TABLE).group_by("age", hierarchy={"age": (AGES, 1), "region": (AGES, 1)}), "not a grouping"),
    (lambda: Query(TABLE).group_by(["age", "region"], hierarchy={"age": AGES}, domains={"region": ["n"]}), "pair"),
])
def test_a_bad_hierarchy_is_refused_in_one_sentence(build, message):
    with pytest.raises(ParameterError, match=message):
        build()


# ---------------------------------------------------------------------------------------------
# the source of keys
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [{}, {"keys": ["n"], "domains": {"region": ["n"]}},
                                    {"keys": ["n"], "hierarchy": (AGES, 1)}])
def test_exactly_one_source_of_keys(kwargs):
    with pytest.raises(ParameterError, match="one source of keys"):
        Query(TABLE).group_by("region", **kwargs)


def test_a_missing_grouping_column_is_refused_whatever_the_source(tmp_path):
    with pytest.raises(ColumnError, match="'nope' does not exist"):
        Query(TABLE).group_by("nope", keys_file=_file(tmp_path, "nope\n1\n"))
    with pytest.raises(ColumnError, match="'nope' does not exist"):
        Query(TABLE).group_by("nope", hierarchy=(AGES, 1))


# ---------------------------------------------------------------------------------------------
# the other bucket
# ---------------------------------------------------------------------------------------------
def test_the_other_bucket_answers_the_rows_outside_the_public_keys_last():
    q = Query(TABLE).group_by("region", keys=["n", "s", "x"], other=True)
    assert _exact(q) == [("n", 2), ("s", 2), ("x", 0), ("other", 2)]
    assert "other bucket" in " ".join(q.agg(count()).evaluate(1.0, rng=1).record["notes"])
    without = Query(TABLE).group_by("region", keys=["n", "s", "x"])
    assert _exact(without) == [("n", 2), ("s", 2), ("x", 0)]


def test_the_other_bucket_in_a_column_of_numbers_is_null_and_keeps_the_type():
    answer = Query(TABLE).group_by(["region", "age"], keys=[("n", 23), ("s", 27)], other=True) \
        .agg(count(), sum("spend", 0, 100)).evaluate(1e9, rng=1)
    frame = answer.to_pandas()
    assert frame["region"].tolist() == ["n", "s", "other"]
    assert str(frame["age"].dtype) == "Int64" and frame["age"].isna().tolist() == [False, False, True]
    assert frame["count"].tolist() == [1, 1, 4]
    arrow = answer.table("arrow")
    assert arrow.column("age").null_count == 1
    polars = answer.table("polars")
    assert polars["region"].to_list()[-1] == "other"
    flags = Query(TABLE).group_by("member", keys=[True], other=True)
    assert str(flags.keys.frame()["member"].dtype) == "boolean"
    assert _exact(flags)[-1][1] == 2


def test_a_public_key_named_like_the_other_bucket_is_refused():
    with pytest.raises(ParameterError, match="already"):
        Query(TABLE).group_by("region", keys=["n", "other"], other=True)
    with pytest.raises(ParameterError, match="True or False"):
        Query(TABLE).group_by("region", keys=["n"], other="yes")
    # without the bucket a key "other" is an ordinary key
    assert _exact(Query(TABLE).group_by("region", keys=["n", "other"])) == [("n", 2), ("other", 0)]


def test_the_other_bucket_counts_in_the_l0_bound():
    unit = PrivacyUnit.person("pid", max_groups=5, max_rows_per_group=1)
    plain = Query(TABLE, unit=unit).group_by("region", keys=["n", "s"]).agg(count())
    other = Query(TABLE, unit=unit).group_by("region", keys=["n", "s"], other=True).agg(count())
    assert plain.sensitivities() == {"count": 2.0}
    assert other.sensitivities() == {"count": 3.0}  # a person may add one row to the bucket too
    answer = other.evaluate(1.0, rng=1)
    assert answer.record["num_keys"] == 3 and answer.record["cell_contribution"] == 3


@settings(max_examples=40, deadline=None)
@given(regions=st.lists(st.sampled_from(["n", "s", "e", "w", None]), min_size=0, max_size=30),
       public=st.lists(st.sampled_from(["n", "s", "e", "z"]), min_size=1, max_size=4, unique=True))
def test_with_the_other_bucket_no_row_is_lost_or_invented(regions, public):
    table = pd.DataFrame({"region": regions})
    q = Query(table).group_by("region", keys=public, other=True)
    got = _exact(q)
    assert [k for k, _ in got] == public + ["other"]
    assert np.sum([c for _, c in got]) == len(table)
    assert got[-1][1] == (~table["region"].isin(public)).sum()


def test_building_a_query_from_any_source_draws_nothing(tmp_path):
    with recording() as seen:
        Query(TABLE).group_by("age", keys_file=_file(tmp_path, "age\n23\n")).agg(count())
        Query(TABLE).group_by("age", hierarchy=(AGES, 1), other=True).agg(count())
    assert seen.draws == []


@settings(max_examples=80, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["n", "s", None]), st.sampled_from([1, 2, 3]),
                               st.sampled_from([0.5, 1.0, float("nan")])), max_size=25),
       keys=st.lists(st.tuples(st.sampled_from(["n", "s", "q"]), st.sampled_from([1, 2, 9]),
                               st.sampled_from([0.5, 1.0, 7.0])), min_size=1, max_size=6, unique=True),
       other=st.booleans())
def test_each_row_finds_its_key_as_a_loop_over_the_rows_would(rows, keys, other):
    table = pd.DataFrame(rows, columns=["r", "i", "f"]).astype({"i": "int64"}) if rows else \
        pd.DataFrame({"r": pd.Series([], dtype=object), "i": pd.Series([], dtype="int64"), "f": []})
    public = PublicKeys.from_list(["r", "i", "f"], keys, other=other)
    where = {k: i for i, k in enumerate(keys)}
    expected = [where.get(tuple(row), len(keys) if other else -1)
                for row in table.itertuples(index=False, name=None)]
    assert public.index_of_rows(table).tolist() == expected
