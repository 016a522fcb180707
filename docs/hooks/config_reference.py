"""MkDocs hook: the configuration reference, generated from the configuration's JSON Schema at build time.

A page holding the line ``<!-- veil-config-reference -->`` gets, in its place, every key of a
configuration file: one section per top-level key, and a table of the section and the keys under
it, each with its meaning, the values it takes, its default and an example. Everything comes from
the JSON Schema veil ships (``veil config schema``, generated from the option tables of
``veil.config.schema``, which the parser reads too), imported from this checkout's ``src/``, so the
page always describes the code it is built with.

A key is named by its path in the file: ``columns.quasi_identifiers``; ``models[].k_anonymity.k``
for a key of an entry of a list; ``algorithm[name=mondrian].mode`` for a key of the form of a
mapping whose ``name`` is ``mondrian``; ``hierarchies.<column>.file`` where any column's name
goes.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MARKER = "<!-- veil-config-reference -->"

#: What the name of an entry of a mapping of names stands for, by the mapping's path.
PLACEHOLDERS = {
    "hierarchies": "<column>",
    "orders": "<column>",
    "policy.populations": "<population>",
    "algorithm[name=alphabeta].domains": "<column>",
    "engine.config": "<setting>",
    "marginals.publish[].levels": "<column>",
    "marginals.base.levels": "<column>",
    "algorithm[name=mondrian].categorical": "<column>",
    "algorithm[name=ace].categorical": "<column>",
    "algorithm[name=mdav].decimals": "<column>",
}


@dataclass
class Key:
    """One key of a configuration file: its path, its JSON Schema, and whether it must be given."""

    path: str
    schema: dict
    required: bool = False
    section: str = field(init=False)

    def __post_init__(self) -> None:
        self.section = self.path.split(".")[0].split("[")[0]

    @property
    def name(self) -> str:
        """The key as it is written in its mapping."""
        return self.path.rsplit(".", 1)[-1]

    @property
    def description(self) -> str:
        return self.schema.get("description", "")

    @property
    def examples(self) -> list:
        return list(self.schema.get("examples", []))


def _is_discriminator(name: str, schema: Any) -> bool:
    """The ``name: {const: …}`` that tells one form of a mapping from another."""
    return name == "name" and isinstance(schema, dict) and "const" in schema


def keys(schema: dict) -> list[Key]:
    """Every key of the configuration, depth first in the schema's order."""
    found: list[Key] = []

    def visit(node: Any, path: str) -> None:
        if not isinstance(node, dict):
            return
        must = set(node.get("required", []))
        for name, sub in node.get("properties", {}).items():
            if _is_discriminator(name, sub):
                continue
            here = f"{path}.{name}" if path else name
            found.append(Key(here, sub, name in must))
            visit(sub, here)
        for combinator in ("anyOf", "oneOf", "allOf"):
            for alternative in node.get(combinator, []):
                name = (alternative.get("properties", {}).get("name") or {}) if isinstance(alternative, dict) else {}
                visit(alternative, f"{path}[name={name['const']}]" if "const" in name else path)
        if isinstance(node.get("items"), dict):
            visit(node["items"], f"{path}[]")
        if isinstance(node.get("additionalProperties"), dict):
            visit(node["additionalProperties"], f"{path}.{PLACEHOLDERS.get(path, '<name>')}")

    # The root's if/then branches only forbid sections an algorithm excludes: no key of their own.
    visit({k: v for k, v in schema.items() if k not in ("if", "then", "else", "allOf")}, "")
    return found


# ------------------------------------------------------------------------------- rendering

def flow(value: Any) -> str:
    """A value as YAML writes it on one line (``{k: 5}``, ``[age, sex]``, ``null``)."""
    import yaml

    text = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=math.inf, sort_keys=False)
    return text.removesuffix("\n...\n").strip()


def _bound(schema: dict) -> str:
    lo = schema.get("minimum", schema.get("exclusiveMinimum"))
    hi = schema.get("maximum", schema.get("exclusiveMaximum"))
    if lo is not None and hi is not None:
        return (f" in {'(' if 'exclusiveMinimum' in schema else '['}{flow(lo)}, {flow(hi)}"
                f"{')' if 'exclusiveMaximum' in schema else ']'}")
    if lo is not None:
        return f" {'>' if 'exclusiveMinimum' in schema else '≥'} {flow(lo)}"
    if hi is not None:
        return f" {'<' if 'exclusiveMaximum' in schema else '≤'} {flow(hi)}"
    return ""


def _phrases(schema: Any) -> list[str]:
    """What a schema accepts, as alternatives of a few words each."""
    if schema is False:
        return ["nothing"]
    if not isinstance(schema, dict) or not schema:
        return ["a value"]
    if "const" in schema:
        return [f"`{flow(schema['const'])}`"]
    if "enum" in schema:
        return ["one of " + ", ".join(f"`{flow(v)}`" for v in schema["enum"])]
    out: list[str] = []
    for combinator in ("anyOf", "oneOf"):
        alternatives = schema.get(combinator, [])
        singles = [next(iter(a["properties"])) for a in alternatives
                   if isinstance(a, dict) and len(a.get("properties", {})) == 1 and a.get("required")]
        forms = [a["properties"]["name"]["const"] for a in alternatives
                 if isinstance(a, dict) and _is_discriminator("name", a.get("properties", {}).get("name"))]
        if singles:
            out.append("one of " + ", ".join(f"`{{{name}: …}}`" for name in singles))
        if forms:
            out.append("one of " + ", ".join(f"`{{name: {name}, …}}`" for name in forms))
        for a in alternatives:
            if isinstance(a, dict) and ((len(a.get("properties", {})) == 1 and a.get("required"))
                                        or _is_discriminator("name", a.get("properties", {}).get("name"))):
                continue
            out += _phrases(a)
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    if {"string", "number", "boolean"} <= set(kinds):
        out.append("a name")
        kinds = [k for k in kinds if k not in ("string", "number", "boolean")]
    for kind in kinds:
        if kind == "integer":
            out.append("a whole number" + _bound(schema))
        elif kind == "number":
            out.append("a number" + _bound(schema))
        elif kind == "boolean":
            out.append("`true` or `false`")
        elif kind == "string":
            out.append("one character" if schema.get("maxLength") == 1 else "text")
        elif kind == "null":
            out.append("`null`")
        elif kind == "array":
            each = accepts(schema.get("items", {}))
            out.append("a list of names" + each.removeprefix("a name") if each.startswith("a name")
                       else "a list, each " + each)
        elif kind == "object":
            extra = schema.get("additionalProperties")
            named = [k for k in schema.get("properties", {}) if not _is_discriminator(k, schema["properties"][k])]
            if isinstance(extra, dict):
                out.append("a mapping of names to " + accepts(extra))
            elif named:
                out.append("a mapping of " + ", ".join(f"`{k}`" for k in named))
            else:
                out.append("a mapping")
    return out or ["a value"]


def accepts(schema: Any) -> str:
    """What values a schema accepts, in a few words."""
    return " or ".join(dict.fromkeys(_phrases(schema)))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _row(key: Key) -> str:
    default = f"`{flow(key.schema['default'])}`" if "default" in key.schema else ""
    example = "; ".join(f"`{key.name}: {flow(e)}`" for e in key.examples)
    meaning = key.description[:1].upper() + key.description[1:] if key.description else ""
    return ("| " + " | ".join(_cell(c) for c in (f"`{key.path}`" + (" (required)" if key.required else ""),
                                                  meaning, accepts(key.schema), default, example)) + " |")


def config_reference(schema: dict) -> str:
    """The Markdown of every key of ``schema``, one section per top-level key."""
    import yaml

    every = keys(schema)
    # The root requires these of an anonymization configuration (a policy file holds only `policy`).
    needed = set((schema.get("anyOf") or [{}])[0].get("required", []))
    parts = []
    for section in schema["properties"]:
        under = [k for k in every if k.section == section]
        head = under[0]
        parts.append(f"## {section}\n")
        if head.description:
            parts.append(head.description[:1].upper() + head.description[1:] + "."
                         + (" Required in an anonymization configuration." if section in needed else "") + "\n")
        for example in head.examples:
            text = yaml.safe_dump({section: example}, default_flow_style=False, allow_unicode=True, sort_keys=False)
            parts.append("```yaml\n" + text.rstrip("\n") + "\n```\n")
        parts.append("| key | meaning | value | default | example |\n|---|---|---|---|---|")
        parts.append("\n".join(_row(k) for k in under) + "\n")
    return "\n".join(parts)


def _schema(root: Path) -> dict:
    src = str(root / "src")
    if src not in sys.path:
        sys.path.insert(0, src)
    from veil.config.schema import configuration_schema

    return configuration_schema()


def on_page_markdown(markdown: str, page, config, files):
    if MARKER not in markdown:
        return markdown
    root = Path(config.config_file_path).resolve().parent
    return markdown.replace(MARKER, config_reference(_schema(root)))
