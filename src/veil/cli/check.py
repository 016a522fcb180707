"""``veil check``: measure every privacy model and the re-identification risk of a table.

Exit status 0 when the check ran (and every threshold given was met), 1 when a threshold was not
met, 2 on bad input.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

import typer

from veil.cli.console import (ENGINE, EXIT_FAILED_CHECK, MASTER, engine_named, fails_cleanly, parse_orders,
                              parse_pairs, reads_tables, split_names, stage, terminal)
from veil.check import JOIN_KEYS, PRESENCE_KEYS
from veil.check import format_level as fmt
from veil.errors import ParameterError

if TYPE_CHECKING:
    from veil.check import CheckReport
    from veil.cli.rich_console import Console

def render(report: CheckReport, console: Console) -> None:
    """Print a check report as two readable tables."""
    from rich.markup import escape  # only here: --json prints without Rich
    from rich.table import Table as RichTable

    from veil.check import RISK_KEYS, SUMMARY_KEYS

    ds = report.classes.dataset
    # Column names are the table's text: shown as written, never read as markup.
    console.print(f"[bold]{report.rows:,}[/] records in [bold]{report.classes.n_classes:,}[/] equivalence classes; "
                  f"quasi-identifiers: {escape(', '.join(ds.quasi_identifiers))}; "
                  f"sensitive: {escape(', '.join(ds.sensitive)) or 'none'}")
    table = RichTable(title="Privacy models", title_justify="left")
    table.add_column("key", no_wrap=True)
    table.add_column("model", no_wrap=True)
    table.add_column("level", justify="right", no_wrap=True)
    table.add_column("threshold", justify="right")
    table.add_column("verdict")
    for key in SUMMARY_KEYS + RISK_KEYS:
        result = report.results.get(key)
        if result is None and key in PRESENCE_KEYS + JOIN_KEYS + RISK_KEYS:
            continue
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
    render_sample(report, console)
    for note in report.notes:
        console.print(f"note: {note}", markup=False)


def render_sample(report: CheckReport, console: Console) -> None:
    """Print the sample risk, the population uniqueness and the SUDA2 figures that were measured."""
    from rich.table import Table as RichTable

    from veil.check import suda_summary

    if report.sample is not None:
        figures = report.sample_summary()
        threshold = report.risk.threshold
        st = RichTable(title=f"Sample risk (Benedetti–Franconi; records at risk: risk > {threshold:g})",
                       title_justify="left")
        for head in ("risk", "highest", "average", "records at risk", "expected re-identifications"):
            st.add_column(head, justify="left" if head == "risk" else "right")
        st.add_row("individual", f"{figures['individual_risk_max']:.4g}", f"{figures['individual_risk_mean']:.4g}",
                   f"{figures['records_at_risk']:.2%}", f"{figures['expected_reidentifications']:.4g}")
        if "household_risk_max" in figures:
            st.add_row("household", f"{figures['household_risk_max']:.4g}", f"{figures['household_risk_mean']:.4g}",
                       f"{figures['household_records_at_risk']:.2%}",
                       f"{figures['household_expected_reidentifications']:.4g}")
        console.print(st)
    if report.uniqueness is not None:
        estimate = report.uniqueness
        chosen = f"{estimate.estimator}, {estimate.chosen}" if estimate.chosen != estimate.estimator else estimate.estimator
        share = estimate.population_uniques
        figure = (f"{share:.4%} of the population estimated unique" if math.isfinite(share) else
                  "the estimate is not available (its equation has no root for this sample)")
        console.print(f"Population uniqueness ({chosen}; population of {estimate.population_size:,}): {figure}; "
                      f"{estimate.sample_uniques:.4%} of the records are unique in the sample.", markup=False)
    if report.suda is not None:
        figures = suda_summary(report.suda)
        console.print(f"SUDA2 (MSUs up to size {figures['max_size']}, DIS fraction {figures['dis']:g}): "
                      f"{figures['records_with_msu']:,} records have a minimal sample unique; highest SUDA score "
                      f"{figures['score_max']:.4g}, highest DIS-SUDA score {figures['dis_score_max']:.4g}.",
                      markup=False)


@fails_cleanly
@reads_tables
def check_command(
    data: Path = typer.Argument(..., help="CSV or Parquet table to check."),
    qi: Optional[str] = typer.Option(None, "--qi", help="Quasi-identifying columns, comma-separated (default with "
                                                        "--manifest: the roles it names)."),
    sensitive: Optional[str] = typer.Option(None, "--sensitive", help="Sensitive columns, comma-separated."),
    identifying: Optional[str] = typer.Option(None, "--identifying", help="Identifying columns (ignored)."),
    hierarchy: List[str] = typer.Option([], "--hierarchy", help="COL=FILE: an ARX hierarchy CSV; repeatable. With "
                                                                "--manifest, a quasi-identifier's hierarchy "
                                                                "generalizes the population (default: the file the "
                                                                "manifest names)."),
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
    population: Optional[Path] = typer.Option(
        None, "--population", help="Population table: journalist risk, δ-presence and k-map against it."),
    delta_presence: Optional[str] = typer.Option(
        None, "--delta-presence", help="DMIN,DMAX: check δ-presence against the population (e.g. 0,0.5)."),
    k_map: Optional[int] = typer.Option(None, "--k-map", help="Check k-map against the population at this k."),
    manifest: Optional[Path] = typer.Option(
        None, "--manifest", help="The release's manifest: judge it as veil anonymize did (rows all * are its "
                                 "suppressed records when it shows them; a population is generalized to its "
                                 "levels through the hierarchies)."),
    private: Optional[Path] = typer.Option(
        None, "--private", help="The release's private file, with the input's reference distributions (default: "
                                "the one beside the manifest, when it is there)."),
    earlier: Optional[Path] = typer.Option(
        None, "--earlier", help="An earlier release of the same records (its manifest, or its table): measure join "
                                "k-anonymity of this table as a second release given it, at --k and --l."),
    earlier_manifest: Optional[Path] = typer.Option(
        None, "--earlier-manifest", help="The earlier release's manifest, when --earlier is its table."),
    weight: Optional[str] = typer.Option(
        None, "--weight", help="Sampling weight column: the table is a sample; measure its Benedetti–Franconi "
                               "individual and global risk."),
    strata: Optional[str] = typer.Option(
        None, "--strata", help="Strata columns, comma-separated: population frequencies are estimated within each."),
    household: Optional[str] = typer.Option(
        None, "--household", help="Household ID column: the household risk too (a household is at risk when any "
                                  "member is)."),
    risk_method: Optional[str] = typer.Option(
        None, "--risk-method", help="exact (default) or approx (sdcMicro's default) individual risk."),
    population_size: Optional[int] = typer.Option(
        None, "--population-size", help="Estimate the share of population uniques for a population of N records."),
    estimator: Optional[str] = typer.Option(
        None, "--estimator", help="Population uniqueness estimator: dankar (default), pitman, zayatz or snb."),
    suda_size: Optional[int] = typer.Option(
        None, "--suda", help="SUDA2: minimal sample uniques up to this size, with SUDA and DIS-SUDA scores."),
    dis: Optional[float] = typer.Option(None, "--dis", help="Sampling fraction for DIS-SUDA (default 0.1; with "
                                                            "--suda)."),
    max_risk_rate: Optional[float] = typer.Option(
        None, "--max-risk-rate", help="Check the average risk: expected re-identifications per record (the "
                                      "Benedetti–Franconi risk) at most this."),
    max_share_at_risk: Optional[float] = typer.Option(
        None, "--max-share-at-risk", help="Check the share of records whose individual risk exceeds "
                                          "--risk-threshold: at most this."),
    max_uniqueness: Optional[float] = typer.Option(
        None, "--max-uniqueness", help="Check population uniqueness (with --population-size): the estimated share "
                                       "of population uniques at most this."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
    engine: str = ENGINE,
    master: Optional[str] = MASTER,
) -> None:
    """Measure every privacy model and the re-identification risk of a table.

    Exits 1 when a threshold given with --k, --alpha, --l, --t, --delta, --beta, --delta-presence,
    --k-map, --max-risk-rate, --max-share-at-risk or --max-uniqueness is not met, or, with --earlier,
    join k-anonymity at --k and --l. With --engine spark the
    class × sensitive-value counts are aggregated by Spark and measured here.

    With --manifest, the quasi-identifiers and sensitive columns are those the manifest names,
    unless --qi and --sensitive are given.

    With --weight, --strata or --household the table is taken as a survey sample and its
    Benedetti–Franconi risk is shown (records at risk: above --risk-threshold); with
    --population-size, the estimated population uniqueness; with --suda, SUDA2's scores.
    """
    from veil.check import check
    from veil.data.dataset import Dataset
    from veil.data.io import read_table
    from veil.manifests import combined, load_private, referenced_hierarchy
    from veil.models import JoinKAnonymity
    from veil.output.reading import load_manifest
    from veil.spreadsheet import is_guarded, unguard_table

    if private is not None and manifest is None:
        raise ParameterError("--private is the private file of a release's manifest; give --manifest too.")
    if earlier_manifest is not None and earlier is None:
        raise ParameterError("--earlier-manifest describes the table given with --earlier; give --earlier too, or "
                             "leave --earlier-manifest out.")
    hierarchies = parse_pairs(hierarchy, "--hierarchy")
    survey = {"weight": weight, "strata": split_names(strata) if strata else None, "household": household}
    surveyed = any(survey.values())
    if risk_method is not None and not surveyed:
        raise ParameterError("--risk-method chooses how the sample risk is measured; give --weight, --strata or "
                             "--household too.")
    if estimator is not None and population_size is None:
        raise ParameterError("--estimator chooses how population uniqueness is estimated; give --population-size "
                             "too.")
    if max_uniqueness is not None and population_size is None:
        raise ParameterError("--max-uniqueness bounds the estimated population uniqueness; give --population-size "
                             "too.")
    if dis is not None and suda_size is None:
        raise ParameterError("--dis is the sampling fraction of DIS-SUDA; give --suda too.")
    if surveyed and engine != "local":
        raise ParameterError("sampling weights, strata and households are read by the local engine; leave --engine "
                             "out.")
    doc = load_manifest(manifest, release=data) if manifest else None
    quasi, sensitive_columns = roles_of(qi, sensitive, doc)
    # A released table publishes its quasi-identifiers generalized: their hierarchies generalize the
    # population to the manifest's levels, not the published cells.
    given = {q: h for q, h in hierarchies.items() if q in quasi} if manifest else {}
    if manifest:
        doc = combined(doc, load_private(manifest, doc, private))
        if population is not None:
            # the hierarchy files the manifest names (checked by their SHA-256), for those not given
            for q in quasi:
                named = None if q in given else referenced_hierarchy(doc, q, manifest.parent)
                if named is not None:
                    given[q] = named
    reader = engine_named(engine, master)
    source = data
    if is_guarded(doc):
        # written with the spreadsheet guard: read it as it was released
        if engine != "local":
            raise ParameterError("a release written with the spreadsheet guard is read by the local engine; leave "
                                 "--engine out.")
        source = unguard_table(read_table(data, delimiter).data)
    with stage(f"loading {data.name}"):
        roles = {"quasi_identifiers": quasi, "sensitive": sensitive_columns,
                 "identifying": split_names(identifying),
                 "hierarchies": {c: h for c, h in hierarchies.items() if c not in given},
                 "orders": parse_orders(order), "delimiter": delimiter}
        ds = Dataset(source, **roles, **survey) if surveyed else reader.dataset(source, **roles)
        pop = Dataset(population, quasi_identifiers=ds.quasi_identifiers, delimiter=delimiter) if population else None
    with stage("measuring the models and the risk"):
        report = check(ds, c=c, k=k, alpha=alpha, l=l, t=t, delta=delta, beta=beta,
                       risk_threshold=risk_threshold, population=pop,
                       delta_presence=parse_bounds(delta_presence), k_map=k_map, manifest=doc, hierarchies=given,
                       join=JoinKAnonymity(earlier, k, l, manifest=earlier_manifest) if earlier else None,
                       risk_method=risk_method or "exact", population_size=population_size,
                       estimator=estimator or "dankar", suda_size=suda_size, dis=0.1 if dis is None else dis,
                       max_risk_rate=max_risk_rate, max_share_at_risk=max_share_at_risk,
                       max_uniqueness=max_uniqueness)
    report.notes.extend(ds.stray_text_notes())
    emit(report, as_json)
    if report.passed is False:
        raise typer.Exit(EXIT_FAILED_CHECK)


def roles_of(qi: Optional[str], sensitive: Optional[str], manifest: Optional[dict]) -> tuple[list[str], list[str]]:
    """The quasi-identifiers and sensitive columns to check: those given, else the manifest's roles.

    Raises:
        ParameterError: no --qi and no manifest, or a manifest that names no quasi-identifier.
    """
    roles = (manifest or {}).get("roles") or {}
    if qi is None:
        if manifest is None:
            raise ParameterError("give the quasi-identifying columns with --qi, or the release's manifest with "
                                 "--manifest, which names them.")
        quasi = [str(name) for name in roles.get("quasi_identifiers") or []]
        if not quasi:
            raise ParameterError("the manifest names no quasi-identifier; give them with --qi.")
    else:
        quasi = split_names(qi)
    if sensitive is None:
        return quasi, [str(name) for name in roles.get("sensitive") or []]
    return quasi, split_names(sensitive)


def parse_bounds(text: str | None) -> tuple[float, float] | None:
    """``DMIN,DMAX`` as two numbers.

    Raises:
        ParameterError: the text is not two comma-separated numbers.
    """
    if text is None:
        return None
    parts = text.split(",")
    try:
        low, high = (float(p) for p in parts)
    except ValueError:
        raise ParameterError(f"--delta-presence takes DMIN,DMAX (two numbers, e.g. 0,0.5), not {text!r}.") from None
    return low, high


def emit(report: CheckReport, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2) + "\n")
    else:
        render(report, terminal())
