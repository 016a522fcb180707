"""The ``veil anonymize``, ``veil init`` and ``veil demo`` commands.

1. The example configuration run from the repository root; a DATA argument overriding the
   configuration's table; ``--json``.
2. ``veil init`` writes a starter configuration that runs, and refuses to overwrite one.
3. ``veil demo --out DIR``.
4. Bad input: infeasible settings, k above the row count, an unknown metric or model name, a
   quasi-identifier without hierarchy, outputs in missing folders. Each exits 2 with one line on
   stderr, writes nothing (no output, no manifest, no temporary file) and leaves the input as it was.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veil.cli import app
from veil.config import load_config
from veil.errors import ConfigError
from veil.manifests import combined, private_path

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "adult-fulldomain.yaml"
RESOURCES = REPO / "src" / "veil" / "resources" / "adult"
ADULT = RESOURCES / "adult.csv"
ADULT_HEADER = "sex;age;race;marital-status;education;native-country;workclass;occupation;salary-class"
ADULT_ROWS = 30_162

runner = CliRunner()


def invoke(*args) -> object:
    return runner.invoke(app, [str(a) for a in args])


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def listing(folder: Path) -> list[str]:
    """Every file and folder under ``folder``, hidden ones included."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture
def adult_small(tmp_path: Path) -> Path:
    """The first 2,000 records of the bundled Adult table, byte for byte (CRLF line ends)."""
    lines = ADULT.read_bytes().splitlines(keepends=True)
    path = tmp_path / "data" / "adult-2000.csv"
    path.parent.mkdir()
    path.write_bytes(b"".join(lines[:2001]))
    return path


# --------------------------------------------------------------------------------------------
# 1. veil anonymize with the example configuration

def test_example_config_from_the_repository_root(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(REPO)
    before = digest(ADULT)
    out, manifest_path = tmp_path / "OUT.csv", tmp_path / "M.json"
    result = invoke("anonymize", "--config", "examples/adult-fulldomain.yaml", "--out", out,
                    "--manifest", manifest_path)
    assert result.exit_code == 0, result.output
    private_file = private_path(manifest_path)
    assert f"wrote {out}, {manifest_path} and {private_file} (private: keep it, do not publish it)" in \
        result.stdout.replace("\n", "")
    assert "proven optimal" in result.stdout
    published = json.loads(manifest_path.read_text(encoding="utf-8"))
    private = json.loads(private_file.read_text(encoding="utf-8"))
    assert private["release"] == published["release"]  # it names the release it belongs with
    assert not {"metrics", "reference", "generalization"} & published.keys() and "rows" not in published["input"]
    manifest = combined(published, private)
    # The release: the input's delimiter and column order, suppressed records removed.
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0] == ADULT_HEADER
    assert all(line.count(";") == 8 for line in lines)
    assert len(lines) - 1 == ADULT_ROWS - manifest["suppression"]["records"]
    assert manifest["suppression"]["records"] <= 0.02 * ADULT_ROWS
    # The manifest carries the configuration it was made with.
    config = manifest["config"]
    assert Path(config["config"]).resolve() == EXAMPLE
    assert Path(config["data"]).resolve() == ADULT
    assert config["models"] == [{"k_anonymity": {"k": 5}}, {"entropy_l_diversity": {"l": 3, "sensitive": "occupation"}}]
    assert config["suppression_limit"] == 0.02 and config["metric"] == {"name": "loss"}
    assert config["algorithm"] == {"name": "fulldomain", "search": "optimal", "time_limit": None}
    assert config["columns"]["quasi_identifiers"] == ADULT_HEADER.split(";")[:7]
    assert manifest["input"]["rows"] == ADULT_ROWS and manifest["input"]["delimiter"] == ";"
    assert [row["key"] for row in manifest["models"]] == ["k", "l_entropy"]
    assert all(row["passed"] for row in manifest["models"])
    assert manifest["search"]["proven_optimal"] is True
    assert digest(ADULT) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["M.json", "M.private.json", "OUT.csv"]
    assert not list((REPO / "examples").glob(".*.tmp"))


def test_data_argument_overrides_the_config_and_json_prints_the_manifest(tmp_path: Path, adult_small: Path,
                                                                         monkeypatch):
    monkeypatch.chdir(REPO)
    before = digest(adult_small)
    out, manifest_path = tmp_path / "out.csv", tmp_path / "manifest.json"
    result = invoke("anonymize", adult_small, "--config", "examples/adult-fulldomain.yaml", "--out", out,
                    "--manifest", manifest_path, "--json")
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert printed == json.loads(manifest_path.read_text(encoding="utf-8"))
    private = json.loads(private_path(manifest_path).read_text(encoding="utf-8"))
    assert private["input"]["rows"] == 2000
    assert Path(printed["config"]["data"]).resolve() == adult_small.resolve()
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0] == ADULT_HEADER
    assert len(lines) - 1 == 2000 - private["suppression"]["records"]
    assert private["suppression"]["records"] <= 0.02 * 2000
    assert digest(adult_small) == before


def test_json_without_manifest_file(tmp_path: Path, adult_small: Path):
    out = tmp_path / "out.csv"
    result = invoke("anonymize", adult_small, "--config", EXAMPLE, "--out", out, "--json")
    assert result.exit_code == 0, result.output
    manifest = json.loads(result.stdout)
    assert {"input", "output", "suppression", "models", "node", "search", "config"} <= manifest.keys()
    assert "metrics" not in manifest  # the published manifest, which names nothing of the input
    assert manifest["output"]["rows"] == len(out.read_text(encoding="utf-8").splitlines()) - 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "out.csv"]


def test_output_options_of_the_config_are_applied(tmp_path: Path, adult_small: Path):
    text = EXAMPLE.read_text(encoding="utf-8").replace("../src/veil/resources/adult/", f"{RESOURCES}/")
    text = text.replace("suppressed: remove", "suppressed: star")
    text = text.replace("seed: null", "seed: 7")
    config = tmp_path / "star.yaml"
    config.write_text(text, encoding="utf-8")
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    for out in (first, second):
        result = invoke("anonymize", adult_small, "--config", config, "--out", out, "--json")
        assert result.exit_code == 0, result.output
    manifest = json.loads(result.stdout)
    assert manifest["output"]["suppressed"] == "star" and manifest["output"]["seed"] == 7
    assert manifest["output"]["order"] == "seeded shuffle"
    lines = first.read_text(encoding="utf-8").splitlines()
    assert len(lines) - 1 == 2000  # every record kept
    starred = [line for line in lines[1:] if line.split(";")[:7] == ["*"] * 7]
    assert len(starred) >= manifest["suppression"]["records"]
    assert first.read_bytes() == second.read_bytes()  # the seed fixes the shuffle


def test_rows_are_shuffled_securely_unless_keep_order_is_asked_for(tmp_path: Path, adult_small: Path):
    # Suppressed records shown as '*', so that every input row is published.
    config = tmp_path / "star.yaml"
    config.write_text(EXAMPLE.read_text(encoding="utf-8").replace("../src/veil/resources/adult/", f"{RESOURCES}/")
                      .replace("suppressed: remove", "suppressed: star"), encoding="utf-8")
    shuffled, kept = tmp_path / "shuffled.csv", tmp_path / "kept.csv"
    result = invoke("anonymize", adult_small, "--config", config, "--out", shuffled, "--json")
    assert result.exit_code == 0, result.output
    manifest = json.loads(result.stdout)
    assert manifest["output"]["order"] == "secure shuffle" and "warnings" not in manifest
    result = invoke("anonymize", adult_small, "--config", config, "--out", kept, "--keep-order")
    assert result.exit_code == 0, result.output
    assert "warning: the rows keep the input's order" in " ".join(result.stdout.split())
    result = invoke("anonymize", adult_small, "--config", config, "--out", tmp_path / "again.csv", "--keep-order",
                    "--json")
    manifest = json.loads(result.stdout)
    assert manifest["output"] | {"shuffled": False, "order": "input order"} == manifest["output"]
    assert manifest["config"]["output"]["shuffle"] is False and len(manifest["warnings"]) == 1
    # The same records either way, and in the input's order only when asked for.
    rows = {path: path.read_text(encoding="utf-8").splitlines() for path in (shuffled, kept)}
    assert rows[kept][0] == rows[shuffled][0] == ADULT_HEADER
    assert sorted(rows[kept]) == sorted(rows[shuffled]) and rows[kept] != rows[shuffled]
    assert [line.split(";")[-2:] for line in rows[kept][1:]] == [
        line.split(";")[-2:] for line in adult_small.read_text(encoding="utf-8").splitlines()[1:]]


def test_heuristic_cut_short_says_not_proven_optimal(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(REPO)
    text = EXAMPLE.read_text(encoding="utf-8").replace("../src/veil/resources/adult/", f"{RESOURCES}/")
    text = text.replace("search: optimal", "search: heuristic").replace("time_limit: null", "time_limit: 0.000001")
    config = tmp_path / "quick.yaml"
    config.write_text(text, encoding="utf-8")
    out, manifest_path = tmp_path / "out.csv", tmp_path / "m.json"
    result = invoke("anonymize", "--config", config, "--out", out, "--manifest", manifest_path)
    assert result.exit_code == 0, result.output
    assert "not proven optimal" in result.stdout
    manifest = combined(json.loads(manifest_path.read_text(encoding="utf-8")),
                        json.loads(private_path(manifest_path).read_text(encoding="utf-8")))
    assert manifest["search"]["proven_optimal"] is False
    assert manifest["config"]["algorithm"] == {"name": "fulldomain", "search": "heuristic", "time_limit": 1e-6}
    assert all(row["passed"] for row in manifest["models"])
    assert manifest["suppression"]["records"] <= 0.02 * ADULT_ROWS


# --------------------------------------------------------------------------------------------
# 2. veil init

def test_init_writes_a_config_that_runs_and_refuses_to_overwrite(tmp_path: Path, adult_small: Path):
    before = digest(adult_small)
    result = invoke("init", adult_small)
    assert result.exit_code == 0, result.output
    config = adult_small.with_suffix(".yaml")
    assert config.is_file()
    text = config.read_bytes()
    assert "guess" in text.decode("utf-8")

    again = invoke("init", adult_small)
    assert again.exit_code == 2
    assert again.stderr.startswith("error: ") and "already exists" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
    assert config.read_bytes() == text

    forced = invoke("init", adult_small, "--force")
    assert forced.exit_code == 0, forced.output
    assert config.read_bytes() == text  # the same guesses for the same table

    out = tmp_path / "release.csv"
    run = invoke("anonymize", "--config", config, "--out", out, "--json")
    assert run.exit_code == 0, run.output
    manifest = json.loads(run.stdout)
    assert manifest["output"]["rows"] <= 2000 and "rows" not in manifest["input"]
    assert all(row["passed"] for row in manifest["models"])
    assert out.read_text(encoding="utf-8").splitlines()[0] == ADULT_HEADER
    assert digest(adult_small) == before
    assert sorted(p.name for p in adult_small.parent.iterdir()) == ["adult-2000.csv", "adult-2000.yaml"]


def test_init_out_option(tmp_path: Path, adult_small: Path):
    target = tmp_path / "settings.yaml"
    result = invoke("init", adult_small, "--out", target)
    assert result.exit_code == 0, result.output
    assert target.is_file() and not adult_small.with_suffix(".yaml").exists()
    cfg = load_config(target)
    assert cfg.data.resolve() == adult_small.resolve()  # data: is written relative to the config


# --------------------------------------------------------------------------------------------
# 3. veil demo

def test_demo_writes_into_the_given_folder(tmp_path: Path):
    folder = tmp_path / "new" / "demo"
    result = invoke("demo", "--out", folder)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in folder.iterdir()) == [".ledger.db.lock", "ledger.db", "manifest.json",
                                                         "manifest.private.json", "refused", "release.csv",
                                                         "report.html"]
    assert sorted(p.name for p in (folder / "refused").iterdir()) == ["manifest.json", "manifest.private.json",
                                                                      "release.csv"]
    manifest = combined(json.loads((folder / "manifest.json").read_text(encoding="utf-8")),
                        json.loads((folder / "manifest.private.json").read_text(encoding="utf-8")))
    assert "attacks" in manifest  # the attacks' findings are the curator's
    lines = (folder / "release.csv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == ADULT_HEADER
    assert len(lines) - 1 == manifest["output"]["rows"] == ADULT_ROWS - manifest["suppression"]["records"]


def test_demo_refuses_a_file_as_its_folder(tmp_path: Path):
    target = tmp_path / "file.txt"
    target.write_text("keep me", encoding="utf-8")
    result = invoke("demo", "--out", target)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and "is a file" in result.stderr
    assert target.read_text(encoding="utf-8") == "keep me"


# --------------------------------------------------------------------------------------------
# 4. Bad input

def config_lines(data: Path, *, models=("k_anonymity: {k: 5}",), metric="loss",
                 hierarchies=("sex", "age", "race", "education"), limit=0.02) -> list[str]:
    """A configuration over four of Adult's columns (a lattice of 2·5·2·4 = 80 nodes)."""
    lines = [f"data: {data}", 'delimiter: ";"', "columns:", "  quasi_identifiers: [sex, age, race, education]",
             "  sensitive: [occupation]", "hierarchies:"]
    lines += [f"  {q}: {{file: {RESOURCES / f'adult_hierarchy_{q}.csv'}}}" for q in hierarchies]
    lines += ["models:"] + [f"  - {m}" for m in models]
    lines += [f"suppression_limit: {limit}", f"metric: {metric}"]
    return lines


def line_of(lines: list[str], text: str) -> int:
    return next(i for i, line in enumerate(lines, start=1) if text in line)


BAD_CONFIGS = {
    # 14 occupations: no class can hold 20 distinct ones.
    "infeasible": (dict(models=("k_anonymity: {k: 5}", "distinct_l_diversity: {l: 20}")),
                   ["distinct ℓ-diversity", "relax"], None),
    "k above the row count": (dict(models=("k_anonymity: {k: 5000}",)),
                              ["k = 5000 is larger than the table's 2000 records"], None),
    "unknown metric": (dict(metric="los"), ["unknown metric 'los'", "did you mean 'loss'"], "metric: los"),
    "unknown model": (dict(models=("k_anonimity: {k: 5}",)), ["unknown model 'k_anonimity'", "k_anonymity"],
                      "k_anonimity"),
    "quasi-identifier without hierarchy": (dict(hierarchies=("sex", "age", "education")),
                                           ["'race' has no hierarchy"], "quasi_identifiers"),
}


@pytest.mark.parametrize("name", list(BAD_CONFIGS))
def test_bad_config_exits_2_with_one_line_and_writes_nothing(tmp_path: Path, adult_small: Path, name: str):
    options, words, line_text = BAD_CONFIGS[name]
    lines = config_lines(adult_small, **options)
    config = tmp_path / "bad.yaml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before, files = digest(adult_small), listing(tmp_path)
    result = invoke("anonymize", "--config", config, "--out", tmp_path / "out.csv",
                    "--manifest", tmp_path / "manifest.json")
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr
    if line_text is not None:
        assert f"line {line_of(lines, line_text)}" in result.stderr
    assert listing(tmp_path) == files  # no output, no manifest, no temporary file
    assert digest(adult_small) == before


def test_quasi_identifier_without_hierarchy_is_a_config_error(tmp_path: Path, adult_small: Path):
    config = tmp_path / "c.yaml"
    lines = config_lines(adult_small, hierarchies=("sex", "age", "education"))
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"line 4: quasi-identifier 'race' has no hierarchy"):
        load_config(config)


@pytest.mark.parametrize("which", ["out", "manifest"])
def test_output_in_a_missing_folder_writes_nothing(tmp_path: Path, adult_small: Path, which: str):
    config = tmp_path / "ok.yaml"
    config.write_text("\n".join(config_lines(adult_small)) + "\n", encoding="utf-8")
    out, manifest = tmp_path / "out.csv", tmp_path / "manifest.json"
    if which == "out":
        out = tmp_path / "missing" / "out.csv"
    else:
        manifest = tmp_path / "missing" / "manifest.json"
    before, files = digest(adult_small), listing(tmp_path)
    result = invoke("anonymize", "--config", config, "--out", out, "--manifest", manifest)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("error: folder ") and "does not exist" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert listing(tmp_path) == files  # neither file, no folder made, no temporary file
    assert digest(adult_small) == before


def test_a_good_run_leaves_only_its_three_files(tmp_path: Path, adult_small: Path):
    config = tmp_path / "ok.yaml"
    config.write_text("\n".join(config_lines(adult_small)) + "\n", encoding="utf-8")
    before, files = digest(adult_small), listing(tmp_path)
    result = invoke("anonymize", "--config", config, "--out", tmp_path / "out.csv",
                    "--manifest", tmp_path / "manifest.json")
    assert result.exit_code == 0, result.output
    assert listing(tmp_path) == sorted(files + ["manifest.json", "manifest.private.json", "out.csv"])
    # the private file is its owner's alone
    assert (tmp_path / "manifest.private.json").stat().st_mode & 0o777 == 0o600
    assert digest(adult_small) == before


@pytest.mark.parametrize("which", ["out", "manifest"])
def test_output_over_the_input_is_refused(tmp_path: Path, adult_small: Path, which: str):
    config = tmp_path / "ok.yaml"
    config.write_text("\n".join(config_lines(adult_small)) + "\n", encoding="utf-8")
    before = digest(adult_small)
    out = adult_small if which == "out" else tmp_path / "out.csv"
    manifest = adult_small if which == "manifest" else tmp_path / "manifest.json"
    result = invoke("anonymize", "--config", config, "--out", out, "--manifest", manifest)
    assert digest(adult_small) == before
    assert result.exit_code == 2
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "manifest.json").exists()


def test_out_and_manifest_on_the_same_path_is_refused(tmp_path: Path, adult_small: Path):
    config = tmp_path / "ok.yaml"
    config.write_text("\n".join(config_lines(adult_small)) + "\n", encoding="utf-8")
    target = tmp_path / "both"
    result = invoke("anonymize", "--config", config, "--out", target, "--manifest", target)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ")
    assert not target.exists()


def test_keep_order_is_refused_for_an_alphabeta_view(tmp_path: Path, adult_small: Path):
    out = tmp_path / "view.csv"
    result = invoke("anonymize", adult_small, "--config", REPO / "examples" / "adult-alphabeta.yaml", "--out", out,
                    "--manifest", tmp_path / "view.json", "--keep-order")
    assert result.exit_code == 2 and "sorted by tuple, so leave --keep-order out" in result.stderr
    assert len(result.stderr.splitlines()) == 1 and not out.exists()
