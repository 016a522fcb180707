"""The options of a mapping in a configuration file: one key's value type, whether the key must be
given, its default, what it means and an example; a mapping of options as a value type, and its
JSON Schema.

An :class:`Option` is made with :func:`required` or :func:`optional`; a table of options (the
``output:`` section's, a privacy model's) is a mapping from key to :class:`Option`, read by the
parser's ``options`` primitive and described by :func:`options_schema`. :class:`Options` is such a
table as a value type (``output: {suppressed: remove, shuffle: true}``). :func:`documented` gives a
JSON Schema its ``description`` and ``examples`` (:data:`NO_EXAMPLE` when there is none), which the
configuration reference of the documentation shows; :func:`yaml_example` reads an example written
as YAML.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping

if TYPE_CHECKING:
    import yaml

# The parser (veil.config.parser.Parser), which imports the schema, so it is not named here.
Parser = Any


class _NoExample:
    """No example given (``None`` is one: ``seed: null``)."""

    def __repr__(self) -> str:
        return "NO_EXAMPLE"


NO_EXAMPLE: Any = _NoExample()


@dataclass(frozen=True)
class Option:
    """One key of a mapping: its value type, whether it must be given, its default, what it means
    and an example of it.

    ``check`` is a value type of :mod:`veil.config.value_types` (or any function of the shape
    ``check(parser, node, where)``); a :class:`~veil.config.value_types.JsonOnly` one is described,
    not called: the parser reads that key by a rule of its own. ``about`` and ``example`` are the
    key's ``description`` and ``examples`` in the JSON Schema, which the configuration reference of
    the documentation shows.
    """

    check: Callable[..., Any]
    required: bool = False
    default: Any = None
    has_default: bool = False
    about: str = ""
    example: Any = NO_EXAMPLE


def required(check: Callable[..., Any], about: str = "", *, example: Any = NO_EXAMPLE) -> Option:
    """An option the mapping must have."""
    return Option(check, required=True, about=about, example=example)


def optional(check: Callable[..., Any], *default, about: str = "", example: Any = NO_EXAMPLE) -> Option:
    """An option that may be left out; with a default, that value is filled in."""
    return Option(check, default=default[0] if default else None, has_default=bool(default), about=about,
                  example=example)


def documented(schema: Mapping[str, Any], about: str, example: Any = NO_EXAMPLE) -> dict:
    """``schema`` with its ``description`` and ``examples`` (when given)."""
    out = dict(schema)
    if about:
        out["description"] = about
    if example is not NO_EXAMPLE:
        out["examples"] = [example]
    return out


def yaml_example(text: str) -> Any:
    """An example written as YAML (``{k: 5}``), as a value."""
    import yaml

    return yaml.safe_load(text) if text else NO_EXAMPLE


def options_schema(options: Mapping[str, Option], *, extra: Mapping[str, Any] | None = None) -> dict:
    """The JSON Schema of a mapping of ``options`` (and no other key); ``extra`` adds required
    properties (an algorithm's ``name``). Without a required key, ``null`` (read as an empty
    mapping) is accepted too."""
    properties = dict(extra or {})
    for key, option in options.items():
        schema = documented(option.check.json_schema(), option.about, option.example)
        if option.has_default:
            schema["default"] = option.default
        properties[key] = schema
    out: dict = {"type": "object", "properties": properties, "additionalProperties": False}
    must = list(extra or {}) + [key for key, option in options.items() if option.required]
    if must:
        out["required"] = must
    else:
        out["type"] = ["object", "null"]
    return out


@dataclass(frozen=True)
class Options:
    """A mapping of named options (``output: {suppressed: remove, shuffle: true}``).

    ``example`` is shown when the mapping is malformed or misses a required option.
    """

    options: Mapping[str, Option]
    example: str = ""

    def __call__(self, p: Parser, node: yaml.Node, where: str, owner: yaml.Node | None = None) -> dict[str, Any]:
        return p.options(node, where, self.options, node if owner is None else owner, self.example)

    def json_schema(self) -> dict:
        return options_schema(self.options)
