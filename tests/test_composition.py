"""The composition experiment (Ganta et al., KDD 2008, Section 3) on a tiny setting: the files it
writes (CSV, Markdown, PNG, JSON with the seed), reproducibility from the seed, the subsets it
draws, bad settings, all-or-nothing writing, and ``veil experiment composition``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import typer
from typer.testing import CliRunner

from veil.errors import DataError, ParameterError
from veil.experiments.composition import (FILES, CompositionSettings, check_settings, draw_subsets,
                                          run_composition)
from veil.cli.experiment import composition_command
from veil.output import write_files as atomic_write_many

PNG = b"\x89PNG\r\n\x1a\n"
TINY = CompositionSettings(k=(4, 8), overlap=150, size=300, seed=7)


@pytest.fixture(scope="module")
def tiny():
    return run_composition(TINY)


def test_tiny_run_writes_every_file_with_the_seed(tiny, tmp_path):
    paths = tiny.write(tmp_path / "out")
    assert [p.name for p in paths] == list(FILES)
    assert (tmp_path / "out" / "composition.png").read_bytes().startswith(PNG)
    frame = pd.read_csv(tmp_path / "out" / "composition.csv")
    assert len(frame) == 3 * 2                      # three pairs × two values of k
    assert frame["seed"].unique().tolist() == [7]
    assert frame["overlap"].unique().tolist() == [150] and frame["subset_size"].unique().tolist() == [300]
    assert frame["algorithms"].unique().tolist() == ["mondrian+mondrian", "mdav+mdav", "mondrian+mdav"]
    assert sorted(frame["k"].unique().tolist()) == [4, 8]
    for column in ("ea_prior", "ea_posterior", "anon_drop", "vp_percent", "pvp_100", "pvp_50", "pvp_33.3",
                   "pvp_25", "pvp_20", "class_size_1", "ea_2", "located_percent", "perfect_right_percent"):
        assert column in frame.columns, column
    assert (frame["ea_prior"] >= frame["ea_posterior"]).all()
    assert np.allclose(frame["anon_drop"], frame["ea_prior"] - frame["ea_posterior"])
    assert (frame["pvp_100"] <= frame["pvp_50"]).all() and (frame["pvp_50"] <= frame["pvp_20"]).all()
    # Containment locates everyone in a Mondrian release; MDAV's nearest centroid may miss.
    assert (frame.loc[frame["algorithms"] == "mondrian+mondrian", "located_percent"] == 100).all()
    info = json.loads((tmp_path / "out" / "composition.json").read_text())
    assert info["seeds"]["seed"] == 7 and info["settings"]["seed"] == 7
    assert info["subsets"]["overlap"] == 150 and info["subsets"]["size"] == 300
    assert len(info["subsets"]["sha256_of_rows"]) == 64
    markdown = (tmp_path / "out" / "composition.md").read_text()
    assert "seed 7" in markdown
    assert markdown.count("\n| 2 | ") == 6


def test_same_seed_same_numbers(tiny):
    again = run_composition(TINY)
    drop = [c for c in tiny.frame.columns if c.startswith("seconds")]
    pd.testing.assert_frame_equal(tiny.frame.drop(columns=drop), again.frame.drop(columns=drop))
    assert again.info["subsets"]["sha256_of_rows"] == tiny.info["subsets"]["sha256_of_rows"]


def test_subsets_share_exactly_the_overlap():
    settings = check_settings(CompositionSettings(k=(5,), releases=(2, 3), overlap=1000), 30162)
    assert settings.size == 1000 + (30162 - 1000) // 3
    overlap, subsets = draw_subsets(30162, settings)
    assert len(subsets) == 3 and all(len(s) == settings.size for s in subsets)
    for i in range(3):
        assert set(overlap) <= set(subsets[i])
        for j in range(i + 1, 3):
            assert set(subsets[i]) & set(subsets[j]) == set(overlap)
    other_seed = draw_subsets(30162, check_settings(CompositionSettings(k=(5,), overlap=1000, seed=1), 30162))
    assert set(other_seed[0]) != set(overlap)


def test_more_releases_and_the_l_and_t_variants(tmp_path):
    result = run_composition(CompositionSettings(k=(5,), releases=(2, 3), pairs=("mondrian-mdav",), overlap=120,
                                                 size=240, seed=3, variants=("k", "l", "t"), l=2.0, t=0.5))
    frame = result.frame
    assert sorted(frame["releases"].unique().tolist()) == [2, 3]
    assert frame.loc[frame["releases"] == 3, "algorithms"].unique().tolist() == ["mondrian+mdav+mondrian"]
    assert set(frame["variant"]) == {"k", "l", "t"}
    assert frame.loc[frame["releases"] == 2, "class_size_3"].isna().all()
    assert frame.loc[frame["releases"] == 3, "class_size_3"].notna().all()
    result.write(tmp_path)
    assert (tmp_path / "composition.png").read_bytes().startswith(PNG)


@pytest.mark.parametrize("change, fragment", [
    ({"k": (1,)}, "at least 2"),
    ({"k": ()}, "value of k"),
    ({"releases": (5,)}, "2, 3 or 4"),
    ({"pairs": ("mondrian-arx",)}, "'arx'"),
    ({"pairs": ("mondrian-mdav-mdav",)}, "3 algorithms for 2 releases"),
    ({"variants": ("x",)}, "unknown variant 'x'"),
    ({"overlap": 40_000}, "exceeds the table"),
    ({"size": 100}, "cannot hold the overlap"),
    ({"size": 20_000}, "more than the table's"),
    ({"confidence": (0.0,)}, "(0, 1]"),
    ({"variants": ("t",), "t": 0.0}, "t must be in (0, 1]"),
])
def test_bad_settings(change, fragment):
    settings = CompositionSettings(**{**dict(k=(5,), overlap=150, size=300), **change})
    with pytest.raises(ParameterError) as info:
        check_settings(settings, 30162)
    assert fragment in str(info.value)


def test_writing_is_all_or_nothing(tmp_path):
    (tmp_path / "taken").mkdir()
    with pytest.raises(DataError):
        atomic_write_many({tmp_path / "a.csv": "x\n", tmp_path / "b.png": PNG, tmp_path / "taken": "y"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
    atomic_write_many({tmp_path / "a.csv": "x\n", tmp_path / "b.png": PNG})
    assert (tmp_path / "b.png").read_bytes() == PNG and (tmp_path / "a.csv").read_text() == "x\n"


def app() -> typer.Typer:
    cli = typer.Typer()
    cli.command("composition")(composition_command)

    @cli.callback()
    def main():
        """Test app."""

    return cli


def test_cli_tiny_run(tmp_path):
    out = tmp_path / "exp"
    result = CliRunner().invoke(app(), ["composition", "--out", str(out), "--k", "4,8", "--overlap", "150",
                                        "--size", "300", "--seed", "11", "--pairs", "mondrian-mondrian,mondrian-mdav"])
    assert result.exit_code == 0, result.output
    assert "| 2 | mondrian+mdav |" in result.output
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)
    assert json.loads((out / "composition.json").read_text())["seeds"]["seed"] == 11


@pytest.mark.parametrize("args, fragment", [
    (["--k", "5,x"], "'x'"),
    (["--releases", "6"], "2, 3 or 4"),
    (["--variants", "q"], "unknown variant"),
    (["--overlap", "100000"], "exceeds the table"),
])
def test_cli_bad_settings_exit_2_and_write_nothing(tmp_path, args, fragment):
    out = tmp_path / "exp"
    result = CliRunner().invoke(app(), ["composition", "--out", str(out), *args])
    assert result.exit_code == 2, result.output
    assert fragment in result.output and "Traceback" not in result.output
    assert not out.exists()


def test_cli_refuses_a_file_as_out(tmp_path):
    target = tmp_path / "file.txt"
    target.write_text("x")
    result = CliRunner().invoke(app(), ["composition", "--out", str(target), "--k", "5", "--overlap", "100",
                                        "--size", "200"])
    assert result.exit_code == 2 and "is a file" in result.output


def test_fulldomain_pairs_locate_suppressed_targets_nowhere():
    result = run_composition(CompositionSettings(k=(4,), pairs=("fulldomain-mondrian",), overlap=150, size=300,
                                                 seed=2))
    row = result.rows[0]
    assert row["algorithms"] == "fulldomain+mondrian"
    # Full-domain suppresses up to 2 % of a subset: those targets match no class of its release.
    assert 97.0 <= row["located_percent"] <= 100.0
    assert row["class_size_1"] > row["class_size_2"]
