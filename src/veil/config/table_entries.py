"""The kinds of entry in the tables of the configuration schema, and the value types of the
sections whose values name entries of a table.

An entry of :data:`veil.config.schema.MODELS` is a :class:`ModelSchema` (a privacy model and its
options), of ``METRICS`` a :class:`MetricSchema`, of ``ALGORITHMS`` an :class:`AlgorithmSchema`,
of ``BUILDERS`` a :class:`BuilderSchema` (a hierarchy builder), and of ``SECTIONS`` a
:class:`Section` (a top-level key of the file). The sections ``models``, ``metric``,
``algorithm`` and ``hierarchies`` name such entries; the parser reads them with readers of its own,
and their value types here (:class:`ModelList`, :class:`MetricChoice`, :class:`AlgorithmChoice`,
:class:`HierarchyMap`, each given its table) state their JSON Schema.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

from veil.config.options import NO_EXAMPLE, Option, Options, documented, options_schema, yaml_example
from veil.config.value_types import JsonOnly
from veil.metrics import ALIASES as METRIC_ALIASES

if TYPE_CHECKING:
    import yaml

# The parser (veil.config.parser.Parser), which imports the schema, so it is not named here.
Parser = Any


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
    and groups of options of which exactly one must be given (``exactly_one``: its d or k);
    ``optional_sections`` are required sections it does without (the methods of statistical
    disclosure control read ``models`` only for a recoding first)."""

    cls: str
    options: Mapping[str, Option]
    needs_hierarchies: bool
    what: str
    excludes: tuple[str, ...] = ()
    exactly_one: tuple[tuple[str, ...], ...] = ()
    optional_sections: tuple[str, ...] = ()

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
    """A hierarchy builder of :mod:`veil.data.builders`, its options, and an example of them (YAML)."""

    options: Mapping[str, Option]
    about: str = ""
    example: str = ""


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
        example: an example of the section's value (its ``examples`` in the JSON Schema).
    """

    value: Any
    about: str
    required: bool = False
    hint: str = ""
    field: str | None = None
    build: Callable[[Any], Any] | None = None
    example: Any = NO_EXAMPLE

    def read(self, p: Parser, key_node: yaml.Node, node: yaml.Node, key: str) -> Any:
        """Check a section the parser reads by the table alone, and build its field's value."""
        if isinstance(self.value, Options):
            value = self.value(p, node, key, owner=key_node)
        else:
            value = self.value(p, node, key)
        return self.build(value) if self.build is not None else value


@dataclass(frozen=True)
class HierarchyMap:
    """The value of ``hierarchies``: per column a file, ``{file: …, delimiter: …}``, or one builder
    of ``builders``; ``file_options`` are the keys of a file given as a mapping, ``path`` the value
    type of a file given as a bare path."""

    builders: Mapping[str, BuilderSchema]
    file_options: Mapping[str, Option]
    path: JsonOnly

    def json_schema(self) -> dict:
        builders = [{"type": "object", "required": [kind], "additionalProperties": False,
                     "description": builder.about,
                     "properties": {kind: documented(options_schema(builder.options), builder.about,
                                                     yaml_example(builder.example))}}
                    for kind, builder in self.builders.items()]
        path = dict(self.path.json_schema(), description="an ARX hierarchy file")
        file_entry = dict(options_schema(self.file_options), description="an ARX hierarchy file")
        return {"type": ["object", "null"], "additionalProperties": {"oneOf": [path, file_entry, *builders]}}


@dataclass(frozen=True)
class ModelList:
    """The value of ``models``: a list of ``{model name: options}``, each model one of ``models``."""

    models: Mapping[str, ModelSchema]

    def json_schema(self) -> dict:
        items = [{"type": "object", "required": [name], "additionalProperties": False,
                  "properties": {name: documented(options_schema(model.options), model.about,
                                                  yaml_example(model.example))}}
                 for name, model in self.models.items()]
        return {"type": "array", "minItems": 1, "items": {"oneOf": items}}


@dataclass(frozen=True)
class MetricChoice:
    """The value of ``metric``: the name of one of ``metrics`` (or another name of it), or
    ``{name: …, options}``."""

    metrics: Mapping[str, MetricSchema]

    def json_schema(self) -> dict:
        names = list(self.metrics) + [alias for alias, key in METRIC_ALIASES.items() if key in self.metrics]
        objects = [dict(options_schema(metric.options, extra={"name": {"const": name}}), description=metric.about)
                   for name, metric in self.metrics.items()]
        return {"anyOf": [{"enum": names}, {"oneOf": objects}]}


@dataclass(frozen=True)
class AlgorithmChoice:
    """The value of ``algorithm``: the name of one of ``algorithms`` (one that needs no option), or
    ``{name: …, options}``."""

    algorithms: Mapping[str, AlgorithmSchema]

    def json_schema(self) -> dict:
        objects = [algorithm.json_schema(name) for name, algorithm in self.algorithms.items()]
        alone = [name for name, algorithm in self.algorithms.items() if algorithm.named_alone]
        return {"anyOf": [{"enum": alone}, {"oneOf": objects}]}
