"""The ``marginals:`` section of a configuration file (``veil marginals``): anonymized marginals
published beside (or instead of) the table, and the privacy models of the collection (Kifer and
Gehrke, "Injecting utility into anonymized datasets", SIGMOD 2006).

The keys and their types are tables of :mod:`veil.config.schema` (``MARGINALS_OPTIONS``,
``MARGINAL_MODELS``); the value types here read the parts whose check needs the declared columns:
the list of privacy models (:class:`MarginalModelList`, given its table), the marginals to publish
with their attributes and hierarchy levels (:class:`MarginalList`), and the base table
(:class:`BaseTable`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from veil.config.options import documented, options_schema, yaml_example
from veil.config.specification import GivenMarginalSpec, MarginalModelSpec
from veil.config.table_entries import ModelSchema
from veil.config.value_types import Columns

if TYPE_CHECKING:
    import yaml

# The parser (veil.config.parser.Parser), which imports the schema, so it is not named here.
Parser = Any

_LEVELS = {"type": ["object", "null"], "additionalProperties": {"type": "integer", "minimum": 0}}
_ATTRIBUTE_LEVELS = documented(_LEVELS, "each attribute's hierarchy level (0 when not given)", {"age": 1})
_BASE_LEVELS = documented(_LEVELS, "each quasi-identifier's hierarchy level (0 when not given)", {"age": 2})


@dataclass(frozen=True)
class MarginalModelList:
    """The value of ``marginals.privacy``: a list of ``{model name: options}``, each model one of
    ``models``."""

    models: Mapping[str, ModelSchema]

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> tuple:
        example = "'- k_link: {k: 5}'"
        items = p.items(node, where)
        if not items or p.is_mapping(node):
            raise p.error(node, f"{where} must list at least one privacy model of the marginals, like {example}.")
        specs = []
        for item in items:
            entries = p.mapping(item, where, example)
            if len(entries) != 1:
                raise p.error(item, f"each entry of {where} is one model name with its options, like {example}.")
            p.known_keys(entries, list(self.models), where)
            name, (name_node, options_node) = next(iter(entries.items()))
            schema = self.models[name]
            options = p.options(options_node, f"{where}.{name}", schema.options, name_node, schema.example)
            specs.append(MarginalModelSpec(name, options, p.origin(name_node)))
        return tuple(specs)

    def json_schema(self) -> dict:
        items = [{"type": "object", "required": [name], "additionalProperties": False,
                  "properties": {name: documented(options_schema(model.options), model.about,
                                                  yaml_example(model.example))}}
                 for name, model in self.models.items()]
        return {"type": "array", "minItems": 1, "items": {"oneOf": items}}


def _marginal_levels(p: Parser, node: yaml.Node, where: str, attributes: list[str]) -> dict[str, int]:
    levels = {}
    for key, (key_node, value) in p.mapping(node, where, "{age: 1}").items():
        if key not in attributes:
            raise p.error(key_node, f"{where} gives a level for '{key}', which the marginal does not hold; "
                          f"it holds {', '.join(attributes)}.")
        levels[key] = p.integer(value, f"{where}.{key}", 0)
    return levels


@dataclass(frozen=True)
class MarginalList:
    """The value of ``marginals.publish``: marginals as ``{attributes: [...], levels: {...}}``,
    each attribute a quasi-identifier or a sensitive column."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> tuple:
        example = "'- {attributes: [age, sex], levels: {age: 1}}'"
        specs = []
        for item in p.items(node, where):
            entries = p.mapping(item, where, example)
            p.known_keys(entries, ["attributes", "levels"], where)
            if "attributes" not in entries:
                raise p.error(item, f"each marginal of {where} needs 'attributes', like {example}.")
            attributes = []
            for attribute in p.items(entries["attributes"][1], f"{where}.attributes"):
                name = p.column(attribute, f"{where}.attributes")
                if name not in p.quasi and name not in p.sensitive:
                    raise p.error(attribute, f"{where}.attributes names '{name}', which is neither a "
                                  "quasi-identifier nor a sensitive column; give it a role under columns.")
                if name in attributes:
                    raise p.error(attribute, f"{where}.attributes names '{name}' twice; name it once.")
                attributes.append(name)
            if not attributes:
                raise p.error(item, f"a marginal of {where} needs at least one attribute, like {example}.")
            levels = _marginal_levels(p, entries["levels"][1], f"{where}.levels", attributes) \
                if "levels" in entries else {}
            specs.append(GivenMarginalSpec(tuple(attributes), levels, p.origin(item)))
        return tuple(specs)

    def json_schema(self) -> dict:
        attributes = documented(Columns().json_schema(), "the marginal's attributes: quasi-identifiers or sensitive "
                                                         "columns", ["age", "sex"])
        entry = {"type": "object", "required": ["attributes"], "additionalProperties": False,
                 "properties": {"attributes": attributes, "levels": _ATTRIBUTE_LEVELS}}
        return {"type": ["array", "null"], "items": entry}


@dataclass(frozen=True)
class BaseTable:
    """The value of ``marginals.base``: ``optimal``, ``none``, or ``{levels: {column: level}}``
    for the quasi-identifiers (0 when not given)."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> Any:
        if not p.is_mapping(node):
            return p.choice(node, where, ("optimal", "none"))
        entries = p.mapping(node, where, "{levels: {age: 2}}")
        p.known_keys(entries, ["levels"], where)
        levels = _marginal_levels(p, entries["levels"][1], f"{where}.levels", list(p.quasi)) \
            if "levels" in entries else {}
        return GivenMarginalSpec(tuple(p.quasi), levels, p.origin(node))

    def json_schema(self) -> dict:
        return {"anyOf": [{"enum": ["optimal", "none"]}, {
            "type": "object", "properties": {"levels": _BASE_LEVELS}, "additionalProperties": False}]}
