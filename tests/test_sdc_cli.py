"""``veil anonymize`` with the methods of statistical disclosure control, end to end on a weighted
survey of 300 records (tests/data/survey.csv): each method seeded and secure, a recoding then local
suppression, the manifest naming nothing of the private table, bad input refused with nothing written."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml
from helpers import SURVEY_BASE as BASE
from helpers import SURVEY_QIS as QIS
from helpers import TEST_DATA, refused, veil

METHODS = {
    "localsuppression": {"name": "localsuppression", "k": 3, "importance": ["sex", "race"]},
    "pram": {"name": "pram", "columns": ["race", "marital-status"], "alpha": 0.3},
    "pram-matrix": {"name": "pram", "columns": ["sex"], "matrix": {"sex": [[0.9, 0.1], [0.2, 0.8]]}},
    "swap": {"name": "swap", "columns": ["income", "hours"], "p": 10},
    "noise": {"name": "noise", "columns": ["income", "hours"], "amount": 0.5, "kind": "correlated"},
    "topcoding": {"name": "topcoding", "columns": {"income": {"top": 40000}}},
}
RANDOMIZED = ("pram", "pram-matrix", "swap", "noise")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    shutil.copy(TEST_DATA / "survey.csv", tmp_path / "survey.csv")
    return tmp_path


def rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def run(folder: Path, doc: dict, *extra):
    (folder / "job.yaml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return veil("anonymize", "--config", folder / "job.yaml", "--out", folder / "release.csv", "--manifest",
                folder / "manifest.json", *extra)


def documents(folder: Path) -> tuple[dict, dict]:
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    private = json.loads((folder / "manifest.private.json").read_text(encoding="utf-8"))
    return manifest, private


# Every method secure, and every randomized one seeded too (a deterministic method has no seed).
@pytest.mark.parametrize("method, seeded", [(m, False) for m in METHODS] + [(m, True) for m in METHODS
                                                                            if m in RANDOMIZED])
def test_each_method_seeded_and_secure(folder, method, seeded):
    algorithm = {**METHODS[method], **({"seed": 11} if seeded else {})}
    result = run(folder, {**BASE, "algorithm": algorithm})
    assert result.exit_code == 0, result.output
    manifest, private = documents(folder)
    released, original = rows(folder / "release.csv"), rows(folder / "survey.csv")
    assert len(released) == 300 and "id" not in released[0]
    assert manifest["algorithm"] == algorithm["name"] and manifest["kind"] == "perturbation"
    assert manifest["roles"]["weight"] == "weight" and manifest["roles"]["quasi_identifiers"] == QIS
    assert manifest["fit_for_release"] is (not seeded)
    assert manifest["sdc"]["seed"] == (11 if seeded else None)
    assert manifest["output"]["order"] == "secure shuffle"
    if not seeded:
        assert "not fit" not in result.output and "fit for release" in result.output
        assert '"seed": 11' not in (folder / "manifest.json").read_text()
    for column in ("income", "hours") if method == "swap" else ():
        assert Counter(r[column] for r in released) == Counter(r[column] for r in original)  # swapping keeps it
    if method == "noise":
        assert Counter(r["income"] for r in released) != Counter(r["income"] for r in original)
    if method == "pram-matrix":   # the publisher's matrix is published, for the estimator
        assert manifest["sdc"]["parameters"]["per_column"][0]["matrix"] == [[0.9, 0.1], [0.2, 0.8]]
        assert "sex" in private["sdc"]["utility"] and private["sdc"]["utility"]["sex"]["estimate"]
    if method == "topcoding":
        assert max(int(r["income"]) for r in released) == 40000
    before, after = private["sdc"]["risk_before"], private["sdc"]["risk_after"]
    assert before["records"] == after["records"] == 300 and before["weighted"]
    assert private["input"]["rows"] == 300 and "rows" not in manifest["input"]


def test_the_same_seed_makes_the_same_release(folder):
    texts = []
    for _ in range(2):
        doc = {**BASE, "algorithm": {**METHODS["pram"], "seed": 5}, "output": {"seed": 3}}
        assert run(folder, doc).exit_code == 0
        texts.append((folder / "release.csv").read_text())
    assert texts[0] == texts[1]


@pytest.mark.parametrize("matching", ["any", "category"])
def test_recoding_then_local_suppression_is_k_anonymous_under_its_matching(folder, matching):
    from veil.sdc.local_suppression import is_k_anonymous

    doc = {**BASE, "models": [{"k_anonymity": {"k": 2}}], "suppression_limit": 0.0,
           "algorithm": {"name": "localsuppression", "recode": "fulldomain", "k": 6, "matching": matching},
           "output": {"suppressed": "star"}}
    result = run(folder, doc, "--report", folder / "report.html")
    assert result.exit_code == 0, result.output
    manifest, private = documents(folder)
    released = rows(folder / "release.csv")
    assert manifest["sdc"]["recoding"]["algorithm"] == "fulldomain" and manifest["sdc"]["recoding"]["node"]
    cells = np.array([[r[q] for q in QIS] for r in released], dtype=object)
    suppressed = cells == "*"
    recoding = manifest["sdc"]["recoding"]
    below_top = [j for j, q in enumerate(QIS) if recoding["node"][q] < recoding["heights"][q]]  # "*" is suppressed
    assert suppressed[:, below_top].sum() == sum(manifest["sdc"]["suppressed_cells"].values()) > 0
    codes = [np.unique(cells[:, j], return_inverse=True)[1].reshape(-1) for j in range(len(QIS))]
    assert is_k_anonymous(codes, suppressed, 6, matching)
    if matching == "any":   # the risk reads a suppressed cell as sdcMicro does: any value (strata aside)
        import pyarrow.csv as pacsv

        from veil.sdc.table_risk import table_risk

        table = pacsv.read_csv(folder / "release.csv", convert_options=pacsv.ConvertOptions(
            column_types={q: "string" for q in QIS}))
        assert table_risk(table, QIS, weight="weight", marker="*").sample.min() >= 6
    assert "Suppressed cells per column" in (folder / "report.html").read_text()
    again = veil("report", folder / "manifest.json", "--out", folder / "again.html")   # from the files, later
    assert again.exit_code == 0, again.output
    assert "Suppressed cells per column" in (folder / "again.html").read_text()


def _leaves(value, out: set) -> set:
    if isinstance(value, dict):
        for key, item in value.items():
            out.add(key)
            _leaves(item, out)
    elif isinstance(value, list):
        for item in value:
            _leaves(item, out)
    else:
        out.add(value)
    return out


@pytest.mark.parametrize("method", ["localsuppression", "pram", "pram-matrix", "swap", "noise"])
def test_the_manifest_names_no_private_value(folder, method):
    doc = {**BASE, "algorithm": METHODS[method], "output": {"suppressed": "star"}}
    assert run(folder, doc).exit_code == 0
    manifest, _ = documents(folder)
    manifest.pop("release")   # the file's size and hash, whose digits may happen to read as a value
    leaves = _leaves(manifest, set())
    original = rows(folder / "survey.csv")
    for column in ("id", "household", "region", "sex", "race", "marital-status", "education", "occupation",
                   "weight", "income"):
        values = {r[column] for r in original}
        numbers = {float(v) for v in values} if column in ("weight", "income") else set()
        named = [v for v in leaves if (isinstance(v, str) and v in values)
                 or (not isinstance(v, (str, bool)) and v is not None and float(v) in numbers)]
        assert not named, (column, named)


def _unchanged(folder: Path) -> None:
    assert sorted(p.name for p in folder.iterdir()) == ["job.yaml", "survey.csv"]


def test_bad_weights_are_refused_with_nothing_written(folder):
    lines = (folder / "survey.csv").read_text().splitlines()
    for bad, words in (("0", ["'weight'", "positive"]), ("heavy", ["'weight'"]), ("", ["'weight'"])):
        fields = lines[5].split(",")
        fields[3] = bad
        (folder / "survey.csv").write_text("\n".join(lines[:5] + [",".join(fields)] + lines[6:]) + "\n")
        refused(run(folder, {**BASE, "algorithm": METHODS["pram"]}), *words)
        _unchanged(folder)


@pytest.mark.parametrize("change, words", [
    ({"models": [{"population_uniqueness": {"share": 0.1, "population_size": 200}}],
      "algorithm": {**METHODS["swap"], "columns": ["hours"], "recode": "fulldomain"}},
     ["job.yaml, line", "population size"]),
    ({"algorithm": {**METHODS["localsuppression"], "importance": ["education"]}}, ["line", "'education'"]),
    ({"algorithm": {"name": "pram", "columns": ["sex"], "matrix": {"sex": [[0.5, 0.4], [0.5, 0.5]]}}},
     ["line", "not stochastic"]),
    ({"algorithm": {"name": "pram", "columns": ["race"], "matrix": {"race": [[0.5, 0.5], [0.5, 0.5]]}}},
     ["line", "categories"]),
    ({"algorithm": {"name": "noise", "columns": ["education"], "amount": 0.5}}, ["line", "numbers"]),
])
def test_bad_input_is_one_sentence_exit_2_nothing_written(folder, change, words):
    refused(run(folder, {**BASE, **change}), *words)
    _unchanged(folder)


def test_the_methods_run_on_the_local_engine_only(folder):
    refused(run(folder, {**BASE, "algorithm": METHODS["swap"]}, "--engine", "spark"), "local engine")
    _unchanged(folder)


def test_the_gate_reads_what_veil_anonymize_wrote_in_a_real_process(folder):
    doc = {**BASE, "algorithm": METHODS["pram"]}
    (folder / "job.yaml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    env = {**os.environ, "COLUMNS": "100"}
    done = subprocess.run([sys.executable, "-m", "veil", "anonymize", "--config", "job.yaml", "--out", "release.csv",
                           "--manifest", "manifest.json", "--report", "report.html", "--json"], cwd=folder,
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["fit_for_release"] is True
    assert {"release.csv", "manifest.json", "manifest.private.json", "report.html"} <= {p.name for p in
                                                                                          folder.iterdir()}
    assert "Re-identification risk before and after" in (folder / "report.html").read_text()


def test_records_the_recoding_suppressed_are_shown_and_left_alone(folder):
    doc = {**BASE, "models": [{"k_anonymity": {"k": 10}}], "suppression_limit": 0.05,
           "algorithm": {**METHODS["swap"], "recode": "fulldomain"}, "output": {"suppressed": "star"}}
    result = run(folder, doc)
    assert result.exit_code == 0, result.output
    manifest, private = documents(folder)
    released, original = rows(folder / "release.csv"), rows(folder / "survey.csv")
    starred = [r for r in released if all(r[q] == "*" for q in QIS)]
    assert len(released) == 300 and len(starred) == manifest["suppression"]["records"] > 0
    assert private["suppression"]["records"] == len(starred)
    assert Counter(r["income"] for r in released) == Counter(r["income"] for r in original)
    assert Counter((r["hours"], r["income"]) for r in starred) <= Counter(
        (r["hours"], r["income"]) for r in original)   # the suppressed records keep their own values


def test_a_population_below_the_sample_is_refused_for_full_domain_too(folder):
    doc = {**BASE, "models": [{"population_uniqueness": {"share": 0.5, "population_size": 299}}]}
    refused(run(folder, doc), "line", "population size (299)", "300")
    _unchanged(folder)


def test_local_suppression_loses_and_invents_no_record(folder):
    doc = {**BASE, "algorithm": {**METHODS["localsuppression"], "k": 4}}
    result = run(folder, doc, "--keep-order")
    assert result.exit_code == 0, result.output
    manifest, _ = documents(folder)
    assert manifest["output"]["order"] == "input order" and "warnings" in manifest
    released, original = rows(folder / "release.csv"), rows(folder / "survey.csv")
    assert len(released) == len(original)
    blanks, households = 0, {}
    for mine, theirs in zip(released, original):
        for column, value in mine.items():
            if column in QIS and value == "":
                blanks += 1   # a suppressed cell, published empty (output: remove)
            elif column == "household":   # renumbered: one number per household, no other change
                assert households.setdefault(theirs[column], value) == value
            else:
                assert value == theirs[column], (column, value, theirs[column])
    assert len(set(households.values())) == len(households)
    assert blanks == sum(manifest["sdc"]["suppressed_cells"].values()) > 0


def test_household_ids_are_renumbered_and_still_group_each_household(folder):
    """The survey's household key links the release to its sampling frame: it is published as
    1, 2, … in the order households first appear in the shuffled rows, which keeps each household's
    members together and nothing else."""
    assert run(folder, {**BASE, "algorithm": METHODS["localsuppression"]}).exit_code == 0
    manifest, _ = documents(folder)
    released, original = rows(folder / "release.csv"), rows(folder / "survey.csv")
    numbers = [r["household"] for r in released]
    assert not set(numbers) & {r["household"] for r in original}  # no survey key is published
    firsts = list(dict.fromkeys(numbers))
    assert firsts == [str(i) for i in range(1, len(firsts) + 1)]
    # the same partition of the records: each household's size is kept
    assert sorted(Counter(numbers).values()) == sorted(Counter(r["household"] for r in original).values())
    assert "renumbered" in manifest["sdc"]["household_ids"]
