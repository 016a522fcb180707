"""What the four conformance suites share: the failure they raise, the one-sentence rule for bad
parameters, and the statistical tests the randomized suites decide with.

A check that finds a broken property raises :class:`ConformanceError`, an ``AssertionError`` (so
pytest reports it as a failed test) that names the implementation, the property it breaks and
what was seen. The statistical tests run on seeded draws, so a suite gives the same verdict on
every run; their significance level (:data:`LEVEL`) is small enough that a correct
implementation passes for any seed, and the draws are many enough that an error of a few per cent
in a scale or a probability is rejected.
"""

from __future__ import annotations

import math
import re
from typing import Callable

import numpy as np
from scipy import stats

from veil.errors import ParameterError, VeilError

#: The significance level of every test on seeded draws.
LEVEL = 1e-4
#: The significance level of a test on draws from the secure source, which differ on every run:
#: one correct run in a million is rejected.
SECURE_LEVEL = 1e-6

#: The properties a check can find broken, each as the sentence its failure reports.
PROPERTIES = {
    "parameters": "a bad parameter does not raise a ParameterError of one sentence",
    "declaration": "its declared properties contradict each other",
    "verdict": "its verdict and its level disagree",
    "level": "its level is not the worst of its classes' levels",
    "measure-only": "measuring without a threshold gives other levels",
    "monotonic": "it is declared monotonic but a generalization of a passing node fails",
    "monotonic-suppression": "it is declared monotonic with suppression but a generalization has more records "
                             "in failing classes",
    "weighted": "a table summarized by its distinct rows and their counts gives another result than its records",
    "satisfied": "the published table does not satisfy the configured models",
    "records": "a record is invented or lost beyond the suppressed ones",
    "shuffle": "the published rows are not a shuffle of the input-order release",
    "manifest": "the manifest does not match the release",
    "distribution": "its draws do not follow the distribution it states",
    "error-bound": "its stated error bound does not hold at the stated level",
    "variance": "its draws do not have the variance it states",
    "fitness": "a seeded run is not marked unfit for release, or a secure run is not marked fit",
    "unbiased": "its estimator is biased",
    "privacy": "a report is more likely under one value than e^ε times under another",
    "glue": "the noise it asks the samplers for (sampler, parameters, cells) depends on the data",
}


class ConformanceError(AssertionError):
    """A conformance check failed.

    Attributes:
        subject: what was checked (a model, an algorithm, a mechanism or a protocol).
        property: the key of :data:`PROPERTIES` it breaks.
        detail: what the check saw.
    """

    def __init__(self, subject: str, prop: str, detail: str):
        self.subject, self.property, self.detail = subject, prop, detail
        super().__init__(f"{subject}: {PROPERTIES[prop]}: {detail}")


def one_sentence(subject: str, call: Callable[[], object], what: str, error: type = ParameterError) -> str:
    """Run ``call`` and require it to raise ``error`` (a :class:`~veil.errors.VeilError`) whose
    message is one sentence: one line, ending with a period, with no second sentence in it.

    Args:
        subject: the name of what is checked, for the failure.
        call: the call with a bad parameter.
        what: the bad parameter, for the failure.
        error: the class of the error expected.

    Returns:
        The message.

    Raises:
        ConformanceError: nothing raised, another error raised, or a message that is not one sentence.
    """
    try:
        call()
    except error as exc:
        message = str(exc)
        if not isinstance(exc, VeilError) or not is_one_sentence(message):
            raise ConformanceError(subject, "parameters", f"{what} gives {message!r}") from None
        return message
    except Exception as exc:  # noqa: BLE001 - any other error is the failure reported
        raise ConformanceError(subject, "parameters", f"{what} raises {type(exc).__name__}: {exc}") from None
    raise ConformanceError(subject, "parameters", f"{what} is accepted")


def is_one_sentence(message: str) -> bool:
    """Whether ``message`` is one sentence: non-empty, one line, ending with a period, and no
    period followed by a space and a capital letter (the start of a second sentence)."""
    return bool(message) and "\n" not in message and message.endswith(".") \
        and re.search(r"\.\s+[A-Z]", message) is None


# --------------------------------------------------------------------------- statistics

def ks_pvalue(sample: np.ndarray, cdf: Callable) -> float:
    """The p-value of the Kolmogorov–Smirnov test of a continuous ``sample`` against ``cdf``."""
    return float(stats.kstest(np.asarray(sample, dtype=float), cdf).pvalue)


def chi2_pvalue(observed: np.ndarray, expected: np.ndarray, *, least: float = 5.0) -> float:
    """The p-value of Pearson's χ² test of counts against expected counts (same total).

    Cells expected to hold fewer than ``least`` draws are pooled (the rarest first, until the pool
    holds ``least``), so that the χ² approximation holds; a draw in a cell expected to be empty
    gives 0.
    """
    observed = np.asarray(observed, dtype=float).ravel()
    expected = np.asarray(expected, dtype=float).ravel()
    if (observed[expected <= 0] > 0).any():
        return 0.0
    keep = expected > 0
    observed, expected = observed[keep], expected[keep]
    pool = expected < least
    while pool.any() and expected[pool].sum() < least and not pool.all():
        others = np.flatnonzero(~pool)
        pool[others[np.argmin(expected[others])]] = True
    obs, exp = observed[~pool], expected[~pool]
    if pool.any():
        obs, exp = np.append(obs, observed[pool].sum()), np.append(exp, expected[pool].sum())
    if len(obs) < 2:
        return 1.0
    exp = exp * obs.sum() / exp.sum()
    return float(stats.chisquare(obs, exp).pvalue)


def misses_pvalue(misses: int, trials: int, alpha: float) -> float:
    """The p-value of ``misses`` out of ``trials`` when each misses with probability at most
    ``alpha`` (one-sided binomial test: small when there are too many misses)."""
    return float(stats.binom.sf(misses - 1, trials, alpha)) if misses else 1.0


def variance_pvalue(sample: np.ndarray, variance: float) -> float:
    """Two-sided p-value of a sample's variance against a stated ``variance``.

    The sample variance of m draws has a standard error of sqrt((μ₄ − σ⁴)/m), with the fourth
    central moment μ₄ taken from the sample (so heavy tails, Laplace's, are allowed for); the
    ratio of the gap to it is taken as normal. A sample of one value says nothing about a
    variance (noise of tiny variance is 0 almost surely), so it gives 1.
    """
    x = np.asarray(sample, dtype=float)
    m = len(x)
    if np.all(x == x[0]):
        return 1.0
    centred = x - x.mean()
    s2 = float(centred @ centred) / (m - 1)
    mu4 = float(np.mean(centred ** 4))
    se = math.sqrt(max(mu4 - s2 * s2, 1e-300) / m)
    return float(2 * stats.norm.sf(abs(s2 - variance) / se))
