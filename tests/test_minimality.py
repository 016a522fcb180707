"""The minimality attack: the seed's q1/q2 example, a full-domain release whose optimality tells
more than its classes, the publisher models checked against veil's own search, and the bound used
on large tables checked against exact enumeration.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import veil
from veil import Dataset, Hierarchy, builders
from veil.anonymize import FullDomain, InfeasibleError
from veil.classes import EquivalenceClasses
from veil.anonymize.lattice import Lattice
from veil.attacks.minimality import (MinimalFullDomain, MinimalityAttack, MinimalRecoding, OptimalFullDomain,
                                     PublishedClasses)
from veil.errors import ColumnError, DataError, ParameterError
from veil.metrics import make_metric
from veil.models import AlphaKAnonymity, DistinctLDiversity, EntropyLDiversity, KAnonymity

from helpers import one_sentence_error

PROPERTY = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
B_HIERARCHY = Hierarchy([["1", "1-2", "*"], ["2", "1-2", "*"], ["3", "3", "*"]], name="b")


def test_seed_q1_q2_example_gives_cancer_for_q1():
    # Slides 23-31: q1, q2 → Q; P[Cancer = yes] ≤ ½ wanted; released Q yes, Q yes, Q no, Q no,
    # q2 no, q2 no. Of the 15 ways two q1 and four q2 people can hold the values, only "both q1
    # have cancer" needed generalizing at all: P[Cancer = yes | q1] = 1.
    hierarchy = Hierarchy([["q1", "Q"], ["q2", "Q"]], name="qid")
    population = Dataset(pd.DataFrame({"qid": ["q1", "q1", "q2", "q2", "q2", "q2"]}), quasi_identifiers=["qid"],
                         hierarchies={"qid": hierarchy})
    release = pd.DataFrame({"qid": ["Q", "Q", "Q", "Q", "q2", "q2"], "cancer": ["yes", "yes", "no", "no", "no", "no"]})
    model = AlphaKAnonymity(0.5, value="yes")
    attack = MinimalityAttack(MinimalRecoding([model]), threshold=0.5, values=["yes"])
    attack.fit(release, population, sensitive="cancer", quasi_identifiers=["qid"])
    assert attack.exact_ and attack.tables_ == 15 and attack.consistent_ == 1
    yes = list(attack.values_).index("yes")
    assert attack.posterior_[:2, yes].tolist() == [1.0, 1.0]
    assert attack.posterior_[2:, yes].tolist() == [0.0] * 4
    assert attack.exceeding_ == 2
    # The model itself is Wong et al.'s simple (α,k)-anonymity: only 'yes' is bounded.
    assert model.evaluate(veil.check(Dataset(release, quasi_identifiers=["qid"], sensitive="cancer")).classes).passed


def _example_release():
    # Two quasi-identifiers; optimal full-domain 2-diversity publishes one class of everyone.
    frame = pd.DataFrame({"a": ["x", "x", "y", "x", "y", "x"], "b": ["3", "1", "2", "2", "1", "2"],
                          "s": ["b", "a", "b", "a", "b", "c"]})
    hierarchies = {"a": builders.flat(["x", "y"]), "b": B_HIERARCHY}
    ds = Dataset(frame, quasi_identifiers=["a", "b"], sensitive="s", hierarchies=hierarchies)
    population = Dataset(frame[["a", "b"]], quasi_identifiers=["a", "b"], hierarchies=hierarchies)
    return FullDomain([DistinctLDiversity(2)]).fit_transform(ds), population


def test_optimal_full_domain_release_tells_more_than_its_class():
    release, population = _example_release()
    assert release.manifest["node"] == {"a": 1, "b": 2} and release.manifest["classes"]["released"] == 1
    attack = MinimalityAttack(OptimalFullDomain([DistinctLDiversity(2)])).fit(release, population)
    # The class holds a, a, b, b, b, c: no value above ½ in it. But the node that keeps a and
    # generalizes b fully has less loss, so it failed: its y class (two people) holds one value
    # twice, a a (then x holds b b b c: 4 ways) or b b (x holds a a b c: 12 ways). So the two y
    # people hold b with probability 12/16 = ¾.
    assert attack.tables_ == 60 and attack.consistent_ == 16
    b = list(attack.values_).index("b")
    y = population.table.data.column("a").to_pylist()
    for person, posterior in enumerate(attack.posterior_[:, b]):
        assert posterior == pytest.approx(0.75 if y[person] == "y" else 3 / 8)
    assert attack.exceeding_ == 2
    # Whatever the adversary knows, each value's posteriors add up to its count in the class.
    assert attack.posterior_.sum(axis=0).tolist() == pytest.approx([2, 3, 1])


def _brute_force_could_return(dataset: Dataset, node, models, metric) -> bool:
    """Whether ``node`` has the least loss among the lattice nodes where every class satisfies the
    models (computed node by node, nothing shared with the attack)."""
    heights = [dataset.generalizations[q].height for q in dataset.quasi_identifiers]
    lattice = Lattice(heights)
    losses, feasible = [], []
    for levels in lattice.levels:
        classes = EquivalenceClasses.from_dataset(dataset, levels)
        feasible.append(all(m.evaluate(classes).passed for m in models))
        losses.append(metric.loss(classes))
    losses = np.array(losses)
    best = losses[np.array(feasible)].min()
    i = lattice.index(node)
    return bool(feasible[i]) and losses[i] <= best + 1e-12


@st.composite
def small_tables(draw):
    n = draw(st.integers(4, 7))
    a = draw(st.lists(st.sampled_from(["x", "y"]), min_size=n, max_size=n))
    b = draw(st.lists(st.sampled_from(["1", "2", "3"]), min_size=n, max_size=n))
    s = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
    return pd.DataFrame({"a": a, "b": b, "s": s})


def _setting(frame):
    hierarchies = {"a": builders.flat(sorted(set(frame["a"]))), "b": B_HIERARCHY}
    ds = Dataset(frame, quasi_identifiers=["a", "b"], sensitive="s", hierarchies=hierarchies)
    population = Dataset(frame[["a", "b"]], quasi_identifiers=["a", "b"], hierarchies=hierarchies)
    return ds, population


MODELS = st.sampled_from([[DistinctLDiversity(2)], [EntropyLDiversity(1.8)], [KAnonymity(2), DistinctLDiversity(2)]])


@settings(max_examples=25, **PROPERTY)
@given(small_tables(), MODELS)
def test_optimal_publisher_is_the_search(frame, models):
    ds, population = _setting(frame)
    try:
        release = FullDomain(models).fit_transform(ds)
    except InfeasibleError:
        event("infeasible")
        return
    attack = MinimalityAttack(OptimalFullDomain(models)).fit(release, population)
    publisher = attack.publisher
    node = tuple(release.manifest["node"].values())
    metric = make_metric("loss")
    # Every candidate input: the attack keeps it exactly when the search could return the node.
    from veil.attacks.minimality import _candidates

    for codes in _candidates(attack.published_, attack.person_class_, None, None):
        candidate = Dataset(frame.assign(s=np.asarray(attack.values_, dtype=object)[codes]),
                            quasi_identifiers=["a", "b"], sensitive="s", hierarchies=ds.hierarchies)
        assert (publisher.weight(codes) == 1.0) == _brute_force_could_return(candidate, node, models, metric)
    # The true input is one of them, and posteriors add up to the class counts.
    counts = attack.published_.counts
    for c in range(counts.shape[0]):
        assert attack.posterior_[attack.person_class_ == c].sum(axis=0) == pytest.approx(counts[c])


@settings(max_examples=30, **PROPERTY)
@given(small_tables(), MODELS, st.booleans())
def test_the_bound_never_exceeds_the_exact_count(frame, models, minimal):
    ds, population = _setting(frame)
    try:
        release = FullDomain(models).fit_transform(ds)
    except InfeasibleError:
        return
    publisher = (MinimalFullDomain if minimal else OptimalFullDomain)(models)
    try:
        exact = MinimalityAttack(publisher, threshold=0.5).fit(release, population)
    except DataError:
        event("the optimal node is not minimal")
        return
    bound = MinimalityAttack(type(publisher)(models), threshold=0.5, max_tables=0).fit(release, population)
    assert not bound.exact_ and exact.exact_
    assert bound.exceeding_ <= exact.exceeding_
    # Where the bound says a class is untouched, its members' exact posteriors are its frequencies.
    counts = exact.published_.counts
    for c in np.flatnonzero(bound.exact_class_):
        members = exact.person_class_ == c
        assert exact.posterior_[members] == pytest.approx(np.tile(counts[c] / counts[c].sum(), (members.sum(), 1)))
        event("an untouched class")
    if bound.count_exact_:
        assert bound.exceeding_ == exact.exceeding_


def test_adult_optimal_release_bound_is_exact_where_nothing_touches_the_classes():
    ds = veil.load_adult()
    population = Dataset(ds.table, quasi_identifiers=ds.quasi_identifiers,
                         hierarchies={q: ds.hierarchies[q] for q in ds.quasi_identifiers})
    models = [DistinctLDiversity(5)]
    release = FullDomain(models).fit_transform(ds)
    attack = MinimalityAttack(OptimalFullDomain(models)).fit(release, population)
    summary = attack.summary()
    assert not attack.exact_ and summary["people"] == 30162
    # The class-frequency count of exposed people is a floor whatever the adversary reasons.
    counts = attack.published_.counts
    floor = sum(int(row.sum()) for row in counts if row.max() > row.sum() / 5)
    assert attack.exceeding_ >= 1 and attack.exceeding_ <= 30162
    if attack.count_exact_:
        assert attack.exceeding_ == floor


def test_bad_input():
    release, population = _example_release()
    one_sentence_error(ColumnError, lambda: PublishedClasses.read(release.data.drop(columns=["s"]), ["a", "b"], "s"),
                       "no column 's'")
    fewer = Dataset(pd.DataFrame({"a": ["x"], "b": ["1"]}), quasi_identifiers=["a", "b"],
                    hierarchies={"a": builders.flat(["x", "y"]), "b": B_HIERARCHY})
    one_sentence_error(DataError, lambda: MinimalityAttack(OptimalFullDomain([DistinctLDiversity(2)])).fit(
        release, fewer), "1 people", "6 rows")
    publisher = OptimalFullDomain([DistinctLDiversity(2)])
    for tau in (0, 1, 1.5):
        one_sentence_error(ParameterError, lambda: MinimalityAttack(publisher, threshold=tau), "strictly between 0 "
                           "and 1")
    one_sentence_error(ParameterError, lambda: MinimalityAttack(publisher, values=["a", "z"]).fit(release, population),
                       "holds no value 'z'", "its values are a, b, c.")
    # A Mondrian release (value sets) is not a full-domain generalization of anyone.
    frame = pd.DataFrame({"a": ["x", "y"] * 6, "b": ["1", "2", "3"] * 4, "s": list("abcabcabcabc")})
    ds, population = _setting(frame)
    mondrian = veil.anonymize.Mondrian([DistinctLDiversity(2)], categorical="order").fit_transform(ds)
    one_sentence_error(DataError, lambda: MinimalityAttack(OptimalFullDomain([DistinctLDiversity(2)])).fit(
        mondrian, population), "not a full-domain generalization")
