"""MST (McKenna, Sheldon and Miklau, JPC 2021): the budget it spends, the noise scales (never a
function of the data), the recovery of a tree model as ε grows, and its refusals."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.dp.discrete_gaussian import discrete_gaussian_sigma
from veil.dp.noise import NoiseSource
from veil.errors import VeilError
from veil.synth.domain import DomainError, SynthDomain
from veil.synth.mst import mst, mst_plan


def domain_of(sizes) -> SynthDomain:
    return SynthDomain.declared({f"c{j}": [f"v{i}" for i in range(s)] for j, s in enumerate(sizes)})


class NoDraws(NoiseSource):
    """A noise source that fails the test if anything is drawn from it."""

    def __init__(self) -> None:
        super().__init__(np.random.default_rng(0), _secure=False)

    def discrete_gaussian(self, values, scale):
        raise AssertionError("noise was drawn")

    def gumbel_argmax(self, scores, scale):
        raise AssertionError("a selection was drawn")


def tree_table(copies: int = 1):
    """A table that is *exactly* a tree model (a chain c0 → c1 → c2 → c3): every cell of the joint
    distribution is a multiple of 1/2560 and appears that many times in 2560·copies rows.
    Returns the codes, the sizes and the joint distribution."""
    sizes = [3, 4, 3, 5]
    first = np.array([Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)])

    def cpt(a, b, main, rest):
        table = np.full((a, b), rest, dtype=object)
        for i in range(a):
            table[i, i % b] = main
        return table

    conds = [cpt(3, 4, Fraction(5, 8), Fraction(1, 8)), cpt(4, 3, Fraction(3, 4), Fraction(1, 8)),
             cpt(3, 5, Fraction(3, 5), Fraction(1, 10))]
    joint = first
    for table in conds:
        joint = joint[..., None] * table.reshape((1,) * (joint.ndim - 1) + table.shape)
    counts = (joint * 2560 * copies).ravel()
    assert all(c.denominator == 1 for c in counts)
    picks = np.repeat(np.arange(len(counts)), [int(c) for c in counts])
    codes = np.stack(np.unravel_index(picks, joint.shape), axis=1).astype(np.int64)
    return codes, sizes, joint.astype(float)


def mean_pair_tvd(fit, joint, names) -> float:
    out = []
    for i, j in itertools.combinations(range(len(names)), 2):
        other = tuple(k for k in range(joint.ndim) if k not in (i, j))
        true = joint.sum(axis=other)
        est = np.clip(fit.marginal((names[i], names[j])), 0, None)
        out.append(0.5 * np.abs(est / est.sum() - true).sum())
    return float(np.mean(out))


# ---- budget --------------------------------------------------------------------------------------
@given(st.fractions(min_value=Fraction(1, 1000), max_value=50).filter(lambda r: r > 0),
       st.lists(st.integers(1, 4), min_size=1, max_size=4), st.integers(0, 2**32 - 1))
@settings(max_examples=15, deadline=None)
def test_mst_spends_exactly_rho(rho, sizes, seed):
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, s, size=60) for s in sizes], axis=1)
    fit = mst(codes, domain_of(sizes), rho=rho, noise=rng)
    d = len(sizes)
    spent = sum(r.rho for r in fit.measurements) + sum(s.rho for s in fit.selections)
    assert spent == rho == fit.rho
    assert all(isinstance(r.rho, Fraction) for r in fit.measurements + fit.selections)
    assert len(fit.measurements) == d + (d - 1) and len(fit.selections) == d - 1
    for rec in fit.measurements:
        assert rec.sigma == discrete_gaussian_sigma(rec.rho, 1)
    # thirds, as in the paper
    if d > 1:
        assert sum(r.rho for r in fit.measurements if r.purpose == "1-way") == rho / 3
        assert sum(s.rho for s in fit.selections) == rho / 3
        assert sum(r.rho for r in fit.measurements if r.purpose == "tree") == rho / 3
    # the selections build a spanning tree
    chosen = [s.chosen for s in fit.selections]
    assert [r.clique for r in fit.measurements if r.purpose == "tree"] == chosen
    assert [s.candidates for s in fit.selections] == [_joining(d, chosen[:k]) for k in range(d - 1)]


def _joining(d: int, edges) -> int:
    """Pairs of columns in different components of the forest ``edges``."""
    comp = {f"c{j}": j for j in range(d)}
    for a, b in edges:
        old, new = comp[a], comp[b]
        comp = {k: (new if v == old else v) for k, v in comp.items()}
    return sum(comp[f"c{i}"] != comp[f"c{j}"] for i, j in itertools.combinations(range(d), 2))


def test_mst_plan_thirds():
    assert mst_plan(Fraction(1), 4) == (Fraction(1, 12), Fraction(1, 9), Fraction(1, 9))
    assert mst_plan(Fraction(2), 1) == (Fraction(2), 0, 0)


def test_noise_scales_do_not_depend_on_the_data():
    codes, sizes, _ = tree_table()
    neighbours = [codes, codes[1:], np.vstack([codes, [[2, 3, 2, 4]]]), np.vstack([codes[:-1], [[0, 0, 0, 0]]])]
    shapes = set()
    for k, table in enumerate(neighbours):
        fit = mst(table, domain_of(sizes), rho=Fraction(1, 2), noise=k)
        shapes.add((tuple((r.sigma, r.rho, r.round, r.purpose, len(r.clique)) for r in fit.measurements),
                    tuple((s.round, s.epsilon, s.rho, s.candidates) for s in fit.selections)))
    assert len(shapes) == 1


# ---- utility -------------------------------------------------------------------------------------
def test_mst_recovers_a_tree_model_as_epsilon_grows():
    codes, sizes, joint = tree_table()
    dom = domain_of(sizes)
    errors = {}
    for rho in (Fraction(1, 100), Fraction(10)):
        errors[rho] = np.mean([mean_pair_tvd(mst(codes, dom, rho=rho, noise=s), joint, dom.names)
                               for s in range(2)])
    assert errors[Fraction(10)] < 0.003
    assert errors[Fraction(10)] < errors[Fraction(1, 100)] / 10


def test_sample_returns_codes_of_the_original_domain():
    # a column with many values that never occur: compressed, then expanded back
    rng = np.random.default_rng(2)
    codes = np.stack([rng.integers(0, 2, 3000), rng.integers(0, 3, 3000)], axis=1)
    dom = domain_of([40, 3])
    fit = mst(codes, dom, rho=1, noise=3)
    assert fit.compression is not None and fit.model.sizes["c0"] < 40
    out = fit.sample(None, np.random.default_rng(0))
    assert out.shape == (round(fit.model.total), 2) and out.dtype == np.int64
    assert out[:, 0].max() < 40 and out[:, 1].max() < 3
    assert fit.sample(0, np.random.default_rng(0)).shape == (0, 2)
    plain = mst(codes, dom, rho=1, noise=3, compress=False)
    assert plain.compression is None and plain.model.sizes["c0"] == 40


# ---- fitness for release and refusals ------------------------------------------------------------
def test_seeded_run_is_unfit_with_a_reason():
    codes = np.zeros((10, 2), dtype=np.int64)
    fit = mst(codes, domain_of([2, 2]), rho=1, noise=7)
    assert not fit.fit_for_release and "seeded" in fit.unfit_reasons[0]


def test_secure_run_is_fit():
    pytest.importorskip("opendp")
    codes = np.zeros((10, 2), dtype=np.int64)
    fit = mst(codes, domain_of([2, 2]), rho=1)
    assert fit.fit_for_release and fit.unfit_reasons == ()


@pytest.mark.parametrize("kwargs, codes, error, words", [
    ({"rho": 0}, None, VeilError, "rho must be a positive"),
    ({"rho": -1}, None, VeilError, "rho must be a positive"),
    ({"rho": float("inf")}, None, VeilError, "rho must be a positive"),
    ({"rho": float("nan")}, None, VeilError, "rho must be a positive"),
    ({"rho": Fraction(1, 10**40)}, None, VeilError, "raise rho"),
    ({"rho": 1, "compress": "yes"}, None, VeilError, "compress"),
    ({"rho": 1}, np.array([[0, 5]]), DomainError, "'c1'"),
    ({"rho": 1}, np.array([[0, -1]]), DomainError, "'c1'"),
    ({"rho": 1}, np.array([0, 1]), DomainError, "2-D"),
    ({"rho": 1}, np.array([[0.5, 1.0]]), DomainError, "integer"),
])
def test_bad_input_is_refused_before_any_noise(kwargs, codes, error, words):
    codes = np.zeros((5, 2), dtype=np.int64) if codes is None else codes
    with pytest.raises(error) as info:
        mst(codes, domain_of([2, 3]), noise=NoDraws(), **kwargs)
    message = str(info.value)
    assert words in message and message.endswith(".") and message.count(". ") == 0


def test_a_domain_that_is_not_a_synth_domain_is_refused():
    with pytest.raises(VeilError, match="The domain must be a SynthDomain, got dict."):
        mst(np.zeros((3, 2), dtype=np.int64), {"c0": 2, "c1": 2}, rho=1, noise=NoDraws())
