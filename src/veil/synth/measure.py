"""Measuring a marginal: its exact counts, and the counts with discrete Gaussian noise (ρ-zCDP).

A table is a code matrix (n rows, d columns, column j holding codes 0..size_j − 1). The marginal
on a clique (a tuple of columns) counts the rows of every combination of the clique's values; one
mixed-radix key per row and one ``numpy.bincount`` give it in a single pass.

Under add/remove-one neighbouring (the row unit of :mod:`veil.dp`), one row changes one cell of a
marginal by one: the L2 sensitivity is 1, so adding discrete Gaussian noise of σ = 1/√(2ρ_i) to
every cell is ρ_i-zCDP (Canonne, Kamath and Steinke, "The Discrete Gaussian for Differential
Privacy", NeurIPS 2020, Theorem 4). The noisy counts are integers drawn by the exact sampler of
:meth:`veil.dp.noise.NoiseSource.discrete_gaussian` (OpenDP's in secure mode).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from veil.dp.discrete_gaussian import discrete_gaussian_sigma
from veil.dp.noise import NoiseSource
from veil.errors import ParameterError
from veil.synth.domain import DomainError, SynthDomain
from veil.synth.estimation import Measurement
from veil.synth.fit import MeasurementRecord

__all__ = ["check_codes", "check_domain", "marginal_counts", "measure"]


def marginal_counts(codes: np.ndarray, positions: Sequence[int], shape: Sequence[int]) -> np.ndarray:
    """The exact marginal of ``codes`` on the columns at ``positions``: an int64 array of ``shape``
    (the columns' sizes, in the order given) whose cell (v_1, …, v_k) counts the rows holding those
    codes. The codes must already lie in their domains (checked by the mechanisms).
    """
    shape = tuple(int(s) for s in shape)
    cells = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if codes.shape[0] == 0:
        return np.zeros(shape, dtype=np.int64)
    key = np.zeros(codes.shape[0], dtype=np.int64)
    for pos, size in zip(positions, shape):
        key *= size
        key += codes[:, pos]
    return np.bincount(key, minlength=cells).astype(np.int64).reshape(shape)


def measure(counts: np.ndarray, clique: tuple[str, ...], rho: Fraction, source: NoiseSource, *,
            round: int, purpose: str) -> tuple[Measurement, MeasurementRecord]:
    """The marginal ``counts`` of ``clique`` with discrete Gaussian noise of σ = 1/√(2ρ) on every cell.

    Args:
        counts: the exact marginal (:func:`marginal_counts`).
        clique: its columns, in the axes' order.
        rho: the ρ-zCDP cost of this measurement (a Fraction > 0).
        source: where the noise comes from.
        round: the round of the mechanism that asked for it (for the public record).
        purpose: ``"1-way"``, ``"tree"`` or ``"selected"`` (for the public record).

    Returns:
        The measurement for the estimator and its public record (clique, σ, ρ, round, purpose).
    """
    sigma = discrete_gaussian_sigma(rho, 1)
    noisy = source.discrete_gaussian(counts, sigma)
    return (Measurement(tuple(clique), noisy.astype(float), sigma),
            MeasurementRecord(tuple(clique), sigma, Fraction(rho), int(round), purpose))


def check_domain(domain) -> SynthDomain:
    """``domain`` itself, refused when it is not a SynthDomain.

    Raises:
        ParameterError: it is not.
    """
    if not isinstance(domain, SynthDomain):
        raise ParameterError(f"The domain must be a SynthDomain, got {type(domain).__name__}.")
    return domain


def check_codes(codes, domain) -> np.ndarray:
    """The code matrix of a table on ``domain``, checked (not copied when already int64).

    Raises:
        ParameterError: ``domain`` is not a SynthDomain.
        DomainError: not a 2-D integer array with one column per domain column, or a code outside
            its column's domain (the message names the column, never a value).
    """
    check_domain(domain)
    arr = np.asarray(codes)
    names, sizes = tuple(domain.names), tuple(int(s) for s in domain.shape)
    if arr.ndim != 2 or arr.shape[1] != len(names) or (arr.size and arr.dtype.kind not in "iu"):
        raise DomainError(f"The codes must be a 2-D integer array with {len(names)} columns, one per domain column "
                          "(SynthDomain.encode makes it).")
    arr = arr.astype(np.int64, copy=False)
    if arr.shape[0]:
        low, high = arr.min(axis=0), arr.max(axis=0)
        for j, (name, size) in enumerate(zip(names, sizes)):
            if low[j] < 0 or high[j] >= size:
                raise DomainError(f"Column {name!r} holds codes outside its domain 0..{size - 1}; encode the table "
                                  "with its domain (SynthDomain.encode).")
    return arr
