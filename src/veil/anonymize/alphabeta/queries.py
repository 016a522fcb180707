"""Counting queries over a domain D, and counting them on a set of tuples without enumerating D.

A counting query (Rastogi, Suciu and Hong, VLDB 2007, Section 2) counts the tuples satisfying a
predicate: ``SELECT count(*) FROM I WHERE …``. Here a predicate is a conjunction of one condition
per attribute: the attribute's value is one of a set of values (``country = Canada``,
``race in {White, Black}``) or lies between two numbers (``30 ≤ age ≤ 39``); attributes without a
condition are free. Two counts make the αβ estimate:

* ``n_D``, the tuples of D that satisfy it: the product over attributes of the values each
  condition allows (an exact integer; D is never enumerated);
* ``n_V`` (or ``Q(I)``), the tuples of a view (an instance) that satisfy it.

Many queries are counted together: the queries that constrain the same attributes share one
marginal count table of the tuples over those attributes, and each query's count is that table
contracted with its conditions' masks (a matrix product), so no query reads the tuples again.
A marginal too large to hold densely is kept as the distinct cells the tuples occupy.
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

__all__ = ["Between", "CountingQuery", "ResolvedQuery", "count_matching", "random_queries", "read_queries"]

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


@dataclass(frozen=True)
class ResolvedQuery:
    """A query against a domain: the attributes it constrains, each one's mask over its values,
    and ``n_D`` (exact)."""

    attributes: tuple[int, ...]
    masks: tuple[np.ndarray, ...]
    domain_count: int


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

    def resolve(self, domain: Domain) -> ResolvedQuery:
        """The query against ``domain``: masks and ``n_D``.

        Raises:
            ColumnError: a condition on a column the domain does not have.
            ParameterError: a value outside the column's domain (the closest value is suggested),
                or a min/max condition on a column whose values are not all numbers.
        """
        constrained = sorted((domain.index(column), condition) for column, condition in self.conditions.items())
        attributes = tuple(j for j, _ in constrained)
        masks = tuple(_mask(domain.attributes[j], condition) for j, condition in constrained)
        count = domain.size
        for j, mask in zip(attributes, masks):
            count = count // domain.sizes[j] * int(np.count_nonzero(mask))
        return ResolvedQuery(attributes, masks, count)


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


def _mask(attribute: AttributeDomain, condition: tuple[str, ...] | Between) -> np.ndarray:
    if isinstance(condition, Between):
        numbers = attribute.numbers
        if numbers is None:
            raise ParameterError(f"column '{attribute.name}' holds values that are not numbers, so min/max do not "
                                 "apply; list the values instead.")
        mask = np.isfinite(numbers)             # a missing value (NaN) is never in a range
        if condition.low is not None:
            mask &= numbers >= condition.low
        if condition.high is not None:
            mask &= numbers <= condition.high
        return mask
    codes = np.fromiter(map(attribute.lookup.get, condition, itertools.repeat(-1)), dtype=np.int64,
                        count=len(condition))
    if (codes < 0).any():
        missing = [v for v, c in zip(condition, codes) if c < 0]
        codes[codes < 0] = attribute.codes_of_values(missing)
        if (codes < 0).any():
            value = condition[int(np.flatnonzero(codes < 0)[0])]
            raise ParameterError(f"the query asks for {attribute.name} = {value!r}, which is not in the domain of "
                                 f"'{attribute.name}'{attribute.suggestion(value)}")
    mask = np.zeros(attribute.size, dtype=bool)
    mask[codes] = True
    return mask


def count_matching(codes: np.ndarray, sizes: Sequence[int], queries: Sequence[ResolvedQuery]) -> np.ndarray:
    """How many rows of a ``rows × l`` code matrix satisfy each query (``int64``).

    Queries on the same attributes share one marginal table (see the module notes).
    """
    codes = np.asarray(codes, dtype=np.int64)
    out = np.zeros(len(queries), dtype=np.int64)
    groups: dict[tuple[int, ...], list[int]] = {}
    for i, query in enumerate(queries):
        groups.setdefault(query.attributes, []).append(i)
    for attributes, members in groups.items():
        index = np.asarray(members, dtype=np.int64)
        if not attributes:
            out[index] = codes.shape[0]
            continue
        masks = [np.stack([queries[i].masks[p] for i in members]) for p in range(len(attributes))]
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
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"the query file {str(path)!r} does not exist; check the path.") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        reason = "it is not valid YAML or JSON" if isinstance(exc, yaml.YAMLError) else str(exc)
        raise DataError(f"cannot read the query file {str(path)!r}: {reason}.") from None
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
