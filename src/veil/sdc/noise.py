"""Additive noise for numeric columns, uncorrelated or correlated (Brand 2002, "Microdata protection
through noise addition", LNCS 2316; Kim 1986, "A method for limiting disclosure in microdata based
on random noise and transformation", ASA Proceedings of the Section on Survey Research Methods;
Tendick and Matloff 1994; sdcMicro's ``addNoise``).

This is statistical disclosure control, NOT differential privacy: the noise is scaled to each
column's own standard deviation (a statistic of the private table), no privacy loss ε is
claimed, and an outlier stays recognisable when the noise is small next to its distance from
the rest. Use :mod:`veil.dp` for a differentially private release.

Two kinds (``amount`` = a > 0 is the noise's standard deviation as a multiple of the data's):

* ``"uncorrelated"``: z_ij = x_ij + e_ij with e_ij ~ N(0, (a·σ_j)²) independent, σ_j the sample
  standard deviation of column j (ddof 1). Means are kept in expectation and every variance grows
  to (1 + a²)·σ_j², covariances are kept in expectation, so correlations shrink by 1/(1 + a²).
* ``"correlated"``: noise with covariance a²·Σ (Σ the sample covariance matrix, ddof 1), followed
  by Kim's (1986) linear transformation that gives the covariance back, the rescaling Tendick and
  Matloff (1994) also use. Exactly, with x̄ the column means and Σ = V·diag(λ)·Vᵀ:

  1. y = (x − x̄)·V, the principal components (uncorrelated, variances λ_k);
  2. y′_k = y_k + e_k with e_k ~ N(0, s_k²), s_k = a·√λ_k (up to the grid, below), independently
     for each component: the noise e·Vᵀ then has covariance a²·Σ;
  3. z = x̄ + ((y′ − mean(y′))·diag(f))·Vᵀ with f_k = √(λ_k / (λ_k + s_k²)) (= 1/√(1 + a²) up
     to the grid's rounding of s_k).

  The means are kept exactly (step 3 centres the noisy components), and E[Cov(z)] = Σ: each
  component's sample variance has expectation λ_k + s_k² before the rescaling (the noise's sample
  variance is unbiased and independent of the data), hence λ_k after; components stay
  uncorrelated in expectation (all of it up to the grid's rounding of y, at most γ_k/2 a value). Components with λ_k at most 10⁻¹² of the largest (exact linear
  dependences between columns) carry no variance and are set to zero, so a column that is an exact
  linear combination of others stays one. The correlated kind needs a value in every cell.

Where the noise comes from (both modes run the same exact algorithm; only the bytes differ). A
Gaussian noise value is drawn on a grid: γ = 2^(⌊log₂ s⌋ − 10), a power of two at most s/1024,
and the noise is γ·K with K an exact discrete Gaussian of integer scale S = round(s/γ) in
[1024, 2048] (Canonne, Kamath and Steinke 2020, Algorithm 3, on discrete Laplace draws of
:mod:`veil.dp.discrete_laplace`), so the realized standard deviation S·γ is s to within 1/2048 of
it (the rescaling of step 3 uses the realized one; the variances of the uncorrelated kind are
(σ_j² + (S·γ)²), within 1/1024 of (1 + a²)·σ_j² in the noise's part). Only when s is below about 2⁻⁴¹
of the column's largest absolute value is γ made coarser, to 2^(e − 52) with 2^e the smallest power
of two above max|x| (so that every round(x/γ) is an exact integer in a float), and S is then s/γ rounded to a whole number (at least
1, else the amount is refused). The released value is γ·(round(x/γ) + K): the
data rounded to the grid (a change of at most γ/2 ≤ s/2048) plus the noise, in exact arithmetic,
so no low-order bits of x leak through floating-point rounding (Mironov 2012); the correlated kind
then applies step 3 to these grid values, a function of them and of the aggregates it preserves.
The grid reveals ⌊log₂(a·σ)⌋ per column (per component), which the release's spread shows anyway.
Secure mode (``rng=None``, the default) reads every random byte from the operating system's CSPRNG
(``os.urandom``, in blocks); a seed or ``numpy.random.Generator`` is an experiment whose bytes
come from ``Generator.bytes``, labelled ``fit_for_release=False``. OpenDP's float Gaussian
sampler (``veil.dp.noise.NoiseSource.secure().gaussian``) was not used: it costs about 70 µs a
value, 5 minutes for a million rows of four columns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from veil.dp import discrete_laplace
from veil.dp.discrete_laplace import bernoulli_exp, geometric_exp1
from veil.errors import ColumnError, DataError, ParameterError
from veil.randomness import RandomBytes
from veil.sdc._numeric import RngArg, float_matrix, random_bytes

__all__ = ["AdditiveNoise", "additive_noise", "discrete_gaussian"]

KINDS = ("uncorrelated", "correlated")
#: The grid step is at most the noise's standard deviation / 2**GRID_BITS.
GRID_BITS = 10
#: Components whose variance is at most this share of the largest carry no variance.
_DEGENERATE = 1e-12
# |Y|·t below 2^31 keeps (|Y|·t − S²)² within 64 bits; beyond, Python integers (never in practice).
_WORD_LIMIT = 1 << 31
# Candidates tried in one round when few draws are left.
_SMALL_ROUND = 1 << 12


@dataclass(frozen=True, eq=False)  # arrays inside: compare their fields
class AdditiveNoise:
    """A noisy table and how it was made.

    Attributes:
        values: the noisy values, the input's shape, float64 (NaN where a value was missing).
        kind: ``"uncorrelated"`` or ``"correlated"``.
        amount: a, the noise's standard deviation as a multiple of the data's.
        fit_for_release: True only when drawn in secure mode (``rng=None``).
    """

    values: np.ndarray
    kind: str
    amount: float
    fit_for_release: bool

    def public_parameters(self) -> dict[str, Any]:
        """What a manifest may publish: the kind and the amount (never the seed of a run, never the
        standard deviations or means the noise was scaled with, which are private statistics)."""
        return {"kind": self.kind, "amount": self.amount,
                "sampler": "exact discrete Gaussian on a power-of-two grid (Canonne, Kamath and Steinke 2020)"}


def discrete_gaussian(sigma: int, size: int, source: RandomBytes) -> np.ndarray:
    """``size`` independent draws of the discrete Gaussian of integer scale σ, exactly (int64):
    P(K = k) ∝ exp(−k²/(2σ²)).

    Canonne, Kamath and Steinke 2020, Algorithm 3: Y discrete Laplace of scale t = σ + 1, kept
    with probability exp(−(|Y| − σ²/t)²/(2σ²)) = exp(−(|Y|·t − σ²)²/(2σ²t²)), a ratio of integers,
    drawn as exp(−1)^⌊ratio⌋ (at least ⌊ratio⌋ successes of a Bernoulli(exp(−1)) run, P = e^−k)
    and Bernoulli(exp(−remainder)) (CKS Algorithm 1), all in integer arithmetic on ``source``.

    Args:
        sigma: σ, a whole number >= 1.
        size: the number of draws.
        source: uniform random bytes (``os.urandom`` for a release).

    Raises:
        ValueError: σ is not a whole number >= 1.
    """
    if int(sigma) != sigma or sigma < 1:
        raise ValueError(f"the discrete Gaussian sampler takes a whole scale >= 1, got {sigma!r}")
    sigma = int(sigma)
    t, s2 = sigma + 1, sigma * sigma
    den = 2 * s2 * t * t
    out = np.empty(size, dtype=np.int64)
    pending = np.arange(size)
    while len(pending):
        # Few draws left: several candidates each (a round's fixed cost then dominates); a draw
        # keeps its first accepted candidate, which is what repeating the algorithm does.
        tries = max(1, min(8, _SMALL_ROUND // len(pending)))
        owner = np.repeat(pending, tries)
        y = discrete_laplace.sample(float(t), len(owner), source)
        a = np.abs(y)
        small = a < _WORD_LIMIT // t
        d = np.where(small, a, 0) * t - s2
        num = (d * d).astype(np.uint64)
        whole = num // np.uint64(den)
        rest = num % np.uint64(den)
        for i in np.flatnonzero(~small):  # exact, in Python integers
            q, r = divmod((int(a[i]) * t - s2) ** 2, den)
            whole[i], rest[i] = min(q, 1 << 63), r
        # exp(−1)^whole: at least `whole` successes of a Bernoulli(exp(−1)) run (drawn only where
        # whole >= 1), then exp(−rest/den) for the candidates still in.
        keep = np.ones(len(owner), dtype=bool)
        far = np.flatnonzero(whole > 0)
        keep[far] = geometric_exp1(len(far), source) >= whole[far]
        near = np.flatnonzero(keep)
        keep[near] = bernoulli_exp(rest[near], den, source)
        accepted, owner = np.flatnonzero(keep), owner[keep]
        first = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]) if len(owner) else owner
        out[owner[first]] = y[accepted[first]]
        done = np.zeros(size, dtype=bool)
        done[owner[first]] = True
        pending = pending[~done[pending]]
    return out


def _grid(scale: float, magnitude: float) -> tuple[float, int]:
    """The grid step γ (a power of two) and the integer scale S of noise of standard deviation
    ``scale`` added to values of absolute value at most ``magnitude``: γ = 2^(⌊log₂ scale⌋ − 10),
    coarsened when needed so that every value is below 2^52 steps (exact integers in a float).

    Raises:
        ParameterError: the noise is below one step of that coarser grid.
    """
    _, exponent = math.frexp(scale)  # scale = m·2^exponent, m in [0.5, 1)
    step_exp = exponent - 1 - GRID_BITS
    if magnitude > 0:
        step_exp = max(step_exp, math.frexp(magnitude)[1] - 52)
    step = math.ldexp(1.0, step_exp)
    units = round(scale / step)
    if units < 1:
        raise ParameterError("the amount of noise is below the floating-point resolution of the column's "
                             "values; give a larger amount.")
    return step, units


def _noisy_on_grid(values: np.ndarray, scale: float, source: RandomBytes) -> tuple[np.ndarray, float]:
    """γ·(round(values/γ) + K) with K discrete Gaussian (see the module notes), and the realized
    standard deviation S·γ of the noise.

    Raises:
        ColumnError: a noisy value would pass the largest float (values near 1.8e308).
    """
    step, units = _grid(scale, float(np.max(np.abs(values), initial=0.0)))
    grid = np.rint(values / step)
    with np.errstate(over="ignore"):
        out = (grid + discrete_gaussian(units, len(values), source)) * step
    if not np.isfinite(out).all():
        raise ColumnError("a column's values are too close to the largest floating-point number to add noise; "
                          "rescale the column first.")
    return out, units * step


def _exponents(x: np.ndarray) -> np.ndarray:
    """Per column, the power-of-two exponent e with max|x_j| < 2^e (0 for a column of zeros):
    dividing by 2^e is exact and brings every value within ±1, so no statistic overflows."""
    top = np.nanmax(np.abs(x), axis=0, initial=0.0) if x.size else np.zeros(x.shape[1])
    return np.frexp(top)[1]


def _std(column: np.ndarray) -> float:
    """The sample standard deviation (ddof 1) of the present values, without overflow."""
    e = int(_exponents(column.reshape(-1, 1))[0])
    return math.ldexp(float(np.std(np.ldexp(column, -e), ddof=1)), e)


def _check_amount(amount: Any) -> float:
    try:
        value = float(amount)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(amount, bool) or not (math.isfinite(value) and value > 0):
        raise ParameterError(f"amount must be a positive number (the noise's standard deviation over the "
                             f"data's), got {amount!r}.")
    return value


def additive_noise(matrix: Any, *, amount: float, kind: str = "uncorrelated", rng: RngArg = None) -> AdditiveNoise:
    """Add uncorrelated or correlated Gaussian noise to numeric columns (see the module notes for
    the exact constructions, the sampler and what the result keeps).

    Not differential privacy: the noise follows each column's own spread.

    Args:
        matrix: a numeric column (1-D) or matrix [rows × columns]: NumPy array, nested list, pandas
            or polars DataFrame/Series. Not modified.
        amount: a > 0, the noise's standard deviation as a multiple of each column's (uncorrelated)
            or of each principal component's (correlated): a = 0.5 adds noise of half the spread.
        kind: ``"uncorrelated"`` (each column its own N(0, (a·σ_j)²)) or ``"correlated"``
            (covariance a²·Σ, rescaled so that the covariance is Σ in expectation and the means are
            kept exactly; Kim 1986).
        rng: None (secure, for a release), or an integer seed or ``numpy.random.Generator`` for a
            reproducible experiment (``fit_for_release=False``).

    Missing values stay missing (uncorrelated; σ_j from the column's present values); the
    correlated kind refuses them. A column without spread (all present values equal) is returned
    unchanged, as it has no noise to scale.

    Returns:
        :class:`AdditiveNoise`.

    Raises:
        ParameterError: amount not a positive finite number, an unknown kind, a bad ``rng``, or an
            amount below the floating-point resolution of a column's values.
        ColumnError: a column holds something other than numbers, or an infinite value.
        DataError: a column with fewer than two values, or a missing value for the correlated kind.
    """
    a = _check_amount(amount)
    if kind not in KINDS:
        raise ParameterError(f"kind must be 'uncorrelated' or 'correlated', got {kind!r}.")
    source, secure = random_bytes(rng)
    x, single = float_matrix(matrix, "columns to add noise to")
    missing = np.isnan(x)
    present = (~missing).sum(axis=0)
    if len(present) and present.min() < 2:
        raise DataError("additive noise needs at least two values in every column to measure its spread.")
    out = x.copy()
    if kind == "uncorrelated":
        for j in range(x.shape[1]):
            rows = np.flatnonzero(~missing[:, j])
            sd = _std(x[rows, j])
            if sd > 0:
                out[rows, j], _ = _noisy_on_grid(x[rows, j], a * sd, source)
    else:
        if missing.any():
            raise DataError("correlated noise needs a value in every cell; impute or drop the rows with missing "
                            "values first.")
        # Columns scaled by powers of two (exact), so that no statistic overflows; the construction
        # is the same in any column scale (the noise's covariance follows the data's).
        e = _exponents(x)
        out = np.ldexp(_correlated(np.ldexp(x, -e), a, source), e)
        if not np.isfinite(out).all():
            raise ColumnError("a column's values are too close to the largest floating-point number to add "
                              "noise; rescale the column first.")
    return AdditiveNoise(values=out[:, 0] if single else out, kind=kind, amount=a, fit_for_release=secure)


def _correlated(x: np.ndarray, a: float, source: RandomBytes) -> np.ndarray:
    """Steps 1 to 3 of the correlated kind (module notes)."""
    mean = x.mean(axis=0)
    centred = x - mean
    cov = np.atleast_2d(np.cov(centred, rowvar=False, ddof=1))
    eigenvalues, vectors = np.linalg.eigh(cov)
    top = float(eigenvalues.max(initial=0.0))
    components = centred @ vectors
    rescaled = np.zeros_like(components)
    for k, lam in enumerate(eigenvalues):
        if top <= 0 or lam <= _DEGENERATE * top:
            continue
        noisy, realized = _noisy_on_grid(components[:, k], a * math.sqrt(lam), source)
        factor = math.sqrt(lam / (lam + realized * realized))
        rescaled[:, k] = (noisy - noisy.mean()) * factor
    return mean + rescaled @ vectors.T
