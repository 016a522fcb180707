"""The workbench's figures, as images a page embeds with a ``data:`` address.

A figure is the report's own drawing (:mod:`veil.report.figures`, the charts of
:mod:`veil.report.content`): SVG written by hand, with its title and description, no font file and
nothing fetched. The page never inlines the SVG: the workbench's Content-Security-Policy forbids
inline style, and an SVG shown through ``<img src="data:image/svg+xml;base64,…">`` is a separate
image document, whose own ``<style>`` the page's policy does not govern (Chromium logs no
violation for it). The image is also inert: a browser runs no script and loads nothing from an
SVG shown as an image.

The functions are pure: the same classes (or risks) give the same image.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass

import numpy as np

from veil.classes import EquivalenceClasses
from veil.errors import ParameterError
from veil.report.content import class_size_figure, risk_figure
from veil.report.figures import Figure, step_chart

# A curve of more distinct risks than this is read at this many evenly spaced risks instead (the
# drawing is 640 units wide: a finer curve looks the same and only makes the page heavier).
CURVE_POINTS = 1000


@dataclass(frozen=True)
class Image:
    """A figure ready for an ``<img>``: its ``data:`` address, its alt text and its caption."""

    src: str
    alt: str
    caption: str


def image(figure: Figure) -> Image:
    """The report's figure as an image: its SVG as a base64 ``data:image/svg+xml`` address."""
    encoded = base64.b64encode(str(figure.svg).encode("utf-8")).decode("ascii")
    return Image(f"data:image/svg+xml;base64,{encoded}", figure.alt, figure.caption)


def class_sizes(classes: EquivalenceClasses) -> Image:
    """The distribution of equivalence-class sizes: the records in classes of each size (and how
    many classes of that size there are), as the report draws it
    (:func:`veil.report.content.class_size_figure`)."""
    return image(class_size_figure(classes))


def prosecutor_risks(classes: EquivalenceClasses, threshold: float) -> Image:
    """The distribution of the records' prosecutor risk, 1 / (size of the record's class): the
    share of records whose risk exceeds r, for every r, with the threshold marked, as the report
    draws it (:func:`veil.report.content.risk_figure`).

    Raises:
        ParameterError: ``threshold`` outside (0, 1].
    """
    _check_threshold(threshold)
    return image(risk_figure(classes, threshold))


def individual_risks(risks, threshold: float, records=None) -> Image:
    """The distribution of the records' Benedetti–Franconi individual risk
    (:mod:`veil.risk.individual`): the share of records whose risk exceeds r, for every r, with
    the threshold marked.

    Args:
        risks: the individual risk of each row, in [0, 1]; NaN for a suppressed row (left out).
        threshold: the risk above which a record is at risk, in (0, 1].
        records: the records each row stands for (a table summarized by its distinct rows), or
            ``None`` when every row is one record.

    Raises:
        ParameterError: ``threshold`` outside (0, 1], a risk outside [0, 1], or ``records`` not
            one non-negative number per row.
    """
    _check_threshold(threshold)
    risks = np.asarray(risks, dtype=np.float64).ravel()
    mass = np.ones_like(risks) if records is None else np.asarray(records, dtype=np.float64).ravel()
    if mass.shape != risks.shape or np.any(~np.isfinite(mass)) or np.any(mass < 0):
        raise ParameterError("give one non-negative number of records per row.")
    kept = ~np.isnan(risks)
    risks, mass = risks[kept], mass[kept]
    if np.any((risks < 0) | (risks > 1)):
        raise ParameterError("an individual risk is a probability, in [0, 1].")
    total = float(mass.sum())
    if total > 0:
        order = np.argsort(risks, kind="stable")
        ordered, cumulative = risks[order], np.cumsum(mass[order])
        distinct = np.unique(ordered)
        points = distinct if len(distinct) <= CURVE_POINTS else np.linspace(0.0, 1.0, CURVE_POINTS + 1)[1:]
        # records with a risk above each point: all but those at or below it
        at_or_below = np.searchsorted(ordered, points, side="right")
        above = total - np.where(at_or_below > 0, cumulative[np.maximum(at_or_below - 1, 0)], 0.0)
        x = [0.0] + points.tolist()
        y = [float(mass[risks > 0].sum()) / total] + np.clip(above / total, 0, 1).tolist()
        share = float(mass[risks > threshold].sum()) / total
        highest = float(risks.max())
    else:
        x, y, share, highest = [0.0], [0.0], 0.0, 0.0
    alt = (f"Per-record individual risk (Benedetti–Franconi): the highest is {highest:.3g}; {share:.2%} of the "
           f"records have a risk above the threshold {threshold:g}.")
    return image(step_chart("individual-risk", x, y, title="Per-record re-identification risk (individual)",
                            alt=alt, caption=f"Share of records whose Benedetti–Franconi individual risk exceeds r, "
                                             f"for every r; the dashed line is the threshold {threshold:g}, above "
                                             f"which {share:.2%} of the records lie.",
                            x_label="individual risk r", y_label="records with risk > r",
                            marker=threshold, marker_label=f"threshold {threshold:g}"))


def _check_threshold(threshold: float) -> None:
    if not (isinstance(threshold, (int, float)) and 0 < threshold <= 1):
        raise ParameterError(f"the risk threshold must be in (0, 1], not {threshold!r}.")
