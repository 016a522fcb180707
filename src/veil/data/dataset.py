"""A table with column roles, its encoded columns and its hierarchies.

Roles follow the usual split of statistical disclosure control (and ARX):

* **identifying** columns (names, record numbers) are dropped from every release;
* **quasi-identifying** columns can be linked to outside data and are generalized;
* **sensitive** columns are what an adversary must not learn; privacy models constrain them;
* **insensitive** columns (every other column) are released unchanged.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
from typing import Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa

from veil.data import arrays
from veil.data.encoding import EncodedColumn, encode_column, stray_texts
from veil.data.hierarchy import Generalization, Hierarchy
from veil.data.io import CANDIDATE_DELIMITERS, Table, read_table
from veil.errors import ColumnError, DataError
from veil.parallel import map_threads


def _as_list(value: str | Iterable[str] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return list(value)


def read_weights(column, name: str) -> np.ndarray:
    """A column of sampling weights as ``float64``, checked: every row a positive finite number.

    Args:
        column: a pyarrow (chunked) array.
        name: the column's name, for the message.

    Raises:
        DataError: the column is not numeric, or some row holds no weight, zero, a negative
            number, NaN or infinity. The message names the column and how many rows are wrong,
            never a value.
    """
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_dictionary(kind):
        column = column.cast(kind.value_type)
        kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        try:
            column = pc.cast(pc.utf8_trim_whitespace(column), pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise DataError(f"the weight column '{name}' must hold numbers, and it holds text; give the sampling "
                            "weights as numbers.") from None
    elif pa.types.is_null(kind):
        column = column.cast(pa.float64())
    elif not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind)):
        raise DataError(f"the weight column '{name}' must hold numbers, not {kind}; give the sampling weights as "
                        "numbers.")
    values = np.asarray(column.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
    with np.errstate(invalid="ignore"):
        bad = ~(np.isfinite(values) & (values > 0))
    wrong = int(np.count_nonzero(bad))
    if wrong:
        rows = "1 row holds" if wrong == 1 else f"{wrong:,} rows hold"
        raise DataError(f"the weight column '{name}' must hold a positive number on every row; {rows} none, zero, a "
                        "negative number or a number that is not finite.")
    values.flags.writeable = False
    return values


class Dataset:
    """A table ready for privacy analysis.

    Args:
        data: a pandas or polars DataFrame, a pyarrow Table, or a path to a CSV/Parquet file.
        quasi_identifiers: the quasi-identifying columns (at least one).
        sensitive: the sensitive columns.
        identifying: columns dropped on release.
        hierarchies: per column, a :class:`Hierarchy` or the path of an ARX hierarchy CSV.
        orders: per column, the order of its values (makes a text column ordinal).
        missing_values: cell texts that mean "missing" besides null/NaN (default: the empty cell).
        delimiter: CSV delimiter when ``data`` is a CSV path (sniffed when ``None``).
        name: the table's name, which a release's manifest and report show (default: the file's
            name without its extension when ``data`` is a path, else ``None``).
        weight: the column of sampling weights, when the table is a sample of a population: each
            record stands for that many people (the inverse of its inclusion probability). Risk
            measures estimate population frequencies from it (:mod:`veil.risk.frequencies`).
            Without it every record weighs 1 and the sample is taken as the population.
        strata: the column(s) of the sampling strata: population frequencies are estimated
            within each stratum.
        household: the column of household (cluster) identifiers, for the household risk.

    Every other column is insensitive (weight, strata and household columns too: they are
    released unchanged). A column has one role. The input is never modified.

    Attributes:
        name: the table's name, or ``None``.
        weight, household: the sampling-weight and household columns, or ``None``.
        strata: the strata columns (a list, empty without strata).
        row_weights: ``None`` here: every row is one record. A table summarized by its distinct
            rows (:class:`veil.engines.frequency.FrequencyDataset`, what a Spark engine collects)
            sets it to the number of records each row stands for, and the classes, the models,
            the metrics and the DP queries count with it.

    Raises:
        DataError: the table cannot be read or has no records.
        ColumnError: a named column does not exist (the closest name is suggested), a column has
            two roles, or no quasi-identifier is given.
        DataError: the weight column is not numeric, or some row holds no weight, zero, a negative
            number, NaN or infinity.
        HierarchyError: a hierarchy is malformed or does not cover its column's values.
    """

    def __init__(
        self,
        data,
        *,
        quasi_identifiers: str | Sequence[str] | None = None,
        sensitive: str | Sequence[str] | None = None,
        identifying: str | Sequence[str] | None = None,
        hierarchies: Mapping[str, Hierarchy | str | os.PathLike] | None = None,
        orders: Mapping[str, Sequence[str]] | None = None,
        missing_values: Sequence[str] = ("",),
        delimiter: str | None = None,
        name: str | None = None,
        weight: str | None = None,
        strata: str | Sequence[str] | None = None,
        household: str | None = None,
    ):
        self.row_weights: np.ndarray | None = None
        self.weight = weight
        self.strata = _as_list(strata)
        self.household = household
        self._sampling_weights: np.ndarray | None = None
        if name is None and isinstance(data, (str, os.PathLike)):
            name = os.path.splitext(os.path.basename(os.fspath(data)))[0] or None
        self.name = name
        self.quasi_identifiers = _as_list(quasi_identifiers)
        self.sensitive = _as_list(sensitive)
        self.identifying = _as_list(identifying)
        # The columns every analysis encodes; a CSV file's are read straight into codes.
        encoded = list(dict.fromkeys(self.quasi_identifiers + self.sensitive))
        self.table: Table = data if isinstance(data, Table) else read_table(data, delimiter, dictionary=encoded)
        # Columns this Dataset read as codes hold every value of their dictionaries.
        self._read_as_codes = frozenset() if isinstance(data, Table) else frozenset(encoded)
        self._column_set = frozenset(self.table.columns)
        self.missing_values = tuple(missing_values)
        self.orders = {k: list(v) for k, v in (orders or {}).items()}
        self._check_roles()
        if self.weight is not None:  # checked now, so that bad weights are refused before any work
            self._sampling_weights = read_weights(self.table.data.column(self.weight), self.weight)
        self._encoded: dict[str, EncodedColumn] = {}
        self.hierarchies: dict[str, Hierarchy] = {}
        self.generalizations: dict[str, Generalization] = {}
        for name in self.orders:
            self._require_column(name, "order")
        for name in hierarchies or {}:
            self._require_column(name, "hierarchy")
        self._encode(encoded)
        for name, hierarchy in (hierarchies or {}).items():
            if not isinstance(hierarchy, Hierarchy):
                hierarchy = Hierarchy.read_csv(hierarchy)
            self.hierarchies[name] = hierarchy
            self.generalizations[name] = hierarchy.align(self.column(name))

    @property
    def columns(self) -> list[str]:
        return self.table.columns

    @property
    def insensitive(self) -> list[str]:
        used = set(self.quasi_identifiers) | set(self.sensitive) | set(self.identifying)
        return [c for c in self.columns if c not in used]

    @property
    def num_rows(self) -> int:
        return self.table.num_rows

    def __len__(self) -> int:
        return self.num_rows

    def __repr__(self) -> str:
        return (f"Dataset(rows={self.num_rows}, quasi_identifiers={self.quasi_identifiers}, "
                f"sensitive={self.sensitive})")

    def _require_column(self, name: str, what: str) -> None:
        if name not in self._column_set:
            delimiter = self._likely_delimiter(name)
            close = difflib.get_close_matches(name, self.columns, n=1, cutoff=0.5)
            if delimiter is not None:
                shown = "tab" if delimiter == "\t" else delimiter
                hint = (f"; the header was split at {self.table.delimiter!r} but seems to be delimited by "
                        f"{delimiter!r}: give that delimiter (--delimiter {shown!r}, or 'delimiter:' in a "
                        "configuration).")
            elif close:
                hint = f"; did you mean '{close[0]}'?"
            else:
                hint = f"; the columns are {', '.join(self.columns)}."
            raise ColumnError(f"the {what} column '{name}' does not exist{hint}")

    def _likely_delimiter(self, name: str) -> str | None:
        """The delimiter a CSV header seems to use when ``name`` is a piece of one of its columns."""
        if self.table.kind != "csv":
            return None
        for delimiter in CANDIDATE_DELIMITERS:
            if delimiter != self.table.delimiter and any(name in column.split(delimiter) for column in self.columns):
                return delimiter
        return None

    def stray_text_notes(self) -> list[str]:
        """One sentence for each quasi-identifier or sensitive column that holds numbers but for a
        few text values, and is therefore read as a text column (see
        :func:`veil.data.encoding.stray_texts`)."""
        notes = []
        for role, names in (("quasi-identifier", self.quasi_identifiers), ("sensitive column", self.sensitive)):
            for name in names:
                stray = stray_texts(self.column(name))
                if stray:
                    shown = ", ".join(f"{value!r} ({count:,} record{'s' if count != 1 else ''})"
                                      for value, count in stray.items())
                    notes.append(f"{role} '{name}' holds numbers but is read as text because of {shown}; "
                                 "correct those values or mark them missing to have it read as numbers.")
        return notes

    def _check_roles(self) -> None:
        if not self.quasi_identifiers:
            raise ColumnError("no quasi-identifier was given; name at least one column that can be "
                              "linked to outside data.")
        seen: dict[str, str] = {}
        survey = (("weight", [self.weight] if self.weight is not None else []), ("strata", self.strata),
                  ("household", [self.household] if self.household is not None else []))
        for role, names in (("quasi-identifier", self.quasi_identifiers), ("sensitive", self.sensitive),
                            ("identifying", self.identifying), *survey):
            for name in names:
                if role in ("weight", "strata", "household") and not isinstance(name, str):
                    raise ColumnError(f"the {role} column is named by a text, not {type(name).__name__}.")
                self._require_column(name, role)
                if name in seen:
                    if seen[name] == role:
                        raise ColumnError(f"column '{name}' is listed twice as {role}; list it once.")
                    raise ColumnError(f"column '{name}' is given two roles, {seen[name]} and {role}; "
                                      "give each column one role.")
                seen[name] = role

    @property
    def sampling_weights(self) -> np.ndarray | None:
        """The sampling weight of every row (``float64``), or ``None`` without a weight column.

        Read from the column once (when the dataset is built) and cached; a read-only array.

        Raises:
            DataError: the column is not numeric, or a row holds no weight, zero, a negative
                number, NaN or infinity (every weight must be a positive number).
        """
        if self.weight is None:
            return None
        if self._sampling_weights is None:
            self._sampling_weights = read_weights(self.table.data.column(self.weight), self.weight)
        return self._sampling_weights

    def column(self, name: str) -> EncodedColumn:
        """The dictionary-encoded column, encoded on first use and cached."""
        if name not in self._encoded:
            self._require_column(name, "requested")
            self._encode([name])
        return self._encoded[name]

    def _encode(self, names: Sequence[str]) -> None:
        """Encode the columns, one per thread (Arrow's hashing and NumPy's gathers release the GIL)."""
        def encode(name: str) -> EncodedColumn:
            return encode_column(name, self.table.data.column(name), missing_values=self.missing_values,
                                 order=self.orders.get(name), dictionary_in_use=name in self._read_as_codes)

        self._encoded.update(zip(names, map_threads(encode, names)))
        self._share_codes(names)

    def _share_codes(self, names: Sequence[str]) -> None:
        """Let the table hold the codes of the columns read straight into codes, instead of the
        reader's own indices: the same texts (the column is verbatim: its labels at its codes are
        its cells), and memory for one set of codes rather than two."""
        data = self.table.data
        for name in names:
            column = self._encoded[name]
            if column.verbatim and pa.types.is_dictionary(data.schema.field(name).type):
                # The codes index the labels by construction: no need to check them row by row.
                shared = pa.DictionaryArray.from_arrays(arrays.from_numpy(column.codes), arrays.strings(column.labels),
                                                        safe=False)
                data = data.set_column(data.schema.get_field_index(name), name, pa.chunked_array([shared]))
        if data is not self.table.data:
            self.table = dataclasses.replace(self.table, data=data)
            # Arrow's allocator keeps what the reader's indices freed; give it back, since what
            # comes next (NumPy's arrays) cannot use it.
            pa.default_memory_pool().release_unused()

    def _generalization(self, name: str, level: int) -> Generalization | None:
        """The column's hierarchy when ``level`` > 0 (``None`` at level 0), after checking the level.

        Raises:
            ColumnError: a negative level, a level above 0 on a column without a hierarchy, or a
                level beyond the hierarchy's height.
        """
        self._require_column(name, "requested")
        if level < 0:
            raise ColumnError(f"the level of column '{name}' must be 0 or more, not {level}.")
        if level == 0:
            return None
        gen = self.generalizations.get(name)
        if gen is None:
            raise ColumnError(f"column '{name}' has no hierarchy, so it cannot be generalized to level {level}.")
        if level >= gen.levels:
            raise ColumnError(f"column '{name}' has levels 0 to {gen.height}, not {level}.")
        return gen

    def generalized_codes(self, name: str, level: int = 0) -> np.ndarray:
        """Codes of column ``name`` generalized to ``level`` of its hierarchy (one gather).

        Raises:
            ColumnError: the level is not one of the column's levels.
        """
        gen = self._generalization(name, level)
        codes = self.column(name).codes
        return codes if gen is None else gen.generalize(codes, level)

    def radix(self, name: str, level: int = 0) -> int:
        """Number of distinct codes column ``name`` can take at ``level``."""
        gen = self._generalization(name, level)
        return self.column(name).cardinality if gen is None else gen.radix(level)

    def labels(self, name: str, level: int = 0) -> np.ndarray:
        """Labels of the codes of column ``name`` at ``level``."""
        gen = self._generalization(name, level)
        return self.column(name).labels if gen is None else gen.labels[level]
