"""The DP page: differentially private answers from a project's table, charged to its population's
budget in the workbench's ledger, with their error bars and the budget left.

The page is ``veil dp`` in a form, and runs the same code:

* **The budget** is the population named after the project in ``DATA/ledger.db``. The budget form
  makes the ledger (``Ledger.init``, as ``veil ledger init``) and the population with its
  (ε, δ) budget (``Ledger.add_population``, as ``veil ledger init --policy`` does); a population's
  budget never changes once set.
* **A query without a group-by column** is ``veil dp count|sum|mean|quantile|histogram DATA
  --ledger DATA/ledger.db --population NAME``: :func:`veil.dp.queries.dp_count` and its siblings,
  charged through :meth:`veil.ledger.Ledger.budget_session` (the charge is committed before the
  noise is drawn, from the secure source), written as ``answer.json`` and its sealed
  ``manifest.json`` (:func:`veil.ledger.answers.write_answer`), which ``veil publish`` takes.
* **A query with a group-by column** is ``veil dp query --spec``: a query specification
  (:mod:`veil.config.dp_query_spec`) whose keys are the public values the user typed, built by
  :func:`veil.config.dp_query_builder.build_query` and written as ``answers.csv`` and its
  manifest (:func:`veil.ledger.grouped_answers.write_grouped_release`).

Each answer is kept in ``dp/ID/`` of the project folder (both files appear or neither does), and
the page lists them with the (1 − α) intervals veil computed from the mechanism's scale.

**Refusals.** Everything the form says is checked before the ledger is opened: the kind, the
columns (against the table's header), the bounds (typed by the user, public, never read from the
data), ε and δ (positive, finite, ε no more than the budget left); a refused form is shown again
with the sentence next to its field, status 400, and nothing is charged or written. What a refusal
says depends on the table's header and the budget, never on the table's values, beyond the
sentences ``veil dp`` itself prints for the same query.
"""
from __future__ import annotations

import json
import math
import secrets
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
from flask import Blueprint, redirect, render_template, request, url_for

from veil.dp.budget import Budget, BudgetExceededError
from veil.dp.exact import exact, show
from veil.errors import ColumnError, VeilError
from veil.workbench.app import workspace
from veil.workbench.projects import Project, checked_id

bp = Blueprint("dp", __name__, url_prefix="/p/<name>/dp")

KINDS = {"count": "count (records)", "sum": "sum", "mean": "mean", "median": "median",
         "quantile": "quantile", "histogram": "histogram (counts per public category)"}
_BOUNDED = ("sum", "mean", "median", "quantile")
ANSWERS_DIR = "dp"
_MAX_KEYS = 1000


# ------------------------------------------------------------------------------ the budget

def _ledger(create: bool = False):
    """The workbench's ledger, or ``None`` when there is none yet (``create``: make it)."""
    from veil.ledger import Ledger

    path = workspace().ledger_path
    if create:
        return Ledger.init(str(path))[0]
    return Ledger(str(path)) if path.is_file() else None


def budget_state(project: Project) -> dict:
    """The project's budget as the page shows it: ``{"state": "none"|"no-budget"|"unusable"|"kept", …}``.

    ``kept`` carries ``total``, ``spent`` and ``left`` (ε, δ as veil shows exact numbers), the
    composition, and for a budget kept in ρ (zCDP) the ρ figures; ``left_epsilon`` and
    ``left_delta`` are the exact fractions the form checks ε and δ against.
    """
    try:
        ledger = _ledger()
        if ledger is None:
            return {"state": "none"}
        try:
            found = [p for p in ledger.populations() if p.name == project.name]
            if not found:
                return {"state": "none"}
            if found[0].budget is None:
                return {"state": "no-budget"}
            acc = ledger.budget(project.name)
        finally:
            ledger.close()
    except VeilError as error:   # a ledger that fails verification, or is locked too long: say so, charge nothing
        return {"state": "unusable", "message": str(error)}
    spent, (left_eps, left_delta) = acc.spent(), acc.remaining()
    out = {"state": "kept", "measure": acc.measure, "composition": acc.composition,
           "total": {"epsilon": show(acc.budget.epsilon), "delta": show(acc.budget.delta)},
           "spent": {"epsilon": show(spent.epsilon), "delta": show(spent.delta)},
           "left": {"epsilon": show(left_eps), "delta": show(left_delta)},
           "left_epsilon": left_eps, "left_delta": left_delta, "charges": len(acc.charges)}
    if acc.measure == "zcdp":
        out["rho"] = {"total": show(acc.budget.rho), "spent": show(acc.spent_rho), "left": show(acc.remaining_rho)}
    return out


def _positive(form, field: str, errors: dict, what: str) -> float | None:
    text = (form.get(field) or "").strip()
    if not text:
        errors[field] = f"give {what}, a positive number."
        return None
    try:
        value = float(text)
    except ValueError:
        errors[field] = f"{what} must be a number, not {text[:20]!r}."
        return None
    if not math.isfinite(value) or value <= 0:
        errors[field] = f"{what} must be a positive finite number, got {text[:20]}."
        return None
    return value


def _delta(form, errors: dict, what: str = "δ") -> float:
    text = (form.get("delta") or "").strip() or "0"
    try:
        value = float(text)
    except ValueError:
        errors["delta"] = f"{what} must be a number in [0, 1), not {text[:20]!r}."
        return 0.0
    if not math.isfinite(value) or not 0.0 <= value < 1.0:
        errors["delta"] = f"{what} must lie in [0, 1), got {text[:20]}."
        return 0.0
    return value


# ------------------------------------------------------------------------------ the table

def _table_path(project: Project) -> Path:
    return project.table_path


def _delimiter(project: Project) -> str | None:
    return project.meta.get("delimiter")


def _columns_of(project: Project):
    """The table read as ``veil dp`` reads it (:class:`veil.dp.queries._Columns`)."""
    from veil.dp.queries import _Columns

    return _Columns(_table_path(project), _delimiter(project))


def _header(project: Project) -> list[str]:
    """The table's column names (its header; a Parquet file's schema), without reading its values."""
    path = _table_path(project)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    from veil.data.io import read_csv_header

    return read_csv_header(path, _delimiter(project))


# ------------------------------------------------------------------------------ the form

def _keys(text: str) -> list[str]:
    """Public values typed one per line or comma-separated."""
    parts = [p.strip() for line in text.splitlines() for p in line.split(",")]
    return [p for p in parts if p]


def parse_query_form(form, columns: list[str], budget: dict) -> tuple[dict, dict]:
    """The query a submitted ``#dp-form`` asks for, and the errors by field (empty when none).

    Nothing here reads the table's values: the columns are checked against its header, the
    bounds and keys are what the user typed, ε against the budget left.
    """
    errors: dict = {}
    kind = form.get("kind", "")
    if kind not in KINDS:
        errors["kind"] = f"choose a query: {', '.join(KINDS)}."
    column = form.get("column") or ""      # a column's name as the select gives it (never stripped)
    group_by = form.get("group_by") or ""
    if column and column not in columns:
        errors["column"] = "choose a column of the table."
    elif not column and kind in (*_BOUNDED, "histogram"):
        errors["column"] = f"a {kind} reads one column; choose it."
    if group_by and group_by not in columns:
        errors["group_by"] = "choose a column of the table to group by, or none."
    elif group_by and kind == "histogram":
        errors["group_by"] = "a histogram counts per category of its own column; leave the group-by column empty."
    elif group_by and kind == "count" and column:
        errors["column"] = "a grouped count counts the records of each key; leave the column empty."
    elif group_by and group_by == column:
        errors["group_by"] = "group by another column than the one aggregated."
    keys = _keys(form.get("keys") or "")
    if (group_by or kind == "histogram") and not keys and "keys" not in errors:
        which = "of the group-by column" if group_by else "of the column"
        errors["keys"] = (f"list the public values {which} (one a line or comma-separated), from public "
                          "knowledge, never from the data.")
    elif len(keys) > _MAX_KEYS:
        errors["keys"] = f"list at most {_MAX_KEYS} values."
    elif len(set(keys)) != len(keys):
        errors["keys"] = "list each value once."
    query = {"kind": kind, "column": column or None, "group_by": group_by or None, "keys": keys}
    if kind in _BOUNDED:
        bounds = []
        for field, what in (("low", "the lower bound"), ("high", "the upper bound")):
            text = (form.get(field) or "").strip()
            try:
                value = float(text)
            except ValueError:
                errors[field] = (f"give {what}, from public knowledge (never from the data)." if not text else
                                 f"{what} must be a number, not {text[:20]!r}.")
                continue
            if not math.isfinite(value):
                errors[field] = f"{what} must be a finite number."
                continue
            bounds.append(value)
        if len(bounds) == 2 and not bounds[0] < bounds[1]:
            errors["high"] = "the upper bound must be above the lower bound."
        query["bounds"] = tuple(bounds)
    if kind == "quantile":
        text = (form.get("q") or "").strip()
        try:
            q = float(text)
        except ValueError:
            q = math.nan
        if not 0.0 < q < 1.0:
            errors["q"] = "the quantile q must be a number strictly between 0 and 1 (0.5: the median)."
        query["q"] = q
    elif kind == "median":
        query["q"] = 0.5
    epsilon = _positive(form, "epsilon", errors, "ε")
    delta = _delta(form, errors)
    if delta and (kind in ("median", "quantile") or group_by):
        errors["delta"] = ("quantiles are pure ε-DP" if kind in ("median", "quantile") else
                           "a grouped query is priced in ε alone") + "; leave δ at 0."
    if budget.get("state") == "unusable":
        errors["_form"] = budget["message"]
    elif budget.get("state") != "kept":
        errors["_form"] = "set this project's budget first."
    elif budget.get("measure") == "zcdp":
        errors["_form"] = ("this project's budget is kept in ρ (zCDP); the page asks queries priced in ε, so ask "
                           "them with veil dp --rho from a terminal.")
    elif epsilon is not None and exact(epsilon, "epsilon") > budget["left_epsilon"]:
        errors["epsilon"] = (f"ε = {show(epsilon)} is more than the budget left (ε = {budget['left']['epsilon']}); "
                             "spend at most what is left.")
    elif exact(delta, "delta") > budget["left_delta"]:
        errors["delta"] = f"δ = {show(delta)} is more than the δ left ({budget['left']['delta']})."
    query.update(epsilon=epsilon, delta=delta)
    return query, errors


# ------------------------------------------------------------------------------ answering

def _new_answer_dir(project: Project) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-%f")
    return project.root / ANSWERS_DIR / checked_id(f"{stamp}-{secrets.token_hex(4)}")


def _spec_document(query: dict) -> dict:
    """The query specification (``veil dp query --spec``) of a grouped query from the form."""
    kind, column = query["kind"], query["column"]
    if kind == "count":
        aggregate = {"aggregate": "count"}
    else:
        lo, hi = query["bounds"]
        aggregate = {"column": column, "low": lo, "high": hi}
        aggregate = ({"aggregate": kind, **aggregate} if kind in ("sum", "mean") else
                     {"aggregate": "quantiles", **aggregate, "quantiles": [query["q"]]})
    return {"group_by": {"columns": [query["group_by"]], "keys": list(query["keys"])},
            "aggregates": [aggregate], "epsilon": query["epsilon"]}


def answer_query(project: Project, query: dict, *, noise=None) -> Path:
    """Answer ``query`` (:func:`parse_query_form`'s), charged to the project's population, and write
    it to a new ``dp/ID/`` folder, which is returned.

    ``noise``: the noise source (default: the secure one; a seeded source only in tests, which
    veil then labels not fit for release).

    Raises:
        BudgetExceededError: the charge no longer fits (nothing was charged or written).
        VeilError: what veil refuses of the query (nothing was charged or written).
    """
    from veil.dp.fingerprint import dataset_id
    from veil.dp.noise import NoiseSource
    from veil.ledger.binding import TableRef

    columns = _columns_of(project)
    table = TableRef(dataset_id(columns.table), columns.table, _table_path(project).name)
    noise = NoiseSource.secure() if noise is None else noise
    out = _new_answer_dir(project)
    if query["group_by"]:
        _grouped(project, query, columns, table, noise, out)
    else:
        _single(project, query, columns, table, noise, out)
    return out


def _charging(project: Project, table):
    """The ledger's budget session of the project's population (the charge committed before noise)."""
    ledger = _ledger()
    if ledger is None:
        raise VeilError("set this project's budget first.")
    return ledger, ledger.budget_session(project.name, table=table)


def _single(project: Project, query: dict, columns, table, noise, out: Path) -> None:
    from veil.dp import queries
    from veil.ledger.answers import write_answer

    kind, column, eps, delta = query["kind"], query["column"], query["epsilon"], query["delta"]
    ledger, session = _charging(project, table)
    try:
        with session as s:
            acc = s.accountant
            if kind == "count":
                result = queries.dp_count(columns, eps, delta, column=column, accountant=acc, noise=noise)
            elif kind in ("sum", "mean"):
                answer = queries.dp_sum if kind == "sum" else queries.dp_mean
                result = answer(columns, column, query["bounds"], eps, delta, accountant=acc, noise=noise)
            elif kind in ("median", "quantile"):
                result = queries.dp_quantile(columns, column, query["q"], query["bounds"], eps, accountant=acc,
                                             noise=noise)
            else:
                result = queries.dp_histogram(columns, [column], eps, delta, categories={column: query["keys"]},
                                              accountant=acc, noise=noise)
        charge = {"ledger_id": ledger.ledger_id, "population": s.population, "seq": s.made[-1]} if s.made else None
    finally:
        ledger.close()
    if kind == "histogram":   # as veil dp histogram does unless --raw: free post-processing
        result = queries.postprocess(result, nonnegative=True, integral=True, consistent=True)
    write_answer(result, out / "answer.json", out / "manifest.json", fingerprint=table.fingerprint, charge=charge,
                 make_folders=True, reads=[_table_path(project)])


def _grouped(project: Project, query: dict, columns, table, noise, out: Path) -> None:
    from veil.cli.dp_query import _keys_given, _typed_frame
    from veil.config.dp_query_builder import build_query, evaluate_arguments
    from veil.config.dp_query_spec import parse_query_spec
    from veil.ledger.grouped_answers import ANSWER_FILES, MANIFEST_FILE, write_grouped_release
    from veil.output.writer import OutputSet

    spec = parse_query_spec(_spec_document(query), folder=project.root, name="the query")
    price = evaluate_arguments(spec)
    grouped = build_query(spec, _typed_frame(columns, spec))
    reads = [_table_path(project)]
    outputs = OutputSet([out / ANSWER_FILES["csv"], out / MANIFEST_FILE], reads=reads, make_folders=True)
    ledger, session = _charging(project, table)
    try:
        with outputs:
            with session as s:
                answer = grouped.evaluate(**price, accountant=s.accountant, rng=noise)
            charge = {"ledger_id": ledger.ledger_id, "population": s.population, "seq": s.made[-1]}
            write_grouped_release(answer, out, label=s.accountant.charges[-1].label,
                                  keys_given=_keys_given(spec), output_format="csv", outputs=outputs,
                                  fingerprint=table.fingerprint, charge=charge, reads=reads)
    finally:
        ledger.close()


# ------------------------------------------------------------------------------ the answers shown

def _number(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int) or (isinstance(x, float) and x.is_integer() and abs(x) < 1e15):
        return f"{int(x):,}"
    return f"{float(x):.6g}"


def _cost(doc: dict) -> str:
    if doc.get("rho") is not None:
        return f"ρ = {doc['rho']}"
    delta = doc.get("delta")
    return f"ε = {doc.get('epsilon')}" + (f", δ = {delta}" if delta not in (None, 0, 0.0, "0") else "")


def _single_shown(folder: Path) -> dict:
    doc = json.loads((folder / "answer.json").read_text(encoding="utf-8"))
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    shown = {"id": folder.name, "query": doc["query"], "cost": _cost(manifest), "mechanism": doc["mechanism"],
             "confidence": f"{doc['confidence']:.0%}", "fit": doc["fit_for_release"], "notes": doc["notes"],
             "postprocessing": doc["postprocessing"], "created": manifest.get("created"),
             "charge": (manifest.get("charge") or {}).get("seq"), "rows": None}
    value, low, high = doc["value"], doc["low"], doc["high"]
    if isinstance(value, list) and doc.get("categories"):
        shown["header"] = [doc["columns"][0], "noisy count", f"{shown['confidence']} interval"]
        shown["rows"] = [[c, _number(v), f"[{_number(lo)}, {_number(hi)}]" if lo is not None else "—"]
                         for c, v, lo, hi in zip(doc["categories"][0], value, low or [None] * len(value),
                                                 high or [None] * len(value))]
    else:
        shown["value"] = _number(value)
        shown["interval"] = None if low is None else f"[{_number(low)}, {_number(high)}]"
    return shown


def _grouped_shown(folder: Path) -> dict:
    frame = pd.read_csv(folder / "answers.csv", dtype=str, keep_default_na=False)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    confidence = f"{1 - float(manifest.get('alpha', 0.05)):.0%}"
    keys = list(manifest["group_by"]["columns"]) if isinstance(manifest.get("group_by"), dict) else [frame.columns[0]]
    values = [c for c in frame.columns if c not in keys and not c.endswith(("_low", "_high"))]
    header, rows = list(keys), []
    for name in values:
        header += [name, f"{confidence} interval"]
    for _, row in frame.iterrows():
        cells = [row[k] for k in keys]
        for name in values:
            low, high = row.get(f"{name}_low"), row.get(f"{name}_high")
            cells += [_shown_text(row[name]), f"[{_shown_text(low)}, {_shown_text(high)}]" if low else "—"]
        rows.append(cells)
    return {"id": folder.name, "query": manifest.get("query") or "grouped query", "cost": _cost(manifest),
            "mechanism": manifest.get("mechanism"), "confidence": confidence,
            "fit": bool(manifest.get("fit_for_release")), "notes": list(manifest.get("notes") or []),
            "postprocessing": [], "created": manifest.get("created"),
            "charge": (manifest.get("charge") or {}).get("seq"), "header": header, "rows": rows}


def _shown_text(text) -> str:
    try:
        return _number(float(text))
    except (TypeError, ValueError):
        return "—" if not text else str(text)


def answers(project: Project) -> list[dict]:
    """The answers given on this page, newest first (a folder without its two files is left out)."""
    root = project.root / ANSWERS_DIR
    if not root.is_dir():
        return []
    shown = []
    for folder in sorted((p for p in root.iterdir() if p.is_dir()), key=lambda p: p.name, reverse=True):
        try:
            if (folder / "answer.json").is_file() and (folder / "manifest.json").is_file():
                shown.append(_single_shown(folder))
            elif (folder / "answers.csv").is_file() and (folder / "manifest.json").is_file():
                shown.append(_grouped_shown(folder))
        except (OSError, ValueError, KeyError, TypeError):
            continue   # not one of this page's answers
    return shown


# ------------------------------------------------------------------------------ the views

def _render(project: Project, *, errors: dict | None = None, budget_errors: dict | None = None,
            form: dict | None = None, status: int = 200, budget: dict | None = None):
    budget = budget_state(project) if budget is None else budget
    return render_template("dp/page.html.j2", project=project, budget=budget, kinds=KINDS,
                           columns=_header(project), answers=answers(project), errors=errors or {},
                           budget_errors=budget_errors or {}, form=form or {}), status


@bp.get("")
def page(name: str):
    project = workspace().project(name)
    return _render(project)


@bp.post("/budget")
def set_budget(name: str):
    """Make the project's population with the budget the form gives (``#budget-form``)."""
    project = workspace().project(name)
    errors: dict = {}
    epsilon = _positive(request.form, "epsilon", errors, "the budget's ε")
    delta = _delta(request.form, errors, "the budget's δ")
    form = {"budget_epsilon": request.form.get("epsilon", ""), "budget_delta": request.form.get("delta", "")}
    if errors:
        return _render(project, budget_errors=errors, form=form, status=400)
    state = budget_state(project)
    if state["state"] == "unusable":
        return _render(project, budget_errors={"_form": state["message"]}, form=form, status=400)
    if state["state"] != "none":
        return _render(project, budget_errors={"_form": "this project's population exists; its budget never "
                                                        "changes once set."}, form=form, status=400)
    try:
        ledger = _ledger(create=True)
        try:
            ledger.add_population(project.name, budget=Budget(epsilon, delta))
        finally:
            ledger.close()
    except VeilError as error:
        return _render(project, budget_errors={"_form": str(error)}, form=form, status=400)
    return redirect(url_for("dp.page", name=name), code=303)


_FIELD_OF = {ColumnError: "column"}


@bp.post("/query")
def ask(name: str):
    """Answer the query of ``#dp-form``, or show it again with what to fix (nothing charged)."""
    project = workspace().project(name)
    form = {k: request.form.get(k, "") for k in ("kind", "column", "group_by", "keys", "low", "high", "q",
                                                  "epsilon", "delta")}
    budget = budget_state(project)
    query, errors = parse_query_form(request.form, _header(project), budget)
    if errors:   # nothing was charged: the budget read above is the one to show
        return _render(project, errors=errors, form=form, status=400, budget=budget)
    try:
        answer_query(project, query)
    except BudgetExceededError as error:
        return _render(project, errors={"epsilon": str(error)}, form=form, status=400)
    except VeilError as error:
        field = next((f for kind, f in _FIELD_OF.items() if isinstance(error, kind)), "_form")
        return _render(project, errors={field: str(error)}, form=form, status=400)
    return redirect(url_for("dp.page", name=name) + "#answers", code=303)
