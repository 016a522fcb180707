"""AIM (McKenna, Mullins, Sheldon and Miklau, PVLDB 2022): the budget it spends, the annealing
schedule replayed from the public records, the model-size limit, utility at a large budget, and
its refusals."""

from __future__ import annotations

import copy
import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.dp.discrete_gaussian import discrete_gaussian_sigma
from veil.errors import VeilError
from veil.synth.aim import aim
from veil.synth.budget import AnnealingSchedule
from veil.synth.domain import DomainError
from veil.synth.graphical_model import model_cells

from test_synth_mst import NoDraws, domain_of, tree_table


def replay(fit, rounds: int) -> list[float]:
    """Replay AIM's budget from the public records alone: each round's shares must be what the
    schedule gives with or without annealing after the previous round; returns the σ of each round."""
    d = len(fit.domain.names)
    schedule = AnnealingSchedule(fit.rho, rounds, d)
    one_way = [r for r in fit.measurements if r.purpose == "1-way"]
    assert [r.clique for r in one_way] == [(n,) for n in fit.domain.names]
    assert all(r.rho == schedule.one_way and r.round == 0 for r in one_way)
    selected = [r for r in fit.measurements if r.purpose == "selected"]
    assert len(selected) == len(fit.selections) and len(fit.measurements) == d + len(selected)
    sigmas = []
    for t, (meas, sel) in enumerate(zip(selected, fit.selections), start=1):
        assert meas.round == sel.round == t and meas.clique == sel.chosen
        options = []
        for annealed in (False, True):
            trial = copy.deepcopy(schedule)
            if annealed and t > 1:
                trial.anneal()
            if trial.next_round() == (meas.rho, sel.rho):
                options.append(trial)
        assert options, f"round {t} does not follow the schedule"
        schedule = options[0]
        sigmas.append(discrete_gaussian_sigma(schedule.measure, 1))
    assert schedule.remaining == 0
    return sigmas


def small_table(seed: int, sizes=(3, 2, 4, 2), n: int = 200):
    rng = np.random.default_rng(seed)
    first = rng.integers(0, sizes[0], n)
    cols = [first] + [(first + rng.integers(0, 2, n)) % s for s in sizes[1:]]
    return np.stack(cols, axis=1).astype(np.int64)


# ---- budget --------------------------------------------------------------------------------------
@given(st.fractions(min_value=Fraction(1, 1000), max_value=20).filter(lambda r: r > 0),
       st.lists(st.integers(1, 3), min_size=1, max_size=3), st.integers(1, 8), st.integers(0, 2**32 - 1))
@settings(max_examples=15, deadline=None)
def test_aim_spends_exactly_rho(rho, sizes, rounds, seed):
    rng = np.random.default_rng(seed)
    codes = np.stack([rng.integers(0, s, size=40) for s in sizes], axis=1)
    fit = aim(codes, domain_of(sizes), rho=rho, noise=rng, rounds=rounds)
    spent = sum(r.rho for r in fit.measurements) + sum(s.rho for s in fit.selections)
    assert spent == rho == fit.rho
    assert all(isinstance(r.rho, Fraction) for r in fit.measurements + fit.selections)
    for rec in fit.measurements:
        assert rec.sigma == discrete_gaussian_sigma(rec.rho, 1)
    sigmas = replay(fit, rounds)
    assert sigmas == [r.sigma for r in fit.measurements if r.purpose == "selected"]
    for sel in fit.selections:
        assert sel.epsilon <= float((8 * sel.rho) ** 0.5) * (1 + 1e-12)


def test_schedule_is_replayed_on_a_table_and_its_neighbours():
    codes = small_table(1)
    neighbours = [codes, codes[1:], np.vstack([codes, [[2, 1, 3, 1]]])]
    for k, table in enumerate(neighbours):
        fit = aim(table, domain_of((3, 2, 4, 2)), rho=Fraction(1, 5), noise=k, rounds=20)
        replay(fit, 20)
        # the 1-way measurements and the first round's shares are the same on every neighbour
        assert [(r.sigma, r.rho) for r in fit.measurements[:4]] == [(discrete_gaussian_sigma(Fraction(9, 1000), 1),
                                                                     Fraction(9, 1000))] * 4
        assert fit.selections[0].rho == Fraction(1, 1000)


def test_annealing_happens():
    # at a large ρ every measurement teaches the model little: the shares grow fast
    fit = aim(small_table(2), domain_of((3, 2, 4, 2)), rho=50, noise=3, rounds=64)
    shares = [s.rho for s in fit.selections]
    assert any(b == 4 * a for a, b in itertools.pairwise(shares))
    assert len(fit.selections) < 64


# ---- utility -------------------------------------------------------------------------------------
def test_large_budget_reproduces_the_workload_marginals():
    codes, sizes, _ = tree_table()
    dom = domain_of(sizes)
    workload = [("c0", "c1", "c2"), ("c1", "c3"), ("c0", "c3")]
    fit = aim(codes, dom, rho=100, noise=4, workload=workload, rounds=16)
    position = {n: j for j, n in enumerate(dom.names)}
    for clique in workload:
        idx = [position[c] for c in clique]
        data = np.zeros([sizes[i] for i in idx])
        np.add.at(data, tuple(codes[:, i] for i in idx), 1)
        model = np.clip(fit.marginal(clique), 0, None)
        assert 0.5 * np.abs(model / model.sum() - data / data.sum()).sum() < 0.01


def test_model_size_limit_is_held():
    codes = small_table(5, sizes=(4, 4, 4, 4), n=300)
    dom = domain_of((4, 4, 4, 4))
    limit = 16 + 16 + 16 + 4  # room for pairs, never for a 3-way clique (64 cells)
    for seed in range(3):
        fit = aim(codes, dom, rho=10, noise=seed, rounds=12, max_model_cells=limit)
        assert fit.model.cells <= limit
        cliques = [r.clique for r in fit.measurements]
        assert model_cells(dom.sizes, cliques) <= limit
        assert all(len(s.chosen) <= 2 for s in fit.selections)


# ---- fitness for release and refusals ------------------------------------------------------------
def test_seeded_run_is_unfit_with_a_reason():
    fit = aim(small_table(3), domain_of((3, 2, 4, 2)), rho=1, noise=1, rounds=4)
    assert not fit.fit_for_release and "seeded" in fit.unfit_reasons[0]
    assert fit.mechanism == "aim" and fit.compression is None


def test_secure_run_is_fit():
    pytest.importorskip("opendp")
    fit = aim(small_table(3)[:50], domain_of((3, 2, 4, 2)), rho=1, rounds=4)
    assert fit.fit_for_release and fit.unfit_reasons == ()


@pytest.mark.parametrize("kwargs, codes, error, words", [
    ({"rho": 0}, None, VeilError, "rho must be a positive"),
    ({"rho": float("inf")}, None, VeilError, "rho must be a positive"),
    ({"rho": "x"}, None, VeilError, "rho must be a positive"),
    ({"rho": Fraction(1, 10**40)}, None, VeilError, "raise rho"),
    ({"rho": 1, "rounds": 0}, None, VeilError, "rounds must be a whole number"),
    ({"rho": 1, "rounds": 10**40}, None, VeilError, "raise rho or lower rounds"),
    ({"rho": 1, "rounds": 2.5}, None, VeilError, "rounds must be a whole number"),
    ({"rho": 1, "workload": [("c0", "age")]}, None, VeilError, "unknown column 'age'"),
    ({"rho": 1, "workload": [()]}, None, VeilError, "empty"),
    ({"rho": 1, "max_model_cells": 0}, None, VeilError, "max_model_cells must be"),
    ({"rho": 1, "max_model_cells": 4}, None, VeilError, "max_model_cells = 4 is smaller than any candidate "
                                                        "marginal; raise it to at least 5."),
    ({"rho": 1}, np.array([[0, 3]]), DomainError, "'c1'"),
    ({"rho": 1}, np.zeros((3, 3), dtype=np.int64), DomainError, "2 columns"),
])
def test_bad_input_is_refused_before_any_noise(kwargs, codes, error, words):
    codes = np.zeros((5, 2), dtype=np.int64) if codes is None else codes
    with pytest.raises(error) as info:
        aim(codes, domain_of([2, 3]), noise=NoDraws(), **kwargs)
    message = str(info.value)
    assert words in message and message.endswith(".") and message.count(". ") == 0


def test_refusal_does_not_depend_on_the_data():
    # the size limit is checked on the public domain: same answer for any table
    for codes in (np.zeros((5, 2), dtype=np.int64), np.ones((9, 2), dtype=np.int64)):
        with pytest.raises(VeilError, match="raise it to at least 5"):
            aim(codes, domain_of([2, 3]), rho=1, noise=NoDraws(), max_model_cells=4)


def test_workload_given_with_weights():
    codes = small_table(4)
    fit = aim(codes, domain_of((3, 2, 4, 2)), rho=5, noise=2, rounds=6,
              workload=[(("c0", "c1"), 3.0), (("c2", "c3"), 1.0)])
    allowed = {("c0",), ("c1",), ("c2",), ("c3",), ("c0", "c1"), ("c2", "c3")}
    assert all(s.chosen in allowed for s in fit.selections)
    assert all(s.candidates <= len(allowed) for s in fit.selections)


def test_all_pairs_and_triples_are_candidates_by_default():
    codes = small_table(6)
    fit = aim(codes, domain_of((3, 2, 4, 2)), rho=1, noise=2, rounds=3)
    # downward closure of every 2- and 3-way clique of 4 columns: 4 + 6 + 4
    assert fit.selections[0].candidates == 14
    assert {len(c) for c in itertools.chain.from_iterable([s.chosen] for s in fit.selections)} <= {1, 2, 3}


def test_a_domain_that_is_not_a_synth_domain_is_refused():
    with pytest.raises(VeilError, match="The domain must be a SynthDomain, got list."):
        aim(np.zeros((3, 2), dtype=np.int64), ["c0", "c1"], rho=1, noise=NoDraws())
