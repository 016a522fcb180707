"""The αβ algorithm from the command line: publishing through a configuration, estimating counting
queries from a view, its parameters and its experiment; bad input is one sentence and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from veil.cli import app

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "adult-alphabeta.yaml"
runner = CliRunner()

PEOPLE = "sex,age,city,salary\n" + "".join(
    f"{'FM'[i % 2]},{20 + i % 10},{('Oslo', 'Rome', 'Lima')[i % 3]},{i % 5}\n" for i in range(40))


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def one_sentence(result, *words) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert result.stderr.startswith("error: ") and len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr, result.stderr
    return result.stderr


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "people.csv").write_text(PEOPLE, encoding="utf-8")
    (tmp_path / "sex.csv").write_text("F;*\nM;*\n", encoding="utf-8")
    return tmp_path


def config(folder: Path, algorithm: dict, **sections) -> Path:
    doc = {"data": "people.csv", "columns": {"quasi_identifiers": ["sex", "age"], "sensitive": ["city"]},
           "hierarchies": {"sex": {"file": "sex.csv"}}, "algorithm": {"name": "alphabeta", **algorithm}, **sections}
    path = folder / "job.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


PUBLIC = {"gamma": 0.4, "d": 0.05, "domains": {"age": {"min": 20, "max": 29}, "city": ["Oslo", "Rome", "Lima"]},
          "seed": 3}


@pytest.fixture
def published(folder: Path) -> Path:
    result = invoke("anonymize", "--config", config(folder, PUBLIC), "--out", folder / "view.csv",
                    "--manifest", folder / "view.json")
    assert result.exit_code == 0, result.output
    return folder


def test_publishing_writes_the_view_with_its_manifest(published):
    manifest = json.loads((published / "view.json").read_text())
    assert manifest["algorithm"] == "alphabeta" and manifest["release"]["file"] == "view.csv"
    assert manifest["domain"]["size"] == 2 * 10 * 3
    assert [a["source"] for a in manifest["domain"]["attributes"]] == ["hierarchy", "range", "values"]
    assert manifest["privacy"]["d"] == 0.05 and manifest["parameters"]["gamma_exact"] == "2/5"
    assert manifest["fit_for_release"] is False and "seeded" in manifest["not_fit_because"][0]
    assert manifest["config"]["algorithm"]["name"] == "alphabeta"
    header = (published / "view.csv").read_text().splitlines()[0]
    assert header == "sex,age,city"                       # salary has no role: not published


def test_the_bundled_example_publishes_adult_fit_for_release(tmp_path):
    result = invoke("anonymize", "--config", EXAMPLE, "--out", tmp_path / "v.csv", "--manifest", tmp_path / "v.json")
    assert result.exit_code == 0, result.output
    assert "fit for release" in result.stdout and "19,502 distinct tuples" in result.stdout
    manifest = json.loads((tmp_path / "v.json").read_text())
    assert manifest["fit_for_release"] is True and manifest["domain"]["size"] == 761_169_920
    assert "os.urandom" in manifest["randomness"]


def test_estimates_from_a_published_view(published):
    queries = published / "q.yaml"
    queries.write_text("- {sex: F}\n- name: young in Oslo\n  where: {age: {max: 24}, city: Oslo}\n", encoding="utf-8")
    result = invoke("alphabeta", "estimate", published / "view.csv", "--manifest", published / "view.json",
                    "--queries", queries, "--json", "--out", published / "answers.csv")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert [a["query"] for a in doc["answers"]] == ["sex = F", "young in Oslo"]
    assert doc["answers"][0]["n_D"] == 30 and doc["answers"][1]["n_D"] == 2 * 5
    assert all(a["standard_error"] > 0 for a in doc["answers"])
    lines = (published / "answers.csv").read_text().splitlines()
    assert lines[0] == "query,estimate,standard_error,n_V,n_D" and len(lines) == 3
    table = invoke("alphabeta", "estimate", published / "view.csv", "--manifest", published / "view.json",
                   "--queries", queries)
    assert table.exit_code == 0 and "young in Oslo" in table.stdout and "not fit for release" in table.stdout


@pytest.mark.parametrize("query, words", [
    ("- {town: Oslo}", ["no column 'town'"]),
    ("- {city: Olso}", ["city = 'Olso'", "did you mean 'Oslo'"]),
    ("- {age: 35}", ["the integers 20 to 29"]),
    ("- {city: {min: 1}}", ["not numbers"]),
    ("sex: F", ["non-empty list"]),
])
def test_a_bad_query_is_one_sentence(published, query, words):
    (published / "q.yaml").write_text(query + "\n", encoding="utf-8")
    result = invoke("alphabeta", "estimate", published / "view.csv", "--manifest", published / "view.json",
                    "--queries", published / "q.yaml", "--out", published / "answers.csv")
    one_sentence(result, *words)
    assert not (published / "answers.csv").exists()


def test_a_view_and_a_manifest_that_were_not_published_together_are_refused(published, tmp_path):
    (published / "q.yaml").write_text("- {sex: F}\n", encoding="utf-8")
    text = (published / "view.csv").read_text()
    (published / "view.csv").write_text(text.replace("Oslo", "Lima", 1))
    result = invoke("alphabeta", "estimate", published / "view.csv", "--manifest", published / "view.json",
                    "--queries", published / "q.yaml")
    one_sentence(result, "does not match its manifest")
    result = invoke("alphabeta", "estimate", published / "view.csv", "--manifest", published / "view.json",
                    "--queries", published / "q.yaml", "--out", published / "q.yaml")
    one_sentence(result, "input of this run")


@pytest.mark.parametrize("algorithm, sections, words", [
    ({**PUBLIC, "d": 0.5}, {}, ["algorithm.d = 0.5 is not below algorithm.gamma = 0.4"]),
    ({"gamma": 0.4, "d": 0.05, "domains": {"age": {"min": 20, "max": 29}}}, {},
     ["column 'city' has no public domain"]),
    ({"gamma": 0.4, "d": 0.05, "domains": {"city": ["Oslo", "Rome", "Lima"]}},
     {"hierarchies": {"sex": {"file": "sex.csv"}, "age": {"intervals": {"widths": [5]}}}},
     ["hierarchy of 'age' is built from the data's values"]),
    ({**PUBLIC, "domains": {**PUBLIC["domains"], "salary": ["1"]}}, {}, ["'salary'", "not published"]),
    ({**PUBLIC, "domains": {"age": {"min": 30, "max": 20}, "city": ["Oslo"]}}, {}, ["min 30 above max 20"]),
    ({"gamma": 0.001, "k": 50, "domains": PUBLIC["domains"]}, {}, ["not below gamma", "raise gamma or lower k"]),
    ({**PUBLIC, "domains": {"age": {"min": 0, "max": (1 << 24) - 1}, "city": {"min": 0, "max": (1 << 24) - 1},
                            "salary": {"min": 0, "max": (1 << 24) - 1}}},
     {"columns": {"quasi_identifiers": ["sex", "age", "salary"], "sensitive": ["city"]}},
     ["more than 2^63 − 1", "publish fewer attributes"]),
])
def test_a_bad_configuration_is_one_sentence_and_writes_nothing(folder, algorithm, sections, words):
    path = config(folder, algorithm, **sections)
    result = invoke("anonymize", "--config", path, "--out", folder / "view.csv", "--manifest", folder / "view.json")
    one_sentence(result, *words)
    assert not (folder / "view.csv").exists() and not (folder / "view.json").exists()


def test_a_view_needs_its_manifest_and_data_domains_are_labelled(folder):
    result = invoke("anonymize", "--config", config(folder, PUBLIC), "--out", folder / "view.csv")
    one_sentence(result, "give --manifest")
    assert not (folder / "view.csv").exists()
    from_data = {"gamma": 0.4, "d": 0.05, "data_domains": True}
    result = invoke("anonymize", "--config", config(folder, from_data), "--out", folder / "view.csv",
                    "--manifest", folder / "view.json", "--json")
    assert result.exit_code == 0, result.output
    manifest = json.loads(result.stdout)
    assert manifest["fit_for_release"] is False
    assert any("age, city was read from the data" in reason for reason in manifest["not_fit_because"])


def test_parameters_for_a_prior_and_for_a_target_error():
    result = invoke("alphabeta", "parameters", "--m", 1_028_608_000, "--n", 19_502, "--k", 1, "--gamma", 0.5,
                    "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["conditions"] == {"beta_share": True, "keep_probability": True}
    assert doc["usefulness_bound"] == pytest.approx(0.5, abs=0.01) and doc["note"] is None
    result = invoke("alphabeta", "parameters", "--m", 1_028_608_000, "--n", 19_502, "--k", 1, "--rho", 3,
                    "--epsilon", 0.1, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["usefulness_bound"] <= 0.1
    text = invoke("alphabeta", "parameters", "--m", 1000, "--d", 0.01, "--gamma", 0.5)
    assert text.exit_code == 0 and "α = " in text.stdout and "exactly" in text.stdout


@pytest.mark.parametrize("args, words", [
    (["--m", 1000, "--d", 0.6, "--gamma", 0.5], ["d = 0.6 is not below gamma = 0.5"]),
    (["--m", 1000, "--d", 0.1, "--gamma", 1.5], ["strictly between 0 and 1"]),
    (["--m", 1000, "--d", 0.1], ["give the posterior bound with --gamma, or the error wanted with --rho"]),
    (["--m", 1000, "--k", 1, "--gamma", 0.5], ["needs the instance's size"]),
    (["--m", 1000, "--k", 1, "--n", 2000, "--gamma", 0.5], ["--n between 1 and --m"]),
    (["--m", 1000, "--d", 0.01, "--rho", 3, "--epsilon", 0.1], ["need --n"]),
])
def test_bad_parameters_are_one_sentence(args, words):
    one_sentence(invoke("alphabeta", "parameters", *args), *words)


def test_the_experiment_writes_its_files(tmp_path):
    result = invoke("experiment", "alphabeta", "--out", tmp_path / "out", "--gamma", "0.4,0.8", "--queries", 50,
                    "--views", 1)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["alphabeta.csv", "alphabeta.md", "alphabeta.png"]
    one_sentence(invoke("experiment", "alphabeta", "--out", tmp_path / "x", "--gamma", "0.4,1.2"),
                 "strictly between 0 and 1")
    assert not (tmp_path / "x").exists()

