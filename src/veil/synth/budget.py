"""The privacy budget of a synthesizer: ρ from (ε, δ), and its split into rounds, in exact arithmetic.

Both mechanisms of :mod:`veil.synth` are ρ-zero-concentrated differentially private (Bun and
Steinke 2016): every measurement (a discrete Gaussian of ρ_i, CKS 2020) and every selection (an
exponential mechanism of ρ_i, Cesar and Rogers 2021) costs a ρ_i, and the costs add. Every ρ_i
here is a :class:`fractions.Fraction`, so that the rounds of a run add up to the configured ρ
*exactly* (no float drift that could overspend by an ulp).

* :func:`rho_for` turns an (ε, δ) request into the largest ρ whose tight conversion back (CKS 2020,
  :func:`veil.dp.zcdp_conversion.zcdp_epsilon`) is at most ε.
* :class:`AnnealingSchedule` is AIM's budget (McKenna, Mullins, Sheldon and Miklau, PVLDB 2022,
  Algorithm 3): rounds planned for T, a fraction α = 9/10 of each round for the measurement and
  1/10 for the selection, shares ×4 when a round taught the model little (σ halved, ε doubled), and
  a last round that spends exactly what is left. It reads no data: its decisions come from the
  mechanism, which makes them from DP outputs only, so anyone can replay it from the public
  per-round records.
"""

from __future__ import annotations

import numbers
from fractions import Fraction

from veil.dp.discrete_gaussian import discrete_gaussian_sigma
from veil.dp.exact import exact
from veil.dp.mechanisms import MAX_INTEGER_SCALE
from veil.dp.zcdp_conversion import zcdp_rho
from veil.errors import ParameterError

__all__ = ["AnnealingSchedule", "check_rho", "check_rounds", "check_sigma", "rho_for"]

#: AIM's share of a round for the measurement (the rest is the selection's), as in the paper.
MEASURE_SHARE = Fraction(9, 10)


def check_rho(rho) -> Fraction:
    """ρ as an exact Fraction (a float is read as the decimal it prints as).

    Raises:
        ParameterError: ρ is not a positive finite number.
    """
    try:
        value = exact(rho, "rho")
    except ParameterError:
        raise ParameterError(f"rho must be a positive finite number, got {rho!r}.") from None
    if value <= 0:
        raise ParameterError(f"rho must be a positive finite number, got {rho!r}.")
    return value


def check_sigma(rho_i: Fraction, what: str, fix: str = "raise rho") -> float:
    """The discrete Gaussian σ of a share ρ_i, refused when veil cannot draw it (σ above 2^52).

    Called on the smallest share of a plan before any noise is drawn.

    Raises:
        ParameterError: σ = 1/√(2ρ_i) is above the largest scale veil draws.
    """
    sigma = discrete_gaussian_sigma(rho_i, 1)
    if sigma > MAX_INTEGER_SCALE:
        raise ParameterError(f"rho is too small: the {what} would get noise of σ = {sigma:.3g}, above the largest "
                             f"scale veil draws ({MAX_INTEGER_SCALE:.3g}); {fix}.")
    return sigma


def rho_for(epsilon, delta) -> Fraction:
    """The largest ρ (a Fraction, to 11 or 12 significant digits, rounded down) with
    ``zcdp_epsilon(ρ, δ) <= ε``: the zCDP budget that an (ε, δ)-DP request allows, by the tight
    conversion of Canonne, Kamath and Steinke (2020, Corollary 13).

    Args:
        epsilon: ε > 0 (a float is read as the decimal it prints as).
        delta: 0 < δ < 1.

    Raises:
        ParameterError: ε is not a positive finite number, or δ is not in (0, 1).
    """
    try:
        e = exact(epsilon, "epsilon")
    except ParameterError:
        raise ParameterError(f"epsilon must be a positive finite number, got {epsilon!r}.") from None
    if e <= 0:
        raise ParameterError(f"epsilon must be a positive finite number, got {epsilon!r}.")
    try:
        d = exact(delta, "delta")
    except ParameterError:
        raise ParameterError(f"delta must be a number in (0, 1), got {delta!r}.") from None
    if not 0 < d < 1:
        raise ParameterError(f"delta must be a number in (0, 1), got {delta!r}.")
    return zcdp_rho(e, d)


class AnnealingSchedule:
    """AIM's per-round budget, exact (McKenna et al., PVLDB 2022, Algorithm 3 and Section 4.4).

    With total ρ and T planned rounds: the initial 1-way marginals are each measured with
    ρ₁ = min(αρ/T, ρ/(2d)) (αρ/T is the paper's σ₀ = √(T/(2αρ)); the cap keeps a small T from
    spending more than half of ρ on them); every round t then costs ρ_meas + ρ_sel, starting at
    αρ/T and (1 − α)ρ/T with α = 9/10 (σ_t = 1/√(2ρ_meas), ε_t = √(8ρ_sel)); :meth:`anneal`
    multiplies both by 4 (σ halved, ε doubled); and when what is left is at most twice the next
    round's cost, that round takes all of it (α of it for the measurement). The shares of all
    rounds add up to ρ exactly.

    Args:
        rho: the total ρ (a positive Fraction).
        rounds: T >= 1.
        columns: d >= 1, the number of initial 1-way measurements.
    """

    def __init__(self, rho: Fraction, rounds: int, columns: int) -> None:
        self.rho = Fraction(rho)
        self.rounds = int(rounds)
        self.columns = int(columns)
        self.one_way = min(MEASURE_SHARE * self.rho / self.rounds, self.rho / (2 * self.columns))
        self.used = self.one_way * self.columns
        self.measure = MEASURE_SHARE * self.rho / self.rounds
        self.select = (1 - MEASURE_SHARE) * self.rho / self.rounds
        self.last = False

    @property
    def remaining(self) -> Fraction:
        """ρ not yet charged."""
        return self.rho - self.used

    def smallest_measurement(self) -> Fraction:
        """A lower bound on the ρ of every measurement of the run (for the check of σ made before
        any noise is drawn).

        Every round costs at least min(ρ/T, ρ/2): the planned rounds cost ρ/T or more (annealing
        only raises them); a last round takes the remainder r, and r is more than the round before
        it cost (that round left more than twice its cost), or, when the first round is the last,
        r >= ρ/2 (the 1-way marginals take at most half). So every measurement of a round gets at
        least α·min(ρ/T, ρ/2), and the 1-way marginals ρ₁.
        """
        return min(self.one_way, MEASURE_SHARE * min(self.rho / self.rounds, self.rho / 2))

    def next_round(self) -> tuple[Fraction, Fraction]:
        """Charge the next round and return its (ρ_meas, ρ_sel).

        Raises:
            ParameterError: the budget is already spent (a programming error of the caller).
        """
        left = self.remaining
        if left <= 0:
            raise ParameterError("The synthesizer's budget is spent; no round is left.")
        if left <= 2 * (self.measure + self.select):
            self.measure, self.select = MEASURE_SHARE * left, (1 - MEASURE_SHARE) * left
            self.last = True
        self.used += self.measure + self.select
        return self.measure, self.select

    def anneal(self) -> None:
        """Halve the next rounds' σ and double their ε: both shares ×4."""
        self.measure *= 4
        self.select *= 4


def check_rounds(rounds, columns: int) -> int:
    """T, the number of rounds AIM plans for: ``None`` → 16·d, as in the paper.

    Raises:
        ParameterError: not a whole number of at least 1.
    """
    if rounds is None:
        return 16 * columns
    if isinstance(rounds, bool) or not isinstance(rounds, numbers.Integral) or rounds < 1:
        raise ParameterError(f"rounds must be a whole number of at least 1, got {rounds!r}.")
    return int(rounds)
