"""Arrow's compute functions as encoding calls them, without importing ``pyarrow.compute``.

Importing ``pyarrow.compute`` wraps each of Arrow's few hundred compute functions in a Python
function and parses the documentation of each options class, which takes about as long as
importing NumPy (50 ms and more): longer than ``veil check`` on Adult takes to encode the table
and measure every model. The array methods that reach the kernels (``Array.cast``, ``.filter``,
``.dictionary_encode`` …) import it too. The kernels themselves live in ``pyarrow._compute``,
which loads in a few milliseconds, and which ``pyarrow.compute`` re-exports: each function here
calls the kernel by name with the options ``pyarrow.compute`` would build for the same call, so
the results are the same arrays. Code off the path of reading and encoding a table may use
``pyarrow.compute`` as usual.
"""

from __future__ import annotations

import pyarrow as pa

try:
    from pyarrow._compute import (CastOptions, DictionaryEncodeOptions, FilterOptions, MatchSubstringOptions,
                                  SetLookupOptions, TakeOptions, call_function)
except ImportError:  # a pyarrow that keeps them elsewhere: its public module has them
    from pyarrow.compute import (CastOptions, DictionaryEncodeOptions, FilterOptions,  # type: ignore[no-redef]
                                 MatchSubstringOptions, SetLookupOptions, TakeOptions, call_function)


def dictionary_encode(values: pa.Array | pa.ChunkedArray):
    """``values.dictionary_encode()``: nulls stay nulls (``null_encoding="mask"``)."""
    return call_function("dictionary_encode", [values], DictionaryEncodeOptions("mask"))


def cast(values: pa.Array | pa.ChunkedArray, target_type: pa.DataType):
    """``values.cast(target_type)``, checked (``safe=True``): an overflow or a lossy conversion raises."""
    return call_function("cast", [values], CastOptions.safe(target_type))


def filter(values: pa.Array | pa.ChunkedArray, mask: pa.Array):  # noqa: A001 (Arrow's name)
    """``values.filter(mask)``: the values where ``mask`` is true (a null in it drops the value)."""
    return call_function("filter", [values, mask], FilterOptions("drop"))


def take(values: pa.Array, indices: pa.Array):
    """``pyarrow.compute.take(values, indices)``, bounds checked; a null index gives a null."""
    return call_function("take", [values, indices], TakeOptions(boundscheck=True))


def sort_indices(values: pa.Array):
    """``pyarrow.compute.sort_indices(values)``: the positions that sort ``values`` ascending, nulls
    last, ties in their order (the sort is stable)."""
    return call_function("sort_indices", [values])


def is_in(values: pa.Array, value_set: pa.Array):
    """``pyarrow.compute.is_in(values, value_set=value_set)``: whether each value is in the set."""
    return call_function("is_in", [values], SetLookupOptions(value_set))


def index_in(values: pa.Array, value_set: pa.Array):
    """``pyarrow.compute.index_in(values, value_set=value_set)``: each value's position in the set
    (null where it is not there)."""
    return call_function("index_in", [values], SetLookupOptions(value_set))


def ascii_trim_whitespace(values: pa.Array):
    """``pyarrow.compute.ascii_trim_whitespace(values)``: leading and trailing ASCII whitespace removed."""
    return call_function("ascii_trim_whitespace", [values])


def match_substring_regex(values: pa.Array, pattern: str):
    """``pyarrow.compute.match_substring_regex(values, pattern)``: whether each text matches the
    regular expression (RE2 syntax) somewhere."""
    return call_function("match_substring_regex", [values], MatchSubstringOptions(pattern))


def add(left, right):
    """``pyarrow.compute.add(left, right)``: element-wise sum, overflow unchecked."""
    return call_function("add", [left, right])
