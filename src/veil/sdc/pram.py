"""PRAM, the post-randomization method (Gouweleeuw, Kooiman, Willenborg and de Wolf 1998).

Each record's value of a categorical column is replaced, independently of every other record, by
a value drawn from a **transition matrix** ``P``: a record whose original category is ``a`` is
released as ``b`` with probability ``P[a, b]`` (rows are original categories, columns released
ones; each row sums to 1). Since the draws are random, a released value may be false, so that a
match on it is uncertain; since ``P`` is known, the original frequencies can still be estimated
without bias.

* **Estimator.** With ``T`` the original counts and ``T*`` the released ones, ``E[T*] = Pᵀ T``,
  so ``T̂ = (Pᵀ)⁻¹ T*`` is unbiased whenever ``P`` is invertible (Kooiman, Willenborg and
  Gouweleeuw 1997). Its covariance given the table is ``(Pᵀ)⁻¹ [Σ_a T_a (diag(P_a) − P_aᵀ P_a)] P⁻¹``
  (``P_a`` the row of category ``a``: the released value of a record is one multinomial draw).
* **Invariant PRAM.** A matrix with ``p·P = p`` (``p`` the column's frequencies) leaves the
  expected released frequencies equal to the original ones, so the released table needs no
  correction. :func:`invariant_matrix` builds one by the paper's two-step construction.
* **Disclosure.** What a released ``b`` tells about the original: the posterior
  ``P(original = a | released = b) = p_a P_ab / Σ_c p_c P_cb`` (Kooiman et al.), see
  :func:`pram_disclosure`.

**Categories and missing values.** The categories are the column's values as veil encodes them
(their text, numbers in their canonical text such as ``25``). Missing cells (null, NaN or one of
the dataset's missing texts) are by default **left unchanged** and are no category of the matrix
(``missing="unchanged"``): a missing cell is released missing and a present cell is never released
missing. ``missing="category"`` makes them one category, labelled ``""`` (``None`` also names it
in a given matrix), perturbed like any other.

**Draws.** Every row of the matrix is put on the public grid of multiples of 2⁻⁵³ (largest
remainder rounding of each row, so it still sums to exactly 1 and no zero entry becomes positive),
and a record's released category is the one whose stretch of the row's cumulative sums holds a
uniform integer ``u`` in ``[0, 2⁵³)``. The draw therefore realizes the grid matrix exactly, which
is the ``matrix`` the result carries and the estimator uses. ``rng=None`` (the default) draws
``u`` from the operating system's CSPRNG by :func:`veil.randomness.uniform_below` (exact integer
arithmetic, fit for release); an integer seed or a ``numpy.random.Generator`` draws it from NumPy
(reproducible, ``fit_for_release=False``). No random state is stored in the result.
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa

from veil.data.encoding import (
    MISSING_LABEL,
    EncodedColumn,
    canonical_number,
    encode_column,
)
from veil.data.io import Table, read_table
from veil.errors import ColumnError, ParameterError
from veil.randomness import uniform_below

__all__ = [
    "GRID_BITS", "PramDisclosure", "PramRelease", "PramResult", "disclosure_summary", "grid_matrix",
    "invariant_matrix", "pram", "pram_columns", "pram_covariance", "pram_disclosure",
]

#: The draws realize matrices whose entries are multiples of 2**-GRID_BITS.
GRID_BITS = 53
_GRID = 1 << GRID_BITS
#: How far a row of a given matrix may sum from 1.
ROW_SUM_TOLERANCE = 1e-9
#: A matrix whose condition number exceeds this is treated as singular by the estimator.
_MAX_CONDITION = 1e12
_MISSING_POLICIES = ("unchanged", "category")


# ---- matrices ----------------------------------------------------------------------------------

def _check_stochastic(matrix, where: str, labels: Sequence[str] | None = None) -> np.ndarray:
    """``matrix`` as a float64 square array after checking it is a transition matrix.

    Raises:
        ParameterError: not a square 2-D array of finite numbers, a negative entry, or a row not
            summing to 1 within ``ROW_SUM_TOLERANCE``.
    """
    try:
        arr = np.array(matrix, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(f"{where} must be a square table of probabilities.") from None
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] == 0:
        raise ParameterError(f"{where} must be square (one row and one column per category), "
                             f"not of shape {'×'.join(map(str, arr.shape))}.")
    if not np.isfinite(arr).all():
        raise ParameterError(f"{where} holds an entry that is not a finite number.")
    def name(i) -> str:
        return f"row {i}" if labels is None else f"the row of {labels[i]!r}"

    if (arr < 0).any():
        a, b = np.argwhere(arr < 0)[0]
        column = f"column {b}" if labels is None else f"column {labels[b]!r}"
        raise ParameterError(f"{where} holds a negative probability ({arr[a, b]:g} in {name(a)}, {column}).")
    sums = arr.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > ROW_SUM_TOLERANCE)
    if len(bad):
        raise ParameterError(f"{where} is not stochastic: {name(bad[0])} sums to {sums[bad[0]]:.12g}, "
                             f"not 1 (each row must sum to 1 within {ROW_SUM_TOLERANCE:g}).")
    return arr


def _probabilities(frequencies, size: int | None = None) -> np.ndarray:
    """Frequencies (counts or shares) as shares summing to 1.

    Raises:
        ParameterError: not a 1-D array of finite numbers >= 0 with a positive sum, or of another
            length than ``size``.
    """
    try:
        f = np.array(frequencies, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError("the frequencies must be a list of numbers, one per category.") from None
    if f.ndim != 1 or len(f) == 0:
        raise ParameterError("the frequencies must be a non-empty list of numbers, one per category.")
    if size is not None and len(f) != size:
        raise ParameterError(f"there are {len(f)} frequencies for a matrix of {size} categories; "
                             "give one per category.")
    if not np.isfinite(f).all() or (f < 0).any() or f.sum() <= 0:
        raise ParameterError("the frequencies must be finite numbers >= 0 with a positive sum.")
    return f / f.sum()


def _check_alpha(alpha) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 <= float(alpha) <= 1:
        raise ParameterError(f"alpha (the amount of perturbation of invariant PRAM) must be a number "
                             f"from 0 to 1, not {alpha!r}.")
    return float(alpha)


def invariant_matrix(frequencies, alpha: float) -> np.ndarray:
    """The invariant PRAM matrix ``R`` of the given frequencies: ``p·R = p``.

    Construction (Gouweleeuw et al. 1998, section 4: ``R = P·P̃`` with ``P̃`` the Bayes inverse of
    ``P``), with a base matrix fixed by ``alpha``:

    1. ``P = (1 − α)·I + (α/K)·J`` (``K`` categories, ``J`` all ones): a record keeps its category
       with probability ``1 − α`` and is otherwise redrawn uniformly among the ``K``;
    2. ``s = p·P`` (the released frequencies under ``P``) and the Bayes inverse
       ``P̃[k, j] = p_j P[j, k] / s_k`` (the probability that a record released as ``k`` was ``j``);
    3. ``R = P·P̃``, i.e. ``R[i, j] = Σ_k P[i, k] p_j P[j, k] / s_k``.

    ``R`` is stochastic and invariant (``(p·P)·P̃ = s·P̃ = p``), and reversible
    (``p_i R_ij = p_j R_ji``), so ``P(original = a | released = b) = R_ba`` and in particular the
    posterior of a released ``a`` being true is ``R_aa``. Rare categories are moved more than common
    ones (``R_aa`` is small when ``p_a`` is small next to ``α/K``), which is where PRAM must
    protect. ``α = 0`` is the identity (nothing changes); ``α = 1`` makes every row ``p`` (each
    record redrawn from the column's frequencies: the estimator is then impossible, ``R`` being of
    rank 1). A category of frequency 0 is never released. Invariance has a price where few
    categories occur: a column (or stratum) holding one category only is never changed at all.
    ``α`` is not the chance that a record changes: a record passes through ``P`` and then ``P̃``,
    so more records change, rare categories most (on Adult, ``α = 0.3`` changed 39 % of the
    values of ``education``); :meth:`PramResult.disclosure` gives the exact expected share kept.

    ``R`` depends on the private frequencies: it may not travel with a release (see
    :meth:`PramResult.public_description`); the published frequencies are unbiased without it.

    Args:
        frequencies: counts (or shares) per category, ``>= 0`` with a positive sum.
        alpha: the amount of perturbation, from 0 to 1.

    Returns:
        the ``K × K`` matrix (float64).

    Raises:
        ParameterError: bad frequencies or an ``alpha`` outside [0, 1].
    """
    p = _probabilities(frequencies)
    alpha = _check_alpha(alpha)
    k = len(p)
    if alpha == 0:
        return np.eye(k)
    base = (1 - alpha) * np.eye(k) + alpha / k
    released = p @ base                           # > 0: every entry of base is at least alpha/k
    inverse = (base * p[:, None]).T / released[:, None]   # P̃[k, j] = p_j base[j, k] / s_k
    out = base @ inverse
    return out / out.sum(axis=1, keepdims=True)   # rows sum to 1 up to rounding already


def grid_matrix(matrix) -> np.ndarray:
    """The transition matrix the draws realize: each row rounded to multiples of 2⁻⁵³.

    Each row ``r`` becomes ``n / 2⁵³`` with whole numbers ``n_j`` summing to 2⁵³: ``n_j`` is
    ``⌊r_j·2⁵³⌋`` rescaled to the row's total exactly (integer arithmetic), and the few units
    still missing go to the largest remainders (the first such entry on a tie). A zero entry stays
    zero. Every entry is a float64 exactly (an integer below 2⁵³ times a power of two).

    Raises:
        ParameterError: ``matrix`` is not a transition matrix.
    """
    return _grid_units(_check_stochastic(matrix, "the transition matrix")).astype(np.float64) / _GRID


def _grid_units(matrix: np.ndarray) -> np.ndarray:
    """Per row, whole numbers (uint64) summing to 2⁵³ in proportion to the row (see :func:`grid_matrix`)."""
    out = np.zeros(matrix.shape, dtype=np.uint64)
    for i, row in enumerate(matrix):
        floors = [int(x * _GRID) for x in row.tolist()]   # x·2⁵³ is exact; int() floors x >= 0
        total = sum(floors)
        scaled = [(f * _GRID) // total for f in floors]
        remainders = [(f * _GRID) % total for f in floors]
        short = _GRID - sum(scaled)                       # 0 <= short < number of remainders > 0
        for j in sorted(range(len(row)), key=lambda j: -remainders[j])[:short]:
            scaled[j] += 1
        out[i] = scaled
    return out


def pram_disclosure(frequencies, matrix) -> np.ndarray:
    """The posterior ``D[a, b] = P(original = a | released = b) = p_a P_ab / Σ_c p_c P_cb``.

    What an intruder who knows the matrix and the original frequencies learns from a released
    value ``b`` (Kooiman, Willenborg and Gouweleeuw 1997): the diagonal ``D[a, a]`` is the
    probability that a released ``a`` is true, the measure of PRAM's protection of category ``a``.
    A column ``b`` that no record can be released as (``Σ_c p_c P_cb = 0``) is NaN.

    Args:
        frequencies: the original counts (or shares) per category.
        matrix: the transition matrix (rows original, columns released).

    Raises:
        ParameterError: the matrix is not a transition matrix, or the frequencies are not one
            number >= 0 per category with a positive sum.
    """
    P = _check_stochastic(matrix, "the transition matrix")
    p = _probabilities(frequencies, len(P))
    joint = p[:, None] * P
    released = joint.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(released > 0, joint / np.where(released > 0, released, 1.0), np.nan)


@dataclass(frozen=True)
class PramDisclosure:
    """The disclosure measures of PRAM with a matrix on given frequencies.

    Attributes:
        posterior: ``[K × K]``, ``P(original = a | released = b)`` (:func:`pram_disclosure`).
        true_released: per category ``a``, ``P(original = a | released = a)`` (NaN when ``a`` is
            never released): the probability that a record showing ``a`` truly is ``a``.
        kept: the expected share of records released as their original value, ``Σ_a p_a P_aa``.
        largest: the largest posterior ``P(original = a | released = b)`` over every ``b`` that
            can be released: the most an intruder can be sure of any record's original value.
    """

    posterior: np.ndarray
    true_released: np.ndarray
    kept: float
    largest: float


def disclosure_summary(frequencies, matrix) -> PramDisclosure:
    """The posterior, its diagonal, the expected share kept and the largest posterior.

    Raises:
        ParameterError: as :func:`pram_disclosure`.
    """
    posterior = pram_disclosure(frequencies, matrix)
    P = np.asarray(matrix, dtype=np.float64)
    p = _probabilities(frequencies)
    return PramDisclosure(posterior=posterior, true_released=np.diag(posterior).copy(),
                          kept=float(p @ np.diag(P)), largest=float(np.nanmax(posterior)))


def _solve_transposed(matrix: np.ndarray, counts: np.ndarray, column: str | None = None) -> np.ndarray:
    """``(Pᵀ)⁻¹ counts`` (counts may be ``[K]`` or ``[K × m]``), refusing a (nearly) singular ``P``."""
    where = f"the transition matrix of column '{column}'" if column else "the transition matrix"
    condition = np.linalg.cond(matrix)
    if not np.isfinite(condition) or condition > _MAX_CONDITION:
        raise ParameterError(f"{where} is singular (or nearly so), so the original frequencies cannot be "
                             "estimated from the released ones; use a matrix with larger diagonal entries "
                             "(or a smaller alpha).")
    return np.linalg.solve(matrix.T, counts)


def pram_covariance(counts, matrix) -> np.ndarray:
    """Covariance of the estimator ``T̂ = (Pᵀ)⁻¹ T*`` given the original counts ``T``:
    ``(Pᵀ)⁻¹ [Σ_a T_a (diag(P_a) − P_aᵀ P_a)] P⁻¹``.

    Linear in ``T``, so given the estimate ``T̂`` instead of ``T`` it is an unbiased estimate of the
    covariance (what a user who holds only the release and the matrix can compute).

    Raises:
        ParameterError: the matrix is not a transition matrix or is singular, or the counts are
            not one number per category.
    """
    P = _check_stochastic(matrix, "the transition matrix")
    T = np.asarray(counts, dtype=np.float64)
    if T.shape != (len(P),) or not np.isfinite(T).all():
        raise ParameterError(f"the counts must be {len(P)} finite numbers, one per category.")
    released = np.diag(T @ P) - P.T @ (T[:, None] * P)
    left = _solve_transposed(P, released)        # (Pᵀ)⁻¹ V
    return _solve_transposed(P, left.T).T        # ((Pᵀ)⁻¹ (… )ᵀ)ᵀ = V' P⁻¹ (V symmetric)


# ---- given matrices ----------------------------------------------------------------------------

def _category_text(key, column: EncodedColumn, missing: str) -> str:
    if key is None or (isinstance(key, float) and math.isnan(key)):
        return MISSING_LABEL
    if isinstance(key, str):
        return key
    if isinstance(key, numbers.Real) and not isinstance(key, bool) and column.is_numeric:
        return canonical_number(float(key))
    return str(key)


def _as_mapping(matrix, column: str) -> Mapping:
    """A given matrix as ``{original: {released: probability}}``."""
    where = f"the transition matrix of column '{column}'"
    if isinstance(matrix, Mapping):
        for key, row in matrix.items():
            if not isinstance(row, Mapping):
                raise ParameterError(f"{where} must map each category to {{released category: probability}}; "
                                     f"the row of {key!r} is not such a mapping.")
        return matrix
    if hasattr(matrix, "index") and hasattr(matrix, "columns") and hasattr(matrix, "to_numpy"):   # pandas
        values = _check_stochastic(matrix.to_numpy(), where)
        return {a: dict(zip(matrix.columns, values[i])) for i, a in enumerate(matrix.index)}
    if isinstance(matrix, tuple) and len(matrix) == 2:
        categories, values = list(matrix[0]), _check_stochastic(matrix[1], where)
        if len(categories) != len(values):
            raise ParameterError(f"{where} has {len(values)} rows but {len(categories)} categories are named; "
                                 "name one category per row.")
        return {a: dict(zip(categories, values[i])) for i, a in enumerate(categories)}
    raise ParameterError(f"{where} must be a mapping {{category: {{category: probability}}}}, a pandas "
                         "DataFrame, or a pair (categories, square array).")


def _given_matrix(matrix, column: EncodedColumn, categories: Sequence[str], missing: str) -> np.ndarray:
    """A given matrix as an array in the order of ``categories``, checked.

    Raises:
        ParameterError: a category the column does not hold, a category of the column without a
            row, a duplicate, a non-numeric, negative or non-finite entry, or a row not summing to 1.
    """
    where = f"the transition matrix of column '{column.name}'"
    index = {c: i for i, c in enumerate(categories)}
    mapping = _as_mapping(matrix, column.name)
    out = np.full((len(categories), len(categories)), np.nan)

    def position(key) -> int:
        text = _category_text(key, column, missing)
        if text not in index:
            shown = "a missing value" if text == MISSING_LABEL else repr(text)
            hint = (" (missing cells are left unchanged; give missing='category' to perturb them)"
                    if text == MISSING_LABEL and missing == "unchanged" else "")
            raise ParameterError(f"{where} names {shown}, which is not a category of the column{hint}.")
        return index[text]

    for key, row in mapping.items():
        a = position(key)
        if not np.isnan(out[a]).all():
            raise ParameterError(f"{where} gives the row of {categories[a]!r} twice; give it once.")
        out[a] = 0.0
        seen = set()
        for released, probability in row.items():
            b = position(released)
            if b in seen:
                raise ParameterError(f"{where} gives the entry {categories[a]!r} → {categories[b]!r} twice.")
            seen.add(b)
            if isinstance(probability, bool) or not isinstance(probability, numbers.Real):
                raise ParameterError(f"{where} gives {categories[a]!r} → {categories[b]!r} as {probability!r}, "
                                     "not a number.")
            out[a, b] = float(probability)
    lacking = [categories[a] for a in range(len(categories)) if np.isnan(out[a]).all()]
    if lacking:
        more = f" and {len(lacking) - 1} more" if len(lacking) > 1 else ""
        raise ParameterError(f"{where} has no row for the column's category {lacking[0]!r}{more}; give a row "
                             "for every category.")
    return _check_stochastic(out, where, categories)


# ---- applying PRAM to a table ------------------------------------------------------------------

def _generator(rng) -> np.random.Generator | None:
    """``None`` for the secure mode, else the seeded generator.

    Raises:
        ParameterError: ``rng`` is neither ``None``, a whole number >= 0 nor a Generator.
    """
    if rng is None or isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        if rng < 0:
            raise ParameterError(f"a seed must be a whole number >= 0, not {int(rng)}.")
        return np.random.default_rng(int(rng))
    raise ParameterError("rng must be None (secure draws, for a release), an integer seed or a "
                         "numpy.random.Generator (an experiment).")


def _uniform_grid(generator: np.random.Generator | None, size: int) -> np.ndarray:
    """``size`` uniform integers in ``[0, 2⁵³)`` (uint64): from the OS CSPRNG when ``generator`` is None."""
    if generator is None:
        return uniform_below(_GRID, os.urandom, size)
    return generator.integers(0, _GRID, size=size, dtype=np.uint64)


@dataclass(frozen=True, eq=False)
class PramResult:
    """One column after PRAM.

    Attributes:
        column: the column's name.
        categories: the categories, as text (numbers in canonical text; ``""`` for missing cells
            under ``missing="category"``), in the order of the matrix's rows and columns.
        matrix: the ``K × K`` transition matrix the draws realized (on the 2⁻⁵³ grid, see the
            module notes). With strata and invariant PRAM, each stratum has its own matrix
            (``matrices``) and ``matrix`` is the records' average one,
            ``M[a, b] = Σ_s T_sa R_s[a, b] / T_a``, for which ``E[T*] = Mᵀ T`` still holds.
        released: per row, the code of its released category (an index into ``categories``), or
            −1 for a missing cell left unchanged.
        original: per row, the code of its original category (−1 likewise): private.
        kind: ``"given"`` (a matrix was given) or ``"invariant"``.
        alpha: the parameter of invariant PRAM, ``None`` for a given matrix.
        missing: ``"unchanged"`` or ``"category"`` (see the module notes).
        by: the stratum columns (empty without strata).
        strata: per row, its stratum's index into ``stratum_labels``.
        stratum_labels: each stratum's values, joined by `` / ``: private.
        matrices: per stratum, the matrix its records were drawn with.
        fit_for_release: True only when the draws came from the secure source.
    """

    column: str
    categories: tuple[str, ...]
    matrix: np.ndarray
    released: np.ndarray
    original: np.ndarray = field(repr=False)
    kind: str
    alpha: float | None
    missing: str
    by: tuple[str, ...]
    strata: np.ndarray = field(repr=False)
    stratum_labels: tuple[str, ...] = field(repr=False)
    matrices: tuple[np.ndarray, ...] = field(repr=False)
    fit_for_release: bool
    _rows: np.ndarray = field(repr=False)  # per row, a row whose original cell is its released value

    # ---- frequencies ----------------------------------------------------------------------------
    def _counts(self, codes: np.ndarray) -> np.ndarray:
        return np.bincount(codes[codes >= 0], minlength=len(self.categories)).astype(np.int64)

    @property
    def original_counts(self) -> np.ndarray:
        """``T``: records per original category (private)."""
        return self._counts(self.original)

    @property
    def released_counts(self) -> np.ndarray:
        """``T*``: records per released category."""
        return self._counts(self.released)

    def _stratum_counts(self) -> np.ndarray:
        k, present = len(self.categories), self.original >= 0
        key = self.strata[present] * k + self.original[present]
        return np.bincount(key, minlength=len(self.matrices) * k).reshape(len(self.matrices), k)

    def estimate(self, released_counts: np.ndarray | None = None) -> np.ndarray:
        """The unbiased estimate ``T̂ = (Pᵀ)⁻¹ T*`` of the original counts (Kooiman et al. 1997).

        ``E[T̂] = T`` over the draws, for every table. Under invariant PRAM the released counts
        themselves are unbiased already (``E[T*] = T``, and of smaller variance), and the matrix
        is private, so a user of the release uses ``T*``; this estimate is the curator's.

        Args:
            released_counts: ``T*``, one count per category (default: this release's).

        Raises:
            ParameterError: the counts are not one finite number per category, or the matrix is
                singular (or nearly so: condition number above 10¹²).
        """
        if released_counts is None:
            counts = self.released_counts.astype(np.float64)
        else:
            counts = np.asarray(released_counts, dtype=np.float64)
            if counts.shape != (len(self.categories),) or not np.isfinite(counts).all():
                raise ParameterError(f"the released counts of column '{self.column}' must be "
                                     f"{len(self.categories)} finite numbers, one per category.")
        return _solve_transposed(self.matrix, counts, self.column)

    def covariance(self) -> np.ndarray:
        """The covariance of :meth:`estimate` over the draws, given the original table (exact; each
        stratum's records drawn with their own matrix).

        Raises:
            ParameterError: the matrix is singular.
        """
        counts = self._stratum_counts().astype(np.float64)
        released = sum(np.diag(t @ P) - P.T @ (t[:, None] * P) for t, P in zip(counts, self.matrices))
        left = _solve_transposed(self.matrix, released, self.column)
        return _solve_transposed(self.matrix, left.T, self.column).T

    # ---- disclosure -----------------------------------------------------------------------------
    def disclosure(self) -> PramDisclosure:
        """The disclosure measures (:func:`disclosure_summary`) of this release.

        The posterior is over the whole column. With strata (which the release shows), an
        intruder knows a record's stratum: ``largest`` is then the largest posterior within any
        stratum, which is at least the column's.
        """
        summary = disclosure_summary(self.original_counts, self.matrix)
        if len(self.matrices) > 1:
            within = [disclosure_summary(t, P).largest for t, P in zip(self._stratum_counts(), self.matrices)
                      if t.sum() > 0]
            summary = PramDisclosure(summary.posterior, summary.true_released, summary.kept,
                                     max([summary.largest, *within]))
        return summary

    # ---- descriptions ---------------------------------------------------------------------------
    def public_description(self) -> dict:
        """What may travel with the release: the method, its parameters and, for a given matrix,
        the matrix.

        A given matrix is the user's choice, independent of the table, and a user of the release
        needs it to correct the frequencies (:meth:`estimate`): its probabilities are public, as
        rows and columns in the order of the categories sorted as text, but not the categories'
        names, which are the values the private column holds (a category whose records were all
        released as others would otherwise show). An invariant matrix is computed from the
        private frequencies, so it is withheld: the description gives ``alpha`` and the
        construction, and says that the released frequencies are unbiased without correction.
        No seed or random state is ever described.
        """
        out: dict = {"method": "pram", "column": self.column, "kind": self.kind, "missing": self.missing,
                     "by": list(self.by), "grid": f"multiples of 2^-{GRID_BITS}",
                     "fit_for_release": self.fit_for_release}
        if self.kind == "given":
            order = sorted(range(len(self.categories)), key=lambda j: self.categories[j])
            out["categories"] = "the column's categories, sorted as text"
            out["matrix"] = [[float(f"{self.matrix[a, b]:.15g}") for b in order] for a in order]
            out["estimator"] = "T_hat = (P^T)^-1 T*: unbiased for the original counts"
        else:
            out["alpha"] = self.alpha
            out["construction"] = ("R = P·P~ (Gouweleeuw et al. 1998) with P = (1-alpha)·I + (alpha/K)·J and P~ "
                                   "its Bayes inverse on the column's frequencies"
                                   + (", within each stratum" if self.by else ""))
            out["matrix"] = "withheld: it is computed from the private frequencies"
            out["estimator"] = "the released counts are unbiased for the original counts (p·R = p)"
        return out

    def private_description(self) -> dict:
        """What stays with the curator: the categories, the original counts and the matrices
        (an invariant one is a function of the private frequencies), per stratum with strata."""
        out: dict = {"column": self.column, "categories": list(self.categories),
                     "original_counts": dict(zip(self.categories, self.original_counts.tolist())),
                     "matrix": _as_nested(self.categories, self.matrix)}
        if self.by:
            out["matrices"] = {label: _as_nested(self.categories, P)
                               for label, P in zip(self.stratum_labels, self.matrices)}
        return out


def _as_nested(categories: Sequence[str], matrix: np.ndarray) -> dict:
    """The matrix as ``{original: {released: probability}}``, each entry to 15 significant digits
    (a grid entry is within 2⁻⁵² of the given one, so ``0.1`` shows as ``0.1``)."""
    return {a: {b: float(f"{matrix[i, j]:.15g}") for j, b in enumerate(categories)} for i, a in enumerate(categories)}


def _encoder(data, names: Sequence[str]):
    """``(table, column_of)`` for a Dataset (its encoding) or any table veil reads.

    Raises:
        ColumnError: a named column does not exist.
    """
    from veil.data.dataset import Dataset

    if isinstance(data, Dataset):
        table, column_of = data.table, data.column
    else:
        table = data if isinstance(data, Table) else read_table(data, dictionary=list(names))
        cache: dict[str, EncodedColumn] = {}

        def column_of(name: str) -> EncodedColumn:
            if name not in cache:
                cache[name] = encode_column(name, table.data.column(name))
            return cache[name]
    for name in names:
        if name not in table.columns:
            raise ColumnError(f"the PRAM column '{name}' does not exist; the columns are {', '.join(table.columns)}.")
    return table, column_of


def _strata(column_of, by: tuple[str, ...], rows: int) -> tuple[np.ndarray, tuple[str, ...]]:
    if not by:
        return np.zeros(rows, dtype=np.int64), ("",)
    key = np.zeros(rows, dtype=np.int64)
    columns = [column_of(name) for name in by]
    for col in columns:
        key = key * col.cardinality + col.codes
    distinct, strata = np.unique(key, return_inverse=True)
    labels = []
    for value in distinct.tolist():
        parts = []
        for col in reversed(columns):
            value, code = divmod(value, col.cardinality)
            parts.append(str(col.labels[code]))
        labels.append(" / ".join(reversed(parts)))
    return strata.astype(np.int64), tuple(labels)


def _by(by, column: str) -> tuple[str, ...]:
    names = (by,) if isinstance(by, str) else tuple(by or ())
    if column in names:
        raise ParameterError(f"column '{column}' cannot be perturbed within strata of itself; remove it from by.")
    return names


def _pram_column(table: Table, column_of, column: str, matrix, alpha, by: tuple[str, ...], missing: str,
                 generator: np.random.Generator | None) -> PramResult:
    if missing not in _MISSING_POLICIES:
        raise ParameterError(f"missing must be 'unchanged' or 'category', not {missing!r}.")
    if (matrix is None) == (alpha is None):
        raise ParameterError(f"PRAM of column '{column}' needs either a transition matrix or alpha "
                             "(invariant PRAM), not both and not neither.")
    enc = column_of(column)
    codes = enc.codes.astype(np.int64)
    k = enc.cardinality
    original = codes
    if missing == "unchanged" and enc.missing_code is not None:   # the missing category is the last code
        k -= 1
        original = np.where(codes == enc.missing_code, -1, codes)
    if k == 0:
        raise ParameterError(f"column '{column}' holds no value to perturb: every cell is missing.")
    categories = tuple(str(x) for x in enc.labels[:k])
    strata, labels = _strata(column_of, by, len(codes))
    present = np.flatnonzero(original >= 0)
    key = strata[present] * k + original[present]
    counts = np.bincount(key, minlength=len(labels) * k).reshape(len(labels), k)
    if matrix is not None:
        units = [_grid_units(_given_matrix(matrix, enc, categories, missing))] * len(labels)
    else:
        alpha = _check_alpha(alpha)
        units = [_grid_units(invariant_matrix(t, alpha) if t.sum() else np.eye(k)) for t in counts]
    matrices = tuple(u.astype(np.float64) / _GRID for u in units)
    cumulative = [np.cumsum(u, axis=1) for u in units]
    draws = _uniform_grid(generator, len(present))
    released = original.copy()
    small = np.uint16 if len(labels) * k <= 1 << 16 else np.int64   # a radix sort for small keys
    order = np.argsort(key.astype(small), kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(key, minlength=len(labels) * k))])
    for group in np.flatnonzero(np.diff(bounds)):
        s, a = divmod(int(group), k)
        chosen = order[bounds[group]:bounds[group + 1]]
        released[present[chosen]] = np.searchsorted(cumulative[s][a], draws[chosen], side="right")
    total = counts.sum(axis=0).astype(np.float64)
    average = sum(t[:, None] * P for t, P in zip(counts, matrices)) / np.where(total > 0, total, 1.0)[:, None]
    first = np.full(k, -1, dtype=np.int64)
    first[original[present][::-1]] = present[::-1]
    rows = np.where(released >= 0, first[np.maximum(released, 0)], np.arange(len(released)))
    return PramResult(column=column, categories=categories, matrix=matrices[0] if matrix is not None else average,
                      released=released, original=original, kind="given" if matrix is not None else "invariant",
                      alpha=None if matrix is not None else alpha, missing=missing, by=by, strata=strata,
                      stratum_labels=labels, matrices=matrices, fit_for_release=generator is None, _rows=rows)


def pram(dataset_or_table, column: str, *, matrix=None, alpha: float | None = None,
         by: str | Sequence[str] | None = None, missing: str = "unchanged", rng=None) -> PramResult:
    """PRAM of one categorical column (see the module notes for the definitions).

    Args:
        dataset_or_table: a :class:`veil.data.Dataset` (its encoding and missing texts are used),
            a pandas or polars DataFrame, a pyarrow Table, or a CSV/Parquet path.
        column: the column to perturb.
        matrix: the transition matrix: a mapping ``{original: {released: probability}}`` (entries
            left out are 0), a pandas DataFrame (index original, columns released), or a pair
            ``(categories, square array)``. Its categories must be exactly the column's (numbers
            may be given as numbers); each row sums to 1 within 1e-9 and no entry is negative.
        alpha: instead of ``matrix``, invariant PRAM with this amount of perturbation, from 0 to
            1 (:func:`invariant_matrix` on the column's counts).
        by: a column (or columns) whose values form strata: with ``alpha``, each stratum gets the
            invariant matrix of its own frequencies (so each stratum's frequencies are kept in
            expectation); with a given matrix every record is drawn from it alike, so strata
            change nothing but the reporting.
        missing: ``"unchanged"`` (default: missing cells stay missing and are no category) or
            ``"category"`` (they are the category ``""``).
        rng: ``None`` for secure draws (a release), an integer seed or a numpy Generator for a
            reproducible experiment (``fit_for_release=False``).

    Returns:
        a :class:`PramResult`; :func:`pram_columns` also returns the perturbed table.

    Raises:
        ColumnError: the column or a stratum column does not exist.
        ParameterError: both or neither of ``matrix`` and ``alpha``; a matrix that is not square
            over the column's categories, has a negative entry or a row not summing to 1; an
            ``alpha`` outside [0, 1]; a bad ``missing`` or ``rng``; a column with no value.
    """
    by_names = _by(by, column)
    table, column_of = _encoder(dataset_or_table, [column, *by_names])
    return _pram_column(table, column_of, column, matrix, alpha, by_names, missing, _generator(rng))


@dataclass(frozen=True)
class PramRelease:
    """Several columns after PRAM, each drawn independently.

    Attributes:
        data: the table with the perturbed columns, every other column as it was, as the kind of
            frame given (pandas for a file; a column keeps its type, each released cell being
            an original cell of its category).
        results: per perturbed column, its :class:`PramResult`.
        fit_for_release: True only when every draw came from the secure source.
    """

    data: object
    results: dict[str, PramResult]
    fit_for_release: bool

    def public_description(self) -> list[dict]:
        """Each column's :meth:`PramResult.public_description`."""
        return [r.public_description() for r in self.results.values()]

    def private_description(self) -> list[dict]:
        """Each column's :meth:`PramResult.private_description`."""
        return [r.private_description() for r in self.results.values()]


def pram_columns(dataset_or_table, columns: Sequence[str], *, matrices: Mapping[str, object] | None = None,
                 alpha: float | Mapping[str, float] | None = None, by: str | Sequence[str] | None = None,
                 missing: str = "unchanged", rng=None) -> PramRelease:
    """PRAM of several columns, each independently (its own draws, its own matrix), as :func:`pram`.

    Args:
        columns: the columns to perturb (at least one, each once).
        matrices: per column, its given matrix; a column without one uses invariant PRAM.
        alpha: the invariant PRAM parameter, one for every column or per column.
        by: as :func:`pram`.
        missing: as :func:`pram`.
        rng: as :func:`pram` (one generator serves every column in turn).

    Raises:
        ColumnError: a column does not exist.
        ParameterError: no column, a column listed twice, a matrix for a column not perturbed, a
            column with neither a matrix nor an ``alpha``, or as :func:`pram`.
    """
    columns = [columns] if isinstance(columns, str) else list(columns)
    if not columns:
        raise ParameterError("PRAM needs at least one column to perturb.")
    if len(set(columns)) != len(columns):
        twice = next(c for c in columns if columns.count(c) > 1)
        raise ParameterError(f"column '{twice}' is listed twice for PRAM; list it once.")
    matrices = dict(matrices or {})
    stray = [c for c in matrices if c not in columns]
    if stray:
        raise ParameterError(f"a matrix is given for column '{stray[0]}', which is not among the columns to perturb.")
    by_names = tuple(dict.fromkeys(name for c in columns for name in _by(by, c)))
    table, column_of = _encoder(dataset_or_table, [*columns, *by_names])
    generator = _generator(rng)
    results = {}
    for name in columns:
        a = alpha.get(name) if isinstance(alpha, Mapping) else alpha
        given = matrices.get(name)
        results[name] = _pram_column(table, column_of, name, given, None if given is not None else a,
                                     by_names, missing, generator)
    return PramRelease(data=_released_frame(table, results), results=results,
                       fit_for_release=generator is None)


def _released_frame(table: Table, results: Mapping[str, PramResult]):
    """The table with each perturbed column's cells taken from the rows its released values name."""
    source = table.source
    if table.kind == "pandas":
        out = source.copy()
        names = [str(c) for c in source.columns]
        for name, result in results.items():
            key = source.columns[names.index(name)]
            out[key] = source[key].take(result._rows).set_axis(source.index)
        return out
    if table.kind == "polars":
        return source.with_columns([source.get_column(name).gather(result._rows).alias(name)
                                    for name, result in results.items()])
    data = source if table.kind == "arrow" else table.data
    for name, result in results.items():
        data = data.set_column(data.schema.get_field_index(name), name, data.column(name).take(result._rows))
    if table.kind == "arrow":
        return data
    decoded = [c.cast(c.type.value_type) if pa.types.is_dictionary(c.type) else c for c in data.columns]
    return pa.table(decoded, names=data.column_names).to_pandas()
