"""``veil publish`` of synthetic data (kind ``synthetic``): the gate charges the cost its sealed
manifest states, ρ to a ρ-zCDP population or (ε, δ) to an (ε, δ) one, in the transaction that
records the release; a charge that would overflow the budget is refused and nothing is charged or
published; an edited manifest is refused by its seal; a seeded (unfit) release is refused; a
population whose budget protects a person is refused (a synthesizer protects a row).

The releases here are written as ``veil synth`` writes them (the table, then a manifest naming and
hashing it, sealed under the suite's key), so that these tests need no synthesizer; the end-to-end
run of ``veil synth`` then ``veil publish`` is in test_synth_cli.py.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from helpers import refused, veil

from veil.dp.fingerprint import dataset_id
from veil.ledger import keys
from veil.ledger.answers import seal
from veil.ledger.binding import answer_tag, binding, new_nonce

PEOPLE = "sex,age\nF,23\nM,35\nF,41\nM,52\n"
SYNTHETIC = "sex,age\nM,24\nF,36\nF,44\n"
EPS_POLICY = "policy:\n  populations:\n    survey:\n      budget: {epsilon: 1.0, delta: 1.0e-6}\n"
RHO_POLICY = ("policy:\n  populations:\n    survey:\n      composition: zcdp\n"
              "      budget: {rho: 0.5, delta: 1.0e-6}\n")
PERSON_POLICY = ("policy:\n  populations:\n    survey:\n      unit: {person: sex}\n"
                 "      budget: {epsilon: 1.0, delta: 1.0e-6}\n")


def project(tmp_path, policy_text: str):
    data = tmp_path / "people.csv"
    data.write_text(PEOPLE)
    policy = tmp_path / "policy.yaml"
    policy.write_text(policy_text)
    ledger = tmp_path / "ledger.db"
    made = veil("ledger", "init", "--ledger", ledger, "--policy", policy)
    assert made.exit_code == 0, made.output
    return data, ledger


def synthetic_release(folder, data, cost: dict, *, fit: bool = True, content: str = SYNTHETIC):
    """A release as veil synth writes it: the table and its sealed manifest (no evaluation in it)."""
    folder.mkdir()
    (folder / "synthetic.csv").write_text(content)
    key = keys.load_key(create=True)
    nonce = new_nonce()
    doc = {"veil": "test", "algorithm": "synth", "kind": "dp synthetic data", "label": "synthetic data by mst over 2 "
           "columns", "mechanism": "mst", **cost, "budget": {"rho": "0.01", "measure": "zCDP"},
           "domain": [{"name": "sex", "kind": "categories", "values": ["F", "M"], "source": "declared"}],
           "measurements": [{"clique": ["sex"], "sigma": 7.0, "rho": "0.01", "round": 0, "purpose": "1-way"}],
           "selections": [], "randomness": "secure" if fit else "seeded: not fit for release", "rows": 3,
           "fit_for_release": fit, "not_fit_because": [] if fit else ["the run was seeded"],
           "table": {"nonce": nonce, "tag": answer_tag(key, nonce, binding(key, dataset_id(data)))}, "charge": None,
           "release": {"file": "synthetic.csv", "sha256": hashlib.sha256(content.encode()).hexdigest(),
                       "bytes": len(content.encode())}}
    doc["seal"] = seal(doc, key)
    (folder / "manifest.json").write_text(json.dumps(doc, indent=2) + "\n")
    return folder / "manifest.json"


def status(ledger) -> dict:
    doc = json.loads(veil("ledger", "status", "--ledger", ledger, "--json").stdout)
    return next(p for p in doc["populations"] if p["name"] == "survey")


def publish(manifest, ledger, data):
    return veil("publish", manifest, "--population", "survey", "--data", data, "--ledger", ledger)


def test_an_epsilon_delta_release_is_charged_to_an_epsilon_delta_population(tmp_path):
    data, ledger = project(tmp_path, EPS_POLICY)
    manifest = synthetic_release(tmp_path / "synth", data, {"epsilon": "0.4", "delta": "1e-9"})
    done = publish(manifest, ledger, data)
    assert done.exit_code == 0, done.output
    spent = status(ledger)["budget"]["spent"]
    assert spent["epsilon"] == pytest.approx(0.4) and spent["delta"] == pytest.approx(1e-9)
    assert [r["kind"] for r in status(ledger)["releases"]] == ["synthetic"]
    assert json.loads(veil("ledger", "verify", "--ledger", ledger, "--json").stdout)["ok"]
    # the same files again: already published, charged once
    again = publish(manifest, ledger, data)
    assert again.exit_code == 0, again.output
    assert status(ledger)["budget"]["spent"]["epsilon"] == pytest.approx(0.4)


def test_a_rho_release_is_charged_to_a_zcdp_population_and_not_to_another(tmp_path):
    data, ledger = project(tmp_path, RHO_POLICY)
    manifest = synthetic_release(tmp_path / "synth", data, {"rho": "0.2"})
    done = publish(manifest, ledger, data)
    assert done.exit_code == 0, done.output
    assert status(ledger)["budget"]["rho"]["spent"] == pytest.approx(0.2)
    # an (ε, δ) release is not charged to a ρ population
    other = synthetic_release(tmp_path / "other", data, {"epsilon": "0.1", "delta": "1e-9"},
                              content=SYNTHETIC + "M,60\n")
    result = publish(other, ledger, data)
    assert result.exit_code != 0
    assert "keeps its budget in ρ-zCDP" in result.output
    assert status(ledger)["budget"]["rho"]["spent"] == pytest.approx(0.2)


def test_a_release_that_would_overflow_the_budget_is_refused_and_charges_nothing(tmp_path):
    data, ledger = project(tmp_path, EPS_POLICY)
    first = synthetic_release(tmp_path / "first", data, {"epsilon": "0.7", "delta": "1e-9"})
    assert publish(first, ledger, data).exit_code == 0
    second = synthetic_release(tmp_path / "second", data, {"epsilon": "0.7", "delta": "1e-9"},
                               content=SYNTHETIC + "M,60\n")
    result = publish(second, ledger, data)
    assert result.exit_code == 1, result.output
    assert "budget" in result.output
    assert status(ledger)["budget"]["spent"]["epsilon"] == pytest.approx(0.7)
    assert len(status(ledger)["releases"]) == 1


EDITS = {
    "a lower cost": lambda d: d.update(epsilon="0.001"),
    "fit for release": lambda d: d.update(fit_for_release=True, not_fit_because=[], randomness="secure"),
    "another mechanism's noise": lambda d: d["measurements"][0].update(sigma=0.001),
    "the table tag dropped": lambda d: d.update(table=None),
}


@pytest.mark.parametrize("change", EDITS)
def test_an_edited_manifest_is_refused_by_its_seal_and_charges_nothing(tmp_path, change):
    data, ledger = project(tmp_path, EPS_POLICY)
    manifest = synthetic_release(tmp_path / "synth", data, {"epsilon": "0.4", "delta": "1e-9"},
                                 fit=change != "fit for release")
    doc = json.loads(manifest.read_text())
    EDITS[change](doc)
    manifest.write_text(json.dumps(doc, indent=2) + "\n")
    refused(publish(manifest, ledger, data), "changed after veil synth wrote it", "seal")
    assert status(ledger)["budget"]["spent"]["epsilon"] == 0


def test_a_seeded_release_is_refused_as_not_fit_for_release(tmp_path):
    data, ledger = project(tmp_path, EPS_POLICY)
    manifest = synthetic_release(tmp_path / "synth", data, {"epsilon": "0.4", "delta": "1e-9"}, fit=False)
    result = publish(manifest, ledger, data)
    assert result.exit_code == 1, result.output
    assert "not fit for release" in result.output and "seeded" in result.output
    assert status(ledger)["budget"]["spent"]["epsilon"] == 0


def test_a_release_of_another_table_is_refused(tmp_path):
    data, ledger = project(tmp_path, EPS_POLICY)
    other = tmp_path / "other.csv"
    other.write_text(PEOPLE + "F,70\n")
    manifest = synthetic_release(tmp_path / "synth", other, {"epsilon": "0.4", "delta": "1e-9"})
    refused(publish(manifest, ledger, data), "not drawn from a table of population")
    assert status(ledger)["budget"]["spent"]["epsilon"] == 0


def test_a_population_that_protects_a_person_refuses_synthetic_rows(tmp_path):
    data, ledger = project(tmp_path, PERSON_POLICY)
    manifest = synthetic_release(tmp_path / "synth", data, {"epsilon": "0.4", "delta": "1e-9"})
    result = publish(manifest, ledger, data)
    assert result.exit_code == 1, result.output
    assert "protects a row" in result.output
    assert status(ledger)["budget"]["spent"]["epsilon"] == 0
