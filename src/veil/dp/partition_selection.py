"""Private partition selection: which keys of a grouped DP query to release when the keys are not
public (issue 27, item 2).

The candidate keys are those present after contribution bounding
(:func:`veil.dp.true_cells.true_statistics` with ``keys=None``). Each candidate gets a noisy count
of its kept rows, and a key is released when that noisy count reaches a threshold τ: the
thresholded noisy counts of Korolova, Kenthapadi, Mishra and Ntoulas (WWW 2009), as in Wilson,
Zhang, Lam, Desfontaines, Simmons-Marengo and Gipson, "Differentially Private SQL with Bounded
User Contribution" (PoPETs 2020, §3–4) and Google's differential-privacy library (its Laplace and
Gaussian partition selection). veil's count is a *separate* measurement (the ``selection`` entry of
the record), with its own share of ε or ρ (:attr:`PartitionSelection.weight`, one more weight
beside the aggregates'), not the noisy value of a ``count()`` aggregate: selection then works for
any aggregates, its noise is always integer (discrete Laplace under ε, discrete Gaussian under ρ)
whatever the aggregates' mechanism, so its tail, hence τ, is known exactly; it is what Wilson et
al. and Google's library do (a noisy count of the units per partition, beside the aggregates).

**The threshold.** Let ``l0`` be the most keys one person's kept rows fall in
(``min(max_groups, max_rows)``, 1 for the row unit) and ``linf`` the most kept rows one person has
in one key (``min(max_rows_per_group, max_rows)``, 1 for the row unit). Take neighbouring tables
D and D' = D plus one person. Keys present in both get noisy counts (and noisy aggregates) that
are ε-DP (ρ-zCDP) for the L1 (L2) sensitivity of the whole vector of cells, and releasing those
above τ is post-processing. The person creates at most ``l0`` keys present in D' only, each of
true count at most ``linf`` (only the person's rows); the output distributions can differ beyond
the ε (ρ) part only if one of them is released. With independent noise Z per key, that happens
with probability at most 1 − (1 − P(linf + Z ≥ τ))^l0, which is <= δ when

    P(Z >= τ − linf) <= p,   p = 1 − (1 − δ)^(1/l0)          (Wilson et al., Theorem 3 and §4.2)

so the release is (ε, δ)-DP (δ-approximate ρ-zCDP under ρ; Bun and Steinke 2016, Definition 1.2).
τ is the smallest whole number τ = linf + t with t >= 1 and P(Z >= t) <= p:

* discrete Laplace of scale b (P(z) ∝ a^|z|, a = e^(−1/b)): P(Z >= t) = a^t/(1 + a) for t >= 1,
  so t = ⌈b·ln(1/(p(1 + a)))⌉ (at least 1): τ = linf + ⌈b·ln(1/(p(1 + a)))⌉. This is Wilson et
  al.'s τ = 1 − (l0/ε)·ln(2 − 2(1 − δ)^(1/l0)) for continuous Laplace with linf = 1, made exact for
  integer noise;
* discrete Gaussian of σ (Canonne, Kamath, Steinke 2020): P(Z >= t) summed from its probability
  mass function (σ <= 10^5), else bounded by P(N(0, σ²) >= t − 1) (their Proposition 25).

Every tail is compared with p less a relative margin of 10⁻⁹ against rounding, so τ errs high.
A threshold given by the user is used if it is at least that τ (a higher one releases fewer keys
and keeps δ), and refused otherwise.

**What is released.** Only the keys that pass, sorted, each with every aggregate (the aggregates
are drawn for every candidate with the same noise plan as public keys, then kept for the keys
released). A key that does not pass leaves no trace: no row, no count of candidates, no message;
the answer may be empty. The number of noise draws is the number of candidates, which depends on
the data by the algorithm's definition (tests/test_dp_glue_grouped.py).

**Budgets.** An (ε, δ) accountant is charged (ε, δ) at once; one whose budget has δ = 0 is refused
before anything is drawn. A ρ-zCDP budget (:class:`~veil.dp.zcdp_accountant.ZCDPAccountant`) keeps
no δ (its δ is where the budget is stated as (ε, δ), not a spendable part), so a query priced in ρ
with private keys is refused when given one; without an accountant its record states ρ and δ.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from veil.dp.discrete_gaussian import DiscreteGaussian
from veil.dp.mechanisms import Geometric
from veil.dp.privacy_unit import PrivacyUnit
from veil.errors import ParameterError

__all__ = ["PartitionSelection", "SelectionPlan", "key_bounds", "per_key_probability", "plan_selection",
           "upper_tail"]

#: the number of keys used for the sensitivities of a query whose keys are private: unbounded, so
#: that only the unit's own bounds (max_groups, max_rows) count, never the candidates present
UNBOUNDED_KEYS = 2**62

_MARGIN = 1e-9


def _delta(value) -> float:
    try:
        delta = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"the δ of partition selection must be a number, got {value!r}.") from None
    if not 0 < delta < 1:
        raise ParameterError(f"the δ of partition selection must be between 0 and 1 (exclusive), got {value!r}.")
    return delta


@dataclass(frozen=True)
class PartitionSelection:
    """Release the keys privately: thresholded noisy counts of the candidate keys (module notes).

    Args:
        delta: the probability, at most, that anything one person alone brings is released
            (0 < δ < 1; e.g. 1e-6, well below 1/number of people).
        threshold: the noisy count a key must reach, a whole number; ``None`` (the default): the
            least τ that keeps δ. A smaller one than that is refused.
        weight: the selection's share of ε (or ρ) beside the aggregates' weights (equal weights by
            default: with n aggregates the selection gets 1/(n + 1)).

    Raises:
        ParameterError: δ not in (0, 1), a threshold that is not a whole number, a weight that is
            not a positive finite number.
    """

    delta: float
    threshold: int | None = None
    weight: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "delta", _delta(self.delta))
        t = self.threshold
        if t is not None and (isinstance(t, bool) or not isinstance(t, numbers.Integral)):
            raise ParameterError(f"the threshold of partition selection must be a whole number, got {t!r}.")
        if t is not None:
            object.__setattr__(self, "threshold", int(t))
        try:
            weight = float(self.weight)
        except (TypeError, ValueError):
            weight = math.nan
        if isinstance(self.weight, bool) or not (weight > 0 and math.isfinite(weight)):
            raise ParameterError(f"the weight of partition selection must be a positive number, got {self.weight!r}.")
        object.__setattr__(self, "weight", weight)


def key_bounds(unit: PrivacyUnit) -> tuple[int, int]:
    """``(l0, linf)``: the most keys one unit's kept rows fall in, and the most kept rows it has in
    one key (1 and 1 for the row unit; a missing bound is infinite, and the unit's own checks make
    both finite)."""
    if not unit.is_person:
        return 1, 1
    l0 = min(b for b in (unit.max_groups, unit.max_rows) if b is not None)
    linf = min(b for b in (unit.max_rows_per_group, unit.max_rows) if b is not None)
    return l0, linf


def per_key_probability(delta: float, l0: int) -> float:
    """p = 1 − (1 − δ)^(1/l0), rounded down: the release probability allowed to each of the l0 keys
    one person may create, so that the chance any is released is at most δ."""
    p = -math.expm1(math.log1p(-delta) / l0)
    return p * (1 - _MARGIN)


def upper_tail(mechanism, t: int) -> float:
    """P(Z >= t) for the noise Z of ``mechanism``, a :class:`~veil.dp.mechanisms.Geometric` or a
    :class:`~veil.dp.discrete_gaussian.DiscreteGaussian` (see the module notes)."""
    from scipy import stats
    t = int(t)
    if isinstance(mechanism, Geometric):
        if t <= 0:
            return 1.0 - upper_tail(mechanism, 1 - t)
        return math.exp(-t / mechanism.scale) / (1.0 + mechanism.ratio)
    if isinstance(mechanism, DiscreteGaussian):
        sigma = mechanism.sigma
        if sigma > 1e5:
            return 1.0 if t <= 1 else float(stats.norm.sf((t - 1) / sigma))
        z, p = mechanism._pmf_table()
        return float(p[z >= t][::-1].cumsum()[-1]) if t <= z[-1] else 0.0
    raise ParameterError(f"partition selection draws discrete Laplace or discrete Gaussian noise, not "
                         f"{type(mechanism).__name__}.")


def least_threshold(mechanism, linf: int, p: float) -> int:
    """The smallest τ = linf + t, t >= 1, with P(Z >= t) <= p (module notes)."""
    from scipy import stats
    if isinstance(mechanism, Geometric):
        guess = math.ceil(mechanism.scale * math.log(1.0 / (p * (1.0 + mechanism.ratio))))
    else:
        guess = math.ceil(mechanism.sigma * stats.norm.isf(p))
    t = max(1, guess)
    while t > 1 and upper_tail(mechanism, t - 1) <= p:
        t -= 1
    while upper_tail(mechanism, t) > p:
        t += 1
    return linf + t


@dataclass(frozen=True)
class SelectionPlan:
    """The selection of one query, fixed before the data is read.

    Attributes:
        selection: what the user asked.
        mechanism: the noise of the counts (discrete Laplace or discrete Gaussian).
        cost: its ε (a float) or ρ (a fraction).
        l0, linf: :func:`key_bounds`.
        threshold: the τ used; ``least``: the least τ that keeps δ.
        release_probability: P(linf + Z >= τ), the chance that a key of one person alone is
            released (at most the per-key p).
    """

    selection: PartitionSelection
    mechanism: object
    cost: object
    l0: int
    linf: int
    threshold: int
    least: int
    release_probability: float

    def select(self, noisy_counts) -> np.ndarray:
        """Which candidates are released: their noisy count reaches the threshold."""
        return np.asarray(noisy_counts) >= self.threshold

    def record(self, zcdp: bool) -> dict:
        """The selection's entry of an answer's record (no data: nothing about the candidates)."""
        return {"delta": self.selection.delta, "threshold": self.threshold, "least_threshold": self.least,
                "l0": self.l0, "linf": self.linf, ("rho" if zcdp else "epsilon"): float(self.cost),
                "mechanism": self.mechanism.name, "sensitivity": self.mechanism.sensitivity,
                "norm": "L2" if zcdp else "L1", "scale": self.mechanism.scale,
                "one_person_key_release_probability": self.release_probability,
                "counts": "a separate noisy count of the kept rows of each candidate key"}


def plan_selection(selection: PartitionSelection, unit: PrivacyUnit, zcdp: bool, cost,
                   sensitivity: float) -> SelectionPlan:
    """The noise and threshold of ``selection`` for a query at ``unit``.

    Args:
        selection: the user's :class:`PartitionSelection`.
        unit: the privacy unit (its bounds give l0 and linf).
        zcdp: priced in ρ (discrete Gaussian) rather than ε (discrete Laplace).
        cost: the selection's share, ε as a float or ρ as a fraction.
        sensitivity: the L1 (ε) or L2 (ρ) sensitivity of the vector of counts.

    Raises:
        ParameterError: a threshold below the least τ that keeps δ, or a noise scale veil cannot draw.
    """
    mechanism = DiscreteGaussian(cost, sensitivity) if zcdp else Geometric(cost, sensitivity)
    l0, linf = key_bounds(unit)
    p = per_key_probability(selection.delta, l0)
    least = least_threshold(mechanism, linf, p)
    threshold = least if selection.threshold is None else selection.threshold
    if threshold < least:
        raise ParameterError(f"the threshold {threshold} is below {least}, the least that keeps a key of one person "
                             f"released with probability within δ = {selection.delta:g}; raise it, or leave it out.")
    return SelectionPlan(selection, mechanism, cost, l0, linf, threshold, least,
                         upper_tail(mechanism, threshold - linf))
