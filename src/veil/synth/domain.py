"""The public domain of a table to synthesize: every column's values, declared before the data is seen.

A differentially private synthesizer may only use what the privacy guarantee covers, and the set
of values a column takes is itself information about the table: a category that occurs once
reveals that someone holds it. So every column's domain is *public*: categories declared by the
user or taken from the leaves of a generalization hierarchy, numeric columns cut at declared bin
edges. A domain read from the table itself (:meth:`SynthDomain.from_data`) is allowed only when the
user asks for it, and marks the output as not fit for release.

A table is encoded as an ``(n, d)`` ``int64`` matrix of codes: column ``j`` holds codes
``0 .. size_j - 1`` of the ``j``-th column of the domain. Bins are half-open ``[lo, hi)`` except
the last, which is closed ``[lo, hi]`` so that bins cut between a column's declared minimum and
maximum cover both.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from veil.data.encoding import canonical_number
from veil.data.hierarchy import Hierarchy
from veil.errors import VeilError

SOURCES = ("declared", "hierarchy", "bins", "data")


class DomainError(VeilError):
    """A column's public domain is malformed or does not cover the table's values."""


def _label(lo: float, hi: float, last: bool) -> str:
    return f"[{canonical_number(lo)}, {canonical_number(hi)}{']' if last else ')'}"


@dataclass(frozen=True)
class ColumnDomain:
    """One column's public domain: categories, or numeric bins.

    Attributes:
        name: the column's name.
        values: the public labels in code order: the categories, or for bins their labels
            ``"[lo, hi)"`` (the last bin ``"[lo, hi]"``).
        edges: for a binned numeric column the ``len(values) + 1`` increasing bin edges, else None.
        integer: a numeric column of integers (decoding draws integers).
        source: ``"declared"`` (categories given by the user), ``"hierarchy"`` (leaves of a
            generalization hierarchy), ``"bins"`` (declared bin edges) or ``"data"`` (read from the
            table: not fit for release).

    Raises:
        DomainError: no values, a value listed twice, edges that do not match the values or do
            not increase, an integer bin holding no integer, or an unknown source.
    """

    name: str
    values: tuple[str, ...]
    edges: tuple[float, ...] | None = None
    integer: bool = False
    source: str = "declared"

    def __post_init__(self):
        if self.source not in SOURCES:
            raise DomainError(f"column {self.name!r} has the unknown domain source {self.source!r}; "
                              f"use one of {', '.join(SOURCES)}.")
        if not self.values:
            raise DomainError(f"column {self.name!r} has an empty domain; declare at least one value.")
        if len(set(self.values)) != len(self.values):
            raise DomainError(f"column {self.name!r} declares a value twice; list each value once.")
        if self.edges is not None:
            e = self.edges
            if len(e) != len(self.values) + 1:
                raise DomainError(f"column {self.name!r} has {len(e)} bin edges for {len(self.values)} bins; "
                                  "give one edge more than bins.")
            if not all(math.isfinite(x) for x in e) or any(b <= a for a, b in zip(e, e[1:])):
                raise DomainError(f"column {self.name!r} has bin edges that are not finite and strictly "
                                  "increasing; give increasing numbers.")
            if self.integer:
                for i in range(len(e) - 1):
                    if len(self._integers(i)) == 0:
                        raise DomainError(f"column {self.name!r} is integer but its bin "
                                          f"{self.values[i]} holds no integer; widen it.")
        elif self.integer:
            raise DomainError(f"column {self.name!r} is marked integer but has no bins; give bin edges.")

    @classmethod
    def categorical(cls, name: str, values: Sequence, source: str = "declared") -> "ColumnDomain":
        """A column of categories, each value given as its text label."""
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise DomainError(f"column {name!r} needs its categories as a list; give a list of values.")
        return cls(str(name), tuple(_text(v) for v in values), None, False, source)

    @classmethod
    def binned(cls, name: str, edges: Sequence[float], integer: bool = False, source: str = "bins") -> "ColumnDomain":
        """A numeric column cut at ``edges`` (``[e0, e1), [e1, e2), ..., [e_{k-1}, e_k]``)."""
        if isinstance(edges, (str, bytes)) or not isinstance(edges, Sequence) or len(edges) < 2:
            raise DomainError(f"column {name!r} needs at least two bin edges; give a list of increasing numbers.")
        try:
            e = tuple(float(x) for x in edges)
        except (TypeError, ValueError):
            raise DomainError(f"column {name!r} has a bin edge that is not a number; give numbers.") from None
        labels = tuple(_label(e[i], e[i + 1], i == len(e) - 2) for i in range(len(e) - 1))
        if len(set(labels)) != len(labels):
            raise DomainError(f"column {name!r} has bin edges too close to tell apart; space them further.")
        return cls(str(name), labels, e, bool(integer), source)

    @property
    def size(self) -> int:
        """The number of codes (categories or bins)."""
        return len(self.values)

    @property
    def kind(self) -> str:
        """``"bins"`` for a numeric column, else ``"categories"``."""
        return "bins" if self.edges is not None else "categories"

    def _integers(self, i: int) -> np.ndarray:
        lo, hi = self.edges[i], self.edges[i + 1]
        last = i == len(self.edges) - 2
        top = math.floor(hi) if last else math.ceil(hi) - 1
        return np.arange(math.ceil(lo), top + 1, dtype=np.int64)

    def encode(self, column: pd.Series) -> np.ndarray:
        """The codes of a column's values.

        Raises:
            DomainError: a missing value, a value outside the categories, a non-numeric value or
                one outside the bins of a numeric column.
        """
        if column.isna().any():
            raise DomainError(f"column {self.name!r} has missing values, which its domain does not cover; "
                              "fill or drop them first.")
        if self.edges is None:
            codes = pd.Index(list(self.values), dtype=object).get_indexer(_texts(column)).astype(np.int64)
            if (codes < 0).any():
                raise DomainError(f"column {self.name!r} has values outside its {self.size} declared categories; "
                                  "add them to the domain or clean the table.")
            return codes
        x = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        if np.isnan(x).any():
            raise DomainError(f"column {self.name!r} has values that are not numbers but its domain is "
                              "numeric bins; clean the column or declare it as categories.")
        e = np.asarray(self.edges)
        if (x < e[0]).any() or (x > e[-1]).any():
            raise DomainError(f"column {self.name!r} has values outside its bins "
                              f"[{canonical_number(e[0])}, {canonical_number(e[-1])}]; widen the bins.")
        return np.minimum(np.searchsorted(e, x, side="right") - 1, self.size - 1).astype(np.int64)

    def decode(self, codes: np.ndarray, rng: np.random.Generator, numeric: str = "uniform") -> np.ndarray:
        """The values of ``codes``: labels, or for bins with ``numeric="uniform"`` a value drawn
        uniformly in each bin (an integer when the column is integer)."""
        if self.edges is None or numeric == "label":
            return np.asarray(self.values, dtype=object)[codes]
        e = np.asarray(self.edges)
        if not self.integer:
            u = rng.random(len(codes))
            return e[codes] + u * (e[codes + 1] - e[codes])
        out = np.empty(len(codes), dtype=np.int64)
        for i in range(self.size):
            where = np.flatnonzero(codes == i)
            if len(where):
                choices = self._integers(i)
                out[where] = choices[rng.integers(0, len(choices), size=len(where))]
        return out

    def describe(self) -> dict:
        """The column's domain for a manifest (public: declared values, never the table's)."""
        out = {"name": self.name, "kind": self.kind}
        if self.edges is None:
            out["values"] = list(self.values)
        else:
            out["edges"] = [int(x) if float(x).is_integer() and abs(x) < 2**53 else float(x) for x in self.edges]
            out["integer"] = self.integer
            out["labels"] = list(self.values)
        out["source"] = self.source
        return out


def _text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return canonical_number(float(value)) if isinstance(value, (float, np.floating)) else str(int(value))
    return str(value)


def _texts(column: pd.Series) -> np.ndarray:
    """The column's values as text labels (numbers written as in a CSV: ``25.0`` as ``25``)."""
    if pd.api.types.is_float_dtype(column.dtype):
        return np.array([canonical_number(v) for v in column.to_numpy(dtype=float)], dtype=object)
    if pd.api.types.is_bool_dtype(column.dtype) or pd.api.types.is_integer_dtype(column.dtype):
        return column.astype(str).to_numpy(dtype=object)
    return np.array([_text(v) for v in column.to_numpy(dtype=object)], dtype=object)


@dataclass(frozen=True)
class SynthDomain:
    """The public domain of a table: its columns in code order.

    Raises:
        DomainError: no columns, or a column named twice.
    """

    columns: tuple[ColumnDomain, ...]

    def __post_init__(self):
        object.__setattr__(self, "columns", tuple(self.columns))
        if not self.columns:
            raise DomainError("the domain has no columns; declare at least one column.")
        names = [c.name for c in self.columns]
        for name in names:
            if names.count(name) > 1:
                raise DomainError(f"the domain declares column {name!r} twice; declare each column once.")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(c.size for c in self.columns)

    @property
    def sizes(self) -> dict[str, int]:
        return {c.name: c.size for c in self.columns}

    @property
    def fit_for_release(self) -> bool:
        """False when any column's domain was read from the table."""
        return all(c.source != "data" for c in self.columns)

    def __getitem__(self, name: str) -> ColumnDomain:
        for c in self.columns:
            if c.name == name:
                return c
        raise DomainError(f"the domain has no column {name!r}; declare it.")

    def encode(self, table: pd.DataFrame) -> np.ndarray:
        """The ``(n, d)`` ``int64`` codes of the domain's columns of ``table`` (other columns ignored).

        Raises:
            DomainError: a column of the domain is missing from the table, or holds a missing
                value or a value its domain does not cover.
        """
        out = np.empty((len(table), len(self.columns)), dtype=np.int64)
        for j, c in enumerate(self.columns):
            if c.name not in table.columns:
                raise DomainError(f"the table has no column {c.name!r}, which the domain declares; "
                                  "add it or remove it from the domain.")
            out[:, j] = c.encode(table[c.name])
        return out

    def decode(self, codes: np.ndarray, rng: np.random.Generator, numeric: str = "uniform") -> pd.DataFrame:
        """The table of ``codes``: categories as their labels; binned columns as a value drawn
        uniformly in the bin (an integer for an integer column), or with ``numeric="label"`` as
        the bin's label.

        Raises:
            DomainError: ``codes`` is not an ``(n, d)`` integer matrix of codes within the domain,
                or ``numeric`` is neither ``"uniform"`` nor ``"label"``.
        """
        if numeric not in ("uniform", "label"):
            raise DomainError(f"numeric={numeric!r} is not a way to decode bins; use 'uniform' or 'label'.")
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != len(self.columns) or not np.issubdtype(codes.dtype, np.integer):
            raise DomainError(f"the codes must be an integer matrix with {len(self.columns)} columns; "
                              "give one column per column of the domain.")
        if len(codes) and ((codes < 0).any() or (codes >= np.asarray(self.shape)).any()):
            raise DomainError("the codes hold a value outside the domain's sizes; give codes 0 .. size - 1.")
        return pd.DataFrame({c.name: c.decode(codes[:, j].astype(np.int64), rng, numeric)
                             for j, c in enumerate(self.columns)}, columns=list(self.names))

    def describe(self) -> list[dict]:
        """The domain for a manifest: per column its name, kind, values or edges, and source."""
        return [c.describe() for c in self.columns]

    @classmethod
    def declared(cls, spec: Mapping[str, Sequence | Mapping]) -> "SynthDomain":
        """A domain from a declaration: per column a list of categories (``{"sex": ["F", "M"]}``),
        or bins (``{"age": {"bins": [15, 20, ..., 90], "integer": True}}``).

        Raises:
            DomainError: a column's declaration is neither, or is malformed.
        """
        if not isinstance(spec, Mapping):
            raise DomainError("the domain declaration must map each column to its categories or bins; give a mapping.")
        columns = []
        for name, entry in spec.items():
            if isinstance(entry, Mapping):
                unknown = set(entry) - {"bins", "integer"}
                if "bins" not in entry or unknown:
                    raise DomainError(f"column {name!r} declares bins with keys {sorted(map(str, entry))}; "
                                      "give 'bins' (a list of edges) and optionally 'integer'.")
                if not isinstance(entry.get("integer", False), bool):
                    raise DomainError(f"column {name!r} has a non-boolean 'integer'; give true or false.")
                columns.append(ColumnDomain.binned(name, entry["bins"], entry.get("integer", False)))
            else:
                columns.append(ColumnDomain.categorical(name, entry))
        return cls(tuple(columns))

    @classmethod
    def from_hierarchies(cls, hierarchies: Mapping[str, "Hierarchy | str | os.PathLike"],
                         columns: Sequence[str] | None = None) -> "SynthDomain":
        """A domain whose categories are the leaves (level 0) of generalization hierarchies, in
        the hierarchy's row order.

        Args:
            hierarchies: per column a :class:`veil.data.hierarchy.Hierarchy`, or the path of an
                ARX hierarchy CSV.
            columns: the columns in code order (default: the mapping's order).

        Raises:
            DomainError: a column without a hierarchy.
            HierarchyError, DataError: a hierarchy file cannot be read.
        """
        names = list(hierarchies) if columns is None else list(columns)
        out = []
        for name in names:
            if name not in hierarchies:
                raise DomainError(f"column {name!r} has no hierarchy; give one or declare its categories.")
            h = hierarchies[name]
            h = h if isinstance(h, Hierarchy) else Hierarchy.read_csv(h)
            out.append(ColumnDomain.categorical(name, [str(v) for v in h.leaves], source="hierarchy"))
        return cls(tuple(out))

    @classmethod
    def from_data(cls, table: pd.DataFrame, columns: Sequence[str] | None = None,
                  bins: Mapping[str, int] | None = None) -> "SynthDomain":
        """A domain read from the table itself (``source="data"``): NOT fit for release, since
        the values a column takes are information about the table; only when the user asks.

        Categories are the sorted distinct values (numbers in numeric order); a column in
        ``bins`` gets that many equal-width bins between its minimum and maximum (integer when
        every value is).

        Raises:
            DomainError: an unknown column, a bin count below 1, a binned column that is not
                numeric, or a missing value.
        """
        names = list(table.columns) if columns is None else list(columns)
        bins = dict(bins or {})
        for name in list(names) + list(bins):
            if name not in table.columns:
                raise DomainError(f"the table has no column {name!r}; name a column of the table.")
        out = []
        for name in names:
            col = table[name]
            if col.isna().any():
                raise DomainError(f"column {name!r} has missing values; fill or drop them first.")
            if name in bins:
                k = bins[name]
                if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
                    raise DomainError(f"column {name!r} asks for {k!r} bins; give a whole number of at least 1.")
                x = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
                if np.isnan(x).any() or len(x) == 0:
                    raise DomainError(f"column {name!r} is not numeric but bins were asked for it; "
                                      "take its categories instead.")
                lo, hi = float(x.min()), float(x.max())
                integer = bool(np.all(x == np.round(x)))
                if hi == lo:
                    hi = lo + 1
                if integer:
                    k = int(min(k, max(1, hi - lo)))   # bins at least 1 wide: each holds an integer
                edges = list(np.linspace(lo, hi, int(k) + 1))
                edges[0], edges[-1] = lo, hi
                out.append(ColumnDomain.binned(name, edges, integer, source="data"))
            else:
                if pd.api.types.is_numeric_dtype(col.dtype) and not pd.api.types.is_bool_dtype(col.dtype):
                    values = [_text(v) for v in np.unique(col.to_numpy())]
                else:
                    values = sorted(set(_texts(col)))
                out.append(ColumnDomain.categorical(name, values, source="data"))
        return cls(tuple(out))
