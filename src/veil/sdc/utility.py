"""The utility of perturbed data: how far a perturbed table (noise, swapping, coding) is from the
original, and how far PRAM's released and estimated frequencies are from the true ones.

Numeric measures (:func:`numeric_utility`), for an original table x and a perturbed table z with
the same rows and columns (records in the same order):

* **IL1s** (Yancey, Winkler and Creecy 2002, "Disclosure risk assessment in perturbative
  microdata protection", LNCS 2316; Mateo-Sanz, Sebé and Domingo-Ferrer 2004): the mean over cells
  of |x_ij − z_ij| / (√2·S_j), S_j the standard deviation (ddof 1) of original column j. (√2·S_j
  is the standard deviation of the difference of two independent draws from the column: on a
  normal column, IL1s is about √(2/π) ≈ 0.80 when z is as far from x as an unrelated record's
  value would be.) sdcMicro's ``dUtility``
  multiplies by √2 where the paper divides, so its figures are twice veil's.
* the relative change of each column's **mean**, |z̄_j − x̄_j| / |x̄_j|, and **variance**,
  |s²(z_j) − s²(x_j)| / s²(x_j) (the Domingo-Ferrer and Torra 2001 "variation" measures);
* the change of the **covariances**, |Cov(z)_ij − Cov(x)_ij| / (S_i·S_j) over the pairs i <= j
  (divided by the product of the original standard deviations rather than by the covariance
  itself, which may be near zero; on the diagonal it is the relative change of the variance), its
  largest and mean value;
* the change of the **correlations**, |r(z)_ij − r(x)_ij| over the pairs i < j, largest and mean;
* the **eigenvalue** measures: Σ_k |λ_k − μ_k| / λ_k with λ_1 >= λ_2 >= … the eigenvalues of the
  original's and μ_k of the perturbed table's matrix, for the correlation matrices (``eigen``:
  sdcMicro's ``dUtility(method = "eigen")``, which takes the covariance of each table
  standardized by its own scale) and for the covariance matrices (``eigen_covariance``).

Missing values. IL1s averages over the cells present in both tables; means and variances of a
column use the rows where it is present in both; covariances, correlations and eigenvalues use the
rows complete in both tables. A division by a zero spread or a zero mean gives 0 when nothing
changed and infinity otherwise; a column without spread takes no part in the correlations and the
``eigen`` measure (its correlations are undefined). Measures without any pair (one column) are 0.

These numbers are computed from the private table: they belong in the curator's report, and in a
published one only if the publisher accepts what they reveal (a mean change reveals little; the
values of the means would reveal more, and are not part of the result).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from veil.errors import DataError, ParameterError
from veil.sdc._numeric import float_matrix

__all__ = ["FrequencyUtility", "NumericUtility", "frequency_utility", "numeric_utility", "relative_change"]


@dataclass(frozen=True, eq=False)  # arrays inside: compare their fields
class NumericUtility:
    """The utility measures of a perturbed numeric table (module notes for each definition).

    Attributes:
        columns: the column names (of a DataFrame) or ``"0"``, ``"1"``, ….
        il1s: IL1s, mean over cells of |x − z| / (√2·S_j).
        mean_change, variance_change: per column, the relative change of its mean and variance.
        covariance_change_max, covariance_change_mean: |ΔCov_ij| / (S_i·S_j), i <= j.
        correlation_change_max, correlation_change_mean: |Δr_ij|, i < j.
        eigen: Σ |λ_k − μ_k| / λ_k of the correlation matrices (sdcMicro's ``eigen``).
        eigen_covariance: the same of the covariance matrices.
        cells: the number of cells IL1s averaged over; complete_rows: the rows the matrices used.
    """

    columns: tuple[str, ...]
    il1s: float
    mean_change: np.ndarray = field(repr=False)
    variance_change: np.ndarray = field(repr=False)
    covariance_change_max: float
    covariance_change_mean: float
    correlation_change_max: float
    correlation_change_mean: float
    eigen: float
    eigen_covariance: float
    cells: int
    complete_rows: int

    def summary(self) -> dict[str, float]:
        """The measures as one row of a utility table: name → value (largest and mean of the
        per-column changes)."""
        def top(a: np.ndarray) -> float:
            return float(a.max()) if len(a) else 0.0

        def avg(a: np.ndarray) -> float:
            return float(a.mean()) if len(a) else 0.0

        return {"il1s": self.il1s,
                "mean_change_max": top(self.mean_change), "mean_change_mean": avg(self.mean_change),
                "variance_change_max": top(self.variance_change), "variance_change_mean": avg(self.variance_change),
                "covariance_change_max": self.covariance_change_max,
                "covariance_change_mean": self.covariance_change_mean,
                "correlation_change_max": self.correlation_change_max,
                "correlation_change_mean": self.correlation_change_mean,
                "eigen": self.eigen, "eigen_covariance": self.eigen_covariance}


def relative_change(new: np.ndarray, old: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    """|new − old| / |scale| element-wise (``scale`` = ``old`` by default), with 0 where nothing
    changed and infinity where something changed against a zero scale."""
    new, old = np.asarray(new, dtype=float), np.asarray(old, dtype=float)
    diff = np.abs(new - old)
    scale = np.abs(old if scale is None else np.asarray(scale, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = diff / scale
    return np.where(diff == 0, 0.0, np.where(scale == 0, math.inf, out))


def _eigen_change(original: np.ndarray, perturbed: np.ndarray) -> float:
    """Σ_k |λ_k − μ_k| / λ_k over the eigenvalues in decreasing order; an eigenvalue at most
    d·2⁻⁵²·λ_max counts as zero (0 when μ_k is zero too, infinity otherwise)."""
    if original.shape[0] == 0:
        return 0.0
    lam = np.sort(np.linalg.eigvalsh(original))[::-1]
    mu = np.sort(np.linalg.eigvalsh(perturbed))[::-1]
    tol = len(lam) * np.finfo(float).eps * max(float(lam[0]), float(mu[0]), 0.0)
    lam = np.where(np.abs(lam) <= tol, 0.0, lam)
    mu = np.where(np.abs(mu) <= tol, 0.0, mu)
    return float(relative_change(mu, lam).sum())


def _correlation(cov: np.ndarray) -> np.ndarray:
    sd = np.sqrt(np.diag(cov))
    return cov / np.outer(sd, sd)


def _names(values: Any, width: int) -> tuple[str, ...]:
    names = getattr(values, "columns", None)
    if names is not None and len(names) == width:
        return tuple(str(c) for c in names)
    return tuple(str(j) for j in range(width))


def numeric_utility(original: Any, perturbed: Any) -> NumericUtility:
    """The utility measures of a perturbed numeric table against its original (module notes).

    Args:
        original: the original values, a column or a matrix [rows × columns] (NumPy, nested list,
            pandas or polars). Not modified.
        perturbed: the perturbed values, the same shape, the records in the same order.

    Returns:
        :class:`NumericUtility`.

    Raises:
        ParameterError: the two tables differ in shape.
        ColumnError: a column holds something other than numbers.
        DataError: a column has fewer than two values present in both tables.
    """
    x, _ = float_matrix(original, "original columns")
    z, _ = float_matrix(perturbed, "perturbed columns")
    if x.shape != z.shape:
        raise ParameterError(f"the perturbed table must have the original's shape {x.shape}, not {z.shape}.")
    both = ~(np.isnan(x) | np.isnan(z))
    per_column = both.sum(axis=0)
    if len(per_column) and per_column.min() < 2:
        raise DataError("utility needs at least two values present in both tables in every column.")
    # Every measure is a ratio, unchanged when both tables are divided by one power of two (an
    # exact division): brought within ±1, no variance overflows.
    top = max(float(np.nanmax(np.abs(x), initial=0.0)), float(np.nanmax(np.abs(z), initial=0.0)))
    shift = math.frexp(top)[1]
    with np.errstate(under="ignore"):
        x, z = np.ldexp(x, -shift), np.ldexp(z, -shift)
    return _measures(x, z, both, per_column, _names(original, x.shape[1]))


def _measures(x: np.ndarray, z: np.ndarray, both: np.ndarray, per_column: np.ndarray,
              names: tuple[str, ...]) -> NumericUtility:
    d = x.shape[1]
    # Column statistics over the rows where the column is present in both (masked, vectorized).
    n = per_column.astype(float)
    x0, z0 = np.where(both, x, 0.0), np.where(both, z, 0.0)
    x_mean, z_mean = x0.sum(axis=0) / n, z0.sum(axis=0) / n
    x_var = (np.where(both, x - x_mean, 0.0) ** 2).sum(axis=0) / (n - 1)
    z_var = (np.where(both, z - z_mean, 0.0) ** 2).sum(axis=0) / (n - 1)
    # IL1s: S_j over the original column's present values.
    xs = np.nanstd(x, axis=0, ddof=1) if d else np.zeros(0)
    cell = relative_change(z0, x0, np.broadcast_to(math.sqrt(2) * xs, x.shape))
    cells = int(both.sum())
    il1s = float(cell[both].sum() / cells) if cells else 0.0
    # Matrices over the rows complete in both tables.
    rows = both.all(axis=1)
    xc, zc = x[rows], z[rows]
    if len(xc) >= 2:
        cx = np.atleast_2d(np.cov(xc, rowvar=False, ddof=1))
        cz = np.atleast_2d(np.cov(zc, rowvar=False, ddof=1))
    else:
        cx = cz = np.zeros((d, d))
    sd = np.sqrt(np.diag(cx))
    upper = np.triu_indices(d)
    cov_change = relative_change(cz[upper], cx[upper], np.outer(sd, sd)[upper])
    spread = (np.diag(cx) > 0) & (np.diag(cz) > 0)
    rx, rz = _correlation(cx[np.ix_(spread, spread)]), _correlation(cz[np.ix_(spread, spread)])
    strict = np.triu_indices(int(spread.sum()), k=1)
    corr_change = np.abs(rz[strict] - rx[strict])
    return NumericUtility(
        columns=names, il1s=il1s,
        mean_change=relative_change(z_mean, x_mean), variance_change=relative_change(z_var, x_var),
        covariance_change_max=float(cov_change.max(initial=0.0)),
        covariance_change_mean=float(cov_change.mean()) if len(cov_change) else 0.0,
        correlation_change_max=float(corr_change.max(initial=0.0)),
        correlation_change_mean=float(corr_change.mean()) if len(corr_change) else 0.0,
        eigen=_eigen_change(rx, rz), eigen_covariance=_eigen_change(cx, cz),
        cells=cells, complete_rows=int(rows.sum()))


@dataclass(frozen=True)
class FrequencyUtility:
    """How far released (and estimated) category frequencies are from the original ones.

    Attributes:
        total_variation: ½·Σ_c |p_c − q_c| between the original and released shares.
        hellinger: √(½·Σ_c (√p_c − √q_c)²) between the same shares.
        max_count_change: max_c |released_c − original_c|.
        estimate_max_error, estimate_mean_error: max and mean over categories of
            |estimated_c − original_c| (counts); None without an estimate.
        estimate_total_variation: ½·Σ_c |e_c − p_c|/total, the estimate's L1 error as a share
            (an unbiased estimate may be negative in a category: it counts as it is); None without.
    """

    total_variation: float
    hellinger: float
    max_count_change: float
    estimate_max_error: float | None
    estimate_mean_error: float | None
    estimate_total_variation: float | None


def _counts(values: Any, what: str, signed: bool = False) -> np.ndarray:
    arr = np.asarray(values, dtype=float) if not hasattr(values, "to_numpy") else values.to_numpy(dtype=float)
    if arr.ndim != 1 or not np.all(np.isfinite(arr)) or (not signed and np.any(arr < 0)):
        raise ParameterError(f"the {what} must be one finite{'' if signed else ' non-negative'} count per category.")
    return arr


def frequency_utility(original: Any, released: Any, estimated: Any | None = None) -> FrequencyUtility:
    """The distance between the original category counts of a column and the released ones (after
    PRAM, say), and the error of an estimate of the original counts from the release (PRAM's
    unbiased estimator (Pᵀ)⁻¹·T*, Kooiman, Willenborg and Gouweleeuw 1997).

    Args:
        original: the original count of each category (one value per category).
        released: the released count of each category, the same categories in the same order.
        estimated: optionally, the estimated original counts (may be negative or fractional).

    Returns:
        :class:`FrequencyUtility`.

    Raises:
        ParameterError: counts not finite or negative (original, released), or the lengths differ.
    """
    o, r = _counts(original, "original counts"), _counts(released, "released counts")
    e = None if estimated is None else _counts(estimated, "estimated counts", signed=True)
    if len(o) != len(r) or e is not None and len(e) != len(o):
        raise ParameterError("the original, released and estimated counts must list the same categories.")
    total_o, total_r = o.sum(), r.sum()
    p = o / total_o if total_o > 0 else o
    q = r / total_r if total_r > 0 else r
    tv = 0.5 * float(np.abs(p - q).sum())
    hellinger = math.sqrt(max(0.0, 0.5 * float(((np.sqrt(p) - np.sqrt(q)) ** 2).sum())))
    max_change = float(np.abs(r - o).max(initial=0.0))
    if e is None:
        return FrequencyUtility(tv, hellinger, max_change, None, None, None)
    err = np.abs(e - o)
    return FrequencyUtility(tv, hellinger, max_change, float(err.max(initial=0.0)),
                            float(err.mean()) if len(err) else 0.0,
                            0.5 * float(err.sum() / total_o) if total_o > 0 else 0.0)
