"""Privacy measures: what a DP guarantee is counted in, and how guarantees in one measure compose.

Three measures, each a small frozen value kept exactly (:mod:`veil.dp.exact`):

:class:`PureDP` (ε)
    ε-differential privacy (Dwork, McSherry, Nissim and Smith 2006): Laplace, geometric,
    exponential mechanism. Composes by adding ε.
:class:`ApproxDP` (ε, δ)
    (ε, δ)-differential privacy (Dwork, Kenthapadi, McSherry, Mironov and Naor 2006): the
    classical Gaussian mechanism. Composes (basic composition) by adding ε and adding δ.
:class:`ZCDP` (ρ)
    ρ-zero-concentrated differential privacy (Bun and Steinke 2016): the Gaussian and discrete
    Gaussian mechanisms. Composes by adding ρ, which is far tighter than adding the (ε, δ) of each
    Gaussian release. ε-DP implies (ε²/2)-zCDP (Bun and Steinke 2016, Proposition 1.4);
    ρ-zCDP implies (ε, δ)-DP for every δ > 0 by the tight conversion of Canonne, Kamath and
    Steinke 2020 (:mod:`veil.dp.zcdp_conversion`).

A budget is kept in one measure and every charge against it must be in the same measure:
:func:`compose` adds costs of one measure exactly and refuses to mix measures with a
:class:`MeasureMismatchError` (one sentence). Converting is always an explicit step
(:meth:`PureDP.to_zcdp`, :meth:`ZCDP.to_approx`), never a silent one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from veil.dp.exact import exact, exact_delta, exact_epsilon, show
from veil.dp.zcdp_conversion import zcdp_delta, zcdp_epsilon
from veil.errors import ParameterError, VeilError

__all__ = ["MEASURES", "ApproxDP", "MeasureMismatchError", "PureDP", "ZCDP", "compose", "describe", "exact_rho",
           "measure_of"]

#: The names of the measures, as budgets and ledgers keep them.
MEASURES = ("pure", "approximate", "zcdp")


class MeasureMismatchError(VeilError):
    """A cost in one privacy measure was offered to a budget or a composition kept in another."""


def exact_rho(value, name: str = "rho") -> Fraction:
    """The ρ of a zCDP charge or budget, exactly (:func:`veil.dp.exact.exact`); it must be > 0.

    Raises:
        ParameterError: not a number, or ρ <= 0.
    """
    rho = exact(value, name)
    if rho <= 0:
        raise ParameterError(f"{name} must be greater than 0, got {show(rho)}.")
    return rho


@dataclass(frozen=True)
class PureDP:
    """ε-differential privacy, ε > 0 kept exactly."""

    epsilon: Fraction

    name = "pure"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", exact_epsilon(self.epsilon))

    def __add__(self, other: PureDP) -> PureDP:
        _same(self, other)
        return PureDP(self.epsilon + other.epsilon)

    def to_zcdp(self) -> ZCDP:
        """ε-DP implies (ε²/2)-zCDP (Bun and Steinke 2016, Proposition 1.4), exactly."""
        return ZCDP(self.epsilon ** 2 / 2)

    def __str__(self) -> str:
        return f"ε = {show(self.epsilon)}"


@dataclass(frozen=True)
class ApproxDP:
    """(ε, δ)-differential privacy, ε > 0 and 0 <= δ < 1 kept exactly."""

    epsilon: Fraction
    delta: Fraction = Fraction(0)

    name = "approximate"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", exact_epsilon(self.epsilon))
        object.__setattr__(self, "delta", exact_delta(self.delta))

    def __add__(self, other: ApproxDP) -> ApproxDP:
        _same(self, other)
        return ApproxDP(self.epsilon + other.epsilon, self.delta + other.delta)

    def __str__(self) -> str:
        return f"ε = {show(self.epsilon)}, δ = {show(self.delta)}"


@dataclass(frozen=True)
class ZCDP:
    """ρ-zero-concentrated differential privacy, ρ > 0 kept exactly (Bun and Steinke 2016)."""

    rho: Fraction

    name = "zcdp"

    def __post_init__(self):
        object.__setattr__(self, "rho", exact_rho(self.rho))

    def __add__(self, other: ZCDP) -> ZCDP:
        _same(self, other)
        return ZCDP(self.rho + other.rho)

    def to_approx(self, delta) -> ApproxDP:
        """The (ε, δ)-DP this implies at ``delta`` (0 < δ < 1), ε by the tight conversion of
        Canonne, Kamath and Steinke 2020, rounded so that it is valid
        (:func:`veil.dp.zcdp_conversion.zcdp_epsilon`)."""
        d = exact(delta, "delta")
        return ApproxDP(zcdp_epsilon(self.rho, d), d)

    def delta_at(self, epsilon) -> Fraction:
        """The δ at which this implies (ε, δ)-DP (:func:`veil.dp.zcdp_conversion.zcdp_delta`)."""
        return zcdp_delta(self.rho, epsilon)

    def __str__(self) -> str:
        return f"ρ = {show(self.rho)}"


_KINDS = {"pure": PureDP, "approximate": ApproxDP, "zcdp": ZCDP}
_SAY = {"pure": "pure ε-DP", "approximate": "(ε, δ)-DP", "zcdp": "ρ-zCDP"}


def _same(a, b) -> None:
    if type(a) is not type(b):
        raise MeasureMismatchError(f"a cost in {_SAY.get(getattr(b, 'name', ''), type(b).__name__)} cannot be added to "
                                   f"one in {_SAY[a.name]}; convert it explicitly first.")


def measure_of(name: str) -> type:
    """The measure class of a name in :data:`MEASURES`.

    Raises:
        ParameterError: an unknown name.
    """
    if name not in _KINDS:
        raise ParameterError(f"a privacy measure is one of {', '.join(MEASURES)}, not {name!r}.")
    return _KINDS[name]


def compose(costs: Iterable):
    """The sequential composition of costs in one measure, exactly: ε adds, (ε, δ) adds in both
    (basic composition), ρ adds (Bun and Steinke 2016, Lemma 2.3).

    Args:
        costs: one or more :class:`PureDP`, :class:`ApproxDP` or :class:`ZCDP`, all of one measure.

    Raises:
        ParameterError: no costs, or something that is not a cost.
        MeasureMismatchError: costs of different measures.
    """
    costs = list(costs)
    if not costs:
        raise ParameterError("compose needs at least one cost.")
    for c in costs:
        if not isinstance(c, (PureDP, ApproxDP, ZCDP)):
            raise ParameterError(f"a cost is a PureDP, ApproxDP or ZCDP, not {type(c).__name__}.")
    total = costs[0]
    for c in costs[1:]:
        total = total + c
    return total


def describe(name: str) -> str:
    """How a measure is said in a sentence (``"ρ-zCDP"``)."""
    return _SAY[name]
