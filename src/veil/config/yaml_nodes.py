"""A configuration file's YAML read node by node, each mistake one sentence naming the file and the
line: ``adult.yaml, line 12: …``.

The YAML is composed, not loaded (:func:`compose`), so that every node keeps its line; a file that
is not YAML at all gets the line of the problem and what to fix there. :class:`NodeReader` holds
the primitives the value types of the schema and the parser call on one node: a scalar, text, a
name, a whole number or a number in a range, true or false, one of a few words, a list, a mapping
(without duplicate keys), its known keys, its options (against a table of
:class:`~veil.config.options.Option`) and a path relative to the configuration's folder.
"""

from __future__ import annotations

import difflib
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import yaml

from veil.errors import ConfigError
from veil.inputs import read_text

if TYPE_CHECKING:
    from veil.config.options import Option


def compose(path: Path) -> yaml.Node | None:
    """The YAML tree of a configuration file (nodes keep their line numbers)."""
    name = str(path)
    if path.is_dir():
        raise ConfigError(f"{name!r} is a folder, not a configuration file.")
    # A regular file only (a pipe or /dev/zero would never end), of a configuration's size.
    text = read_text(path, "configuration file", error=ConfigError, encoding="utf-8-sig")
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        raise ConfigError(_describe_yaml_error(name, text, exc)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{name}: the file is not valid YAML ({exc}).") from None


def _describe_yaml_error(name: str, text: str, exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark is not None else 1
    lines = text.splitlines()
    # At the end of the file the problem usually sits on the last line that has content.
    while line > 1 and (line > len(lines) or not lines[line - 1].strip()):
        line -= 1
    problem = exc.problem or "unexpected text"
    context = exc.context or ""
    if context.startswith(("while parsing ", "while scanning ")) and "next token" not in context:
        where = context.split(" ", 2)[2]
        if exc.context_mark is not None and exc.context_mark.line + 1 != line:
            where += f" that starts on line {exc.context_mark.line + 1}"
        problem += f", in {where}"
    elif context and "next token" not in context:
        problem = f"{context}, {problem}"
    shown = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    near = f" near {shown!r}" if shown else ""
    fix = ("indent with spaces, not tabs" if "\\t" in problem or "\t" in problem
           else "check the indentation, the colons and the brackets or quotes there")
    return f"{name}, line {line}: the file is not valid YAML ({problem}){near}; {fix}."


def suggest(word: str, choices: Sequence[str]) -> str:
    """The end of a sentence about an unknown ``word``: the closest of ``choices``, or all of them."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    if close:
        return f"; did you mean '{close[0]}'?"
    return f"; use one of {', '.join(choices)}."


def describe(node: yaml.Node) -> str:
    """What a node holds, in words that follow "not" (``a mapping``, ``'abc'``, ``nothing``)."""
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    return repr(node.value) if node.tag.endswith(":str") else str(node.value or "nothing")


class NodeReader:
    """Reads the nodes of one configuration file (``name``, in ``folder``), raising
    :class:`~veil.errors.ConfigError` with ``name, line N: …`` for a node that is not what it
    must be."""

    def __init__(self, name: str, folder: Path):
        self.name = name
        self.folder = folder
        self.constructor = yaml.constructor.SafeConstructor()

    def origin(self, node: yaml.Node | int) -> str:
        line = node if isinstance(node, int) else node.start_mark.line + 1
        return f"{self.name}, line {line}"

    def error(self, node: yaml.Node | int, message: str) -> ConfigError:
        return ConfigError(f"{self.origin(node)}: {message}")

    def is_null(self, node: yaml.Node) -> bool:
        return isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null"

    def is_mapping(self, node: yaml.Node) -> bool:
        return isinstance(node, yaml.MappingNode)

    def scalar(self, node: yaml.Node, where: str, expected: str) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            raise self.error(node, f"{where} must be {expected}, not {describe(node)}.")
        try:
            return self.constructor.construct_object(node)
        except yaml.constructor.ConstructorError as exc:
            raise self.error(node, f"{where} cannot be read ({exc.problem}).") from None

    def mapping(self, node: yaml.Node, where: str, example: str = "") -> dict[str, tuple[yaml.Node, yaml.Node]]:
        """The entries of a mapping node, refusing duplicate and non-text keys."""
        if self.is_null(node):
            return {}
        if not isinstance(node, yaml.MappingNode):
            hint = f", like {example}" if example else ""
            raise self.error(node, f"{where} must be a mapping of keys to values{hint}, not {describe(node)}.")
        entries: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.error(key_node, f"a key under {where} must be a name, not {describe(key_node)}.")
            key = key_node.value
            if key in entries:
                first = entries[key][0].start_mark.line + 1
                raise self.error(key_node, f"{where} has the key '{key}' twice (first on line {first}); keep one.")
            entries[key] = (key_node, value_node)
        return entries

    def known_keys(self, entries: Mapping[str, tuple[yaml.Node, yaml.Node]], allowed: Sequence[str],
                   where: str) -> None:
        for key, (key_node, _) in entries.items():
            if key not in allowed:
                what = f"unknown key '{key}'" if where == "the top level" else f"unknown key '{key}' in {where}"
                raise self.error(key_node, what + suggest(key, allowed))

    def text(self, node: yaml.Node, where: str) -> str:
        if self.is_null(node):
            raise self.error(node, f"{where} has no value; give one.")
        value = self.scalar(node, where, "text")
        if not isinstance(value, str):
            raise self.error(node, f"{where} must be text, not {describe(node)}; put it in quotes.")
        return value

    def name_of(self, node: yaml.Node, where: str) -> str:
        """A column name or value as written (``1990`` or ``yes`` stay text)."""
        if not isinstance(node, yaml.ScalarNode):
            raise self.error(node, f"{where} must be a column name, not {describe(node)}.")
        if not node.value.strip():
            raise self.error(node, f"{where} has an empty name.")
        return node.value

    def integer(self, node: yaml.Node, where: str, minimum: int) -> int:
        value = self.scalar(node, where, f"a whole number of at least {minimum}")
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(node, f"{where} must be a whole number of at least {minimum}, not {describe(node)}.")
        if value < minimum:
            raise self.error(node, f"{where} must be a whole number of at least {minimum}, not {value}.")
        return value

    def number(self, node: yaml.Node, where: str, lo: float | None, hi: float | None, *,
               lo_open: bool = False, hi_open: bool = False) -> float:
        parts = []
        if lo is not None:
            parts.append(f"{'above' if lo_open else 'at least'} {lo:g}")
        if hi is not None:
            parts.append(f"{'below' if hi_open else 'at most'} {hi:g}")
        expected = "a number" + (" " + " and ".join(parts) if parts else "")
        value = self.scalar(node, where, expected)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise self.error(node, f"{where} must be {expected}, not {describe(node)}.")
        if ((lo is not None and (value <= lo if lo_open else value < lo))
                or (hi is not None and (value >= hi if hi_open else value > hi))):
            raise self.error(node, f"{where} must be {expected}, not {node.value}.")
        return value

    def boolean(self, node: yaml.Node, where: str) -> bool:
        value = self.scalar(node, where, "true or false")
        if not isinstance(value, bool):
            raise self.error(node, f"{where} must be true or false, not {describe(node)}.")
        return value

    def choice(self, node: yaml.Node, where: str, choices: Sequence[str]) -> str:
        value = self.scalar(node, where, f"one of {', '.join(choices)}")
        if value not in choices:
            shown = f"'{value}'" if isinstance(value, str) else describe(node)
            raise self.error(node, f"{where} cannot be {shown}" + suggest(str(value), choices))
        return value

    def items(self, node: yaml.Node, where: str) -> list[yaml.Node]:
        """The items of a list; a single scalar counts as a list of one, nothing as none."""
        if self.is_null(node):
            return []
        if isinstance(node, yaml.SequenceNode):
            return list(node.value)
        if isinstance(node, yaml.ScalarNode):
            return [node]
        raise self.error(node, f"{where} must be a list, not a mapping.")

    def options(self, node: yaml.Node, where: str, schema: Mapping[str, Option], owner: yaml.Node,
                example: str = "") -> dict[str, Any]:
        """Validate a mapping of options against ``schema``; ``owner`` is the node of its key."""
        entries = self.mapping(node, where, example)
        self.known_keys(entries, list(schema), where)
        out = {}
        for key, option in schema.items():
            if key in entries:
                out[key] = option.check(self, entries[key][1], f"{where}.{key}")
            elif option.required:
                hint = f", like {example}" if example else ""
                raise self.error(owner, f"{where} needs '{key}'{hint}.")
            elif option.has_default:
                out[key] = option.default
        return out

    def path(self, node: yaml.Node, where: str) -> Path:
        text = self.text(node, where)
        if not text.strip():
            raise self.error(node, f"{where} is empty; give a file path.")
        path = Path(os.path.expanduser(text))
        return Path(os.path.normpath(path if path.is_absolute() else self.folder / path))

    def whole_number(self, node: yaml.Node, where: str) -> int:
        value = self.scalar(node, where, "a whole number")
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(node, f"{where} must be a whole number, not {describe(node)}.")
        return value
