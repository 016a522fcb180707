"""MST: a maximum spanning tree of noisy 2-way marginals (McKenna, Sheldon and Miklau, "Winning the
NIST Contest: A scalable and general approach to differentially private synthetic data", Journal
of Privacy and Confidentiality 2021).

With d columns and a budget ρ (ρ-zCDP), split in thirds as the paper does:

1. ρ/3 measures the d 1-way marginals (ρ/(3d) each, discrete Gaussian noise);
2. values whose noisy count is below 3σ are merged into one value per column
   (:mod:`veil.synth.compression`), and the 1-way measurements re-expressed on that domain;
3. ρ/3 chooses the d − 1 edges of a spanning tree: the model estimated from the 1-way
   measurements (independent columns) scores every pair of columns by the L1 distance between its
   2-way marginal and the data's (sensitivity 1 under add/remove-one), and the exponential
   mechanism picks one edge at a time among the pairs joining two different components (a
   randomized Kruskal, components kept by union–find), each with ρ/(3(d − 1));
4. ρ/3 measures the chosen 2-way marginals (ρ/(3(d − 1)) each);
5. a graphical model is estimated from all measurements (:func:`veil.synth.estimation.estimate`).

The shares add up to ρ exactly (fractions); with one column the 1-way marginal gets all of ρ.
Every σ and every selection scale depends only on ρ and the domain, never on the data.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from veil.dp.noise import as_noise_source
from veil.errors import ParameterError
from veil.synth.budget import check_rho, check_sigma
from veil.synth.compression import Compression
from veil.synth.domain import SynthDomain
from veil.synth.estimation import Measurement, estimate
from veil.synth.fit import MeasurementRecord, SelectionRecord, SynthFit, unfit_reasons
from veil.synth.measure import check_codes, check_domain, marginal_counts, measure
from veil.synth.selection import exponential_mechanism

__all__ = ["mst", "mst_plan"]


def mst_plan(rho: Fraction, columns: int) -> tuple[Fraction, Fraction, Fraction]:
    """MST's shares: (ρ of each 1-way measurement, of each selection, of each 2-way measurement).

    ρ/(3d), ρ/(3(d − 1)), ρ/(3(d − 1)); with one column (ρ, 0, 0). d·ρ₁ + (d − 1)(ρ_sel + ρ₂) = ρ.
    """
    if columns == 1:
        return Fraction(rho), Fraction(0), Fraction(0)
    third = Fraction(rho) / 3
    return third / columns, third / (columns - 1), third / (columns - 1)


class _Components:
    """Union–find over column indices."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, i: int, j: int) -> None:
        self.parent[self.find(i)] = self.find(j)


def mst(codes: np.ndarray, domain: SynthDomain, *, rho, noise=None, compress: bool = True) -> SynthFit:
    """Fit MST to a table (McKenna, Sheldon and Miklau, JPC 2021); ρ-zCDP with the ρ given.

    Args:
        codes: the table as codes of ``domain`` ((n, d) integers, :meth:`SynthDomain.encode`).
        domain: the public domain of every column.
        rho: the ρ-zCDP budget, > 0 (a Fraction, an integer, a float read as its decimal, or text).
        noise: None (secure, for a release), an integer seed or a ``numpy.random.Generator``
            (an experiment: the fit is marked unfit for release), or a NoiseSource.
        compress: merge each column's rare values (noisy count below 3σ) before choosing the tree.

    Returns:
        The fit, with its public records: d 1-way measurements (round 0), d − 1 selections and d − 1
        2-way measurements (rounds 1 to d − 1); Σ of their ρ is ``rho`` exactly.

    Raises:
        ParameterError: ρ is not a positive finite number or so small that σ exceeds what veil
            draws, the domain has no column, or ``compress`` is not a bool.
        DomainError: the codes do not fit the domain.
        (All before any noise is drawn.)
    """
    total = check_rho(rho)
    check_domain(domain)
    names, sizes = tuple(domain.names), [int(s) for s in domain.shape]
    d = len(names)
    if d == 0:
        raise ParameterError("The domain has no columns; declare at least one.")
    if not isinstance(compress, bool):
        raise ParameterError(f"compress must be True or False, got {compress!r}.")
    arr = check_codes(codes, domain)
    one_way, select, pair = mst_plan(total, d)
    check_sigma(one_way, "1-way marginals")
    if d > 1:
        check_sigma(pair, "2-way marginals")
    source = as_noise_source(noise)

    records: list[MeasurementRecord] = []
    noisy_one_way: dict[str, tuple[np.ndarray, float]] = {}
    for j, name in enumerate(names):
        m, rec = measure(marginal_counts(arr, [j], [sizes[j]]), (name,), one_way, source, round=0, purpose="1-way")
        noisy_one_way[name] = (m.values, m.sigma)
        records.append(rec)
    comp = Compression.of(noisy_one_way) if compress else Compression.identity(names, sizes)
    csizes = comp.sizes
    ccodes = comp.forward(arr)
    measurements = []
    for col in comp.columns:
        values, sigma = col.compress_measurement(*noisy_one_way[col.name])
        measurements.append(Measurement((col.name,), values, sigma))

    selections: list[SelectionRecord] = []
    if d > 1:
        independent = estimate(csizes, measurements)
        pairs = list(itertools.combinations(range(d), 2))
        scores = np.empty(len(pairs))
        for k, (i, j) in enumerate(pairs):
            exact = marginal_counts(ccodes, [i, j], [csizes[names[i]], csizes[names[j]]])
            scores[k] = np.abs(exact - independent.project((names[i], names[j]))).sum()
        components = _Components(d)
        chosen = []
        for step in range(1, d):
            joining = [k for k, (i, j) in enumerate(pairs) if components.find(i) != components.find(j)]
            pick, eps = exponential_mechanism(scores[joining], rho=select, sensitivity=1.0, source=source)
            i, j = pairs[joining[pick]]
            components.union(i, j)
            chosen.append((i, j))
            selections.append(SelectionRecord(step, eps, select, len(joining), (names[i], names[j])))
        for step, (i, j) in enumerate(chosen, start=1):
            counts = marginal_counts(ccodes, [i, j], [csizes[names[i]], csizes[names[j]]])
            m, rec = measure(counts, (names[i], names[j]), pair, source, round=step, purpose="tree")
            measurements.append(m)
            records.append(rec)
    model = estimate(csizes, measurements)
    spent = sum((r.rho for r in records), Fraction(0)) + sum((s.rho for s in selections), Fraction(0))
    reasons = unfit_reasons(source, domain)
    return SynthFit("mst", domain, model, tuple(records), tuple(selections), spent, None, None,
                    not reasons, reasons, comp if comp.active else None)
