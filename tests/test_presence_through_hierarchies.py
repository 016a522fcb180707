"""δ-presence and k-map of a release judged from its manifest: the population is generalized through
the hierarchies, never through the release's value map (audit issue 25, item 12).

Twelve people (six men aged 20 to 25, six women aged 30 to 35); a sample of three of each; the
release keeps sex and publishes age as ``*``. A sample consistent with the release is any three men
and any three women: C(6,3)² = 400 of them, each man in half. The truth, which the test computes by
enumerating them all, is δ-presence 0.5 and k-map 6 for everyone. The release's value map names
only the sample's ages, so a tool that publishes the population through it leaves the other six
people unmatched (δ-presence 1, k-map 3, "six people are not in the release").
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from fractions import Fraction

import pandas as pd
import pytest
from typer.testing import CliRunner

from veil import Dataset
from veil.anonymize import FullDomain
from veil.cli import app
from veil.models import DeltaPresence, KAnonymity, KMap

MEN, WOMEN = list(range(20, 26)), list(range(30, 36))
POPULATION = pd.DataFrame({"name": [f"p{i:02d}" for i in range(12)], "sex": ["M"] * 6 + ["F"] * 6,
                           "age": MEN + WOMEN})
SAMPLE_ROWS = [0, 1, 2, 6, 7, 8]
AGES = [20, 21, 22, 23, 24, 25, 30, 31, 32, 33, 34, 35]


def veil_cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def published(person) -> tuple:
    """What the release publishes for a person: sex kept, age at level 1 (``*``)."""
    return person["sex"], "*"


def truth() -> tuple[dict[int, Fraction], dict[tuple, int], int]:
    """By enumeration of every sample consistent with the release: each person's probability of
    being in it, and per published tuple the people who can be behind its records (k-map)."""
    people = POPULATION.to_dict("records")
    release = Counter(published(people[i]) for i in SAMPLE_ROWS)
    consistent = [s for s in itertools.combinations(range(len(people)), len(SAMPLE_ROWS))
                  if Counter(published(people[i]) for i in s) == release]
    inside = Counter(i for s in consistent for i in s)
    probability = {i: Fraction(inside[i], len(consistent)) for i in range(len(people))}
    candidates: dict[tuple, set] = {}
    for s in consistent:
        for i in s:
            candidates.setdefault(published(people[i]), set()).add(i)
    return probability, {t: len(c) for t, c in candidates.items()}, len(consistent)


def test_the_truth_by_enumeration():
    probability, k_map, samples = truth()
    assert samples == 400
    assert set(probability.values()) == {Fraction(1, 2)}
    assert k_map == {("M", "*"): 6, ("F", "*"): 6}


@pytest.fixture
def project(tmp_path):
    POPULATION.to_csv(tmp_path / "population.csv", index=False)
    POPULATION.iloc[SAMPLE_ROWS].drop(columns="name").to_csv(tmp_path / "sample.csv", index=False)
    (tmp_path / "sex.csv").write_text("M;*\nF;*\n", encoding="utf-8")
    (tmp_path / "age.csv").write_text("".join(f"{a};*\n" for a in AGES), encoding="utf-8")
    (tmp_path / "sample.yaml").write_text(
        "data: sample.csv\ncolumns: {quasi_identifiers: [sex, age]}\n"
        "hierarchies: {sex: {file: sex.csv}, age: {file: age.csv}}\n"
        "models:\n  - k_anonymity: {k: 3}\nmetric: height\n", encoding="utf-8")
    made = veil_cli("anonymize", "--config", tmp_path / "sample.yaml", "--out", tmp_path / "release.csv",
                    "--manifest", tmp_path / "release.json", "--json")
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout)["node"] == {"sex": 0, "age": 1}
    return tmp_path


def test_veil_check_against_the_population_is_the_truth(project):
    _, k_map, _ = truth()
    result = veil_cli("check", project / "release.csv", "--qi", "sex,age", "--manifest", project / "release.json",
                      "--population", project / "population.csv", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["delta_presence"] == 0.5
    assert report["k_map"] == min(k_map.values()) == 6


def test_veil_attack_presence_is_the_truth(project):
    probability, _, _ = truth()
    result = veil_cli("attack", "presence", project / "release.csv", "--population", project / "population.csv",
                      "--manifest", project / "release.json", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["outside_release"] == 0 and summary["exposed"] == 0
    assert summary["max_probability"] == float(max(probability.values())) == 0.5
    assert summary["expected_members"] == pytest.approx(float(sum(probability.values()))) == 6


def test_the_membership_attack_gives_everyone_their_probability(project):
    from veil.attacks.intersection import PublishedRelease
    from veil.attacks.presence import membership_attack

    probability, _, _ = truth()
    result = membership_attack(PublishedRelease(project / "release.csv", manifest=project / "release.json"),
                               project / "population.csv")
    assert result.probability.tolist() == [float(probability[i]) for i in range(12)]


def test_the_gate_publishes_what_is_half_present_and_6_map(project):
    assert veil_cli("ledger", "init", "--ledger", project / "ledger.db").exit_code == 0
    (project / "policy.yaml").write_text("policy:\n  populations:\n    people: {}\n"
                                         "  presence: {population: population.csv, delta_max: 0.5, k_map: 6}\n",
                                         encoding="utf-8")
    result = veil_cli("publish", project / "release.json", "--population", "people", "--data", project / "sample.csv",
                      "--ledger", project / "ledger.db", "--policy", project / "policy.yaml", "--json")
    assert result.exit_code == 0, result.output
    finding = json.loads(result.stdout)["findings"][0]
    assert finding["passed"] and finding["figures"]["max_probability"] == 0.5
    assert finding["figures"]["smallest_match"] == 6 and finding["figures"]["outside_release"] == 0


def test_the_search_of_the_api_agrees(project):
    probability, k_map, _ = truth()
    hierarchies = {"sex": project / "sex.csv", "age": project / "age.csv"}
    sample = Dataset(project / "sample.csv", quasi_identifiers=["sex", "age"], hierarchies=hierarchies)
    population = Dataset(project / "population.csv", quasi_identifiers=["sex", "age"])
    release = FullDomain([KAnonymity(3), DeltaPresence(population, 0.5), KMap(population, 6)],
                         metric="height").fit_transform(sample)
    assert release.manifest["node"] == {"sex": 0, "age": 1}
    levels = {row["key"]: row["level"] for row in release.manifest["models"]}
    assert levels["delta_presence"] == float(max(probability.values()))
    assert levels["k_map"] == min(k_map.values())


def test_a_builder_hierarchy_is_made_again_on_the_population(project):
    """A flat builder made from the sample holds only its ages; the population is published by the
    builder run on its own values, so the check still reads the truth."""
    (project / "built.yaml").write_text(
        "data: sample.csv\ncolumns: {quasi_identifiers: [sex, age]}\n"
        "hierarchies: {sex: {file: sex.csv}, age: {flat: {}}}\n"
        "models:\n  - k_anonymity: {k: 3}\nmetric: height\n", encoding="utf-8")
    made = veil_cli("anonymize", "--config", project / "built.yaml", "--out", project / "built.csv",
                    "--manifest", project / "built.json")
    assert made.exit_code == 0, made.output
    result = veil_cli("check", project / "built.csv", "--qi", "sex,age", "--manifest", project / "built.json",
                      "--population", project / "population.csv", "--json")
    assert result.exit_code == 0, result.output
    assert (json.loads(result.stdout)["delta_presence"], json.loads(result.stdout)["k_map"]) == (0.5, 6)


def test_a_missing_hierarchy_is_one_sentence(project):
    """A release whose manifest names no file that can be found, and no private file beside it."""
    manifest = json.loads((project / "release.json").read_text(encoding="utf-8"))
    (project / "release.private.json").unlink()
    for name in ("age.csv",):
        (project / name).unlink()
    result = veil_cli("attack", "presence", project / "release.csv", "--population", project / "population.csv",
                      "--manifest", project / "release.json")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: release 1 (release.csv) publishes 'age' at level 1 of its hierarchy, and no hierarchy of 'age' was "
        "given to generalize the population with; give it (--hierarchy age=FILE)."]
    assert manifest["node"]["age"] == 1


def test_presence_models_in_a_configuration(project):
    """``delta_presence`` and ``k_map`` under ``models:`` take the population as a path: the search
    keeps the release within them, and the manifest reports the truth's levels."""
    (project / "presence.yaml").write_text(
        "data: sample.csv\ncolumns: {quasi_identifiers: [sex, age]}\n"
        "hierarchies: {sex: {file: sex.csv}, age: {file: age.csv}}\n"
        "models:\n  - delta_presence: {population: population.csv, delta_max: 0.5}\n"
        "  - k_map: {population: population.csv, k: 6}\nmetric: height\n", encoding="utf-8")
    made = veil_cli("anonymize", "--config", project / "presence.yaml", "--out", project / "p.csv",
                    "--manifest", project / "p.json", "--json")
    assert made.exit_code == 0, made.output
    manifest = json.loads(made.stdout)
    assert manifest["node"] == {"sex": 0, "age": 1}
    assert [(row["key"], row["level"], row["passed"]) for row in manifest["models"]] == [
        ("delta_presence", 0.5, True), ("k_map", 6, True)]
    assert manifest["config"]["models"][0] == {"delta_presence": {"population": str(project / "population.csv"),
                                                                  "delta_max": 0.5}}
    # A model that cannot be met, and a malformed one, are one sentence each.
    (project / "strict.yaml").write_text(
        (project / "presence.yaml").read_text(encoding="utf-8").replace("delta_max: 0.5", "delta_max: 0.4"),
        encoding="utf-8")
    strict = veil_cli("anonymize", "--config", project / "strict.yaml", "--out", project / "s.csv")
    assert strict.exit_code == 2 and len(strict.stderr.strip().splitlines()) == 1
    (project / "bad.yaml").write_text(
        (project / "presence.yaml").read_text(encoding="utf-8").replace("delta_max: 0.5", "delta_max: 0.5, "
                                                                          "delta_min: 0.9"), encoding="utf-8")
    bad = veil_cli("anonymize", "--config", project / "bad.yaml", "--out", project / "b.csv")
    assert bad.exit_code == 2 and "bad.yaml, line 5: delta_presence: δmin must be in [0, δmax]" in bad.stderr
    assert not (project / "b.csv").exists() and not (project / "s.csv").exists()
    (project / "nowhere.yaml").write_text(
        (project / "presence.yaml").read_text(encoding="utf-8").replace("population: population.csv, delta",
                                                                      "population: nowhere.csv, delta"),
        encoding="utf-8")
    nowhere = veil_cli("anonymize", "--config", project / "nowhere.yaml", "--out", project / "n.csv")
    assert nowhere.exit_code == 2 and "does not exist" in nowhere.stderr


def test_a_hierarchy_that_does_not_cover_the_population_is_one_sentence(project):
    (project / "short.csv").write_text("".join(f"{a};*\n" for a in AGES if a != 35), encoding="utf-8")
    (project / "tall.csv").write_text("".join(f"{a};{a // 10}x;*\n" for a in AGES), encoding="utf-8")
    base = ["check", project / "release.csv", "--qi", "sex,age", "--manifest", project / "release.json",
            "--population", project / "population.csv"]
    short = veil_cli(*base, "--hierarchy", f"age={project / 'short.csv'}")
    assert short.exit_code == 2
    assert short.stderr.strip().splitlines() == [
        "error: the population cannot be generalized as the release was: hierarchy file 'short.csv' does not cover "
        "1 value(s) of column 'age': '35'; add a row for each."]
    tall = veil_cli(*base, "--hierarchy", f"age={project / 'tall.csv'}")
    assert tall.exit_code == 2 and tall.stderr.strip().splitlines() == [
        "error: the hierarchy given for 'age' has height 2, but the release was made with one of height 1; give the "
        "hierarchy the release was made with."]
    # A hierarchy file the manifest names that changed since is refused by its SHA-256.
    (project / "age.csv").write_text("".join(f"{a};any\n" for a in AGES), encoding="utf-8")
    changed = veil_cli(*base)
    assert changed.exit_code == 2 and "is not the one the release was made with (its SHA-256 differs" in changed.stderr


def test_a_release_by_local_recoding_is_not_matched_with_a_population():
    from veil.check import check
    from veil.errors import DataError

    sample = Dataset(POPULATION.iloc[SAMPLE_ROWS], quasi_identifiers=["sex", "age"])
    population = Dataset(POPULATION, quasi_identifiers=["sex", "age"])
    with pytest.raises(DataError, match="names no level per quasi-identifier"):
        check(sample, population=population, manifest={"algorithm": "mondrian", "roles": {}})
