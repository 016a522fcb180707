"""The JSON Schema of the configuration files: generated from the tables the parser reads, shipped
with veil, printed by ``veil config schema``, named by ``veil init``; every example validates,
every key of the tables is accepted by both the parser and the schema, and mistakes are refused
by both."""

from __future__ import annotations

import hashlib
import inspect
import json
from pathlib import Path

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

import veil.metrics
from veil.cli import app
from veil.config import ConfigError, load_config, load_policy, write_starter_config
import veil.config.schema
from veil.config.parser import Parser
from veil.config.per_quasi_identifier import PerQuasiIdentifier
from veil.config.schema import (ALGORITHMS, BUILDERS, CHECKS, COLUMN_ROLES, HIERARCHY_FILE_OPTIONS, MARGINAL_MODELS,
                                MARGINAL_SEARCH_OPTIONS, MAXENT_OPTIONS, METRICS, MODELS, ORDER_FILE_OPTIONS,
                                OUTPUT_OPTIONS, POPULATION_OPTIONS, SECTIONS, SHIPPED_SCHEMA, configuration_schema,
                                schema_text)
from veil.config.value_types import (Boolean, Choice, Column, Columns, File, JsonOnly, Name, Nullable, Number, PerColumn,
                                     PublicDomains, SensitiveColumn, WholeNumber)
from veil.data.bundled import adult_folder

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "examples").glob("*.yaml"))
VALIDATOR = jsonschema.Draft202012Validator(configuration_schema())

PEOPLE = ("id,name,age,zip,sex,disease,when\n"
          "1,Ann,28,13053,F,flu,2024-01-05\n2,Bob,29,13068,M,cancer,2024-02-11\n3,Cid,21,13068,M,flu,2023-12-30\n"
          "4,Dee,23,13053,F,cold,2024-03-01\n")

BASE = {
    "data": "people.csv",
    "columns": {"quasi_identifiers": ["age", "zip", "sex"], "sensitive": ["disease"], "identifying": ["id", "name"]},
    "hierarchies": {"age": {"intervals": {"widths": [10, 20]}}, "zip": {"masking": {}}, "sex": {"flat": {}}},
    "models": [{"k_anonymity": {"k": 2}}],
}

# Values for the options whose type only the JSON Schema describes (the parser checks them with
# rules of its own, or hands them to the object that takes them).
JSON_ONLY_EXAMPLES = {
    ("intervals", "widths"): [10, 20], ("intervals", "start"): 0, ("intervals", "top"): "any",
    ("masking", "char"): "#", ("masking", "top"): "any",
    ("dates", "units"): ["month", "year"], ("dates", "format"): "%Y-%m-%d", ("dates", "top"): "any",
    ("flat", "top"): "any",
    ("workload", "queries"): 50, ("workload", "max_attributes"): 2, ("workload", "seed"): 1,
    ("workload", "sanity"): 2.0,
    ("file", "file"): "sex.csv", ("file", "delimiter"): ";",
}


# Options whose valid values depend on another option (the αβ algorithm's d must be below its γ; join's
# manifest must describe its earlier release).
RELATED_EXAMPLES = {("alphabeta", "d"): 0.01, ("join", "manifest"): "earlier.json",
                    # the methods of statistical disclosure control: a numeric column that recode fulldomain
                    # leaves alone, a matrix over zip's two codes, groups of another column than PRAM's
                    ("swap", "columns"): ["when"], ("noise", "columns"): ["when"],
                    ("topcoding", "columns"): {"when": {"top": 2024, "bottom": None, "replacement": 2024}},
                    ("pram", "matrix"): {"zip": [[0.9, 0.1], [0.1, 0.9]]}, ("pram", "by"): ["sex"]}
# Options another option excludes: local suppression takes k or risk; PRAM's groups go with alpha.
EXCLUDED_BY = {("localsuppression", "risk"): "k", ("pram", "by"): "matrix"}
EARLIER = "zip,disease\n13053,flu\n13068,cancer\n13068,flu\n13053,cold\n"


def example(owner: str, key: str, check):
    """A valid value of an option, from its type."""
    if (owner, key) in RELATED_EXAMPLES:
        return RELATED_EXAMPLES[owner, key]
    if isinstance(check, WholeNumber):
        return max(check.minimum, 2)
    if isinstance(check, Number):
        lo = 0.0 if check.lo is None else check.lo
        return lo + 0.5 if check.hi is None else (lo + check.hi) / 2
    if isinstance(check, Choice):
        return check.choices[0]
    if isinstance(check, Boolean):
        return False
    if isinstance(check, (SensitiveColumn, Column)):
        return "disease"
    if isinstance(check, Columns):
        return ["zip"]
    if isinstance(check, File):
        return "earlier.csv"
    if isinstance(check, Name):
        return "disease"
    if isinstance(check, (Nullable, PerColumn)):
        return example(owner, key, check.inner)
    if isinstance(check, PerQuasiIdentifier):
        return {"zip": example(owner, key, check.inner)}
    if isinstance(check, PublicDomains):
        return {"age": {"min": 20, "max": 29}, "sex": ["F", "M"], "zip": "data", "disease": ["flu", "cold", "cancer"]}
    assert isinstance(check, JsonOnly), f"no example for {owner}.{key}"
    return JSON_ONLY_EXAMPLES[owner, key]


def examples_of(owner: str, options) -> dict:
    return {key: example(owner, key, option.check) for key, option in options.items()}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "people.csv").write_text(PEOPLE, encoding="utf-8")
    (tmp_path / "sex.csv").write_text("F;*\nM;*\n", encoding="utf-8")
    (tmp_path / "order.txt").write_text("F\nM\n", encoding="utf-8")
    # an earlier release of the same people (join k-anonymity), with the manifest that describes it
    (tmp_path / "earlier.csv").write_text(EARLIER, encoding="utf-8")
    digest = hashlib.sha256(EARLIER.encode("utf-8")).hexdigest()
    (tmp_path / "earlier.json").write_text(json.dumps({"release": {"file": "earlier.csv", "sha256": digest},
                                                       "roles": {"quasi_identifiers": ["zip"]}}), encoding="utf-8")
    return tmp_path


def parse(folder: Path, doc: dict):
    path = folder / "job.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return load_config(path)


def schema_errors(doc: dict) -> list[str]:
    return [error.message for error in VALIDATOR.iter_errors(doc)]


# --------------------------------------------------------------------------- the schema itself

def test_the_shipped_schema_is_the_one_the_tables_generate():
    assert SHIPPED_SCHEMA.read_text(encoding="utf-8") == schema_text()
    jsonschema.Draft202012Validator.check_schema(json.loads(schema_text()))
    assert configuration_schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_veil_config_schema_prints_it():
    result = CliRunner().invoke(app, ["config", "schema"])
    assert result.exit_code == 0, result.output
    assert result.stdout == schema_text()


def test_the_schema_module_still_exports_what_it_is_made_of():
    # veil.config.schema keeps its option tables; the value types, options and kinds of entry live in
    # modules of their own and stay importable from it, as the very same objects
    for name in veil.config.schema.__all__:
        assert hasattr(veil.config.schema, name), name
    assert {"WholeNumber", "Option", "optional", "ModelSchema", "Section", "PolicyOptions",
            "MarginalList", "PerQuasiIdentifier", "MODELS", "configuration_schema"} <= set(veil.config.schema.__all__)
    assert veil.config.schema.WholeNumber is WholeNumber and veil.config.schema.PerQuasiIdentifier is PerQuasiIdentifier


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_validates_and_loads(path):
    first, text = path.read_text(encoding="utf-8").split("\n", 1)
    named = first.removeprefix("# yaml-language-server: $schema=")
    assert named != first and (path.parent / named).resolve() == SHIPPED_SCHEMA  # editors find the schema
    assert not schema_errors(yaml.safe_load(text))
    config = load_config(path)
    assert config.models() or "models" in ALGORITHMS[config.algorithm.name].excludes


def test_init_names_the_shipped_schema_and_writes_a_valid_file(tmp_path):
    out = tmp_path / "adult.yaml"
    write_starter_config(adult_folder() / "adult.csv", out)
    first, text = out.read_text(encoding="utf-8").split("\n", 1)
    assert first == f"# yaml-language-server: $schema={SHIPPED_SCHEMA.resolve().as_uri()}"
    assert Path(SHIPPED_SCHEMA).is_file()
    assert not schema_errors(yaml.safe_load(text))


# --------------------------------------------------------------------------- one source of truth

def test_every_section_is_read_by_the_table_or_by_a_reader_of_the_parser():
    readers = set(Parser("x.yaml", Path(".")).readers)
    assert readers == {key for key, section in SECTIONS.items() if section.field is None}
    assert all(section.build is None or section.field for section in SECTIONS.values())


def test_the_metric_table_is_veil_metrics():
    assert set(METRICS) == set(veil.metrics.METRICS)
    for key, metric in METRICS.items():
        takes = [p for p in inspect.signature(veil.metrics.METRICS[key].__init__).parameters if p != "self"]
        assert list(metric.options) == takes, key


def test_the_schema_knows_every_key_the_parser_accepts(folder):
    """Every key of every table, with a value of its type, in a document both accept."""
    documents = [
        {**BASE, "name": "survey 2024", "delimiter": ",", "missing_values": ["", "NA"], "suppression_limit": 0.1,
         "orders": {"sex": ["F", "M"], "zip": examples_of("file", ORDER_FILE_OPTIONS)},
         "output": examples_of("output", OUTPUT_OPTIONS)},
        {**BASE, "hierarchies": {**BASE["hierarchies"], "sex": "sex.csv",
                                 "disease": examples_of("file", HIERARCHY_FILE_OPTIONS)}},
    ]
    documents += [{**BASE, "models": [{name: examples_of(name, model.options)}]} for name, model in MODELS.items()]
    documents.append({**BASE, "engine": {"name": "spark", "master": "local[2]",
                                         "config": {"spark.executor.memory": "1g", "spark.sql.shuffle.partitions": 4}}})
    for name, algorithm in ALGORITHMS.items():
        base = {key: value for key, value in BASE.items() if key not in algorithm.excludes}
        options = examples_of(name, algorithm.options)
        if algorithm.named_alone:
            documents.append({**base, "algorithm": name})
        # exactly one option of each group, in turn
        groups = [dict.fromkeys(group) for group in algorithm.exactly_one] or [{}]
        for group in groups:
            for chosen in group or [None]:
                given = {k: v for k, v in options.items() if k == chosen or k not in group}
                given = {k: v for k, v in given.items() if EXCLUDED_BY.get((name, k)) not in given}
                documents.append({**base, "algorithm": {"name": name, **given}})
        for (owner, key), other in EXCLUDED_BY.items():
            if owner == name and other not in {k for group in algorithm.exactly_one for k in group}:
                given = {k: v for k, v in options.items() if k != other and k != "matching"}
                documents.append({**base, "algorithm": {"name": name, **given}})
    for name, metric in METRICS.items():
        documents.append({**BASE, "metric": {"name": name, **examples_of(name, metric.options)}})
        if not any(option.required for option in metric.options.values()):
            documents.append({**BASE, "metric": name})
    documents += [{**BASE, "metric": alias} for alias in veil.metrics.ALIASES]
    documents += [{**BASE, "hierarchies": {**BASE["hierarchies"], "age": {kind: examples_of(kind, builder.options)}}}
                  for kind, builder in BUILDERS.items()]
    documents.append({**BASE, "policy": POLICY})
    documents.append({**BASE, "columns": {**BASE["columns"], "identifying": [], "weight": "id",
                                          "strata": ["name"], "household": "when"}})
    documents += [
        {**BASE, "marginals": {
            "privacy": [{name: examples_of(name, model.options)} for name, model in MARGINAL_MODELS.items()],
            "sensitive": "disease", "base": {"levels": {"age": 1}},
            "publish": [{"attributes": ["age", "disease"], "levels": {"age": 1}}],
            "search": examples_of("search", MARGINAL_SEARCH_OPTIONS), "maxent": examples_of("maxent", MAXENT_OPTIONS)}},
        {**BASE, "marginals": {"privacy": [{"k_link": {"k": 2}}], "base": "none", "search": None}},
    ]
    documents += [{**BASE, "synth": synth} for synth in SYNTH_SECTIONS]
    for doc in documents:
        assert not schema_errors(doc), doc
        config = parse(folder, doc)
        assert config.model_specs or "models" in ALGORITHMS[config.algorithm.name].excludes
    assert {key for doc in documents for key in doc} == set(SECTIONS)
    assert {key for doc in documents for key in doc["columns"]} == set(COLUMN_ROLES)


# Every key of the synth section: each kind of domain, the budget each way, the evaluation's options.
SYNTH_SECTIONS = [
    {"mechanism": "aim", "epsilon": 1.0, "delta": 1e-9, "from_data": True, "rows": 10, "seed": 3,
     "max_model_cells": 1000, "domain": {"sex": {"hierarchy": "sex.csv"}, "age": {"bins": {"edges": [20, 25, 30],
                                                                                       "integer": True}},
                                         "disease": {"categories": ["flu", "cold", "cancer"]}, "zip": "data",
                                         "when": {"data": {"bins": 3}}},
     "workload": [["age", "sex"], {"columns": ["age", "disease"], "weight": 2}],
     "evaluation": {"target": "disease", "quasi_identifiers": ["age", "sex"], "holdout": "people.csv"}},
    {"rho": 0.5, "domain": {"sex": ["F", "M"], "disease": {"hierarchy": {"file": "sex.csv", "delimiter": ";"}}},
     "evaluation": None},
]


# --------------------------------------------------------------------------- the policy

# Every key of the policy's tables: each check's thresholds, each composition rule with its option.
POLICY = {
    "recheck": False,
    "risk": {"max_individual": 0.2, "max_share": 0.05, "max_rate": 0.01, "household": False},
    "composition": {name: {key: option.default for key, option in options.items()} for name, options in CHECKS.items()},
    "populations": {
        "patients": {"key": "id", "budget": {"epsilon": 1.0, "delta": 1e-6}, "composition": "advanced",
                     "delta_prime": 5e-7, "relation": "add-remove"},
        "visits": {"budget": {"epsilon": 2}, "composition": "temporal", "discount": {"hyperbolic": 0.5},
                   "unit": {"person": "visitor"}},
        "streams": {"budget": {"epsilon": 1}, "composition": "window", "window": 7, "relation": "substitute"},
        "answers": {"budget": {"epsilon": 1}, "composition": "temporal", "discount": {"exponential": 0.9}},
        "census": None,
    },
}


def test_a_policy_is_read_alone_or_from_a_configuration(folder):
    assert {key for p in POLICY["populations"].values() for key in (p or {})} | {"budget"} == set(POPULATION_OPTIONS)
    path = folder / "policy.yaml"
    path.write_text(yaml.safe_dump({"policy": POLICY}), encoding="utf-8")
    assert not schema_errors({"policy": POLICY})
    spec = load_policy(path)
    assert spec.recheck is False and set(spec.checks) == set(CHECKS)
    by_name = {p.name: p for p in spec.populations}
    assert by_name["patients"].budget == (1.0, 1e-6) and by_name["patients"].key == "id"
    assert by_name["visits"].discount == ("hyperbolic", 0.5) and by_name["streams"].window == 7
    assert by_name["visits"].unit == "visitor" and by_name["patients"].unit is None
    assert by_name["census"].budget is None and by_name["census"].composition == "sequential"
    # A check the file leaves out runs with its defaults.
    path.write_text("policy:\n  populations: {census: }\n", encoding="utf-8")
    assert load_policy(path).checks == {name: {k: o.default for k, o in options.items()}
                                       for name, options in CHECKS.items()}
    example = load_config(REPO / "examples" / "adult-fulldomain.yaml")
    assert example.policy == load_policy(REPO / "examples" / "adult-fulldomain.yaml") != spec
    assert example.to_dict()["policy"]["populations"]["adult"]["budget"] == {"epsilon": 1.0, "delta": 1e-6}


POLICY_MISTAKES = [
    ("unknown check", {"composition": {"intersecton": {}}}, "unknown key 'intersecton'"),
    ("a share above 1", {"composition": {"intersection": {"max_share": 2}}}, "at most 1"),
    ("a confidence of 0", {"composition": {"intersection": {"confidence": 0}}}, "above 0"),
    ("unknown population key", {"populations": {"a": {"budgt": {"epsilon": 1}}}}, "unknown key 'budgt'"),
    ("unknown rule", {"populations": {"a": {"budget": {"epsilon": 1}, "composition": "magic"}}}, "'magic'"),
    ("a budget without epsilon", {"populations": {"a": {"budget": {"delta": 0.1}}}}, "needs 'epsilon'"),
    ("a budget in rho under sequential composition", {"populations": {"a": {"budget": {"rho": 0.5, "delta": 1e-6}}}},
     "needs 'epsilon'"),
    ("a budget in epsilon under zcdp composition",
     {"populations": {"a": {"budget": {"epsilon": 1.0, "delta": 1e-6}, "composition": "zcdp"}}}, "is in ρ"),
    ("a budget in both measures", {"populations": {"a": {"budget": {"epsilon": 1.0, "rho": 0.5}}}},
     "needs 'epsilon'"),
    ("unknown relation", {"populations": {"a": {"relation": "swap"}}}, "'swap'"),
]


@pytest.mark.parametrize("policy, words", [(p, w) for _, p, w in POLICY_MISTAKES], ids=[m[0] for m in POLICY_MISTAKES])
def test_policy_mistakes_are_refused_by_both(folder, policy, words):
    assert schema_errors({"policy": policy})
    path = folder / "policy.yaml"
    path.write_text(yaml.safe_dump({"policy": policy}), encoding="utf-8")
    with pytest.raises(ConfigError, match=words):
        load_policy(path)


@pytest.mark.parametrize("population, words", [
    ({"budget": {"epsilon": 1}, "window": 3}, "window applies only to window composition"),
    ({"budget": {"epsilon": 1}, "composition": "temporal"}, "needs one discount"),
    ({"budget": {"epsilon": 1}, "composition": "temporal", "discount": {"exponential": 0.9, "hyperbolic": 1}},
     "needs one discount"),
    ({"composition": "advanced"}, "no budget"),
    ({"budget": {"epsilon": 1}, "composition": "advanced"}, "delta above 0"),
])
def test_what_only_the_parser_can_check_of_a_population(folder, population, words):
    path = folder / "policy.yaml"
    path.write_text(yaml.safe_dump({"policy": {"populations": {"a": population}}}), encoding="utf-8")
    with pytest.raises(ConfigError, match=words):
        load_policy(path)
    text = "data: people.csv\ncolumns: {quasi_identifiers: [age]}\nmodels: [{k_anonymity: {k: 2}}]\n"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="no 'policy:' section"):
        load_policy(path)


# --------------------------------------------------------------------------- mistakes

def _with(**changes) -> dict:
    return {**BASE, **changes}


def _alphabeta(algorithm) -> dict:
    """BASE for the αβ algorithm, which takes no models."""
    return {**{k: v for k, v in BASE.items() if k != "models"}, "algorithm": algorithm}


MISTAKES = [
    ("unknown top-level key", _with(suppresion_limit=0.1), "unknown key 'suppresion_limit'"),
    ("unknown model", _with(models=[{"k_anonimity": {"k": 2}}]), "unknown model 'k_anonimity'"),
    ("k below 1", _with(models=[{"k_anonymity": {"k": 0}}]), "at least 1"),
    ("unknown model option", _with(models=[{"k_anonymity": {"k": 2, "kk": 3}}]), "unknown key 'kk'"),
    ("a model without its option", _with(models=[{"k_anonymity": {}}]), "needs 'k'"),
    ("no model", _with(models=[]), "models is empty"),
    ("t above 1", _with(models=[{"t_closeness": {"t": 1.2}}]), "at most 1"),
    ("suppression of 1", _with(suppression_limit=1), "below 1"),
    ("shuffle as a word", _with(output={"shuffle": "maybe"}), "true or false"),
    ("unknown output option", _with(output={"suppresed": "star"}), "unknown key 'suppresed'"),
    ("unknown search", _with(algorithm={"name": "fulldomain", "search": "fast"}), "'fast'"),
    ("unknown algorithm", _with(algorithm="fuldomain"), "unknown algorithm 'fuldomain'"),
    ("option of another algorithm", _with(algorithm={"name": "mondrian", "search": "optimal"}), "unknown key 'search'"),
    ("unknown metric", _with(metric="los"), "unknown metric 'los'"),
    ("unknown builder", _with(hierarchies={**BASE["hierarchies"], "age": {"interval": {"widths": [10]}}}),
     "unknown key 'interval'"),
    ("intervals without widths", _with(hierarchies={**BASE["hierarchies"], "age": {"intervals": {}}}),
     "needs 'widths'"),
    ("a two-character mask", _with(hierarchies={**BASE["hierarchies"], "zip": {"masking": {"char": "**"}}}),
     "one character"),
    ("a two-character delimiter", _with(delimiter=";;"), "one character"),
    ("no quasi-identifiers", _with(columns={"sensitive": ["disease"]}), "quasi_identifiers"),
    ("unknown role", _with(columns={**BASE["columns"], "sensitiv": ["disease"]}), "unknown key 'sensitiv'"),
    ("no columns", {k: v for k, v in BASE.items() if k != "columns"}, "'columns' is missing"),
    ("marginals without privacy", _with(marginals={"base": "none"}), "needs 'privacy'"),
    ("unknown marginal model", _with(marginals={"privacy": [{"k_lnk": {"k": 2}}]}), "unknown key 'k_lnk'"),
    ("an unknown base", _with(marginals={"privacy": [{"k_link": {"k": 2}}], "base": "best"}), "'best'"),
    ("a negative marginal level", _with(marginals={"privacy": [{"k_link": {"k": 2}}],
                                                   "publish": [{"attributes": ["age"], "levels": {"age": -1}}]}),
     "at least 0"),
    ("no models without the αβ algorithm", {k: v for k, v in BASE.items() if k != "models"}, "'models' is missing"),
    ("models with the αβ algorithm", _with(algorithm={"name": "alphabeta", "gamma": 0.5, "k": 1}),
     "models does not apply to the αβ algorithm"),
    ("the αβ algorithm by its name alone", _alphabeta("alphabeta"), "needs gamma, d or k"),
    ("both d and k", _alphabeta({"name": "alphabeta", "gamma": 0.5, "k": 1, "d": 0.1}),
     "exactly one of algorithm.d and algorithm.k, not both"),
    ("gamma of 1", _alphabeta({"name": "alphabeta", "gamma": 1, "k": 1}), "below 1"),
    ("a domain that is text", _alphabeta({"name": "alphabeta", "gamma": 0.5, "k": 1, "domains": {"age": "20-29"}}),
     "a list of values, {min, max} or data"),
    ("Ace with l of 0", _with(algorithm={"name": "ace", "l": 0}), "at least 1"),
    ("Ace with a fractional l", _with(algorithm={"name": "ace", "l": 2.5}), "whole number"),
    ("Ace publishing categories as ranges", _with(algorithm={"name": "ace", "l": 2, "categorical": "ranges"}),
     "'ranges'"),
    ("an option of Mondrian given to Ace", _with(algorithm={"name": "ace", "l": 2, "mode": "strict"}),
     "unknown key 'mode'"),
]


@pytest.mark.parametrize("doc, words", [(doc, words) for _, doc, words in MISTAKES], ids=[m[0] for m in MISTAKES])
def test_mistakes_are_refused_by_both(folder, doc, words):
    assert schema_errors(doc)
    with pytest.raises(ConfigError, match=words.replace("(", r"\(")):
        parse(folder, doc)
