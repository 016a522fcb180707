"""``veil dp``: differentially private answers from a table, charged to a release ledger.

``veil dp count|sum|mean|quantile|histogram DATA --epsilon E [--delta D] [--columns …]
[--bounds LO,HI] [--budget-file B [--budget E[,D]] | --ledger L [--population P] [--budget E[,D]]]
[--out DIR] [--seed N] [--json]`` prints the noisy answer with its 95 % error bar (count, sum, mean
and histogram take ``--mechanism gaussian --rho R`` instead of ε: Gaussian noise priced in ρ-zCDP,
charged to a budget kept in ρ, whose ``--budget`` is then ``R,D``; a budget in the other measure
refuses the query in one sentence and nothing is charged); ``veil dp budget
B`` shows what was spent by what (and, with transition matrices, the temporal leakage of the
charges); ``veil dp stream EVENTS --epsilon E --start S --end E --out DIR`` releases a stream of
events over time (:mod:`veil.dp.stream`).

The budget is kept in a release ledger (:mod:`veil.ledger`), the one record of what was spent:

* ``--budget-file B`` is a ledger in the SQLite file ``B`` that keeps one table's budget: its
  population is named after the table's file and bound to the table's content as parsed (line
  ends, quoting, the order of rows and of columns do not change it; any changed value, row or
  column does, and then the file is refused as another table's). The binding is a fingerprint
  keyed with the curator's key (:mod:`veil.ledger.binding`), never shown. A missing file is
  created, whole or not at all, when ``--budget E[,D]`` says how much may be spent (sequential
  composition). A JSON budget file of an earlier veil is refused with one sentence saying how to
  import it (``veil ledger import``).
* ``--ledger L`` charges a shared ledger (an SQLite file or a PostgreSQL URL): ``--population P``,
  or the population the table belongs to (with ``--budget``, one named after the file is made).
  A table not yet registered under the population is registered with the query's charge, in its
  transaction; a refused query registers nothing.

``--out DIR`` writes the answer and a sealed manifest that names its charge (``answer.json``,
``manifest.json``), for ``veil publish``.

**What an analyst sees depends on the data only through the noisy answers.** The answer, its
manifest, ``--json``, the budget lines, every refusal and ``veil ledger status``/``history``
name a population by the name the curator gave it, never by anything computed from the table.

Order of work, so that a failing query charges nothing and every answer shown is paid for: every
option is checked and the data read; the ledger's history and the population's charges are
verified; the query checks its parameters and charges, and the charge is committed to the ledger
(one transaction, re-checked against every charge other processes committed) before any noise is
drawn; then the answer is written and printed. A query refused before its charge leaves the ledger
as it was; if the noise draw fails after it, the budget stays spent (the safe side).

``--seed N`` makes a reproducible experiment, labelled NOT fit for release; it is still charged.

A CSV line that is not a well-formed record (the wrong number of fields, bytes that are not UTF-8)
is left out by a public rule that reads each line on its own (:mod:`veil.data.lenient`), and how
many were left out is shown nowhere: one malformed record never decides whether anything is
answered. ``--strict`` refuses the file at its first such line instead, naming it, for the
curator checking a file.

``--engine spark [--master M]`` answers count, sum, mean and histogram on Apache Spark, which
collects the distinct values of the columns read with their counts (:mod:`veil.engines.spark`);
it computes no dataset id, so it takes no ledger and no ``--out``.
"""

from __future__ import annotations

import json
import math
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, List, Optional

import numpy as np
import typer

from veil.cli.console import (Console, ENGINE, MASTER, command_group, engine_named, fails_cleanly, parse_pairs, reads_tables,
                              split_names, stage, terminal)
from veil.cli.dp_query_options import QUERY_DATA, QUERY_ENGINE, QUERY_MASTER, QUERY_OUT, QUERY_SPEC
from veil.cli.report import dp_report_command
from veil.data.hierarchy import Hierarchy
from veil.dp.accountant import Accountant
from veil.dp.budget import Budget
from veil.dp.correlation_accountant import step_epsilons
from veil.dp.exact import show
from veil.dp.noise import NoiseSource
from veil.dp.queries import (
    DEFAULT_GRID,
    QueryResult,
    _Columns,
    dp_count,
    dp_histogram,
    dp_mean,
    dp_quantile,
    dp_sum,
    postprocess,
)
from veil.dp.stream import FILES as STREAM_FILES
from veil.dp.zcdp_accountant import ZCDPBudget
from veil.dp.stream import StreamSettings, read_transition_matrix, release_stream
from veil.dp.temporal import TemporalCorrelation
from veil.errors import DataError, ParameterError
from veil.inputs import read_text
from veil.ledger import Ledger, LedgerError
from veil.ledger.answers import write_answer
from veil.ledger.binding import TableRef
from veil.output.targets import check_targets

dp_app = command_group(no_args_is_help=True, help="Differentially private queries, charged to a release ledger.")

# --------------------------------------------------------------------------- shared options

DATA = typer.Argument(..., help="CSV or Parquet table to query.")
EPSILON = typer.Option(..., "--epsilon", help="Privacy loss ε > 0 this query spends.")
PRICE = typer.Option(None, "--epsilon", help="Privacy loss ε > 0 this query spends (or give --rho).")
RHO = typer.Option(None, "--rho", help="With --mechanism gaussian: the ρ > 0 of ρ-zCDP this query spends, "
                                       "instead of ε; its budget is then kept in ρ.")
MECHANISM = typer.Option(None, "--mechanism", help="laplace (discrete Laplace; Gaussian when --delta > 0) or "
                                                   "gaussian (with --rho: discrete Gaussian for counts, Gaussian "
                                                   "for sums, ρ-zCDP; with --epsilon and --delta: (ε, δ)).")
DELTA = typer.Option(0.0, "--delta", help="δ in [0, 1); δ > 0 switches to Gaussian noise.")
BUDGET_FILE = typer.Option(None, "--budget-file", help="A ledger of this table's budget alone (an SQLite file); "
                                                       "created, with --budget, when missing.")
LEDGER = typer.Option(None, "--ledger", help="A release ledger (SQLite file or postgresql:// URL) to charge.")
POPULATION = typer.Option(None, "--population", help="With --ledger: the population to charge (default: this "
                                                     "table's own).")
BUDGET = typer.Option(None, "--budget", help="E[,D]: the total budget when the budget file or population is made "
                                             "(with --rho: R,D, the budget in ρ and the δ it is stated at).")
OUT = typer.Option(None, "--out", help="Folder to write answer.json and manifest.json in, for veil publish.")
BY = typer.Option(None, "--by", help="Who charges (default: the operating-system user).")
SEED = typer.Option(None, "--seed", help="Seeded noise for experiments (a whole number >= 0): NOT fit for release.")
JSON = typer.Option(False, "--json", help="Print one JSON object.")
DELIMITER = typer.Option(None, "--delimiter", help="CSV delimiter (default: sniffed).")
BOUNDS = typer.Option(None, "--bounds", help="LO,HI: the public clamping range (never from the data).")
STRICT = typer.Option(False, "--strict", help="Refuse the table at its first malformed CSV line (wrong number of "
                                              "fields, not UTF-8), naming it, instead of leaving such lines out: "
                                              "for the curator checking a file.")
BACKWARD = typer.Option(None, "--backward", help="Backward transition matrix P^B (text, one row a line): "
                                                 "P^B[i,j] = Pr(value j at t-1 | value i at t).")
FORWARD = typer.Option(None, "--forward", help="Forward transition matrix P^F (text, one row a line): "
                                               "P^F[i,j] = Pr(value j at t | value i at t-1).")


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


def _price(epsilon: Optional[float], delta: float, rho: Optional[float],
           mechanism: Optional[str]) -> tuple[Optional[float], float, Optional[float]]:
    """(ε, δ, ρ) of a query from --epsilon, --delta, --rho and --mechanism, checked: ε (with δ) or ρ."""
    if mechanism not in (None, "laplace", "gaussian"):
        raise ParameterError(f"--mechanism is laplace or gaussian, not {mechanism!r}.")
    if (epsilon is None) == (rho is None):
        raise ParameterError("give the query's cost as --epsilon E or, with --mechanism gaussian, as --rho R; not "
                             "both." if rho is not None else "give the query's cost with --epsilon E (or --rho R "
                             "with --mechanism gaussian).")
    if rho is not None:
        if mechanism == "laplace":
            raise ParameterError("Laplace noise is priced in ε; give --epsilon, or --mechanism gaussian with --rho.")
        if delta != 0.0:
            raise ParameterError("a query priced in ρ (--rho) has no δ of its own; leave --delta out (the budget "
                                 "states its δ).")
        if not rho > 0 or not math.isfinite(rho):
            raise ParameterError(f"--rho must be a positive finite number, got {rho:g}.")
        return None, 0.0, rho
    if mechanism == "gaussian" and delta == 0.0:
        raise ParameterError("Gaussian noise needs --delta > 0 with --epsilon, or give --rho R for ρ-zCDP.")
    if mechanism == "laplace" and delta != 0.0:
        raise ParameterError("Laplace noise is pure ε-DP; leave --delta out, or use --mechanism gaussian.")
    return epsilon, delta, None


def _budget(text: str, in_rho: bool = False) -> Budget | ZCDPBudget:
    parts = [p.strip() for p in text.split(",")]
    if in_rho:
        if len(parts) != 2:
            raise ParameterError(f"with --rho, --budget takes R,D (the budget's ρ and the δ it is stated at), got "
                                 f"{text!r}.")
        return ZCDPBudget(_number(parts[0], "the budget's rho"), _number(parts[1], "the budget's delta"))
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


def _category_list(name: str, value: str) -> list[str]:
    """``v1,v2,…`` or the path of a file with one value a line."""
    path = Path(value)
    if "," not in value and path.is_dir():
        raise DataError(f"the categories of '{name}' name {value!r}, a folder; give a file with one value a line.")
    if "," not in value and path.is_file():
        text = read_text(path, "the categories file", encoding="utf-8-sig")  # a regular file, of a document's size
        return [line.strip() for line in text.splitlines() if line.strip()]
    if "," not in value and ("/" in value or path.suffix.lower() in (".txt", ".csv")):
        raise DataError(f"the categories file {value!r} of '{name}' does not exist; check the path, or list the "
                        f"values as {name}=v1,v2,….")
    return [v.strip() for v in value.split(",")]


def _categories(items: Optional[List[str]], hierarchies: Optional[List[str]]) -> dict:
    """The public categories per column from ``--categories`` and ``--hierarchy`` (its leaves)."""
    out: dict = {name: _category_list(name, value) for name, value in parse_pairs(items, "--categories").items()}
    for name, value in parse_pairs(hierarchies, "--hierarchy").items():
        if name in out:
            raise ParameterError(f"column '{name}' has both --categories and --hierarchy; give one.")
        out[name] = Hierarchy.read_csv(value)
    return out


class _Run:
    """What a query command prepares before it charges anything."""

    def __init__(self, data: Path, epsilon: Optional[float], delta: float, budget_file: Optional[Path],
                 budget: Optional[str], seed: Optional[int], delimiter: Optional[str], ledger: Optional[str] = None,
                 population: Optional[str] = None, out: Optional[Path] = None, by: Optional[str] = None,
                 engine: str = "local", master: Optional[str] = None, reads: tuple[str, ...] = (),
                 strict: bool = False, rho: Optional[float] = None, read=None):
        if rho is None and (not epsilon > 0 or not math.isfinite(epsilon)):
            raise ParameterError(f"--epsilon must be a positive finite number, got {epsilon:g}.")
        if not 0.0 <= delta < 1.0:
            raise ParameterError(f"--delta must lie in [0, 1), got {delta:g}.")
        if budget_file is not None and ledger is not None:
            raise ParameterError("give --ledger or --budget-file, not both.")
        if population is not None and ledger is None:
            raise ParameterError("--population applies only with --ledger.")
        self.noise = NoiseSource.seeded(seed) if seed is not None else NoiseSource.secure()
        self.new_budget = _budget(budget, rho is not None) if budget is not None else None
        if budget_file is None and ledger is None and self.new_budget is not None:
            raise ParameterError("--budget applies only with --budget-file or --ledger.")
        if engine == "spark" and (budget_file is not None or ledger is not None or out is not None):
            raise ParameterError("a ledger (--budget-file, --ledger) and --out name the table by its fingerprint, "
                                 "which the Spark engine does not compute; charge a veil.dp.Accountant in Python, "
                                 "or use the local engine.")
        reader = engine_named(engine, master)
        if engine != "spark" and read is None and not data.is_file():
            raise DataError(f"data file {str(data)!r} does not exist; check the path.")
        self.location = str(budget_file) if budget_file is not None else ledger
        self.single = budget_file is not None  # a budget file is the ledger of one table's budget
        self.ledger = None if self.location is None else Ledger(self.location, by=by)
        self.fresh = False
        if self.ledger is not None and not self.ledger.store.check_file(must_exist=not self.single):
            if self.new_budget is None:
                raise LedgerError(f"budget file {self.location!r} does not exist; give the budget to start it with "
                                  f"({'--budget R,D' if rho is not None else '--budget E[,D]'}).")
            self.fresh = True
        self.out = out
        if out is not None:
            check_targets([out / "answer.json", out / "manifest.json"], reads=[data, budget_file], make_folders=True)
        if read is not None:  # read by veil dp query's Spark engine (veil.cli.dp_query_spark)
            self.columns, self.table = read.columns, read.ref(ledger is not None or budget_file is not None)
        elif engine == "spark":
            # The true aggregate on Spark: the distinct values of the columns read, with counts.
            self.columns = _Columns(reader.query_dataset(data, list(reads), delimiter, strict=strict))
        else:
            self.columns = _Columns(data, delimiter, strict=strict)
        # The table's fingerprint binds it to its budget (keyed before it is stored) and names it, as a
        # tag, in the manifest; it is never shown.
        if read is None:
            self.table = None if self.ledger is None and out is None else \
                TableRef(_fingerprint(self.columns.table), self.columns.table, data.name)
        self.population = population
        self.accountant: Optional[Accountant] = None
        self.charge: Optional[dict] = None  # the ledger's charge of this answer, which its manifest names

    @contextmanager
    def charging(self) -> Iterator[Optional[Accountant]]:
        """The accountant to charge; every charge is committed to the ledger before it returns."""
        if self.ledger is None:
            yield None
            return
        try:
            if self.fresh:
                self.ledger = Ledger.init(self.location, by=self.ledger.by)[0]
            with self.ledger.budget_session(self.population, create=self.new_budget, table=self.table,
                                            alone=self.single) as session:
                self.accountant = session.accountant
                yield session.accountant
            self.population = session.population
            if session.made:
                self.charge = {"ledger_id": self.ledger.ledger_id, "population": session.population,
                               "seq": session.made[-1]}
        finally:
            self.ledger.close()

    def finish(self, result: QueryResult, as_json: bool) -> None:
        """Write (with --out) and print the answer, charged (when a ledger is given) before its noise was drawn."""
        charge = self.charge
        if self.out is not None:
            write_answer(result, self.out / "answer.json", self.out / "manifest.json",
                         fingerprint=self.table.fingerprint, charge=charge, make_folders=True)
        if not result.fit_for_release:
            terminal(stderr=True, soft_wrap=True).print(f"warning: {result.label}.", markup=False)
        if as_json:
            doc = result.to_dict()
            if self.accountant is not None:
                spent = self.accountant.spent()
                left = self.accountant.remaining()
                doc["budget"] = {"file": self.location, "population": self.population,
                                 "charge": None if charge is None else charge["seq"],
                                 "total": {"epsilon": float(self.accountant.budget.epsilon),
                                           "delta": float(self.accountant.budget.delta)},
                                 "spent": {"epsilon": float(spent.epsilon), "delta": float(spent.delta)},
                                 "left": {"epsilon": float(left[0]), "delta": float(left[1])}}
                if self.accountant.measure == "zcdp":  # composed in ρ; the (ε, δ) above is its tight conversion
                    doc["budget"]["rho"] = _rho_entry(self.accountant)
            sys.stdout.write(json.dumps(doc, indent=2) + "\n")
            return
        console = terminal(soft_wrap=True)
        _render(result, console)
        if self.accountant is not None and self.accountant.measure == "zcdp":
            acc = self.accountant
            left = f"{show(acc.remaining_rho)} (ε = {show(acc.remaining()[0])} at δ = {show(acc.budget.delta)})"
            console.print(f"budget {self.location}: spent ρ = {show(acc.spent_rho)} of {acc.budget}; left ρ = {left}",
                          markup=False)
        elif self.accountant is not None:
            eps, dlt = self.accountant.remaining()
            spent = self.accountant.spent()
            console.print(f"budget {self.location}: spent ε = {show(spent.epsilon)}, "
                          f"δ = {show(spent.delta)} of {self.accountant.budget}; left ε = {show(eps)}, "
                          f"δ = {show(dlt)}", markup=False)
        if self.out is not None:
            console.print(f"wrote {self.out / 'answer.json'} and {self.out / 'manifest.json'}", markup=False)


def _rho_entry(acc) -> dict:
    """The ρ total, spent and left of a zCDP accountant, as JSON numbers."""
    return {"total": float(acc.budget.rho), "spent": float(acc.spent_rho), "left": float(acc.remaining_rho)}


def _fmt(x) -> str:
    if isinstance(x, (int, np.integer)):
        return f"{int(x):,}"
    return f"{float(x):.6g}"


def _render(r: QueryResult, console: Console) -> None:
    cost = f"ρ = {r.rho:g}" if r.rho is not None else \
        f"ε = {r.epsilon:g}" + (f", δ = {r.delta:g}" if r.delta else "")
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

@dataclass(frozen=True)
class _Budget:
    """The options that say where a query is charged (the same on every query command)."""

    budget_file: Optional[Path]
    budget: Optional[str]
    ledger: Optional[str]
    population: Optional[str]
    out: Optional[Path]
    by: Optional[str]

    def run(self, data: Path, epsilon: Optional[float], delta: float, seed: Optional[int], delimiter: Optional[str],
            engine: str = "local", master: Optional[str] = None, reads: tuple[str, ...] = (),
            strict: bool = False, rho: Optional[float] = None, read=None) -> _Run:
        return _Run(data, epsilon, delta, self.budget_file, self.budget, seed, delimiter, self.ledger,
                    self.population, self.out, self.by, engine, master, reads, strict, rho, read)


@dp_app.command("count")
@fails_cleanly
@reads_tables
def count_command(data: Path = DATA, epsilon: Optional[float] = PRICE, delta: float = DELTA,
                  rho: Optional[float] = RHO, mechanism: Optional[str] = MECHANISM,
                  columns: Optional[str] = typer.Option(None, "--columns",
                                                        help="Count non-missing values of this column."),
                  budget_file: Optional[Path] = BUDGET_FILE, budget: Optional[str] = BUDGET,
                  ledger: Optional[str] = LEDGER, population: Optional[str] = POPULATION,
                  out: Optional[Path] = OUT, by: Optional[str] = BY,
                  seed: Optional[int] = SEED, delimiter: Optional[str] = DELIMITER, as_json: bool = JSON,
                  engine: str = ENGINE, master: Optional[str] = MASTER, strict: bool = STRICT) -> None:
    """The noisy number of records (sensitivity 1).

    A CSV line with the wrong number of fields or bytes that are not UTF-8 is not a record and is
    left out (never reported); --strict refuses it instead.
    """
    names = split_names(columns)
    if len(names) > 1:
        raise ParameterError("count reads at most one column; give one name with --columns.")
    epsilon, delta, rho = _price(epsilon, delta, rho, mechanism)
    run = _Budget(budget_file, budget, ledger, population, out, by).run(data, epsilon, delta, seed, delimiter,
                                                                        engine, master, tuple(names), strict, rho)
    with run.charging() as accountant:
        result = dp_count(run.columns, epsilon, delta, column=names[0] if names else None,
                          accountant=accountant, noise=run.noise, rho=rho)
    run.finish(result, as_json)


def _clamped(query: str, answer, data: Path, price: tuple, columns: Optional[str],
             bounds: Optional[str], where: _Budget, seed: Optional[int], delimiter: Optional[str],
             as_json: bool, engine: str, master: Optional[str], strict: bool) -> None:
    """``sum`` and ``mean``: one numeric column clamped to public bounds, answered by ``answer``.

    ``price``: --epsilon, --delta, --rho and --mechanism as given."""
    epsilon, delta, rho = _price(*price)
    column = _one_column(columns, query)
    lohi = _bounds(bounds, query)
    run = where.run(data, epsilon, delta, seed, delimiter, engine, master, (column,), strict, rho)
    with run.charging() as accountant:
        result = answer(run.columns, column, lohi, epsilon, delta, accountant=accountant, noise=run.noise, rho=rho)
    run.finish(result, as_json)


@dp_app.command("sum")
@fails_cleanly
@reads_tables
def sum_command(data: Path = DATA, epsilon: Optional[float] = PRICE, delta: float = DELTA,
                rho: Optional[float] = RHO, mechanism: Optional[str] = MECHANISM,
                columns: Optional[str] = typer.Option(None, "--columns", help="The numeric column to sum."),
                bounds: Optional[str] = BOUNDS, budget_file: Optional[Path] = BUDGET_FILE,
                budget: Optional[str] = BUDGET, ledger: Optional[str] = LEDGER,
                population: Optional[str] = POPULATION, out: Optional[Path] = OUT, by: Optional[str] = BY,
                seed: Optional[int] = SEED, delimiter: Optional[str] = DELIMITER, as_json: bool = JSON,
                engine: str = ENGINE, master: Optional[str] = MASTER, strict: bool = STRICT) -> None:
    """The noisy sum of a column clamped to --bounds (sensitivity max(|LO|, |HI|)).

    Cells that are not finite numbers (empty, text such as 'unknown') are left out, and so are
    malformed CSV lines (--strict refuses them).
    """
    _clamped("sum", dp_sum, data, (epsilon, delta, rho, mechanism), columns, bounds,
             _Budget(budget_file, budget, ledger, population, out, by), seed, delimiter, as_json, engine, master,
             strict)


@dp_app.command("mean")
@fails_cleanly
@reads_tables
def mean_command(data: Path = DATA, epsilon: Optional[float] = PRICE, delta: float = DELTA,
                 rho: Optional[float] = RHO, mechanism: Optional[str] = MECHANISM,
                 columns: Optional[str] = typer.Option(None, "--columns", help="The numeric column."),
                 bounds: Optional[str] = BOUNDS, budget_file: Optional[Path] = BUDGET_FILE,
                 budget: Optional[str] = BUDGET, ledger: Optional[str] = LEDGER,
                 population: Optional[str] = POPULATION, out: Optional[Path] = OUT, by: Optional[str] = BY,
                 seed: Optional[int] = SEED, delimiter: Optional[str] = DELIMITER, as_json: bool = JSON,
                 engine: str = ENGINE, master: Optional[str] = MASTER, strict: bool = STRICT) -> None:
    """The noisy mean of a column clamped to --bounds: noisy sum / noisy count, ε split in half.

    Cells that are not finite numbers (empty, text such as 'unknown') are left out, and so are
    malformed CSV lines (--strict refuses them).
    """
    _clamped("mean", dp_mean, data, (epsilon, delta, rho, mechanism), columns, bounds,
             _Budget(budget_file, budget, ledger, population, out, by), seed, delimiter, as_json, engine, master,
             strict)


@dp_app.command("quantile")
@fails_cleanly
@reads_tables
def quantile_command(data: Path = DATA, epsilon: float = EPSILON, delta: float = DELTA,
                     columns: Optional[str] = typer.Option(None, "--columns", help="The numeric column."),
                     q: str = typer.Option("0.5", "--q", help="Quantile(s) in [0, 1], comma-separated; ε is split."),
                     bounds: Optional[str] = BOUNDS,
                     grid: int = typer.Option(DEFAULT_GRID, "--grid",
                                              help="Steps of the public output grid between the bounds."),
                     budget_file: Optional[Path] = BUDGET_FILE, budget: Optional[str] = BUDGET,
                     ledger: Optional[str] = LEDGER, population: Optional[str] = POPULATION,
                     out: Optional[Path] = OUT, by: Optional[str] = BY, seed: Optional[int] = SEED,
                     delimiter: Optional[str] = DELIMITER, as_json: bool = JSON, strict: bool = STRICT) -> None:
    """Noisy quantile(s) of a column clamped to --bounds, by the exponential mechanism (pure ε-DP).

    The answer is a point of a public grid: LO + i·(HI − LO)/GRID, i = 0 … GRID. Cells that are not
    finite numbers are left out, and so are malformed CSV lines (--strict refuses them).
    """
    column = _one_column(columns, "quantile")
    lohi = _bounds(bounds, "quantile")
    qs = [_number(part, "--q") for part in split_names(q)]
    if delta != 0.0:
        raise ParameterError("quantiles are pure epsilon-DP (exponential mechanism); leave --delta out.")
    run = _Budget(budget_file, budget, ledger, population, out, by).run(data, epsilon, delta, seed, delimiter,
                                                                        strict=strict)
    with run.charging() as accountant:
        result = dp_quantile(run.columns, column, qs if len(qs) != 1 else qs[0], lohi, epsilon, grid=grid,
                             accountant=accountant, noise=run.noise)
    run.finish(result, as_json)


@dp_app.command("histogram")
@fails_cleanly
@reads_tables
def histogram_command(data: Path = DATA, epsilon: Optional[float] = PRICE, delta: float = DELTA,
                      rho: Optional[float] = RHO, mechanism: Optional[str] = MECHANISM,
                      columns: Optional[str] = typer.Option(None, "--columns",
                                                            help="Column(s), comma-separated: a contingency table."),
                      categories: Optional[List[str]] = typer.Option(
                          None, "--categories", help="COL=v1,v2,… or COL=FILE (one value a line): the public "
                                                     "categories of a column (repeatable)."),
                      hierarchy: Optional[List[str]] = typer.Option(
                          None, "--hierarchy", help="COL=FILE: an ARX hierarchy whose leaves are the column's "
                                                    "public categories (repeatable)."),
                      data_categories: bool = typer.Option(
                          False, "--data-categories", help="Take the other columns' categories from the data: "
                                                           "the answer is then NOT fit for release."),
                      budget_file: Optional[Path] = BUDGET_FILE, budget: Optional[str] = BUDGET,
                      ledger: Optional[str] = LEDGER, population: Optional[str] = POPULATION,
                      out: Optional[Path] = OUT, by: Optional[str] = BY,
                      seed: Optional[int] = SEED, delimiter: Optional[str] = DELIMITER,
                      raw: bool = typer.Option(False, "--raw", help="No post-processing: noisy cells as drawn."),
                      as_json: bool = JSON, engine: str = ENGINE, master: Optional[str] = MASTER,
                      strict: bool = STRICT) -> None:
    """Noisy counts over every combination of the columns' public categories (sensitivity 1).

    Each column's categories come from --categories or --hierarchy, never from the data (which
    categories occur is itself a disclosure); rows with any other value are left out, and so are
    malformed CSV lines (--strict refuses them). By default the cells are post-processed for
    free: clipped at 0, rounded, and made to add up to their own noisy total.
    """
    epsilon, delta, rho = _price(epsilon, delta, rho, mechanism)
    names = split_names(columns)
    if not names:
        raise ParameterError("histogram needs --columns with at least one column.")
    given = _categories(categories, hierarchy)
    missing = [name for name in names if name not in given]
    if missing and not data_categories:
        first = missing[0]
        raise ParameterError(f"the categories of {', '.join(repr(n) for n in missing)} must be public, not read "
                             f"from the data: give --categories {first}=v1,v2,… (or {first}=FILE, one value a line) "
                             f"or --hierarchy {first}=FILE, or pass --data-categories, which makes the answer not "
                             "fit for release.")
    run = _Budget(budget_file, budget, ledger, population, out, by).run(data, epsilon, delta, seed, delimiter,
                                                                        engine, master, tuple(names), strict, rho)
    with run.charging() as accountant:
        result = dp_histogram(run.columns, names, epsilon, delta, categories=given, data_categories=data_categories,
                              accountant=accountant, noise=run.noise, rho=rho)
    if not raw:
        result = postprocess(result, nonnegative=True, integral=True, consistent=True)
    run.finish(result, as_json)


@dp_app.command("budget")
@fails_cleanly
def budget_command(budget_file: str = typer.Argument(..., help="The budget file or ledger to show."),
                   data: Optional[Path] = typer.Option(None, "--data", help="Show this table's budget (and check "
                                                                            "the file keeps it)."),
                   population: Optional[str] = typer.Option(None, "--population",
                                                            help="Show this population's budget."),
                   backward: Optional[Path] = BACKWARD, forward: Optional[Path] = FORWARD,
                   w: int = typer.Option(1, "--w", help="With --backward/--forward: the window of steps whose "
                                                        "leakage is shown (1: each step's TPL)."),
                   delimiter: Optional[str] = DELIMITER, as_json: bool = JSON) -> None:
    """Show what was spent by what, and what is left (the ledger's history is verified first).

    With --backward and/or --forward transition matrices, also the temporal privacy leakage of the
    charges made at time steps (Cao et al.): what each step's releases leak once the data is
    correlated in time, for any budget whose charges carry steps (temporal, w-event or
    temporal-correlation budgets).
    """
    if data is not None and not data.is_file():
        raise DataError(f"data file {str(data)!r} does not exist; check the path.")
    correlation = _matrices(backward, forward)
    if correlation is None and w != 1:
        raise ParameterError("--w applies only with --backward or --forward.")
    ledger = Ledger(budget_file)
    try:
        name = population or _shown_population(ledger, budget_file,
                                               None if data is None else TableRef.of(data, delimiter=delimiter))
        acc = ledger.budget(name)
    finally:
        ledger.close()
    leakage, first = None, None
    if correlation is not None:
        first, eps = step_epsilons(acc.charges)
        if first is None:
            raise ParameterError(f"the charges of budget file {budget_file!r} carry no time steps, so they have no "
                                 "temporal leakage; it applies to temporal, w-event and temporal-correlation budgets.")
        leakage = correlation.leakage([float(e) for e in eps], w)
    if as_json:
        spent = acc.spent()
        rows = [{**row, "epsilon": float(row["epsilon"]), "delta": float(row["delta"]),
                 "counted": None if row["counted"] is None else float(row["counted"]),
                 **({"rho": float(row["rho"])} if "rho" in row else {})} for row in acc.report()]
        doc = {"file": budget_file, "population": name, "dataset_id": acc.dataset_id, "composition": acc.composition,
               "budget": {"epsilon": float(acc.budget.epsilon), "delta": float(acc.budget.delta)},
               "spent": {"epsilon": float(spent.epsilon), "delta": float(spent.delta), "method": spent.method},
               "charges": rows}
        if acc.measure == "zcdp":  # composed in ρ; the (ε, δ) above is its tight conversion at the budget's δ
            doc["rho"] = _rho_entry(acc)  # and what is left in ε is that of the ρ left, not budget − spent
            doc["left"] = dict(zip(("epsilon", "delta"), map(float, acc.remaining())))
        if leakage is not None:
            doc["temporal_leakage"] = {"first_step": first, "w": w, "maximum": leakage.maximum,
                                       **{k: getattr(leakage, k).tolist()
                                          for k in ("epsilon", "backward", "forward", "temporal", "window")}}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return
    console = terminal(soft_wrap=True)
    console.print(acc.format_report(), markup=False)
    if leakage is not None:
        what = "temporal privacy leakage (TPL)" if w == 1 else f"leakage of {w} consecutive steps"
        console.print(f"under the transition matrices given, per step (Cao et al.): the largest {what} is "
                      f"{leakage.maximum:.6g}", markup=False)
        for line in _leakage_lines(leakage, first):
            console.print(line, markup=False)


def _fingerprint(table) -> str:
    from veil.dp.fingerprint import dataset_id

    return dataset_id(table)


def _shown_population(ledger: Ledger, where: str, table: Optional[TableRef]) -> str:
    """The population whose budget ``veil dp budget`` shows: the table's, or the ledger's only budget."""
    kept = [p.name for p in ledger.populations() if p.budget is not None]
    if table is not None:
        found = ledger.population_of(table)
        if found is None:
            raise LedgerError(f"{where!r} keeps the budget of another table; use the budget file of this table."
                              if kept else f"{where!r} keeps no budget yet; charge it first.")
        return found.name
    if len(kept) != 1:
        listed = ", ".join(repr(name) for name in kept[:5]) + (", …" if len(kept) > 5 else "")
        raise LedgerError(f"{where!r} keeps no budget yet; charge it first." if not kept else
                          f"{where!r} keeps the budgets of several populations ({listed}); name one with "
                          "--population or --data.")
    return kept[0]


# --------------------------------------------------------------------------- streams over time

def _matrices(backward: Optional[Path], forward: Optional[Path]) -> Optional[TemporalCorrelation]:
    """The transition matrices named by --backward and --forward, or ``None`` when neither is."""
    if backward is None and forward is None:
        return None
    pb = None if backward is None else read_transition_matrix(backward, "backward transition matrix")
    pf = None if forward is None else read_transition_matrix(forward, "forward transition matrix")
    return TemporalCorrelation(pb, pf)


@dp_app.command("stream")
@fails_cleanly
@reads_tables
def stream_command(
    events: Path = typer.Argument(..., help="CSV or Parquet table of events, one row each, in time order."),
    epsilon: float = typer.Option(..., "--epsilon", help="ε at the chosen level (per step, per user or per window)."),
    start: int = typer.Option(..., "--start", help="The first time step of the public horizon."),
    end: int = typer.Option(..., "--end", help="The last time step of the public horizon."),
    out: Path = typer.Option(..., "--out", help="Folder for releases.csv, leakage.csv, privacy_loss.png and "
                                                "stream.json (made when missing)."),
    query: str = typer.Option("count", "--query", help="count, histogram (a counter per category) or sum."),
    level: str = typer.Option("event", "--level", help="event, user or w-event."),
    w: Optional[int] = typer.Option(None, "--w", help="Window length in steps (w-event level; at event level "
                                                      "the window the report sums over)."),
    strategy: str = typer.Option("uniform", "--strategy", help="w-event budget: uniform, bd (budget distribution) "
                                                               "or ba (budget absorption)."),
    max_events: int = typer.Option(1, "--max-events", help="User level: the events kept per user (the first m)."),
    categories: Optional[str] = typer.Option(None, "--categories", help="v1,v2,… or FILE (one value a line): the "
                                                                        "histogram's public categories."),
    bounds: Optional[str] = BOUNDS,
    backward: Optional[Path] = BACKWARD,
    forward: Optional[Path] = FORWARD,
    time_column: str = typer.Option("time", "--time-column", help="The column of whole-number time steps."),
    user_column: str = typer.Option("user", "--user-column", help="The column of user ids."),
    value_column: str = typer.Option("value", "--value-column", help="The column of values (histogram, sum)."),
    seed: Optional[int] = SEED, delimiter: Optional[str] = DELIMITER, as_json: bool = JSON,
    strict: bool = typer.Option(False, "--strict", help="Refuse the events at the first malformed one (a time that "
                                                        "is not a whole number, an event out of time order, a "
                                                        "malformed CSV line), naming its row, instead of the public "
                                                        "rule: for the curator checking a file."),
) -> None:
    """Release a stream of (time, user, value) events over time, with the privacy loss of every step.

    Writes the noisy count, histogram or sum of every step at event, user or w-event level, the
    privacy spent per step and, given --backward and/or --forward transition matrices, the
    temporal privacy leakage of every step (Cao et al.), and a figure of it. The horizon, categories
    and bounds are public, never read from the data. An event whose time is not a whole number, and
    a malformed CSV line, is left out; an event out of time order counts at its own time step
    (never reported; --strict refuses them instead).
    """
    if not events.is_file():
        raise DataError(f"events file {str(events)!r} does not exist; check the path.")
    cats = tuple(_category_list("the histogram", categories)) if categories is not None else None
    if query != "histogram" and cats is not None:
        raise ParameterError("--categories applies to --query histogram only.")
    if query != "sum" and bounds is not None:
        raise ParameterError("--bounds applies to --query sum only.")
    settings = StreamSettings(query=query, level=level, epsilon=epsilon, start=start, end=end, w=w,
                              strategy=strategy, max_events=max_events, categories=cats,
                              bounds=_bounds(bounds, "sum") if query == "sum" else None, time_column=time_column,
                              user_column=user_column, value_column=value_column)
    correlation = _matrices(backward, forward)
    reads = [events, backward, forward] + ([Path(categories)] if categories and Path(categories).is_file() else [])
    check_targets([out / name for name in STREAM_FILES], reads=reads, make_folders=True)
    noise = NoiseSource.seeded(seed) if seed is not None else NoiseSource.secure()
    with stage("releasing the stream"):
        result = release_stream(events, settings, correlation=correlation, delimiter=delimiter, noise=noise,
                                strict=strict)
        written = result.write(out, reads=reads)
    if not result.release.fit_for_release:
        terminal(stderr=True, soft_wrap=True).print(f"warning: {result.release.label}.", markup=False)
    if as_json:
        sys.stdout.write(json.dumps({**result.summary(), "files": [str(p) for p in written]}, indent=2) + "\n")
        return
    console = terminal(soft_wrap=True)
    console.print(result.release.guarantee["statement"], markup=False)
    console.print(f"steps {start}..{end}: the most ε spent in {result.release.w} consecutive step(s) is "
                  f"{show(float(result.release.epsilon_window.max()))}", markup=False)
    if result.leakage is not None:
        lk = result.leakage
        worst = int(np.argmax(lk.window))
        what = "temporal privacy leakage" if lk.w == 1 else f"leakage of {lk.w} consecutive steps"
        line = f"{what} under the correlations: at most {lk.maximum:.6g} (time {start + worst})"
        if result.supremum is not None:
            line += (f"; supremum as the stream goes on {result.supremum.window:.6g}" if result.supremum.exists
                     else "; it grows without bound as the stream goes on")
        console.print(line, markup=False)
    elif correlation is not None:
        console.print("user level protects every event of a user together, so the correlations add nothing.",
                      markup=False)
    console.print("wrote " + ", ".join(str(p) for p in written), markup=False)


def _leakage_lines(leakage, first_step: int) -> list[str]:
    header = ("step", "ε", "BPL", "FPL", "TPL") + ((f"window {leakage.w}",) if leakage.w > 1 else ())
    rows = [header]
    for i in range(leakage.epsilon.shape[0]):
        cells = [str(first_step + i)] + [f"{v:.6g}" for v in (leakage.epsilon[i], leakage.backward[i],
                                                               leakage.forward[i], leakage.temporal[i])]
        if leakage.w > 1:
            cells.append(f"{leakage.window[i]:.6g}")
        rows.append(tuple(cells))
    widths = [max(len(r[k]) for r in rows) for k in range(len(header))]
    return ["  ".join(c.ljust(width) for c, width in zip(r, widths)).rstrip() for r in rows]


dp_app.command("report")(dp_report_command)


@dp_app.command("query")
@fails_cleanly
@reads_tables
def query_command(data: Optional[Path] = QUERY_DATA, spec: Path = QUERY_SPEC, out: Path = QUERY_OUT,
                  budget_file: Optional[Path] = BUDGET_FILE, budget: Optional[str] = BUDGET,
                  ledger: Optional[str] = LEDGER, population: Optional[str] = POPULATION, by: Optional[str] = BY,
                  seed: Optional[int] = SEED, delimiter: Optional[str] = DELIMITER, as_json: bool = JSON,
                  strict: bool = STRICT, engine: Optional[str] = QUERY_ENGINE,
                  master: Optional[str] = QUERY_MASTER) -> None:
    """A grouped query from a specification file: every key's aggregates with their intervals.

    Writes the answers (the key columns, then per aggregate its value, _low and _high) and a
    manifest of the transformation (unit, bounds, mechanisms, sensitivities, noise scales, ε, δ or
    ρ), both or neither; the query is charged before its noise is drawn, and a query refused
    charges nothing and writes nothing (veil.cli.dp_query).
    """
    from veil.cli.dp_query import run_query

    run_query(_Budget(budget_file, budget, ledger, population, None, by), data, spec, out, seed, delimiter, as_json,
              strict, engine, master)


@dp_app.command("query-schema")
@fails_cleanly
def query_schema_command() -> None:
    """Print the JSON Schema of a query specification file (veil dp query --spec), for editors."""
    from veil.cli.dp_query import print_query_schema

    print_query_schema()
