"""AIM: an adaptive and iterative mechanism (McKenna, Mullins, Sheldon and Miklau, "AIM: An Adaptive
and Iterative Mechanism for Differentially Private Synthetic Data", PVLDB 2022).

Given a workload of weighted marginals (:mod:`veil.synth.workload`; by default every 2- and 3-way
one) and a budget ρ (ρ-zCDP), AIM

1. measures every 1-way marginal (discrete Gaussian noise) and estimates a model from them;
2. then, round after round until ρ is spent (:class:`veil.synth.budget.AnnealingSchedule`):

   * the candidates are the workload's downward closure, less those whose addition would make the
     model larger than (ρ spent so far, this round included)/ρ × ``max_model_cells`` cells (the
     junction tree's size, :func:`veil.synth.graphical_model.model_cells`);
   * each candidate r is scored q_r = w_r·(‖M_r(data) − M_r(model)‖₁ − √(2/π)·σ_t·n_r): how far the
     model is from the data on r, less the L1 error the measurement's own noise is expected to have
     (σ_t the round's σ, n_r the marginal's cells), weighted by its overlap with the workload w_r;
     one row changes q_r by at most w_r, so the sensitivity is max w_r over the candidates;
   * the exponential mechanism picks one (ρ_sel), its marginal is measured (ρ_meas), and the model
     is re-estimated from all measurements, starting from the previous one;
   * if the model moved on r by no more than the noise's expected L1 error √(2/π)·σ_t·n_r, the
     next rounds get σ halved and ε doubled (budget annealing); the last round spends exactly
     what is left.

Every decision that shapes the budget is made from DP outputs (the models) and public numbers, so
the σ of every round can be replayed from the public records; the rounds' ρ add up to ρ exactly.
The data's marginals on the candidates are computed once and kept for every round.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from veil.dp.discrete_gaussian import discrete_gaussian_sigma
from veil.dp.noise import as_noise_source
from veil.errors import ParameterError
from veil.synth.budget import AnnealingSchedule, check_rho, check_rounds, check_sigma
from veil.synth.domain import SynthDomain
from veil.synth.estimation import estimate
from veil.synth.fit import MeasurementRecord, SelectionRecord, SynthFit, unfit_reasons
from veil.synth.graphical_model import model_cells
from veil.synth.measure import check_codes, check_domain, marginal_counts, measure
from veil.synth.selection import exponential_mechanism
from veil.synth.workload import candidate_weights, normalize_workload

__all__ = ["aim"]

#: mirror-descent iterations of the first estimate, and of each warm-started re-estimate
FIRST_ITERATIONS = 500
ROUND_ITERATIONS = 100
#: the expected |Z| of a standard normal: the L1 error of Gaussian noise is √(2/π)·σ per cell
_ABS_NORMAL = math.sqrt(2 / math.pi)


def _check_max_cells(value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ParameterError(f"max_model_cells must be a whole number of at least 1, got {value!r}.")
    return int(value)


class _ModelSize:
    """The junction-tree size a model would have with one more clique, cached per set of cliques."""

    def __init__(self, sizes: dict[str, int]) -> None:
        self.sizes = sizes
        self.cliques: list[tuple[str, ...]] = []
        self.current = 0
        self._cache: dict[tuple[str, ...], int] = {}

    def set(self, cliques: list[tuple[str, ...]]) -> None:
        self.cliques = list(cliques)
        self.current = model_cells(self.sizes, self.cliques)
        self._cache = {}

    def with_(self, clique: tuple[str, ...]) -> int:
        if any(set(clique) <= set(c) for c in self.cliques):
            return self.current
        if clique not in self._cache:
            self._cache[clique] = model_cells(self.sizes, self.cliques + [clique])
        return self._cache[clique]


def aim(codes: np.ndarray, domain: SynthDomain, *, rho, noise=None, workload=None,
        max_model_cells: int = 10_000_000, rounds: int | None = None) -> SynthFit:
    """Fit AIM to a table (McKenna, Mullins, Sheldon and Miklau, PVLDB 2022); ρ-zCDP with the ρ given.

    Args:
        codes: the table as codes of ``domain`` ((n, d) integers, :meth:`SynthDomain.encode`).
        domain: the public domain of every column.
        rho: the ρ-zCDP budget, > 0 (a Fraction, an integer, a float read as its decimal, or text).
        noise: None (secure, for a release), an integer seed or a ``numpy.random.Generator``
            (an experiment: the fit is marked unfit for release), or a NoiseSource.
        workload: None (every 2- and 3-way clique, weight 1), or a sequence of cliques (tuples of
            column names) or of (clique, weight) pairs.
        max_model_cells: the largest model (junction-tree cells) the final model may have.
        rounds: T, the rounds the budget is planned for (None → 16·d, the paper's choice); the
            run has at most T rounds after the 1-way marginals, fewer when annealing raises the
            shares.

    Returns:
        The fit, with its public records: d 1-way measurements (round 0), then one selection and
        one measurement per round; Σ of their ρ is ``rho`` exactly.

    Raises:
        ParameterError: ρ is not a positive finite number or so small that σ exceeds what veil
            draws, the domain has no column, the workload is malformed or names an unknown column,
            ``rounds`` or ``max_model_cells`` is not a whole number >= 1, or ``max_model_cells`` is
            smaller than the smallest model any candidate gives.
        DomainError: the codes do not fit the domain.
        (All before any noise is drawn.)
    """
    total = check_rho(rho)
    check_domain(domain)
    names = tuple(domain.names)
    sizes = {n: int(s) for n, s in zip(names, domain.shape)}
    d = len(names)
    if d == 0:
        raise ParameterError("The domain has no columns; declare at least one.")
    weights = candidate_weights(normalize_workload(workload, names))
    planned = check_rounds(rounds, d)
    limit = _check_max_cells(max_model_cells)
    arr = check_codes(codes, domain)
    size = _ModelSize(sizes)
    size.set([(n,) for n in names])
    least = min(size.with_(r) for r in weights)
    if limit < least:
        raise ParameterError(f"max_model_cells = {limit} is smaller than any candidate marginal; raise it to at "
                             f"least {least}.")
    schedule = AnnealingSchedule(total, planned, d)
    check_sigma(schedule.smallest_measurement(), "marginals", "raise rho or lower rounds")
    source = as_noise_source(noise)
    position = {n: j for j, n in enumerate(names)}

    records: list[MeasurementRecord] = []
    measurements = []
    for j, name in enumerate(names):
        m, rec = measure(marginal_counts(arr, [j], [sizes[name]]), (name,), schedule.one_way, source,
                         round=0, purpose="1-way")
        measurements.append(m)
        records.append(rec)
    model = estimate(sizes, measurements, iterations=FIRST_ITERATIONS)
    exact: dict[tuple[str, ...], np.ndarray] = {}

    def data_marginal(clique: tuple[str, ...]) -> np.ndarray:
        if clique not in exact:
            exact[clique] = marginal_counts(arr, [position[c] for c in clique], [sizes[c] for c in clique])
        return exact[clique]

    selections: list[SelectionRecord] = []
    cliques = [(n,) for n in names]
    t = 0
    while schedule.remaining > 0:
        t += 1
        rho_meas, rho_sel = schedule.next_round()
        sigma = discrete_gaussian_sigma(rho_meas, 1)
        # fits(r): cells(r) <= used/ρ · limit, compared exactly
        pool = [r for r in weights if size.with_(r) * total <= schedule.used * limit]
        if not pool:  # the model is already above this round's share of the limit: grow no further
            pool = [r for r in weights if size.with_(r) <= size.current]
        scores = np.empty(len(pool))
        for k, r in enumerate(pool):
            cells = int(np.prod([sizes[c] for c in r]))
            error = np.abs(data_marginal(r) - model.project(r)).sum()
            scores[k] = weights[r] * (error - _ABS_NORMAL * sigma * cells)
        sensitivity = max(weights[r] for r in pool)
        pick, eps = exponential_mechanism(scores, rho=rho_sel, sensitivity=sensitivity, source=source)
        chosen = pool[pick]
        selections.append(SelectionRecord(t, eps, rho_sel, len(pool), chosen))
        m, rec = measure(data_marginal(chosen), chosen, rho_meas, source, round=t, purpose="selected")
        measurements.append(m)
        records.append(rec)
        before = model.project(chosen)
        if chosen not in cliques:
            cliques.append(chosen)
            size.set(cliques)
        model = estimate(sizes, measurements, iterations=ROUND_ITERATIONS, warm_start=model)
        moved = np.abs(model.project(chosen) - before).sum()
        if not schedule.last and moved <= _ABS_NORMAL * sigma * before.size:
            schedule.anneal()
    spent = sum((r.rho for r in records), Fraction(0)) + sum((s.rho for s in selections), Fraction(0))
    reasons = unfit_reasons(source, domain)
    return SynthFit("aim", domain, model, tuple(records), tuple(selections), spent, None, None,
                    not reasons, reasons)
