"""The curator's report of a release made by a method of statistical disclosure control (local
suppression, PRAM, rank swapping, additive noise, top and bottom coding; :mod:`veil.sdc`).

It shows what the release is (the method, its parameters, the columns perturbed, the recoding
first, the randomness: what the manifest says), the re-identification risk before and after
(the Benedetti–Franconi individual risk of every record as a distribution, its quantiles, the
global risk and its rate, the records above each threshold, the smallest key frequency k), and the
utility table of the method: the information loss of numeric columns (IL1s, the change of means,
covariances and correlations, the eigenvalue measure), PRAM's frequencies with the estimator's
error, or local suppression's cells per column against the cells whole-record suppression would
blank. Every figure below the release's description comes from the private table: the page says
so, as the synthetic data report does. It is rendered like veil's other reports
(:mod:`veil.report.render`: escaped, self-contained, nothing loaded).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from veil.report.figures import Figure, bar_chart
from veil.report.shown import shown as _shown

__all__ = ["SdcReport", "render_sdc_html", "sdc_report", "sdc_report_from_manifest"]

#: The edges of the individual risk's histogram.
RISK_BINS = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)

_METHODS = {
    "localsuppression": "local suppression: quasi-identifier cells (not records) suppressed until the risk goal holds",
    "pram": "PRAM: each value of a categorical column redrawn from a transition matrix (Gouweleeuw et al. 1998)",
    "swap": "rank swapping: each value exchanged with one at most p % of the records away in rank (Moore 1996)",
    "noise": "additive noise: Gaussian noise scaled to each column's (or the columns' joint) spread",
    "topcoding": "top and bottom coding: values beyond a threshold replaced",
}


@dataclass
class SdcReport:
    """The content of the report, ready to be rendered.

    Attributes:
        title: the page's title.
        source: the input table's name.
        method: the method's name; ``version`` veil's.
        facts: rows ``(what, value, what it means)`` about the release (public).
        risk: rows ``(measure, before, after)``.
        figures: the risk's distribution before and after.
        utility: sections ``{"title", "head", "rows"}`` of the method's utility table.
        not_fit: why the release is not fit for release (empty when it is).
    """

    title: str
    source: str
    method: str
    version: str
    facts: list[tuple[str, str, str]]
    risk: list[tuple[str, str, str]]
    figures: list[Figure] = field(default_factory=list)
    utility: list[dict] = field(default_factory=list)
    not_fit: list[str] = field(default_factory=list)


def _percent(value) -> str:
    return "—" if value is None else f"{100 * float(value):.2f} %"


def _risk_rows(before: dict, after: dict) -> list[tuple[str, str, str]]:
    rows = [("records", _shown(before["records"]), _shown(after["records"])),
            ("smallest key frequency (k)", _shown(before["k"]), _shown(after["k"])),
            ("sample uniques (f = 1)", _shown(before["sample_uniques"]), _shown(after["sample_uniques"])),
            ("expected re-identifications (global risk)", _shown(before["expected_reidentifications"]),
             _shown(after["expected_reidentifications"])),
            ("rate of re-identifications", _percent(before["rate"]), _percent(after["rate"])),
            ("largest individual risk", _shown(before["max"]), _shown(after["max"]))]
    for q in before["quantiles"]:
        rows.append((f"individual risk, quantile {q}", _shown(before["quantiles"][q]),
                     _shown(after["quantiles"].get(q))))
    for t in before["above"]:
        rows.append((f"records with a risk above {t}", _percent(before["above"][t]), _percent(after["above"].get(t))))
    if "household" in before:
        for t in before["household"]["above"]:
            rows.append((f"records whose household's risk is above {t}", _percent(before["household"]["above"][t]),
                         _percent((after.get("household") or {}).get("above", {}).get(t))))
    return rows


def _histogram(record: np.ndarray) -> list[float]:
    counts, _ = np.histogram(np.clip(record, 0, 1), bins=RISK_BINS)
    return counts.astype(float).tolist()


def _risk_figure(details: dict) -> list[Figure]:
    before, after = details.get("risk_before"), details.get("risk_after")
    if before is None or after is None:
        return []
    labels = [f"{lo:g} – {hi:g}" for lo, hi in zip(RISK_BINS[:-1], RISK_BINS[1:])]
    return [bar_chart("risk-distribution", labels, {"before": _histogram(before.record),
                                                    "after": _histogram(after.record)},
                      title="Individual risk before and after", alt="records per band of individual risk, before "
                      "and after the method", caption="Records per band of Benedetti–Franconi individual risk, "
                      "before the method (the input) and after it (the published table).")]


def _numeric_section(utility: dict) -> list[dict]:
    measures = utility.get("numeric") or {}
    rows = []
    for key, value in measures.items():
        if isinstance(value, (list, tuple, dict)) or key == "columns":
            continue
        rows.append((key.replace("_", " "), _shown(value)))
    sections = [{"title": "Information loss of the perturbed columns (" + ", ".join(utility.get("columns", [])) + ")",
                 "head": ("measure", "value"), "rows": rows}] if rows else []
    per_column = {k: v for k, v in measures.items()
                  if k != "columns" and isinstance(v, list) and len(v) == len(utility.get("columns", []))}
    if per_column:
        head = ("column", *[k.replace("_", " ") for k in per_column])
        table = [(c, *[_shown(v[i]) for v in per_column.values()]) for i, c in enumerate(utility["columns"])]
        sections.append({"title": "Per column", "head": head, "rows": table})
    return sections


def _pram_sections(utility: dict) -> list[dict]:
    sections = []
    for column, u in utility.items():
        rows = []
        estimate = u.get("estimate") or [None] * len(u["categories"])
        error = u.get("standard_error") or [None] * len(u["categories"])
        for i, category in enumerate(u["categories"]):
            rows.append((category, _shown(u["original"][i]), _shown(u["released"][i]), _shown(estimate[i]),
                         _shown(error[i])))
        sections.append({"title": f"Frequencies of '{column}': records changed {_percent(u.get('changed'))}, "
                                  f"released distance {_shown(u.get('released_distance'))}, estimate's distance "
                                  f"{_shown(u.get('estimate_distance'))}, largest posterior "
                                  f"{_shown(u.get('largest_posterior'))}",
                         "head": ("category", "original", "released", "estimate (Pᵀ)⁻¹T*", "its standard error"),
                         "rows": rows, "data": True})
    return sections


def _suppression_section(utility: dict) -> list[dict]:
    rows = [(column, _shown(n)) for column, n in (utility.get("suppressed_cells") or {}).items()]
    rows.append(("all quasi-identifiers", _shown(utility.get("cells"))))
    if "record_suppression_cells" in utility:
        rows.append(("whole-record suppression would blank", _shown(utility["record_suppression_cells"])))
    rows.append(("proven minimal", _shown(utility.get("optimal"))))
    rows.append(("proven lower bound on the minimum", _shown(utility.get("lower_bound"))))
    return [{"title": "Suppressed cells per column", "head": ("column", "cells"), "rows": rows}]


def sdc_report(release, *, title: str | None = None) -> SdcReport:
    """The report's content from a :class:`~veil.sdc.release.PerturbedRelease` made in this process.

    Args:
        release: the release.
        title: the page's title (default: the method and the table's name).
    """
    return sdc_report_from_manifest(release.curator_manifest, details=release.details, title=title)


def sdc_report_from_manifest(manifest: dict, table=None, *, details: dict | None = None,
                             title: str | None = None) -> SdcReport:
    """The report's content from a perturbed release's manifest with its private file's sections
    (:func:`veil.manifests.combined`), as ``veil report`` reads them.

    Args:
        manifest: the curator's view of the manifest.
        table: the published table (a ``pyarrow.Table``), whose risk the figure shows when the
            release's per-record figures (``details``) are not at hand.
        details: the per-record risk before and after (a release made in this process).
        title: the page's title.
    """
    from veil import __version__

    sdc = manifest["sdc"]
    method = manifest["algorithm"]
    private = {key: sdc.get(key) for key in ("risk_before", "risk_after", "utility")}
    name = (manifest.get("input") or {}).get("name") or "the table"
    output = manifest.get("output") or {}
    facts = [("method", method, _METHODS.get(method, "")),
             ("parameters", ", ".join(f"{k} {v}" for k, v in sdc["parameters"].items()
                                      if not isinstance(v, (list, dict))) or "—",
              "the method's public parameters (the manifest lists them all)"),
             ("perturbed columns", ", ".join(sdc["perturbed"]) or "none", "the columns the method changed"),
             ("rows", _shown(output.get("rows")), "the published rows"),
             ("row order", output.get("order", "—"), "secure shuffle: the rows cannot be joined with another "
                                                     "release by position"),
             ("randomness", sdc["randomness"], "secure: every draw from the operating system's secure source; "
                                               "seeded: a reproducible experiment, not fit for release")]
    recoding = sdc.get("recoding")
    if recoding is not None:
        node = recoding.get("node") or {}
        suppressed = (manifest.get("suppression") or {}).get("records")
        facts.append(("recoded first", ", ".join(f"{q} level {lv}" for q, lv in node.items()),
                      "full-domain generalization under the file's models"
                      + (f"; {suppressed:,} records suppressed" if isinstance(suppressed, int) else "")))
    utility = private["utility"] or {}
    if method == "localsuppression":
        sections = _suppression_section(utility)
    elif method == "pram":
        sections = _pram_sections(utility)
    else:
        sections = _numeric_section(utility)
    risk: list[tuple[str, str, str]] = []
    if private["risk_before"] and private["risk_after"]:
        risk = _risk_rows(private["risk_before"], private["risk_after"])
    figures = _risk_figure(details) if details else []
    if not figures and table is not None:
        figures = _published_figure(manifest, table)
    return SdcReport(title or f"{method}: {name}", name, method, __version__, facts, risk, figures, sections,
                     list(manifest.get("not_fit_because") or []))


def _published_figure(manifest: dict, table) -> list[Figure]:
    """The published table's risk distribution, measured on it as the gate measures it."""
    from veil.sdc.table_risk import suppressed_marker, table_risk

    roles = manifest.get("roles") or {}
    names = set(table.column_names)
    risk = table_risk(table, [q for q in roles.get("quasi_identifiers") or [] if q in names],
                      weight=roles.get("weight") if roles.get("weight") in names else None,
                      strata=[s for s in roles.get("strata") or [] if s in names], marker=suppressed_marker(manifest))
    labels = [f"{lo:g} – {hi:g}" for lo, hi in zip(RISK_BINS[:-1], RISK_BINS[1:])]
    return [bar_chart("risk-distribution", labels, {"published": _histogram(risk.record)},
                      title="Individual risk of the published table", alt="records per band of individual risk",
                      caption="Records per band of Benedetti–Franconi individual risk, measured on the published "
                              "table.")]


def render_sdc_html(report: SdcReport) -> str:
    """The report as one HTML page (text), escaped and self-contained like veil's other reports."""
    from veil.report.render import _environment, _show

    return _environment().get_template("sdc.html.j2").render(report=report, show=_show)
