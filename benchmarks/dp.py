"""DP benchmark (issue 6): a DP histogram and a 3-way contingency table over 10,000,000 rows,
veil beside diffprivlib and OpenDP doing the same, in one run.

The table is synthetic (``numpy.random.default_rng(SEED)``): three text columns ``a``, ``b`` and
``c`` with 10, 20 and 50 categories (``a00`` … ``c49``), each drawn independently from a Zipf(1)
distribution (category i with probability ∝ 1/(i + 1)), so the counts are skewed: the rarest of
the 10,000 cells of the contingency table expects about 20 records. Every tool answers the same
two queries at ε = 1, δ = 0, with the categories given (public, fixed in advance):

* histogram(a): 10 cells; contingency(a, b, c): 10 × 20 × 50 = 10,000 cells.

**veil**: ``veil.dp.queries.dp_histogram`` on an encoded ``Dataset`` (the encoding of the three
text columns is timed apart), in secure mode (the default: the exact discrete Laplace sampler of
Canonne, Kamath and Steinke that OpenDP implements, vectorized over bulk bytes of the operating
system's CSPRNG) and in seeded mode (numpy). The noise alone (``Geometric(ε).release`` on as many
cells) is timed too, to give the time per cell of noise.

**Secure at speed** (issue 12): the same two queries on a table of 1,000,000 rows drawn the same
way (or ``--dp-rows``, if fewer), veil secure against veil seeded; the goal is the secure path
within 1.5× of the seeded one.

**diffprivlib**: ``diffprivlib.tools.histogram`` and ``histogramdd`` on the integer codes of the
same columns, with ``bins`` and ``range`` set to the known categories (one bin per code).

**OpenDP**: ``make_count_by_categories`` (the categories given, no null category) chained with
``then_laplace`` (discrete Laplace on integer counts) over the integer codes; the contingency
table counts a mixed-radix key of the three codes, built inside the timed step. OpenDP's polars
pipeline (``Context`` with a ``Margin`` whose keys are public, ``group_by(...).agg(dp.len())``,
``with_keys``) is tried too; when it cannot run the report says why.

The peers start from integer codes, veil from its encoded Dataset: both are the tools' ready
input. veil's encoding from the text columns is reported beside them. The peers run in the peer
environment (``peer_env.py``; its code is ``peers/dp.py``), which pins the polars OpenDP's
polars plugin reads; veil and its own OpenDP sampler run here.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import math
import os
import platform
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import polars as pl

import peer_env
from harness import SEED, cpu_model, fmt_ratio, fmt_time, positive_int, with_peer_versions, wrap
from peers.dp import labels, true_counts
from timing import best_of, progress

ROWS = 10_000_000
SECURE_ROWS = 1_000_000
SECURE_GOAL_RATIO = 1.5
EPSILON = 1.0
COLUMNS = (("a", 10), ("b", 20), ("c", 50))
HIST_COLUMNS = ("a",)
CONTINGENCY_COLUMNS = ("a", "b", "c")
ZIPF_EXPONENT = 1.0
#: a run's largest absolute error over the cells stays within this quantile of its distribution
ERROR_QUANTILE = 0.99
TOOLS = ("veil_secure", "veil_seeded", "diffprivlib", "opendp")
TOOL_LABELS = {"veil_secure": "veil secure", "veil_seeded": "veil seeded", "diffprivlib": "diffprivlib",
               "opendp": "OpenDP"}


# ------------------------------------------------------------------------------- the table

def make_table(rows: int, seed: int = SEED) -> tuple[pl.DataFrame, dict[str, np.ndarray]]:
    """The polars frame of text columns and, per column, the int64 codes it was drawn from."""
    rng = np.random.default_rng(seed)
    series, codes = {}, {}
    for name, k in COLUMNS:
        p = 1.0 / np.arange(1, k + 1) ** ZIPF_EXPONENT
        codes[name] = rng.choice(k, size=rows, p=p / p.sum()).astype(np.int64)
        series[name] = pl.Series(name, labels(name, k)).gather(codes[name])
    return pl.DataFrame(series), codes


# ------------------------------------------------------------------------------- accuracy

def error_check(noisy, truth: np.ndarray) -> dict:
    """Largest and mean |noisy − true| over the cells, against discrete Laplace noise of scale 1/ε.

    With ratio a = e^(−ε), P(|Z| ≥ j) = 2a^j / (1 + a) for j ≥ 1 and E|Z| = 2a / (1 − a²). The
    bound is the smallest j with cells · P(|Z| > j) ≤ 1 − ERROR_QUANTILE, so the largest error of a
    run exceeds it with probability at most 1 %.
    """
    err = np.abs(np.asarray(noisy, dtype=float).reshape(truth.shape) - truth)
    a = math.exp(-EPSILON)
    cells = truth.size
    bound = 0
    while cells * 2.0 * a ** (bound + 1) / (1.0 + a) > 1.0 - ERROR_QUANTILE:
        bound += 1
    max_err, mean_err = float(err.max()), float(err.mean())
    return {"cells": cells, "scale": 1.0 / EPSILON, "max_abs_error": max_err,
            "max_in_scales": max_err * EPSILON, "bound_99": bound, "mean_abs_error": mean_err,
            "expected_mean_abs_error": 2.0 * a / (1.0 - a * a), "ok": max_err <= bound}


# ------------------------------------------------------------------------------- the tools

def measure_veil(frame: pl.DataFrame, codes: dict, repeat: int) -> dict:
    from veil import Dataset
    from veil.dp.mechanisms import Geometric
    from veil.dp.noise import NoiseSource
    from veil.dp.queries import dp_histogram

    # The first secure draw of the process is a one-off (module loading), shown apart.
    start = time.perf_counter()
    NoiseSource.secure().discrete_laplace(np.zeros(1, dtype=np.int64), 1.0 / EPSILON)
    warmup_s = time.perf_counter() - start
    progress("veil: encoding")
    encode_s, dataset = best_of(lambda: Dataset(frame, quasi_identifiers=list(CONTINGENCY_COLUMNS)), repeat)
    known = {name: labels(name, k) for name, k in COLUMNS}
    out = {"encode_s": encode_s, "first_secure_draw_s": warmup_s, "queries": {}}
    for mode, noise in (("secure", None), ("seeded", SEED)):
        for query, names in (("histogram", HIST_COLUMNS), ("contingency", CONTINGENCY_COLUMNS)):
            progress(f"veil {mode}: {query}")
            cats = {n: known[n] for n in names}
            seconds, result = best_of(lambda: dp_histogram(dataset, list(names), EPSILON, categories=cats,
                                                           noise=noise), repeat)
            truth = true_counts(codes, list(names), dict(COLUMNS))
            source = NoiseSource.secure() if noise is None else NoiseSource.seeded(SEED)
            noise_s, _ = best_of(lambda: Geometric(EPSILON).release(truth.ravel(), noise=source), repeat)
            out["queries"][f"{mode}/{query}"] = {
                "seconds": seconds, "noise_s": noise_s, "count_s": max(seconds - noise_s, 0.0),
                "noise_per_cell_s": noise_s / truth.size, "cells": truth.size,
                "mechanism": result.mechanism, "sensitivity": result.sensitivity,
                "fit_for_release": result.fit_for_release, "accuracy": error_check(result.value, truth)}
    return out


def measure_secure_at_speed(rows: int, repeat: int) -> dict:
    """veil's two queries on ``rows`` rows, secure against seeded (best of ``repeat`` each)."""
    from veil import Dataset
    from veil.dp.queries import dp_histogram

    frame, _ = make_table(rows)
    dataset = Dataset(frame, quasi_identifiers=list(CONTINGENCY_COLUMNS))
    known = {name: labels(name, k) for name, k in COLUMNS}
    queries = []
    for query, names in (("histogram", HIST_COLUMNS), ("contingency", CONTINGENCY_COLUMNS)):
        cats = {n: known[n] for n in names}
        timed = {}
        for mode, noise in (("secure", None), ("seeded", SEED)):
            progress(f"veil {mode}, {rows:,} rows: {query}")
            timed[mode], _ = best_of(lambda: dp_histogram(dataset, list(names), EPSILON, categories=cats, noise=noise),
                                     repeat)
        queries.append({"query": query, "secure_s": timed["secure"], "seeded_s": timed["seeded"],
                        "secure_over_seeded": timed["secure"] / timed["seeded"]})
    return {"rows": rows, "queries": queries}


def measure_peer(peer: str, codes: dict, repeat: int) -> dict:
    """diffprivlib's or OpenDP's answers to the same queries on the same codes, in the peer
    environment (``peers/dp.py``), with their accuracy checked here.

    The codes are handed over as ``.npy`` files in a temporary folder, so that every tool counts
    the very same rows.

    Raises:
        peer_env.PeerError: the peer environment could not be made or the peer failed.
    """
    sizes = dict(COLUMNS)
    queries = {"histogram": list(HIST_COLUMNS), "contingency": list(CONTINGENCY_COLUMNS)}
    with tempfile.TemporaryDirectory(prefix="veil-dp-codes-") as folder:
        for name, column in codes.items():
            np.save(Path(folder) / f"{name}.npy", column)
        answer = peer_env.call("dp", f"{peer}_queries", folder=folder, sizes=sizes, queries=queries,
                               epsilon=EPSILON, repeat=repeat)
    blocks = [answer["queries"]] + ([answer["polars"]["queries"]] if "queries" in answer.get("polars", {}) else [])
    for block in blocks:
        for query, entry in block.items():
            truth = true_counts(codes, queries[query], sizes)
            entry["cells"] = truth.size
            entry["accuracy"] = error_check(entry.pop("noisy"), truth)
            if "noise_s" in entry:
                entry["count_s"] = max(entry["seconds"] - entry["noise_s"], 0.0)
                entry["noise_per_cell_s"] = entry["noise_s"] / truth.size
    return answer


# ------------------------------------------------------------------------------- the run

def versions(names: list[str]) -> dict[str, str]:
    return {name: importlib.metadata.version(name) for name in names}


def ratios(results: dict) -> dict:
    """veil faster by: the peer's time over veil's, per query, veil mode and peer."""
    out = {}
    for query in ("histogram", "contingency"):
        for mode in ("secure", "seeded"):
            veil_s = results["veil"]["queries"][f"{mode}/{query}"]["seconds"]
            for peer in ("diffprivlib", "opendp"):
                block = results.get(peer) or {}
                if "queries" in block:
                    out[f"{query}/{mode}/{peer}"] = block["queries"][query]["seconds"] / veil_s
    return out


def notes(results: dict) -> list[str]:
    n = []
    n.append("Same query everywhere: ε = 1, δ = 0, counts of sensitivity 1 under add/remove-one "
             "neighbouring (veil's and diffprivlib's stated definition; OpenDP's symmetric distance, "
             "whose privacy map gives ε = 1 at d_in = 1 here). Every tool adds discrete Laplace "
             "(two-sided geometric) noise with P(z) ∝ exp(−ε|z|) to every cell, empty ones too; the "
             "categories are given, not read from the data.")
    n.append("Differences: diffprivlib's GeometricTruncated clamps each noisy count at 0 (a "
             "post-processing; it cannot bite on these cells, the smallest expects ~20 records), "
             "draws by inverse CDF in floating point from numpy's global RandomState (not a CSPRNG) "
             "and returns floats for histogramdd. veil secure and OpenDP draw with the same exact "
             "integer algorithm (Canonne, Kamath and Steinke 2020) and a CSPRNG, OpenDP a few bytes "
             "per call and sample, veil vectorized over bulk bytes; veil seeded draws two numpy "
             "geometrics per cell (an experiment, not fit for release).")
    n.append("Inputs: diffprivlib and OpenDP get the int64 codes of the columns (diffprivlib's "
             "(N, 3) array for histogramdd is built before the clock starts); veil gets its encoded "
             "Dataset, and its encoding from the three text columns is timed apart. OpenDP's "
             "contingency time includes building the mixed-radix key of the three codes (its vector "
             "API counts one column); veil builds the same key inside dp_histogram.")
    n.append("Counting and noise: the noise step alone is timed on the true counts (veil: "
             "Geometric.release; diffprivlib: one GeometricTruncated.randomise per cell, as its "
             "functions do; OpenDP: make_laplace on an i64 vector) and counting is the rest of the "
             "query's time.")
    n.append("Accuracy: max |noisy − true| over the cells in units of the noise scale 1/ε, against "
             "the 99 % quantile of the largest of that many discrete Laplace draws; mean |error| "
             "against its expectation 2a/(1 − a²), a = e^−ε (0.85).")
    return n


def run(rows: int, repeat: int, skip_diffprivlib: bool, skip_opendp: bool) -> dict:
    """Measure everything and return the results (times in seconds)."""
    progress(f"building {rows:,} rows")
    start = time.perf_counter()
    frame, codes = make_table(rows)
    build_s = time.perf_counter() - start
    results: dict = {}
    names = ["veil", "numpy", "polars", "pyarrow", "opendp"]
    results["veil"] = measure_veil(frame, codes, repeat)
    results["secure_at_speed"] = measure_secure_at_speed(min(rows, SECURE_ROWS), repeat)
    peer_versions = {}
    for peer, skip in (("diffprivlib", skip_diffprivlib), ("opendp", skip_opendp)):
        if skip:
            results[peer] = {"skipped": f"skipped on request (--skip-{peer})."}
            continue
        try:
            results[peer] = measure_peer(peer, codes, repeat)
            peer_versions |= results[peer].pop("versions")
        except peer_env.PeerError as exc:  # the report says why; the rest still runs
            results[peer] = {"skipped": f"failed: {exc}"}
    progress("")
    meta = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "cpu": cpu_model(),
            "cores": os.cpu_count(), "python": platform.python_version(),
            "versions": with_peer_versions(versions(names), peer_versions),
            "repeat": repeat, "rows": rows, "seed": SEED, "epsilon": EPSILON, "delta": 0.0,
            "columns": {n: k for n, k in COLUMNS}, "distribution": f"Zipf({ZIPF_EXPONENT:g}), independent columns",
            "table_build_s": build_s}
    worst = max(results["secure_at_speed"]["queries"], key=lambda q: q["secure_over_seeded"])
    goals = [{"goal": f"secure within {SECURE_GOAL_RATIO:g}× of seeded at {results['secure_at_speed']['rows']:,} rows",
              "measured": f"worst {fmt_ratio(worst['secure_over_seeded'])} ({QUERY_LABELS[worst['query']]})",
              "met": worst["secure_over_seeded"] <= SECURE_GOAL_RATIO}]
    return {"meta": meta, **results, "ratios": ratios(results), "notes": notes(results), "goals": goals}


# ------------------------------------------------------------------------------- reports

QUERY_LABELS = {"histogram": "histogram(a)", "contingency": "contingency(a,b,c)"}


def tool_query(results: dict, tool: str, query: str) -> dict | None:
    if tool.startswith("veil"):
        return results["veil"]["queries"][f"{tool.split('_')[1]}/{query}"]
    block = results.get(tool) or {}
    return block.get("queries", {}).get(query)


def terminal_report(results: dict) -> str:
    meta = results["meta"]
    v = meta["versions"]
    lines = [f"veil DP benchmark (issue 6), {meta['date']}",
             f"{meta['cpu']}, {meta['cores']} cores, Python {meta['python']}",
             ", ".join(f"{k} {val}" for k, val in v.items()),
             *wrap(f"Table: {meta['rows']:,} rows, text columns a, b, c with 10, 20, 50 categories, "
             f"{meta['distribution']}, default_rng({meta['seed']}); ε = {meta['epsilon']:g}, δ = 0; "
             f"best of {meta['repeat']} runs.", "  "),
             *wrap(f"veil encoding (Dataset from the polars frame, 3 text columns): "
             f"{fmt_time(results['veil']['encode_s'])}; first secure draw of the process (a one-off, not "
             f"in the figures): "
             f"{fmt_time(results['veil']['first_secure_draw_s'])}", "  "), "",
             "Time per query (veil from the encoded Dataset, peers from int codes)", "",
             f"  {'query':<20}{'cells':>7}{'veil sec':>10}{'veil seed':>10}{'diffprivlib':>12}{'OpenDP':>10}",
             "  " + "-" * 69]
    for query in ("histogram", "contingency"):
        cells = results["veil"]["queries"][f"secure/{query}"]["cells"]
        row = [fmt_time((tool_query(results, t, query) or {}).get("seconds")) for t in TOOLS]
        lines.append(f"  {QUERY_LABELS[query]:<20}{cells:>7,}{row[0]:>10}{row[1]:>10}{row[2]:>12}{row[3]:>10}")
    lines += ["", "veil faster by (peer's time / veil's time)", "",
              f"  {'query':<20}{'secure vs dpl':>14}{'seeded vs dpl':>14}{'secure vs ODP':>14}{'seeded vs ODP':>14}",
              "  " + "-" * 76]
    r = results["ratios"]
    for query in ("histogram", "contingency"):
        cells = [fmt_ratio(r.get(f"{query}/{m}/{p}")) for p in ("diffprivlib", "opendp") for m in ("secure", "seeded")]
        lines.append(f"  {QUERY_LABELS[query]:<20}" + "".join(f"{c:>14}" for c in cells))
    lines += ["", "Counting and noise (noise per cell = noise time / cells)", "",
              f"  {'tool, query':<32}{'total':>9}{'counting':>10}{'noise':>9}{'per cell':>11}", "  " + "-" * 71]
    for tool in TOOLS:
        for query in ("histogram", "contingency"):
            q = tool_query(results, tool, query)
            if q:
                lines.append(f"  {TOOL_LABELS[tool] + ', ' + QUERY_LABELS[query]:<32}{fmt_time(q['seconds']):>9}"
                             f"{fmt_time(q['count_s']):>10}{fmt_time(q['noise_s']):>9}"
                             f"{fmt_time(q['noise_per_cell_s']):>11}")
    lines += ["", "Accuracy: |noisy − true| per cell, noise scale 1/ε = 1", "",
              f"  {'tool, query':<32}{'max':>6}{'99% bound':>11}{'mean':>8}{'expected':>10}  check",
              "  " + "-" * 75]
    for tool in TOOLS:
        for query in ("histogram", "contingency"):
            q = tool_query(results, tool, query)
            if q:
                a = q["accuracy"]
                lines.append(f"  {TOOL_LABELS[tool] + ', ' + QUERY_LABELS[query]:<32}{a['max_abs_error']:>6g}"
                             f"{a['bound_99']:>11}{a['mean_abs_error']:>8.3f}{a['expected_mean_abs_error']:>10.3f}"
                             f"  {'ok' if a['ok'] else 'ABOVE BOUND'}")
    od = results.get("opendp") or {}
    for q in ("histogram", "contingency"):
        if q in od.get("queries", {}):
            lines.append(f"  OpenDP privacy map, {QUERY_LABELS[q]}: ε = {od['queries'][q]['privacy_map_epsilon']:g} "
                         f"at d_in = 1; measurement built in {fmt_time(od['queries'][q]['build_s'])}")
    lines.append("")
    for peer, label in (("diffprivlib", "diffprivlib"), ("opendp", "OpenDP")):
        if (results.get(peer) or {}).get("skipped"):
            lines += wrap(f"{label} did not run: {results[peer]['skipped']}", "  ")
    polars_block = od.get("polars")
    if polars_block is not None:
        if "error" in polars_block:
            lines += wrap(f"OpenDP polars pipeline (Context, Margin with public keys, group_by + dp.len, "
                          f"with_keys) could not run: {polars_block['error']}", "  ")
        else:
            for q, b in polars_block["queries"].items():
                lines.append(f"OpenDP polars pipeline, {QUERY_LABELS[q]}: {fmt_time(b['seconds'])}, max error "
                             f"{b['accuracy']['max_abs_error']:g} ({'ok' if b['accuracy']['ok'] else 'ABOVE BOUND'})")
    fast = results["secure_at_speed"]
    lines += ["", f"Secure against seeded, {fast['rows']:,} rows",
              f"  {'query':<20}{'secure':>10}{'seeded':>10}{'ratio':>8}", "  " + "-" * 46]
    for q in fast["queries"]:
        lines.append(f"  {QUERY_LABELS[q['query']]:<20}{fmt_time(q['secure_s']):>10}{fmt_time(q['seeded_s']):>10}"
                     f"{fmt_ratio(q['secure_over_seeded']):>8}")
    lines += ["", "Notes"]
    for note in results["notes"]:
        lines += wrap(f"- {note}", "  ")
    lines += ["", "Goals"]
    for goal in results["goals"]:
        lines += wrap(f"  {goal['goal']}: {goal['measured']}, {'met' if goal['met'] else 'NOT MET'}", "    ")
    return "\n".join(lines)


def markdown_report(results: dict) -> str:
    meta = results["meta"]
    r = results["ratios"]
    out = ["## DP histogram and contingency table", "",
           f"Measured {meta['date']} on {meta['cpu']} ({meta['cores']} cores), Python {meta['python']}; "
           + ", ".join(f"{k} {val}" for k, val in meta["versions"].items()) + ". "
           f"{meta['rows']:,} synthetic rows (`numpy.random.default_rng({meta['seed']})`): text columns a, b, c "
           f"with 10, 20 and 50 categories, {meta['distribution']}. ε = {meta['epsilon']:g}, δ = 0, "
           f"categories given. Best of {meta['repeat']} runs. veil's encoding of the three columns "
           f"(`Dataset` from the polars frame): {fmt_time(results['veil']['encode_s'])}; the first secure "
           f"draw of the process took "
           f"{fmt_time(results['veil']['first_secure_draw_s'])} once and is not in the figures. "
           "Reproduce with `python benchmarks/run.py --only dp`.", "",
           "| Query | cells | veil secure | veil seeded | diffprivlib | OpenDP |", "|---|---:|---:|---:|---:|---:|"]
    for query in ("histogram", "contingency"):
        cells = results["veil"]["queries"][f"secure/{query}"]["cells"]
        row = [fmt_time((tool_query(results, t, query) or {}).get("seconds")) for t in TOOLS]
        out.append(f"| {QUERY_LABELS[query]} | {cells:,} | " + " | ".join(row) + " |")
    out += ["", "veil faster by (the peer's time over veil's):", "",
            "| Query | secure vs diffprivlib | seeded vs diffprivlib | secure vs OpenDP | seeded vs OpenDP |",
            "|---|---:|---:|---:|---:|"]
    for query in ("histogram", "contingency"):
        cells = [fmt_ratio(r.get(f"{query}/{m}/{p}")) for p in ("diffprivlib", "opendp") for m in ("secure", "seeded")]
        out.append(f"| {QUERY_LABELS[query]} | " + " | ".join(cells) + " |")
    out += ["", "Counting, noise and accuracy (|noisy − true| per cell; noise scale 1/ε = 1):", "",
            "| Tool, query | total | counting | noise | noise per cell | max error | 99 % bound | mean error "
            "(expected) | check |", "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for tool in TOOLS:
        for query in ("histogram", "contingency"):
            q = tool_query(results, tool, query)
            if q:
                a = q["accuracy"]
                out.append(f"| {TOOL_LABELS[tool]}, {QUERY_LABELS[query]} | {fmt_time(q['seconds'])} | "
                           f"{fmt_time(q['count_s'])} | {fmt_time(q['noise_s'])} | {fmt_time(q['noise_per_cell_s'])} | "
                           f"{a['max_abs_error']:g} | {a['bound_99']} | {a['mean_abs_error']:.3f} "
                           f"({a['expected_mean_abs_error']:.3f}) | {'ok' if a['ok'] else 'above bound'} |")
    od = results.get("opendp") or {}
    extra = []
    for peer, label in (("diffprivlib", "diffprivlib"), ("opendp", "OpenDP")):
        if (results.get(peer) or {}).get("skipped"):
            extra.append(f"{label} did not run: {results[peer]['skipped']}")
    if od.get("polars") is not None:
        if "error" in od["polars"]:
            extra.append(f"OpenDP's polars pipeline could not run: {od['polars']['error']}")
        else:
            extra += [f"OpenDP's polars pipeline, {QUERY_LABELS[q]}: {fmt_time(b['seconds'])}"
                      for q, b in od["polars"]["queries"].items()]
    fast = results["secure_at_speed"]
    out += ["", f"Secure against seeded at {fast['rows']:,} rows (a table drawn the same way):", "",
            "| Query | veil secure | veil seeded | secure / seeded |", "|---|---:|---:|---:|"]
    out += [f"| {QUERY_LABELS[q['query']]} | {fmt_time(q['secure_s'])} | {fmt_time(q['seeded_s'])} | "
            f"{fmt_ratio(q['secure_over_seeded'])} |" for q in fast["queries"]]
    out += ["", "Notes:", ""] + [f"- {n}" for n in extra + results["notes"]]
    out += ["", "Goals:", ""] + [f"- {g['goal']}: {g['measured']}, **{'met' if g['met'] else 'not met'}**"
                                 for g in results["goals"]]
    return "\n".join(out) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's own options, added to the shared command line."""
    parser.add_argument("--dp-rows", type=positive_int,
                        help=f"DP benchmark: rows of the synthetic table (default {ROWS:,})")
    parser.add_argument("--skip-diffprivlib", action="store_true",
                        help="DP benchmark: do not time diffprivlib")
    parser.add_argument("--skip-opendp", action="store_true", help="DP benchmark: do not time OpenDP")
