"""What the terminal shows (audit item 20): output piped to a file is not wrapped, a table never
cuts a figure however narrow the terminal, every help text is reflowed paragraph by paragraph
(a docstring's line breaks never break a sentence), and the starter configuration's Run line and
ARX hierarchy files beside the table."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import click
import pytest
import typer
from typer.testing import CliRunner

from veil.cli import app
from veil.config import load_config, starter_config

runner = CliRunner()


def veil(*args, env=None):
    return runner.invoke(app, [str(a) for a in args], env=env)


@pytest.fixture
def releases(tmp_path: Path) -> Path:
    (tmp_path / "a.csv").write_text("zip,age,disease\n130**,[20-29],flu\n130**,[20-29],cancer\n"
                                    "148**,[30-39],flu\n148**,[30-39],hiv\n", encoding="utf-8")
    (tmp_path / "b.csv").write_text("zip,age,disease\n1305*,[20-24],flu\n1305*,[20-24],hiv\n"
                                    "148**,[30-39],cold\n148**,[30-39],hiv\n130**,[25-29],cancer\n"
                                    "130**,[25-29],flu\n", encoding="utf-8")
    (tmp_path / "targets.csv").write_text("name,zip,age\nAnn,13053,22\nBob,14853,35\n", encoding="utf-8")
    return tmp_path


def _attack(folder: Path, env=None):
    return veil("attack", "intersection", folder / "a.csv", folder / "b.csv", "--targets", folder / "targets.csv",
                "--qi", "zip,age", "--sensitive", "disease", "--id", "name", env=env)


def test_piped_output_is_not_wrapped(tmp_path: Path, releases: Path):
    data = tmp_path / "t.csv"
    data.write_text("age,zip\n" + "".join(f"{20 + i},{13050 + i % 3}\n" for i in range(20)), encoding="utf-8")
    result = veil("init", data, "--out", tmp_path / "t.yaml", env={"COLUMNS": None})
    assert result.exit_code == 0
    assert result.stdout.count("\n") == 1 and "review them before anonymizing." in result.stdout
    shown = _attack(releases, env={"COLUMNS": None}).stdout
    assert "effective anonymity (distinct sensitive values): prior min_j EA_ij" in shown
    assert next(line for line in shown.splitlines() if line.startswith("effective anonymity")).endswith("1.000")


@pytest.mark.parametrize("columns", ["30", "50", "80"])
def test_a_narrow_terminal_never_cuts_a_tables_figures(releases: Path, columns: str):
    shown = _attack(releases, env={"COLUMNS": columns}).stdout
    assert "…" not in shown, shown
    assert "containment" in shown and "release 1 (a.csv)" in " ".join(shown.split()) or "release" in shown


def _leaves(command: click.Command, path: list[str]):
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            yield from _leaves(command.get_command(ctx, name), path + [name])
    else:
        yield path, command


def _paragraphs(doc: str) -> list[str]:
    out = []
    for paragraph in inspect.cleandoc(doc).split("\n\n")[1:]:
        joined = ""
        for line in (line.strip() for line in paragraph.splitlines() if line.strip()):
            joined += ("" if not joined or re.search(r"[A-Za-z]-$", joined) else " ") + line
        out.append(joined)
    return out


def test_every_help_paragraph_is_one_paragraph_on_a_wide_terminal():
    root = typer.main.get_command(app)
    checked = 0
    for path, command in _leaves(root, []):
        doc = inspect.getdoc(command.callback) or ""
        result = veil(*path, "--help", env={"COLUMNS": "400"})
        assert result.exit_code == 0, (path, result.output)
        lines = [line.strip() for line in result.stdout.splitlines()]
        for paragraph in _paragraphs(doc):
            if len(paragraph) < 380:
                assert paragraph in lines, (path, paragraph)
                checked += 1
    assert checked > 20


def test_help_shows_brackets_as_written():
    shown = veil("dp", "count", "--help", env={"COLUMNS": "300"}).stdout
    assert 'pip install "veil[spark]"' in shown


def test_the_starter_names_the_manifest_and_report_and_takes_arx_files_beside_the_table(tmp_path: Path):
    data = tmp_path / "people.csv"
    data.write_text("age,zip,disease\n" + "".join(f"{20 + i % 30},{13050 + i % 4},{('flu', 'cold')[i % 2]}\n"
                                                  for i in range(40)), encoding="utf-8")
    (tmp_path / "people_hierarchy_zip.csv").write_text(
        "".join(f"{13050 + i};{1305}*;*\n" for i in range(4)), encoding="utf-8")
    (tmp_path / "people_hierarchy_age.csv").write_text("20;*\n", encoding="utf-8")   # does not cover the ages
    text = starter_config(data, relative_to=tmp_path)
    run = next(line for line in text.splitlines() if line.startswith("# Run:"))
    assert "--manifest manifest.json" in run and "--report report.html" in run
    zip_line = next(line for line in text.splitlines() if line.startswith("  zip:"))
    assert "{file: people_hierarchy_zip.csv}" in zip_line and "lies beside the table" in zip_line
    age_line = next(line for line in text.splitlines() if line.startswith("  age:"))
    assert "intervals" in age_line and "people_hierarchy_age.csv lies beside the table but is not used" in age_line
    (tmp_path / "people.yaml").write_text(text, encoding="utf-8")
    config = load_config(tmp_path / "people.yaml")
    assert config.hierarchies["zip"].kind == "file" and config.hierarchies["age"].kind == "intervals"
