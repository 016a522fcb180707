"""The Columns page: each column's role, its type, and the hierarchies of the quasi-identifiers
and sensitive columns (an ARX file loaded, or one built with veil's builders, previewed first).

Everything it saves goes into the project's ``config.yaml``, in veil's own schema (``columns:``
and ``hierarchies:``; a hierarchy loaded or built from groups is an ARX file under
``hierarchies/``). Before anything is written the new configuration is read back with
:func:`veil.config.load_config`; a configuration it refuses is not saved, and its sentence is shown.
"""
from __future__ import annotations

import contextlib
import os
import re
import secrets
from dataclasses import dataclass, field
from typing import Any

import yaml
from flask import Blueprint, redirect, render_template, request, url_for

from veil.config import load_config
from veil.config.starter import guess_hierarchy
from veil.data.dataset import read_weights
from veil.data.encoding import EncodedColumn, encode_column
from veil.data.hierarchy import Hierarchy
from veil.errors import ConfigError, VeilError
from veil.output.store import replace_file, replace_with
from veil.workbench import hierarchy_forms as forms
from veil.workbench.app import on_too_large, workspace
from veil.workbench.projects import NotFound, Project

bp = Blueprint("columns", __name__, url_prefix="/p/<name>/columns")

#: the roles a column may take on this page, as the form names them
ROLES = ("identifying", "quasi_identifier", "sensitive", "insensitive", "weight")
# the configuration's list of each role that is one (``weight`` names one column)
_LISTED = {"quasi_identifier": "quasi_identifiers", "sensitive": "sensitive", "identifying": "identifying"}
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
# a hierarchy file of at most this many values is shown as groups, to edit with the grouping builder
_EDITABLE = 2000


@dataclass
class ColumnView:
    """What the page shows of one column."""

    name: str
    kind: str                       # number, date or text
    distinct: int
    examples: list[str]
    role: str
    hierarchy: str = ""             # the configuration's entry, as YAML flow text
    hierarchy_error: str = ""       # why it cannot be shown
    levels: list[forms.Level] = field(default_factory=list)
    coverage: forms.Coverage | None = None
    preview: bool = False           # levels and coverage are those of the builder form's preview
    builder_form: dict[str, str] = field(default_factory=dict)
    order: str = ""                 # the order of a text column's values, one a line ("" for none)
    order_file: str = ""            # the file the configuration reads the order from
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def has_hierarchy_section(self) -> bool:
        return self.role in ("quasi_identifier", "sensitive")


class _Table:
    """The project's table and configuration, read once per request."""

    def __init__(self, project: Project):
        from veil.data.io import read_table

        self.project = project
        try:
            self.config = project.config()
        except yaml.YAMLError:
            raise ConfigError("config.yaml is not valid YAML; correct it in a text editor (veil anonymize --config "
                              "says where), or make the project again.") from None
        if not isinstance(self.config, dict):
            raise ConfigError("config.yaml does not hold a mapping of sections; correct it in a text editor, or make "
                              "the project again.")
        for key in ("columns", "hierarchies", "orders"):
            if self.config.get(key) is not None and not isinstance(self.config[key], dict):
                raise ConfigError(f"the {key} section of config.yaml is not a mapping; correct it in a text editor, "
                                  "or make the project again.")
        for key in ("hierarchies", "orders"):
            if self.config.get(key):
                # a column named 1990 is read by YAML as a number, by veil as the text
                self.config[key] = {_name(k): v for k, v in self.config[key].items()}
        missing = self.config.get("missing_values", [""])
        missing = missing if isinstance(missing, list) else [missing]
        self.missing = tuple("" if v is None else str(v) for v in missing)
        self.table = read_table(project.table_path, project.meta.get("delimiter"))
        self._encoded: dict[str, EncodedColumn] = {}

    @property
    def names(self) -> list[str]:
        return self.table.columns

    def values(self, column: str):
        return self.table.data.column(column)

    def encoded(self, column: str) -> EncodedColumn:
        if column not in self._encoded:
            self._encoded[column] = encode_column(column, self.values(column), missing_values=self.missing)
        return self._encoded[column]

    def roles(self) -> dict[str, str]:
        """Each column's role as the page names it (``insensitive`` when the configuration lists it nowhere)."""
        columns = self.config.get("columns") or {}
        found = {name: "insensitive" for name in self.names}
        for role, key in _LISTED.items():
            for name in _as_list(columns.get(key)):
                if name in found:
                    found[name] = role
        weight = columns.get("weight")
        if isinstance(weight, str) and weight in found:
            found[weight] = "weight"
        return found


def _name(value: Any) -> Any:
    """A column name as veil reads it: a number YAML made of it is its text again."""
    return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(_name(v)) for v in value] if isinstance(value, list) else [str(_name(value))]


def _kind(column: EncodedColumn) -> str:
    if column.is_numeric:
        return "number"
    labels = [str(v) for i, v in enumerate(column.labels) if i != column.missing_code]
    return "date" if labels and all(_DATE.fullmatch(v) for v in labels) else "text"


def _flow(value: Any) -> str:
    """A configuration value as one line of YAML."""
    text = yaml.safe_dump(value, default_flow_style=True, width=1 << 30, allow_unicode=True, sort_keys=False)
    return text.removesuffix("\n...\n").strip()


def _current(data: _Table, column: str, entry: Any) -> Hierarchy:
    """The hierarchy the configuration gives ``column``.

    Raises:
        FieldError: it cannot be read or built (the sentence says why).
    """
    kind, options = forms.read_entry(entry)
    if kind != "file":
        return forms.build(kind, options, data.values(column), data.missing)
    root = data.project.root.resolve()
    path = (root / options["file"]).resolve()
    if not path.is_relative_to(root):
        raise forms.FieldError("file", "the hierarchy file lies outside the project folder; load it here.")
    try:
        return Hierarchy.read_csv(path, options.get("delimiter"))
    except VeilError as exc:
        raise forms.FieldError("file", str(exc).replace(str(root) + os.sep, "")) from None


def _views(data: _Table, *, roles: dict[str, str] | None = None) -> list[ColumnView]:
    hierarchies = data.config.get("hierarchies") or {}
    orders = data.config.get("orders") or {}
    shown = roles or data.roles()
    views = []
    for name in data.names:
        encoded = data.encoded(name)
        labels = [str(v) for i, v in enumerate(encoded.labels) if i != encoded.missing_code]
        view = ColumnView(name, _kind(encoded), len(labels), labels[:3], shown.get(name, "insensitive"))
        if view.has_hierarchy_section and name in hierarchies:
            view.hierarchy = _flow(hierarchies[name])
            view.builder_form = forms.builder_form(hierarchies[name])
            try:
                current = _current(data, name, hierarchies[name])
                view.levels, view.coverage = forms.levels(current, encoded), forms.coverage(current, encoded)
                if not view.builder_form and len(current.leaves) <= _EDITABLE:
                    # a file: its groups, to edit with the grouping builder
                    view.builder_form = {"builder": "grouping",
                                         "groups": forms.format_groups(forms.groups_of(current))}
            except forms.FieldError as exc:
                view.hierarchy_error = str(exc)
        order = orders.get(name)
        if isinstance(order, dict):
            view.order_file = str(order.get("file", ""))
        elif order is not None:
            view.order = "\n".join(_as_list(order))
        views.append(view)
    return views


def _render(project: Project, data: _Table, views: list[ColumnView], *, status: int = 200,
            role_errors: dict[str, str] | None = None):
    return render_template("columns/page.html.j2", project=project, columns=views, roles=ROLES,
                           builders=forms.BUILDERS, role_errors=role_errors or {}), status


@bp.errorhandler(VeilError)
def _unreadable(error: VeilError):
    """A project whose table or configuration cannot be read: the sentence, on the error page."""
    return render_template("error.html.j2", message=str(error)), 404 if isinstance(error, NotFound) else 400


@bp.get("")
def page(name: str):
    """Every column with its type and role; each quasi-identifier's and sensitive column's hierarchy."""
    project = workspace().project(name)
    data = _Table(project)
    return _render(project, data, _views(data))


# ------------------------------------------------------------------------------- saving

def _document(project: Project, document: dict) -> dict:
    """The configuration as :meth:`Project.save_config` writes it (``data:`` and ``delimiter:`` set)."""
    document = {"data": project.meta["table"], **{k: v for k, v in document.items() if k != "data"}}
    if project.meta.get("format") == "csv":
        document["delimiter"] = project.meta["delimiter"]
    return document


def _checked(project: Project, document: dict, *, replace: dict[str, str] | None = None) -> None:
    """Read ``document`` with veil's configuration parser, from a temporary file in the project folder.

    ``replace`` maps a path the document names to the one the message should say (a hierarchy
    file that is not in place yet).

    Raises:
        ConfigError: the parser refuses it (its sentence, without the temporary file's name and line).
    """
    path = project.root / f".config-check-{secrets.token_hex(8)}.yaml"
    try:
        replace_file(path, yaml.safe_dump(_document(project, document), sort_keys=False, allow_unicode=True))
        load_config(path)
    except VeilError as exc:
        # the sentence without "FILE, line N: ", which would name the file not saved
        message = re.sub(r"^.*?, line \d+: ", "", str(exc).replace(str(path), path.name), count=1)
        for old, new in (replace or {}).items():
            message = message.replace(old, new)
        raise type(exc)(message) from None
    finally:
        path.unlink(missing_ok=True)


def new_roles(config: dict, roles: dict[str, str], guesses: dict[str, dict]) -> dict:
    """The configuration with ``columns:`` rewritten from ``roles`` (column → a role of :data:`ROLES`).

    Everything else is kept, but for what the new roles make invalid: a hierarchy or an order of a
    column that is neither a quasi-identifier nor sensitive any more is dropped, and a column given
    a role leaves ``strata``/``household``. A quasi-identifier without a hierarchy gets the one
    ``veil init`` would guess, from ``guesses`` (column → configuration entry).
    """
    document = dict(config)
    columns = dict(document.get("columns") or {})
    for role, key in _LISTED.items():
        columns[key] = [c for c, r in roles.items() if r == role]
    weights = [c for c, r in roles.items() if r == "weight"]
    if weights:
        columns["weight"] = weights[0]
    else:
        columns.pop("weight", None)
    given = {c for c, r in roles.items() if r != "insensitive"}
    if "strata" in columns:
        columns["strata"] = [c for c in _as_list(columns["strata"]) if c not in given]
    if columns.get("household") in given:
        columns.pop("household")
    document["columns"] = columns
    keep = set(columns["quasi_identifiers"]) | set(columns["sensitive"])
    hierarchies = {c: e for c, e in (document.get("hierarchies") or {}).items() if c in keep}
    for column in columns["quasi_identifiers"]:
        if column not in hierarchies and column in guesses:
            hierarchies[column] = guesses[column]
    document["hierarchies"] = hierarchies
    if document.get("orders"):
        document["orders"] = {c: e for c, e in document["orders"].items() if c in keep}
        if not document["orders"]:
            document.pop("orders")
    return document


@bp.post("/roles")
def roles(name: str):
    """Save the roles (``role-<column>`` fields) into ``columns:``; refused whole when a role is wrong."""
    project = workspace().project(name)
    data = _Table(project)
    current = data.roles()
    chosen: dict[str, str] = {}
    errors: dict[str, str] = {}
    for column in data.names:
        role = request.form.get(f"role-{column}", current[column])
        if role not in ROLES:
            errors[f"role-{column}"] = f"choose one of {', '.join(ROLES)}."
            role = current[column]
        chosen[column] = role
    weights = [c for c, r in chosen.items() if r == "weight"]
    for column in weights[1:]:
        errors[f"role-{column}"] = (f"only one column can be the sampling weight, and '{weights[0]}' is; give this "
                                    "column another role.")
    if weights and f"role-{weights[0]}" not in errors:
        try:
            read_weights(data.values(weights[0]), weights[0])
        except VeilError as exc:
            errors[f"role-{weights[0]}"] = str(exc)
    if not errors and "quasi_identifier" not in chosen.values():
        errors["_form"] = "mark at least one column as a quasi-identifier (a column that can be linked to outside data)."
    if not errors:
        guesses = {}
        hierarchies = data.config.get("hierarchies") or {}
        for column, role in chosen.items():
            if role == "quasi_identifier" and column not in hierarchies:
                text, _ = guess_hierarchy(column, data.values(column), data.missing)
                guesses[column] = yaml.safe_load(text)
        document = new_roles(data.config, chosen, guesses)
        try:
            _checked(project, document)
        except VeilError as exc:
            errors["_form"] = str(exc)
        else:
            project.save_config(document)
            return redirect(url_for("columns.page", name=project.name) + "#roles", code=303)
    return _render(project, data, _views(data, roles=chosen), status=400, role_errors=errors)


def _hierarchy_column(data: _Table) -> str | None:
    """The column the hierarchy forms name (``?column=``), if it can have a hierarchy."""
    column = request.args.get("column", "")
    if column in data.names and data.roles()[column] in ("quasi_identifier", "sensitive"):
        return column
    return None


def _refused(project: Project, data: _Table, column: str | None, errors: dict[str, str], *, status: int = 400,
             form: dict[str, str] | None = None, preview: Hierarchy | None = None, order: str | None = None):
    views = _views(data)
    if column is None:
        return _render(project, data, views, status=status,
                       role_errors={"_form": "give the column a role of quasi-identifier or sensitive first, then "
                                             "its hierarchy."})
    for view in views:
        if view.name == column:
            view.errors = errors
            if form is not None:
                view.builder_form = form
            if order is not None:
                view.order = order
            if preview is not None:
                encoded = data.encoded(column)
                view.levels, view.coverage = forms.levels(preview, encoded), forms.coverage(preview, encoded)
                view.preview = True
    return _render(project, data, views, status=status)


def _save_file(project: Project, data: _Table, column: str, hierarchy: Hierarchy) -> None:
    """Write ``hierarchy`` as ``hierarchies/<column>.csv`` (ARX's format) and reference it, whole or
    not at all.

    Raises:
        ConfigError: the configuration that references it does not load.
    """
    file = forms.file_name(column)
    final = project.hierarchies_dir / file
    made = not project.hierarchies_dir.exists()
    project.hierarchies_dir.mkdir(exist_ok=True)
    staged = project.hierarchies_dir / f".{file}.{secrets.token_hex(6)}.tmp"
    document = dict(data.config)
    document["hierarchies"] = {**(document.get("hierarchies") or {}),
                               column: {"file": f"hierarchies/{staged.name}"}}
    try:
        replace_file(staged, hierarchy.csv_text(delimiter=";", newline="\n", final_newline=True))
        _checked(project, document, replace={staged.name: file})
        replace_with(staged, final)
    except BaseException:
        staged.unlink(missing_ok=True)
        if made:
            with contextlib.suppress(OSError):
                project.hierarchies_dir.rmdir()
        raise
    document["hierarchies"][column] = {"file": f"hierarchies/{file}"}
    project.save_config(document)


def _column_target(name: str) -> tuple[Project, "_Table", str | None]:
    """The project, its table and the column (``?column=``) a hierarchy or order form is for."""
    project = workspace().project(name)
    data = _Table(project)
    return project, data, _hierarchy_column(data)


@on_too_large("columns.upload")
def _upload_too_large(message: str):
    project = workspace().project(request.view_args["name"])
    data = _Table(project)
    return _refused(project, data, _hierarchy_column(data), {"file": message}, status=413)[0]


@bp.post("/upload")
def upload(name: str):
    """Load an ARX hierarchy file for ``?column=``; refused when it cannot be read or leaves a value out."""
    project, data, column = _column_target(name)
    if column is None:
        return _refused(project, data, None, {})
    sent = request.files.get("file")
    try:
        hierarchy = forms.read_upload(sent.read() if sent is not None else b"")
        forms.check_covers(hierarchy, data.encoded(column))
        _save_file(project, data, column, hierarchy)
    except forms.FieldError as exc:
        preview = hierarchy if exc.field == "coverage" else None
        return _refused(project, data, column, {exc.field: str(exc)}, preview=preview)
    except VeilError as exc:
        return _refused(project, data, column, {"file": str(exc)})
    return redirect(url_for("columns.page", name=project.name) + f"#hierarchy-{column}", code=303)


@bp.post("/builder")
def builder(name: str):
    """Preview (``action=preview``) or save (``action=save``) a built hierarchy for ``?column=``."""
    project, data, column = _column_target(name)
    if column is None:
        return _refused(project, data, None, {})
    form = {key: request.form.get(key, "") for key in ("builder", "widths", "start", "char", "units", "format",
                                                      "groups")}
    action = request.form.get("action", "preview")
    hierarchy = None
    try:
        kind, options = forms.builder_entry(form)
        hierarchy = forms.build(kind, options, data.values(column), data.missing)
        if action != "save":
            return _refused(project, data, column, {}, status=200, form=form, preview=hierarchy)
        forms.check_covers(hierarchy, data.encoded(column))
        if kind == "grouping":
            _save_file(project, data, column, hierarchy)
        else:
            document = dict(data.config)
            document["hierarchies"] = {**(document.get("hierarchies") or {}), column: {kind: options}}
            _checked(project, document)
            project.save_config(document)
    except forms.FieldError as exc:
        return _refused(project, data, column, {exc.field: str(exc)}, form=form, preview=hierarchy)
    except VeilError as exc:
        return _refused(project, data, column, {"builder": str(exc)}, form=form, preview=hierarchy)
    return redirect(url_for("columns.page", name=project.name) + f"#hierarchy-{column}", code=303)


@bp.post("/order")
def order(name: str):
    """Save (or, given nothing, remove) the order of ``?column=``'s values under ``orders:``."""
    project, data, column = _column_target(name)
    if column is None:
        return _refused(project, data, None, {})
    text = request.form.get("order", "")
    try:
        values = forms.parse_order(text, data.encoded(column))
        document = dict(data.config)
        orders = {c: e for c, e in (document.get("orders") or {}).items() if c != column}
        if values:
            orders[column] = values
        document["orders"] = orders
        if not orders:
            document.pop("orders")
        _checked(project, document)
    except forms.FieldError as exc:
        return _refused(project, data, column, {exc.field: str(exc)}, order=text)
    except VeilError as exc:
        return _refused(project, data, column, {"order": str(exc)}, order=text)
    project.save_config(document)
    return redirect(url_for("columns.page", name=project.name) + f"#hierarchy-{column}", code=303)
