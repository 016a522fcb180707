"""What a synthesizer run returns: the fitted model and the public record of how it was fitted.

:class:`SynthFit` holds the graphical model estimated from noisy marginals, every measurement
(clique, σ, ρ, round, purpose) and every selection (round, ε, ρ, number of candidates, the chosen
clique) made, and the total ρ. The records hold only public parameters and DP outputs (a
selection's outcome, the compression MST chose from noisy counts), never a number read from the
private table, so they may go into the manifest that travels with the release.

Sampling draws codes from the model and, for MST, expands the compressed values back to the
original domain (uniformly among the rare values each stands for): post-processing, covered by the
same guarantee.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from veil.dp.noise import NoiseSource
from veil.errors import ParameterError
from veil.synth.compression import Compression
from veil.synth.domain import SynthDomain
from veil.synth.graphical_model import GraphicalModel

__all__ = ["MeasurementRecord", "SelectionRecord", "SynthFit", "unfit_reasons"]


@dataclass(frozen=True)
class MeasurementRecord:
    """A noisy marginal the mechanism measured (public): its clique, the discrete Gaussian σ, its
    ρ-zCDP cost, the round, and why (``"1-way"``, ``"tree"`` for MST's tree, ``"selected"`` for AIM)."""

    clique: tuple[str, ...]
    sigma: float
    rho: Fraction
    round: int
    purpose: str


@dataclass(frozen=True)
class SelectionRecord:
    """A choice by the exponential mechanism (public): the round, its ε and ρ-zCDP cost, how many
    candidates it chose among, and the clique it chose."""

    round: int
    epsilon: float
    rho: Fraction
    candidates: int
    chosen: tuple[str, ...]


@dataclass(frozen=True)
class SynthFit:
    """A fitted synthesizer.

    Attributes:
        mechanism: ``"mst"`` or ``"aim"``.
        domain: the user's (original) domain.
        model: the graphical model, over the model's own domain (MST's compressed one).
        measurements, selections: the public records, in the order they were made.
        rho: Σ of every measurement's and selection's ρ, equal to the configured ρ exactly.
        epsilon, delta: the (ε, δ) asked for when the budget was given so (set by the caller), else None.
        fit_for_release: False when the noise was seeded or the domain read from the data.
        unfit_reasons: one sentence per reason it is unfit.
        compression: MST's compression of rare values (public: chosen from noisy counts); None for
            none.
    """

    mechanism: str
    domain: SynthDomain
    model: GraphicalModel
    measurements: tuple[MeasurementRecord, ...]
    selections: tuple[SelectionRecord, ...]
    rho: Fraction
    epsilon: float | None
    delta: float | None
    fit_for_release: bool
    unfit_reasons: tuple[str, ...]
    compression: Compression | None = None

    def marginal(self, clique) -> np.ndarray:
        """The model's marginal on ``clique`` (column names) over the original domain, summing to the
        model's total: MST's merged values share their mass equally among the rare values they stand
        for, as :meth:`sample` draws them."""
        clique = tuple(clique)
        values = self.model.project(clique)
        if self.compression is not None and self.compression.active:
            values = self.compression.expand_marginal(values, clique)
        return values

    def sample(self, rows: int | None, rng: np.random.Generator) -> np.ndarray:
        """``rows`` synthetic rows as codes of the original domain, (rows, d) int64.

        Args:
            rows: how many; None → the model's (noisy) total, rounded.
            rng: drives the model's sampler and the expansion of compressed values.

        Raises:
            ParameterError: ``rows`` is not a whole number >= 0.
        """
        if rows is None:
            rows = max(0, round(float(self.model.total)))
        if isinstance(rows, bool) or not isinstance(rows, numbers.Integral) or rows < 0:
            raise ParameterError(f"rows must be a whole number of at least 0, got {rows!r}.")
        codes = np.asarray(self.model.sample(int(rows), rng), dtype=np.int64)
        names = tuple(self.model.names)
        wanted = tuple(self.domain.names)
        if names != wanted:
            codes = codes[:, [names.index(n) for n in wanted]]
        if self.compression is not None and self.compression.active:
            codes = self.compression.expand(codes, rng)
        return codes


def unfit_reasons(source: NoiseSource, domain: SynthDomain) -> tuple[str, ...]:
    """Why a run is not fit for release: seeded noise, a domain read from the data (one sentence each)."""
    reasons = []
    if not source.fit_for_release:
        reasons.append("The noise was drawn from a seeded generator (an experiment), not the secure sampler.")
    if not domain.fit_for_release:
        data_cols = [c.name for c in domain.columns if c.source == "data"]
        reasons.append(f"The domain of {', '.join(data_cols) or 'some columns'} was read from the private table, "
                       "which DP does not cover.")
    return tuple(reasons)
