"""The ``synth:`` section of a configuration file (``veil synth``): differentially private
synthetic data, its mechanism, its budget, the public domain of every column, the workload, and
the evaluation the curator reads before publishing.

A file may hold this section alone (with ``data:``, ``delimiter:`` and ``missing_values:``)::

    data: adult.csv
    synth:
      mechanism: mst                  # or aim
      epsilon: 1.0                    # with delta; or rho alone (ρ-zCDP)
      delta: 1.0e-9
      domain:                         # every column synthesized, and its PUBLIC values
        sex: {categories: [Female, Male]}
        age: {bins: {edges: [17, 25, 35, 45, 55, 65, 91], integer: true}}
        occupation: {hierarchy: adult_hierarchy_occupation.csv}   # the leaves of an ARX hierarchy
        race: data                    # read from the table: only with from_data: true (unfit)
      from_data: true
      workload: [[age, sex], {columns: [age, occupation], weight: 2}]   # aim
      rows: 30000                     # default: the model's noisy count of rows
      seed: null                      # a whole number: reproducible, NOT fit for release
      max_model_cells: 10000000       # aim's model-size limit
      evaluation: {target: salary-class, quasi_identifiers: [age, sex, race], holdout: holdout.csv,
                   shadow_runs: 16, shadow_trials: 16}   # the shadow-model attack's runs (0: skip)

The keys and their types are the table :data:`SYNTH_OPTIONS` (with :data:`EVALUATION_OPTIONS`),
which :mod:`veil.config.schema` lists as a section; the value types here read what needs more than
one key: the domain (:class:`DomainMap`), the workload (:class:`WorkloadList`) and the whole
section (:class:`SynthOptions`: the budget given exactly one way, the workload and evaluation
naming only columns of the domain, and a domain read from the data only with ``from_data``).
:func:`veil.config.synth_file.load_synth` reads a file for ``veil synth``, and
:func:`veil.synth.section_domain.section_domain` builds the domain the section declares.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from veil.config.options import (
    Option,
    Options,
    documented,
    optional,
    options_schema,
    required,
)
from veil.config.value_types import (
    NAME_SCHEMA,
    Boolean,
    Choice,
    Columns,
    File,
    Nullable,
    Number,
    WholeNumber,
)

if TYPE_CHECKING:
    import yaml

# The parser (veil.config.parser.Parser), which imports the schema, so it is not named here.
Parser = Any

__all__ = ["EVALUATION_OPTIONS", "SYNTH_OPTIONS", "ColumnDomainSpec", "DomainMap", "SynthOptions", "SynthSpec",
           "WorkloadList"]

_DOMAIN_EXAMPLE = "{sex: {categories: [F, M]}, age: {bins: {edges: [17, 30, 50, 91], integer: true}}}"
_KINDS = ("categories", "bins", "hierarchy", "data")


@dataclass(frozen=True)
class ColumnDomainSpec:
    """One column's domain as the file gives it.

    Attributes:
        column: the column.
        kind: ``categories`` (``values``), ``bins`` (``edges``, ``integer``), ``hierarchy`` (the
            leaves of the ARX hierarchy ``file``) or ``data`` (read from the table, ``bins``
            equal-width bins for a numeric column; not fit for release).
        origin: ``file, line N`` of its entry.
    """

    column: str
    kind: str
    values: tuple[str, ...] | None = None
    edges: tuple[float, ...] | None = None
    integer: bool = False
    file: Path | None = None
    delimiter: str | None = None
    bins: int | None = None
    origin: str = ""

    def to_dict(self) -> dict:
        out: dict = {"kind": self.kind}
        if self.kind == "categories":
            out["values"] = list(self.values or ())
        elif self.kind == "bins":
            out.update(edges=list(self.edges or ()), integer=self.integer)
        elif self.kind == "hierarchy":
            out["file"] = str(self.file)
        elif self.bins is not None:
            out["bins"] = self.bins
        return out


@dataclass(frozen=True)
class SynthSpec:
    """The ``synth`` section: what ``veil synth`` makes (see the module notes).

    Nothing is read or built until asked (:meth:`build_domain`).
    """

    domain: tuple[ColumnDomainSpec, ...]
    mechanism: str = "mst"
    epsilon: float | None = None
    delta: float | None = None
    rho: float | None = None
    from_data: bool = False
    workload: tuple[tuple[tuple[str, ...], float], ...] | None = None
    rows: int | None = None
    seed: int | None = None
    max_model_cells: int | None = None
    target: str | None = None
    quasi_identifiers: tuple[str, ...] | None = None
    holdout: Path | None = None
    shadow_runs: int | None = None
    shadow_trials: int | None = None
    origin: str = ""

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns synthesized, in the order the domain lists them."""
        return tuple(c.column for c in self.domain)

    def workload_argument(self):
        """The workload as :func:`veil.synth.aim.aim` takes it: ``None`` (all 2- and 3-way
        marginals), or ``(clique, weight)`` pairs."""
        return None if self.workload is None else [(clique, weight) for clique, weight in self.workload]

    def to_dict(self) -> dict:
        return {"mechanism": self.mechanism, "epsilon": self.epsilon, "delta": self.delta, "rho": self.rho,
                "domain": {c.column: c.to_dict() for c in self.domain}, "from_data": self.from_data,
                "workload": None if self.workload is None else [{"columns": list(c), "weight": w}
                                                                for c, w in self.workload],
                "rows": self.rows, "seed": self.seed, "max_model_cells": self.max_model_cells,
                "evaluation": {"target": self.target, "holdout": None if self.holdout is None else str(self.holdout),
                               "quasi_identifiers": None if self.quasi_identifiers is None
                               else list(self.quasi_identifiers),
                               "shadow_runs": self.shadow_runs, "shadow_trials": self.shadow_trials}}


# ------------------------------------------------------------------------------ value types

def _number_list(p: Parser, node: yaml.Node, where: str) -> list[float]:
    return [p.number(item, where, None, None) for item in p.items(node, where)]


@dataclass(frozen=True)
class DomainMap:
    """The value of ``synth.domain``: per column of the table (in the order synthesized), its
    public values: ``{categories: [..]}`` (or the list alone), ``{bins: {edges: [..], integer: ..}}``,
    ``{hierarchy: FILE}`` (or ``{hierarchy: {file: FILE, delimiter: ";"}}``), or ``data`` /
    ``{data: {bins: N}}`` (read from the table)."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> tuple[ColumnDomainSpec, ...]:
        entries = p.mapping(node, where, _DOMAIN_EXAMPLE)
        if not entries:
            raise p.error(node, f"{where} is empty; give the public values of every column to synthesize, like "
                                f"{_DOMAIN_EXAMPLE}.")
        return tuple(self._column(p, key_node, value, f"{where}.{key}") for key, (key_node, value) in entries.items())

    def _column(self, p: Parser, key_node: yaml.Node, node: yaml.Node, where: str) -> ColumnDomainSpec:
        name = p.column(key_node, where.rsplit(".", 1)[0])
        origin = p.origin(key_node)
        if not p.is_mapping(node) and not p.is_null(node) and not isinstance(node.value, list):
            p.choice(node, where, ("data",))
            return ColumnDomainSpec(name, "data", origin=origin)
        if not p.is_mapping(node):
            values = [p.name_of(item, where) for item in p.items(node, where)]
            return self._categories(p, node, where, name, values, origin)
        entries = p.mapping(node, where, _DOMAIN_EXAMPLE)
        p.known_keys(entries, _KINDS, where)
        if len(entries) != 1:
            raise p.error(key_node, f"{where} gives {len(entries)} kinds of domain; give one of "
                                    f"{', '.join(_KINDS)}.")
        kind, (kind_node, value) = next(iter(entries.items()))
        here = f"{where}.{kind}"
        if kind == "categories":
            values = [p.name_of(item, here) for item in p.items(value, here)]
            return self._categories(p, value, here, name, values, origin)
        if kind == "bins":
            given = p.mapping(value, here, "{edges: [17, 30, 50, 91], integer: true}")
            p.known_keys(given, ["edges", "integer"], here)
            if "edges" not in given:
                raise p.error(kind_node, f"{here} needs 'edges', increasing numbers bounding the bins, like "
                                         "{edges: [17, 30, 50, 91]}.")
            edges = _number_list(p, given["edges"][1], f"{here}.edges")
            if len(edges) < 2 or any(b <= a for a, b in zip(edges, edges[1:])):
                raise p.error(given["edges"][1], f"{here}.edges must be at least two strictly increasing numbers, "
                                                 "the bounds of the bins.")
            integer = p.boolean(given["integer"][1], f"{here}.integer") if "integer" in given else False
            return ColumnDomainSpec(name, "bins", edges=tuple(edges), integer=integer, origin=origin)
        if kind == "hierarchy":
            delimiter = None
            if p.is_mapping(value):
                given = p.mapping(value, here, "{file: age.csv}")
                p.known_keys(given, ["file", "delimiter"], here)
                if "file" not in given:
                    raise p.error(kind_node, f"{here} needs 'file', an ARX hierarchy file.")
                if "delimiter" in given:
                    delimiter = p.text(given["delimiter"][1], f"{here}.delimiter")
                    if len(delimiter) != 1:
                        raise p.error(given["delimiter"][1], f"{here}.delimiter must be one character.")
                value = given["file"][1]
            return ColumnDomainSpec(name, "hierarchy", file=p.hierarchy_file(value, here), delimiter=delimiter,
                                    origin=origin)
        given = p.mapping(value, here, "{bins: 10}")
        p.known_keys(given, ["bins"], here)
        bins = p.integer(given["bins"][1], f"{here}.bins", 1) if "bins" in given else None
        return ColumnDomainSpec(name, "data", bins=bins, origin=origin)

    @staticmethod
    def _categories(p: Parser, node, where: str, name: str, values: list[str], origin: str) -> ColumnDomainSpec:
        if not values:
            raise p.error(node, f"{where} lists no value; give the public values of '{name}'.")
        if len(set(values)) != len(values):
            twice = next(v for v in values if values.count(v) > 1)
            raise p.error(node, f"{where} lists {twice!r} twice; list each value once.")
        return ColumnDomainSpec(name, "categories", values=tuple(values), origin=origin)

    def json_schema(self) -> dict:
        values = documented({"type": "array", "minItems": 1, "items": NAME_SCHEMA}, "the public values, in order",
                            ["Female", "Male"])
        categories = {"type": "object", "required": ["categories"], "additionalProperties": False,
                      "properties": {"categories": values}}
        edges = documented({"type": "array", "minItems": 2, "items": {"type": "number"}},
                           "strictly increasing bounds: bin i is [edges[i], edges[i+1]), the last one closed",
                           [17, 25, 35, 45, 55, 65, 91])
        integer = documented({"type": "boolean"}, "the column holds whole numbers (a value is drawn as one)", True)
        bins = {"type": "object", "required": ["bins"], "additionalProperties": False, "properties": {"bins": documented(
            {"type": "object", "required": ["edges"], "additionalProperties": False,
             "properties": {"edges": edges, "integer": integer}},
            "public numeric bins: a synthetic value is drawn uniformly in its bin", {"edges": [17, 35, 65, 91]})}}
        path = documented({"type": "string", "pattern": r"\S"}, "an ARX hierarchy file, relative to the configuration",
                          "adult_hierarchy_race.csv")
        delimiter = documented({"type": "string", "minLength": 1, "maxLength": 1}, "the hierarchy file's delimiter",
                               ";")
        hierarchy = {"type": "object", "required": ["hierarchy"], "additionalProperties": False, "properties": {
            "hierarchy": documented({"anyOf": [path, {"type": "object", "required": ["file"],
                                                      "additionalProperties": False,
                                                      "properties": {"file": path, "delimiter": delimiter}}]},
                                    "the leaves of an ARX hierarchy file are the public values",
                                    "adult_hierarchy_race.csv")}}
        data_bins = documented({"type": ["object", "null"], "additionalProperties": False,
                                "properties": {"bins": documented({"type": "integer", "minimum": 1},
                                                                  "equal-width bins between the column's smallest "
                                                                  "and largest value", 10)}},
                               "the values found in the table (numbers in equal-width bins): needs from_data: true, "
                               "and the output is not fit for release", {"bins": 10})
        data = {"anyOf": [{"const": "data"}, {"type": "object", "required": ["data"], "additionalProperties": False,
                                              "properties": {"data": data_bins}}],
                "description": "the values found in the table: needs from_data: true, and the output is not fit "
                               "for release"}
        return {"type": "object", "minProperties": 1,
                "additionalProperties": {"anyOf": [values, categories, bins, hierarchy, data]}}


@dataclass(frozen=True)
class WorkloadList:
    """The value of ``synth.workload``: marginals, each a list of columns or ``{columns: [..],
    weight: W}`` (weight 1 when not given)."""

    def __call__(self, p: Parser, node: yaml.Node, where: str) -> tuple[tuple[tuple[str, ...], float], ...]:
        example = "[[age, sex], {columns: [age, education], weight: 2}]"
        out = []
        if p.is_mapping(node) or not p.items(node, where):
            raise p.error(node, f"{where} must list at least one marginal, like {example}.")
        for item in p.items(node, where):
            weight = 1.0
            columns_node = item
            if p.is_mapping(item):
                entries = p.mapping(item, where, example)
                p.known_keys(entries, ["columns", "weight"], where)
                if "columns" not in entries:
                    raise p.error(item, f"each marginal of {where} needs 'columns', like {example}.")
                columns_node = entries["columns"][1]
                if "weight" in entries:
                    weight = p.number(entries["weight"][1], f"{where}.weight", 0, None, lo_open=True)
            names = [p.column(c, where) for c in p.items(columns_node, where)]
            if not names:
                raise p.error(item, f"a marginal of {where} names no column; give at least one.")
            if len(set(names)) != len(names):
                raise p.error(item, f"a marginal of {where} names a column twice; name each once.")
            out.append((tuple(names), float(weight)))
        return tuple(out)

    def json_schema(self) -> dict:
        columns = documented({"type": "array", "minItems": 1, "items": NAME_SCHEMA}, "the marginal's columns",
                             ["age", "education"])
        weighted = {"type": "object", "required": ["columns"], "additionalProperties": False,
                    "properties": {"columns": columns,
                                   "weight": documented({"type": "number", "exclusiveMinimum": 0},
                                                        "the marginal's weight in the workload (default 1)", 2)}}
        return {"type": "array", "minItems": 1, "items": {"anyOf": [columns, weighted]}}


#: What the evaluation in the report is told (none of it travels with the release).
EVALUATION_OPTIONS: dict[str, Option] = {
    "target": optional(Nullable(Columns()), about="the column a classifier predicts for the machine-learning utility "
                                                  "(train on synthetic, test on real; default: none, not measured)",
                       example="salary-class"),
    "quasi_identifiers": optional(Nullable(Columns()), about="the columns an attacker links on, for the singling-out, "
                                                             "linkage and k-anonymity checks (default: every column)",
                                  example=["age", "sex", "race"]),
    "holdout": optional(Nullable(File()), about="a table of the same population that was NOT synthesized from, the "
                                                "control of the membership-inference attack (the --holdout option "
                                                "takes its place)", example="holdout.csv"),
    "shadow_runs": optional(Nullable(WholeNumber(0)), about="the shadow-model membership attack's training runs, "
                                                            "each a fit of the mechanism on holdout records (0 skips "
                                                            "it; default 16 for mst, 8 for aim; --shadow-runs takes "
                                                            "its place)", example=16),
    "shadow_trials": optional(Nullable(WholeNumber(2)), about="the shadow-model attack's fresh evaluation runs, "
                                                              "each a fit of the mechanism (default 16 for mst, 8 "
                                                              "for aim)", example=16),
}

SYNTH_OPTIONS: dict[str, Option] = {
    "mechanism": optional(Choice(("mst", "aim")), "mst",
                          about="mst (McKenna, Sheldon and Miklau 2021: 1-way marginals and a maximum spanning tree "
                                "of 2-way ones) or aim (McKenna et al. 2022: rounds that select the workload's "
                                "marginals adaptively)", example="aim"),
    "epsilon": optional(Number(0, lo_open=True), about="the privacy loss ε, with delta (converted to ρ-zCDP, "
                                                       "the largest ρ whose (ε, δ) is within it)", example=1.0),
    "delta": optional(Number(0, 1, lo_open=True, hi_open=True), about="the δ of (ε, δ)-DP, with epsilon",
                      example=1.0e-9),
    "rho": optional(Number(0, lo_open=True), about="the budget in ρ-zCDP, instead of epsilon and delta",
                    example=0.05),
    "domain": required(DomainMap(), "per column synthesized, its public values: categories, bins, the leaves of a "
                                    "hierarchy file, or (with from_data) the values of the table",
                       example={"sex": {"categories": ["Female", "Male"]},
                                "age": {"bins": {"edges": [17, 30, 50, 91], "integer": True}},
                                "occupation": {"hierarchy": "adult_hierarchy_occupation.csv"}}),
    "from_data": optional(Boolean(), False, about="allow a column's domain read from the table (data), which the "
                                                  "output is then marked not fit for release for", example=True),
    "workload": optional(WorkloadList(), about="the marginals aim should preserve, each a list of columns or "
                                               "{columns, weight} (default: every 2- and 3-way marginal)",
                         example=[["age", "sex"], {"columns": ["age", "occupation"], "weight": 2}]),
    "rows": optional(WholeNumber(1), about="the rows of the synthetic table (default: the model's noisy count)",
                     example=30000),
    "seed": optional(Nullable(WholeNumber(0)), about="a seed makes the run reproducible and NOT fit for release "
                                                     "(default: secure randomness)", example=None),
    "max_model_cells": optional(WholeNumber(1), about="aim's limit on the size of the model, in cells (default "
                                                      "10,000,000)", example=10000000),
    "evaluation": optional(Nullable(Options(EVALUATION_OPTIONS, "{target: salary-class}")), {},
                           about="what the evaluation in the report (for the curator, never published) is told",
                           example={"target": "salary-class", "quasi_identifiers": ["age", "sex", "race"]}),
}


@dataclass(frozen=True)
class SynthOptions:
    """The value of ``synth``: the keys of :data:`SYNTH_OPTIONS`, with the rules that join them
    (the budget as epsilon and delta, or rho alone; the workload and the evaluation naming columns
    of the domain; a domain read from the data only with ``from_data: true``)."""

    def __call__(self, p: Parser, node: yaml.Node, where: str, owner: yaml.Node | None = None) -> SynthSpec:
        owner = node if owner is None else owner
        options = p.options(node, where, SYNTH_OPTIONS, owner, "{epsilon: 1.0, delta: 1.0e-9, domain: {...}}")
        entries = p.mapping(node, where)
        given = [k for k in ("epsilon", "delta", "rho") if options.get(k) is not None]
        if given not in (["epsilon", "delta"], ["rho"]):
            raise p.error(owner, f"{where} gives its budget as {', '.join(given) or 'nothing'}; give it one way: "
                                 "epsilon and delta, or rho alone.")
        domain = options["domain"]
        names = [c.column for c in domain]
        read = [c for c in domain if c.kind == "data"]
        if read and not options["from_data"]:
            raise p.error(entries["domain"][1], f"{where}.domain.{read[0].column} is read from the table, which "
                                                "makes the output not fit for release; declare its public values, "
                                                f"or opt in with 'from_data: true' in {where}.")
        workload = options.get("workload")
        if workload is not None and options["mechanism"] == "mst":
            raise p.error(entries["workload"][1], f"mst chooses its own marginals and takes no workload; give "
                                                  f"{where}.mechanism: aim, or remove {where}.workload.")
        for clique, _ in workload or ():
            unknown = [c for c in clique if c not in names]
            if unknown:
                raise p.error(entries["workload"][1], f"{where}.workload names '{unknown[0]}', which is not a column "
                                                      f"of {where}.domain; add its domain or remove it.")
        evaluation = options.get("evaluation") or {}
        for key in ("target", "quasi_identifiers"):
            for name in evaluation.get(key) or ():
                if name not in names:
                    raise p.error(entries["evaluation"][1], f"{where}.evaluation.{key} names '{name}', which is "
                                                            f"not a column of {where}.domain.")
        target = evaluation.get("target")
        if target is not None and len(target) != 1:
            raise p.error(entries["evaluation"][1], f"{where}.evaluation.target must be one column.")
        holdout = evaluation.get("holdout")
        qis = evaluation.get("quasi_identifiers")
        return SynthSpec(domain=domain, mechanism=options["mechanism"], epsilon=options.get("epsilon"),
                         delta=options.get("delta"), rho=options.get("rho"), from_data=options["from_data"],
                         workload=workload, rows=options.get("rows"), seed=options.get("seed"),
                         max_model_cells=options.get("max_model_cells"),
                         target=None if target is None else target[0],
                         quasi_identifiers=None if qis is None else tuple(qis),
                         holdout=None if holdout is None else Path(holdout),
                         shadow_runs=evaluation.get("shadow_runs"), shadow_trials=evaluation.get("shadow_trials"),
                         origin=p.origin(owner))

    def json_schema(self) -> dict:
        schema = options_schema(SYNTH_OPTIONS)
        schema["oneOf"] = [{"required": ["epsilon", "delta"], "not": {"required": ["rho"]}},
                           {"required": ["rho"], "not": {"anyOf": [{"required": ["epsilon"]},
                                                                   {"required": ["delta"]}]}}]
        return schema
