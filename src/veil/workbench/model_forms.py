"""The Anonymize page's form and the configuration it edits: pure functions both ways.

The form holds, as text (what an HTML form sends):

==================  ==========================================================================
field               meaning
==================  ==========================================================================
``label``           a name for the candidate release (not part of the configuration)
``k``               k-anonymity's k, a whole number of at least 2 (blank: no k-anonymity)
``l``               ℓ-diversity's ℓ (blank: none); whole and at least 2 for distinct and
                    recursive (c,ℓ)-diversity, a number above 1 for entropy ℓ-diversity
``l_kind``          ``distinct``, ``entropy`` or ``recursive``
``c``               recursive (c,ℓ)-diversity's c, a number above 0 (only with ``recursive``)
``t``               t-closeness's t in (0, 1] (blank: none)
``distance``        t-closeness's ground distance: ``equal``, ``ordered`` or ``hierarchical``
``sensitive``       the sensitive column ℓ and t constrain (blank: every declared one)
``suppression_limit``  the share of records that may be suppressed, in percent, 0 up to 100
``metric``          the utility metric the search optimizes (a name of
                    :data:`veil.config.METRICS`)
``metric_label``    the label column of the ``classification`` and ``ig_pl`` metrics
``algorithm``       ``fulldomain``, ``mondrian``, ``mdav`` or ``ace``
==================  ==========================================================================

:func:`read_form` turns the form into the configuration's ``models:``, ``suppression_limit:``,
``metric:`` and ``algorithm:`` keys, every other key of the configuration kept as it was;
:func:`form_values` reads a configuration back into the form. The form edits the first
k-anonymity, the first ℓ-diversity (of any kind) and the first t-closeness model of
``models:``; any other model the configuration lists (a second ℓ-diversity, δ-presence, …) is
kept unchanged, after them. An algorithm's or a metric's options (``search: heuristic``, a
workload's queries) are kept while the form names the same algorithm or metric. The αβ algorithm
(which publishes a view, not a generalized table) and the methods of statistical disclosure
control are left to the configuration file and ``veil anonymize``.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

from veil.errors import ParameterError

L_KINDS = {"distinct": "distinct_l_diversity", "entropy": "entropy_l_diversity",
           "recursive": "recursive_cl_diversity"}
DISTANCES = ("equal", "ordered", "hierarchical")
ALGORITHMS = ("fulldomain", "mondrian", "mdav", "ace")
ALGORITHM_NAMES = {"fulldomain": "full-domain generalization (optimal lattice search)",
                   "mondrian": "Mondrian (multidimensional partitioning)",
                   "mdav": "MDAV microaggregation", "ace": "Ace (transparent ℓ-diversity)"}
# metrics whose configuration names a label column
LABELLED = ("classification", "ig_pl")
FIELDS = ("label", "k", "l", "l_kind", "c", "t", "distance", "sensitive", "suppression_limit", "metric",
          "metric_label", "algorithm")
LABEL_CHARS = 80
DEFAULTS = {"label": "", "k": "", "l": "", "l_kind": "distinct", "c": "", "t": "", "distance": "equal",
            "sensitive": "", "suppression_limit": "0", "metric": "loss", "metric_label": "", "algorithm": "fulldomain"}
_MANAGED = ("k_anonymity", *L_KINDS.values(), "t_closeness")
_DIGITS = 12   # the most digits a number of the form may have


def metric_names() -> tuple[str, ...]:
    """Every metric name a configuration's ``metric:`` accepts (veil.config.METRICS)."""
    from veil.config import METRICS

    return tuple(METRICS)


class FormErrors(ParameterError):
    """A refused form: ``errors`` maps each field to the one sentence saying what to fix."""

    def __init__(self, errors: Mapping[str, str]):
        self.errors = dict(errors)
        super().__init__(next(iter(self.errors.values())))


# --------------------------------------------------------------------------------------------
# configuration → form


def _text(value: Any) -> str:
    """A number of the configuration as the form shows it (no exponent, no trailing zeros)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        return "" if value is None else str(value)
    number = value if isinstance(value, Decimal) else Decimal(value) if isinstance(value, int) \
        else Decimal(repr(float(value)))
    shown = format(number.normalize(), "f")
    return "0" if shown in ("-0", "") else shown


def _model_entries(config: Mapping) -> list[tuple[str, dict]]:
    out = []
    for item in config.get("models") or []:
        if isinstance(item, Mapping) and len(item) == 1:
            (name, options), = item.items()
            out.append((str(name), dict(options) if isinstance(options, Mapping) else {}))
        else:
            out.append(("", {}))   # not a model the form can read: kept as it is
    return out


def _split_models(config: Mapping) -> tuple[dict[str, dict], list]:
    """The models the form edits (first of each kind, by kind) and every other entry, as given."""
    managed: dict[str, dict] = {}
    others = []
    entries = list(zip(config.get("models") or [], _model_entries(config)))
    # the form has one sensitive field for ℓ and t: a t-closeness of another column stays as it is
    ell = next((options for _, (name, options) in entries if name in L_KINDS.values()), None)
    for item, (name, options) in entries:
        kind = "l" if name in L_KINDS.values() else {"k_anonymity": "k", "t_closeness": "t"}.get(name)
        if kind == "t" and ell is not None and ell.get("sensitive") != options.get("sensitive"):
            kind = None
        if kind is not None and kind not in managed:
            managed[kind] = {"name": name, **options}
        else:
            others.append(item)
    return managed, others


def _named(value: Any, default: str) -> tuple[str, dict]:
    """``metric:`` or ``algorithm:`` as (name, options): a bare name or ``{name: …, options}``."""
    if isinstance(value, Mapping):
        options = {k: v for k, v in value.items() if k != "name"}
        return str(value.get("name", default)), options
    return (default, {}) if value is None else (str(value), {})


def _metric_name(name: str) -> str:
    from veil.metrics import ALIASES

    norm = name.strip().lower()
    return ALIASES.get(norm, norm)


def form_values(config: Mapping) -> dict[str, str]:
    """The form's fields as the configuration ``config`` (a parsed config.yaml) sets them.

    Fields the configuration leaves unset take :data:`DEFAULTS`; ``label`` is always blank.
    """
    values = dict(DEFAULTS)
    managed, _ = _split_models(config)
    if "k" in managed:
        values["k"] = _text(managed["k"].get("k"))
    sensitive = ""
    if "l" in managed:
        model = managed["l"]
        values["l_kind"] = next(kind for kind, name in L_KINDS.items() if name == model["name"])
        values["l"] = _text(model.get("l"))
        if model["name"] == L_KINDS["recursive"]:
            values["c"] = _text(model.get("c"))
        sensitive = model.get("sensitive") or ""
    if "t" in managed:
        model = managed["t"]
        values["t"] = _text(model.get("t"))
        values["distance"] = str(model.get("distance") or "equal")
        sensitive = sensitive or model.get("sensitive") or ""
    values["sensitive"] = str(sensitive)
    limit = config.get("suppression_limit")
    if isinstance(limit, (int, float)) and not isinstance(limit, bool):
        values["suppression_limit"] = _text(Decimal(repr(float(limit))) * 100)
    metric, options = _named(config.get("metric"), "loss")
    values["metric"] = _metric_name(metric)
    if values["metric"] in LABELLED:
        values["metric_label"] = str(options.get("label") or "")
    values["algorithm"] = _named(config.get("algorithm"), "fulldomain")[0]
    return values


def kept_models(config: Mapping) -> list:
    """The entries of ``models:`` the form does not edit (kept unchanged when it is saved)."""
    return _split_models(config)[1]


# --------------------------------------------------------------------------------------------
# form → configuration


def _number(text: str) -> Decimal | None:
    """The decimal number ``text`` writes (``None`` when it is not one, or too long to be meant)."""
    text = text.strip()
    if not re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)", text) or len(text.lstrip("+-").replace(".", "")) > _DIGITS:
        return None
    try:
        return Decimal(text)
    except InvalidOperation:   # pragma: no cover - the pattern admits only numbers
        return None


def _whole(number: Decimal) -> bool:
    return number == number.to_integral_value()


def _value(number: Decimal) -> int | float:
    """A number of the form as the configuration holds it: whole numbers as integers."""
    return int(number) if _whole(number) else float(number)


def _field(form: Mapping[str, Any], name: str) -> str:
    value = form.get(name)
    return "" if value is None else str(value).strip()


def read_form(form: Mapping[str, Any], config: Mapping) -> tuple[dict, str]:
    """The configuration the form asks for, and the release's label.

    Args:
        form: the submitted fields (see the module's table); missing ones count as blank.
        config: the project's configuration (a parsed config.yaml): its declared sensitive
            columns are the ones ℓ and t may name, its other keys and models are kept.

    Returns:
        ``(document, label)``: ``config`` with ``models``, ``suppression_limit``, ``metric`` and
        ``algorithm`` set from the form, and the label (blank when none was given).

    Raises:
        FormErrors: one sentence per refused field (k not a whole number of at least 2, t outside
            (0, 1], a limit outside 0 to 100 %, an unknown metric or algorithm, no model at all, …).
    """
    errors: dict[str, str] = {}
    models: list[dict] = []
    roles = config.get("columns") if isinstance(config.get("columns"), Mapping) else {}
    declared = roles.get("sensitive") or [] if isinstance(roles, Mapping) else []
    declared = [declared] if isinstance(declared, str) else [str(c) for c in declared]

    label = _field(form, "label")
    if len(label) > LABEL_CHARS or any(ord(ch) < 32 or ord(ch) == 127 for ch in label):
        errors["label"] = f"give a label of at most {LABEL_CHARS} characters, on one line."

    k = _field(form, "k")
    if k:
        number = _number(k)
        if number is None or not _whole(number) or number < 2:
            errors["k"] = f"k is the smallest class size: a whole number of at least 2, like 5, not {k[:20]!r}."
        else:
            models.append({"k_anonymity": {"k": int(number)}})

    sensitive = _field(form, "sensitive")
    if sensitive and sensitive not in declared:
        errors["sensitive"] = (f"{sensitive[:40]!r} is not a declared sensitive column; choose one of "
                               f"{', '.join(declared)}, or blank for all." if declared else
                               "no column is declared sensitive; mark one on the Columns page, or leave this blank.")
    on = {"sensitive": sensitive} if sensitive else {}

    kind = _field(form, "l_kind") or DEFAULTS["l_kind"]
    if kind not in L_KINDS:
        errors["l_kind"] = "choose distinct, entropy or recursive ℓ-diversity."
    ell = _field(form, "l")
    if ell and kind in L_KINDS:
        number = _number(ell)
        if kind == "entropy" and (number is None or number <= 1):
            errors["l"] = f"entropy ℓ must be a number above 1, like 3, not {ell[:20]!r}."
        elif kind != "entropy" and (number is None or not _whole(number) or number < 2):
            errors["l"] = f"ℓ must be a whole number of at least 2, like 3, not {ell[:20]!r}."
        elif not declared:
            errors["l"] = "ℓ-diversity constrains a sensitive column; mark one sensitive on the Columns page first."
        else:
            options: dict = {"l": _value(number)}
            if kind == "recursive":
                c = _field(form, "c")
                cn = _number(c)
                if cn is None or cn <= 0:
                    errors["c"] = (f"recursive (c,ℓ)-diversity needs c, a number above 0, like 3, not {c[:20]!r}."
                                   if c else "recursive (c,ℓ)-diversity needs c, a number above 0, like 3.")
                else:
                    options = {"c": _value(cn), **options}
            models.append({L_KINDS[kind]: {**options, **on}})

    t = _field(form, "t")
    distance = _field(form, "distance") or "equal"
    if distance not in DISTANCES:
        errors["distance"] = "choose the equal, ordered or hierarchical ground distance."
    if t:
        number = _number(t)
        if number is None or not 0 < number <= 1:
            errors["t"] = f"t is a distance between distributions: a number above 0 and at most 1, like 0.2, not {t[:20]!r}."
        elif not declared:
            errors["t"] = "t-closeness constrains a sensitive column; mark one sensitive on the Columns page first."
        elif "distance" not in errors:
            models.append({"t_closeness": {"t": _value(number), "distance": distance, **on}})

    limit = _field(form, "suppression_limit") or "0"
    share = None
    number = _number(limit)
    if number is None or not 0 <= number < 100:
        errors["suppression_limit"] = (f"the suppression limit is a percentage of the records, from 0 up to (not "
                                       f"including) 100, like 2, not {limit[:20]!r}.")
    else:
        share = _value(number / 100) if number else 0

    metric = _metric_name(_field(form, "metric") or DEFAULTS["metric"])
    old_metric, metric_options = _named(config.get("metric"), "loss")
    metric_options = dict(metric_options) if _metric_name(old_metric) == metric else {}
    if metric not in metric_names():
        errors["metric"] = f"choose one of the metrics {', '.join(metric_names())}."
    elif metric in LABELLED:
        column = _field(form, "metric_label")
        if not column:
            errors["metric_label"] = f"the {metric} metric predicts a label column; choose it."
        else:
            metric_options["label"] = column
    else:
        metric_options.pop("label", None)

    algorithm = _field(form, "algorithm") or DEFAULTS["algorithm"]
    old_algorithm, algorithm_options = _named(config.get("algorithm"), "fulldomain")
    if algorithm not in ALGORITHMS:
        errors["algorithm"] = (f"choose one of {', '.join(ALGORITHMS)}; the other algorithms (αβ, statistical "
                               "disclosure control) run from the configuration file with veil anonymize.")

    others = kept_models(config)
    if not models and not others and not ({"k", "l", "t", "c"} & errors.keys()):
        errors["k"] = "give k (a whole number of at least 2), ℓ or t: the release needs at least one privacy model."
    if errors:
        raise FormErrors(errors)
    document = {key: value for key, value in config.items()
                if key not in ("models", "suppression_limit", "metric", "algorithm")}
    document["models"] = models + list(others)
    document["suppression_limit"] = share
    document["metric"] = {"name": metric, **metric_options} if metric_options else metric
    document["algorithm"] = ({"name": algorithm, **algorithm_options}
                             if algorithm == old_algorithm and algorithm_options else algorithm)
    return document, label


def describe_models(models: Sequence) -> list[str]:
    """Each entry of ``models:`` as one line of text, e.g. ``k_anonymity: k = 5`` (for
    ``workbench.json`` and the page)."""
    lines = []
    for item in models:
        if isinstance(item, Mapping) and len(item) == 1:
            (name, options), = item.items()
            shown = ", ".join(f"{key} = {_text(value) if isinstance(value, (int, float)) else value}"
                              for key, value in (options or {}).items())
            lines.append(f"{name}: {shown}" if shown else str(name))
        else:
            lines.append(str(item))
    return lines
