"""The contract every differentially private query keeps (:func:`check_query`).

A query of :mod:`veil.dp.queries` is registered as a :class:`QueryCase`: a name, ``ask(data,
noise, epsilon)`` (whose default ε is the one checked) and the exact answer it estimates,
``truth(frame)``, computed here from the records. :data:`QUERIES` lists every query; a new one
joins with one line there. On a random table with missing cells (:mod:`veil.conformance.tables`)
the check asks the query many times from one seed and requires that:

* **the answers follow the distribution the result states**: an additive answer's error is the
  noise of the mechanism it names at its ε, δ and sensitivity (Laplace or discrete Laplace of
  scale Δ/ε; Gaussian of the stated variance, which must meet (ε, δ)), and a selected answer (a
  quantile) follows the exponential mechanism's softmax of ε·u/2 over its public grid, with u
  computed here from the records;
* **the error bar holds at its level**: the true answer falls outside ``[low, high]`` at most a
  share ``alpha`` of the time (a binomial test), and the stated variance is the answers';
* **a seeded run is marked not fit for release** (and answers the same again), and a run from the
  secure source is marked fit, unless the query is never fit (categories read from the data);
* **bad parameters** (ε of 0, −1, NaN or infinity) raise a :class:`~veil.errors.ParameterError`
  of one sentence.

The secure source's draws are tested in :mod:`veil.conformance.mechanisms`, through the same
mechanisms the queries call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

import numpy as np
import pandas as pd
from scipy import special, stats

from veil.conformance.base import (LEVEL, ConformanceError, chi2_pvalue, ks_pvalue, misses_pvalue, one_sentence,
                                   variance_pvalue)
from veil.conformance.tables import DISEASES, RandomTable, random_table
from veil.dp.mechanisms import gaussian_delta
from veil.dp.queries import QueryResult, dp_count, dp_histogram, dp_mean, dp_quantile, dp_sum, quantile_grid

#: How many times each query is asked from one seed (a histogram's cells each count once).
REPETITIONS = 2_000
DISEASE_CATEGORIES = {"disease": list(DISEASES)}
SEXES = {"sex": ["F", "M"]}


@dataclass(frozen=True)
class QueryCase:
    """A DP query as the suite asks it.

    Attributes:
        name: the case's name (the test's id).
        ask: ``ask(data, noise, epsilon)`` asks the query of ``data`` (a Dataset); the default ε
            is the one checked.
        truth: ``truth(frame)`` is the exact answer (a number or an array of cells) from the
            records, or ``None`` for a selection query.
        outputs: for a selection query, ``outputs(frame, epsilon)`` gives its public candidate
            answers and the probability the query states for each.
        never_fit: whether its answers are never fit for release.
    """

    name: str
    ask: Callable[..., QueryResult]
    truth: Callable[[pd.DataFrame], Any] | None = None
    outputs: Callable[[pd.DataFrame, float], tuple[np.ndarray, np.ndarray]] | None = None
    never_fit: bool = False

    def __str__(self) -> str:
        return self.name


def _histogram(frame: pd.DataFrame, columns: list[str], categories: dict) -> np.ndarray:
    counts = frame.groupby(columns).size()
    index = pd.MultiIndex.from_product([categories[c] for c in columns]) if len(columns) > 1 \
        else pd.Index(categories[columns[0]])
    return counts.reindex(index, fill_value=0).to_numpy().reshape([len(categories[c]) for c in columns])


def _median_outputs(frame: pd.DataFrame, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """The median of ``age`` on 20 steps of [20, 60]: u(g) = −|#{x < g} − n/2|, sensitivity 1."""
    points = quantile_grid((20, 60), 20)
    ages = np.sort(frame["age"].clip(20, 60).to_numpy(dtype=float))
    scores = -np.abs(np.searchsorted(ages, points, side="left") - 0.5 * len(ages))
    return points, special.softmax(epsilon * scores / 2.0)


#: Every query of :mod:`veil.dp.queries`, with δ = 0 and δ > 0 where both are allowed.
QUERIES = [
    QueryCase("count", lambda d, noise, epsilon=0.5: dp_count(d, epsilon, noise=noise), truth=len),
    QueryCase("count, δ > 0", lambda d, noise, epsilon=1.0: dp_count(d, epsilon, 1e-6, noise=noise), truth=len),
    QueryCase("sum", lambda d, noise, epsilon=0.5: dp_sum(d, "salary", (0, 6), epsilon, noise=noise),
              truth=lambda f: float(f["salary"].clip(0, 6).sum())),
    QueryCase("sum, δ > 0", lambda d, noise, epsilon=1.0: dp_sum(d, "salary", (-2, 8), epsilon, 1e-5, noise=noise),
              truth=lambda f: float(f["salary"].clip(-2, 8).sum())),
    QueryCase("mean", lambda d, noise, epsilon=1.0: dp_mean(d, "age", (20, 60), epsilon, noise=noise),
              truth=lambda f: float(f["age"].clip(20, 60).mean())),
    QueryCase("histogram", lambda d, noise, epsilon=0.8: dp_histogram(d, "disease", epsilon,
                                                                      categories=DISEASE_CATEGORIES, noise=noise),
              truth=lambda f: _histogram(f, ["disease"], DISEASE_CATEGORIES)),
    QueryCase("contingency table, δ > 0", lambda d, noise, epsilon=1.0: dp_histogram(
        d, ["sex", "disease"], epsilon, 1e-6, categories={**SEXES, **DISEASE_CATEGORIES}, noise=noise),
              truth=lambda f: _histogram(f, ["sex", "disease"], {**SEXES, **DISEASE_CATEGORIES})),
    QueryCase("histogram of the data's categories", lambda d, noise, epsilon=0.8: dp_histogram(
        d, "sex", epsilon, data_categories=True, noise=noise), truth=lambda f: _histogram(f, ["sex"], SEXES),
              never_fit=True),
    # priced in ρ-zCDP (the case's ``epsilon`` is the ρ it asks for): discrete Gaussian counts, Gaussian sums
    QueryCase("count in ρ", lambda d, noise, epsilon=0.1: dp_count(d, rho=epsilon, noise=noise), truth=len),
    QueryCase("sum in ρ", lambda d, noise, epsilon=0.2: dp_sum(d, "salary", (-2, 8), rho=epsilon, noise=noise),
              truth=lambda f: float(f["salary"].clip(-2, 8).sum())),
    QueryCase("mean in ρ", lambda d, noise, epsilon=0.5: dp_mean(d, "age", (20, 60), rho=epsilon, noise=noise),
              truth=lambda f: float(f["age"].clip(20, 60).mean())),
    QueryCase("contingency table in ρ", lambda d, noise, epsilon=0.1: dp_histogram(
        d, ["sex", "disease"], rho=epsilon, categories={**SEXES, **DISEASE_CATEGORIES}, noise=noise),
              truth=lambda f: _histogram(f, ["sex", "disease"], {**SEXES, **DISEASE_CATEGORIES})),
    QueryCase("quantile", lambda d, noise, epsilon=1.0: dp_quantile(d, "age", 0.5, (20, 60), epsilon, grid=20,
                                                                    noise=noise), outputs=_median_outputs),
]


@dataclass(frozen=True)
class QueryCheck:
    """What :func:`check_query` checked: the case's name, the mechanism the answers name and the
    p-values of the tests (the smallest passed)."""

    name: str
    mechanism: str
    pvalues: dict


@lru_cache(maxsize=4)
def _table(seed: int) -> RandomTable:
    return random_table(seed)


def check_query(case: QueryCase, seed: int = 1) -> QueryCheck:
    """Check a DP query against the contract of the module notes.

    Args:
        case: the query (:class:`QueryCase`).
        seed: the seed of the random table (an odd one has missing cells, which a query leaves
            out) and of the draws.

    Returns:
        What was checked (the returned QueryCheck).

    Raises:
        ConformanceError: a property is broken (the error names it).
    """
    table = _table(seed)
    data, subject = table.dataset, case.name
    for bad in (0, -1, math.nan, math.inf):
        one_sentence(subject, lambda: case.ask(data, seed, epsilon=bad), f"epsilon {bad}")
    rng = np.random.default_rng(seed)
    first = case.ask(data, rng)
    cells = max(1, np.size(first.value))
    results = [first] + [case.ask(data, rng) for _ in range(max(1, REPETITIONS // cells) - 1)]
    pvalues: dict = {}
    if case.outputs is not None:
        points, expected = case.outputs(table.frame, first.epsilon)
        chosen = np.searchsorted(points, np.array([r.value for r in results], dtype=float))
        pvalues["distribution"] = chi2_pvalue(np.bincount(chosen, minlength=len(points)), expected * len(results))
    else:
        truth = np.asarray(case.truth(table.frame), dtype=float)
        _additive(first, results, truth, pvalues)
        misses = sum(int(((truth < np.asarray(r.low)) | (truth > np.asarray(r.high))).sum()) for r in results)
        pvalues["error-bound"] = misses_pvalue(misses, len(results) * cells, first.alpha)
    for name, p in pvalues.items():
        if p < LEVEL:
            raise ConformanceError(subject, name.split(" ")[0], f"{name}: p = {p:.3g} < {LEVEL:g}")
    _check_fitness(case, data, seed, subject)
    return QueryCheck(case.name, first.mechanism, pvalues)


def _additive(first: QueryResult, results: list[QueryResult], truth: np.ndarray, pvalues: dict) -> None:
    """The answers' errors against the noise the result names (none for a ratio such as a mean)."""
    errors = np.concatenate([np.ravel(np.asarray(r.value, dtype=float) - truth) for r in results])
    eps, delta, sensitivity = first.epsilon, first.delta, first.sensitivity
    if first.mechanism == "laplace":
        pvalues["distribution"] = ks_pvalue(errors, stats.laplace(scale=sensitivity / eps).cdf)
    elif first.mechanism == "geometric":
        ratio = math.exp(-eps / sensitivity)
        top = int(np.abs(errors).max()) + 1
        support = np.arange(-top, top + 1)
        expected = (1 - ratio) / (1 + ratio) * ratio ** np.abs(support) * len(errors)
        observed = np.bincount(errors.astype(np.int64) + top, minlength=len(support))
        pvalues["distribution"] = chi2_pvalue(observed, expected)
    elif first.mechanism == "gaussian":
        sigma = math.sqrt(first.variance)
        pvalues["privacy"] = 1.0 if gaussian_delta(eps, sigma, sensitivity) <= delta * (1 + 1e-9) else 0.0
        pvalues["distribution"] = ks_pvalue(errors, stats.norm(scale=sigma).cdf)
    elif first.mechanism in ("gaussian (zCDP)", "discrete-gaussian"):
        # σ from ρ and Δ as the answer states them (ρ = Δ²/(2σ²)), not from the mechanism
        sigma = sensitivity / math.sqrt(2 * first.rho)
        if first.mechanism == "gaussian (zCDP)":
            pvalues["distribution"] = ks_pvalue(errors, stats.norm(scale=sigma).cdf)
        else:
            top = max(int(np.abs(errors).max()), int(40 * sigma)) + 1
            support = np.arange(-top, top + 1)
            weights = np.exp(-(support.astype(float) ** 2) / (2 * sigma**2))
            observed = np.bincount(errors.astype(np.int64) + top, minlength=len(support))
            pvalues["distribution"] = chi2_pvalue(observed, weights / weights.sum() * len(errors))
    if first.variance is not None and first.mechanism in ("laplace", "geometric", "gaussian", "gaussian (zCDP)",
                                                          "discrete-gaussian"):
        pvalues["variance"] = variance_pvalue(errors, first.variance)


def _check_fitness(case: QueryCase, data, seed: int, subject: str) -> None:
    seeded, again = case.ask(data, seed), case.ask(data, seed)
    if seeded.fit_for_release or not seeded.not_fit_because or not seeded.label.startswith("NOT fit for release"):
        raise ConformanceError(subject, "fitness", f"a seeded run says {seeded.label!r}")
    if not np.array_equal(np.asarray(seeded.value), np.asarray(again.value)):
        raise ConformanceError(subject, "fitness", "two runs from one seed answer differently")
    secure = case.ask(data, None)
    if case.never_fit:
        if secure.fit_for_release or not secure.not_fit_because:
            raise ConformanceError(subject, "fitness", f"a run that is never fit says {secure.label!r}")
    elif not secure.fit_for_release or secure.not_fit_because or secure.label != "fit for release":
        raise ConformanceError(subject, "fitness", f"a run from the secure source says {secure.label!r}")
