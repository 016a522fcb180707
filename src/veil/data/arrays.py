"""Moving columns between NumPy and Arrow without loading pandas.

pyarrow's own conversions (``pa.array``, ``Array.to_numpy``, ``pa.scalar`` and every compute
call given a Python value) first look for pandas objects, which imports pandas: 0.2 s that a
command such as ``veil check`` on a CSV file never needs. These helpers go through the arrays'
buffers instead, zero-copy where the layouts agree. They cover what encoding needs: fixed-width
numbers, booleans and text.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pyarrow as pa


def _bits(buffer: pa.Buffer, offset: int, length: int) -> np.ndarray:
    """An Arrow bitmap (least significant bit first) as ``length`` booleans from bit ``offset``."""
    packed = np.frombuffer(buffer, dtype=np.uint8)
    return np.unpackbits(packed, bitorder="little", count=offset + length)[offset:].astype(bool)


def valid(array: pa.Array) -> np.ndarray:
    """Bool per element: whether it is not null."""
    if array.null_count == 0:
        return np.ones(len(array), dtype=bool)
    return _bits(array.buffers()[0], array.offset, len(array))


def to_numpy(array: pa.Array | pa.ChunkedArray, null=None) -> np.ndarray:
    """A numeric or boolean Arrow array as a NumPy array (a view of its buffer when possible).

    Args:
        array: integers, floats or booleans.
        null: the value nulls become; required when the array holds nulls.

    Raises:
        ValueError: the array holds nulls and ``null`` is not given, or its type is not numeric
            or boolean.
    """
    if isinstance(array, pa.ChunkedArray):
        parts = [to_numpy(chunk, null) for chunk in array.chunks]
        if parts:
            return parts[0] if len(parts) == 1 else np.concatenate(parts)
        return np.zeros(0, dtype=array.type.to_pandas_dtype())
    if array.null_count and null is None:
        raise ValueError("the array holds nulls; say what they become")
    kind = array.type
    if pa.types.is_boolean(kind):
        out = _bits(array.buffers()[1], array.offset, len(array))
    elif pa.types.is_integer(kind) or pa.types.is_floating(kind):
        dtype = np.dtype(kind.to_pandas_dtype())
        out = np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * dtype.itemsize)
    else:
        raise ValueError(f"cannot read an array of type {kind} as numbers")
    if array.null_count:
        out = out.copy()
        out[~valid(array)] = null
    return out


def from_numpy(values: np.ndarray) -> pa.Array:
    """A 1-D numeric or boolean NumPy array as an Arrow array without nulls (zero-copy for numbers)."""
    values = np.ascontiguousarray(values)
    if values.dtype == bool:
        data = pa.py_buffer(np.packbits(values, bitorder="little"))
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, data])
    return pa.Array.from_buffers(pa.from_numpy_dtype(values.dtype), len(values), [None, pa.py_buffer(values)])


def strings(texts: Iterable) -> pa.Array:
    """Python strings as an Arrow string array (``None`` becomes null)."""
    texts = list(texts)
    present = np.array([t is not None for t in texts], dtype=bool)
    encoded = [t.encode("utf-8") if t is not None else b"" for t in texts]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    validity = None if present.all() else pa.py_buffer(np.packbits(present, bitorder="little"))
    return pa.Array.from_buffers(pa.string(), len(encoded), [validity, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))],
                                 null_count=int((~present).sum()))


def texts(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The values of an Arrow array as a NumPy object array of Python values (nulls as ``None``)."""
    return np.array(array.to_pylist(), dtype=object) if len(array) else np.zeros(0, dtype=object)


def zero(kind: pa.DataType) -> pa.Scalar:
    """The scalar 0 of a numeric Arrow type."""
    return from_numpy(np.zeros(1, dtype=kind.to_pandas_dtype()))[0]
