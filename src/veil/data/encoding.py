"""Dictionary encoding of one column into small integer codes.

Every column veil reasons about is encoded once: each distinct value becomes a code
``0 .. cardinality-1`` and the rows hold codes. Codes follow the value order (numeric order for
numeric columns, a user-given order for ordinal columns, text order otherwise), so ordered
measures such as ordered EMD can read the codes directly.

Missing values (null, NaN, or a cell whose text is one of ``missing_values``) form one category
of their own, labelled ``""`` and placed last. This is veil's single missing-value policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from veil.errors import ColumnError

MISSING_LABEL = ""


@dataclass(frozen=True, eq=False)
class EncodedColumn:
    """One column as integer codes plus the dictionary that decodes them.

    Attributes:
        name: the column name.
        codes: ``int32`` array, one code per row.
        labels: text form of each category, indexed by code.
        numeric: the numeric value of each category (NaN for the missing category), or ``None``
            when the column is not numeric.
        missing_code: the code of the missing category, or ``None`` when nothing is missing.
        ordered: whether the codes follow a meaningful order (numeric or user-given).
    """

    name: str
    codes: np.ndarray
    labels: np.ndarray
    numeric: np.ndarray | None
    missing_code: int | None
    ordered: bool

    @property
    def cardinality(self) -> int:
        """Number of categories, the missing one included."""
        return len(self.labels)

    @property
    def is_numeric(self) -> bool:
        return self.numeric is not None

    def counts(self) -> np.ndarray:
        """Number of rows holding each category."""
        return np.bincount(self.codes, minlength=self.cardinality)


def canonical_number(value: float) -> str:
    """Text form of a number that matches how it is written in a CSV: ``25.0`` becomes ``25``."""
    if np.isfinite(value) and float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


def canonical_numeric_texts(texts: np.ndarray) -> np.ndarray:
    """Rewrite the texts that parse as finite numbers in canonical form; leave the others alone."""
    parsed = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=float)
    out = np.array(texts, dtype=object)
    ok = np.isfinite(parsed)
    out[ok] = [canonical_number(v) for v in parsed[ok]]
    return out


def to_arrow(values) -> pa.ChunkedArray:
    """Turn a pandas/polars Series, a pyarrow array or a sequence into a pyarrow ChunkedArray."""
    if isinstance(values, pa.ChunkedArray):
        return values
    if isinstance(values, pa.Array):
        return pa.chunked_array([values])
    if hasattr(values, "to_arrow") and not isinstance(values, pd.Series):
        arr = values.to_arrow()
        return arr if isinstance(arr, pa.ChunkedArray) else pa.chunked_array([arr])
    if not isinstance(values, pd.Series):
        values = pd.Series(values if isinstance(values, np.ndarray) else list(values))
    try:
        return pa.chunked_array([pa.array(values, from_pandas=True)])
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        # Mixed Python objects or integers beyond 64 bits: keep their text form, nulls as nulls.
        text = values.map(lambda v: None if _is_null(v) else str(v))
        return pa.chunked_array([pa.array(text, type=pa.string(), from_pandas=True)])


def _as_text(arr: pa.ChunkedArray) -> pa.ChunkedArray:
    """Text form of a non-numeric, non-text column, spelled as pandas writes it to a CSV.

    Booleans become ``True``/``False``; dates ``2024-03-05``; timestamps ``2024-03-05`` when every
    one is at midnight and ``2024-03-05 14:30:00`` otherwise.
    """
    if pa.types.is_boolean(arr.type):
        return pc.if_else(arr, "True", "False")
    if pa.types.is_date(arr.type):
        return pc.strftime(arr.cast(pa.timestamp("s")), format="%Y-%m-%d")
    if pa.types.is_timestamp(arr.type):
        seconds = arr.cast(pa.timestamp("s", tz=arr.type.tz), safe=False)
        at_midnight = pc.all(pc.equal(pc.cast(seconds, pa.date32()).cast(pa.timestamp("s", tz=arr.type.tz)),
                                      seconds)).as_py() is not False
        return pc.strftime(seconds, format="%Y-%m-%d" if at_midnight else "%Y-%m-%d %H:%M:%S")
    return arr.cast(pa.string())


def _is_null(value) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA


def encode_column(
    name: str,
    values,
    *,
    missing_values: Sequence[str] = (MISSING_LABEL,),
    order: Sequence[str] | None = None,
) -> EncodedColumn:
    """Dictionary-encode one column.

    Args:
        name: column name, used in error messages.
        values: the column (pandas or polars Series, pyarrow array, NumPy array).
        missing_values: cell texts that mean "missing" besides null and NaN.
        order: optional explicit order of the values of an ordinal column; every value that occurs
            must be listed.

    Raises:
        ColumnError: when ``order`` does not list every value of the column.
    """
    arr = to_arrow(values)
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    integer_type = pa.types.is_integer(arr.type)
    numeric_type = integer_type or pa.types.is_floating(arr.type)
    if pa.types.is_floating(arr.type):
        # -0.0 + 0.0 is +0.0, so the two zeros become one category.
        arr = pc.add(arr, pa.scalar(0.0, arr.type))
    elif not numeric_type and not pa.types.is_string(arr.type) and not pa.types.is_large_string(arr.type):
        arr = _as_text(arr)

    # Chunks of a dictionary-encoded ChunkedArray share one dictionary, so combining only
    # concatenates the indices.
    encoded = arr.dictionary_encode()
    encoded = encoded.chunk(0) if encoded.num_chunks == 1 else encoded.combine_chunks()
    raw_codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.intp)
    dictionary = encoded.dictionary
    # Missing markers (NaN, or a missing-value text) are found on the small dictionary, not the rows.
    if numeric_type:
        is_marker = np.isnan(dictionary.to_numpy(zero_copy_only=False).astype(float))
    else:
        markers = sorted(set(missing_values) | {MISSING_LABEL})
        is_marker = pc.is_in(dictionary, value_set=pa.array(markers, dictionary.type))
        is_marker = is_marker.to_numpy(zero_copy_only=False)
    if is_marker.any():
        keep = ~is_marker
        new_index = np.where(keep, np.cumsum(keep) - 1, -1)
        raw_codes = np.where(raw_codes >= 0, new_index[np.maximum(raw_codes, 0)], -1)
        dictionary = dictionary.filter(pa.array(keep))
    has_missing = bool((raw_codes < 0).any())

    sort_key = None
    if integer_type:
        # Labels and order from the integers themselves: floats lose digits beyond 2**53.
        ints = dictionary.to_pylist()
        texts = np.array([str(v) for v in ints], dtype=object)
        numeric = np.array(ints, dtype=float)
        sort_key = dictionary.to_numpy(zero_copy_only=False)
    elif numeric_type:
        numeric = dictionary.to_numpy(zero_copy_only=False).astype(float)
        texts = np.array([canonical_number(v) for v in numeric], dtype=object)
    else:
        texts = np.array(dictionary.to_pylist(), dtype=object)
        numeric = _parse_numeric(texts)

    if order is not None:
        position = {str(v): i for i, v in enumerate(order)}
        unknown = [t for t in texts if t not in position]
        if unknown:
            shown = ", ".join(repr(u) for u in unknown[:5])
            raise ColumnError(f"the order given for column '{name}' does not list {shown}; "
                              "list every value of the column in the order.")
        sort_idx = np.argsort(np.array([position[t] for t in texts]), kind="stable")
        ordered = True
    elif numeric is not None:
        sort_idx = np.argsort(numeric if sort_key is None else sort_key, kind="stable")
        ordered = True
    else:
        sort_idx = np.argsort(texts.astype(str), kind="stable")
        ordered = False

    rank = np.empty(len(texts), dtype=np.int32)
    rank[sort_idx] = np.arange(len(texts), dtype=np.int32)
    labels = texts[sort_idx]
    numeric_sorted = numeric[sort_idx] if numeric is not None else None

    if has_missing:
        missing_code = len(labels)
        codes = np.where(raw_codes < 0, missing_code, rank[np.maximum(raw_codes, 0)]) if len(rank) \
            else np.zeros(len(raw_codes), dtype=np.int32)
        labels = np.append(labels, MISSING_LABEL).astype(object)
        if numeric_sorted is not None:
            numeric_sorted = np.append(numeric_sorted, np.nan)
    else:
        missing_code = None
        codes = rank[raw_codes]
    return EncodedColumn(name, np.ascontiguousarray(codes, dtype=np.int32), labels,
                         numeric_sorted, missing_code, ordered)


def _parse_numeric(texts: np.ndarray) -> np.ndarray | None:
    """Numeric values of the texts when every one is a finite number, else ``None``."""
    if len(texts) == 0:
        return None
    parsed = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=float)
    if not np.all(np.isfinite(parsed)):
        return None
    return parsed


# A column is "numbers with stray text" when at most this many distinct values are not numbers.
STRAY_TEXT_VALUES = 5


def stray_texts(column: EncodedColumn) -> dict[str, int]:
    """The few values that keep a column of numbers from being read as numeric.

    A text column without a given order holds *numbers with stray text* when at least two
    distinct values are finite numbers, at most :data:`STRAY_TEXT_VALUES` distinct values are
    not, and those hold fewer records than the numbers do (``age`` with one ``unknown``). Such a
    column is encoded as text (nominal, in text order), which changes what every algorithm and
    ordered measure does with it, so callers say so.

    Returns:
        Each stray value → its number of records, most frequent first; empty for a numeric
        column, an ordered one, or a text column that is not mostly numbers.
    """
    if column.is_numeric or column.ordered:
        return {}
    present = np.arange(column.cardinality, dtype=np.intp)
    if column.missing_code is not None:
        present = present[present != column.missing_code]
    if len(present) < 3:
        return {}
    # More than the allowed stray values among a few labels rules out a long text column cheaply.
    probe = present[np.linspace(0, len(present) - 1, min(len(present), 64)).astype(np.intp)]
    if (~np.isfinite(_numbers(column.labels[probe]))).sum() > STRAY_TEXT_VALUES:
        return {}
    parsed = _numbers(column.labels[present])
    is_number = np.isfinite(parsed)
    counts = column.counts()[present]
    stray = present[~is_number]
    if not 0 < len(stray) <= STRAY_TEXT_VALUES or is_number.sum() < 2 \
            or counts[~is_number].sum() >= counts[is_number].sum():
        return {}
    order = np.argsort(-counts[~is_number], kind="stable")
    return {str(column.labels[stray[i]]): int(counts[~is_number][i]) for i in order}


def _numbers(texts: np.ndarray) -> np.ndarray:
    """Each text as a number, NaN where it is not one."""
    return pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=float)
