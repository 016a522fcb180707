"""``veil dp query``: a grouped DP query from a specification file, charged to a ledger, written as
a release; ``veil dp query-schema``: the JSON Schema of the specification.

``veil dp query [DATA] --spec SPEC --out DIR [--budget-file B [--budget E[,D]] | --ledger L
[--population P] [--budget E[,D]]] [--seed N] [--json]`` reads the specification
(:mod:`veil.dp.query_spec`), builds the query (:func:`veil.dp.query_from_spec.build_query`),
charges the budget and writes ``answers.csv`` (or ``answers.parquet``) and ``manifest.json`` into
DIR (:mod:`veil.dp.grouped_release`).

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

import numpy as np
import pandas as pd
import typer

from veil.cli.console import fails_cleanly, reads_tables, stage, terminal
from veil.cli.dp import (BUDGET, BUDGET_FILE, BY, DELIMITER, JSON, LEDGER, POPULATION, SEED, STRICT, _Budget,
                         _fingerprint, _rho_entry)
from veil.dp.exact import show
from veil.dp.grouped_release import ANSWER_FILES, MANIFEST_FILE, write_grouped_release
from veil.dp.query_from_spec import build_query, evaluate_arguments
from veil.dp.query_spec import QuerySpec, load_query_spec, query_schema_text
from veil.errors import ColumnError, DataError, ParameterError


def _typed_frame(columns, spec: QuerySpec) -> pd.DataFrame:
    """The table as pandas, each aggregated column as numbers (a cell that is not one: missing).

    Raises:
        ColumnError: an aggregated column that is text (by its type, or in a CSV by veil's rule).
    """
    frame = columns.table.data.to_pandas()
    for agg in spec.document["aggregates"]:
        name = agg.get("column")
        if name is None or name not in frame.columns or pd.api.types.is_numeric_dtype(frame[name].dtype):
            continue
        col = columns.column(name)
        if not col.is_numeric:
            label = agg.get("name") or f"{agg['aggregate']}({name})"
            raise ColumnError(f"{label} needs a numeric column, but '{name}' holds text; aggregate a column of "
                              "numbers, or count it.")
        frame[name] = np.asarray(col.numeric, dtype=float)[col.codes]
    return frame


def _keys_given(spec: QuerySpec) -> dict:
    """How the keys were given, for the manifest (their source, never their values)."""
    group = spec.document["group_by"]
    for source in ("keys", "domains", "file", "hierarchy", "private"):
        if source in group:
            break
    out = {"source": {"keys": "list"}.get(source, source), "public": source != "private",
           "other": bool(group.get("other", False))}
    if source == "file":
        out["file"] = Path(group["file"]).name
    if source == "hierarchy":
        out.update(column=group["hierarchy"]["column"], level=group["hierarchy"]["level"])
    if source == "private":
        out.update(delta=group["private"]["delta"], threshold=group["private"].get("threshold"))
    return out


def _fresh_budget(budget, unit):
    """The accountant a population made with ``--budget`` starts with, kept at the query's unit."""
    from veil.dp.accountant import Accountant
    from veil.dp.zcdp_accountant import ZCDPAccountant, ZCDPBudget

    kind = ZCDPAccountant if isinstance(budget, ZCDPBudget) else Accountant
    return kind(budget, dataset_id="table").declare_unit(unit)


@fails_cleanly
@reads_tables
def query_command(
    data: Optional[Path] = typer.Argument(None, help="CSV or Parquet table to query (default: the specification's "
                                                     "table)."),
    spec: Path = typer.Option(..., "--spec", help="The query specification (YAML or JSON; veil dp query-schema "
                                                  "prints its JSON Schema)."),
    out: Path = typer.Option(..., "--out", help="Folder to write answers.csv (or .parquet) and manifest.json in."),
    budget_file: Optional[Path] = BUDGET_FILE, budget: Optional[str] = BUDGET, ledger: Optional[str] = LEDGER,
    population: Optional[str] = POPULATION, by: Optional[str] = BY, seed: Optional[int] = SEED,
    delimiter: Optional[str] = DELIMITER, as_json: bool = JSON, strict: bool = STRICT,
) -> None:
    """A grouped query from a specification file: every key's aggregates with their intervals.

    Writes the answers (the key columns, then per aggregate its value, _low and _high) and a
    manifest of the transformation (unit, bounds, mechanisms, sensitivities, noise scales, ε, δ or
    ρ), both or neither; the query is charged before its noise is drawn, and a query refused
    charges nothing and writes nothing.
    """
    query_spec = load_query_spec(spec)
    table = data if data is not None else query_spec.table
    if table is None:
        raise ParameterError("name the table to query: give DATA, or 'table:' in the specification.")
    if not table.is_file():
        raise DataError(f"data file {str(table)!r} does not exist; check the path.")
    price = evaluate_arguments(query_spec)
    run = _Budget(budget_file, budget, ledger, population, None, by).run(
        table, price.get("epsilon"), 0.0, seed, delimiter, strict=strict, rho=price.get("rho"))
    grouped = build_query(query_spec, _typed_frame(run.columns, query_spec))
    if run.fresh or run.new_budget is not None:
        run.new_budget = _fresh_budget(run.new_budget, grouped.query.unit)
    fmt = query_spec.output_format
    from veil.output.writer import OutputSet

    group = query_spec.document["group_by"]
    reads = [table, spec, budget_file] + ([query_spec.path(group["file"])] if "file" in group else [])
    outputs = OutputSet([out / ANSWER_FILES[fmt], out / MANIFEST_FILE], reads=reads, make_folders=True)
    with outputs:
        with run.charging() as accountant:
            answer = grouped.evaluate(**price, accountant=accountant, rng=run.noise)
        label = accountant.charges[-1].label if accountant is not None else \
            f"grouped query {', '.join(a.name for a in grouped.aggregates)} by {', '.join(grouped.keys.columns)}"
        fingerprint = (run.table.fingerprint if run.table is not None else _fingerprint(run.columns.table))
        with stage(f"writing {out}"):
            manifest = write_grouped_release(answer, out, label=label, keys_given=_keys_given(query_spec),
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
    if acc.measure == "zcdp":
        entry["rho"] = _rho_entry(acc)
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


def _cell(value) -> str:
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):,.6g}"
    return "(missing)" if value is None or value == "" else str(value)


def grouped_lines(frame: pd.DataFrame, manifest: dict) -> list[str]:
    """A grouped answer as lines of text: what it cost and how, then one row per key with each
    aggregate's value and interval (what ``veil dp query`` and ``veil dp report`` print)."""
    unit = manifest["unit"]
    who = "a row" if unit.get("unit") == "row" else \
        f"a person by '{unit['id_column']}'" + "".join(
            f", {k} {unit[k]}" for k in ("max_rows", "max_groups", "max_rows_per_group") if unit.get(k) is not None)
    cost = f"ρ = {manifest['rho']}" if "rho" in manifest else f"ε = {manifest['epsilon']}"
    fit = "fit for release" if manifest["fit_for_release"] else "NOT fit for release"
    lines = [f"{manifest['query']}: {cost}, protecting {who}, {manifest['mechanism']} noise, {fit}"]
    conf = f"{1 - float(manifest['alpha']):.0%}"
    keys = list(manifest["group_by"]["columns"])
    names = [a["name"] for a in manifest["aggregates"]]
    rows = [keys + [f"{n} [{conf} interval]" for n in names]]
    for record in frame.to_dict(orient="records"):
        rows.append([_cell(record[k]) for k in keys] +
                    [f"{_cell(record[n])} [{_cell(record[n + '_low'])}, {_cell(record[n + '_high'])}]"
                     for n in names])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    for a in manifest["aggregates"]:
        for m in a["measurements"]:
            lines.append(f"{m['label']}: {m['mechanism']}, {m['norm']} sensitivity {m['sensitivity']:g}, "
                         f"scale {m['scale']:.6g}, ± {m['half_width']:.6g} ({conf})")
    return lines


@fails_cleanly
def query_schema_command() -> None:
    """Print the JSON Schema of a query specification file (veil dp query --spec), for editors."""
    sys.stdout.write(query_schema_text())

