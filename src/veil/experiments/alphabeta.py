"""The αβ algorithm on Adult: privacy against utility (Rastogi, Suciu and Hong, VLDB 2007).

The bundled Adult table is published over its nine columns, each with the public domain of its
hierarchy's leaves: ``m = |D| = 1,028,608,000`` tuples, of which Adult's 30,162 records hold
``n = 19,502`` distinct ones (the instance I of the paper is a set). For each posterior bound γ
(default 0.05 … 0.9) and one prior bound ``d = k·n/m`` (default k = 1), the experiment

* chooses α and β per Theorem 4.3 (:func:`veil.anonymize.alphabeta.choose_parameters`),
* draws views V (default 20, enough for the errors to settle near what the variance predicts;
  seeded coins: experiments, not releases), and
* answers one workload of random counting queries (default 2,000; each constrains 1 to 3
  attributes: an interval of ages, a random set of values of any other attribute) with the
  estimator ``Q̃(V) = (n_V − β·n_D)/α``, against the true counts on I.

It reports the size of V (tuples kept from I and inserted from D \\ I, averaged over the views), the
estimates' errors pooled over the views, divided by √n (root mean square and 95th percentile), beside
the root mean square error the estimator's variance predicts for the workload and beside
``ρ = √(k/γ)``, the paper's privacy/utility trade-off, the share of queries that miss by ``ρ√n`` or more (the empirical ε of
(ρ,ε)-usefulness) beside Theorem 4.4's bound (Chebyshev on the largest variance, see
:mod:`veil.anonymize.alphabeta.parameters`), and how often the reported standard error covers
the error (``|error| ≤ 1.96·SE``; 95 % if the plug-in standard errors are right).

**Outputs.** ``alphabeta.csv`` (one row per γ), ``alphabeta.md`` (the same as a table, with the
setup and seed) and ``alphabeta.png`` (three panels: α and β, the view's size, the errors
against ρ), written together: all of them or none.
"""

from __future__ import annotations

import io
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from veil.errors import DataError, ParameterError
from veil.experiments.csv_rows import rows_csv

DEFAULT_GAMMAS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9)
DEFAULT_K = 1.0
DEFAULT_QUERIES = 2_000
DEFAULT_VIEWS = 20
DEFAULT_SEED = 0
MAX_ATTRIBUTES = 3

FILES = ("alphabeta.csv", "alphabeta.md", "alphabeta.png")
COLUMNS = ("gamma", "k", "d", "alpha", "beta", "keep_probability", "n", "m", "view_rows", "kept", "inserted", "rho",
           "rho_sqrt_n", "rms_error", "expected_rms_error", "p95_abs_error", "rms_error_over_sqrt_n", "p95_error_over_sqrt_n",
           "share_missing_by_rho_sqrt_n", "theorem_4_4_bound", "standard_error_coverage", "queries", "views", "seed")


@dataclass
class AlphaBetaRun:
    """The measurements of one run: ``rows`` (one dict per γ, keys :data:`COLUMNS`), the run's
    ``config`` and its wall-clock ``seconds``."""

    rows: list[dict]
    config: dict
    seconds: float


def _gammas(gammas) -> list[float]:
    if isinstance(gammas, (int, float, np.floating)) and not isinstance(gammas, bool):
        gammas = [gammas]
    if isinstance(gammas, str) or not gammas:
        raise ParameterError("give at least one value of gamma, as a list of numbers.")
    out = []
    for g in gammas:
        if isinstance(g, bool) or not isinstance(g, (int, float, np.integer, np.floating)) or not 0 < g < 1:
            raise ParameterError(f"gamma must lie strictly between 0 and 1, not {g!r}.")
        if float(g) not in out:
            out.append(float(g))
    return sorted(out)


def adult_alphabeta_dataset():
    """Adult with its nine columns published, each with its hierarchy (whose leaves are its domain)."""
    from veil.data.bundled import ADULT_COLUMNS, load_adult

    return load_adult(quasi_identifiers=ADULT_COLUMNS[:-1], sensitive=ADULT_COLUMNS[-1:])


def run_alphabeta(*, gammas: Sequence[float] = DEFAULT_GAMMAS, k: float = DEFAULT_K, queries: int = DEFAULT_QUERIES,
                  views: int = DEFAULT_VIEWS, seed: int = DEFAULT_SEED, progress: Callable[[int, int], None] | None = None) -> AlphaBetaRun:
    """Run the experiment (see the module) and return its measurements.

    Args:
        gammas: the posterior bounds γ, each in (0, 1).
        k: the prior bound as a multiple of n/m (d = k·n/m); every γ must exceed d.
        queries: the size of the workload (at least 1).
        views: the views drawn per γ (at least 1); the errors are pooled over them, since one
            view's errors are correlated across queries (they share its inserted tuples).
        seed: the seed of the workload and of every view's coins (recorded in every output).
        progress: called as ``progress(done, total)`` after each γ.

    Raises:
        ParameterError: a γ outside (0, 1) or not above d, k not positive, fewer than one query,
            a bad seed.
    """
    from veil.anonymize.alphabeta import AlphaBeta, Coins, random_queries
    from veil.anonymize.alphabeta.queries import ResolvedQueries, count_matching

    started = time.perf_counter()
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"the seed must be a whole number 0 or more, not {seed!r}.")
    if isinstance(queries, bool) or not isinstance(queries, (int, np.integer)) or queries < 1:
        raise ParameterError(f"the workload needs a whole number of queries, at least 1, not {queries!r}.")
    if isinstance(views, bool) or not isinstance(views, (int, np.integer)) or views < 1:
        raise ParameterError(f"draw a whole number of views per gamma, at least 1, not {views!r}.")
    if isinstance(k, bool) or not isinstance(k, (int, float, np.integer, np.floating)) or not (0 < k < math.inf):
        raise ParameterError(f"k must be a positive number, not {k!r}.")
    values = _gammas(gammas)
    dataset = adult_alphabeta_dataset()
    workload_rng, coin_seeds = np.random.default_rng(int(seed)).spawn(2)
    # every γ is checked against d = k·n/m before any view is drawn
    anonymizers = [AlphaBeta(g, k=k, rng=Coins.seeded(s)).fit(dataset)
                   for g, s in zip(values, coin_seeds.spawn(len(values)))]
    first = anonymizers[0]
    domain, instance, n = first.domain_, first.instance_, first.n_
    workload = random_queries(domain, int(queries), workload_rng, MAX_ATTRIBUTES)
    resolved = ResolvedQueries(workload, domain)
    n_d = resolved.domain_counts
    truth = count_matching(domain.decode(instance), resolved)
    rows = []
    for done, anonymizer in enumerate(anonymizers, start=1):
        params = anonymizer.parameters_
        errors, error_bars, sizes, kept = [], [], [], []
        for _ in range(int(views)):
            view = anonymizer.transform()
            estimate, error_bar = view.estimates(count_matching(view.codes, resolved), n_d)
            errors.append(np.abs(estimate - truth))
            error_bars.append(error_bar)
            sizes.append(len(view))
            kept.append(int(np.isin(domain.encode(view.codes), instance).sum()))
        errors, error_bars = np.concatenate(errors), np.concatenate(error_bars)
        rho = math.sqrt(float(params.k) / float(params.gamma))
        rms, p95 = float(np.sqrt(np.mean(errors ** 2))), float(np.quantile(errors, 0.95))
        expected_rms = math.sqrt(float(np.mean(params.variance(truth, n_d))))
        rows.append({
            "gamma": float(params.gamma), "k": float(params.k), "d": float(params.d), "alpha": float(params.alpha),
            "beta": float(params.beta), "keep_probability": float(params.keep_probability), "n": n, "m": domain.size,
            "view_rows": float(np.mean(sizes)), "kept": float(np.mean(kept)),
            "inserted": float(np.mean(sizes) - np.mean(kept)), "rho": rho, "rho_sqrt_n": rho * math.sqrt(n),
            "rms_error": rms, "expected_rms_error": expected_rms, "p95_abs_error": p95, "rms_error_over_sqrt_n": rms / math.sqrt(n),
            "p95_error_over_sqrt_n": p95 / math.sqrt(n),
            "share_missing_by_rho_sqrt_n": float(np.mean(errors >= rho * math.sqrt(n))),
            "theorem_4_4_bound": params.usefulness_bound(rho, n),
            "standard_error_coverage": float(np.mean(errors <= 1.96 * error_bars)),
            "queries": int(queries), "views": int(views), "seed": int(seed)})
        if progress is not None:
            progress(done, len(values))
    config = {"experiment": "alphabeta", "data": "adult", "records": dataset.num_rows, "n": n, "m": domain.size,
              "attributes": domain.names, "gammas": values, "k": float(k), "queries": int(queries), "views": int(views),
              "max_attributes": MAX_ATTRIBUTES, "seed": int(seed)}
    return AlphaBetaRun(rows, config, time.perf_counter() - started)


# --------------------------------------------------------------------------------------------- outputs


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def csv_text(run: AlphaBetaRun) -> str:
    """The run's rows as CSV (columns :data:`COLUMNS`)."""
    return rows_csv(COLUMNS, run.rows, _cell)


def markdown_text(run: AlphaBetaRun) -> str:
    """The run as Markdown: the setup, then one table."""
    cfg = run.config
    lines = ["## The αβ algorithm on Adult (Rastogi, Suciu and Hong, VLDB 2007)", "",
             f"{cfg['records']:,} records of the bundled Adult table over its {len(cfg['attributes'])} columns "
             f"({', '.join(cfg['attributes'])}), each with the domain of its hierarchy's leaves: m = {cfg['m']:,} "
             f"tuples, n = {cfg['n']:,} distinct ones in the table. Prior bound d = k·n/m with k = {cfg['k']:g}; "
             f"α and β per Theorem 4.3 (both conditions met with equality). One workload of {cfg['queries']:,} "
             f"random counting queries (1 to {cfg['max_attributes']} attributes each) answered from {cfg['views']} "
             "views per γ by Q̃ = (n_V − β·n_D)/α against the true counts (errors pooled over the views, |V| "
             "averaged). "
             f"**Seed {cfg['seed']}** (workload and coins): the views are experiments, not fit for release. "
             f"Run time {run.seconds:.1f} s.", "",
             "ρ = √(k/γ). *Missing by ρ√n*: the share of queries with |Q(I) − Q̃(V)| ≥ ρ√n (the empirical ε), "
             "beside Theorem 4.4's ε (Chebyshev's inequality on the largest variance). *Expected RMS*: the root "
             "mean square error the estimator's variance predicts for this workload. *Coverage*: the share "
             "of queries whose error is within 1.96 reported standard errors.", "",
             "| γ | d | α | β | |V| | kept | inserted | ρ√n | RMS error | expected RMS | 95th pct. error | "
             "missing by ρ√n | Theorem 4.4 ε | coverage |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in run.rows:
        lines.append(f"| {r['gamma']:g} | {r['d']:.3g} | {r['alpha']:.6f} | {r['beta']:.3g} | {r['view_rows']:,.0f} | "
                     f"{r['kept']:,.0f} | {r['inserted']:,.0f} | {r['rho_sqrt_n']:.1f} | {r['rms_error']:.1f} | "
                     f"{r['expected_rms_error']:.1f} | "
                     f"{r['p95_abs_error']:.1f} | {r['share_missing_by_rho_sqrt_n']:.3f} | "
                     f"{r['theorem_4_4_bound']:.3f} | {r['standard_error_coverage']:.3f} |")
    lines.append("")
    return "\n".join(lines)


def figure_png(run: AlphaBetaRun) -> bytes:
    """Three panels over γ: α and β; the view's size; the errors over √n against ρ = √(k/γ)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = run.rows
    gamma = [r["gamma"] for r in rows]
    fig = Figure(figsize=(13, 4.2), dpi=110)
    FigureCanvasAgg(fig)
    left, middle, right = fig.subplots(1, 3)
    left.plot(gamma, [r["alpha"] for r in rows], marker="o", label="α")
    left.plot(gamma, [r["keep_probability"] for r in rows], marker="^", ls="--", label="α + β (keep)")
    left.set_ylabel("α, α + β")
    twin = left.twinx()
    twin.semilogy(gamma, [r["beta"] for r in rows], marker="s", color="tab:red", label="β (insert)")
    twin.set_ylabel("β (log scale)", color="tab:red")
    left.set_title("Theorem 4.3's α and β", fontsize=9)
    left.legend(loc="center right", fontsize=7)
    twin.legend(loc="lower right", fontsize=7)
    middle.plot(gamma, [r["view_rows"] for r in rows], marker="o", label="|V|")
    middle.plot(gamma, [r["kept"] for r in rows], marker="^", label="kept from I")
    middle.plot(gamma, [r["inserted"] for r in rows], marker="s", label="inserted from D \\ I")
    middle.axhline(rows[0]["n"], color="0.4", lw=1, ls=":", label=f"n = {rows[0]['n']:,}")
    middle.set_yscale("log")
    middle.set_title("size of the view", fontsize=9)
    middle.legend(fontsize=7)
    right.plot(gamma, [r["rho"] for r in rows], color="black", lw=1.5, label="ρ = √(k/γ)")
    right.plot(gamma, [r["p95_error_over_sqrt_n"] for r in rows], marker="^", color="tab:blue",
               label="95th percentile |error|/√n")
    right.plot(gamma, [r["rms_error_over_sqrt_n"] for r in rows], marker="o", color="tab:green", label="RMS error/√n")
    right.plot(gamma, [r["expected_rms_error"] / math.sqrt(r["n"]) for r in rows], ls="--", color="tab:green",
               label="expected RMS error/√n")
    right.set_title("estimation error against ρ", fontsize=9)
    right.legend(fontsize=7)
    for ax in (left, middle, right):
        ax.set_xlabel("γ (posterior bound)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, color="0.9", lw=0.6)
    cfg = run.config
    fig.suptitle(f"αβ algorithm on Adult: m = {cfg['m']:,}, n = {cfg['n']:,}, k = {cfg['k']:g}, "
                 f"{cfg['queries']:,} random counting queries, {cfg['views']} views per γ (seed {cfg['seed']})", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    out = io.BytesIO()
    fig.savefig(out, format="png")
    return out.getvalue()


def write_alphabeta(run: AlphaBetaRun, out: str | os.PathLike) -> list[Path]:
    """Write ``alphabeta.csv``, ``alphabeta.md`` and ``alphabeta.png`` into the folder ``out``
    (created if missing): all three appear, or none does.

    Raises:
        DataError: ``out`` is a file, or cannot be created.
    """
    from veil.output import write_files

    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise DataError(f"{str(folder)!r} is a file; give a folder for the experiment's outputs.")
    texts = {folder / FILES[0]: csv_text(run), folder / FILES[1]: markdown_text(run)}
    return write_files({**texts, folder / FILES[2]: figure_png(run)}, make_folders=True)
