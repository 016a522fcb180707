"""The domain D of the αβ algorithm: the product of the attributes' public domains, never enumerated.

Rastogi, Suciu and Hong (VLDB 2007) publish a view V of an instance I ⊆ D with
``D = D₁ × … × D_l``, the product of the attributes' domains, and the estimator reads D's counts
(``n_D``). Which values D holds must be **public**, fixed before the data is read: the inserted
tuples are drawn from D, so a value that is in D because some record holds it (a race
``Martian``) would appear in V far more often than chance and reveal that record, and ``n_D``
would change with it. A domain therefore comes from a hierarchy's leaves, a declared list of
values, or a range of integers; one taken from the data (:meth:`AttributeDomain.from_data`) is
marked so, and a view built on it is not fit for release (the rule of ``veil dp histogram``'s
categories).

A tuple is an integer id: the mixed-radix number of its attributes' codes (the last attribute
varies fastest, so ids sort as the tuples do). Ids are ``int64``; a domain of 2⁶³ tuples or more
is refused with its size.
"""

from __future__ import annotations

import difflib
import functools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from veil.data.encoding import EncodedColumn, canonical_numeric_texts
from veil.data.hierarchy import MISSING_LEAVES, Hierarchy
from veil.errors import ColumnError, ParameterError

__all__ = ["AttributeDomain", "Domain", "MAX_ATTRIBUTE_VALUES", "MAX_DOMAIN"]

#: the most values one attribute's domain may hold (queries build a mask over them)
MAX_ATTRIBUTE_VALUES = 1 << 24
#: the largest domain whose tuple ids fit in int64
MAX_DOMAIN = (1 << 63) - 1

SOURCES = ("values", "hierarchy", "range", "data")


def _texts(values) -> list[str]:
    return ["" if v is None else str(v) for v in values]


@dataclass(frozen=True, eq=False)
class AttributeDomain:
    """The public domain of one attribute: its values, in a fixed order, and where they come from.

    Build one with :meth:`values`, :meth:`hierarchy`, :meth:`integers` or :meth:`from_data`.

    Attributes:
        name: the attribute (column).
        source: ``values`` (declared), ``hierarchy`` (a hierarchy's leaves), ``range`` (the
            integers ``low``..``high``) or ``data`` (the values found in the data: not public).
        labels: the values as text, in order (``None`` for a range).
        low, high: the bounds of a range (``None`` otherwise).
    """

    name: str
    source: str
    labels: tuple[str, ...] | None = None
    low: int | None = None
    high: int | None = None

    # -- construction -----------------------------------------------------------------------------
    @classmethod
    def values(cls, name: str, values: Sequence, source: str = "values") -> "AttributeDomain":
        """A declared list of values (compared with the data as text, else as numbers).

        Raises:
            ParameterError: no values, a value listed twice, or more than 2²⁴ values.
        """
        labels = _texts(values)
        if not labels:
            raise ParameterError(f"the domain of '{name}' is empty; list at least one value.")
        if len(labels) > MAX_ATTRIBUTE_VALUES:
            raise ParameterError(f"the domain of '{name}' has {len(labels):,} values, more than "
                                 f"{MAX_ATTRIBUTE_VALUES:,}; give a coarser domain.")
        if len(set(labels)) != len(labels):
            seen = pd.Series(labels).duplicated()
            raise ParameterError(f"the domain of '{name}' lists {labels[int(np.argmax(seen))]!r} twice; list each "
                                 "value once.")
        return cls(name, source, tuple(labels))

    @classmethod
    def hierarchy(cls, name: str, hierarchy: Hierarchy) -> "AttributeDomain":
        """The leaves of a generalization hierarchy: the attribute's values, public by construction."""
        return cls.values(name, list(hierarchy.leaves), source="hierarchy")

    @classmethod
    def integers(cls, name: str, low: int, high: int) -> "AttributeDomain":
        """The integers ``low``, ``low + 1``, …, ``high``.

        Raises:
            ParameterError: bounds that are not whole numbers, ``low > high``, or more than 2²⁴ values.
        """
        try:
            lo, hi = _whole(low), _whole(high)
        except (TypeError, ValueError):
            raise ParameterError(f"the range of '{name}' needs whole-number bounds, not {low!r} and {high!r}.") \
                from None
        if lo > hi:
            raise ParameterError(f"the range of '{name}' runs from {lo} to {hi}; give min ≤ max.")
        if hi - lo + 1 > MAX_ATTRIBUTE_VALUES:
            raise ParameterError(f"the range of '{name}' has {hi - lo + 1:,} values, more than "
                                 f"{MAX_ATTRIBUTE_VALUES:,}; give a narrower range.")
        return cls(name, "range", None, lo, hi)

    @classmethod
    def from_data(cls, column: EncodedColumn) -> "AttributeDomain":
        """The values the data holds (the missing value as ``""``). Not public: a view on it is not
        fit for release (see the module notes)."""
        return cls(column.name, "data", tuple(_texts(column.labels)))

    @classmethod
    def from_description(cls, doc: dict) -> "AttributeDomain":
        """Read :meth:`describe`'s output back.

        Raises:
            ParameterError: a malformed description.
        """
        try:
            name, source = str(doc["name"]), str(doc["source"])
            if source == "range":
                return cls.integers(name, doc["min"], doc["max"])
            if source not in SOURCES:
                raise KeyError(source)
            return cls.values(name, list(doc["values"]), source=source)
        except (KeyError, TypeError):
            raise ParameterError("an attribute's domain must give its name, its source and its values (or min and "
                                 "max); give the manifest written with the view.") from None

    # -- what it holds ----------------------------------------------------------------------------
    @property
    def public(self) -> bool:
        """Whether the domain was fixed without reading the data."""
        return self.source != "data"

    @property
    def size(self) -> int:
        return self.high - self.low + 1 if self.source == "range" else len(self.labels)

    @functools.cached_property
    def lookup(self) -> dict[str, int]:
        """Text → code of the listed values (empty for a range, whose values are parsed)."""
        return {} if self.source == "range" else {label: i for i, label in enumerate(self.labels)}

    def label_texts(self, codes: np.ndarray) -> np.ndarray:
        """The text of each code (an object array)."""
        codes = np.asarray(codes, dtype=np.int64)
        if self.source == "range":
            return (codes + self.low).astype(str).astype(object)
        return np.asarray(self.labels, dtype=object)[codes]

    @functools.cached_property
    def numbers(self) -> np.ndarray | None:
        """Each value as a number (NaN for a missing value ``""``/``NULL``), or ``None`` when some
        value is not a number: what ``min``/``max`` conditions of a query compare."""
        if self.source == "range":
            return np.arange(self.low, self.high + 1, dtype=float)
        parsed = pd.to_numeric(pd.Series(self.labels, dtype=object), errors="coerce").to_numpy(dtype=float)
        missing = np.isin(np.asarray(self.labels, dtype=object), MISSING_LEAVES)
        if np.any(~np.isfinite(parsed) & ~missing):
            return None
        return np.where(missing, np.nan, parsed)

    def codes_of_values(self, values: Sequence) -> np.ndarray:
        """The code of each value (−1 for a value outside the domain): by text, else by number
        (``25`` matches ``25.0``); the missing value matches ``""`` or ``NULL``."""
        texts = np.asarray(_texts(values), dtype=object)
        if self.source == "range":
            parsed = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=float)
            inside = np.isfinite(parsed) & (parsed == np.round(parsed)) & (parsed >= self.low) & (parsed <= self.high)
            return np.where(inside, np.where(inside, parsed, self.low) - self.low, -1).astype(np.int64)
        index = pd.Index(self.labels)
        codes = index.get_indexer(texts).astype(np.int64)
        unmatched = codes < 0
        if unmatched.any():
            canonical = pd.Index(canonical_numeric_texts(np.asarray(self.labels, dtype=object)))
            if canonical.is_unique:
                codes[unmatched] = canonical.get_indexer(canonical_numeric_texts(texts[unmatched]))
        missing = next((self.labels.index(m) for m in MISSING_LEAVES if m in self.labels), -1)
        if missing >= 0:
            codes[np.isin(texts, MISSING_LEAVES)] = missing
        return codes

    def codes_of(self, column: EncodedColumn) -> np.ndarray:
        """Per row of an encoded column, its code in this domain (−1: outside it). The matching
        runs over the column's distinct values, then one gather maps the rows."""
        labels = _texts(column.labels)
        if column.missing_code is not None:
            labels[column.missing_code] = ""
        return self.codes_of_values(labels)[column.codes]

    def suggestion(self, value) -> str:
        """``"; did you mean 'x'?"`` for a value outside the domain, or how the domain runs."""
        if self.source == "range":
            return f"; the domain of '{self.name}' is the integers {self.low} to {self.high}."
        close = difflib.get_close_matches(str(value), self.labels, n=1, cutoff=0.6)
        if close:
            return f"; did you mean {close[0]!r}?"
        shown = ", ".join(repr(v) for v in self.labels[:8]) + (", …" if self.size > 8 else "")
        return f"; the domain of '{self.name}' holds {shown}."

    def describe(self) -> dict:
        """JSON-ready: what a reader needs to compute ``n_D`` (published with the view)."""
        out = {"name": self.name, "source": self.source, "size": self.size}
        if self.source == "range":
            out.update(min=self.low, max=self.high)
        else:
            out["values"] = list(self.labels)
        return out


def _whole(value) -> int:
    if isinstance(value, bool):
        raise TypeError
    number = float(value)
    if not math.isfinite(number) or number != int(number):
        raise ValueError
    return int(number)


class Domain:
    """``D = D₁ × … × D_l``: the attributes' domains, their product's size and the tuple ids.

    Args:
        attributes: one :class:`AttributeDomain` per published attribute, in column order.

    Attributes:
        names: the attributes. sizes: each one's number of values. size: ``m = |D|`` (exact).
        strides: the mixed-radix weight of each attribute's code in a tuple id.

    Raises:
        ParameterError: no attributes, an attribute twice, or a product of 2⁶³ tuples or more
            (its size is given).
    """

    def __init__(self, attributes: Sequence[AttributeDomain]):
        self.attributes = tuple(attributes)
        if not self.attributes:
            raise ParameterError("the αβ algorithm needs at least one attribute with a domain.")
        self.names = [a.name for a in self.attributes]
        if len(set(self.names)) != len(self.names):
            raise ParameterError("an attribute is given two domains; give each attribute one.")
        self.sizes = [a.size for a in self.attributes]
        self.size = math.prod(self.sizes)
        if self.size > MAX_DOMAIN:
            raise ParameterError(f"the domain {' × '.join(f'{s:,}' for s in self.sizes)} holds {self.size:,} "
                                 f"tuples (about {float(self.size):.2g}), more than 2^63 − 1; publish fewer "
                                 "attributes or give them smaller domains.")
        strides = [1] * len(self.sizes)
        for j in range(len(self.sizes) - 2, -1, -1):
            strides[j] = strides[j + 1] * self.sizes[j + 1]
        self.strides = np.asarray(strides, dtype=np.int64)

    def __repr__(self) -> str:
        return f"Domain({' × '.join(f'{n}[{s}]' for n, s in zip(self.names, self.sizes))} = {self.size:,})"

    def __len__(self) -> int:
        return len(self.attributes)

    @property
    def public(self) -> bool:
        """Whether every attribute's domain was fixed without reading the data."""
        return all(a.public for a in self.attributes)

    def index(self, name: str) -> int:
        """The position of an attribute.

        Raises:
            ColumnError: the attribute is not in the domain (the closest name is suggested).
        """
        if name in self.names:
            return self.names.index(name)
        close = difflib.get_close_matches(str(name), self.names, n=1, cutoff=0.5)
        hint = f"did you mean '{close[0]}'?" if close else f"its columns are {', '.join(self.names)}."
        raise ColumnError(f"the view has no column '{name}'; {hint}")

    def encode(self, codes: np.ndarray) -> np.ndarray:
        """Tuple ids of a ``rows × l`` code matrix (``int64``)."""
        codes = np.asarray(codes, dtype=np.int64)
        return codes @ self.strides if codes.size else np.zeros(codes.shape[0], dtype=np.int64)

    def decode(self, ids: np.ndarray) -> np.ndarray:
        """The ``rows × l`` code matrix of tuple ids (``int64``)."""
        ids = np.asarray(ids, dtype=np.int64)
        return (ids[:, None] // self.strides[None, :]) % np.asarray(self.sizes, dtype=np.int64)[None, :]

    def describe(self) -> dict:
        """JSON-ready: ``m`` and every attribute's domain."""
        return {"size": self.size, "attributes": [a.describe() for a in self.attributes]}

    @classmethod
    def from_description(cls, doc: dict) -> "Domain":
        """Read :meth:`describe`'s output back.

        Raises:
            ParameterError: a malformed description, or a size that does not match the attributes.
        """
        try:
            domain = cls([AttributeDomain.from_description(a) for a in doc["attributes"]])
        except (KeyError, TypeError):
            raise ParameterError("the domain must list its attributes; give the manifest written with the view.") \
                from None
        if "size" in doc and doc["size"] != domain.size:
            raise ParameterError("the domain's size does not match its attributes; give the manifest written with "
                                 "the view.")
        return domain
