"""The publishing gate's risk check (policy ``risk``): the Benedetti–Franconi risk of a release's own
records, measured on its published file with the quasi-identifiers and weights its manifest names."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import yaml
from helpers import SURVEY_BASE as BASE
from helpers import SURVEY_QIS as QIS
from helpers import TEST_DATA, veil
from hypothesis import given, settings
from hypothesis import strategies as st

from veil.ledger.checks import ReleaseView, RiskCheck
from veil.risk.individual import benedetti_franconi
from veil.sdc.table_risk import table_risk


def test_frequencies_with_suppressed_cells_worked_by_hand():
    # (a, x) twice, (a, *) and (b, y): under "any" the first three match each other.
    table = pa.table({"q1": ["a", "a", "a", "b"], "q2": ["x", "x", "*", "y"], "w": [1.0, 2.0, 3.0, 4.0],
                      "h": ["H1", "H2", "H2", "H1"]})
    any_ = table_risk(table, ["q1", "q2"], weight="w", household="h", marker="*")
    assert any_.sample.tolist() == [3, 3, 3, 1] and any_.population.tolist() == [6.0, 6.0, 6.0, 4.0]
    assert np.allclose(any_.record, benedetti_franconi(np.array([3, 3, 3, 1]), np.array([6.0, 6.0, 6.0, 4.0])))
    r = any_.record
    assert np.isclose(any_.household[0], 1 - (1 - r[0]) * (1 - r[3]))
    category = table_risk(table, ["q1", "q2"], marker=None)
    assert category.sample.tolist() == [2, 2, 1, 1] and np.allclose(category.record, [0.5, 0.5, 1.0, 1.0])
    # the blank of a release that shows suppressed cells as missing
    missing = table_risk(table.set_column(1, "q2", pa.array(["x", "x", None, "y"])), ["q1", "q2"], marker="")
    assert missing.sample.tolist() == [3, 3, 3, 1]


def test_a_bad_weight_in_the_published_file_is_one_sentence():
    from veil.errors import DataError

    table = pa.table({"q": ["a", "b"], "w": ["2", "0"]})
    with pytest.raises(DataError, match="'w'"):
        table_risk(table, ["q"], weight="w")


def test_the_check_judges_the_share_and_the_rate():
    table = pa.table({"q": ["a", "a", "b"]})
    view = ReleaseView("the new release", "generalization", table, {"roles": {"quasi_identifiers": ["q"]}})
    finding = RiskCheck(max_individual=0.6, max_share=0.0).run(view)      # b is unique: risk 1
    assert not finding.passed and finding.figures["at_risk"] == 1 and "over the policy's limit" in finding.reason
    assert RiskCheck(max_individual=0.6, max_share=0.5).run(view).passed
    assert not RiskCheck(max_individual=1.0, max_share=1.0, max_rate=0.5).run(view).passed   # rate 2/3


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copy(TEST_DATA / "survey.csv", tmp_path / "survey.csv")
    assert veil("ledger", "init", "--ledger", tmp_path / "ledger.db").exit_code == 0
    return tmp_path


def anonymize(project: Path, name: str, doc: dict) -> Path:
    folder = project / name
    folder.mkdir()
    (folder / "job.yaml").write_text(yaml.safe_dump({**doc, "data": "../survey.csv"}, sort_keys=False))
    result = veil("anonymize", "--config", folder / "job.yaml", "--out", folder / "release.csv", "--manifest",
                  folder / "manifest.json")
    assert result.exit_code == 0, result.output
    return folder / "manifest.json"


def publish(project: Path, manifest: Path, policy: dict):
    (project / "policy.yaml").write_text(yaml.safe_dump({"policy": {**policy, "populations": {"survey": {}}}}))
    return veil("publish", manifest, "--population", "survey", "--data", project / "survey.csv", "--ledger",
                project / "ledger.db", "--policy", project / "policy.yaml")


def test_the_gate_refuses_a_risky_release_and_admits_a_safe_one(project):
    risky = anonymize(project, "pram", {**BASE, "algorithm": {"name": "pram", "columns": ["race"], "alpha": 0.2}})
    result = publish(project, risky, {"risk": {"max_individual": 0.05, "max_share": 0.0}})
    assert result.exit_code == 1, result.output
    assert "refused" in result.output and "individual risk above 0.05" in result.output
    assert "weighted by 'weight'" in result.output
    safe = anonymize(project, "suppressed", {**BASE, "algorithm": {"name": "localsuppression", "risk": 0.05}})
    result = publish(project, safe, {"risk": {"max_individual": 0.05, "max_share": 0.0}})
    assert result.exit_code == 0, result.output
    assert "published" in result.output and "0 (0.00%) with an individual risk above 0.05" in result.output


def test_the_gate_reads_an_ordinary_anonymized_release(project):
    doc = {"columns": {"quasi_identifiers": QIS, "identifying": ["id"]}, "hierarchies": BASE["hierarchies"],
           "models": [{"k_anonymity": {"k": 5}}]}
    manifest = anonymize(project, "fulldomain", doc)
    smallest = json.loads(manifest.read_text())["classes"]["smallest"]   # unweighted, its records' risk is 1/size
    result = publish(project, manifest, {"recheck": False,
                                         "risk": {"max_individual": 0.99 / smallest, "max_share": 0.0}})
    assert result.exit_code == 1 and "unweighted" in result.output, result.output
    result = publish(project, manifest, {"recheck": False, "risk": {"max_individual": 1 / smallest, "max_share": 0.0}})
    assert result.exit_code == 0, result.output


@st.composite
def small_tables(draw):
    n = draw(st.integers(1, 12))
    cells = st.sampled_from(["a", "b", "*"])
    return pa.table({"q1": draw(st.lists(cells, min_size=n, max_size=n)),
                     "q2": draw(st.lists(st.sampled_from(["x", "y"]), min_size=n, max_size=n)),
                     "w": draw(st.lists(st.sampled_from([1.0, 2.5, 10.0]), min_size=n, max_size=n))})


@settings(max_examples=40, deadline=None)
@given(small_tables())
def test_the_risk_of_a_table_is_veil_risks_and_blanks_only_add_matches(table):
    from veil.classes import EquivalenceClasses
    from veil.data.dataset import Dataset
    from veil.risk.individual import sample_risk

    ds = Dataset(table, quasi_identifiers=["q1", "q2"], weight="w")
    expected = sample_risk(EquivalenceClasses.from_dataset(ds)).record
    as_values = table_risk(table, ["q1", "q2"], weight="w")
    assert np.allclose(as_values.record, expected)
    blanks = table_risk(table, ["q1", "q2"], weight="w", marker="*")
    assert (blanks.sample >= as_values.sample).all() and (blanks.population >= as_values.population - 1e-9).all()
    rows = table.to_pylist()   # every record compatible with row i, counted by brute force
    for i, row in enumerate(rows):
        match = [r for r in rows if all(row[q] == r[q] or "*" in (row[q], r[q]) for q in ("q1", "q2"))]
        assert blanks.sample[i] == len(match) and np.isclose(blanks.population[i], sum(r["w"] for r in match))


def test_an_anonymized_release_is_weighted_by_the_weight_its_configuration_names(project):
    doc = {"columns": {"quasi_identifiers": QIS, "identifying": ["id"], "weight": "weight"},
           "hierarchies": BASE["hierarchies"], "models": [{"k_anonymity": {"k": 5}}]}
    manifest = anonymize(project, "weighted", doc)
    result = publish(project, manifest, {"recheck": False, "risk": {"max_individual": 0.2, "max_share": 0.0}})
    assert result.exit_code == 0 and "weighted by 'weight'" in result.output, result.output


@pytest.mark.parametrize("suppressed", ["remove", "star"])
def test_the_gate_rechecks_the_risk_models_of_a_release(project, suppressed):
    doc = {"columns": {"quasi_identifiers": QIS, "identifying": ["id"], "weight": "weight", "strata": ["region"]},
           "hierarchies": BASE["hierarchies"], "suppression_limit": 0.05, "output": {"suppressed": suppressed},
           "models": [{"records_at_risk": {"risk": 0.05, "share": 0.05}}, {"average_risk": {"risk": 0.02}}]}
    manifest = anonymize(project, suppressed, doc)
    result = publish(project, manifest, {})   # the default policy re-checks the release's own models
    assert result.exit_code == 0 and "published" in result.output, result.output


def test_the_gate_refuses_a_seeded_perturbation(project):
    seeded = anonymize(project, "seeded", {**BASE, "algorithm": {"name": "swap", "columns": ["income"], "p": 5,
                                                                 "seed": 3}})
    result = publish(project, seeded, {})
    assert result.exit_code == 1 and "not fit for release" in result.output and "seeded (3)" in result.output
