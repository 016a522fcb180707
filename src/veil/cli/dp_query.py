"""``veil dp query``: a grouped DP query from a specification file, charged to a ledger, written as
a release; ``veil dp query-schema``: the JSON Schema of the specification (both declared in :mod:`veil.cli.dp`).

``veil dp query [DATA] --spec SPEC --out DIR [--budget-file B [--budget E[,D]] | --ledger L
[--population P] [--budget E[,D]]] [--seed N] [--json]`` reads the specification
(:mod:`veil.config.dp_query_spec`), builds the query (:func:`veil.config.dp_query_builder.build_query`),
charges the budget and writes ``answers.csv`` (or ``answers.parquet``) and ``manifest.json`` into
DIR (:mod:`veil.ledger.grouped_answers`).

Order of work, as for every ``veil dp`` query (:mod:`veil.cli.dp`): the specification, the options,
the table's schema, the query (columns, types, bounds, keys) and the output files are checked
first, so that a refused query charges nothing and writes nothing; then the ledger's history is
verified and the charge committed (one transaction, re-checked against every charge other
processes committed) before any noise is drawn; then the two files are published together
(:class:`veil.output.writer.OutputSet`). If the publishing fails after the charge, the budget stays
spent (the safe side) and no file appears.

A CSV table's cells are text: a column aggregated must be numeric by veil's reading rule (every
value a number; docs/concepts/data-conventions.md), and a cell that is not a number is missing.
A budget made here with ``--budget`` protects the query's unit (a person by the ID column, or a row).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

from veil.cli.console import stage, terminal
from veil.dp.exact import show
from veil.dp.fingerprint import dataset_id
from veil.ledger.grouped_answers import ANSWER_FILES, MANIFEST_FILE, write_grouped_release
from veil.report.dp_grouped import grouped_lines
from veil.config.dp_query_builder import build_query, evaluate_arguments
from veil.config.dp_query_inputs import keys_given, typed_frame
from veil.config.dp_query_spec import load_query_spec, query_schema_text
from veil.errors import DataError, ParameterError


def _fresh_budget(budget, unit):
    """The accountant a population made with ``--budget`` starts with, kept at the query's unit."""
    from veil.dp.accountant import Accountant
    from veil.dp.zcdp_accountant import ZCDPAccountant, ZCDPBudget

    kind = ZCDPAccountant if isinstance(budget, ZCDPBudget) else Accountant
    return kind(budget, dataset_id="table").declare_unit(unit)


def run_query(where, data: Optional[Path], spec: Path, out: Path, seed: Optional[int], delimiter: Optional[str],
              as_json: bool, strict: bool, engine: Optional[str] = None, master: Optional[str] = None) -> None:
    """``veil dp query`` (its options are declared in :mod:`veil.cli.dp`, beside the other queries'):
    ``where`` is the command's budget options (``veil.cli.dp._Budget``); ``engine`` and ``master``
    choose Spark (:mod:`veil.cli.dp_query_spark`)."""
    from veil.cli.dp_query_spark import engine_of, spark_read, spark_typed_frame

    query_spec = load_query_spec(spec)
    name, master, settings = engine_of(query_spec.document, engine, master)
    table = data if data is not None else query_spec.table
    if table is None:
        raise ParameterError("name the table to query: give DATA, or 'table:' in the specification.")
    if not (table.is_file() or name == "spark" and table.is_dir()):
        raise DataError(f"data file {str(table)!r} does not exist; check the path.")
    price = evaluate_arguments(query_spec)
    read = None
    if name == "spark":
        aggregated = [a["column"] for a in query_spec.document["aggregates"] if "column" in a]
        with stage(f"starting Spark at {master}"):
            read = spark_read(table, master, settings, delimiter, strict, aggregated)
    run = where.run(table, price.get("epsilon"), 0.0, seed, delimiter, strict=strict, rho=price.get("rho"), read=read)
    grouped = build_query(query_spec, typed_frame(run.columns, query_spec) if read is None else
                          spark_typed_frame(read, query_spec))
    if run.fresh or run.new_budget is not None:
        run.new_budget = _fresh_budget(run.new_budget, grouped.query.unit)
    fmt = query_spec.output_format
    from veil.output.writer import OutputSet

    group = query_spec.document["group_by"]
    reads = [table, spec, where.budget_file] + ([query_spec.path(group["file"])] if "file" in group else [])
    outputs = OutputSet([out / ANSWER_FILES[fmt], out / MANIFEST_FILE], reads=reads, make_folders=True)
    with outputs:
        with run.charging() as accountant:
            answer = grouped.evaluate(**price, accountant=accountant, rng=run.noise)
        label = accountant.charges[-1].label if accountant is not None else \
            f"grouped query {', '.join(a.name for a in grouped.aggregates)} by {', '.join(grouped.keys.columns)}"
        fingerprint = run.table.fingerprint if run.table is not None else \
            read.found()["fingerprint"] if read is not None else dataset_id(run.columns.table)
        with stage(f"writing {out}"):
            manifest = write_grouped_release(answer, out, label=label, keys_given=keys_given(query_spec),
                                             output_format=fmt, outputs=outputs, fingerprint=fingerprint,
                                             charge=run.charge, reads=reads)
    if not answer.fit_for_release:
        terminal(stderr=True, soft_wrap=True).print(f"warning: {answer.label}.", markup=False)
    if as_json:
        doc = {"manifest": {k: v for k, v in manifest.items() if k != "seal"},
               "answers": json.loads(answer.to_pandas().to_json(orient="records")),
               "files": [str(out / ANSWER_FILES[fmt]), str(out / MANIFEST_FILE)]}
        if run.accountant is not None:
            doc["budget"] = _budget_entry(run)
        sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        return
    console = terminal(soft_wrap=True)
    for line in grouped_lines(answer.to_pandas(), manifest):
        console.print(line, markup=False)
    if run.accountant is not None:
        console.print(_budget_line(run), markup=False)
    console.print(f"wrote {out / ANSWER_FILES[fmt]} and {out / MANIFEST_FILE}", markup=False)


def _budget_entry(run) -> dict:
    acc = run.accountant
    spent, left = acc.spent(), acc.remaining()
    entry = {"file": run.location, "population": run.population,
             "charge": None if run.charge is None else run.charge["seq"],
             "total": {"epsilon": float(acc.budget.epsilon), "delta": float(acc.budget.delta)},
             "spent": {"epsilon": float(spent.epsilon), "delta": float(spent.delta)},
             "left": {"epsilon": float(left[0]), "delta": float(left[1])}}
    if acc.measure == "zcdp":  # composed in ρ; the (ε, δ) above is its tight conversion
        entry["rho"] = {"total": float(acc.budget.rho), "spent": float(acc.spent_rho), "left": float(acc.remaining_rho)}
    return entry


def _budget_line(run) -> str:
    acc = run.accountant
    if acc.measure == "zcdp":
        left = f"{show(acc.remaining_rho)} (ε = {show(acc.remaining()[0])} at δ = {show(acc.budget.delta)})"
        return f"budget {run.location}: spent ρ = {show(acc.spent_rho)} of {acc.budget}; left ρ = {left}"
    eps, dlt = acc.remaining()
    spent = acc.spent()
    return (f"budget {run.location}: spent ε = {show(spent.epsilon)}, δ = {show(spent.delta)} of {acc.budget}; "
            f"left ε = {show(eps)}, δ = {show(dlt)}")


def print_query_schema() -> None:
    """``veil dp query-schema``: print the JSON Schema of a query specification file."""
    sys.stdout.write(query_schema_text())

