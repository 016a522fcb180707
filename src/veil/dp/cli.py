"""``veil dp``: differentially private answers from a table, with a budget file.

``veil dp count|sum|mean|quantile|histogram DATA --epsilon E [--delta D] [--columns …]
[--bounds LO,HI] [--budget-file B.json [--budget E[,D]]] [--seed N] [--json]`` prints the noisy
answer with its 95 % error bar; ``veil dp budget B.json`` shows what was spent by what.

The budget file is tied to the data file by its **dataset id**: ``sha256:`` followed by the
SHA-256 of the file's bytes (:func:`veil.dp.queries.dataset_id_of`). Copying or renaming the file
keeps its budget; changing a single byte makes it another dataset, whose budget file must be a new
one. A missing budget file is created when ``--budget E[,D]`` says how much may be spent.

Order of work, so that a failing query charges nothing and writes nothing: every option is
checked, the data read and the budget file loaded; then the query charges the in-memory accountant
(refusing an overspend before any noise is drawn) and draws its noise; then the budget file is
saved atomically (temporary file, rename); only then is the answer printed. If the save fails, the
answer is not shown.

``--seed N`` makes a reproducible experiment, labelled NOT fit for release; it is still charged.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Optional

import numpy as np
import typer
from rich.console import Console

from veil.clitools import fails_cleanly, split_names
from veil.dp.accountant import Accountant, Budget, BudgetFileError, _show
from veil.dp.accountant import load as load_any_budget
from veil.dp.noise import NoiseSource
from veil.dp.queries import (
    QueryResult,
    _Columns,
    dataset_id_of,
    dp_count,
    dp_histogram,
    dp_mean,
    dp_quantile,
    dp_sum,
    postprocess,
)
from veil.errors import DataError, ParameterError

dp_app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True,
                     help="Differentially private queries with a privacy-budget file.")

# --------------------------------------------------------------------------- shared options

DATA = typer.Argument(..., help="CSV or Parquet table to query.")
EPSILON = typer.Option(..., "--epsilon", help="Privacy loss ε > 0 this query spends.")
DELTA = typer.Option(0.0, "--delta", help="δ in [0, 1); δ > 0 switches to Gaussian noise.")
BUDGET_FILE = typer.Option(None, "--budget-file", help="Budget file (JSON) to charge; created when missing.")
BUDGET = typer.Option(None, "--budget", help="E[,D]: the total budget when --budget-file is created.")
SEED = typer.Option(None, "--seed", help="Seeded noise for experiments: NOT fit for release.")
JSON = typer.Option(False, "--json", help="Print one JSON object.")
DELIMITER = typer.Option(None, "--delimiter", help="CSV delimiter (default: sniffed).")
BOUNDS = typer.Option(None, "--bounds", help="LO,HI: the public clamping range (never from the data).")


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ParameterError(f"{what} must be a number, got {text!r}.") from None
    if not math.isfinite(value):
        raise ParameterError(f"{what} must be a finite number, got {text!r}.")
    return value


def _bounds(text: Optional[str], query: str) -> Optional[tuple[float, float]]:
    if text is None:
        raise ParameterError(f"{query} needs --bounds LO,HI from public knowledge (never from the data).")
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2:
        raise ParameterError(f"--bounds takes LO,HI (two numbers), got {text!r}.")
    return _number(parts[0], "the lower bound"), _number(parts[1], "the upper bound")


def _budget(text: str) -> Budget:
    parts = [p.strip() for p in text.split(",")]
    if len(parts) not in (1, 2):
        raise ParameterError(f"--budget takes E or E,D, got {text!r}.")
    eps = _number(parts[0], "the budget's epsilon")
    delta = _number(parts[1], "the budget's delta") if len(parts) == 2 else 0.0
    return Budget(eps, delta)


def _one_column(columns: Optional[str], query: str) -> str:
    names = split_names(columns)
    if len(names) != 1:
        raise ParameterError(f"{query} reads one column; give it with --columns NAME.")
    return names[0]


class _Run:
    """What a query command prepares before it charges anything."""

    def __init__(self, data: Path, epsilon: float, delta: float, budget_file: Optional[Path],
                 budget: Optional[str], seed: Optional[int], delimiter: Optional[str]):
        if not epsilon > 0 or not math.isfinite(epsilon):
            raise ParameterError(f"--epsilon must be a positive finite number, got {epsilon:g}.")
        if not 0.0 <= delta < 1.0:
            raise ParameterError(f"--delta must lie in [0, 1), got {delta:g}.")
        self.noise = NoiseSource.seeded(seed) if seed is not None else NoiseSource.secure()
        new_budget = _budget(budget) if budget is not None else None
        if not data.is_file():
            raise DataError(f"data file {str(data)!r} does not exist; check the path.")
        self.budget_file = budget_file
        self.accountant: Optional[Accountant] = None
        if budget_file is not None:
            from veil.data.io import check_target
            check_target(budget_file)
            dataset_id = dataset_id_of(data)
            if budget_file.exists():
                self.accountant = Accountant.load(budget_file, dataset_id)
                if new_budget is not None and new_budget != self.accountant.budget:
                    raise ParameterError(f"budget file {str(budget_file)!r} already holds the budget "
                                         f"{self.accountant.budget}; leave --budget out.")
            elif new_budget is None:
                raise BudgetFileError(f"budget file {str(budget_file)!r} does not exist; pass --budget E[,D] "
                                      "to create it.")
            else:
                self.accountant = Accountant(new_budget, dataset_id=dataset_id)
        elif new_budget is not None:
            raise ParameterError("--budget applies only with --budget-file.")
        self.columns = _Columns(data, delimiter)

    def finish(self, result: QueryResult, as_json: bool) -> None:
        """Save the budget file (atomically), then print: the answer is shown only once it is recorded."""
        if self.accountant is not None:
            self.accountant.save(self.budget_file)
        if not result.fit_for_release:
            Console(stderr=True, highlight=False).print(
                "warning: seeded noise (--seed): a reproducible experiment, NOT fit for release.", markup=False)
        if as_json:
            doc = result.to_dict()
            if self.accountant is not None:
                spent = self.accountant.spent()
                left = self.accountant.remaining()
                doc["budget"] = {"file": str(self.budget_file), "dataset_id": self.accountant.dataset_id,
                                 "total": {"epsilon": float(self.accountant.budget.epsilon),
                                           "delta": float(self.accountant.budget.delta)},
                                 "spent": {"epsilon": float(spent.epsilon), "delta": float(spent.delta)},
                                 "left": {"epsilon": float(left[0]), "delta": float(left[1])}}
            sys.stdout.write(json.dumps(doc, indent=2) + "\n")
            return
        console = Console(highlight=False, soft_wrap=True)
        _render(result, console)
        if self.accountant is not None:
            eps, dlt = self.accountant.remaining()
            spent = self.accountant.spent()
            console.print(f"budget {self.budget_file}: spent ε = {_show(spent.epsilon)}, δ = {_show(spent.delta)} "
                          f"of {self.accountant.budget}; left ε = {_show(eps)}, δ = {_show(dlt)}", markup=False)


def _fmt(x) -> str:
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    return f"{float(x):.6g}"


def _render(r: QueryResult, console: Console) -> None:
    cost = f"ε = {r.epsilon:g}" + (f", δ = {r.delta:g}" if r.delta else "")
    head = f"{r.query}: {cost}, sensitivity {r.sensitivity:g}, {r.mechanism} noise, {r.label}"
    console.print(head, markup=False)
    conf = f"{1 - r.alpha:.0%}"
    if isinstance(r.value, np.ndarray) and r.categories is not None:
        names = list(r.columns)
        rows = [names + ["noisy count", f"{conf} interval"]]
        for index in np.ndindex(r.value.shape):
            cats = [str(r.categories[a][i]) or "(missing)" for a, i in enumerate(index)]
            rows.append(cats + [_fmt(r.value[index]), f"[{_fmt(r.low[index])}, {_fmt(r.high[index])}]"])
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            console.print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip(), markup=False)
        if r.low is not None:
            half = float(np.max(r.high - r.value))
            console.print(f"every cell ± {half:.6g} ({conf})", markup=False)
    elif isinstance(r.value, np.ndarray):
        for q, v in zip(r.query.split("(", 1)[1].rstrip(")").split(", ")[1:], r.value):
            console.print(f"  q = {q}: {_fmt(v)}", markup=False)
    elif r.low is None:
        console.print(f"answer: {_fmt(r.value)} (no error bar in value units)", markup=False)
    else:
        console.print(f"answer: {_fmt(r.value)}  {conf} interval [{_fmt(r.low)}, {_fmt(r.high)}]", markup=False)
    if r.postprocessing:
        console.print(f"post-processing (free): {'; '.join(r.postprocessing)}", markup=False)
    for note in r.notes:
        console.print(f"note: {note}", markup=False)


# --------------------------------------------------------------------------- commands

@dp_app.command("count")
@fails_cleanly
def count_command(data: Path = DATA, epsilon: float = EPSILON, delta: float = DELTA,
                  columns: Optional[str] = typer.Option(None, "--columns", help="Count non-missing values of this column."),
                  budget_file: Optional[Path] = BUDGET_FILE, budget: Optional[str] = BUDGET,
                  seed: Optional[int] = SEED, delimiter: Optional[str] = DELIMITER, as_json: bool = JSON) -> None:
    """The noisy number of records (sensitivity 1)."""
    names = split_names(columns)
    if len(names) > 1:
        raise ParameterError("count reads at most one column; give one name with --columns.")
    run = _Run(data, epsilon, delta, budget_file, budget, seed, delimiter)
    result = dp_count(run.columns, epsilon, delta, column=names[0] if names else None,
                      accountant=run.accountant, noise=run.noise)
    run.finish(result, as_json)


@dp_app.command("sum")
@fails_cleanly
def sum_command(data: Path = DATA, epsilon: float = EPSILON, delta: float = DELTA,
                columns: Optional[str] = typer.Option(None, "--columns", help="The numeric column to sum."),
                bounds: Optional[str] = BOUNDS, budget_file: Optional[Path] = BUDGET_FILE,
                budget: Optional[str] = BUDGET, seed: Optional[int] = SEED, delimiter: Optional[str] = DELIMITER,
                as_json: bool = JSON) -> None:
    """The noisy sum of a column clamped to --bounds (sensitivity max(|LO|, |HI|))."""
    column = _one_column(columns, "sum")
    lohi = _bounds(bounds, "sum")
    run = _Run(data, epsilon, delta, budget_file, budget, seed, delimiter)
    result = dp_sum(run.columns, column, lohi, epsilon, delta, accountant=run.accountant, noise=run.noise)
    run.finish(result, as_json)


@dp_app.command("mean")
@fails_cleanly
def mean_command(data: Path = DATA, epsilon: float = EPSILON, delta: float = DELTA,
                 columns: Optional[str] = typer.Option(None, "--columns", help="The numeric column."),
                 bounds: Optional[str] = BOUNDS, budget_file: Optional[Path] = BUDGET_FILE,
                 budget: Optional[str] = BUDGET, seed: Optional[int] = SEED, delimiter: Optional[str] = DELIMITER,
                 as_json: bool = JSON) -> None:
    """The noisy mean of a column clamped to --bounds: noisy sum / noisy count, ε split in half."""
    column = _one_column(columns, "mean")
    lohi = _bounds(bounds, "mean")
    run = _Run(data, epsilon, delta, budget_file, budget, seed, delimiter)
    result = dp_mean(run.columns, column, lohi, epsilon, delta, accountant=run.accountant, noise=run.noise)
    run.finish(result, as_json)


@dp_app.command("quantile")
@fails_cleanly
def quantile_command(data: Path = DATA, epsilon: float = EPSILON, delta: float = DELTA,
                     columns: Optional[str] = typer.Option(None, "--columns", help="The numeric column."),
                     q: str = typer.Option("0.5", "--q", help="Quantile(s) in [0, 1], comma-separated; ε is split."),
                     bounds: Optional[str] = BOUNDS, budget_file: Optional[Path] = BUDGET_FILE,
                     budget: Optional[str] = BUDGET, seed: Optional[int] = SEED,
                     delimiter: Optional[str] = DELIMITER, as_json: bool = JSON) -> None:
    """Noisy quantile(s) of a column clamped to --bounds, by the exponential mechanism (pure ε-DP)."""
    column = _one_column(columns, "quantile")
    lohi = _bounds(bounds, "quantile")
    qs = [_number(part, "--q") for part in split_names(q)]
    if delta != 0.0:
        raise ParameterError("quantiles are pure epsilon-DP (exponential mechanism); leave --delta out.")
    run = _Run(data, epsilon, delta, budget_file, budget, seed, delimiter)
    result = dp_quantile(run.columns, column, qs if len(qs) != 1 else qs[0], lohi, epsilon,
                         accountant=run.accountant, noise=run.noise)
    run.finish(result, as_json)


@dp_app.command("histogram")
@fails_cleanly
def histogram_command(data: Path = DATA, epsilon: float = EPSILON, delta: float = DELTA,
                      columns: Optional[str] = typer.Option(None, "--columns",
                                                            help="Column(s), comma-separated: a contingency table."),
                      budget_file: Optional[Path] = BUDGET_FILE, budget: Optional[str] = BUDGET,
                      seed: Optional[int] = SEED, delimiter: Optional[str] = DELIMITER,
                      raw: bool = typer.Option(False, "--raw", help="No post-processing: noisy cells as drawn."),
                      as_json: bool = JSON) -> None:
    """Noisy counts over every combination of the columns' categories (sensitivity 1).

    By default the cells are post-processed for free: clipped at 0, rounded, and made to add up
    to their own noisy total. The categories come from the data: publishing them is a
    disclosure unless they are public.
    """
    names = split_names(columns)
    if not names:
        raise ParameterError("histogram needs --columns with at least one column.")
    run = _Run(data, epsilon, delta, budget_file, budget, seed, delimiter)
    result = dp_histogram(run.columns, names, epsilon, delta, accountant=run.accountant, noise=run.noise)
    if not raw:
        result = postprocess(result, nonnegative=True, integral=True, consistent=True)
    run.finish(result, as_json)


@dp_app.command("budget")
@fails_cleanly
def budget_command(budget_file: Path = typer.Argument(..., help="Budget file (JSON) to show."),
                   data: Optional[Path] = typer.Option(None, "--data", help="Check the file belongs to this table."),
                   as_json: bool = JSON) -> None:
    """Show what was spent by what, and what is left."""
    if data is not None:
        if not data.is_file():
            raise DataError(f"data file {str(data)!r} does not exist; check the path.")
        dataset_id = dataset_id_of(data)
    else:
        dataset_id = _peek_dataset_id(budget_file)
    acc = load_any_budget(budget_file, dataset_id)
    if as_json:
        spent = acc.spent()
        rows = [{**row, "epsilon": float(row["epsilon"]), "delta": float(row["delta"]),
                 "counted": None if row["counted"] is None else float(row["counted"])} for row in acc.report()]
        doc = {"file": str(budget_file), "dataset_id": acc.dataset_id, "composition": acc.composition,
               "budget": {"epsilon": float(acc.budget.epsilon), "delta": float(acc.budget.delta)},
               "spent": {"epsilon": float(spent.epsilon), "delta": float(spent.delta)},
               "charges": rows}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    Console(highlight=False, soft_wrap=True).print(acc.format_report(), markup=False)


def _peek_dataset_id(path: Path) -> str:
    """The dataset id a budget file names, so it can be read without its data; load() checks the rest."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return "?"  # load() gives the sentence for a missing, unreadable or corrupt file
    dataset_id = doc.get("dataset_id") if isinstance(doc, dict) else None
    if isinstance(doc, dict) and doc.get("format") == "veil-dp-budget" and not isinstance(dataset_id, str):
        raise BudgetFileError(f"budget file {str(path)!r} names no dataset; it is corrupt.")
    return dataset_id if isinstance(dataset_id, str) else "?"
