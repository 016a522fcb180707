"""Counting queries over a domain D, and counting them on a set of tuples without enumerating D.

A counting query (Rastogi, Suciu and Hong, VLDB 2007, Section 2) counts the tuples satisfying a
predicate: ``SELECT count(*) FROM I WHERE …``. Here a predicate is a conjunction of one condition
per attribute: the attribute's value is one of a set of values (``country = Canada``,
``race in {White, Black}``) or lies between two numbers (``30 ≤ age ≤ 39``); attributes without a
condition are free. Two counts make the αβ estimate:

* ``n_D``, the tuples of D that satisfy it: the product over attributes of the values each
  condition allows (an exact integer; D is never enumerated);
* ``n_V`` (or ``Q(I)``), the tuples of a view (an instance) that satisfy it.

Many queries are counted together (:class:`ResolvedQueries`): the queries that constrain the same
attributes form a group whose conditions become one boolean matrix per attribute (queries ×
values, built by one scatter or one comparison), and ``n_D`` of the whole group is one product of
their row counts. The group's tuples make one marginal count table over those attributes, and
each query's ``n_V`` is that table contracted with its masks (a matrix product), so no query
reads the tuples again. A marginal too large to hold densely is kept as the distinct cells the
tuples occupy.
"""

from __future__ import annotations

import itertools
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from veil.anonymize.alphabeta.domain import AttributeDomain, Domain
from veil.errors import DataError, ParameterError
from veil.inputs import read_text

__all__ = ["Between", "CountingQuery", "ResolvedQueries", "count_matching", "random_queries", "read_queries"]

_DENSE_CELLS = 1 << 22      # marginals up to this many cells are held densely
_CHUNK_CELLS = 1 << 24      # queries × cells evaluated at once for a sparse marginal


@dataclass(frozen=True)
class Between:
    """A numeric condition ``low ≤ value ≤ high`` (either bound may be ``None``: unbounded)."""

    low: float | None = None
    high: float | None = None

    def text(self) -> str:
        if self.low is None:
            return f"≤ {self.high:g}"
        if self.high is None:
            return f"≥ {self.low:g}"
        return f"in [{self.low:g}, {self.high:g}]"


class CountingQuery:
    """``SELECT count(*) WHERE A₁ ∈ S₁ AND A₂ ∈ S₂ …``.

    Args:
        conditions: attribute → a value, a list of values, a :class:`Between`, or a mapping
            ``{min: …, max: …}`` (either may be left out).
        name: what to call the query in outputs (default: its text).

    Raises:
        ParameterError: a condition that is an empty list, a mapping with other keys than min and
            max, or bounds that are not numbers.
    """

    def __init__(self, conditions: Mapping[str, object], name: str | None = None):
        if not isinstance(conditions, Mapping):
            raise ParameterError(f"a counting query is a mapping of columns to values, not {conditions!r}.")
        self.conditions: dict[str, tuple[str, ...] | Between] = {}
        for column, condition in conditions.items():
            self.conditions[str(column)] = _condition(str(column), condition)
        self.name = name

    def __repr__(self) -> str:
        return f"CountingQuery({self.text()})"

    def text(self) -> str:
        """The predicate as text, e.g. ``sex = Male AND age in [30, 39]``."""
        if self.name:
            return self.name
        parts = []
        for column, condition in self.conditions.items():
            if isinstance(condition, Between):
                parts.append(f"{column} {condition.text()}")
            elif len(condition) == 1:
                parts.append(f"{column} = {condition[0]}")
            else:
                parts.append(f"{column} in {{{', '.join(condition)}}}")
        return " AND ".join(parts) if parts else "all tuples"


def _condition(column: str, condition) -> tuple[str, ...] | Between:
    if isinstance(condition, Between):
        return condition
    if isinstance(condition, Mapping):
        extra = set(condition) - {"min", "max"}
        if extra or not condition:
            raise ParameterError(f"the condition on '{column}' takes min and max, not {', '.join(map(str, extra))}."
                                 if extra else f"the condition on '{column}' is empty; give min, max or values.")
        try:
            bounds = [None if condition.get(b) is None else float(condition[b]) for b in ("min", "max")]
        except (TypeError, ValueError):
            raise ParameterError(f"the min and max of '{column}' must be numbers.") from None
        if bounds[0] is not None and bounds[1] is not None and bounds[0] > bounds[1]:
            raise ParameterError(f"the condition on '{column}' has min {bounds[0]:g} above max {bounds[1]:g}.")
        return Between(*bounds)
    if isinstance(condition, (list, tuple, set, frozenset, np.ndarray)):
        values = tuple("" if v is None else str(v) for v in condition)
        if not values:
            raise ParameterError(f"the condition on '{column}' lists no values; list at least one.")
        return values
    return ("" if condition is None else str(condition),)


def _codes(attribute: AttributeDomain, values: tuple[str, ...]) -> list[int]:
    """The codes of listed values: by text, else by number (``25`` is ``25.0``) or as the missing
    value's leaf.

    Raises:
        ParameterError: a value outside the domain (the closest value is suggested).
    """
    codes = list(map(attribute.lookup.get, values, itertools.repeat(-1)))
    if -1 in codes:
        unmatched = [i for i, c in enumerate(codes) if c < 0]
        for i, code in zip(unmatched, attribute.codes_of_values([values[i] for i in unmatched])):
            if code < 0:
                raise ParameterError(f"the query asks for {attribute.name} = {values[i]!r}, which is not in the "
                                     f"domain of '{attribute.name}'{attribute.suggestion(values[i])}")
            codes[i] = int(code)
    return codes


class _Group:
    """The queries that constrain one set of attributes, collected before their masks are built:
    per attribute, the listed codes (as query row, code pairs) and the numeric bounds."""

    def __init__(self, attributes: tuple[int, ...]):
        self.attributes = attributes
        self.members: list[int] = []
        self.listed = [([], []) for _ in attributes]          # (rows, codes)
        self.ranges = [([], [], []) for _ in attributes]      # (rows, lows, highs)

    def add(self, index: int, conditions: list, domain: Domain) -> None:
        row = len(self.members)
        self.members.append(index)
        for p, condition in enumerate(conditions):
            attribute = domain.attributes[self.attributes[p]]
            if isinstance(condition, Between):
                if attribute.numbers is None:
                    raise ParameterError(f"column '{attribute.name}' holds values that are not numbers, so min/max "
                                         "do not apply; list the values instead.")
                rows, lows, highs = self.ranges[p]
                rows.append(row)
                lows.append(-np.inf if condition.low is None else condition.low)
                highs.append(np.inf if condition.high is None else condition.high)
            else:
                codes = _codes(attribute, condition)
                rows, listed = self.listed[p]
                rows.extend([row] * len(codes))
                listed.extend(codes)

    def masks(self, domain: Domain) -> list[np.ndarray]:
        """Per attribute a ``queries × values`` boolean matrix: one scatter for the listed values,
        one comparison for the ranges (a missing value, NaN, is in no range)."""
        out = []
        for p, j in enumerate(self.attributes):
            mask = np.zeros((len(self.members), domain.sizes[j]), dtype=bool)
            rows, codes = self.listed[p]
            mask[rows, codes] = True
            rows, lows, highs = self.ranges[p]
            if rows:
                numbers = domain.attributes[j].numbers[None, :]
                mask[rows] = (numbers >= np.asarray(lows)[:, None]) & (numbers <= np.asarray(highs)[:, None])
            out.append(mask)
        return out


class ResolvedQueries:
    """Counting queries resolved against a domain, grouped by the attributes they constrain: the
    form :func:`count_matching` reads.

    Args:
        queries: the queries (or mappings, see :class:`CountingQuery`).
        domain: the domain D.

    Attributes:
        groups: ``(attributes, query indices, masks)`` per set of constrained attributes, with one
            ``queries × values`` boolean matrix per attribute.
        domain_counts: ``n_D`` of each query (``int64``, exact since n_D ≤ |D| < 2⁶³).

    Raises:
        ColumnError: a condition on a column the domain does not have.
        ParameterError: a malformed query, a value outside its column's domain (the closest value
            is suggested), or a min/max condition on a column whose values are not all numbers.
    """

    def __init__(self, queries: Sequence[CountingQuery | Mapping], domain: Domain):
        self.domain = domain
        self.queries = [q if isinstance(q, CountingQuery) else CountingQuery(q) for q in queries]
        collected: dict[tuple[int, ...], _Group] = {}
        for i, query in enumerate(self.queries):
            constrained = sorted((domain.index(column), condition) for column, condition in query.conditions.items())
            attributes = tuple(j for j, _ in constrained)
            group = collected.get(attributes)
            if group is None:
                group = collected[attributes] = _Group(attributes)
            group.add(i, [condition for _, condition in constrained], domain)
        self.groups = [(g.attributes, np.asarray(g.members, dtype=np.int64), g.masks(domain))
                       for g in collected.values()]
        self.domain_counts = np.empty(len(self.queries), dtype=np.int64)
        for attributes, index, masks in self.groups:
            count = np.full(len(index), domain.size, dtype=np.int64)
            for mask in masks:
                # dividing first keeps every intermediate product below |D|
                count = count // mask.shape[1] * np.count_nonzero(mask, axis=1)
            self.domain_counts[index] = count

    def __len__(self) -> int:
        return len(self.queries)


def count_matching(codes: np.ndarray, queries: ResolvedQueries) -> np.ndarray:
    """How many rows of a ``rows × l`` code matrix (of the queries' domain) satisfy each query
    (``int64``). Queries on the same attributes share one marginal table (see the module notes).
    """
    codes = np.asarray(codes, dtype=np.int64)
    sizes = queries.domain.sizes
    out = np.zeros(len(queries), dtype=np.int64)
    for attributes, index, masks in queries.groups:
        if not attributes:
            out[index] = codes.shape[0]
            continue
        shape = [int(sizes[j]) for j in attributes]
        cells = math.prod(shape)
        local = np.ones(len(shape), dtype=np.int64)
        for p in range(len(shape) - 2, -1, -1):
            local[p] = local[p + 1] * shape[p + 1]
        key = codes[:, list(attributes)] @ local if codes.shape[0] else np.zeros(0, dtype=np.int64)
        if cells <= _DENSE_CELLS:
            out[index] = _contract_dense(np.bincount(key, minlength=cells).astype(float), shape, masks)
        else:
            out[index] = _contract_sparse(key, local, shape, masks)
    return out


def _contract_dense(marginal: np.ndarray, shape: list[int], masks: list[np.ndarray]) -> np.ndarray:
    """Σ over cells of marginal × Π_j mask_j[q, cell_j], for every query q: one matrix product for
    the first attribute, then one contraction per further attribute. Counts stay exact in float64
    (they are integers below 2⁵³)."""
    q = masks[0].shape[0]
    table = masks[0].astype(float) @ marginal.reshape(shape[0], -1)
    for p in range(1, len(shape)):
        table = np.einsum("qjr,qj->qr", table.reshape(q, shape[p], -1), masks[p].astype(float))
    return np.rint(table.reshape(q)).astype(np.int64)


def _contract_sparse(key: np.ndarray, local: np.ndarray, shape: list[int], masks: list[np.ndarray]) -> np.ndarray:
    """As :func:`_contract_dense`, over the distinct cells the rows occupy, in chunks of queries."""
    cells, counts = np.unique(key, return_counts=True)
    cell_codes = [(cells // local[p]) % shape[p] for p in range(len(shape))]
    q = masks[0].shape[0]
    out = np.empty(q, dtype=np.int64)
    step = max(1, _CHUNK_CELLS // max(1, len(cells)))
    for start in range(0, q, step):
        chunk = slice(start, start + step)
        hit = masks[0][chunk][:, cell_codes[0]]
        for p in range(1, len(shape)):
            hit &= masks[p][chunk][:, cell_codes[p]]
        out[chunk] = hit.astype(np.int64) @ counts
    return out


def random_queries(domain: Domain, count: int, rng: np.random.Generator, max_attributes: int = 3) -> list[CountingQuery]:
    """A workload of random counting queries over ``domain``.

    Each query constrains 1 to ``max_attributes`` attributes drawn uniformly; an attribute whose
    values are all numbers gets a random interval of them (``min``/``max``), any other a random
    non-empty subset of its values (its size uniform).

    Raises:
        ParameterError: ``count`` negative or ``max_attributes`` below 1.
    """
    if count < 0 or max_attributes < 1:
        raise ParameterError("a workload needs a count ≥ 0 and at least one attribute per query.")
    numbers = [a.numbers for a in domain.attributes]
    numeric = [n is not None and bool(np.isfinite(n).all()) for n in numbers]
    top = min(max_attributes, len(domain))
    queries = []
    for _ in range(int(count)):
        chosen = np.sort(rng.choice(len(domain), size=int(rng.integers(1, top + 1)), replace=False))
        conditions: dict[str, object] = {}
        for j in chosen:
            attribute, size = domain.attributes[j], domain.sizes[j]
            if numeric[j]:
                low, high = np.sort(rng.integers(0, size, size=2))
                conditions[attribute.name] = Between(float(numbers[j][low]), float(numbers[j][high]))
            else:
                picked = rng.choice(size, size=int(rng.integers(1, size + 1)), replace=False)
                conditions[attribute.name] = list(attribute.label_texts(np.sort(picked)))
        queries.append(CountingQuery(conditions))
    return queries


def read_queries(path: str | os.PathLike) -> list[CountingQuery]:
    """Counting queries from a YAML (or JSON) file: a list whose items are mappings
    ``{column: value | [values] | {min: …, max: …}}``, or ``{name: …, where: {…}}`` to name one.

    Raises:
        DataError: the file cannot be read or parsed, or is not such a list.
        ParameterError: a malformed condition.
    """
    import yaml

    path = Path(path)
    try:
        doc = yaml.safe_load(read_text(path, "the query file"))  # a regular file, of a document's size
    except yaml.YAMLError:
        raise DataError(f"cannot read the query file {str(path)!r}: it is not valid YAML or JSON.") from None
    if not isinstance(doc, list) or not doc:
        raise DataError(f"the query file {str(path)!r} must hold a non-empty list of queries, each a mapping of "
                        "columns to values.")
    queries = []
    for i, item in enumerate(doc, start=1):
        if not isinstance(item, dict):
            raise DataError(f"query {i} of {str(path)!r} is not a mapping of columns to values.")
        if set(item) <= {"name", "where"} and isinstance(item.get("where"), dict):
            queries.append(CountingQuery(item["where"], name=None if item.get("name") is None else str(item["name"])))
        else:
            queries.append(CountingQuery(item))
    return queries
