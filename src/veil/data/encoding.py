"""Dictionary encoding of one column into small integer codes.

Every column veil reasons about is encoded once: each distinct value becomes a code
``0 .. cardinality-1`` and the rows hold codes. Codes follow the value order (numeric order for
numeric columns, a user-given order for ordinal columns, text order otherwise), so ordered
measures such as ordered EMD can read the codes directly.

Missing values (null, NaN, or a cell whose text is one of ``missing_values``) form one category
of their own, labelled ``""`` and placed last. This is veil's single missing-value policy.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pyarrow as pa

from veil.data import arrays, kernels
from veil.errors import ColumnError

MISSING_LABEL = ""
# The decimal numbers pandas.to_numeric reads, once surrounding ASCII whitespace is trimmed: a
# sign, digits with at most one point (at least one digit), and an optional exponent.
_DECIMAL = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"


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
        verbatim: whether ``labels[codes]`` is every row's text exactly as the input held it (a
            text column without nulls, whose only missing marker present is the empty text), so
            that the codes and labels can stand for the column itself.
    """

    name: str
    codes: np.ndarray
    labels: np.ndarray
    numeric: np.ndarray | None
    missing_code: int | None
    ordered: bool
    verbatim: bool = False

    @property
    def cardinality(self) -> int:
        """Number of categories, the missing one included."""
        return len(self.labels)

    @property
    def is_numeric(self) -> bool:
        return self.numeric is not None

    def counts(self) -> np.ndarray:
        """Number of rows holding each category (a new array each call; the rows are counted once)."""
        cached = self.__dict__.get("_counts")
        if cached is None:
            cached = np.bincount(self.codes, minlength=self.cardinality)
            self.__dict__["_counts"] = cached
        return cached.copy()


def factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, distinct)``: each value's position among the distinct values, which are listed in
    order of first appearance, as ``pandas.factorize(sort=False)`` gives them; Arrow's hash table
    is faster and spares loading pandas.

    Args:
        values: a 1-D array of integers, or of strings (``dtype=object``).
    """
    values = np.asarray(values)
    if values.dtype == object:
        encoded = kernels.dictionary_encode(arrays.strings(values))
        return arrays.to_numpy(encoded.indices), arrays.texts(encoded.dictionary)
    encoded = kernels.dictionary_encode(arrays.from_numpy(values))
    return arrays.to_numpy(encoded.indices), arrays.to_numpy(encoded.dictionary)


def canonical_number(value: float) -> str:
    """Text form of a number that matches how it is written in a CSV: ``25.0`` becomes ``25``."""
    if np.isfinite(value) and float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


def parse_numbers(texts) -> np.ndarray:
    """Each text as a float64: the number it spells, NaN where it is not a decimal number.

    The rule is that of ``pandas.to_numeric(errors="coerce")`` for every finite result (leading
    and trailing ASCII whitespace allowed; no digit separators, no non-ASCII digits), and the
    value is the correctly rounded one, as ``float()`` and pandas give it; a spelled-out
    infinity or NaN reads as NaN, and a number too large for a float as ±inf. Texts are
    parsed by Arrow in one vectorized pass, so this needs neither pandas nor a Python loop.

    Args:
        texts: a sequence or array of strings (``None`` and NaN read as NaN), or a pyarrow
            string array. Anything else (numbers among the texts) is handed to pandas.
    """
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if isinstance(texts, pa.Array):
        arr = texts if _is_text(texts.type) else kernels.cast(texts, pa.string())
    else:
        values = np.asarray(texts, dtype=object).ravel()
        if not all(isinstance(v, str) or _is_null(v) for v in values):
            import pandas as pd  # only for cells that are not text

            return pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(dtype=float)
        arr = arrays.strings(None if _is_null(v) else v for v in values)
    out = np.full(len(arr), np.nan)
    if len(arr) == 0:
        return out
    trimmed = kernels.ascii_trim_whitespace(arr)
    matched = kernels.match_substring_regex(trimmed, _DECIMAL)
    number = arrays.to_numpy(matched, null=False) & arrays.valid(matched)
    where = np.flatnonzero(number)
    if len(where):
        out[where] = arrays.to_numpy(kernels.cast(kernels.filter(trimmed, arrays.from_numpy(number)), pa.float64()))
    return out


def canonical_numeric_texts(texts: np.ndarray) -> np.ndarray:
    """Rewrite the texts that parse as finite numbers in canonical form; leave the others alone."""
    parsed = parse_numbers(texts)
    out = np.array(texts, dtype=object)
    ok = np.isfinite(parsed)
    out[ok] = [canonical_number(v) for v in parsed[ok]]
    return out


def _is_pandas(values) -> bool:
    return type(values).__module__.split(".")[0] == "pandas"


def to_arrow(values) -> pa.ChunkedArray:
    """Turn a pandas/polars Series, a pyarrow array or a sequence into a pyarrow ChunkedArray.

    pandas is imported only for a pandas Series (then already loaded) or a plain sequence, whose
    type pandas infers as it always has.
    """
    if isinstance(values, pa.ChunkedArray):
        return values
    if isinstance(values, pa.Array):
        return pa.chunked_array([values])
    if hasattr(values, "to_arrow") and not _is_pandas(values):
        arr = values.to_arrow()
        return arr if isinstance(arr, pa.ChunkedArray) else pa.chunked_array([arr])
    if not isinstance(values, np.ndarray) and not _is_pandas(values):
        import pandas as pd

        values = pd.Series(list(values))
    try:
        return pa.chunked_array([pa.array(values, from_pandas=True)])
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        # Mixed Python objects or integers beyond 64 bits: keep their text form, nulls as nulls.
        text = [None if _is_null(v) else str(v) for v in values]
        return pa.chunked_array([pa.array(text, type=pa.string(), from_pandas=True)])


def _as_text(arr: pa.ChunkedArray) -> pa.ChunkedArray:
    """Text form of a non-numeric, non-text column, spelled as pandas writes it to a CSV.

    Booleans become ``True``/``False``; dates ``2024-03-05``; timestamps ``2024-03-05`` when every
    one is at midnight and ``2024-03-05 14:30:00`` otherwise.
    """
    import pyarrow.compute as pc  # off the path of reading a table (see veil.data.kernels)

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
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return True
    pandas = sys.modules.get("pandas")  # pandas.NA exists only where pandas was loaded
    return pandas is not None and value is pandas.NA


def encode_column(
    name: str,
    values,
    *,
    missing_values: Sequence[str] = (MISSING_LABEL,),
    order: Sequence[str] | None = None,
    dictionary_in_use: bool = False,
) -> EncodedColumn:
    """Dictionary-encode one column.

    A column that arrives dictionary-encoded already (as a CSV read straight into codes, or a
    categorical frame column) keeps its indices: only its dictionary is deduplicated, stripped
    of values no row holds and sorted, so the result is the one its decoded values would give.

    Args:
        name: column name, used in error messages.
        values: the column (pandas or polars Series, pyarrow array, NumPy array).
        missing_values: cell texts that mean "missing" besides null and NaN.
        order: optional explicit order of the values of an ordinal column; every value that occurs
            must be listed.
        dictionary_in_use: the column is dictionary-encoded with only values its rows hold in
            each chunk's dictionary (as veil's readers encode it), so they need not be counted.

    Raises:
        ColumnError: when ``order`` does not list every value of the column.
    """
    arr = to_arrow(values)
    if pa.types.is_dictionary(arr.type) and (not _is_text(arr.type.value_type)
                                             or any(chunk.dictionary.null_count for chunk in arr.chunks)):
        arr = kernels.cast(arr, arr.type.value_type)
    if pa.types.is_dictionary(arr.type):
        indices, slots, dictionary = _present_dictionary(arr, dictionary_in_use)
        value_type = arr.type.value_type
    else:
        value_type = arr.type
        if pa.types.is_floating(value_type):
            # -0.0 + 0.0 is +0.0, so the two zeros become one category.
            arr = kernels.add(arr, arrays.zero(value_type))
        elif not (pa.types.is_integer(value_type) or _is_text(value_type)):
            arr = _as_text(arr)
            value_type = arr.type
        encoded = kernels.dictionary_encode(arr)
        # Chunks of a dictionary-encoded ChunkedArray share one dictionary.
        indices = [chunk.indices for chunk in encoded.chunks]
        dictionary = encoded.chunk(0).dictionary if encoded.num_chunks else pa.nulls(0, value_type)
        slots = [np.arange(len(dictionary))] * len(indices)
    integer_type = pa.types.is_integer(value_type)
    numeric_type = integer_type or pa.types.is_floating(value_type)

    # Missing markers (NaN, or a missing-value text) are found on the small dictionary, not the rows.
    if numeric_type:
        is_marker = np.isnan(arrays.to_numpy(dictionary).astype(float))
    else:
        markers = sorted(set(missing_values) | {MISSING_LABEL})
        is_marker = arrays.to_numpy(kernels.is_in(dictionary, kernels.cast(arrays.strings(markers), dictionary.type)))
    nulls = any(chunk.null_count for chunk in indices)
    has_missing = bool(is_marker.any()) or nulls
    marked = arrays.texts(kernels.filter(dictionary, arrays.from_numpy(is_marker)))
    verbatim = not numeric_type and not nulls and all(text == MISSING_LABEL for text in marked)
    keep = ~is_marker
    if not keep.all():
        dictionary = kernels.filter(dictionary, arrays.from_numpy(keep))

    sort_key = None
    if integer_type:
        # Labels and order from the integers themselves: floats lose digits beyond 2**53.
        texts = arrays.texts(kernels.cast(dictionary, pa.string()))
        sort_key = arrays.to_numpy(dictionary)
        numeric = sort_key.astype(float)
    elif numeric_type:
        numeric = arrays.to_numpy(dictionary).astype(float)
        texts = np.array([canonical_number(v) for v in numeric], dtype=object)
    else:
        texts = arrays.texts(dictionary)
        numeric = _parse_numeric(dictionary)

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
        # Byte order of UTF-8 is code point order; a dictionary holds no value twice.
        sort_idx = arrays.to_numpy(kernels.sort_indices(dictionary))
        ordered = False

    labels = texts[sort_idx]
    numeric_sorted = numeric[sort_idx] if numeric is not None else None
    missing_code = len(labels) if has_missing else None
    # The code of each dictionary value; each chunk reads its codes through its own slots.
    rank = np.empty(len(texts), dtype=np.int32)
    rank[sort_idx] = np.arange(len(texts), dtype=np.int32)
    code_of = np.full(len(is_marker), -1 if missing_code is None else missing_code, dtype=np.int32)
    code_of[np.flatnonzero(keep)] = rank
    codes = _gather(code_of, indices, slots, missing_code)
    if has_missing:
        labels = np.append(labels, MISSING_LABEL).astype(object)
        if numeric_sorted is not None:
            numeric_sorted = np.append(numeric_sorted, np.nan)
    return EncodedColumn(name, codes, labels, numeric_sorted, missing_code, ordered, verbatim)


def _is_text(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _present_dictionary(arr: pa.ChunkedArray, in_use: bool) -> tuple[list[pa.Array], list[np.ndarray], pa.Array]:
    """A dictionary-encoded column's indices, with one dictionary for the whole column: each
    value once, and only values some row holds (the one ``dictionary_encode`` of its values
    gives). Each chunk keeps its indices; ``slots[c][i]`` is the position of its dictionary's
    entry ``i`` in that dictionary. With ``in_use``, every entry is known to be held by a row
    of its chunk, and the rows are not counted to find out."""
    chunks = arr.chunks
    if not chunks:
        return [], [], pa.nulls(0, arr.type.value_type)
    # The chunks' dictionaries are small: encode them together to number the values.
    together = kernels.dictionary_encode(pa.concat_arrays([chunk.dictionary for chunk in chunks]))
    value_of_entry = arrays.to_numpy(together.indices)
    starts = np.cumsum([0] + [len(chunk.dictionary) for chunk in chunks])
    used = np.zeros(len(together.dictionary), dtype=bool)
    indices = []
    for c, chunk in enumerate(chunks):
        entries = len(chunk.dictionary)
        index = kernels.cast(chunk.indices, pa.int32())
        if in_use:
            held = slice(None)
        else:
            held = np.bincount(arrays.to_numpy(index, null=entries), minlength=entries + 1)[:entries] > 0
        used[value_of_entry[starts[c]:starts[c + 1]][held]] = True
        indices.append(index)
    renumber = np.where(used, np.cumsum(used) - 1, -1)  # -1: an entry no row holds
    slots = [renumber[value_of_entry[starts[c]:starts[c + 1]]] for c in range(len(chunks))]
    return indices, slots, kernels.filter(together.dictionary, arrays.from_numpy(used))


def _gather(code_of: np.ndarray, indices: list[pa.Array], slots: list[np.ndarray],
            missing_code: int | None) -> np.ndarray:
    """The code of every row (``int32``): ``code_of[slots[c][index]]`` for the rows of chunk
    ``c`` (-1 in a slot: an entry no row holds), ``missing_code`` for a null index. Arrow's take
    reads the 32-bit indices as they are (NumPy would widen them first)."""
    parts = []
    for index, slot in zip(indices, slots):
        # Each chunk's own lookup, with the slot after its last entry for nulls.
        lookup = np.full(len(slot) + 1, -1 if missing_code is None else missing_code, dtype=np.int32)
        held = np.flatnonzero(slot >= 0)
        lookup[held] = code_of[slot[held]]
        if index.null_count:
            index = arrays.from_numpy(arrays.to_numpy(index, null=len(slot)))
        parts.append(arrays.to_numpy(kernels.take(arrays.from_numpy(lookup), index)))
    if not parts:
        return np.zeros(0, dtype=np.int32)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _parse_numeric(dictionary: pa.Array) -> np.ndarray | None:
    """Numeric values of the texts when every one is a finite number, else ``None``."""
    if len(dictionary) == 0:
        return None
    parsed = parse_numbers(dictionary)
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
    if (~np.isfinite(parse_numbers(column.labels[probe]))).sum() > STRAY_TEXT_VALUES:
        return {}
    parsed = parse_numbers(column.labels[present])
    is_number = np.isfinite(parsed)
    counts = column.counts()[present]
    stray = present[~is_number]
    if not 0 < len(stray) <= STRAY_TEXT_VALUES or is_number.sum() < 2 \
            or counts[~is_number].sum() >= counts[is_number].sum():
        return {}
    order = np.argsort(-counts[~is_number], kind="stable")
    return {str(column.labels[stray[i]]): int(counts[~is_number][i]) for i in order}


def text_codes(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, codes)``: the distinct texts of a published column as a reader sees them (nulls
    and NaN as ``""``, numbers as Arrow prints them) and each row's code."""
    import pyarrow.compute as pc  # off the path of reading a table (see veil.data.kernels)

    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        if pa.types.is_floating(column.type):
            column = pc.if_else(pc.is_nan(column), pa.scalar(None, column.type), column)
        column = column.cast(pa.string())
    column = pc.fill_null(column, "")
    encoded = column.dictionary_encode().combine_chunks()
    labels = np.asarray(encoded.dictionary.to_pylist(), dtype=object)
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    return labels, codes


def published_texts(column: pa.ChunkedArray) -> np.ndarray:
    """A published column's cells as text (nulls as ``""``), one object array."""
    labels, codes = text_codes(column)
    return labels[codes]
