"""Population uniqueness: the share of a population's records that are unique on the
quasi-identifiers, estimated from a sample of known size drawn from a population of known size.

A record unique in the sample need not be unique in the population (the population may hold
others like it that were not sampled); the estimators below model how the population's classes
were sampled and estimate the number of *population uniques* (population classes of size 1) from
the sample's frequency of frequencies: ``c_j``, the number of sample classes of size ``j``
(``c_1`` sample uniques, ``u = Σ c_j`` classes, ``n = Σ j c_j`` records, ``N`` the population size,
``q = n / N`` the sampling fraction). They are the estimators ARX 3.9.2 offers
(``org.deidentifier.arx.risk.RiskModelPopulationUniqueness``), written from the papers:

* **Zayatz** (Zayatz 1991, "Estimation of the percent of unique population elements on a
  microdata file using the sample", US Census Bureau SRD report 91/08). Bayes' rule with the
  sample's class-size distribution standing for the population's: the chance that a sample
  unique is a population unique is ``P = c_1 h(1) / Σ_j c_j h(j)``, where ``h(j)`` is the
  hypergeometric probability that exactly one record of a population class of ``j`` records is
  drawn into a sample of ``n`` out of ``N``; the population holds ``c_1 P / q`` uniques. (With
  ``N = n`` this is ``c_1``: the sample is the population.)
* **Pitman** (Hoshino 2001, "Applying Pitman's sampling formula to microdata disclosure risk
  assessment", Journal of Official Statistics 17(4)). The classes follow the Ewens–Pitman
  two-parameter sampling formula; ``θ`` and ``α`` are its maximum-likelihood estimates on the
  sample, i.e. the roots of the score equations ``Σ_{i<u} 1/(θ+iα) = Σ_{i<n} 1/(θ+i)`` and
  ``Σ_{i<u} i/(θ+iα) = Σ_j c_j Σ_{i<j} 1/(i−α)`` where the likelihood is largest, over ``α < 1``
  and ``θ + iα > 0`` for every ``i < u`` (``α < 0`` is Pitman's model with finitely many classes;
  ARX's solver reaches it too, and the small tables of the tests have their maximum there); the
  population holds ``Γ(θ+1)/Γ(θ+α) · N^α`` uniques (Hoshino's large-``N`` expected number of
  singletons). The roots are found by profiling: for each ``α`` the first equation has one root
  in ``θ``, and the second is then a function of ``α`` alone (both solved by bracketing, on the
  digamma closed forms of the sums). When the likelihood has no maximum inside (all records
  unique, one class, or the likelihood growing towards a boundary) the estimate is not
  available.
* **SNB**, the shifted negative binomial (Chen and Keller-McNulty 1998, "Estimation of
  identification disclosure risk in microdata", Journal of Official Statistics 14(1)). A
  population class has ``1 + X`` records, ``X`` negative binomial with parameters ``α > 0`` and
  ``0 < β < 1`` (so ``P(F = 1) = β^α``), and each record is sampled with probability ``q``.
  Then ``P(f = 1) = q (β/(1−d))^α (1 + αd/(1−d))`` and
  ``P(f = 2) = q² α β^α (1−β) (2 − (1−α) d) / (2 (1−d)^{α+2})`` with ``d = (1−q)(1−β)``; ``α``
  and ``β`` solve ``K P(f = 1) = c_1`` and ``K P(f = 2) = c_2``, and the population holds
  ``K β^α`` uniques. ``K``, the number of population classes, is estimated by Haas and Stokes's
  variant of Shlosser's estimator (Haas and Stokes 1998, JASA 93:
  ``K = u + c_1 · Σ_j j q²(1−q²)^{j−1} c_j / Σ_j (1−q)^j ((1+q)^j − 1) c_j ·
  (Σ_j (1−q)^j c_j / Σ_j j q (1−q)^{j−1} c_j)²``; ``K = u`` when ``q = 1``). Without classes of
  size 2 the equations have no solution and the estimate is not available.
* **Dankar** (Dankar, El Emam, Neisa and Roffey 2012, "Estimating the re-identification risk of
  clinical data sets", BMC Medical Informatics and Decision Making 12:66): the decision rule of
  that simulation study, as ARX applies it: with ``q ≤ 0.1`` Pitman's estimate (Zayatz's when
  Pitman's is not available); above, the smaller of Zayatz's and the SNB's (Zayatz's when the
  SNB's is not available). :attr:`UniquenessEstimate.chosen` says which one it took.

**Where veil departs from ARX 3.9.2** (its figures are written in ``tests/test_sdc_uniqueness.py``):

* ARX's SNB multiplies by ``(1−d)^{α+2}`` in its ``c_2`` equation where the model divides by it
  (its own Jacobian divides), and its Shlosser sum subtracts 1 once per distinct class size
  instead of ``(1−q)^j c_j`` per size; veil follows the model, so its SNB figures differ.
* ARX constrains Pitman's ``θ ≥ 0`` and runs Newton's method from one start (then random ones),
  and reports whatever root it reaches; veil allows the model's ``θ > −α`` and reports the
  likelihood's maximum or nothing. On Adult and the small tables of the tests both find the same
  maximum (to ARX's solver accuracy, about 1e-5 relative); on some random tables ARX stops at a
  point that is not the maximum (or reports one where the likelihood grows without bound towards
  ``α → −∞``), and the figures differ.
* The SNB's equations are solved as two nested one-dimensional problems (``β`` from the ratio of
  the two equations at each ``α``, then ``α``); a root that double precision cannot tell from
  ``β → 0`` counts as not available.
* An estimate that is not available is ``NaN`` here with :attr:`UniquenessEstimate.converged`
  false (ARX reports 0, which a threshold would take for "no risk"), and an explicit estimator
  stays what it is (only Dankar's rule falls back).
* With no sample unique every estimator reports 0, as ARX does: a class of ``f ≥ 2`` sample records
  has ``F ≥ 2`` population records, so no released record is a population unique.

The population figure is a *share*: estimated population uniques divided by ``N``, as ARX's
``getFractionOfUniqueTuples*``. Everything is computed on the frequency of frequencies, so its
cost grows with the number of distinct class sizes (and, for Zayatz, the largest class size), not
with the number of records.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from veil.errors import ParameterError

ESTIMATORS = ("pitman", "zayatz", "snb", "dankar")
# Dankar et al.'s rule: Pitman up to this sampling fraction, Zayatz or SNB above it.
DANKAR_FRACTION = 0.1
# A root of the score or moment equations is accepted when its residual is this small
# (relative to the terms it balances).
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class UniquenessEstimate:
    """The population uniqueness of one sample.

    Attributes:
        estimator: the estimator asked for (``"pitman"``, ``"zayatz"``, ``"snb"`` or ``"dankar"``).
        population_size: ``N``, the population's records.
        sample_size: ``n``, the sample's records.
        sample_uniques: the share of the sample's records that are unique in the sample, ``c_1 / n``
            (0 for an empty sample).
        population_uniques: the estimated share of the population's records that are unique in
            the population (estimated uniques / ``N``); ``NaN`` when the estimate is not available.
        chosen: the estimator whose figure ``population_uniques`` is: ``estimator`` itself, or for
            ``"dankar"`` the one its rule took (``"pitman"``, ``"zayatz"`` or ``"snb"``).
        converged: whether that figure is available: Zayatz's always is; Pitman's and the SNB's
            when their equations have a root inside the parameter space.
        sampling_fraction: ``n / N``.
        sample_unique_records: ``c_1``, the sample's unique records.
        parameters: the fitted parameters behind the figure: ``theta`` and ``alpha`` for Pitman's,
            ``classes`` (``K``), ``alpha`` and ``beta`` for the SNB's, none for Zayatz's (or
            when there is no sample unique or the fit failed).
    """

    estimator: str
    population_size: int
    sample_size: int
    sample_uniques: float
    population_uniques: float
    chosen: str
    converged: bool
    sampling_fraction: float
    sample_unique_records: int
    parameters: dict = field(default_factory=dict)

    @property
    def population_unique_records(self) -> float:
        """The estimated number of population uniques, ``population_uniques · N``."""
        return self.population_uniques * self.population_size


def population_uniqueness(class_sizes, population_size: int, estimator: str = "dankar") -> UniquenessEstimate:
    """Estimate the share of population records unique in the population from a sample's classes.

    The estimators (Zayatz 1991; Pitman's sampling formula after Hoshino 2001; the shifted
    negative binomial of Chen and Keller-McNulty 1998; the decision rule of Dankar, El Emam,
    Neisa and Roffey 2012) are defined in the module's documentation.

    Args:
        class_sizes: the number of sample records in each class (equivalence class on the
            quasi-identifiers), non-negative whole numbers; classes of size 0 are ignored.
        population_size: ``N``, the number of records of the population the sample was drawn
            from, a whole number at least the sample's.
        estimator: ``"dankar"`` (default), ``"pitman"``, ``"zayatz"`` or ``"snb"``.

    Returns:
        The estimate, with the sample's own uniqueness beside it.

    Raises:
        ParameterError: an unknown estimator, a population size that is not a whole number or is
            smaller than the sample, or class sizes that are not whole non-negative numbers.
    """
    if estimator not in ESTIMATORS:
        raise ParameterError(f"the population uniqueness estimator must be one of {', '.join(ESTIMATORS)}, "
                             f"not {estimator!r}.")
    sizes = _class_sizes(class_sizes)
    n = int(sizes.sum())
    big_n = _population_size(population_size, n)
    distinct, counts = _frequencies(sizes)
    c1 = int(counts[0]) if len(distinct) and distinct[0] == 1 else 0
    fraction = n / big_n
    sample = c1 / n if n else 0.0

    def result(share: float, chosen: str, converged: bool, parameters: dict | None = None) -> UniquenessEstimate:
        return UniquenessEstimate(estimator, big_n, n, sample, float(share), chosen, converged, fraction, c1,
                                  dict(parameters or {}))

    if c1 == 0:
        # No sample unique: every estimator reports none (as ARX does).
        chosen = estimator if estimator != "dankar" else ("pitman" if fraction <= DANKAR_FRACTION else "zayatz")
        return result(0.0, chosen, True)
    if estimator == "zayatz":
        return result(_zayatz(distinct, counts, n, big_n) / big_n, "zayatz", True)
    if estimator in ("pitman", "snb"):
        found = (_pitman if estimator == "pitman" else _snb)(distinct, counts, n, big_n)
        if found is None:
            return result(float("nan"), estimator, False)
        return result(found[0] / big_n, estimator, True, found[1])
    # Dankar et al.'s decision rule.
    zayatz = _zayatz(distinct, counts, n, big_n)
    if fraction <= DANKAR_FRACTION:
        pitman = _pitman(distinct, counts, n, big_n)
        if pitman is not None:
            return result(pitman[0] / big_n, "pitman", True, pitman[1])
        return result(zayatz / big_n, "zayatz", True)
    snb = _snb(distinct, counts, n, big_n)
    if snb is not None and snb[0] < zayatz:
        return result(snb[0] / big_n, "snb", True, snb[1])
    return result(zayatz / big_n, "zayatz", True)


def _class_sizes(class_sizes) -> np.ndarray:
    """The positive class sizes as int64, refusing anything that is not a whole non-negative number."""
    raw = np.asarray(class_sizes)
    if raw.dtype == bool or raw.ndim > 1 or not (np.issubdtype(raw.dtype, np.integer)
                                                  or np.issubdtype(raw.dtype, np.floating)):
        raise ParameterError("the class sizes must be a list of whole numbers of records.")
    if np.issubdtype(raw.dtype, np.floating) and (not np.all(np.isfinite(raw)) or np.any(raw != np.floor(raw))):
        raise ParameterError("the class sizes must be whole numbers of records.")
    sizes = raw.astype(np.int64).ravel()
    if np.any(sizes < 0):
        raise ParameterError("the class sizes must not be negative.")
    return sizes[sizes > 0]


def _frequencies(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct class sizes (ascending) and how many classes have each (as floats)."""
    if not len(sizes):
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    if int(sizes.max()) <= 8 * len(sizes) + 1_000_000:  # a count per size beats sorting
        tally = np.bincount(sizes)
        distinct = np.flatnonzero(tally)
        return distinct.astype(np.int64), tally[distinct].astype(np.float64)
    distinct, counts = np.unique(sizes, return_counts=True)
    return distinct, counts.astype(np.float64)


def _population_size(population_size, n: int) -> int:
    """``N`` as an int, refused unless a whole number of at least ``max(n, 1)`` records."""
    whole = (isinstance(population_size, numbers.Integral) and not isinstance(population_size, bool)) or (
        isinstance(population_size, numbers.Real) and not isinstance(population_size, bool)
        and math.isfinite(population_size) and float(population_size).is_integer())
    if not whole:
        raise ParameterError(f"the population size must be a whole number of records, not {population_size!r}.")
    big_n = int(population_size)
    if big_n < max(n, 1):
        raise ParameterError(f"the population size ({big_n:,}) must be at least the sample's {n:,} records.")
    return big_n


# Zayatz -------------------------------------------------------------------------------------

def _zayatz(distinct: np.ndarray, counts: np.ndarray, n: int, big_n: int) -> float:
    """Zayatz's estimated number of population uniques: ``c_1 P / q``, ``P`` as in the module's
    documentation."""
    c1 = counts[0]
    log_h = _log_one_drawn(distinct, n, big_n)
    h = np.exp(log_h - log_h[0])  # h(j) / h(1); h(1) = q > 0
    conditional = c1 / float(np.dot(counts, h))
    return float(c1 * conditional * big_n / n)


def _log_one_drawn(sizes: np.ndarray, n: int, big_n: int) -> np.ndarray:
    """log of the hypergeometric probability that exactly one of ``j`` marked records is among ``n``
    drawn without replacement from ``N``, for each ``j`` of ``sizes`` (ascending):
    ``(j n / N) Π_{i=1}^{j-1} (N−n−i+1)/(N−i)``, summed as log1p terms (exact where differences of
    log-gamma functions of ``N`` would lose digits); ``−inf`` where ``j − 1 > N − n``."""
    top = int(sizes[-1])
    reach = min(top, big_n - n + 1)  # beyond, a class cannot have exactly one record drawn
    i = np.arange(1, reach, dtype=np.float64)
    terms = np.log1p(-(n - 1) / (big_n - i)) if n > 1 else np.zeros(len(i))
    cumulative = np.concatenate(([0.0], np.cumsum(terms)))
    out = np.full(len(sizes), -np.inf)
    ok = sizes <= reach
    out[ok] = np.log(sizes[ok] * (n / big_n)) + cumulative[sizes[ok] - 1]
    return out


# Pitman ------------------------------------------------------------------------------------

def _pitman(distinct: np.ndarray, counts: np.ndarray, n: int, big_n: int) -> tuple[float, dict] | None:
    """The estimated number of population uniques under Pitman's sampling formula at the
    likelihood's maximum, with ``θ`` and ``α``, or ``None`` when it has none inside the
    parameter space (or the estimate falls outside ``(0, N]``)."""
    from scipy import optimize, special  # only here: importing veil stays light

    u = float(counts.sum())
    if u < 2 or u >= n:
        return None  # one class, or every record unique: no finite maximum
    repeated = distinct > 1
    sizes, weights = distinct[repeated].astype(np.float64), counts[repeated]

    def lowest_theta(alpha: float) -> float:
        # θ + iα > 0 for i = 1 … u−1
        return -alpha if alpha >= 0 else -(u - 1.0) * alpha

    def first_sum(theta: float, alpha: float) -> float:
        # Σ_{i=1}^{u-1} 1/(θ+iα), by digamma functions of positive arguments
        if alpha > 0:
            r = theta / alpha
            return (special.digamma(r + u) - special.digamma(r + 1.0)) / alpha
        m = theta / -alpha  # > u − 1
        return (special.digamma(m) - special.digamma(m - u + 1.0)) / -alpha

    def score_theta(theta: float, alpha: float) -> float:
        return first_sum(theta, alpha) - (special.digamma(theta + n) - special.digamma(theta + 1.0))

    def theta_of(alpha: float) -> float | None:
        floor = lowest_theta(alpha)
        low = floor + max(abs(floor), 1.0) * 1e-13
        if not score_theta(low, alpha) > 0:
            return None
        high = max(2.0 * abs(floor), 1.0) + 2.0 * u
        while score_theta(high, alpha) > 0:
            high *= 4.0
            if high > 1e300:
                return None
        return optimize.brentq(score_theta, low, high, args=(alpha,), xtol=1e-300, rtol=1e-15, maxiter=1000)

    def score_alpha(alpha: float) -> float:
        theta = theta_of(alpha)
        if theta is None:
            return float("nan")
        # Σ_{i=1}^{u-1} i/(θ+iα) = ((u−1) − θ Σ 1/(θ+iα)) / α
        first = ((u - 1.0) - theta * first_sum(theta, alpha)) / alpha
        second = float(np.dot(weights, special.digamma(sizes - alpha) - special.digamma(1.0 - alpha)))
        return first - second

    def log_likelihood(theta: float, alpha: float) -> float:
        if alpha > 0:
            r = theta / alpha
            first = (u - 1.0) * math.log(alpha) + special.gammaln(r + u) - special.gammaln(r + 1.0)
        else:
            m = theta / -alpha
            first = (u - 1.0) * math.log(-alpha) + special.gammaln(m) - special.gammaln(m - u + 1.0)
        second = special.gammaln(theta + n) - special.gammaln(theta + 1.0)
        third = float(np.dot(weights, special.gammaln(sizes - alpha) - special.gammaln(1.0 - alpha)))
        return first - second + third

    # The α-score changes from positive to negative at each maximum of the profile likelihood;
    # α ranges over (−∞, 1) (α < 0 is Pitman's model with finitely many classes).
    grid = np.concatenate((-np.logspace(6, -3, 19), np.linspace(0.02, 0.98, 13), [1.0 - 1e-9]))
    with np.errstate(all="ignore"):
        values = np.array([score_alpha(a) for a in grid])
    best, best_likelihood = None, -math.inf
    for i in np.flatnonzero((values[:-1] > 0) & (values[1:] < 0)):
        alpha = optimize.brentq(score_alpha, grid[i], grid[i + 1], xtol=1e-300, rtol=1e-15, maxiter=1000)
        theta = theta_of(alpha)
        if theta is None:
            continue
        likelihood = log_likelihood(theta, alpha)
        if likelihood > best_likelihood:
            best, best_likelihood = (theta, alpha), likelihood
    if best is None:
        return None
    theta, alpha = best
    log_uniques = special.gammaln(theta + 1.0) - special.gammaln(theta + alpha) + alpha * math.log(big_n)
    if not log_uniques <= math.log(big_n):  # more uniques than records (or NaN): no estimate
        return None
    uniques = math.exp(log_uniques)
    if not uniques > 0.0:
        return None
    return uniques, {"theta": float(theta), "alpha": float(alpha)}


# SNB -----------------------------------------------------------------------------------------

def _population_classes(distinct: np.ndarray, counts: np.ndarray, q: float) -> float:
    """Haas and Stokes's variant of Shlosser's estimator of the number of population classes."""
    u = float(counts.sum())
    if q >= 1.0:
        return u
    j = distinct.astype(np.float64)
    log_keep = j * math.log1p(-q)                      # log (1−q)^j
    keep = np.exp(log_keep)
    keep_sq = np.exp(j * math.log1p(-q * q))           # (1−q²)^j
    c1 = counts[0] if distinct[0] == 1 else 0.0
    num1 = float(np.dot(counts, j * q * q * keep_sq / (1.0 - q * q)))
    den1 = float(np.dot(counts, keep_sq - keep))
    num2 = float(np.dot(counts, keep))
    den2 = float(np.dot(counts, j * q * keep / (1.0 - q)))
    if den1 <= 0 or den2 <= 0:
        return u
    return u + c1 * (num1 / den1) * (num2 / den2) ** 2


def _snb(distinct: np.ndarray, counts: np.ndarray, n: int, big_n: int) -> tuple[float, dict] | None:
    """The estimated number of population uniques under the shifted negative binomial, with
    ``K``, ``α`` and ``β``, or ``None`` when its equations have no root with ``α > 0``,
    ``0 < β < 1``."""
    from scipy import optimize  # only here: importing veil stays light

    c1 = counts[0] if distinct[0] == 1 else 0.0
    c2 = float(counts[distinct == 2].sum())
    if c1 <= 0 or c2 <= 0:
        return None
    q = n / big_n
    k = _population_classes(distinct, counts, q)
    # In b = log β: the ratio of the equations, P(f=2)/P(f=1) = c2/c1, does not hold K and is
    # solved for b at each α; the first equation, K P(f=1) = c1, is then a function of α alone.
    log_ratio = math.log(c2 / c1)
    log_q = math.log(q)

    def log_p1(alpha: float, b: float) -> float:
        d = -(1.0 - q) * math.expm1(b)  # (1 − q)(1 − β)
        return log_q + alpha * (b - math.log1p(-d)) + math.log1p(alpha * d / (1.0 - d))

    def ratio_gap(b: float, alpha: float) -> float:
        x = -math.expm1(b)  # 1 − β
        d = (1.0 - q) * x
        return (log_q + math.log(alpha) + math.log(x) + math.log(2.0 - (1.0 - alpha) * d) - math.log(2.0)
                - math.log1p(-d) - math.log1p(-d + alpha * d)) - log_ratio

    def b_of(alpha: float) -> float | None:
        low, high = -700.0, -1e-300
        if not (ratio_gap(low, alpha) > 0 > ratio_gap(high, alpha)):
            return None
        return optimize.brentq(ratio_gap, low, high, args=(alpha,), xtol=1e-300, rtol=1e-15, maxiter=500)

    def first_gap(alpha: float) -> float:
        b = b_of(alpha)
        return math.nan if b is None else math.log(k) + log_p1(alpha, b) - math.log(c1)

    def floor_gap(alpha: float) -> float:
        # the ratio's gap as β → 0; below the α where it turns positive no β reaches c2/c1
        return ratio_gap(-700.0, alpha)

    grid = np.logspace(-8, 8, 65)
    with np.errstate(all="ignore"):
        values = [first_gap(a) for a in grid]
    alpha = None
    for i in range(len(grid) - 1):
        left, right, low, high = grid[i], grid[i + 1], values[i], values[i + 1]
        if math.isnan(high):
            continue
        if math.isnan(low):
            # The α where β → 0 first reaches the ratio lies in this cell; just above it
            # P(f=1) → 0, so the first equation's gap is negative there.
            if not floor_gap(left) < 0 < floor_gap(right):
                continue
            edge = optimize.brentq(floor_gap, left, right, xtol=1e-300, rtol=1e-15, maxiter=500)
            left = edge * (1.0 + 1e-12)
            low = first_gap(left)
            if math.isnan(low):
                continue
        if low == 0.0 or (low < 0.0) != (high < 0.0):
            alpha = left if low == 0.0 else optimize.brentq(first_gap, left, right, xtol=1e-300, rtol=1e-15,
                                                              maxiter=500)
            break
    if alpha is None:
        return None
    log_beta = b_of(alpha)
    if log_beta is None or abs(first_gap(alpha)) > 1e-8:
        return None
    log_uniques = math.log(k) + alpha * log_beta
    if not log_uniques <= math.log(big_n):
        return None
    uniques = math.exp(log_uniques)
    if not uniques > 0.0:
        return None
    return uniques, {"classes": float(k), "alpha": float(alpha), "beta": math.exp(log_beta)}
