"""Messages that say what to do, and exit statuses that say what was found (audit item 19).

An unknown population names how to add one; a comma-separated hierarchy file is read (or the
message names ';'); a Latin-1 table is read with ``--encoding`` (and the message says so);
``veil check --manifest`` takes the roles from the manifest; ``veil alphabeta parameters`` says
which option is missing; the gate's passing checks read as results; every attack exits 1 when it
exposes someone; the ledger's history and a repeated publication show a release's warnings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from typer.testing import CliRunner

from veil import Hierarchy
from veil.cli import app
from veil.data.io import read_table
from veil.ledger.checks import CorrespondenceCheck, IntersectionCheck, MatchingCheck, ReleaseView

from test_ledger import PEOPLE, release_at

from helpers import refused as one_sentence

runner = CliRunner()


def veil(*args):
    return runner.invoke(app, [str(a) for a in args])


# --------------------------------------------------------------------------- the ledger

@pytest.fixture
def project(tmp_path):
    data = tmp_path / "people.csv"
    PEOPLE.to_csv(data, index=False)
    for name, levels, shuffle in (("a", {"age": 1, "zip": 1}, True), ("kept", {"age": 1, "zip": 1}, False)):
        (tmp_path / name).mkdir()
        release_at(levels, shuffle=shuffle).write(tmp_path / name / "release.csv", tmp_path / name / "manifest.json")
    ledger = tmp_path / "ledger.db"
    assert veil("ledger", "init", "--ledger", ledger).exit_code == 0
    return tmp_path, data, ledger


def test_publishing_to_an_unknown_population_says_how_to_add_one(project):
    tmp, data, ledger = project
    message = one_sentence(veil("publish", tmp / "a" / "manifest.json", "--population", "people", "--data", data,
                                "--ledger", ledger), "no population 'people'", "populations: {people: {}}",
                           "--policy")
    assert "it has none yet" in message
    policy = tmp / "policy.yaml"
    policy.write_text("policy: {populations: {people: {}}}\n", encoding="utf-8")
    done = veil("publish", tmp / "a" / "manifest.json", "--population", "people", "--data", data, "--ledger", ledger,
                "--policy", policy)
    assert done.exit_code == 0, done.output


def test_history_and_a_repeated_publication_show_the_warnings(project):
    tmp, data, ledger = project
    policy = tmp / "policy.yaml"
    policy.write_text("policy: {populations: {people: {}}}\n", encoding="utf-8")
    args = ("publish", tmp / "kept" / "manifest.json", "--population", "people", "--data", data, "--ledger", ledger,
            "--policy", policy)
    first = veil(*args, "--json")
    assert first.exit_code == 0, first.output
    warnings = json.loads(first.stdout)["warnings"]
    assert warnings and "input's order" in warnings[0]
    again = veil(*args, "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["already"] is True
    assert json.loads(again.stdout)["warnings"] == warnings
    shown = veil(*args)
    assert "was published already" in shown.stdout and f"  warning: {warnings[0]}" in shown.stdout
    history = json.loads(veil("ledger", "history", "--ledger", ledger, "--json").stdout)["entries"]
    published = [e for e in history if e["action"] == "publish"]
    assert published[-1]["warnings"] == warnings
    assert all(e["warnings"] == [] for e in history if e["action"] != "publish")
    text = veil("ledger", "history", "--ledger", ledger).stdout
    assert f"warning: {warnings[0]}" in " ".join(text.split())


def test_the_gates_passing_checks_read_as_results(project):
    tmp, data, ledger = project
    policy = tmp / "policy.yaml"
    policy.write_text("policy: {populations: {people: {}}}\n", encoding="utf-8")
    assert veil("publish", tmp / "a" / "manifest.json", "--population", "people", "--data", data, "--ledger", ledger,
                "--policy", policy).exit_code == 0
    # the same generalization, written again (another shuffle): nobody is newly exposed. Four rows
    # shuffle back into the same order now and then, which would be the same release published
    # again (no checks run), so the shuffle is drawn until the file differs.
    (tmp / "a2").mkdir()
    for _ in range(100):
        release_at({"age": 1, "zip": 1}).write(tmp / "a2" / "release.csv", tmp / "a2" / "manifest.json")
        if (tmp / "a2" / "release.csv").read_bytes() != (tmp / "a" / "release.csv").read_bytes():
            break
    result = veil("publish", tmp / "a2" / "manifest.json", "--population", "people", "--data", data, "--ledger",
                  ledger, "--json")
    assert result.exit_code == 0, result.output
    reasons = {f["check"]: f["reason"] for f in json.loads(result.stdout)["findings"]}
    assert "perfectly breaches no one on 'disease'" in reasons["intersection"], reasons
    for reason in reasons.values():
        assert "0 of" not in reason.replace("(0 of", "") and "do not apply" not in reason, reason


def _view(tmp: Path, name: str, levels: dict, change=None) -> ReleaseView:
    (tmp / name).mkdir()
    release_at(levels, shuffle=False).write(tmp / name / "release.csv", tmp / name / "manifest.json")
    table = read_table(tmp / name / "release.csv").data
    return ReleaseView(name, "generalization", change(table) if change else table,
                       json.loads((tmp / name / "manifest.json").read_text(encoding="utf-8")), {}, {})


def test_each_check_that_finds_no_one_says_so(tmp_path):
    earlier = _view(tmp_path, "a", {"age": 1, "zip": 1})
    same = _view(tmp_path, "same", {"age": 1, "zip": 1})
    reversed_rows = _view(tmp_path, "reversed", {"age": 1, "zip": 1}, lambda t: t.take(list(range(3, -1, -1))))
    other_values = _view(tmp_path, "other", {"age": 1, "zip": 1}, lambda t: t.set_column(
        t.schema.get_field_index("disease"), "disease", pa.array(["hiv"] * t.num_rows)))
    targets = pa.Table.from_pandas(PEOPLE)
    found = {
        "intersection": IntersectionCheck().run(same, earlier, targets),
        "matching, same order": MatchingCheck().run(same, earlier, targets),
        "matching, other order": MatchingCheck().run(reversed_rows, earlier, targets),
        "correspondence, a version": CorrespondenceCheck().run(same, earlier, targets),
        "correspondence, not a version": CorrespondenceCheck().run(other_values, earlier, targets),
    }
    expected = {
        "intersection": "perfectly breaches no one on 'disease' whom the earlier release alone did not",
        "matching, same order": "leaves none of the 4 rows in a class smaller than 2",
        "matching, other order": "the new release exposes no one: its rows do not correspond by position",
        "correspondence, a version": "leaves each of the 4 people at least 2 candidates",
        "correspondence, not a version": "the correspondence attacks expose no one, since the new release "
                                         "(the attack's release 2) is not a later version of a (its release 1)",
    }
    for case, finding in found.items():
        assert finding.passed, (case, finding.reason)
        assert expected[case] in finding.reason, (case, finding.reason)
        assert "do not apply" not in finding.reason and " 0 of" not in finding.reason.replace("(0 of", "")


# --------------------------------------------------------------------------- hierarchy files

def test_a_comma_separated_hierarchy_file_is_read(tmp_path):
    (tmp_path / "comma.csv").write_text("13053,1305*,*\n13068,1306*,*\n", encoding="utf-8")
    (tmp_path / "semi.csv").write_text("13053;1305*;*\n13068;1306*;*\n", encoding="utf-8")
    comma, semi = Hierarchy.read_csv(tmp_path / "comma.csv"), Hierarchy.read_csv(tmp_path / "semi.csv")
    assert comma.rows() == semi.rows() and comma.levels == 3
    comma.to_csv(tmp_path / "back.csv")
    assert (tmp_path / "back.csv").read_bytes() == (tmp_path / "comma.csv").read_bytes()
    table = tmp_path / "t.csv"
    table.write_text("zip,disease\n13053,flu\n13068,cold\n13053,cold\n13068,flu\n", encoding="utf-8")
    result = veil("check", table, "--qi", "zip", "--sensitive", "disease", "--hierarchy", f"zip={tmp_path / 'comma.csv'}",
                  "--json")
    assert result.exit_code == 0, result.output


def test_a_hierarchy_file_that_splits_neither_way_names_the_semicolon(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text("13053,1305*,*\n13068,*\n", encoding="utf-8")
    table = tmp_path / "t.csv"
    table.write_text("zip,disease\n13053,flu\n13068,cold\n", encoding="utf-8")
    one_sentence(veil("check", table, "--qi", "zip", "--hierarchy", f"zip={path}"), "does not cover",
                 "separates its levels with ';'")


# --------------------------------------------------------------------------- encodings

@pytest.fixture
def latin(tmp_path) -> Path:
    path = tmp_path / "latin.csv"
    rows = ["Größe,Stadt,Krankheit"] + [f"{150 + i % 3},{('Köln', 'München')[i % 2]},{('Grippe', 'Erkältung')[i % 2]}"
                                         for i in range(12)]
    path.write_bytes(("\n".join(rows) + "\n").encode("latin-1"))
    return path


def test_a_latin1_table_names_the_encoding_option(latin):
    one_sentence(veil("check", latin, "--qi", "Stadt"), "not UTF-8", "--encoding")


def test_encoding_reads_a_latin1_table(latin, tmp_path):
    result = veil("check", latin, "--qi", "Stadt,Größe", "--sensitive", "Krankheit", "--encoding", "latin-1", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rows"] == 12
    config = tmp_path / "job.yaml"
    config.write_text("data: latin.csv\ncolumns: {quasi_identifiers: [Stadt, Größe], sensitive: [Krankheit]}\n"
                      "hierarchies: {Stadt: {flat: {}}, Größe: {intervals: {widths: [10]}}}\n"
                      "models: [{k_anonymity: {k: 2}}]\n", encoding="utf-8")
    made = veil("anonymize", "--config", config, "--out", tmp_path / "release.csv", "--encoding", "cp1252")
    assert made.exit_code == 0, made.output
    assert "München" in (tmp_path / "release.csv").read_text(encoding="utf-8") or \
        "*" in (tmp_path / "release.csv").read_text(encoding="utf-8")
    one_sentence(veil("check", latin, "--qi", "Stadt", "--encoding", "klingon"), "unknown text encoding 'klingon'")
    started = veil("init", latin, "--out", tmp_path / "start.yaml", "--encoding", "latin-1")
    assert started.exit_code == 0, started.output
    run = next(line for line in (tmp_path / "start.yaml").read_text(encoding="utf-8").splitlines()
               if line.startswith("# Run:"))
    assert run.endswith("--encoding iso8859-1")


# --------------------------------------------------------------------------- veil check --manifest

def test_check_takes_the_roles_from_the_manifest(project):
    tmp = project[0]
    result = veil("check", tmp / "a" / "release.csv", "--manifest", tmp / "a" / "manifest.json", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["quasi_identifiers"] == ["age", "zip"] and report["sensitive"] == ["disease"]
    one_sentence(veil("check", tmp / "a" / "release.csv"), "--qi", "--manifest")


# --------------------------------------------------------------------------- αβ parameters

@pytest.mark.parametrize("args, words", [
    (["--m", "100", "--gamma", "0.5"], ["prior bound", "--d", "--k"]),
    (["--m", "100", "--d", "0.1"], ["--gamma", "--rho", "--epsilon"]),
    (["--m", "100", "--d", "0.1", "--rho", "0.3"], ["--gamma", "--epsilon"]),
    (["--m", "100", "--d", "0.1", "--k", "2", "--n", "10", "--gamma", "0.5"], ["not both"]),
    (["--m", "100", "--d", "0.1", "--gamma", "0.5", "--rho", "0.3", "--epsilon", "0.1"], ["not both"]),
])
def test_alphabeta_parameters_say_what_is_missing(args, words):
    message = one_sentence(veil("alphabeta", "parameters", *args), *words)
    assert "neither" not in message
    if "not both" not in words:
        assert "not both" not in message


# --------------------------------------------------------------------------- attack exit statuses

def write(tmp_path, name, frame):
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def test_every_attack_exits_1_when_it_exposes_someone(tmp_path):
    first = write(tmp_path, "first.csv", pd.DataFrame({"race": ["b", "b", "w", "w"], "zip": ["*"] * 4,
                                                        "problem": ["flu", "cold", "flu", "cold"]}))
    second = write(tmp_path, "second.csv", pd.DataFrame({"race": ["*"] * 4, "zip": ["1", "2", "1", "2"],
                                                         "problem": ["flu", "cold", "flu", "cold"]}))
    assert veil("attack", "matching", first, second, "--qi", "race,zip").exit_code == 1
    assert veil("attack", "matching", first, first, "--qi", "race,zip", "--json").exit_code == 0
    population = write(tmp_path, "population.csv", pd.DataFrame({"race": ["b", "b", "w", "w", "w"],
                                                                 "zip": ["*"] * 5}))
    assert veil("attack", "presence", first, "--population", population, "--qi", "race,zip").exit_code == 1
    assert veil("attack", "presence", first, "--population", population, "--qi", "race,zip",
                "--exposed-at", "0.9", "--json").exit_code == 1
    many = write(tmp_path, "many.csv", pd.DataFrame({"race": ["b"] * 4 + ["w"] * 4, "zip": ["*"] * 8}))
    assert veil("attack", "presence", first, "--population", many, "--qi", "race,zip").exit_code == 0
    assert veil("attack", "single", first, "--qi", "race,zip", "--sensitive", "problem").exit_code == 0
    pinned = write(tmp_path, "pinned.csv", pd.DataFrame({"race": ["b", "b", "w", "w"], "zip": ["*"] * 4,
                                                         "problem": ["flu", "flu", "flu", "cold"]}))
    assert veil("attack", "single", pinned, "--qi", "race,zip", "--sensitive", "problem").exit_code == 1
    targets = write(tmp_path, "targets.csv", pd.DataFrame({"race": ["b", "w"], "zip": ["1", "2"]}))
    crossed = veil("attack", "intersection", first, second, "--targets", targets, "--qi", "race,zip",
                   "--sensitive", "problem")
    assert crossed.exit_code == 1, crossed.output
