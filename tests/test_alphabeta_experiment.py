"""The αβ experiment on Adult (veil.experiments.alphabeta)."""

from __future__ import annotations

import csv
import io
import math

import pytest

from veil.errors import ParameterError
from veil.experiments.alphabeta import COLUMNS, FILES, csv_text, run_alphabeta, write_alphabeta


@pytest.fixture(scope="module")
def run():
    return run_alphabeta(gammas=(0.7, 0.3), queries=200, views=2, seed=3)


def test_one_row_per_gamma_with_the_chosen_parameters(run):
    rows = run.rows
    assert [r["gamma"] for r in rows] == [0.3, 0.7]
    assert all(r["n"] == 19_502 and r["m"] == 1_028_608_000 for r in rows)
    assert rows[0]["beta"] > rows[1]["beta"] and rows[0]["view_rows"] > rows[1]["view_rows"]
    for r in rows:
        assert r["kept"] + r["inserted"] == pytest.approx(r["view_rows"])
        assert r["keep_probability"] == pytest.approx(1 - r["d"] / r["gamma"])
        assert r["rho"] == pytest.approx(math.sqrt(1 / r["gamma"]))
        assert 0 <= r["share_missing_by_rho_sqrt_n"] <= r["theorem_4_4_bound"] <= 1
        assert 0.5 * r["expected_rms_error"] < r["rms_error"] < 2 * r["expected_rms_error"]
        assert r["standard_error_coverage"] > 0.8


def test_outputs_are_written_together(run, tmp_path):
    written = write_alphabeta(run, tmp_path / "out")
    assert sorted(p.name for p in written) == sorted(FILES)
    table = list(csv.DictReader(io.StringIO((tmp_path / "out" / FILES[0]).read_text())))
    assert tuple(table[0]) == COLUMNS and len(table) == 2
    assert "not fit for release" in (tmp_path / "out" / FILES[1]).read_text()
    assert (tmp_path / "out" / FILES[2]).read_bytes().startswith(b"\x89PNG")
    assert csv_text(run) == (tmp_path / "out" / FILES[0]).read_text()


@pytest.mark.parametrize("kwargs, message", [
    ({"gammas": (1.2,)}, "strictly between 0 and 1"),
    ({"gammas": ()}, "at least one value of gamma"),
    ({"gammas": (1e-6,)}, "not below gamma"),
    ({"queries": 0}, "at least 1"),
    ({"views": 0}, "at least 1"),
    ({"k": -1}, "positive"),
    ({"seed": -1}, "0 or more"),
])
def test_bad_settings_get_one_sentence(kwargs, message):
    with pytest.raises(ParameterError, match=message):
        run_alphabeta(**kwargs)
