"""``veil synth DATA --config C --out DIR``: the output set (synthetic table, sealed manifest,
report) appears whole; bad input is one sentence, exit status 2, nothing written and nothing
charged; a seeded run is reproducible and marked not fit for release; the manifest holds nothing
read from the private table; ``veil publish`` takes what ``veil synth`` wrote and charges it.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest
import yaml
from helpers import ADULT_DIR, refused, veil

ROWS = 60


def people() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    sex = rng.choice(["F", "M"], ROWS)
    age = rng.integers(18, 80, ROWS)
    race = np.where(age > 50, rng.choice(["a", "b"], ROWS), rng.choice(["b", "c"], ROWS))
    return pd.DataFrame({"sex": sex, "age": age, "race": race, "name": [f"p{i}" for i in range(ROWS)]})


BASE = {"data": "people.csv",
        "synth": {"mechanism": "mst", "epsilon": 1.0, "delta": 1e-9,
                  "domain": {"sex": {"categories": ["F", "M"]},
                             "age": {"bins": {"edges": [18, 30, 45, 60, 80], "integer": True}},
                             "race": {"hierarchy": "race.csv"}},
                  "evaluation": {"target": "race"}}}


@pytest.fixture
def folder(tmp_path):
    people().to_csv(tmp_path / "people.csv", index=False)
    (tmp_path / "race.csv").write_text("a;*\nb;*\nc;*\n")
    return tmp_path


def config(folder, change=None, name="synth.yaml"):
    doc = json.loads(json.dumps(BASE))
    if change is not None:
        change(doc)
    path = folder / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def synth(folder, *args, change=None):
    return veil("synth", "--config", config(folder, change), "--out", folder / "out", *args)


def _set(**values):
    return lambda doc: doc["synth"].update(values)


def _domain(column, value):
    return lambda doc: doc["synth"]["domain"].__setitem__(column, value)


def _drop(key):
    return lambda doc: doc["synth"].pop(key)


# Bad input: (change to the configuration, extra arguments, words of the one sentence).
MISTAKES = {
    "a domain that does not cover a value": (_domain("sex", {"categories": ["F"]}), (), ["'sex'", "outside"]),
    "bins that do not cover a value": (_domain("age", {"bins": {"edges": [30, 45, 80]}}), (), ["'age'", "bins"]),
    "a workload naming an unknown column": (_set(mechanism="aim", workload=[["age", "nope"]]), (),
                                            ["'nope'", "not a column"]),
    "a workload naming a column outside the domain": (_set(mechanism="aim", workload=[["age", "name"]]), (),
                                                      ["'name'", "synth.domain"]),
    "epsilon 0": (_set(epsilon=0), (), ["epsilon", "above 0"]),
    "a negative epsilon": (_set(epsilon=-1.0), (), ["epsilon", "above 0"]),
    "delta 1": (_set(delta=1.0), (), ["delta", "below 1"]),
    "delta 0": (_set(delta=0), (), ["delta", "above 0"]),
    "epsilon and rho": (_set(rho=0.1), (), ["one way"]),
    "epsilon without delta": (_drop("delta"), (), ["one way"]),
    "no budget": (lambda doc: (doc["synth"].pop("epsilon"), doc["synth"].pop("delta")), (), ["one way"]),
    "a model-size limit too small for any candidate": (_set(mechanism="aim", max_model_cells=2), (),
                                                       ["max_model_cells", "smaller"]),
    "a missing data file": (lambda doc: doc.update(data="nowhere.csv"), (), ["nowhere.csv", "does not exist"]),
    "a missing hierarchy file": (_domain("race", {"hierarchy": "nowhere.csv"}), (), ["nowhere.csv"]),
    "a domain read from the data without the opt-in": (_domain("race", "data"), (), ["from_data"]),
    "a missing holdout": (None, ("--holdout", "nowhere.csv"), ["nowhere.csv", "does not exist"]),
    "a table name of another format": (None, ("--table", "synthetic.txt"), [".parquet"]),
    "a workload given to mst": (_set(workload=[["age", "sex"]]), (), ["workload", "aim"]),
    "an unknown mechanism": (_set(mechanism="privbayes"), (), ["mechanism"]),
    "an unknown key": (_set(epsilom=1.0), (), ["epsilom", "epsilon"]),
    "a target outside the domain": (_set(evaluation={"target": "name"}), (), ["'name'", "synth.domain"]),
    "one shadow run": (_set(evaluation={"shadow_runs": 1}), (), ["shadow_runs", "at least 2"]),
}


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    """A ledger with a population's budget, which no refused run may change."""
    where = tmp_path_factory.mktemp("ledger")
    policy = where / "policy.yaml"
    policy.write_text("policy:\n  populations:\n    survey:\n      budget: {epsilon: 1.0, delta: 1.0e-6}\n")
    assert veil("ledger", "init", "--ledger", where / "ledger.db", "--policy", policy).exit_code == 0
    return where / "ledger.db"


@pytest.mark.parametrize("mistake", MISTAKES)
def test_bad_input_is_one_sentence_and_writes_and_charges_nothing(folder, ledger, mistake):
    change, args, words = MISTAKES[mistake]
    before = ledger.read_bytes()
    inputs = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    refused(synth(folder, *args, change=change), *words)
    assert not (folder / "out").exists()
    assert ledger.read_bytes() == before
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.name in inputs} == inputs
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".veil-")]


def test_the_shadow_model_attack_runs_as_the_option_and_the_config_say(folder):
    people().to_csv(folder / "holdout.csv", index=False)
    result = synth(folder, "--seed", "2", "--holdout", folder / "holdout.csv", "--shadow-runs", "2",
                   change=lambda doc: doc["synth"]["evaluation"].update(shadow_trials=2))
    assert result.exit_code == 0, result.output
    report = (folder / "out" / "report.html").read_text()
    assert "shadow-model attack advantage" in report and "2 + 2 runs" in report
    skipped = synth(folder, "--seed", "2", "--holdout", folder / "holdout.csv", "--shadow-runs", "0")
    assert skipped.exit_code == 0, skipped.output
    assert "the number of shadow runs was set to 0" in (folder / "out" / "report.html").read_text()


def test_an_existing_file_as_out_is_refused(folder):
    (folder / "out").write_text("mine")
    refused(synth(folder), "is a file")
    assert (folder / "out").read_text() == "mine"


def test_a_seeded_run_is_reproducible_and_not_fit_for_release(folder):
    first = synth(folder, "--seed", "3", "--no-evaluate")
    assert first.exit_code == 0, first.output
    assert "warning: not fit for release" in first.stderr
    table = (folder / "out" / "synthetic.csv").read_bytes()
    manifest = json.loads((folder / "out" / "manifest.json").read_text())
    assert manifest["randomness"] == "seeded: not fit for release"
    assert manifest["fit_for_release"] is False and manifest["not_fit_because"]
    assert "Not fit for release" in (folder / "out" / "report.html").read_text()
    again = synth(folder, "--seed", "3", "--no-evaluate")
    assert again.exit_code == 0, again.output
    assert (folder / "out" / "synthetic.csv").read_bytes() == table
    # veil publish refuses it as it refuses every release not fit for release, and charges nothing
    policy = folder / "policy.yaml"
    policy.write_text("policy:\n  populations:\n    survey:\n      budget: {epsilon: 2.0, delta: 1.0e-6}\n")
    assert veil("ledger", "init", "--ledger", folder / "l.db", "--policy", policy).exit_code == 0
    result = veil("publish", folder / "out" / "manifest.json", "--population", "survey", "--data",
                  folder / "people.csv", "--ledger", folder / "l.db")
    assert result.exit_code == 1 and "not fit for release" in result.output, result.output
    status = json.loads(veil("ledger", "status", "--ledger", folder / "l.db", "--json").stdout)
    assert status["populations"][0]["budget"]["spent"]["epsilon"] == 0 and not status["populations"][0]["releases"]


def test_the_output_set_and_what_its_manifest_may_say(folder):
    result = synth(folder, "--seed", "1", change=lambda doc: doc["synth"].update(
        from_data=True, domain={**doc["synth"]["domain"], "race": "data"}))
    assert result.exit_code == 0, result.output
    out = folder / "out"
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "report.html", "synthetic.csv"]
    frame = pd.read_csv(out / "synthetic.csv")
    assert list(frame.columns) == ["sex", "age", "race"]
    assert set(frame["sex"]) <= {"F", "M"} and frame["age"].between(18, 80).all()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["release"]["file"] == "synthetic.csv"
    assert manifest["release"]["sha256"] == hashlib.sha256((out / "synthetic.csv").read_bytes()).hexdigest()
    assert manifest["rows"] == len(frame)
    assert set(manifest) == {"veil", "created", "algorithm", "kind", "label", "mechanism", "epsilon", "delta",
                             "budget", "domain", "measurements", "selections", "compression", "randomness", "rows",
                             "synthetic", "fit_for_release", "not_fit_because", "table", "charge", "release", "seal"}
    # the column whose domain was read from the data is named, its values are not
    race = next(d for d in manifest["domain"] if d["name"] == "race")
    assert race == {"name": "race", "source": "data", "kind": "categorical"} or set(race) <= {"name", "source",
                                                                                                "kind"}
    assert any("read from the private table" in r for r in manifest["not_fit_because"])
    text = (out / "manifest.json").read_text()
    assert "p1" not in text and '"b"' not in text and "dataset" not in text
    assert all(set(m) == {"clique", "sigma", "rho", "round", "purpose"} for m in manifest["measurements"])
    # MST's merged rare values are named by their codes in the public domain (chosen from noisy counts)
    assert all(set(c) == {"column", "merged_codes"} for c in manifest["compression"])
    report = (out / "report.html").read_text()
    for words in ("not differentially private", "must not be published", "for your decision"):
        assert words in " ".join(report.split()), words


def test_parquet_by_the_table_name(folder):
    result = synth(folder, "--seed", "2", "--no-evaluate", "--table", "synthetic.parquet")
    assert result.exit_code == 0, result.output
    frame = pd.read_parquet(folder / "out" / "synthetic.parquet")
    assert list(frame.columns) == ["sex", "age", "race"]
    assert json.loads((folder / "out" / "manifest.json").read_text())["synthetic"]["format"] == "parquet"


def test_adult_synthesized_securely_and_published_with_its_charge(tmp_path):
    """End to end on a small Adult sample: secure randomness, fit for release, charged by veil publish."""
    adult = pd.read_csv(ADULT_DIR / "adult.csv", sep=";", dtype=str).head(1500)
    adult[["sex", "age", "race", "salary-class"]].to_csv(tmp_path / "adult.csv", index=False)
    conf = tmp_path / "adult.yaml"
    conf.write_text(yaml.safe_dump({"data": "adult.csv", "synth": {
        "rho": 0.5, "domain": {"sex": {"hierarchy": str(ADULT_DIR / "adult_hierarchy_sex.csv")},
                               "age": {"bins": {"edges": [17, 25, 35, 45, 55, 65, 91], "integer": True}},
                               "race": {"hierarchy": str(ADULT_DIR / "adult_hierarchy_race.csv")},
                               "salary-class": {"categories": ["<=50K", ">50K"]}},
        "evaluation": {"target": "salary-class", "quasi_identifiers": ["sex", "age", "race"]}}}))
    made = veil("synth", "--config", conf, "--out", tmp_path / "out")
    assert made.exit_code == 0, made.output
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["fit_for_release"] is True and manifest["randomness"] == "secure"
    assert manifest["rho"] == "0.5" and "epsilon" not in manifest
    policy = tmp_path / "policy.yaml"
    policy.write_text("policy:\n  populations:\n    adult:\n      composition: zcdp\n"
                      "      budget: {rho: 1.0, delta: 1.0e-6}\n")
    ledger = tmp_path / "ledger.db"
    assert veil("ledger", "init", "--ledger", ledger, "--policy", policy).exit_code == 0
    published = veil("publish", tmp_path / "out" / "manifest.json", "--population", "adult",
                     "--data", tmp_path / "adult.csv", "--ledger", ledger)
    assert published.exit_code == 0, published.output
    status = json.loads(veil("ledger", "status", "--ledger", ledger, "--json").stdout)
    adult_pop = next(p for p in status["populations"] if p["name"] == "adult")
    assert adult_pop["budget"]["rho"]["spent"] == pytest.approx(0.5)
    assert [r["kind"] for r in adult_pop["releases"]] == ["synthetic"]


@pytest.mark.parametrize("budget", [{"epsilon": 1.0, "delta": 1e-9, "rho": 0.1}, {"epsilon": 1.0}, {},
                                    {"rho": 0.1, "delta": 1e-9}, {"delta": 1e-9}])
def test_the_budget_one_way_is_the_rule_of_the_json_schema_and_of_the_parser(folder, budget):
    import jsonschema

    from veil.config.schema import configuration_schema
    from veil.config.synth_file import load_synth
    from veil.errors import ConfigError

    def change(doc):
        for key in ("epsilon", "delta"):
            doc["synth"].pop(key)
        doc["synth"].update(budget)

    path = config(folder, change)
    assert list(jsonschema.Draft202012Validator(configuration_schema()).iter_errors(yaml.safe_load(path.read_text())))
    with pytest.raises(ConfigError, match="one way"):
        load_synth(path)
    ok = config(folder, lambda doc: (doc["synth"].pop("epsilon"), doc["synth"].pop("delta"),
                                     doc["synth"].update(rho=0.1)), name="ok.yaml")
    assert not list(jsonschema.Draft202012Validator(configuration_schema()).iter_errors(yaml.safe_load(ok.read_text())))
    assert load_synth(ok).spec.rho == 0.1
