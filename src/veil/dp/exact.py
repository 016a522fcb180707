"""The exact numbers of a privacy budget: ε and δ as fractions, how they are shown and kept as text.

Arithmetic is exact where it can be: every ε and δ an accountant takes is kept as a
:class:`fractions.Fraction`, and a float is read as the decimal it prints as (``0.1`` is 1/10), so
ten charges of 0.1 exhaust a budget of 1.0 exactly, with no spurious overspend and no rounding in
the user's favour. A budget keeps its numbers as text (:func:`to_text`, :func:`from_text`): a
decimal when the fraction has one, ``p/q`` otherwise, so reading it back gives the same fraction.
"""

from __future__ import annotations

import math
import numbers
from decimal import Decimal
from fractions import Fraction

from veil.errors import ParameterError

__all__ = ["exact", "exact_delta", "exact_epsilon", "from_text", "show", "to_text"]


def exact(value, name: str) -> Fraction:
    """``value`` as an exact Fraction; a float is read as the decimal it prints as (``0.1`` is 1/10).

    Args:
        value: a Fraction, an integer, a finite Decimal or float, or a text such as ``"0.1"`` or ``"1/3"``.
        name: what the value is, for messages (``"epsilon"``).

    Raises:
        ParameterError: a bool, an infinite or NaN number, a text that is not a number, or another type.
    """
    if isinstance(value, bool):
        raise ParameterError(f"{name} must be a number, got {value!r}.")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, numbers.Integral):
        return Fraction(int(value))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ParameterError(f"{name} must be a finite number, got {value}.")
        return Fraction(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        if not math.isfinite(value):
            raise ParameterError(f"{name} must be a finite number, got {value}.")
        return Fraction(repr(value))
    if isinstance(value, str):
        try:
            return Fraction(value.strip())
        except (ValueError, ZeroDivisionError):
            raise ParameterError(f"{name} must be a number, got {value!r}.") from None
    raise ParameterError(f"{name} must be a number, got {type(value).__name__} {value!r}.")


def exact_epsilon(value, name: str = "epsilon") -> Fraction:
    """The ε of a charge or a budget, exactly (:func:`exact`); it must be greater than 0.

    Raises:
        ParameterError: not a number, or ε <= 0 (a cost of 0 is post-processing).
    """
    eps = exact(value, name)
    if eps <= 0:
        raise ParameterError(f"{name} must be greater than 0, got {show(eps)}; a cost of 0 is only for "
                             "post-processing (use postprocess()).")
    return eps


def exact_delta(value, name: str = "delta") -> Fraction:
    """The δ of a charge or a budget, exactly (:func:`exact`); it must lie in [0, 1).

    Raises:
        ParameterError: not a number, or δ outside [0, 1).
    """
    delta = exact(value, name)
    if not 0 <= delta < 1:
        raise ParameterError(f"{name} must be in [0, 1), got {show(delta)}.")
    return delta


def show(x) -> str:
    """A short human form of a number for messages and reports: a whole Fraction as an integer,
    anything else with at most 10 significant digits (``1/3`` shows as ``0.3333333333``)."""
    if isinstance(x, Fraction) and x.denominator == 1:
        return str(x.numerator)
    return f"{float(x):.10g}"


def to_text(x: Fraction) -> str:
    """The exact text of a Fraction: a decimal when it has one (``"0.1"``), ``"p/q"`` otherwise (``"1/3"``).

    :func:`from_text` reads it back to the same Fraction.
    """
    den, twos, fives = x.denominator, 0, 0
    while den % 2 == 0:
        den, twos = den // 2, twos + 1
    while den % 5 == 0:
        den, fives = den // 5, fives + 1
    if den != 1:
        return f"{x.numerator}/{x.denominator}"
    places = max(twos, fives)
    digits = str(abs(int(x * 10 ** places))).rjust(places + 1, "0")
    text = f"{digits[:-places]}.{digits[-places:]}" if places else digits
    return ("-" if x < 0 else "") + text


def from_text(value) -> Fraction:
    """A number a budget keeps as text (:func:`to_text`), as the exact Fraction it writes.

    Raises:
        TypeError: ``value`` is not a text (a budget never keeps a number as a JSON number).
        ParameterError: the text is not a number.
    """
    if not isinstance(value, str):
        raise TypeError(f"number {value!r} is not kept as text")
    return exact(value, "a number")
