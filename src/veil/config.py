"""Configuration files for anonymization: load and validate them, and write a commented starter.

A configuration is a YAML file a data steward can read and edit. Every setting an anonymization
needs is in it: the table, the role of each column, the generalization hierarchies, the privacy
models, the suppression limit, the utility metric and the algorithm::

    data: adult.csv            # path, relative to this file (a DATA argument overrides it)
    delimiter: ";"             # optional; sniffed when absent
    missing_values: [""]       # optional; cell texts that mean "missing"
    columns:
      quasi_identifiers: [sex, age, race]
      sensitive: [occupation]  # optional
      identifying: [name]      # optional; dropped from the release
    hierarchies:               # one per quasi-identifier for full-domain; optional for sensitive columns
      age: {file: adult_hierarchy_age.csv}      # ARX hierarchy file (a bare path works too)
      zip: {masking: {char: "*"}}               # builders: intervals {widths, start, top},
      birth: {dates: {units: [month, year]}}    #   masking {char, top}, dates {units, format, top},
      sex: {flat: {}}                           #   flat {top}
    orders:                    # optional: value order of a text column (ordered t-closeness)
      education: [Preschool, HS-grad, Bachelors]    # or {file: order.txt}, one value a line
    models:                    # every model listed must hold
      - k_anonymity: {k: 5}
      - entropy_l_diversity: {l: 3, sensitive: occupation}
    suppression_limit: 0.02    # share of records that may be removed, 0 <= s < 1 (default 0)
    metric: loss               # or {name: classification, label: salary-class}
    algorithm: fulldomain      # or {name: fulldomain, search: optimal|heuristic, time_limit: 10}
    output:                    # optional
      suppressed: remove       # or star
      shuffle: false
      seed: null

Every error is one sentence naming the file, the line and the key, e.g.
``adult.yaml, line 12: unknown model 'k_anonimity'; did you mean 'k_anonymity'?``.

The objects a configuration describes (the :class:`veil.Dataset`, the privacy models, the metric
and the anonymizer) are built on demand by :class:`AnonymizationConfig`, so loading a file only
reads the header of the table.
"""

from __future__ import annotations

import csv
import difflib
import io
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import yaml

from veil.errors import ConfigError, ParameterError, VeilError


# --------------------------------------------------------------------------------------------
# What a configuration holds (plain data)
# --------------------------------------------------------------------------------------------

HIERARCHY_BUILDERS = ("intervals", "masking", "dates", "flat")


@dataclass(frozen=True)
class HierarchySpec:
    """How to get one column's hierarchy: an ARX file or a builder with its options.

    Attributes:
        column: the column.
        kind: ``"file"`` or a builder: ``"intervals"``, ``"masking"``, ``"dates"``, ``"flat"``.
        options: the builder's keyword arguments (for a file: its ``delimiter``).
        path: the hierarchy file, resolved (``None`` for a builder).
        origin: where it was written, ``"<config>, line <n>"``, for error messages.
    """

    column: str
    kind: str
    options: Mapping[str, Any] = field(default_factory=dict)
    path: Path | None = None
    origin: str = ""

    def build(self, values=None):
        """The :class:`veil.Hierarchy`: the file read, or the builder run on ``values``.

        Raises:
            ConfigError: the file or the builder fails (the message names the config line).
        """
        from veil.data import builders
        from veil.data.hierarchy import Hierarchy

        try:
            if self.kind == "file":
                return Hierarchy.read_csv(self.path, **self.options)
            if self.kind == "intervals":
                return builders.intervals(values, **self.options)
            if self.kind == "masking":
                return builders.masking(values, **self.options)
            if self.kind == "dates":
                options = dict(self.options)
                units = options.pop("units", ("month", "year"))
                return builders.dates(values, units, **options)
            return builders.flat(values, **self.options)
        except VeilError as exc:
            raise ConfigError(f"{self.origin}: the hierarchy of '{self.column}' cannot be built: "
                              f"{_lower_first(str(exc))}") from None

    def to_dict(self) -> dict:
        if self.kind == "file":
            return {"file": str(self.path), **self.options}
        return {self.kind: _plain(self.options)}


@dataclass(frozen=True)
class ModelSpec:
    """One privacy model: its config name (``k_anonymity`` ...) and its options."""

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)
    origin: str = ""

    def build(self):
        """The :class:`veil.PrivacyModel`.

        Raises:
            ConfigError: the model refuses its parameters.
        """
        import veil.models

        cls = getattr(veil.models, MODELS[self.name].cls)
        try:
            return cls(**self.options)
        except ParameterError as exc:
            raise ConfigError(f"{self.origin}: {self.name}: {_lower_first(str(exc))}") from None

    def to_dict(self) -> dict:
        return {self.name: _plain(self.options)}


@dataclass(frozen=True)
class MetricSpec:
    """The utility metric the search minimizes: a key of ``veil.metrics.make_metric`` and options."""

    name: str = "loss"
    options: Mapping[str, Any] = field(default_factory=dict)
    origin: str = ""

    def to_dict(self) -> dict:
        return {"name": self.name, **_plain(self.options)}


@dataclass(frozen=True)
class AlgorithmSpec:
    """The anonymization algorithm and its options (``search``, ``time_limit`` for full-domain)."""

    name: str = "fulldomain"
    options: Mapping[str, Any] = field(default_factory=dict)
    origin: str = ""

    def to_dict(self) -> dict:
        return {"name": self.name, **_plain(self.options)}


@dataclass(frozen=True)
class OutputSpec:
    """How the release is written.

    Attributes:
        suppressed: ``"remove"`` drops suppressed records; ``"star"`` keeps them with every
            quasi-identifier replaced by ``*``.
        shuffle: shuffle the released rows, so row order reveals nothing.
        seed: seed of the shuffle (``None``: unpredictable).
    """

    suppressed: str = "remove"
    shuffle: bool = False
    seed: int | None = None

    def to_dict(self) -> dict:
        return {"suppressed": self.suppressed, "shuffle": self.shuffle, "seed": self.seed}


@dataclass(frozen=True)
class AnonymizationConfig:
    """A validated anonymization configuration.

    Paths are resolved (relative ones against the configuration file's folder). Nothing is built
    until asked: :meth:`dataset`, :meth:`models`, :meth:`metric` and :meth:`anonymizer`.
    """

    data: Path
    quasi_identifiers: tuple[str, ...]
    sensitive: tuple[str, ...] = ()
    identifying: tuple[str, ...] = ()
    delimiter: str | None = None
    missing_values: tuple[str, ...] = ("",)
    hierarchies: Mapping[str, HierarchySpec] = field(default_factory=dict)
    orders: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    model_specs: tuple[ModelSpec, ...] = ()
    suppression_limit: float = 0.0
    metric_spec: MetricSpec = MetricSpec()
    algorithm: AlgorithmSpec = AlgorithmSpec()
    output: OutputSpec = OutputSpec()
    source: Path | None = None

    def dataset(self):
        """The :class:`veil.Dataset`: the table read once, the hierarchies read or built.

        Raises:
            DataError: the table cannot be read.
            ConfigError: a hierarchy cannot be built, or a hierarchy file does not cover its column.
        """
        from veil.data.dataset import Dataset
        from veil.data.io import read_table
        from veil.errors import HierarchyError

        table = read_table(self.data, self.delimiter)
        hierarchies = {}
        for name, spec in self.hierarchies.items():
            values = None if spec.kind == "file" else table.data.column(name)
            hierarchies[name] = spec.build(values)
        # A file that does not cover its column is found when the dataset aligns it; the
        # hierarchies were made here, so their names can carry the config line for that message.
        for name, h in hierarchies.items():
            h.name = f"{self.hierarchies[name].origin}: {h.name}"
        try:
            return Dataset(table, quasi_identifiers=list(self.quasi_identifiers), sensitive=list(self.sensitive),
                           identifying=list(self.identifying), hierarchies=hierarchies,
                           orders={k: list(v) for k, v in self.orders.items()},
                           missing_values=self.missing_values)
        except HierarchyError as exc:
            raise ConfigError(str(exc)) from None

    def models(self) -> list:
        """The privacy models, in the order listed."""
        return [spec.build() for spec in self.model_specs]

    def metric(self):
        """The utility metric: ``veil.metrics.make_metric(name, **options)``.

        Raises:
            ConfigError: the metric refuses its options.
        """
        from veil.metrics import make_metric

        spec = self.metric_spec
        try:
            return make_metric(spec.name, **spec.options)
        except (ParameterError, TypeError) as exc:
            raise ConfigError(f"{spec.origin}: metric '{spec.name}': {_lower_first(str(exc))}") from None

    def anonymizer(self):
        """The anonymizer the configuration asks for (``veil.anonymize.FullDomain`` ...).

        Raises:
            ConfigError: the algorithm is not available in this version of veil, or refuses its
                options.
        """
        import importlib

        spec = self.algorithm
        schema = ALGORITHMS[spec.name]
        module = importlib.import_module("veil.anonymize")
        cls = getattr(module, schema.cls, None)
        if cls is None:
            available = [name for name, s in ALGORITHMS.items() if hasattr(module, s.cls)]
            raise ConfigError(f"{spec.origin}: algorithm '{spec.name}' is not available in this version of "
                              f"veil; use one of {', '.join(available)}.")
        try:
            return cls(self.models(), suppression_limit=self.suppression_limit, metric=self.metric(),
                       **spec.options)
        except ParameterError as exc:
            raise ConfigError(f"{spec.origin}: algorithm '{spec.name}': {_lower_first(str(exc))}") from None

    def to_dict(self) -> dict:
        """The configuration as plain JSON-ready data, e.g. for a release manifest."""
        return {
            "config": None if self.source is None else str(self.source),
            "data": str(self.data),
            "delimiter": self.delimiter,
            "missing_values": list(self.missing_values),
            "columns": {"quasi_identifiers": list(self.quasi_identifiers), "sensitive": list(self.sensitive),
                        "identifying": list(self.identifying)},
            "hierarchies": {name: spec.to_dict() for name, spec in self.hierarchies.items()},
            "orders": {name: list(values) for name, values in self.orders.items()},
            "models": [spec.to_dict() for spec in self.model_specs],
            "suppression_limit": self.suppression_limit,
            "metric": self.metric_spec.to_dict(),
            "algorithm": self.algorithm.to_dict(),
            "output": self.output.to_dict(),
        }


def _plain(options: Mapping[str, Any]) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in options.items()}


def _lower_first(text: str) -> str:
    """Join a sentence onto another: a lower-case start unless it begins with a name."""
    if text[:1].isupper() and not text[1:2].isupper():
        return text[0].lower() + text[1:]
    return text


# --------------------------------------------------------------------------------------------
# The schema
# --------------------------------------------------------------------------------------------

TOP_LEVEL_KEYS = ("data", "delimiter", "missing_values", "columns", "hierarchies", "orders", "models",
                  "suppression_limit", "metric", "algorithm", "output")
COLUMN_ROLES = ("quasi_identifiers", "sensitive", "identifying")

Check = Callable[["_Parser", yaml.Node, str], Any]


@dataclass(frozen=True)
class _Option:
    check: Check
    required: bool = False
    default: Any = None
    has_default: bool = False


def _required(check: Check) -> _Option:
    return _Option(check, required=True)


def _optional(check: Check, *default) -> _Option:
    return _Option(check, default=default[0] if default else None, has_default=bool(default))


@dataclass(frozen=True)
class _ModelSchema:
    cls: str
    options: Mapping[str, _Option]


@dataclass(frozen=True)
class _AlgorithmSchema:
    cls: str
    options: Mapping[str, _Option]
    needs_hierarchies: bool
    what: str


def _int_at_least(minimum: int) -> Check:
    return lambda p, node, where: p.integer(node, where, minimum)


def _number(lo: float | None = None, hi: float | None = None, *, lo_open: bool = False,
            hi_open: bool = False) -> Check:
    return lambda p, node, where: p.number(node, where, lo, hi, lo_open=lo_open, hi_open=hi_open)


def _choice(*choices: str) -> Check:
    return lambda p, node, where: p.choice(node, where, choices)


def _boolean(p: "_Parser", node: yaml.Node, where: str) -> bool:
    return p.boolean(node, where)


def _sensitive_column(p: "_Parser", node: yaml.Node, where: str) -> str:
    return p.declared_sensitive(node, where)


def _positive_or_null(p: "_Parser", node: yaml.Node, where: str) -> float | None:
    if p.is_null(node):
        return None
    return p.number(node, where, 0, None, lo_open=True)


def _seed(p: "_Parser", node: yaml.Node, where: str) -> int | None:
    return None if p.is_null(node) else p.integer(node, where, 0)


SENSITIVE = _optional(_sensitive_column)

MODELS: dict[str, _ModelSchema] = {
    "k_anonymity": _ModelSchema("KAnonymity", {"k": _required(_int_at_least(1))}),
    "alpha_k_anonymity": _ModelSchema("AlphaKAnonymity", {
        "alpha": _required(_number(0, 1, lo_open=True)), "k": _optional(_int_at_least(1)), "sensitive": SENSITIVE}),
    "distinct_l_diversity": _ModelSchema("DistinctLDiversity", {
        "l": _required(_int_at_least(1)), "sensitive": SENSITIVE}),
    "entropy_l_diversity": _ModelSchema("EntropyLDiversity", {
        "l": _required(_number(1)), "sensitive": SENSITIVE}),
    "recursive_cl_diversity": _ModelSchema("RecursiveCLDiversity", {
        "c": _required(_number(0, lo_open=True)), "l": _required(_int_at_least(1)), "sensitive": SENSITIVE}),
    "t_closeness": _ModelSchema("TCloseness", {
        "t": _required(_number(0, 1)), "distance": _optional(_choice("equal", "ordered", "hierarchical")),
        "sensitive": SENSITIVE}),
    "delta_disclosure": _ModelSchema("DeltaDisclosure", {
        "delta": _required(_number(0, lo_open=True)), "sensitive": SENSITIVE}),
    "beta_likeness": _ModelSchema("BetaLikeness", {
        "beta": _required(_number(0, lo_open=True)), "enhanced": _optional(_boolean), "sensitive": SENSITIVE}),
}

# The keys of veil.metrics.make_metric. Options are checked here where they name a column
# (``label``); the others are passed on and checked by make_metric itself.
METRICS = ("height", "precision", "discernibility", "aecs", "loss", "entropy", "classification", "kl",
           "ig_pl", "workload")
METRIC_COLUMN_OPTIONS = ("label",)


def _METRIC_ALIASES() -> Mapping[str, str]:
    """Other names of the metrics (``ncp`` for ``loss`` ...), when veil.metrics is there."""
    try:
        from veil.metrics import ALIASES
    except ImportError:
        return {}
    return ALIASES

ALGORITHMS: dict[str, _AlgorithmSchema] = {
    "fulldomain": _AlgorithmSchema("FullDomain", {
        "search": _optional(_choice("optimal", "heuristic"), "optimal"),
        "time_limit": _optional(_positive_or_null, None),
    }, needs_hierarchies=True, what="full-domain generalization"),
    "mondrian": _AlgorithmSchema("Mondrian", {
        "mode": _optional(_choice("strict", "relaxed"), "strict"),
        # No defaults here: Mondrian's own (hierarchy, false) apply when these are left out.
        "categorical": _optional(_choice("hierarchy", "order")),
        "allow_single_class": _optional(_boolean),
    }, needs_hierarchies=False, what="Mondrian"),
    "mdav": _AlgorithmSchema("MDAV", {
        "k": _optional(_int_at_least(1)),
        # decimals: one whole number for every numeric quasi-identifier, or {column: number}.
        "decimals": _optional(lambda p, node, where: (
            {key: p.integer(value, f"{where}.{key}", 0) for key, (_, value) in p.mapping(node, where).items()}
            if isinstance(node, yaml.MappingNode) else None if p.is_null(node) else p.integer(node, where, 0))),
        "nominal": _optional(lambda p, node, where: [p.column(item, where) for item in p.items(node, where)]),
        "missing": _optional(_choice("impute", "refuse")),  # default (MDAV's): impute
    }, needs_hierarchies=False, what="MDAV microaggregation"),
}

OUTPUT_OPTIONS: dict[str, _Option] = {
    "suppressed": _optional(_choice("remove", "star"), "remove"),
    "shuffle": _optional(_boolean, False),
    "seed": _optional(_seed, None),
}

BUILDER_OPTIONS = {
    "intervals": ("widths", "start", "top"),
    "masking": ("char", "top"),
    "dates": ("units", "format", "top"),
    "flat": ("top",),
}


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------

def load_config(path: str | os.PathLike, *, data: str | os.PathLike | None = None) -> AnonymizationConfig:
    """Read and validate an anonymization configuration.

    Args:
        path: the YAML file.
        data: a table path that overrides the file's ``data:`` (relative to the working folder,
            as given on a command line); the file may then leave ``data:`` out.

    Raises:
        ConfigError: the file is missing, is not valid YAML, or breaks the schema; the message is
            one sentence naming the file, the line and the key.
    """
    path = Path(path)
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"configuration file {name!r} does not exist; check the path.") from None
    except IsADirectoryError:
        raise ConfigError(f"{name!r} is a folder, not a configuration file.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"configuration file {name!r} cannot be read as UTF-8 text ({exc}).") from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        raise ConfigError(_describe_yaml_error(name, text, exc)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{name}: the file is not valid YAML ({exc}).") from None
    return _Parser(name, path.resolve().parent).parse(root, data)


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


def _suggest(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    if close:
        return f"; did you mean '{close[0]}'?"
    return f"; use one of {', '.join(choices)}."


def _describe(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    return repr(node.value) if node.tag.endswith(":str") else str(node.value or "nothing")


class _Parser:
    """Walks the composed YAML tree (nodes keep their line numbers) and validates it."""

    def __init__(self, name: str, folder: Path):
        self.name = name
        self.folder = folder
        self.constructor = yaml.constructor.SafeConstructor()
        self.header: list[str] | None = None
        self.data_name = ""
        self.sensitive: list[str] = []
        self.hierarchies: dict[str, HierarchySpec] = {}

    # -- basic helpers ------------------------------------------------------------------------

    def origin(self, node: yaml.Node | int) -> str:
        line = node if isinstance(node, int) else node.start_mark.line + 1
        return f"{self.name}, line {line}"

    def error(self, node: yaml.Node | int, message: str) -> ConfigError:
        return ConfigError(f"{self.origin(node)}: {message}")

    def is_null(self, node: yaml.Node) -> bool:
        return isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null"

    def scalar(self, node: yaml.Node, where: str, expected: str) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            raise self.error(node, f"{where} must be {expected}, not {_describe(node)}.")
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
            raise self.error(node, f"{where} must be a mapping of keys to values{hint}, not {_describe(node)}.")
        entries: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.error(key_node, f"a key under {where} must be a name, not {_describe(key_node)}.")
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
                raise self.error(key_node, what + _suggest(key, allowed))

    def text(self, node: yaml.Node, where: str) -> str:
        if self.is_null(node):
            raise self.error(node, f"{where} has no value; give one.")
        value = self.scalar(node, where, "text")
        if not isinstance(value, str):
            raise self.error(node, f"{where} must be text, not {_describe(node)}; put it in quotes.")
        return value

    def name_of(self, node: yaml.Node, where: str) -> str:
        """A column name or value as written (``1990`` or ``yes`` stay text)."""
        if not isinstance(node, yaml.ScalarNode):
            raise self.error(node, f"{where} must be a column name, not {_describe(node)}.")
        if not node.value.strip():
            raise self.error(node, f"{where} has an empty name.")
        return node.value

    def integer(self, node: yaml.Node, where: str, minimum: int) -> int:
        value = self.scalar(node, where, f"a whole number of at least {minimum}")
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(node, f"{where} must be a whole number of at least {minimum}, not {_describe(node)}.")
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
            raise self.error(node, f"{where} must be {expected}, not {_describe(node)}.")
        if ((lo is not None and (value <= lo if lo_open else value < lo))
                or (hi is not None and (value >= hi if hi_open else value > hi))):
            raise self.error(node, f"{where} must be {expected}, not {node.value}.")
        return value

    def boolean(self, node: yaml.Node, where: str) -> bool:
        value = self.scalar(node, where, "true or false")
        if not isinstance(value, bool):
            raise self.error(node, f"{where} must be true or false, not {_describe(node)}.")
        return value

    def choice(self, node: yaml.Node, where: str, choices: Sequence[str]) -> str:
        value = self.scalar(node, where, f"one of {', '.join(choices)}")
        if value not in choices:
            shown = f"'{value}'" if isinstance(value, str) else _describe(node)
            raise self.error(node, f"{where} cannot be {shown}" + _suggest(str(value), choices))
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

    def column(self, node: yaml.Node, where: str) -> str:
        """A name that must be a column of the table."""
        name = self.name_of(node, where)
        if self.header is not None and name not in self.header:
            raise self.error(node, f"{where} names '{name}', which is not a column of {self.data_name}"
                             + _suggest(name, self.header))
        return name

    def declared_sensitive(self, node: yaml.Node, where: str) -> str:
        name = self.name_of(node, where)
        if name not in self.sensitive:
            if not self.sensitive:
                raise self.error(node, f"{where} names '{name}', but columns.sensitive declares no sensitive "
                                 "column; add it there.")
            raise self.error(node, f"{where} names '{name}', which is not declared under columns.sensitive"
                             + _suggest(name, self.sensitive))
        return name

    def options(self, node: yaml.Node, where: str, schema: Mapping[str, _Option], owner: yaml.Node,
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

    # -- sections -------------------------------------------------------------------------------

    def parse(self, root: yaml.Node | None, data_override) -> AnonymizationConfig:
        if root is None:
            raise self.error(1, "the file is empty; it needs at least data, columns and models.")
        top = self.mapping(root, "the configuration", "'data: adult.csv' on its own line")
        self.known_keys(top, TOP_LEVEL_KEYS, "the top level")
        required = ["columns", "models"] + ([] if data_override is not None else ["data"])
        for key in required:
            if key not in top:
                raise self.error(1, f"the required key '{key}' is missing; {REQUIRED_HINTS[key]}")

        delimiter = None
        if "delimiter" in top:
            node = top["delimiter"][1]
            if not self.is_null(node):
                delimiter = self.text(node, "delimiter")
                if len(delimiter) != 1:
                    raise self.error(node, f"delimiter must be one character, like \";\" or \"\\t\", "
                                     f"not {delimiter!r}.")
        data = self.data_path(top.get("data"), data_override)
        self.header = _read_header(data, delimiter)

        missing_values: tuple[str, ...] = ("",)
        if "missing_values" in top:
            node = top["missing_values"][1]
            missing_values = tuple(self.name_of(item, "missing_values") if item.value else ""
                                   for item in self.items(node, "missing_values"))

        roles = self.columns(*top["columns"])
        quasi, sensitive, identifying = roles
        self.sensitive = list(sensitive)
        hierarchies = self.hierarchy_section(top.get("hierarchies"), quasi, sensitive)
        orders = self.order_section(top.get("orders"), quasi, sensitive)
        models = self.model_section(*top["models"])

        suppression = 0.0
        if "suppression_limit" in top:
            suppression = float(self.number(top["suppression_limit"][1], "suppression_limit", 0, 1, hi_open=True))
        metric = self.metric_section(top.get("metric"), identifying)
        algorithm = self.algorithm_section(top.get("algorithm"), quasi, roles_node=top["columns"][1],
                                           models=models)
        output = OutputSpec()
        if "output" in top:
            key_node, node = top["output"]
            output = OutputSpec(**self.options(node, "output", OUTPUT_OPTIONS, key_node,
                                               "{suppressed: remove, shuffle: false}"))

        for spec in models:
            spec.build()  # the models' own checks, reported at the model's line
        return AnonymizationConfig(
            data=data, delimiter=delimiter, missing_values=missing_values, quasi_identifiers=tuple(quasi),
            sensitive=tuple(sensitive), identifying=tuple(identifying), hierarchies=hierarchies, orders=orders,
            model_specs=tuple(models), suppression_limit=suppression, metric_spec=metric, algorithm=algorithm,
            output=output, source=Path(self.name))

    def data_path(self, entry, override) -> Path:
        if override is not None:
            path = Path(os.path.expanduser(str(override)))
            if not path.is_file():
                what = "is a folder, not a table" if path.is_dir() else "does not exist"
                raise ConfigError(f"the data file {str(path)!r} given in place of the data of {self.name} "
                                  f"{what}; check the path.")
            self.data_name = repr(str(path))
            return path
        key_node, node = entry
        path = self.path(node, "data")
        if not path.is_file():
            what = "is a folder, not a table" if path.is_dir() else "does not exist"
            raise self.error(node, f"data file {str(path)!r} {what} (a relative path is read from the "
                             f"folder of {self.name}); check the path.")
        self.data_name = repr(node.value)
        return path

    def columns(self, key_node: yaml.Node, node: yaml.Node) -> tuple[list[str], list[str], list[str]]:
        entries = self.mapping(node, "columns", "{quasi_identifiers: [age, zip], sensitive: [disease]}")
        self.known_keys(entries, COLUMN_ROLES, "columns")
        if "quasi_identifiers" not in entries:
            raise self.error(key_node, "columns has no quasi_identifiers; list the columns that can be linked "
                             "to outside data (age, ZIP code, sex, ...).")
        seen: dict[str, str] = {}
        roles = []
        for role in COLUMN_ROLES:
            names = []
            if role in entries:
                for item in self.items(entries[role][1], f"columns.{role}"):
                    name = self.column(item, f"columns.{role}")
                    if name in seen:
                        other = seen[name]
                        raise self.error(item, f"column '{name}' is listed twice, " + (
                            f"in columns.{role}; list it once." if other == role else
                            f"in columns.{other} and columns.{role}; give each column one role."))
                    seen[name] = role
                    names.append(name)
            roles.append(names)
        if not roles[0]:
            raise self.error(entries["quasi_identifiers"][1], "columns.quasi_identifiers is empty; list at least "
                             "one column that can be linked to outside data.")
        return roles[0], roles[1], roles[2]

    def hierarchy_section(self, entry, quasi: list[str], sensitive: list[str]) -> dict[str, HierarchySpec]:
        if entry is None:
            return {}
        specs: dict[str, HierarchySpec] = {}
        entries = self.mapping(entry[1], "hierarchies", "{age: {file: age.csv}}")
        allowed = quasi + sensitive
        for column, (key_node, node) in entries.items():
            where = f"hierarchies.{column}"
            if column not in allowed:
                if self.header is not None and column not in self.header:
                    raise self.error(key_node, f"hierarchies names '{column}', which is not a column of "
                                     f"{self.data_name}" + _suggest(column, self.header))
                hint = _suggest(column, allowed) if difflib.get_close_matches(column, allowed, 1, 0.6) else (
                    "; add it to columns.quasi_identifiers or columns.sensitive, or remove its hierarchy.")
                raise self.error(key_node, f"hierarchies names '{column}', which is neither a quasi-identifier "
                                 f"nor a sensitive column{hint}")
            specs[column] = self.hierarchy(column, key_node, node, where)
        self.hierarchies = specs
        return specs

    def hierarchy(self, column: str, key_node: yaml.Node, node: yaml.Node, where: str) -> HierarchySpec:
        origin = self.origin(key_node)
        if isinstance(node, yaml.ScalarNode) and not self.is_null(node):
            return HierarchySpec(column, "file", {}, self.hierarchy_file(node, where), origin)
        example = "{file: age.csv} or {intervals: {widths: [5, 10, 20]}}"
        entries = self.mapping(node, where, example)
        kinds = ("file",) + HIERARCHY_BUILDERS
        if "file" in entries:
            self.known_keys(entries, ("file", "delimiter"), where)
            options = {}
            if "delimiter" in entries:
                delimiter = self.text(entries["delimiter"][1], f"{where}.delimiter")
                if len(delimiter) != 1:
                    raise self.error(entries["delimiter"][1], f"{where}.delimiter must be one character.")
                options["delimiter"] = delimiter
            return HierarchySpec(column, "file", options, self.hierarchy_file(entries["file"][1], f"{where}.file"),
                                 origin)
        self.known_keys(entries, kinds, where)
        if len(entries) != 1:
            given = f"has {', '.join(entries)}" if entries else "is empty"
            raise self.error(key_node, f"{where} {given}; give one file or one builder, like {example}.")
        kind, (builder_key, options_node) = next(iter(entries.items()))
        return HierarchySpec(column, kind, self.builder_options(kind, options_node, f"{where}.{kind}", builder_key),
                             None, origin)

    def hierarchy_file(self, node: yaml.Node, where: str) -> Path:
        path = self.path(node, where)
        if path.is_dir():
            raise self.error(node, f"hierarchy {str(path)!r} ({where}) is a folder, not a hierarchy file; give the "
                             "CSV file inside it.")
        if not path.is_file():
            raise self.error(node, f"hierarchy file {str(path)!r} ({where}) does not exist (a relative path is "
                             f"read from the folder of {self.name}); check the path.")
        return path

    def builder_options(self, kind: str, node: yaml.Node, where: str, key_node: yaml.Node) -> dict[str, Any]:
        from veil.data.builders import DATE_GRANULARITIES

        entries = self.mapping(node, where)
        self.known_keys(entries, BUILDER_OPTIONS[kind], where)
        options: dict[str, Any] = {}
        if "top" in entries:
            options["top"] = self.name_of(entries["top"][1], f"{where}.top")
        if kind == "intervals":
            if "widths" not in entries:
                raise self.error(key_node, f"{where} needs 'widths', the band width of each level, like "
                                 "{widths: [5, 10, 20]}.")
            widths_node = entries["widths"][1]
            items = self.items(widths_node, f"{where}.widths")
            if not items:
                raise self.error(widths_node, f"{where}.widths is empty; give at least one band width.")
            widths = [self.number(item, f"{where}.widths", 0, None, lo_open=True) for item in items]
            for item, a, b in zip(items[1:], widths, widths[1:]):
                ratio = b / a
                if b < a or abs(ratio - round(ratio)) > 1e-9 * ratio:
                    raise self.error(item, f"{where}.widths: {b:g} is not a multiple of {a:g}; each band "
                                     "width must be a multiple of the one before, so the bands nest.")
            options["widths"] = widths
            if "start" in entries:
                options["start"] = self.number(entries["start"][1], f"{where}.start", None, None)
        elif kind == "masking":
            if "char" in entries:
                char = self.text(entries["char"][1], f"{where}.char")
                if len(char) != 1:
                    raise self.error(entries["char"][1], f"{where}.char must be one character, not {char!r}.")
                options["char"] = char
        elif kind == "dates":
            if "units" in entries:
                units_node = entries["units"][1]
                units = [self.choice(item, f"{where}.units", DATE_GRANULARITIES)
                         for item in self.items(units_node, f"{where}.units")]
                ranks = [DATE_GRANULARITIES.index(u) for u in units]
                if not units:
                    raise self.error(units_node, f"{where}.units is empty; give at least one unit, like [month, year].")
                if ranks != sorted(set(ranks)):
                    raise self.error(units_node, f"{where}.units must go from fine to coarse, each once "
                                     f"({', '.join(DATE_GRANULARITIES)}).")
                if "week" in units and len(units) > 1:
                    raise self.error(units_node, f"{where}.units: weeks do not nest in months or years; "
                                     "use 'week' alone.")
                options["units"] = tuple(units)
            if "format" in entries:
                options["format"] = self.text(entries["format"][1], f"{where}.format")
        return options

    def order_section(self, entry, quasi: list[str], sensitive: list[str]) -> dict[str, tuple[str, ...]]:
        if entry is None:
            return {}
        orders = {}
        for column, (key_node, node) in self.mapping(entry[1], "orders", "{education: [low, mid, high]}").items():
            where = f"orders.{column}"
            if column not in quasi + sensitive:
                raise self.error(key_node, f"orders names '{column}', which is neither a quasi-identifier nor a "
                                 "sensitive column" + _suggest(column, quasi + sensitive))
            if isinstance(node, yaml.MappingNode):
                entries = self.mapping(node, where)
                self.known_keys(entries, ("file",), where)
                if "file" not in entries:
                    raise self.error(key_node, f"{where} needs 'file', or a list of the values in order.")
                path = self.path(entries["file"][1], f"{where}.file")
                if not path.is_file():
                    raise self.error(entries["file"][1], f"order file {str(path)!r} ({where}.file) does not "
                                     f"exist (a relative path is read from the folder of {self.name}).")
                values = [line for line in path.read_text(encoding="utf-8-sig").splitlines() if line]
            else:
                values = [self.name_of(item, where) for item in self.items(node, where)]
            if not values:
                raise self.error(node, f"{where} is empty; list the values of '{column}' in order.")
            orders[column] = tuple(values)
        return orders

    def model_section(self, key_node: yaml.Node, node: yaml.Node) -> list[ModelSpec]:
        example = "'- k_anonymity: {k: 5}'"
        if not isinstance(node, yaml.SequenceNode):
            raise self.error(node, f"models must be a list, one model per line starting with '-', like {example}.")
        if not node.value:
            raise self.error(node, f"models is empty; list at least one privacy model, like {example}.")
        specs = []
        for item in node.value:
            if isinstance(item, yaml.ScalarNode) and item.value in MODELS:
                raise self.error(item, f"model '{item.value}' needs its options, like {example}.")
            if isinstance(item, yaml.ScalarNode):
                raise self.error(item, f"unknown model '{item.value}'" + _suggest(item.value, list(MODELS)))
            entries = self.mapping(item, "each model", example)
            if len(entries) != 1:
                raise self.error(item, f"each entry of models is one model name with its options, like {example}, "
                                 f"but this one has {len(entries)} keys ({', '.join(entries)}); indent the "
                                 "options under the model name.")
            name, (name_node, options_node) = next(iter(entries.items()))
            if name not in MODELS:
                raise self.error(name_node, f"unknown model '{name}'" + _suggest(name, list(MODELS)))
            options = self.options(options_node, name, MODELS[name].options, name_node, _MODEL_EXAMPLES[name])
            options = {k: v for k, v in options.items() if v is not None}
            if name != "k_anonymity" and not self.sensitive:
                raise self.error(name_node, f"{name} constrains a sensitive column, but columns.sensitive declares "
                                 "none; add one.")
            if options.get("distance") == "hierarchical":
                self.need_sensitive_hierarchy(name, options, options_node)
            specs.append(ModelSpec(name, options, self.origin(name_node)))
        return specs

    def need_sensitive_hierarchy(self, name: str, options: dict, node: yaml.Node) -> None:
        targets = [options["sensitive"]] if "sensitive" in options else self.sensitive
        if not any(t in self.hierarchies for t in targets):
            which = f"'{targets[0]}'" if len(targets) == 1 else "a sensitive column"
            where = self.mapping(node, name).get("distance", (node, node))[1]
            raise self.error(where, f"{name}.distance hierarchical needs a hierarchy for {which}; add one under "
                             "hierarchies.")

    def metric_section(self, entry, identifying: list[str]) -> MetricSpec:
        if entry is None:
            return MetricSpec("loss", {}, f"{self.name}")
        key_node, node = entry
        if isinstance(node, yaml.ScalarNode):
            return MetricSpec(self.metric_name(node), {}, self.origin(node))
        entries = self.mapping(node, "metric", "{name: classification, label: salary-class}")
        if "name" not in entries:
            raise self.error(key_node, "metric needs 'name', like {name: classification, label: salary-class}.")
        name = self.metric_name(entries["name"][1])
        options = {}
        for key, (_, option_node) in entries.items():
            if key == "name":
                continue
            if key in METRIC_COLUMN_OPTIONS:
                column = self.column(option_node, f"metric.{key}")
                if column in identifying:
                    raise self.error(option_node, f"metric.{key} names '{column}', an identifying column, which is "
                                     "dropped from the release; choose another column.")
                options[key] = column
            else:
                options[key] = self.constructor.construct_object(option_node, deep=True)
        spec = MetricSpec(name, options, self.origin(key_node))
        self.try_metric(spec)
        return spec

    def metric_name(self, node: yaml.Node) -> str:
        name = self.scalar(node, "metric", "a metric name")
        if isinstance(name, str):
            name = _METRIC_ALIASES().get(name.strip().lower(), name)
        if not isinstance(name, str) or name not in METRICS:
            raise self.error(node, f"unknown metric '{node.value}'" + _suggest(str(node.value), METRICS))
        return name

    def try_metric(self, spec: MetricSpec) -> None:
        """Let make_metric check the options now, when veil.metrics is there."""
        try:
            from veil.metrics import make_metric
        except ImportError:
            return
        try:
            make_metric(spec.name, **spec.options)
        except (ParameterError, TypeError) as exc:
            raise ConfigError(f"{spec.origin}: metric '{spec.name}': {_lower_first(str(exc))}") from None

    def algorithm_section(self, entry, quasi: list[str], roles_node: yaml.Node,
                          models: list[ModelSpec]) -> AlgorithmSpec:
        if entry is None:
            name, options, origin, line_node = "fulldomain", {}, self.name, None
            options = {k: o.default for k, o in ALGORITHMS[name].options.items() if o.has_default}
        else:
            key_node, node = entry
            line_node = key_node
            origin = self.origin(key_node)
            if isinstance(node, yaml.ScalarNode):
                name = self.algorithm_name(node)
                options = {k: o.default for k, o in ALGORITHMS[name].options.items() if o.has_default}
            else:
                entries = self.mapping(node, "algorithm", "{name: fulldomain, search: optimal}")
                if "name" not in entries:
                    raise self.error(key_node, "algorithm needs 'name', like {name: fulldomain, search: optimal}.")
                name = self.algorithm_name(entries["name"][1])
                schema = dict(ALGORITHMS[name].options)
                schema["name"] = _Option(lambda p, n, w: None)
                options = self.options(node, "algorithm", schema, key_node)
                options.pop("name")
        schema = ALGORITHMS[name]
        if name == "mdav" and options.get("k") is None:
            if not any(m.name == "k_anonymity" or (m.name == "alpha_k_anonymity" and m.options.get("k"))
                       for m in models):
                raise self.error(line_node or 1, "algorithm mdav needs k: give algorithm.k or a k_anonymity model.")
        if schema.needs_hierarchies:
            missing = [q for q in quasi if q not in self.hierarchies]
            if missing:
                node = self._qi_node(roles_node, missing[0])
                raise self.error(node, f"quasi-identifier '{missing[0]}' has no hierarchy, and {schema.what} needs "
                                 "one per quasi-identifier; add it under hierarchies (a file, or a builder such "
                                 "as {flat: {}}).")
        return AlgorithmSpec(name, {k: v for k, v in options.items() if not (name == "mdav" and v is None)},
                             origin)

    def algorithm_name(self, node: yaml.Node) -> str:
        name = self.scalar(node, "algorithm", "an algorithm name")
        if not isinstance(name, str) or name not in ALGORITHMS:
            raise self.error(node, f"unknown algorithm '{node.value}'" + _suggest(str(node.value), list(ALGORITHMS)))
        return name

    def _qi_node(self, roles_node: yaml.Node, column: str) -> yaml.Node:
        entries = self.mapping(roles_node, "columns")
        for item in self.items(entries["quasi_identifiers"][1], "columns.quasi_identifiers"):
            if item.value == column:
                return item
        return roles_node


REQUIRED_HINTS = {
    "data": "give the table to anonymize, like 'data: adult.csv' (relative to this file).",
    "columns": "give the roles of the columns, like 'columns: {quasi_identifiers: [age, zip], sensitive: [disease]}'.",
    "models": "list the privacy models the release must satisfy, like 'models: [{k_anonymity: {k: 5}}]'.",
}

_MODEL_EXAMPLES = {
    "k_anonymity": "{k: 5}",
    "alpha_k_anonymity": "{alpha: 0.5, k: 5}",
    "distinct_l_diversity": "{l: 2}",
    "entropy_l_diversity": "{l: 3, sensitive: occupation}",
    "recursive_cl_diversity": "{c: 3, l: 2}",
    "t_closeness": "{t: 0.2, distance: equal}",
    "delta_disclosure": "{delta: 1.5}",
    "beta_likeness": "{beta: 1, enhanced: false}",
}


def _read_header(path: Path, delimiter: str | None) -> list[str] | None:
    """The column names of a table, read cheaply; ``None`` when they cannot be read here (reading
    the whole table later gives the precise error)."""
    from veil.data.io import SNIFF_BYTES, sniff_delimiter

    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
        sample = head.decode("utf-8-sig", errors="ignore")
        if not sample.strip():
            return None
        delimiter = delimiter or sniff_delimiter(sample)
        return next(csv.reader(io.StringIO(sample, newline=""), delimiter=delimiter))
    except Exception:  # noqa: BLE001 - any failure here is reported by the real read
        return None


# --------------------------------------------------------------------------------------------
# The starter configuration
# --------------------------------------------------------------------------------------------

IDENTIFYING_WORDS = ("name", "email", "mail", "phone", "telephone", "mobile", "ssn", "address",
                     "passport", "iban", "username", "surname", "firstname", "lastname")
IDENTIFYING_TOKENS = ("id", "uuid", "guid", "ssn", "nhs", "mrn")
SENSITIVE_WORDS = ("disease", "diagnosis", "illness", "salary", "income", "occupation", "condition", "wage",
                   "treatment", "medication")
POSTAL_WORDS = ("zip", "postcode", "postal", "plz")
DEFAULT_SAMPLE_ROWS = 100_000


def _tokens(name: str) -> list[str]:
    """Words of a column name: ``PatientID`` → patient, id; ``e_mail-2`` → e, mail, 2."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return [t for t in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if t]


def _has_word(tokens: Sequence[str], words: Sequence[str]) -> bool:
    """Whether a word of the name is, begins or ends with one of ``words`` (``firstname``, ``emails``)."""
    return any(t == w or t.startswith(w) or t.endswith(w) for t in tokens for w in words)


def _yaml_text(value: str) -> str:
    """A string as a YAML flow scalar, quoted only when it has to be."""
    out = yaml.safe_dump(value, default_flow_style=True, width=1 << 30, allow_unicode=True)
    if out.endswith("\n...\n"):
        out = out[:-5]
    return out.strip()


def _nice_width(x: float) -> float:
    """The 1-2-5 series number nearest above ``x`` (5, 10, 20, 50, ...)."""
    if x <= 0:
        return 1.0
    exponent = math.floor(math.log10(x))
    for mantissa in (1, 2, 5, 10):
        width = mantissa * 10.0 ** exponent
        if width >= x * (1 - 1e-9):
            return float(f"{width:.12g}")
    return 10.0 ** (exponent + 1)


def _band_widths(nums) -> list[float]:
    """About 15 bands over the range at the first level, then twice and four times as wide (only
    widths narrower than the range; whole numbers get bands wider than 1)."""
    lo, hi = float(min(nums)), float(max(nums))
    integral = all(float(x).is_integer() for x in nums)
    base = _nice_width((hi - lo) / 15)
    if integral:
        base = max(base, 1.0)
    return [w for w in (base, 2 * base, 4 * base) if w < hi - lo and not (integral and w <= 1)]


def _number_text(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.12g}"


@dataclass
class _Guess:
    column: str
    role: str                 # quasi_identifiers, sensitive or identifying
    why: str                  # the role guess, for a comment
    hierarchy: str = ""       # YAML flow text of the hierarchy
    hierarchy_why: str = ""


def _guess(name: str, values) -> _Guess:
    import pandas as pd

    from veil.data.encoding import encode_column, stray_texts

    column = encode_column(name, values)
    present = [i for i in range(column.cardinality) if i != column.missing_code]
    labels = [str(column.labels[i]) for i in present]
    non_missing = int((column.codes != column.missing_code).sum()) if column.missing_code is not None \
        else len(column.codes)
    tokens = _tokens(name)

    if any(t in IDENTIFYING_TOKENS for t in tokens) or _has_word(tokens, IDENTIFYING_WORDS):
        return _Guess(name, "identifying", "the name suggests an identifier")
    if not labels:
        return _Guess(name, "identifying", "every value is missing, so the column is dropped")
    if _has_word(tokens, SENSITIVE_WORDS):
        return _Guess(name, "sensitive", "the name suggests a sensitive attribute")
    stray = stray_texts(column)
    if not column.is_numeric and not stray and non_missing > 1 and len(labels) == non_missing:
        return _Guess(name, "identifying", "every value is different text, as in a name or a record number")

    guess = _Guess(name, "quasi_identifiers", "neither identifying nor sensitive by its name")
    digits = bool(labels) and all(re.fullmatch(r"\d+", v) for v in labels)
    same_length = digits and len({len(v) for v in labels}) == 1
    postal = _has_word(tokens, POSTAL_WORDS)
    if digits and (postal or (same_length and len(labels[0]) >= 5)
                   or (same_length and len(labels[0]) >= 2 and any(v.startswith("0") for v in labels))):
        length = max(len(v) for v in labels)
        example = labels[0]
        masked = [example[:len(example) - i] + "*" * i for i in (1, 2)]
        why = "a postal-code name" if postal else f"{length}-digit codes"
        guess.hierarchy = "{masking: {}}"
        guess.hierarchy_why = f"{why}, so digits are masked from the right ({masked[0]}, {masked[1]}, ...)"
        return guess
    if not column.is_numeric and labels and all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", v) for v in labels):
        guess.hierarchy = "{dates: {units: [month, year]}}"
        guess.hierarchy_why = "dates, so day → month → year"
        return guess
    if column.is_numeric and len(labels) > 2:
        nums = column.numeric[:len(present)] if column.missing_code is not None else column.numeric
        widths = _band_widths(nums)
        if widths:
            lo, hi = float(min(nums)), float(max(nums))
            shown = ", ".join(_number_text(w) for w in widths)
            guess.hierarchy = f"{{intervals: {{widths: [{shown}]}}}}"
            rest = "".join(f", then {_number_text(w)}" for w in widths[1:])
            guess.hierarchy_why = (f"numeric ({_number_text(lo)} to {_number_text(hi)}), so "
                                   f"{_number_text(widths[0])}-wide bands{rest}, then *")
            return guess
    guess.hierarchy = "{flat: {}}"
    if stray:
        shown = ", ".join(f"{value!r} ({count:,} row{'s' if count != 1 else ''})" for value, count in stray.items())
        numbers = pd.to_numeric(pd.Series(labels, dtype=object), errors="coerce").dropna().to_numpy(dtype=float)
        widths = _band_widths(numbers)
        bands = (f" and give {{intervals: {{widths: [{', '.join(_number_text(w) for w in widths)}]}}}}"
                 if widths else "")
        guess.hierarchy_why = (f"numbers, but read as text because of {shown}: correct those values, or list them "
                               f"under a top-level missing_values key{bands}; as text, either kept or suppressed to *")
        return guess
    kind = "numeric with few values" if column.is_numeric else "text"
    guess.hierarchy_why = f"{kind}, so either kept or suppressed to * (replace with a hierarchy file for finer steps)"
    return guess


def starter_config(data_path: str | os.PathLike, *, delimiter: str | None = None,
                   sample_rows: int = DEFAULT_SAMPLE_ROWS, relative_to: str | os.PathLike | None = None) -> str:
    """The text of a commented configuration for a table, with every guess marked as one.

    Roles are guessed from column names and values: identifiers (``id``, ``name``, ``email``,
    ``phone``, ``ssn``, ``address`` ..., or text whose values are all different), sensitive
    columns (``disease``, ``diagnosis``, ``salary``, ``income``, ``occupation`` ...), and every
    other column a quasi-identifier with a built hierarchy: numeric bands, masking for
    fixed-length digit codes such as ZIP codes, calendar units for dates, otherwise flat.

    Args:
        data_path: the table (CSV or Parquet).
        delimiter: the CSV delimiter (sniffed when ``None``).
        sample_rows: how many rows the guesses read.
        relative_to: the folder the configuration will be saved in; ``data:`` is written relative
            to it (default: the path as given).

    Raises:
        DataError: the table cannot be read.
        ConfigError: no column can be taken for a quasi-identifier.
    """
    from veil.data.io import read_table

    if sample_rows < 1:
        raise ParameterError(f"sample_rows must be at least 1, not {sample_rows}.")
    table = read_table(data_path, delimiter)
    sample = table.data.slice(0, sample_rows)
    guesses = [_guess(name, sample.column(name)) for name in table.columns]
    by_role = {role: [g for g in guesses if g.role == role] for role in COLUMN_ROLES}
    if not by_role["quasi_identifiers"]:
        raise ConfigError(f"no column of {str(data_path)!r} looks like a quasi-identifier (each looks identifying "
                          "or sensitive); write the configuration by hand, starting from "
                          "examples/adult-fulldomain.yaml.")

    if relative_to is None:
        data_text = str(data_path)
    else:
        try:
            data_text = os.path.relpath(Path(data_path).resolve(), Path(relative_to).resolve())
        except ValueError:  # another drive on Windows
            data_text = str(Path(data_path).resolve())
    data_text = data_text.replace(os.sep, "/")
    shown_name = Path(data_path).name

    out: list[str] = []
    add = out.append

    def item(text: str, comment: str, indent: int = 4, column: int = 30) -> None:
        line = " " * indent + text
        add(f"{line:<{column}}  # {comment}" if comment else line)

    add(f"# veil anonymization configuration for {shown_name}, written by `veil init`.")
    add("#")
    add("# Every role and hierarchy below is a GUESS made from the column names and values, and each")
    add("# guess says so. Check every line before you publish anything.")
    add("#")
    add("# Run:  veil anonymize --config THIS_FILE --out release.csv")
    add("# A DATA argument (veil anonymize DATA --config THIS_FILE ...) overrides `data:` below.")
    add("")
    item(f"data: {_yaml_text(data_text)}", "the table; a relative path is read from this file's folder", 0)
    if table.kind == "csv":
        item(f"delimiter: {_yaml_text(table.delimiter)}", "sniffed from the file", 0)
    add("")
    add("columns:")
    add("  # Quasi-identifiers can be linked to outside data (age, ZIP code, sex, ...); they are generalized.")
    add("  quasi_identifiers:")
    for g in by_role["quasi_identifiers"]:
        item(f"- {_yaml_text(g.column)}", f"guessed: {g.why}")
    add("  # Sensitive columns are what an adversary must not learn; the models below protect them.")
    if by_role["sensitive"]:
        add("  sensitive:")
        for g in by_role["sensitive"]:
            item(f"- {_yaml_text(g.column)}", f"guessed: {g.why}")
    else:
        add("  sensitive: []                 # guessed: no column name suggested a sensitive attribute")
    add("  # Identifying columns (names, record numbers) are dropped from the release.")
    if by_role["identifying"]:
        add("  identifying:")
        for g in by_role["identifying"]:
            item(f"- {_yaml_text(g.column)}", f"guessed: {g.why}")
    else:
        add("  identifying: []               # guessed: no column looked identifying")
    add("  # Every column not listed above is released unchanged.")
    add("")
    add("# One hierarchy per quasi-identifier: level 0 is the original value, each level is coarser.")
    add("# Builders: intervals {widths: [5, 10, 20], start: 0}, masking {char: \"*\"},")
    add("# dates {units: [month, year], format: \"%Y-%m-%d\"}, flat {} (kept or *); or an ARX hierarchy")
    add("# file: {file: hierarchy_age.csv} (no header, ;-separated, one row per value, one column per level).")
    add("# A sensitive column may have one too (hierarchical t-closeness uses it).")
    add("hierarchies:")
    for g in by_role["quasi_identifiers"]:
        item(f"{_yaml_text(g.column)}: {g.hierarchy}", f"guessed: {g.hierarchy_why}", indent=2, column=44)
    add("")
    add("# The release must satisfy every model listed. Others: alpha_k_anonymity {alpha, k},")
    add("# entropy_l_diversity {l}, recursive_cl_diversity {c, l}, t_closeness {t, distance: equal|ordered|")
    add("# hierarchical}, delta_disclosure {delta}, beta_likeness {beta, enhanced}; each may name its")
    add("# column with `sensitive: NAME` (default: every sensitive column).")
    add("models:")
    item("- k_anonymity: {k: 5}", "default: each record shares its quasi-identifiers with 4 others", 2, 44)
    if by_role["sensitive"]:
        item("- distinct_l_diversity: {l: 2}",
             "default, as a sensitive column was guessed: 2 different values per class", 2, 44)
    add("")
    item("suppression_limit: 0.02", "default: at most 2 % of the records may be removed", 0, 44)
    item("metric: loss", "information loss; or height, precision, discernibility, aecs,", 0, 44)
    add(f"{'':44}  # entropy, kl, ig_pl, workload, {{name: classification, label: COLUMN}}")
    item("algorithm: fulldomain", "or {name: fulldomain, search: optimal|heuristic, time_limit: 60}", 0, 44)
    add("output:")
    item("suppressed: remove", "remove suppressed records, or star: keep them with * everywhere", 2, 44)
    item("shuffle: false", "true shuffles the released rows", 2, 44)
    item("seed: null", "seed of the shuffle (null: unpredictable)", 2, 44)
    return "\n".join(out) + "\n"


def write_starter_config(data_path: str | os.PathLike, out_path: str | os.PathLike, *,
                         delimiter: str | None = None, sample_rows: int = DEFAULT_SAMPLE_ROWS,
                         overwrite: bool = False) -> None:
    """Write :func:`starter_config` to ``out_path`` atomically, with ``data:`` relative to it.

    Raises:
        ConfigError: ``out_path`` exists and ``overwrite`` is false.
        ParameterError: ``out_path`` is the table itself (even with ``overwrite``).
        DataError: the table cannot be read, or ``out_path`` cannot be written (see
            :class:`veil.output.OutputSet`).
    """
    from veil.output import OutputSet

    out_path = Path(out_path)
    outputs = OutputSet([out_path], reads=[data_path])
    if out_path.exists() and not overwrite:
        raise ConfigError(f"{str(out_path)!r} already exists; choose another file name or allow overwriting it.")
    text = starter_config(data_path, delimiter=delimiter, sample_rows=sample_rows, relative_to=out_path.parent)
    with outputs:
        outputs.put(out_path, text)
        outputs.commit()
