"""Temporal privacy leakage under Markov correlations (Cao, Yoshikawa, Xiao and Xiong, ICDE 2017 / TKDE 2018)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from veil.dp.temporal import LeakageTracker, TemporalCorrelation, check_transition_matrix, temporal_loss
from veil.errors import ParameterError


def lp_loss(matrix: np.ndarray, alpha: float) -> float:
    """L(α) from its definition, by linear programming: for every ordered pair of rows (q, d), the
    linear-fractional program max (q·x)/(d·x) s.t. x_j <= e^α x_k, x >= 0, turned into a linear
    program by Charnes and Cooper's change of variables (y = x / (d·x), so d·y = 1)."""
    n = matrix.shape[0]
    e = math.exp(alpha)
    rows = []
    for j in range(n):
        for k in range(n):
            if j != k:
                row = np.zeros(n)
                row[j], row[k] = 1.0, -e
                rows.append(row)
    best = 0.0
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            res = linprog(-matrix[i], A_ub=np.array(rows), b_ub=np.zeros(len(rows)), A_eq=matrix[j][None, :],
                          b_eq=[1.0], bounds=[(0, None)] * n, method="highs",
                          options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
            assert res.status == 0
            best = max(best, math.log(-res.fun))
    return best


def random_matrix(rng: np.random.Generator, n: int, sparse: bool) -> np.ndarray:
    m = rng.dirichlet(np.full(n, 0.7), size=n)
    if sparse:  # zeros exercise the indices where d_k = 0 (their ratio is infinite)
        m[m < 0.12] = 0.0
        m[np.arange(n), rng.integers(0, n, size=n)] += 0.05
        m /= m.sum(axis=1, keepdims=True)
    return m


# ------------------------------------------------------------------ L(α): the theorem against the LP
def test_theorem_equals_the_linear_program_on_random_matrices():
    rng = np.random.default_rng(17)
    for trial in range(20):
        n = int(rng.integers(2, 6))
        m = random_matrix(rng, n, sparse=trial % 2 == 1)
        prepared = TemporalCorrelation(m, m)
        for alpha in (0.01, 0.4, 2.0, 7.0):
            lp = lp_loss(m, alpha)
            assert temporal_loss(m, alpha) == pytest.approx(lp, abs=1e-9)
            assert prepared.loss(alpha, "backward") == pytest.approx(lp, abs=1e-9)


def test_loss_is_between_zero_and_alpha_and_grows_with_it():
    rng = np.random.default_rng(3)
    m = random_matrix(rng, 5, sparse=True)
    alphas = np.linspace(0, 5, 51)
    values = [temporal_loss(m, a) for a in alphas]
    assert values[0] == 0.0
    assert all(0 <= v <= a + 1e-12 for v, a in zip(values, alphas))
    assert all(b >= a - 1e-12 for a, b in zip(values, values[1:]))


# ------------------------------------------------------------------ the worked properties
@pytest.mark.parametrize("n", [2, 4])
def test_identity_matrix_grows_linearly_like_sequential_composition(n):
    eps = np.random.default_rng(5).uniform(0.01, 0.4, size=30)
    identity = np.eye(n)
    assert temporal_loss(identity, 0.7) == pytest.approx(0.7, abs=1e-12)
    leak = TemporalCorrelation(identity, identity).leakage(eps)
    np.testing.assert_allclose(leak.backward, np.cumsum(eps), rtol=1e-12)           # BPL_t = ε_1 + … + ε_t
    np.testing.assert_allclose(leak.forward, np.cumsum(eps[::-1])[::-1], rtol=1e-12)  # FPL_t = ε_t + … + ε_T
    np.testing.assert_allclose(leak.temporal, np.full(eps.size, eps.sum()), rtol=1e-12)
    constant = TemporalCorrelation(identity, None).leakage(np.full(50, 0.1)).backward
    np.testing.assert_allclose(np.diff(constant), 0.1, rtol=1e-9)  # linear growth, slope ε
    assert not TemporalCorrelation(identity, identity).supremum(0.1).exists


@pytest.mark.parametrize("rows", [np.full((3, 3), 1 / 3), np.tile([[0.2, 0.5, 0.3]], (3, 1))])
def test_identical_rows_mean_no_correlation_and_tpl_equals_epsilon(rows):
    eps = np.random.default_rng(6).uniform(0.0, 0.5, size=40)
    leak = TemporalCorrelation(rows, rows).leakage(eps)
    np.testing.assert_array_equal(leak.temporal, eps)
    np.testing.assert_array_equal(leak.backward, eps)
    assert TemporalCorrelation(rows, rows).allocate(0.8) == pytest.approx(0.8)


def test_moderate_correlation_lies_between_the_extremes():
    p = np.array([[0.8, 0.2], [0.1, 0.9]])
    eps = np.full(20, 0.1)
    tpl = TemporalCorrelation(p, p).leakage(eps).temporal
    assert np.all(tpl > eps) and np.all(tpl < eps.sum())


def test_windows_follow_the_composition_theorem():
    rng = np.random.default_rng(8)
    pb, pf = random_matrix(rng, 3, False), random_matrix(rng, 3, False)
    eps = rng.uniform(0.05, 0.3, size=12)
    tc = TemporalCorrelation(pb, pf)
    one = tc.leakage(eps, w=1)
    np.testing.assert_allclose(one.window, one.temporal)
    two = tc.leakage(eps, w=2)  # the seed's case w <= 2: BPL_{m-1} + FPL_m
    np.testing.assert_allclose(two.window[1:], two.backward[:-1] + two.forward[1:])
    four = tc.leakage(eps, w=4)
    m = 9
    assert four.window[m] == pytest.approx(four.backward[m - 3] + four.forward[m] + eps[m - 2:m].sum())
    assert four.maximum >= two.maximum >= one.maximum
    identity = TemporalCorrelation(np.eye(3), np.eye(3)).leakage(eps, w=4)
    np.testing.assert_allclose(identity.window[3:], eps.sum())
    none = TemporalCorrelation().leakage(eps, w=4)  # no correlation: the ε of the window, added up
    np.testing.assert_allclose(none.window[3:], np.convolve(eps, np.ones(4), "valid"))


# ------------------------------------------------------------------ supremum and allocation
def test_supremum_is_the_limit_and_the_fixed_point():
    rng = np.random.default_rng(9)
    for _ in range(10):
        pb, pf = random_matrix(rng, 4, True), random_matrix(rng, 4, False)
        tc = TemporalCorrelation(pb, pf)
        sup = tc.supremum(0.2)
        if not sup.exists:
            continue
        assert sup.backward == pytest.approx(tc.loss(sup.backward, "backward") + 0.2, abs=1e-9)
        leak = tc.leakage(np.full(1500, 0.2))
        assert np.all(leak.backward <= sup.backward + 1e-9) and np.all(leak.temporal <= sup.temporal + 1e-9)
        assert leak.backward[-1] == pytest.approx(sup.backward, abs=1e-6)
        assert leak.temporal[750] == pytest.approx(sup.temporal, abs=1e-6)


def test_supremum_exists_exactly_when_no_pair_of_rows_lets_it_grow():
    # rows 1 and 2 put mass 0.6 where the other has none: bounded while e^ε · 0.6 < 1
    p = np.array([[0.6, 0.0, 0.4], [0.0, 0.6, 0.4], [0.3, 0.3, 0.4]])
    tc = TemporalCorrelation(p, None)
    assert tc.supremum(0.5).exists and not tc.supremum(0.52).exists
    assert math.isinf(tc.supremum(0.52).backward)


def test_allocation_keeps_every_step_under_alpha_and_is_tight():
    rng = np.random.default_rng(10)
    pb, pf = random_matrix(rng, 4, False), random_matrix(rng, 4, False)
    tc = TemporalCorrelation(pb, pf)
    for w in (1, 3):
        eps = tc.allocate(1.0, w=w)
        assert eps.denominator <= 10 ** 12
        assert tc.supremum(float(eps), w).window <= 1.0
        assert tc.supremum(float(eps) + 1e-9, w).window > 1.0
        assert tc.leakage(np.full(400, float(eps)), w).maximum <= 1.0
    with pytest.raises(ParameterError, match="disjoint supports"):
        TemporalCorrelation(np.eye(2), None).allocate(1.0)


# ------------------------------------------------------------------ the tracker an accountant uses
@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.floats(0.0, 0.5)), min_size=1, max_size=25), st.integers(1, 4))
def test_tracker_agrees_with_the_whole_computation(steps, w):
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])
    tc = TemporalCorrelation(p, p.T / p.T.sum(axis=1, keepdims=True))
    tracker, index, totals = LeakageTracker(tc, w), 0, []
    for gap, eps in steps:
        index += gap
        totals += [0.0] * (index + 1 - len(totals))
        totals[index] += eps
        tracker = tracker.with_step(index, totals[index])
    assert tracker.worst == pytest.approx(tc.leakage(totals, w).maximum, abs=1e-12)


# ------------------------------------------------------------------ bad input: one sentence each
@pytest.mark.parametrize("matrix, match", [
    ([[0.5, 0.4], [0.5, 0.5]], "row 1 of the backward transition matrix sums to 0.9"),
    ([[0.5, 0.5], [1.2, -0.2]], "row 2 of the backward transition matrix has a negative entry"),
    ([[1.0, 0.0, 0.0]], "square matrix"),
    ([[np.nan, 1.0], [0.5, 0.5]], "row 1 .* not a finite number"),
])
def test_bad_transition_matrices_name_the_row(matrix, match):
    with pytest.raises(ParameterError, match=match) as err:
        TemporalCorrelation(backward=matrix)
    assert str(err.value).count(". ") == 0


def test_bad_epsilons_and_windows_are_refused():
    tc = TemporalCorrelation(np.eye(2), np.eye(2))
    with pytest.raises(ParameterError, match="got -0.1 at step 3"):
        tc.leakage([0.1, 0.2, -0.1])
    with pytest.raises(ParameterError, match="w must be a whole number >= 1"):
        tc.leakage([0.1], w=0)
    with pytest.raises(ParameterError, match="same values"):
        TemporalCorrelation(np.eye(2), np.eye(3))
    m = [[0.5, 0.5], [0.5, 0.5]]
    check_transition_matrix(m)
    assert m == [[0.5, 0.5], [0.5, 0.5]]  # never changed


# ------------------------------------------------------------------ the accountant's rule
def test_accountant_admits_while_every_window_stays_under_alpha():
    from veil.dp.budget import BudgetExceededError
    from veil.dp.budget_file import from_json
    from veil.dp.correlation_accountant import TemporalCorrelationAccountant

    p = np.array([[0.9, 0.1], [0.2, 0.8]])
    acc = TemporalCorrelationAccountant(1.0, dataset_id="stream", backward=p, forward=p, w=2)
    step = 0
    with pytest.raises(BudgetExceededError, match="temporal privacy leakage would reach"):
        while True:
            acc.charge(step, 0.15)
            step += 1
    assert len(acc.charges) == step > 1  # the refused charge left no trace
    leak = acc.leakage()
    assert leak.maximum == pytest.approx(acc.spent().epsilon, abs=1e-12) and acc.spent().epsilon <= 1.0
    assert TemporalCorrelation(p, p).leakage([0.15] * (step + 1), w=2).maximum > 1.0
    left, _ = acc.remaining(step)
    assert acc.can_afford(step, left) and not acc.can_afford(step, left + 1e-9)
    again = from_json(acc.to_json(), dataset_id="stream")
    assert type(again) is TemporalCorrelationAccountant and again.spent().epsilon == acc.spent().epsilon
    np.testing.assert_array_equal(again.correlation.backward, p)
    with pytest.raises(ParameterError, match="pure epsilon-DP"):
        acc.charge(step, 0.01, 1e-6)
    with pytest.raises(ParameterError, match="before the latest charge"):
        acc.charge(step - 2, 0.01)


def test_accountant_in_a_budget_file(tmp_path, monkeypatch):
    from veil.dp.correlation_accountant import TemporalCorrelationAccountant
    from veil.ledger import Ledger
    from veil.ledger.keys import KEY_ENV

    monkeypatch.setenv(KEY_ENV, str(tmp_path / "key"))
    path = tmp_path / "b.db"
    fresh = TemporalCorrelationAccountant(2.0, dataset_id="s", backward=np.eye(2), w=1)
    ledger, _ = Ledger.init(path)
    with ledger.open_budget("s", create=fresh) as acc:
        acc.charge(0, 0.5)
        acc.charge(3, 0.5)
    back = Ledger(path).budget("s")
    assert back.spent().epsilon == pytest.approx(1.0)  # the identity: BPL adds up
    assert "temporal correlation" in back.format_report()
