"""The αβ algorithm's public domain and its counting queries (domain.py, queries.py)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import veil
from veil.anonymize.alphabeta import queries as query_module
from veil.anonymize.alphabeta.domain import AttributeDomain, Domain
from veil.anonymize.alphabeta.queries import (Between, CountingQuery, ResolvedQueries, count_matching,
                                              random_queries, read_queries)
from veil.data.encoding import encode_column
from veil.errors import ColumnError, DataError, ParameterError


def small_domain() -> Domain:
    return Domain([AttributeDomain.values("sex", ["F", "M"]), AttributeDomain.integers("age", 20, 29),
                   AttributeDomain.values("city", ["Oslo", "Rome", "Lima"])])


def test_ids_are_mixed_radix_and_round_trip():
    domain = small_domain()
    assert domain.size == 60
    codes = np.array(list(itertools.product(range(2), range(10), range(3))))
    ids = domain.encode(codes)
    assert ids.tolist() == list(range(60))           # the last attribute varies fastest
    assert np.array_equal(domain.decode(ids), codes)


def test_a_domain_beyond_64_bits_is_refused_with_its_size():
    wide = [AttributeDomain.integers(f"a{i}", 0, 999_999) for i in range(4)]
    with pytest.raises(ParameterError, match=r"1,000,000,000,000,000,000,000,000 tuples .*2\^63") as info:
        Domain(wide)
    assert "publish fewer attributes" in str(info.value)


def test_values_match_by_text_then_number_and_missing_by_its_leaf():
    col = encode_column("age", pd.Series(["25.0", "30", "", "31", "x"]))
    listed = AttributeDomain.values("age", ["25", "30", "NULL"])
    assert listed.codes_of(col).tolist() == [0, 1, 2, -1, -1]
    ranged = AttributeDomain.integers("age", 25, 30)
    assert ranged.codes_of(col).tolist() == [0, 5, -1, -1, -1]
    assert ranged.label_texts(np.array([0, 5])).tolist() == ["25", "30"]


def test_hierarchy_leaves_and_data_domains():
    h = veil.Hierarchy([["a", "*"], ["b", "*"]])
    assert AttributeDomain.hierarchy("x", h).labels == ("a", "b")
    assert AttributeDomain.hierarchy("x", h).public
    data = AttributeDomain.from_data(encode_column("x", pd.Series(["b", "a", None])))
    assert not data.public and data.labels == ("a", "b", "")


@pytest.mark.parametrize("build, message", [
    (lambda: AttributeDomain.values("x", []), "empty"),
    (lambda: AttributeDomain.values("x", ["a", "b", "a"]), "lists 'a' twice"),
    (lambda: AttributeDomain.integers("x", 5, 1), "min ≤ max"),
    (lambda: AttributeDomain.integers("x", 0.5, 3), "whole-number"),
    (lambda: AttributeDomain.integers("x", 0, 1 << 30), "narrower"),
    (lambda: Domain([]), "at least one attribute"),
    (lambda: Domain([AttributeDomain.values("x", ["a"]), AttributeDomain.values("x", ["b"])]), "two domains"),
])
def test_bad_domains_get_one_sentence(build, message):
    with pytest.raises(ParameterError, match=message):
        build()


def test_description_round_trips():
    domain = small_domain()
    again = Domain.from_description(domain.describe())
    assert again.names == domain.names and again.size == domain.size
    assert again.attributes[1].low == 20 and again.attributes[2].labels == ("Oslo", "Rome", "Lima")
    with pytest.raises(ParameterError):
        Domain.from_description({"attributes": [{"name": "x"}]})
    with pytest.raises(ParameterError, match="size does not match"):
        Domain.from_description(domain.describe() | {"size": 61})


def satisfies(row: tuple[str, ...], domain: Domain, query: CountingQuery) -> bool:
    """The query's predicate on one tuple of label texts, read straight from its conditions."""
    for column, condition in query.conditions.items():
        value = row[domain.names.index(column)]
        if isinstance(condition, Between):
            number = float(value)
            if (condition.low is not None and number < condition.low) or \
                    (condition.high is not None and number > condition.high):
                return False
        elif value not in condition:
            return False
    return True


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 9), st.integers(0, 2)), max_size=40),
       seed=st.integers(0, 1000), sparse=st.booleans())
def test_counts_agree_with_enumeration(rows, seed, sparse):
    """n_V and n_D against a predicate evaluated tuple by tuple (over the rows, and over all of D)."""
    domain = small_domain()
    codes = np.array(rows, dtype=np.int64).reshape(-1, 3)
    queries = random_queries(domain, 25, np.random.default_rng(seed)) + [CountingQuery({})]
    resolved = ResolvedQueries(queries, domain)
    original = query_module._DENSE_CELLS
    query_module._DENSE_CELLS = 0 if sparse else original   # force the sparse marginal
    try:
        counted = count_matching(codes, resolved)
    finally:
        query_module._DENSE_CELLS = original

    def labels(matrix):
        return [tuple(domain.attributes[j].label_texts(matrix[:, j])[i] for j in range(3)) for i in range(len(matrix))]

    every_tuple = labels(np.array(list(itertools.product(*[range(s) for s in domain.sizes]))))
    in_rows = labels(codes)
    for query, n_v, n_d in zip(queries, counted, resolved.domain_counts):
        assert n_v == sum(satisfies(row, domain, query) for row in in_rows)
        assert n_d == sum(satisfies(row, domain, query) for row in every_tuple)


def n_d(conditions) -> int:
    return int(ResolvedQueries([CountingQuery(conditions)], small_domain()).domain_counts[0])


def test_query_conditions_and_texts():
    q = CountingQuery({"age": {"min": 22, "max": 24}, "city": ["Oslo", "Lima"]})
    assert n_d(q.conditions) == 2 * 3 * 2
    assert q.text() == "age in [22, 24] AND city in {Oslo, Lima}"
    assert CountingQuery({"sex": "F"}).text() == "sex = F"
    assert n_d({"age": 25}) == 2 * 3                        # a number matches a range value
    assert n_d({"age": "25.0"}) == 2 * 3
    assert n_d({"age": Between(high=21)}) == 2 * 2 * 3
    assert n_d({"age": {"min": 100}}) == 0
    assert n_d({}) == 60


@pytest.mark.parametrize("conditions, error, message", [
    ({"town": "Oslo"}, ColumnError, "no column 'town'"),
    ({"cty": "Oslo"}, ColumnError, "did you mean 'city'"),
    ({"city": "Olso"}, ParameterError, "city = 'Olso', which is not in the domain of 'city'; did you mean 'Oslo'"),
    ({"age": 19}, ParameterError, "the integers 20 to 29"),
    ({"city": {"min": 1}}, ParameterError, "not numbers"),
    ({"age": {"min": 5, "max": 1}}, ParameterError, "above max"),
    ({"age": {"low": 5}}, ParameterError, "takes min and max"),
    ({"age": {"min": "x"}}, ParameterError, "must be numbers"),
    ({"city": []}, ParameterError, "lists no values"),
])
def test_bad_queries_get_one_sentence(conditions, error, message):
    with pytest.raises(error, match=message):
        ResolvedQueries([CountingQuery(conditions)], small_domain())


def test_query_files(tmp_path):
    path = tmp_path / "q.yaml"
    path.write_text("- {sex: F}\n- name: thirties\n  where: {age: {min: 30, max: 39}}\n- city: [Oslo, Rome]\n")
    queries = read_queries(path)
    assert [q.text() for q in queries] == ["sex = F", "thirties", "city in {Oslo, Rome}"]
    for text, message in [("", "non-empty list"), ("[1, 2]", "query 1"), ("- {a: [}", "not valid YAML")]:
        path.write_text(text)
        with pytest.raises(DataError, match=message):
            read_queries(path)
    with pytest.raises(DataError, match="does not exist"):
        read_queries(tmp_path / "missing.yaml")


def test_random_workload_is_answerable_and_varied():
    domain = small_domain()
    queries = random_queries(domain, 300, np.random.default_rng(1))
    resolved = ResolvedQueries(queries, domain)
    assert {len(attributes) for attributes, _, _ in resolved.groups} == {1, 2, 3}
    assert all(0 < c <= domain.size for c in resolved.domain_counts)
    assert math.isclose(np.mean([isinstance(c, Between) for q in queries for c in q.conditions.values()]), 1 / 3,
                        abs_tol=0.1)
