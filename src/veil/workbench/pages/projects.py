"""The projects page (the list, and making one from an uploaded table) and a project's table page.

Making a project takes two steps. The upload (``projects.upload``) checks the name and the file
and holds the file in the data folder as ``.upload-ID/table.csv`` (or ``table.parquet``) beside
``upload.json``, a folder that appears whole (written as ``.new-*`` and renamed) and that
:meth:`veil.workbench.projects.Workspace.sweep` removes when the server starts again. The confirm
page (``projects.confirm``) shows the first rows as the sniffed delimiter splits them, lets the
steward choose another, and makes the project with its starter configuration
(:func:`veil.config.starter.starter_config`), or drops the upload. The name the browser gave the
file is never used: the table is always ``table.csv`` or ``table.parquet``.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from flask import Blueprint, Response, redirect, render_template, request, url_for

from veil.errors import ConfigError, ParameterError, VeilError
from veil.workbench.app import on_too_large, workspace
from veil.workbench.projects import LEDGER_FILE, NotFound, Project, write_atomic
from veil.workbench.security import project_name
from veil.workbench.upload import (
    DELIMITERS,
    PREVIEW_ROWS,
    Preview,
    UploadError,
    check_delimiter,
    decode,
    lenient_rows,
    read_upload,
)

bp = Blueprint("projects", __name__)

UPLOAD_PREFIX = ".upload-"
_UPLOAD_ID = re.compile(r"[0-9a-f]{16}")


@dataclass(frozen=True)
class Pending:
    """An uploaded table waiting for the steward to confirm it.

    Attributes:
        root: its folder, ``DATA/.upload-ID``.
        meta: its ``upload.json``: ``name`` (the project's name as given), ``format``,
            ``delimiter`` (sniffed; ``None`` for Parquet) and ``created``.
    """

    root: Path
    meta: dict

    @property
    def id(self) -> str:
        return self.root.name[len(UPLOAD_PREFIX):]

    @property
    def table_path(self) -> Path:
        return self.root / f"table.{self.meta['format']}"

    def content(self) -> bytes:
        """The uploaded table's bytes.

        Raises:
            NotFound: the upload was dropped or confirmed meanwhile.
        """
        try:
            return self.table_path.read_bytes()
        except OSError:
            raise NotFound("this upload was dropped or confirmed meanwhile; upload the table again.") from None


def _read_pending(root: Path) -> Pending | None:
    try:
        meta = json.loads((root / "upload.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None   # dropped meanwhile, or not one of ours
    return Pending(root, meta) if isinstance(meta, dict) and meta.get("format") in ("csv", "parquet") else None


def pending_uploads() -> list[Pending]:
    """The uploads of the data folder waiting for confirmation, oldest first."""
    found = [_read_pending(p) for p in workspace().root.glob(f"{UPLOAD_PREFIX}*")
             if _UPLOAD_ID.fullmatch(p.name[len(UPLOAD_PREFIX):])]
    return sorted((p for p in found if p is not None), key=lambda p: (str(p.meta.get("created", "")), p.id))


def pending(upload_id: str) -> Pending:
    """The upload ``upload_id``.

    Raises:
        NotFound: there is no such upload (confirmed, dropped, swept, or never made).
    """
    if not isinstance(upload_id, str) or not _UPLOAD_ID.fullmatch(upload_id):
        raise NotFound("no such upload; upload the table again.")
    found = _read_pending(workspace().root / f"{UPLOAD_PREFIX}{upload_id}")
    if found is None:
        raise NotFound("no such upload (it was confirmed or dropped, or the server restarted); upload the table "
                       "again.")
    return found


def free_name(name: str) -> str:
    """A valid project name that no project of the data folder has yet.

    Raises:
        ParameterError: the name is not valid, is taken, or is the ledger's file name.
    """
    if not name.strip():
        raise ParameterError("give the project a name (letters, digits, '.', '_' and '-').")
    name = project_name(name)
    if name.lower().startswith(LEDGER_FILE):
        raise ParameterError(f"names beginning with {LEDGER_FILE!r} are kept for the release ledger; choose "
                             "another name.")
    if (workspace().root / name).exists():
        raise ParameterError(f"a project called {name!r} exists; choose another name.")
    return name


def _hold(name: str, content: bytes, fmt: str, delimiter: str | None) -> Pending:
    """Write an accepted upload into the data folder, whole or not at all."""
    root = workspace().root
    staging = Path(tempfile.mkdtemp(dir=root, prefix=".new-"))
    try:
        write_atomic(staging / f"table.{fmt}", content)
        meta = {"name": name, "format": fmt, "delimiter": delimiter,
                "created": datetime.now(UTC).isoformat(timespec="seconds")}
        write_atomic(staging / "upload.json", json.dumps(meta, indent=2) + "\n")
        final = root / f"{UPLOAD_PREFIX}{secrets.token_hex(8)}"
        os.rename(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Pending(final, meta)


def _index(errors: dict, name: str = "", status: int = 200):
    html = render_template("projects/index.html.j2", projects=workspace().projects(), uploads=pending_uploads(),
                           errors=errors, name=name)
    return html, status


@bp.get("/")
def index():
    """The projects, the uploads waiting for confirmation, and the form that uploads a table."""
    return _index({})


@on_too_large("projects.upload")
def _upload_too_large(message: str) -> str:
    return _index({"table": message})[0]


@bp.post("/upload")
def upload():
    """Check the name and the table; hold the table and go to the confirm page, or say what to fix."""
    errors: dict[str, str] = {}
    name = request.form.get("name", "")
    try:
        name = free_name(name)
    except ParameterError as exc:
        errors["name"] = str(exc)
    file = request.files.get("table")
    content = file.read() if file is not None else b""
    fmt = delimiter = None
    if file is None or (not file.filename and not content):
        errors["table"] = "choose a table file to upload (CSV or Parquet)."
    else:
        try:
            fmt, delimiter, _ = read_upload(content, limit=0)
        except UploadError as exc:
            errors["table"] = str(exc)
    if errors:
        return _index(errors, name, 400)
    try:
        held = _hold(name, content, fmt, delimiter)
    except OSError as exc:
        from veil.output.os_errors import describe_os_error

        return _index({"table": f"the workbench could not store the upload ({describe_os_error(exc)}); free "
                                "space in its data folder and upload the table again."}, name, 500)
    return redirect(url_for("projects.confirm", upload_id=held.id), code=303)


@bp.route("/upload/<upload_id>", methods=["GET", "POST"])
def confirm(upload_id: str):
    """The first rows of an upload as the chosen delimiter splits them; ``action=create`` makes the project."""
    held = pending(upload_id)
    meta = held.meta
    source = request.form if request.method == "POST" else request.args
    name = source.get("name", meta["name"])
    errors: dict[str, str] = {}
    delimiter = meta["delimiter"]
    if meta["format"] == "csv" and "delimiter" in source:
        try:
            delimiter = check_delimiter(source.get("delimiter"))
        except UploadError as exc:
            errors["delimiter"] = str(exc)
    content = held.content()
    preview: Preview | None = None
    raw: list[list[str]] = []
    try:
        preview = read_upload(content, delimiter)[2]
    except UploadError as exc:
        errors.setdefault("delimiter" if meta["format"] == "csv" else "table", str(exc))
        if meta["format"] == "csv":
            raw = lenient_rows(decode(content), delimiter)
    if request.method == "POST" and request.form.get("action") == "create" and not errors:
        try:
            name = free_name(name)
        except ParameterError as exc:
            errors["name"] = str(exc)
        else:
            try:
                project = _create(held, name, delimiter, content)
            except ParameterError as exc:
                errors["name"] = str(exc)
            except ConfigError:   # the starter configuration found no quasi-identifier
                errors["table"] = ("no column of this table looks like a quasi-identifier (each looks identifying "
                                   "or sensitive), so there is nothing to generalize; upload a table with columns "
                                   "such as age, sex or a postal code.")
            except VeilError as exc:
                errors["table"] = _without_paths(str(exc), held)
            else:
                return redirect(url_for("projects.project", name=project.name), code=303)
    html = render_template("projects/confirm.html.j2", upload=held, meta=meta, name=name, delimiter=delimiter,
                           delimiters=DELIMITERS, preview=preview, raw=raw, errors=errors)
    return html, 400 if errors else 200


def _without_paths(message: str, held: Pending) -> str:
    """A message of veil's readers with the server's path of the upload replaced by what the steward knows."""
    for shown in (repr(str(held.table_path)), str(held.table_path), str(held.root)):
        message = message.replace(shown, "the uploaded table")
    return message


def _create(held: Pending, name: str, delimiter: str | None, content: bytes) -> Project:
    """Make the project and its starter configuration, whole or not at all; drop the upload."""
    from veil.config.starter import starter_config

    meta = held.meta
    config = starter_config(held.table_path, delimiter=delimiter, relative_to=held.root)
    config = config.replace("written by `veil init`.", "written by the veil workbench.", 1)
    config = config.replace("# sniffed from the file", "# confirmed on the workbench's upload page", 1)
    project = workspace().create(name, content, fmt=meta["format"], delimiter=delimiter)
    try:
        write_atomic(project.config_path, config)
    except BaseException:
        shutil.rmtree(project.root, ignore_errors=True)
        raise
    shutil.rmtree(held.root, ignore_errors=True)
    return project


@bp.post("/upload/<upload_id>/cancel")
def cancel(upload_id: str):
    """Drop a pending upload."""
    held = pending(upload_id)
    shutil.rmtree(held.root, ignore_errors=True)
    return redirect(url_for("projects.index"), code=303)


@bp.get("/p/<name>")
def project(name: str):
    """A project's table: its first records, a summary of each column, and its configuration to download."""
    found = workspace().project(name)
    error = None
    try:
        preview, columns = _summary(found)
    except VeilError as exc:
        preview, columns, error = None, [], str(exc)
    return render_template("projects/project.html.j2", project=found, preview=preview, columns=columns,
                           error=error, has_config=found.config_path.is_file(),
                           delimiter_label=DELIMITERS.get(found.meta.get("delimiter") or ""))


@dataclass(frozen=True)
class ColumnSummary:
    """What the table page says of one column."""

    name: str
    kind: str          # number, date or text, as veil's encoding reads the values
    distinct: int      # distinct values present (missing ones not counted)
    missing: int       # empty or missing cells


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _summary(project: Project) -> tuple[Preview, list[ColumnSummary]]:
    """The table's first rows and one summary per column (veil's reader and encoding, as ``veil
    anonymize`` reads the table)."""
    from veil.data.encoding import encode_column
    from veil.data.io import read_table

    table = read_table(project.table_path, project.meta.get("delimiter"))
    data = table.data
    summaries = []
    for column in data.column_names:
        encoded = encode_column(column, data.column(column))
        present = [i for i in range(encoded.cardinality) if i != encoded.missing_code]
        missing = 0 if encoded.missing_code is None else int((encoded.codes == encoded.missing_code).sum())
        labels = [str(encoded.labels[i]) for i in present]
        kind = "number" if encoded.is_numeric else (
            "date" if labels and all(_DATE.fullmatch(v) for v in labels) else "text")
        summaries.append(ColumnSummary(column, kind, len(present), missing))
    head = data.slice(0, PREVIEW_ROWS).to_pylist()
    rows = [["" if row[c] is None else str(row[c]) for c in data.column_names] for row in head]
    return Preview(list(data.column_names), rows, data.num_rows), summaries


@bp.get("/p/<name>/config.yaml")
def config(name: str):
    """The project's configuration, as a file to save (the one ``veil anonymize --config`` reads)."""
    found = workspace().project(name)
    if not found.config_path.is_file():
        raise NotFound("this project has no configuration yet.")
    text = found.config_path.read_text(encoding="utf-8")
    return Response(text, mimetype="text/yaml",
                    headers={"Content-Disposition": 'attachment; filename="config.yaml"'})
