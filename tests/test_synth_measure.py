"""The building blocks of the synthesizers: exact and noisy marginals, the exponential mechanism,
MST's compression of rare values, and AIM's workload."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from veil.dp.discrete_gaussian import discrete_gaussian_sigma
from veil.dp.noise import NoiseSource
from veil.errors import ParameterError
from veil.synth.compression import Compression, compress_column
from veil.synth.measure import marginal_counts, measure
from veil.synth.selection import exponential_mechanism, selection_scale
from veil.synth.workload import candidate_weights, default_workload, downward_closure, normalize_workload


# ---- marginals ----------------------------------------------------------------------------------
@st.composite
def tables(draw):
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    n = draw(st.integers(0, 40))
    cols = [draw(hnp.arrays(np.int64, n, elements=st.integers(0, s - 1))) for s in sizes]
    return np.stack(cols, axis=1) if n else np.zeros((0, len(sizes)), dtype=np.int64), sizes


@given(tables(), st.data())
@settings(max_examples=60, deadline=None)
def test_marginal_counts_count_every_combination(table, data):
    codes, sizes = table
    k = data.draw(st.integers(1, len(sizes)))
    positions = data.draw(st.permutations(range(len(sizes))))[:k]
    shape = [sizes[p] for p in positions]
    counts = marginal_counts(codes, positions, shape)
    assert counts.shape == tuple(shape) and counts.dtype == np.int64
    assert counts.sum() == len(codes)  # no row lost or invented
    for cell in itertools.product(*[range(s) for s in shape]):
        expected = int(np.sum(np.all(codes[:, positions] == np.array(cell), axis=1))) if len(codes) else 0
        assert counts[cell] == expected


@pytest.mark.parametrize("rho", [Fraction(1, 100), Fraction(1, 3), Fraction(7)])
def test_measure_uses_the_discrete_gaussian_sigma_of_its_rho(rho):
    counts = np.arange(12, dtype=np.int64).reshape(3, 4)
    m, rec = measure(counts, ("a", "b"), rho, NoiseSource.seeded(1), round=3, purpose="selected")
    assert rec.sigma == discrete_gaussian_sigma(rho, 1) == m.sigma
    assert rec.rho == rho and rec.round == 3 and rec.purpose == "selected" and rec.clique == ("a", "b")
    assert m.values.shape == (3, 4) and np.all(m.values == np.round(m.values))  # integer counts
    assert counts.tolist() == np.arange(12).reshape(3, 4).tolist()  # the input is not modified


def test_measure_noise_has_the_expected_spread():
    rho = Fraction(1, 50)  # σ = 5
    m, _ = measure(np.zeros(20000, dtype=np.int64), ("a",), rho, NoiseSource.seeded(2), round=0, purpose="1-way")
    assert abs(m.values.std() - 5) < 0.2 and abs(m.values.mean()) < 0.2


# ---- the exponential mechanism ------------------------------------------------------------------
def test_exponential_mechanism_follows_its_distribution():
    rho = Fraction(1, 8)  # scale 2 for sensitivity 1
    scale = selection_scale(rho, 1.0)
    scores = np.array([0.0, scale * math.log(3)])  # P(1) = 3/4
    src = NoiseSource.seeded(3)
    picks = [exponential_mechanism(scores, rho=rho, sensitivity=1.0, source=src)[0] for _ in range(4000)]
    share = np.mean(picks)
    assert abs(share - 0.75) < 5 * math.sqrt(0.75 * 0.25 / 4000)


def test_exponential_mechanism_reports_its_epsilon():
    index, eps = exponential_mechanism(np.array([0.0, 1e6, 0.0]), rho=Fraction(1, 2), sensitivity=1.0,
                                       source=NoiseSource.seeded(4))
    assert index == 1
    assert eps <= math.sqrt(8 * 0.5) and eps == pytest.approx(math.sqrt(8 * 0.5), rel=1e-9)


def test_exponential_mechanism_secure_path():
    pytest.importorskip("opendp")
    index, _ = exponential_mechanism(np.array([0.0, 1e6]), rho=Fraction(1), sensitivity=1.0,
                                     source=NoiseSource.secure())
    assert index == 1


# ---- compression --------------------------------------------------------------------------------
def test_values_below_three_sigma_are_merged():
    col = compress_column("c", np.array([100.0, 2.0, -1.0, 50.0, 5.9]), 2.0)
    assert col.rare == (1, 2, 4) and col.kept == (0, 3) and col.compressed_size == 3
    assert col.lookup.tolist() == [0, 2, 2, 1, 2]
    values, sigmas = col.compress_measurement(np.array([100.0, 2.0, -1.0, 50.0, 5.9]), 2.0)
    assert values.tolist() == [100.0, 50.0, pytest.approx(6.9)]
    assert sigmas.tolist() == [2.0, 2.0, pytest.approx(2.0 * math.sqrt(3))]


def test_a_single_rare_value_is_left_alone():
    col = compress_column("c", np.array([100.0, 2.0, 50.0]), 2.0)
    assert col.rare == () and col.compressed_size == 3


@given(st.lists(st.floats(-10, 100), min_size=1, max_size=8), st.integers(0, 2**32 - 1))
@settings(max_examples=50, deadline=None)
def test_compression_round_trip(noisy, seed):
    noisy = np.array(noisy)
    comp = Compression((compress_column("c", noisy, 3.0),))
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, len(noisy), size=(50, 1))
    small = comp.forward(codes)
    assert small.max(initial=0) < comp.sizes["c"]
    back = comp.expand(small, rng)
    col = comp.columns[0]
    assert back.shape == codes.shape
    kept = np.isin(codes[:, 0], col.kept)
    assert np.array_equal(back[kept], codes[kept])  # kept values come back as they were
    assert np.all(np.isin(back[~kept, 0], col.rare))  # merged ones come back among the rare values


# ---- workload -----------------------------------------------------------------------------------
NAMES = ("a", "b", "c", "d")


def test_default_workload_is_every_2_and_3_way_clique():
    w = default_workload(NAMES)
    assert len(w) == 6 + 4 and all(weight == 1.0 for _, weight in w)
    assert normalize_workload(None, NAMES) == w
    assert default_workload(("a",)) == ((("a",), 1.0),)


def test_workload_cliques_in_column_order_duplicates_merged():
    w = normalize_workload([("b", "a"), (("a", "b"), 2.5), "c"], NAMES)
    assert w == ((("a", "b"), 3.5), (("c",), 1.0))


@pytest.mark.parametrize("workload, words", [
    ([("a", "zz")], "unknown column 'zz'"), ([()], "empty"), ([("a", "a")], "twice"),
    ([], "empty"), ([(("a",), -1.0)], "positive"), ([(("a",), math.inf)], "positive"), ("ab", "list"),
    ([5], "tuple of column names")])
def test_bad_workloads_are_refused(workload, words):
    with pytest.raises(ParameterError) as info:
        normalize_workload(workload, NAMES)
    assert words in str(info.value) and str(info.value).count(". ") == 0


def test_downward_closure_and_weights_follow_the_paper():
    w = normalize_workload([("a", "b", "c"), (("c", "d"), 2.0)], NAMES)
    closure = downward_closure(w)
    assert set(closure) == {("a",), ("b",), ("c",), ("d",), ("a", "b"), ("a", "c"), ("b", "c"), ("a", "b", "c"),
                            ("c", "d")}
    weights = candidate_weights(w)
    assert weights[("c",)] == 1 + 2 and weights[("a", "b", "c")] == 3 + 2 and weights[("c", "d")] == 1 + 4
    assert weights[("d",)] == 2
