"""Anonymized marginals (Kifer and Gehrke, SIGMOD 2006): counting from the class core, the privacy
of a collection (k-link, k-combinatorial, MaxEnt ℓ-diversity) and the greedy search."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import veil
from helpers import one_sentence_error
from veil.data.hierarchy import Hierarchy
from veil.errors import ColumnError, InfeasibleError, ParameterError
from veil.marginals.collection import MarginalCollection, MarginalCounter, MarginalSpec
from veil.marginals.decomposable import structure
from veil.marginals.maxent import MaxEntEstimate
from veil.marginals.privacy import KCombinatorialAnonymity, KLinkAnonymity, MaxEntLDiversity
from veil.marginals.search import GreedyMarginalSearch


@pytest.fixture(scope="module")
def adult_counter():
    return MarginalCounter(veil.load_adult())


@pytest.fixture(scope="module")
def subset_counter(adult_subset_csv, adult_hierarchy_paths):
    qis = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]
    ds = veil.Dataset(adult_subset_csv, quasi_identifiers=qis, sensitive="occupation", delimiter=";",
                      hierarchies={c: adult_hierarchy_paths[c] for c in qis + ["occupation"]})
    return MarginalCounter(ds)


def counter_of(rows, names=("a", "b", "c"), sensitive=None, hierarchies=None) -> MarginalCounter:
    frame = pd.DataFrame(np.asarray(rows), columns=list(names)).astype(str)
    ds = veil.Dataset(frame, quasi_identifiers=[n for n in names if n != sensitive], sensitive=sensitive,
                      hierarchies=hierarchies or {})
    return MarginalCounter(ds)


# ------------------------------------------------------------------------------------------
# Counting


def test_marginals_are_the_counts_of_the_generalized_table(adult_csv, adult_hierarchy_paths, adult_counter):
    frame = pd.read_csv(adult_csv, sep=";", dtype=str, keep_default_na=False)
    spec = MarginalSpec.of(["age", "education", "occupation"], {"age": 2, "occupation": 1})
    table = adult_counter.count(spec)
    published = pd.DataFrame(adult_counter.labels(table)).assign(count=table.counts)
    for column, level in (("age", 2), ("occupation", 1)):
        rows = pd.read_csv(adult_hierarchy_paths[column], sep=";", header=None, dtype=str, keep_default_na=False)
        frame[column] = frame[column].map(dict(zip(rows[0], rows[level])))
    expected = frame.groupby(["age", "education", "occupation"]).size().rename("count").reset_index()
    merged = published.merge(expected, on=["age", "education", "occupation"], how="outer", suffixes=("", "_ref"))
    assert len(merged) == len(expected) == len(published)
    assert (merged["count"] == merged["count_ref"]).all()


def test_the_base_table_is_the_release_as_one_marginal(adult_counter):
    levels = (0, 2, 1, 1, 2, 1, 1)
    base = adult_counter.count(adult_counter.base_spec(levels))
    classes = veil.EquivalenceClasses.from_dataset(adult_counter.dataset, levels)
    assert base.attributes == tuple(adult_counter.dataset.quasi_identifiers) + ("occupation",)
    assert base.total == adult_counter.n == 30162
    assert len(base.counts) == np.count_nonzero(classes.counts("occupation"))


@pytest.mark.parametrize("names, levels, words", [
    (["agee"], None, ("'agee' does not exist", "did you mean 'age'")),
    (["salary-class"], None, ("neither a quasi-identifier nor the sensitive column",)),
    (["age"], {"age": 5}, ("levels 0 to 4, not 5",)),
    (["age"], {"age": -1}, ("levels 0 to 4, not -1",)),
])
def test_bad_marginals_are_refused_in_one_sentence(adult_csv, adult_hierarchy_paths, names, levels, words):
    ds = veil.Dataset(adult_csv, quasi_identifiers=["age", "sex"], sensitive="occupation", delimiter=";",
                      hierarchies={"age": adult_hierarchy_paths["age"]})
    counter = MarginalCounter(ds)
    one_sentence_error(ColumnError, lambda: counter.count(MarginalSpec.of(names, levels)), *words)


def test_bad_specs_are_refused_in_one_sentence(adult_counter):
    one_sentence_error(ParameterError, lambda: MarginalSpec.of(["age", "age"]), "'age' twice")
    one_sentence_error(ParameterError, lambda: MarginalSpec.of(["age"], {"sex": 1}), "'sex'")
    one_sentence_error(ParameterError, lambda: MarginalSpec.of([]), "one or more attributes")
    one_sentence_error(ParameterError, lambda: MarginalSpec.of(["age"], {"age": 1.5}), "whole number")
    one_sentence_error(ColumnError, lambda: adult_counter.count(MarginalSpec.of(["sex"], {"sex": 2})),
                       "levels 0 to 1, not 2")


def test_a_column_without_a_hierarchy_has_level_zero_only():
    counter = counter_of([["0", "x", "u"], ["1", "y", "v"]])
    one_sentence_error(ColumnError, lambda: counter.count(MarginalSpec.of(["b"], {"b": 1})), "no hierarchy")


# ------------------------------------------------------------------------------------------
# k-link anonymity


def test_k_link_of_the_base_table_is_its_k_anonymity(adult_counter):
    levels = (0, 2, 1, 1, 2, 1, 1)
    base = adult_counter.count(adult_counter.base_spec(levels))
    classes = veil.EquivalenceClasses.from_dataset(adult_counter.dataset, levels)
    k = veil.KAnonymity().evaluate(classes).level
    result = KLinkAnonymity(int(k) + 1).evaluate(MarginalCollection(adult_counter, [base]))
    assert result.level == k and not result.passed
    assert {f.marginal for f in result.failures} == {0}
    assert len(result.failures) == int((classes.sizes <= k).sum())


def test_k_link_names_the_failing_marginal_and_cell():
    counter = counter_of([["0", "x", "u"]] * 3 + [["1", "y", "u"]] * 2 + [["1", "x", "v"]] * 3)
    collection = MarginalCollection.from_specs(counter, [MarginalSpec.of(["a"]), MarginalSpec.of(["a", "b"])])
    result = KLinkAnonymity(3).evaluate(collection)
    assert not result.passed and result.level == 2
    assert result.failures[0].marginal == 1 and result.failures[0].cell == {"a": "1", "b": "y"}
    assert result.failures[0].value == 2


def test_k_link_ignores_the_sensitive_attribute():
    counter = counter_of([["0", "s"], ["0", "t"], ["1", "s"], ["1", "s"]], names=("a", "s"), sensitive="s")
    collection = MarginalCollection.from_specs(counter, [MarginalSpec.of(["a", "s"]), MarginalSpec.of(["s"])])
    assert KLinkAnonymity(2).evaluate(collection).passed
    assert KLinkAnonymity(3).evaluate(collection).failures[0].cell == {"a": "0"}


# ------------------------------------------------------------------------------------------
# k-combinatorial anonymity


def consistent_tables(counter: MarginalCounter, collection: MarginalCollection, limit: int = 200_000):
    """Every table of whole counts over the domain that has the collection's marginals, by
    enumeration (stars and bars): ``(domain codes, tables [tables × cells])``."""
    sizes = [counter.domains[a].lut.shape[0] for a in counter.attributes]
    codes = np.array(list(itertools.product(*(range(s) for s in sizes))))
    n, cells = counter.n, len(codes)
    assert math.comb(n + cells - 1, cells - 1) <= limit
    bars = np.array(list(itertools.combinations(range(n + cells - 1), cells - 1)))
    edges = np.column_stack([np.full(len(bars), -1), bars, np.full(len(bars), n + cells - 1)])
    tables = np.diff(edges, axis=1) - 1
    keep = np.ones(len(tables), dtype=bool)
    for m in collection.marginals:
        coarse = [counter.domains[a].lut[codes[:, counter.attributes.index(a)], lv] for a, lv in m.variables]
        cell = m.index(coarse, counter.domains)
        sums = np.zeros((len(tables), len(m.counts) + 1))
        np.add.at(sums.T, cell, tables.T)  # column −1 gathers the cells outside the marginal's support
        keep &= (sums[:, :-1] == m.counts).all(axis=1) & (sums[:, -1] == 0)
    return codes, tables[keep]


def brute_force_k_combinatorial(counter, collection, k) -> bool:
    codes, tables = consistent_tables(counter, collection)
    qis = [j for j, a in enumerate(counter.attributes) if a != counter.sensitive]
    tuple_of = pd.Series(map(tuple, codes[:, qis].tolist())).factorize()[0]
    totals = np.zeros((len(tables), tuple_of.max() + 1))
    np.add.at(totals.T, tuple_of, tables.T)
    best = totals.max(axis=0)
    return bool(((best == 0) | (best >= k)).all())


# Nine records over three binary attributes, published as the three pairwise marginals.
LINK_NOT_COMBINATORIAL = [["1", "1", "0"]] * 2 + [["0", "1", "1"]] * 2 + [["0", "1", "0"]] * 2 + \
    [["1", "0", "1"]] * 2 + [["1", "1", "1"]]


@pytest.mark.parametrize("method", ["exact", "lp"])
def test_k_link_anonymous_but_not_k_combinatorially_anonymous(method):
    # Every cell of the marginals ab, bc and ac holds 0, 2, 3 or 4 records, so 2-link anonymity
    # holds. But ab(0,0) = bc(0,0) = 0 leave b = 0 only at (1,0,1), so every consistent table puts
    # ab(1,0) = 2 records there, and ac(1,1) = 3 leaves exactly 1 record at (1,1,1) (the three
    # marginals determine the whole table, as enumerating the tables shows).
    counter = counter_of(LINK_NOT_COMBINATORIAL)
    pairs = [MarginalSpec.of(list(p)) for p in ("ab", "bc", "ac")]
    collection = MarginalCollection.from_specs(counter, pairs)
    assert KLinkAnonymity(2).evaluate(collection).passed
    result = KCombinatorialAnonymity(2, method=method).evaluate(collection)
    assert not result.passed and result.method == method
    assert [f.cell for f in result.failures] == [{"a": "1", "b": "1", "c": "1"}]
    codes, tables = consistent_tables(counter, collection)
    labels = [counter.domains[a].labels[0] for a in counter.attributes]
    at_111 = [i for i, row in enumerate(codes) if all(labels[j][v] == "1" for j, v in enumerate(row))][0]
    assert len(tables) == 1 and set(tables[:, at_111]) == {1}
    # Publishing the whole table instead is 1-combinatorially anonymous, and one marginal less
    # (ab and bc, a decomposable chain) frees the tuple.
    assert KCombinatorialAnonymity(2, method=method).evaluate(
        MarginalCollection.from_specs(counter, pairs[:2])).passed


def test_the_reverse_a_k_link_failure_is_a_k_combinatorial_failure():
    counter = counter_of([["0", "x"]] * 3 + [["1", "x"]] * 1 + [["1", "y"]] * 2, names=("a", "b"))
    collection = MarginalCollection.from_specs(counter, [MarginalSpec.of(["a", "b"])])
    link = KLinkAnonymity(2).evaluate(collection)
    combinatorial = KCombinatorialAnonymity(2).evaluate(collection)
    assert not link.passed and not combinatorial.passed
    assert combinatorial.failures[0].cell == link.failures[0].cell == {"a": "1", "b": "x"}
    assert not brute_force_k_combinatorial(counter, collection, 2)


A3 = Hierarchy([["0", "lo"], ["1", "lo"], ["2", "hi"]], name="a")


@st.composite
def tiny_collections(draw):
    """Up to 5 records over a (3 values, hierarchy), b (2 values) and sensitive s (2 values)."""
    n = draw(st.integers(1, 5))
    rows = draw(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1), st.integers(0, 1)), min_size=n, max_size=n))
    specs = draw(st.lists(st.tuples(st.lists(st.sampled_from("abs"), min_size=1, max_size=3, unique=True),
                                    st.integers(0, 1)), min_size=1, max_size=3))
    return rows, specs, draw(st.integers(2, 4))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_collections())
def test_exact_k_combinatorial_agrees_with_enumeration(case):
    rows, specs, k = case
    counter = counter_of([[str(v) for v in r] for r in rows], names=("a", "b", "s"), sensitive="s",
                         hierarchies={"a": A3})
    # Only the values the rows hold form the domain: keep levels within the hierarchy.
    collection = MarginalCollection.from_specs(
        counter, [MarginalSpec.of(names, {"a": lv} if "a" in names else {}) for names, lv in specs])
    exact = KCombinatorialAnonymity(k, method="exact").evaluate(collection)
    assert exact.passed == brute_force_k_combinatorial(counter, collection, k)
    if not KLinkAnonymity(k).evaluate(collection).passed:
        assert not exact.passed


def lp_relaxation_k_combinatorial(counter, collection, k) -> bool:
    """The LP relaxation's verdict by one linear program per tuple of the whole domain: the most
    records any fractional consistent table holds there is 0 or at least k."""
    import scipy.optimize

    sizes = [counter.domains[a].lut.shape[0] for a in counter.attributes]
    codes = np.array(list(itertools.product(*(range(s) for s in sizes))))
    rows, b, upper = [], [], np.full(len(codes), np.inf)
    for m in collection.marginals:
        coarse = [counter.domains[a].lut[codes[:, counter.attributes.index(a)], lv] for a, lv in m.variables]
        cell = m.index(coarse, counter.domains)
        upper[cell < 0] = 0  # outside the marginal's support
        rows += [(cell == c).astype(float) for c in range(len(m.counts))]
        b += list(m.counts)
    qis = [j for j, a in enumerate(counter.attributes) if a != counter.sensitive]
    tuple_of = pd.Series(map(tuple, codes[:, qis].tolist())).factorize()[0]
    for t in range(tuple_of.max() + 1):
        result = scipy.optimize.linprog(-(tuple_of == t).astype(float), A_eq=np.array(rows), b_eq=b,
                                        bounds=np.column_stack([np.zeros(len(codes)), upper]), method="highs")
        best = -result.fun
        if 1e-7 < best < k - 1e-7:
            return False
    return True


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(tiny_collections())
def test_the_lp_relaxation_agrees_with_one_program_per_tuple(case):
    # veil's LP answer solves few programs (each bringing many tuples to k at once), then one per
    # tuple left; its verdict must be that of one program per tuple.
    rows, specs, k = case
    counter = counter_of([[str(v) for v in r] for r in rows], names=("a", "b", "s"), sensitive="s",
                         hierarchies={"a": A3})
    collection = MarginalCollection.from_specs(
        counter, [MarginalSpec.of(names, {"a": lv} if "a" in names else {}) for names, lv in specs])
    lp = KCombinatorialAnonymity(k, method="lp").evaluate(collection)
    assume(not lp.details["decided_by"].startswith("closed form"))
    assert lp.method == "lp" and lp.passed == lp_relaxation_k_combinatorial(counter, collection, k)


def test_without_the_closed_form_larger_domains_get_the_lp_relaxation_labelled(subset_counter):
    base = subset_counter.count(subset_counter.base_spec((0, 3, 1, 1, 2, 2, 1)))
    # occupation in two marginals: the closed form does not apply.
    extra = subset_counter.count(MarginalSpec.of(["age", "occupation"], {"age": 2}))
    collection = MarginalCollection(subset_counter, [base, extra])
    result = KCombinatorialAnonymity(5, exact_limit=10).evaluate(collection)
    assert result.method == "lp" and "LP relaxation" in result.note and "limit of 10" in result.note
    one_sentence_error(InfeasibleError, lambda: KCombinatorialAnonymity(5, method="exact", exact_limit=10)
                       .evaluate(collection), "exact k-combinatorial check's limit of 10", "LP relaxation")
    one_sentence_error(InfeasibleError, lambda: KCombinatorialAnonymity(5, lp_limit=10).evaluate(collection),
                       "even for the LP relaxation", "lp_limit")
    exact = KCombinatorialAnonymity(5, method="exact", exact_limit=10_000).evaluate(collection)
    assert exact.method == "exact" and exact.note is None and exact.details["decided_by"] == "bounds and integer programs"
    assert exact.details["cells"] == result.details["cells"] > 10


def test_decomposable_collections_with_one_sensitive_marginal_are_decided_in_closed_form(subset_counter):
    base = subset_counter.count(subset_counter.base_spec((1, 3, 1, 2, 3, 2, 2)))
    for specs, k in (([MarginalSpec.of(["age", "sex"], {"age": 2})], 5), ([MarginalSpec.of(["age", "sex"])], 5),
                     ([MarginalSpec.of(["education", "race"])], 3)):
        collection = MarginalCollection(subset_counter, [base] + [subset_counter.count(s) for s in specs])
        result = KCombinatorialAnonymity(k).evaluate(collection)
        link = KLinkAnonymity(k).evaluate(collection)
        assert result.details["decided_by"].startswith("closed form")
        assert result.passed == link.passed and [f.cell for f in result.failures] == [f.cell for f in link.failures]


def test_bad_model_parameters_are_refused():
    one_sentence_error(ParameterError, lambda: KLinkAnonymity(0), "at least 1")
    one_sentence_error(ParameterError, lambda: KCombinatorialAnonymity(2, method="milp"), "'auto', 'exact' or 'lp'")
    one_sentence_error(ParameterError, lambda: MaxEntLDiversity(0.5), "at least 1")
    one_sentence_error(ParameterError, lambda: MaxEntLDiversity(2, variant="recursive"), "'entropy' or 'distinct'")


# ------------------------------------------------------------------------------------------
# MaxEnt ℓ-diversity


def test_maxent_l_diversity_of_the_base_table_is_its_l_diversity(adult_counter):
    levels = (0, 2, 1, 1, 2, 1, 1)
    base = MarginalCollection(adult_counter, [adult_counter.count(adult_counter.base_spec(levels))])
    classes = veil.EquivalenceClasses.from_dataset(adult_counter.dataset, levels)
    entropy = MaxEntLDiversity(3).evaluate(base)
    assert entropy.level == pytest.approx(veil.EntropyLDiversity().evaluate(classes).level, rel=1e-12)
    assert entropy.details["groups"] == classes.n_classes
    assert MaxEntLDiversity(3, "distinct").evaluate(base).level == veil.DistinctLDiversity().evaluate(classes).level


def test_maxent_l_diversity_with_the_sensitive_marginal_alone():
    # The QIs and the sensitive attribute published apart: every group sees the table's
    # distribution of s (2 of "x", 1 of "y", 1 of "z").
    counter = counter_of([["0", "x"], ["0", "x"], ["1", "y"], ["1", "z"]], names=("a", "s"), sensitive="s")
    collection = MarginalCollection.from_specs(counter, [MarginalSpec.of(["a"]), MarginalSpec.of(["s"])])
    expected = math.exp(-(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25)))
    result = MaxEntLDiversity(3).evaluate(collection)
    assert result.level == pytest.approx(expected) and not result.passed
    assert MaxEntLDiversity(3, "distinct").evaluate(collection).passed
    # Published together, group a=0 holds only "x".
    joint = MarginalCollection.from_specs(counter, [MarginalSpec.of(["a", "s"])])
    failing = MaxEntLDiversity(2, "distinct").evaluate(joint)
    assert [f.cell for f in failing.failures] == [{"a": "0"}] and failing.level == 1


def test_maxent_conditional_closed_form_equals_ipf(subset_counter):
    specs = [subset_counter.base_spec((1, 3, 1, 2, 3, 2, 2)), MarginalSpec.of(["sex", "occupation"]),
             MarginalSpec.of(["education", "occupation"], {"occupation": 1})]
    tables = [subset_counter.count(s) for s in specs]
    closed = MaxEntEstimate().fit(tables, subset_counter.domains)
    ipf = MaxEntEstimate(method="ipf", tol=1e-13).fit(tables, subset_counter.domains)
    assert closed.method_ == "closed form"
    a, b = closed.conditional("occupation"), ipf.conditional("occupation")
    assert sorted(np.round(np.exp(a.entropy()), 9)) == pytest.approx(sorted(np.round(np.exp(b.entropy()), 9)))
    assert sorted(a.distinct()) == sorted(b.distinct())


# ------------------------------------------------------------------------------------------
# The greedy search


def test_greedy_search_keeps_privacy_and_lowers_kl(subset_counter):
    models = [KLinkAnonymity(5), MaxEntLDiversity(2)]
    base = subset_counter.count(subset_counter.base_spec((1, 3, 1, 2, 3, 2, 2)))
    search = GreedyMarginalSearch(models, max_marginals=3, max_attributes=2, max_cells=60).fit(subset_counter, [base])
    collection = search.collection_
    assert collection.marginals[0] is base and 1 <= len(search.steps_) <= 3
    assert len(collection) == 1 + len(search.steps_)
    kls = [search.start_kl_] + [s.kl for s in search.steps_]
    assert all(later < earlier for earlier, later in zip(kls, kls[1:]))
    assert search.kl_ == kls[-1] == pytest.approx(collection.kl_divergence(), abs=1e-12)
    for model in models:
        assert model.evaluate(collection).passed
    for step, table in zip(search.steps_, collection.marginals[1:]):
        assert len(table.attributes) <= 2 and len(table.counts) <= 60
        assert step.marginal.attributes == table.attributes and step.cells == len(table.counts)
    assert structure(collection.marginals)[2] is not None


def test_the_search_refuses_a_start_that_fails_its_models(subset_counter):
    base = subset_counter.count(subset_counter.base_spec((0,) * 7))
    one_sentence_error(InfeasibleError, lambda: GreedyMarginalSearch([KLinkAnonymity(5)]).fit(subset_counter, [base]),
                       "the search cannot start: marginal 1", "fails 5-link anonymity")
    one_sentence_error(ParameterError, lambda: GreedyMarginalSearch([]).fit(subset_counter), "privacy model")
    one_sentence_error(ParameterError, lambda: GreedyMarginalSearch([KLinkAnonymity(2)], max_attributes=0)
                       .fit(subset_counter), "max_attributes")
