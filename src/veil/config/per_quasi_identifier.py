"""A configuration value given once for every quasi-identifier, or per quasi-identifier: Mondrian's
and Ace's ``categorical: hierarchy`` or ``categorical: {zip: hierarchy, age: order}``.

A value type of :mod:`veil.config.schema` (it checks one YAML value and states its JSON Schema),
kept in a module of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

# The parser (veil.config.parser.Parser), which imports the schema, so it is not named here.
Parser = Any


@dataclass(frozen=True)
class PerQuasiIdentifier:
    """One value for every quasi-identifier, or a mapping ``{quasi-identifier: value}`` (the
    others take the algorithm's default); the keys must be listed under
    ``columns.quasi_identifiers``."""

    inner: Any

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> Any:
        if not p.is_mapping(node):
            if not (hasattr(node, "value") and isinstance(node.value, str)):
                raise p.error(node, f"{where} must be one word or a mapping of quasi-identifiers to words, like "
                                    "{zip: hierarchy}, not a list.")
            return self.inner(p, node, where)
        out = {}
        for key, (key_node, value) in p.mapping(node, where).items():
            if key not in p.quasi:
                raise p.error(key_node, f"{where} names '{key}', which is not a quasi-identifier; the "
                                        f"quasi-identifiers are {', '.join(p.quasi)}.")
            out[key] = self.inner(p, value, f"{where}.{key}")
        return out

    def json_schema(self) -> dict:
        each = self.inner.json_schema()
        return {"anyOf": [each, {"type": "object", "additionalProperties": each,
                                 "description": "per quasi-identifier; the others take the default"}]}
