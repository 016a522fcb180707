"""Reading a configuration file: YAML nodes checked against the schema, every mistake one sentence
that names the file, the line and the key.

The YAML is composed, not loaded, so that every node keeps its line: ``adult.yaml, line 12:
unknown model 'k_anonimity'; did you mean 'k_anonymity'?`` (the primitives that read one node are
those of :mod:`veil.config.yaml_nodes`). What the file may hold comes from
the tables of :mod:`veil.config.schema`; what it becomes is an
:class:`~veil.config.specification.AnonymizationConfig`. A file looks like this::

    data: adult.csv            # path, relative to this file (a DATA argument overrides it)
    delimiter: ";"             # optional; sniffed when absent
    missing_values: [""]       # optional; cell texts that mean "missing"
    columns:
      quasi_identifiers: [sex, age, race]
      sensitive: [occupation]  # optional
      identifying: [name]      # optional; dropped from the release
      weight: w                # optional survey design: weight, strata: [region], household: hid
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
      - k_map: {population: census.csv, k: 5}   # against a public population the table is a
                                                #   sample of; delta_presence {population, delta_max}
    suppression_limit: 0.02    # share of records that may be removed, 0 <= s < 1 (default 0)
    metric: loss               # or {name: classification, label: salary-class}
    algorithm: fulldomain      # or {name: fulldomain, search: optimal|heuristic, time_limit: 10},
                               # {name: mondrian, …}, {name: mdav, k: 5}, {name: ace, l: 5}; statistical
                               # disclosure control: {name: localsuppression, k: 5}, {name: pram, columns:
                               # [race], alpha: 0.2}, swap, noise, topcoding (each with seed, recode: fulldomain)
    output:                    # optional
      suppressed: remove       # or star
      shuffle: true            # the default; false keeps the input order (linkable by position)
      seed: null
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

import yaml

from veil.config.options import Option
from veil.config.schema import (ALGORITHMS, BUILDERS, COLUMN_ROLES, HIERARCHY_FILE_OPTIONS, METRICS, MODELS,
                                ORDER_FILE_OPTIONS, SECTIONS)
from veil.config.sdc_reader import check_sdc_algorithm
from veil.config.sdc_section import SDC_ALGORITHMS
from veil.config.specification import (AlgorithmSpec, AnonymizationConfig, HierarchySpec, MetricSpec, ModelSpec,
                                       PolicySpec)
from veil.config.value_types import Column, SensitiveColumn
from veil.config.yaml_nodes import NodeReader, compose, describe, suggest
from veil.data.builders import DATE_GRANULARITIES
from veil.errors import ConfigError, ParameterError, lower_first
from veil.inputs import read_text
from veil.metrics import ALIASES as METRIC_ALIASES
from veil.metrics import make_metric


def _metric_column_options() -> set[str]:
    """The metric options that name a column (``label``): the parser checks those against the
    table; make_metric checks the others."""
    return {key for metric in METRICS.values() for key, option in metric.options.items()
            if isinstance(option.check, Column)}


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
    return Parser(str(path), path.resolve().parent).parse(compose(path), data)


def load_policy(path: str | os.PathLike) -> PolicySpec:
    """Read the ``policy:`` section of a configuration file, which may hold that section alone.

    The file's other sections are left to the command that uses them (their keys must still be
    known); the policy is validated against :data:`veil.config.schema.POLICY_OPTIONS`.

    Raises:
        ConfigError: the file is missing, is not valid YAML, has no ``policy:`` section, or the
            section breaks the schema; the message names the file, the line and the key.
    """
    path = Path(path)
    root = compose(path)
    p = Parser(str(path), path.resolve().parent)
    if root is None:
        raise p.error(1, "the file is empty; a policy file needs a 'policy:' section.")
    top = p.mapping(root, "the configuration", "'policy:' on its own line")
    p.known_keys(top, list(SECTIONS), "the top level")
    if "policy" not in top:
        raise p.error(1, "the file has no 'policy:' section; give one, like 'policy: {composition: {intersection: "
                         "{max_share: 0.0}}}'.")
    return SECTIONS["policy"].read(p, *top["policy"], "policy")



class Parser(NodeReader):
    """Walks the composed YAML tree (nodes keep their line numbers) and validates it against the
    tables of :mod:`veil.config.schema`, with the primitives of
    :class:`~veil.config.yaml_nodes.NodeReader` and the columns the file declares.

    Sections the tables describe alone are read by them (:meth:`Section.read
    <veil.config.table_entries.Section.read>`); a section whose check needs others (the table's header,
    the declared columns, the hierarchies) has a reader here, which returns the
    :class:`AnonymizationConfig` fields it fills. Sections are read in the order of the table.
    """

    def __init__(self, name: str, folder: Path):
        super().__init__(name, folder)
        self.data: Path | None = None
        self.delimiter: str | None = None
        self._header: list[str] | None = None
        self._header_read = False
        self.data_name = ""
        self.data_override: str | os.PathLike | None = None
        self.quasi: list[str] = []
        self.sensitive: list[str] = []
        self.identifying: list[str] = []
        self.roles_node: yaml.Node | None = None
        self.hierarchies: dict[str, HierarchySpec] = {}
        self.models: list[ModelSpec] = []
        self.weight: str | None = None
        self.household: str | None = None
        self.strata: list[str] = []
        self.readers = {"data": self.read_data, "delimiter": self.read_delimiter,
                        "missing_values": self.read_missing_values, "columns": self.read_columns,
                        "hierarchies": self.read_hierarchies, "orders": self.read_orders, "models": self.read_models,
                        "metric": self.read_metric, "algorithm": self.read_algorithm}

    @property
    def header(self) -> list[str] | None:
        """The table's column names, read cheaply when a column name is first checked."""
        if not self._header_read:
            self._header = _read_header(self.data, self.delimiter)
            self._header_read = True
        return self._header

    # -- the columns of the table -------------------------------------------------------------

    def column(self, node: yaml.Node, where: str) -> str:
        """A name that must be a column of the table."""
        name = self.name_of(node, where)
        if self.header is not None and name not in self.header:
            raise self.error(node, f"{where} names '{name}', which is not a column of {self.data_name}"
                             + suggest(name, self.header))
        return name

    def declared_sensitive(self, node: yaml.Node, where: str) -> str:
        name = self.name_of(node, where)
        if name not in self.sensitive:
            if not self.sensitive:
                raise self.error(node, f"{where} names '{name}', but columns.sensitive declares no sensitive "
                                 "column; add it there.")
            raise self.error(node, f"{where} names '{name}', which is not declared under columns.sensitive"
                             + suggest(name, self.sensitive))
        return name

    # -- sections -------------------------------------------------------------------------------

    def parse(self, root: yaml.Node | None, data_override) -> AnonymizationConfig:
        if root is None:
            raise self.error(1, "the file is empty; it needs at least data, columns and models.")
        top = self.mapping(root, "the configuration", "'data: adult.csv' on its own line")
        self.known_keys(top, list(SECTIONS), "the top level")
        self.data_override = data_override
        algorithm = ALGORITHMS[self.algorithm_of(top.get("algorithm"))]
        for key in algorithm.excludes:
            if key in top:
                raise self.error(top[key][0], f"{key} does not apply to {algorithm.what}; remove it.")
        missing = [key for key, section in SECTIONS.items() if section.required and key not in top
                   and key not in algorithm.excludes and key not in algorithm.optional_sections]
        if data_override is None and "data" not in top:
            missing.append("data")  # a DATA argument stands in for it, so it is not required as such
        if missing:
            raise self.error(1, f"the required key '{missing[0]}' is missing; {SECTIONS[missing[0]].hint}")
        fields: dict[str, Any] = {}
        for key, section in SECTIONS.items():
            if key in algorithm.excludes:
                continue
            if section.field is None:
                fields.update(self.readers[key](top.get(key)))
            elif key in top:
                fields[section.field] = section.read(self, *top[key], key)
        for spec in self.models:
            spec.build()  # the models' own checks, reported at the model's line
        return AnonymizationConfig(**fields, source=Path(self.name))

    def read_data(self, entry) -> dict:
        override = self.data_override
        if override is not None:
            path = Path(os.path.expanduser(str(override)))
            if not path.is_file():
                raise ConfigError(f"the data file {str(path)!r} given in place of the data of {self.name} "
                                  f"{_not_a_file(path, 'table')}; check the path.")
            self.data_name = repr(str(path))
            self.data = path
            return {"data": path}
        key_node, node = entry
        path = self.path(node, "data")
        if not path.is_file():
            raise self.error(node, f"data file {str(path)!r} {_not_a_file(path, 'table')} (a relative path is "
                             f"read from the folder of {self.name}); check the path.")
        self.data_name = repr(node.value)
        self.data = path
        return {"data": path}

    def read_delimiter(self, entry) -> dict:
        if entry is not None and not self.is_null(entry[1]):
            node = entry[1]
            delimiter = self.text(node, "delimiter")
            if len(delimiter) != 1:
                raise self.error(node, f"delimiter must be one character, like \";\" or \"\\t\", "
                                 f"not {delimiter!r}.")
            self.delimiter = delimiter
        return {"delimiter": self.delimiter}

    def read_missing_values(self, entry) -> dict:
        if entry is None:
            return {}
        return {"missing_values": tuple(self.name_of(item, "missing_values") if item.value else ""
                                        for item in self.items(entry[1], "missing_values"))}

    def read_columns(self, entry) -> dict:
        key_node, node = entry
        self.roles_node = node
        entries = self.mapping(node, "columns", "{quasi_identifiers: [age, zip], sensitive: [disease]}")
        self.known_keys(entries, list(COLUMN_ROLES), "columns")
        if "quasi_identifiers" not in entries:
            raise self.error(key_node, "columns has no quasi_identifiers; list the columns that can be linked "
                             "to outside data (age, ZIP code, sex, ...).")
        seen: dict[str, str] = {}
        roles = []
        for role in COLUMN_ROLES:
            names = []
            if role in entries:
                value = entries[role][1]
                # weight and household name one column; the other roles a list of them
                single = role in _SINGLE_ROLES and not self.is_null(value)
                if single:
                    self.scalar(value, f"columns.{role}", "one column name")
                for item in ([value] if single else self.items(value, f"columns.{role}")):
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
        self.quasi, self.sensitive, self.identifying = roles[:3]
        survey = dict(zip(COLUMN_ROLES, roles))
        self.weight = survey["weight"][0] if survey["weight"] else None
        self.household = survey["household"][0] if survey["household"] else None
        self.strata = survey["strata"]
        return {"quasi_identifiers": tuple(self.quasi), "sensitive": tuple(self.sensitive),
                "identifying": tuple(self.identifying), "weight": self.weight, "strata": tuple(self.strata),
                "household": self.household}

    def read_hierarchies(self, entry) -> dict:
        if entry is None:
            return {"hierarchies": {}}
        specs: dict[str, HierarchySpec] = {}
        entries = self.mapping(entry[1], "hierarchies", "{age: {file: age.csv}}")
        allowed = self.quasi + self.sensitive
        for column, (key_node, node) in entries.items():
            where = f"hierarchies.{column}"
            if column not in allowed:
                if self.header is not None and column not in self.header:
                    raise self.error(key_node, f"hierarchies names '{column}', which is not a column of "
                                     f"{self.data_name}" + suggest(column, self.header))
                hint = suggest(column, allowed) if difflib.get_close_matches(column, allowed, 1, 0.6) else (
                    "; add it to columns.quasi_identifiers or columns.sensitive, or remove its hierarchy.")
                raise self.error(key_node, f"hierarchies names '{column}', which is neither a quasi-identifier "
                                 f"nor a sensitive column{hint}")
            specs[column] = self.hierarchy(column, key_node, node, where)
        self.hierarchies = specs
        return {"hierarchies": specs}

    def hierarchy(self, column: str, key_node: yaml.Node, node: yaml.Node, where: str) -> HierarchySpec:
        origin = self.origin(key_node)
        if isinstance(node, yaml.ScalarNode) and not self.is_null(node):
            return HierarchySpec(column, "file", {}, self.hierarchy_file(node, where), origin)
        example = "{file: age.csv} or {intervals: {widths: [5, 10, 20]}}"
        entries = self.mapping(node, where, example)
        kinds = ("file",) + tuple(BUILDERS)
        if "file" in entries:
            self.known_keys(entries, list(HIERARCHY_FILE_OPTIONS), where)
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
            raise self.error(node, f"hierarchy file {str(path)!r} ({where}) {_not_a_file(path, 'hierarchy')} "
                             f"(a relative path is read from the folder of {self.name}); check the path.")
        return path

    def builder_options(self, kind: str, node: yaml.Node, where: str, key_node: yaml.Node) -> dict[str, Any]:
        entries = self.mapping(node, where)
        self.known_keys(entries, list(BUILDERS[kind].options), where)
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

    def read_orders(self, entry) -> dict:
        if entry is None:
            return {"orders": {}}
        orders = {}
        for column, (key_node, node) in self.mapping(entry[1], "orders", "{education: [low, mid, high]}").items():
            where = f"orders.{column}"
            if column not in self.quasi + self.sensitive:
                raise self.error(key_node, f"orders names '{column}', which is neither a quasi-identifier nor a "
                                 "sensitive column" + suggest(column, self.quasi + self.sensitive))
            if isinstance(node, yaml.MappingNode):
                entries = self.mapping(node, where)
                self.known_keys(entries, list(ORDER_FILE_OPTIONS), where)
                if "file" not in entries:
                    raise self.error(key_node, f"{where} needs 'file', or a list of the values in order.")
                path = self.path(entries["file"][1], f"{where}.file")
                if not path.is_file():
                    raise self.error(entries["file"][1], f"order file {str(path)!r} ({where}.file) does not "
                                     f"exist (a relative path is read from the folder of {self.name}).")
                try:
                    text = read_text(path, "order file", error=ConfigError, encoding="utf-8-sig")
                except ConfigError as exc:
                    raise self.error(entries["file"][1], f"{exc} ({where}.file)") from None
                values = [line for line in text.splitlines() if line]
            else:
                values = [self.name_of(item, where) for item in self.items(node, where)]
            if not values:
                raise self.error(node, f"{where} is empty; list the values of '{column}' in order.")
            orders[column] = tuple(values)
        return {"orders": orders}

    def read_models(self, entry) -> dict:
        if entry is None:   # a method of statistical disclosure control without a recoding first
            return {"model_specs": ()}
        key_node, node = entry
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
                raise self.error(item, f"unknown model '{item.value}'" + suggest(item.value, list(MODELS)))
            entries = self.mapping(item, "each model", example)
            if len(entries) != 1:
                raise self.error(item, f"each entry of models is one model name with its options, like {example}, "
                                 f"but this one has {len(entries)} keys ({', '.join(entries)}); indent the "
                                 "options under the model name.")
            name, (name_node, options_node) = next(iter(entries.items()))
            if name not in MODELS:
                raise self.error(name_node, f"unknown model '{name}'" + suggest(name, list(MODELS)))
            options = self.options(options_node, name, MODELS[name].options, name_node, MODELS[name].example)
            options = {k: v for k, v in options.items() if v is not None}
            if MODELS[name].needs_sensitive and not self.sensitive:
                raise self.error(name_node, f"{name} constrains a sensitive column, but columns.sensitive declares "
                                 "none; add one.")
            if options.get("household") and self.household is None:
                raise self.error(name_node, f"{name}.household measures the household risk, but columns.household "
                                 "names no household column; add one.")
            if options.get("distance") == "hierarchical":
                self.need_sensitive_hierarchy(name, options, options_node)
            specs.append(ModelSpec(name, MODELS[name].cls, options, self.origin(name_node)))
        self.models = specs
        return {"model_specs": tuple(specs)}

    def need_sensitive_hierarchy(self, name: str, options: dict, node: yaml.Node) -> None:
        targets = [options["sensitive"]] if "sensitive" in options else self.sensitive
        if not any(t in self.hierarchies for t in targets):
            which = f"'{targets[0]}'" if len(targets) == 1 else "a sensitive column"
            where = self.mapping(node, name).get("distance", (node, node))[1]
            raise self.error(where, f"{name}.distance hierarchical needs a hierarchy for {which}; add one under "
                             "hierarchies.")

    def read_metric(self, entry) -> dict:
        if entry is None:
            return {"metric_spec": MetricSpec("loss", {}, f"{self.name}")}
        key_node, node = entry
        if isinstance(node, yaml.ScalarNode):
            return {"metric_spec": MetricSpec(self.metric_name(node), {}, self.origin(node))}
        entries = self.mapping(node, "metric", "{name: classification, label: salary-class}")
        if "name" not in entries:
            raise self.error(key_node, "metric needs 'name', like {name: classification, label: salary-class}.")
        name = self.metric_name(entries["name"][1])
        options = {}
        for key, (_, option_node) in entries.items():
            if key == "name":
                continue
            if key in _metric_column_options():
                column = self.column(option_node, f"metric.{key}")
                if column in self.identifying:
                    raise self.error(option_node, f"metric.{key} names '{column}', an identifying column, which is "
                                     "dropped from the release; choose another column.")
                options[key] = column
            elif key in METRICS[name].options and isinstance(METRICS[name].options[key].check, SensitiveColumn):
                options[key] = self.declared_sensitive(option_node, f"metric.{key}")
            else:
                options[key] = self.constructor.construct_object(option_node, deep=True)
        spec = MetricSpec(name, options, self.origin(key_node))
        self.try_metric(spec)
        return {"metric_spec": spec}

    def metric_name(self, node: yaml.Node) -> str:
        name = self.scalar(node, "metric", "a metric name")
        if isinstance(name, str):
            name = METRIC_ALIASES.get(name.strip().lower(), name)
        if not isinstance(name, str) or name not in METRICS:
            raise self.error(node, f"unknown metric '{node.value}'" + suggest(str(node.value), list(METRICS)))
        return name

    def try_metric(self, spec: MetricSpec) -> None:
        """Let make_metric check the options now, at the metric's line."""
        try:
            make_metric(spec.name, **spec.options)
        except (ParameterError, TypeError) as exc:
            raise ConfigError(f"{spec.origin}: metric '{spec.name}': {lower_first(str(exc))}") from None

    def algorithm_of(self, entry) -> str:
        """The algorithm's name (``fulldomain`` when the file names none), read before the sections
        because it decides which of them apply."""
        if entry is None:
            return "fulldomain"
        key_node, node = entry
        if isinstance(node, yaml.ScalarNode):
            return self.algorithm_name(node)
        entries = self.mapping(node, "algorithm", "{name: fulldomain, search: optimal}")
        if "name" not in entries:
            raise self.error(key_node, "algorithm needs 'name', like {name: fulldomain, search: optimal}.")
        return self.algorithm_name(entries["name"][1])

    def read_algorithm(self, entry) -> dict:
        name = self.algorithm_of(entry)
        if entry is None:
            options, origin, line_node = {}, self.name, None
            options = {k: o.default for k, o in ALGORITHMS[name].options.items() if o.has_default}
        else:
            key_node, node = entry
            line_node = key_node
            origin = self.origin(key_node)
            if isinstance(node, yaml.ScalarNode):
                algorithm = ALGORITHMS[name]
                if not algorithm.named_alone:
                    needed = [k for k, o in algorithm.options.items() if o.required]
                    needed += [" or ".join(group) for group in algorithm.exactly_one]
                    raise self.error(node, f"algorithm {name} needs {', '.join(needed)}: write it as "
                                     f"{{name: {name}, …}} with those keys.")
                options = {k: o.default for k, o in ALGORITHMS[name].options.items() if o.has_default}
            else:
                schema = dict(ALGORITHMS[name].options)
                schema["name"] = Option(lambda p, n, w: None)
                options = self.options(node, "algorithm", schema, key_node)
                options.pop("name")
        schema = ALGORITHMS[name]
        for group in schema.exactly_one:
            given = [key for key in group if key in options]
            if len(given) != 1:
                keys = [f"algorithm.{key}" for key in group]
                raise self.error(line_node or 1, f"algorithm {name} takes exactly one of {' and '.join(keys)}, "
                                 "not both." if given else f"algorithm {name} needs {' or '.join(keys)}; give one.")
        if name == "mdav" and options.get("k") is None:
            if not any(m.name == "k_anonymity" or (m.name == "alpha_k_anonymity" and m.options.get("k"))
                       for m in self.models):
                raise self.error(line_node or 1, "algorithm mdav needs k: give algorithm.k or a k_anonymity model.")
        if schema.needs_hierarchies:
            missing = [q for q in self.quasi if q not in self.hierarchies]
            if missing:
                node = self._qi_node(self.roles_node, missing[0])
                raise self.error(node, f"quasi-identifier '{missing[0]}' has no hierarchy, and {schema.what} needs "
                                 "one per quasi-identifier; add it under hierarchies (a file, or a builder such "
                                 "as {flat: {}}).")
        if name == "alphabeta":
            self.check_alphabeta(options, *entry)   # never absent or a bare name: it needs options
        if name in SDC_ALGORITHMS:
            options = check_sdc_algorithm(self, name, options, entry)
        options = {k: v for k, v in options.items() if not (name in ("mdav", "ace") and v is None)}
        return {"algorithm": AlgorithmSpec(name, schema.cls, options, origin)}

    def check_alphabeta(self, options: dict, key_node: yaml.Node, node: yaml.Node) -> None:
        """The αβ algorithm's rules that need more than one key: d below γ, and a public domain for
        every published column (a builder's hierarchy is made from the data's values, so its
        leaves are not one)."""
        entries = self.mapping(node, "algorithm")
        if "d" in options and options["d"] >= options["gamma"]:
            raise self.error(entries["d"][1], f"algorithm.d = {options['d']:g} is not below algorithm.gamma = "
                             f"{options['gamma']:g}; Theorem 4.3 needs d < gamma, so raise gamma or lower d.")
        domains = options.get("domains") or {}
        if options.get("data_domains"):
            return
        for column in self.quasi + self.sensitive:
            if column in domains:
                continue
            spec = self.hierarchies.get(column)
            if spec is not None and spec.kind != "file":
                raise ConfigError(f"{spec.origin}: the hierarchy of '{column}' is built from the data's values, so "
                                  f"its leaves are not a public domain for the αβ algorithm; give "
                                  f"algorithm.domains.{column} or a hierarchy file, or set data_domains: true "
                                  "(not fit for release).")
            if spec is None:
                raise self.error(key_node, f"column '{column}' has no public domain for the αβ algorithm; give "
                                 f"algorithm.domains.{column} (its values, or {{min, max}}) or a hierarchy file, or "
                                 "set data_domains: true (not fit for release).")

    def public_domains(self, node: yaml.Node, where: str) -> dict[str, Any]:
        """The αβ algorithm's ``domains``: per published column a list of values, ``{min, max}``
        (whole numbers) or ``data``."""
        published = self.quasi + self.sensitive
        out: dict[str, Any] = {}
        for column, (key_node, value) in self.mapping(node, where, "{age: {min: 17, max: 90}}").items():
            at = f"{where}.{column}"
            if column not in published:
                raise self.error(key_node, f"{where} names '{column}', which is neither a quasi-identifier nor a "
                                 "sensitive column, so it is not published" + suggest(column, published))
            if isinstance(value, yaml.SequenceNode):
                values = [self.name_of(item, at) for item in value.value]
                if not values:
                    raise self.error(value, f"{at} is empty; list the values of '{column}'.")
                if len(set(values)) != len(values):
                    twice = next(v for i, v in enumerate(values) if v in values[:i])
                    raise self.error(value, f"{at} lists {twice!r} twice; list each value once.")
                out[column] = values
            elif isinstance(value, yaml.MappingNode):
                entries = self.mapping(value, at)
                self.known_keys(entries, ["min", "max"], at)
                if set(entries) != {"min", "max"}:
                    raise self.error(key_node, f"{at} needs both min and max, like {{min: 17, max: 90}}.")
                bounds = {b: self.whole_number(entries[b][1], f"{at}.{b}") for b in ("min", "max")}
                if bounds["min"] > bounds["max"]:
                    raise self.error(value, f"{at} has min {bounds['min']} above max {bounds['max']}.")
                out[column] = bounds
            elif isinstance(value, yaml.ScalarNode) and value.value == "data":
                out[column] = "data"
            else:
                raise self.error(value, f"{at} must be a list of values, {{min, max}} or data, not "
                                 f"{describe(value)}.")
        return out

    def algorithm_name(self, node: yaml.Node) -> str:
        name = self.scalar(node, "algorithm", "an algorithm name")
        if not isinstance(name, str) or name not in ALGORITHMS:
            raise self.error(node, f"unknown algorithm '{node.value}'" + suggest(str(node.value), list(ALGORITHMS)))
        return name

    def _qi_node(self, roles_node: yaml.Node, column: str) -> yaml.Node:
        entries = self.mapping(roles_node, "columns")
        for item in self.items(entries["quasi_identifiers"][1], "columns.quasi_identifiers"):
            if item.value == column:
                return item
        return roles_node


#: The roles of :data:`COLUMN_ROLES` that name one column, not a list.
_SINGLE_ROLES = ("weight", "household")


def _not_a_file(path: Path, what: str) -> str:
    """Why ``path`` is not a file to read, in words that follow its name."""
    if path.is_dir():
        return f"is a folder, not a {what}"
    if path.exists():
        return "is not a regular file (a pipe or a device never ends)"
    return "does not exist"


def _read_header(path: Path, delimiter: str | None) -> list[str] | None:
    """The column names of a table, read cheaply; ``None`` when they cannot be read here (reading
    the whole table later gives the precise error)."""
    from veil.data.io import read_csv_header
    from veil.inputs import check_regular_file

    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            return list(pq.read_schema(check_regular_file(path)).names)
        # The whole header row (in the encoding in effect), or None for a file that its encoding does not
        # decode (the real read says so).
        return read_csv_header(path, delimiter)
    except Exception:  # noqa: BLE001 - any failure here is reported by the real read
        return None
