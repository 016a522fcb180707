"""``veil audit``, ``veil attack minimality`` and ``veil experiment transparency`` on the command
line: what they print and write, and bad input as one sentence with exit status 2 and no output.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from veil.cli import app

runner = CliRunner()
ADULT = Path(__file__).resolve().parents[1] / "src" / "veil" / "resources" / "adult"
QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]


def invoke(*args, input=None):
    return runner.invoke(app, [str(a) for a in args], input=input)


def assert_one_sentence(result, *words) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert result.stderr.startswith("error: ") and len(lines) == 1, result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


@pytest.fixture
def five(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "x.csv"
    data.write_text("name,x,g\na,3,u\nb,8,u\nc,1,v\nd,5,v\ne,10,v\n", encoding="utf-8")
    queries = tmp_path / "q.txt"
    queries.write_text("# the seed's example\nmax\n\nmax rows 0, 1, 2, 3\n", encoding="utf-8")
    return data, queries


# --------------------------------------------------------------------------- veil audit

def test_audit_prints_decisions_and_the_attack(five):
    data, queries = five
    result = invoke("audit", data, "--column", "x", "--queries", queries, "--auditor", "value-based", "--attack",
                    "--id", "name")
    assert result.exit_code == 0, result.output
    assert "answered" in result.stdout and "denied" in result.stdout
    assert "e (record 4)" in result.stdout and "= 10" in result.stdout


def test_audit_json_and_log(five, tmp_path):
    data, queries = five
    log = tmp_path / "log.json"
    result = invoke("audit", data, "--column", "x", "--queries", queries, "--json", "--log", log, "--attack")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert json.loads(log.read_text(encoding="utf-8")) == report
    assert [d["decision"] for d in report["decisions"]] == ["answered", "denied"]
    assert report["decisions"][0]["answer"] == 10 and report["auditor"] == "simulatable"
    assert report["attack"] == {"denials": 1, "uninformative": 1, "inferences": []}


def test_audit_interactive(five):
    data, _ = five
    result = invoke("audit", data, "--column", "x", "--interactive",
                    input="max\nmax where nope = 1\nmax rows 0, 1, 2, 3\nquit\nsum\n")
    assert result.exit_code == 0, result.output
    assert "1. = 10" in result.stdout and "2. denied" in result.stdout
    assert "'nope'" in result.stderr  # a query that cannot be read is said and skipped
    assert "3." not in result.stdout  # 'quit' ends


@pytest.mark.parametrize("args, words", [
    (["--column", "g"], ["holds text", "numeric column"]),
    (["--column", "y"], ["'y' does not exist"]),
    (["--column", "x", "--auditor", "naive"], ["no auditor 'naive'"]),
])
def test_audit_bad_input(five, tmp_path, args, words):
    data, queries = five
    log = tmp_path / "log.json"
    assert_one_sentence(invoke("audit", data, "--queries", queries, "--log", log, *args), *words)
    assert not log.exists()


@pytest.mark.parametrize("text, words", [
    ("max\nmax where g = w\n", ["line 2 of", "selects no record"]),
    ("max where nmae = a\n", ["line 1 of", "'nmae'", "did you mean 'name'"]),
    ("# first a comment\n\nmax\navg\n", ["line 4 of", "max, min or sum"]),
])
def test_audit_a_bad_query_stops_before_any_answer(five, tmp_path, text, words):
    data, _ = five
    queries, log = tmp_path / "bad.txt", tmp_path / "log.json"
    queries.write_text(text, encoding="utf-8")
    result = invoke("audit", data, "--column", "x", "--queries", queries, "--log", log)
    assert_one_sentence(result, *words)
    assert result.stdout == "" and not log.exists()


def test_audit_needs_one_source_of_queries(five):
    data, queries = five
    assert_one_sentence(invoke("audit", data, "--column", "x"), "--queries FILE", "--interactive")
    assert_one_sentence(invoke("audit", data, "--column", "x", "--queries", queries, "--interactive"), "one of")


# --------------------------------------------------------------------------- veil attack minimality

def _config(tmp_path: Path, algorithm: str, extra: str = "") -> Path:
    hierarchies = "\n".join(f"  {q}: {{file: {ADULT / f'adult_hierarchy_{q}.csv'}}}" for q in QIS)
    path = tmp_path / f"{algorithm.split(',')[0].split(':')[-1].strip(' {')}.yaml"
    path.write_text(f"data: {tmp_path / 'sample.csv'}\ndelimiter: ';'\ncolumns:\n  quasi_identifiers: [{', '.join(QIS)}]\n"
                    f"  sensitive: [occupation]\nhierarchies:\n{hierarchies}\nmodels:\n"
                    f"  - distinct_l_diversity: {{l: 3, sensitive: occupation}}\n{extra}algorithm: {algorithm}\n",
                    encoding="utf-8")
    return path


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    frame = pd.read_csv(ADULT / "adult.csv", sep=";", dtype=str).sample(400, random_state=3)
    frame.to_csv(tmp_path / "sample.csv", sep=";", index=False)
    frame[QIS].assign(person=[f"p{i}" for i in range(len(frame))]).to_csv(tmp_path / "people.csv", sep=";",
                                                                          index=False)
    return tmp_path


@pytest.mark.parametrize("algorithm", ["fulldomain", "{name: ace, l: 3, rng: 1}", "mondrian"])
def test_attack_minimality_on_each_kind_of_release(sample, algorithm):
    config = _config(sample, algorithm)
    release, manifest = sample / "release.csv", sample / "manifest.json"
    made = invoke("anonymize", "--config", config, "--out", release, "--manifest", manifest)
    assert made.exit_code == 0, made.output
    per_person = sample / "people-posteriors.csv"
    result = invoke("attack", "minimality", release, "--config", config, "--population", sample / "people.csv",
                    "--id", "person", "--out", per_person, "--json")
    summary = json.loads(result.stdout)
    assert result.exit_code == (1 if summary.get("exceeding", summary.get("exceeding_at_least")) else 0)
    assert summary["people"] == 400 and summary["threshold"] == pytest.approx(1 / 3)
    table = pd.read_csv(per_person)
    assert table["person"].tolist()[:2] == ["p0", "p1"] and len(table) == 400
    if "ace" in algorithm:
        assert summary["count_exact"] and summary["exceeding"] == 0
    text = invoke("attack", "minimality", release, "--config", config, "--population", sample / "people.csv")
    assert "Minimality attack" in text.stdout and "posterior exceeds 0.3333" in text.stdout


def test_attack_minimality_bad_input(sample):
    config = _config(sample, "fulldomain")
    release = sample / "release.csv"
    assert invoke("anonymize", "--config", config, "--out", release, "--manifest", sample / "m.json").exit_code == 0
    people = sample / "people.csv"
    wrong = sample / "wrong.csv"
    pd.read_csv(release, sep=";", dtype=str).drop(columns=["race"]).to_csv(wrong, sep=";", index=False)
    out = sample / "out.csv"
    assert_one_sentence(invoke("attack", "minimality", wrong, "--config", config, "--population", people,
                               "--out", out), "no column 'race'", "quasi-identifier")
    assert not out.exists()
    for option, words in ((["--sensitive", "age"], ("'age'", "does not protect", "'occupation'")),
                          (["--threshold", "1"], ("strictly between 0 and 1",)),
                          (["--values", "Astronaut"], ("no value 'Astronaut'",))):
        assert_one_sentence(invoke("attack", "minimality", release, "--config", config, "--population", people,
                                   "--out", out, *option), *words)
        assert not out.exists()
    suppressing = _config(sample, "fulldomain", "suppression_limit: 0.02\n")
    assert_one_sentence(invoke("attack", "minimality", release, "--config", suppressing, "--population", people),
                        "suppression_limit: 0")
    mdav = _config(sample, "{name: mdav, k: 3}")
    assert_one_sentence(invoke("attack", "minimality", release, "--config", mdav, "--population", people),
                        "not mdav's")
    assert_one_sentence(invoke("attack", "minimality", release, "--config", config, "--population", people,
                               "--publisher", "lucky"), "'optimal'", "'minimal'")


def test_anonymize_with_ace_refuses_an_l_the_data_cannot_reach(sample):
    config = _config(sample, "{name: ace, l: 30, rng: 1}")
    release, manifest = sample / "release.csv", sample / "manifest.json"
    result = invoke("anonymize", "--config", config, "--out", release, "--manifest", manifest)
    assert_one_sentence(result, "ℓ = 30", "distinct", "at most ℓ =")
    assert not release.exists() and not manifest.exists()


# --------------------------------------------------------------------------- veil experiment transparency

def test_experiment_transparency(tmp_path):
    out = tmp_path / "t"
    result = invoke("experiment", "transparency", "--out", out, "--l", "2", "--sample", "200", "--algorithms",
                    "ace,mondrian")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["transparency.csv", "transparency.md", "transparency.png"]
    assert "| Ace | 2 |" in result.stdout


def test_experiment_transparency_bad_input(tmp_path):
    out = tmp_path / "t"
    assert_one_sentence(invoke("experiment", "transparency", "--out", out, "--l", "1"), "at least 2")
    assert_one_sentence(invoke("experiment", "transparency", "--out", out, "--model", "recursive"), "'entropy'")
    assert not out.exists()
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert_one_sentence(invoke("experiment", "transparency", "--out", tmp_path / "file"), "is a file")
