"""The public keys of a grouped query: the groups it answers, given before the data is read.

A grouped DP query answers exactly the keys it is given, every one of them (an empty group is
answered like any other), so that which cells appear never depends on the data. The keys come
from public knowledge: a list of key tuples (:meth:`PublicKeys.from_list`) or the cross product
of declared domains (:meth:`PublicKeys.from_domains`), the ``KeySet`` of Tumult Analytics, a
key file (:meth:`PublicKeys.from_file`) or a level of a generalization hierarchy
(:meth:`PublicKeys.from_hierarchy`: rows are grouped by their value generalized to that level).

Rows whose key is not among them are dropped, or, with ``other=True``, answered together in one
more key, the **other bucket**, after the public keys (:meth:`PublicKeys.with_other`). In the
answer its row holds the text ``"other"`` in every key column of text, and a missing value (null)
in a key column of another type (numbers, booleans, dates), which keeps the column's type (whole
numbers become pandas' nullable ``Int64``); it is always the last row. A key set whose keys
already hold that row is refused.
"""

from __future__ import annotations

import csv
import io
import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from veil.errors import ParameterError

__all__ = ["MAX_KEYS", "OTHER", "PublicKeys"]

#: The name of the other bucket in a key column of text.
OTHER = "other"

#: The most keys a grouped query answers (one noisy cell each per aggregate).
MAX_KEYS = 10_000_000


def _columns(columns) -> tuple[str, ...]:
    names = (columns,) if isinstance(columns, str) else tuple(columns)
    if not names or not all(isinstance(c, str) and c for c in names):
        raise ParameterError(f"group_by needs one or more column names, got {columns!r}.")
    if len(set(names)) != len(names):
        raise ParameterError(f"group_by names a column twice: {list(names)!r}.")
    return names


@dataclass(frozen=True)
class PublicKeys:
    """The public key set: the grouping columns and the key tuples, in answer order.

    Attributes:
        columns: the grouping columns.
        keys: one tuple per key, one value per column, no duplicates.
        other: one more key after them, the other bucket, answers the rows whose key is not
            public (see the module notes); ``len`` counts it.
        generalized: for keys from a hierarchy level, ``{column: {leaf text: key index}}``:
            rows are grouped by their value's generalization (:meth:`from_hierarchy`).
    """

    columns: tuple[str, ...]
    keys: tuple[tuple, ...]
    other: bool = False
    generalized: Mapping | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_list(cls, columns, keys: Sequence, *, other: bool = False) -> "PublicKeys":
        """Keys given as a list; with one column a key may be a bare value instead of a 1-tuple.

        Raises:
            ParameterError: no columns, an empty list, a key of the wrong length, or a duplicate.
        """
        names = _columns(columns)
        if isinstance(keys, (str, bytes)) or not isinstance(keys, Sequence) or not len(keys):
            raise ParameterError("the public keys must be a non-empty list of key tuples.")
        out = []
        for key in keys:
            key = (key,) if len(names) == 1 and not isinstance(key, tuple) else key
            if not isinstance(key, tuple) or len(key) != len(names):
                raise ParameterError(f"every key needs one value per grouping column {list(names)}, got {key!r}.")
            out.append(key)
        if len(out) > MAX_KEYS:
            raise ParameterError(f"at most {MAX_KEYS:,} keys are answered, got {len(out):,}.")
        if len(set(out)) != len(out):
            seen, dup = set(), None
            for key in out:
                if key in seen:
                    dup = key
                    break
                seen.add(key)
            raise ParameterError(f"the public keys list {dup!r} twice; give each key once.")
        return cls(names, tuple(out)).with_other(other)

    @classmethod
    def from_domains(cls, domains: Mapping[str, Sequence], *, other: bool = False) -> "PublicKeys":
        """The cross product of declared domains, ``{column: [values]}``, in the order given.

        Raises:
            ParameterError: no columns, an empty domain, or a value listed twice in a domain.
        """
        if not isinstance(domains, Mapping) or not domains:
            raise ParameterError("domains must map each grouping column to its list of public values.")
        names = _columns(list(domains))
        values = []
        for name in names:
            dom = domains[name]
            if isinstance(dom, (str, bytes)) or not isinstance(dom, Sequence) or not len(dom):
                raise ParameterError(f"the domain of '{name}' must be a non-empty list of values.")
            if len(set(dom)) != len(dom):
                raise ParameterError(f"the domain of '{name}' lists a value twice; give each value once.")
            values.append(list(dom))
        size = int(np.prod([len(v) for v in values], dtype=object))
        if size > MAX_KEYS:
            raise ParameterError(f"the domains make {size:,} keys; at most {MAX_KEYS:,} are answered.")
        return cls(names, tuple(itertools.product(*values))).with_other(other)

    @classmethod
    def from_file(cls, path: str | os.PathLike, columns, *, types: Mapping | None = None,
                  other: bool = False) -> "PublicKeys":
        """Keys read from a CSV file whose header names the grouping columns (in any order; one
        row per key), in the file's order.

        A value is read as the type of the table's column (``types``: ``{column: dtype}``, e.g.
        ``frame.dtypes``), so that it matches the rows: whole numbers for an integer column,
        numbers for a float column, ``true``/``false`` (or 1/0) for a boolean one, dates for a
        date column; the text as it is for a column of text (or without a type).

        Raises:
            ParameterError: the file is missing or unreadable, empty (no header or no key), its
                header lacks a grouping column or names another column, a value is not of its
                column's type, or a key is listed twice.
        """
        names = _columns(columns)
        shown = os.fspath(path)
        try:
            from veil.inputs import open_regular_file

            with open_regular_file(path, "key file", ParameterError, keep_os_errors=True) as fh:
                text = fh.read().decode("utf-8-sig")
        except FileNotFoundError:
            raise ParameterError(f"the key file '{shown}' does not exist; give the path of a CSV of the "
                                 "public keys.") from None
        except (OSError, UnicodeDecodeError) as exc:
            reason = ("it is not UTF-8 text" if isinstance(exc, UnicodeDecodeError)
                      else (exc.strerror or str(exc)))
            raise ParameterError(f"the key file '{shown}' cannot be read ({reason}); give a readable CSV "
                                 "file.") from None
        rows = [row for row in csv.reader(io.StringIO(text, newline="")) if row]
        if len(rows) < 2:
            raise ParameterError(f"the key file '{shown}' is empty; give a header naming {list(names)} and one "
                                 "row per key.")
        header = [h.strip() for h in rows[0]]
        for name in names:
            if name not in header:
                raise ParameterError(f"the key file '{shown}' has no column '{name}'; its header must name the "
                                     f"grouping columns {list(names)}.")
        extra = [h for h in header if h not in names]
        if extra or len(set(header)) != len(header):
            which = extra[0] if extra else next(h for h in header if header.count(h) > 1)
            raise ParameterError(f"the key file '{shown}' has a column '{which}' that is not a grouping column or is "
                                 f"named twice; keep one column per grouping column {list(names)}.")
        where = [header.index(name) for name in names]
        types = {} if types is None else types
        keys = []
        for line, row in enumerate(rows[1:], start=2):
            if len(row) != len(header):
                raise ParameterError(f"line {line} of the key file '{shown}' has {len(row)} values, not "
                                     f"{len(header)}; give one value per column.")
            keys.append(tuple(_read_value(row[i], types.get(name), name, shown, line) for i, name in zip(where, names)))
        if len(set(keys)) != len(keys):
            seen = set()
            dup = next(k for k in keys if k in seen or seen.add(k))
            raise ParameterError(f"the key file '{shown}' lists the key {dup!r} twice; give each key once.")
        return cls.from_list(names, keys, other=other)

    @classmethod
    def from_hierarchy(cls, column: str, hierarchy, level: int, *, other: bool = False) -> "PublicKeys":
        """The values of a level of a generalization hierarchy as keys of one column: a row's key
        is its value's generalization at ``level`` (level 0: the values themselves). The keys are
        the level's distinct values in the hierarchy's order; they are public because the
        hierarchy is. A value the hierarchy does not hold takes no key (or the other bucket),
        like any value outside a key set: never an error, which would tell a value of the data.

        Values are matched on their text, numbers on their canonical text (``25`` matches a leaf
        ``25`` or ``25.0``) as :meth:`veil.data.hierarchy.Hierarchy.align` does; a missing value
        takes the leaf ``""`` or ``NULL`` when the hierarchy has one.

        Args:
            column: the grouping column.
            hierarchy: a :class:`~veil.data.hierarchy.Hierarchy`, or the path of its CSV file.
            level: 0 … the hierarchy's height.

        Raises:
            ParameterError: not a hierarchy, or a level outside it.
            HierarchyError: the hierarchy file cannot be read.
        """
        from veil.data.encoding import canonical_numeric_texts
        from veil.data.hierarchy import MISSING_LEAVES, Hierarchy

        names = _columns(column)
        if len(names) != 1:
            raise ParameterError("a hierarchy level gives the keys of one grouping column; group by that column alone.")
        if isinstance(hierarchy, (str, os.PathLike)):
            hierarchy = Hierarchy.read_csv(hierarchy)
        if not isinstance(hierarchy, Hierarchy):
            raise ParameterError(f"hierarchy must be a veil Hierarchy or the path of its file, got "
                                 f"{type(hierarchy).__name__}.")
        if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not 0 <= level < hierarchy.levels:
            raise ParameterError(f"the level must be a whole number from 0 to {hierarchy.height} (the hierarchy's "
                                 f"height), got {level!r}.")
        labels = [str(v) for v in hierarchy.level_labels[level]]
        leaves = [str(v) for v in hierarchy.leaves]
        key_of_leaf = hierarchy.codes[:, level].tolist()  # label index == key index
        table = {"text": dict(zip(leaves, key_of_leaf)), "numeric": {}, "missing": -1, "labels": labels}
        canonical = [str(c) for c in canonical_numeric_texts(np.array(leaves, dtype=object))]
        if len(set(canonical)) == len(canonical):
            table["numeric"] = dict(zip(canonical, key_of_leaf))
        for marker in MISSING_LEAVES:
            if marker in table["text"]:
                table["missing"] = table["text"][marker]
                break
        return replace(cls.from_list(names, labels), generalized={names[0]: table}).with_other(other)

    @classmethod
    def from_levels(cls, columns, levels: Mapping[str, tuple], domains: Mapping[str, Sequence] | None = None, *,
                    other: bool = False) -> "PublicKeys":
        """Keys of several columns: a column of ``levels`` (``{column: (hierarchy, level)}``) takes
        the values of that hierarchy level (its rows grouped by their generalization, as in
        :meth:`from_hierarchy`), every other column its declared domain (``{column: values}``);
        the keys are their cross product in the order of ``columns``.

        Raises:
            ParameterError: a column with neither or both, a level or domain of a column that is
                not grouped, a bad hierarchy or level, an empty domain or one listing a value twice,
                too many keys.
            HierarchyError: a hierarchy file cannot be read.
        """
        names = _columns(columns)
        domains = {} if domains is None else domains
        if not isinstance(levels, Mapping) or not isinstance(domains, Mapping):
            raise ParameterError("levels must map columns to (hierarchy, level) pairs, and domains columns to values.")
        for name in [*levels, *domains]:
            if name not in names:
                raise ParameterError(f"'{name}' has a hierarchy level or a domain but is not a grouping column "
                                     f"{list(names)}.")
        values, generalized = [], {}
        for name in names:
            if (name in levels) == (name in domains):
                raise ParameterError(f"the grouping column '{name}' needs a hierarchy level or a domain, one of them.")
            if name in domains:
                values.append([k[0] for k in cls.from_domains({name: domains[name]}).keys])
                continue
            pair = levels[name]
            if not isinstance(pair, tuple) or len(pair) != 2:
                raise ParameterError(f"the level of '{name}' must be a pair (hierarchy, level), got {pair!r}.")
            one = cls.from_hierarchy(name, *pair)
            values.append([k[0] for k in one.keys])
            generalized[name] = one.generalized[name]
        size = int(np.prod([len(v) for v in values], dtype=object))
        if size > MAX_KEYS:
            raise ParameterError(f"the levels and domains make {size:,} keys; at most {MAX_KEYS:,} are answered.")
        return cls(names, tuple(itertools.product(*values)), generalized=generalized or None).with_other(other)

    def with_other(self, other: bool = True) -> "PublicKeys":
        """These keys with (or without) the other bucket.

        Raises:
            ParameterError: the other bucket's row (see the module notes) is a public key already.
        """
        if not isinstance(other, bool):
            raise ParameterError(f"other must be True or False, got {other!r}.")
        if other and self._other_row() in set(self.keys):
            raise ParameterError(f"a public key is already {self._other_row()!r}, the other bucket's name; rename it "
                                 "or answer without other.")
        return replace(self, other=other)

    def _text_columns(self) -> list[bool]:
        return [all(isinstance(k[j], str) for k in self.keys) for j in range(len(self.columns))]

    def _other_row(self) -> tuple:
        return tuple(OTHER if text else None for text in self._text_columns())

    def __len__(self) -> int:
        return len(self.keys) + self.other

    def index_of_rows(self, frame: pd.DataFrame) -> np.ndarray:
        """The key index of each row of ``frame`` (int64): -1 for a row whose key is not public,
        or the other bucket's index, ``len(keys)``, when there is one."""
        out = self._index(frame)
        if self.other:
            out[out < 0] = len(self.keys)
        return out

    def _index(self, frame: pd.DataFrame) -> np.ndarray:
        if self.generalized and len(self.columns) == 1:
            (name, table), = self.generalized.items()
            return _generalized_index(frame[name], table)
        if self.generalized:  # each generalized column replaced by its label (None: not covered)
            work = frame[list(self.columns)].copy()
            for name, table in self.generalized.items():
                labels = np.array([*table["labels"], None], dtype=object)
                work[name] = labels[_generalized_index(frame[name], table)]
            frame = work
        if self.keys and not any(pd.isna(v) for key in self.keys for v in key):
            return self._index_by_codes(frame)
        if len(self.columns) == 1:
            index = pd.Index([k[0] for k in self.keys], dtype=object)
            rows = pd.Index(frame[self.columns[0]].astype(object))
        else:
            index = pd.MultiIndex.from_tuples(self.keys, names=self.columns)
            rows = pd.MultiIndex.from_frame(frame[list(self.columns)].astype(object))
        return np.asarray(index.get_indexer(rows), dtype=np.int64)

    def _index_by_codes(self, frame: pd.DataFrame) -> np.ndarray:
        """:meth:`_index` by the codes of each column's distinct values (no key value missing): a
        row's and a key's codes combine into one number per column at a time, then match."""
        row_code = np.zeros(len(frame), dtype=np.int64)
        key_code = np.zeros(len(self.keys), dtype=np.int64)
        row_ok = np.ones(len(frame), dtype=bool)
        key_ok = np.ones(len(self.keys), dtype=bool)
        span = 1  # the number of codes so far: a dense table when it stays small
        for j, name in enumerate(self.columns):
            codes, uniques = pd.factorize(frame[name], use_na_sentinel=True)
            values = pd.Index(uniques.astype(object) if hasattr(uniques, "astype") else uniques, dtype=object)
            found = values.get_indexer(pd.Index([k[j] for k in self.keys], dtype=object))
            row_ok &= codes >= 0
            key_ok &= found >= 0
            radix = max(len(values), 1)
            if int(row_code.max(initial=0)) >= 2**62 // radix:  # compact both before they overflow
                both, inverse = np.unique(np.r_[row_code, key_code], return_inverse=True)
                row_code, key_code = inverse[:len(frame)], inverse[len(frame):]
                span = len(both)
            row_code = row_code * radix + np.maximum(codes, 0)
            key_code = key_code * radix + np.maximum(found, 0)
            span *= radix
        out = np.full(len(frame), -1, dtype=np.int64)
        index = np.flatnonzero(key_ok)
        if not len(index):
            return out
        if span <= max(4 * len(frame), 1 << 16):  # a table of every code: one lookup per row
            table = np.full(span, -1, dtype=np.int64)
            table[key_code[index]] = index
            return np.where(row_ok, table[row_code], -1)
        order = np.argsort(key_code[index], kind="stable")
        sorted_codes = key_code[index][order]
        at = np.searchsorted(sorted_codes, row_code)
        hit = row_ok & (at < len(sorted_codes))
        hit[hit] = sorted_codes[at[hit]] == row_code[hit]
        out[hit] = index[order][at[hit]]
        return out

    def frame(self) -> pd.DataFrame:
        """The keys as a frame, one column per grouping column, the other bucket last (module notes)."""
        out = pd.DataFrame(list(self.keys), columns=list(self.columns))
        if not self.other:
            return out
        columns = {}
        for name, text in zip(self.columns, self._text_columns()):
            column = out[name]
            if text:
                columns[name] = pd.concat([column, pd.Series([OTHER])], ignore_index=True)
                continue
            if pd.api.types.is_bool_dtype(column):
                column = column.astype("boolean")
            elif pd.api.types.is_integer_dtype(column):
                column = column.astype("Int64")
            gap = pd.Series([pd.NA], dtype=column.dtype if column.dtype != object else object)
            columns[name] = pd.concat([column, gap], ignore_index=True)
        return pd.DataFrame(columns)


def _generalized_index(values: pd.Series, table: dict) -> np.ndarray:
    """Each row's key from its value's leaf (:meth:`PublicKeys.from_hierarchy`), −1 for none."""
    from veil.data.encoding import canonical_numeric_texts

    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    texts = [str(_plain(u)) for u in uniques]
    found = np.array([table["text"].get(t, -1) for t in texts], dtype=np.int64)
    if table["numeric"] and pd.api.types.is_numeric_dtype(values.dtype) and (found < 0).any():
        canonical = canonical_numeric_texts(np.array(texts, dtype=object))
        found = np.where(found >= 0, found, [table["numeric"].get(str(c), -1) for c in canonical])
    lookup = np.append(found, table["missing"])  # code −1 (missing) reads the last entry
    return lookup[codes].astype(np.int64)


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _read_value(text: str, dtype, column: str, path: str, line: int):
    """A key file's value as the table column's type (:meth:`PublicKeys.from_file`)."""
    if dtype is None:
        return text
    dtype = pd.api.types.pandas_dtype(dtype)
    value = text.strip()
    try:
        if pd.api.types.is_bool_dtype(dtype):
            if value.lower() in ("true", "1"):
                return True
            if value.lower() in ("false", "0"):
                return False
            raise ValueError
        if pd.api.types.is_integer_dtype(dtype):
            number = float(value) if "." in value or "e" in value.lower() else int(value)
            if isinstance(number, float):
                if not number.is_integer():
                    raise ValueError
                number = int(number)
            return number
        if pd.api.types.is_float_dtype(dtype):
            number = float(value)
            if number != number:
                raise ValueError
            return number
        if pd.api.types.is_datetime64_any_dtype(dtype):
            return pd.Timestamp(value)
    except (ValueError, OverflowError):
        raise ParameterError(f"line {line} of the key file '{path}' gives {text!r} for '{column}', whose values "
                             f"are {dtype}; give a value of that type.") from None
    return text
