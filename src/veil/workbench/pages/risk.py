"""The Risk page (``risk.page``, ``/p/<name>/risk``): what ``veil check`` reports for the
project's input table, in the browser.

It reads the project's configuration and table, measures them with :func:`veil.check.check` (the
function behind ``veil check``), and shows:

* ``#models-check``: every model of the configuration, what it requires, the level the input
  table reaches and whether it passes (each model's own ``evaluate`` on the check's classes, as a
  release's manifest records them);
* ``#all-levels``: every model's level as ``veil check`` prints it, to choose thresholds by;
* ``#reidentification``: the prosecutor, journalist (against the population a presence model
  names) and marketer risk (:mod:`veil.risk.reidentification`), the Benedetti–Franconi individual and global risk with a
  weight, strata or household column (:mod:`veil.risk.individual`), and the estimated population
  uniqueness when a population size is given (:mod:`veil.risk.uniqueness`);
* ``img#class-sizes`` and ``img#record-risks``: the distributions of class sizes and of record
  risks (:mod:`veil.workbench.figures`).

The measurement takes a fraction of a second on the 30,162 records of Adult, so it runs when the
page is asked for, not in a worker. The small form (population size, estimator, risk threshold)
changes nothing stored, so it is sent with GET; a value out of range is refused with status 400
and the sentence next to its field.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field

from flask import Blueprint, current_app, render_template, request, url_for

from veil.errors import VeilError
from veil.workbench.app import workspace
from veil.workbench.figures import class_sizes, individual_risks, prosecutor_risks

bp = Blueprint("risk", __name__)

DEFAULT_THRESHOLD = 0.2   # veil check's --risk-threshold
# A population larger than this is a slip of the keyboard (about the world's people).
MAX_POPULATION = 10 ** 10
# How each model's level is named in "required" and "measured" (by the model's key).
SYMBOLS = {"k": "k", "alpha": "α", "l_distinct": "ℓ", "l_entropy": "ℓ", "c_l_recursive": "ℓ", "t_equal": "t",
           "t_ordered": "t", "t_hierarchical": "t", "delta": "δ", "beta_basic": "β", "beta_enhanced": "β",
           "delta_presence": "δ", "k_map": "k", "join": "k", "average_risk": "expected re-identification rate",
           "records_at_risk": "share of records at risk", "population_uniqueness": "share of population uniques"}
_WHOLE = re.compile(r"[0-9]+")


@dataclass
class RiskForm:
    """The page's form: the values as typed (shown back) and as read."""

    shown: dict = field(default_factory=dict)
    population_size: int | None = None
    estimator: str = "dankar"
    risk_threshold: float = DEFAULT_THRESHOLD


def read_form(args, rows: int, defaults: dict) -> tuple[RiskForm, dict[str, str]]:
    """The form's values, and per field the one sentence saying what to fix.

    Args:
        args: the request's query (``population_size``, ``estimator``, ``risk_threshold``).
        rows: the records of the table (the population holds at least as many).
        defaults: the values a blank field takes (from the configuration's models).

    A blank population size leaves population uniqueness out (unless the configuration names one).
    """
    from veil.risk.uniqueness import ESTIMATORS

    errors: dict[str, str] = {}
    shown = {key: (args.get(key) or "").strip() for key in ("population_size", "estimator", "risk_threshold")}
    form = RiskForm(shown)
    size = shown["population_size"].replace(",", "").replace("_", "").replace(" ", "")
    if size:
        if not _WHOLE.fullmatch(size):
            errors["population_size"] = (f"the population size must be a whole number of people, at least the "
                                         f"table's {rows:,} records.")
        elif len(size.lstrip("0")) > len(str(MAX_POPULATION)) or not rows <= int(size) <= MAX_POPULATION:
            errors["population_size"] = (f"the population size must be at least the table's {rows:,} records and at "
                                         f"most {MAX_POPULATION:,}.")
        else:
            form.population_size = int(size)
    elif defaults.get("population_size") is not None:
        form.population_size = int(defaults["population_size"])
        shown["population_size"] = str(form.population_size)
    form.estimator = shown["estimator"] or defaults.get("estimator") or "dankar"
    shown["estimator"] = form.estimator
    if form.estimator not in ESTIMATORS:
        errors["estimator"] = f"choose an estimator among {', '.join(sorted(ESTIMATORS))}."
    threshold = shown["risk_threshold"]
    if threshold:
        try:
            value = float(threshold)
        except ValueError:
            value = math.nan
        if not 0 < value <= 1:
            errors["risk_threshold"] = "the risk threshold is a probability: a number above 0 and at most 1."
        else:
            form.risk_threshold = value
    else:
        form.risk_threshold = float(defaults.get("risk_threshold", DEFAULT_THRESHOLD))
        shown["risk_threshold"] = f"{form.risk_threshold:g}"
    return form, errors


def config_defaults(cfg) -> dict:
    """The form's values the configuration implies: a population uniqueness model's population
    size and estimator, a records-at-risk model's risk, a k-anonymity model's k."""
    out: dict = {}
    for spec in cfg.model_specs:
        options = spec.options
        if spec.name == "population_uniqueness" and "population_size" not in out:
            out["population_size"] = options.get("population_size")
            out["estimator"] = options.get("estimator") or "dankar"
        elif spec.name == "records_at_risk" and "risk_threshold" not in out and 0 < options.get("risk", 0) <= 1:
            out["risk_threshold"] = options["risk"]
        elif spec.name == "k_anonymity" and "k" not in out:
            out["k"] = options.get("k")
    return out


def requirement(model) -> str:
    """What a model requires, in words: ``k ≥ 5``, ``t ≤ 0.2``, ``δ < 1.5``…"""
    from veil.cli.check import fmt

    symbol = SYMBOLS.get(model.key, model.key)
    if model.threshold is None:
        return "measured only"
    relation = "≥" if model.higher_is_better else ("<" if model.strict else "≤")
    text = f"{symbol} {relation} {fmt(model.key, model.threshold)}"
    if model.key == "alpha" and getattr(model, "k", None):
        text += f", k ≥ {model.k}"
    elif model.key == "c_l_recursive":
        text += f" (c = {model.c:g})"
    elif model.key == "delta_presence" and getattr(model, "delta_min", 0):
        text += f", δ ≥ {model.delta_min:g}"
    elif model.key == "join" and getattr(model, "l", None):
        text += f", ℓ ≥ {model.l}"
    elif model.key == "records_at_risk":
        text += f" (risk above {model.risk:g})"
    elif model.key == "population_uniqueness":
        text += f" (population of {model.population_size:,}, {model.estimator})"
    if getattr(model, "household", False):
        text += ", household risk"
    return text


def model_rows(cfg, classes) -> list[dict]:
    """One row per model of the configuration, in its order: ``model`` (name), ``sensitive``,
    ``required``, ``measured``, ``passed`` (True, False, or None when it does not apply),
    ``failing`` (classes), ``failing_records`` and ``why`` (the sentence when it does not apply)."""
    from veil.cli.check import fmt

    rows = []
    for spec in cfg.model_specs:
        row = {"model": spec.name, "sensitive": spec.options.get("sensitive") or "", "required": "",
               "measured": "", "passed": None, "failing": 0, "failing_records": 0, "why": ""}
        try:
            model = spec.build()
            row.update(model=model.name, required=requirement(model))
            if not classes.n_classes:
                raise VeilError("the table has no records.")
            result = model.evaluate(classes)
        except VeilError as error:
            row["why"] = str(error)
            rows.append(row)
            continue
        failing = result.failing_classes
        row.update(sensitive=result.sensitive or ", ".join(result.by_sensitive) or row["sensitive"],
                   measured=f"{SYMBOLS.get(model.key, model.key)} = {fmt(model.key, result.level)}",
                   passed=result.passed, failing=len(failing), failing_records=int(classes.sizes[failing].sum()))
        rows.append(row)
    return rows


def level_rows(report) -> list[dict]:
    """Every model's level as ``veil check`` prints it (``model``, ``key``, ``level``, or
    ``applies`` false); the models measured only against a population or an earlier release, and
    the risk models without a threshold, are left out as the CLI leaves them out."""
    from veil.check import RISK_KEYS, SUMMARY_KEYS
    from veil.cli.check import JOIN_KEYS, PRESENCE_KEYS, fmt

    rows = []
    for key in SUMMARY_KEYS + RISK_KEYS:
        result = report.results.get(key)
        if result is None:
            if key not in PRESENCE_KEYS + JOIN_KEYS + RISK_KEYS:
                rows.append({"key": key, "model": "", "level": "", "applies": False})
            continue
        rows.append({"key": key, "model": result.model, "level": fmt(key, result.level), "applies": True})
    return rows


def risk_rows(risk) -> list[tuple[str, str, str, str]]:
    """The re-identification risk as ``veil check`` prints it: attacker, highest, average, share
    of records at risk."""
    rows = [("prosecutor", f"{risk.prosecutor_max:.4g}", f"{risk.prosecutor_avg:.4g}",
             f"{risk.prosecutor_at_risk:.2%}")]
    if risk.journalist_max is not None:
        rows.append(("journalist", f"{risk.journalist_max:.4g}", f"{risk.journalist_avg:.4g}",
                     f"{risk.journalist_at_risk:.2%}"))
    rows.append(("marketer", "", f"{risk.marketer:.4g}", ""))
    return rows


def measure(cfg, dataset, form: RiskForm) -> dict:
    """Everything the page shows below its form, for a loaded configuration and its dataset."""
    from veil.check import check

    k = config_defaults(cfg).get("k")
    # t-closeness, δ-disclosure and β-likeness compare each class with the input table's
    # distribution, as veil anonymize does; this table is that input.
    reference = {name: {str(label): int(count) for label, count in zip(dataset.column(name).labels,
                                                                      dataset.column(name).counts())}
                 for name in dataset.sensitive}
    # The population a presence model of the configuration names gives the journalist risk, as
    # veil check --population does (read as the presence models read it).
    population = None
    if cfg.populations():
        from veil.data.dataset import Dataset

        population = Dataset(cfg.populations()[0], quasi_identifiers=list(dataset.quasi_identifiers),
                             missing_values=dataset.missing_values)
    report = check(dataset, k=k, risk_threshold=form.risk_threshold, population_size=form.population_size,
                   estimator=form.estimator, reference=reference or None, population=population)
    report.notes.extend(dataset.stray_text_notes())
    sample = report.sample_summary() if report.sample is not None else None
    if report.sample is not None:
        record_figure = individual_risks(report.sample.record, form.risk_threshold, report.sample.records)
    else:
        record_figure = prosecutor_risks(report.classes, form.risk_threshold)
    return {"report": report, "models": model_rows(cfg, report.classes), "levels": level_rows(report),
            "risk": risk_rows(report.risk), "sample": sample, "uniqueness": report.uniqueness,
            "class_sizes": class_sizes(report.classes), "record_risks": record_figure,
            "quasi_identifiers": list(dataset.quasi_identifiers), "sensitive": list(dataset.sensitive)}


def project_relative(message: str, project) -> str:
    """A message with the project's files named as in its folder (``config.yaml``,
    ``table.csv``), not by the data folder's path."""
    return message.replace(str(project.root) + os.sep, "")


@bp.get("/p/<name>/risk")
def page(name: str):
    project = workspace().project(name)
    columns_url = (url_for("columns.page", name=project.name) if "columns.page" in current_app.view_functions
                   else None)
    shown = {key: request.args.get(key, "") for key in ("population_size", "estimator", "risk_threshold")}
    context = {"project": project, "columns_url": columns_url, "errors": {}, "form": shown, "result": None,
               "config_error": None}
    if not project.config_path.exists():
        context["config_error"] = "the project has no configuration yet; give its columns their roles first."
        return render_template("risk/page.html.j2", **context)
    from veil.config import load_config

    try:
        cfg = load_config(project.config_path)
        dataset = cfg.dataset()
        cfg.check_against(dataset)
    except VeilError as error:
        context["config_error"] = project_relative(str(error), project)
        return render_template("risk/page.html.j2", **context)
    form, errors = read_form(request.args, dataset.num_rows, config_defaults(cfg))
    context.update(form=form.shown, errors=errors)
    if errors:
        return render_template("risk/page.html.j2", **context), 400
    try:
        context["result"] = measure(cfg, dataset, form)
    except VeilError as error:   # the table cannot be measured as configured (a weight that is no number…)
        context["config_error"] = project_relative(str(error), project)
    return render_template("risk/page.html.j2", **context)
