"""The synthetic-data benchmark's own scores and baselines (benchmarks/synth.py): the TVD, the
SDNist k-marginal score and the Chow–Liu tree, on small tables whose answers are known."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def synth():
    """benchmarks/synth.py, loaded from its file (the benchmarks folder is not a package)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location("benchmark_synth", ROOT / "benchmarks" / "synth.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return module


def test_tvd_is_half_the_l1_distance(synth):
    assert synth.tvd(np.array([1.0, 0.0]), np.array([0.0, 1.0])) == 1.0
    assert synth.tvd(np.array([0.5, 0.5, 0.0]), np.array([0.25, 0.25, 0.5])) == 0.5


def test_a_table_scores_itself_perfectly_and_a_permuted_column_does_not(synth):
    rng = np.random.default_rng(1)
    sizes = [2, 3, 4, 2]
    a = rng.integers(0, 2, size=2000)
    real = np.stack([a, (a + rng.integers(0, 2, size=2000)) % 3, rng.integers(0, 4, size=2000), a], axis=1)
    scorer = synth.Scorer(real, sizes)
    exact = scorer.score(real)
    assert exact["tvd1"] == exact["tvd2"] == exact["tvd3"] == 0.0 and exact["sdnist"] == 1000.0
    shuffled = real.copy()
    shuffled[:, 3] = rng.permutation(shuffled[:, 3])  # same 1-way marginals, the link to column 0 broken
    got = scorer.score(shuffled)
    assert got["tvd1"] == 0.0 and got["tvd2"] > 0.05 and got["sdnist"] < 1000.0
    # SDNist's score is 1000 × (1 − mean TVD) over its drawn 3-way marginals
    drawn = np.mean([synth.tvd(synth.marginal(real, sizes, c), synth.marginal(shuffled, sizes, c))
                     for c in scorer.sdnist])
    assert got["sdnist"] == pytest.approx(1000 * (1 - drawn))


def test_a_sample_outside_the_domain_is_refused(synth):
    scorer = synth.Scorer(np.zeros((5, 2), dtype=np.int64), [2, 2])
    with pytest.raises(ValueError):
        scorer.score(np.full((5, 2), 2, dtype=np.int64))


def test_the_sdnist_marginals_are_distinct_triples_drawn_once(synth):
    drawn = synth.sdnist_marginals(9)
    assert drawn == synth.sdnist_marginals(9)
    assert len(set(drawn)) == len(drawn) == synth.SDNIST_MARGINALS
    assert set(drawn) <= set(itertools.combinations(range(9), 3))


def test_chow_liu_recovers_a_chain_and_samples_its_pairs(synth):
    rng = np.random.default_rng(2)
    n, sizes = 20_000, [3, 3, 3, 3]
    x0 = rng.integers(0, 3, size=n)
    noisy = lambda parent: np.where(rng.random(n) < 0.8, parent, rng.integers(0, 3, size=n))
    x1 = noisy(x0)
    x2 = noisy(x1)
    x3 = noisy(x2)
    real = np.stack([x0, x1, x2, x3], axis=1)
    edges = synth.chow_liu_tree(real, sizes)
    assert {frozenset(e) for e in edges} == {frozenset((0, 1)), frozenset((1, 2)), frozenset((2, 3))}
    scorer = synth.Scorer(real, sizes)
    tree = scorer.score(synth.chow_liu(real, sizes, rng, edges))
    independent = scorer.score(synth.independent(real, sizes, rng))
    assert tree["tvd2"] < 0.02 < independent["tvd2"]
