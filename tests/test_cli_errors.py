"""Every command fails with ``error: <one sentence>`` and exit status 2, Click's usage errors
included, and says what it found: delimiters, Parquet types, folders, stray text in numbers,
the values an intersection leaves; ``--version``; help for every positional argument.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import click
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import typer
from typer.testing import CliRunner

from veil import __version__
from veil.cli import app
from veil.cli.console import LazyGroup, stage
from veil.data.io import normalize_delimiter, read_table
from veil.errors import DataError, ParameterError
from helpers import one_sentence_error

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def assert_one_sentence(result, *words) -> str:
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert result.stderr.startswith("error: ") and len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and "╭" not in result.stderr
    for word in words:
        assert word in result.stderr, result.stderr
    return result.stderr


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "people.csv"
    path.write_text("sex,age,zip,disease\n" + "".join(
        f"{'mf'[i % 2]},{'unknown' if i == 7 else 20 + i % 30},{13050 + i % 4},{('flu', 'cold', 'hiv')[i % 3]}\n"
        for i in range(60)), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- Click's usage errors

USAGE_ERRORS = [
    (["dp", "count", "{table}", "--epsilon", "abc"], "invalid value for '--epsilon': 'abc' is not a valid float"),
    (["check", "{table}", "--qi", "sex", "--bogus"], "no such option '--bogus'"),
    (["check"], "missing argument 'DATA'"),
    (["anonymize", "--out", "x.csv"], "missing option '--config'"),
    (["init", "{table}", "--sample", "3"], "no such option '--sample'"),
    (["demo", "--k", "3"], "no such option '--k'"),
    (["attack", "single", "{table}", "--qi", "sex", "--sensitive", "disease", "--m", "two"], "not a valid integer"),
    (["attack", "intersection", "{table}", "{table}"], "missing option '--targets'"),
    (["experiment", "composition", "--overlap", "many"], "not a valid integer"),
    (["experiment", "tradeoff", "--suppression", "x"], "not a valid float"),
    (["ldp", "simulate", "--bogus"], "no such option '--bogus'"),
    (["dp", "budget"], "missing argument 'BUDGET_FILE'"),
]


@pytest.mark.parametrize("args, words", USAGE_ERRORS, ids=[" ".join(a[:2]) + f" {i}" for i, (a, _) in
                                                            enumerate(USAGE_ERRORS)])
def test_usage_errors_are_one_sentence_with_exit_2_in_every_group(table, args, words):
    message = assert_one_sentence(invoke(*[a.format(table=table) for a in args]), words)
    assert "--help" in message


def test_a_mistyped_command_is_suggested_once():
    message = assert_one_sentence(invoke("chek"), "no such command 'chek'; did you mean 'check'?")
    assert message.count("did you mean") == 1
    for group, typo, command in (("attack", "sngle", "single"), ("dp", "cnt", "count"),
                                 ("experiment", "tradof", "tradeoff")):
        message = assert_one_sentence(invoke(group, typo), f"did you mean '{command}'?")
        assert message.count("did you mean") == 1
    assert "did you mean one of" in assert_one_sentence(invoke("dp", "count", "x", "--epsilonx", "1"))


def test_the_installed_command_prints_usage_errors_as_one_sentence_too():
    proc = subprocess.run([sys.executable, "-m", "veil.cli", "dp", "count", "x.csv", "--epsilon", "abc"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("error: invalid value for '--epsilon'")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_help_and_no_arguments_still_show_the_help():
    assert invoke("--help").exit_code == 0 and "Commands" in invoke("--help").stdout
    bare = invoke()
    assert bare.exit_code == 2 and "Commands" in bare.stdout and "error" not in bare.stderr


def test_version():
    result = invoke("--version")
    assert result.exit_code == 0 and result.stdout == f"veil {__version__}\n"


def test_every_positional_argument_has_help():
    def arguments(command: click.Command, path: str):
        if isinstance(command, LazyGroup):  # a group imported when it runs: walk the group itself
            command = command.loaded()
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                yield from arguments(sub, f"{path} {name}")
        for param in command.params:
            if isinstance(param, click.Argument):
                yield path, param

    found = list(arguments(typer.main.get_command(app), "veil"))
    assert len(found) >= 8
    for path, param in found:
        assert getattr(param, "help", None), f"{path}: argument {param.name} has no help"


# --------------------------------------------------------------------------- delimiters

@pytest.mark.parametrize("given, expected", [("tab", "\t"), ("TAB", "\t"), ("\\t", "\t"), ("\t", "\t"),
                                             (";", ";"), (None, None)])
def test_tab_can_be_named(given, expected):
    assert normalize_delimiter(given) == expected


@pytest.mark.parametrize("given", [";;", "", '"', "\n", "ab"])
def test_a_delimiter_is_one_character(given):
    one_sentence_error(ParameterError, lambda: normalize_delimiter(given), "one character")


@pytest.mark.parametrize("delimiter", ["tab", "\\t"])
def test_the_commands_accept_tab_by_name(tmp_path, delimiter):
    path = tmp_path / "t.tsv"
    path.write_text("a\tb\n1\tx\n1\ty\n", encoding="utf-8")
    result = invoke("check", path, "--qi", "a", "--sensitive", "b", "--delimiter", delimiter, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["k"] == 2


@pytest.mark.parametrize("delimiter", [";;", ""])
@pytest.mark.parametrize("command", [["check", "{t}", "--qi", "sex"], ["init", "{t}"],
                                     ["attack", "single", "{t}", "--qi", "sex", "--sensitive", "disease"]])
def test_the_commands_refuse_a_delimiter_of_several_characters(table, command, delimiter):
    args = [a.format(t=table) for a in command] + ["--delimiter", delimiter]
    assert_one_sentence(invoke(*args), "the delimiter must be one character", repr(delimiter))


def test_the_wrong_delimiter_suggests_the_right_one(tmp_path):
    path = tmp_path / "semi.csv"
    path.write_text("sex;age\nm;30\nf;40\n", encoding="utf-8")
    assert_one_sentence(invoke("check", path, "--qi", "sex", "--delimiter", ","),
                        "the quasi-identifier column 'sex' does not exist", "delimited by ';'", "--delimiter ';'")


# --------------------------------------------------------------------------- Parquet types, folders, seeds

@pytest.mark.parametrize("column, words", [
    (pa.array([[1, 2], [3], [4]]), "holds lists"),
    (pa.array([{"x": 1}, {"x": 2}, {"x": 3}]), "holds structures"),
    (pa.array([b"\x00\x01", b"\xff", b"a"]), "holds raw bytes"),
    (pa.array([[("k", 1)], [("k", 2)], []], type=pa.map_(pa.string(), pa.int64())), "holds maps"),
])
def test_parquet_columns_that_are_not_single_values_are_named(tmp_path, column, words):
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"age": [30, 40, 50], "odd": column}), path)
    one_sentence_error(DataError, lambda: read_table(path), "column 'odd'", words)
    assert_one_sentence(invoke("check", path, "--qi", "age"), "column 'odd'", words)


def test_a_frame_with_list_cells_is_refused_by_name():
    one_sentence_error(DataError, lambda: read_table(pd.DataFrame({"a": [1, 2], "tags": [["x"], ["y", "z"]]})),
                       "column 'tags'", "lists")


def test_a_folder_as_data_or_hierarchy_says_it_is_a_folder(tmp_path, table):
    folder = tmp_path / "folder"
    folder.mkdir()
    (tmp_path / "folder.parquet").mkdir()
    assert_one_sentence(invoke("check", folder, "--qi", "a"), "is a folder")
    assert_one_sentence(invoke("check", tmp_path / "folder.parquet", "--qi", "a"), "is a folder")
    assert_one_sentence(invoke("init", folder), "is a folder")
    assert_one_sentence(invoke("attack", "single", folder, "--qi", "a", "--sensitive", "b"), "is a folder")
    assert_one_sentence(invoke("check", table, "--qi", "sex", "--hierarchy", f"sex={folder}"),
                        "is a folder, not a hierarchy file")
    assert_one_sentence(invoke("check", table, "--qi", "sex", "--sensitive", "disease", "--order",
                               f"disease={folder}"), "is a folder")
    config = tmp_path / "c.yaml"
    config.write_text(f"data: {table}\ncolumns: {{quasi_identifiers: [sex]}}\nhierarchies:\n  sex: {{file: {folder}}}\n"
                      "models: [{k_anonymity: {k: 2}}]\n", encoding="utf-8")
    assert_one_sentence(invoke("anonymize", "--config", config, "--out", tmp_path / "r.csv"),
                        "line 4", "is a folder, not a hierarchy file")


def test_a_negative_seed_is_one_sentence(tmp_path):
    assert_one_sentence(invoke("experiment", "composition", "--seed", "-1", "--out", tmp_path / "c"),
                        "seed must be a whole number 0 or more")
    assert_one_sentence(invoke("experiment", "tradeoff", "--seed", "-1", "--out", tmp_path / "t"),
                        "seed must be a whole number 0 or more")
    assert list(tmp_path.iterdir()) == []


def test_an_unforeseen_os_error_is_one_sentence(table, monkeypatch):
    import importlib

    def broken(*args, **kwargs):
        raise OSError(5, "Input/output error", str(table))

    monkeypatch.setattr(importlib.import_module("veil.check"), "check", broken)
    assert_one_sentence(invoke("check", table, "--qi", "sex"), "input/output error", str(table))


# --------------------------------------------------------------------------- what the commands say

def test_check_notes_a_numeric_column_read_as_text(table):
    result = invoke("check", table, "--qi", "sex,age", "--sensitive", "disease", "--json")
    assert result.exit_code == 0, result.output
    notes = json.loads(result.stdout)["notes"]
    assert any("quasi-identifier 'age' holds numbers but is read as text because of 'unknown' (1 record)" in n
               for n in notes), notes
    text = invoke("check", table, "--qi", "sex,age", "--sensitive", "disease")
    assert "'unknown'" in text.stdout.replace("\n", " ")


def test_anonymize_notes_a_numeric_column_read_as_text_for_mdav(tmp_path, table):
    config = tmp_path / "mdav.yaml"
    config.write_text(f"data: {table}\ncolumns: {{quasi_identifiers: [sex, age], sensitive: [disease]}}\n"
                      "models: [{k_anonymity: {k: 3}}]\nalgorithm: {name: mdav}\n", encoding="utf-8")
    result = invoke("anonymize", "--config", config, "--out", tmp_path / "r.csv", "--manifest", tmp_path / "m.json",
                    "--json")
    assert result.exit_code == 0, result.output
    # the note quotes a value of the input: the private file's, never the published manifest's
    assert "notes" not in json.loads(result.stdout) and "unknown" not in result.stdout
    private = json.loads((tmp_path / "m.private.json").read_text(encoding="utf-8"))
    assert any("'age'" in note and "'unknown'" in note for note in private["notes"])
    shown = invoke("anonymize", "--config", config, "--out", tmp_path / "r2.csv")
    assert "note: quasi-identifier 'age' holds numbers" in shown.stdout.replace("\n", " ")


def test_init_comments_a_numeric_column_read_as_text(tmp_path, table):
    out = tmp_path / "people.yaml"
    assert invoke("init", table, "--out", out).exit_code == 0
    line = next(line for line in out.read_text().splitlines() if line.startswith("  age:"))
    assert "read as text because of 'unknown' (1 row)" in line and "missing_values" in line
    assert "{intervals: {widths: [" in line


def test_attack_single_refuses_a_level_without_a_hierarchy(table):
    assert_one_sentence(invoke("attack", "single", table, "--qi", "sex,zip", "--sensitive", "disease",
                               "--level", "2"), "--level", "--hierarchy")


@pytest.fixture
def releases(tmp_path: Path) -> Path:
    (tmp_path / "a.csv").write_text("zip,age,disease\n130**,[20-29],flu\n130**,[20-29],cancer\n"
                                    "148**,[30-39],flu\n148**,[30-39],hiv\n", encoding="utf-8")
    (tmp_path / "b.csv").write_text("zip,age,disease\n1305*,[20-24],flu\n1305*,[20-24],hiv\n"
                                    "148**,[30-39],cold\n148**,[30-39],hiv\n130**,[25-29],cancer\n"
                                    "130**,[25-29],flu\n", encoding="utf-8")
    return tmp_path


def attack(folder: Path, targets: list[tuple[str, int, int]], *extra):
    path = folder / "targets.csv"
    path.write_text("name,zip,age\n" + "".join(f"{n},{z},{a}\n" for n, z, a in targets), encoding="utf-8")
    return invoke("attack", "intersection", folder / "a.csv", folder / "b.csv", "--targets", path,
                  "--qi", "zip,age", "--sensitive", "disease", "--id", "name", *extra)


def test_the_intersection_summary_names_the_values_left_per_target(releases):
    result = attack(releases, [("Ann", 13053, 22), ("Bob", 14853, 35), ("Cy", 13052, 27)])
    assert result.exit_code == 1, result.output   # Ann and Bob are pinned
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip()
            for line in result.stdout.splitlines() if line.startswith("│ ") and "{" in line}
    assert rows == {"Ann": "{flu}", "Bob": "{hiv}", "Cy": "{cancer, flu}"}


def test_the_intersection_summary_gives_the_most_frequent_outcomes_for_many_targets(releases):
    targets = [(f"p{i}", 13053, 22) for i in range(30)] + [(f"q{i}", 14853, 35) for i in range(12)]
    result = attack(releases, targets)
    assert result.exit_code == 1, result.output   # every target is pinned
    assert "most frequent intersections" in result.stdout
    assert "p0" not in result.stdout
    first, second = [line for line in result.stdout.splitlines() if line.startswith("│ {")]
    assert "{flu}" in first and "30" in first and "{hiv}" in second and "12" in second
    doc = json.loads(attack(releases, targets, "--json").stdout)
    assert doc["outcomes"] == [{"values": ["flu"], "targets": 30}, {"values": ["hiv"], "targets": 12}]
    assert len(doc["per_target"]) == 42
    assert doc["per_target"][0] == {"target": "p0", "ea_posterior": 1, "values_left": ["flu"]}


# --------------------------------------------------------------------------- progress

def test_progress_is_shown_on_a_terminal_only(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with stage("loading people.csv"):
        pass
    assert "loading people.csv" in terminal.getvalue()
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    with stage("loading people.csv"):
        pass
    assert pipe.getvalue() == ""
