"""Join k-anonymity, the model of a second release given a first (Wang and Fung, KDD 2006)."""

import json
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from veil import Dataset, EquivalenceClasses, builders
from veil.anonymize import FullDomain, Mondrian
from veil.attacks.published_release import PublishedRelease
from veil.attacks.join import join_attack
from veil.errors import InfeasibleError, ParameterError
from veil.models import DistinctLDiversity, JoinKAnonymity, KAnonymity
from veil.models.sequential import EarlierReleaseExposedError, NothingToJoinError

PEOPLE = pd.DataFrame({
    "sex": ["M", "M", "F", "F", "M", "F"],
    "job": ["eng", "eng", "eng", "eng", "law", "law"],
    "zip": ["A", "B", "A", "B", "C", "C"],
    "disease": ["flu", "hiv", "flu", "cold", "hiv", "flu"],
})
# T1 publishes sex, job and disease (sex its quasi-identifier); T2 would publish job and zip. Zip C
# means a lawyer, and there is one lawyer of each sex: the join exposes rows 4 and 5 of T1.
T1 = PEOPLE[["sex", "job", "disease"]]
T1_MANIFEST = {"roles": {"quasi_identifiers": ["sex"], "sensitive": ["disease"]}}


def second(zip_hierarchy=None) -> Dataset:
    frame = PEOPLE[["job", "zip"]].iloc[[5, 3, 1, 4, 2, 0]].reset_index(drop=True)
    hierarchy = zip_hierarchy or builders.flat(frame["zip"])
    return Dataset(frame, quasi_identifiers=["zip"], hierarchies={"zip": hierarchy})


def test_hand_built_join_is_violated_where_the_attack_exposes():
    ds = second()
    model = JoinKAnonymity(T1, k=2, manifest=T1_MANIFEST)
    result = model.evaluate(EquivalenceClasses.from_dataset(ds, [0]))
    labels = EquivalenceClasses.from_dataset(ds, [0]).class_labels()["zip"].tolist()
    levels = dict(zip(labels, result.class_levels.tolist()))
    # Zips A and B put each person among the 2 engineers of their sex; zip C among 1 lawyer.
    assert levels == {"A": 2.0, "B": 2.0, "C": 1.0}
    assert result.passed is False and result.level == 1.0
    assert [labels[i] for i in result.failing_classes] == ["C"]
    # The attack on the same pair exposes exactly the two lawyers of T1.
    attack = join_attack(PublishedRelease(T1, manifest=T1_MANIFEST), second().table.data,
                         quasi_identifiers=["sex", "zip"], k=2)
    assert attack.exposed.tolist() == [4, 5]


def test_generalizing_the_second_release_hides_the_lawyers():
    hierarchy = builders.flat(PEOPLE["zip"])
    result = JoinKAnonymity(T1, k=2, manifest=T1_MANIFEST).evaluate(
        EquivalenceClasses.from_dataset(second(hierarchy), [1]))
    assert result.passed and result.level == 3.0  # everyone among the 3 T1 records of their sex


def test_l_diversity_on_the_join():
    model = JoinKAnonymity(T1, k=1, l=2, manifest=T1_MANIFEST)
    result = model.evaluate(EquivalenceClasses.from_dataset(second(), [0]))
    # k = 1 holds everywhere; the lone lawyers hold one disease each.
    labels = EquivalenceClasses.from_dataset(second(), [0]).class_labels()["zip"].tolist()
    assert sorted(labels[i] for i in result.failing_classes) == ["C"]


def test_the_search_generalizes_until_the_join_is_safe():
    ds = second()
    release = FullDomain([JoinKAnonymity(T1, k=2, manifest=T1_MANIFEST)]).fit(ds).transform(ds)
    assert release.manifest["node"] == {"zip": 1}
    attack = join_attack(PublishedRelease(T1, manifest=T1_MANIFEST), release, k=2)
    assert attack.passed


def test_the_model_is_not_monotone():
    assert JoinKAnonymity.monotonic is False and JoinKAnonymity.monotonic_with_suppression is False


def test_bad_input_is_one_sentence():
    with pytest.raises(NothingToJoinError, match="nothing to join"):
        JoinKAnonymity(PEOPLE[["sex"]], k=2).evaluate(EquivalenceClasses.from_dataset(second(), [0]))
    with pytest.raises(EarlierReleaseExposedError, match="alone leaves 6 records"):
        JoinKAnonymity(T1, k=4, manifest=T1_MANIFEST).evaluate(EquivalenceClasses.from_dataset(second(), [0]))
    with pytest.raises(ParameterError, match="not Mondrian"):
        Mondrian([JoinKAnonymity(T1, k=2, manifest=T1_MANIFEST)]).fit_transform(second())
    with pytest.raises(ParameterError, match="sensitive column"):
        JoinKAnonymity(T1[["sex", "job"]], k=1, l=2).evaluate(EquivalenceClasses.from_dataset(second(), [0]))


@st.composite
def tables(draw):
    n = draw(st.integers(8, 40))
    ints = st.lists(st.integers(0, 7), min_size=n, max_size=n)
    frame = pd.DataFrame({"a": draw(ints), "b": draw(ints), "c": draw(ints),
                          "job": draw(st.lists(st.sampled_from("pqrst"), min_size=n, max_size=n)),
                          "s": draw(st.lists(st.sampled_from(["x", "y", "z"]), min_size=n, max_size=n))})
    k = draw(st.integers(2, 4))
    l = draw(st.sampled_from([None, 2]))
    limit = draw(st.sampled_from([0.0, 0.3]))
    return frame, k, l, limit


def _hierarchies(frame: pd.DataFrame, columns) -> dict:
    return {c: builders.intervals(frame[c], [2, 4]) for c in columns}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_what_the_search_publishes_the_join_attack_does_not_break(case):
    """For any second release the search outputs with the model (suppressed records removed), the join
    attack finds nobody under k (or ℓ); on the ungeneralized second table, the model and the attack agree."""
    frame, k, l, limit = case
    # T1 publishes a and c (its quasi-identifiers), job and s; T2 publishes c, job and b, in another order.
    # They join on c (at the coarser of the levels they publish it at) and on job, which only T1's
    # rows and T2's tuples tie to a and b.
    first_ds = Dataset(frame[["a", "c", "job", "s"]], quasi_identifiers=["a", "c"], sensitive=["s"],
                       hierarchies=_hierarchies(frame, ["a", "c"]))
    first_models = [KAnonymity(k)] + ([DistinctLDiversity(l)] if l else [])
    try:
        first = FullDomain(first_models).fit(first_ds).transform(first_ds, shuffle=True,
                                                                  rng=np.random.default_rng(0))
    except InfeasibleError:
        return
    published = PublishedRelease(first.table, manifest=first.manifest)
    second_frame = frame[["c", "job", "b"]].sample(frac=1, random_state=1).reset_index(drop=True)
    second_ds = Dataset(second_frame, quasi_identifiers=["c", "b"], hierarchies=_hierarchies(frame, ["c", "b"]))
    model = JoinKAnonymity(first.table, k=k, l=l, manifest=first.manifest)
    release = FullDomain([model], suppression_limit=limit).fit(second_ds).transform(second_ds)
    attack = join_attack(published, release, k=k, l=l)
    assert attack.passed, attack.summary()
    assert release.num_rows + release.suppressed_records == len(frame)
    raw = FullDomain([KAnonymity(1)]).fit(second_ds).transform(second_ds)
    verdict = model.evaluate(EquivalenceClasses.from_dataset(second_ds, [0, 0])).passed
    assert verdict == join_attack(published, raw, k=k, l=l).passed


def test_a_column_published_at_two_levels_is_joined_at_the_coarser():
    ages = pd.DataFrame({"age": ["31", "35", "38", "42", "44", "47"], "job": list("ppqqrr"),
                         "town": list("xyxyxy")})
    decades = builders.intervals(ages["age"].astype(int), [10])
    second_ds = Dataset(ages[["age", "town"]], quasi_identifiers=["age", "town"],
                        hierarchies={"age": decades, "town": builders.flat(ages["town"])})
    labels = decades.level_labels[1].tolist()
    first = ages[["age", "job"]].assign(age=[labels[0]] * 3 + [labels[1]] * 3)  # T1 publishes decades
    model = JoinKAnonymity(first, k=3, manifest={"roles": {"quasi_identifiers": ["age"]}})
    # Exact ages in T2 are lifted to T1's decades: each decade's 3 T1 records stay candidates (joined on
    # equal texts only, nothing would join and the level would be unbounded).
    assert model.evaluate(EquivalenceClasses.from_dataset(second_ds, [0, 0])).level == 3.0
    attack = join_attack(PublishedRelease(first, manifest={"roles": {"quasi_identifiers": ["age"]}}),
                         ages[["age", "town"]], quasi_identifiers=["age", "town"], k=3, hierarchies={"age": decades})
    assert attack.candidates.tolist() == [3] * 6 and attack.summary()["joined_groups"] == 4


# --------------------------------------------------------------------------------------------
# Through the configuration, veil check and the publishing gate


def _veil(*args):
    from typer.testing import CliRunner

    from veil.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def first_release(tmp_path):
    """T1 (sex, job, disease) published 2-anonymous on sex, with its manifest."""
    PEOPLE[["sex", "job", "disease"]].to_csv(tmp_path / "first.csv", index=False)
    PEOPLE[["job", "zip"]].to_csv(tmp_path / "second.csv", index=False)
    PEOPLE.to_csv(tmp_path / "people.csv", index=False)
    (tmp_path / "first.yaml").write_text(
        "data: first.csv\ncolumns: {quasi_identifiers: [sex], sensitive: [disease]}\n"
        "hierarchies: {sex: {flat: {}}}\nmodels:\n  - k_anonymity: {k: 2}\n", encoding="utf-8")
    (tmp_path / "r1").mkdir()
    done = _veil("anonymize", "--config", tmp_path / "first.yaml", "--out", tmp_path / "r1" / "release.csv",
                 "--manifest", tmp_path / "r1" / "manifest.json")
    assert done.exit_code == 0, done.output
    return tmp_path


def test_configuration_check_and_gate(first_release):
    tmp = first_release
    (tmp / "second.yaml").write_text(
        "data: second.csv\ncolumns: {quasi_identifiers: [zip]}\nhierarchies: {zip: {flat: {}}}\n"
        "models:\n  - join: {earlier: r1/manifest.json, k: 2}\n", encoding="utf-8")
    # The raw second table fails the join (zip C: one lawyer of each sex), exit 1.
    checked = _veil("check", tmp / "second.csv", "--qi", "zip", "--earlier", tmp / "r1" / "manifest.json", "--k", 2,
                    "--json")
    assert checked.exit_code == 1
    report = json.loads(checked.stdout)
    assert report["join"] == 1 and report["passed"]["join"] is False
    (tmp / "r2").mkdir()
    done = _veil("anonymize", "--config", tmp / "second.yaml", "--out", tmp / "r2" / "release.csv",
                 "--manifest", tmp / "r2" / "manifest.json", "--json")
    assert done.exit_code == 0, done.output
    manifest = json.loads((tmp / "r2" / "manifest.json").read_text())
    assert manifest["node"] == {"zip": 1}
    assert [(m["key"], m["level"], m["passed"]) for m in manifest["models"]] == [("join", 3, True)]
    (tmp / "policy.yaml").write_text("policy:\n  populations:\n    people: {}\n", encoding="utf-8")
    assert _veil("ledger", "init", "--ledger", tmp / "ledger.db").exit_code == 0
    for folder in ("r1", "r2"):
        published = _veil("publish", tmp / folder / "manifest.json", "--population", "people", "--data",
                          tmp / "people.csv", "--ledger", tmp / "ledger.db", "--policy", tmp / "policy.yaml",
                          "--json")
        assert published.exit_code == 0, published.output
    decision = json.loads(published.stdout)
    assert [r["published"] for r in decision["recheck"]] == [3]


def test_configuration_errors_are_one_sentence(first_release):
    tmp = first_release
    (tmp / "bad.yaml").write_text(
        "data: second.csv\ncolumns: {quasi_identifiers: [zip]}\nhierarchies: {zip: {flat: {}}}\n"
        "models:\n  - join: {earlier: nowhere.json, k: 2}\n", encoding="utf-8")
    (tmp / "out").mkdir()
    done = _veil("anonymize", "--config", tmp / "bad.yaml", "--out", tmp / "out" / "r.csv")
    assert done.exit_code == 2 and "join.earlier: file" in done.stderr and "does not exist" in done.stderr
    assert not (tmp / "out" / "r.csv").exists()
    alone = _veil("check", tmp / "second.csv", "--qi", "zip", "--earlier", tmp / "r1" / "manifest.json", "--k", 4)
    assert alone.exit_code == 2 and "alone leaves 6 records" in alone.stderr


def test_the_gate_rechecks_a_release_joined_at_a_coarser_level(tmp_path):
    """T1 publishes decades, T2 exact ages: the join lifts T2's ages to decades at anonymization and,
    through the configuration's hierarchy file, again when the gate re-checks the published file."""
    people = pd.DataFrame({"age": [31, 35, 38, 42, 44, 47], "job": list("ppqqrr"), "town": list("xyxyxy")})
    people.to_csv(tmp_path / "people.csv", index=False)
    people[["age", "job"]].to_csv(tmp_path / "first.csv", index=False)
    people[["age", "town"]].to_csv(tmp_path / "second.csv", index=False)
    (tmp_path / "ages.csv").write_text("".join(f"{a};{a // 10 * 10}s;*\n" for a in people["age"]), encoding="utf-8")
    (tmp_path / "first.yaml").write_text(
        "data: first.csv\ncolumns: {quasi_identifiers: [age]}\nhierarchies: {age: ages.csv}\n"
        "models:\n  - k_anonymity: {k: 3}\n", encoding="utf-8")
    (tmp_path / "second.yaml").write_text(
        "data: second.csv\ncolumns: {quasi_identifiers: [age, town]}\nhierarchies: {age: ages.csv, town: {flat: {}}}\n"
        "models:\n  - join: {earlier: first.json, k: 3}\n", encoding="utf-8")
    for name in ("first", "second"):
        done = _veil("anonymize", "--config", tmp_path / f"{name}.yaml", "--out", tmp_path / f"{name}-release.csv",
                     "--manifest", tmp_path / f"{name}.json", "--json")
        assert done.exit_code == 0, done.output
    second = json.loads((tmp_path / "second.json").read_text())
    assert second["node"] == {"age": 0, "town": 0}  # exact ages: the join lifts them to T1's decades
    assert second["models"][0]["level"] == 3
    (tmp_path / "policy.yaml").write_text("policy:\n  populations:\n    people: {}\n", encoding="utf-8")
    assert _veil("ledger", "init", "--ledger", tmp_path / "ledger.db").exit_code == 0
    for name in ("first", "second"):
        published = _veil("publish", tmp_path / f"{name}.json", "--population", "people", "--data",
                          tmp_path / "people.csv", "--ledger", tmp_path / "ledger.db", "--policy",
                          tmp_path / "policy.yaml", "--json")
        assert published.exit_code == 0, published.output
    assert [r["published"] for r in json.loads(published.stdout)["recheck"]] == [3]
