"""αβ benchmark (issue 16): publishing Adult with the αβ algorithm and answering counting queries.

* **Publishing**: the bundled Adult table over its nine columns, each with the domain of its
  hierarchy's leaves (m = |D| = 1,028,608,000 tuples, n = 19,502 distinct ones in the table), at
  γ = 0.5 and k = 1: ``AlphaBeta.fit`` (the domain, the instance, α and β) + ``transform`` (the
  coins and the view), with the secure coins of a real release (the OS CSPRNG) and with seeded
  ones; loading and encoding the CSV is timed apart, once. Goal: under 2 s.
* **Answering**: 10,000 random counting queries (1 to 3 attributes each, drawn with the benchmark
  seed) on that view: resolving them against the domain, counting n_V, n_D and the estimates with
  their standard errors (``AlphaBetaView.answer``). Goal: under 1 s.

No other tool implements the αβ algorithm, so there is no peer to run beside veil.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import time

import numpy as np

from harness import SEED, cpu_model, fmt_time
from timing import best_of, progress

GAMMA = 0.5
K = 1
QUERIES = 10_000
PUBLISH_GOAL_S = 2.0
ANSWER_GOAL_S = 1.0


def run(repeat: int) -> dict:
    """Time publishing and answering (best of ``repeat`` each)."""
    import veil
    from veil.anonymize.alphabeta import AlphaBeta, random_queries
    from veil.experiments.alphabeta import adult_alphabeta_dataset

    progress("αβ: loading Adult")
    start = time.perf_counter()
    dataset = adult_alphabeta_dataset()
    for name in dataset.quasi_identifiers + dataset.sensitive:
        dataset.column(name)
    load_s = time.perf_counter() - start

    progress("αβ: publishing with secure coins")
    secure_s, view = best_of(lambda: AlphaBeta(GAMMA, k=K).fit(dataset).transform(), repeat)
    progress("αβ: publishing with seeded coins")
    seeded_s, _ = best_of(lambda: AlphaBeta(GAMMA, k=K, rng=SEED).fit(dataset).transform(), repeat)
    anonymizer = AlphaBeta(GAMMA, k=K).fit(dataset)

    queries = random_queries(view.domain, QUERIES, np.random.default_rng(SEED))
    progress(f"αβ: answering {QUERIES:,} queries")
    answer_s, answers = best_of(lambda: view.answer(queries), repeat)
    progress("")
    params = anonymizer.parameters_
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
        "versions": {"veil": veil.__version__, "numpy": np.__version__}, "repeat": repeat, "seed": SEED,
        "gamma": GAMMA, "k": K, "records": dataset.num_rows, "n": anonymizer.n_, "m": anonymizer.domain_.size,
        "alpha": float(params.alpha), "beta": float(params.beta), "view_rows": len(view),
        "load_s": load_s, "publish_secure_s": secure_s, "publish_seeded_s": seeded_s,
        "queries": QUERIES, "answer_s": answer_s, "mean_standard_error": float(np.mean(answers.standard_error)),
        "goals": {"publish_s": secure_s, "publish_met": secure_s < PUBLISH_GOAL_S,
                  "answer_s": answer_s, "answer_met": answer_s < ANSWER_GOAL_S},
    }


def terminal_report(results: dict) -> str:
    """The report printed to the terminal (80 columns)."""
    goals = results["goals"]
    return "\n".join([
        f"veil αβ benchmark, {results['date']}",
        f"{results['cpu']}, {results['cores']} cores, Python {results['python']}",
        ", ".join(f"{k} {v}" for k, v in results["versions"].items()) + f"; best of {results['repeat']}",
        "",
        f"Adult, {results['records']:,} records, n = {results['n']:,} distinct tuples of m = {results['m']:,}; "
        f"γ = {results['gamma']:g}, k = {results['k']}",
        f"  load and encode once       {fmt_time(results['load_s']):>10}",
        f"  publish, secure coins      {fmt_time(results['publish_secure_s']):>10}   "
        f"(|V| = {results['view_rows']:,}, β = {results['beta']:.3g})",
        f"  publish, seeded coins      {fmt_time(results['publish_seeded_s']):>10}",
        f"  answer {results['queries']:,} queries     {fmt_time(results['answer_s']):>10}",
        "", "Goals",
        f"  publish under {PUBLISH_GOAL_S:g} s: {fmt_time(goals['publish_s'])}, "
        f"{'met' if goals['publish_met'] else 'NOT MET'}",
        f"  {results['queries']:,} queries under {ANSWER_GOAL_S:g} s: {fmt_time(goals['answer_s'])}, "
        f"{'met' if goals['answer_met'] else 'NOT MET'}"])


def markdown_report(results: dict) -> str:
    """The Markdown report written beside the JSON."""
    goals = results["goals"]
    return "\n".join([
        "## αβ benchmark", "",
        f"Measured {results['date']} on {results['cpu']} ({results['cores']} cores), Python {results['python']}, "
        + ", ".join(f"{k} {v}" for k, v in results["versions"].items())
        + f"; best of {results['repeat']} runs. Reproduce with `python benchmarks/run.py --only alphabeta`.", "",
        f"Adult over its nine columns with the domains of its hierarchies' leaves: {results['records']:,} records, "
        f"n = {results['n']:,} distinct tuples, m = {results['m']:,}; γ = {results['gamma']:g}, k = {results['k']} "
        f"(α = {results['alpha']:.6f}, β = {results['beta']:.3g}), |V| = {results['view_rows']:,}.", "",
        "| step | time |", "|---|---:|",
        f"| load and encode the CSV (once) | {fmt_time(results['load_s'])} |",
        f"| publish (fit + transform), secure coins | {fmt_time(results['publish_secure_s'])} |",
        f"| publish (fit + transform), seeded coins | {fmt_time(results['publish_seeded_s'])} |",
        f"| answer {results['queries']:,} random counting queries | {fmt_time(results['answer_s'])} |", "",
        "No other tool implements the αβ algorithm, so no peer is run.", "", "Goals:", "",
        f"- publishing under {PUBLISH_GOAL_S:g} s: {fmt_time(goals['publish_s'])}, "
        f"**{'met' if goals['publish_met'] else 'not met'}**",
        f"- {results['queries']:,} counting queries under {ANSWER_GOAL_S:g} s: {fmt_time(goals['answer_s'])}, "
        f"**{'met' if goals['answer_met'] else 'not met'}**", ""])
