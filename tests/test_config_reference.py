"""The configuration reference of the documentation site (docs/reference/configuration.md) is generated
from the configuration's JSON Schema at build time (docs/hooks/config_reference.py): every key of
the schema is on it, each with what it means and an example, and every example is a value the key
accepts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from veil.config.schema import configuration_schema

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reference" / "configuration.md"


def hook():
    """docs/hooks/config_reference.py, loaded from its file (the hooks folder is not a package)."""
    name = "veil_docs_config_reference"
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / "hooks" / "config_reference.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module   # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def every_property(schema) -> list[dict]:
    """Every schema of a key anywhere in ``schema`` (the discriminating ``name: {const}`` of a form,
    and the root's conditions on the algorithm, aside), found without the hook's walk."""
    found = []

    def visit(node, root=False):
        if isinstance(node, list):
            for item in node:
                visit(item)
        if not isinstance(node, dict):
            return
        for key, value in node.items():
            if root and key in ("allOf", "if", "then", "else"):
                continue
            if key == "properties":
                for name, sub in value.items():
                    if not (name == "name" and isinstance(sub, dict) and "const" in sub):
                        found.append(sub)
                    visit(sub)
            elif key in ("anyOf", "oneOf", "allOf", "items", "additionalProperties"):
                visit(value)

    visit(schema, root=True)
    return found


def rows(page: str) -> dict[str, list[str]]:
    """The rows of the page's tables of keys: the key's path → its cells (meaning, value, default,
    example)."""
    out = {}
    for line in page.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            path = cells[0].split("`")[1]
            assert path not in out, f"{path} is on the page twice"
            out[path] = cells[1:]
    return out


SCHEMA = configuration_schema()
KEYS = hook().keys(SCHEMA)


def test_the_walk_finds_every_key_of_the_schema():
    assert {id(s) for s in every_property(SCHEMA)} == {id(k.schema) for k in KEYS}
    assert len({k.path for k in KEYS}) == len(KEYS)
    assert {"columns.quasi_identifiers", "models[].k_anonymity.k", "algorithm[name=mondrian].mode",
            "hierarchies.<column>.intervals.widths", "policy.populations.<population>.budget.epsilon",
            "marginals.privacy[].k_link.k"} <= {k.path for k in KEYS}


@pytest.mark.parametrize("key", KEYS, ids=lambda k: k.path)
def test_every_key_has_a_meaning_and_an_example_it_accepts(key):
    assert len(key.description.split()) >= 2, f"{key.path} has no description in the schema"
    assert key.examples, f"{key.path} has no example in the schema"
    for example in key.examples:
        jsonschema.Draft202012Validator(key.schema).validate(example)


def test_the_page_shows_every_key_with_its_meaning_and_example():
    assert hook().MARKER in PAGE.read_text(encoding="utf-8")
    page = hook().config_reference(SCHEMA)
    shown = rows(page)
    assert set(shown) == {k.path for k in KEYS}
    for key in KEYS:
        meaning, value, default, example = shown[key.path]
        assert meaning.lower().startswith(key.description[:20].lower()), key.path
        assert value and example.startswith(f"`{key.name}: "), key.path
        # the example shown is the schema's, as YAML
        assert yaml.safe_load(example.strip("`").split("; ")[0].partition(": ")[2]) == key.examples[0], key.path
        if "default" in key.schema:
            assert yaml.safe_load(default.strip("`")) == key.schema["default"] or key.schema["default"] == (), key.path
    for section in SCHEMA["properties"]:
        assert f"\n## {section}\n" in "\n" + page


def test_the_page_of_a_key_without_a_description_says_so_by_failing():
    # the check above can fail: a schema whose key lacks a description or an example is caught
    schema = {"type": "object", "properties": {"data": {"type": "string", "examples": ["a.csv"]},
                                               "delimiter": {"type": "string", "description": "the delimiter"}}}
    keys = hook().keys(schema)
    assert [bool(k.description) for k in keys] == [False, True]
    assert [bool(k.examples) for k in keys] == [True, False]
