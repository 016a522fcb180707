"""The declarative schema of a configuration file: its sections, and the keys, types and ranges each
takes.

The tables here are the one description of the file format. The parser (:mod:`veil.config.parser`)
reads every key, every option and every value type from them, and :func:`configuration_schema`
renders the same tables as a JSON Schema (draft 2020-12) for editors, so the two cannot disagree
on which keys exist. What JSON Schema cannot say (a column must be in the table, a sensitive
column must be declared, band widths must nest) only the parser checks.

The tables are made of value types (:mod:`veil.config.value_types`: each checks one YAML value,
raising the parser's ``file, line N: …`` sentence, and states what it accepts as JSON Schema) and
options (:mod:`veil.config.options`: an :class:`Option` says whether a key is required and its
default; a mapping of options is an :class:`Options`); their entries are the kinds of
:mod:`veil.config.table_entries` (:class:`ModelSchema`, :class:`AlgorithmSchema`, :class:`Section`
…). The sections whose keys depend on each other are read by value types of their own, given
their tables from here: the policy's (:mod:`veil.config.policy_section`) and the marginals'
(:mod:`veil.config.marginals_section`). All these names stay importable from here.

**Adding a section** is one entry of :data:`SECTIONS`: a :class:`Section` with its value type and
the :class:`~veil.config.specification.AnonymizationConfig` field it fills (a field with a default,
so that files without the section keep working). The parser checks it, the JSON Schema lists it,
and the tests try every key of it against both. A section whose check needs other sections (the
table's header, the declared columns) has a reader of its own in the parser instead.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from veil.config.marginals_section import BaseTable, MarginalList, MarginalModelList
from veil.config.options import Option, Options, options_schema, optional, required
from veil.config.per_quasi_identifier import PerQuasiIdentifier
from veil.config.policy_section import PolicyOptions, PopulationMap
from veil.config.specification import EngineSpec, MarginalsSpec, OutputSpec
from veil.config.table_entries import (AlgorithmChoice, AlgorithmSchema, BuilderSchema, HierarchyMap, MetricChoice,
                                       MetricSchema, ModelList, ModelSchema, Section)
from veil.config.value_types import (NAME_SCHEMA, Boolean, Choice, Column, Columns, File, JsonOnly, Name, Nullable,
                                     Number, PerColumn, PublicDomains, SensitiveColumn, Settings, Text, WholeNumber,
                                     one_or_list)
from veil.data.builders import DATE_GRANULARITIES

__all__ = [
    # the tables, the sections, and their JSON Schema
    "ALGORITHMS", "BUILDERS", "CHECKS", "COLUMN_ROLES", "COMPOSITIONS", "DISCOUNTS", "ENGINE_OPTIONS",
    "HIERARCHY_FILE_OPTIONS", "JSON_SCHEMA_DIALECT", "LABEL", "MARGINALS_OPTIONS", "MARGINAL_MODELS",
    "MARGINAL_SEARCH_OPTIONS", "MAXENT_OPTIONS", "METRICS", "MODELS", "ORDER_FILE_OPTIONS", "OUTPUT_OPTIONS",
    "POLICY_OPTIONS", "POPULATION_OPTIONS", "PRESENCE_OPTIONS", "SECTIONS", "SENSITIVE", "SHIPPED_SCHEMA",
    "configuration_schema", "schema_text",
    # what the tables are made of (veil.config.value_types, options, table_entries, policy_section,
    # marginals_section, per_quasi_identifier)
    "NAME_SCHEMA", "AlgorithmChoice", "AlgorithmSchema", "BaseTable", "Boolean", "BuilderSchema", "Choice", "Column",
    "Columns", "File", "HierarchyMap", "JsonOnly", "MarginalList", "MarginalModelList", "MetricChoice",
    "MetricSchema", "ModelList", "ModelSchema", "Name", "Nullable", "Number", "Option", "Options", "PerColumn",
    "PerQuasiIdentifier", "PolicyOptions", "PopulationMap", "PublicDomains", "Section", "SensitiveColumn",
    "Settings", "Text", "WholeNumber", "optional", "options_schema", "required",
]

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: The schema as veil ships it (``veil init`` names it on a configuration's first line).
SHIPPED_SCHEMA = Path(__file__).resolve().parent.parent / "resources" / "veil.schema.json"


# --------------------------------------------------------------------------------------------
# Privacy models, utility metrics, algorithms, hierarchy builders

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
    "populations": optional(PopulationMap(POPULATION_OPTIONS), ()),
    "presence": optional(Nullable(Options(PRESENCE_OPTIONS, "{population: voters.csv, delta_max: 0.5}")), None),
}


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

MARGINALS_OPTIONS: dict[str, Option] = {
    "privacy": required(MarginalModelList(MARGINAL_MODELS)),
    "sensitive": optional(SensitiveColumn()),
    "base": optional(BaseTable(), "optimal"),
    "publish": optional(MarginalList(), ()),
    "search": optional(Nullable(Options(MARGINAL_SEARCH_OPTIONS, "{max_marginals: 5, max_attributes: 3}"))),
    "maxent": optional(Options(MAXENT_OPTIONS, "{max_cells: 16777216, tolerance: 1e-10}"), {}),
}


def _marginals_spec(options: Mapping[str, Any]) -> MarginalsSpec:
    return MarginalsSpec(**options)


# --------------------------------------------------------------------------------------------
# The sections of a file

SECTIONS: dict[str, Section] = {
    "data": Section(
        _PATH,
        "the table (CSV or Parquet); a relative path is read from the configuration's folder, and a DATA "
        "argument on the command line takes its place",
        hint="give the table to anonymize, like 'data: adult.csv' (relative to this file)."),
    "name": Section(Text(), "the table's name, which the release's manifest and report show (default: the data "
                            "file's name without its extension)", field="name"),
    "delimiter": Section(Nullable(_CHARACTER), "the CSV delimiter, one character (sniffed when absent)"),
    "missing_values": Section(JsonOnly(one_or_list({"type": ["string", "number", "boolean", "null"]})),
                              "cell texts that mean a value is missing (default: the empty cell)"),
    "columns": Section(
        Options(COLUMN_ROLES), "the role of each column; every column not listed is released unchanged", required=True,
        hint="give the roles of the columns, like 'columns: {quasi_identifiers: [age, zip], sensitive: [disease]}'."),
    "hierarchies": Section(HierarchyMap(BUILDERS, HIERARCHY_FILE_OPTIONS, _PATH),
                           "per column, an ARX hierarchy file or a builder"),
    "orders": Section(JsonOnly({"type": ["object", "null"], "additionalProperties": {"anyOf": [
        one_or_list(NAME_SCHEMA), options_schema(ORDER_FILE_OPTIONS)]}}),
        "per text column, its values in order (or a file, one value a line)"),
    "models": Section(ModelList(MODELS), "the privacy models the release must satisfy, every one",
                      required=True,
                      hint="list the privacy models the release must satisfy, like "
                           "'models: [{k_anonymity: {k: 5}}]'."),
    "suppression_limit": Section(Number(0, 1, hi_open=True), "the share of records that may be suppressed",
                                 field="suppression_limit", build=float),
    "metric": Section(MetricChoice(METRICS), "the utility metric the search optimizes (default: loss)"),
    "algorithm": Section(AlgorithmChoice(ALGORITHMS), "the anonymization algorithm (default: fulldomain)"),
    "output": Section(Options(OUTPUT_OPTIONS, "{suppressed: remove, shuffle: true}"), "how the release is written",
                      field="output", build=lambda options: OutputSpec(**options)),
    "engine": Section(Options(ENGINE_OPTIONS, "{name: spark, master: 'local[*]'}"),
                      "where the records are read and counted: local (in memory) or spark (Apache Spark at master, "
                      "with the Spark settings in config)",
                      field="engine", build=lambda options: EngineSpec(**options)),
    "policy": Section(PolicyOptions(POLICY_OPTIONS, CHECKS),
                      "what the publishing gate enforces (veil publish --policy): the thresholds of "
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
