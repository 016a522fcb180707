"""Public domains of synthetic data: declaration, encoding, decoding and every refusal."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from tests.helpers import ADULT_DIR, one_sentence_error
from veil.data.hierarchy import Hierarchy
from veil.synth.domain import ColumnDomain, DomainError, SynthDomain

SPEC = {"sex": ["F", "M"], "age": {"bins": [15, 20, 30, 90], "integer": True}, "score": {"bins": [0, 0.5, 1]}}


def table():
    return pd.DataFrame({"sex": ["M", "F", "M", "F"], "age": [15, 29, 30, 90], "score": [0.0, 0.49, 0.5, 1.0],
                         "other": ["x", "y", "z", "w"]})


def test_declared_domain_has_public_labels_and_sizes():
    d = SynthDomain.declared(SPEC)
    assert d.names == ("sex", "age", "score")
    assert d.shape == (2, 3, 2)
    assert d.sizes == {"sex": 2, "age": 3, "score": 2}
    assert d["age"].values == ("[15, 20)", "[20, 30)", "[30, 90]")   # the last bin is closed
    assert d["sex"].source == "declared" and d["age"].source == "bins"
    assert d.fit_for_release


def test_encode_gives_codes_in_domain_order_and_bins_half_open_but_the_last():
    codes = SynthDomain.declared(SPEC).encode(table())
    assert codes.dtype == np.int64
    assert codes.tolist() == [[1, 0, 0], [0, 1, 0], [1, 2, 1], [0, 2, 1]]


def test_decode_round_trips_codes_and_draws_numbers_inside_their_bins():
    d = SynthDomain.declared(SPEC)
    codes = d.encode(table())
    out = d.decode(codes, np.random.default_rng(0))
    assert list(out.columns) == ["sex", "age", "score"]
    assert out["sex"].tolist() == ["M", "F", "M", "F"]
    assert np.array_equal(d.encode(out), codes)
    assert out["age"].dtype == np.int64
    labels = d.decode(codes, np.random.default_rng(0), numeric="label")
    assert labels["age"].tolist() == ["[15, 20)", "[20, 30)", "[30, 90]", "[30, 90]"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 2), st.integers(0, 1)), min_size=1, max_size=30),
       st.integers(0, 2**32 - 1))
def test_decode_then_encode_is_the_identity_on_codes(rows, seed):
    d = SynthDomain.declared(SPEC)
    codes = np.array(rows, dtype=np.int64)
    assert np.array_equal(d.encode(d.decode(codes, np.random.default_rng(seed))), codes)


@pytest.mark.parametrize("frame, words", [
    (table().drop(columns="age"), ["'age'", "no column"]),
    (table().assign(sex=["M", "F", "X", "F"]), ["'sex'", "outside", "categories"]),
    (table().assign(age=[15, 29, 91, 90]), ["'age'", "outside its bins", "widen"]),
    (table().assign(age=[14, 29, 30, 90]), ["'age'", "outside its bins"]),
    (table().assign(age=[15, None, 30, 90]), ["'age'", "missing"]),
    (table().assign(sex=["M", None, "M", "F"]), ["'sex'", "missing"]),
    (table().assign(score=[0.1, np.nan, 0.2, 0.3]), ["'score'", "missing"]),
    (table().assign(age=["15", "old", "30", "90"]), ["'age'", "not numbers"]),
])
def test_encode_refuses_in_one_sentence_what_the_domain_does_not_cover(frame, words):
    msg = one_sentence_error(DomainError, lambda: SynthDomain.declared(SPEC).encode(frame), *words)
    assert "X" not in msg and "91" not in msg   # no private value in the message


@pytest.mark.parametrize("spec, words", [
    ({"sex": []}, ["'sex'", "empty"]),
    ({"sex": ["F", "F"]}, ["'sex'", "twice"]),
    ({"sex": "FM"}, ["'sex'", "list"]),
    ({"age": {"bins": [20, 15]}}, ["'age'", "increasing"]),
    ({"age": {"bins": [15]}}, ["'age'", "two bin edges"]),
    ({"age": {"bins": [0, "x"]}}, ["'age'", "not a number"]),
    ({"age": {"edges": [0, 1]}}, ["'age'", "'bins'"]),
    ({"age": {"bins": [0, 0.3, 0.6, 1], "integer": True}}, ["'age'", "no integer"]),
    ({"age": {"bins": [0, 1], "integer": "yes"}}, ["'age'", "boolean"]),
    ({}, ["no columns"]),
])
def test_declared_refuses_malformed_declarations(spec, words):
    one_sentence_error(DomainError, lambda: SynthDomain.declared(spec), *words)


def test_decode_refuses_codes_outside_the_domain():
    d = SynthDomain.declared(SPEC)
    one_sentence_error(DomainError, lambda: d.decode(np.array([[0, 3, 0]]), np.random.default_rng(0)), "outside")
    one_sentence_error(DomainError, lambda: d.decode(np.array([[0, 1]]), np.random.default_rng(0)), "3 columns")
    one_sentence_error(DomainError, lambda: d.decode(np.array([[0, 1, 0]]), np.random.default_rng(0), "mean"),
                       "'uniform'")


def test_describe_is_json_and_holds_only_declared_values():
    d = SynthDomain.declared(SPEC)
    described = json.loads(json.dumps(d.describe()))
    assert described[0] == {"name": "sex", "kind": "categories", "values": ["F", "M"], "source": "declared"}
    assert described[1]["edges"] == [15, 20, 30, 90] and described[1]["integer"] is True
    assert described[2]["edges"] == [0, 0.5, 1] and described[2]["kind"] == "bins"


def test_from_hierarchies_takes_the_leaves_of_veil_hierarchies_and_arx_files():
    path = ADULT_DIR / "adult_hierarchy_sex.csv"
    h = Hierarchy.read_csv(ADULT_DIR / "adult_hierarchy_race.csv")
    d = SynthDomain.from_hierarchies({"sex": path, "race": h})
    assert d["sex"].values == tuple(Hierarchy.read_csv(path).leaves)
    assert d["race"].values == tuple(h.leaves) and d["race"].source == "hierarchy"
    adult = pd.read_csv(ADULT_DIR / "adult.csv", sep=";", dtype=str)
    assert d.encode(adult).shape == (len(adult), 2)
    one_sentence_error(DomainError, lambda: SynthDomain.from_hierarchies({"sex": path}, columns=["sex", "age"]),
                       "'age'", "no hierarchy")


def test_from_data_is_marked_unfit_and_bins_between_min_and_max():
    t = table()
    d = SynthDomain.from_data(t, columns=["sex", "age", "score"], bins={"age": 3, "score": 2})
    assert not d.fit_for_release
    assert all(c.source == "data" for c in d.columns)
    assert d["sex"].values == ("F", "M")
    assert d["age"].edges[0] == 15 and d["age"].edges[-1] == 90 and d["age"].size == 3 and d["age"].integer
    assert d["score"].edges == (0.0, 0.5, 1.0) and not d["score"].integer
    assert d.encode(t).shape == (4, 3)
    numbers = SynthDomain.from_data(pd.DataFrame({"n": [10, 2, 2]}))
    assert numbers["n"].values == ("2", "10")   # numeric order, not text order
    assert np.array_equal(numbers.encode(pd.DataFrame({"n": [10, 2]})).ravel(), [1, 0])


@pytest.mark.parametrize("kwargs, words", [
    ({"columns": ["nope"]}, ["'nope'"]),
    ({"columns": ["sex"], "bins": {"sex": 2}}, ["'sex'", "not numeric"]),
    ({"columns": ["age"], "bins": {"age": 0}}, ["'age'", "at least 1"]),
])
def test_from_data_refusals(kwargs, words):
    one_sentence_error(DomainError, lambda: SynthDomain.from_data(table(), **kwargs), *words)


def test_a_column_declared_twice_and_unknown_sources_are_refused():
    c = ColumnDomain.categorical("a", ["x"])
    one_sentence_error(DomainError, lambda: SynthDomain((c, c)), "'a'", "twice")
    one_sentence_error(DomainError, lambda: ColumnDomain("a", ("x",), source="guess"), "source")


def test_numbers_in_a_categorical_column_match_their_text_labels():
    d = SynthDomain.declared({"n": [1, 2, 10]})
    assert d.encode(pd.DataFrame({"n": [10.0, 1.0, 2.0]})).ravel().tolist() == [2, 0, 1]
    assert d.encode(pd.DataFrame({"n": ["10", "1", "2"]})).ravel().tolist() == [2, 0, 1]
