"""``veil report`` and ``veil dp report``: the HTML report of a release, from its manifest, and of
answers released under differential privacy, from what ``veil dp … --json`` printed.

The report is one self-contained page (see :mod:`veil.report`). It is written whole or not at
all, and never over a file the run reads (the manifest, the release, the original table).
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from veil.cli.console import fails_cleanly, files_named, parse_pairs, reads_tables, stage, terminal


@fails_cleanly
@reads_tables
def report_command(
    manifest: Path = typer.Argument(..., help="The release's manifest (JSON), written with it by veil anonymize."),
    out: Optional[Path] = typer.Option(None, "--out", help="The HTML report to write (default: report.html beside "
                                                           "the manifest)."),
    original: Optional[Path] = typer.Option(None, "--original", help="The ungeneralized input table, to compare "
                                                                     "the utility metrics with."),
    risk_threshold: float = typer.Option(0.2, "--risk-threshold", help="Prosecutor risk above which a record is "
                                                                       "at risk, in (0, 1]."),
    threshold: float = typer.Option(0.8, "--threshold", help="Posterior at or above which the background-knowledge "
                                                             "adversary counts a record as exposed, in (0, 1]."),
    earlier: List[Path] = typer.Option([], "--earlier", help="The manifest of an earlier release of the same people "
                                                             "(repeatable): run the intersection attack with it."),
    targets: Optional[Path] = typer.Option(None, "--targets", help="The people the intersection attack locates (their "
                                                                   "quasi-identifiers; default: --original)."),
    hierarchy: List[str] = typer.Option([], "--hierarchy", help="COL=FILE: the ARX hierarchy of a sensitive column "
                                                                "(the similarity attack's groups); repeatable."),
    private: Optional[Path] = typer.Option(None, "--private", help="The manifest's private file (default: the one "
                                                                   "beside the manifest)."),
) -> None:
    """Write a release's report: one self-contained HTML page with its configuration, models,
    risk, the attacks on it and its utility, with figures, readable printed on A4.

    The release is the file the manifest names, checked against the SHA-256 it records; what the
    report says of the input table comes from the manifest's private file. With
    --earlier, the intersection attack locates the targets (--targets, or the --original table) in
    this release and the earlier ones together.
    """
    from veil.attacks.intersection import PublishedRelease
    from veil.data.dataset import Dataset
    from veil.errors import ParameterError
    from veil.manifests import private_path
    from veil.output import check_targets, load_manifest, write_file
    from veil.report import read_release_manifest, release_file, report_html

    target = out if out is not None else manifest.parent / "report.html"
    doc = read_release_manifest(manifest, private=private)
    release = release_file(manifest, doc)
    people = targets if targets is not None else original
    if earlier and people is None:
        raise ParameterError("--earlier runs the intersection attack, which needs the people it locates; give "
                             "--targets FILE or --original FILE.")
    previous = []
    for path in earlier:
        # an earlier release is read as the adversary holds it: its published manifest
        earlier_doc = load_manifest(path)
        previous.append(PublishedRelease(release_file(path, earlier_doc), manifest=path, name=path.name,
                                         delimiter=(earlier_doc.get("input") or {}).get("delimiter") or ","))
    reads = [manifest, private or private_path(manifest), release, original, targets, *earlier,
             *(p.table for p in previous), *files_named(hierarchy, "--hierarchy")]
    check_targets([target], reads=reads)
    roles = doc["roles"]
    with stage("reading the release and attacking it"):
        base = None
        if original is not None:
            base = Dataset(original, quasi_identifiers=roles["quasi_identifiers"], sensitive=roles.get("sensitive"),
                           delimiter=(doc.get("input") or {}).get("delimiter"))
        html = report_html(doc, release, original=base, risk_threshold=risk_threshold, attack_threshold=threshold,
                           earlier=previous, targets=people,
                           sensitive_hierarchies=parse_pairs(hierarchy, "--hierarchy"))
    with stage(f"writing {target}"):
        write_file(target, html, reads=reads)
    terminal().print(f"wrote {target}", soft_wrap=True)


@fails_cleanly
def dp_report_command(
    answers: List[Path] = typer.Argument(..., help="Answers as veil dp … --json printed them (JSON files)."),
    out: Path = typer.Option(..., "--out", help="The HTML report to write."),
    budget: Optional[Path] = typer.Option(None, "--budget", help="What veil dp budget … --json printed (a JSON "
                                                                 "file): ε and δ spent and left."),
) -> None:
    """Write the report of answers released under differential privacy: each answer with its error
    bar, ε and δ spent, and the budget left (one self-contained HTML page).

    Nothing is charged: the report only reads what was already released and shown.
    """
    from veil.output import check_targets, write_file
    from veil.report import dp_report, render_dp_html
    from veil.report.dp import check_answer, check_budget

    reads = [*answers, budget]
    check_targets([out], reads=reads)
    parsed = [check_answer(_json(path, "answer file"), repr(str(path))) for path in answers]
    shown = check_budget(_json(budget, "budget file"), repr(str(budget))) if budget is not None else None
    write_file(out, render_dp_html(dp_report(parsed, shown)), reads=reads)
    terminal().print(f"wrote {out}", soft_wrap=True)


def _json(path: Path, what: str):
    import json

    from veil.errors import DataError

    from veil.inputs import read_text

    try:
        return json.loads(read_text(path, what))  # a regular file (a pipe never ends), of a document's size
    except (DataError, json.JSONDecodeError) as exc:
        if isinstance(exc, DataError) and "not UTF-8" not in str(exc):
            raise
        raise DataError(f"{what} {str(path)!r} is not JSON; give what veil dp … --json printed.") from None
