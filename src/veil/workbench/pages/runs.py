"""A run's page: its progress while it works (followed by workbench.js), its outcome, its cancel button."""
from __future__ import annotations

from flask import Blueprint, jsonify, redirect, render_template, url_for

from veil.workbench.app import jobs, workspace

bp = Blueprint("runs", __name__, url_prefix="/p/<name>/runs")


@bp.get("/<run_id>")
def page(name: str, run_id: str):
    project = workspace().project(name)
    status = jobs().status(project, run_id)
    return render_template("runs/run.html.j2", project=project, run_id=run_id, status=status)


@bp.get("/<run_id>/status.json")
def status(name: str, run_id: str):
    project = workspace().project(name)
    found = jobs().status(project, run_id)
    shown = {key: found.get(key) for key in ("state", "task", "stage", "done", "total", "message")}
    return jsonify(shown)


@bp.post("/<run_id>/cancel")
def cancel(name: str, run_id: str):
    project = workspace().project(name)
    jobs().cancel(project, run_id)
    return redirect(url_for("runs.page", name=name, run_id=run_id), code=303)
