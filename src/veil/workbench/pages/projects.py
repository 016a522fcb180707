"""The projects page (the list, and making one from an uploaded table) and a project's table page."""
from __future__ import annotations

from flask import Blueprint, render_template

from veil.workbench.app import workspace

bp = Blueprint("projects", __name__)


@bp.get("/")
def index():
    return render_template("projects/index.html.j2", projects=workspace().projects(), errors={})


@bp.get("/p/<name>")
def project(name: str):
    found = workspace().project(name)
    return render_template("projects/project.html.j2", project=found)
