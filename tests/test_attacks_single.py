"""Single-release attacks and disclosure measures: the papers' examples, hand-computed measures,
invariance under shuffling, a brute-force adversary, and the ``veil attack single`` command."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import typer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from veil import Dataset, DeltaDisclosure, EquivalenceClasses, Hierarchy, KAnonymity
from veil.anonymize import FullDomain
from veil.attacks import (attack_release, background_knowledge, disclosure, homogeneity, release_classes,
                          similarity, skewness)
from veil.cli.attack import attack_app
from veil.errors import ColumnError, ParameterError, VeilError

# Machanavajjhala et al., "ℓ-diversity: privacy beyond k-anonymity", Fig. 2: the 4-anonymous
# inpatient table generalized from Fig. 1 (zip code, age, nationality; condition is sensitive).
# Bob (31, zip 13053) falls in the third class, where everyone has cancer: homogeneity. Umeko
# (21, Japanese, zip 13068) falls in the first class, {heart disease, viral infection}; knowing
# Japanese have a very low incidence of heart disease, the adversary rules it out (m = 1) and
# learns she has a viral infection.
INPATIENT = pd.DataFrame(
    [("130**", "<30", "*", "Heart Disease"), ("130**", "<30", "*", "Heart Disease"),
     ("130**", "<30", "*", "Viral Infection"), ("130**", "<30", "*", "Viral Infection"),
     ("1485*", "≥40", "*", "Cancer"), ("1485*", "≥40", "*", "Heart Disease"),
     ("1485*", "≥40", "*", "Viral Infection"), ("1485*", "≥40", "*", "Viral Infection"),
     ("130**", "3*", "*", "Cancer"), ("130**", "3*", "*", "Cancer"),
     ("130**", "3*", "*", "Cancer"), ("130**", "3*", "*", "Cancer")],
    columns=["Zip Code", "Age", "Nationality", "Condition"])
INPATIENT_QI = ["Zip Code", "Age", "Nationality"]
UMEKO_ROW = 2  # a viral infection in the class (130**, <30, *)


def inpatient_classes() -> EquivalenceClasses:
    return release_classes(INPATIENT, quasi_identifiers=INPATIENT_QI, sensitive="Condition")


def class_of(classes: EquivalenceClasses, **qi) -> int:
    labels = classes.class_labels()
    hit = np.logical_and.reduce([labels[k].to_numpy() == v for k, v in qi.items()])
    (index,) = np.flatnonzero(hit)
    return int(index)


def test_homogeneity_exposes_bob():
    classes = inpatient_classes()
    result = homogeneity(classes)
    bob = class_of(classes, **{"Zip Code": "130**", "Age": "3*"})
    assert result.classes.tolist() == [bob]
    assert result.records.tolist() == [8, 9, 10, 11]
    assert result.summary()["values"] == {"Cancer": 4}
    assert result.summary()["records"] == 4 and result.summary()["classes"] == 1


def test_background_knowledge_pins_umeko_at_m_1():
    classes = inpatient_classes()
    result = background_knowledge(classes, threshold=1.0)
    umeko = class_of(classes, **{"Zip Code": "130**", "Age": "<30"})
    # The table holds 3 conditions, so m runs 0 … 3 − 2 = 1.
    assert result.max_m == 1
    # m = 0: only Bob's homogeneous class is pinned; Umeko is a coin flip (posterior 1/2).
    assert result.top_posterior[0, umeko] == 0.5
    assert UMEKO_ROW not in result.records_at(0, classes).tolist()
    # m = 1: ruling out heart disease pins Umeko's class; the ≥40 class (3 values) is not.
    assert result.pinned_m[umeko] == 1
    assert UMEKO_ROW in result.records_at(1, classes, pinned=True).tolist()
    assert result.records_at(1, classes, pinned=True).tolist() == [0, 1, 2, 3, 8, 9, 10, 11]
    assert result.classes_pinned.tolist() == [1, 2]
    assert result.records_pinned.tolist() == [4, 8]
    viral = list(classes.dataset.column("Condition").labels).index("Viral Infection")
    assert result.exposed_m[umeko, viral] == 1
    # At threshold 1 "exposed" is "pinned".
    assert result.records_exposed.tolist() == result.records_pinned.tolist()


def test_background_knowledge_threshold_and_the_three_value_class():
    classes = inpatient_classes()
    old = class_of(classes, **{"Zip Code": "1485*", "Age": "≥40"})
    result = background_knowledge(classes, threshold=2 / 3)
    # Class ≥40 holds viral ×2, heart, cancer. Ruling out one other value (m = 1) leaves viral
    # at 2/3 (exposed at 2/3); heart or cancer at 1/3 after ruling out viral, 1/2 after both.
    viral = list(classes.dataset.column("Condition").labels).index("Viral Infection")
    assert result.top_posterior[:, old].tolist() == [0.5, pytest.approx(2 / 3)]
    assert result.exposed_m[old, viral] == 1
    assert result.records_exposed.tolist() == [4, 4 + 4 + 2]
    assert result.summary()["by_m"][1]["records_exposed"] == 10


def brute_force_posterior(counts: np.ndarray, m: int) -> np.ndarray:
    """For each value present, the largest posterior over every choice of m other values to rule out."""
    out = np.zeros(len(counts))
    for s in np.flatnonzero(counts):
        others = [v for v in np.flatnonzero(counts) if v != s]
        best = 0.0
        for ruled in itertools.combinations(others, min(m, len(others))):
            left = counts[s] + sum(counts[v] for v in others if v not in ruled)
            best = max(best, counts[s] / left)
        out[s] = best
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 4), min_size=4, max_size=4).filter(any), min_size=1, max_size=5),
       st.sampled_from([0.3, 0.5, 2 / 3, 0.75, 1.0]))
def test_background_knowledge_matches_a_brute_force_adversary(matrix, threshold):
    counts = np.array(matrix)
    rows = [(f"c{c}", f"v{v}") for c in range(len(counts)) for v in range(4) for _ in range(counts[c, v])]
    frame = pd.DataFrame(rows, columns=["q", "s"])
    classes = release_classes(frame, quasi_identifiers="q", sensitive="s")
    n_values = int((counts.sum(axis=0) > 0).sum())
    result = background_knowledge(classes, max_m=max(n_values - 1, 0), threshold=threshold)
    labels = list(classes.dataset.column("s").labels)
    present = counts.sum(axis=0) > 0
    matrix_here = counts[:, present]  # the release only knows the values it holds
    order = [labels.index(f"v{v}") for v in np.flatnonzero(present)]
    for m in result.m:
        posterior = np.array([brute_force_posterior(row, m) for row in matrix_here])
        expected = (posterior >= threshold - 1e-12) & (matrix_here > 0)
        got = (result.exposed_m[:, order] >= 0) & (result.exposed_m[:, order] <= m)
        assert (got == expected).all()
        assert np.allclose(result.top_posterior[m], posterior.max(axis=1))
        assert result.records_exposed[m] == matrix_here[expected].sum()
        pinned = (matrix_here > 0).sum(axis=1) - 1 <= m
        assert result.classes_pinned[m] == pinned.sum()


# A small table, by hand. Classes C1 = {a, a}, C2 = {a, b, b}, C3 = {a, b, c, c, c}; the table
# has a 4, b 3, c 3 of 10: p(T) = (0.4, 0.3, 0.3).
#   A_diff(C1) = ½(|0.4 − 1| + |0.3 − 0| + |0.3 − 0|)           = ½ · 1.2   = 0.6
#   A_diff(C2) = ½(|0.4 − 1/3| + |0.3 − 2/3| + |0.3 − 0|)       = ½ · 22/30 = 11/30
#   A_diff(C3) = ½(|0.4 − 0.2| + |0.3 − 0.2| + |0.3 − 0.6|)     = ½ · 0.6   = 0.3
#   A_know = (2 · 0.6 + 3 · 11/30 + 5 · 0.3) / 10 = (1.2 + 1.1 + 1.5) / 10 = 0.38
#   A_acc  = (2 · 1 + 3 · 2/3 + 5 · 3/5) / 10 − p(T, a) = 7/10 − 4/10 = 0.3
#   A_quot = (1/0.4, (2/3)/0.3, 0.6/0.3) = (2.5, 20/9, 2)
#   δ = max |log ratio| over present values = log 2.5 (C3's a: |log 0.5| = 0.69 is smaller)
SMALL = pd.DataFrame({"q": ["C1"] * 2 + ["C2"] * 3 + ["C3"] * 5,
                      "s": ["a", "a", "a", "b", "b", "a", "b", "c", "c", "c"]})


def test_disclosure_measures_by_hand():
    classes = release_classes(SMALL, quasi_identifiers="q", sensitive="s")
    result = disclosure(classes)
    assert result.a_diff == pytest.approx([0.6, 11 / 30, 0.3])
    assert result.a_quot == pytest.approx([2.5, 20 / 9, 2.0])
    assert result.a_know == pytest.approx(0.38)
    assert result.a_acc == pytest.approx(0.3)
    assert result.accuracy_base == pytest.approx(0.4)
    assert result.delta == pytest.approx(math.log(2.5))
    summary = result.summary()
    assert summary["a_know"] == pytest.approx(0.38) and summary["a_acc"] == pytest.approx(0.3)
    json.dumps(summary)


def test_delta_is_delta_disclosure_level():
    for frame, qi, s in ((SMALL, "q", "s"), (INPATIENT, INPATIENT_QI, "Condition")):
        classes = release_classes(frame, quasi_identifiers=qi, sensitive=s)
        assert disclosure(classes).delta == pytest.approx(DeltaDisclosure().evaluate(classes).level)


def test_trivial_sanitization_discloses_nothing():
    frame = SMALL.assign(q="*")
    classes = release_classes(frame, quasi_identifiers="q", sensitive="s")
    result = disclosure(classes)
    assert result.a_know == 0 and result.a_acc == 0 and result.delta == 0
    assert result.a_quot.tolist() == [1.0]
    assert len(homogeneity(classes).records) == 0 and len(skewness(classes).records) == 0


def test_skewness_by_hand():
    # p(T) = (0.4, 0.3, 0.3). Ratios: C1 a 2.5; C2 a 5/6, b 20/9; C3 a 0.5, b 2/3, c 2.
    classes = release_classes(SMALL, quasi_identifiers="q", sensitive="s")
    result = skewness(classes, factor=2)
    assert result.classes.tolist() == [0, 1, 2]
    assert result.records.tolist() == [0, 1, 3, 4, 7, 8, 9]
    assert result.class_records == 10
    assert skewness(classes, factor=2.3).classes.tolist() == [0]
    # Only values at most 0.3 of the table: a (0.4) no longer counts.
    assert skewness(classes, factor=2, rare=0.3).classes.tolist() == [1, 2]
    assert result.summary()["max_ratio"] == pytest.approx(2.5)


def li_table_3(arx_toy2_csv: Path, arx_toy2_hierarchy_paths: dict) -> EquivalenceClasses:
    """Li et al.'s Table 3 (the 3-diverse version of test2.csv), generalized here by hand.

    The data come from conftest's fixtures (the copy of ARX's ``test2.csv`` in ``tests/data``)."""
    raw = pd.read_csv(arx_toy2_csv, sep=";", dtype=str)
    released = raw.assign(ZIPCode=["476**", "476**", "476**", "4790*", "4790*", "4790*", "476**", "476**", "476**"],
                          Age=["2*", "2*", "2*", "≥40", "≥40", "≥40", "3*", "3*", "3*"])
    return release_classes(released, quasi_identifiers=["ZIPCode", "Age"], sensitive="Disease",
                           hierarchies={"Disease": arx_toy2_hierarchy_paths["Disease"]})


def test_similarity_on_li_table_3(arx_toy2_csv, arx_toy2_hierarchy_paths):
    classes = li_table_3(arx_toy2_csv, arx_toy2_hierarchy_paths)
    assert homogeneity(classes).classes.tolist() == []
    result = similarity(classes)
    first = class_of(classes, ZIPCode="476**", Age="2*")
    assert result.classes.tolist() == [first]
    assert result.records.tolist() == [0, 1, 2]
    assert result.summary()["groups"] == {"stomach disease": 3}
    assert result.summary()["beyond_homogeneity"] == 1
    # Level 2 groups: the first class is digestive; the others mix both branches.
    assert similarity(classes, level=2).summary()["groups"] == {"digestive system disease": 3}
    # Level 3 is the root: every class is under it.
    assert len(similarity(classes, level=3).classes) == 3


def test_skewness_on_li_table_3(arx_toy2_csv, arx_toy2_hierarchy_paths):
    # Each class has 3 records; gastric ulcer, flu and pneumonia are 1/9 of the table and 1/3 of
    # their class (ratio 3), the other values 2/9 and 1/3 (ratio 1.5).
    classes = li_table_3(arx_toy2_csv, arx_toy2_hierarchy_paths)
    result = skewness(classes, factor=3)
    assert len(result.classes) == 3
    diseases = classes.dataset.column("Disease").labels[classes.dataset.column("Disease").codes]
    assert sorted(diseases[result.records]) == ["flu", "gastric ulcer", "pneumonia"]
    assert len(skewness(classes, factor=1.5).records) == 9
    assert len(skewness(classes, factor=3.01).records) == 0


# Shuffling a release's rows changes which row numbers are exposed, not which records.
SENSITIVE_TREE = Hierarchy([["a1", "A", "*"], ["a2", "A", "*"], ["b1", "B", "*"], ["b2", "B", "*"],
                            ["c", "C", "*"]], name="test hierarchy")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["1*", "2*", "3*"]), st.sampled_from(["x", "y"]),
                          st.sampled_from(["a1", "a2", "b1", "b2", "c"])), min_size=1, max_size=30),
       st.randoms(use_true_random=False))
def test_attacks_unchanged_when_rows_are_shuffled(rows, random):
    frame = pd.DataFrame(rows, columns=["age", "sex", "s"])
    frame["id"] = np.arange(len(frame))
    order = list(range(len(frame)))
    random.shuffle(order)
    shuffled = frame.iloc[order].reset_index(drop=True)
    options = dict(quasi_identifiers=["age", "sex"], sensitive="s", hierarchies={"s": SENSITIVE_TREE})
    report = attack_release(frame, **options, threshold=0.6)
    again = attack_release(shuffled, **options, threshold=0.6)
    assert report.to_dict() == again.to_dict()
    for name in ("homogeneity", "background_knowledge", "skewness", "similarity"):
        a = getattr(report.by_sensitive["s"], name)
        b = getattr(again.by_sensitive["s"], name)
        assert sorted(frame["id"].to_numpy()[a.records]) == sorted(shuffled["id"].to_numpy()[b.records])
        assert (sorted(map(tuple, frame.iloc[a.records][["age", "sex", "s"]].to_numpy()))
                == sorted(map(tuple, shuffled.iloc[b.records][["age", "sex", "s"]].to_numpy())))


def test_release_object_and_its_csv_give_the_same_report(tmp_path, arx_toy2_csv, arx_toy2_hierarchy_paths):
    ds = Dataset(arx_toy2_csv, quasi_identifiers=["ZIPCode", "Age"], sensitive="Disease",
                 hierarchies=arx_toy2_hierarchy_paths)
    release = FullDomain([KAnonymity(3)], suppression_limit=0.0).fit(ds).transform(ds, shuffle=True, rng=7)
    from_release = attack_release(release)
    path = tmp_path / "release.csv"
    release.to_csv(path)
    from_file = attack_release(path, quasi_identifiers=["ZIPCode", "Age"], sensitive="Disease",
                               hierarchies={"Disease": arx_toy2_hierarchy_paths["Disease"]})
    assert from_release.to_dict() == from_file.to_dict()
    assert from_release.by_sensitive["Disease"].similarity is not None
    # The record indices are rows of the published table.
    published = release.data
    exposed = from_release.by_sensitive["Disease"].homogeneity
    assert (published.iloc[exposed.records]["Disease"].nunique() <= len(exposed.classes))
    # The released classes themselves can be attacked too, with the same verdicts.
    direct = homogeneity(release.released_classes)
    assert len(direct.records) == len(exposed.records)


def test_bad_parameters_are_one_sentence_errors():
    classes = inpatient_classes()
    cases = [
        (lambda: background_knowledge(classes, max_m=-1), "m must be"),
        (lambda: background_knowledge(classes, max_m=3), "holds 3 distinct values"),
        (lambda: background_knowledge(classes, threshold=0), "threshold must be in (0, 1]"),
        (lambda: background_knowledge(classes, threshold=1.5), "threshold must be in (0, 1]"),
        (lambda: skewness(classes, factor=1), "factor must be greater than 1"),
        (lambda: skewness(classes, rare=0), "rare share"),
        (lambda: similarity(classes), "needs a hierarchy"),
        (lambda: homogeneity(classes, "Age"), "not a sensitive column"),
        (lambda: attack_release(INPATIENT, quasi_identifiers=INPATIENT_QI), "need a sensitive column"),
        (lambda: attack_release(INPATIENT, quasi_identifiers=["Zipcode"], sensitive="Condition"), "does not exist"),
        (lambda: attack_release(INPATIENT, quasi_identifiers=INPATIENT_QI, sensitive="Condition", max_m=-2),
         "m must be"),
        (lambda: attack_release(INPATIENT, quasi_identifiers=INPATIENT_QI, sensitive="Condition", skew=0.5),
         "factor must be greater than 1"),
    ]
    for call, words in cases:
        with pytest.raises(VeilError) as info:
            call()
        message = str(info.value)
        assert words in message, message
        assert message.endswith((".", "?")) and "\n" not in message
    with pytest.raises(ColumnError):
        homogeneity(classes, "nope")
    with pytest.raises(ParameterError):
        similarity(li_like_with_hierarchy(), level=0)


def li_like_with_hierarchy() -> EquivalenceClasses:
    frame = pd.DataFrame({"q": ["x", "x", "y"], "s": ["a1", "a2", "c"]})
    return release_classes(frame, quasi_identifiers="q", sensitive="s", hierarchies={"s": SENSITIVE_TREE})


def test_suppressed_rows_of_released_classes_are_never_exposed():
    frame = pd.DataFrame({"q": ["x", "x", "y", "z", "z"], "s": ["a1", "a1", "c", "b1", "b2"]})
    classes = release_classes(frame, quasi_identifiers="q", sensitive="s", hierarchies={"s": SENSITIVE_TREE})
    kept = classes.subset(np.array([True, False, True]))  # class y (row 2) suppressed
    assert homogeneity(kept).records.tolist() == [0, 1]
    assert similarity(kept).records.tolist() == [0, 1, 3, 4]
    assert 2 not in background_knowledge(kept, threshold=0.5).records.tolist()


def test_several_sensitive_columns_need_a_name():
    frame = INPATIENT.assign(Other=list("abababababab"))
    classes = release_classes(frame, quasi_identifiers=INPATIENT_QI, sensitive=["Condition", "Other"])
    with pytest.raises(ParameterError, match="name the one"):
        homogeneity(classes)
    report = attack_release(frame, quasi_identifiers=INPATIENT_QI, sensitive=["Condition", "Other"])
    assert list(report.to_dict()["attacks"]) == ["Condition", "Other"]


# The command line.

runner = CliRunner()


def cli_app() -> typer.Typer:
    app = typer.Typer()
    app.add_typer(attack_app, name="attack")
    return app


@pytest.fixture
def inpatient_csv(tmp_path: Path) -> Path:
    path = tmp_path / "inpatient.csv"
    INPATIENT.to_csv(path, sep=";", index=False)
    return path


def test_cli_prints_a_summary(inpatient_csv):
    result = runner.invoke(cli_app(), ["attack", "single", str(inpatient_csv), "--qi", ",".join(INPATIENT_QI),
                                       "--sensitive", "Condition"])
    assert result.exit_code == 1, result.output  # the attack exposes records: exit 1, like a failed check
    assert "homogeneity" in result.stdout and "Cancer (4)" in result.stdout
    assert "background knowledge" in result.stdout and "A_know" in result.stdout
    assert "similarity attack was skipped" in result.stdout


def test_cli_json(inpatient_csv, tmp_path):
    hierarchy = tmp_path / "condition.csv"
    hierarchy.write_text("Heart Disease;circulatory;*\nViral Infection;infection;*\nCancer;neoplasm;*\n",
                         encoding="utf-8")
    result = runner.invoke(cli_app(), ["attack", "single", str(inpatient_csv), "--qi", ",".join(INPATIENT_QI),
                                       "--sensitive", "Condition", "--hierarchy", f"Condition={hierarchy}",
                                       "--hierarchy", f"Age={hierarchy}", "--m", "1", "--threshold", "1",
                                       "--skew", "2", "--delimiter", ";", "--json"])
    assert result.exit_code == 1, result.output  # exposed records
    out = json.loads(result.stdout)
    assert {"rows", "classes", "quasi_identifiers", "sensitive", "attacks", "notes"} <= out.keys()
    attacks = out["attacks"]["Condition"]
    assert set(attacks) == {"homogeneity", "background_knowledge", "skewness", "similarity", "disclosure"}
    assert attacks["homogeneity"]["records"] == 4
    assert [row["records_pinned"] for row in attacks["background_knowledge"]["by_m"]] == [4, 8]
    assert attacks["similarity"]["groups"] == {"neoplasm": 4}
    assert {"a_know", "a_acc", "delta"} <= attacks["disclosure"].keys()
    assert any("'Age'" in note for note in out["notes"])


@pytest.mark.parametrize("extra, words", [
    (["--m", "-1"], "m must be"),
    (["--threshold", "0"], "threshold must be in (0, 1]"),
    (["--threshold", "1.2"], "threshold must be in (0, 1]"),
    (["--skew", "1"], "factor must be greater than 1"),
    (["--level", "0"], "level must be at least 1"),
    (["--hierarchy", "Condition"], "COLUMN=VALUE"),
    (["--hierarchy", "Condition=/nonexistent/h.csv"], "does not exist"),
])
def test_cli_bad_input_is_one_sentence_and_exit_2(inpatient_csv, extra, words):
    result = runner.invoke(cli_app(), ["attack", "single", str(inpatient_csv), "--qi", ",".join(INPATIENT_QI),
                                       "--sensitive", "Condition", *extra])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("error: ") and words in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_cli_unknown_columns_and_missing_file(inpatient_csv, tmp_path):
    for args, words in (([str(inpatient_csv), "--qi", "Zip", "--sensitive", "Condition"], "does not exist"),
                        ([str(inpatient_csv), "--qi", "Age", "--sensitive", "Disease"], "does not exist"),
                        ([str(tmp_path / "absent.csv"), "--qi", "Age", "--sensitive", "Condition"], "absent.csv"),
                        ([str(inpatient_csv), "--qi", "Age", "--sensitive", ","], "--sensitive names no column")):
        result = runner.invoke(cli_app(), ["attack", "single", *args])
        assert result.exit_code == 2, result.output
        assert result.stderr.startswith("error: ") and words in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
