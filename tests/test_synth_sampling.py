"""Sampling records from a graphical model: counts, domains, and how close the sample's marginals
come to the model's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tests.helpers import one_sentence_error
from tests.test_synth_estimation import counts, random_model, tree_table
from veil.errors import ParameterError
from veil.synth.sampling import sample, systematic_counts


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 300), st.sampled_from(["systematic", "independent"]))
def test_exactly_rows_records_every_code_in_its_domain(seed, rows, method):
    model = random_model(seed, cliques=int(seed % 4) + 1)
    out = model.sample(rows, np.random.default_rng(seed), method)
    assert out.shape == (rows, len(model.names)) and out.dtype == np.int64
    assert (out >= 0).all() and (out < np.array([model.sizes[n] for n in model.names])).all()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 10), min_size=1, max_size=8), st.integers(0, 50), st.integers(0, 2**32 - 1))
def test_systematic_counts_are_floors_or_ceilings_summing_to_n(weights, n, seed):
    p = np.array(weights) + 1e-3
    p /= p.sum()
    expected = n * p
    got = systematic_counts(expected[None, :], np.array([n]), np.random.default_rng(seed))[0]
    assert got.sum() == n
    assert (got >= np.floor(expected - 1e-9)).all() and (got <= np.ceil(expected + 1e-9)).all()


def test_systematic_counts_are_unbiased():
    expected = np.array([[0.3, 1.45, 2.25]])
    rng = np.random.default_rng(0)
    mean = np.mean([systematic_counts(expected, np.array([4]), rng)[0] for _ in range(4000)], axis=0)
    # 4000 draws of a count within one of its floor: standard error below 0.5/sqrt(4000) < 0.008
    assert np.allclose(mean, expected[0], atol=0.04)


def clique_errors(model, out):
    """The L1 distance between the sample's and the model's (scaled to the sample) marginal on
    each clique of the model and each column."""
    names = list(model.names)
    scale = len(out) / model.total
    cliques = list(model.cliques) + [(n,) for n in names]
    return [np.abs(counts(out, names, model.sizes, c) - model.project(c) * scale).sum() for c in cliques]


@pytest.mark.parametrize("method", ["systematic", "independent"])
def test_a_large_sample_matches_the_model_within_sampling_error(method):
    sizes, edges, model = tree_table(4, total=1.0)
    rows = 200_000
    out = model.sample(rows, np.random.default_rng(1), method)
    names = list(model.names)
    for clique in list(model.cliques) + [(n,) for n in names]:
        want = model.project(clique) * rows
        got = counts(out, names, sizes, clique)
        # Each cell count of independent draws is binomial, with standard deviation
        # sqrt(rows p (1 - p)); 5 of them (plus one count of rounding) bounds it for every cell of
        # every clique here with probability above 1 - 1e-5. Systematic rounding is far closer.
        sd = np.sqrt(want * (1 - want / rows))
        assert (np.abs(got - want) <= 5 * sd + 1).all(), (method, clique)
    if method == "systematic":
        root = model.cliques[0]
        # The root clique is allocated in one group: every cell is the floor or ceiling of its expectation.
        assert (np.abs(counts(out, names, sizes, root) - model.project(root) * rows) < 1).all()


def test_systematic_sampling_lowers_the_error_over_many_seeds():
    sizes, edges, model = tree_table(8, total=1.0)
    wins, sys_err, ind_err = 0, [], []
    for seed in range(30):
        s = np.sum(clique_errors(model, model.sample(2000, np.random.default_rng(seed), "systematic")))
        i = np.sum(clique_errors(model, model.sample(2000, np.random.default_rng(seed), "independent")))
        wins += s < i
        sys_err.append(s)
        ind_err.append(i)
    assert wins >= 27
    assert np.mean(sys_err) < 0.5 * np.mean(ind_err)


def test_sampling_draws_only_from_the_generator():
    model = random_model(3, cliques=3)
    a = model.sample(500, np.random.default_rng(9))
    b = model.sample(500, np.random.default_rng(9))
    c = model.sample(500, np.random.default_rng(10))
    assert np.array_equal(a, b) and not np.array_equal(a, c)


@pytest.mark.parametrize("kwargs, words", [
    ({"rows": -1}, ["rows"]),
    ({"rows": 2.5}, ["rows"]),
    ({"rows": 5, "method": "gibbs"}, ["'gibbs'", "systematic"]),
    ({"rows": 5, "rng": 3}, ["Generator"]),
])
def test_bad_arguments_are_refused(kwargs, words):
    model = random_model(0)
    args = {"rows": 5, "rng": np.random.default_rng(0), "method": "systematic", **kwargs}
    one_sentence_error(ParameterError, lambda: sample(model, args["rows"], args["rng"], args["method"]), *words)
