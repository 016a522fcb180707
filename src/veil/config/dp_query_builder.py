"""A query specification (:mod:`veil.config.dp_query_spec`) turned into a grouped query of the Python API.

:func:`build_query` is the one place where the file format meets the API
(:class:`veil.dp.grouped_query.Query`, ``group_by``, ``agg`` and the aggregates of
:mod:`veil.dp.aggregates`); ``veil dp query`` calls it, and so can a Python user holding a
specification. Building reads only the table's schema and spends nothing.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from veil.dp import aggregates as agg_api
from veil.dp.grouped_query import GroupedQuery, Query
from veil.dp.privacy_unit import PrivacyUnit
from veil.dp.partition_selection import PartitionSelection
from veil.config.dp_query_spec import QuerySpec
from veil.errors import ConfigError, ParameterError

__all__ = ["build_query", "evaluate_arguments", "key_value"]


def key_value(value: Any, column: pd.Series) -> Any:
    """A key's value as the grouping column holds it: text for a column of text (a CSV column, where
    ``2020`` in the specification stands for the cell ``2020``), else as given."""
    if pd.api.types.is_numeric_dtype(column.dtype) or isinstance(value, str):
        return value
    return str(value)


def _keys_as_held(columns: list[str], keys: list, frame: pd.DataFrame) -> list[tuple]:
    out = []
    for key in keys:
        values = key if isinstance(key, list) else [key]
        if len(values) != len(columns):
            raise ParameterError(f"every key needs one value per grouping column {columns}, got {values!r}.")
        out.append(tuple(key_value(v, frame[c]) if c in frame.columns else v for c, v in zip(columns, values)))
    return out


_AGGREGATES = {"count": lambda a: agg_api.count(a.get("name", "count")),
               "sum": lambda a: agg_api.sum(a["column"], a["low"], a["high"], a.get("name")),
               "mean": lambda a: agg_api.mean(a["column"], a["low"], a["high"], a.get("name")),
               "variance": lambda a: agg_api.variance(a["column"], a["low"], a["high"], a.get("name")),
               "quantiles": lambda a: agg_api.quantiles(a["column"], a["quantiles"], a["low"], a["high"],
                                                        a.get("bins"), a.get("name"), a.get("method", "auto"))}


def build_query(spec: QuerySpec, table: Any) -> GroupedQuery:
    """The grouped query a specification describes, over ``table`` (pandas, polars or Arrow).

    The mapping, key by key (docs/guides/dp-grouped-queries.md):

    * ``unit: rows`` → :meth:`PrivacyUnit.rows`; ``unit: {person: {...}}`` →
      :meth:`PrivacyUnit.person` with the same bounds;
    * ``group_by.keys`` → ``group_by(columns, keys)``; ``group_by.domains`` →
      ``group_by(columns, domains=...)``; ``group_by.file`` → ``group_by(columns, keys_file=...)``;
      ``group_by.hierarchy`` → ``group_by(column, hierarchy=(file, level))``; ``group_by.private`` →
      ``group_by(columns, private=PartitionSelection(delta=..., threshold=...))``;
      ``group_by.other`` → ``other=True``;
    * each aggregate → :func:`~veil.dp.aggregates.count`, ``sum``, ``mean``, ``variance(column,
      low, high)``, ``quantiles(column, [q, …], low, high, bins=...)``, with its ``name``.

    Raises:
        ConfigError: domains that do not name the grouping columns, a hierarchy for other columns
            than the grouping column, the other bucket with private keys.
        ParameterError, ColumnError: what the API refuses (a bound not finite or reversed, a
            person's bounds that bound nothing, a missing column, a text column aggregated, a
            key listed twice); nothing is read beyond the table's schema, nothing spent.
    """
    doc = spec.document
    unit_doc = doc.get("unit", "rows")
    unit = PrivacyUnit.rows() if unit_doc == "rows" else PrivacyUnit.person(
        **{k: v if k == "id_column" else int(v) for k, v in unit_doc["person"].items()})
    query = Query(table, unit=unit)
    frame = query.frame
    group = doc["group_by"]
    columns = list(group["columns"])
    other = bool(group.get("other", False))
    if "keys" in group:
        grouped = query.group_by(columns, _keys_as_held(columns, group["keys"], frame), other=other)
    elif "domains" in group:
        domains = group["domains"]
        if list(domains) != columns:
            raise ConfigError(f"{spec.name}: group_by.domains must name the grouping columns {columns} in order.")
        grouped = query.group_by(columns, domains={c: [key_value(v, frame[c]) if c in frame.columns else v
                                                       for v in vs] for c, vs in domains.items()}, other=other)
    elif "file" in group:
        grouped = query.group_by(columns, keys_file=spec.path(group["file"]), other=other)
    elif "hierarchy" in group:
        level = group["hierarchy"]
        if columns != [level["column"]]:
            raise ConfigError(f"{spec.name}: group_by.hierarchy groups by its one column; make group_by.columns "
                              f"[{level['column']!r}].")
        grouped = query.group_by(columns, hierarchy=(spec.path(level["file"]), level["level"]), other=other)
    else:
        if other:
            raise ConfigError(f"{spec.name}: group_by.other answers the rows outside public keys, and private keys "
                              "have none; leave other out.")
        private = group["private"]
        grouped = query.group_by(columns, private=PartitionSelection(private["delta"], private.get("threshold")))
    return grouped.agg(*(_AGGREGATES[a["aggregate"]](a) for a in doc["aggregates"]))


def evaluate_arguments(spec: QuerySpec) -> dict:
    """The keyword arguments of :meth:`GroupedQuery.evaluate` a specification gives: ``epsilon``
    or ``rho``, ``alpha`` and ``weights``."""
    doc = spec.document
    price = {"rho": doc["rho"]} if spec.in_rho else {"epsilon": doc["epsilon"]}
    return {**price, "alpha": spec.alpha, "weights": doc.get("weights")}
