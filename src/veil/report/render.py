"""A report as one self-contained HTML page: a release's, or DP answers'.

The page is rendered from a Jinja2 template shipped with veil (``templates/report.html.j2`` and
``templates/dp.html.j2``, on ``templates/base.html.j2``),
with every value escaped. Text from the data (a column name, a value, a query) cannot reorder the
page's own text: every value's bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE, …) are
written as escapes (``\u202e``), and a value set inside a sentence is isolated in ``<bdi>`` (the
``data`` filter), so right-to-left names read right and leave the sentence around them as it is.
Its style sheet and figures are inline, and it loads nothing: no
script, font, image or style sheet from a file or the network, so it reads the same on any
machine, offline, and when attached to a decision. A print style lays it out on A4.
"""

from __future__ import annotations

import functools

import jinja2
from markupsafe import Markup, escape

from veil.anonymize.columns import RARE_RECORDS, RARE_SHARE
from veil.errors import ParameterError
from veil.report.content import MODEL_NAMES, ReleaseReport
from veil.report.dp import DPReport
from veil.report.figures import Figure
from veil.report.measures import ATTACK_MEANING, DISCLOSURE_MEANINGS, model_meaning
from veil.untrusted import without_bidi_controls


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("veil.report", "templates"), finalize=_visible,
                             autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    env.filters["data"] = _data
    return env


def _visible(value):
    """Every value the page prints, its bidirectional controls written as escapes (markup, which
    veil built, is left as it is)."""
    return without_bidi_controls(value) if isinstance(value, str) and not isinstance(value, Markup) else value


def _data(value) -> Markup:
    """A value from the data set inside the page's text: isolated (``<bdi>``), so its direction
    never spills over the words around it."""
    return Markup("<bdi>{}</bdi>").format(without_bidi_controls(value))


def _number(value) -> str:
    if isinstance(value, str):
        return "∞" if value == "inf" else value
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}" if abs(value) < 1e15 else f"{value:.4g}"
    return f"{value:.4g}"


def _show(figure: Figure) -> Markup:
    return Markup('<figure id="figure-{key}">{svg}<figcaption>{caption}</figcaption></figure>\n').format(
        key=figure.key, svg=figure.svg, caption=escape(without_bidi_controls(figure.caption)))


WARNING_WORDS = {"date": "dates", "free_text": "free text", "rare_values": "rare values"}


def column_rows(report: ReleaseReport) -> list[dict]:
    """One row per input column for the report's column table: name, role, how it is published,
    distinct values published, records holding a rare value, and the warning's kind in words."""
    shown = {name: values for name, _, values in report.transformation}
    rows = []
    for column in report.columns:
        profile = column.profile
        if profile is not None:
            distinct, rare = f"{profile.distinct:,}", f"{profile.rare_records:,}"
        elif column.name in shown:
            distinct, rare = f"{shown[column.name]:,}", "—"
        else:
            distinct, rare = "—", "—"
        rows.append({"name": column.name, "role": column.role, "published": column.describe(), "distinct": distinct,
                     "rare": rare, "warning": WARNING_WORDS.get(column.warning or "", "")})
    return rows


def render_html(report: ReleaseReport) -> str:
    """The report as one HTML page (text), with its style sheet and figures inline.

    Raises:
        ParameterError: the report has no summary (it was not made by :func:`release_report`).
    """
    if report.summary is None:
        raise ParameterError("the report has no summary; make it with veil.report.release_report.")
    template = _environment().get_template("report.html.j2")
    return template.render(report=report, show=_show, number=_number, model_names=MODEL_NAMES,
                           model_meaning=model_meaning, disclosure_meanings=DISCLOSURE_MEANINGS,
                           attack_meaning=ATTACK_MEANING, column_rows=column_rows, rare_records=RARE_RECORDS,
                           rare_share=f"{RARE_SHARE:.0%}")


def render_dp_html(report: DPReport) -> str:
    """The report of DP answers as one HTML page (text), with its style sheet and figures inline."""
    template = _environment().get_template("dp.html.j2")
    return template.render(report=report, show=_show, number=_number)
