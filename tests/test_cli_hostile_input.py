"""Hostile input on the command line (the audit of issue 25, item 11): each case is one sentence on
standard error with exit status 2, never a traceback, a hang, a partial output, a raw control
character or an unbounded echo of the user's text.

* files that are not UTF-8, not regular (a FIFO, ``/dev/zero``), or huge where veil reads them
  whole; a CSV header longer than the sniffing window;
* numbers out of every range (a negative seed, a record number beyond int64, a simulation larger
  than memory); JSON of the wrong shape (a manifest, a DP answer, a ledger's payload); a ledger in
  a folder that cannot hold one;
* text that would drive the terminal or reorder a page: escapes in a column name, a 1 MB cell
  quoted in a message, binary input, U+202E in a report;
* and the last resort: a bug is one sentence with exit status 70, and other packages' warnings
  never reach the terminal (``VEIL_DEBUG`` shows both; the suite runs with ``VEIL_DEBUG=error``).
"""

from __future__ import annotations

import gzip
import importlib
import json
import os
import re
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veil.cli import app
from veil.cli.debug import EXIT_BUG
from veil.untrusted import SENTENCE_LIMIT

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
# A raw control character (C0 but the line break, DEL, C1) or a bidirectional control.
UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def invoke(*args, **kwargs):
    return runner.invoke(app, [str(a) for a in args], **kwargs)


def assert_refused(result, *words) -> str:
    """Exit 2, nothing on stdout, one bounded and safe sentence on stderr holding every word."""
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 2, (result.exit_code, result.output[-2000:])
    assert result.stdout == ""
    stderr = result.stderr
    assert stderr.startswith("error: ") and stderr.endswith("\n") and stderr.count("\n") == 1, stderr[:2000]
    assert "Traceback" not in stderr
    assert not UNSAFE.search(stderr), f"raw control character in {stderr[:300]!r}"
    assert len(stderr) <= SENTENCE_LIMIT + 20, f"{len(stderr):,} characters"
    for word in words:
        assert word in stderr, stderr
    return stderr


def run_veil(*args, env=None, timeout=120, **kwargs) -> subprocess.CompletedProcess:
    """``veil ARGS`` as a process, within 3 GiB of address space (a command that reads without
    bound dies instead of filling the machine) and ``timeout`` seconds (one that waits forever is
    stopped: the test fails on ``TimeoutExpired``)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    environment = {**os.environ, **(env or {}),
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "veil", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, preexec_fn=limit, env=environment, stdin=subprocess.DEVNULL, **kwargs)


def assert_process_refused(proc: subprocess.CompletedProcess, *words) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1, proc.stderr[-2000:]
    assert not UNSAFE.search(proc.stderr)
    for word in words:
        assert word in proc.stderr, proc.stderr
    return proc.stderr


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "people.csv"
    path.write_text("sex,age,zip,disease\n" + "".join(
        f"{'mf'[i % 2]},{20 + i % 30},{13050 + i % 4},{('flu', 'cold', 'hiv')[i % 3]}\n" for i in range(60)),
        encoding="utf-8")
    return path


@pytest.fixture
def config(tmp_path: Path, table: Path) -> Path:
    path = tmp_path / "people.yaml"
    path.write_text(f"data: {table.name}\ncolumns:\n  quasi_identifiers: [sex, age, zip]\n  sensitive: [disease]\n"
                    "hierarchies:\n  sex: {flat: {}}\n  age: {intervals: {widths: [5, 10]}}\n  zip: {masking: {}}\n"
                    "models:\n  - k_anonymity: {k: 5}\nmarginals:\n  privacy: [{k_link: {k: 2}}]\n  base: none\n"
                    "  publish: [{attributes: [sex, disease]}]\n",
                    encoding="utf-8")
    return path


@pytest.fixture
def release(tmp_path: Path, table: Path, config: Path) -> Path:
    """The manifest of a release of ``table``."""
    manifest = tmp_path / "release.json"
    result = invoke("anonymize", table, "--config", config, "--out", tmp_path / "release.csv", "--manifest", manifest)
    assert result.exit_code == 0, result.output
    return manifest


@pytest.fixture
def latin1(tmp_path: Path) -> Path:
    path = tmp_path / "order.txt"
    path.write_bytes("20\n21\ncaf\xe9\n".encode("latin-1"))
    return path


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.csv"
    os.mkfifo(path)
    return path


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    path = tmp_path / "ledger.db"
    assert invoke("ledger", "init", "--ledger", path).exit_code == 0
    return path


# ------------------------------------------------------------------ files: encoding, kind, size

ORDER_COMMANDS = {
    "check": ["check", "{table}", "--qi", "sex,age"],
    "attack intersection": ["attack", "intersection", "{table}", "{table}", "--targets", "{table}", "--qi", "sex,age",
                            "--sensitive", "disease"],
    "publish": ["publish", "{release}", "--population", "people", "--data", "{table}", "--ledger", "{ledger}"],
}


@pytest.mark.parametrize("command", ORDER_COMMANDS)
def test_an_order_file_that_is_not_utf8_is_one_sentence(command, table, release, ledger, latin1):
    args = [a.format(table=table, release=release, ledger=ledger) for a in ORDER_COMMANDS[command]]
    assert_refused(invoke(*args, "--order", f"age={latin1}"), "--order file", "not UTF-8")


@pytest.mark.parametrize("command", ["check", "publish"])
def test_an_order_file_that_is_a_pipe_is_refused_without_waiting(command, table, release, ledger, fifo):
    args = [a.format(table=table, release=release, ledger=ledger) for a in ORDER_COMMANDS[command]]
    assert_refused(invoke(*args, "--order", f"age={fifo}"), "named pipe", "not a regular file")


def test_check_refuses_dev_zero_instead_of_reading_it_forever():
    assert_process_refused(run_veil("check", "/dev/zero", "--qi", "a"), "/dev/zero", "a device",
                           "not a regular file")


def test_anonymize_refuses_a_configuration_that_never_ends(tmp_path):
    out = tmp_path / "out.csv"
    assert_process_refused(run_veil("anonymize", "--config", "/dev/zero", "--out", out), "configuration file",
                           "a device")
    assert not out.exists()


@pytest.mark.parametrize("command", ["check", "anonymize", "marginals"])
def test_a_fifo_as_the_table_is_refused_without_waiting_for_a_writer(command, tmp_path, config, fifo):
    args = {"check": ["check", fifo, "--qi", "sex"],
            "anonymize": ["anonymize", fifo, "--config", config, "--out", tmp_path / "out.csv"],
            "marginals": ["marginals", fifo, "--config", config, "--out", tmp_path / "out"]}[command]
    assert_process_refused(run_veil(*args, timeout=60), "pipe.csv", "not a regular file")
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "out").exists()


def test_a_header_longer_than_the_sniffing_window_is_read_whole(tmp_path):
    # 12,000 columns: about 80 KiB of names; the names cut at 64 KiB made a false duplicate.
    names = [f"c{i}" for i in range(12_000)]
    path = tmp_path / "wide.csv"
    path.write_text(",".join(names) + "\n" + "\n".join(",".join(str((i * j) % 3) for i in range(12_000))
                                                       for j in range(4)) + "\n", encoding="utf-8")
    result = invoke("check", path, "--qi", "c1,c11999", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rows"] == 4


def test_a_header_row_past_the_bound_is_one_sentence(tmp_path, monkeypatch):
    import veil.data.io as io

    monkeypatch.setattr(io, "MAX_HEADER_BYTES", 1 << 17)
    path = tmp_path / "names.csv"
    path.write_text("a," + "x" * (1 << 18) + "\n1,2\n", encoding="utf-8")
    assert_refused(invoke("check", path, "--qi", "a"), "header row", "longer than")


@pytest.mark.parametrize("kind", ["gzip", "binary"])
@pytest.mark.parametrize("command", ["anonymize", "marginals"])
def test_binary_input_is_not_utf8_instead_of_its_bytes(command, kind, tmp_path, table, config):
    data = tmp_path / ("people.csv.gz" if kind == "gzip" else "people.bin")
    data.write_bytes(gzip.compress(table.read_bytes()) if kind == "gzip" else bytes(range(256)) * 64)
    out = tmp_path / ("out.csv" if command == "anonymize" else "out")
    message = assert_refused(invoke(command, data, "--config", config, "--out", out), "not UTF-8")
    assert "use one of" not in message
    assert not out.exists()


# ------------------------------------------------------------------ numbers out of every range

@pytest.mark.parametrize("experiment", ["releases", "transparency"])
def test_a_negative_seed_is_one_sentence(experiment, tmp_path):
    assert_refused(invoke("experiment", experiment, "--seed", "-3", "--out", tmp_path / "out"),
                   "seed", "0 or more")


def test_an_audit_record_number_beyond_int64_is_one_sentence(tmp_path, table):
    queries = tmp_path / "queries.txt"
    queries.write_text("sum rows 1, 99999999999999999999999\n", encoding="utf-8")
    assert_refused(invoke("audit", table, "--column", "age", "--queries", queries),
                   "99999999999999999999999", "numbered 0 to 59")


def test_an_ldp_simulation_larger_than_memory_is_refused_with_the_limit(monkeypatch):
    import veil.cli.ldp as ldp

    monkeypatch.setattr(ldp, "_memory", lambda: 24 << 30)
    message = assert_refused(invoke("ldp", "simulate", "--users", "10000000000000", "--epsilon", "1",
                                    "--domain", "10"), "--users 10,000,000,000,000", "24.0 GiB")
    most = int(re.search(r"at most ([\d,]+) users", message).group(1).replace(",", ""))
    assert 0 < most * ldp.BYTES_PER_USER <= 24 << 30


def test_an_ldp_domain_larger_than_memory_is_refused(monkeypatch):
    import veil.cli.ldp as ldp

    monkeypatch.setattr(ldp, "_memory", lambda: 1 << 30)
    assert_refused(invoke("ldp", "simulate", "--users", "10", "--epsilon", "1", "--domain", str(2 ** 31)),
                   "--domain 2,147,483,648", "1.0 GiB")


# ------------------------------------------------------------------ JSON and databases of the wrong shape

@pytest.mark.parametrize("entry, value, words", [
    ("models", "k-anonymity", ["'models'", "a list"]),
    ("models", [{"model": "k-anonymity", "threshold": "five", "level": 1, "passed": True}],
     ["'models[0].threshold'", "a number"]),
    ("roles", {"quasi_identifiers": "sex"}, ["'roles.quasi_identifiers'"]),
    ("node", {"sex": "top"}, ["'node'"]),
    ("suppression", [], ["'suppression'"]),
])
def test_report_refuses_a_manifest_of_the_wrong_shape(entry, value, words, tmp_path, release):
    doc = json.loads(release.read_text(encoding="utf-8"))
    doc[entry] = value
    release.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "report.html"
    assert_refused(invoke("report", release, "--out", out), "manifest", *words)
    assert not out.exists()


@pytest.mark.parametrize("key, value", [("epsilon", "NaN"), ("epsilon", float("nan")), ("delta", [1]),
                                        ("value", "many"), ("confidence", 2), ("query", 3)])
def test_dp_report_refuses_an_answer_of_the_wrong_shape(key, value, tmp_path, table):
    answer = tmp_path / "answer.json"
    result = invoke("dp", "count", table, "--epsilon", "1", "--seed", "1", "--json")
    doc = json.loads(result.stdout)
    doc[key] = value
    answer.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "report.html"
    assert_refused(invoke("dp", "report", answer, "--out", out), repr(key))
    assert not out.exists()


@pytest.mark.parametrize("payload", ["{", "[1]", '"text"', '{"row": 5, "release": 3}'])
def test_ledger_history_refuses_a_corrupt_payload(payload, ledger):
    with sqlite3.connect(ledger) as conn:
        conn.execute("UPDATE log SET payload = ?, action = 'charge' WHERE seq = 1", (payload,))
    assert_refused(invoke("ledger", "history", "--ledger", ledger), "entry 1", "veil ledger verify")


@pytest.mark.parametrize("args", [["ledger", "init", "--ledger", "/proc/veil-ledger.db"],
                                  ["dp", "count", "{table}", "--epsilon", "1", "--budget", "1",
                                   "--budget-file", "/proc/veil-budget.db"]])
def test_a_ledger_that_cannot_be_created_is_one_sentence(args, table):
    # /proc takes no new file, as root too (a folder without write permission stops only others).
    assert_refused(invoke(*[a.format(table=table) for a in args]), "cannot open ledger", "/proc/veil-")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into any folder")
def test_a_ledger_in_a_folder_without_write_permission_is_one_sentence(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir(mode=0o555)
    assert_refused(invoke("ledger", "init", "--ledger", folder / "ledger.db"), "ledger")


# ------------------------------------------------------------------ text that would drive the terminal

ESCAPE = "\x1b]0;PWNED\x07"


def test_a_column_name_with_a_terminal_escape_never_reaches_the_terminal(tmp_path):
    path = tmp_path / "escape.csv"
    path.write_text(f"sex,{ESCAPE},zip\n" + "".join(f"{'mf'[i % 2]},{i},1\n" for i in range(10)), encoding="utf-8")
    shown = invoke("check", path, "--qi", f"sex,{ESCAPE}")
    assert shown.exit_code == 0, shown.output
    assert "\x1b" not in shown.output and "\x07" not in shown.output
    assert "\\x1b]0;PWNED" in shown.stdout
    assert_refused(invoke("check", path, "--qi", "sex,nope"), "nope", "\\x1b]0;PWNED")


def test_markup_in_a_column_name_is_shown_as_written(tmp_path):
    path = tmp_path / "markup.csv"
    path.write_text("a[/x],b[red]\n1,2\n3,4\n", encoding="utf-8")
    result = invoke("check", path, "--qi", "a[/x],b[red]")
    assert result.exit_code == 0, result.output
    assert "a[/x], b[red]" in result.stdout


def test_a_huge_cell_is_not_echoed_whole(tmp_path):
    path = tmp_path / "big.csv"
    path.write_text("sex,age\nm," + "x" * 1_000_000 + "\nf,3\n", encoding="utf-8")
    assert_refused(invoke("check", path, "--qi", "sex,age", "--order", "age=1,3"), "age", "…")


def test_a_huge_query_line_is_not_echoed_whole(tmp_path, table):
    queries = tmp_path / "queries.txt"
    queries.write_text("max where sex = " + "m" * 1_000_000 + ESCAPE + "\n", encoding="utf-8")
    assert_refused(invoke("audit", table, "--column", "age", "--queries", queries), "queries.txt")


def test_the_report_isolates_data_text_from_its_own(tmp_path):
    override = "\u202e"
    table = tmp_path / "rtl.csv"
    table.write_text(f"sex,age,dis{override}ease\n" + "".join(
        f"{'mf'[i % 2]},{20 + i % 30},{('flu', override + 'gnihtemos', 'hiv')[i % 3]}\n" for i in range(60)),
        encoding="utf-8")
    config = tmp_path / "rtl.yaml"
    config.write_text(f'data: rtl.csv\ncolumns:\n  quasi_identifiers: [sex, age]\n  sensitive: ["dis{override}ease"]\n'
                      "hierarchies:\n  sex: {flat: {}}\n  age: {intervals: {widths: [5, 10]}}\n"
                      "models:\n  - k_anonymity: {k: 5}\n", encoding="utf-8")
    report = tmp_path / "report.html"
    result = invoke("anonymize", "--config", config, "--out", tmp_path / "out.csv", "--report", report)
    assert result.exit_code == 0, result.output
    html = report.read_text(encoding="utf-8")
    assert override not in html
    assert "<bdi>dis\\u202eease</bdi>" in html
    assert "gnihtemos" in html and "\\u202egnihtemos" in html


# ------------------------------------------------------------------ the last resort

def test_a_bug_is_one_sentence_with_its_own_exit_status(monkeypatch, table):
    checking = importlib.import_module("veil.check")  # the module (veil.check names its function)

    def broken(*args, **kwargs):
        raise RuntimeError("secret cell value")

    monkeypatch.setattr(checking, "check", broken)
    monkeypatch.delenv("VEIL_DEBUG", raising=False)
    result = invoke("check", table, "--qi", "sex")
    assert result.exit_code == EXIT_BUG, result.output
    assert result.stderr.count("\n") == 1 and "RuntimeError" in result.stderr and "VEIL_DEBUG=1" in result.stderr
    assert "secret cell value" not in result.stderr and "Traceback" not in result.stderr
    monkeypatch.setenv("VEIL_DEBUG", "1")
    shown = invoke("check", table, "--qi", "sex")
    assert isinstance(shown.exception, RuntimeError)


INJECT = """
import sys, warnings
import pyarrow.csv as pacsv

real = pacsv.read_csv


def read_csv(*args, **kwargs):
    # As pandas or SciPy warn: attributed to the caller, a module of veil.
    warnings.warn("a package's future change", FutureWarning, stacklevel=2)
    warnings.warn("a package's deprecation", DeprecationWarning, stacklevel=2)
    warnings.warn("a package's remark", UserWarning)
    return real(*args, **kwargs)


pacsv.read_csv = read_csv
sys.argv = ["veil"] + sys.argv[1:]
from veil.cli import main
main()
"""


@pytest.mark.parametrize("mode", ["", "0", "1", "error"])
def test_a_warning_of_another_package_never_reaches_the_terminal(mode, table):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"),
                                                                      os.environ.get("PYTHONPATH")]))}
    env["VEIL_DEBUG"] = mode
    env.pop("PYTHONWARNINGS", None)
    proc = subprocess.run([sys.executable, "-c", INJECT, "check", str(table), "--qi", "sex"], capture_output=True,
                          text=True, env=env, timeout=300, stdin=subprocess.DEVNULL)
    if mode in ("", "0"):
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == ""
        assert proc.stdout.startswith("60 records in 2 equivalence classes")
    elif mode == "1":
        assert proc.returncode == 0, proc.stderr
        assert "FutureWarning: a package's future change" in proc.stderr
    else:
        assert proc.returncode != 0 and "FutureWarning: a package's future change" in proc.stderr
        assert "Traceback" in proc.stderr
