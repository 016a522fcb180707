"""What a report renders of the evaluation: sections of rows, each row a measure, its value as
text, and a sentence saying what the number means and which direction is good."""

from __future__ import annotations

from typing import NamedTuple


class Row(NamedTuple):
    """One number of the evaluation: its name, its value as text, and what it means in words."""
    measure: str
    value: str
    meaning: str


class Section(NamedTuple):
    """A titled group of rows."""
    title: str
    rows: tuple[Row, ...]


def number(value: float | None, digits: int = 3) -> str:
    """A value as text: ``n/a`` for None, else rounded to ``digits`` decimals."""
    if value is None:
        return "n/a"
    return f"{value:.{digits}f}"


def share(value: float | None) -> str:
    """A share in [0, 1] as a percentage with two decimals."""
    if value is None:
        return "n/a"
    return f"{100 * value:.2f}%"


def interval(bounds: tuple[float, float] | None, digits: int = 3) -> str:
    """A confidence interval as ``[lo, hi]``."""
    if bounds is None:
        return "n/a"
    return f"[{bounds[0]:.{digits}f}, {bounds[1]:.{digits}f}]"
