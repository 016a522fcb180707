"""The contract every local differential privacy frequency oracle keeps (:func:`check_protocol`).

A protocol is registered as a :class:`ProtocolCase`: a name and a factory ``make(epsilon)`` whose
default ε is the one checked. :data:`PROTOCOLS` lists every protocol of :mod:`veil.ldp`, with the ε
that take each path of its code; a new protocol joins with one line there. The check requires
that:

* **the estimator is unbiased**: over many seeded repetitions of the same users, the mean
  estimate of each value's count is within a few standard errors (its stated exact variance) of
  the true count;
* **its variance is as stated**: the estimates' sample variance, against the stated
  ``variance(n, counts)``, passes the χ² test of a normal sample's variance;
* **the secure source's reports support each value as often as stated** (c·p* + (n − c)·q* in
  expectation), and the reports are marked fit for release, the seeded ones not;
* **no report is more than e^ε times likelier under one value than another**
  (``output_probability`` on drawn reports, and the stated ``privacy_ratio``);
* **bad parameters** (ε of 0, −1, NaN or infinity, a value outside the domain, and the case's
  own) raise a :class:`~veil.errors.ParameterError` of one sentence.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
from scipy import stats

from veil.conformance.base import LEVEL, SECURE_LEVEL, ConformanceError, one_sentence
from veil.ldp import BLH, GRR, OLH, OUE, SUE
from veil.ldp.protocols import FrequencyOracle

#: Repetitions of the same users, and their number, for the estimator's mean and variance.
REPETITIONS, USERS = 1_000, 200
#: Users of the secure source's run.
SECURE_USERS = 20_000
#: Reports whose likelihood ratio is checked.
REPORTS = 40


@dataclass(frozen=True)
class ProtocolCase:
    """An LDP frequency oracle as the suite builds it.

    Attributes:
        name: the case's name (the test's id).
        make: ``make(epsilon)`` builds the protocol; the default ε is the one checked.
        invalid: more bad constructions, each ``call()``, that must raise a one-sentence
            :class:`~veil.errors.ParameterError`.
    """

    name: str
    make: Callable[..., FrequencyOracle]
    invalid: Sequence[Callable[[], object]] = ()

    def __str__(self) -> str:
        return self.name


#: Every protocol of :mod:`veil.ldp`; OLH's hash range g = round(e^ε) + 1 is tested a power of
#: two, odd, and even otherwise (the three ways its aggregation tests a hash).
PROTOCOLS = [
    ProtocolCase("GRR", lambda epsilon=1.0: GRR(epsilon, 8), invalid=[lambda: GRR(1.0, 1), lambda: GRR(1.0, 2.5)]),
    ProtocolCase("GRR, large domain", lambda epsilon=2.0: GRR(epsilon, 40)),
    ProtocolCase("SUE", lambda epsilon=1.0: SUE(epsilon, 8)),
    ProtocolCase("OUE", lambda epsilon=1.0: OUE(epsilon, 8), invalid=[lambda: OUE(800.0, 8)]),
    ProtocolCase("BLH", lambda epsilon=1.0: BLH(epsilon, 8)),
    ProtocolCase("OLH, g a power of two", lambda epsilon=2.0: OLH(epsilon, 8), invalid=[lambda: OLH(30.0, 8)]),
    ProtocolCase("OLH, g odd", lambda epsilon=1.5: OLH(epsilon, 8)),
    ProtocolCase("OLH, g even", lambda epsilon=1.6: OLH(epsilon, 12)),
]


@dataclass(frozen=True)
class ProtocolCheck:
    """What :func:`check_protocol` checked: the case's name, the p-values of the tests (the
    smallest over the values of the domain) and the largest likelihood ratio of a drawn report."""

    name: str
    pvalues: dict
    ratio: float


def _users(domain: int, n: int) -> np.ndarray:
    """``n`` users' values, skewed over the domain (value 0 the most frequent, the last held by
    none), in a fixed order."""
    weights = 1.0 / np.arange(1, domain + 1)
    weights[-1] = 0.0
    counts = np.floor(weights / weights.sum() * n).astype(int)
    counts[0] += n - counts.sum()
    return np.repeat(np.arange(domain), counts)


def check_protocol(case: ProtocolCase, seed: int = 0) -> ProtocolCheck:
    """Check an LDP frequency oracle against the contract of the module notes.

    Args:
        case: the protocol (:class:`ProtocolCase`).
        seed: the seed of the simulated users' randomness.

    Returns:
        What was checked (the returned ProtocolCheck).

    Raises:
        ConformanceError: a property is broken (the error names it).
    """
    proto, subject = case.make(), case.name
    d = proto.domain
    for bad in (0, -1, math.nan, math.inf):
        one_sentence(subject, lambda: case.make(bad), f"epsilon {bad}")
    for i, call in enumerate(case.invalid):
        one_sentence(subject, call, f"its bad construction #{i + 1}")
    one_sentence(subject, lambda: proto.perturb(np.array([0, d])), "a value outside the domain")
    pvalues = {}
    rng = np.random.default_rng(seed)
    values = _users(d, USERS)
    counts = np.bincount(values, minlength=d)
    estimates = np.stack([proto.estimate(proto.perturb_and_aggregate(values, rng)) for _ in range(REPETITIONS)])
    variance = np.asarray(proto.variance(USERS, counts), dtype=float)
    errors = estimates - counts
    z = errors.mean(axis=0) / np.sqrt(variance / REPETITIONS)
    pvalues["unbiased"] = float(2 * stats.norm.sf(np.abs(z)).min())
    ratio = (REPETITIONS - 1) * errors.var(axis=0, ddof=1) / variance
    chi2 = stats.chi2(REPETITIONS - 1)
    pvalues["variance"] = float(2 * np.minimum(chi2.cdf(ratio), chi2.sf(ratio)).min())
    for name, p in pvalues.items():
        if p < LEVEL / d:  # one test per value of the domain
            worst = int(np.argmax(np.abs(z) if name == "unbiased" else np.abs(np.log(ratio / (REPETITIONS - 1)))))
            raise ConformanceError(subject, name, f"p = {p:.3g} < {LEVEL / d:.3g} (value {worst}: mean error "
                                                  f"{errors.mean(axis=0)[worst]:.4g}, variance "
                                                  f"{errors.var(axis=0, ddof=1)[worst]:.4g} against "
                                                  f"{variance[worst]:.4g} stated)")
    pvalues["distribution"] = _check_secure(proto, subject)
    _check_fitness(proto, seed, subject)
    return ProtocolCheck(case.name, pvalues, _check_privacy(proto, seed, subject))


def _check_secure(proto: FrequencyOracle, subject: str) -> float:
    values = _users(proto.domain, SECURE_USERS)
    counts = np.bincount(values, minlength=proto.domain)
    supports = proto.perturb_and_aggregate(values)
    p, q, n = proto.p, proto.q, SECURE_USERS
    expected = counts * p + (n - counts) * q
    spread = np.sqrt(counts * p * (1 - p) + (n - counts) * q * (1 - q))
    pvalue = float(2 * stats.norm.sf(np.abs(supports.counts - expected) / spread).min())
    if pvalue < SECURE_LEVEL / proto.domain:
        raise ConformanceError(subject + " (secure source)", "distribution",
                               f"supports {supports.counts.tolist()} where {np.round(expected, 1).tolist()} are "
                               "expected")
    if not supports.fit_for_release:
        raise ConformanceError(subject, "fitness", "reports from the secure source are marked not fit for release")
    return pvalue


def _check_fitness(proto: FrequencyOracle, seed: int, subject: str) -> None:
    values = _users(proto.domain, 50)
    seeded = proto.perturb(values, rng=seed)
    aggregated = proto.perturb_and_aggregate(values, rng=seed)
    if seeded.fit_for_release or aggregated.fit_for_release:
        raise ConformanceError(subject, "fitness", "seeded reports are marked fit for release")
    if not proto.perturb(values).fit_for_release:
        raise ConformanceError(subject, "fitness", "reports from the secure source are marked not fit for release")
    again = proto.perturb(values, rng=seed)
    same = all(np.array_equal(a, b) for a, b in zip(*(r.data if isinstance(r.data, tuple) else (r.data,)
                                                      for r in (seeded, again))))
    if not same:
        raise ConformanceError(subject, "fitness", "two runs from one seed report differently")


def _check_privacy(proto: FrequencyOracle, seed: int, subject: str) -> float:
    bound = math.exp(proto.epsilon) * (1 + 1e-9)
    if proto.privacy_ratio() > bound:
        raise ConformanceError(subject, "privacy", f"its stated ratio is {proto.privacy_ratio():.6g}, above "
                                                   f"e^ε = {math.exp(proto.epsilon):.6g}")
    values = np.arange(REPORTS) % proto.domain
    data = proto.perturb(values, rng=seed).data
    worst = 1.0
    for i in range(REPORTS):
        report = tuple(part[i] for part in data) if isinstance(data, tuple) else data[i]
        likelihood = np.array([proto.output_probability(report, v) for v in range(proto.domain)])
        worst = max(worst, float(likelihood.max() / likelihood.min()))
    if worst > bound:
        raise ConformanceError(subject, "privacy", f"a report is {worst:.6g} times likelier under one value than "
                                                   f"another, above e^ε = {math.exp(proto.epsilon):.6g}")
    return worst
