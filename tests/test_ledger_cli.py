"""``veil ledger``, ``veil publish``, ``veil dp --ledger --population --out``, and the demo's ledger step.

The releases are the hand-built pair of ``test_ledger.py``: four people, two releases that each
protect everyone and together pin two of them.
"""

from __future__ import annotations

import json
import sqlite3

import pytest
from typer.testing import CliRunner

from veil.cli import app

from test_ledger import PEOPLE, release_at

from helpers import refused as one_sentence

runner = CliRunner()


def veil(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def project(tmp_path):
    data = tmp_path / "people.csv"
    PEOPLE.to_csv(data, index=False)
    for name, levels in (("a", {"age": 1, "zip": 1}), ("b", {"age": 2, "zip": 0})):
        (tmp_path / name).mkdir()
        release_at(levels).write(tmp_path / name / "release.csv", tmp_path / name / "manifest.json")
    policy = tmp_path / "policy.yaml"
    policy.write_text("policy:\n  composition:\n    intersection: {confidence: 1.0, max_share: 0.0}\n"
                      "  populations:\n    people: {}\n    survey:\n      budget: {epsilon: 1.0}\n")
    ledger = tmp_path / "ledger.db"
    made = veil("ledger", "init", "--ledger", ledger, "--policy", policy, "--by", "steward", "--json")
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout)["populations"] == ["people", "survey"]
    return tmp_path, data, ledger, policy


def test_publish_refuses_a_release_that_composes_badly_and_the_log_says_why(project):
    tmp, data, ledger, policy = project
    first = veil("publish", tmp / "a" / "manifest.json", "--population", "people", "--data", data, "--ledger", ledger)
    assert first.exit_code == 0, first.output
    assert "published 'a/release.csv' as release 1 of population 'people'" in first.stdout
    second = veil("publish", tmp / "b" / "manifest.json", "--population", "people", "--data", data, "--ledger", ledger,
                  "--policy", policy, "--json")
    assert second.exit_code == 1, second.output
    decision = json.loads(second.stdout)
    assert decision["published"] is False and decision["findings"][0]["figures"]["exposed"] == 2
    assert "intersected with release 1 ('a/release.csv'" in decision["reasons"][0]
    text = veil("publish", tmp / "b" / "manifest.json", "--population", "people", "--data", data, "--ledger", ledger)
    assert text.exit_code == 1 and "refused 'b/release.csv'" in text.stdout and "2 of 4 people" in text.stdout
    history = json.loads(veil("ledger", "history", "--ledger", ledger, "--json").stdout)["entries"]
    assert [e["action"] for e in history][-3:] == ["publish", "refuse", "refuse"]
    status = json.loads(veil("ledger", "status", "--ledger", ledger, "--json").stdout)
    people = next(p for p in status["populations"] if p["name"] == "people")
    assert [r["id"] for r in people["releases"]] == [1]
    shown = veil("ledger", "status", "--ledger", ledger)
    assert shown.exit_code == 0 and "population 'people'" in shown.stdout and "release 1: a/release.csv" in shown.stdout
    verified = veil("ledger", "verify", "--ledger", ledger, "--json")
    assert verified.exit_code == 0 and json.loads(verified.stdout)["ok"] is True


def test_publish_prints_the_warning_of_a_release_that_keeps_the_input_order(project):
    tmp, data, ledger, _ = project
    (tmp / "kept").mkdir()
    release_at({"age": 1, "zip": 1}, shuffle=False).write(tmp / "kept" / "release.csv", tmp / "kept" / "manifest.json")
    # a secure shuffle of four rows keeps their order once in 24 times, and the same file is the
    # same release to the gate: draw the shuffled one again until it differs
    while (tmp / "a" / "release.csv").read_bytes() == (tmp / "kept" / "release.csv").read_bytes():
        release_at({"age": 1, "zip": 1}).write(tmp / "a" / "release.csv", tmp / "a" / "manifest.json")
    result = veil("publish", tmp / "kept" / "manifest.json", "--population", "people", "--data", data,
                  "--ledger", ledger)
    assert result.exit_code == 0, result.output
    assert "  warning: the rows keep the input's order" in result.stdout
    shuffled = veil("publish", tmp / "a" / "manifest.json", "--population", "people", "--data", data,
                    "--ledger", ledger, "--json")
    assert json.loads(shuffled.stdout)["warnings"] == []


def test_verify_exits_1_and_names_every_hand_edit(project):
    tmp, data, ledger, _ = project
    assert veil("dp", "count", data, "--epsilon", "0.5", "--ledger", ledger, "--population", "survey").exit_code == 0
    with sqlite3.connect(ledger) as conn:
        conn.execute("UPDATE charges SET epsilon = '0.05'")
    result = veil("ledger", "verify", "--ledger", ledger)
    assert result.exit_code == 1 and "problem:" in result.stdout and "edited by hand" in result.stdout
    one_sentence(veil("dp", "count", data, "--epsilon", "0.1", "--ledger", ledger, "--population", "survey"),
                 "restore the ledger from a backup")


def test_dp_answers_charged_when_drawn_are_published_with_that_charge(project):
    tmp, data, ledger, policy = project
    drawn = veil("dp", "count", data, "--epsilon", "0.5", "--ledger", ledger, "--population", "survey",
                 "--out", tmp / "q1", "--json")
    assert drawn.exit_code == 0, drawn.output
    answer = json.loads(drawn.stdout)
    assert answer["budget"]["population"] == "survey" and answer["budget"]["left"]["epsilon"] == 0.5
    manifest = json.loads((tmp / "q1" / "manifest.json").read_text())
    assert manifest["charge"]["seq"] == answer["budget"]["charge"] and manifest["epsilon"] == "0.5"
    published = veil("publish", tmp / "q1" / "manifest.json", "--population", "survey", "--ledger", ledger, "--json")
    assert published.exit_code == 0 and json.loads(published.stdout)["charge"] == answer["budget"]["charge"]
    again = veil("publish", tmp / "q1" / "manifest.json", "--population", "survey", "--ledger", ledger)
    assert again.exit_code == 0 and "was published already, as release 1" in again.stdout
    over = veil("dp", "count", data, "--epsilon", "0.6", "--ledger", ledger, "--population", "survey")
    one_sentence(over, "asks for ε = 0.6")
    budget = json.loads(veil("dp", "budget", ledger, "--population", "survey", "--json").stdout)
    assert budget["spent"]["epsilon"] == 0.5 and [c["label"] for c in budget["charges"]] == ["count"]


BAD = [
    (("ledger", "status", "--ledger", "{missing}"), "does not exist"),
    (("ledger", "history", "--ledger", "{ledger}", "--population", "nobody"), "no population 'nobody'"),
    (("ledger", "history", "--ledger", "{ledger}", "--limit", "0"), "--limit"),
    (("publish", "{tmp}/a/manifest.json", "--population", "people", "--ledger", "{ledger}"), "--data"),
    (("publish", "{tmp}/nothing.json", "--population", "people", "--ledger", "{ledger}"), "does not exist"),
    (("publish", "{tmp}/a/manifest.json", "--population", "people", "--data", "{data}", "--ledger", "{ledger}",
      "--policy", "{tmp}/a/release.csv"), "policy"),
    (("dp", "count", "{data}", "--epsilon", "0.1", "--ledger", "{ledger}", "--budget-file", "{tmp}/b.db"), "not both"),
    (("dp", "count", "{data}", "--epsilon", "0.1", "--population", "survey"), "--population applies only"),
    (("ledger", "init", "--ledger", "{tmp}/no/such/l.db"), "does not exist"),
    (("ledger", "init", "--ledger", "{data}"), "not a veil ledger"),
]


@pytest.mark.parametrize("args, words", BAD)
def test_bad_input_is_one_sentence_and_exit_2(project, args, words):
    tmp, data, ledger, _ = project
    names = {"missing": tmp / "missing.db", "ledger": ledger, "tmp": tmp, "data": data}
    before = ledger.read_bytes()
    one_sentence(veil(*[a.format(**names) for a in args]), words)
    assert ledger.read_bytes() == before
