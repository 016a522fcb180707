"""Helpers shared by the test modules, and where the reference data is (see conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from veil.data.bundled import adult_folder
from veil.errors import VeilError

# Every file a test reads is in the repository. Adult and its ARX hierarchies are the copies veil
# bundles; the other reference tables are byte-exact copies in tests/data (its README.md).
TEST_DATA = Path(__file__).resolve().parent / "data"
ADULT_DIR = adult_folder()
ADULT_SUBSET_CSV = TEST_DATA / "adult_subset.csv"
ARX_TOY_DIR = TEST_DATA / "arx-toy"
# The weighted survey fixture (tests/data/survey.csv) as the SDC tests configure it: its
# quasi-identifiers, and the columns and hierarchies of a configuration over it.
SURVEY_QIS = ["sex", "age", "race", "marital-status"]
SURVEY_BASE = {
    "data": "survey.csv",
    "columns": {"quasi_identifiers": SURVEY_QIS, "identifying": ["id"], "weight": "weight", "strata": ["region"],
                "household": "household"},
    "hierarchies": {"age": {"intervals": {"widths": [5, 10, 20]}}, "sex": {"flat": {}}, "race": {"flat": {}},
                    "marital-status": {"flat": {}}},
}


def reference_file(name: str) -> Path:
    """A reference file by its name in the ARX data folder: ``adult/<file>`` (veil's bundled
    copy) or ``arx-toy/<file>`` (the copy in tests/data)."""
    folder, _, file = name.partition("/")
    return {"adult": ADULT_DIR, "arx-toy": ARX_TOY_DIR}[folder] / file


def veil(*args):
    """Run the ``veil`` command in this process with ``args`` (each turned into text)."""
    from typer.testing import CliRunner

    from veil.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


def refused(result, *words) -> str:
    """Check that a ``veil`` run was refused for bad input: exit status 2, one line on stderr
    starting ``error:`` with every word in it, no traceback; return that line."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.output
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def one_sentence_error(exc_type, call, *words) -> str:
    """Run ``call``, expect a one-sentence ``exc_type`` (a VeilError) whose message holds every
    word, and return the message."""
    with pytest.raises(exc_type) as info:
        call()
    msg = str(info.value)
    assert isinstance(info.value, VeilError)
    assert "\n" not in msg, f"not one sentence: {msg!r}"
    for word in words:
        assert word in msg, f"{word!r} not in {msg!r}"
    return msg
