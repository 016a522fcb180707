"""``veil anonymize``, ``veil init`` and ``veil demo``: anonymize a table as a configuration says,
write a starter configuration, and run the whole round (anonymize, attack, write) on Adult.

The release, its manifest and the manifest's private file (see :mod:`veil.manifests`) appear
together or not at all, and no output replaces a file the run reads (see :mod:`veil.output`).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.markup import escape
from rich.table import Table as RichTable

from veil.cli.console import Console, fails_cleanly, progress_bar, reads_tables, stage, terminal
from veil.errors import ParameterError

if TYPE_CHECKING:
    from veil.anonymize import Release
    from veil.config import AnonymizationConfig


def render_release(release: Release, console: Console) -> None:
    """Print what an anonymization did: the transformation, every column, the suppression, the
    models, the metrics and the warnings (what its curator sees: the manifest with its private
    file's sections)."""
    from veil.metrics import METRICS

    ds = release.dataset
    manifest = release.curator_manifest
    console.print(f"[bold]{release.algorithm}[/]: {ds.num_rows:,} records → {release.num_rows:,} released "
                  f"in {manifest['classes']['released']:,} classes")
    if "node" in manifest:
        levels = ", ".join(f"{q} {lv}/{ds.generalizations[q].height}" for q, lv in manifest["node"].items())
        console.print(f"generalization levels: {levels}")
    share = manifest["suppression"]["share"]
    console.print(f"suppressed: {release.suppressed_records:,} records ({share:.2%}; limit "
                  f"{release.suppression_limit:.2%}, {release.suppressed_style})")
    if "search" in manifest:
        search = manifest["search"]
        proof = "proven optimal" if search["proven_optimal"] else "[yellow]not proven optimal[/]"
        console.print(f"search: {search['nodes_checked']:,} of {search['nodes_total']:,} nodes checked, "
                      f"{proof} for {search['metric']}, {search['seconds']:.3f} s")
    render_columns(release, console)
    models = RichTable(title="Privacy models on the release", title_justify="left")
    for head in ("model", "sensitive", "level", "threshold", "verdict"):
        models.add_column(head, justify="right" if head in ("level", "threshold") else "left")
    for row in manifest["models"]:
        verdict = "[green]pass[/]" if row["passed"] else "[red]fail[/]"
        level = row["level"] if isinstance(row["level"], str) else f"{row['level']:.4g}"
        models.add_row(row["model"], row["sensitive"] or "", level, f"{row['threshold']:g}", verdict)
    console.print(models)
    metrics = RichTable(title="Utility", title_justify="left")
    metrics.add_column("metric")
    metrics.add_column("value", justify="right")
    metrics.add_column("better")
    for key, value in manifest["metrics"].items():
        better = "higher" if key in METRICS and METRICS[key].higher_is_better else "lower"
        metrics.add_row(key, value if isinstance(value, str) else f"{value:.6g}", better)
    console.print(metrics)
    for warning in manifest.get("warnings", ()):
        console.print(f"[yellow]warning[/]: {warning}", soft_wrap=True)


WARNING_WORDS = {"date": "dates", "free_text": "free text", "rare_values": "rare values"}


def render_columns(release: Release, console: Console) -> None:
    """Print every input column with its role, how the release publishes it and the warning its
    published values call for (the sentences follow with the release's warnings)."""
    table = RichTable(title="Columns of the release", title_justify="left")
    for head in ("column", "role", "published", "warning"):
        table.add_column(head)
    for column in release.columns:
        published = column.describe()
        if column.profile is not None:
            published += f" ({column.profile.distinct:,} distinct values)"
        warning = f"[yellow]{WARNING_WORDS[column.warning]}[/]" if column.warning else ""
        table.add_row(escape(column.name), column.role, published, warning)
    console.print(table)


def files_read(cfg: AnonymizationConfig, config: Path) -> list[Path]:
    """Every file an anonymization reads: the configuration, the table, each hierarchy file and
    each population a presence model names."""
    return ([config, cfg.data] + [spec.path for spec in cfg.hierarchies.values() if spec.path is not None]
            + cfg.populations())


def wrote(paths) -> str:
    """``wrote A, B and C``, the private file of a manifest flagged as one to keep."""
    from veil.manifests import PRIVATE_SUFFIX

    names = [f"{p} (private: keep it, do not publish it)" if str(p).endswith(PRIVATE_SUFFIX) else str(p)
             for p in paths]
    return f"wrote {', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else f"wrote {names[0]}"


@fails_cleanly
@reads_tables
def anonymize_command(
    data: Optional[Path] = typer.Argument(None, help="Table to anonymize; overrides the config's data path."),
    config: Path = typer.Option(..., "--config", help="YAML configuration (see `veil init`)."),
    out: Path = typer.Option(..., "--out", help="Where to write the released table (CSV)."),
    manifest: Optional[Path] = typer.Option(None, "--manifest", help="Where to write the manifest (JSON), which "
                                                                     "names the release and its SHA-256; its "
                                                                     "private file goes beside it "
                                                                     "(NAME.private.json)."),
    report: Optional[Path] = typer.Option(None, "--report", help="Also write the release's report (one "
                                                                 "self-contained HTML page)."),
    as_json: bool = typer.Option(False, "--json", help="Print the manifest instead of tables."),
    keep_order: bool = typer.Option(False, "--keep-order", help="Publish the rows in the input's order instead of "
                                                                "shuffled (as output: {shuffle: false} does); the "
                                                                "manifest and the ledger's gate flag such a release, "
                                                                "which another release of the table in the same order "
                                                                "joins by position."),
    spreadsheet_guard: bool = typer.Option(False, "--spreadsheet-guard",
                                           help="Write ' before every text cell a spreadsheet would run as a formula "
                                                "(=, +, -, @ …, numbers excepted), as output: {spreadsheet_guard: "
                                                "true} does; the manifest says so."),
    engine: Optional[str] = typer.Option(None, "--engine", help="local or spark: where the records are read and "
                                                                "counted (default: the configuration's engine)."),
    master: Optional[str] = typer.Option(None, "--master", help="The Spark master (default: the configuration's "
                                                                "engine master): local[*], local[N], spark://HOST:PORT, "
                                                                "yarn."),
) -> None:
    """Anonymize a table as a configuration says, writing the release and its manifest.

    The manifest is published with the release; its private file (beside it, NAME.private.json)
    holds what was derived from the input table (its size, the value map, the reference
    distributions, the metrics) and is kept by the curator: veil check, report and publish read
    it. The rows are shuffled with the secure source unless --keep-order (or output: {shuffle:
    false}) keeps the input's order, which the manifest then warns about. The release, the
    manifest, its private file and the report appear together or not at all; no output may
    replace a file the run reads (the table, the configuration, a hierarchy file). With the Spark
    engine (--engine spark, or 'engine:' in the configuration) the release is written by Spark as
    a new folder of Parquet (OUT ending in .parquet) or CSV part files. A method of statistical
    disclosure control (algorithm: localsuppression, pram, swap, noise or topcoding, after a
    full-domain recoding with recode: fulldomain) writes the perturbed table, its manifest and its
    private file the same way, with the risk before and after (local engine only).
    """
    from veil.config import load_config
    from veil.config.sdc_section import SDC_ALGORITHMS
    from veil.engines import make_engine
    from veil.manifests import private_path, put_private
    from veil.output.writer import OutputSet

    cfg = load_config(config, data=data)
    if cfg.algorithm.name in SDC_ALGORITHMS:
        # statistical disclosure control: a perturbed release (veil.sdc), on the local engine
        if keep_order:
            cfg = dataclasses.replace(cfg, output=dataclasses.replace(cfg.output, shuffle=False))
        if spreadsheet_guard:
            cfg = dataclasses.replace(cfg, output=dataclasses.replace(cfg.output, spreadsheet_guard=True))
        if (engine or cfg.engine.name) == "spark" or master is not None:
            raise ParameterError(f"the {cfg.algorithm.name} algorithm runs on the local engine only; set engine to "
                                 "local and leave --master out.")
        publish_perturbed(cfg, config, out, manifest, report, as_json)
        return
    if keep_order and cfg.algorithm.name == "alphabeta":
        raise ParameterError("--keep-order applies to generalized or partitioned releases; an αβ view is published "
                             "sorted by tuple, so leave --keep-order out.")
    if keep_order:
        # The manifest records the configuration the release was made with, this flag included.
        cfg = dataclasses.replace(cfg, output=dataclasses.replace(cfg.output, shuffle=False))
    if spreadsheet_guard and cfg.algorithm.name == "alphabeta":
        raise ParameterError("--spreadsheet-guard applies to generalized or partitioned releases; an αβ view publishes "
                             "the values of public domains, so leave it out.")
    if spreadsheet_guard:
        cfg = dataclasses.replace(cfg, output=dataclasses.replace(cfg.output, spreadsheet_guard=True))
    name = engine or cfg.engine.name
    spark = name == "spark"
    if spark and cfg.algorithm.name == "alphabeta":
        # αβ draws a coin per record of the table, which a summary of distinct rows does not hold.
        raise ParameterError("the alphabeta algorithm runs on the local engine only; set engine to local.")
    if master is not None and not spark:
        raise ParameterError("--master applies only with the Spark engine (--engine spark, or engine: spark in the "
                             "configuration).")
    if report is not None and cfg.algorithm.name == "alphabeta":
        raise ParameterError("--report describes a generalized or partitioned release; the αβ algorithm publishes "
                             "a view, so leave --report out.")
    if cfg.output.spreadsheet_guard and spark:
        raise ParameterError("the spreadsheet guard is written by the local engine only; leave it out or use the "
                             "local engine.")
    if report is not None and spark:
        # The report reads the published table in memory, which only the local engine holds.
        raise ParameterError("--report reads the published table in memory, which the Spark engine does not hold; "
                             "leave --report out or use the local engine.")
    reader = make_engine(name, master=master or cfg.engine.master, config=cfg.engine.config)
    secret = private_path(manifest) if manifest and cfg.algorithm.name != "alphabeta" else None
    outputs = OutputSet([out] + ([manifest] if manifest else []) + ([secret] if secret else [])
                        + ([report] if report else []), reads=files_read(cfg, config), folders=[out] if spark else ())
    with stage(f"loading {cfg.data.name}"):
        ds = cfg.dataset(engine=reader) if spark else cfg.dataset()
        if not spark:
            cfg.check_against(ds)   # a population size below the sample, at its model's line
    if cfg.algorithm.name == "alphabeta":
        from veil.cli.alphabeta import publish_view

        publish_view(cfg, ds, outputs, out, manifest, as_json)
        return
    anonymizer = cfg.anonymizer()
    with progress_bar("searching") as progress:
        anonymizer.fit(ds, progress=progress)
    with stage("transforming"):
        release = anonymizer.transform(ds, suppressed=cfg.output.suppressed, shuffle=cfg.output.shuffle,
                                       rng=cfg.output.seed).guard_spreadsheets(cfg.output.spreadsheet_guard)
        # Full-domain generalization reads a column through its hierarchy only; the other
        # algorithms treat a text column as nominal, which a stray text value makes silently.
        notes = ds.stray_text_notes() if cfg.algorithm.name != "fulldomain" else []
        document = {**release.manifest, "config": cfg.to_dict()}
        # The notes name values of the input: the curator's, never published.
        private = {**release.private_manifest, **({"notes": notes} if notes else {})}
    if report is not None:
        from veil.report import release_report_of, render_html

        with stage("attacking the release for its report"):
            report_text = render_html(release_report_of(release))
    with stage(f"writing {out}"), outputs:
        reader.put_release(outputs, release, out)  # the local engine's in pieces: never held whole
        if report is not None:
            outputs.put(report, report_text)
        if manifest:
            put_private(outputs, secret, private, describes={"release": out})
            manifest_text = outputs.put_manifest(manifest, document, describes={"release": out})
        else:
            manifest_text = json.dumps({**document, "release": outputs.describe(out)}, indent=2,
                                       ensure_ascii=False) + "\n"
        outputs.commit()
    if as_json:
        sys.stdout.write(manifest_text)
    else:
        console = terminal()
        render_release(release, console)
        for note in notes:
            console.print(f"note: {note}", markup=False)
        console.print(wrote([p for p in (out, manifest, secret, report) if p is not None]), soft_wrap=True,
                      markup=False)


def publish_perturbed(cfg: AnonymizationConfig, config: Path, out: Path, manifest: Path | None,
                      report: Path | None, as_json: bool) -> None:
    """Run a method of statistical disclosure control (:func:`veil.sdc.pipeline.run_sdc`) and write
    its release, manifest, private file and report as one set; print what it did."""
    from veil.manifests import private_path
    from veil.output.writer import OutputSet
    from veil.sdc.pipeline import run_sdc

    secret = private_path(manifest) if manifest else None
    outputs = OutputSet([out] + ([manifest, secret] if manifest else []) + ([report] if report else []),
                        reads=files_read(cfg, config))
    with stage(f"loading {cfg.data.name}"):
        ds = cfg.dataset()
        cfg.check_against(ds)
    with stage(f"{cfg.algorithm.name}"):
        release = run_sdc(cfg, ds)
    if report is not None:
        from veil.report.sdc import render_sdc_html, sdc_report

        with stage("writing the report"):
            report_text = render_sdc_html(sdc_report(release))
    with stage(f"writing {out}"), outputs:
        if report is not None:
            outputs.put(report, report_text)
        manifest_text = release.put(outputs, out, manifest, secret, extra={"config": cfg.to_dict()})
        outputs.commit()
    if as_json:
        sys.stdout.write(manifest_text)
        return
    console = terminal()
    render_perturbed(release, console)
    console.print(wrote([p for p in (out, manifest, secret, report) if p is not None]), soft_wrap=True,
                  markup=False)


def render_perturbed(release, console: Console) -> None:
    """Print what a method of statistical disclosure control did: the method and its parameters,
    the columns perturbed, the cells suppressed, the risk before and after, and whether the release
    is fit for release (what its curator sees)."""
    sdc = release.manifest["sdc"]
    console.print(f"[bold]{release.method}[/]: {release.dataset.num_rows:,} records → {release.num_rows:,} released; "
                  f"perturbed: {', '.join(sdc['perturbed']) or 'nothing'}", soft_wrap=True)
    if release.recoding is not None and release.recoding.get("node"):
        levels = ", ".join(f"{q} {lv}" for q, lv in release.recoding["node"].items())
        console.print(f"recoded first (fulldomain): levels {levels}; {release.suppressed_records:,} records "
                      "suppressed")
    if "suppressed_cells" in sdc:
        cells = ", ".join(f"{c} {n:,}" for c, n in sdc["suppressed_cells"].items())
        utility = release.utility
        compare = (f" (suppressing whole records would blank {utility['record_suppression_cells']:,})"
                   if "record_suppression_cells" in utility else "")
        proof = "proven minimal" if utility.get("optimal") else "greedy, not proven minimal"
        console.print(f"suppressed cells: {utility.get('cells', 0):,}{compare}, {proof}; per column: {cells or 'none'}",
                      soft_wrap=True)
    table = RichTable(title="Re-identification risk (Benedetti–Franconi)", title_justify="left")
    for head in ("", "before", "after"):
        table.add_column(head, justify="right" if head else "left")
    before, after = release.risk_before, release.risk_after
    rows = [("smallest key frequency (k)", "k", "{:,}"), ("sample uniques", "sample_uniques", "{:,}"),
            ("expected re-identifications", "expected_reidentifications", "{:.4g}"), ("rate", "rate", "{:.4%}"),
            ("largest individual risk", "max", "{:.4g}")]
    for label, key, form in rows:
        table.add_row(label, form.format(before[key]), form.format(after[key]))
    for threshold in before["above"]:
        table.add_row(f"records above {threshold}", f"{before['above'][threshold]:.2%}",
                      f"{after['above'][threshold]:.2%}")
    console.print(table)
    if release.fit_for_release:
        console.print("fit for release: every draw came from the secure source")
    else:
        console.print(f"[yellow]not fit for release[/]: {'; '.join(release.not_fit_because)}", soft_wrap=True)
    for warning in release.warnings:
        console.print(f"[yellow]warning[/]: {warning}", soft_wrap=True)


@fails_cleanly
@reads_tables
def init_command(
    data: Path = typer.Argument(..., help="Table to write a starter configuration for."),
    out: Optional[Path] = typer.Option(None, "--out", help="Configuration file to write (default: DATA.yaml)."),
    delimiter: Optional[str] = typer.Option(None, "--delimiter", help="CSV delimiter (default: sniffed)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing configuration."),
) -> None:
    """Write a commented starter configuration for a table, guessing roles and hierarchies.

    The configuration never replaces the table itself, even with --force.
    """
    from veil.config import write_starter_config

    target = out if out is not None else data.with_suffix(".yaml")
    with stage(f"reading {data.name}"):
        write_starter_config(data, target, delimiter=delimiter, overwrite=force)
    terminal().print(f"wrote {target}; every role and hierarchy marked '# guessed' is a guess: "
                                   "review them before anonymizing.")


DEMO_MODELS = "5-anonymity and entropy 3-diversity of occupation, at most 2 % suppressed"


@fails_cleanly
def demo_command(
    out: Path = typer.Option(Path("veil-demo"), "--out", help="Folder for the release, its manifest and the ledger."),
    as_json: bool = typer.Option(False, "--json", help="Print the manifest instead of tables."),
) -> None:
    """Anonymize the bundled Adult census extract (30,162 records), attack the release, and publish it
    through a release ledger that refuses a second release of the same people.

    Quasi-identifiers: sex, age, race, marital-status, education, native-country, workclass;
    sensitive: occupation. Optimal full-domain generalization for 5-anonymity and entropy
    3-diversity with at most 2 % of the records suppressed, then the homogeneity, background-
    knowledge, skewness and similarity attacks and the disclosure measures on the release;
    writes OUT/release.csv (the input's delimiter and column order), OUT/manifest.json, its
    private file OUT/manifest.private.json (to keep, not to publish) and the release's report,
    OUT/report.html (one self-contained page for the curator). The
    release is then published through the gate of the ledger OUT/ledger.db; a second release with
    the same models, optimized for discernibility instead of loss (OUT/refused/), is refused
    there, because intersected with the first it pins a person's occupation. OUT must not hold an
    earlier demo.
    """
    from veil.anonymize import FullDomain
    from veil.attacks import attack_release
    from veil.cli.attack import render_single
    from veil.cli.ledger import render_decision
    from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE, adult_csv, load_adult
    from veil.ledger import Ledger
    from veil.manifests import private_path, put_private
    from veil.models import EntropyLDiversity, KAnonymity
    from veil.output.writer import OutputSet
    from veil.report import release_report_of, render_html

    if out.exists() and not out.is_dir():
        raise ParameterError(f"{str(out)!r} is a file; give a folder for the demo's outputs.")
    release_path, manifest_path, report_path = out / "release.csv", out / "manifest.json", out / "report.html"
    held = [path.name for path in (release_path, manifest_path, out / "ledger.db") if path.exists()]
    if held:
        raise ParameterError(f"{str(out)!r} holds an earlier demo ({', '.join(held)}), whose ledger would publish a "
                             "second release under the same name; give --out a new folder, or remove that one.")
    second_path, second_manifest = out / "refused" / "release.csv", out / "refused" / "manifest.json"
    outputs = OutputSet([release_path, manifest_path, private_path(manifest_path), report_path, second_path,
                         second_manifest, private_path(second_manifest)], make_folders=True)
    with stage("loading the bundled Adult table"):
        ds = load_adult(ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE)

    def anonymizer(metric: str) -> FullDomain:
        return FullDomain([KAnonymity(5), EntropyLDiversity(3, sensitive="occupation")], suppression_limit=0.02,
                          metric=metric)

    first = anonymizer("loss")
    with progress_bar("searching") as progress:
        first.fit(ds, progress=progress)
    with stage("transforming and attacking"):
        release = first.transform(ds)
        attacks = attack_release(release)
    with stage("a second release of the same people, for discernibility"):
        second = anonymizer("discernibility").fit_transform(ds)
    with stage("writing the release's report"):
        report_text = render_html(release_report_of(release))
    with stage(f"writing {out}"), outputs:
        outputs.put(release_path, release.csv_chunks())
        # The attacks' findings read the input's distributions: the curator's, in the private file.
        put_private(outputs, private_path(manifest_path), {**release.private_manifest, "attacks": attacks.to_dict()},
                    describes={"release": release_path})
        manifest_text = outputs.put_manifest(manifest_path, release.manifest, describes={"release": release_path})
        outputs.put(report_path, report_text)
        outputs.put(second_path, second.csv_text())
        put_private(outputs, private_path(second_manifest), second.private_manifest,
                    describes={"release": second_path})
        outputs.put_manifest(second_manifest, second.manifest, describes={"release": second_path})
        outputs.commit()
    ledger, _ = Ledger.init(out / "ledger.db")
    try:
        with stage("publishing through the ledger's gate"):
            ledger.add_population("adult")
            published = ledger.publish(manifest_path, population="adult", data=adult_csv())
            refused = ledger.publish(second_manifest, population="adult", data=adult_csv(),
                                     name=f"{out.name}/refused/release.csv (optimized for discernibility)")
    finally:
        ledger.close()
    if as_json:
        sys.stdout.write(manifest_text)
        return
    console = terminal()
    console.print(f"veil demo: Adult, {DEMO_MODELS}\n")
    render_release(release, console)
    console.print("\n[bold]The adversary's view[/]: attacks on the release itself")
    render_single(attacks, console)
    console.print(wrote([release_path, manifest_path, private_path(manifest_path), report_path]), soft_wrap=True,
                  markup=False)
    lines = terminal(soft_wrap=True)
    lines.print(f"\n[bold]The release ledger[/] {out / 'ledger.db'}: this release passes its gate; a second one of "
                "the same people, with the same models optimized for discernibility, does not")
    render_decision(published, lines)
    render_decision(refused, lines)
