"""The query specification file of ``veil dp query``: a grouped DP query written as YAML or JSON.

A specification says which table to read (optional: the command's DATA argument names it too),
what a release protects (``unit``), the groups and where their keys come from (``group_by``), the
aggregates with their public bounds, the price (``epsilon`` for pure ε-DP, or ``rho`` for ρ-zCDP),
the level of the intervals (``alpha``), how the price is split (``weights``), the format of the
answers (``output``) and where the query runs (``engine``, as in an anonymization configuration)::

    unit: {person: {id_column: person, max_rows: 4}}
    group_by: {columns: [region], keys: [north, south, east]}
    aggregates:
      - {aggregate: count}
      - {aggregate: mean, column: income, low: 0, high: 5000}
    epsilon: 1.0

:data:`QUERY_SCHEMA` is the format's one description: a JSON Schema (draft 2020-12) that veil
ships as ``veil/resources/dp-query.schema.json`` for editors (``veil dp query-schema`` prints it)
and that :func:`load_query_spec` checks every file against, with a small reader of the part of
JSON Schema it uses (:func:`check_document`), so that the file format and the checks cannot
disagree; a mistake is one sentence naming the file and the key. What JSON Schema cannot say (a
low bound below the high one, a person's bounds that together bound nothing) the query API checks
when the query is built (:func:`veil.config.dp_query_builder.build_query`), before the data is read.
"""

from __future__ import annotations

import difflib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from veil.config.yaml_nodes import compose
from veil.errors import ConfigError
from veil.inputs import read_text

__all__ = ["QUERY_SCHEMA", "QuerySpec", "SHIPPED_QUERY_SCHEMA", "check_document", "load_query_spec",
           "parse_query_spec", "query_schema_text"]

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SHIPPED_QUERY_SCHEMA = Path(__file__).resolve().parent.parent / "resources" / "dp-query.schema.json"

_NAME = {"type": "string", "minLength": 1, "description": "a column of the table"}
_FINITE = {"type": "number", "description": "a finite number"}
_POSITIVE_WHOLE = {"type": "integer", "minimum": 1}
_KEY_VALUE = {"type": ["string", "number", "boolean"], "description": "one value of a grouping column"}
_BOUNDS = {"low": {**_FINITE, "description": "the public lower clamping bound (never from the data)"},
           "high": {**_FINITE, "description": "the public upper clamping bound, above low"}}
_AGG_NAME = {"type": "string", "minLength": 1, "description": "the answer's column (default: e.g. 'sum(income)')"}


def _aggregate(kind: str, about: str, properties: dict, required: list[str]) -> dict:
    return {"title": kind, "description": about, "type": "object", "additionalProperties": False,
            "required": ["aggregate", *required],
            "properties": {"aggregate": {"const": kind}, **properties, "name": _AGG_NAME}}


_BOUNDED = {"column": _NAME, **_BOUNDS}

#: The JSON Schema of a query specification: the one description of the format.
QUERY_SCHEMA: dict = {
    "$schema": JSON_SCHEMA_DIALECT,
    "title": "veil DP query specification",
    "description": "A grouped query under differential privacy for `veil dp query`: the table, the privacy unit, "
                   "the groups and their keys, the aggregates with public bounds, the price (epsilon or rho), the "
                   "intervals' level and the answers' format.",
    "type": "object",
    "additionalProperties": False,
    "required": ["group_by", "aggregates"],
    "oneOf": [{"required": ["epsilon"]}, {"required": ["rho"]}],
    "properties": {
        "table": {"type": "string", "minLength": 1,
                  "description": "the CSV or Parquet table, relative to the specification's folder (the command's "
                                 "DATA argument, when given, is read instead)"},
        "unit": {
            "description": "what a release protects: 'rows' (one row added or removed), or a person named by an "
                           "ID column, with the bounds every query enforces on each person's rows",
            "default": "rows",
            "oneOf": [
                {"title": "'rows'", "const": "rows"},
                {"title": "{person: {id_column, max_rows, max_groups, max_rows_per_group}}", "type": "object",
                 "additionalProperties": False, "required": ["person"],
                 "properties": {"person": {
                     "type": "object", "additionalProperties": False, "required": ["id_column"],
                     "properties": {
                         "id_column": {**_NAME, "description": "the column naming a person"},
                         "max_rows": {**_POSITIVE_WHOLE, "description": "at most this many rows per person"},
                         "max_groups": {**_POSITIVE_WHOLE, "description": "at most this many groups per person (L0)"},
                         "max_rows_per_group": {**_POSITIVE_WHOLE,
                                                "description": "at most this many rows per person in each group"},
                     }}}},
            ]},
        "group_by": {
            "description": "the grouping columns and where the keys come from: exactly one of keys, domains, file, "
                           "hierarchy (public keys) or private (keys released by partition selection)",
            "type": "object", "additionalProperties": False, "required": ["columns"],
            "oneOf": [{"required": ["keys"]}, {"required": ["domains"]}, {"required": ["file"]},
                      {"required": ["hierarchy"]}, {"required": ["private"]}],
            "properties": {
                "columns": {"type": "array", "minItems": 1, "items": _NAME,
                            "description": "the grouping columns, in the answer's order"},
                "keys": {"type": "array", "minItems": 1,
                         "description": "the public keys: one value each with one column, else a list of one value "
                                        "per column",
                         "items": {"anyOf": [_KEY_VALUE, {"type": "array", "minItems": 1, "items": _KEY_VALUE}]}},
                "domains": {"type": "object", "minProperties": 1,
                            "description": "each grouping column's public values; the keys are their cross product",
                            "additionalProperties": {"type": "array", "minItems": 1, "items": _KEY_VALUE}},
                "file": {"type": "string", "minLength": 1,
                         "description": "a CSV file of the public keys, one column per grouping column, one key a "
                                        "line (relative to the specification's folder)"},
                "hierarchy": {"type": "object", "additionalProperties": False,
                              "required": ["column", "file", "level"],
                              "description": "group the rows by their value's generalization at a level of a "
                                             "public hierarchy; the keys are that level's values",
                              "properties": {"column": _NAME,
                                             "file": {"type": "string", "minLength": 1,
                                                      "description": "the hierarchy (CSV, as veil reads them)"},
                                             "level": {"type": "integer", "minimum": 0}}},
                "private": {"type": "object", "additionalProperties": False, "required": ["delta"],
                            "description": "the keys are not public: those present in the data are released by "
                                           "partition selection (thresholded noisy counts), at the cost of delta",
                            "properties": {"delta": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                                           "threshold": {"type": ["number", "null"],
                                                         "description": "the noisy-count threshold (default: the "
                                                                        "smallest that delta allows)"}}},
                "other": {"type": "boolean", "default": False,
                          "description": "answer one more key, 'other', for the rows whose key is not public"},
            }},
        "aggregates": {
            "type": "array", "minItems": 1, "description": "the aggregates, each answered for every key",
            "items": {"oneOf": [
                _aggregate("count", "the number of rows per key", {}, []),
                _aggregate("sum", "the sum of a column clamped to [low, high]", _BOUNDED, ["column", "low", "high"]),
                _aggregate("mean", "the mean of a column clamped to [low, high]", _BOUNDED,
                           ["column", "low", "high"]),
                _aggregate("variance", "the variance of a column clamped to [low, high]", _BOUNDED,
                           ["column", "low", "high"]),
                _aggregate("quantiles", "several quantiles of a column clamped to [low, high], from one mechanism",
                           {**_BOUNDED,
                            "quantiles": {"type": "array", "minItems": 1,
                                          "items": {"type": "number", "exclusiveMinimum": 0,
                                                    "exclusiveMaximum": 1},
                                          "description": "the quantiles, each strictly between 0 and 1"},
                            "bins": {**_POSITIVE_WHOLE, "maximum": 65536,
                                     "description": "the bins of the public grid (default 64)"},
                            "method": {"enum": ["auto", "tree", "flat"], "default": "auto",
                                       "description": "auto (the default): one noisy tree of histograms under "
                                                      "rho, one flat noisy histogram under epsilon"}},
                           ["column", "quantiles", "low", "high"]),
            ]}},
        "epsilon": {"type": "number", "exclusiveMinimum": 0, "description": "the whole ε of the query (pure ε-DP)"},
        "rho": {"type": "number", "exclusiveMinimum": 0, "description": "the whole ρ of the query (ρ-zCDP)"},
        "alpha": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1, "default": 0.05,
                  "description": "each cell's interval misses with probability at most alpha"},
        "weights": {"type": "array", "minItems": 1, "items": {"type": "number", "exclusiveMinimum": 0},
                    "description": "one positive weight per aggregate: how the price is split (equal by default)"},
        "engine": {"type": "object", "additionalProperties": False,
                   "description": "where the table is read and the query counted, as in an anonymization "
                                  "configuration (veil dp query --engine and --master override it)",
                   "properties": {"name": {"enum": ["local", "spark"], "default": "local",
                                           "description": "local (in memory) or spark (Apache Spark)"},
                                  "master": {"type": "string", "minLength": 1, "default": "local[*]",
                                             "description": "the Spark master: local[*], local[N], "
                                                            "spark://HOST:PORT or yarn"},
                                  "config": {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]},
                                             "description": "Spark settings, given to the session as they are"}}},
        "output": {"type": "object", "additionalProperties": False,
                   "properties": {"format": {"enum": ["csv", "parquet"], "default": "csv",
                                             "description": "the answers' file: answers.csv or answers.parquet"}}},
    },
}


def query_schema_text() -> str:
    """:data:`QUERY_SCHEMA` as the JSON text veil ships and ``veil dp query-schema`` prints."""
    return json.dumps(QUERY_SCHEMA, indent=2, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------- checking a document

_TYPES = {"object": "a mapping", "array": "a list", "string": "text", "number": "a number",
          "integer": "a whole number", "boolean": "true or false", "null": "null"}


def _is(value: Any, kind: str) -> bool:
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if kind == "integer":
        return isinstance(value, int) or (math.isfinite(value) and value == int(value))
    return True


def _where(path: str) -> str:
    return path or "the specification"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str) if not isinstance(value, float) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_document(value: Any, schema: dict = QUERY_SCHEMA, path: str = "") -> str | None:
    """The first way ``value`` breaks ``schema``, as the end of a sentence naming the key, or ``None``.

    Reads the part of JSON Schema :data:`QUERY_SCHEMA` uses (type, const, enum, properties,
    required, additionalProperties, min/maxProperties, items, minItems, minLength, minimum,
    maximum, the exclusive bounds, oneOf and anyOf); numbers must moreover be finite (JSON has no
    infinity, YAML has ``.inf``).
    """
    if "const" in schema and value != schema["const"]:
        return f"{_where(path)} must be {_shown(schema['const'])}, not {_shown(value)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{_where(path)} must be one of {', '.join(map(str, schema['enum']))}, not {_shown(value)}"
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_is(value, k) for k in kinds):
            return f"{_where(path)} must be {' or '.join(_TYPES[k] for k in kinds)}, not {_shown(value)}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{_where(path)} must be a finite number, not {_shown(value)}"
    if _is(value, "number"):
        for key, fails, words in (("minimum", lambda v, b: v < b, "at least"),
                                  ("maximum", lambda v, b: v > b, "at most"),
                                  ("exclusiveMinimum", lambda v, b: v <= b, "above"),
                                  ("exclusiveMaximum", lambda v, b: v >= b, "below")):
            if key in schema and fails(value, schema[key]):
                return f"{_where(path)} must be {words} {schema[key]:g}, not {_shown(value)}"
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        return f"{_where(path)} must not be empty"
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            return f"{_where(path)} must list at least {schema['minItems']} item(s)"
        if "items" in schema:
            for i, item in enumerate(value):
                found = check_document(item, schema["items"], f"{path}[{i}]")
                if found:
                    return found
    if isinstance(value, dict):
        found = _check_mapping(value, schema, path)
        if found:
            return found
    if "anyOf" in schema and all(check_document(value, s, path) for s in schema["anyOf"]):
        return check_document(value, schema["anyOf"][-1], path) if isinstance(value, list) else \
            f"{_where(path)} must be {' or '.join(_branch_words(s) for s in schema['anyOf'])}, not {_shown(value)}"
    if "oneOf" in schema:
        return _check_one_of(value, schema["oneOf"], path)
    return None


def _check_mapping(value: dict, schema: dict, path: str) -> str | None:
    props = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key in value:
        if not isinstance(key, str):
            return f"{_where(path)} has a key {_shown(key)} that is not text"
        if key not in props and extra is False:
            close = difflib.get_close_matches(key, list(props), n=1, cutoff=0.6)
            return (f"{_where(path)} has an unknown key '{key}', perhaps '{close[0]}'" if close else
                    f"{_where(path)} has an unknown key '{key}' (its keys are {', '.join(props)})")
    if len(value) < schema.get("minProperties", 0):
        return f"{_where(path)} must not be empty"
    for key in schema.get("required", []):
        if key not in value:
            return f"{_where(path)} lacks its key '{key}'"
    for key, item in value.items():
        sub = props.get(key, extra if isinstance(extra, dict) else None)
        if sub is not None:
            found = check_document(item, sub, f"{path}.{key}" if path else key)
            if found:
                return found
    return None


def _branch_words(schema: dict) -> str:
    if "title" in schema:
        return schema["title"]
    kinds = schema.get("type", "a value")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    return " or ".join(_TYPES.get(k, k) for k in kinds)


def _check_one_of(value: Any, branches: list, path: str) -> str | None:
    chosen = [b for b in branches if check_document(value, b, path) is None]
    if len(chosen) == 1:
        return None
    alternatives = [b["required"][0] for b in branches if set(b) == {"required"}]
    if len(alternatives) == len(branches):  # "exactly one of these keys"
        given = [k for k in alternatives if isinstance(value, dict) and k in value]
        return (f"{_where(path)} must give one of {', '.join(alternatives)}" if not given else
                f"{_where(path)} must give only one of {', '.join(given)}")
    # a discriminated union: the branch whose constant key the value names
    for branch in branches:
        for key, sub in branch.get("properties", {}).items():
            if "const" in sub and isinstance(value, dict) and value.get(key) == sub["const"]:
                return check_document(value, branch, path)
    keys = {k for b in branches for k, s in b.get("properties", {}).items() if "const" in s}
    if keys and isinstance(value, dict):
        key = sorted(keys)[0]
        names = [b["properties"][key]["const"] for b in branches]
        if key not in value:
            return f"{_where(path)} lacks its key '{key}' ({', '.join(names)})"
        return f"{path}.{key} must be one of {', '.join(names)}, not {_shown(value[key])}"
    if isinstance(value, dict):
        mapped = [b for b in branches if b.get("type") == "object"]
        if len(mapped) == 1:
            return check_document(value, mapped[0], path)
    return f"{_where(path)} must be {' or '.join(_branch_words(b) for b in branches)}, not {_shown(value)}"


# --------------------------------------------------------------------------- reading a file

@dataclass(frozen=True)
class QuerySpec:
    """A query specification, checked against :data:`QUERY_SCHEMA`.

    Attributes:
        document: the specification as read (mappings, lists and scalars).
        folder: the folder relative paths in it are read from.
        name: how to name it in a message (its file).
    """

    document: dict = field(repr=False)
    folder: Path = Path(".")
    name: str = "the specification"

    @property
    def table(self) -> Path | None:
        """The table the specification names (relative to its folder), or ``None``."""
        given = self.document.get("table")
        return None if given is None else self.path(given)

    def path(self, given: str) -> Path:
        """A path the specification gives, relative to its folder."""
        path = Path(given)
        return path if path.is_absolute() else self.folder / path

    @property
    def output_format(self) -> str:
        return (self.document.get("output") or {}).get("format", "csv")

    @property
    def alpha(self) -> float:
        return float(self.document.get("alpha", 0.05))

    @property
    def in_rho(self) -> bool:
        return "rho" in self.document


def parse_query_spec(document: Any, *, folder: str | os.PathLike = ".", name: str = "the specification") -> QuerySpec:
    """Check a specification already read (e.g. from Python) against :data:`QUERY_SCHEMA`.

    Raises:
        ConfigError: it breaks the schema (one sentence naming the key and what to give).
    """
    problem = check_document(document)
    if problem:
        raise ConfigError(f"{name}: {problem}; see veil dp query-schema.")
    weights = document.get("weights")
    if weights is not None and len(weights) != len(document["aggregates"]):
        raise ConfigError(f"{name}: weights must give one weight per aggregate ({len(document['aggregates'])}), "
                          f"not {len(weights)}; see veil dp query-schema.")
    return QuerySpec(document, Path(folder), name)


def _no_duplicates(pairs: list) -> dict:
    out = {}
    for key, value in pairs:
        if key in out:
            raise ConfigError(f"the key '{key}' is given twice; give each key once.")
        out[key] = value
    return out


def _plain(node: yaml.Node, name: str) -> Any:
    """A composed YAML node as plain values, refusing a key given twice (with its line)."""
    if isinstance(node, yaml.MappingNode):
        out = {}
        for key_node, value_node in node.value:
            key = _plain(key_node, name)
            if isinstance(key, (dict, list)):
                raise ConfigError(f"{name}, line {key_node.start_mark.line + 1}: a key must be text.")
            if key in out:
                raise ConfigError(f"{name}, line {key_node.start_mark.line + 1}: the key '{key}' is given twice; "
                                  "give each key once.")
            out[key] = _plain(value_node, name)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_plain(item, name) for item in node.value]
    return yaml.SafeLoader(" ").construct_object(node, deep=True)


def load_query_spec(path: str | os.PathLike) -> QuerySpec:
    """Read a query specification, YAML or JSON (by content: JSON is read as JSON when the file
    ends in ``.json``), and check it against :data:`QUERY_SCHEMA`.

    Raises:
        ConfigError: the file is missing, a folder, not YAML or JSON, holds a key twice, or breaks
            the schema; one sentence naming the file (and the line or key).
    """
    path = Path(path)
    name = str(path)
    if path.is_dir():
        raise ConfigError(f"the query specification {name!r} is a folder; give its file.")
    if not path.exists():
        raise ConfigError(f"the query specification {name!r} does not exist; check the path.")
    if path.suffix.lower() == ".json":
        text = read_text(path, "query specification", error=ConfigError, encoding="utf-8-sig")
        try:
            document = json.loads(text, object_pairs_hook=_no_duplicates)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{name}, line {exc.lineno}: the file is not valid JSON ({exc.msg}).") from None
        except ConfigError as exc:
            raise ConfigError(f"{name}: {exc}") from None
    else:
        node = compose(path)
        document = None if node is None else _plain(node, name)
    if not isinstance(document, dict):
        raise ConfigError(f"{name} holds no query specification (a mapping with group_by, aggregates and epsilon or "
                          "rho); see veil dp query-schema.")
    return parse_query_spec(document, folder=path.parent, name=name)
