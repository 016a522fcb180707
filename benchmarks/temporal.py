"""Releases over time (issue 17): adaptive w-event budgets against the uniform split, and the cost
of following temporal privacy leakage.

* **Error of BD and BA beside the uniform split** (Kellaris, Papadopoulos, Xiao and Papadias,
  VLDB 2014): a synthetic stream of T = 1,000 steps of a histogram over d = 50 bins (regions of a
  city, say), whose means stay put and now and then jump (each step, each bin's mean moves by a
  random 25 % with probability 2 %), with Poisson counts around them. Each strategy releases it at
  w-event level for ε = 1 and w ∈ {10, 40, 120}, ``--repeat`` times with different seeds; the
  figure is the mean absolute error per cell over all steps, bins and runs (and the share of steps
  that published). The noise is seeded (a simulation, not a release); the budget of every window
  is checked exactly in the same run.
* **Temporal leakage** (Cao, Yoshikawa, Xiao and Xiong, ICDE 2017 / TKDE 2018), on random 8 × 8
  transition matrices: L(α) by the closed-form theorem (the iterative pruning, one call) and by
  the prepared candidate sets :class:`~veil.dp.temporal.TemporalCorrelation` evaluates, beside
  SciPy's linear program over every pair of rows (what the theorem saves); BPL, FPL and TPL of a
  10,000-step stream; and a :class:`~veil.dp.correlation_accountant.TemporalCorrelationAccountant` taking
  1,000 charges one by one (it checks every window at every charge).

Run with ``python benchmarks/run.py --only temporal``.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import platform
import time
from fractions import Fraction

import numpy as np

from harness import SEED, cpu_model, fmt_time
from timing import best_of, progress

T, D = 1000, 50
WINDOWS = (10, 40, 120)
EPSILON = 1.0
JUMP_PROBABILITY, JUMP_SIZE = 0.02, 0.25
STATES = 8
LEAKAGE_STEPS = 10_000
ACCOUNTANT_CHARGES = 1000


def synthetic_stream(seed: int) -> np.ndarray:
    """T × D Poisson counts around means that jump now and then."""
    rng = np.random.default_rng(seed)
    jumps = rng.random((T, D)) < JUMP_PROBABILITY
    factors = np.where(jumps, 1 + rng.choice([-JUMP_SIZE, JUMP_SIZE], size=(T, D)), 1.0)
    means = rng.uniform(20, 200, size=D) * np.cumprod(factors, axis=0)
    return rng.poisson(means)


def _errors(repeat: int) -> list[dict]:
    from veil.dp.continual import continual_histogram

    rows = []
    for w in WINDOWS:
        for strategy in ("uniform", "bd", "ba"):
            progress(f"w-event error: w = {w}, {strategy}")
            mae, published, seconds = [], [], []
            for run in range(repeat):
                counts = synthetic_stream(SEED + run)
                start = time.perf_counter()
                r = continual_histogram(counts, EPSILON, level="w-event", w=w, strategy=strategy, noise=SEED + run)
                seconds.append(time.perf_counter() - start)
                assert int(r.window_units.max()) * r.epsilon_unit <= Fraction(EPSILON).limit_denominator()
                mae.append(float(np.abs(r.values - counts).mean()))
                published.append(1.0 if strategy == "uniform" else float(r.details["published"].mean()))
            rows.append({"w": w, "strategy": strategy, "mae": float(np.mean(mae)), "mae_runs": mae,
                         "published_share": float(np.mean(published)), "seconds": float(min(seconds))})
    return rows


def _lp_loss(matrix: np.ndarray, alpha: float) -> float:
    from scipy.optimize import linprog

    n = matrix.shape[0]
    e = math.exp(alpha)
    rows = [np.eye(n)[j] - e * np.eye(n)[k] for j in range(n) for k in range(n) if j != k]
    best = 0.0
    for i in range(n):
        for j in range(n):
            if i != j:
                res = linprog(-matrix[i], A_ub=np.array(rows), b_ub=np.zeros(len(rows)), A_eq=matrix[j][None, :],
                              b_eq=[1.0], bounds=[(0, None)] * n, method="highs")
                best = max(best, math.log(-res.fun))
    return best


def _leakage(repeat: int) -> dict:
    from veil.dp.correlation_accountant import TemporalCorrelationAccountant
    from veil.dp.temporal import TemporalCorrelation, temporal_loss

    rng = np.random.default_rng(SEED)
    pb, pf = rng.dirichlet(np.ones(STATES), size=STATES), rng.dirichlet(np.ones(STATES), size=STATES)
    tc = TemporalCorrelation(pb, pf)
    progress("temporal leakage: L(α)")
    theorem_s, theorem = best_of(lambda: temporal_loss(pb, 0.7), repeat)
    prepared_s, prepared = best_of(lambda: tc.loss(0.7), max(repeat, 20))
    lp_start = time.perf_counter()
    lp = _lp_loss(pb, 0.7)
    lp_s = time.perf_counter() - lp_start
    progress("temporal leakage: a long stream")
    eps = rng.uniform(0.05, 0.2, size=LEAKAGE_STEPS)
    stream_s, leak = best_of(lambda: tc.leakage(eps, w=5), repeat)
    progress("temporal leakage: the accountant")

    def charge_all():
        acc = TemporalCorrelationAccountant(50.0, dataset_id="benchmark", backward=pb, forward=pf, w=5)
        for step in range(ACCOUNTANT_CHARGES):
            acc.charge(step, float(eps[step]))
        return acc

    accountant_s, acc = best_of(charge_all, 1)
    sup = tc.supremum(0.1)
    progress("")
    return {"states": STATES, "alpha": 0.7, "theorem": theorem, "prepared": prepared, "lp": lp,
            "theorem_s": theorem_s, "prepared_s": prepared_s, "lp_s": lp_s,
            "agreement": max(abs(theorem - lp), abs(prepared - lp)),
            "stream_steps": LEAKAGE_STEPS, "stream_s": stream_s, "stream_max_leakage": leak.maximum,
            "accountant_charges": ACCOUNTANT_CHARGES, "accountant_s": accountant_s,
            "accountant_spent": float(acc.spent().epsilon), "supremum_at_0_1": sup.temporal,
            "allocation_for_1": float(tc.allocate(1.0))}


def run(repeat: int) -> dict:
    """The error of the three w-event strategies and the cost of the leakage computations."""
    import scipy

    import veil

    errors = _errors(repeat)
    leakage = _leakage(repeat)
    return {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "cpu": cpu_model(),
            "cores": os.cpu_count(), "python": platform.python_version(),
            "versions": {"veil": veil.__version__, "numpy": np.__version__, "scipy": scipy.__version__},
            "repeat": repeat, "seed": SEED, "steps": T, "bins": D, "epsilon": EPSILON,
            "errors": errors, "leakage": leakage}


def _error_table(results: dict) -> list[tuple]:
    by = {(r["w"], r["strategy"]): r for r in results["errors"]}
    rows = []
    for w in WINDOWS:
        uniform = by[(w, "uniform")]["mae"]
        rows.append((w, uniform, by[(w, "bd")]["mae"], by[(w, "bd")]["published_share"], by[(w, "ba")]["mae"],
                     by[(w, "ba")]["published_share"], uniform / min(by[(w, "bd")]["mae"], by[(w, "ba")]["mae"])))
    return rows


def terminal_report(results: dict) -> str:
    """The report printed to the terminal (80 columns)."""
    lk = results["leakage"]
    lines = [f"veil releases-over-time benchmark, {results['date']}",
             f"{results['cpu']}, {results['cores']} cores, Python {results['python']}",
             ", ".join(f"{k} {v}" for k, v in results["versions"].items()),
             "", f"w-event histogram, T = {results['steps']:,} steps × {results['bins']} bins, ε = "
                 f"{results['epsilon']:g}; mean absolute error per cell over {results['repeat']} run(s)",
             f"  {'w':>4}{'uniform':>10}{'BD':>9}{'(publ.)':>9}{'BA':>9}{'(publ.)':>9}{'best gain':>11}",
             "  " + "-" * 61]
    for w, uni, bd, bdp, ba, bap, gain in _error_table(results):
        lines.append(f"  {w:>4}{uni:>10.2f}{bd:>9.2f}{bdp:>8.0%} {ba:>9.2f}{bap:>8.0%} {gain:>10.2f}×")
    lines += ["", f"temporal leakage, {lk['states']} × {lk['states']} random matrices",
              f"  L(α) at α = {lk['alpha']}: theorem {fmt_time(lk['theorem_s'])}, prepared "
              f"{fmt_time(lk['prepared_s'])}, SciPy LP {fmt_time(lk['lp_s'])}; largest difference "
              f"{lk['agreement']:.1e}",
              f"  BPL/FPL/TPL of {lk['stream_steps']:,} steps (w = 5): {fmt_time(lk['stream_s'])}",
              f"  accountant, {lk['accountant_charges']:,} charges one by one: {fmt_time(lk['accountant_s'])}",
              f"  supremum of TPL at ε = 0.1: {lk['supremum_at_0_1']:.4f}; budget for α = 1: "
              f"{lk['allocation_for_1']:.6f} per step"]
    return "\n".join(lines)


def markdown_report(results: dict) -> str:
    """The Markdown report written beside the JSON."""
    lk = results["leakage"]
    out = ["## Releases over time", "",
           f"Measured {results['date']} on {results['cpu']} ({results['cores']} cores), Python "
           f"{results['python']}, " + ", ".join(f"{k} {v}" for k, v in results["versions"].items())
           + ". Reproduce with `python benchmarks/run.py --only temporal`.", "",
           f"### w-event histograms: adaptive budgets against the uniform split", "",
           f"A synthetic stream of {results['steps']:,} steps × {results['bins']} bins whose means jump by 25 % "
           f"with probability 2 % per step and bin (Poisson counts), released at w-event level with ε = "
           f"{results['epsilon']:g}; mean absolute error per cell over {results['repeat']} seeded run(s) "
           "(a simulation), and the share of steps that published. Every window's budget is checked exactly.", "",
           "| w | uniform | BD | BD published | BA | BA published | error of uniform / best |",
           "|---:|---:|---:|---:|---:|---:|---:|"]
    for w, uni, bd, bdp, ba, bap, gain in _error_table(results):
        out.append(f"| {w} | {uni:.2f} | {bd:.2f} | {bdp:.0%} | {ba:.2f} | {bap:.0%} | {gain:.2f}× |")
    out += ["", f"### Temporal privacy leakage ({lk['states']} × {lk['states']} random transition matrices)", "",
            "| what | time |", "|---|---:|",
            f"| L(α) by the theorem (iterative pruning) | {fmt_time(lk['theorem_s'])} |",
            f"| L(α) on the prepared candidate sets | {fmt_time(lk['prepared_s'])} |",
            f"| L(α) by SciPy's linear program, every pair of rows | {fmt_time(lk['lp_s'])} |",
            f"| BPL, FPL, TPL and windows of {lk['stream_steps']:,} steps | {fmt_time(lk['stream_s'])} |",
            f"| accountant: {lk['accountant_charges']:,} charges, every window checked at each | "
            f"{fmt_time(lk['accountant_s'])} |", "",
            f"The three values of L(α) agree to {lk['agreement']:.1e}. The supremum of TPL with ε = 0.1 at every "
            f"step is {lk['supremum_at_0_1']:.4f}; the upper-bound allocation for α = 1 gives "
            f"{lk['allocation_for_1']:.6f} per step.", ""]
    return "\n".join(out)
