"""The spreadsheet guard: a released CSV file that a spreadsheet opens without running any cell.

A spreadsheet reads a CSV cell that begins with ``=``, ``+``, ``-`` or ``@`` (or a tab or a
carriage return, which some read past) as a formula, and runs it (*CSV injection*; OWASP's
guidance). A release copies text from its input, so such a cell may come from anyone who could
write into the input. With the guard, the release's files are written with ``'`` before every such
text cell, which a spreadsheet shows as text, never runs, and hides.

**The rule.** A text cell, or a column name, is written with ``'`` in front when its first
character is one of ``= + - @``, a tab or a carriage return, or ``'`` itself, unless the whole
cell is a decimal number (``-5``, ``+3.25``, ``-1e3``), which a spreadsheet reads as that number
and not as a formula. Every other cell, and every cell of a numeric column, is written as it is.

The guard changes what the file holds (``-10--6``, an interval of negative ages, is written
``'-10--6``), so the manifest says that the release is guarded (``output.spreadsheet_guard``).
Guarding ``'`` itself makes it reversible: :func:`unguard_table` removes exactly one leading
``'`` from every text cell and name that has one, giving back the table as released, and veil
reads a guarded release that way wherever it reads it with its manifest (the attacks, the
publishing gate, ``veil check --manifest``).
"""

from __future__ import annotations

from typing import Mapping

import pyarrow as pa
import pyarrow.compute as pc

#: What is put before a cell a spreadsheet would run.
GUARD = "'"
#: The first characters that make a spreadsheet read a cell as a formula (and the guard itself).
TRIGGERS = "=+-@\t\r" + GUARD
_STARTS = "^[=+\\-@\t\r']"
_NUMBER = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$"


def guard_text(text: str) -> str:
    """One cell or column name as the guard writes it (see the module's rule)."""
    import re

    if text and text[0] in TRIGGERS and not re.fullmatch(_NUMBER, text):
        return GUARD + text
    return text


def unguard_text(text: str) -> str:
    """One cell or column name as it was before the guard: one leading ``'`` removed."""
    return text[1:] if text.startswith(GUARD) else text


def _is_text(kind: pa.DataType) -> bool:
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _guard_array(array: pa.Array) -> pa.Array:
    if pa.types.is_dictionary(array.type):
        return pa.DictionaryArray.from_arrays(array.indices, _guard_array(array.dictionary))
    hit = pc.and_(pc.match_substring_regex(array, _STARTS), pc.invert(pc.match_substring_regex(array, _NUMBER)))
    joined = pc.binary_join_element_wise(pa.scalar(GUARD, array.type), array, pa.scalar("", array.type))
    return pc.if_else(hit, joined, array)


def _unguard_array(array: pa.Array) -> pa.Array:
    if pa.types.is_dictionary(array.type):
        return pa.DictionaryArray.from_arrays(array.indices, _unguard_array(array.dictionary))
    hit = pc.starts_with(array, GUARD)
    return pc.if_else(hit, pc.utf8_slice_codeunits(array, 1), array)


def _each_text_column(table: pa.Table, change, name_of) -> pa.Table:
    columns = []
    for column in table.columns:
        if _is_text(column.type):
            column = pa.chunked_array([change(chunk) for chunk in column.chunks], type=column.type)
        columns.append(column)
    return pa.table(columns, names=[name_of(name) for name in table.column_names])


def guard_table(table: pa.Table) -> pa.Table:
    """The table as the guard writes it: its text cells and its column names guarded."""
    return _each_text_column(table, _guard_array, guard_text)


def unguard_table(table: pa.Table) -> pa.Table:
    """The table a guarded file holds, as it was released: the inverse of :func:`guard_table`."""
    return _each_text_column(table, _unguard_array, unguard_text)


def is_guarded(manifest: Mapping | None) -> bool:
    """Whether a release's manifest says its files were written with the guard."""
    output = (manifest or {}).get("output") if isinstance(manifest, Mapping) else None
    return isinstance(output, Mapping) and output.get("spreadsheet_guard") is True
