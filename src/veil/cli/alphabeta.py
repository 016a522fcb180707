"""``veil alphabeta``: the αβ algorithm's view read back, and its parameters; and publishing a view
for ``veil anonymize`` when a configuration names ``algorithm: {name: alphabeta, …}``.

``veil alphabeta estimate VIEW --manifest M --queries Q`` answers a file of counting queries from a
published view with the estimator of Rastogi, Suciu and Hong (VLDB 2007) and its standard errors;
``veil alphabeta parameters`` shows the α and β Theorem 4.3 gives (or, for a wanted error, the
privacy it costs). Errors a user can cause are one sentence on standard error with exit status 2.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.table import Table as RichTable

from veil.cli.console import Console, command_group, fails_cleanly, stage, terminal
from veil.errors import ParameterError

if TYPE_CHECKING:
    from veil.anonymize.alphabeta import AlphaBeta, AlphaBetaParameters, AlphaBetaView, Answers
    from veil.config import AnonymizationConfig
    from veil.data.dataset import Dataset
    from veil.output import OutputSet

alphabeta_app = command_group(no_args_is_help=True,
                              help="The αβ algorithm: answer counting queries from a view, choose α and β.")


# --------------------------------------------------------------------------------------------- publishing


def publish_view(cfg: AnonymizationConfig, ds: Dataset, outputs: OutputSet, out: Path, manifest: Path | None,
                 as_json: bool) -> None:
    """``veil anonymize`` with the αβ algorithm: draw the view, write it with its manifest (one
    set), and say what was published.

    Raises:
        ParameterError: no ``--manifest`` (a view cannot be read without α, β and its domain).
        ConfigError, ColumnError, ParameterError, DataError: as the algorithm and the writer raise.
    """
    if manifest is None:
        raise ParameterError("an αβ view is read with its manifest (alpha, beta and the domain); give --manifest.")
    anonymizer = cfg.anonymizer()
    with stage("drawing the view"):
        view = anonymizer.fit(ds).transform()
    delimiter = ds.table.delimiter if ds.table.kind == "csv" else ","
    with stage(f"writing {out}"), outputs:
        outputs.put(out, view.csv_text(delimiter))
        text = outputs.put_manifest(manifest, {**view.manifest(delimiter), "config": cfg.to_dict()},
                                    describes={"release": out})
        outputs.commit()
    if as_json:
        sys.stdout.write(text)
        return
    console = terminal()
    render_view(anonymizer, view, console)
    console.print(f"wrote {out} and {manifest}", soft_wrap=True)


def render_view(anonymizer: AlphaBeta, view: AlphaBetaView, console: Console) -> None:
    """What a publication did: the instance, the domain, the parameters, the view, the labels."""
    params = anonymizer.parameters_
    domain = anonymizer.domain_
    console.print(f"[bold]alphabeta[/]: {anonymizer.records_:,} records in the domain hold {anonymizer.n_:,} "
                  f"distinct tuples of m = {domain.size:,}; the view has {len(view):,} tuples")
    console.print(_parameter_line(params))
    if anonymizer.rows_outside_domain_:
        console.print(f"{anonymizer.rows_outside_domain_:,} records hold a value outside the domain and were left "
                      "out (this count is not published)")
    sources = ", ".join(f"{a.name} ({a.source})" for a in domain.attributes)
    console.print(f"domains: {sources}", soft_wrap=True)
    if view.fit_for_release:
        console.print("[green]fit for release[/] (secure coins, public domains)")
    else:
        for reason in view.not_fit_because:
            console.print(f"[yellow]not fit for release[/]: {reason}", soft_wrap=True)
    for note in view.notes:
        console.print(f"note: {note}", markup=False, soft_wrap=True)
    for warning in anonymizer.warnings_:
        console.print(f"warning (not published): {warning}", markup=False, soft_wrap=True)


def _parameter_line(params: AlphaBetaParameters) -> str:
    prior = f"d = {float(params.d):.4g}" + (f" (k = {float(params.k):g})" if params.k is not None else "")
    held = all(params.conditions().values())
    return (f"(d,γ)-privacy with {prior}, γ = {float(params.gamma):g}: α = {float(params.alpha):.6g}, "
            f"β = {float(params.beta):.4g} (keep α + β = {float(params.keep_probability):.6g}; Theorem 4.3's "
            f"conditions {'hold' if held else '[red]fail[/]'})")


# --------------------------------------------------------------------------------------------- estimate


@alphabeta_app.command("estimate")
@fails_cleanly
def estimate_command(
    view: Path = typer.Argument(..., help="The published view (CSV)."),
    manifest: Path = typer.Option(..., "--manifest", help="The view's manifest (JSON): alpha, beta and the domain."),
    queries: Path = typer.Option(..., "--queries", help="The counting queries: a YAML or JSON list, each a mapping "
                                                        "{column: value | [values] | {min, max}}."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the answers here (CSV)."),
    as_json: bool = typer.Option(False, "--json", help="Print the answers as JSON instead of a table."),
) -> None:
    """Estimate counting queries from a published αβ view, with standard errors.

    Each estimate is (n_V − β·n_D)/α. The view and its manifest must be the
    pair published together (their SHA-256 is checked). A query names
    columns of the view and values of their public domains.
    """
    from veil.anonymize.alphabeta import AlphaBetaView, read_queries
    from veil.output import check_targets, write_files

    reads = [view, manifest, queries]
    if out is not None:
        check_targets([out], reads=reads)
    with stage("reading the view"):
        published = AlphaBetaView.read(view, manifest)
    answers = published.answer(read_queries(queries))
    if out is not None:
        write_files({out: answers.csv_text()}, reads=reads)
    if as_json:
        sys.stdout.write(json.dumps(_answers_json(published, answers), indent=2, ensure_ascii=False) + "\n")
        return
    console = terminal()
    render_answers(published, answers, console)
    if out is not None:
        console.print(f"wrote {out}")


def _answers_json(view: AlphaBetaView, answers: Answers) -> dict:
    rows = [{"query": a.query, "estimate": a.estimate, "standard_error": a.standard_error, "n_V": a.view_count,
             "n_D": a.domain_count} for a in (answers[i] for i in range(len(answers)))]
    return {"alpha": float(view.parameters.alpha), "beta": float(view.parameters.beta), "view_rows": len(view),
            "fit_for_release": view.fit_for_release, "answers": rows}


def render_answers(view: AlphaBetaView, answers: Answers, console: Console) -> None:
    """The answers as a table, under the view's parameters."""
    console.print(f"{len(view):,} tuples; α = {float(view.parameters.alpha):.6g}, β = "
                  f"{float(view.parameters.beta):.4g}; estimate = (n_V − β·n_D)/α")
    if not view.fit_for_release:
        console.print(f"[yellow]the view is not fit for release[/]: {'; '.join(view.not_fit_because)}",
                      soft_wrap=True)
    table = RichTable(title="Counting queries", title_justify="left")
    for head in ("query", "estimate", "std. error", "n_V", "n_D"):
        table.add_column(head, justify="left" if head == "query" else "right")
    for i in range(len(answers)):
        a = answers[i]
        table.add_row(a.query, f"{a.estimate:,.1f}", f"{a.standard_error:,.1f}", f"{a.view_count:,}",
                      f"{a.domain_count:,}")
    console.print(table)


# --------------------------------------------------------------------------------------------- parameters


@alphabeta_app.command("parameters")
@fails_cleanly
def parameters_command(
    m: int = typer.Option(..., "--m", help="The domain's size |D|."),
    gamma: Optional[float] = typer.Option(None, "--gamma", help="The posterior bound γ, in (0, 1)."),
    d: Optional[float] = typer.Option(None, "--d", help="The adversary's prior bound d, below γ."),
    k: Optional[float] = typer.Option(None, "--k", help="The prior bound as d = k·n/m (needs --n)."),
    n: Optional[int] = typer.Option(None, "--n", help="The number of distinct tuples in the table."),
    rho: Optional[float] = typer.Option(None, "--rho", help="Instead of γ: the error ρ wanted (|error| < ρ√n)."),
    epsilon: Optional[float] = typer.Option(None, "--epsilon", help="With --rho: the share of queries allowed to "
                                                                    "miss it."),
    as_json: bool = typer.Option(False, "--json", help="Print the parameters as JSON."),
) -> None:
    """The α and β of Theorem 4.3, or the privacy a wanted error costs.

    For a prior bound d (or k, with d = k·n/m) and a posterior bound γ:
    α, β and the usefulness they give (Theorem 4.4's bound at ρ = √(k/γ)).
    Given --rho and --epsilon instead of --gamma: the smallest γ (the
    strongest privacy) whose Theorem 4.4 bound reaches that error.
    """
    from veil.anonymize.alphabeta import choose_parameters, parameters_for_usefulness
    from veil.anonymize.alphabeta.parameters import impossibility_note

    if m < 1 or (n is not None and not 1 <= n <= m):
        raise ParameterError("--m must be at least 1 and --n between 1 and --m.")
    if d is None and k is None:
        raise ParameterError("give the adversary's prior bound with --d, or with --k and --n (d = k·n/m).")
    if d is not None and k is not None:
        raise ParameterError("give the adversary's prior bound with --d or with --k, not both.")
    if gamma is not None and (rho is not None or epsilon is not None):
        raise ParameterError("give either --gamma, or --rho and --epsilon (the error wanted), not both.")
    if gamma is None and (rho is None or epsilon is None):
        raise ParameterError("give the posterior bound with --gamma, or the error wanted with --rho and --epsilon "
                             "(both).")
    if gamma is not None:
        params = choose_parameters(gamma, m=m, d=d, k=k, n=n)
    else:
        if n is None:
            raise ParameterError("--rho and --epsilon need --n, the number of distinct tuples.")
        params = parameters_for_usefulness(rho, epsilon, n=n, m=m, d=d, k=k)
    doc = {**params.to_dict(), "conditions": params.conditions()}
    if n is not None:
        target = rho if rho is not None else math.sqrt(float(params.d) * m / n / float(params.gamma))
        doc.update(n=n, expected_inserted=params.expected_inserted(n), rho=target,
                   usefulness_bound=params.usefulness_bound(target, n), note=impossibility_note(params, n))
    if as_json:
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        return
    console = terminal()
    console.print(_parameter_line(params))
    console.print(f"exactly: α = {params.alpha}, β = {params.beta}", soft_wrap=True)
    if n is not None:
        console.print(f"about {doc['expected_inserted']:,.0f} tuples of D \\ I inserted; Theorem 4.4: at most "
                      f"{doc['usefulness_bound']:.3g} of the queries miss by ρ√n = {doc['rho'] * math.sqrt(n):,.1f} "
                      f"or more (ρ = {doc['rho']:.4g})")
        if doc["note"]:
            console.print(f"note: {doc['note']}", markup=False, soft_wrap=True)
