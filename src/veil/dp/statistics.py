"""The sufficient statistics of a grouped DP query, computed per key by an engine.

An engine (pandas here, Spark in :mod:`veil.dp.spark_statistics`) computes, over the rows kept by
contribution bounding, only these statistics, each named by a tuple; an aggregate
(:mod:`veil.dp.aggregates`) says which it needs and turns them into its measurements' true
vectors. A new aggregate built on them needs no engine change.

=================================  ===========================================================  ==========
statistic                          per key, over the kept rows of the key                       shape
=================================  ===========================================================  ==========
``("rows",)``                      the number of rows                                           (k,)
``("count", col)``                 rows whose ``col`` is not missing                            (k,)
``("sum", col, lo, hi)``           Σ clamp(x, lo, hi) over non-missing x                        (k,)
``("csum", col, lo, hi)``          Σ (clamp(x, lo, hi) − (lo + hi)/2)                           (k,)
``("csq", col, lo, hi)``           Σ (clamp(x, lo, hi) − (lo + hi)/2)²                          (k,)
``("hist", col, lo, hi, bins)``    rows in bin b = min(bins − 1, ⌊(clamp(x) − lo)·bins/(hi − lo)⌋)  (k, bins)
=================================  ===========================================================  ==========

A value is missing when it is NaN or None; ±∞ is present and clamps to a bound. Counts are int64,
sums float64.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from veil.errors import ParameterError

__all__ = ["KINDS", "Statistic", "check_statistic", "compute_statistics"]

Statistic = tuple
#: the statistic kinds and how many parameters each takes after its kind
KINDS = {"rows": 0, "count": 1, "sum": 3, "csum": 3, "csq": 3, "hist": 4}


def check_statistic(stat: Statistic) -> Statistic:
    """``stat`` if it names a statistic of the table above with the right number of parameters.

    Raises:
        ParameterError: an unknown kind or a wrong number of parameters.
    """
    if not isinstance(stat, tuple) or not stat or stat[0] not in KINDS or len(stat) != 1 + KINDS[stat[0]]:
        raise ParameterError(f"a statistic is one of {', '.join(KINDS)} with its parameters, got {stat!r}.")
    if stat[0] == "hist" and (not isinstance(stat[4], int) or stat[4] < 1):
        raise ParameterError(f"a histogram needs a whole number of bins of at least 1, got {stat[4]!r}.")
    return stat


def _values(frame: pd.DataFrame, column: str) -> tuple[np.ndarray, np.ndarray]:
    """The column as floats (NaN where missing) and which values are present."""
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    return values, ~np.isnan(values)


def _clamped(values: np.ndarray, present: np.ndarray, low: float, high: float) -> np.ndarray:
    """Present values clamped to ``[low, high]``; 0 where missing."""
    return np.where(present, np.clip(np.nan_to_num(values, nan=0.0, posinf=high, neginf=low), low, high), 0.0)


def _weighted(group: np.ndarray, weights: np.ndarray, num_keys: int) -> np.ndarray:
    """Per key, the sum of its rows' weights, as float64 (np.bincount gives int64 on no rows)."""
    return np.bincount(group, weights=weights, minlength=num_keys).astype(np.float64, copy=False)


def compute_statistics(frame: pd.DataFrame, group: np.ndarray, num_keys: int,
                       wanted: Iterable[Statistic]) -> dict:
    """Compute the ``wanted`` statistics per key (the module's table).

    Args:
        frame: the rows (already bounded); only the columns the statistics name are read.
        group: each row's key index, 0 … num_keys − 1, or −1 for a row no key takes (left out).
        num_keys: the number of keys k.
        wanted: the statistics to compute.

    Returns:
        ``{statistic: array}``, each of the shape the table gives.

    Raises:
        ParameterError: an unknown statistic, or ``group`` not one entry per row.
    """
    group = np.asarray(group, dtype=np.int64)
    if len(group) != len(frame):
        raise ParameterError(f"group must give one key index per row ({len(frame)}), got {len(group)}.")
    taken = group >= 0
    g = group[taken]
    out: dict = {}
    columns: dict = {}
    for stat in wanted:
        stat = check_statistic(stat)
        if stat in out:
            continue
        kind = stat[0]
        if kind == "rows":
            out[stat] = np.bincount(g, minlength=num_keys).astype(np.int64)
            continue
        column = stat[1]
        if column not in columns:
            values, present = _values(frame, column)
            columns[column] = (values[taken], present[taken])
        values, present = columns[column]
        if kind == "count":
            out[stat] = np.bincount(g[present], minlength=num_keys).astype(np.int64)
            continue
        low, high = float(stat[2]), float(stat[3])
        clamped = _clamped(values, present, low, high)
        if kind == "sum":
            out[stat] = _weighted(g, clamped, num_keys)
        elif kind in ("csum", "csq"):
            centred = np.where(present, clamped - (low + high) / 2.0, 0.0)
            weights = centred if kind == "csum" else centred * centred
            out[stat] = _weighted(g, weights, num_keys)
        else:  # hist
            bins = stat[4]
            b = np.minimum(bins - 1, np.floor((clamped - low) * bins / (high - low))).astype(np.int64)
            cells = g[present] * bins + b[present]
            out[stat] = np.bincount(cells, minlength=num_keys * bins).astype(np.int64).reshape(num_keys, bins)
    return out
