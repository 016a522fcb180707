"""``veil ldp encode`` and ``veil ldp collect``: a real client and collector pair on the command line
(audit item 20). Reports travel as text lines (veil.ldp.wire) that the collector checks against
its deployment; the estimates are the protocols' own."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from veil.cli import app
from veil.ldp import PROTOCOLS, make_protocol
from veil.ldp.wire import read_supports, report_lines

from helpers import refused as one_sentence

runner = CliRunner()
CATEGORIES = ["flu", "cold", "cancer", "hiv", "asthma"]


def veil(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_reports_travel_as_lines_unchanged(name):
    oracle = make_protocol(name, 1.5, len(CATEGORIES))
    values = np.arange(400) % len(CATEGORIES)
    reports = oracle.perturb(values, rng=7)
    lines = [("here", i + 1, line) for i, line in enumerate(report_lines(oracle, reports, CATEGORIES))]
    supports = read_supports(lines, oracle, CATEGORIES)
    assert supports.n == 400 and supports.fit_for_release is False          # seeded coins say so
    assert np.array_equal(supports.counts, oracle.aggregate(reports))


@pytest.fixture
def deployment(tmp_path: Path) -> Path:
    (tmp_path / "categories.txt").write_text("\n".join(CATEGORIES) + "\n", encoding="utf-8")
    truth = [3000, 2500, 1500, 800, 200]
    rows = [value for value, count in zip(CATEGORIES, truth) for _ in range(count)]
    (tmp_path / "answers.csv").write_text("id,disease\n" + "".join(f"{i},{v}\n" for i, v in enumerate(rows)),
                                          encoding="utf-8")
    return tmp_path


def test_a_client_prints_one_secure_report(deployment: Path):
    result = veil("ldp", "encode", "cancer", "--protocol", "oue", "--epsilon", "1",
                  "--categories", deployment / "categories.txt")
    assert result.exit_code == 0, result.output
    line = json.loads(result.stdout)
    assert line["protocol"] == "OUE" and line["secure"] is True and line["domain"] == 5
    assert len(line["report"]) == 5 and set(line["report"]) <= {"0", "1"}


@pytest.mark.parametrize("protocol", ["grr", "oue", "olh"])
def test_encode_a_table_and_collect_the_counts(deployment: Path, protocol: str):
    common = ["--protocol", protocol, "--epsilon", "2", "--categories", deployment / "categories.txt"]
    made = veil("ldp", "encode", *common, "--data", deployment / "answers.csv", "--column", "disease",
                "--out", deployment / "reports.jsonl")
    assert made.exit_code == 0, made.output
    assert len((deployment / "reports.jsonl").read_text(encoding="utf-8").splitlines()) == 8000
    result = veil("ldp", "collect", deployment / "reports.jsonl", *common, "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["reports"] == 8000 and doc["secure"] is True
    oracle = make_protocol(protocol, 2, 5)
    truth = np.array([3000, 2500, 1500, 800, 200])
    sd = np.sqrt(oracle.variance(8000, truth))
    estimates = np.array([v["estimate"] for v in doc["values"]])
    assert [v["value"] for v in doc["values"]] == CATEGORIES
    assert np.all(np.abs(estimates - truth) < 6 * sd), (estimates, truth, sd)   # unbiased, within 6 σ
    assert sum(v["cleaned"] for v in doc["values"]) == pytest.approx(8000)
    text = veil("ldp", "collect", deployment / "reports.jsonl", *common)
    assert text.exit_code == 0 and "8,000" in text.stdout and "cancer" in text.stdout


def test_the_collector_refuses_reports_of_another_deployment(deployment: Path):
    cats = deployment / "categories.txt"
    made = veil("ldp", "encode", "--protocol", "grr", "--epsilon", "2", "--categories", cats,
                "--data", deployment / "answers.csv", "--column", "disease", "--out", deployment / "r.jsonl")
    assert made.exit_code == 0
    one_sentence(veil("ldp", "collect", deployment / "r.jsonl", "--protocol", "grr", "--epsilon", "1",
                      "--categories", cats), "line 1", "epsilon 2.0")
    (deployment / "other.txt").write_text("\n".join(reversed(CATEGORIES)) + "\n", encoding="utf-8")
    one_sentence(veil("ldp", "collect", deployment / "r.jsonl", "--protocol", "grr", "--epsilon", "2",
                      "--categories", deployment / "other.txt"), "categories")
    (deployment / "bad.jsonl").write_text("hello\n", encoding="utf-8")
    one_sentence(veil("ldp", "collect", deployment / "bad.jsonl", "--protocol", "grr", "--epsilon", "2",
                      "--categories", cats), "bad.jsonl, line 1", "not JSON")


@pytest.mark.parametrize("args, words", [
    (["ldp", "encode", "canser", "--protocol", "grr", "--epsilon", "1", "--categories", "{cats}"],
     ["'canser'", "did you mean 'cancer'"]),
    (["ldp", "encode", "7", "--protocol", "grr", "--epsilon", "1", "--domain", "5"], ["outside the codes 0 to 4"]),
    (["ldp", "encode", "flu", "--protocol", "grr", "--epsilon", "1"], ["--domain", "--categories"]),
    (["ldp", "encode", "flu", "--protocol", "all", "--epsilon", "1", "--categories", "{cats}"], ["one protocol"]),
    (["ldp", "encode", "--protocol", "grr", "--epsilon", "1", "--categories", "{cats}"], ["give the value"]),
])
def test_encode_refuses_bad_input(deployment: Path, args, words):
    one_sentence(veil(*[a.format(cats=deployment / "categories.txt") for a in args]), *words)
