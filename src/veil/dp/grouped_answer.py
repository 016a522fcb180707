"""The answer of a grouped DP query: one row per public key, one column per aggregate, and a
(1 − α) confidence interval for every cell, with the record of how it was made.

Intervals come from the mechanism's known noise distribution: for a count or a sum the interval
holds the true (bounded, clamped) cell with probability at least 1 − α; for a mean it is the
range of ``mid + S/C`` over the α/2 intervals of its centred sum S and count C (a union bound),
cut to ``[low, high]``, and is stated as approximate: it covers the mean of the rows kept by
contribution bounding, clamped, not of the raw table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from veil.dp.mechanisms import release_label
from veil.dp.public_keys import PublicKeys
from veil.errors import ParameterError

__all__ = ["GroupedAnswer", "mean_interval"]

KINDS = ("pandas", "polars", "arrow", "spark")


def mean_interval(s: np.ndarray, c: np.ndarray, s_half: float, c_half: float, low: float,
                  high: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The mean ``mid + s/c`` (``mid`` when ``c < 1``), clamped to ``[low, high]``, and its interval:
    the range of ``mid + S/C`` over S in ``s ± s_half``, C in ``c ± c_half``, cut to ``[low, high]``
    (all of it when C's interval reaches 0). Element-wise over arrays of cells."""
    mid = (low + high) / 2.0
    s, c = np.asarray(s, dtype=float), np.asarray(c, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        value = np.clip(np.where(c >= 1, mid + s / np.where(c >= 1, c, 1.0), mid), low, high)
        c_lo = c - c_half
        safe = np.where(c_lo > 0, c_lo, 1.0)
        corners = np.stack([mid + a / b for a in (s - s_half, s + s_half) for b in (safe, c + c_half)])
    lo = np.where(c_lo > 0, np.clip(corners.min(axis=0), low, high), low)
    hi = np.where(c_lo > 0, np.clip(corners.max(axis=0), low, high), high)
    return value, lo, hi


@dataclass(frozen=True)
class GroupedAnswer:
    """The noisy answer of a grouped query.

    Attributes:
        keys: the public keys, in row order.
        values: per aggregate name, the noisy cells (one per key).
        low, high: per aggregate name, the (1 − alpha) interval of each cell.
        alpha: the miss probability of each interval.
        record: how the answer was made: the unit and its bounds, ε and its split, each
            measurement's mechanism, sensitivity and noise scale, the intervals' nature, notes.
        kind: the input's table kind (``"pandas"``, ``"polars"``, ``"arrow"``, ``"spark"``), the
            default of :meth:`table`.
        session: the Spark session of the query's table (a Spark query's), in which
            ``table("spark")`` makes its DataFrame.
    """

    keys: PublicKeys
    values: dict = field(repr=False)
    low: dict = field(repr=False)
    high: dict = field(repr=False)
    alpha: float
    record: dict = field(repr=False)
    kind: str = "pandas"
    session: Any = field(default=None, repr=False, compare=False)

    @property
    def fit_for_release(self) -> bool:
        return bool(self.record["fit_for_release"])

    @property
    def label(self) -> str:
        return release_label(self.fit_for_release, tuple(self.record["not_fit_because"]))

    @property
    def noise_scales(self) -> dict:
        """The noise scale of every measurement, by label (``"count"``, ``"mean(x).sum"``, …): the
        same for every cell of an aggregate, since it depends on the query alone."""
        return {m["label"]: m["scale"] for a in self.record["aggregates"] for m in a["measurements"]}

    def to_pandas(self) -> pd.DataFrame:
        """The answer as a pandas frame: the key columns, then per aggregate ``name``,
        ``name_low`` and ``name_high``."""
        out = self.keys.frame()
        for name, cells in self.values.items():
            out[name] = cells
            out[f"{name}_low"] = self.low[name]
            out[f"{name}_high"] = self.high[name]
        return out

    def table(self, kind: str | None = None) -> Any:
        """The answer as a table of ``kind`` (by default the input's kind). A ``"spark"`` table is
        a DataFrame of the noisy rows already drawn (:func:`veil.dp.spark_statistics.spark_answer`):
        every action on it reads the same numbers.

        Raises:
            ParameterError: an unknown kind, or ``"spark"`` for an answer of a query that did not
                read a Spark table.
        """
        kind = self.kind if kind is None else kind
        if kind not in KINDS:
            raise ParameterError(f"a table kind is one of {', '.join(KINDS)}, got {kind!r}.")
        frame = self.to_pandas()
        if kind == "pandas":
            return frame
        if kind == "spark":
            from veil.dp.spark_statistics import spark_answer

            return spark_answer(frame, self.session)
        import pyarrow as pa

        arrow = pa.Table.from_pandas(frame, preserve_index=False)
        if kind == "arrow":
            return arrow
        import polars as pl

        return pl.from_arrow(arrow)
