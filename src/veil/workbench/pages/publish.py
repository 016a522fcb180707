"""The publish page: pass a release through the ledger's publishing gate, see the decision and its
reasons, and read the ledger (its history, the populations' DP budgets, its verification).

The ledger is the data folder's ``ledger.db`` (made by the first publication, with
:meth:`veil.ledger.Ledger.init`); a project's population is named after the project. The gate
(:func:`veil.ledger.gate.publish`) checks the release against every earlier release of the
population, every person of the project's table a target, and records its decision in the ledger,
which serializes concurrent publications itself. A ledger is opened for one request and closed
before the response; the decision is also kept in the release folder as ``publication.json``.
"""
from __future__ import annotations

import json
from datetime import UTC, datetime

from flask import Blueprint, redirect, render_template, request, url_for

from veil.errors import VeilError
from veil.workbench.app import workspace
from veil.workbench.pages.releases import all_releases, load_release
from veil.workbench.projects import NotFound, Project, write_atomic

bp = Blueprint("publish", __name__, url_prefix="/p/<name>")

HISTORY_SHOWN = 200   # the newest entries of the ledger's log the page lists
# What Ledger.verify checks, in words (veil ledger verify's help).
VERIFIED = ("every entry's hash and its link to the one before, the anchor of the log's head, every row of the "
            "ledger against the entry that recorded it, and every budget against its charges")


def ledger_view(project: Project) -> dict:
    """What the page shows of the ledger, read in one short opening: ``exists``; ``history`` (the
    newest :data:`HISTORY_SHOWN` entries, newest first); ``budgets`` (per population: its name and
    budget, total/spent/left, or ``None``); ``verification`` (``ok``, ``entries``, ``problems``);
    ``error``, a sentence, when the ledger cannot be read."""
    path = workspace().ledger_path
    if not path.exists():
        return {"exists": False, "history": [], "budgets": [], "verification": None, "error": None}
    from veil.ledger import Ledger

    try:
        ledger = Ledger(str(path))
        try:
            report = ledger.verify()
            history = ledger.history(None, limit=HISTORY_SHOWN)
            status = ledger.status()
        finally:
            ledger.close()
    except VeilError as error:
        return {"exists": True, "history": [], "budgets": [], "verification": None, "error": str(error)}
    budgets = [{"name": p["name"], "budget": p["budget"], "releases": len(p["releases"]), "charges": p["charges"]}
               for p in status["populations"]]
    return {"exists": True, "history": list(reversed(history)), "budgets": budgets,
            "verification": {"ok": report.ok, "entries": report.entries, "problems": list(report.problems),
                             "head": report.head.seq if report.head else None},
            "error": None}


def publish_release(project: Project, release_id: str) -> dict:
    """Pass a release of ``project`` through the gate of the workspace's ledger (made if missing,
    with the project's population if missing) and keep the decision as ``publication.json``.

    Returns:
        The decision (:meth:`veil.ledger.gate.Decision.to_dict`) with ``at`` (UTC).

    Raises:
        NotFound: there is no such release.
        VeilError: the ledger or the release cannot be read (the gate's sentence).
    """
    from veil.ledger import Ledger, LedgerError

    view = load_release(project, release_id)
    ledger, _ = Ledger.init(str(workspace().ledger_path))
    try:
        try:
            ledger.population(project.name)
        except LedgerError:
            ledger.add_population(project.name)
        decision = ledger.publish(str(view.manifest_path), population=project.name, data=str(project.table_path),
                                  delimiter=project.meta.get("delimiter"),
                                  name=f"{project.name} release {release_id}")
    finally:
        ledger.close()
    found = {**decision.to_dict(), "at": datetime.now(UTC).isoformat(timespec="seconds")}
    write_atomic(view.folder / "publication.json", json.dumps(found, indent=1, ensure_ascii=False) + "\n")
    return found


def _render(project: Project, errors: dict, chosen: str | None, status: int = 200):
    releases = all_releases(project)
    shown = next((r for r in releases if r.id == chosen), None)
    return render_template("publish/page.html.j2", project=project, releases=releases, errors=errors,
                           chosen=chosen, shown=shown, ledger=ledger_view(project), verified=VERIFIED), status


@bp.get("/publish")
def page(name: str):
    """The publish form, the decision on ``?release=ID`` when it has one, and the ledger read-only."""
    project = workspace().project(name)
    return _render(project, {}, request.args.get("release"))


@bp.post("/publish")
def publish(name: str):
    """Pass the chosen release through the gate, then show its decision (a redirect to the page)."""
    project = workspace().project(name)
    release_id = request.form.get("release", "")
    if not release_id:
        return _render(project, {"release": "choose the release to publish."}, None, 400)
    try:
        publish_release(project, release_id)
    except NotFound:
        return _render(project, {"release": "there is no such release in this project; choose one from the list."},
                       None, 400)
    except VeilError as error:
        return _render(project, {"_form": str(error)}, None, 400)
    return redirect(url_for("publish.page", name=name, release=release_id), code=303)
