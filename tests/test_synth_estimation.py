"""Private-PGM estimation: the junction tree, exact inference, and the fit to noisy marginals."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tests.helpers import one_sentence_error
from veil.errors import ParameterError
from veil.synth._junction_tree import JunctionTree
from veil.synth.estimation import Measurement, estimate
from veil.synth.graphical_model import GraphicalModel, model_cells

NAMES = "abcde"


def random_model(seed: int, columns: int = 5, cliques: int = 3, total: float = 1000.0) -> GraphicalModel:
    """A model over ``columns`` columns of sizes 2-3 with random cliques of 1-3 columns and random
    potentials."""
    rng = np.random.default_rng(seed)
    sizes = {NAMES[i]: int(rng.integers(2, 4)) for i in range(columns)}
    chosen = [tuple(rng.choice(list(sizes), size=int(rng.integers(1, 4)), replace=False)) for _ in range(cliques)]
    tree = JunctionTree.build(sizes, chosen)
    pots = [rng.normal(0, 1.5, size=s) for s in tree.shapes]
    return GraphicalModel(tree, pots, total)


def joint(model: GraphicalModel) -> np.ndarray:
    """The model's full joint (counts) by brute force: the sum of the potentials broadcast."""
    names = model.names
    shape = tuple(model.sizes[n] for n in names)
    log = np.zeros(shape)
    for clique, pot in zip(model.cliques, model.potentials):
        log = log + pot.reshape([model.sizes[n] if n in clique else 1 for n in names])
    p = np.exp(log - log.max())
    return p / p.sum() * model.total


def brute_marginal(model: GraphicalModel, clique) -> np.ndarray:
    full = joint(model)
    names = model.names
    letters = "".join(string_letter(i) for i in range(len(names)))
    out = "".join(string_letter(names.index(c)) for c in clique)
    return np.einsum(f"{letters}->{out}", full)


def string_letter(i: int) -> str:
    return "abcdefghijklmnop"[i]


def counts(codes: np.ndarray, names, sizes, clique) -> np.ndarray:
    shape = [sizes[c] for c in clique]
    idx = np.ravel_multi_index(tuple(codes[:, names.index(c)] for c in clique), shape)
    return np.bincount(idx, minlength=math.prod(shape)).reshape(shape).astype(float)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5))
def test_project_agrees_with_brute_force_on_every_small_subset(seed, cliques):
    model = random_model(seed, cliques=cliques)
    for k in (1, 2, 3):
        for subset in itertools.combinations(model.names, k):
            for order in (subset, subset[::-1]):
                got = model.project(order)
                assert got.shape == tuple(model.sizes[c] for c in order)
                assert got.sum() == pytest.approx(model.total, rel=1e-9)
                assert np.allclose(got, brute_marginal(model, order), rtol=1e-7, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 8), st.integers(2, 9))
def test_junction_tree_covers_the_cliques_and_has_the_running_intersection_property(seed, cliques, columns):
    rng = np.random.default_rng(seed)
    names = [f"c{i}" for i in range(columns)]
    sizes = {n: int(rng.integers(1, 5)) for n in names}
    chosen = [tuple(rng.choice(names, size=int(rng.integers(1, min(4, columns) + 1)), replace=False))
              for _ in range(cliques)]
    tree = JunctionTree.build(sizes, chosen)
    for clique in chosen:
        assert tree.containing(clique) is not None
    assert set().union(*map(set, tree.cliques)) == set(names)
    m = len(tree.cliques)
    assert sum(p >= 0 for p in tree.parent) == m - 1 and sorted(tree.order) == list(range(m))
    for name in names:
        holding = {i for i in range(m) if name in tree.cliques[i]}
        # connected: exactly one clique holding it has its parent outside the set
        tops = [i for i in holding if tree.parent[i] not in holding]
        assert len(tops) == 1
    for i in range(m):   # no clique inside another
        assert not any(i != j and set(tree.cliques[i]) <= set(tree.cliques[j]) for j in range(m))
    assert model_cells(sizes, chosen) == tree.cells == sum(math.prod(sizes[c] for c in cl) for cl in tree.cliques)


def tree_table(seed: int, total: float = 10_000.0):
    """Exact marginals of a distribution that is a tree model (a chain a-b-c-d plus a star leaf e on b)."""
    rng = np.random.default_rng(seed)
    sizes = {"a": 3, "b": 4, "c": 2, "d": 3, "e": 2}
    edges = [("a", "b"), ("b", "c"), ("c", "d"), ("b", "e")]
    tree = JunctionTree.build(sizes, edges)
    pots = [rng.normal(0, 1.0, size=s) for s in tree.shapes]
    return sizes, edges, GraphicalModel(tree, pots, total)


def test_exact_marginals_of_a_tree_model_are_recovered():
    sizes, edges, truth = tree_table(3)
    ms = [Measurement(c, truth.project(c), 1e-3) for c in edges] + [Measurement((n,), truth.project((n,)), 1e-3)
                                                                       for n in sizes]
    model = estimate(sizes, ms, iterations=2000)
    assert model.total == pytest.approx(truth.total, rel=1e-9)
    for k in (1, 2, 3):
        for clique in itertools.combinations(sizes, k):
            assert np.abs(model.project(clique) - truth.project(clique)).max() < 1e-3 * truth.total


def test_estimation_error_shrinks_with_the_noise():
    sizes, edges, truth = tree_table(5)
    errors = []
    for sigma in (300.0, 30.0, 3.0):
        per_seed = []
        for seed in range(4):
            rng = np.random.default_rng(seed)
            ms = [Measurement(c, truth.project(c) + rng.normal(0, sigma, truth.project(c).shape), sigma)
                  for c in edges]
            model = estimate(sizes, ms, iterations=300)
            per_seed.append(np.mean([np.abs(model.project(c) - truth.project(c)).sum() for c in edges]))
        errors.append(np.mean(per_seed))
    assert errors[0] > errors[1] > errors[2]
    assert errors[2] < 0.02 * truth.total


def test_measurement_axes_may_come_in_any_order():
    sizes, edges, truth = tree_table(7)
    forward = estimate(sizes, [Measurement(("a", "b"), truth.project(("a", "b")), 1.0)], iterations=200)
    backward = estimate(sizes, [Measurement(("b", "a"), truth.project(("b", "a")), 1.0)], iterations=200)
    assert np.allclose(forward.project(("a", "b")), backward.project(("a", "b")))
    assert np.allclose(forward.project(("a", "b")), truth.project(("a", "b")), atol=1e-2)


def test_total_is_the_variance_weighted_mean_of_the_measured_sums():
    sizes = {"a": 2, "b": 2}
    ms = [Measurement(("a",), np.array([60.0, 40.0]), 1.0), Measurement(("b",), np.array([100.0, 100.0]), 2.0)]
    # sums 100 (variance 2) and 200 (variance 8): weights 1/2 and 1/8
    assert estimate(sizes, ms).total == pytest.approx((100 / 2 + 200 / 8) / (1 / 2 + 1 / 8))
    assert estimate(sizes, ms, total=50).total == 50


def test_estimation_is_deterministic_and_a_warm_start_reaches_the_same_fit():
    sizes, edges, truth = tree_table(11)
    rng = np.random.default_rng(0)
    ms = [Measurement(c, truth.project(c) + rng.normal(0, 20, truth.project(c).shape), 20.0) for c in edges]
    one = estimate(sizes, ms[:2], iterations=300)
    a = estimate(sizes, ms, iterations=400)
    b = estimate(sizes, ms, iterations=400)
    assert all(np.array_equal(x, y) for x, y in zip(a.potentials, b.potentials))
    warm = estimate(sizes, ms, iterations=400, warm_start=one)
    for c in edges:
        assert np.allclose(warm.project(c), a.project(c), atol=0.5)


def test_extra_cliques_enter_the_tree_and_model_cells_counts_them():
    sizes, edges, truth = tree_table(2)
    ms = [Measurement(c, truth.project(c), 1.0) for c in edges]
    extra = [("a", "c", "e")]
    model = estimate(sizes, ms, cliques=extra, iterations=50)
    assert model.tree.containing(("a", "c", "e")) is not None
    assert model.cells == model_cells(sizes, [c for c in edges] + extra)
    assert model_cells(sizes, edges) == 3 * 4 + 4 * 2 + 2 * 3 + 4 * 2


@pytest.mark.parametrize("call, words", [
    (lambda: estimate({"a": 2}, [Measurement(("z",), np.ones(2), 1.0)]), ["'z'", "unknown column"]),
    (lambda: estimate({"a": 2}, [Measurement(("a",), np.ones(3), 1.0)]), ["shape"]),
    (lambda: estimate({"a": 2}, [Measurement(("a",), np.ones(2), 0.0)]), ["noise scale", "positive"]),
    (lambda: estimate({"a": 2}, [Measurement(("a",), np.array([1.0, np.nan]), 1.0)]), ["not finite"]),
    (lambda: estimate({"a": 2}, [Measurement(("a",), np.ones(2), 1.0)], total=0), ["total"]),
    (lambda: estimate({"a": 2}, []), ["no measurements"]),
    (lambda: estimate({"a": 0}, [], total=1), ["'a'", "positive integer"]),
    (lambda: estimate({"a": 2}, [], total=1, cliques=[("a", "a")]), ["twice"]),
    (lambda: estimate({"a": 2}, [], total=1, warm_start=random_model(0)), ["warm start"]),
    (lambda: model_cells({"a": 2}, [("a", "q")]), ["'q'"]),
    (lambda: random_model(0).project(("a", "nope")), ["'nope'"]),
])
def test_bad_input_is_refused_in_one_sentence(call, words):
    one_sentence_error(ParameterError, call, *words)


def test_the_model_is_immutable():
    model = random_model(1)
    with pytest.raises(ValueError):
        model.potentials[0][...] = 0
    with pytest.raises(ValueError):
        model.clique_marginal(0)[...] = 0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=0, max_size=6), st.data())
def test_planned_sums_equal_numpy_sums(shape, data):
    from veil.synth._reduction import reduction

    axes = tuple(data.draw(st.sets(st.integers(0, len(shape) - 1))) if shape else ())
    x = np.random.default_rng(len(shape)).random(shape)
    got = reduction(shape, axes)(x)
    want = x.sum(axis=tuple(sorted(axes))) if axes else x
    assert got.shape == want.shape and np.allclose(got, want)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 7))
def test_the_layout_reads_marginals_and_writes_gradients_as_plain_sums_do(seed, count):
    from veil.synth._layout import Layout
    from veil.synth.graphical_model import calibrate

    model = random_model(seed, cliques=3)
    rng = np.random.default_rng(seed)
    tree = model.tree
    measured = []
    for _ in range(count):
        home = int(rng.integers(len(tree.cliques)))
        cl = tree.cliques[home]
        keep = [c for c in cl if rng.random() < 0.6] or [cl[0]]
        measured.append((tuple(keep), tree.containing(keep)))
    layout = Layout(tree, [c for c, _ in measured], [h for _, h in measured])
    probs = calibrate(tree, model.potentials)
    for (clique, home), mu in zip(measured, layout.marginals(probs, 10.0)):
        axes, _ = tree.plan(tree.cliques[home], clique)
        assert np.allclose(mu, probs[home].sum(axis=axes) * 10.0)
    grads = [rng.normal(size=tuple(model.sizes[c] for c in clique)) for clique, _ in measured]
    want = [np.zeros(s) for s in tree.shapes]
    for (clique, home), g in zip(measured, grads):
        want[home] = want[home] + g.reshape(tree.plan(tree.cliques[home], clique)[1])
    for got, w, (i, _) in zip(layout.gradient(grads), want, enumerate(tree.cliques)):
        if got is None:
            assert not any(h == i for _, h in measured)
        else:
            assert np.allclose(got, w)


def test_belief_propagation_falls_back_to_log_space_when_potentials_underflow():
    from veil.synth.graphical_model import _calibrate_linear, _calibrate_log

    model = random_model(4, cliques=4)
    tree = model.tree
    for a, b in zip(_calibrate_linear(tree, model.potentials), _calibrate_log(tree, model.potentials)):
        assert np.allclose(a, b)
    # Potentials whose masses only meet where exp underflows to 0 in the linear passes.
    sizes = {"a": 2, "b": 2, "c": 2}
    tree = JunctionTree.build(sizes, [("a", "b"), ("b", "c")])
    # (a, b) puts its mass on b = 0, (b, c) on b = 1, each by e^2000: the joint is even on b.
    table = {("a", "b"): np.array([[0.0, -2000.0], [0.0, -2000.0]]),
             ("b", "c"): np.array([[-2000.0, -2000.0], [0.0, 0.0]])}
    pots = [table[c] for c in tree.cliques]
    assert _calibrate_linear(tree, pots) is None
    extreme = GraphicalModel(tree, pots, 1.0)
    assert np.allclose(extreme.project(("b",)), [0.5, 0.5])
    assert np.allclose(extreme.project(("a", "c")), brute_marginal(extreme, ("a", "c")))


@settings(max_examples=6, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_exact_marginals_of_random_tree_models_are_recovered(seed):
    sizes, edges, truth = tree_table(seed)
    ms = [Measurement(c, truth.project(c), 1e-3) for c in edges]
    model = estimate(sizes, ms, iterations=1500)
    assert model.cells == model_cells(sizes, edges)
    for clique in edges + [("a", "d"), ("e", "c", "a")]:
        assert np.abs(model.project(clique) - truth.project(clique)).max() < 2e-3 * truth.total
