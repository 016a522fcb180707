"""δ-presence and k-map against a hand-computed population, in check and in the full-domain search."""

import pandas as pd
import pytest

from veil import Dataset
from veil.anonymize import FullDomain
from veil.check import check
from veil.classes import EquivalenceClasses
from veil.data.hierarchy import Hierarchy
from veil.errors import DataError, ParameterError
from veil.models import DeltaPresence, KAnonymity, KMap

AGE = Hierarchy([[str(a), "2*" if a < 30 else "3*", "*"] for a in (21, 22, 23, 24, 31, 32, 33, 34)])
ZIP = Hierarchy([["10", "1*"], ["11", "1*"]])
# The population: 10 people. Ages 2x: four in zip 10, two in 11; ages 3x: two in 10, two in 11.
POPULATION = pd.DataFrame({
    "age": ["21", "22", "23", "24", "21", "22", "31", "32", "33", "34"],
    "zip": ["10", "10", "10", "10", "11", "11", "10", "10", "11", "11"],
})
# The research sample: rows 0, 1, 4 and 6 of the population.
SAMPLE = POPULATION.iloc[[0, 1, 4, 6]].reset_index(drop=True)


def sample_dataset():
    return Dataset(SAMPLE, quasi_identifiers=["age", "zip"], hierarchies={"age": AGE, "zip": ZIP})


def population_dataset():
    return Dataset(POPULATION, quasi_identifiers=["age", "zip"])


def test_delta_presence_and_k_map_by_hand():
    ds = sample_dataset()
    # At age level 1, zip level 0: classes (2*,10) with 2 records, (2*,11) with 1, (3*,10) with 1.
    # The population holds (2*,10) 4 times, (2*,11) twice, (3*,10) twice.
    classes = EquivalenceClasses.from_dataset(ds, {"age": 1})
    order = {tuple(ds.labels(q, lv)[classes.keys[c, j]] for j, (q, lv) in enumerate(zip(["age", "zip"], (1, 0)))): c
             for c in range(classes.n_classes)}
    presence = DeltaPresence(population_dataset(), 0.5, 0.25).evaluate(classes)
    assert presence.class_levels[order["2*", "10"]] == pytest.approx(2 / 4)
    assert presence.class_levels[order["2*", "11"]] == pytest.approx(1 / 2)
    assert presence.class_levels[order["3*", "10"]] == pytest.approx(1 / 2)
    assert presence.level == pytest.approx(0.5) and presence.passed
    assert not DeltaPresence(population_dataset(), 0.4).evaluate(classes).passed
    assert not DeltaPresence(population_dataset(), 1.0, 0.6).evaluate(classes).passed
    kmap = KMap(population_dataset(), 2).evaluate(classes)
    assert kmap.level == 2 and kmap.passed
    assert not KMap(population_dataset(), 3).evaluate(classes).passed


def test_check_reports_presence_with_a_population():
    report = check(sample_dataset(), population=population_dataset(), delta_presence=(0.0, 0.5), k_map=1)
    summary = report.to_dict()
    # Ungeneralized, row (21,10) is 1 of 1 in the population: δ = 1.
    assert summary["delta_presence"] == 1 and summary["k_map"] == 1
    assert summary["passed"] == {"delta_presence": False, "k_map": True}
    assert check(sample_dataset()).to_dict()["delta_presence"] is None


def test_a_presence_threshold_needs_a_population():
    with pytest.raises(ParameterError, match="population"):
        check(sample_dataset(), k_map=2)


def test_a_population_that_does_not_cover_the_sample_is_refused():
    small = Dataset(POPULATION.iloc[[1, 4, 6]], quasi_identifiers=["age", "zip"])
    with pytest.raises(DataError, match="population must contain every record"):
        check(sample_dataset(), population=small)


def test_fulldomain_search_meets_delta_presence_and_k_map():
    ds = sample_dataset()
    release = FullDomain([KAnonymity(1), DeltaPresence(population_dataset(), 0.5), KMap(population_dataset(), 2)]
                         ).fit_transform(ds)
    classes = release.classes.subset(~release.failing) if release.failing.any() else release.classes
    assert DeltaPresence(population_dataset(), 0.5).evaluate(classes).passed
    assert KMap(population_dataset(), 2).evaluate(classes).passed
    assert release.classes.n_rows == len(SAMPLE)


def test_bad_thresholds_are_one_sentence():
    with pytest.raises(ParameterError, match="δmax"):
        DeltaPresence(population_dataset(), 1.5)
    with pytest.raises(ParameterError, match="δmin"):
        DeltaPresence(population_dataset(), 0.3, 0.5)


def test_membership_attack_by_hand():
    from veil.attacks.presence import membership_attack

    release = FullDomain([KAnonymity(1), KMap(population_dataset(), 2)]).fit_transform(sample_dataset())
    result = membership_attack(release, POPULATION)
    # Each person is published through the hierarchies at the release's levels (a value no
    # released record holds too); their probability is the released records over the population
    # records of their published tuple.
    published = release.table.to_pandas()[["age", "zip"]].astype(str)
    mapped = POPULATION.copy()
    for q, hierarchy in (("age", AGE), ("zip", ZIP)):
        level = release.manifest["node"][q]
        rows = {row[0]: row[level] for row in hierarchy.rows()}
        mapped[q] = mapped[q].map(rows)
    f = published.value_counts()
    big_f = mapped.value_counts()
    expected = [f.get(tuple(row), 0) / big_f[tuple(row)] for row in mapped.itertuples(index=False)]
    assert result.probability.tolist() == pytest.approx(expected)
    assert result.probability.sum() == pytest.approx(len(SAMPLE))


def test_membership_attack_exposes_a_whole_class():
    from veil.attacks.presence import membership_attack

    # Published ungeneralized: (31, 10) is one population record and it is released.
    result = membership_attack(SAMPLE, POPULATION, quasi_identifiers=["age", "zip"])
    assert sorted(result.exposed.tolist()) == [0, 1, 4, 6]
    assert result.summary()["exposed"] == 4 and result.summary()["outside_release"] == 6


def test_membership_attack_refuses_a_population_that_does_not_cover_the_release():
    from veil.attacks.presence import PopulationMismatchError, membership_attack

    with pytest.raises(PopulationMismatchError, match="population must contain every released record"):
        membership_attack(SAMPLE, POPULATION.iloc[[1, 2, 3]], quasi_identifiers=["age", "zip"])


def test_veil_check_population_options(tmp_path):
    import json

    from typer.testing import CliRunner

    from veil.cli import app

    SAMPLE.to_csv(tmp_path / "sample.csv", index=False)
    POPULATION.to_csv(tmp_path / "population.csv", index=False)
    runner = CliRunner()
    base = ["check", str(tmp_path / "sample.csv"), "--qi", "age,zip", "--population", str(tmp_path / "population.csv")]
    result = runner.invoke(app, base + ["--k-map", "1", "--delta-presence", "0,1", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["passed"] == {"delta_presence": True, "k_map": True}
    assert runner.invoke(app, base + ["--k-map", "2"]).exit_code == 1
    bad = runner.invoke(app, base + ["--delta-presence", "half"])
    assert bad.exit_code == 2 and "DMIN,DMAX" in bad.output


def test_arx_regression_row_five_map_on_the_adult_subset():
    # ARX's TestAnonymizationKMap: KMap(5) of adult_subset within adult, no suppression, AECS:
    # the optimum is [1, 0, 1, 2, 3, 2, 2, 1] with AECS 3,016 / 67.
    from helpers import ADULT_DIR, ADULT_SUBSET_CSV

    columns = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class"]
    hierarchies = {c: ADULT_DIR / f"adult_hierarchy_{c}.csv" for c in columns + ["occupation"]}
    subset = Dataset(ADULT_SUBSET_CSV, quasi_identifiers=columns, sensitive="occupation", hierarchies=hierarchies)
    population = Dataset(ADULT_DIR / "adult.csv", quasi_identifiers=columns)
    search = FullDomain([KMap(population, 5)], metric="aecs", suppression_limit=0.0).fit(subset)
    assert list(search.levels_.values()) == [1, 0, 1, 2, 3, 2, 2, 1]
    assert search.result_.loss == pytest.approx(45.014925373134325, rel=1e-12)
