"""``veil.check``: the one-pass measurement of every model and of the risk, and its JSON summary."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import veil
from veil import (AlphaKAnonymity, BetaLikeness, Dataset, DeltaDisclosure, DistinctLDiversity,
                  EntropyLDiversity, EquivalenceClasses, KAnonymity, ParameterError, RecursiveCLDiversity,
                  TCloseness, reidentification_risk)

REQUIRED = ("rows", "classes", "k", "alpha", "l_distinct", "l_entropy", "c_l_recursive", "t_equal",
            "t_ordered", "t_hierarchical", "delta", "beta_basic", "beta_enhanced", "prosecutor_risk_max",
            "prosecutor_risk_avg", "marketer_risk")
MODEL_KEYS = REQUIRED[2:13]
ALL_QIS = ("sex", "age", "race", "marital-status", "education", "native-country", "workclass",
           "occupation", "salary-class")


def separate_models(c: float = 2.0) -> dict:
    return {"k": KAnonymity(), "alpha": AlphaKAnonymity(), "l_distinct": DistinctLDiversity(),
            "l_entropy": EntropyLDiversity(), "c_l_recursive": RecursiveCLDiversity(c),
            "t_equal": TCloseness(distance="equal"), "t_ordered": TCloseness(distance="ordered"),
            "t_hierarchical": TCloseness(distance="hierarchical"), "delta": DeltaDisclosure(),
            "beta_basic": BetaLikeness(), "beta_enhanced": BetaLikeness(enhanced=True)}


def same(json_value, level: float) -> bool:
    """A JSON value equals a model level ("inf" for an unbounded level)."""
    if math.isinf(level):
        return json_value == "inf"
    return isinstance(json_value, (int, float)) and not isinstance(json_value, bool) \
        and json_value == pytest.approx(level, rel=1e-12, abs=1e-12)


@pytest.fixture(scope="module")
def adult():
    return veil.load_adult()


@pytest.fixture(scope="module")
def adult_report(adult):
    return veil.check(adult)


def test_adult_summary_has_the_keys_and_is_strict_json(adult, adult_report):
    d = adult_report.to_dict()
    for key in REQUIRED:
        assert key in d, key
    text = json.dumps(d, allow_nan=False)
    assert json.loads(text) == d
    assert d["rows"] == 30162 == adult.num_rows
    assert d["classes"] == adult_report.classes.n_classes
    assert d["quasi_identifiers"] == list(adult.quasi_identifiers)
    assert d["sensitive"] == ["occupation"]


def test_adult_values_equal_the_models_evaluated_separately(adult, adult_report):
    d = adult_report.to_dict()
    classes = EquivalenceClasses.from_dataset(adult)
    assert d["classes"] == classes.n_classes
    for key, model in separate_models().items():
        if key == "t_ordered":  # occupation is text: the ordered distance does not apply
            assert d[key] is None
            with pytest.raises(ParameterError):
                model.evaluate(classes)
            continue
        level = model.evaluate(classes).level
        assert same(d[key], level), (key, d[key], level)
        assert adult_report.results[key].level == pytest.approx(level) or math.isinf(level)
    risk = reidentification_risk(classes)
    assert d["prosecutor_risk_max"] == pytest.approx(risk.prosecutor_max)
    assert d["prosecutor_risk_avg"] == pytest.approx(risk.prosecutor_avg)
    assert d["prosecutor_risk_avg"] == pytest.approx(classes.n_classes / adult.num_rows)
    assert d["prosecutor_risk_at_threshold"] == pytest.approx(risk.prosecutor_at_risk)
    assert d["marketer_risk"] == pytest.approx(risk.marketer)
    assert d["journalist_risk_max"] is None and d["records_below_k"] is None
    assert d["c"] == 2.0


@pytest.mark.parametrize("qis, sensitive, nulls", [
    (("sex", "age", "race", "marital-status", "education", "native-country", "workclass"), ("occupation",),
     {"t_ordered"}),
    (("sex", "race", "marital-status", "education"), ("occupation", "age"), set()),
    (("sex", "race", "marital-status", "education"), ("age",), set()),
    (ALL_QIS, (), set(MODEL_KEYS) - {"k"}),
], ids=["text-sensitive", "text-and-numeric", "numeric-sensitive", "no-sensitive"])
def test_null_exactly_where_a_model_does_not_apply(qis, sensitive, nulls):
    ds = veil.load_adult(quasi_identifiers=qis, sensitive=sensitive)
    d = veil.check(ds).to_dict()
    json.dumps(d, allow_nan=False)
    assert {key for key in MODEL_KEYS if d[key] is None} == nulls
    classes = EquivalenceClasses.from_dataset(ds)
    for key, model in separate_models().items():
        if key not in nulls:
            assert same(d[key], model.evaluate(classes).level), key
    if not sensitive:
        assert any("no sensitive column" in note for note in d["notes"])


def test_by_sensitive_lists_each_columns_own_levels():
    ds = veil.load_adult(quasi_identifiers=("sex", "race", "marital-status", "education"),
                         sensitive=("occupation", "age"))
    d = veil.check(ds).to_dict()
    classes = EquivalenceClasses.from_dataset(ds)
    assert set(d["by_sensitive"]) == {"occupation", "age"}
    assert "t_ordered" not in d["by_sensitive"]["occupation"]
    assert same(d["by_sensitive"]["age"]["t_ordered"],
                TCloseness(distance="ordered", sensitive="age").evaluate(classes).level)
    for name in ("occupation", "age"):
        for key, model in separate_models().items():
            if key in ("k", "t_ordered"):
                continue
            model.sensitive = name
            assert same(d["by_sensitive"][name][key], model.evaluate(classes).level), (name, key)
    # the combined value is the worst of the columns
    assert d["l_distinct"] == min(d["by_sensitive"][n]["l_distinct"] for n in ("occupation", "age"))
    assert d["t_equal"] == pytest.approx(max(d["by_sensitive"][n]["t_equal"] for n in ("occupation", "age")))


def test_text_sensitive_without_hierarchy():
    table = pd.DataFrame({"q": [1, 1, 2, 2, 2], "s": ["a", "b", "a", "a", "c"]})
    d = veil.check(Dataset(table, quasi_identifiers="q", sensitive="s")).to_dict()
    assert d["t_ordered"] is None and d["t_hierarchical"] is None
    assert all(d[key] is not None for key in MODEL_KEYS if key not in ("t_ordered", "t_hierarchical"))
    assert d["k"] == 2 and d["l_distinct"] == 2 and d["rows"] == 5 and d["classes"] == 2


def test_adult_facts_from_the_data_readme():
    # With all 9 columns as QIs: 19,502 classes, min size 1, 23,470 records in classes below 5.
    ds = veil.load_adult(quasi_identifiers=ALL_QIS, sensitive=())
    d = veil.check(ds, k=5).to_dict()
    assert d["classes"] == 19502 and d["k"] == 1 and d["records_below_k"] == 23470
    assert d["passed"] == {"k": False} and d["thresholds"] == {"k": 5}
    # With 8 QIs (all but occupation): 12,458 classes.
    ds = veil.load_adult(quasi_identifiers=[q for q in ALL_QIS if q != "occupation"], sensitive=())
    assert veil.check(ds).to_dict()["classes"] == 12458


def test_thresholds_and_verdicts(adult):
    top = EquivalenceClasses.from_dataset(adult).roll_up(
        {q: adult.generalizations[q].height for q in adult.quasi_identifiers})
    report = veil.check(adult, classes=top, k=2, l=2, t=0.5, delta=1.0, beta=1.0, alpha=0.9)
    d = report.to_dict()
    assert d["classes"] == 1 and d["k"] == 30162 and d["rows"] == 30162
    assert d["t_equal"] == 0 and d["delta"] == 0 and d["beta_basic"] == 0
    assert report.passed is True
    assert set(d["passed"]) == set(MODEL_KEYS) - {"t_ordered"}
    assert all(d["passed"].values())
    assert d["thresholds"]["k"] == 2 and d["thresholds"]["t_equal"] == 0.5
    # A failing threshold flips the overall verdict and only its own entry.
    leaf = veil.check(adult, k=2, l=2)
    assert leaf.passed is False
    assert leaf.to_dict()["passed"] == {"k": False, "l_distinct": False, "l_entropy": False,
                                        "c_l_recursive": False}
    assert veil.check(adult).passed is None


def test_check_on_given_classes_matches_models(adult):
    classes = EquivalenceClasses.from_dataset(adult, {"age": 2, "native-country": 1, "education": 1})
    d = veil.check(adult, classes=classes, c=3).to_dict()
    assert d["c"] == 3.0 and d["classes"] == classes.n_classes
    for key, model in separate_models(c=3).items():
        if key != "t_ordered":
            assert same(d[key], model.evaluate(classes).level), key
    assert d["prosecutor_risk_max"] == pytest.approx(1 / classes.sizes.min())


def test_check_rejects_bad_parameters(adult):
    for kwargs in (dict(c=0), dict(k=0), dict(l=0.5), dict(t=2), dict(delta=0), dict(beta=-1),
                   dict(alpha=0), dict(risk_threshold=0)):
        with pytest.raises(ParameterError):
            veil.check(adult, **kwargs)


def test_check_with_a_population_reports_journalist_risk(adult_subset_csv, adult_csv):
    qis = ("sex", "age", "race")
    sample = Dataset(adult_subset_csv, quasi_identifiers=qis, delimiter=";")
    population = veil.load_adult(quasi_identifiers=qis, sensitive=())
    d = veil.check(sample, population=population).to_dict()
    json.dumps(d, allow_nan=False)
    # by hand with pandas: F = population size of each sample class
    sample_table = pd.read_csv(adult_subset_csv, sep=";")
    pop_table = pd.read_csv(adult_csv, sep=";")
    f = sample_table.groupby(list(qis)).size()
    big_f = pop_table.groupby(list(qis)).size().reindex(f.index)
    assert not big_f.isna().any()
    assert d["journalist_risk_max"] == pytest.approx(1 / big_f.min())
    assert d["journalist_risk_avg"] == pytest.approx((f / big_f).sum() / f.sum())
    assert d["journalist_risk_at_threshold"] == pytest.approx(f[1 / big_f > 0.2].sum() / f.sum())
    assert d["marketer_risk"] == pytest.approx((f / big_f).sum() / f.sum())
    assert d["prosecutor_risk_max"] == pytest.approx(1 / f.min())
    assert d["rows"] == len(sample_table) == 3016


def test_unbounded_level_is_the_string_inf():
    table = pd.DataFrame({"q": ["A"] * 4 + ["B"] * 5, "s": list("xxxy") + list("yyyyz")})
    d = veil.check(Dataset(table, quasi_identifiers="q", sensitive="s")).to_dict()
    assert d["beta_enhanced"] == "inf" and d["beta_basic"] == pytest.approx(1.25)
    json.dumps(d, allow_nan=False)
    assert np.isclose(d["delta"], math.log(2.25))
