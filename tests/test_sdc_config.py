"""The configuration of statistical disclosure control: survey roles, risk models, the methods as
algorithms (with seed and recode), the gate's risk check; each mistake one sentence naming the line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
import yaml

from helpers import TEST_DATA, one_sentence_error
from veil.config import configuration_schema, load_config, load_policy
from veil.config.sdc_section import SDC_ALGORITHMS
from veil.errors import ConfigError

VALIDATOR = jsonschema.Draft202012Validator(configuration_schema())

BASE = {
    "data": "survey.csv",
    "columns": {"quasi_identifiers": ["sex", "age", "race", "marital-status"], "identifying": ["id"],
                "weight": "weight", "strata": ["region"], "household": "household"},
    "hierarchies": {"age": {"intervals": {"widths": [5, 10, 20]}}, "sex": {"flat": {}}, "race": {"flat": {}},
                    "marital-status": {"flat": {}}},
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    shutil.copy(TEST_DATA / "survey.csv", tmp_path / "survey.csv")
    return tmp_path


def write(folder: Path, doc: dict) -> Path:
    path = folder / "job.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def parse(folder: Path, doc: dict):
    assert not list(VALIDATOR.iter_errors(doc)), doc
    return load_config(write(folder, doc))


def test_survey_roles_reach_the_dataset(folder):
    cfg = parse(folder, {**BASE, "models": [{"k_anonymity": {"k": 2}}]})
    assert (cfg.weight, cfg.strata, cfg.household) == ("weight", ("region",), "household")
    ds = cfg.dataset()
    assert (ds.weight, ds.strata, ds.household) == ("weight", ["region"], "household")
    assert ds.sampling_weights is not None and len(ds.sampling_weights) == 300
    assert cfg.to_dict()["columns"]["weight"] == "weight"


@pytest.mark.parametrize("model", [{"average_risk": {"risk": 0.05, "household": True}},
                                   {"records_at_risk": {"risk": 0.2, "share": 0.05}},
                                   {"population_uniqueness": {"share": 0.1, "population_size": 100000,
                                                              "estimator": "pitman"}}])
def test_the_risk_models_are_models(folder, model):
    cfg = parse(folder, {**BASE, "models": [model]})
    built = cfg.models()[0]
    assert built.key or built.name


@pytest.mark.parametrize("algorithm", [
    {"name": "localsuppression", "k": 3, "importance": ["sex", "age"], "matching": "category", "method": "greedy"},
    {"name": "localsuppression", "risk": 0.1},
    {"name": "pram", "columns": ["race"], "alpha": 0.2, "by": ["region"], "seed": 3},
    {"name": "pram", "columns": ["sex"], "matrix": {"sex": [[0.8, 0.2], [0.2, 0.8]]}},
    {"name": "swap", "columns": ["income", "hours"], "p": 5, "seed": 1},
    {"name": "noise", "columns": ["income"], "amount": 0.5, "kind": "correlated"},
    {"name": "topcoding", "columns": {"income": {"top": 60000}, "hours": {"bottom": 10, "top": 60}}},
])
def test_every_method_needs_no_models_without_a_recoding(folder, algorithm):
    cfg = parse(folder, {**BASE, "algorithm": algorithm})
    assert cfg.algorithm.name in SDC_ALGORITHMS and cfg.model_specs == ()
    assert cfg.algorithm.options.get("seed") == algorithm.get("seed")


def test_local_suppression_takes_k_from_the_k_anonymity_model(folder):
    cfg = parse(folder, {**BASE, "models": [{"k_anonymity": {"k": 4}}],
                         "algorithm": {"name": "localsuppression", "recode": "fulldomain"}})
    assert cfg.algorithm.options["k"] == 4 and cfg.algorithm.options["recode"] == "fulldomain"


MISTAKES = [
    ({"algorithm": {"name": "localsuppression", "k": 3, "importance": ["sex", "education"]}},
     ["line", "importance", "'education'", "not a quasi-identifier"]),
    ({"algorithm": {"name": "localsuppression", "k": 3, "importance": ["sexe"]}}, ["line", "'sexe'"]),
    ({"algorithm": {"name": "localsuppression"}}, ["line", "needs k"]),
    ({"algorithm": {"name": "localsuppression", "k": 3, "risk": 0.1}}, ["line", "k or risk, not both"]),
    ({"algorithm": {"name": "pram", "columns": ["sex"], "matrix": {"sex": [[0.8, 0.3], [0.2, 0.8]]}}},
     ["line", "not stochastic", "row 1"]),
    ({"algorithm": {"name": "pram", "columns": ["sex"], "matrix": {"sex": [[0.8, 0.2]]}}}, ["line", "square"]),
    ({"algorithm": {"name": "pram", "columns": ["sex"], "matrix": {"sex": [[1.5, -0.5], [0, 1]]}}}, ["line"]),
    ({"algorithm": {"name": "pram", "columns": ["sex", "race"], "matrix": {"sex": [[1, 0], [0, 1]]}}},
     ["line", "no matrix for 'race'"]),
    ({"algorithm": {"name": "pram", "columns": ["sex"], "alpha": 0.2, "matrix": {"sex": [[1, 0], [0, 1]]}}},
     ["line", "exactly one"]),
    ({"algorithm": {"name": "swap", "columns": ["weight"], "p": 5}}, ["line", "'weight'", "sampling design"]),
    ({"algorithm": {"name": "noise", "columns": ["income"], "amount": 0.1, "recode": "fulldomain"}},
     ["line", "models"]),
    ({"algorithm": {"name": "topcoding", "columns": {"income": {}}}}, ["line", "top or bottom"]),
    ({"models": [{"average_risk": {"risk": 0.01}}], "algorithm": {"name": "pram", "columns": ["race"], "alpha": 0.2}},
     ["line", "recode: fulldomain"]),
    ({"models": [{"k_anonymity": {"k": 3}}], "algorithm": {"name": "localsuppression", "k": 5}},
     ["line", "recode: fulldomain"]),
    ({"models": [{"average_risk": {"risk": 0.1, "household": True}}],
      "columns": {**BASE["columns"], "household": None}}, ["line", "household"]),
    ({"columns": {**BASE["columns"], "weight": "age"}, "models": [{"k_anonymity": {"k": 2}}]},
     ["line", "'age'", "one role"]),
]


@pytest.mark.parametrize("change, words", MISTAKES)
def test_mistakes_are_one_sentence_naming_the_line(folder, change, words):
    doc = {**BASE, **change}
    path = write(folder, doc)
    one_sentence_error(ConfigError, lambda: load_config(path), *words)


def test_recoding_needs_a_hierarchy_per_quasi_identifier(folder):
    doc = {**BASE, "hierarchies": {"age": {"intervals": {"widths": [10]}}}, "models": [{"k_anonymity": {"k": 2}}],
           "algorithm": {"name": "localsuppression", "recode": "fulldomain"}}
    one_sentence_error(ConfigError, lambda: load_config(write(folder, doc)), "line", "hierarchy", "'sex'")


def test_a_population_below_the_sample_names_the_model_line(folder):
    doc = {**BASE, "models": [{"population_uniqueness": {"share": 0.1, "population_size": 100}}]}
    cfg = load_config(write(folder, doc))
    msg = one_sentence_error(ConfigError, lambda: cfg.check_against(cfg.dataset()), "line", "population size", "300")
    assert "job.yaml" in msg


def test_the_risk_check_of_the_policy(folder):
    path = write(folder, {"policy": {"risk": {"max_individual": 0.1, "max_share": 0.02, "max_rate": 0.01}}})
    policy = load_policy(path)
    assert policy.single["risk"] == {"max_individual": 0.1, "max_share": 0.02, "max_rate": 0.01, "household": False}
    from veil.ledger.checks import RiskCheck
    from veil.ledger.policy import Policy

    check = next(c for c in Policy.from_spec(policy).checks if c.name == "risk")
    assert isinstance(check, RiskCheck) and check.max_rate == 0.01
    bad = write(folder, {"policy": {"risk": {"max_individual": 2}}})
    one_sentence_error(ConfigError, lambda: load_policy(bad), "line", "max_individual")


def test_every_new_key_has_a_meaning_and_an_example():
    schema = json.loads(json.dumps(configuration_schema()))
    algorithms = schema["properties"]["algorithm"]["anyOf"][1]["oneOf"]
    named = {a["properties"]["name"]["const"]: a for a in algorithms}
    for name in SDC_ALGORITHMS:
        for key, option in named[name]["properties"].items():
            if key != "name":
                assert option.get("description") and option.get("examples"), (name, key)
    roles = schema["properties"]["columns"]["properties"]
    for role in ("weight", "strata", "household"):
        assert roles[role].get("description") and roles[role].get("examples"), role
