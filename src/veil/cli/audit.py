"""``veil audit``: answer MAX, MIN and SUM queries over one numeric column through an auditor.

Queries come from a file (one a line) or, with ``--interactive``, from standard input as they are
typed. The simulatable auditor (Kenthapadi, Mishra and Nissim, PODS 2005) decides from the past
queries and answers only; the value-based one looks at the true answer, and ``--attack`` shows what
its denials give away. ``--log FILE`` writes every decision and why as JSON. Errors a user can cause
are one sentence on standard error with exit status 2; a bad query in a file stops the run before
any query is answered, and nothing is written.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.markup import escape
from rich.table import Table as RichTable

from veil.cli.console import Console, fails_cleanly, print_error, reads_tables, stage, terminal
from veil.errors import ParameterError, VeilError
from veil.output import OutputSet

if TYPE_CHECKING:  # veil.audit loads NumPy: imported when the command runs, not by ``veil --help``
    from veil.audit import AuditSession, DenialAttack

PROMPT = "query> "


def _answer(value) -> str:
    if value is None:
        return ""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:g}"


def _decision_row(d) -> list[str]:
    return [str(d.number), escape(d.query), f"{d.records:,}", "answered" if d.answered else "[bold]denied[/]",
            _answer(d.answer), escape(d.reason)]


def _render(session: AuditSession, attack: DenialAttack | None, console: Console) -> None:
    table = RichTable(title=f"Auditing '{escape(session.column)}' ({session.auditor.name} auditor)",
                      title_justify="left")
    for head in ("#", "query", "records", "decision", "answer", "why"):
        table.add_column(head, justify="right" if head in ("#", "records", "answer") else "left")
    for d in session.log_:
        table.add_row(*_decision_row(d))
    console.print(table)
    answered = sum(d.answered for d in session.log_)
    console.print(f"{answered:,} answered, {len(session.log_) - answered:,} denied", markup=False)
    if attack is not None:
        _render_attack(session, attack, console)


def _render_attack(session: AuditSession, attack: DenialAttack, console: Console) -> None:
    if not attack.inferences_:
        console.print(f"attack: {attack.denials_read_:,} denials read; none tells anything about a record "
                      f"({session.auditor.name} auditor).", markup=False)
        return
    table = RichTable(title="What the denials give away (the adversary knows the auditor's rule)",
                      title_justify="left")
    for head in ("after query", "record", "before", "after the denial"):
        table.add_column(head, justify="right" if head == "after query" else "left")
    for inf in attack.inferences_:
        d = inf.to_dict()
        table.add_row(str(inf.step), escape(session.name(inf.record)), d["before"], f"[bold]{d['after']}[/]")
    console.print(table)


def _report(session: AuditSession, attack: DenialAttack | None) -> dict:
    out = {"column": session.column, "auditor": session.auditor.name, "records": session.n_records,
           "decisions": session.log()}
    if attack is not None:
        out["attack"] = {"denials": attack.denials_read_, "uninformative": attack.uninformative_,
                         "inferences": [dict(inf.to_dict(), name=session.name(inf.record))
                                        for inf in attack.inferences_]}
    return out


@fails_cleanly
@reads_tables
def audit_command(
    data: Path = typer.Argument(..., help="The table (CSV or Parquet)."),
    column: str = typer.Option(..., "--column", help="The numeric column the queries aggregate."),
    queries: Optional[Path] = typer.Option(None, "--queries", help="A file of queries, one a line ('max where "
                                                                   "gender = M'; # starts a comment)."),
    interactive: bool = typer.Option(False, "--interactive", help="Read queries from standard input as they are "
                                                                  "typed (an empty line or 'quit' ends)."),
    auditor: str = typer.Option("simulatable", "--auditor", help="simulatable (decides from past answers only) "
                                                                 "or value-based (looks at the answer; denials leak)."),
    id_column: Optional[str] = typer.Option(None, "--id", help="A column naming each record in the reasons."),
    attack: bool = typer.Option(False, "--attack", help="Read the transcript as an adversary who knows the "
                                                        "auditor's rule and show what its denials give away."),
    log: Optional[Path] = typer.Option(None, "--log", help="Write every decision and why (and the attack) as "
                                                           "JSON here."),
    delimiter: Optional[str] = typer.Option(None, "--delimiter", help="CSV delimiter (default: sniffed)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
) -> None:
    """Answer MAX, MIN and SUM queries over one numeric column, or deny them.

    A query is 'max', 'min' or 'sum', then 'where' and conditions joined
    by 'and' (gender = M, age >= 30, race in (A, B), age between 30 and
    39), or 'rows' and record numbers from 0. A session answers one
    aggregate: the first answered query fixes it.
    """
    if (queries is None) == (not interactive):
        raise ParameterError("give the queries as a file (--queries FILE) or type them (--interactive), one of "
                             "the two.")
    from veil.audit import AuditSession, DenialAttack

    outputs = OutputSet([log], reads=[data, queries]) if log is not None else None
    session = AuditSession(data, column, auditor=auditor, id_column=id_column, delimiter=delimiter)
    console = terminal()
    if queries is not None:
        parsed = session.parse_file(queries)
        if not parsed:
            raise ParameterError(f"the queries file {str(queries)!r} holds no query.")
        with stage(f"auditing {len(parsed):,} queries"):
            session.run(parsed)
    else:
        _interactive(session, console, quiet=as_json)
    rule = DenialAttack(session.auditor.name).run(session.transcript_, session.n_records) if attack else None
    report = _report(session, rule)
    if outputs is not None:
        with stage(f"writing {log}"), outputs:
            outputs.put(log, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
            outputs.commit()
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        return
    if queries is not None:
        _render(session, rule, console)
    elif rule is not None:
        _render_attack(session, rule, console)
    if log is not None:
        console.print(f"wrote {log}", markup=False)


def _interactive(session: AuditSession, console: Console, quiet: bool) -> None:
    """Audit queries typed on standard input, one a line, until an empty line, 'quit' or the end;
    a query that cannot be read is said and skipped."""
    prompt = sys.stdin.isatty() and not quiet
    while True:
        if prompt:
            console.print(PROMPT, end="", markup=False)
        line = sys.stdin.readline()
        text = line.strip()
        if not line or not text or text.lower() in ("quit", "exit"):
            return
        if text.startswith("#"):
            continue
        try:
            decision = session.ask(text)
        except VeilError as exc:
            print_error(str(exc))
            continue
        if not quiet:
            outcome = f"= {_answer(decision.answer)}" if decision.answered else "denied"
            console.print(f"{decision.number}. {outcome} ({decision.reason})", markup=False)


__all__ = ["audit_command"]
