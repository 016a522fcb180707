"""What importing veil and running its commands loads: heavy libraries only where they are used.

Each case runs in a fresh interpreter (the modules a test process already holds say nothing) and
lists the heavy top-level packages it ended up with.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import veil
from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, adult_folder

HEAVY = ("scipy", "sklearn", "matplotlib", "opendp", "pandas")
SRC = Path(veil.__file__).resolve().parents[1]  # the veil under test


def loaded(code: str) -> list[str]:
    """The heavy packages a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r})))"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(SRC)})
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_veil_loads_nothing_heavy_not_even_numpy():
    assert loaded("import veil") == []
    assert loaded("import veil, sys; assert 'numpy' not in sys.modules") == []


def test_checking_a_csv_with_a_hierarchy_loads_nothing_heavy():
    folder = adult_folder()
    code = (f"import veil\n"
            f"ds = veil.Dataset({str(folder / 'adult.csv')!r}, quasi_identifiers={list(ADULT_QUASI_IDENTIFIERS)!r}, "
            f"sensitive='occupation', hierarchies={{'occupation': {str(folder / 'adult_hierarchy_occupation.csv')!r}}})\n"
            f"report = veil.check(ds)\nreport.to_dict()\nds.stray_text_notes()")
    assert loaded(code) == []
