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
    if isinstance(values, pd.Series):
        try:
            return pa.chunked_array([pa.array(values, from_pandas=True)])
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            # Mixed Python objects: keep their text form, and nulls as nulls.
            text = values.map(lambda v: None if _is_null(v) else str(v))
            return pa.chunked_array([pa.array(text, type=pa.string(), from_pandas=True)])
    return pa.chunked_array([pa.array(np.asarray(values), from_pandas=True)])


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
    numeric_type = pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type)
    if not numeric_type and not pa.types.is_string(arr.type) and not pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.string())
    if numeric_type and pa.types.is_floating(arr.type):
        arr = pc.if_else(pc.is_nan(arr), pa.scalar(None, arr.type), arr)
    if not numeric_type and missing_values:
        arr = pc.if_else(pc.is_in(arr, value_set=pa.array(list(missing_values), arr.type)),
                         pa.scalar(None, arr.type), arr)

    encoded = arr.combine_chunks().dictionary_encode()
    raw_codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.intp)
    dictionary = encoded.dictionary
    has_missing = encoded.null_count > 0

    if numeric_type:
        values_num = dictionary.to_numpy(zero_copy_only=False).astype(float)
        texts = np.array([canonical_number(v) for v in values_num], dtype=object)
        numeric = values_num
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
        sort_idx = np.argsort(numeric, kind="stable")
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
