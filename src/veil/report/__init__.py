"""The report a data steward reads and hands on: one self-contained HTML page per release.

:func:`release_report` gathers what the report says from a release's manifest and its published
table (the configuration in words, the transformation, every model's level per sensitive column,
the re-identification risk, the single-release attacks, the utility), with figures;
:func:`render_html` makes the page; :func:`report_html` does both, and :func:`release_report_of`
gathers the report of a :class:`~veil.anonymize.Release` still in memory. Answers released under
differential privacy get theirs from :func:`dp_report` and :func:`render_dp_html`.
"""

from __future__ import annotations

from veil.attacks.intersection import PublishedRelease
from veil.report.content import ReleaseReport, read_release_manifest, release_file, release_report
from veil.report.dp import DPReport, dp_report
from veil.report.figures import Figure
from veil.report.render import render_dp_html, render_html


def report_html(manifest, table, **options) -> str:
    """The HTML page of a release's report: :func:`release_report` then :func:`render_html`.

    Args:
        manifest: the release's manifest (a mapping).
        table: the published table (a path, a frame or a ``veil.data.io.Table``).
        **options: passed to :func:`release_report`.

    Raises:
        As :func:`release_report`.
    """
    return render_html(release_report(manifest, table, **options))


def release_report_of(release, **options) -> ReleaseReport:
    """The report of a release made in this process: its manifest and published table, with its
    input as the ungeneralized table the utility is compared with, and its hierarchies.

    Args:
        release: a :class:`veil.anonymize.Release`.
        **options: passed to :func:`release_report` (``risk_threshold``, ``attack_threshold``,
            ``earlier`` and ``targets``, ``title``, ``name``); the columns are the release's own
            (``Release.columns``).

    Raises:
        As :func:`release_report`.
    """
    ds = release.dataset
    if options.get("earlier") and "this_release" not in options:
        options["this_release"] = PublishedRelease.from_release(release, name="this release")
    options.setdefault("columns", release.columns)
    return release_report(release.curator_manifest, release.table, original=ds,
                          heights={q: g.height for q, g in ds.generalizations.items()},
                          sensitive_hierarchies={n: h for n, h in ds.hierarchies.items() if n in ds.sensitive},
                          **options)


__all__ = ["DPReport", "Figure", "ReleaseReport", "dp_report", "read_release_manifest", "release_file",
           "release_report", "release_report_of", "render_dp_html", "render_html", "report_html"]
