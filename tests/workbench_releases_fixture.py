"""Release folders for the workbench's release and publish tests, made as the anonymize task makes
them: ``veil anonymize --config … --out … --manifest … --report …`` on the project's table, then
``config.yaml``, ``workbench.json`` and ``search.json`` (the issue 30 contract's formats).

The project is the 3,016-row Adult subset with the demo's models (5-anonymity and entropy
3-diversity of occupation, at most 2 % suppressed) over Adult's hierarchies; a release optimized
for loss and then one optimized for discernibility are the demo's pair: the ledger's gate publishes
the first and refuses the second (intersected with the first it pins one person's occupation).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from tests.workbench_client import ADULT_SUBSET
from veil.cli import app as cli
from veil.data.bundled import adult_hierarchies
from veil.workbench.projects import Project, write_atomic

QUASI_IDENTIFIERS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass"]
SENSITIVE = "occupation"
MODELS_TEXT = ["5-anonymity", "entropy 3-diversity of occupation"]


def make_project(workspace, name: str = "adult", table: Path = ADULT_SUBSET) -> Project:
    """A project over ``table`` (``;``-separated) with Adult's hierarchies and the demo's models."""
    project = workspace.create(name, table.read_bytes(), fmt="csv", delimiter=";")
    files = adult_hierarchies()
    for column in QUASI_IDENTIFIERS + [SENSITIVE]:
        project.hierarchies_dir.mkdir(exist_ok=True)
        shutil.copyfile(files[column], project.hierarchies_dir / f"{column}.csv")
    project.save_config(config("loss"))
    return project


def config(metric: str, *, suppressed: str = "remove") -> dict:
    return {"columns": {"quasi_identifiers": QUASI_IDENTIFIERS, "sensitive": [SENSITIVE], "identifying": []},
            "hierarchies": {c: {"file": f"hierarchies/{c}.csv"} for c in QUASI_IDENTIFIERS + [SENSITIVE]},
            "models": [{"k_anonymity": {"k": 5}}, {"entropy_l_diversity": {"l": 3}}],
            "suppression_limit": 0.02, "metric": metric, "algorithm": "fulldomain",
            "output": {"suppressed": suppressed}}


def make_release(project: Project, release_id: str, *, metric: str = "loss", label: str | None = None,
                 suppressed: str = "remove", search: bool = True, document: dict | None = None,
                 report: bool = True) -> Path:
    """Run ``veil anonymize`` on the project as its configuration says (the Adult one optimized
    for ``metric``, or ``document``) into ``releases/<release_id>``, with the workbench's sidecar
    files (``report.html`` unless ``report`` is false); the folder."""
    project.save_config(document or config(metric, suppressed=suppressed))
    metric = (document or {}).get("metric", metric)
    staging = project.root / f".staging-{release_id}"
    staging.mkdir()
    result = CliRunner().invoke(cli, ["anonymize", "--config", str(project.config_path),
                                      "--out", str(staging / "release.csv"),
                                      "--manifest", str(staging / "manifest.json")]
                           + (["--report", str(staging / "report.html")] if report else []))
    assert result.exit_code == 0, result.output
    shutil.copyfile(project.config_path, staging / "config.yaml")
    manifest = json.loads((staging / "manifest.json").read_text(encoding="utf-8"))
    private = json.loads((staging / "manifest.private.json").read_text(encoding="utf-8"))
    write_atomic(staging / "workbench.json", json.dumps({
        "label": label or f"{metric} release", "created": manifest["created"], "algorithm": "fulldomain",
        "metric": metric, "models": MODELS_TEXT}))
    if search:
        write_atomic(staging / "search.json", json.dumps(search_document(manifest, private, metric)))
    project.releases_dir.mkdir(exist_ok=True)
    final = project.releases_dir / release_id
    staging.rename(final)
    return final


def search_document(manifest: dict, private: dict, metric: str) -> dict:
    """A ``search.json`` as the contract describes it, from what the manifest and its private file say
    (the searched nodes: the chosen one, the bottom and the top of the lattice)."""
    qis = manifest["roles"]["quasi_identifiers"]
    chosen = [manifest["node"][q] for q in qis]
    heights = [manifest["heights"][q] for q in qis]
    loss = private["metrics"][metric]
    nodes = [{"levels": [0] * len(qis), "anonymous": False, "score": None},
             {"levels": chosen, "anonymous": True, "score": loss},
             {"levels": heights, "anonymous": True, "score": loss * 1.5 + 1}]
    models = [{"model": m["model"], "sensitive": m["sensitive"], "required": f"{m['key']} = {m['threshold']:.4g}",
               "achieved": f"{m['key']} = {m['level']:.4g}", "passed": m["passed"]} for m in manifest["models"]]
    return {"algorithm": "fulldomain", "metric": metric, "quasi_identifiers": qis, "heights": heights,
            "chosen": chosen, "nodes": nodes, "truncated": False, "models": models,
            "utility": private["metrics"], "suppressed": private["suppression"]["records"],
            "records": private["input"]["rows"], "seconds": 0.1}


# A table whose column names and values are HTML: every page must show them as text.
HTML_COLUMNS = ("<b>age</b>", "<script>zip</script>", "<i>disease</i>")
HTML_VALUES = ("<script>alert(1)</script>", "<img src=x onerror=alert(2)>")


def make_html_project(workspace, name: str = "html") -> Project:
    """A 60-row project whose column names and some values are HTML, with its configuration."""
    rows = [";".join(HTML_COLUMNS)]
    for i in range(60):
        rows.append(f"{20 + (i * 7) % 40};{('130', '131', HTML_VALUES[0])[i % 3]};"
                    f"{('flu', HTML_VALUES[1], 'cold', 'asthma')[(i * 5) % 4]}")
    project = workspace.create(name, ("\n".join(rows) + "\n").encode(), fmt="csv", delimiter=";")
    project.save_config(html_config("loss"))
    return project


def html_config(metric: str) -> dict:
    age, zip_, disease = HTML_COLUMNS
    return {"columns": {"quasi_identifiers": [age, zip_], "sensitive": [disease], "identifying": []},
            "hierarchies": {age: {"intervals": {"widths": [10, 20]}}, zip_: {"flat": {}}},
            "models": [{"k_anonymity": {"k": 3}}, {"distinct_l_diversity": {"l": 2}}],
            "suppression_limit": 0.1, "metric": metric, "algorithm": "fulldomain"}
