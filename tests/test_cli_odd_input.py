"""Odd input that veil used to accept silently is refused with one sentence and exit status 2
(audit item 20): a manifest of another release, swapped manifests, a hierarchy or order on a
column the attack does not read, an option given twice for one column, ``--earlier-manifest``
without ``--earlier``, ``--c inf``, an edited αβ manifest, experiment options nothing uses, a
range that runs downwards, and a demo over an earlier one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from veil.cli import app

from test_ledger import release_at

from helpers import refused as one_sentence

runner = CliRunner()


def veil(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def two(tmp_path: Path) -> Path:
    """Two full-domain releases of the same four people, each with its manifest."""
    for name, levels in (("a", {"age": 1, "zip": 1}), ("b", {"age": 2, "zip": 0})):
        (tmp_path / name).mkdir()
        release_at(levels, shuffle=False).write(tmp_path / name / "release.csv", tmp_path / name / "manifest.json")
    (tmp_path / "targets.csv").write_text("age,zip\n21,1301\n32,1302\n", encoding="utf-8")
    return tmp_path


def test_intersection_refuses_a_manifest_of_another_release(two):
    a, b = two / "a", two / "b"
    one_sentence(veil("attack", "intersection", a / "release.csv", b / "release.csv", "--targets", two / "targets.csv",
                      "--manifest", f"1={b / 'manifest.json'}"), "describes", "give the manifest written with")
    ok = veil("attack", "intersection", a / "release.csv", b / "release.csv", "--targets", two / "targets.csv",
              "--manifest", f"1={a / 'manifest.json'}", "--manifest", f"2={b / 'manifest.json'}")
    assert ok.exit_code in (0, 1), ok.output


def test_matching_refuses_swapped_manifests(two):
    a, b = two / "a", two / "b"
    one_sentence(veil("attack", "matching", a / "release.csv", b / "release.csv", "--manifest1", b / "manifest.json",
                      "--manifest2", a / "manifest.json"), "describes")
    ok = veil("attack", "matching", a / "release.csv", b / "release.csv", "--manifest1", a / "manifest.json",
              "--manifest2", b / "manifest.json")
    assert ok.exit_code in (0, 1), ok.output


def test_intersection_refuses_an_order_or_hierarchy_on_a_column_it_does_not_read(two):
    a, b = two / "a", two / "b"
    base = ["attack", "intersection", a / "release.csv", b / "release.csv", "--targets", two / "targets.csv",
            "--manifest", f"1={a / 'manifest.json'}", "--manifest", f"2={b / 'manifest.json'}"]
    one_sentence(veil(*base, "--order", "nope=a,b"), "--order names 'nope'", "age, zip")
    (two / "h.csv").write_text("flu;*\ncold;*\ncancer;*\n", encoding="utf-8")
    one_sentence(veil(*base, "--hierarchy", f"disease={two / 'h.csv'}"), "--hierarchy names 'disease'")


def test_an_option_given_twice_for_one_column_is_refused(two, tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("zip,disease\n13053,flu\n13068,cold\n", encoding="utf-8")
    (tmp_path / "z1.csv").write_text("13053;*\n13068;*\n", encoding="utf-8")
    (tmp_path / "z2.csv").write_text("13053;1305*;*\n13068;1306*;*\n", encoding="utf-8")
    one_sentence(veil("check", table, "--qi", "zip", "--hierarchy", f"zip={tmp_path / 'z1.csv'}",
                      "--hierarchy", f"zip={tmp_path / 'z2.csv'}"), "--hierarchy is given twice for 'zip'")
    a, b = two / "a", two / "b"
    one_sentence(veil("attack", "intersection", a / "release.csv", b / "release.csv", "--targets", two / "targets.csv",
                      "--manifest", f"1={a / 'manifest.json'}", "--manifest", f"release.csv={a / 'manifest.json'}"),
                 "given twice for release 1")


def test_check_refuses_an_earlier_manifest_without_earlier_and_an_infinite_c(two):
    release = two / "a" / "release.csv"
    one_sentence(veil("check", release, "--qi", "age,zip", "--earlier-manifest", two / "b" / "manifest.json"),
                 "--earlier-manifest", "--earlier")
    one_sentence(veil("check", release, "--qi", "age,zip", "--sensitive", "disease", "--c", "inf"),
                 "c must be greater than 0 and finite")


def test_an_edited_alphabeta_manifest_is_refused(tmp_path):
    (tmp_path / "people.csv").write_text("sex,age,city\n" + "".join(
        f"{'FM'[i % 2]},{20 + i % 10},{('Oslo', 'Rome', 'Lima')[i % 3]}\n" for i in range(40)), encoding="utf-8")
    (tmp_path / "sex.csv").write_text("F;*\nM;*\n", encoding="utf-8")
    doc = {"data": "people.csv", "columns": {"quasi_identifiers": ["sex", "age"], "sensitive": ["city"]},
           "hierarchies": {"sex": {"file": "sex.csv"}},
           "algorithm": {"name": "alphabeta", "gamma": 0.4, "d": 0.05, "seed": 3,
                         "domains": {"age": {"min": 20, "max": 29}, "city": ["Oslo", "Rome", "Lima"]}}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    made = veil("anonymize", "--config", tmp_path / "job.yaml", "--out", tmp_path / "view.csv",
                "--manifest", tmp_path / "view.json")
    assert made.exit_code == 0, made.output
    (tmp_path / "q.yaml").write_text("- {sex: F}\n", encoding="utf-8")
    args = ("alphabeta", "estimate", tmp_path / "view.csv", "--manifest", tmp_path / "view.json",
            "--queries", tmp_path / "q.yaml")
    assert veil(*args).exit_code == 0
    manifest = json.loads((tmp_path / "view.json").read_text(encoding="utf-8"))
    manifest["parameters"]["alpha"] = -1
    (tmp_path / "view.json").write_text(json.dumps(manifest), encoding="utf-8")
    one_sentence(veil(*args), "alpha = -1", "edited")


@pytest.mark.parametrize("args, words", [
    (["composition", "--l", "nan"], ["--l sets the l variant", "--variants"]),
    (["composition", "--variants", "k", "--t", "0.3"], ["--t sets the t variant"]),
    (["composition", "--variants", "l", "--l", "inf"], ["finite"]),
    (["tradeoff", "--algorithm", "mondrian", "--suppression", "0.1"], ["--suppression", "Mondrian"]),
    (["transparency", "--algorithms", "ace", "--model", "entropy"], ["--model"]),
    (["marginals", "--l", "inf"], ["finite"]),
])
def test_experiment_options_nothing_uses_are_refused(tmp_path, args, words):
    one_sentence(veil("experiment", *args, "--out", tmp_path / "out"), *words)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_an_audit_range_that_runs_downwards_is_refused(tmp_path):
    data = tmp_path / "x.csv"
    data.write_text("name,age\na,35\nb,38\nc,45\n", encoding="utf-8")
    queries = tmp_path / "q.txt"
    queries.write_text("sum where age between 40 and 30\n", encoding="utf-8")
    one_sentence(veil("audit", data, "--column", "age", "--queries", queries), "runs downwards",
                 "between 30 and 40")
    queries.write_text("sum where age between 30 and 40\n", encoding="utf-8")
    assert veil("audit", data, "--column", "age", "--queries", queries).exit_code == 0
