"""The intersection attack of Ganta, Kasiviswanathan and Smith (KDD 2008): the paper's hospital
example, the published-value parser, brute-force adversaries on mixed algorithms (Mondrian with
MDAV, full-domain with Mondrian), invariance under shuffled rows, bad input, and the
``veil attack intersection`` command."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from veil import Dataset, Hierarchy, KAnonymity
from veil.anonymize import MDAV, FullDomain, Mondrian
from veil.attacks.intersection import (ColumnValues, PublishedRelease, ReleaseMismatchError, TargetsError,
                                       UnreadableValueError, hierarchy_nodes, intersection_attack,
                                       parse_published_value)
from veil.cli.attack import intersection_command, parse_levels
from veil.errors import ParameterError, VeilError
from veil.manifests import combined

PROPERTY = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Ganta et al., Table 1: two hospitals in the same city publish 4-anonymous (a) and 6-anonymous (b)
# discharge data; the condition is sensitive and published as is. Alice's employer knows she is
# 28, lives in ZIP 13012 and visited both hospitals. She matches rows 1-4 of (a) (AIDS, heart
# disease, viral infection) and rows 1-6 of (b) (AIDS, tuberculosis, flu, cancer); only AIDS is in
# both, so he learns she has AIDS. (Every row publishes nationality as "*": any value works.)
HOSPITAL_QI = ["Zip code", "Age", "Nationality"]
HOSPITAL_A = pd.DataFrame(
    [("130**", "<30", "*", "AIDS"), ("130**", "<30", "*", "Heart Disease"),
     ("130**", "<30", "*", "Viral Infection"), ("130**", "<30", "*", "Viral Infection"),
     ("130**", "≥40", "*", "Cancer"), ("130**", "≥40", "*", "Heart Disease"),
     ("130**", "≥40", "*", "Viral Infection"), ("130**", "≥40", "*", "Viral Infection"),
     ("130**", "3*", "*", "Cancer"), ("130**", "3*", "*", "Cancer"),
     ("130**", "3*", "*", "Cancer"), ("130**", "3*", "*", "Cancer")],
    columns=HOSPITAL_QI + ["Condition"])
HOSPITAL_B = pd.DataFrame(
    [("130**", "<35", "*", "AIDS"), ("130**", "<35", "*", "Tuberculosis"), ("130**", "<35", "*", "Flu"),
     ("130**", "<35", "*", "Tuberculosis"), ("130**", "<35", "*", "Cancer"), ("130**", "<35", "*", "Cancer"),
     ("130**", "≥35", "*", "Cancer"), ("130**", "≥35", "*", "Cancer"), ("130**", "≥35", "*", "Cancer"),
     ("130**", "≥35", "*", "Tuberculosis"), ("130**", "≥35", "*", "Viral Infection"),
     ("130**", "≥35", "*", "Viral Infection")],
    columns=HOSPITAL_QI + ["Condition"])
ALICE = pd.DataFrame({"Zip code": ["13012"], "Age": [28], "Nationality": ["Indian"], "Condition": ["AIDS"]})


def hospital(targets=ALICE, **options):
    return intersection_attack([HOSPITAL_A, HOSPITAL_B], targets, quasi_identifiers=HOSPITAL_QI,
                               sensitive="Condition", **options)


def test_hospital_example_only_aids_survives():
    result = hospital()
    values = list(result.values)
    assert [v for v, kept in zip(values, result.posterior[0]) if kept] == ["AIDS"]
    assert {v for v, kept in zip(values, result.sets[0][0]) if kept} == {"AIDS", "Heart Disease", "Viral Infection"}
    assert {v for v, kept in zip(values, result.sets[1][0]) if kept} == {"AIDS", "Tuberculosis", "Flu", "Cancer"}
    assert result.class_sizes[0].tolist() == [4, 6]          # four rows in (a), six in (b)
    assert result.ea[0].tolist() == [3, 4]                   # EA_ij: distinct conditions (Definition 8)
    assert result.ea_posterior.tolist() == [1]
    assert result.anon_drop.tolist() == [2]                  # min(3, 4) − 1
    assert result.confidence.tolist() == [1.0]
    assert result.vulnerable.tolist() == [True]
    assert result.pvp(1.0) == 100.0                          # a perfect breach
    assert result.true_value_kept.tolist() == [True]
    summary = result.summary()
    assert summary["pvp"][0] == {"confidence": 1.0, "targets": 1, "percent": 100.0, "correct": 1,
                                 "correct_percent": 100.0}
    assert result.per_target()["values_left"].tolist() == ["AIDS"]


def test_hospital_other_patients():
    # A 45-year-old: (a) ≥40 {cancer, heart disease, viral infection}, (b) ≥35 {cancer, tuberculosis,
    # viral infection}: two values left. A 33-year-old: (a) 3* {cancer} and (b) <35: cancer.
    people = pd.DataFrame({"Zip code": ["13068", "13053"], "Age": [45, 33], "Nationality": ["x", "y"]})
    result = hospital(people)
    left = result.per_target()["values_left"].tolist()
    assert left == ["Cancer|Viral Infection", "Cancer"]
    assert result.ea.tolist() == [[3, 3], [1, 4]]
    assert result.anon_drop.tolist() == [1, 0]
    assert result.vulnerable.tolist() == [True, False]
    assert result.pvp(1.0) == 50.0 and result.pvp(0.5) == 100.0
    assert result.truth is None and result.true_value_kept is None


# ---------------------------------------------------------------------------------------------
# The parser


def covered(text, values, numeric=None, **options):
    texts = [str(v) for v in values]
    if numeric is None:
        numeric = all(t == "" or _isnum(t) for t in texts) and any(t != "" for t in texts)
    cell = parse_published_value(text, numeric=numeric, column="c", **options)
    return [t for t, hit in zip(texts, cell.contains(ColumnValues.of(texts, numeric))) if hit]


def _isnum(text):
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


AGES = [19, 20, 21, 29, 30, 34, 35, 39, 40, 41, ""]


@pytest.mark.parametrize("text, expected", [
    ("[21-34]", [21, 29, 30, 34]),                  # Mondrian
    ("20-39", [20, 21, 29, 30, 34, 35, 39]),        # ARX interval label
    ("[20,40)", [20, 21, 29, 30, 34, 35, 39]),
    ("[20, 40[", [20, 21, 29, 30, 34, 35, 39]),
    ("(20,40]", [21, 29, 30, 34, 35, 39, 40]),
    ("]20; 30]", [21, 29, 30]),
    ("<30", [19, 20, 21, 29]),
    ("<=30", [19, 20, 21, 29, 30]),
    ("≥40", [40, 41]),
    (">= 40", [40, 41]),
    (">39", [40, 41]),
    ("3*", [30, 34, 35, 39]),                       # a mask: each * one character
    ("*", AGES),                                    # everything, the missing value too
    ("{20,35}", [20, 35]),
    ("35", [35]),
    ("35.0", [35]),
    ("[21-29] or missing", [21, 29, ""]),
    ("", [""]),
])
def test_parser_on_numbers(text, expected):
    assert covered(text, AGES) == [str(v) for v in expected]


def test_parser_negative_and_decimal_ranges():
    values = [-7, -5, -3, -1, 0, 1.5, 2.25]
    assert covered("[-5--1]", values) == ["-5", "-3", "-1"]
    assert covered("[0-2.25]", values) == ["0", "1.5", "2.25"]
    assert covered("-5", values) == ["-5"]


def test_parser_masks_and_text():
    zips = ["13012", "13053", "1301", "130123", "14850"]
    assert covered("130**", zips, numeric=False) == ["13012", "13053"]
    assert covered("130**", zips, numeric=True) == ["13012", "13053"]
    assert covered("1485*", zips) == ["14850"]
    words = ["Married-civ-spouse", "Divorced", "Never-married", ""]
    assert covered("Married-civ-spouse", words) == ["Married-civ-spouse"]   # not a range: a text column
    assert covered("{Divorced,Never-married}", words) == ["Divorced", "Never-married"]
    assert covered("Widowed", words) == []
    cell = parse_published_value("Widowed", column="c")
    assert cell.plain


def test_parser_hierarchy_nodes_and_orders():
    h = Hierarchy([["Married-civ-spouse", "spouse present", "*"], ["Divorced", "spouse not present", "*"],
                   ["Never-married", "spouse not present", "*"]])
    nodes = hierarchy_nodes(h)
    assert nodes["spouse not present"] == {"Divorced", "Never-married"}
    assert nodes["*"] == {"Married-civ-spouse", "Divorced", "Never-married"}
    words = ["Married-civ-spouse", "Divorced", "Never-married"]
    assert covered("spouse not present", words, nodes=nodes) == ["Divorced", "Never-married"]
    assert covered("Divorced", words, nodes=nodes) == ["Divorced"]
    ages = Hierarchy([[str(a), f"{a // 10 * 10}-{a // 10 * 10 + 9}", "*"] for a in range(20, 40)])
    assert covered("20-29", [19, 20, 25, 29, 30], nodes=hierarchy_nodes(ages)) == ["20", "25", "29"]
    order = ["Preschool", "HS-grad", "Some-college", "Bachelors", "Masters"]
    assert covered("[HS-grad-Bachelors]", order, order=order) == ["HS-grad", "Some-college", "Bachelors"]


@pytest.mark.parametrize("text, numeric, options, fragment", [
    ("young", True, {}, "'young' in column 'c'"),
    ("[40-20]", True, {}, "runs backwards"),
    ("(40,20)", True, {}, "runs backwards"),
    ("{20,thirty}", True, {}, "'thirty' is not a number"),
    ("spouse away", False, {"nodes": {"spouse present": frozenset({"Married-civ-spouse"})}}, "'spouse away'"),
])
def test_parser_errors_name_the_value_and_column(text, numeric, options, fragment):
    with pytest.raises(UnreadableValueError) as info:
        parse_published_value(text, numeric=numeric, column="c", where="release 2", **options)
    message = str(info.value)
    assert fragment in message and "release 2" in message and message.count("\n") == 0


# ---------------------------------------------------------------------------------------------
# Small random tables, releases and brute-force adversaries

EDU = [f"e{i}" for i in range(8)]
EDU_HIERARCHY = Hierarchy([[e, f"g{i // 3}", "*"] for i, e in enumerate(EDU)])
AGE_HIERARCHY = Hierarchy([[str(a), f"{a // 10 * 10}-{a // 10 * 10 + 9}", "*"] for a in range(18, 80)])
SEX_HIERARCHY = Hierarchy([["F", "*"], ["M", "*"]])
DISEASES = [f"d{i}" for i in range(9)]
QI = ["age", "sex", "edu"]


def table(seed: int, n: int = 90) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.integers(18, 80, n), "sex": rng.choice(["F", "M"], n),
                         "edu": rng.choice(EDU, n), "disease": rng.choice(DISEASES, n)})


def dataset(frame: pd.DataFrame, hierarchies: bool = True) -> Dataset:
    h = {"edu": EDU_HIERARCHY, "age": AGE_HIERARCHY, "sex": SEX_HIERARCHY} if hierarchies else {"edu": EDU_HIERARCHY}
    return Dataset(frame, quasi_identifiers=QI, sensitive=["disease"], hierarchies=h)


def brute_generalized(release, frame: pd.DataFrame, rows) -> list[set]:
    """For each target row: the union of the value sets of the released classes whose cells
    cover its original codes (read from the release's own cells, not from the published text)."""
    ds, classes = release.dataset, release.classes
    released = np.flatnonzero(~release.failing) if release.suppressed_style == "remove" else \
        np.arange(classes.n_classes)
    row_class = classes.row_class
    sets = []
    for r in rows:
        hit = np.ones(classes.n_classes, dtype=bool)
        for j, q in enumerate(ds.quasi_identifiers):
            cells = classes.cells(j)
            onehot = np.zeros(ds.column(q).cardinality)
            onehot[ds.column(q).codes[r]] = 1.0
            hit &= cells.overlap(onehot)[classes.keys[:, j]] > 0
        chosen = [c for c in released if hit[c]]
        if not chosen:
            sets.append(set(frame["disease"].iloc[np.flatnonzero(~release.failing[row_class])]))
            continue
        members = np.isin(row_class, chosen)
        sets.append(set(frame["disease"][members]))
    return sets


def brute_nearest(release, frame: pd.DataFrame, rows) -> list[set]:
    """For each target row: the union of the value sets of the published tuples nearest to it,
    distances computed one by one from the manifest's standardization."""
    spec = release.recoding["standardization"]
    published = release.data
    tuples = {}
    for _, row in published.iterrows():
        tuples.setdefault(tuple(str(row[q]) for q in QI), set()).add(row["disease"])

    def z(q, value):
        s = spec[q]
        return (float(value) - s["mean"]) / s["std"] if s["std"] else 0.0

    sets = []
    for r in rows:
        target = frame.iloc[r]
        distance = {}
        for key in tuples:
            d = 0.0
            for q, v in zip(QI, key):
                if spec[q]["kind"] == "numeric":
                    d += (z(q, target[q]) - z(q, v)) ** 2
                else:
                    d += float(str(target[q]) != v)
            distance[key] = d
        best = min(distance.values())
        sets.append(set().union(*(tuples[key] for key, d in distance.items() if d <= best + 1e-9)))
    return sets


def found(result, j, t) -> set:
    return {v for v, kept in zip(result.values, result.sets[j][t]) if kept}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("mode", ["strict", "relaxed"])
def test_mondrian_with_mdav_matches_brute_force(seed, mode):
    frame = table(seed)
    other = pd.concat([frame.iloc[:60], table(seed + 100, 40)], ignore_index=True)  # overlapping populations
    mondrian = Mondrian([KAnonymity(4)], mode=mode).fit_transform(dataset(frame, hierarchies=False))
    mdav = MDAV([KAnonymity(3)]).fit_transform(dataset(other))
    rows = list(range(60))
    result = intersection_attack([mondrian, mdav], frame.iloc[rows])
    assert [r.kind for r in result.releases] == ["generalized", "microaggregated"]
    assert result.releases[1].standardization == "manifest"
    expect_a = brute_generalized(mondrian, frame, rows)
    expect_b = brute_nearest(mdav, other, rows)
    for t in range(len(rows)):
        assert found(result, 0, t) == expect_a[t]
        assert found(result, 1, t) == expect_b[t]
        assert {v for v, kept in zip(result.values, result.posterior[t]) if kept} == expect_a[t] & expect_b[t]
    assert result.ea.tolist() == [[len(a), len(b)] for a, b in zip(expect_a, expect_b)]
    assert (result.anon_drop == result.ea.min(axis=1) - result.ea_posterior).all()
    # Every target is in the Mondrian release, so some class contains it.
    assert (result.candidates[:, 0] >= 1).all()
    if mode == "strict":
        assert (result.candidates[:, 0] == 1).all()   # strict partitions never overlap


@pytest.mark.parametrize("seed", [3, 4])
def test_fulldomain_with_mondrian_matches_brute_force(seed):
    frame = table(seed, 120)
    full = FullDomain([KAnonymity(3)], suppression_limit=0.05).fit_transform(dataset(frame))
    mondrian = Mondrian([KAnonymity(3)]).fit_transform(dataset(frame))
    rows = list(range(0, 120, 2))
    result = intersection_attack([full, mondrian], frame.iloc[rows])
    expect_a = brute_generalized(full, frame, rows)
    expect_b = brute_generalized(mondrian, frame, rows)
    for t in range(len(rows)):
        assert found(result, 0, t) == expect_a[t]
        assert found(result, 1, t) == expect_b[t]


def test_csv_releases_with_manifests_and_hierarchies_agree_with_release_objects(tmp_path):
    frame = table(5, 120)
    full = FullDomain([KAnonymity(3)]).fit_transform(dataset(frame))
    mondrian = Mondrian([KAnonymity(3)]).fit_transform(dataset(frame))
    mdav = MDAV([KAnonymity(3)]).fit_transform(dataset(frame))
    paths = []
    for name, release in (("full", full), ("mondrian", mondrian), ("mdav", mdav)):
        release.to_csv(tmp_path / f"{name}.csv")
        release.write_manifest(tmp_path / f"{name}.json")
        paths.append(name)
    frame.to_csv(tmp_path / "targets.csv", index=False)
    direct = intersection_attack([full, mondrian, mdav], frame)
    hierarchies = {"edu": EDU_HIERARCHY, "age": AGE_HIERARCHY, "sex": SEX_HIERARCHY}
    # The curator's view of the files (each manifest with its private file) is the release objects'.
    curator = [PublishedRelease(tmp_path / f"{n}.csv", manifest=combined(
        json.loads((tmp_path / f"{n}.json").read_text()), json.loads((tmp_path / f"{n}.private.json").read_text())))
        for n in paths]
    from_files = intersection_attack(curator, tmp_path / "targets.csv", hierarchies=hierarchies)
    for a, b in zip(direct.sets, from_files.sets):
        assert np.array_equal(a, b)
    assert from_files.releases[2].kind == "microaggregated"
    # The published manifests with the public hierarchies: the generalized releases read alike; MDAV's
    # standardization is the input's, kept in the private file, so it is taken from the release.
    files = [PublishedRelease(tmp_path / f"{n}.csv", manifest=tmp_path / f"{n}.json") for n in paths]
    public = intersection_attack(files, tmp_path / "targets.csv", hierarchies=hierarchies)
    for a, b in zip(direct.sets[:2], public.sets[:2]):
        assert np.array_equal(a, b)
    assert public.releases[2].standardization == "release"
    # Without the hierarchy, the Mondrian manifest names nodes veil cannot read: refused.
    with pytest.raises(UnreadableValueError, match="column 'edu'"):
        intersection_attack(files, tmp_path / "targets.csv")
    # The published full-domain manifest holds no value map (its levels are read through the
    # hierarchies); the curator's, with the private file's, is enough without them.
    assert "generalization" not in json.loads((tmp_path / "full.json").read_text())
    pair = intersection_attack([curator[0], curator[2]], tmp_path / "targets.csv")
    assert np.array_equal(pair.sets[0], direct.sets[0])


def test_microaggregated_without_manifest_standardizes_from_the_release():
    frame = table(6, 80)
    mdav = MDAV([KAnonymity(4)]).fit_transform(dataset(frame))
    bare = PublishedRelease(mdav.data, kind="microaggregated")
    other = Mondrian([KAnonymity(4)]).fit_transform(dataset(frame))
    result = intersection_attack([other, bare], frame, quasi_identifiers=QI, sensitive="disease")
    assert result.releases[1].standardization == "release"
    published = mdav.data
    ages = published["age"].astype(float)
    mean, std = ages.mean(), ages.std(ddof=0)
    tuples = {}
    for _, row in published.iterrows():
        tuples.setdefault((float(row["age"]), row["sex"], row["edu"]), set()).add(row["disease"])
    for t in range(len(frame)):
        target = frame.iloc[t]
        distance = {key: ((target["age"] - key[0]) / std) ** 2 + (target["sex"] != key[1]) + (target["edu"] != key[2])
                    for key in tuples}
        best = min(distance.values())
        expected = set().union(*(tuples[key] for key, d in distance.items() if d <= best + 1e-9))
        assert found(result, 1, t) == expected
    assert mean > 0


@settings(max_examples=15, **PROPERTY)
@given(seed=st.integers(0, 10_000), mode=st.sampled_from(["strict", "relaxed"]), k=st.integers(2, 6),
       shuffle_seed=st.integers(0, 2**32 - 1))
def test_results_unchanged_when_rows_are_shuffled(seed, mode, k, shuffle_seed):
    frame = table(seed, 70)
    releases = [PublishedRelease.from_release(Mondrian([KAnonymity(k)], mode=mode).fit_transform(dataset(frame))),
                PublishedRelease.from_release(MDAV([KAnonymity(k)]).fit_transform(dataset(frame)))]
    targets = frame.iloc[::2]
    before = intersection_attack(releases, targets)
    rng = np.random.default_rng(shuffle_seed)
    shuffled = []
    for rel in releases:
        perm = rng.permutation(rel.table.num_rows)
        shuffled.append(PublishedRelease(rel.table.take(perm), manifest=rel.manifest, hierarchies=rel.hierarchies))
    after = intersection_attack(shuffled, targets)
    assert list(before.values) == list(after.values)
    for a, b in zip(before.sets, after.sets):
        assert np.array_equal(a, b)
    for name in ("candidates", "class_sizes", "ea", "posterior", "ea_posterior", "anon_drop", "confidence"):
        assert np.array_equal(getattr(before, name), getattr(after, name)), name


# ---------------------------------------------------------------------------------------------
# Several classes, none, or an empty intersection


def test_overlapping_cells_give_the_union_and_unlocated_targets_every_value():
    relaxed = pd.DataFrame({"age": ["[20-30]", "[20-30]", "[25-35]", "[25-35]", "[50-60]", "*"],
                            "s": ["a", "b", "c", "d", "e", "f"]})
    plain = pd.DataFrame({"age": ["[20-40]"] * 3 + ["[41-70]"] * 3, "s": ["a", "c", "e", "b", "d", "f"]})
    people = pd.DataFrame({"age": [27, 22, 45]})
    result = intersection_attack([relaxed, plain], people, quasi_identifiers="age", sensitive="s")
    # 27 is in [20-30], [25-35] and * (a suppressed row that could be anyone's).
    assert result.candidates[:, 0].tolist() == [3, 2, 1]
    assert found(result, 0, 0) == {"a", "b", "c", "d", "f"}
    assert found(result, 0, 1) == {"a", "b", "f"}
    assert found(result, 0, 2) == {"f"}
    assert result.class_sizes[:, 0].tolist() == [5, 3, 1]
    assert result.per_target()["values_left"].tolist() == ["a|c", "a", "f"]
    assert any("several classes" in note for note in result.notes)


def test_unlocated_target_learns_nothing_from_that_release():
    a = pd.DataFrame({"age": ["[20-30]", "[20-30]", "[31-40]"], "s": ["x", "y", "z"]})
    b = pd.DataFrame({"age": ["[20-40]", "[20-40]", "[20-40]"], "s": ["x", "y", "w"]})
    result = intersection_attack([a, b], pd.DataFrame({"age": [55]}), quasi_identifiers="age", sensitive="s")
    assert result.candidates.tolist() == [[0, 0]]
    assert found(result, 0, 0) == {"x", "y", "z"} and found(result, 1, 0) == {"x", "y", "w"}
    assert result.class_sizes.tolist() == [[3, 3]]
    assert any("match no class" in note for note in result.notes)


def test_empty_intersection_has_confidence_zero():
    a = pd.DataFrame({"age": ["[20-30]", "[20-30]"], "s": ["x", "y"]})
    b = pd.DataFrame({"age": ["[20-30]", "[20-30]"], "s": ["z", "w"]})
    result = intersection_attack([a, b], pd.DataFrame({"age": [25]}), quasi_identifiers="age", sensitive="s")
    assert result.ea_posterior.tolist() == [0]
    assert result.confidence.tolist() == [0.0]
    assert result.pvp(0.01) == 0.0
    assert any("empty intersection" in note for note in result.notes)


def test_correct_location_is_reported_when_the_true_rows_are_given():
    frame = table(8, 80)
    # The true rows are the input's: both releases keep its order (as the experiments that pass
    # target_rows do).
    mondrian = Mondrian([KAnonymity(4)]).fit_transform(dataset(frame), shuffle=False)
    mdav = MDAV([KAnonymity(4)]).fit_transform(dataset(frame), shuffle=False)
    rows = np.arange(80)
    result = intersection_attack([PublishedRelease.from_release(mondrian, target_rows=rows),
                                  PublishedRelease.from_release(mdav, target_rows=rows)], frame)
    assert result.correctly_located[:, 0].all()          # containment always finds the true class
    truth_in_b = result.sets[1][np.arange(80), result.truth]
    assert (truth_in_b | ~result.correctly_located[:, 1]).all()
    assert result.summary()["releases"][1]["correctly_located"] == int(result.correctly_located[:, 1].sum())


# ---------------------------------------------------------------------------------------------
# Bad input


def test_bad_input_raises_one_sentence():
    a = HOSPITAL_A
    cases = [
        (lambda: intersection_attack([a, HOSPITAL_B.drop(columns="Age")], ALICE, quasi_identifiers=HOSPITAL_QI,
                                     sensitive="Condition"), ReleaseMismatchError, "release 2 has no column 'Age'"),
        (lambda: intersection_attack([a, HOSPITAL_B.drop(columns="Condition")], ALICE,
                                     quasi_identifiers=HOSPITAL_QI, sensitive="Condition"),
         ReleaseMismatchError, "no sensitive column 'Condition'"),
        (lambda: hospital(ALICE.drop(columns="Age")), TargetsError, "targets table has no column 'Age'"),
        (lambda: hospital(confidence=[0]), ParameterError, "(0, 1]"),
        (lambda: hospital(confidence=[1.5]), ParameterError, "(0, 1]"),
        (lambda: hospital(confidence=[]), ParameterError, "confidence level"),
        (lambda: intersection_attack([a], ALICE, quasi_identifiers=HOSPITAL_QI, sensitive="Condition"),
         ParameterError, "at least two releases"),
        (lambda: intersection_attack([a, HOSPITAL_B], ALICE, quasi_identifiers=HOSPITAL_QI), ParameterError,
         "--sensitive"),
        (lambda: intersection_attack([a, HOSPITAL_B.assign(Age="young")], ALICE, quasi_identifiers=HOSPITAL_QI,
                                     sensitive="Condition"), UnreadableValueError, "'young' in column 'Age'"),
        (lambda: hospital(id_column="name"), TargetsError, "no id column 'name'"),
    ]
    for call, error, fragment in cases:
        with pytest.raises(error) as info:
            call()
        assert fragment in str(info.value), (fragment, str(info.value))
        assert "\n" not in str(info.value)


def test_levels_are_parsed_in_several_spellings():
    assert parse_levels("1, 0.5,1/3,25%") == [1.0, 0.5, 1 / 3, 0.25]
    with pytest.raises(ParameterError, match="'abc'"):
        parse_levels("1,abc")


# ---------------------------------------------------------------------------------------------
# The command


def app() -> typer.Typer:
    cli = typer.Typer()
    cli.command("intersection")(intersection_command)

    @cli.callback()
    def main():
        """Test app."""

    return cli


@pytest.fixture()
def hospital_files(tmp_path):
    HOSPITAL_A.to_csv(tmp_path / "a.csv", index=False)
    HOSPITAL_B.to_csv(tmp_path / "b.csv", index=False)
    people = pd.concat([ALICE, pd.DataFrame({"Zip code": ["13068"], "Age": [45], "Nationality": ["x"],
                                             "Condition": ["Cancer"]})], ignore_index=True)
    people.insert(0, "name", ["Alice", "Bob"])
    people.to_csv(tmp_path / "people.csv", index=False)
    return tmp_path


def run(args):
    return CliRunner().invoke(app(), ["intersection", *map(str, args)])


def test_cli_summary_and_per_target_file(hospital_files):
    d = hospital_files
    out = d / "per-target.csv"
    result = run([d / "a.csv", d / "b.csv", "--targets", d / "people.csv", "--qi", ",".join(HOSPITAL_QI),
                  "--sensitive", "Condition", "--id", "name", "--out", out])
    assert result.exit_code == 1, result.output   # Alice is pinned
    assert "Intersection attack on Condition across 2 releases" in result.output
    assert "perfect breach" in result.output and "Anon_Drop" in result.output
    per = pd.read_csv(out)
    assert per["target"].tolist() == ["Alice", "Bob"]
    assert per["values_left"].tolist() == ["AIDS", "Cancer|Viral Infection"]


def test_cli_json(hospital_files):
    d = hospital_files
    result = run([d / "a.csv", d / "b.csv", "--targets", d / "people.csv", "--qi", ",".join(HOSPITAL_QI),
                  "--sensitive", "Condition", "--confidence", "100%,1/2", "--json"])
    assert result.exit_code == 1, result.output   # Alice is pinned
    summary = json.loads(result.output)
    assert summary["targets"] == 2 and summary["vulnerable"] == 2
    assert [(p["confidence"], p["targets"]) for p in summary["pvp"]] == [(1.0, 1), (0.5, 2)]
    assert summary["mean_anon_drop"] == 1.5


def test_cli_manifests_and_microaggregated_releases(tmp_path):
    frame = table(9, 100)
    mondrian = Mondrian([KAnonymity(4)]).fit_transform(dataset(frame, hierarchies=False))
    mdav = MDAV([KAnonymity(4)]).fit_transform(dataset(frame))
    mondrian.to_csv(tmp_path / "m.csv")
    mondrian.write_manifest(tmp_path / "m.json")
    mdav.to_csv(tmp_path / "v.csv")
    mdav.write_manifest(tmp_path / "v.json")
    frame.to_csv(tmp_path / "t.csv", index=False)
    edu = tmp_path / "edu.csv"
    EDU_HIERARCHY.to_csv(edu)
    expected = intersection_attack([mondrian, mdav], frame).summary()
    with_manifests = run([tmp_path / "m.csv", tmp_path / "v.csv", "--targets", tmp_path / "t.csv",
                          "--manifest", "1=" + str(tmp_path / "m.json"), "--manifest", f"v.csv={tmp_path / 'v.json'}",
                          "--hierarchy", f"edu={edu}", "--json"])
    got = json.loads(with_manifests.output)
    perfect = next(p["targets"] for p in got["pvp"] if p["confidence"] == 1.0)
    assert with_manifests.exit_code == (1 if perfect else 0), with_manifests.output
    assert got["pvp"] == expected["pvp"] and got["mean_ea_posterior"] == expected["mean_ea_posterior"]
    bare = run([tmp_path / "m.csv", tmp_path / "v.csv", "--targets", tmp_path / "t.csv", "--qi", ",".join(QI),
                "--sensitive", "disease", "--microaggregated", "2", "--hierarchy", f"edu={edu}", "--json"])
    assert bare.exit_code in (0, 1), bare.output
    assert json.loads(bare.output)["releases"][1]["standardization"] == "release"


@pytest.mark.parametrize("change, fragment", [
    (lambda d: HOSPITAL_B.drop(columns="Age").to_csv(d / "b.csv", index=False), "release 2 (b.csv) has no column"),
    (lambda d: ALICE.drop(columns="Zip code").to_csv(d / "people.csv", index=False), "no column 'Zip code'"),
    (lambda d: HOSPITAL_B.assign(Age="young").to_csv(d / "b.csv", index=False), "'young' in column 'Age'"),
])
def test_cli_bad_input_exits_2(hospital_files, change, fragment):
    d = hospital_files
    change(d)
    result = run([d / "a.csv", d / "b.csv", "--targets", d / "people.csv", "--qi", ",".join(HOSPITAL_QI),
                  "--sensitive", "Condition", "--out", d / "out.csv"])
    assert result.exit_code == 2
    assert fragment in result.output and "Traceback" not in result.output
    assert not (d / "out.csv").exists()


@pytest.mark.parametrize("extra, fragment", [
    (["--confidence", "0"], "(0, 1]"),
    (["--confidence", "1.5"], "(0, 1]"),
    (["--confidence", "high"], "'high'"),
    (["--manifest", "3=x.json"], "release 3"),
    (["--microaggregated", "c.csv"], "not one of the releases"),
    (["--sensitive", "Condition,Age"], "one column"),
])
def test_cli_bad_options_exit_2(hospital_files, extra, fragment):
    d = hospital_files
    args = [d / "a.csv", d / "b.csv", "--targets", d / "people.csv", "--qi", ",".join(HOSPITAL_QI)]
    if "--sensitive" not in extra:
        args += ["--sensitive", "Condition"]
    result = run(args + extra)
    assert result.exit_code == 2, result.output
    assert fragment in result.output


def test_cli_refuses_one_release_and_overwriting_an_input(hospital_files):
    d = hospital_files
    one = run([d / "a.csv", "--targets", d / "people.csv", "--qi", "Age", "--sensitive", "Condition"])
    assert one.exit_code == 2 and "at least two releases" in one.output
    clash = run([d / "a.csv", d / "b.csv", "--targets", d / "people.csv", "--qi", ",".join(HOSPITAL_QI),
                 "--sensitive", "Condition", "--out", d / "a.csv"])
    assert clash.exit_code == 2 and "input" in clash.output


def test_every_error_is_a_veil_error():
    for error in (ReleaseMismatchError, TargetsError, UnreadableValueError):
        assert issubclass(error, VeilError)


def test_mondrian_value_sets_with_commas_are_read_from_the_manifest():
    frame = table(10, 60)
    frame["city"] = np.random.default_rng(0).choice(["Paris, TX", "Paris, France", "Rome"], 60)
    ds = Dataset(frame, quasi_identifiers=["age", "city"], sensitive=["disease"])
    mondrian = Mondrian([KAnonymity(6)]).fit_transform(ds)
    labels = set(mondrian.data["city"])
    assert any(label.startswith("{") and label.count(",") > 1 for label in labels)   # commas inside values
    other = Mondrian([KAnonymity(3)]).fit_transform(ds)
    result = intersection_attack([mondrian, other], frame)
    assert (result.candidates == 1).all()
    expect = brute_generalized(mondrian, frame, range(60))
    assert all(found(result, 0, t) == expect[t] for t in range(60))
