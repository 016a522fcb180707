"""``veil attack matching|join|presence``: JSON summaries, exit statuses, one-sentence errors."""

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from veil.cli import app

runner = CliRunner()


def write(tmp_path, name, frame):
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return str(path)


def test_matching_join_and_presence_commands(tmp_path):
    first = write(tmp_path, "first.csv", pd.DataFrame({"race": ["b", "b", "w", "w"], "zip": ["*"] * 4,
                                                        "problem": ["flu", "cold", "flu", "cold"]}))
    second = write(tmp_path, "second.csv", pd.DataFrame({"race": ["*"] * 4, "zip": ["1", "2", "1", "2"],
                                                         "problem": ["flu", "cold", "flu", "cold"]}))
    result = runner.invoke(app, ["attack", "matching", first, second, "--qi", "race,zip", "--json"])
    assert result.exit_code == 1, result.output   # it exposes rows
    summary = json.loads(result.output)
    assert summary["linkable"] and summary["exposed"] == 4 and summary["unique"] == 4
    table = runner.invoke(app, ["attack", "matching", first, second, "--qi", "race,zip"])
    assert table.exit_code == 1 and "linkable" in table.output

    t1 = write(tmp_path, "t1.csv", pd.DataFrame({"sex": ["M", "M", "F", "F", "M", "F"],
                                                 "job": ["eng", "eng", "eng", "eng", "law", "law"]}))
    t2 = write(tmp_path, "t2.csv", pd.DataFrame({"job": ["eng", "eng", "eng", "eng", "law", "law"],
                                                 "zip": ["A", "B", "A", "B", "C", "C"]}))
    joined = runner.invoke(app, ["attack", "join", t1, t2, "--qi", "sex,zip", "--json"])
    assert joined.exit_code == 1 and json.loads(joined.output)["exposed"] == 2
    nothing = runner.invoke(app, ["attack", "join", t1, write(tmp_path, "z.csv", pd.DataFrame({"zip": ["A"]})),
                                  "--qi", "sex,zip"])
    assert nothing.exit_code == 2 and "nothing to join" in nothing.output

    population = write(tmp_path, "population.csv", pd.DataFrame({"race": ["b", "b", "w", "w", "w"],
                                                                 "zip": ["*"] * 5}))
    presence = runner.invoke(app, ["attack", "presence", first, "--population", population, "--qi", "race,zip",
                                   "--json"])
    assert presence.exit_code == 1, presence.output   # it exposes two people
    figures = json.loads(presence.output)
    assert figures["exposed"] == 2 and figures["max_probability"] == 1.0
    assert figures["expected_members"] == pytest.approx(4.0)
    small = write(tmp_path, "small.csv", pd.DataFrame({"race": ["b"], "zip": ["*"]}))
    refused = runner.invoke(app, ["attack", "presence", first, "--population", small, "--qi", "race,zip"])
    assert refused.exit_code == 2 and "population must contain every released record" in refused.output
