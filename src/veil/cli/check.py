"""``veil check``: measure every privacy model and the re-identification risk of a table.

Exit status 0 when the check ran (and every threshold given was met), 1 when a threshold was not
met, 2 on bad input.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional

import typer
from rich.markup import escape
from rich.table import Table as RichTable

from veil.cli.console import (Console, ENGINE, EXIT_FAILED_CHECK, MASTER, engine_named, fails_cleanly, parse_orders,
                              parse_pairs, reads_tables, split_names, stage, terminal)
from veil.errors import ParameterError

if TYPE_CHECKING:
    from veil.check import CheckReport

FORMATS = {"k": "{:.0f}", "l_distinct": "{:.0f}", "c_l_recursive": "{:.0f}", "k_map": "{:.0f}", "join": "{:.0f}"}
# Models measured only against a population: their rows are shown only when one was given.
PRESENCE_KEYS = ("delta_presence", "k_map")
# Join k-anonymity is measured only against an earlier release (--earlier).
JOIN_KEYS = ("join",)


def fmt(key: str, value: float | None) -> str:
    if value is None:
        return "n/a"
    if value == float("inf"):
        return "∞"
    return FORMATS.get(key, "{:.4g}").format(value)


def render(report: CheckReport, console: Console) -> None:
    """Print a check report as two readable tables."""
    from veil.check import SUMMARY_KEYS

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
    for key in SUMMARY_KEYS:
        result = report.results.get(key)
        if result is None and key in PRESENCE_KEYS + JOIN_KEYS:
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
    for note in report.notes:
        console.print(f"note: {note}", markup=False)


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
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
    engine: str = ENGINE,
    master: Optional[str] = MASTER,
) -> None:
    """Measure every privacy model and the re-identification risk of a table.

    Exits 1 when a threshold given with --k, --alpha, --l, --t, --delta, --beta, --delta-presence or
    --k-map is not met, or, with --earlier, join k-anonymity at --k and --l. With --engine spark the
    class × sensitive-value counts are aggregated by Spark and measured here.

    With --manifest, the quasi-identifiers and sensitive columns are those the manifest names,
    unless --qi and --sensitive are given.
    """
    from veil.check import check
    from veil.data.dataset import Dataset
    from veil.data.io import read_table
    from veil.manifests import combined, load_private, referenced_hierarchy
    from veil.models import JoinKAnonymity
    from veil.output import load_manifest
    from veil.spreadsheet import is_guarded, unguard_table

    if private is not None and manifest is None:
        raise ParameterError("--private is the private file of a release's manifest; give --manifest too.")
    if earlier_manifest is not None and earlier is None:
        raise ParameterError("--earlier-manifest describes the table given with --earlier; give --earlier too, or "
                             "leave --earlier-manifest out.")
    hierarchies = parse_pairs(hierarchy, "--hierarchy")
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
        ds = reader.dataset(source, quasi_identifiers=quasi, sensitive=sensitive_columns,
                            identifying=split_names(identifying),
                            hierarchies={c: h for c, h in hierarchies.items() if c not in given},
                            orders=parse_orders(order), delimiter=delimiter)
        pop = Dataset(population, quasi_identifiers=ds.quasi_identifiers, delimiter=delimiter) if population else None
    with stage("measuring the models and the risk"):
        report = check(ds, c=c, k=k, alpha=alpha, l=l, t=t, delta=delta, beta=beta,
                       risk_threshold=risk_threshold, population=pop,
                       delta_presence=parse_bounds(delta_presence), k_map=k_map, manifest=doc, hierarchies=given,
                       join=JoinKAnonymity(earlier, k, l, manifest=earlier_manifest) if earlier else None)
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
