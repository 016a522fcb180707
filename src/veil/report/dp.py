"""The report of answers released under differential privacy: each answer with its error bar,
the privacy loss ε and δ it spent, and the budget left.

The answers are those ``veil dp … --json`` prints (and :meth:`veil.dp.queries.QueryResult`
describes): the noisy value, its confidence interval (from the mechanism's noise distribution,
not from the data), ε, δ, the mechanism and whether it is fit for release. The report only
post-processes what was already released, so it spends nothing; it never reads the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from veil.errors import DataError
from veil.report.figures import Figure, interval_chart

ANSWER_KEYS = ("query", "value", "low", "high", "confidence", "epsilon", "delta")


@dataclass
class DPReport:
    """The content of a DP report, ready to be rendered.

    Attributes:
        title: the report's title.
        answers: one entry per answer: its query, value, bounds, confidence, ε, δ, mechanism,
            fitness for release and notes.
        budget: ``{"total": …, "spent": …, "left": …}`` (each ``{"epsilon", "delta"}``) and
            ``"charges"``, or ``None`` when no budget file was given.
        figures: the error-bar figures, one per answer.
        not_fit: why some answers are not fit for release (one sentence each); empty when all are.
    """

    title: str
    answers: list[dict]
    budget: dict | None
    figures: list[Figure] = field(default_factory=list)
    not_fit: list[str] = field(default_factory=list)


def check_answer(answer, where: str) -> dict:
    """An answer as ``veil dp … --json`` prints it, checked for the entries the report reads.

    Args:
        answer: the parsed JSON.
        where: how to name it in an error (its file).

    Raises:
        DataError: it is not such an answer, or its value and bounds do not match in shape.
    """
    if not isinstance(answer, Mapping) or any(k not in answer for k in ANSWER_KEYS):
        raise DataError(f"{where} is not an answer of veil dp (it lacks one of {', '.join(ANSWER_KEYS)}); give "
                        "what veil dp … --json printed.")
    shapes = {type(answer[k]) is list and len(answer[k]) for k in ("value", "low", "high")}
    if len(shapes) != 1:
        raise DataError(f"{where} gives its value and its bounds in different shapes; give what veil dp … --json "
                        "printed.")
    in_rho = answer.get("rho") is not None  # priced in ρ-zCDP: its epsilon and delta are null
    for key, test, should in _ANSWER_FIELDS:
        if in_rho and key in ("epsilon", "delta") and answer[key] is None:
            continue
        if (key in ANSWER_KEYS or answer.get(key) is not None) and not test(answer[key]):
            raise DataError(f"{where} holds {key!r} that is not {should}; give what veil dp … --json printed.")
    return dict(answer)


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _finite_or_list(value) -> bool:
    return _finite(value) or (isinstance(value, list) and all(_finite(v) for v in value))


def _texts(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


# The entries of an answer the report reads: (key, its test, what it should be in words); the keys
# of ANSWER_KEYS must be there, the others may be missing or null.
_ANSWER_FIELDS = (
    ("query", lambda v: isinstance(v, str), "text"),
    ("value", _finite_or_list, "a finite number or a list of them"),
    ("low", _finite_or_list, "a finite number or a list of them"),
    ("high", _finite_or_list, "a finite number or a list of them"),
    ("confidence", lambda v: _finite(v) and 0 < v <= 1, "a share in (0, 1]"),
    ("epsilon", lambda v: _finite(v) and v >= 0, "a finite number 0 or more"),
    ("delta", lambda v: _finite(v) and 0 <= v <= 1, "a number in [0, 1]"),
    ("rho", lambda v: _finite(v) and v > 0, "a finite number above 0"),
    ("mechanism", lambda v: isinstance(v, str), "text"),
    ("fit_for_release", lambda v: isinstance(v, bool), "true or false"),
    ("not_fit_because", _texts, "a list of sentences"),
    ("postprocessing", _texts, "a list of sentences"),
    ("notes", _texts, "a list of sentences"),
    ("categories", lambda v: isinstance(v, list) and all(isinstance(c, list) for c in v), "a list of lists"),
)


def dp_report(answers: Sequence[Mapping], budget: Mapping | None = None, *, title: str | None = None) -> DPReport:
    """Gather the report of DP answers and the budget they were charged to.

    Args:
        answers: the answers, each as ``veil dp … --json`` prints it (see :func:`check_answer`).
        budget: the budget as ``veil dp budget --json`` prints it (``budget``, ``spent``,
            ``charges``; see :func:`check_budget`), or ``None``.
        title: the report's title.

    Raises:
        DataError: an answer is not one (see :func:`check_answer`).
    """
    checked = [check_answer(a, f"answer {i}") for i, a in enumerate(answers, start=1)]
    rows, figures, not_fit = [], [], []
    for i, a in enumerate(checked, start=1):
        labels, values, lows, highs = _series(a)
        # a ρ-zCDP answer says ε = 0 and its ρ: shown as the ρ it cost, never as an ε
        rho = a.get("rho")
        cost = f"ρ = {rho:g}" if rho is not None else f"ε = {a['epsilon']:g}"
        rows.append({"query": a["query"], "epsilon": a["epsilon"], "delta": a["delta"], "rho": rho,
                     "confidence": a["confidence"], "mechanism": a.get("mechanism", ""),
                     "fit": bool(a.get("fit_for_release")), "rows": list(zip(labels, values, lows, highs)),
                     "notes": list(a.get("postprocessing") or []) + list(a.get("notes") or [])})
        if not a.get("fit_for_release"):
            because = "; ".join(a.get("not_fit_because") or []) or "it says so"
            not_fit.append(f"answer {i} ({a['query']}) is not fit for release: {because}.")
        alt = (f"{a['query']} at {cost}: " + "; ".join(
            f"{label} {v:,.6g}, {a['confidence']:.0%} interval [{lo:,.6g}, {hi:,.6g}]"
            for label, v, lo, hi in zip(labels, values, lows, highs)) + ".")
        figures.append(interval_chart(f"answer-{i}", labels, values, lows, highs, title=f"{a['query']}", alt=alt,
                                      caption=f"{a['query']}: the noisy answer (dot) and its {a['confidence']:.0%} "
                                              f"error bar, from the noise of the {a.get('mechanism', '')} mechanism "
                                              f"at {cost}; each row is drawn on its own scale, its interval "
                                              "filling the middle half."))
    summary = None
    if budget is not None:
        total, spent = budget["budget"], budget["spent"]
        summary = {"total": total, "spent": spent,
                   # a zCDP budget's ε do not subtract: its own "left" is the ε of the ρ left
                   "left": budget["left"] if isinstance(budget.get("left"), Mapping) else
                   {k: max(float(total[k]) - float(spent[k]), 0.0) for k in ("epsilon", "delta")},
                   "composition": budget.get("composition", ""), "charges": list(budget.get("charges") or [])}
    return DPReport(title or "Answers under differential privacy", rows, summary, figures, not_fit)


def check_budget(budget, where: str) -> dict:
    """A budget as ``veil dp budget … --json`` prints it, checked for the entries the report reads.

    Args:
        budget: the parsed JSON.
        where: how to name it in an error (its file).

    Raises:
        DataError: it is not such a budget.
    """
    ok = (isinstance(budget, Mapping) and all(isinstance(budget.get(k), Mapping) for k in ("budget", "spent"))
          and all(k in budget[part] for part in ("budget", "spent") for k in ("epsilon", "delta")))
    if not ok:
        raise DataError(f"{where} is not a budget shown by veil dp budget (it lacks its budget or what was spent); "
                        "give what veil dp budget … --json printed.")
    charges = budget.get("charges")
    numbers = [(f"{part}.{k}", budget[part][k]) for part in ("budget", "spent") for k in ("epsilon", "delta")]
    if charges is not None and not (isinstance(charges, list) and all(isinstance(c, Mapping) for c in charges)):
        numbers.append(("charges", None))
    else:
        numbers += [(f"charges[{i}].{k}", c.get(k)) for i, c in enumerate(charges or []) for k in ("epsilon", "delta")]
    if "left" in budget:  # a zCDP budget's own (ε, δ) left
        left = budget["left"]
        numbers += [(f"left.{k}", left.get(k) if isinstance(left, Mapping) else None) for k in ("epsilon", "delta")]
    bad = next((key for key, value in numbers if not (_finite(value) and value >= 0)), None)
    if bad is not None:
        raise DataError(f"{where} holds {bad!r} that is not a finite number 0 or more; give what veil dp budget … "
                        "--json printed.")
    return dict(budget)


def _series(answer: Mapping) -> tuple[list[str], list[float], list[float], list[float]]:
    """Labels, values and bounds of an answer: one row, or one per category of a histogram."""
    if not isinstance(answer["value"], list):
        return [answer["query"]], [float(answer["value"])], [float(answer["low"])], [float(answer["high"])]
    categories = answer.get("categories") or []
    names = [" × ".join(str(c) for c in combo) for combo in _product(categories)] if categories else []
    if len(names) != len(answer["value"]):
        names = [f"cell {i + 1}" for i in range(len(answer["value"]))]
    return names, [float(v) for v in answer["value"]], [float(v) for v in answer["low"]], \
        [float(v) for v in answer["high"]]


def _product(categories: Sequence[Sequence]) -> list[tuple]:
    combos: list[tuple] = [()]
    for values in categories:
        combos = [c + (v,) for c in combos for v in values]
    return combos
