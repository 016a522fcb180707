"""How a report writes a figure as text: four significant digits, whole numbers with thousands
separators, yes/no for a truth value, ``—`` for none or NaN, an interval as ``[low, high]``."""

from __future__ import annotations

import math
from typing import Any


def shown(value: Any) -> str:
    """``value`` as a report shows it (see the module docstring); text is returned as it is."""
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(shown(v) for v in value) + "]"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(number):
        return "—"
    if number.is_integer() and abs(number) < 1e15:
        return f"{int(number):,}"
    return f"{number:.4g}"
