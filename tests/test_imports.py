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


def loaded(code: str, names=HEAVY) -> list[str]:
    """Which of ``names`` (packages or modules) a fresh interpreter holds once it has run
    ``code`` (even when ``code`` ends by exiting, as a command does)."""
    probe = ("import atexit, json, sys\n"
             "atexit.register(lambda: print(json.dumps(sorted(({m.split('.')[0] for m in sys.modules} | "
             f"set(sys.modules)) & {set(names)!r}))))\n{code}\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(SRC)})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def veil_command(*args: str) -> str:
    """Code that runs ``veil ARGS…`` as the console script does."""
    return f"from veil.cli import main\nsys.argv = ['veil', *{list(args)!r}]\nmain()"


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


def test_veil_help_loads_nothing_heavy():
    assert loaded(veil_command("--help")) == []
    assert loaded(veil_command("--version")) == []


def test_veil_check_loads_nothing_heavy():
    folder = adult_folder()
    args = ["check", str(folder / "adult.csv"), "--qi", ",".join(ADULT_QUASI_IDENTIFIERS), "--sensitive",
            "occupation", "--hierarchy", f"occupation={folder / 'adult_hierarchy_occupation.csv'}", "--json"]
    assert loaded(veil_command(*args)) == []


def test_a_command_group_is_imported_when_it_runs_and_not_before():
    groups = ("veil.cli.dp", "veil.cli.ldp", "veil.cli.attack", "veil.cli.experiment", "veil.cli.config")
    assert loaded(veil_command("--help"), groups) == []
    assert loaded(veil_command("dp", "--help"), groups) == ["veil.cli.dp"]


# What ``veil check --json`` leaves out (issue 26): Rich draws only the tables the JSON replaces;
# pyarrow.compute, whose import wraps each of Arrow's functions (see veil.data.kernels), pyarrow's
# Parquet reader and the file systems it brings, polars, Spark's engine and the other commands
# are not needed to read a CSV file and measure it.
CHECK_JSON_LEAVES_OUT = ("rich", "pandas", "polars", "pyspark", "pyarrow.compute", "pyarrow.parquet",
                         "pyarrow.fs", "veil.engines.spark", "veil.cli.anonymize", "veil.cli.audit",
                         "veil.cli.ledger", "veil.cli.marginals", "veil.cli.report")


def adult_check_args(*extra: str) -> list[str]:
    folder = adult_folder()
    return ["check", str(folder / "adult.csv"), "--qi", ",".join(ADULT_QUASI_IDENTIFIERS), "--sensitive",
            "occupation", *extra]


def test_veil_check_json_loads_neither_rich_nor_what_only_other_paths_need():
    folder = adult_folder()
    assert loaded(veil_command(*adult_check_args("--json")), CHECK_JSON_LEAVES_OUT) == []
    hierarchy = f"occupation={folder / 'adult_hierarchy_occupation.csv'}"
    assert loaded(veil_command(*adult_check_args("--hierarchy", hierarchy, "--json")),
                  CHECK_JSON_LEAVES_OUT) == []


def test_veil_check_without_json_still_draws_its_tables_with_rich():
    # the probe above can see Rich: the human output loads it, and nothing else of the list
    assert loaded(veil_command(*adult_check_args()), CHECK_JSON_LEAVES_OUT) == ["rich"]


def test_a_full_domain_release_loads_nothing_heavy(tmp_path):
    # The search, the release and its utility table (KL-divergence, workload) need neither pandas
    # nor SciPy: the αβ algorithm and MDAV, which read with pandas, are not imported with it, and
    # the max-ent estimator imports SciPy's solver only when it solves.
    folder = adult_folder()
    columns = list(ADULT_QUASI_IDENTIFIERS) + ["salary-class"]
    hierarchies = "\n".join(f"  {c}: {{file: '{folder / f'adult_hierarchy_{c}.csv'}'}}" for c in columns)
    config = tmp_path / "fulldomain.yaml"
    config.write_text(f"data: '{folder / 'adult.csv'}'\ndelimiter: ';'\ncolumns:\n  quasi_identifiers: "
                      f"[{', '.join(columns)}]\n  sensitive: [occupation]\nhierarchies:\n{hierarchies}\n"
                      "models:\n  - k_anonymity: {k: 5}\nsuppression_limit: 0.02\nmetric: loss\n"
                      "algorithm: {name: fulldomain}\n", encoding="utf-8")
    out = tmp_path / "release.csv"
    assert loaded(veil_command("anonymize", "--config", str(config), "--out", str(out))) == []
    assert out.exists()
