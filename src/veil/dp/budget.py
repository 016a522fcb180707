"""What an accountant deals in: a privacy budget (ε, δ), a charge against it, what has been spent,
and the refusal of a charge that would overspend.

Every number is exact (:mod:`veil.dp.exact`). A charge is checked *before* it is recorded: a query
that would overspend raises :class:`BudgetExceededError` and leaves the accountant exactly as it
was, so a mechanism that charges first and draws noise second never draws noise for a refused
query.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from datetime import UTC, datetime
from fractions import Fraction

from veil.dp.exact import exact_delta, exact_epsilon, show, to_text
from veil.errors import ParameterError, VeilError

__all__ = ["Budget", "BudgetExceededError", "Charge", "Spent", "check_label", "check_step", "timestamp"]


class BudgetExceededError(VeilError):
    """A query asks for more privacy budget than is left; nothing was charged.

    Attributes:
        label: the query's label.
        requested: the (ε, δ) the query asked for.
        remaining: the (ε, δ) that was left when it asked.
    """

    def __init__(self, message: str, *, label: str, requested: tuple, remaining: tuple):
        super().__init__(message)
        self.label = label
        self.requested = requested
        self.remaining = remaining


def check_label(label, what: str = "label") -> str:
    """``label`` when it is a non-empty text: the name of a charge, a parallel group or a partition.

    Args:
        label: the text to check.
        what: what it names, for messages (``"label"``, ``"parallel group name"``).

    Raises:
        ParameterError: not a text, or only white space.
    """
    if not isinstance(label, str) or not label.strip():
        if what == "label":
            raise ParameterError(f"every charge needs a label, a non-empty text naming the query; got {label!r}.")
        raise ParameterError(f"the {what} must be a non-empty text, got {label!r}.")
    return label


def check_step(value, name: str) -> int:
    """``value`` as a time step, a whole number (not a bool).

    Raises:
        ParameterError: not a whole number.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(f"{name} must be a whole number of time steps, got {value!r}.")
    return int(value)


def timestamp() -> str:
    """When a charge is made: the current UTC time, ISO 8601, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Budget:
    """A privacy budget: ε > 0 and 0 <= δ < 1, kept exactly (floats read as the decimal they print as)."""

    epsilon: Fraction
    delta: Fraction = Fraction(0)

    def __post_init__(self):
        object.__setattr__(self, "epsilon", exact_epsilon(self.epsilon, "the budget's epsilon"))
        object.__setattr__(self, "delta", exact_delta(self.delta, "the budget's delta"))

    def __str__(self) -> str:
        return f"ε = {show(self.epsilon)}, δ = {show(self.delta)}"


@dataclass(frozen=True)
class Charge:
    """One recorded charge.

    Attributes:
        label: what asked (the query's name).
        epsilon, delta: what it was charged (exact).
        kind: ``"query"`` or ``"postprocess"`` (free).
        group, partition: the parallel group and the partition of the data it touched, if any.
        step: the time step (temporal and window accountants), else ``None``.
        at: when it was charged (UTC, ISO 8601).
    """

    label: str
    epsilon: Fraction
    delta: Fraction = Fraction(0)
    kind: str = "query"
    group: str | None = None
    partition: str | None = None
    step: int | None = None
    at: str = ""

    def to_dict(self) -> dict:
        return {"label": self.label, "kind": self.kind, "epsilon": to_text(self.epsilon),
                "delta": to_text(self.delta), "group": self.group, "partition": self.partition,
                "step": self.step, "at": self.at}


@dataclass(frozen=True)
class Spent:
    """What has been spent: ``epsilon`` and ``delta`` under the bound named by ``method``.

    ``eps, delta = accountant.spent()`` unpacks the pair. The numbers are exact Fractions for
    sequential (and parallel, temporal, window) counting and floats for the advanced bound.
    ``sequential`` is the sequential-composition pair, ``advanced`` the advanced bound (or ``None``
    when it was not asked for).
    """

    epsilon: Fraction | float
    delta: Fraction | float
    method: str = "sequential"
    sequential: tuple = ()
    advanced: tuple | None = None

    def __iter__(self):
        return iter((self.epsilon, self.delta))
