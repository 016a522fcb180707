"""The gate charges what ``veil dp`` drew, never what an edited manifest says (audit item 7).

A DP answer's manifest is sealed with the curator's key over everything it says, the answer's
SHA-256 included (:mod:`veil.ledger.answers`). Editing the ε, the charge it names, its fitness or
the answer itself (with the manifest's hash made to match) breaks the seal, and ``veil publish``
refuses the pair in one sentence, charging and recording nothing.
"""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from test_ledger import PEOPLE

from helpers import refused, veil


@pytest.fixture
def project(tmp_path):
    data = tmp_path / "people.csv"
    PEOPLE.to_csv(data, index=False)
    policy = tmp_path / "policy.yaml"
    policy.write_text("policy:\n  populations:\n    survey:\n      budget: {epsilon: 1.0}\n")
    ledger = tmp_path / "ledger.db"
    assert veil("ledger", "init", "--ledger", ledger, "--policy", policy).exit_code == 0
    return tmp_path, data, ledger


def spent(ledger) -> float:
    status = json.loads(veil("ledger", "status", "--ledger", ledger, "--json").stdout)
    return next(p for p in status["populations"] if p["name"] == "survey")["budget"]["spent"]["epsilon"]


def edit(path, change) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, indent=2) + "\n")


def rehash(folder) -> None:
    """Make the manifest's hash of the answer match an edited answer, as a forger would."""
    def fix(doc):
        content = (folder / "answer.json").read_bytes()
        doc["release"]["sha256"] = hashlib.sha256(content).hexdigest()
        doc["release"]["bytes"] = len(content)
    edit(folder / "manifest.json", fix)


EDITS = {
    "a lower epsilon": lambda folder: edit(folder / "manifest.json", lambda d: d.update(epsilon="0.0001")),
    "fit for release": lambda folder: edit(folder / "manifest.json",
                                           lambda d: d.update(fit_for_release=True, not_fit_because=[])),
    # another value than the one drawn (a fixed one is the drawn one now and then)
    "the answer, rehashed": lambda folder: (edit(folder / "answer.json",
                                                 lambda d: d.update(value=12 if d["value"] != 12 else 13)),
                                            rehash(folder)),
    "the table tag dropped": lambda folder: edit(folder / "manifest.json", lambda d: d.update(table=None)),
}


@pytest.mark.parametrize("change", EDITS)
def test_an_edited_manifest_is_refused_and_charges_nothing(project, change):
    tmp, data, ledger = project
    seeded = ("--seed", "3") if change == "fit for release" else ()   # a seeded answer is not fit for release
    drawn = veil("dp", "count", data, "--epsilon", "0.1", "--out", tmp / "ans", *seeded)
    assert drawn.exit_code == 0, drawn.output
    EDITS[change](tmp / "ans")
    refused(veil("publish", tmp / "ans" / "manifest.json", "--population", "survey", "--data", data,
                 "--ledger", ledger), "changed after veil dp wrote it", "seal")
    assert spent(ledger) == 0
    assert json.loads(veil("ledger", "verify", "--ledger", ledger, "--json").stdout)["ok"]


def test_the_sealed_answer_is_published_at_its_own_cost(project):
    tmp, data, ledger = project
    assert veil("dp", "count", data, "--epsilon", "0.1", "--out", tmp / "ans").exit_code == 0
    published = veil("publish", tmp / "ans" / "manifest.json", "--population", "survey", "--data", data,
                     "--ledger", ledger)
    assert published.exit_code == 0, published.output
    assert spent(ledger) == pytest.approx(0.1)


def test_an_answer_charged_when_drawn_cannot_be_pointed_at_another_charge(project):
    tmp, data, ledger = project
    for folder in ("cheap", "dear"):
        drawn = veil("dp", "count", data, "--epsilon", "0.05" if folder == "cheap" else "0.5", "--ledger", ledger,
                     "--population", "survey", "--out", tmp / folder)
        assert drawn.exit_code == 0, drawn.output
    cheap = json.loads((tmp / "cheap" / "manifest.json").read_text())
    edit(tmp / "dear" / "manifest.json", lambda d: d.update(charge=cheap["charge"], epsilon="0.05"))
    refused(veil("publish", tmp / "dear" / "manifest.json", "--population", "survey", "--ledger", ledger),
            "seal does not verify")


def test_a_manifest_without_a_seal_or_of_another_key_is_refused(project, tmp_path, monkeypatch):
    tmp, data, ledger = project
    assert veil("dp", "count", data, "--epsilon", "0.1", "--out", tmp / "bare").exit_code == 0
    edit(tmp / "bare" / "manifest.json", lambda d: d.pop("seal"))
    refused(veil("publish", tmp / "bare" / "manifest.json", "--population", "survey", "--ledger", ledger),
            "carries no seal")
    ours = os.environ["VEIL_KEY_FILE"]
    monkeypatch.setenv("VEIL_KEY_FILE", str(tmp_path / "elsewhere.key"))
    assert veil("dp", "count", data, "--epsilon", "0.1", "--out", tmp / "elsewhere").exit_code == 0
    monkeypatch.setenv("VEIL_KEY_FILE", ours)
    refused(veil("publish", tmp / "elsewhere" / "manifest.json", "--population", "survey", "--ledger", ledger),
            "sealed with key")
    assert spent(ledger) == 0


def test_an_answer_from_another_table_is_refused_without_naming_either(project):
    tmp, data, ledger = project
    other = tmp / "other.csv"
    PEOPLE.head(3).to_csv(other, index=False)
    assert veil("dp", "count", data, "--epsilon", "0.1", "--ledger", ledger, "--population", "survey").exit_code == 0
    assert veil("dp", "count", other, "--epsilon", "0.1", "--out", tmp / "ans").exit_code == 0
    message = refused(veil("publish", tmp / "ans" / "manifest.json", "--population", "survey", "--ledger", ledger),
                      "not drawn from a table of population 'survey'")
    assert "veil-" not in message
