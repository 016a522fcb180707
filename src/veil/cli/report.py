"""``veil report`` and ``veil dp report``: the HTML report of a release, from its manifest, and of
answers released under differential privacy, from what ``veil dp … --json`` printed or
the folders ``veil dp query`` wrote (shown as text without ``--out``).

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
    from veil.attacks.published_release import PublishedRelease
    from veil.data.dataset import Dataset
    from veil.errors import ParameterError
    from veil.manifests import private_path
    from veil.output.reading import load_manifest
    from veil.output.targets import check_targets
    from veil.output.writer import write_file
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
    if doc.get("kind") == "perturbation":   # statistical disclosure control (veil.sdc): its own report
        from veil.data.io import read_table
        from veil.report.sdc import render_sdc_html, sdc_report_from_manifest

        with stage("reading the release"):
            table = read_table(release, (doc.get("input") or {}).get("delimiter")).data
            html = render_sdc_html(sdc_report_from_manifest(doc, table))
        with stage(f"writing {target}"):
            write_file(target, html, reads=reads)
        terminal().print(f"wrote {target}", soft_wrap=True)
        return
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
    answers: List[Path] = typer.Argument(..., help="Answers as veil dp … --json printed them (JSON files), or the "
                                                   "folders veil dp query --out wrote."),
    out: Optional[Path] = typer.Option(None, "--out", help="The HTML report to write (without it, the folders of "
                                                           "veil dp query are shown as text)."),
    budget: Optional[Path] = typer.Option(None, "--budget", help="What veil dp budget … --json printed (a JSON "
                                                                 "file): ε and δ spent and left."),
    as_json: bool = typer.Option(False, "--json", help="Without --out: print the grouped answers and their "
                                                       "manifests as one JSON object."),
) -> None:
    """Write the report of answers released under differential privacy: each answer with its error
    bar, ε and δ spent, and the budget left (one self-contained HTML page).

    A folder written by veil dp query is a grouped answer: each of its aggregates is reported with a
    row per key. Without --out, such folders are shown as text (or, with --json, as JSON).
    Nothing is charged: the report only reads what was already released and shown.
    """
    from veil.errors import ParameterError
    from veil.output.targets import check_targets
    from veil.output.writer import write_file
    from veil.report import dp_report, render_dp_html
    from veil.report.dp import check_answer, check_budget
    from veil.report.dp_grouped import grouped_report_answers, is_grouped_release, read_grouped_release

    grouped = [path for path in answers if is_grouped_release(path)]
    if out is None:
        if len(grouped) != len(answers) or budget is not None:
            raise ParameterError("give --out FILE.html for a report of answers printed by veil dp … --json (and of "
                                 "a budget); without it, only the folders veil dp query wrote are shown.")
        _show_grouped([read_grouped_release(path) for path in answers], as_json)
        return
    if as_json:
        raise ParameterError("--json prints the grouped answers instead of writing a report; leave out --out or "
                             "--json.")
    reads = [*answers, budget]
    check_targets([out], reads=reads)
    parsed = []
    for path in answers:
        if is_grouped_release(path):
            manifest, frame = read_grouped_release(path)
            reads.append((path / "manifest.json" if path.is_dir() else path).parent / manifest["release"]["file"])
            parsed += [check_answer(a, repr(str(path))) for a in grouped_report_answers(manifest, frame)]
        else:
            parsed.append(check_answer(_json(path, "answer file"), repr(str(path))))
    shown = check_budget(_json(budget, "budget file"), repr(str(budget))) if budget is not None else None
    write_file(out, render_dp_html(dp_report(parsed, shown)), reads=reads)
    terminal().print(f"wrote {out}", soft_wrap=True)


def _show_grouped(releases: list, as_json: bool) -> None:
    """Print grouped answers (manifest and answers, as read) as text or one JSON object."""
    import json
    import sys

    from veil.report.dp_grouped import grouped_lines

    if as_json:
        doc = [{"manifest": {k: v for k, v in manifest.items() if k != "seal"},
                "answers": json.loads(frame.to_json(orient="records"))} for manifest, frame in releases]
        sys.stdout.write(json.dumps(doc[0] if len(doc) == 1 else doc, indent=2, ensure_ascii=False) + "\n")
        return
    console = terminal(soft_wrap=True)
    for i, (manifest, frame) in enumerate(releases):
        if i:
            console.print("", markup=False)
        for line in grouped_lines(frame, manifest):
            console.print(line, markup=False)


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
