"""The declarative schema of a configuration file: its sections, and the keys, types and ranges each
takes.

The tables here are the one description of the file format. The parser (:mod:`veil.config.parser`)
reads every key, every option and every value type from them, and :func:`configuration_schema`
renders the same tables as a JSON Schema (draft 2020-12) for editors, so the two cannot disagree
on which keys exist. What JSON Schema cannot say (a column must be in the table, a sensitive
column must be declared, band widths must nest) only the parser checks.

The tables are made of value types (:mod:`veil.config.value_types`: each checks one YAML value,
raising the parser's ``file, line N: …`` sentence, and states what it accepts as JSON Schema) and
options (:mod:`veil.config.options`: an :class:`Option` says whether a key is required, its
default, what it means and an example, which the JSON Schema gives as its ``description`` and
``examples`` and the configuration reference of the documentation shows; a mapping of options is
an :class:`Options`); their entries are the kinds of :mod:`veil.config.table_entries`
(:class:`ModelSchema`, :class:`AlgorithmSchema`, :class:`Section` …). The sections whose keys depend on each other are read by value types of their own, given
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
from veil.config.options import (NO_EXAMPLE, Option, Options, documented, options_schema, optional, required,
                                 yaml_example)
from veil.config.per_quasi_identifier import PerQuasiIdentifier
from veil.config.policy_section import PolicyOptions, PopulationMap, PrivacyUnitValue
from veil.config.sdc_section import RISK_CHECK_OPTIONS, RISK_MODELS, SDC_ALGORITHM_SCHEMAS, SURVEY_ROLES
from veil.config.specification import EngineSpec, MarginalsSpec, OutputSpec
from veil.config.synth_section import SynthOptions
from veil.config.table_entries import (AlgorithmChoice, AlgorithmSchema, BuilderSchema, HierarchyMap, MetricChoice,
                                       MetricSchema, ModelList, ModelSchema, Section)
from veil.config.value_types import (NAME_SCHEMA, Boolean, Choice, Column, Columns, File, JsonOnly, Name, Nullable,
                                     Number, PerColumn, PublicDomains, SensitiveColumn, Settings, Text, WholeNumber,
                                     one_or_list)
from veil.data.builders import DATE_GRANULARITIES

__all__ = [
    # the tables, the sections, and their JSON Schema
    "ALGORITHMS", "BUILDERS", "CHECKS", "CHECK_ABOUT", "COLUMN_ROLES", "COMPOSITIONS", "DISCOUNTS", "ENGINE_OPTIONS",
    "HIERARCHY_FILE_OPTIONS", "JSON_SCHEMA_DIALECT", "LABEL", "MARGINALS_OPTIONS", "MARGINAL_MODELS",
    "MARGINAL_SEARCH_OPTIONS", "MAXENT_OPTIONS", "METRICS", "MODELS", "ORDER_FILE_OPTIONS", "OUTPUT_OPTIONS",
    "POLICY_OPTIONS", "POPULATION_OPTIONS", "PRESENCE_OPTIONS", "SECTIONS", "SENSITIVE", "SHIPPED_SCHEMA",
    "configuration_schema", "schema_text",
    # what the tables are made of (veil.config.value_types, options, table_entries, policy_section,
    # marginals_section, per_quasi_identifier)
    "NAME_SCHEMA", "AlgorithmChoice", "AlgorithmSchema", "BaseTable", "Boolean", "BuilderSchema", "Choice", "Column",
    "Columns", "File", "HierarchyMap", "JsonOnly", "MarginalList", "MarginalModelList", "MetricChoice",
    "MetricSchema", "ModelList", "ModelSchema", "NO_EXAMPLE", "Name", "Nullable", "Number", "Option", "Options",
    "PerColumn", "PerQuasiIdentifier", "PolicyOptions", "PopulationMap", "PublicDomains", "Section",
    "SensitiveColumn", "Settings", "Text", "WholeNumber", "documented", "optional", "options_schema", "required",
    "yaml_example",
]

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

#: The schema as veil ships it (``veil init`` names it on a configuration's first line).
SHIPPED_SCHEMA = Path(__file__).resolve().parent.parent / "resources" / "veil.schema.json"


# --------------------------------------------------------------------------------------------
# Privacy models, utility metrics, algorithms, hierarchy builders

SENSITIVE = optional(SensitiveColumn(), about="the sensitive column the model constrains (default: every column of "
                                            "columns.sensitive, each class meeting the threshold for all)",
                     example="occupation")

MODELS: dict[str, ModelSchema] = {
    "k_anonymity": ModelSchema("KAnonymity", {
        "k": required(WholeNumber(1), "the smallest class size", example=5)}, "{k: 5}",
        "every record shares its quasi-identifiers with at least k − 1 others", needs_sensitive=False),
    "alpha_k_anonymity": ModelSchema("AlphaKAnonymity", {
        "alpha": required(Number(0, 1, lo_open=True), "the largest share one sensitive value may have in a class",
                          example=0.5),
        "k": optional(WholeNumber(1), about="the smallest class size (default: no size condition)", example=5),
        "sensitive": SENSITIVE},
        "{alpha: 0.5, k: 5}", "no sensitive value has a share above alpha in a class (and k-anonymity)"),
    "distinct_l_diversity": ModelSchema("DistinctLDiversity", {
        "l": required(WholeNumber(1), "the fewest distinct sensitive values a class may hold", example=2),
        "sensitive": SENSITIVE}, "{l: 2}",
        "every class holds at least l distinct sensitive values"),
    "entropy_l_diversity": ModelSchema("EntropyLDiversity", {
        "l": required(Number(1), "ℓ: the entropy of every class's sensitive values must be at least log ℓ", example=3),
        "sensitive": SENSITIVE}, "{l: 3, sensitive: occupation}",
        "the entropy of every class's sensitive values is at least log l"),
    "recursive_cl_diversity": ModelSchema("RecursiveCLDiversity", {
        "c": required(Number(0, lo_open=True), "c: the most frequent value must be rarer than c times the l-th most "
                                              "frequent and the rarer ones together", example=3),
        "l": required(WholeNumber(1), "ℓ: the rank from which the rarer values are added up", example=2),
        "sensitive": SENSITIVE},
        "{c: 3, l: 2}", "in every class the most frequent value is rarer than c times the l-th most frequent and "
                       "the rarer ones together"),
    "t_closeness": ModelSchema("TCloseness", {
        "t": required(Number(0, 1), "the largest earth mover's distance between a class's sensitive values and the "
                                    "table's", example=0.2),
        "distance": optional(Choice(("equal", "ordered", "hierarchical")),
                             about="the ground distance between values: equal (all 1 apart; the default), ordered "
                                   "(by rank, for a numeric or ordered column) or hierarchical (along the column's "
                                   "hierarchy)", example="hierarchical"),
        "sensitive": SENSITIVE}, "{t: 0.2, distance: equal}",
        "every class's sensitive distribution is within t of the table's (earth mover's distance)"),
    "delta_disclosure": ModelSchema("DeltaDisclosure", {
        "delta": required(Number(0, lo_open=True), "the bound, strict, on |log(p(class, s) / p(table, s))| for every "
                                                  "value s a class holds", example=1.5),
        "sensitive": SENSITIVE}, "{delta: 1.5}",
        "no class moves the log of a sensitive value's probability by delta or more"),
    "beta_likeness": ModelSchema("BetaLikeness", {
        "beta": required(Number(0, lo_open=True), "the largest relative gain (p − q)/q of a value's share in a class "
                                                 "(p) over its share in the table (q)", example=1),
        "enhanced": optional(Boolean(), about="enhanced β-likeness: the gain bounded by min(beta, −ln q) (default: "
                                              "false, basic β-likeness)", example=True),
        "sensitive": SENSITIVE},
        "{beta: 1, enhanced: false}", "no class raises a sensitive value's share by more than beta, relatively"),
    "join": ModelSchema("JoinKAnonymity", {
        "earlier": required(File(), "the earlier release of the same records: its manifest (which names and hashes "
                                    "its table), or its table with manifest", example="first/manifest.json"),
        "manifest": optional(File(), about="the earlier release's manifest, when earlier is its table",
                             example="first/manifest.json"),
        "k": required(WholeNumber(1), "the fewest candidates a record may have in a group the join makes",
                      example=5),
        "l": optional(WholeNumber(1), about="the fewest distinct sensitive values a joined group must hold (default: "
                                            "not checked)", example=2),
        "sensitive": optional(Name(), about="the sensitive column, published by either release (default: the first "
                                            "the earlier release's manifest names)", example="disease")},
        "{earlier: first/manifest.json, k: 5}",
        "joined with an earlier release of the same records on their shared columns, every person is among at "
        "least k records (and l sensitive values): Wang and Fung's sequential releases", needs_sensitive=False),
    "delta_presence": ModelSchema("DeltaPresence", {
        "population": required(File(), "the public population the table is a sample of: a file with every "
                                       "quasi-identifier, raw values", example="voters.csv"),
        "delta_max": required(Number(0, 1), "the largest probability that a person of the population is in the "
                                            "release", example=0.5),
        "delta_min": optional(Number(0, 1), about="the smallest such probability (default 0)", example=0.05)},
        "{population: adult.csv, delta_max: 0.5}",
        "the table is a sample of a public population (a file with every quasi-identifier, raw); no person of it "
        "is in the release with a probability above delta_max (or below delta_min): Nergiz et al.'s δ-presence",
        needs_sensitive=False),
    "k_map": ModelSchema("KMap", {
        "population": required(File(), "the public population the table is a sample of: a file with every "
                                       "quasi-identifier, raw values", example="voters.csv"),
        "k": required(WholeNumber(1), "the fewest people of the population every released class must match",
                      example=5)},
        "{population: adult.csv, k: 5}",
        "every released class matches at least k people of the public population the table is a "
        "sample of (a file with every quasi-identifier, raw): Sweeney's k-map", needs_sensitive=False),
    # the risk models of statistical disclosure control (veil.config.sdc_section)
    **RISK_MODELS,
}

LABEL = required(Column(), "the label column the metric predicts", example="salary-class")

# The keys of veil.metrics.make_metric and the options each takes.
METRICS: dict[str, MetricSchema] = {
    "height": MetricSchema(about="generalization height, the sum of the levels"),
    "precision": MetricSchema(about="Sweeney's precision (higher is better)"),
    "discernibility": MetricSchema(about="sum of class size squared, plus the table size per suppressed record"),
    "aecs": MetricSchema(about="average equivalence class size"),
    "loss": MetricSchema(about="normalized certainty penalty (ARX's loss)"),
    "entropy": MetricSchema(about="non-uniform entropy"),
    "classification": MetricSchema({"label": LABEL}, "Iyengar's classification metric for a label column"),
    "kl": MetricSchema({"sensitive": optional(SensitiveColumn(), about="a sensitive column to measure with the "
                                                                     "quasi-identifiers (default: the quasi-identifiers "
                                                                     "alone)", example="occupation")},
                       "KL-divergence between the original and the released distribution "
                       "(with sensitive: of the quasi-identifiers and that column)"),
    "ig_pl": MetricSchema({"label": LABEL}, "information gain / privacy loss of top-down specialization"),
    "workload": MetricSchema({
        "queries": optional(JsonOnly({"anyOf": [{"type": "integer", "minimum": 1}, {
            "type": "array", "minItems": 1, "items": {"type": "object"}}]}),
            about="the number of random counting queries (default 1,000), or the queries themselves: a list of "
                  "mappings from a quasi-identifier to the values it may take", example=500),
        "max_attributes": optional(JsonOnly(WholeNumber(1).json_schema()),
                                   about="the most quasi-identifiers one random query constrains (default 3)",
                                   example=2),
        "seed": optional(JsonOnly(WholeNumber(0).json_schema()),
                         about="the seed of the generator that draws the queries (default 0)", example=1),
        "sanity": optional(JsonOnly(Nullable(Number(0, lo_open=True)).json_schema()),
                           about="the smallest denominator of a relative error (default: max(1, 0.001·n)), so that "
                                 "queries with tiny true counts do not dominate", example=10),
    }, "mean relative error of random counting queries"),
}

_CATEGORICAL_ABOUT = ("how a categorical quasi-identifier is split and published: hierarchy (top-down along its "
                  "hierarchy, published as the lowest common node; the default where it has one) or order (on its "
                  "value order, published as a set of values); one choice for every column, or per column")

ALGORITHMS: dict[str, AlgorithmSchema] = {
    "fulldomain": AlgorithmSchema("FullDomain", {
        "search": optional(Choice(("optimal", "heuristic")), "optimal",
                           about="optimal (every node settled, the optimum proven) or heuristic (best-first from the "
                                 "top within time_limit, for lattices too large to enumerate; not proven optimal)",
                           example="heuristic"),
        "time_limit": optional(Nullable(Number(0, lo_open=True)), None,
                               about="the seconds the search may take (null: no limit); a search stopped by it is "
                                     "not proven optimal", example=60),
    }, needs_hierarchies=True, what="full-domain generalization"),
    "mondrian": AlgorithmSchema("Mondrian", {
        "mode": optional(Choice(("strict", "relaxed")), "strict",
                         about="strict (partitions never overlap) or relaxed (records equal to the median may go to "
                               "either side)", example="relaxed"),
        # No defaults here: Mondrian's own (hierarchy, false) apply when these are left out.
        "categorical": optional(PerQuasiIdentifier(Choice(("hierarchy", "order"))), about=_CATEGORICAL_ABOUT,
                                example={"zip": "hierarchy"}),
        "allow_single_class": optional(Boolean(), about="when the whole table fails a model, publish it as one class "
                                                        "instead of refusing; the manifest shows the model failed "
                                                        "(default false)", example=True),
    }, needs_hierarchies=False, what="Mondrian"),
    "mdav": AlgorithmSchema("MDAV", {
        "k": optional(WholeNumber(1), about="the smallest group size (default: the largest k of the k-anonymity and "
                                            "(α,k)-anonymity models)", example=5),
        # decimals: one whole number for every numeric quasi-identifier, or {column: number}.
        "decimals": optional(Nullable(PerColumn(WholeNumber(0))),
                             about="the decimals of a published numeric centroid: one number for every numeric "
                                   "quasi-identifier, or per column (default: 0 for a column of whole numbers, "
                                   "else 3)", example=1),
        "nominal": optional(Columns(), about="numeric quasi-identifiers to treat as categories (codes such as ZIP "
                                             "codes): compared by equality, published as the group's mode",
                            example=["zip"]),
        "missing": optional(Choice(("impute", "refuse")),  # default (MDAV's): impute
                            about="impute (a missing number counts as the column's mean, for the distances only; "
                                  "the default) or refuse", example="refuse"),
    }, needs_hierarchies=False, what="MDAV microaggregation"),
    "ace": AlgorithmSchema("Ace", {
        # No defaults: without l, Ace takes ℓ from the ℓ-diversity models; without rng, Assign
        # draws from the operating system's secure source.
        "l": optional(WholeNumber(1), about="ℓ: no person's posterior of any sensitive value exceeds 1/ℓ (default: "
                                            "the largest ℓ of the ℓ-diversity models)", example=5),
        "sensitive": optional(SensitiveColumn(), about="the sensitive column to protect (default: the one the "
                                                       "ℓ-diversity models name, else the only one)",
                              example="occupation"),
        "categorical": optional(PerQuasiIdentifier(Choice(("hierarchy", "order"))), about=_CATEGORICAL_ABOUT,
                                example="order"),
        "rng": optional(Nullable(WholeNumber(0)), about="null (Assign draws from the operating system's secure "
                                                        "source) or a seed: a reproducible run, not fit for release",
                        example=7),
    }, needs_hierarchies=False, what="Ace, transparent ℓ-diversity"),
    "alphabeta": AlgorithmSchema("AlphaBeta", {
        "gamma": required(Number(0, 1, lo_open=True, hi_open=True),
                          "γ: an adversary's belief that a tuple is in the table stays at most γ", example=0.5),
        # the adversary's prior bound: d itself, or k with d = k·n/m (exactly one of the two)
        "d": optional(Number(0, 1, lo_open=True, hi_open=True),
                      about="the prior bound d, below gamma: the adversary believes each tuple is in the table "
                            "with probability at most d (give d or k)", example=0.00002),
        "k": optional(Number(0, lo_open=True),
                      about="the prior bound as k, with d = k·n/m: an adversary k times better informed than the "
                            "uniform n/m; alpha and beta then disclose n (give d or k)", example=1),
        "domains": optional(PublicDomains(), about="per published column, its public domain: a list of values, "
                                                   "{min, max} (the whole numbers between), or data (the data's own "
                                                   "values: not fit for release); other columns take their "
                                                   "hierarchy file's leaves", example={"age": {"min": 17, "max": 90}}),
        "data_domains": optional(Boolean(), False, about="take every domain not given from the data; the view then "
                                                         "says it is not fit for release", example=True),
        "seed": optional(Nullable(WholeNumber(0)), None,
                         about="null (every coin from the operating system's secure source) or a seed: a "
                               "reproducible experiment, not fit for release", example=7),
    }, needs_hierarchies=False, what="the αβ algorithm (a randomized view with (d,γ)-privacy)",
        excludes=("models", "suppression_limit", "metric", "output"), exactly_one=(("d", "k"),)),
    # statistical disclosure control's methods (veil.config.sdc_section, run by veil.sdc.pipeline)
    **SDC_ALGORITHM_SCHEMAS,
}

OUTPUT_OPTIONS: dict[str, Option] = {
    "suppressed": optional(Choice(("remove", "star")), "remove",
                           about="remove (suppressed records are left out; a cell local suppression suppressed is "
                                 "left empty) or star (kept, every quasi-identifier shown as *, exempt from the "
                                 "models; a suppressed cell shown as *)", example="star"),
    "shuffle": optional(Boolean(), True, about="shuffle the rows with the operating system's secure randomness; "
                                               "false keeps the input order, which the manifest flags as linkable "
                                               "by position", example=False),
    "seed": optional(Nullable(WholeNumber(0)), None,
                     about="null (the secure shuffle) or a seed: a reproducible shuffle for tests and experiments, "
                           "which anyone who knows the seed can undo; not fit for release", example=7),
    # ' before every text cell a spreadsheet would run as a formula (veil.spreadsheet)
    "spreadsheet_guard": optional(Boolean(), False,
                                  about="write ' before every text cell a spreadsheet would run as a formula (=, +, "
                                        "-, @ …); the manifest says so, and veil removes it when it reads the "
                                        "release", example=True),
}

ENGINE_OPTIONS: dict[str, Option] = {
    "name": optional(Choice(("local", "spark")), "local",
                     about="local (in memory) or spark (Apache Spark; pip install \"veil[spark]\")", example="spark"),
    "master": optional(Text(), "local[*]", about="the Spark master: local[*], local[N], spark://HOST:PORT or yarn",
                       example="spark://head:7077"),
    "config": optional(Settings(), {}, about="Spark settings, given to the session as they are",
                       example={"spark.executor.memory": "4g"}),
}

# The builders' options; the parser reads them with checks of its own (band widths that nest,
# calendar units from fine to coarse), the types here give their JSON Schema.
_CHARACTER = JsonOnly({"type": "string", "minLength": 1, "maxLength": 1})
_TOP = optional(JsonOnly(NAME_SCHEMA), about="the label of the top level (default *)", example="any")
BUILDERS: dict[str, BuilderSchema] = {
    "intervals": BuilderSchema({
        "widths": required(JsonOnly({"anyOf": [Number(0, lo_open=True).json_schema(), {
            "type": "array", "minItems": 1, "items": Number(0, lo_open=True).json_schema()}]}),
            "the band widths, one per level, each a multiple of the one before", example=[5, 10, 20]),
        "start": optional(JsonOnly(Number().json_schema()),
                          about="the lower edge of the first band (default: the largest multiple of the widest band "
                                "not above the smallest value)", example=0),
        "top": _TOP,
    }, "numeric bands, each width a multiple of the one before", "{widths: [5, 10, 20]}"),
    "masking": BuilderSchema({"char": optional(_CHARACTER, about="the character that replaces a masked one "
                                                                 "(default *)", example="#"), "top": _TOP},
                             "digits masked from the right (ZIP codes: 1305*, 130**, …)", "{}"),
    "dates": BuilderSchema({
        "units": optional(JsonOnly({"anyOf": [Choice(DATE_GRANULARITIES).json_schema(), {
            "type": "array", "minItems": 1, "items": Choice(DATE_GRANULARITIES).json_schema()}]}),
            about="the calendar units above the day, from fine to coarse: week, month, quarter, year, decade "
                  "(default: month, year)", example=["month", "year"]),
        "format": optional(JsonOnly({"type": "string"}), about="the dates' format, as strptime writes it (default: "
                                                               "inferred from the values)",
                           example="%d/%m/%Y"),
        "top": _TOP,
    }, "calendar units from fine to coarse (day → month → year)", "{units: [month, year]}"),
    "flat": BuilderSchema({"top": _TOP}, "the value kept, or suppressed to *", "{}"),
}

_PATH = JsonOnly({"type": "string", "pattern": r"\S"})
#: A hierarchy given as a file: ``{file: h.csv, delimiter: ";"}``.
HIERARCHY_FILE_OPTIONS: dict[str, Option] = {
    "file": required(_PATH, "an ARX hierarchy file (no header, one row per value, one column per level, up to *), "
                            "relative to the configuration", example="adult_hierarchy_age.csv"),
    "delimiter": optional(_CHARACTER, about="the file's delimiter, one character (default ;, or , for a file "
                                            "holding no ;)", example=","),
}
#: A value order given as a file, one value a line: ``{file: order.txt}``.
ORDER_FILE_OPTIONS: dict[str, Option] = {
    "file": required(_PATH, "a file of the column's values in order, one a line, relative to the configuration",
                     example="education-order.txt")}

COLUMN_ROLES: dict[str, Option] = {
    "quasi_identifiers": required(Columns(), "the columns an adversary can link to other data that names people; "
                                             "anonymization generalizes them", example=["sex", "age", "zip"]),
    "sensitive": optional(Columns(), about="the columns nobody should learn about a given person; the privacy "
                                           "models constrain them", example=["disease"]),
    "identifying": optional(Columns(), about="columns that name a person outright: dropped from the release",
                            example=["name", "id"]),
    # a survey's sampling weight, strata and household (veil.config.sdc_section)
    **SURVEY_ROLES,
}


# --------------------------------------------------------------------------------------------
# The publishing policy (veil publish --policy)

#: The cross-release checks of the publishing gate (:mod:`veil.ledger.checks`, by their key) and
#: the thresholds each takes; a check the file does not list runs with its defaults.
CHECKS: dict[str, dict[str, Option]] = {
    "intersection": {
        "confidence": optional(Number(0, 1, lo_open=True), 1.0,
                               about="the adversary's confidence C in a person's sensitive value that exposes them "
                                     "(1: one value left)", example=0.5),
        "max_share": optional(Number(0, 1), 0.0, about="the largest share of the population the new release may "
                                                       "newly expose", example=0.001),
    },
    "matching": {
        "k": optional(Nullable(WholeNumber(1)), None,
                      about="the joined class size under which a row is exposed (null: the smaller of the two "
                            "releases' smallest classes)", example=5),
        "max_share": optional(Number(0, 1), 0.0, about="the largest share of the earlier release's rows the pair "
                                                       "may expose", example=0.001),
    },
    "join": {
        "k": optional(Nullable(WholeNumber(1)), None,
                      about="the fewest candidates a joined group must have (null: the smaller of the two "
                            "releases' smallest classes)", example=5),
        "l": optional(Nullable(WholeNumber(1)), None,
                      about="the fewest distinct sensitive values a joined group must have (null: not checked)",
                      example=2),
        "max_share": optional(Number(0, 1), 0.0, about="the largest share of the earlier release's records the "
                                                       "pair may expose", example=0.001),
    },
    "correspondence": {
        "k": optional(Nullable(WholeNumber(1)), None,
                      about="the candidates under which a person is exposed (null: the smaller of the two "
                            "releases' own k)", example=5),
        "max_share": optional(Number(0, 1), 0.0, about="the largest share of the population the pair may expose",
                              example=0.001),
    },
}
#: What each check of :data:`CHECKS` is, and an example of its thresholds (YAML).
CHECK_ABOUT: dict[str, tuple[str, str]] = {
    "intersection": ("the intersection attack of Ganta et al. with every earlier microdata release",
                     "{confidence: 1.0, max_share: 0.0}"),
    "matching": ("Sweeney's unsorted matching, when both releases kept the input order",
                 "{k: null, max_share: 0.0}"),
    "join": ("Wang and Fung's join attack, when the releases publish different columns that overlap",
             "{k: 5, l: 2, max_share: 0.0}"),
    "correspondence": ("the forward, cross and backward attacks of Fung et al. on a new version of an earlier "
                       "release", "{k: 5, max_share: 0.0}"),
}
COMPOSITIONS = ("sequential", "advanced", "temporal", "window", "zcdp")
DISCOUNTS: dict[str, Option] = {
    "exponential": optional(Number(0, 1, lo_open=True), about="g(i) = base^i for a charge i steps back: the base",
                            example=0.9),
    "hyperbolic": optional(Number(0), about="g(i) = 1/(1 + rate·i) for a charge i steps back: the rate",
                           example=0.5)}
class BudgetOptions(Options):
    """A population's budget: ``epsilon`` or ``rho`` (exactly one, in the composition rule's
    measure), with ``delta``."""

    def json_schema(self) -> dict:
        out = super().json_schema()
        out["type"] = "object"
        out["oneOf"] = [{"required": ["epsilon"]}, {"required": ["rho"]}]
        return out


POPULATION_OPTIONS: dict[str, Option] = {
    "key": optional(Nullable(Name()), None,
                    about="the column naming a person in every table of the population, so that samples, versions "
                          "and sites share one budget and history (null: the population is the one table first "
                          "registered under it)", example="person_id"),
    "budget": optional(Nullable(BudgetOptions({
        "epsilon": optional(Number(0, lo_open=True), about="the total ε (every composition rule but zcdp)",
                            example=1.0),
        "rho": optional(Number(0, lo_open=True), about="the total ρ of ρ-zCDP (zcdp composition only, instead of "
                                                        "epsilon)", example=0.5),
        "delta": optional(Number(0, 1, hi_open=True), 0.0,
                          about="the total δ; with rho, the δ at which the budget is also stated as (ε, δ), above 0",
                          example=1.0e-6)},
        "{epsilon: 1.0}")), None,
        about="the population's privacy budget (null: no DP answer may be charged to it), epsilon (with delta) or, "
              "under zcdp composition, rho with delta; fixed when the population is created",
        example={"epsilon": 1.0, "delta": 1.0e-6}),
    "composition": optional(Choice(COMPOSITIONS), "sequential",
                            about="how charges add up: sequential (and parallel), advanced (with delta_prime), "
                                  "temporal (discounted by discount), window (w-event, over window steps) or zcdp "
                                  "(ρ-zCDP: charges of ρ add up, for Gaussian noise; a budget in rho)",
                            example="advanced"),
    "delta_prime": optional(Nullable(Number(0, 1, lo_open=True, hi_open=True)), None,
                            about="advanced composition's δ' (null: half the budget's δ)", example=1.0e-7),
    "discount": optional(Nullable(Options(DISCOUNTS, "{exponential: 0.9}")), None,
                         about="temporal composition's discount g: exponential or hyperbolic",
                         example={"exponential": 0.9}),
    "window": optional(Nullable(WholeNumber(1)), None, about="window composition's w, in time steps", example=7),
    "unit": optional(Nullable(PrivacyUnitValue()), None,
                     about="the privacy unit its budget protects: rows (each row, the default) or {person: ID_COLUMN} "
                           "(every row of one person, named by that column); a charge at the other unit is refused, "
                           "and a population kept before units is row-level",
                     example={"person": "user_id"}),
    "relation": optional(Choice(("add-remove", "substitute")), "add-remove",
                         about="the neighbouring relation: add-remove (one person added or removed, under which "
                               "veil's queries are private) or substitute (one person's record changed)",
                         example="substitute"),
}


#: The presence check of the release alone (:class:`veil.ledger.checks.PresenceCheck`): the
#: population table and the thresholds (δ-presence's largest probability, k-map's k).
PRESENCE_OPTIONS: dict[str, Option] = {
    "population": required(File(), "the public population table (every quasi-identifier, raw values), relative to "
                                   "the policy file", example="voters.csv"),
    "delta_max": optional(Nullable(Number(0, 1)), None,
                          about="the largest probability of being in the release a person of the population may "
                                "have (null: not checked)", example=0.5),
    "k_map": optional(Nullable(WholeNumber(1)), None,
                      about="the fewest people of the population a released tuple must match (null: not checked)",
                      example=5),
    "max_share": optional(Number(0, 1), 0.0, about="the largest share of the population the release may expose",
                          example=0.001),
}
POLICY_OPTIONS: dict[str, Option] = {
    "recheck": optional(Boolean(), True, about="measure each release's own models again on the published file "
                                               "before publishing it", example=False),
    "composition": optional(Nullable(Options(
        {name: optional(Options(options), about=CHECK_ABOUT[name][0], example=yaml_example(CHECK_ABOUT[name][1]))
         for name, options in CHECKS.items()},
        "{intersection: {confidence: 1.0, max_share: 0.0}}")), None,
        about="the thresholds of the gate's checks across releases; a check left out runs with its defaults",
        example={"intersection": {"confidence": 1.0, "max_share": 0.0}}),
    "populations": optional(PopulationMap(POPULATION_OPTIONS), (),
                            about="the populations, by name, each with its key, privacy budget and composition rule",
                            example={"adult": {"budget": {"epsilon": 1.0}}}),
    "presence": optional(Nullable(Options(PRESENCE_OPTIONS, "{population: voters.csv, delta_max: 0.5}")), None,
                         about="the membership check of a release alone against a public population table "
                               "(δ-presence and k-map)", example={"population": "voters.csv", "delta_max": 0.5}),
    "risk": optional(Nullable(Options(RISK_CHECK_OPTIONS, "{max_individual: 0.2, max_share: 0.05}")), None,
                     about="the re-identification risk check of a release alone: the Benedetti–Franconi individual "
                           "risk of every released record, measured on the published file with its quasi-identifiers "
                           "and sampling weights", example={"max_individual": 0.2, "max_share": 0.05,
                                                              "max_rate": 0.01}),
}


# --------------------------------------------------------------------------------------------
# Anonymized marginals (``veil marginals``; Kifer and Gehrke, SIGMOD 2006)

#: The privacy models of a collection of marginals (:mod:`veil.marginals.privacy`).
MARGINAL_MODELS: dict[str, ModelSchema] = {
    "k_link": ModelSchema("KLinkAnonymity", {
        "k": required(WholeNumber(1), "the fewest records a non-empty cell may hold", example=5)}, "{k: 5}",
        "every cell of every marginal's non-sensitive attributes holds 0 or at least k records"),
    "k_combinatorial": ModelSchema("KCombinatorialAnonymity", {
        "k": required(WholeNumber(1), "the fewest records a tuple may hold in some consistent table, unless none "
                                      "does", example=5),
        "method": optional(Choice(("auto", "exact", "lp")),
                           about="auto (closed form where it applies, else exact, else lp; the default), exact "
                                 "(bounds and integer programs) or lp (the LP relaxation, labelled as such)",
                           example="exact"),
        "exact_limit": optional(WholeNumber(1), about="the most cells decided exactly (default 2,000)",
                                example=2000),
        "lp_limit": optional(WholeNumber(1), about="the most cells decided by the LP relaxation (default 100,000)",
                             example=100000)},
        "{k: 5, method: auto}",
        "no tuple holds 1 to k − 1 records in some table consistent with the marginals unless one holds k"),
    "maxent_l_diversity": ModelSchema("MaxEntLDiversity", {
        "l": required(Number(1), "ℓ: the max-ent distribution of the sensitive column is ℓ-diverse wherever it "
                                 "is defined", example=3),
        "variant": optional(Choice(("entropy", "distinct")), about="entropy (the default) or distinct ℓ-diversity",
                            example="distinct")},
        "{l: 3, variant: entropy}",
        "the maximum-entropy distribution of the sensitive column given the others is l-diverse"),
}

#: The greedy search's budget (absent keys take the search's defaults: 5, 3, no limit).
MARGINAL_SEARCH_OPTIONS: dict[str, Option] = {
    "max_marginals": optional(WholeNumber(0), about="the most marginals the search adds (default 5)", example=4),
    "max_attributes": optional(WholeNumber(1), about="the most attributes in one added marginal (default 3)",
                               example=3),
    "max_cells": optional(Nullable(WholeNumber(1)), about="the most cells in one added marginal (null: no limit, "
                                                          "the default)", example=500),
}

#: The max-ent estimate's limits (absent keys take its defaults).
MAXENT_OPTIONS: dict[str, Option] = {
    "max_cells": optional(WholeNumber(1), about="the largest dense table the fit may build (default 2²⁴, "
                                                "16,777,216); a larger one is refused with its size",
                          example=1000000),
    "tolerance": optional(Number(0, 1, lo_open=True, hi_open=True),
                          about="the residual at which iterative proportional fitting stops (default 10⁻¹⁰)",
                          example=1.0e-8),
    "max_iterations": optional(WholeNumber(1), about="the most cycles of iterative proportional fitting; a fit "
                                                     "that has not converged is refused (default 1,000)",
                               example=500),
}

MARGINALS_OPTIONS: dict[str, Option] = {
    "privacy": required(MarginalModelList(MARGINAL_MODELS),
                        "the privacy models every published collection must satisfy",
                        example=[{"k_link": {"k": 5}}, {"maxent_l_diversity": {"l": 3}}]),
    "sensitive": optional(SensitiveColumn(), about="the sensitive column the marginals hold (default: the one "
                                                   "columns.sensitive declares)", example="occupation"),
    "base": optional(BaseTable(), "optimal",
                     about="the table the collection starts from: optimal (veil's optimal full-domain "
                           "generalization under models, without suppression), none, or {levels: {column: level}}",
                     example={"levels": {"age": 2, "education": 1}}),
    "publish": optional(MarginalList(), (), about="marginals published as given, each {attributes, levels}",
                        example=[{"attributes": ["age", "sex"], "levels": {"age": 1}}]),
    "search": optional(Nullable(Options(MARGINAL_SEARCH_OPTIONS, "{max_marginals: 5, max_attributes: 3}")),
                       about="the greedy search that adds the marginals lowering the KL-divergence most, within "
                             "this budget (absent or null: no search)",
                       example={"max_marginals": 4, "max_attributes": 3, "max_cells": 500}),
    "maxent": optional(Options(MAXENT_OPTIONS, "{max_cells: 16777216, tolerance: 1e-10}"), {},
                       about="the limits of the maximum-entropy estimate", example={"max_cells": 1000000}),
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
        hint="give the table to anonymize, like 'data: adult.csv' (relative to this file).", example="adult.csv"),
    "name": Section(Text(), "the table's name, which the release's manifest and report show (default: the data "
                            "file's name without its extension)", field="name", example="Adult census extract"),
    "delimiter": Section(Nullable(_CHARACTER), "the CSV delimiter, one character (sniffed when absent)",
                         example=";"),
    "missing_values": Section(JsonOnly(one_or_list({"type": ["string", "number", "boolean", "null"]})),
                              "cell texts that mean a value is missing (default: the empty cell)",
                              example=["?", "unknown"]),
    "columns": Section(
        Options(COLUMN_ROLES), "the role of each column; every column not listed is released unchanged", required=True,
        hint="give the roles of the columns, like 'columns: {quasi_identifiers: [age, zip], sensitive: [disease]}'.",
        example={"quasi_identifiers": ["age", "zip", "sex"], "sensitive": ["disease"], "identifying": ["name"]}),
    "hierarchies": Section(HierarchyMap(BUILDERS, HIERARCHY_FILE_OPTIONS, _PATH),
                           "per column, an ARX hierarchy file or a builder",
                           example={"age": {"intervals": {"widths": [5, 10, 20]}}, "zip": {"masking": {}},
                                    "occupation": {"file": "adult_hierarchy_occupation.csv"}}),
    "orders": Section(JsonOnly({"type": ["object", "null"], "additionalProperties": {"anyOf": [
        one_or_list(NAME_SCHEMA), options_schema(ORDER_FILE_OPTIONS)]}}),
        "per text column, its values in order (or a file, one value a line)",
        example={"size": ["small", "medium", "large"], "education": {"file": "education-order.txt"}}),
    "models": Section(ModelList(MODELS), "the privacy models the release must satisfy, every one",
                      required=True,
                      hint="list the privacy models the release must satisfy, like "
                           "'models: [{k_anonymity: {k: 5}}]'.",
                      example=[{"k_anonymity": {"k": 5}}, {"entropy_l_diversity": {"l": 3, "sensitive": "occupation"}}]),
    "suppression_limit": Section(Number(0, 1, hi_open=True), "the share of records that may be suppressed (default 0)",
                                 field="suppression_limit", build=float, example=0.02),
    "metric": Section(MetricChoice(METRICS), "the utility metric the search optimizes (default: loss)",
                      example={"name": "classification", "label": "salary-class"}),
    "algorithm": Section(AlgorithmChoice(ALGORITHMS), "the anonymization algorithm (default: fulldomain)",
                         example={"name": "mondrian", "mode": "strict"}),
    "output": Section(Options(OUTPUT_OPTIONS, "{suppressed: remove, shuffle: true}"), "how the release is written",
                      field="output", build=lambda options: OutputSpec(**options),
                      example={"suppressed": "star", "shuffle": True}),
    "engine": Section(Options(ENGINE_OPTIONS, "{name: spark, master: 'local[*]'}"),
                      "where the records are read and counted: local (in memory) or spark (Apache Spark at master, "
                      "with the Spark settings in config)",
                      field="engine", build=lambda options: EngineSpec(**options),
                      example={"name": "spark", "master": "local[*]", "config": {"spark.executor.memory": "4g"}}),
    "policy": Section(PolicyOptions(POLICY_OPTIONS, CHECKS),
                      "what the publishing gate enforces (veil publish --policy): the thresholds of "
                      "its checks across releases, the presence check of a release alone against a population table, "
                      "and the populations with their privacy budgets; a file may hold this section alone",
                      field="policy",
                      example={"composition": {"intersection": {"confidence": 1.0, "max_share": 0.0}},
                               "populations": {"adult": {"budget": {"epsilon": 1.0, "delta": 1.0e-6}}}}),
    "marginals": Section(Options(MARGINALS_OPTIONS, "{privacy: [{k_link: {k: 5}}]}"),
                         "anonymized marginals that veil marginals publishes beside (or instead of) the table, and "
                         "the privacy models of the collection (Kifer and Gehrke 2006)",
                         field="marginals", build=_marginals_spec,
                         example={"privacy": [{"k_link": {"k": 5}}],
                                  "search": {"max_marginals": 4, "max_attributes": 3}}),
    "synth": Section(SynthOptions(),
                     "differentially private synthetic data that veil synth makes (mechanism, budget, public domain, "
                     "workload, rows, seed, evaluation); a file may hold this section alone, with data",
                     field="synth",
                     example={"mechanism": "mst", "epsilon": 1.0, "delta": 1.0e-9,
                              "domain": {"sex": {"categories": ["Female", "Male"]},
                                         "age": {"bins": {"edges": [17, 30, 50, 91], "integer": True}}}}),
}


def configuration_schema() -> dict:
    """The JSON Schema (draft 2020-12) of a configuration file, generated from :data:`SECTIONS`.

    It is what ``veil config schema`` prints and what veil ships as ``veil/resources/veil.schema.json``.
    """
    properties = {}
    for key, section in SECTIONS.items():
        properties[key] = documented(section.value.json_schema(), section.about, section.example)
    # A section an algorithm excludes is forbidden with it, and required only without it.
    exclusions = []
    for name, algorithm in ALGORITHMS.items():
        if algorithm.excludes:
            exclusions.append({"if": _chooses([name]), "then": {"properties": {k: False for k in algorithm.excludes}}})
    excluded_by = {key: [n for n, a in ALGORITHMS.items() if key in a.excludes or key in a.optional_sections]
                   for key in SECTIONS}
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
                       "for `veil publish`, the policy (a file may hold that section alone); for `veil synth`, "
                       "the synth section (a file may hold it alone, with data).",
        "type": "object",
        "properties": properties,
        # Either a whole anonymization configuration, a policy file or a synthetic data file.
        "anyOf": [anonymization, {"required": ["policy"]}, {"required": ["synth"]}],
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
