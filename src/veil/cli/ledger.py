"""``veil ledger`` and ``veil publish``: the release ledger and its publishing gate.

``veil ledger init|status|history|verify|import`` create, inspect and verify a ledger
(``--ledger``, else ``$VEIL_LEDGER``, else ``veil-ledger.db``: an SQLite file, or a
``postgresql://`` URL). ``veil publish MANIFEST --population P [--data TABLE]`` passes a release
through the gate (:mod:`veil.ledger.gate`) and exits 0 when it was published, 1 when it was
refused (every reason on standard output), 2 on bad input. Every command has ``--json``.
"""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, List, Optional

import typer

from veil.cli.console import (Console, EXIT_FAILED_CHECK, command_group, fails_cleanly, parse_orders, parse_pairs, reads_tables,
                              stage, terminal)

#: The ledger the commands use when neither --ledger nor $VEIL_LEDGER names one.
DEFAULT_LEDGER = "veil-ledger.db"

ledger_app = command_group(no_args_is_help=True,
                           help="The release ledger: what was published and spent, and its proof.")

LEDGER = typer.Option(DEFAULT_LEDGER, "--ledger", envvar="VEIL_LEDGER", show_envvar=True,
                      help="The ledger: an SQLite file, or a postgresql:// URL.")
BY = typer.Option(None, "--by", help="Who writes the entries (default: the operating-system user).")
JSON = typer.Option(False, "--json", help="Print one JSON object.")
POLICY = typer.Option(None, "--policy", help="A veil configuration file with a policy: section (it may hold "
                                             "that section alone).")


def _print_json(doc: dict) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def _console() -> Console:
    return terminal(soft_wrap=True)


@contextmanager
def opened(location: str, by: Optional[str] = None) -> Iterator:
    """A :class:`veil.ledger.Ledger`, its connections closed when the command is done."""
    from veil.ledger import Ledger

    ledger = Ledger(location, by=by)
    try:
        yield ledger
    finally:
        ledger.close()


def load_gate_policy(path: Optional[Path]):
    """The :class:`veil.ledger.policy.Policy` of a configuration file's ``policy:`` section, or ``None``."""
    if path is None:
        return None
    from veil.config import load_policy
    from veil.ledger.policy import Policy

    return Policy.from_spec(load_policy(path))


# ------------------------------------------------------------------------------ veil ledger

@ledger_app.command("init")
@fails_cleanly
def init_command(ledger: str = LEDGER, policy: Optional[Path] = POLICY, by: Optional[str] = BY,
                 as_json: bool = JSON) -> None:
    """Create the ledger, or migrate it to this veil's schema (safe to run again).

    With --policy, the populations its policy: section defines are added (a population that
    exists must be defined the same way: a budget never changes).
    """
    from veil.ledger import Ledger

    rules = load_gate_policy(policy)
    made, applied = Ledger.init(ledger, by=by)
    try:
        added = []
        for pop in rules.populations if rules is not None else ():
            made.add_population(pop.name, budget=pop.template(), key_column=pop.key_column, relation=pop.relation)
            added.append(pop.name)
        status = made.status()
    finally:
        made.close()
    if as_json:
        _print_json({"ledger": made.location, "ledger_id": status["ledger_id"],
                     "schema_version": status["schema_version"], "migrations": applied, "populations": added})
        return
    what = "already current" if not applied else "created" if applied[0] == 1 else "migrated"
    _console().print(f"ledger {made.location}: {what} (schema {status['schema_version']}, id {status['ledger_id']})"
                     + (f"; populations {', '.join(added)}" if added else ""), markup=False)


@ledger_app.command("status")
@fails_cleanly
def status_command(ledger: str = LEDGER, as_json: bool = JSON) -> None:
    """Per population: the budget spent and left, its tables and releases; and the log's head."""
    with opened(ledger) as made:
        status = made.status()
    if as_json:
        _print_json(status)
        return
    console = _console()
    head = status["head"]
    console.print(f"ledger {status['ledger']} (id {status['ledger_id']}, schema {status['schema_version']}); "
                  f"head: entry {head['seq']} {head['hash']}", markup=False)
    if not status["populations"]:
        console.print("no population yet", markup=False)
    for pop in status["populations"]:
        who = f"key column {pop['key_column']!r}" if pop["key_column"] else "one table"
        console.print(f"population {pop['name']!r} ({who}): tables {pop['datasets']}, releases "
                      f"{len(pop['releases'])}, charges {pop['charges']}", markup=False)
        budget = pop["budget"]
        if budget is not None:
            total, spent, left = budget["total"], budget["spent"], budget["left"]
            console.print(f"  budget ε = {total['epsilon']:g}, δ = {total['delta']:g} ({budget['composition']}): "
                          f"spent ε = {spent['epsilon']:.6g}, δ = {spent['delta']:.6g}; left ε = "
                          f"{left['epsilon']:.6g}, δ = {left['delta']:.6g}", markup=False)
            if "rho" in budget:  # a zCDP budget, composed in ρ: the (ε, δ) above is its tight conversion
                rho = budget["rho"]
                console.print(f"  in ρ (zCDP): budget ρ = {rho['total']:g}, spent ρ = {rho['spent']:.6g}, left ρ = "
                              f"{rho['left']:.6g}; the ε above is what ρ implies at that δ", markup=False)
            if isinstance(pop.get("unit"), dict):  # a row-level budget says nothing, as before units
                console.print(f"  protects a person by column {pop['unit']['person']!r}: a row-level release is "
                              "refused", markup=False)
        for release in pop["releases"]:
            console.print(f"  release {release['id']}: {release['name']} ({release['kind']}), "
                          f"{release['at'][:19].replace('T', ' ')} by {release['by']}", markup=False)


@ledger_app.command("history")
@fails_cleanly
def history_command(ledger: str = LEDGER,
                    population: Optional[str] = typer.Option(None, "--population",
                                                             help="Only the entries about this population."),
                    limit: Optional[int] = typer.Option(None, "--limit", help="Only the newest N entries."),
                    as_json: bool = JSON) -> None:
    """The decision log, oldest first: who did what, when, and why (with the warnings of each release decided on)."""
    with opened(ledger) as made:
        entries = made.history(population, limit=limit)
    if as_json:
        _print_json({"entries": entries})
        return
    console = _console()
    for e in entries:
        console.print(f"{e['seq']:>5}  {e['at'][:19].replace('T', ' ')}  {e['by']}  {e['action']}: {e['summary']}",
                      markup=False)
        for warning in e.get("warnings") or ():
            console.print(f"       warning: {warning}", markup=False)


@ledger_app.command("verify")
@fails_cleanly
def verify_command(ledger: str = LEDGER, as_json: bool = JSON) -> None:
    """Check every entry's hash and link, the anchor, and every row against its entry; exit 1 on any problem."""
    with opened(ledger) as made:
        report = made.verify()
    if as_json:
        _print_json(report.to_dict())
    else:
        console = _console()
        if report.ok:
            console.print(f"ledger {report.location}: {report.entries} entries verified; head entry "
                          f"{report.head.seq} {report.head.hash}", markup=False)
        for problem in report.problems:
            console.print(f"problem: {problem}", markup=False)
    if not report.ok:
        raise typer.Exit(EXIT_FAILED_CHECK)


@ledger_app.command("import")
@fails_cleanly
def import_command(budget_file: Path = typer.Argument(..., help="A JSON budget file of an earlier veil."),
                   ledger: str = LEDGER,
                   population: Optional[str] = typer.Option(None, "--population",
                                                            help="The population to keep it as (default: the "
                                                                 "file's name)."),
                   by: Optional[str] = BY) -> None:
    """Move a budget file of an earlier veil, its budget and every charge, into the ledger (once)."""
    with opened(ledger, by) as made:
        name = made.import_budget_file(budget_file, population=population)
    _console().print(f"imported {budget_file} into {ledger} as population {name}; the file is left as it was, "
                     "charge the ledger from now on", markup=False)


# ------------------------------------------------------------------------------ veil publish

@fails_cleanly
@reads_tables
def publish_command(
    manifest: Path = typer.Argument(..., help="The manifest veil anonymize, veil dp --out or veil synth wrote "
                                              "with the release."),
    population: str = typer.Option(..., "--population", help="The population the release is about."),
    data: Optional[Path] = typer.Option(None, "--data", help="The population's table as you hold it: needed for a "
                                                             "microdata release, whose people are the targets."),
    ledger: str = LEDGER,
    policy: Optional[Path] = typer.Option(None, "--policy", help="A veil configuration with a policy: section "
                                                                 "(default: refuse anyone newly pinned)."),
    hierarchy: Optional[List[str]] = typer.Option(None, "--hierarchy", help="COL=FILE: an ARX hierarchy whose nodes "
                                                                            "the release publishes (repeatable)."),
    order: Optional[List[str]] = typer.Option(None, "--order", help="COL=v1,v2,… or COL=FILE: a text column's value "
                                                                    "order (repeatable)."),
    name: Optional[str] = typer.Option(None, "--name", help="What to call the release (default: folder/file)."),
    delimiter: Optional[str] = typer.Option(None, "--delimiter", help="The CSV delimiter of --data (default: "
                                                                      "sniffed)."),
    private: Optional[Path] = typer.Option(None, "--private", help="The manifest's private file, with the levels "
                                                                   "its models are re-checked at (default: the one "
                                                                   "beside the manifest)."),
    by: Optional[str] = BY, as_json: bool = JSON,
) -> None:
    """Pass a release through the publishing gate and record the decision; exit 1 when it is refused.

    A microdata release is checked on its own file and attacked together with every earlier
    release of the population, every person of --data a target (the intersection, unsorted
    matching, join and tuple-correspondence attacks, with the policy's thresholds); a DP answer
    or synthetic table (veil synth) is charged to the population's budget (once: an answer
    charged when it was drawn is not charged again).
    """
    rules = load_gate_policy(policy)
    with opened(ledger, by) as made, stage("checking the release against the ledger"):
        decision = made.publish(manifest, population=population, data=data, policy=rules,
                                hierarchies=parse_pairs(hierarchy, "--hierarchy"), orders=parse_orders(order),
                                delimiter=delimiter, name=name, private=private)
    if as_json:
        _print_json(decision.to_dict())
    else:
        render_decision(decision, _console())
    if not decision.published:
        raise typer.Exit(EXIT_FAILED_CHECK)


def render_decision(decision, console: Console) -> None:
    """Print a gate's decision: published or refused, every reason, and the checks it passed."""
    if decision.already:
        console.print(f"{decision.name!r} was published already, as release {decision.release_id} of population "
                      f"{decision.population!r} (log entry {decision.entry}); nothing was recorded again",
                      markup=False)
        for warning in decision.warnings:
            console.print(f"  warning: {warning}", markup=False)
        return
    if decision.published:
        charged = f", paid by charge {decision.charge}" if decision.charge else ""
        console.print(f"published {decision.name!r} as release {decision.release_id} of population "
                      f"{decision.population!r}{charged} (log entry {decision.entry})", markup=False)
    else:
        console.print(f"refused {decision.name!r} (log entry {decision.entry}):", markup=False)
        for reason in decision.reasons:
            console.print(f"  {reason}", markup=False)
    for finding in decision.findings:
        if finding.passed:
            console.print(f"  passed: {finding.reason}", markup=False)
    for warning in decision.warnings:
        console.print(f"  warning: {warning}", markup=False)
    if decision.recheck:
        levels = ", ".join(f"{r['model']}" + (f" of '{r['sensitive']}'" if r["sensitive"] else "")
                           + (f" {r['published']:.4g}" if isinstance(r["published"], (int, float)) else
                              f" {r['published']}") for r in decision.recheck)
        console.print(f"  measured again on the published file: {levels}", markup=False)
