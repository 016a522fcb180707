"""A project's releases: the list, one release (its node, lattice, utility, models, attacks), the
comparison of two to four side by side, the report page and the downloads.

A release folder (``PROJECT/releases/ID``) is written whole by the anonymize task and never changed
afterwards, except for ``attacks.json`` (the attack task) and ``publication.json`` (the publish
page). Every file is read here as it may be: missing or unreadable sidecars (``workbench.json``,
``search.json``) leave their parts of the page empty instead of breaking it.
"""
from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from flask import (
    Blueprint,
    Response,
    abort,
    redirect,
    render_template,
    request,
    send_file,
    url_for,
)
from markupsafe import escape

from veil.errors import VeilError
from veil.workbench.app import jobs, workspace
from veil.workbench.projects import NotFound, Project

bp = Blueprint("releases", __name__, url_prefix="/p/<name>")

# what a release folder lets the curator download: kind → (file, media type); never the private file
DOWNLOADS = {
    "release": ("release.csv", "text/csv"),
    "manifest": ("manifest.json", "application/json"),
    "report": ("report.html", "text/html"),
}
COMPARED = (2, 4)           # the fewest and most releases compared side by side
LATTICE_ROWS = 400          # the most lattice nodes the release page lists
RISK_THRESHOLD = 0.2        # the prosecutor risk above which a record counts as at risk (veil check's default)
_STYLE = re.compile(r"<style\b[^>]*>(.*?)</style>", re.DOTALL | re.IGNORECASE)


def read_json(path: Path) -> dict:
    """A JSON object read from ``path``; empty when the file is missing or is not one."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


@dataclass
class ReleaseView:
    """What the pages show of one release folder."""

    id: str
    folder: Path
    info: dict = field(default_factory=dict)          # workbench.json
    search: dict = field(default_factory=dict)        # search.json
    manifest: dict = field(default_factory=dict)      # manifest.json (the published one)
    private: dict = field(default_factory=dict)       # manifest.private.json (the curator's)
    attacks: dict = field(default_factory=dict)       # attacks.json, after the attack task
    publication: dict = field(default_factory=dict)   # publication.json, after the gate

    @property
    def label(self) -> str:
        return str(self.info.get("label") or self.id)

    @property
    def created(self) -> str:
        return str(self.info.get("created") or self.manifest.get("created") or "")

    @property
    def algorithm(self) -> str:
        return str(self.info.get("algorithm") or self.search.get("algorithm") or self.manifest.get("algorithm") or "")

    @property
    def metric(self) -> str:
        search = self.manifest.get("search") or {}
        return str(self.info.get("metric") or self.search.get("metric") or search.get("metric") or "")

    @property
    def models(self) -> list[str]:
        """The models the release was made for, in words."""
        given = self.info.get("models")
        if isinstance(given, list) and given:
            return [str(m) for m in given]
        return [f"{m.get('model')}" + (f" of {m['sensitive']}" if m.get("sensitive") else "")
                + f" at {m.get('threshold')}" for m in self.manifest.get("models") or [] if isinstance(m, dict)]

    @property
    def suppressed(self) -> int | None:
        if isinstance(self.search.get("suppressed"), int):
            return self.search["suppressed"]
        records = (self.private.get("suppression") or {}).get("records")
        return records if isinstance(records, int) else None

    @property
    def records(self) -> int | None:
        """The records of the input the release was made from."""
        if isinstance(self.search.get("records"), int):
            return self.search["records"]
        rows = (self.private.get("input") or {}).get("rows")
        return rows if isinstance(rows, int) else None

    @property
    def released(self) -> int | None:
        rows = (self.manifest.get("output") or {}).get("rows")
        return rows if isinstance(rows, int) else None

    @property
    def quasi_identifiers(self) -> list[str]:
        given = self.search.get("quasi_identifiers")
        if isinstance(given, list) and given:
            return [str(q) for q in given]
        roles = self.manifest.get("roles")
        return [str(q) for q in roles.get("quasi_identifiers") or []] if isinstance(roles, dict) else []

    @property
    def chosen(self) -> list | None:
        """The chosen node's level per quasi-identifier (``None`` for a partitioning algorithm)."""
        given = self.search.get("chosen")
        if isinstance(given, list):
            return given
        node = self.manifest.get("node")
        if isinstance(node, dict):
            return [node.get(q) for q in self.quasi_identifiers]
        return None

    @property
    def heights(self) -> list:
        given = self.search.get("heights")
        if isinstance(given, list) and given:
            return given
        heights = self.manifest.get("heights")
        return [heights.get(q) for q in self.quasi_identifiers] if isinstance(heights, dict) else []

    @property
    def utility(self) -> dict:
        """The release's utility measures (search.json's, else the private file's metrics)."""
        given = self.search.get("utility")
        if isinstance(given, dict) and given:
            return given
        return dict(self.private.get("metrics") or {})

    @property
    def model_levels(self) -> list[dict]:
        """Per model: ``model``, ``required`` and ``achieved`` in words, and ``passed`` when known."""
        given = [_named(m) for m in self.search.get("models") or [] if isinstance(m, dict)]
        recorded = [m for m in self.manifest.get("models") or [] if isinstance(m, dict)]
        if given:
            if len(given) == len(recorded):   # the verdicts are the manifest's, model by model
                return [{"passed": r.get("passed"), **m} for m, r in zip(given, recorded)]
            return given
        rows = []
        for m in self.manifest.get("models") or []:
            if not isinstance(m, dict):
                continue
            on = f" of {m['sensitive']}" if m.get("sensitive") else ""
            level = m.get("level")
            achieved = f"{level:.4g}" if isinstance(level, (int, float)) and not isinstance(level, bool) else level
            rows.append({"model": f"{m.get('model')}{on}", "required": f"{m.get('threshold')}",
                         "achieved": "" if achieved is None else str(achieved), "passed": m.get("passed")})
        return rows

    @property
    def manifest_path(self) -> Path:
        return self.folder / "manifest.json"


def _named(row: dict) -> dict:
    """A model's row of ``search.json`` with its sensitive column in its name (``entropy
    ℓ-diversity of occupation``), so that the models of two columns stay apart."""
    model, sensitive = str(row.get("model") or ""), row.get("sensitive")
    if sensitive and not model.endswith(f" of {sensitive}"):
        return {**row, "model": f"{model} of {sensitive}"}
    return row


def load_release(project: Project, release_id: str) -> ReleaseView:
    """One release of ``project`` as the pages show it.

    Raises:
        NotFound: there is no such release.
    """
    folder = project.release_dir(release_id)
    return ReleaseView(release_id, folder, info=read_json(folder / "workbench.json"),
                       search=read_json(folder / "search.json"), manifest=read_json(folder / "manifest.json"),
                       private=read_json(folder / "manifest.private.json"), attacks=read_json(folder / "attacks.json"),
                       publication=read_json(folder / "publication.json"))


def all_releases(project: Project) -> list[ReleaseView]:
    """Every release of ``project``, oldest first."""
    return [load_release(project, release_id) for release_id in project.release_ids()]


def release_risk(view: ReleaseView) -> dict:
    """The re-identification risk of the published table, as ``veil check --manifest`` measures it
    (its classes; the rows the manifest calls suppressed exempt): prosecutor risk (largest and
    average, El Emam's definitions), the share of records above :data:`RISK_THRESHOLD`, the
    marketer risk, and the classes. An ``error`` sentence instead when the release cannot be read."""
    from veil.check import check
    from veil.data.dataset import Dataset
    from veil.data.io import read_table
    from veil.report import read_release_manifest
    from veil.spreadsheet import is_guarded, unguard_table

    try:
        doc = read_release_manifest(view.manifest_path)
        roles = doc["roles"]
        delimiter = (doc.get("input") or {}).get("delimiter") or ","
        table = view.folder / "release.csv"
        source = unguard_table(read_table(table, delimiter).data) if is_guarded(doc) else table
        ds = Dataset(source, quasi_identifiers=list(roles["quasi_identifiers"]),
                     sensitive=list(roles.get("sensitive") or []),
                     delimiter=delimiter if source is table else None)
        checked = check(ds, manifest=doc, risk_threshold=RISK_THRESHOLD)
    except (VeilError, KeyError, TypeError, OSError) as error:
        return {"error": str(error) if isinstance(error, VeilError) else "the release's files cannot be read."}
    risk = checked.risk
    sizes = checked.classes.sizes
    return {"prosecutor_max": float(risk.prosecutor_max), "prosecutor_avg": float(risk.prosecutor_avg),
            "at_risk": float(risk.prosecutor_at_risk), "marketer": float(risk.marketer),
            "classes": int(checked.classes.n_classes), "smallest": int(sizes.min()) if len(sizes) else 0,
            "threshold": RISK_THRESHOLD}


def attack_summary(attacks: dict) -> list[dict]:
    """Per sensitive column of ``attacks.json``: the records each single-release attack exposes."""
    rows = []
    for column, found in (attacks.get("attacks") or {}).items():
        if not isinstance(found, dict):
            continue
        row = {"sensitive": column}
        for key in ("homogeneity", "background_knowledge", "skewness", "similarity"):
            part = found.get(key) or {}
            row[key] = (part.get("records"), part.get("record_share")) if part else None
        disclosure = found.get("disclosure") or {}
        row["a_know"], row["a_acc"], row["delta"] = (disclosure.get("a_know"), disclosure.get("a_acc"),
                                                      disclosure.get("delta"))
        rows.append(row)
    return rows


def lattice_rows(view: ReleaseView) -> tuple[list[dict], int]:
    """The searched nodes to list (the chosen one first, then by score), and how many there are."""
    nodes = [n for n in view.search.get("nodes") or [] if isinstance(n, dict) and isinstance(n.get("levels"), list)]
    chosen = view.chosen

    def order(node):
        score = node.get("score")
        return (node.get("levels") != chosen, not node.get("anonymous"),
                score if isinstance(score, (int, float)) else float("inf"), node.get("levels"))

    shown = sorted(nodes, key=order)[:LATTICE_ROWS]
    return [{**n, "chosen": n.get("levels") == chosen, "height": sum(v for v in n["levels"] if isinstance(v, int))}
            for n in shown], len(nodes)


def lattice_figure(view: ReleaseView) -> str | None:
    """A data URI of an SVG drawing of the searched nodes: the sum of their levels against their
    score, anonymous nodes filled, the chosen one ringed; ``None`` without scored nodes."""
    points = []
    for node in view.search.get("nodes") or []:
        if not isinstance(node, dict) or not isinstance(node.get("levels"), list):
            continue
        score = node.get("score")
        if isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score):
            points.append((sum(v for v in node["levels"] if isinstance(v, int)), float(score),
                           bool(node.get("anonymous")), node["levels"] == view.chosen))
    if not points:
        return None
    width, height, pad = 560, 300, 48
    metric = f" ({escape(view.metric)})" if view.metric else ""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)

    def x(v):
        return pad + (v - x0) / ((x1 - x0) or 1) * (width - 2 * pad)

    def y(v):
        return height - pad - (v - y0) / ((y1 - y0) or 1) * (height - 2 * pad)

    parts = [(f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
              f'height="{height}" font-family="sans-serif" font-size="11" fill="#1d2430">'),
             f'<rect width="{width}" height="{height}" fill="#fff"/>',
             f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="#888"/>',
             f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="#888"/>',
             f'<text x="{width / 2}" y="{height - 6}" text-anchor="middle">sum of the generalization levels</text>',
             f'<text x="{pad}" y="{pad - 14}">score{metric}</text>',
             f'<text x="{pad - 4}" y="{y(y1) + 4:.1f}" text-anchor="end">{y1:.3g}</text>',
             f'<text x="{pad - 4}" y="{y(y0) + 4:.1f}" text-anchor="end">{y0:.3g}</text>',
             f'<text x="{width - pad}" y="{pad - 14}" text-anchor="end">● anonymous  ○ not  ◯ chosen (red)</text>']
    step = max(1, (x1 - x0) // 12 or 1)
    for tick in range(x0, x1 + 1, step):
        parts.append(f'<text x="{x(tick):.1f}" y="{height - pad + 14}" text-anchor="middle">{tick}</text>')
    for px, py, anonymous, _ in points:
        fill = "#1f5fa8" if anonymous else "none"
        parts.append(f'<circle cx="{x(px):.1f}" cy="{y(py):.1f}" r="3" fill="{fill}" stroke="#1f5fa8"/>')
    for px, py, _, chosen in points:
        if chosen:
            parts.append(f'<circle cx="{x(px):.1f}" cy="{y(py):.1f}" r="8" fill="none" stroke="#a8261f" '
                         'stroke-width="2"/>')
    parts.append("</svg>")
    return "data:image/svg+xml;base64," + base64.b64encode("".join(parts).encode()).decode()


def _newlines(text: str) -> str:
    """``text`` with its line breaks as an HTML parser reads them (CR LF and CR become LF), which
    is the text a browser hashes."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def report_policy(html: str) -> str:
    """The Content-Security-Policy of a release's report page: it is one self-contained page whose
    only active content is its inline ``<style>`` elements (allowed by their SHA-256 hashes), with
    at most data images; no script, no connection, no form, no frame, sandboxed."""
    hashes = " ".join("'sha256-" + base64.b64encode(hashlib.sha256(_newlines(block).encode()).digest())
                      .decode() + "'" for block in dict.fromkeys(_STYLE.findall(html)))
    images = " img-src data:;" if "data:image/" in html else ""
    styles = hashes or "'none'"
    return (f"default-src 'none'; style-src {styles};{images} base-uri 'none'; "
            "form-action 'none'; frame-ancestors 'none'; sandbox")


# ------------------------------------------------------------------------------ pages

@bp.get("/releases")
def page(name: str):
    """The releases of a project, a checkbox each to compare them."""
    project = workspace().project(name)
    return render_template("releases/list.html.j2", project=project, releases=all_releases(project),
                           message=request.args.get("message"))


@bp.get("/compare")
def compare(name: str):
    """Two to four releases side by side (``?release=A&release=B``): utility, models, risk, attacks."""
    project = workspace().project(name)
    chosen = list(dict.fromkeys(request.args.getlist("release")))
    if not COMPARED[0] <= len(chosen) <= COMPARED[1]:
        return render_template("releases/list.html.j2", project=project, releases=all_releases(project),
                               message=f"choose between {COMPARED[0]} and {COMPARED[1]} releases to compare "
                                       f"(you chose {len(chosen)})."), 400
    views = [load_release(project, release_id) for release_id in chosen]
    utility = list(dict.fromkeys(key for v in views for key in v.utility))
    models = list(dict.fromkeys(m.get("model") for v in views for m in v.model_levels))
    levels = [{m.get("model"): m for m in v.model_levels} for v in views]
    attacks = [{row["sensitive"]: row for row in attack_summary(v.attacks)} for v in views]
    columns = list(dict.fromkeys(c for a in attacks for c in a))
    return render_template("releases/compare.html.j2", project=project, views=views, utility=utility,
                           models=models, levels=levels, risks=[release_risk(v) for v in views],
                           attacks=attacks, attacked_columns=columns)


@bp.get("/releases/<release_id>")
def release(name: str, release_id: str):
    """One release: its node, the lattice searched, its utility, models and attacks, its files."""
    project = workspace().project(name)
    view = load_release(project, release_id)
    nodes, total = lattice_rows(view)
    return render_template("releases/release.html.j2", project=project, view=view, nodes=nodes, total_nodes=total,
                           figure=lattice_figure(view), attacks=attack_summary(view.attacks),
                           has_report=(view.folder / "report.html").is_file())


@bp.post("/releases/<release_id>/attack")
def attack(name: str, release_id: str):
    """Start the attack task on a release; the run's page follows it."""
    project = workspace().project(name)
    load_release(project, release_id)   # 404 on a missing one, before a worker starts
    run_id = jobs().start(project, "attack", {"release": release_id})
    return redirect(url_for("runs.page", name=name, run_id=run_id), code=303)


@bp.get("/releases/<release_id>/report")
def report(name: str, release_id: str):
    """The release's report page, under the policy :func:`report_policy` gives it."""
    project = workspace().project(name)
    path = project.release_dir(release_id) / "report.html"
    if not path.is_file():
        raise NotFound("this release has no report.")
    html = path.read_text(encoding="utf-8")
    response = Response(html, mimetype="text/html")
    response.headers["Content-Security-Policy"] = report_policy(html)
    return response


@bp.get("/releases/<release_id>/download/<kind>")
def download(name: str, release_id: str, kind: str):
    """The release, its manifest or its report as an attachment (:data:`DOWNLOADS`); any other kind is 404."""
    project = workspace().project(name)
    folder = project.release_dir(release_id)
    if kind not in DOWNLOADS:
        abort(404)
    file, mimetype = DOWNLOADS[kind]
    path = folder / file
    if not path.is_file():
        abort(404)
    response = send_file(path, mimetype=mimetype, as_attachment=True,
                         download_name=f"{project.name}-{release_id}-{file}", conditional=False)
    response.headers["Cache-Control"] = "no-store"
    return response
