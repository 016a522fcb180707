"""``veil attack``: veil as the adversary, on any release (a released CSV and its roles suffice).

The lead registers this sub-app with ``app.add_typer(attack_app, name="attack")``. Errors a user
can cause are one sentence on standard error with exit status 2, as everywhere in veil.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from veil.attacks.intersection_cli import intersection_command
from veil.attacks.single import (DEFAULT_LEVEL, DEFAULT_SKEW, DEFAULT_THRESHOLD, ColumnAttacks,
                                 SingleReleaseReport, attack_release)
from veil.clitools import command_group, fails_cleanly, parse_pairs, split_names, stage
from veil.errors import ParameterError

attack_app = command_group(no_args_is_help=True, help="Attack a release the way an adversary would.")

# How many values or groups a summary line names before saying "and N more".
SHOWN = 3


@attack_app.command("single")
@fails_cleanly
def single_command(
    data: Path = typer.Argument(..., help="Released table (CSV or Parquet) to attack."),
    qi: str = typer.Option(..., "--qi", help="Quasi-identifying columns, comma-separated."),
    sensitive: str = typer.Option(..., "--sensitive", help="Sensitive columns, comma-separated."),
    hierarchy: List[str] = typer.Option([], "--hierarchy",
                                        help="COL=FILE: ARX hierarchy of a sensitive column (similarity groups)."),
    delimiter: Optional[str] = typer.Option(None, "--delimiter", help="CSV delimiter (default: sniffed)."),
    m: Optional[int] = typer.Option(None, "--m", help="Largest number of values the adversary rules out "
                                                      "(default: distinct values − 2, or where all are pinned)."),
    threshold: float = typer.Option(DEFAULT_THRESHOLD, "--threshold",
                                    help="Posterior at or above which a record counts as exposed, in (0, 1]."),
    skew: float = typer.Option(DEFAULT_SKEW, "--skew", help="Skewness factor (> 1): class share ÷ table share."),
    level: Optional[int] = typer.Option(None, "--level", help="Hierarchy level of the similarity groups "
                                                               f"(default {DEFAULT_LEVEL}); needs --hierarchy."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
) -> None:
    """Run the homogeneity, background-knowledge, skewness and similarity attacks on a release,
    and measure its disclosure (A_know, A_acc, δ).

    Generalized quasi-identifier values are read as text: records with equal values form a class.

    A hierarchy on a sensitive column (--hierarchy) gives the similarity attack its groups.
    """
    qis, sens = split_names(qi), split_names(sensitive)
    if not sens:
        raise ParameterError("--sensitive names no column; give the sensitive columns to attack.")
    hierarchies = parse_pairs(hierarchy, "--hierarchy")
    unused = [name for name in hierarchies if name in qis]
    for name in unused:
        del hierarchies[name]
    # A level out of range is refused by attack_release itself, with the range.
    if level is not None and level >= 1 and not hierarchies:
        raise ParameterError("--level sets the similarity attack's hierarchy level, which needs a sensitive "
                             "column's hierarchy; give --hierarchy COL=FILE or leave --level out.")
    with stage(f"attacking {data.name}"):
        report = attack_release(data, quasi_identifiers=qis, sensitive=sens, hierarchies=hierarchies,
                                delimiter=delimiter, max_m=m, threshold=threshold, skew=skew,
                                level=DEFAULT_LEVEL if level is None else level)
    for name in unused:
        report.notes.append(f"the hierarchy of quasi-identifier '{name}' was not used: the single-release "
                            "attacks read the released values as they are.")
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n")
    else:
        render_single(report, Console(highlight=False))


def _names(tally: dict[str, int]) -> str:
    shown = [f"{escape(label or '(missing)')} ({count:,})" for label, count in list(tally.items())[:SHOWN]]
    more = len(tally) - SHOWN
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _share(part: int, whole: int) -> str:
    return f"{part / max(whole, 1):.2%}"


def render_single(report: SingleReleaseReport, console: Console) -> None:
    """Print a single-release attack report as readable tables."""
    classes = report.classes
    ds = classes.dataset
    console.print(f"[bold]{classes.n_rows:,}[/] released records in [bold]{classes.n_classes:,}[/] classes; "
                  f"quasi-identifiers: {escape(', '.join(ds.quasi_identifiers))}; "
                  f"sensitive: {escape(', '.join(report.by_sensitive))}")
    for name, col in report.by_sensitive.items():
        _render_column(name, col, classes.n_rows, console)
    for note in report.notes:
        console.print(f"note: {note}", markup=False)


def _render_column(name: str, col: ColumnAttacks, n_rows: int, console: Console) -> None:
    table = RichTable(title=f"Attacks on '{escape(name)}'", title_justify="left")
    for head in ("attack", "classes", "records", "share", "what is learnt"):
        table.add_column(head, justify="right" if head in ("classes", "records", "share") else "left")
    h = col.homogeneity
    table.add_row("homogeneity", f"{len(h.classes):,}", f"{len(h.records):,}", _share(len(h.records), n_rows),
                  _names(h.summary()["values"]) or "nothing")
    bk = col.background_knowledge
    hit = [m for m in bk.m if bk.records_exposed[m]]
    detail = (f"from m = {hit[0]} on ({bk.records_exposed[hit[0]]:,} records then); per m below" if hit
              else "nothing")
    table.add_row(f"background knowledge (m ≤ {bk.max_m}, posterior ≥ {bk.threshold:g})", f"{len(bk.classes):,}",
                  f"{len(bk.records):,}", _share(len(bk.records), n_rows), detail)
    sk = col.skewness
    summary = sk.summary()
    detail = (f"values {_names(summary['values'])}; {sk.class_records:,} records in skewed classes"
              if len(sk.classes) else "nothing")
    table.add_row(f"skewness (ratio ≥ {sk.factor:g})", f"{len(sk.classes):,}", f"{len(sk.records):,}",
                  _share(len(sk.records), n_rows), detail)
    sim = col.similarity
    if sim is None:
        table.add_row("similarity", "", "", "", "[dim]no hierarchy[/]")
    else:
        groups = sim.summary()["groups"]
        detail = (f"groups {_names(groups)}; not homogeneous: {int((~sim.homogeneous).sum()):,} classes"
                  if groups else "nothing")
        table.add_row(f"similarity (level {sim.level})", f"{len(sim.classes):,}", f"{len(sim.records):,}",
                      _share(len(sim.records), n_rows), detail)
    console.print(table)
    per_m = RichTable(title=f"Background knowledge on '{escape(name)}': the adversary rules out m values",
                      title_justify="left")
    for head in ("m", "classes pinned", "records pinned", f"classes ≥ {bk.threshold:g}", f"records ≥ {bk.threshold:g}",
                 "share"):
        per_m.add_column(head, justify="right")
    for m in bk.m:
        per_m.add_row(str(m), f"{bk.classes_pinned[m]:,}", f"{bk.records_pinned[m]:,}", f"{bk.classes_exposed[m]:,}",
                      f"{bk.records_exposed[m]:,}", _share(int(bk.records_exposed[m]), n_rows))
    console.print(per_m)
    d = col.disclosure
    console.print(f"disclosure (Brickell & Shmatikov): A_know {d.a_know:.4g}, A_acc {d.a_acc:.4g} "
                  f"(guessing accuracy {d.accuracy_base:.2%} → {d.accuracy_base + d.a_acc:.2%}), "
                  f"δ {d.delta:.4g}, largest A_diff {d.a_diff.max():.4g}, largest A_quot {d.a_quot.max():.4g}")


attack_app.command("intersection")(intersection_command)
