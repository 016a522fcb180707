"""The value types of the configuration schema: each checks one YAML value and states, as JSON
Schema, what it accepts.

A value type is a small object called as ``type(parser, node, where)``: it checks the value with
the parser's primitives (``integer``, ``number``, ``choice``, ``column``, ``items``, ``mapping`` …)
and returns it, or raises the parser's ``file, line N: …`` sentence; ``type.json_schema()`` is what
it accepts. The option tables of :mod:`veil.config.schema` are built from them: :class:`WholeNumber`,
:class:`Number`, :class:`Choice`, :class:`Boolean`, :class:`Nullable`, the column types
(:class:`Column`, :class:`Columns`, :class:`SensitiveColumn`, :class:`PerColumn`), :class:`Name`,
:class:`Text`, :class:`File`, :class:`Settings`, :class:`PublicDomains`, and :class:`JsonOnly` for
a value the parser reads by a rule of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from veil.config.options import documented

if TYPE_CHECKING:
    import yaml

# A value type's checks take the parser (veil.config.parser.Parser, which imports the schema, so
# it is not named here) and call its primitives: integer, number, choice, column, items, mapping …
Parser = Any

#: A name as YAML may write it: ``1990`` and ``yes`` are names too (the parser keeps the text).
NAME_SCHEMA = {"type": ["string", "number", "boolean"], "minLength": 1}


@dataclass(frozen=True)
class WholeNumber:
    """An integer of at least ``minimum``."""

    minimum: int

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> int:
        return p.integer(node, where, self.minimum)

    def json_schema(self) -> dict:
        return {"type": "integer", "minimum": self.minimum}


@dataclass(frozen=True)
class Number:
    """A finite number in a range; ``lo_open``/``hi_open`` exclude the bound itself."""

    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> float:
        return p.number(node, where, self.lo, self.hi, lo_open=self.lo_open, hi_open=self.hi_open)

    def json_schema(self) -> dict:
        schema: dict = {"type": "number"}
        if self.lo is not None:
            schema["exclusiveMinimum" if self.lo_open else "minimum"] = self.lo
        if self.hi is not None:
            schema["exclusiveMaximum" if self.hi_open else "maximum"] = self.hi
        return schema


@dataclass(frozen=True)
class Choice:
    """One of a few words."""

    choices: tuple[str, ...]

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> str:
        return p.choice(node, where, self.choices)

    def json_schema(self) -> dict:
        return {"enum": list(self.choices)}


@dataclass(frozen=True)
class Boolean:
    """``true`` or ``false``."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> bool:
        return p.boolean(node, where)

    def json_schema(self) -> dict:
        return {"type": "boolean"}


@dataclass(frozen=True)
class Nullable:
    """``null`` (read as ``None``) or a value of another type."""

    inner: Any

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> Any:
        return None if p.is_null(node) else self.inner(p, node, where)

    def json_schema(self) -> dict:
        return {"anyOf": [self.inner.json_schema(), {"type": "null"}]}


@dataclass(frozen=True)
class Column:
    """The name of a column of the table."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> str:
        return p.column(node, where)

    def json_schema(self) -> dict:
        return dict(NAME_SCHEMA, description="a column of the table")


@dataclass(frozen=True)
class Name:
    """A name as written (``1990`` stays text), not checked against a table."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> str:
        return p.name_of(node, where)

    def json_schema(self) -> dict:
        return dict(NAME_SCHEMA)


@dataclass(frozen=True)
class Columns:
    """Columns of the table: a list, or one name on its own."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> list[str]:
        return [p.column(item, where) for item in p.items(node, where)]

    def json_schema(self) -> dict:
        return one_or_list(NAME_SCHEMA)


@dataclass(frozen=True)
class SensitiveColumn:
    """A column listed under ``columns.sensitive``."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> str:
        return p.declared_sensitive(node, where)

    def json_schema(self) -> dict:
        return dict(NAME_SCHEMA, description="a column listed under columns.sensitive")


@dataclass(frozen=True)
class PerColumn:
    """One value for every column, or a mapping ``{column: value}``."""

    inner: Any

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> Any:
        if p.is_mapping(node):
            return {key: self.inner(p, value, f"{where}.{key}") for key, (_, value) in p.mapping(node, where).items()}
        return self.inner(p, node, where)

    def json_schema(self) -> dict:
        each = self.inner.json_schema()
        return {"anyOf": [each, {"type": "object", "additionalProperties": each}]}


@dataclass(frozen=True)
class JsonOnly:
    """A value the parser hands on unchecked to the object that takes it (which checks it), or
    checks with a rule of its own; ``schema`` is what it accepts."""

    schema: Mapping[str, Any]

    def json_schema(self) -> dict:
        return dict(self.schema)


@dataclass(frozen=True)
class PublicDomains:
    """The αβ algorithm's ``domains``: per published column its public domain, a list of values,
    the whole numbers ``{min: …, max: …}``, or ``data`` (the values found in the data, which makes
    the view not fit for release)."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> dict[str, Any]:
        return p.public_domains(node, where)

    def json_schema(self) -> dict:
        values = {"type": "array", "minItems": 1, "items": NAME_SCHEMA, "description": "the values, in order"}
        whole_numbers = {"type": "object", "properties": {
                             "min": documented({"type": "integer"}, "the smallest whole number of the domain", 17),
                             "max": documented({"type": "integer"}, "the largest whole number of the domain", 90)},
                         "required": ["min", "max"], "additionalProperties": False,
                         "description": "the whole numbers from min to max"}
        data = {"const": "data", "description": "the values found in the data (not fit for release)"}
        return {"type": ["object", "null"], "additionalProperties": {"anyOf": [values, whole_numbers, data]}}


@dataclass(frozen=True)
class File:
    """The path of a file that exists (relative to the configuration's folder), read as text."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> str:
        path = p.path(node, where)
        if not path.is_file():
            raise p.error(node, f"{where}: file {str(path)!r} does not exist (a relative path is read from the "
                                "folder of the configuration); check the path.")
        return str(path)

    def json_schema(self) -> dict:
        return {"type": "string", "pattern": r"\S", "description": "a file path, relative to the configuration"}


@dataclass(frozen=True)
class Text:
    """Some text that is not empty."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> str:
        value = p.text(node, where)
        if not value.strip():
            raise p.error(node, f"{where} is empty; give a value.")
        return value

    def json_schema(self) -> dict:
        return {"type": "string", "pattern": r"\S"}


@dataclass(frozen=True)
class Settings:
    """A mapping of setting names to values (text, a number or true/false), read as text."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> dict[str, str]:
        out = {}
        for key, (_, value) in p.mapping(node, where, "{spark.executor.memory: 4g}").items():
            scalar = p.scalar(value, f"{where}.{key}", "a value (text, a number or true/false)")
            if scalar is None:
                raise p.error(value, f"{where}.{key} has no value; give one.")
            out[key] = str(scalar).lower() if isinstance(scalar, bool) else str(scalar)
        return out

    def json_schema(self) -> dict:
        return {"type": ["object", "null"], "additionalProperties": {"type": ["string", "number", "boolean"]}}


def one_or_list(item: Mapping) -> dict:
    """A list of items, one item on its own, or nothing (as the parser's ``items`` reads them)."""
    return {"anyOf": [dict(item), {"type": "array", "items": dict(item)}, {"type": "null"}]}
