"""Top and bottom coding of a numeric column (Hundepool et al., *Statistical Disclosure Control*,
2012, §3.4.3; sdcMicro's ``topBotCoding``).

Top coding replaces every value above a threshold ``top`` by one replacement value, bottom coding
every value below ``bottom``: the extreme values that single out a record (the one income of ten
million, the age of 104) are no longer shown, and the rest of the column is untouched.

What may travel with a release. The parameters as the user gave them are public: a threshold
given as a value, the quantile level of a threshold given as a quantile, and the replacement rule
(:meth:`TopBottomCoding.public_parameters`). Every number computed from the private column is
not: a quantile threshold is a statistic of the data (it depends on the private values), and so
are the mean of the coded values and the number of values coded. They are in the result for the
curator's own report and must not be written to a manifest. (A released column shows its
replacement value as often as values were coded, so a reader can often read those numbers off
the release itself; the manifest does not add them.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from veil.errors import ParameterError
from veil.sdc._numeric import float_matrix

__all__ = ["TopBottomCoding", "top_bottom_code"]

_RULES = ("threshold", "mean")


@dataclass(frozen=True, eq=False)  # arrays inside: compare their fields
class TopBottomCoding:
    """The coded column and what was done to it.

    Attributes:
        values: the coded column (float64; missing values stay NaN).
        top, bottom: the thresholds applied (None for a side not coded). Computed from the data
            when given as a quantile: private then.
        top_quantile, bottom_quantile: the quantile levels asked for (None when a value was given).
        replacement: the rule: ``"threshold"``, ``"mean"`` or ``"value"`` (a number given).
        top_replacement, bottom_replacement: the values written in place of the coded ones (None
            when nothing was coded on that side). Private under the rule ``"mean"``.
        top_coded, bottom_coded: how many values were replaced on each side (private).
    """

    values: np.ndarray
    top: float | None
    bottom: float | None
    top_quantile: float | None
    bottom_quantile: float | None
    replacement: str
    top_replacement: float | None
    bottom_replacement: float | None
    top_coded: int
    bottom_coded: int

    def public_parameters(self) -> dict[str, Any]:
        """The parameters a manifest may publish: what the user asked for, no number computed
        from the private column (a quantile threshold appears as its level, a mean as the rule)."""
        out: dict[str, Any] = {"replacement": self.replacement}
        for side, threshold, level, value in (("top", self.top, self.top_quantile, self.top_replacement),
                                              ("bottom", self.bottom, self.bottom_quantile, self.bottom_replacement)):
            if threshold is None and level is None:
                continue
            out[side] = {"quantile": level} if level is not None else {"value": threshold}
            if self.replacement == "value":
                out[side]["replacement"] = value
        return out


def _level(q: Any, name: str) -> float:
    try:
        value = float(q)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(q, bool) or not 0.0 <= value <= 1.0:
        raise ParameterError(f"{name} must be a quantile level between 0 and 1, got {q!r}.")
    return value


def _threshold(t: Any, name: str) -> float:
    try:
        value = float(t)
    except (TypeError, ValueError):
        value = math.nan
    if isinstance(t, bool) or not math.isfinite(value):
        raise ParameterError(f"{name} must be a finite number, got {t!r}.")
    return value


def top_bottom_code(values: Any, *, top: float | None = None, bottom: float | None = None,
                    top_quantile: float | None = None, bottom_quantile: float | None = None,
                    replacement: str | float = "threshold") -> TopBottomCoding:
    """Top and bottom code one numeric column.

    Every value strictly above the top threshold is replaced by the top replacement, every value
    strictly below the bottom threshold by the bottom replacement; values equal to a threshold,
    the values in between and missing values (NaN, None, pandas NA) are kept as they are.

    A threshold is given either as a value (``top``, ``bottom``) or as a quantile level of the
    column's non-missing values (``top_quantile=0.99``: the 99th percentile, linear interpolation
    between order statistics, R's default type 7 and NumPy's ``"linear"``). A quantile threshold
    depends on the private data: it is a statistic of the table, not a public parameter (see the
    module notes for what a manifest may show).

    Replacement rules:

    * ``"threshold"`` (default): the threshold itself (sdcMicro's usual choice);
    * ``"mean"``: the mean of the values coded on that side (so the column's total and mean are
      kept exactly); this mean is computed from the private values, and with a single value coded
      on a side it *is* that value, which is then not hidden at all: use it where several values
      are coded;
    * a number: that value, allowed when only one side is coded, and only on the coded side (at
      least ``top``, at most ``bottom``), so that coding never moves a value inwards past the
      threshold; checked against a threshold given as a value (a quantile threshold is not known
      before the data is read, and a refusal must not depend on the data: there the number is
      used as given).

    Args:
        values: one numeric column (NumPy array, list, pandas or polars Series). Not modified.
        top: the upper threshold, as a value.
        bottom: the lower threshold, as a value.
        top_quantile: the upper threshold as a quantile level in [0, 1].
        bottom_quantile: the lower threshold as a quantile level in [0, 1].
        replacement: ``"threshold"``, ``"mean"`` or a number (see above).

    Returns:
        :class:`TopBottomCoding`, the coded column (float64) with what was done.

    Raises:
        ParameterError: no threshold, a side given both as a value and a quantile, a threshold
            not finite, a level outside [0, 1], the top threshold below the bottom one, an unknown
            rule, or a numeric replacement with two sides or on the wrong side of its threshold.
        ColumnError: the column holds something other than numbers, or more than one column.
    """
    matrix, single = float_matrix(values, "column to top or bottom code")
    if not single and matrix.shape[1] != 1:
        raise ParameterError("top and bottom coding takes one column at a time; call it once per column.")
    column = matrix[:, 0]
    for side, value, level in (("top", top, top_quantile), ("bottom", bottom, bottom_quantile)):
        if value is not None and level is not None:
            raise ParameterError(f"give the {side} threshold either as {side} or as {side}_quantile, not both.")
    if top is None and bottom is None and top_quantile is None and bottom_quantile is None:
        raise ParameterError("top and bottom coding needs a top or a bottom threshold (a value or a quantile).")
    if isinstance(replacement, str):
        if replacement not in _RULES:
            raise ParameterError(f"replacement must be 'threshold', 'mean' or a number, got {replacement!r}.")
        rule, fixed = replacement, None
    else:
        rule, fixed = "value", _threshold(replacement, "replacement")
    tq = None if top_quantile is None else _level(top_quantile, "top_quantile")
    bq = None if bottom_quantile is None else _level(bottom_quantile, "bottom_quantile")
    present = column[~np.isnan(column)]
    t = _threshold(top, "top") if top is not None else (
        float(np.quantile(present, tq)) if tq is not None and len(present) else None)
    b = _threshold(bottom, "bottom") if bottom is not None else (
        float(np.quantile(present, bq)) if bq is not None and len(present) else None)
    # Given values and quantile levels are checked, never the thresholds quantiles give (an error
    # must not depend on the private data).
    if top is not None and bottom is not None and t < b:
        raise ParameterError(f"the top threshold ({t:g}) must not be below the bottom threshold ({b:g}).")
    if tq is not None and bq is not None and tq < bq:
        raise ParameterError(f"top_quantile ({tq:g}) must not be below bottom_quantile ({bq:g}).")
    if fixed is not None:
        sides = (top is not None or tq is not None) + (bottom is not None or bq is not None)
        if sides != 1:
            raise ParameterError("a numeric replacement codes one side only; give top or bottom, not both.")
        if top is not None and fixed < t or bottom is not None and fixed > b:
            raise ParameterError("a numeric replacement must lie on the coded side of its threshold.")
    out = column.copy()
    above = column > t if t is not None else np.zeros(len(column), dtype=bool)
    below = column < b if b is not None else np.zeros(len(column), dtype=bool)
    if t is not None and b is not None and t < b:
        # Only a value given for one side and a quantile for the other can cross (two given values
        # that cross were refused; two quantiles of one column cannot): no error, since it would
        # depend on the data; a value both above top and below bottom is top coded.
        below &= ~above

    def replace(mask: np.ndarray, threshold: float) -> float | None:
        if not mask.any():
            return None
        value = threshold if rule == "threshold" else fixed if rule == "value" else float(column[mask].mean())
        out[mask] = value
        return value

    top_value = replace(above, t) if t is not None else None
    bottom_value = replace(below, b) if b is not None else None
    return TopBottomCoding(values=out, top=t, bottom=b, top_quantile=tq, bottom_quantile=bq, replacement=rule,
                           top_replacement=top_value, bottom_replacement=bottom_value,
                           top_coded=int(above.sum()), bottom_coded=int(below.sum()))
