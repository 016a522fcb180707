"""The ``veil`` command line.

Every error a user can cause is printed as one sentence on standard error with exit status 2;
no traceback, and no partial output file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table as RichTable

from veil.attacks import attack_release
from veil.attacks.cli import attack_app, render_single
from veil.check import SUMMARY_KEYS, CheckReport, check
from veil.clitools import (EXIT_FAILED_CHECK, command_group, fails_cleanly, parse_orders, parse_pairs,
                           progress_bar, split_names, stage)
from veil.config import AnonymizationConfig, load_config, write_starter_config
from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE, load_adult
from veil.data.dataset import Dataset
from veil.dp.cli import dp_app
from veil.errors import ParameterError
from veil.experiments.cli import experiment_app
from veil.ldp.cli import ldp_app
from veil.output import OutputSet, load_manifest

app = command_group(no_args_is_help=True, help="Privacy-preserving data publishing: check, anonymize, attack, release.")


def _print_version(value: bool) -> None:
    if value:
        from veil import __version__

        typer.echo(f"veil {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                 help="Print veil's version and exit."),
) -> None:
    """Privacy-preserving data publishing: check, anonymize, attack, release."""

FORMATS = {"k": "{:.0f}", "l_distinct": "{:.0f}", "c_l_recursive": "{:.0f}"}


def fmt(key: str, value: float | None) -> str:
    if value is None:
        return "n/a"
    if value == float("inf"):
        return "∞"
    return FORMATS.get(key, "{:.4g}").format(value)


def render(report: CheckReport, console: Console) -> None:
    """Print a check report as two readable tables."""
    ds = report.classes.dataset
    console.print(f"[bold]{report.rows:,}[/] records in [bold]{report.classes.n_classes:,}[/] equivalence classes; "
                  f"quasi-identifiers: {', '.join(ds.quasi_identifiers)}; "
                  f"sensitive: {', '.join(ds.sensitive) or 'none'}")
    table = RichTable(title="Privacy models", title_justify="left")
    table.add_column("key", no_wrap=True)
    table.add_column("model", no_wrap=True)
    table.add_column("level", justify="right", no_wrap=True)
    table.add_column("threshold", justify="right")
    table.add_column("verdict")
    for key in SUMMARY_KEYS:
        result = report.results.get(key)
        if result is None:
            table.add_row(key, "[dim]does not apply[/]", "n/a", "", "")
            continue
        verdict = "" if result.passed is None else ("[green]pass[/]" if result.passed else
                                                    f"[red]fail[/] ({len(result.failing_classes):,})")
        threshold = fmt(key, result.threshold) if result.threshold is not None else ""
        table.add_row(key, result.model, fmt(key, result.level), threshold, verdict)
    console.print(table)
    risk = report.risk
    rt = RichTable(title=f"Re-identification risk (records at risk: risk > {risk.threshold:g})", title_justify="left")
    for head in ("attacker", "highest", "average", "records at risk"):
        rt.add_column(head, justify="left" if head == "attacker" else "right")
    rt.add_row("prosecutor", f"{risk.prosecutor_max:.4g}", f"{risk.prosecutor_avg:.4g}",
               f"{risk.prosecutor_at_risk:.2%}")
    if risk.journalist_max is not None:
        rt.add_row("journalist", f"{risk.journalist_max:.4g}", f"{risk.journalist_avg:.4g}",
                   f"{risk.journalist_at_risk:.2%}")
    rt.add_row("marketer", "", f"{risk.marketer:.4g}", "")
    console.print(rt)
    if risk.records_below_k is not None:
        console.print(f"{risk.records_below_k:,} records are in classes smaller than k = {risk.k}.")
    for note in report.notes:
        console.print(f"note: {note}", markup=False)


@app.command("check")
@fails_cleanly
def check_command(
    data: Path = typer.Argument(..., help="CSV or Parquet table to check."),
    qi: str = typer.Option(..., "--qi", help="Quasi-identifying columns, comma-separated."),
    sensitive: Optional[str] = typer.Option(None, "--sensitive", help="Sensitive columns, comma-separated."),
    identifying: Optional[str] = typer.Option(None, "--identifying", help="Identifying columns (ignored)."),
    hierarchy: List[str] = typer.Option([], "--hierarchy", help="COL=FILE: an ARX hierarchy CSV; repeatable."),
    order: List[str] = typer.Option([], "--order", help="COL=v1,v2,… or COL=FILE: value order of an ordinal column."),
    delimiter: Optional[str] = typer.Option(None, "--delimiter", help="CSV delimiter (default: sniffed)."),
    c: float = typer.Option(2.0, "--c", help="c of recursive (c,ℓ)-diversity."),
    k: Optional[int] = typer.Option(None, "--k", help="Check k-anonymity (and (α,k)) at this k."),
    alpha: Optional[float] = typer.Option(None, "--alpha", help="Check (α,k)-anonymity at this α."),
    l: Optional[float] = typer.Option(None, "--l", help="Check the ℓ-diversity models at this ℓ."),
    t: Optional[float] = typer.Option(None, "--t", help="Check t-closeness at this t."),
    delta: Optional[float] = typer.Option(None, "--delta", help="Check δ-disclosure privacy at this δ."),
    beta: Optional[float] = typer.Option(None, "--beta", help="Check β-likeness at this β."),
    risk_threshold: float = typer.Option(0.2, "--risk-threshold", help="Risk above which a record is at risk."),
    population: Optional[Path] = typer.Option(None, "--population", help="Population table for journalist risk."),
    manifest: Optional[Path] = typer.Option(
        None, "--manifest", help="The release's manifest: judge it as veil anonymize did (the input's reference "
                                 "distributions; rows all * are its suppressed records when it shows them)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
) -> None:
    """Measure every privacy model and the re-identification risk of a table.

    Exits 1 when a threshold given with --k, --alpha, --l, --t, --delta or --beta is not met.
    """
    with stage(f"loading {data.name}"):
        ds = Dataset(data, quasi_identifiers=split_names(qi), sensitive=split_names(sensitive),
                     identifying=split_names(identifying), hierarchies=parse_pairs(hierarchy, "--hierarchy"),
                     orders=parse_orders(order), delimiter=delimiter)
        pop = Dataset(population, quasi_identifiers=ds.quasi_identifiers, delimiter=delimiter) if population else None
    with stage("measuring the models and the risk"):
        report = check(ds, c=c, k=k, alpha=alpha, l=l, t=t, delta=delta, beta=beta,
                       risk_threshold=risk_threshold, population=pop,
                       manifest=load_manifest(manifest, release=data) if manifest else None)
    report.notes.extend(ds.stray_text_notes())
    emit(report, as_json)
    if report.passed is False:
        raise typer.Exit(EXIT_FAILED_CHECK)


def emit(report: CheckReport, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2) + "\n")
    else:
        render(report, Console(highlight=False))


def render_release(release, console: Console) -> None:
    """Print what an anonymization did: the transformation, suppression, models and metrics."""
    ds = release.dataset
    manifest = release.manifest
    console.print(f"[bold]{release.algorithm}[/]: {ds.num_rows:,} records → {release.table.num_rows:,} released "
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
    models = RichTable(title="Privacy models on the release", title_justify="left")
    for head in ("model", "sensitive", "level", "threshold", "verdict"):
        models.add_column(head, justify="right" if head in ("level", "threshold") else "left")
    for row in manifest["models"]:
        verdict = "[green]pass[/]" if row["passed"] else "[red]fail[/]"
        level = row["level"] if isinstance(row["level"], str) else f"{row['level']:.4g}"
        models.add_row(row["model"], row["sensitive"] or "", level, f"{row['threshold']:g}", verdict)
    console.print(models)
    metrics = RichTable(title="Utility (information loss unless noted)", title_justify="left")
    metrics.add_column("metric")
    metrics.add_column("value", justify="right")
    for key, value in manifest["metrics"].items():
        metrics.add_row(key, value if isinstance(value, str) else f"{value:.6g}")
    console.print(metrics)


def files_read(cfg: AnonymizationConfig, config: Path) -> list[Path]:
    """Every file an anonymization reads: the configuration, the table and each hierarchy file."""
    return [config, cfg.data] + [spec.path for spec in cfg.hierarchies.values() if spec.path is not None]


@app.command("anonymize")
@fails_cleanly
def anonymize_command(
    data: Optional[Path] = typer.Argument(None, help="Table to anonymize; overrides the config's data path."),
    config: Path = typer.Option(..., "--config", help="YAML configuration (see `veil init`)."),
    out: Path = typer.Option(..., "--out", help="Where to write the released table (CSV)."),
    manifest: Optional[Path] = typer.Option(None, "--manifest", help="Where to write the manifest (JSON), which "
                                                                     "names the release and its SHA-256."),
    as_json: bool = typer.Option(False, "--json", help="Print the manifest instead of tables."),
) -> None:
    """Anonymize a table as a configuration says, writing the release and its manifest.

    The release and the manifest appear together or not at all; no output may replace a file the
    run reads (the table, the configuration, a hierarchy file).
    """
    cfg = load_config(config, data=data)
    outputs = OutputSet([out] + ([manifest] if manifest else []), reads=files_read(cfg, config))
    with stage(f"loading {cfg.data.name}"):
        ds = cfg.dataset()
    anonymizer = cfg.anonymizer()
    with progress_bar("searching") as progress:
        anonymizer.fit(ds, progress=progress)
    with stage("transforming"):
        release = anonymizer.transform(ds, suppressed=cfg.output.suppressed, shuffle=cfg.output.shuffle,
                                       rng=cfg.output.seed)
        # Full-domain generalization reads a column through its hierarchy only; the other
        # algorithms treat a text column as nominal, which a stray text value makes silently.
        notes = ds.stray_text_notes() if cfg.algorithm.name != "fulldomain" else []
        document = {**release.manifest, "config": cfg.to_dict(), **({"notes": notes} if notes else {})}
    with stage(f"writing {out}"), outputs:
        outputs.put(out, release.csv_text())
        if manifest:
            manifest_text = outputs.put_manifest(manifest, document, describes={"release": out})
        else:
            manifest_text = json.dumps({**document, "release": outputs.describe(out)}, indent=2,
                                       ensure_ascii=False) + "\n"
        outputs.commit()
    if as_json:
        sys.stdout.write(manifest_text)
    else:
        console = Console(highlight=False)
        render_release(release, console)
        for note in notes:
            console.print(f"note: {note}", markup=False)
        console.print(f"wrote {out}" + (f" and {manifest}" if manifest else ""), soft_wrap=True)


@app.command("init")
@fails_cleanly
def init_command(
    data: Path = typer.Argument(..., help="Table to write a starter configuration for."),
    out: Optional[Path] = typer.Option(None, "--out", help="Configuration file to write (default: DATA.yaml)."),
    delimiter: Optional[str] = typer.Option(None, "--delimiter", help="CSV delimiter (default: sniffed)."),
    force: bool = typer.Option(False, "--force", help="Overwrite an existing configuration."),
) -> None:
    """Write a commented starter configuration for a table, guessing roles and hierarchies.

    The configuration never replaces the table itself, even with --force.
    """
    target = out if out is not None else data.with_suffix(".yaml")
    with stage(f"reading {data.name}"):
        write_starter_config(data, target, delimiter=delimiter, overwrite=force)
    Console(highlight=False).print(f"wrote {target}; every role and hierarchy marked '# guessed' is a guess: "
                                   "review them before anonymizing.")


DEMO_MODELS = "5-anonymity and entropy 3-diversity of occupation, at most 2 % suppressed"


@app.command("demo")
@fails_cleanly
def demo_command(
    out: Path = typer.Option(Path("veil-demo"), "--out", help="Folder for release.csv and manifest.json."),
    as_json: bool = typer.Option(False, "--json", help="Print the manifest instead of tables."),
) -> None:
    """Anonymize the bundled Adult census extract (30,162 records), then attack the release.

    Quasi-identifiers: sex, age, race, marital-status, education, native-country, workclass;
    sensitive: occupation. Optimal full-domain generalization for 5-anonymity and entropy
    3-diversity with at most 2 % of the records suppressed, then the homogeneity, background-
    knowledge, skewness and similarity attacks and the disclosure measures on the release;
    writes OUT/release.csv (the input's delimiter and column order) and OUT/manifest.json.
    """
    from veil.anonymize import FullDomain
    from veil.models import EntropyLDiversity, KAnonymity

    if out.exists() and not out.is_dir():
        raise ParameterError(f"{str(out)!r} is a file; give a folder for the demo's outputs.")
    release_path, manifest_path = out / "release.csv", out / "manifest.json"
    outputs = OutputSet([release_path, manifest_path], make_folders=True)
    with stage("loading the bundled Adult table"):
        ds = load_adult(ADULT_QUASI_IDENTIFIERS, ADULT_SENSITIVE)
    anonymizer = FullDomain([KAnonymity(5), EntropyLDiversity(3, sensitive="occupation")],
                            suppression_limit=0.02, metric="loss")
    with progress_bar("searching") as progress:
        anonymizer.fit(ds, progress=progress)
    with stage("transforming and attacking"):
        release = anonymizer.transform(ds)
        attacks = attack_release(release)
    with stage(f"writing {out}"), outputs:
        outputs.put(release_path, release.csv_text())
        manifest_text = outputs.put_manifest(manifest_path, {**release.manifest, "attacks": attacks.to_dict()},
                                             describes={"release": release_path})
        outputs.commit()
    if as_json:
        sys.stdout.write(manifest_text)
        return
    console = Console(highlight=False)
    console.print(f"veil demo: Adult, {DEMO_MODELS}\n")
    render_release(release, console)
    console.print("\n[bold]The adversary's view[/]: attacks on the release itself")
    render_single(attacks, console)
    console.print(f"wrote {release_path} and {manifest_path}")


app.add_typer(attack_app, name="attack", help="Attack a release as an adversary who knows the algorithm.")
app.add_typer(experiment_app, name="experiment", help="Reproduce the published experiments.")
app.add_typer(dp_app, name="dp", help="Answer queries under differential privacy, charging a budget.")
app.add_typer(ldp_app, name="ldp", help="Local differential privacy: frequency oracles, simulated or for real.")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
