"""The report's figures as inline SVG: grouped horizontal bars and a step curve.

A figure is drawn by hand, as SVG text, so that the page needs no script, no font file and no
network to show it, prints sharply on paper, and stays small. Every figure carries its alt text
(an SVG ``<title>`` and ``<desc>`` the ``role="img"`` element is labelled by) and a caption.

The colours are the Okabe–Ito palette (Okabe and Ito, "Color Universal Design", 2008), whose
eight colours stay distinct to readers with any of the common colour-vision deficiencies; bars
of one chart also differ in their order and carry their numbers, so no figure relies on colour
alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from markupsafe import Markup
from markupsafe import escape as _html_escape

from veil.errors import ParameterError
from veil.untrusted import without_bidi_controls

# Okabe–Ito, without its yellow (too light on white paper) and black (kept for text).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")
INK = "#222222"
GRID = "#cccccc"
THRESHOLD = "#D55E00"

WIDTH = 640         # the drawing's width in SVG units; the page scales it to the column
LABEL_WIDTH = 190   # room for the category labels left of the bars
VALUE_WIDTH = 70    # room for the printed value right of the longest bar
BAR = 14            # one bar's thickness
GAP = 8             # between two categories
LEGEND = 22         # the legend's row


@dataclass(frozen=True)
class Figure:
    """One figure of the report.

    Attributes:
        key: an identifier unique within the report (used for the SVG's element ids).
        svg: the drawing, as SVG markup.
        alt: what the figure shows, in words, for a reader who cannot see it.
        caption: the caption printed under it.
    """

    key: str
    svg: Markup
    alt: str
    caption: str


def escape(text) -> Markup:
    """Text of a drawing: HTML-escaped, with its bidirectional controls written as escapes
    (``\u202e``), so that a label from the data never reverses the figure's other text."""
    return _html_escape(without_bidi_controls(text))


def _open(key: str, height: float, alt: str, title: str) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height:.0f}" width="{WIDTH}" '
            f'height="{height:.0f}" role="img" aria-labelledby="{key}-title {key}-desc" class="figure">',
            f'<title id="{key}-title">{escape(title)}</title>', f'<desc id="{key}-desc">{escape(alt)}</desc>',
            '<style>text{font-family:sans-serif;font-size:11px;fill:#222}</style>']


def _legend(names: Sequence[str], y: float) -> tuple[list[str], float]:
    """The legend's marks, wrapped onto as many rows as they need, and the height they take."""
    parts, x, row = [], LABEL_WIDTH, 0
    for i, name in enumerate(names):
        width = 30 + 7 * len(name)
        if x > LABEL_WIDTH and x + width > WIDTH:
            x, row = LABEL_WIDTH, row + 1
        top = y + row * LEGEND
        colour = PALETTE[i % len(PALETTE)]
        parts.append(f'<rect x="{x}" y="{top}" width="12" height="12" fill="{colour}"/>')
        parts.append(f'<text x="{x + 16}" y="{top + 10}">{escape(name)}</text>')
        x += width
    return parts, (row + 1) * LEGEND


def _clip(label: str, room: int = 30) -> str:
    return label if len(label) <= room else label[:room - 1] + "…"


def bar_chart(key: str, categories: Sequence[str], series: Mapping[str, Sequence[float]], *, title: str,
              alt: str, caption: str, fmt: Callable[[float], str] = "{:,.0f}".format,
              scale: Sequence[float] | None = None) -> Figure:
    """Grouped horizontal bars: one group per category, one bar per series in each group.

    Args:
        key: the figure's identifier (letters, digits and ``-``).
        categories: the label of each group, top to bottom.
        series: series name → one value (≥ 0) per category; drawn in the palette's order.
        title: the figure's title (its accessible name).
        alt: the figure's description in words.
        caption: the caption printed under it.
        fmt: how a value is printed beside its bar.
        scale: per category, the value a full-length bar stands for (each group is then drawn on
            its own scale, as when the categories are measured in different units); by default
            one scale, the largest value, serves every bar.

    Raises:
        ParameterError: a series has not one value per category, or a value is negative or not
            finite.
    """
    names = list(series)
    for name in names:
        values = series[name]
        if len(values) != len(categories):
            raise ParameterError(f"the series {name!r} has {len(values)} values for {len(categories)} categories; "
                                 "give one value per category.")
        if any(not math.isfinite(v) or v < 0 for v in values):
            raise ParameterError(f"the series {name!r} holds a negative or infinite value; bars need finite "
                                 "values of at least 0.")
    group = BAR * len(names) + GAP
    legend, legend_height = _legend(names, 4) if len(names) > 1 else ([], 0)
    top = legend_height + 6
    height = top + group * len(categories) + 4
    room = WIDTH - LABEL_WIDTH - VALUE_WIDTH
    largest = max([v for name in names for v in series[name]] + [0])
    parts = _open(key, height, alt, title) + legend
    parts.append(f'<line x1="{LABEL_WIDTH}" y1="{top - 2}" x2="{LABEL_WIDTH}" y2="{height - 2}" stroke="{INK}"/>')
    for c, category in enumerate(categories):
        y0 = top + c * group
        parts.append(f'<text x="{LABEL_WIDTH - 6}" y="{y0 + BAR * len(names) / 2 + 4:.1f}" text-anchor="end">'
                     f'{escape(_clip(str(category)))}</text>')
        full = scale[c] if scale is not None else largest
        for s, name in enumerate(names):
            value = float(series[name][c])
            length = room * value / full if full > 0 else 0.0
            y = y0 + s * BAR
            parts.append(f'<rect x="{LABEL_WIDTH}" y="{y}" width="{length:.1f}" height="{BAR - 2}" '
                         f'fill="{PALETTE[s % len(PALETTE)]}"><title>{escape(name)}: {escape(fmt(value))}</title>'
                         '</rect>')
            parts.append(f'<text x="{LABEL_WIDTH + length + 4:.1f}" y="{y + BAR - 4}">{escape(fmt(value))}</text>')
    parts.append("</svg>")
    return Figure(key, Markup("".join(parts)), alt, caption)


def step_chart(key: str, x: Sequence[float], y: Sequence[float], *, title: str, alt: str, caption: str,
               x_label: str, y_label: str, marker: float | None = None, marker_label: str = "") -> Figure:
    """A decreasing step curve on [0, 1] × [0, 1], such as the share of records at or above a risk.

    Args:
        key: the figure's identifier.
        x: the points where the curve steps, increasing, in [0, 1]; the curve starts at the first.
        y: the curve's value from each point on (up to the next), in [0, 1].
        title: the figure's title (its accessible name).
        alt: the figure's description in words.
        caption: the caption printed under it.
        x_label: the horizontal axis's name.
        y_label: the vertical axis's name.
        marker: an x at which a dashed vertical line is drawn (a threshold), or ``None``.
        marker_label: the marker's label.

    Raises:
        ParameterError: ``x`` and ``y`` differ in length, or a point lies outside [0, 1].
    """
    if len(x) != len(y):
        raise ParameterError(f"the curve has {len(x)} x values and {len(y)} y values; give one y per x.")
    if any(not 0 <= v <= 1 for v in list(x) + list(y)):
        raise ParameterError("the curve's points must lie in [0, 1] × [0, 1].")
    left, right, top, bottom, height = 60, WIDTH - 20, 12, 230, 270
    sx = lambda v: left + (right - left) * v  # noqa: E731 - the two scales read best inline
    sy = lambda v: bottom - (bottom - top) * v  # noqa: E731
    parts = _open(key, height, alt, title)
    for tick in (0, 0.25, 0.5, 0.75, 1):
        parts.append(f'<line x1="{left}" y1="{sy(tick):.1f}" x2="{right}" y2="{sy(tick):.1f}" stroke="{GRID}"/>')
        parts.append(f'<text x="{left - 6}" y="{sy(tick) + 4:.1f}" text-anchor="end">{tick:.0%}</text>')
        parts.append(f'<text x="{sx(tick):.1f}" y="{bottom + 16}" text-anchor="middle">{tick:g}</text>')
    parts.append(f'<text x="{(left + right) / 2}" y="{height - 6}" text-anchor="middle">{escape(x_label)}</text>')
    parts.append(f'<text x="14" y="{(top + bottom) / 2}" text-anchor="middle" '
                 f'transform="rotate(-90 14 {(top + bottom) / 2})">{escape(y_label)}</text>')
    points = [(float(x[0]), float(y[0]))] if len(x) else []
    for xi, yi in zip(x[1:], y[1:]):
        points += [(float(xi), points[-1][1]), (float(xi), float(yi))]
    if points:
        points.append((1.0, points[-1][1]))
    path = " ".join(f"{sx(px):.1f},{sy(py):.1f}" for px, py in points)
    parts.append(f'<polyline points="{path}" fill="none" stroke="{PALETTE[0]}" stroke-width="2"/>')
    if marker is not None:
        parts.append(f'<line x1="{sx(marker):.1f}" y1="{top}" x2="{sx(marker):.1f}" y2="{bottom}" '
                     f'stroke="{THRESHOLD}" stroke-width="2" stroke-dasharray="6 4"/>')
        parts.append(f'<text x="{sx(marker) + 4:.1f}" y="{top + 12}">{escape(marker_label)}</text>')
    parts.append(f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="{INK}"/>')
    parts.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="{INK}"/>')
    parts.append("</svg>")
    return Figure(key, Markup("".join(parts)), alt, caption)


def plain_number(value: float) -> str:
    """A number as a reader expects it: whole numbers in full with separators, others to four
    significant digits."""
    value = float(value)
    return f"{value:,.0f}" if value.is_integer() and abs(value) < 1e15 else f"{value:,.4g}"


def interval_chart(key: str, labels: Sequence[str], values: Sequence[float], lows: Sequence[float],
                   highs: Sequence[float], *, title: str, alt: str, caption: str,
                   fmt: Callable[[float], str] = plain_number) -> Figure:
    """Answers with their error bars, one row each, every row on its own scale: its interval in
    the middle half, so the answer's place within its interval shows at any magnitude.

    Args:
        key: the figure's identifier.
        labels: each row's label.
        values: each answer.
        lows: each interval's lower bound.
        highs: each interval's upper bound.
        title: the figure's title (its accessible name).
        alt: the figure's description in words.
        caption: the caption printed under it.
        fmt: how a number is printed.

    Raises:
        ParameterError: the sequences differ in length, a number is not finite, or an interval
            does not hold its answer.
    """
    if not len(labels) == len(values) == len(lows) == len(highs):
        raise ParameterError("give one value, one lower and one upper bound per label.")
    numbers = [float(v) for v in list(values) + list(lows) + list(highs)]
    if any(not math.isfinite(v) for v in numbers):
        raise ParameterError("an answer or a bound is not finite; error bars need finite numbers.")
    if any(not lo <= v <= hi for v, lo, hi in zip(values, lows, highs)):
        raise ParameterError("an interval does not hold its answer; give low ≤ value ≤ high.")
    row, top = 26, 8
    height = top + row * len(labels) + 6
    left, right = LABEL_WIDTH - 40, WIDTH - 220
    parts = _open(key, height, alt, title)
    for i, (label, v, lo, hi) in enumerate(zip(labels, values, lows, highs)):
        width = (float(hi) - float(lo)) or 1.0
        start, span = float(lo) - width / 2, 2 * width
        at = lambda x: left + (right - left) * (float(x) - start) / span  # noqa: E731 - this row's scale
        y = top + i * row + row / 2
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(_clip(str(label)))}</text>')
        parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="{GRID}"/>')
        parts.append(f'<line x1="{at(lo):.1f}" y1="{y:.1f}" x2="{at(hi):.1f}" y2="{y:.1f}" stroke="{PALETTE[0]}" '
                     'stroke-width="3"/>')
        for end in (lo, hi):
            parts.append(f'<line x1="{at(end):.1f}" y1="{y - 6:.1f}" x2="{at(end):.1f}" y2="{y + 6:.1f}" '
                         f'stroke="{PALETTE[0]}" stroke-width="2"/>')
        parts.append(f'<circle cx="{at(v):.1f}" cy="{y:.1f}" r="4" fill="{PALETTE[1]}"><title>{escape(label)}: '
                     f'{escape(fmt(v))} [{escape(fmt(lo))}, {escape(fmt(hi))}]</title></circle>')
        parts.append(f'<text x="{right + 8}" y="{y + 4:.1f}">{escape(fmt(v))} '
                     f'[{escape(fmt(lo))}, {escape(fmt(hi))}]</text>')
    parts.append("</svg>")
    return Figure(key, Markup("".join(parts)), alt, caption)
