"""Benchmark of veil's optimal full-domain generalization beside ANJANA's greedy k-anonymity.

Run from the repository root with the other benchmarks, or alone::

    python benchmarks/run.py --only fulldomain [--rows N] [--repeat R] [--skip-anjana]
                             [--skip-exhaustive] [--out DIR]

veil's :class:`~veil.anonymize.FullDomain` searches the generalization lattice of the bundled
Adult table (8 quasi-identifiers with ARX's hierarchies: 4,320 nodes) for the 5-anonymous node of
least loss, with 0 % and 4 % suppression, and the same on Adult resampled with replacement to
``--rows`` records. In the same run ANJANA (``anjana.anonymity``), which raises one
quasi-identifier at a time until the table is k-anonymous, anonymizes Adult with the same
hierarchies; veil scores ANJANA's node with its own metrics beside the optimum. An exhaustive pass
scores every node of Adult's lattice to confirm each optimum veil reports. The results go to
``fulldomain.json`` and ``fulldomain.md`` in the output folder.
"""

from __future__ import annotations

import argparse
import gc
import importlib.metadata
import math
import os
import platform
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Iterator

import numpy as np

from veil import Dataset, EquivalenceClasses, KAnonymity
from veil.anonymize import FullDomain
from veil.anonymize.fulldomain import failing_classes
from veil.anonymize.lattice import Lattice
from veil.data.bundled import ADULT_QUASI_IDENTIFIERS, adult_csv, adult_hierarchies
from veil.metrics import make_metric

import peer_env
from harness import (goal_lines, SEED, cpu_model, fmt_ratio, fmt_time, fmt_value, read_adult_polars, resample,
                     split_versions, with_peer_versions, wrap)
from timing import best_of, progress

# Every Adult column but the sensitive one is a quasi-identifier here, unlike in the checker
# benchmark, which leaves salary-class out.
QUASI_IDENTIFIERS = list(ADULT_QUASI_IDENTIFIERS) + ["salary-class"]
SENSITIVE = "occupation"
K = 5
LIMITS = (0.0, 0.04)
# veil's default metric first: the goal is stated for it.
METRICS = ("loss", "discernibility", "entropy")
GOAL_METRIC = "loss"
ADULT_GOAL_S = 0.3
LARGE_GOAL_S = 10.0
# Two sums of the same floating-point terms in different orders (a metric at one node reached
# through different roll-ups) may differ in the last bits.
VALUE_RTOL = 1e-9


# ----------------------------------------------------------------------------------- measuring

def make_dataset(source) -> Dataset:
    """veil's Dataset over a CSV path or a frame, with the hierarchy of every column used."""
    files = adult_hierarchies()
    return Dataset(source, quasi_identifiers=QUASI_IDENTIFIERS, sensitive=SENSITIVE,
                   hierarchies={c: files[c] for c in QUASI_IDENTIFIERS + [SENSITIVE]}, delimiter=";")


def suppressible(limit: float, rows: int) -> int:
    """The records a limit allows to suppress, rounded down as veil rounds it, with a little
    slack so that 0.29 · 100 (28.999999999999996 in floating point) allows 29."""
    return math.floor(limit * rows + 1e-9)


def measure_search(dataset: Dataset, k: int, limit: float, metric: str, repeat: int) -> dict:
    """Best time of ``FullDomain.fit`` from the encoded dataset, and what the search found.

    ``fit`` builds the equivalence classes from the encoded columns, then searches; a new
    ``FullDomain`` per run makes a new metric object, so no run reuses another's caches.
    """
    progress(f"veil: k = {k}, {pct(limit)}, {metric} ({dataset.num_rows:,} rows)")
    seconds, fitted = best_of(
        lambda: FullDomain([KAnonymity(k)], suppression_limit=limit, metric=metric).fit(dataset), repeat)
    result = fitted.result_
    return {"k": k, "limit": limit, "metric": metric, "seconds": seconds, "levels": list(result.levels),
            "value": result.loss, "suppressed": result.suppressed_records,
            "nodes_checked": result.nodes_checked, "nodes_total": result.nodes_total,
            "proven_optimal": result.proven_optimal}


def score_node(dataset: Dataset, levels) -> tuple[int, dict[str, float]]:
    """Records failing k-anonymity at a node, and each metric's value with them suppressed."""
    classes = EquivalenceClasses.from_dataset(dataset, levels, track=())
    failing = failing_classes(classes, [KAnonymity(K)])
    return int(classes.sizes[failing].sum()), {m: make_metric(m).loss(classes, failing) for m in METRICS}


@dataclass
class Exhaustive:
    """Every node of a dataset's lattice, scored.

    Attributes:
        seconds: the time to roll up and score every node.
        lattice: the lattice, for node numbers.
        values: per (limit, metric), each node's value; ``inf`` where the node needs more
            suppression than the limit allows.
    """

    seconds: float
    lattice: Lattice
    values: dict[tuple[float, str], np.ndarray]

    def optimum(self, limit: float, metric: str) -> float:
        """The lowest value of any feasible node (``inf`` when none is feasible)."""
        return float(self.values[limit, metric].min())

    def feasible(self, limit: float) -> int:
        """The number of nodes within the limit."""
        return int(np.isfinite(self.values[limit, METRICS[0]]).sum())

    def better_than(self, limit: float, metric: str, value: float) -> int:
        """Feasible nodes whose value is lower than ``value`` beyond rounding."""
        values = self.values[limit, metric]
        return int((values < value - VALUE_RTOL * abs(value)).sum())

    def matches(self, run: dict) -> bool:
        """Whether a search's value is the lowest of all nodes, up to rounding."""
        return math.isclose(run["value"], self.optimum(run["limit"], run["metric"]), rel_tol=VALUE_RTOL)


def every_node(base: EquivalenceClasses,
               heights: list[int]) -> Iterator[tuple[tuple[int, ...], EquivalenceClasses]]:
    """Each node's levels and classes, in lattice order.

    A node is rolled up from the node with its last non-zero level set to 0, which is visited
    just before its subtree: each node is built once, from a node already generalized in the
    earlier columns (smaller than the bottom), and only one node per column is held at a time.
    """
    levels = [0] * len(heights)

    def visit(j: int, classes: EquivalenceClasses):
        if j == len(heights):
            yield tuple(levels), classes
            return
        for level in range(heights[j] + 1):
            levels[j] = level
            yield from visit(j + 1, classes if level == 0 else classes.roll_up(levels))
        levels[j] = 0

    yield from visit(0, base)


def exhaustive(dataset: Dataset) -> Exhaustive:
    """Score every node of the lattice under each limit and metric (independent of the search:
    no tagging and no bounds, only veil's classes and metrics)."""
    progress("exhaustive: every node of the lattice")
    heights = [dataset.generalizations[q].height for q in QUASI_IDENTIFIERS]
    lattice = Lattice(heights)
    values = {(limit, m): np.full(len(lattice), np.inf) for limit in LIMITS for m in METRICS}
    metrics = {m: make_metric(m) for m in METRICS}
    model = KAnonymity(K)
    gc.collect()
    start = time.perf_counter()
    for levels, classes in every_node(EquivalenceClasses.from_dataset(dataset, track=()), heights):
        node = lattice.index(levels)
        failing = failing_classes(classes, [model])
        suppressed = int(classes.sizes[failing].sum())
        for limit in LIMITS:
            if suppressed <= suppressible(limit, dataset.num_rows):
                for key, metric in metrics.items():
                    values[limit, key][node] = metric.loss(classes, failing)
    return Exhaustive(time.perf_counter() - start, lattice, values)


def measure_anjana(dataset: Dataset) -> dict:
    """Time ANJANA's k-anonymity once per limit on Adult, in the peer environment
    (``peers/fulldomain.py``), and score its result with veil.

    ANJANA gets the pandas frame ``pd.read_csv`` makes of the same file and the same hierarchy
    files. At the node ANJANA stops at, veil's count of the records failing k-anonymity must be
    the records ANJANA suppressed, and ANJANA must publish the rest.

    Raises:
        peer_env.PeerError: the peer environment could not be made or ANJANA failed.
    """
    files = adult_hierarchies()
    answer = peer_env.call("fulldomain", "anjana_k_anonymity", csv=str(adult_csv()),
                           hierarchies={q: str(files[q]) for q in QUASI_IDENTIFIERS},
                           quasi_identifiers=QUASI_IDENTIFIERS, k=K, limits=list(LIMITS))
    for run in answer["runs"]:
        if "levels" in run:
            veil_suppressed, run["values"] = score_node(dataset, run["levels"])
            run["agree"] = (veil_suppressed == run["suppressed"]
                            and run["rows_out"] == dataset.num_rows - run["suppressed"])
    return answer


# ------------------------------------------------------------------------------- formatting

def pct(limit: float) -> str:
    """A suppression limit as a percentage, e.g. ``"4 %"``."""
    return f"{limit * 100:g} %"


def fmt_excess(value: float, optimum: float) -> str:
    """How much larger ``value`` is than ``optimum``, in percent (``"—"`` for a zero optimum)."""
    if math.isclose(value, optimum, rel_tol=VALUE_RTOL):
        return "0 %"
    if optimum <= 0:
        return "—"
    excess = (value / optimum - 1) * 100
    return f"+{excess:,.0f} %" if excess >= 10 else f"+{excess:.1f} %"


def fmt_node(levels) -> str:
    """A node as its levels in quasi-identifier order: digits run together when every level is
    below 10 (as here), else separated by commas."""
    if levels is None:
        return "—"
    if all(0 <= v < 10 for v in levels):
        return "".join(str(v) for v in levels)
    return ",".join(str(v) for v in levels)


def adult_label(run: dict) -> str:
    """The row label of a run on Adult: its limit and metric."""
    return f"{pct(run['limit'])}, {run['metric']}"


def large_label(run: dict) -> str:
    """The row label of a run on the large table: its k and limit (the metric is always loss)."""
    return f"k = {run['k']}, {pct(run['limit'])}"


def optimal_mark(run: dict, check: Exhaustive | None) -> str:
    """``"yes"`` when the search proved its node optimal (and the exhaustive pass, if run,
    agrees); ``"no"`` when it did not prove it; ``"WRONG"`` when a proven value is beaten."""
    if check is not None and not check.matches(run):
        return "WRONG"
    return "yes" if run["proven_optimal"] else "no"


def veil_rows(runs: list[dict], label, check: Exhaustive | None) -> list[list[str]]:
    """The cells of the table of veil's runs (one list per run)."""
    return [[label(r), fmt_time(r["seconds"]), fmt_node(r["levels"]), fmt_value(r["value"]),
             f"{r['suppressed']:,}", f"{r['nodes_checked']:,}", optimal_mark(r, check)] for r in runs]


VEIL_HEADER = ["fit", "node", "value", "supp.", "checked", "optimal"]
VEIL_WIDTHS = [9, 10, 13, 7, 9, 9]


def veil_by(results: dict, limit: float, metric: str) -> dict:
    """veil's run on Adult at this limit with this metric."""
    return next(r for r in results["adult"]["runs"] if r["limit"] == limit and r["metric"] == metric)


def anjana_rows(results: dict) -> list[dict]:
    """ANJANA's runs beside veil's loss-optimal search at the same limit."""
    rows = []
    for run in results["anjana"]["runs"]:
        veil_run = veil_by(results, run["limit"], GOAL_METRIC)
        rows.append({"limit": pct(run["limit"]), "seconds": run["seconds"],
                     "node": fmt_node(run.get("levels")),
                     "suppressed": run["suppressed"], "veil": veil_run["seconds"],
                     "speedup": run["seconds"] / veil_run["seconds"],
                     "agree": {True: "yes", False: "NO"}.get(run.get("agree"), "—")})
    return rows


def utility_rows(results: dict) -> list[dict]:
    """Per ANJANA run and metric: ANJANA's value, veil's optimum, and how many nodes beat ANJANA."""
    exhaustive_block = results["adult"].get("exhaustive")
    rows = []
    for run in results["anjana"]["runs"]:
        if "values" not in run:
            continue
        for metric in METRICS:
            optimum = veil_by(results, run["limit"], metric)["value"]
            value = run["values"][metric]
            better = None
            if exhaustive_block:
                counts = exhaustive_block["better_than_anjana"][pct(run["limit"])]
                better = f"{counts[metric]:,} of {exhaustive_block['feasible'][pct(run['limit'])]:,}"
            rows.append({"label": f"{pct(run['limit'])}, {metric}", "anjana": fmt_value(value),
                         "veil": fmt_value(optimum), "excess": fmt_excess(value, optimum),
                         "better": better or "—"})
    return rows


def terminal_report(results: dict) -> str:
    """The results as plain text that fits an 80-column terminal."""
    meta, adult, large = results["meta"], results["adult"], results["large"]
    check = results.get("_exhaustive")
    own, peers = split_versions(meta["versions"], ("anjana", "pycanon"))
    out = [f"veil full-domain anonymization benchmark, {meta['date']}",
           f"{meta['cpu']}, {meta['cores']} cores, Python {meta['python']}",
           ", ".join(f"{k} {v}" for k, v in own.items()),
           *([f"peers: {', '.join(f'{k} {v}' for k, v in peers.items())}"] if peers else []),
           *wrap(f"QIs: {', '.join(QUASI_IDENTIFIERS)}", "     "),
           *wrap(f"sensitive: {SENSITIVE} (declared); {K}-anonymity; lattice of {meta['nodes_total']:,} "
                 f"nodes; veil: best of {meta['repeat']} run{'s' if meta['repeat'] > 1 else ''}", "  "),
           "node = the level of each QI, in the order above; value = the metric's value there"]

    def table(block: dict, first: str, label) -> list[str]:
        head = f"  {first:<19}" + "".join(f"{h:>{w}}" for h, w in zip(VEIL_HEADER, VEIL_WIDTHS))
        lines = ["", head, "  " + "-" * (len(head) - 2)]
        for cells in veil_rows(block["runs"], label, check if block is adult else None):
            lines.append(f"  {cells[0]:<19}" + "".join(f"{c:>{w}}" for c, w in zip(cells[1:], VEIL_WIDTHS)))
        return lines

    out += ["", f"Adult: {adult['rows']:,} rows",
            f"  load + encode (Dataset)  {fmt_time(adult['load_encode_s']):>10}  (from the CSV file)",
            f"  class building           {fmt_time(adult['classes_s']):>10}  (part of every fit)"]
    out += table(adult, "limit, metric", adult_label)
    if "exhaustive" in adult:
        ex = adult["exhaustive"]
        verdict = "every optimum above is the lowest value of all nodes" if ex["all_match"] else \
            "SOME OPTIMUM ABOVE IS BEATEN (marked WRONG)"
        feasible = ", ".join(f"{n:,} feasible at {limit}" for limit, n in ex["feasible"].items())
        per_node = fmt_time(ex["seconds"] / meta["nodes_total"])
        out += [""] + wrap(f"  Exhaustive check: all {meta['nodes_total']:,} nodes rolled up and scored in "
                           f"{fmt_time(ex['seconds'])}, {per_node} a node ({feasible}); {verdict}.", "  ")
    elif adult.get("exhaustive_skipped"):
        out += ["", f"  Exhaustive check {adult['exhaustive_skipped']}"]

    if results.get("anjana"):
        out += ["", f"ANJANA k-anonymity ({results['anjana']['function']}), timed once",
                f"  {'limit':<7}{'ANJANA':>9}{'node':>10}{'supp.':>7}{'rows agree':>12}{'veil fit':>10}"
                f"{'veil faster by':>16}", "  " + "-" * 71]
        rows = anjana_rows(results)
        for row in rows:
            out.append(f"  {row['limit']:<7}{fmt_time(row['seconds']):>9}{row['node']:>10}"
                       f"{row['suppressed']:>7,}{row['agree']:>12}{fmt_time(row['veil']):>10}"
                       f"{fmt_ratio(row['speedup']):>16}")
        total = sum(r["seconds"] for r in rows)
        out.append(f"  {'both':<7}{fmt_time(total):>9}")
        for run in results["anjana"]["runs"]:
            if run["printed"]:
                out += wrap(f"  ANJANA printed at {pct(run['limit'])}: {run['printed']}", "    ")
        utility = utility_rows(results)
        if utility:
            out += ["", "ANJANA's node scored by veil, beside veil's optimum (lower is better)",
                    f"  {'limit, metric':<19}{'ANJANA':>12}{'veil optimum':>14}{'ANJANA worse':>14}"
                    f"{'better nodes':>15}", "  " + "-" * 74]
            for row in utility:
                out.append(f"  {row['label']:<19}{row['anjana']:>12}{row['veil']:>14}{row['excess']:>14}"
                           f"{row['better']:>15}")
    else:
        out += [""] + wrap(f"ANJANA {results['anjana_skipped']}", "  ")

    out += ["", f"Adult resampled: {large['rows']:,} rows (numpy default_rng({large['seed']}))",
            f"  load + encode (Dataset)  {fmt_time(large['load_encode_s']):>10}  (from the polars frame)",
            f"  class building           {fmt_time(large['classes_s']):>10}  (part of every fit)"]
    out += table(large, "k, limit (loss)", large_label)

    out += ["", "Notes"] + [line for note in results["notes"] for line in wrap("  - " + note, "    ")]
    out += goal_lines(results["goals"])
    return "\n".join(out)


def markdown_report(results: dict) -> str:
    """The results as Markdown tables, ready to paste into the README."""
    meta, adult, large = results["meta"], results["adult"], results["large"]
    check = results.get("_exhaustive")
    versions = ", ".join(f"{k} {v}" for k, v in meta["versions"].items())
    out = ["## Full-domain anonymization benchmark", "",
           f"Measured {meta['date']} on {meta['cpu']} ({meta['cores']} cores), Python {meta['python']}, "
           f"{versions}. Quasi-identifiers: {', '.join(QUASI_IDENTIFIERS)} (ARX's hierarchies, a lattice of "
           f"{meta['nodes_total']:,} nodes); sensitive: {SENSITIVE}. veil's `FullDomain([KAnonymity({K})], "
           f"suppression_limit=…, metric=…)`: *fit* is the best of {meta['repeat']} run"
           f"{'s' if meta['repeat'] > 1 else ''} of `fit` from the encoded Dataset (class building "
           f"included); ANJANA is run once per limit. *Node* lists the level of each quasi-identifier in "
           f"that order; *value* is the metric's value there (lower is better). Reproduce with "
           f"`python benchmarks/run.py --only fulldomain`."]
    numbers = ["veil fit", "node", "value", "suppressed", f"nodes checked (of {meta['nodes_total']:,})"]

    def table(block: dict, first: str, label, with_check: bool) -> list[str]:
        # The proof and the exhaustive verdict get columns of their own here (the terminal folds
        # them into one), so the search's proof is passed on unchanged.
        verdicts = ["proven optimal"] + (["exhaustive agrees"] if with_check else [])
        cols = [first] + numbers + verdicts
        align = ["---"] + ["---:"] * len(numbers) + ["---"] * len(verdicts)
        lines = ["", "| " + " | ".join(cols) + " |", "|" + "|".join(align) + "|"]
        for run, cells in zip(block["runs"], veil_rows(block["runs"], label, None)):
            if with_check:
                cells.append("yes" if check.matches(run) else "**NO**")
            lines.append("| " + " | ".join(cells) + " |")
        return lines

    out += ["", f"### Adult: {adult['rows']:,} rows", "",
            f"Load + encode (`Dataset`, from the CSV file): {fmt_time(adult['load_encode_s'])}; class "
            f"building (part of every fit): {fmt_time(adult['classes_s'])}."]
    out += table(adult, "Limit, metric", adult_label, check is not None)
    if "exhaustive" in adult:
        ex = adult["exhaustive"]
        feasible = ", ".join(f"{n:,} feasible at {limit}" for limit, n in ex["feasible"].items())
        out += ["", f"Exhaustive check: all {meta['nodes_total']:,} nodes rolled up and scored with veil's "
                    f"metrics (every limit and metric at once, no tagging, no bounds) in "
                    f"{fmt_time(ex['seconds'])}, {fmt_time(ex['seconds'] / meta['nodes_total'])} a node "
                    f"({feasible})."]
    elif adult.get("exhaustive_skipped"):
        out += ["", f"Exhaustive check {adult['exhaustive_skipped']}"]

    if results.get("anjana"):
        out += ["", "### ANJANA beside veil on Adult", "",
                f"ANJANA {meta['versions'].get('anjana', '')}, `{results['anjana']['function']}` (what "
                f"its `k_anonymity` runs), timed once per limit. *Rows agree*: ANJANA's suppressed count "
                f"is veil's count of records in classes below k at ANJANA's node, and it publishes the "
                f"rest. *veil faster by* divides ANJANA's time by veil's fit with the loss metric at the "
                f"same limit.", "",
                "| Limit | ANJANA | node | suppressed | rows agree | veil fit (loss) | veil faster by |",
                "|---|---:|---:|---:|---|---:|---:|"]
        rows = anjana_rows(results)
        for row in rows:
            out.append(f"| {row['limit']} | {fmt_time(row['seconds'])} | {row['node']} | "
                       f"{row['suppressed']:,} | {row['agree']} | {fmt_time(row['veil'])} | "
                       f"{fmt_ratio(row['speedup'])} |")
        out.append(f"| both | {fmt_time(sum(r['seconds'] for r in rows))} | | | | | |")
        utility = utility_rows(results)
        if utility:
            out += ["", "ANJANA's node scored with veil's metrics, beside veil's optimum for each metric. "
                        "*Better nodes*: feasible nodes (within the limit) with a lower value than ANJANA's, "
                        "of all feasible nodes.", "",
                    "| Limit, metric | ANJANA | veil optimum | ANJANA worse by | better nodes |",
                    "|---|---:|---:|---:|---:|"]
            out += [f"| {r['label']} | {r['anjana']} | {r['veil']} | {r['excess']} | {r['better']} |"
                    for r in utility]
    else:
        out += ["", f"ANJANA {results['anjana_skipped']}"]

    out += ["", f"### Adult resampled: {large['rows']:,} rows", "",
            f"Drawn with replacement with `numpy.random.default_rng({large['seed']})`, built in memory. "
            f"Load + encode (`Dataset`, from the polars frame): {fmt_time(large['load_encode_s'])}; "
            f"class building (part of every fit): {fmt_time(large['classes_s'])}. Metric: loss."]
    out += table(large, "k, limit", large_label, False)
    out += ["", "Notes:", ""] + [f"- {note}" for note in results["notes"]]
    out += ["", "Goals:", ""] + [f"- {g['goal']}: {g['measured']}, **{'met' if g['met'] else 'not met'}**"
                                 for g in results["goals"]]
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------- the run

def goals(adult: dict, large: dict) -> list[dict]:
    """The issue's two goals, checked against this run's figures."""
    timed = [r for r in adult["runs"] if r["metric"] == GOAL_METRIC]
    worst = max(timed, key=lambda r: r["seconds"])
    slowest = max(large["runs"], key=lambda r: r["seconds"])
    large_s = large["load_encode_s"] + slowest["seconds"]
    return [
        {"goal": f"the optimal node on Adult under {ADULT_GOAL_S} s ({K}-anonymity, {GOAL_METRIC}, "
                 f"{' and '.join(pct(l) for l in LIMITS)}, fit from the encoded Dataset)",
         "measured": f"worst {fmt_time(worst['seconds'])} ({pct(worst['limit'])}, "
                     f"{worst['nodes_checked']:,} nodes checked)",
         "met": worst["seconds"] < ADULT_GOAL_S},
        {"goal": f"{large['rows']:,} rows under {LARGE_GOAL_S:g} s",
         "measured": f"{fmt_time(large_s)} (load + encode {fmt_time(large['load_encode_s'])} + slowest fit "
                     f"{fmt_time(slowest['seconds'])}, {large_label(slowest)})",
         "met": large_s < LARGE_GOAL_S},
    ]


def measure_table(source, repeat: int, runs: list[tuple[int, float, str]]) -> dict:
    """Load + encode, class building, and each (k, limit, metric) search on one table."""
    progress("veil: load + encode")
    load_s, dataset = best_of(lambda: make_dataset(source), repeat)
    progress("veil: class building")
    # What fit builds first: the classes of the bottom node, with no count matrix (k-anonymity
    # and these metrics read only class sizes and cells).
    classes_s, _ = best_of(lambda: EquivalenceClasses.from_dataset(dataset, track=()), repeat)
    return {"rows": dataset.num_rows, "load_encode_s": load_s, "classes_s": classes_s,
            "runs": [measure_search(dataset, k, limit, metric, repeat) for k, limit, metric in runs],
            "_dataset": dataset}


def run(rows: int, repeat: int, skip_anjana: bool, skip_exhaustive: bool) -> dict:
    """Measure everything and return the results (times in seconds).

    Entries whose key starts with ``_`` (the datasets, the exhaustive pass) are for the reports
    and are left out of the JSON file.
    """
    adult = measure_table(adult_csv(), repeat, [(K, limit, m) for limit in LIMITS for m in METRICS])
    dataset = adult["_dataset"]
    results = {"adult": adult}
    if skip_exhaustive:
        adult["exhaustive_skipped"] = "skipped on request (--skip-exhaustive)."
    else:
        check = exhaustive(dataset)
        results["_exhaustive"] = check
        adult["exhaustive"] = {
            "seconds": check.seconds, "all_match": all(check.matches(r) for r in adult["runs"]),
            "feasible": {pct(limit): check.feasible(limit) for limit in LIMITS},
            "optimum": {pct(limit): {m: check.optimum(limit, m) for m in METRICS} for limit in LIMITS}}

    if skip_anjana:
        results["anjana_skipped"] = "skipped on request (--skip-anjana)."
    else:
        try:
            results["anjana"] = measure_anjana(dataset)
        # A peer that fails (an API change, a crash inside it) is reported, not fatal: veil's own
        # figures are still worth writing.
        except peer_env.PeerError as exc:
            results["anjana_skipped"] = f"failed: {exc}"
    if "anjana" in results and "_exhaustive" in results:
        check = results["_exhaustive"]
        adult["exhaustive"]["better_than_anjana"] = {
            pct(r["limit"]): {m: check.better_than(r["limit"], m, r["values"][m]) for m in METRICS}
            for r in results["anjana"]["runs"] if "values" in r}

    progress(f"building {rows:,} rows")
    frame = resample(read_adult_polars(), rows)
    # Resampling draws each record rows/n times on average, so classes grow by that factor; k
    # scaled by it asks of the large table what k asks of Adult and makes the search work.
    scaled_k = max(K, round(K * rows / dataset.num_rows))
    ks = sorted({K, scaled_k})
    large = measure_table(frame, repeat, [(k, limit, GOAL_METRIC) for k in ks for limit in LIMITS])
    large["seed"] = SEED
    results["large"] = large
    progress("")

    notes = [
        "Each fit starts from the encoded Dataset: it builds the classes of the bottom node, then "
        "searches the lattice (nodes are rolled up from cached classes, never re-read from the rows). "
        "Load + encode is paid once per table and shown apart.",
        "'checked' counts the nodes whose classes were evaluated; the others were settled by "
        "predictive tagging (k-anonymity is monotonic, with or without suppression) or pruned by "
        "the metric's lower bound. 'optimal' is the search's own proof"
        + ("; the exhaustive pass scores every node (no tagging, no bounds) and would mark a "
           "beaten optimum WRONG." if "_exhaustive" in results else "."),
    ]
    if "anjana" in results:
        notes.append("ANJANA gets the pandas frame pd.read_csv makes of the same file and the same ARX "
                     "hierarchy files read as dict(pd.read_csv(file, header=None)), the format its README "
                     "documents. Its search raises one quasi-identifier at a time (the one with the most "
                     "distinct values) until the table, less the classes below k if they fit the limit, is "
                     "k-anonymous, checking with pyCANON at every step; it does not look for the best node.")
    unscaled = [r for r in large["runs"] if r["k"] == K]
    # Without suppression the bottom node is chosen only if it is k-anonymous itself.
    if not any(next(r for r in unscaled if r["limit"] == 0)["levels"]):
        draws = rows / dataset.num_rows
        notes.append(f"At {rows:,} rows each Adult record is drawn {draws:,.1f} times on average, so the "
                     f"ungeneralized table is already {K}-anonymous: the k = {K} searches stop after "
                     f"{max(r['nodes_checked'] for r in unscaled)} nodes and time mostly class building. "
                     f"The k = {scaled_k} lines scale k by the same factor, so that the search does the "
                     f"work it does on Adult, on classes {draws:,.0f} times larger.")
    meta = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "cpu": cpu_model(),
            "cores": os.cpu_count(), "python": platform.python_version(),
            "versions": versions(results.get("anjana")), "repeat": repeat, "rows": rows,
            "quasi_identifiers": QUASI_IDENTIFIERS, "sensitive": SENSITIVE, "k": K,
            "nodes_total": adult["runs"][0]["nodes_total"]}
    ordered = {"meta": meta, "adult": adult}
    ordered.update((k, v) for k, v in results.items() if k.startswith("anjana"))
    ordered.update(large=large, notes=notes, goals=goals(adult, large))
    if "_exhaustive" in results:
        ordered["_exhaustive"] = results["_exhaustive"]
    return ordered


def versions(anjana: dict | None) -> dict[str, str]:
    """The installed version of veil and its dependencies that matter here, then the peer
    environment's (ANJANA and what it runs on) when ANJANA was timed."""
    own = {name: importlib.metadata.version(name) for name in ("veil", "numpy", "pandas", "polars", "pyarrow")}
    return with_peer_versions(own, anjana["versions"]) if anjana else own


def for_json(value):
    """``value`` without the entries kept only for the reports (keys starting with ``_``)."""
    if isinstance(value, dict):
        return {k: for_json(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list):
        return [for_json(v) for v in value]
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's own options, added to the shared command line."""
    parser.add_argument("--skip-anjana", action="store_true",
                        help="full-domain benchmark: do not time ANJANA (the slow peer)")
    parser.add_argument("--skip-exhaustive", action="store_true",
                        help="full-domain benchmark: do not score every lattice node to confirm the optima")
