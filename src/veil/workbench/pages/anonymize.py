"""The Anonymize page: the models, thresholds, suppression limit, metric and algorithm of the
project's configuration (veil.workbench.model_forms), a run that makes a candidate release
(veil.workbench.tasks.anonymize), the candidate releases made so far and the runs still working.
"""
from __future__ import annotations

import json
import re

import yaml
from flask import Blueprint, current_app, redirect, render_template, request, url_for

from veil.errors import VeilError
from veil.workbench.app import jobs, workspace
from veil.workbench.model_forms import (ALGORITHM_NAMES, ALGORITHMS, DISTANCES, L_KINDS, LABELLED, FormErrors,
                                        describe_models, form_values, kept_models, metric_names, read_form)
from veil.workbench.security import CSRF_FIELD
from veil.workbench.tasks.anonymize import CONFIG_NAME, parse_config

bp = Blueprint("anonymize", __name__, url_prefix="/p/<name>/anonymize")

# words of a configuration's refusal → the field it is shown next to
_FIELD_OF = (("k_anonymity", "k"), ("l_diversity", "l"), ("cl_diversity", "l"), ("t_closeness", "t"),
             ("metric", "metric"), ("algorithm", "algorithm"), ("suppression", "suppression_limit"))


def _table_columns(project) -> list[str]:
    """The table's column names, read cheaply (empty when they cannot be read)."""
    try:
        path = project.table_path
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            return list(pq.read_schema(path).names)
        from veil.data.io import read_csv_header

        return read_csv_header(path, project.meta.get("delimiter"))
    except (OSError, ValueError, VeilError):
        return []


def _releases(project) -> list[dict]:
    """The project's candidate releases, newest first, with what their workbench.json says."""
    out = []
    for release_id in reversed(project.release_ids()):
        try:
            about = json.loads((project.releases_dir / release_id / "workbench.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            about = {}
        about = about if isinstance(about, dict) else {}
        out.append({"id": release_id, "label": str(about.get("label") or ""),
                    "algorithm": str(about.get("algorithm") or ""), "created": str(about.get("created") or "")})
    return out


def _config(project) -> tuple[dict, str | None]:
    """The project's configuration, or an empty one and the sentence saying why it cannot be read
    (a config.yaml edited by hand into something that is not a mapping of YAML)."""
    try:
        config = project.config()
    except yaml.YAMLError:
        config = None
    if not isinstance(config, dict):
        return {}, (f"{CONFIG_NAME} is not a configuration veil can read (not a mapping of YAML); fix it in a text "
                    "editor, or download it from the Table page to see it.")
    return config, None


def _render(project, values: dict, errors: dict, status: int = 200):
    config, unreadable = _config(project)
    if unreadable and "_form" not in errors:
        errors = {**errors, "_form": unreadable}
    declared = ((config.get("columns") or {}) if isinstance(config.get("columns"), dict) else {}).get("sensitive")
    declared = [declared] if isinstance(declared, str) else [str(c) for c in declared or []]
    runs = [(run_id, state) for run_id, state in jobs().runs(project)
            if state.get("task") == "anonymize" and state.get("state") in ("running", "failed")][:8]
    return render_template(
        "anonymize/page.html.j2", project=project, values=values, errors=errors, l_kinds=list(L_KINDS),
        distances=DISTANCES, algorithms=ALGORITHMS, algorithm_names=ALGORITHM_NAMES, metrics=metric_names(),
        labelled=LABELLED, sensitive=declared, columns=_table_columns(project),
        kept=describe_models(kept_models(config)), releases=_releases(project), runs=runs,
        release_link="releases.release" in current_app.view_functions), status


@bp.get("")
def page(name: str):
    """The form filled from config.yaml, the runs still working (or failed) and the releases."""
    project = workspace().project(name)
    return _render(project, form_values(_config(project)[0]), {})


def _config_text(project, document: dict) -> str:
    """The configuration text as :meth:`Project.save_config` writes ``document`` (for the check
    before anything is saved)."""
    document = {"data": project.meta["table"], **{k: v for k, v in document.items() if k != "data"}}
    if project.meta.get("format") == "csv":
        document["delimiter"] = project.meta["delimiter"]
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)


def _field_of(message: str) -> str:
    lowered = message.lower()
    return next((field for word, field in _FIELD_OF if word in lowered), "_form")


@bp.post("")
def start(name: str):
    """Check the form (and the configuration it makes, as veil anonymize would read it), save it
    into config.yaml and start the run; a refused form is shown again (400) and nothing written."""
    project = workspace().project(name)
    config, unreadable = _config(project)
    values = {**form_values(config), **{k: str(v) for k, v in request.form.items() if k != CSRF_FIELD}}
    if unreadable:
        return _render(project, values, {"_form": unreadable}, 400)
    try:
        document, label = read_form(request.form, config)
        parse_config(project.root, _config_text(project, document))
    except FormErrors as refused:
        return _render(project, values, refused.errors, 400)
    except VeilError as refused:
        message = re.sub(rf"^{re.escape(CONFIG_NAME)}(, line \d+)?: ", "", str(refused))
        return _render(project, values, {_field_of(message): message}, 400)
    project.save_config(document)
    text = project.config_path.read_text(encoding="utf-8")
    run_id = jobs().start(project, "anonymize", {"label": label, "config": text})
    return redirect(url_for("runs.page", name=project.name, run_id=run_id), code=303)
