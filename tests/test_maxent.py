"""The maximum-entropy estimate from generalized marginals and its KL-divergence (Kifer and Gehrke,
SIGMOD 2006): hand-computed cases, closed form against IPF, and properties."""

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
from veil.marginals.contingency import ContingencyTable
from veil.marginals.decomposable import junction_tree
from veil.marginals.maxent import MaxEntEstimate
from veil.metrics import make_metric

# Attribute "a" has values 0..3 and a hierarchy {0,1}→lo, {2,3}→hi, then *.
A_HIERARCHY = Hierarchy([["0", "lo", "*"], ["1", "lo", "*"], ["2", "hi", "*"], ["3", "hi", "*"]], name="a")


def make_counter(rows, names=("a", "b", "c"), sensitive=None, hierarchy=True) -> MarginalCounter:
    frame = pd.DataFrame(np.asarray(rows), columns=list(names)).astype(str)
    qis = [n for n in names if n != sensitive]
    hierarchies = {"a": A_HIERARCHY} if hierarchy and "a" in names else {}
    ds = veil.Dataset(frame, quasi_identifiers=qis, sensitive=sensitive, hierarchies=hierarchies)
    return MarginalCounter(ds)


def domain_codes(counter: MarginalCounter) -> np.ndarray:
    """Every tuple of the domain, as level-0 codes in the counter's attribute order."""
    sizes = [counter.domains[a].lut.shape[0] for a in counter.attributes]
    return np.array(list(itertools.product(*(range(s) for s in sizes))), dtype=np.int64)


def fit(counter, specs, **params) -> MaxEntEstimate:
    tables = [counter.count(MarginalSpec.of(*s) if isinstance(s, tuple) else s) for s in specs]
    return MaxEntEstimate(**params).fit(tables, counter.domains)


def test_two_attributes_max_ent_is_the_product_of_the_marginals():
    # p: (x,u) 2, (x,v) 1, (y,v) 1 → p_A = (3/4, 1/4), p_B = (1/2, 1/2).
    counter = make_counter([["x", "u"], ["x", "u"], ["x", "v"], ["y", "v"]], names=("a", "b"), hierarchy=False)
    estimate = fit(counter, [(["a"],), (["b"],)])
    assert estimate.method_ == "closed form"
    codes = domain_codes(counter)
    labels = {a: counter.domains[a].labels[0] for a in counter.attributes}
    expected = {("x", "u"): 3 / 8, ("x", "v"): 3 / 8, ("y", "u"): 1 / 8, ("y", "v"): 1 / 8}
    got = np.exp(estimate.log_prob(codes))
    for row, q in zip(codes, got):
        assert q == pytest.approx(expected[(labels["a"][row[0]], labels["b"][row[1]])], abs=1e-15)
    # KL(p ‖ p_A·p_B) is the mutual information of A and B.
    mutual = 0.5 * math.log(0.5 / (3 / 8)) + 0.25 * math.log(0.25 / (3 / 8)) + 0.25 * math.log(0.25 / (1 / 8))
    assert estimate.kl_divergence(counter.observed) == pytest.approx(mutual, abs=1e-15)


def test_generalized_cells_spread_uniformly_over_the_values_they_cover():
    # a at level 1: lo = {0, 1} holds 3 records, hi holds 1 and covers only 3 of the data's values
    # (2 does not occur): 0 and 1 get 3/8 each, 3 gets 1/4; b is in no marginal, so uniform.
    counter = make_counter([["0", "x"], ["0", "x"], ["1", "y"], ["3", "y"]], names=("a", "b"))
    estimate = fit(counter, [(["a"], {"a": 1})])
    q = np.exp(estimate.log_prob(domain_codes(counter))).reshape(3, 2)
    np.testing.assert_allclose(q[:, 0], q[:, 1], rtol=1e-15)
    labels = counter.domains["a"].labels[0]
    assert dict(zip(labels, q.sum(axis=1))) == pytest.approx({"0": 3 / 8, "1": 3 / 8, "3": 1 / 4}, abs=1e-15)
    assert q.sum() == pytest.approx(1.0)


CHAIN = [[0, "x", "u"], [0, "x", "u"], [1, "y", "u"], [2, "y", "v"], [3, "x", "v"], [3, "y", "v"], [1, "x", "w"],
         [2, "y", "w"], [0, "y", "u"]]


@pytest.mark.parametrize("specs", [
    [(["a", "b"],), (["b", "c"],)],
    [(["a", "b"], {"a": 1}), (["b", "c"],)],
    [(["a", "b"],), (["a", "c"], {"a": 1})],
    [(["a", "b"],), (["b", "c"],), (["a"], {"a": 2})],
])
def test_decomposable_chain_closed_form_and_ipf_agree(specs):
    counter = make_counter(CHAIN)
    closed = fit(counter, specs)
    ipf = fit(counter, specs, method="ipf", tol=1e-14)
    assert closed.method_ == "closed form" and ipf.method_ == "iterative proportional fitting"
    codes = domain_codes(counter)
    np.testing.assert_allclose(np.exp(closed.log_prob(codes)), np.exp(ipf.log_prob(codes)), rtol=0, atol=1e-9)
    assert closed.kl_divergence(counter.observed) == pytest.approx(ipf.kl_divergence(counter.observed), abs=1e-9)


def test_chain_closed_form_is_p_ab_times_p_c_given_b():
    counter = make_counter(CHAIN, hierarchy=False)
    estimate = fit(counter, [(["a", "b"],), (["b", "c"],)])
    frame = pd.DataFrame(np.asarray(CHAIN).astype(str), columns=["a", "b", "c"])
    n = len(frame)
    ab = frame.groupby(["a", "b"]).size() / n
    bc = frame.groupby(["b", "c"]).size() / n
    b = frame.groupby("b").size() / n
    labels = [counter.domains[x].labels[0] for x in "abc"]
    for row, logq in zip(domain_codes(counter), estimate.log_prob(domain_codes(counter))):
        va, vb, vc = (labels[j][row[j]] for j in range(3))
        expected = ab.get((va, vb), 0.0) * bc.get((vb, vc), 0.0) / b[vb]
        assert math.exp(logq) == pytest.approx(expected, abs=1e-15)


def test_a_cycle_of_pairs_is_fitted_by_ipf():
    counter = make_counter(CHAIN)
    estimate = fit(counter, [(["a", "b"],), (["b", "c"],), (["a", "c"],)])
    assert not estimate.decomposable_ and estimate.method_ == "iterative proportional fitting"
    assert estimate.residual_ <= estimate.tol and estimate.iterations_ >= 1


def test_kl_is_zero_when_the_full_table_is_published():
    counter = make_counter(CHAIN)
    full = MarginalCollection.from_specs(counter, [MarginalSpec.of(["a", "b", "c"])])
    assert full.kl_divergence() == 0.0
    assert MarginalCollection(counter, [counter.observed]).kl_divergence() == 0.0


def test_adult_full_table_and_product_of_one_way_marginals(adult_csv, adult_hierarchy_paths):
    adult = veil.load_adult()
    counter = MarginalCounter(adult)
    assert MarginalCollection(counter, [counter.observed]).kl_divergence() == 0.0
    # One-way marginals: the KL-divergence is the total correlation Σ H(X_i) − H(X).
    one_way = MarginalCollection.from_specs(counter, [MarginalSpec.of([a]) for a in counter.attributes])
    frame = pd.read_csv(adult_csv, sep=";", dtype=str, keep_default_na=False)[list(counter.attributes)]

    def entropy(counts):
        p = counts.to_numpy() / counts.sum()
        return float(-(p * np.log(p)).sum())

    total = sum(entropy(frame[a].value_counts()) for a in counter.attributes) - entropy(frame.value_counts())
    assert one_way.kl_divergence() == pytest.approx(total, rel=1e-12)


@pytest.mark.parametrize("sensitive", [None, "occupation"])
def test_one_published_table_gives_the_kl_metric(sensitive):
    adult = veil.load_adult(sensitive=(sensitive,) if sensitive else ())
    counter = MarginalCounter(adult)
    levels = (0, 2, 1, 1, 2, 1, 1)
    base = counter.count(counter.base_spec(levels))
    classes = veil.EquivalenceClasses.from_dataset(adult, levels)
    metric = make_metric("kl", sensitive=sensitive)
    assert MarginalCollection(counter, [base]).kl_divergence() == pytest.approx(metric.value(classes), rel=1e-12)


def test_junction_tree_of_a_triangle_is_none_and_of_a_star_exists():
    a, b, c, d = ("a", 0), ("b", 0), ("c", 0), ("d", 0)
    assert junction_tree([frozenset({a, b}), frozenset({b, c}), frozenset({a, c})]) is None
    edges = junction_tree([frozenset({a, b}), frozenset({a, c}), frozenset({a, d}), frozenset({b, d, ("e", 0)})])
    assert edges is None  # a–b–d–a is a cycle
    assert junction_tree([frozenset({a, b}), frozenset({a, c}), frozenset({a, d})]) is not None


def test_implied_marginals_add_nothing():
    counter = make_counter(CHAIN)
    fine = fit(counter, [(["a", "b"],)])
    both = fit(counter, [(["a", "b"],), (["a"], {"a": 1}), (["b"],)])
    assert len(both.marginals_) == 1
    assert fine.kl_divergence(counter.observed) == both.kl_divergence(counter.observed)


# ------------------------------------------------------------------------------------------
# Bad input


def test_ipf_that_does_not_converge_names_its_residual():
    counter = make_counter(CHAIN)
    one_sentence_error(InfeasibleError, lambda: fit(counter, [(["a", "b"],), (["b", "c"],), (["a", "c"],)],
                                                    max_iter=1), "did not converge", "residual", "max_iter")


def test_a_dense_table_too_large_names_its_size():
    counter = make_counter(CHAIN)
    one_sentence_error(InfeasibleError, lambda: fit(counter, [(["a", "b"],), (["b", "c"],), (["a", "c"],)],
                                                    max_cells=10), "24 cells", "max_cells")


def test_marginals_of_different_tables_are_refused():
    counter = make_counter(CHAIN)
    short = ContingencyTable(("a",), (0,), np.array([[0]]), np.array([3]))
    one_sentence_error(ParameterError, lambda: MaxEntEstimate().fit([counter.count(MarginalSpec.of(["b"])), short],
                                                                     counter.domains), "different numbers")
    # Same total, different distribution of b.
    b = counter.count(MarginalSpec.of(["a", "b"]))
    other = ContingencyTable(("b", "c"), (0, 0), np.array([[0, 0], [1, 1]]), np.array([1, b.total - 1]))
    one_sentence_error(ParameterError, lambda: MaxEntEstimate().fit([b, other], counter.domains), "disagree on b")


def test_bad_levels_and_attributes_are_refused():
    counter = make_counter(CHAIN)
    one_sentence_error(ColumnError, lambda: MaxEntEstimate().fit(
        [ContingencyTable(("a",), (3,), np.array([[0]]), np.array([9]))], counter.domains), "levels 0 to 2, not 3")
    one_sentence_error(ColumnError, lambda: MaxEntEstimate().fit(
        [ContingencyTable(("z",), (0,), np.array([[0]]), np.array([9]))], counter.domains), "'z'")
    one_sentence_error(ParameterError, lambda: MaxEntEstimate(method="exact").fit([], counter.domains),
                       "'auto' or 'ipf'")
    one_sentence_error(ParameterError, lambda: MaxEntEstimate(tol=0).fit([], counter.domains), "tolerance")


# ------------------------------------------------------------------------------------------
# Properties


@st.composite
def tables_and_collections(draw, extra: bool = False):
    """A small table over a (4 values, hierarchy), b, c (2–3 values), and marginals of it."""
    n = draw(st.integers(3, 25))
    rows = draw(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 1)), min_size=n, max_size=n))
    marginal = st.tuples(st.lists(st.sampled_from("abc"), min_size=1, max_size=3, unique=True), st.integers(0, 2))
    specs = draw(st.lists(marginal, min_size=1, max_size=4))
    more = draw(marginal) if extra else None
    return rows, specs, more


def _spec(names, level):
    return MarginalSpec.of(names, {"a": level} if "a" in names else {})


def _domain_q(estimate, counter):
    codes = domain_codes(counter)
    return codes, np.exp(estimate.log_prob(codes))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables_and_collections())
def test_ipf_reproduces_every_marginal(case):
    rows, specs, _ = case
    counter = make_counter(rows)
    tables = [counter.count(_spec(*s)) for s in specs]
    estimate = MaxEntEstimate(method="ipf", tol=1e-12).fit(tables, counter.domains)
    codes, q = _domain_q(estimate, counter)
    assert q.sum() == pytest.approx(1.0, abs=1e-9)
    columns = {a: codes[:, j] for j, a in enumerate(counter.attributes)}
    for table in tables:
        coarse = [counter.domains[a].lut[columns[a], lv] for a, lv in table.variables]
        fitted = pd.Series(q).groupby([pd.Series(c) for c in coarse]).sum()
        target = dict(zip(map(tuple, table.cells.tolist()), table.counts / table.total))
        for cell, mass in fitted.items():
            cell = cell if isinstance(cell, tuple) else (cell,)
            assert mass == pytest.approx(target.get(tuple(int(v) for v in cell), 0.0), abs=1e-9)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables_and_collections(extra=True))
def test_kl_is_nonnegative_and_a_marginal_never_raises_it(case):
    rows, specs, more = case
    counter = make_counter(rows)
    tables = [counter.count(_spec(*s)) for s in specs]
    before = MarginalCollection(counter, tables, tol=1e-13)
    after = before.with_marginal(counter.count(_spec(*more)))
    kl_before, kl_after = before.kl_divergence(), after.kl_divergence()
    assert 0.0 <= kl_after <= kl_before + 1e-9
    assert math.isfinite(kl_before)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables_and_collections())
def test_closed_form_equals_ipf_whenever_decomposable(case):
    rows, specs, _ = case
    counter = make_counter(rows)
    tables = [counter.count(_spec(*s)) for s in specs]
    closed = MaxEntEstimate().fit(tables, counter.domains)
    assume(closed.decomposable_)
    ipf = MaxEntEstimate(method="ipf", tol=1e-13).fit(tables, counter.domains)
    codes = domain_codes(counter)
    np.testing.assert_allclose(np.exp(closed.log_prob(codes)), np.exp(ipf.log_prob(codes)), atol=1e-9)


def test_kl_metric_with_a_sensitive_column_and_suppression_by_hand():
    rows = [["0", "x", "s"], ["0", "x", "t"], ["1", "x", "s"], ["1", "y", "s"], ["3", "y", "t"], ["3", "y", "t"],
            ["2", "x", "s"]]
    frame = pd.DataFrame(rows, columns=["a", "b", "s"])
    ds = veil.Dataset(frame, quasi_identifiers=["a", "b"], sensitive="s", hierarchies={"a": A_HIERARCHY})
    classes = veil.EquivalenceClasses.from_dataset(ds, {"a": 1})
    suppressed = classes.sizes == 1  # (lo, y) and (hi, x), one record each
    metric = make_metric("kl", sensitive="s")
    n, n_supp, domain = len(rows), int(classes.sizes[suppressed].sum()), 4 * 2 * 2
    box = {"lo": 2, "hi": 2}
    group = {"0": "lo", "1": "lo", "2": "hi", "3": "hi"}
    grouped = frame.assign(g=frame["a"].map(group))
    counts, sizes = grouped.groupby(["g", "b", "s"]).size(), grouped.groupby(["g", "b"]).size()
    expected = 0.0
    for (a, b, s), p in (frame.value_counts() / n).items():
        spread = n_supp / (n * domain)
        published = sizes[(group[a], b)] > 1
        q = counts[(group[a], b, s)] / (n * box[group[a]]) + spread if published else spread
        expected += p * math.log(p / q)
    assert metric.value(classes, suppressed) == pytest.approx(expected, rel=1e-12)
    assert metric.value(classes) == pytest.approx(MarginalCollection(
        MarginalCounter(ds), [MarginalCounter(ds).count(MarginalCounter(ds).base_spec({"a": 1}))]).kl_divergence())
