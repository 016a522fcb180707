"""The identity a privacy budget is bound to: a fingerprint of a table's content as veil parses it.

**Private to the curator.** The fingerprint is a public function of the data: whoever sees it and
knows every record but one recovers the missing one by hashing candidates, and whoever knows
every record tells whether a person is in the table. It must never reach anyone who sees DP
outputs. veil never stores, prints or writes it: a ledger keeps it only keyed with the curator's
secret key (:mod:`veil.ledger.binding`), and names a population by the name the curator gives.
Use it the same way — to recognize a table on the curator's side, never as a name.

A budget belongs to a *population*, so its id must not change when the same records are saved
again: a trailing newline, CRLF line ends, a byte-order mark, quoting, the order of the rows and
the order of the columns all leave it unchanged. Any change to a value, a row, a column name or
the number of rows gives another id.

The definition (``veil-data-1``):

1. Every column is encoded as veil reads it for any query (:func:`veil.data.encoding.encode_column`):
   CSV cells are text; a typed column (Parquet, a frame) keeps its type, numbers spelled in
   canonical form (``25.0`` → ``25``), booleans, dates and timestamps as text; a missing cell (an
   empty cell, null, NaN) is the missing category ``""``.
2. Each distinct value's text is hashed with SipHash-2-4 under a fixed public key (pandas'
   ``hash_array``, a C loop over the *distinct* values); a row gets, per column, the hash of its
   value mixed with a hash of the column's name (splitmix64), and the row's hash is the sum of
   those over its columns (so the order of the columns does not matter).
3. The table's digest is SHA-256 of the number of rows, the sorted column names and two sums of
   mixed row hashes modulo 2⁶⁴ (a multiset hash: the order of the rows does not matter, duplicates
   count).

Everything after the encoding is a few vectorized passes over the rows. Two tables that differ
get the same id only by a 64-bit hash collision, and then they merely share one budget (the
cautious way to fail). The same records saved as CSV and as Parquet can get two ids, since a text
``25.5`` and a float 25.5 are different content as parsed; convert a table once, and keep querying
that file.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

import numpy as np
import pandas as pd

from veil.data.encoding import encode_column

__all__ = ["FINGERPRINT_VERSION", "dataset_id", "fingerprint_of_sums", "fingerprint_sums", "table_fingerprint"]

FINGERPRINT_VERSION = "veil-data-1"
_SIPHASH_KEY = "veil-dataset-id1"  # pandas' hash_array takes a 16-character key
_LANE_SALT = np.uint64(0x9E3779B97F4A7C15)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finalizer: a bijective mixing of 64-bit words (wrapping arithmetic)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _name_key(name: str) -> np.uint64:
    return np.uint64(int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "little"))


def table_fingerprint(table, *, missing_values=("",)) -> str:
    """The id of a ``pyarrow.Table``'s content: ``veil-data-1:`` and 64 hex digits (see the module notes).

    Args:
        table: the table as read (``veil.data.io.Table.data``).
        missing_values: cell texts that mean "missing" (veil's default: the empty cell).
    """
    return fingerprint_of_sums(table.column_names, *fingerprint_sums(table, missing_values=missing_values))


def fingerprint_sums(table, *, missing_values=("",)) -> tuple[int, int, int]:
    """``(rows, first, second)``: the number of rows and the two sums modulo 2⁶⁴ of mixed row hashes
    of step 3 (see the module notes). The sums of a table's parts (its record batches, on Spark
    its partitions) add up, modulo 2⁶⁴, to the whole table's, since each row's hash is its own.
    """
    n = table.num_rows
    rows = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):  # wrapping uint64 arithmetic is intended
        for name in sorted(table.column_names):
            col = encode_column(name, table.column(name), missing_values=missing_values)
            labels = np.asarray(col.labels, dtype=object)
            value_hash = pd.util.hash_array(labels, encoding="utf8", hash_key=_SIPHASH_KEY, categorize=False)
            rows += _splitmix64(value_hash.astype(np.uint64)[col.codes] ^ _name_key(name))
        first = int(_splitmix64(rows).sum(dtype=np.uint64))
        second = int(_splitmix64(rows ^ _LANE_SALT).sum(dtype=np.uint64))
    return n, first, second


def fingerprint_of_sums(names, n: int, first: int, second: int) -> str:
    """The id of a table with columns ``names`` from its :func:`fingerprint_sums` (summed modulo 2⁶⁴)."""
    digest = hashlib.sha256()
    digest.update(f"{FINGERPRINT_VERSION}\n{n}\n".encode())
    for name in sorted(names):
        digest.update(name.encode("utf-8") + b"\x00")
    digest.update((first % 2**64).to_bytes(8, "little") + (second % 2**64).to_bytes(8, "little"))
    return f"{FINGERPRINT_VERSION}:{digest.hexdigest()}"


def dataset_id(data: Any, delimiter: str | None = None) -> str:
    """The fingerprint of a table file, a frame, a pyarrow Table or a Dataset (see the module notes:
    unkeyed, so private to the curator; a ledger binds a budget to it keyed).

    A :class:`veil.Dataset` is fingerprinted as its own missing-value texts declare. A table file
    is read as the DP queries read it (a malformed CSV line left out, :mod:`veil.data.lenient`),
    so that a table has the id its queries were charged under.

    Raises:
        DataError: the table cannot be read.
    """
    from veil.data.dataset import Dataset
    from veil.data.io import Table, read_table

    if isinstance(data, Dataset):
        return table_fingerprint(data.table.data, missing_values=data.missing_values)
    if isinstance(data, Table):
        return table_fingerprint(data.data)
    if isinstance(data, (str, os.PathLike)):
        return table_fingerprint(read_table(data, delimiter, allow_empty=True, malformed="drop").data)
    return table_fingerprint(read_table(data).data)
