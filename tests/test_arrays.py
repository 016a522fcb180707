"""NumPy ↔ Arrow conversions that do not load pandas (veil.data.arrays)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.data import arrays

FAST = settings(max_examples=60, deadline=None)


@FAST
@given(st.lists(st.one_of(st.integers(-2**31, 2**31 - 1), st.none()), max_size=40), st.integers(0, 5))
def test_integers_with_nulls_and_an_offset_read_as_pyarrow_reads_them(values, start):
    array = pa.array(values, type=pa.int32()).slice(min(start, len(values)))
    expected = [-7 if v is None else v for v in array.to_pylist()]
    assert arrays.to_numpy(array, null=-7).tolist() == expected
    assert arrays.valid(array).tolist() == [v is not None for v in array.to_pylist()]


@FAST
@given(st.lists(st.booleans(), max_size=40), st.integers(0, 9))
def test_booleans_keep_their_bit_offset(values, start):
    array = pa.array(values, type=pa.bool_()).slice(min(start, len(values)))
    assert arrays.to_numpy(array).tolist() == array.to_pylist()
    assert arrays.from_numpy(np.array(values, dtype=bool)).to_pylist() == values


@FAST
@given(st.lists(st.one_of(st.text(max_size=5), st.none()), max_size=20))
def test_strings_round_trip(texts):
    array = arrays.strings(texts)
    assert array.type == pa.string() and array.to_pylist() == texts
    assert array.null_count == sum(t is None for t in texts)
    assert arrays.texts(array).tolist() == texts


def test_numbers_round_trip_and_chunks_concatenate():
    values = np.array([3.5, -0.0, 1e300])
    assert arrays.to_numpy(arrays.from_numpy(values)).tolist() == values.tolist()
    chunked = pa.chunked_array([pa.array([1, 2], pa.int64()), pa.array([3], pa.int64())])
    assert arrays.to_numpy(chunked).tolist() == [1, 2, 3]
    assert arrays.zero(pa.float32()).as_py() == 0.0


def test_nulls_must_be_given_a_value_and_text_is_not_a_number():
    with pytest.raises(ValueError):
        arrays.to_numpy(pa.array([1, None]))
    with pytest.raises(ValueError):
        arrays.to_numpy(pa.array(["a"]))


def test_the_conversions_do_not_load_pandas():
    code = ("import sys, numpy as np, pyarrow.compute as pc\n"
            "from veil.data import arrays\n"
            "a = arrays.from_numpy(np.arange(5))\n"
            "arrays.to_numpy(pc.add(a, arrays.zero(a.type)))\n"
            "arrays.texts(arrays.strings(['x', None]).dictionary_encode().dictionary)\n"
            "assert 'pandas' not in sys.modules, 'pandas was loaded'\n")
    src = Path(arrays.__file__).resolve().parents[2]  # the veil under test
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": str(src)})
