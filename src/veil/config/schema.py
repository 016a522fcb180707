"""The declarative schema of a configuration file: its sections, and the keys, types and ranges each
takes.

The tables here are the one description of the file format. The parser (:mod:`veil.config.parser`)
reads every key, every option and every value type from them, and :func:`configuration_schema`
renders the same tables as a JSON Schema (draft 2020-12) for editors, so the two cannot disagree
on which keys exist. What JSON Schema cannot say (a column must be in the table, a sensitive
column must be declared, band widths must nest) only the parser checks.

A value type is a small object that checks one YAML value (``type(parser, node, where)``, raising
the parser's ``file, line N: …`` sentence) and states what it accepts (``type.json_schema()``):
:class:`WholeNumber`, :class:`Number`, :class:`Choice`, :class:`Boolean`, :class:`Nullable` and
the column types. An :class:`Option` says whether a key is required and its default; a mapping of
options is an :class:`Options`.

**Adding a section** is one entry of :data:`SECTIONS`: a :class:`Section` with its value type and
the :class:`~veil.config.specification.AnonymizationConfig` field it fills (a field with a default,
so that files without the section keep working). The parser checks it, the JSON Schema lists it,
and the tests try every key of it against both. A section whose check needs other sections (the
table's header, the declared columns) has a reader of its own in the parser instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from veil.config.per_quasi_identifier import PerQuasiIdentifier
from veil.config.specification import (EngineSpec, GivenMarginalSpec, MarginalModelSpec, MarginalsSpec, OutputSpec,
                                       PolicySpec, PopulationSpec)
from veil.data.builders import DATE_GRANULARITIES
from veil.metrics import ALIASES as METRIC_ALIASES

if TYPE_CHECKING:
    import yaml

# A value type's checks take the parser (veil.config.parser.Parser, which imports this module, so
# it is not named here) and call its primitives: integer, number, choice, column, items, mapping …
Parser = Any

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: The schema as veil ships it (``veil init`` names it on a configuration's first line).
SHIPPED_SCHEMA = Path(__file__).resolve().parent.parent / "resources" / "veil.schema.json"

#: A name as YAML may write it: ``1990`` and ``yes`` are names too (the parser keeps the text).
NAME_SCHEMA = {"type": ["string", "number", "boolean"], "minLength": 1}


# --------------------------------------------------------------------------------------------
# Value types: a check of one YAML value, and the JSON Schema of what it accepts


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
        return _one_or_list(NAME_SCHEMA)


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
        whole_numbers = {"type": "object", "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}},
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


def _one_or_list(item: Mapping) -> dict:
    """A list of items, one item on its own, or nothing (as the parser's ``items`` reads them)."""
    return {"anyOf": [dict(item), {"type": "array", "items": dict(item)}, {"type": "null"}]}


# --------------------------------------------------------------------------------------------
# Options and mappings of options


@dataclass(frozen=True)
class Option:
    """One key of a mapping: its value type, whether it must be given, and its default.

    ``check`` is a value type above (or any function of the shape ``check(parser, node, where)``);
    a :class:`JsonOnly` one is described, not called: the parser reads that key by a rule of its
    own.
    """

    check: Callable[..., Any]
    required: bool = False
    default: Any = None
    has_default: bool = False


def required(check: Callable[..., Any]) -> Option:
    """An option the mapping must have."""
    return Option(check, required=True)


def optional(check: Callable[..., Any], *default) -> Option:
    """An option that may be left out; with a default, that value is filled in."""
    return Option(check, default=default[0] if default else None, has_default=bool(default))


def options_schema(options: Mapping[str, Option], *, extra: Mapping[str, Any] | None = None) -> dict:
    """The JSON Schema of a mapping of ``options`` (and no other key); ``extra`` adds required
    properties (an algorithm's ``name``). Without a required key, ``null`` (read as an empty
    mapping) is accepted too."""
    properties = dict(extra or {})
    for key, option in options.items():
        schema = option.check.json_schema()
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


# --------------------------------------------------------------------------------------------
# Privacy models, utility metrics, algorithms, hierarchy builders


@dataclass(frozen=True)
class ModelSchema:
    """A privacy model of the ``models`` list: the :mod:`veil.models` class and its options."""

    cls: str
    options: Mapping[str, Option]
    example: str = ""
    about: str = ""
    #: whether the model constrains a column of columns.sensitive (join k-anonymity may read one of
    #: the earlier release instead)
    needs_sensitive: bool = True


@dataclass(frozen=True)
class MetricSchema:
    """A utility metric (a key of :func:`veil.metrics.make_metric`) and its options. Options that
    name a column are checked by the parser; the others by the metric itself."""

    options: Mapping[str, Option] = field(default_factory=dict)
    about: str = ""


@dataclass(frozen=True)
class AlgorithmSchema:
    """An anonymization algorithm: the :mod:`veil.anonymize` class, its options, whether it needs
    a hierarchy for every quasi-identifier, the sections of the file that do not apply to it
    (``excludes``: the αβ algorithm takes no privacy models, suppression, metric or output style),
    and groups of options of which exactly one must be given (``exactly_one``: its d or k)."""

    cls: str
    options: Mapping[str, Option]
    needs_hierarchies: bool
    what: str
    excludes: tuple[str, ...] = ()
    exactly_one: tuple[tuple[str, ...], ...] = ()

    @property
    def named_alone(self) -> bool:
        """Whether the bare name will do (``algorithm: fulldomain``): no option is required."""
        return not self.exactly_one and not any(option.required for option in self.options.values())

    def json_schema(self, name: str) -> dict:
        """``{name: …, options}`` as JSON Schema."""
        schema = dict(options_schema(self.options, extra={"name": {"const": name}}), description=self.what)
        groups = [{"oneOf": [{"required": [key]} for key in group]} for group in self.exactly_one]
        return {**schema, "allOf": groups} if groups else schema


@dataclass(frozen=True)
class BuilderSchema:
    """A hierarchy builder of :mod:`veil.data.builders` and its options."""

    options: Mapping[str, Option]
    about: str = ""


SENSITIVE = optional(SensitiveColumn())

MODELS: dict[str, ModelSchema] = {
    "k_anonymity": ModelSchema("KAnonymity", {"k": required(WholeNumber(1))}, "{k: 5}",
                               "every record shares its quasi-identifiers with at least k − 1 others",
                               needs_sensitive=False),
    "alpha_k_anonymity": ModelSchema("AlphaKAnonymity", {
        "alpha": required(Number(0, 1, lo_open=True)), "k": optional(WholeNumber(1)), "sensitive": SENSITIVE},
        "{alpha: 0.5, k: 5}", "no sensitive value has a share above alpha in a class (and k-anonymity)"),
    "distinct_l_diversity": ModelSchema("DistinctLDiversity", {
        "l": required(WholeNumber(1)), "sensitive": SENSITIVE}, "{l: 2}",
        "every class holds at least l distinct sensitive values"),
    "entropy_l_diversity": ModelSchema("EntropyLDiversity", {
        "l": required(Number(1)), "sensitive": SENSITIVE}, "{l: 3, sensitive: occupation}",
        "the entropy of every class's sensitive values is at least log l"),
    "recursive_cl_diversity": ModelSchema("RecursiveCLDiversity", {
        "c": required(Number(0, lo_open=True)), "l": required(WholeNumber(1)), "sensitive": SENSITIVE},
        "{c: 3, l: 2}", "in every class the most frequent value is rarer than c times the l-th most frequent and "
                       "the rarer ones together"),
    "t_closeness": ModelSchema("TCloseness", {
        "t": required(Number(0, 1)), "distance": optional(Choice(("equal", "ordered", "hierarchical"))),
        "sensitive": SENSITIVE}, "{t: 0.2, distance: equal}",
        "every class's sensitive distribution is within t of the table's (earth mover's distance)"),
    "delta_disclosure": ModelSchema("DeltaDisclosure", {
        "delta": required(Number(0, lo_open=True)), "sensitive": SENSITIVE}, "{delta: 1.5}",
        "no class moves the log of a sensitive value's probability by delta or more"),
    "beta_likeness": ModelSchema("BetaLikeness", {
        "beta": required(Number(0, lo_open=True)), "enhanced": optional(Boolean()), "sensitive": SENSITIVE},
        "{beta: 1, enhanced: false}", "no class raises a sensitive value's share by more than beta, relatively"),
    "join": ModelSchema("JoinKAnonymity", {
        "earlier": required(File()), "manifest": optional(File()), "k": required(WholeNumber(1)),
        "l": optional(WholeNumber(1)), "sensitive": optional(Name())},
        "{earlier: first/manifest.json, k: 5}",
        "joined with an earlier release of the same records on their shared columns, every person is among at "
        "least k records (and l sensitive values): Wang and Fung's sequential releases", needs_sensitive=False),
    "delta_presence": ModelSchema("DeltaPresence", {
        "population": required(File()), "delta_max": required(Number(0, 1)), "delta_min": optional(Number(0, 1))},
        "{population: adult.csv, delta_max: 0.5}",
        "the table is a sample of a public population (a file with every quasi-identifier, raw); no person of it "
        "is in the release with a probability above delta_max (or below delta_min): Nergiz et al.'s δ-presence",
        needs_sensitive=False),
    "k_map": ModelSchema("KMap", {"population": required(File()), "k": required(WholeNumber(1))},
                         "{population: adult.csv, k: 5}",
                         "every released class matches at least k people of the public population the table is a "
                         "sample of (a file with every quasi-identifier, raw): Sweeney's k-map", needs_sensitive=False),
}

LABEL = required(Column())

# The keys of veil.metrics.make_metric and the options each takes.
METRICS: dict[str, MetricSchema] = {
    "height": MetricSchema(about="generalization height, the sum of the levels"),
    "precision": MetricSchema(about="Sweeney's precision (higher is better)"),
    "discernibility": MetricSchema(about="sum of class size squared, plus the table size per suppressed record"),
    "aecs": MetricSchema(about="average equivalence class size"),
    "loss": MetricSchema(about="normalized certainty penalty (ARX's loss)"),
    "entropy": MetricSchema(about="non-uniform entropy"),
    "classification": MetricSchema({"label": LABEL}, "Iyengar's classification metric for a label column"),
    "kl": MetricSchema({"sensitive": SENSITIVE}, "KL-divergence between the original and the released distribution "
                       "(with sensitive: of the quasi-identifiers and that column)"),
    "ig_pl": MetricSchema({"label": LABEL}, "information gain / privacy loss of top-down specialization"),
    "workload": MetricSchema({
        "queries": optional(JsonOnly({"anyOf": [{"type": "integer", "minimum": 1}, {
            "type": "array", "minItems": 1, "items": {"type": "object"}}]})),
        "max_attributes": optional(JsonOnly(WholeNumber(1).json_schema())),
        "seed": optional(JsonOnly(WholeNumber(0).json_schema())),
        "sanity": optional(JsonOnly(Nullable(Number(0, lo_open=True)).json_schema())),
    }, "mean relative error of random counting queries"),
}

ALGORITHMS: dict[str, AlgorithmSchema] = {
    "fulldomain": AlgorithmSchema("FullDomain", {
        "search": optional(Choice(("optimal", "heuristic")), "optimal"),
        "time_limit": optional(Nullable(Number(0, lo_open=True)), None),
    }, needs_hierarchies=True, what="full-domain generalization"),
    "mondrian": AlgorithmSchema("Mondrian", {
        "mode": optional(Choice(("strict", "relaxed")), "strict"),
        # No defaults here: Mondrian's own (hierarchy, false) apply when these are left out.
        "categorical": optional(PerQuasiIdentifier(Choice(("hierarchy", "order")))),
        "allow_single_class": optional(Boolean()),
    }, needs_hierarchies=False, what="Mondrian"),
    "mdav": AlgorithmSchema("MDAV", {
        "k": optional(WholeNumber(1)),
        # decimals: one whole number for every numeric quasi-identifier, or {column: number}.
        "decimals": optional(Nullable(PerColumn(WholeNumber(0)))),
        "nominal": optional(Columns()),
        "missing": optional(Choice(("impute", "refuse"))),  # default (MDAV's): impute
    }, needs_hierarchies=False, what="MDAV microaggregation"),
    "ace": AlgorithmSchema("Ace", {
        # No defaults: without l, Ace takes ℓ from the ℓ-diversity models; without rng, Assign
        # draws from the operating system's secure source.
        "l": optional(WholeNumber(1)),
        "sensitive": SENSITIVE,
        "categorical": optional(PerQuasiIdentifier(Choice(("hierarchy", "order")))),
        "rng": optional(Nullable(WholeNumber(0))),
    }, needs_hierarchies=False, what="Ace, transparent ℓ-diversity"),
    "alphabeta": AlgorithmSchema("AlphaBeta", {
        "gamma": required(Number(0, 1, lo_open=True, hi_open=True)),
        # the adversary's prior bound: d itself, or k with d = k·n/m (exactly one of the two)
        "d": optional(Number(0, 1, lo_open=True, hi_open=True)),
        "k": optional(Number(0, lo_open=True)),
        "domains": optional(PublicDomains()),
        "data_domains": optional(Boolean(), False),
        "seed": optional(Nullable(WholeNumber(0)), None),
    }, needs_hierarchies=False, what="the αβ algorithm (a randomized view with (d,γ)-privacy)",
        excludes=("models", "suppression_limit", "metric", "output"), exactly_one=(("d", "k"),)),
}

OUTPUT_OPTIONS: dict[str, Option] = {
    "suppressed": optional(Choice(("remove", "star")), "remove"),
    "shuffle": optional(Boolean(), True),
    "seed": optional(Nullable(WholeNumber(0)), None),
    # ' before every text cell a spreadsheet would run as a formula (veil.spreadsheet)
    "spreadsheet_guard": optional(Boolean(), False),
}

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


ENGINE_OPTIONS: dict[str, Option] = {
    "name": optional(Choice(("local", "spark")), "local"),
    "master": optional(Text(), "local[*]"),
    "config": optional(Settings(), {}),
}

# The builders' options; the parser reads them with checks of its own (band widths that nest,
# calendar units from fine to coarse), the types here give their JSON Schema.
_CHARACTER = JsonOnly({"type": "string", "minLength": 1, "maxLength": 1})
_TOP = optional(JsonOnly(NAME_SCHEMA))
BUILDERS: dict[str, BuilderSchema] = {
    "intervals": BuilderSchema({
        "widths": required(JsonOnly({"anyOf": [Number(0, lo_open=True).json_schema(), {
            "type": "array", "minItems": 1, "items": Number(0, lo_open=True).json_schema()}]})),
        "start": optional(JsonOnly(Number().json_schema())),
        "top": _TOP,
    }, "numeric bands, each width a multiple of the one before"),
    "masking": BuilderSchema({"char": optional(_CHARACTER), "top": _TOP},
                             "digits masked from the right (ZIP codes: 1305*, 130**, …)"),
    "dates": BuilderSchema({
        "units": optional(JsonOnly({"anyOf": [Choice(DATE_GRANULARITIES).json_schema(), {
            "type": "array", "minItems": 1, "items": Choice(DATE_GRANULARITIES).json_schema()}]})),
        "format": optional(JsonOnly({"type": "string"})),
        "top": _TOP,
    }, "calendar units from fine to coarse (day → month → year)"),
    "flat": BuilderSchema({"top": _TOP}, "the value kept, or suppressed to *"),
}

_PATH = JsonOnly({"type": "string", "pattern": r"\S"})
#: A hierarchy given as a file: ``{file: h.csv, delimiter: ";"}``.
HIERARCHY_FILE_OPTIONS: dict[str, Option] = {"file": required(_PATH), "delimiter": optional(_CHARACTER)}
#: A value order given as a file, one value a line: ``{file: order.txt}``.
ORDER_FILE_OPTIONS: dict[str, Option] = {"file": required(_PATH)}

COLUMN_ROLES: dict[str, Option] = {
    "quasi_identifiers": required(Columns()),
    "sensitive": optional(Columns()),
    "identifying": optional(Columns()),
}


# --------------------------------------------------------------------------------------------
# The publishing policy (veil publish --policy)

#: The cross-release checks of the publishing gate (:mod:`veil.ledger.checks`, by their key) and
#: the thresholds each takes; a check the file does not list runs with its defaults.
CHECKS: dict[str, dict[str, Option]] = {
    "intersection": {
        "confidence": optional(Number(0, 1, lo_open=True), 1.0),
        "max_share": optional(Number(0, 1), 0.0),
    },
    "matching": {
        "k": optional(Nullable(WholeNumber(1)), None),
        "max_share": optional(Number(0, 1), 0.0),
    },
    "join": {
        "k": optional(Nullable(WholeNumber(1)), None),
        "l": optional(Nullable(WholeNumber(1)), None),
        "max_share": optional(Number(0, 1), 0.0),
    },
    "correspondence": {
        "k": optional(Nullable(WholeNumber(1)), None),
        "max_share": optional(Number(0, 1), 0.0),
    },
}
COMPOSITIONS = ("sequential", "advanced", "temporal", "window")
# Each composition rule's own option, and the rule it belongs to.
_RULE_OPTIONS = {"delta_prime": "advanced", "discount": "temporal", "window": "window"}
DISCOUNTS: dict[str, Option] = {"exponential": optional(Number(0, 1, lo_open=True)), "hyperbolic": optional(Number(0))}
POPULATION_OPTIONS: dict[str, Option] = {
    "key": optional(Nullable(Name()), None),
    "budget": optional(Nullable(Options({"epsilon": required(Number(0, lo_open=True)),
                                         "delta": optional(Number(0, 1, hi_open=True), 0.0)}, "{epsilon: 1.0}")),
                       None),
    "composition": optional(Choice(COMPOSITIONS), "sequential"),
    "delta_prime": optional(Nullable(Number(0, 1, lo_open=True, hi_open=True)), None),
    "discount": optional(Nullable(Options(DISCOUNTS, "{exponential: 0.9}")), None),
    "window": optional(Nullable(WholeNumber(1)), None),
    "relation": optional(Choice(("add-remove", "substitute")), "add-remove"),
}


@dataclass(frozen=True)
class PopulationMap:
    """The value of ``policy.populations``: per population name, its key and its budget."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> tuple[PopulationSpec, ...]:
        out = []
        for name, (key_node, value) in p.mapping(node, where, "{adult: {budget: {epsilon: 1.0}}}").items():
            here = f"{where}.{name}"
            o = p.options(value, here, POPULATION_OPTIONS, key_node, "{key: id, budget: {epsilon: 1.0}}")
            for option, rule in _RULE_OPTIONS.items():
                if o[option] is not None and o["composition"] != rule:
                    raise p.error(key_node, f"{here}.{option} applies only to {rule} composition, and its "
                                            f"composition is {o['composition']}.")
            if o["composition"] != "sequential" and o["budget"] is None:
                raise p.error(key_node, f"{here} has {o['composition']} composition but no budget; give its budget.")
            if o["composition"] == "advanced" and o["budget"]["delta"] == 0:
                raise p.error(key_node, f"{here} has advanced composition, which spends a δ' > 0, so its budget "
                                        "needs a delta above 0.")
            discount = None
            if o["composition"] == "temporal":
                given = [(k, v) for k, v in (o["discount"] or {}).items()]
                if len(given) != 1:
                    raise p.error(key_node, f"{here} has temporal composition and needs one discount, like "
                                            "{exponential: 0.9} or {hyperbolic: 0.5}.")
                discount = given[0]
            if o["composition"] == "window" and o["window"] is None:
                raise p.error(key_node, f"{here} has window composition and needs window, its length in time steps.")
            budget = None if o["budget"] is None else (o["budget"]["epsilon"], o["budget"]["delta"])
            out.append(PopulationSpec(name, o["key"], budget, o["composition"], o["delta_prime"], discount,
                                      o["window"], o["relation"]))
        return tuple(out)

    def json_schema(self) -> dict:
        return {"type": ["object", "null"], "additionalProperties": options_schema(POPULATION_OPTIONS)}


#: The presence check of the release alone (:class:`veil.ledger.checks.PresenceCheck`): the
#: population table and the thresholds (δ-presence's largest probability, k-map's k).
PRESENCE_OPTIONS: dict[str, Option] = {
    "population": required(File()),
    "delta_max": optional(Nullable(Number(0, 1)), None),
    "k_map": optional(Nullable(WholeNumber(1)), None),
    "max_share": optional(Number(0, 1), 0.0),
}
POLICY_OPTIONS: dict[str, Option] = {
    "recheck": optional(Boolean(), True),
    "composition": optional(Nullable(Options({name: optional(Options(options)) for name, options in CHECKS.items()},
                                             "{intersection: {confidence: 1.0, max_share: 0.0}}")), None),
    "populations": optional(PopulationMap(), ()),
    "presence": optional(Nullable(Options(PRESENCE_OPTIONS, "{population: voters.csv, delta_max: 0.5}")), None),
}


@dataclass(frozen=True)
class PolicyOptions:
    """The value of ``policy``: the gate's checks with their thresholds, and the populations."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> PolicySpec:
        o = p.options(node, where, POLICY_OPTIONS, node, "{composition: {intersection: {max_share: 0.0}}}")
        given = o["composition"] or {}
        # a check the file leaves out runs with its defaults
        checks = {name: given.get(name) or {key: option.default for key, option in options.items()}
                  for name, options in CHECKS.items()}
        presence = o["presence"]
        if presence is not None and presence["delta_max"] is None and presence["k_map"] is None:
            raise p.error(node, "policy.presence needs delta_max (δ-presence) or k_map (k-map), or both.")
        single = {"presence": presence} if presence is not None else {}
        return PolicySpec(o["recheck"], checks, o["populations"], p.origin(node), single)

    def json_schema(self) -> dict:
        return options_schema(POLICY_OPTIONS)


# --------------------------------------------------------------------------------------------
# The sections of a file


@dataclass(frozen=True)
class Section:
    """One top-level key of a configuration file.

    Attributes:
        value: the value's type: its JSON Schema, and its check for a section the parser reads
            by this table alone.
        about: what the section is for (its description in the JSON Schema).
        required: whether every file must have it.
        hint: what to write when a required section is missing.
        field: the :class:`~veil.config.specification.AnonymizationConfig` field the section
            fills when the parser reads it by this table alone; ``None`` for a section the parser
            reads with a reader of its own.
        build: turns the checked value into the field's value (``OutputSpec(**options)``).
    """

    value: Any
    about: str
    required: bool = False
    hint: str = ""
    field: str | None = None
    build: Callable[[Any], Any] | None = None

    def read(self, p: Parser, key_node: yaml.Node, node: yaml.Node, key: str) -> Any:
        """Check a section the parser reads by the table alone, and build its field's value."""
        if isinstance(self.value, Options):
            value = self.value(p, node, key, owner=key_node)
        else:
            value = self.value(p, node, key)
        return self.build(value) if self.build is not None else value


@dataclass(frozen=True)
class HierarchyMap:
    """The value of ``hierarchies``: per column a file, ``{file: …, delimiter: …}``, or one builder."""

    def json_schema(self) -> dict:
        builders = [{"type": "object", "properties": {kind: options_schema(builder.options)}, "required": [kind],
                     "additionalProperties": False, "description": builder.about}
                    for kind, builder in BUILDERS.items()]
        path = dict(_PATH.json_schema(), description="an ARX hierarchy file")
        file_entry = dict(options_schema(HIERARCHY_FILE_OPTIONS), description="an ARX hierarchy file")
        return {"type": ["object", "null"], "additionalProperties": {"oneOf": [path, file_entry, *builders]}}


@dataclass(frozen=True)
class ModelList:
    """The value of ``models``: a list of ``{model name: options}``."""

    def json_schema(self) -> dict:
        items = [{"type": "object", "required": [name], "additionalProperties": False,
                  "properties": {name: dict(options_schema(model.options), description=model.about)}}
                 for name, model in MODELS.items()]
        return {"type": "array", "minItems": 1, "items": {"oneOf": items}}


@dataclass(frozen=True)
class MetricChoice:
    """The value of ``metric``: a metric's name (or another name of it), or ``{name: …, options}``."""

    def json_schema(self) -> dict:
        names = list(METRICS) + [alias for alias, key in METRIC_ALIASES.items() if key in METRICS]
        objects = [dict(options_schema(metric.options, extra={"name": {"const": name}}), description=metric.about)
                   for name, metric in METRICS.items()]
        return {"anyOf": [{"enum": names}, {"oneOf": objects}]}


@dataclass(frozen=True)
class AlgorithmChoice:
    """The value of ``algorithm``: an algorithm's name (one that needs no option), or
    ``{name: …, options}``."""

    def json_schema(self) -> dict:
        objects = [algorithm.json_schema(name) for name, algorithm in ALGORITHMS.items()]
        alone = [name for name, algorithm in ALGORITHMS.items() if algorithm.named_alone]
        return {"anyOf": [{"enum": alone}, {"oneOf": objects}]}


# --------------------------------------------------------------------------------------------
# Anonymized marginals (``veil marginals``; Kifer and Gehrke, SIGMOD 2006)

#: The privacy models of a collection of marginals (:mod:`veil.marginals.privacy`).
MARGINAL_MODELS: dict[str, ModelSchema] = {
    "k_link": ModelSchema("KLinkAnonymity", {"k": required(WholeNumber(1))}, "{k: 5}",
                          "every cell of every marginal's non-sensitive attributes holds 0 or at least k records"),
    "k_combinatorial": ModelSchema("KCombinatorialAnonymity", {
        "k": required(WholeNumber(1)), "method": optional(Choice(("auto", "exact", "lp"))),
        "exact_limit": optional(WholeNumber(1)), "lp_limit": optional(WholeNumber(1))}, "{k: 5, method: auto}",
        "no tuple holds 1 to k − 1 records in some table consistent with the marginals unless one holds k"),
    "maxent_l_diversity": ModelSchema("MaxEntLDiversity", {
        "l": required(Number(1)), "variant": optional(Choice(("entropy", "distinct")))}, "{l: 3, variant: entropy}",
        "the maximum-entropy distribution of the sensitive column given the others is l-diverse"),
}

#: The greedy search's budget (absent keys take the search's defaults: 5, 3, no limit).
MARGINAL_SEARCH_OPTIONS: dict[str, Option] = {
    "max_marginals": optional(WholeNumber(0)),
    "max_attributes": optional(WholeNumber(1)),
    "max_cells": optional(Nullable(WholeNumber(1))),
}

#: The max-ent estimate's limits (absent keys take its defaults).
MAXENT_OPTIONS: dict[str, Option] = {
    "max_cells": optional(WholeNumber(1)),
    "tolerance": optional(Number(0, 1, lo_open=True, hi_open=True)),
    "max_iterations": optional(WholeNumber(1)),
}

_LEVELS = {"type": ["object", "null"], "additionalProperties": {"type": "integer", "minimum": 0}}


@dataclass(frozen=True)
class MarginalModelList:
    """The value of ``marginals.privacy``: a list of ``{model name: options}``."""

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
            p.known_keys(entries, list(MARGINAL_MODELS), where)
            name, (name_node, options_node) = next(iter(entries.items()))
            schema = MARGINAL_MODELS[name]
            options = p.options(options_node, f"{where}.{name}", schema.options, name_node, schema.example)
            specs.append(MarginalModelSpec(name, options, p.origin(name_node)))
        return tuple(specs)

    def json_schema(self) -> dict:
        items = [{"type": "object", "required": [name], "additionalProperties": False,
                  "properties": {name: dict(options_schema(model.options), description=model.about)}}
                 for name, model in MARGINAL_MODELS.items()]
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
        entry = {"type": "object", "required": ["attributes"], "additionalProperties": False,
                 "properties": {"attributes": Columns().json_schema(), "levels": _LEVELS}}
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
            "type": "object", "properties": {"levels": _LEVELS}, "additionalProperties": False}]}


MARGINALS_OPTIONS: dict[str, Option] = {
    "privacy": required(MarginalModelList()),
    "sensitive": optional(SensitiveColumn()),
    "base": optional(BaseTable(), "optimal"),
    "publish": optional(MarginalList(), ()),
    "search": optional(Nullable(Options(MARGINAL_SEARCH_OPTIONS, "{max_marginals: 5, max_attributes: 3}"))),
    "maxent": optional(Options(MAXENT_OPTIONS, "{max_cells: 16777216, tolerance: 1e-10}"), {}),
}


def _marginals_spec(options: Mapping[str, Any]) -> MarginalsSpec:
    return MarginalsSpec(**options)


SECTIONS: dict[str, Section] = {
    "data": Section(
        _PATH,
        "the table (CSV or Parquet); a relative path is read from the configuration's folder, and a DATA "
        "argument on the command line takes its place",
        hint="give the table to anonymize, like 'data: adult.csv' (relative to this file)."),
    "name": Section(Text(), "the table's name, which the release's manifest and report show (default: the data "
                            "file's name without its extension)", field="name"),
    "delimiter": Section(Nullable(_CHARACTER), "the CSV delimiter, one character (sniffed when absent)"),
    "missing_values": Section(JsonOnly(_one_or_list({"type": ["string", "number", "boolean", "null"]})),
                              "cell texts that mean a value is missing (default: the empty cell)"),
    "columns": Section(
        Options(COLUMN_ROLES), "the role of each column; every column not listed is released unchanged", required=True,
        hint="give the roles of the columns, like 'columns: {quasi_identifiers: [age, zip], sensitive: [disease]}'."),
    "hierarchies": Section(HierarchyMap(), "per column, an ARX hierarchy file or a builder"),
    "orders": Section(JsonOnly({"type": ["object", "null"], "additionalProperties": {"anyOf": [
        _one_or_list(NAME_SCHEMA), options_schema(ORDER_FILE_OPTIONS)]}}),
        "per text column, its values in order (or a file, one value a line)"),
    "models": Section(ModelList(), "the privacy models the release must satisfy, every one",
                      required=True,
                      hint="list the privacy models the release must satisfy, like "
                           "'models: [{k_anonymity: {k: 5}}]'."),
    "suppression_limit": Section(Number(0, 1, hi_open=True), "the share of records that may be suppressed",
                                 field="suppression_limit", build=float),
    "metric": Section(MetricChoice(), "the utility metric the search optimizes (default: loss)"),
    "algorithm": Section(AlgorithmChoice(), "the anonymization algorithm (default: fulldomain)"),
    "output": Section(Options(OUTPUT_OPTIONS, "{suppressed: remove, shuffle: true}"), "how the release is written",
                      field="output", build=lambda options: OutputSpec(**options)),
    "engine": Section(Options(ENGINE_OPTIONS, "{name: spark, master: 'local[*]'}"),
                      "where the records are read and counted: local (in memory) or spark (Apache Spark at master, "
                      "with the Spark settings in config)",
                      field="engine", build=lambda options: EngineSpec(**options)),
    "policy": Section(PolicyOptions(), "what the publishing gate enforces (veil publish --policy): the thresholds of "
                      "its checks across releases, the presence check of a release alone against a population table, "
                      "and the populations with their privacy budgets; a file may hold this section alone",
                      field="policy"),
    "marginals": Section(Options(MARGINALS_OPTIONS, "{privacy: [{k_link: {k: 5}}]}"),
                         "anonymized marginals that veil marginals publishes beside (or instead of) the table, and "
                         "the privacy models of the collection (Kifer and Gehrke 2006)",
                         field="marginals", build=_marginals_spec),
}


def configuration_schema() -> dict:
    """The JSON Schema (draft 2020-12) of a configuration file, generated from :data:`SECTIONS`.

    It is what ``veil config schema`` prints and what veil ships as ``veil/resources/veil.schema.json``.
    """
    properties = {}
    for key, section in SECTIONS.items():
        schema = section.value.json_schema()
        properties[key] = {**schema, "description": section.about} if "description" not in schema else schema
    # A section an algorithm excludes is forbidden with it, and required only without it.
    exclusions = []
    for name, algorithm in ALGORITHMS.items():
        if algorithm.excludes:
            exclusions.append({"if": _chooses([name]), "then": {"properties": {k: False for k in algorithm.excludes}}})
    excluded_by = {key: [n for n, a in ALGORITHMS.items() if key in a.excludes] for key in SECTIONS}
    anonymization: dict = {"required": [key for key, section in SECTIONS.items()
                                        if section.required and not excluded_by[key]]}
    requirements = [{"if": _chooses(excluded_by[key]), "else": {"required": [key]}}
                    for key, section in SECTIONS.items() if section.required and excluded_by[key]]
    if requirements:
        anonymization["allOf"] = requirements
    return {
        "$schema": JSON_SCHEMA_DIALECT,
        "title": "veil anonymization configuration",
        "description": "A configuration for `veil anonymize`: the table, the roles of its columns, the "
                       "hierarchies, the privacy models, the suppression limit, the metric and the algorithm; "
                       "and for `veil publish`, the policy (a file may hold that section alone).",
        "type": "object",
        "properties": properties,
        # Either a whole anonymization configuration or a policy file.
        "anyOf": [anonymization, {"required": ["policy"]}],
        "additionalProperties": False,
        **({"allOf": exclusions} if exclusions else {}),
    }


def _chooses(names: list[str]) -> dict:
    """The JSON Schema of a file whose algorithm is one of ``names`` (by name or ``{name: …}``)."""
    chosen = [{"const": name} for name in names]
    chosen.append({"type": "object", "required": ["name"], "properties": {"name": {"enum": list(names)}}})
    return {"required": ["algorithm"], "properties": {"algorithm": {"anyOf": chosen}}}


def schema_text() -> str:
    """:func:`configuration_schema` as the JSON text ``veil config schema`` prints and veil ships."""
    return json.dumps(configuration_schema(), indent=2, ensure_ascii=False) + "\n"
