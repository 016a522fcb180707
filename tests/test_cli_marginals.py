"""The ``veil marginals`` and ``veil experiment marginals`` commands.

1. The example configuration: every marginal as CSV and a manifest naming each with its SHA-256;
   ``--json``.
2. Bad input: a missing column, a level beyond the hierarchy, an IPF that does not converge, a
   domain too large for the exact check, a collection that fails its privacy model, no
   ``marginals`` section, a folder holding another release's marginals. Each exits 2 with one
   line on stderr and writes nothing.
3. ``veil experiment marginals``.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from veil.cli import app
from veil.cli.marginals import model_classes
from veil.config.schema import MARGINAL_MODELS

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "adult-marginals.yaml"
RESOURCES = REPO / "src" / "veil" / "resources" / "adult"

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


def test_the_configuration_names_the_marginal_models_their_classes_take():
    classes = model_classes()
    assert set(classes) == set(MARGINAL_MODELS)
    for name, schema in MARGINAL_MODELS.items():
        assert classes[name].__name__ == schema.cls
        takes = [p for p in inspect.signature(classes[name].__init__).parameters if p != "self"]
        assert list(schema.options) == takes, name


def test_the_example_publishes_every_marginal_with_its_hash(tmp_path):
    out = tmp_path / "release"
    result = invoke("marginals", "--config", EXAMPLE, "--out", out)
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["kind"] == "marginals" and manifest["algorithm"]["name"] == "greedy"
    roles = [m["role"] for m in manifest["marginals"]]
    assert roles[:2] == ["base", "given"] and set(roles[2:]) <= {"added"}
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "manifest.private.json"] + [
        m["file"]["file"] for m in manifest["marginals"]]
    private = json.loads((out / "manifest.private.json").read_text(encoding="utf-8"))
    for entry in manifest["marginals"]:
        data = (out / entry["file"]["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["file"]["sha256"] and len(data) == entry["file"]["bytes"]
    assert [p["model"] for p in manifest["privacy"]] == ["k-link anonymity", "MaxEnt entropy ℓ-diversity"]
    assert all(p["passed"] for p in manifest["privacy"])
    # what was measured on the input table is the curator's
    assert "utility" not in manifest and not {"steps", "start_kl_divergence"} & manifest["algorithm"].keys()
    steps = private["algorithm"]["steps"]
    assert private["utility"]["kl_divergence"] == steps[-1]["kl_divergence"] < \
        private["algorithm"]["start_kl_divergence"]
    assert [step["marginal"] for step in steps] == [m["name"] for m in manifest["marginals"] if m["role"] == "added"]
    assert manifest["base"]["optimal"] and manifest["config"]["marginals"]["base"] == "optimal"
    assert "KL-divergence" in result.stdout


def small_config(tmp_path: Path, marginals: list[str], *, models=("k_anonymity: {k: 5}",)) -> Path:
    """A configuration over Adult's sex, age, race and occupation with the given marginals section
    (its first line is line 13)."""
    lines = [f"data: {RESOURCES / 'adult.csv'}", 'delimiter: ";"', "columns:",
             "  quasi_identifiers: [sex, age, race]", "  sensitive: [occupation]", "hierarchies:"]
    lines += [f"  {c}: {{file: {RESOURCES / f'adult_hierarchy_{c}.csv'}}}" for c in ("sex", "age", "race")]
    lines += ["models:"] + [f"  - {m}" for m in models] + ["marginals:"] + [f"  {line}" for line in marginals]
    path = tmp_path / "marginals.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_json_prints_the_manifest(tmp_path):
    config = small_config(tmp_path, ["privacy: [{k_link: {k: 5}}, {k_combinatorial: {k: 5}}]", "base: none",
                                     "publish: [{attributes: [age, sex], levels: {age: 2}}, {attributes: [race]}]"])
    result = invoke("marginals", "--config", config, "--out", tmp_path / "out", "--json")
    assert result.exit_code == 0, result.output
    manifest = json.loads(result.stdout)
    assert manifest["algorithm"]["name"] == "given" and [m["role"] for m in manifest["marginals"]] == ["given"] * 2
    assert manifest["marginals"][0]["levels"] == {"age": 2, "sex": 0}
    assert [(p["model"], p["passed"]) for p in manifest["privacy"]] == [("k-link anonymity", True),
                                                                        ("k-combinatorial anonymity", True)]


BAD = {
    "missing column": (["privacy: [{k_link: {k: 5}}]", "publish: [{attributes: [agee]}]"],
                       ["'agee', which is not a column", "did you mean 'age'"]),
    "level beyond the hierarchy": (["privacy: [{k_link: {k: 5}}]", "base: none",
                                    "publish: [{attributes: [age], levels: {age: 7}}]"],
                                   ["line 15", "levels 0 to 4, not 7"]),
    "IPF that does not converge": (["privacy: [{k_link: {k: 1}}]", "base: none",
                                    "publish: [{attributes: [age, sex]}, {attributes: [sex, race]}, "
                                    "{attributes: [race, age]}]", "maxent: {max_iterations: 1}"],
                                   ["did not converge", "residual"]),
    "domain too large for the exact check": (
        ["privacy: [{k_combinatorial: {k: 5, method: exact, exact_limit: 10}}]",
         "base: {levels: {age: 2}}", "publish: [{attributes: [age, occupation], levels: {age: 1}}]"],
        ["exact k-combinatorial check's limit of 10", "LP relaxation's answer instead"]),
    "collection that fails its privacy model": (["privacy: [{k_link: {k: 5}}]", "base: none",
                                                 "publish: [{attributes: [age, race]}]"],
                                                ["marginal 1 (age@0 × race@0) fails 5-link anonymity", "its cell"]),
    "unknown privacy model": (["privacy: [{k_lnik: {k: 5}}]"], ["unknown key 'k_lnik'", "did you mean 'k_link'"]),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_exits_2_with_one_sentence_and_writes_nothing(tmp_path, name):
    marginals, words = BAD[name]
    config = small_config(tmp_path, marginals)
    out = tmp_path / "out"
    result = invoke("marginals", "--config", config, "--out", out)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr, result.stderr
    assert listing(out) == []


def test_a_configuration_without_marginals_is_refused(tmp_path):
    config = small_config(tmp_path, ["privacy: [{k_link: {k: 5}}]"])
    config.write_text(config.read_text(encoding="utf-8").split("marginals:")[0], encoding="utf-8")
    result = invoke("marginals", "--config", config, "--out", tmp_path / "out")
    assert result.exit_code == 2 and "there is no marginals section" in result.stderr
    assert listing(tmp_path / "out") == []


def test_a_folder_holding_another_release_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "marginal-07.csv").write_text("age,count\n", encoding="utf-8")
    config = small_config(tmp_path, ["privacy: [{k_link: {k: 5}}]", "base: none", "publish: [{attributes: [sex]}]"])
    result = invoke("marginals", "--config", config, "--out", out)
    assert result.exit_code == 2 and "marginal-07.csv from another release" in result.stderr
    assert listing(out) == ["marginal-07.csv"]


def test_the_experiment_writes_its_table_figure_and_collections(tmp_path):
    out = tmp_path / "exp"
    result = invoke("experiment", "marginals", "--k", "10", "--max-marginals", "1", "--max-attributes", "2",
                    "--out", out)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["collections.json", "marginals.csv", "marginals.png"]
    assert "k = 10, ℓ = 3: KL-divergence" in result.stdout
    bad = invoke("experiment", "marginals", "--k", "ten", "--out", tmp_path / "bad")
    assert bad.exit_code == 2 and "--k takes whole numbers" in bad.stderr and not (tmp_path / "bad").exists()
