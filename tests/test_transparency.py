"""``veil experiment transparency`` on a sample of Adult: every algorithm is attacked, Ace exposes
no one, the outputs appear together, and bad settings are one sentence."""

from __future__ import annotations

import csv

import pytest

from veil.errors import DataError, ParameterError
from veil.experiments.transparency import FILES, run_transparency, write_transparency

from helpers import one_sentence_error


@pytest.fixture(scope="module")
def small_run():
    return run_transparency(l=[2, 3], sample=400, seed=1)


def test_every_algorithm_is_attacked_and_ace_exposes_no_one(small_run):
    rows = small_run.rows
    assert [(r["algorithm"], r["l"]) for r in rows] == [(a, l) for l in (2, 3) for a in ("fulldomain", "mondrian",
                                                                                              "ace")]
    for r in rows:
        assert r["status"] == "ok" and r["records"] == 400
        assert 0 <= r["exceeding"] <= 400 and r["share"] == r["exceeding"] / 400
    for r in (r for r in rows if r["algorithm"] == "ace"):
        assert r["exceeding"] == 0 and r["exact"] and "Lemmas 1 and 2" in r["note"]


def test_outputs_are_written_together(small_run, tmp_path):
    written = write_transparency(small_run, tmp_path / "out")
    assert sorted(p.name for p in written) == sorted(FILES)
    with open(tmp_path / "out" / "transparency.csv", newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert len(table) == 6 and table[2]["algorithm"] == "ace" and table[2]["exceeding"] == "0"
    assert (tmp_path / "out" / "transparency.png").read_bytes()[:4] == b"\x89PNG"
    assert "| Ace | 2 |" in (tmp_path / "out" / "transparency.md").read_text(encoding="utf-8")
    (tmp_path / "file").write_text("x", encoding="utf-8")
    one_sentence_error(DataError, lambda: write_transparency(small_run, tmp_path / "file"), "is a file")


def test_an_l_the_data_cannot_meet_is_reported_not_raised():
    run = run_transparency(l=[9], sample=200, algorithms=["ace"])
    assert run.rows[0]["status"] == "infeasible" and "lower ℓ" in run.rows[0]["note"]


def test_bad_settings():
    one_sentence_error(ParameterError, lambda: run_transparency(l=[1]), "at least 2")
    one_sentence_error(ParameterError, lambda: run_transparency(model="recursive"), "'distinct' or 'entropy'")
    one_sentence_error(ParameterError, lambda: run_transparency(algorithms=["mdav"]), "not 'mdav'")
