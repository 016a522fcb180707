"""The curator's report of a synthetic release (``report.html`` beside the synthetic table).

It shows what the release is (mechanism, budget, rows, seed policy: what the public manifest
says), every measurement and selection, and the evaluation of the synthetic table against the
private one (:class:`veil.synth.evaluation.Evaluation`: fidelity, utility and privacy measures,
each with a sentence saying what it means). The page says, at its top and above the evaluation,
that those numbers come from the private table, are not differentially private, and are for the
curator's decision, not for publication. The page is rendered like veil's other reports
(:mod:`veil.report.render`: escaped, self-contained, nothing loaded).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from veil.report.shown import shown as _shown

__all__ = ["SynthReport", "render_synth_html", "synth_report"]


@dataclass
class SynthReport:
    """The content of a synthetic release's report, ready to be rendered.

    Attributes:
        title: the page's title.
        source: what the private table is called (its file name), shown to the curator only.
        mechanism: ``mst`` or ``aim``; ``version`` veil's.
        facts: rows ``(what, value, what it means)`` about the release.
        measurements, selections: the manifest's lists.
        sections: the evaluation: ``{"title", "rows": [(measure, value text, meaning)]}``; empty
            when the table was not evaluated.
        not_fit: why the release is not fit for release (empty when it is).
    """

    title: str
    source: str
    mechanism: str
    version: str
    facts: list[tuple[str, str, str]]
    measurements: list[dict]
    selections: list[dict]
    sections: list[dict] = field(default_factory=list)
    not_fit: list[str] = field(default_factory=list)


_MECHANISMS = {
    "mst": "MST: noisy 1-way marginals and a maximum spanning tree of 2-way ones (McKenna, Sheldon and Miklau 2021)",
    "aim": "AIM: rounds that select the workload's marginals adaptively and measure them (McKenna et al. 2022)",
}


def _section(section: Any) -> dict:
    """One section of :meth:`Evaluation.sections`: a mapping ``{title, rows}``, an object with
    those attributes, or a pair ``(title, rows)``; each row ``(measure, value, meaning)``."""
    if isinstance(section, dict):
        title, rows = section.get("title", ""), section.get("rows", ())
    elif hasattr(section, "title") and hasattr(section, "rows"):
        title, rows = section.title, section.rows
    else:
        title, rows = section
    shown = []
    for row in rows:
        if isinstance(row, dict):
            row = (row.get("measure", ""), row.get("value"), row.get("meaning", ""))
        measure, value, meaning = (tuple(row) + ("", "", ""))[:3]
        shown.append((str(measure), _shown(value), str(meaning)))
    return {"title": str(title), "rows": shown}


def synth_report(release: Any, manifest: dict, *, title: str | None = None,
                 source: str = "the table") -> SynthReport:
    """The report's content: ``manifest`` is the public manifest written with the release.

    Args:
        release: the synthetic release (its evaluation is read).
        manifest: its manifest (:func:`veil.synth.release.synthetic_manifest`).
        title: the page's title (default: "Synthetic data").
        source: what to call the private table.
    """
    budget = manifest["budget"]
    if budget.get("epsilon") is not None:
        given = f"ε = {budget['epsilon']}, δ = {budget['delta']}"
        meaning = (f"(ε, δ)-differential privacy, spent as ρ = {budget['rho']} zero-concentrated DP (the largest ρ "
                   "whose (ε, δ) is within the budget)")
    else:
        given = f"ρ = {budget['rho']}"
        meaning = "ρ-zero-concentrated differential privacy"
    facts = [
        ("mechanism", manifest["mechanism"], _MECHANISMS.get(manifest["mechanism"], "")),
        ("budget", given, (f"the privacy guarantee of the synthetic table and its manifest: {meaning}; veil "
                           "publish charges it to the population's budget")),
        ("rows", f"{manifest['rows']:,}", ("the rows of the synthetic table (the model's noisy count, or the number "
                                           "asked for): not the private table's count")),
        ("columns", f"{len(manifest['domain']):,}", "the columns synthesized, each over its public domain"),
        ("measurements", f"{len(manifest['measurements']):,}", "noisy marginals the model was fitted to"),
        ("randomness", manifest["randomness"], ("secure: the noise was drawn from a cryptographically secure "
                                                "source; seeded: reproducible, and so not fit for release")),
    ]
    sections = [] if release.evaluation is None else [_section(s) for s in release.evaluation.sections()]
    # the exact ρ (decimal text or p/q) of the manifest, shown with 4 significant digits
    measurements = [{**m, "rho": _shown(float(Fraction(m["rho"])))} for m in manifest["measurements"]]
    selections = [{**s, "rho": _shown(float(Fraction(s["rho"])))} for s in manifest["selections"]]
    from veil import __version__

    return SynthReport(title or "Synthetic data", source, manifest["mechanism"], __version__, facts,
                       measurements, selections, sections,
                       list(manifest["not_fit_because"]))


def render_synth_html(report: SynthReport) -> str:
    """The report as one HTML page (text), escaped and self-contained like veil's other reports."""
    from veil.report.render import _environment, _number

    return _environment().get_template("synth.html.j2").render(report=report, number=_number)
