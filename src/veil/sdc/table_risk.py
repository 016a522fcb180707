"""The re-identification risk of a table as it is read: its records' key frequencies when some
cells are suppressed, and the Benedetti–Franconi individual risk on them.

Local suppression publishes a record with some quasi-identifier cells blanked (``*`` or an empty
cell). To an adversary who reads a blank as "unknown", such a record matches every record that
agrees with it on the cells both show: its sample frequency is

    f_i = #{q : for every key column j, cell_ij = cell_qj, or either is suppressed}

and its estimated population frequency F̂_i the sum of those records' sampling weights (Σ 1
without weights, then F̂ = f). This is sdcMicro's treatment of missing key values (the
``alpha = 1`` frequency of ``freqCalc``). With ``matching="category"`` a blank is a value of its
own, and the frequencies are those of the key groups. Strata are never blank: a record matches
only records of its stratum.

:func:`table_risk` computes them by suppression pattern: for each pair of patterns (S, T), the
records of pattern T are counted by their values on the columns neither suppresses and looked up
for the records of pattern S (P² group-bys for P patterns, so it is fast when the patterns are
few, as local suppression leaves them). The individual risk per record is then
:func:`veil.risk.individual.benedetti_franconi` of (f_i, F̂_i), the household risk
1 − Π(1 − r_i) over a household's records, and :func:`risk_summary` the figures a manifest, a
report and the gate show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from veil.errors import DataError

__all__ = ["TableRisk", "risk_summary", "suppressed_marker", "table_risk"]

#: The quantiles of the individual risk a summary lists.
QUANTILES = (0.5, 0.9, 0.99)


@dataclass(frozen=True)
class TableRisk:
    """The risk of every record of a table.

    Attributes:
        sample: f_i, the records matching record i (itself included).
        population: F̂_i, the sum of their sampling weights.
        record: r_i, the Benedetti–Franconi individual risk.
        household: per record, its household's risk 1 − Π(1 − r_j), or ``None`` without households.
        weighted: whether sampling weights were given.
    """

    sample: np.ndarray
    population: np.ndarray
    record: np.ndarray
    household: np.ndarray | None
    weighted: bool

    @property
    def expected_reidentifications(self) -> float:
        """The global risk: Σ r_i."""
        return float(self.record.sum())

    @property
    def rate(self) -> float:
        """The global risk per record."""
        return self.expected_reidentifications / len(self.record) if len(self.record) else 0.0

    def share_above(self, threshold: float, household: bool = False) -> float:
        """The share of records whose (household) risk exceeds ``threshold``."""
        risk = self.household if household and self.household is not None else self.record
        return float((risk > threshold).mean()) if len(risk) else 0.0


def suppressed_marker(manifest: dict) -> str | None:
    """The text of a suppressed cell in the release a manifest describes, which matches any value
    (``None``: none does): local suppression's marker under ``matching: any`` (``*``, or ``""``
    for a cell published empty), else ``*`` when suppressed records are shown as ``*``."""
    sdc = manifest.get("sdc") or {}
    if "cell_marker" in sdc:
        return sdc["cell_marker"] if sdc.get("matching", "any") == "any" else None
    return "*" if (manifest.get("output") or {}).get("suppressed") == "star" else None


def _codes(column: pa.ChunkedArray | pa.Array, marker: str | None) -> tuple[np.ndarray, np.ndarray]:
    """A column's cells as integer codes, and bool per cell: a suppressed cell (``marker``, or a
    missing cell when ``marker`` is ``""``)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    text = column if pa.types.is_string(column.type) or pa.types.is_large_string(column.type) \
        else pc.cast(column, pa.string())
    encoded = pc.dictionary_encode(text)
    n_values = len(encoded.dictionary)
    indices = encoded.indices.to_numpy(zero_copy_only=False) if encoded.null_count == 0 else \
        pc.fill_null(encoded.indices, n_values).to_numpy(zero_copy_only=False)
    codes = np.asarray(indices, dtype=np.int64)
    if marker is None:
        blank = np.zeros(len(codes), dtype=bool)
    elif marker == "":
        blank = codes == n_values
        empty = [i for i, v in enumerate(encoded.dictionary.to_pylist()) if v == ""]
        if empty:
            blank |= np.isin(codes, empty)
    else:
        hits = [i for i, v in enumerate(encoded.dictionary.to_pylist()) if v == marker]
        blank = np.isin(codes, hits) if hits else np.zeros(len(codes), dtype=bool)
    return codes, blank


def sampling_weights(table: pa.Table, weight: str | None) -> np.ndarray | None:
    """The weight column as float64, or ``None`` without one.

    Raises:
        DataError: a weight that is not a positive, finite number (one sentence naming the column).
    """
    if weight is None:
        return None
    column = table.column(weight)
    try:
        values = pc.cast(column, pa.float64()).to_numpy(zero_copy_only=False) if column.null_count == 0 else None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise DataError(f"the weight column '{weight}' must hold numbers; it holds text.") from None
    if values is None or not np.all(np.isfinite(values) & (values > 0)):
        bad = column.null_count if values is None else int((~(np.isfinite(values) & (values > 0))).sum())
        raise DataError(f"the weight column '{weight}' must hold a positive number on every row; {bad:,} rows hold "
                        "none, zero or a negative number.")
    return values


def table_risk(table: pa.Table, quasi_identifiers: Sequence[str], *, weight: str | None = None,
               strata: Sequence[str] = (), household: str | None = None, marker: str | None = None) -> TableRisk:
    """The key frequencies and Benedetti–Franconi risk of every record of ``table`` (see the module notes).

    Args:
        table: the table, cells as a reader sees them.
        quasi_identifiers: the key columns.
        weight: the sampling weight column (``None``: every record weighs 1).
        strata: the strata columns (a record matches only its stratum's records).
        household: the household column, for the household risk.
        marker: the text of a suppressed cell that matches any value (``"*"``, or ``""`` for a
            missing cell); ``None``: every cell is a value of its own.

    Raises:
        DataError: a weight that is not a positive number.
    """
    from veil.risk.individual import benedetti_franconi

    n = table.num_rows
    weights = sampling_weights(table, weight)
    w = np.ones(n) if weights is None else weights
    columns, blanks = [], []
    for name in quasi_identifiers:
        codes, blank = _codes(table.column(name), marker)
        columns.append(codes)
        blanks.append(blank)
    if strata:
        stratum = np.zeros(n, dtype=np.int64)
        for name in strata:
            codes, _ = _codes(table.column(name), None)
            _, stratum = np.unique(np.stack([stratum, codes], axis=1), axis=0, return_inverse=True)
            stratum = stratum.reshape(-1)
        columns.append(stratum)
        blanks.append(np.zeros(n, dtype=bool))
    m = len(columns)
    keys = np.stack(columns, axis=1) if m else np.zeros((n, 0), dtype=np.int64)
    blank = np.stack(blanks, axis=1) if m else np.zeros((n, 0), dtype=bool)
    radices = keys.max(axis=0) + 1 if n and m else np.ones(m, dtype=np.int64)
    patterns, pattern_of = np.unique(blank, axis=0, return_inverse=True)
    pattern_of = pattern_of.reshape(-1)
    f = np.zeros(n, dtype=np.int64)
    big_f = np.zeros(n, dtype=np.float64)
    members = [np.flatnonzero(pattern_of == s) for s in range(len(patterns))]
    for s, rows_s in enumerate(members):
        for t, rows_t in enumerate(members):
            shown = ~(patterns[s] | patterns[t])
            if not shown.any():
                f[rows_s] += len(rows_t)
                big_f[rows_s] += w[rows_t].sum()
                continue
            group = _group_ids(np.concatenate([keys[rows_t][:, shown], keys[rows_s][:, shown]]),
                               radices[shown])
            n_groups = int(group.max()) + 1
            counts = np.bincount(group[:len(rows_t)], minlength=n_groups)
            sums = np.bincount(group[:len(rows_t)], weights=w[rows_t], minlength=n_groups)
            mine = group[len(rows_t):]
            f[rows_s] += counts[mine]
            big_f[rows_s] += sums[mine]
    record = np.asarray(benedetti_franconi(f, big_f), dtype=np.float64) if n else np.zeros(0)
    house = None
    if household is not None:
        codes, _ = _codes(table.column(household), None)
        with np.errstate(divide="ignore"):
            logs = np.log1p(-np.minimum(record, 1.0))
        total = np.bincount(codes, weights=logs, minlength=int(codes.max()) + 1 if n else 0)
        house = 1.0 - np.exp(total[codes])
    return TableRisk(f, big_f, record, house, weights is not None)


def _group_ids(keys: np.ndarray, radices: np.ndarray) -> np.ndarray:
    """A group id per row of ``keys`` (rows equal ⇔ ids equal): one mixed-radix number per row when
    the radices' product fits in 62 bits, else the rows sorted."""
    if float(np.prod(radices.astype(np.float64))) < 2.0 ** 62:
        combined = np.zeros(len(keys), dtype=np.int64)
        for j, radix in enumerate(radices):
            combined = combined * int(radix) + keys[:, j]
        _, group = np.unique(combined, return_inverse=True)
    else:
        _, group = np.unique(keys, axis=0, return_inverse=True)
    return group.reshape(-1)


def risk_summary(risk: TableRisk, thresholds: Sequence[float] = (0.05, 0.1, 0.2, 0.5)) -> dict:
    """The figures of a table's risk, JSON-ready: the records, the smallest and the number of
    sample-unique keys (f = 1), the global risk and its rate, the largest risk, the quantiles of
    the individual risk and the share of records above each threshold (and the household's)."""
    r = risk.record
    n = len(r)
    out = {"records": n, "weighted": risk.weighted,
           "k": int(risk.sample.min()) if n else 0, "sample_uniques": int((risk.sample == 1).sum()),
           "expected_reidentifications": round(risk.expected_reidentifications, 6), "rate": round(risk.rate, 8),
           "max": round(float(r.max()), 8) if n else 0.0,
           "quantiles": {f"{q:g}": round(float(np.quantile(r, q)), 8) if n else 0.0 for q in QUANTILES},
           "above": {f"{t:g}": round(risk.share_above(t), 8) for t in thresholds}}
    if risk.household is not None:
        out["household"] = {"max": round(float(risk.household.max()), 8) if n else 0.0,
                            "above": {f"{t:g}": round(risk.share_above(t, household=True), 8) for t in thresholds}}
    return out
