"""Grouped DP queries at the person level (issue 27): veil beside Tumult Analytics, OpenDP's polars
front end and PipelineDP, on Adult with a synthetic person ID and on the same resampled to 10M rows.

**The table.** Adult (``shared/data/adult/adult.csv``, 30,162 rows) with a person ID: the rows are
shuffled (``default_rng(SEED)``), ordered by sex and race (a person's sex and race do not change
from row to row, as in a table of visits or transactions), and cut into persons of 1 to 20 rows
(uniform, the same generator); the table is then shuffled again. The large table resamples Adult
to ``--dpquery-rows`` rows (10,000,000 by default, ``harness.resample``) and makes persons the same
way. Columns: ``pid``, ``sex``, ``race``, ``age`` (whole years) and ``income``, the income proxy:
1 when ``salary-class`` is ``>50K``, else 0 (Adult has no income figure), clamped to [0, 1], so its
mean is the share of high incomes. Each table is written once as Parquet to the temporary folder.

**The queries**, at ε = 1, every person contributing at most 20 rows (``max_rows_per_group``) to
at most 1 group (``max_groups``) for every tool (so the L1 sensitivity of a count is 20):

* (a) count and mean(income) by (sex, race), the 10 keys public (the cross product of the domains);
  ε/2 for the count and ε/2 for the mean wherever a tool lets the split be chosen;
* (b) the same with the keys selected privately (thresholded noisy counts, δ = 1e-7);
* (c) five quantiles (0.1, 0.25, 0.5, 0.75, 0.9) of age in [0, 100] by race, the 5 keys public.

**Measured**, every tool in a fresh process of its own environment (``peer_env.py``; Tumult in
``.tumult-venv``): each run from the Parquet file on disk to the released table in memory, the
tool reading it its own way (veil: ``polars.read_parquet`` and the Python API,
``veil.dp.grouped_query.Query``, on the polars frame); the first run of the process is the user's
figure (imports of the query path and any warm-up included), the process's whole wall time and its
peak resident memory (with its children: Spark's JVM) beside it. Accuracy: the mean absolute error
per cell against the exact answer on the whole table, over ``ACCURACY_RUNS`` runs on Adult (veil
seeded, ``rng=0…19``; the peers cannot be seeded and draw from their own secure sources); veil's
timed runs draw from the secure source, the default. On the large table, errors are from the timed
runs only. The peers' code is ``peers/dpquery.py``.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import peer_env
import polars as pl
from harness import (
    SEED,
    fmt_ratio,
    fmt_time,
    goal_lines,
    machine,
    machine_sentence,
    positive_int,
    read_adult_polars,
    resample,
    with_peer_versions,
    wrap,
)
from timing import progress

ROWS = 10_000_000
EPSILON = 1.0
DELTA = 1e-7
MAX_GROUPS = 1
MAX_ROWS_PER_GROUP = 20
PERSON_ROWS = (1, 20)
BY = ["sex", "race"]
VALUE, BOUNDS = "income", (0.0, 1.0)
QCOL, QBY, QBOUNDS = "age", ["race"], (0, 100)
QUANTILES = [0.1, 0.25, 0.5, 0.75, 0.9]
ACCURACY_RUNS = 20
TIMED_RUNS = 3
SPEED_GOAL = 3.0
QUERIES = {"a": "count and mean(income) by sex, race; public keys",
           "b": "count and mean(income) by sex, race; private keys",
           "c": "five quantiles of age by race; public keys"}
PEERS = {"tumult": ("Tumult Analytics", "tumult"), "opendp": ("OpenDP (polars)", "peers"),
         "pipelinedp": ("PipelineDP", "peers")}
TOOL_LABELS = {"veil": "veil", **{k: v[0] for k, v in PEERS.items()}}
#: what each peer says about the queries it cannot answer as asked
MECHANISMS = {
    "veil": {"a": "discrete Laplace (counts), Laplace (sums); the mean a noisy centred sum over its own noisy count",
             "b": "thresholded noisy counts (veil.dp.partition_selection), then as (a)",
             "c": "one noisy histogram (tree) per key for every quantile"},
    "tumult": {"a": "geometric counts; average = noisy sum over noisy count; one query per aggregate",
               "b": "get_groups at (ε/3, δ), then count and average at ε/3 each",
               "c": "one exponential-mechanism query per quantile, ε/5 each"},
    "opendp": {"a": "discrete Laplace; dp.mean = noisy sum over noisy length at one scale; a query per aggregate",
               "b": "one query; keys kept where the noisy length passes OpenDP's threshold",
               "c": "one exponential mechanism per quantile over the 101 whole-number candidates"},
    "pipelinedp": {"a": "Laplace; COUNT and MEAN share the mean's noisy count (2 measurements at ε/2)",
                   "b": "Laplace thresholding partition selection, then as (a)",
                   "c": "one quantile tree per key for every percentile (Google's library)"},
}


# ------------------------------------------------------------------------------- the table

def with_persons(frame: pl.DataFrame, seed: int = SEED) -> pl.DataFrame:
    """The benchmark's table (module notes) from Adult's rows: pid, sex, race, age, income."""
    rng = np.random.default_rng(seed)
    n = frame.height
    ordered = frame[rng.permutation(n)].sort(BY, maintain_order=True)
    sizes = rng.integers(PERSON_ROWS[0], PERSON_ROWS[1] + 1, size=n)
    persons = int(np.searchsorted(np.cumsum(sizes), n)) + 1
    pid = np.repeat(np.arange(persons, dtype=np.int64), sizes[:persons])[:n]
    table = pl.DataFrame({"pid": pid, "sex": ordered["sex"], "race": ordered["race"],
                          "age": ordered["age"].cast(pl.Int64),
                          "income": (ordered["salary-class"] == ">50K").cast(pl.Int64)})
    return table[rng.permutation(n)]


def table_path(rows: int | None) -> Path:
    """The Parquet file of the table (Adult when ``rows`` is None), made once in the temporary folder."""
    name = "adult" if rows is None else str(rows)
    path = Path(tempfile.gettempdir()) / f"veil-dpquery-{name}-seed{SEED}.parquet"
    if not path.exists():
        adult = read_adult_polars()
        table = with_persons(adult if rows is None else resample(adult, rows))
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        table.write_parquet(partial)
        os.replace(partial, path)
    return path


def domains(frame: pl.DataFrame) -> dict[str, list[str]]:
    """The public domains of the grouping columns: Adult's values (its hierarchies' leaves)."""
    return {c: sorted(frame[c].unique().to_list()) for c in sorted(set(BY + QBY))}


def truth(frame: pl.DataFrame) -> dict:
    """The exact answers on the whole table, by key (``"v1\\tv2"``): count and mean for (a) and
    (b), the quantiles (numpy's default, linear interpolation) for (c)."""
    grouped = frame.group_by(BY).agg(pl.len().alias("count"), pl.col(VALUE).mean().alias("mean"))
    ab = {"\t".join(str(r[c]) for c in BY): [float(r["count"]), float(r["mean"])]
          for r in grouped.iter_rows(named=True)}
    c = {}
    for key, part in frame.group_by(QBY):
        c["\t".join(str(k) for k in key)] = [float(v) for v in np.quantile(part[QCOL].to_numpy(), QUANTILES)]
    return {"a": ab, "b": ab, "c": c}


def spec_for(path: Path, query: str, doms: dict) -> dict:
    return {"path": str(path), "query": query, "id": "pid", "by": BY, "value": VALUE, "bounds": list(BOUNDS),
            "qcol": QCOL, "qby": QBY, "qbounds": list(QBOUNDS), "quantiles": QUANTILES, "domains": doms,
            "epsilon": EPSILON, "delta": DELTA, "max_groups": MAX_GROUPS, "max_rows_per_group": MAX_ROWS_PER_GROUP}


# ------------------------------------------------------------------------------- veil (in a fresh process)

def veil_runs(spec: dict, runs: int, seeded: bool) -> dict:
    """veil answering ``spec``'s query ``runs`` times, each from the Parquet file to the answer's
    table; ``seeded``: run i draws with ``rng=i`` (accuracy), else from the secure source. Runs in a
    fresh process of veil's environment (``peer_env.results(..., env="veil")``)."""
    from treemem import PeakTreeMemory

    memory = PeakTreeMemory().start()
    start = time.perf_counter()
    from veil.dp import aggregates as agg
    from veil.dp.grouped_query import Query
    from veil.dp.privacy_unit import PrivacyUnit
    import_s = time.perf_counter() - start
    q = spec["query"]
    unit = PrivacyUnit.person(spec["id"], max_groups=spec["max_groups"],
                              max_rows_per_group=spec["max_rows_per_group"])
    by = spec["qby"] if q == "c" else spec["by"]
    doms = {c: spec["domains"][c] for c in by}

    def grouped(frame):
        query = Query(frame, unit=unit)
        if q == "b":
            from veil.dp.partition_selection import PartitionSelection
            return query.group_by(by, private=PartitionSelection(delta=spec["delta"]))
        return query.group_by(by, domains=doms)

    def aggregates():
        if q == "c":
            lo, hi = spec["qbounds"]
            # one bin per whole year, the grid of OpenDP's candidates
            return (agg.quantiles(spec["qcol"], spec["quantiles"], lo, hi, bins=int(hi - lo)),)
        lo, hi = spec["bounds"]
        return agg.count(), agg.mean(spec["value"], lo, hi, name="mean")

    timed = []
    for i in range(runs):
        start = time.perf_counter()
        frame = pl.read_parquet(spec["path"])
        answer = grouped(frame).agg(*aggregates()).evaluate(epsilon=spec["epsilon"], rng=i if seeded else None)
        table = answer.to_pandas()
        seconds = time.perf_counter() - start
        values = [c for c in table.columns if c not in by and not c.endswith(("_low", "_high"))]
        cells = {"\t".join(str(r[c]) for c in by): [float(r[v]) for v in values]
                 for r in table.to_dict("records")}
        timed.append({"seconds": seconds, "cells": cells})
    import veil
    return {"versions": {"veil": veil.__version__}, "import_s": import_s, "setup_s": 0.0, "runs": timed,
            "fit_for_release": bool(answer.fit_for_release), "peak_bytes": memory.stop()}


# ------------------------------------------------------------------------------- scoring

def score(runs: list[dict], exact: dict, query: str) -> dict:
    """Mean absolute error per cell, over the runs and the keys each answered, per aggregate; for
    private keys also how many true keys were released and how many released keys are not true
    keys (none can be: every candidate is a key present in the data)."""
    names = ["count", "mean"] if query != "c" else [f"q{p:g}" for p in QUANTILES]
    errors = {n: [] for n in names}
    released, spurious, missing_cells = [], 0, 0
    for run in runs:
        cells = run["cells"]
        released.append(sum(1 for k in cells if k in exact))
        spurious += sum(1 for k in cells if k not in exact)
        for key, true in exact.items():
            got = cells.get(key)
            if got is None:
                missing_cells += query != "b"
                continue
            for n, g, t in zip(names, got, true):
                if g is None or (isinstance(g, float) and math.isnan(g)):
                    missing_cells += 1
                else:
                    # a mean outside its bounds (or infinite, over a noisy count of 0) is clamped to
                    # them first, a post-processing veil does itself and any user of a peer can do
                    errors[n].append(abs((min(max(g, BOUNDS[0]), BOUNDS[1]) if n == "mean" else g) - t))
    out = {"runs": len(runs), "mae": {n: (float(np.mean(e)) if e else None) for n, e in errors.items()},
           # the standard error of each mean absolute error (cells and runs taken as independent draws)
           "se": {n: (float(np.std(e, ddof=1) / math.sqrt(len(e))) if len(e) > 1 else None) for n, e in errors.items()},
           "keys_true": len(exact), "keys_released_mean": float(np.mean(released)) if released else None,
           "spurious_keys": spurious, "missing_cells": missing_cells}
    if query == "c":
        allq = [e for n in names for e in errors[n]]
        out["mae"]["all"] = float(np.mean(allq)) if allq else None
        out["se"]["all"] = float(np.std(allq, ddof=1) / math.sqrt(len(allq))) if len(allq) > 1 else None
    return out


# ------------------------------------------------------------------------------- measuring

def measure(tool: str, spec: dict, runs: int, seeded: bool = False) -> dict:
    """One fresh process of ``tool`` answering ``spec`` ``runs`` times; its whole wall time too.
    A failure is returned as ``{"failed": reason}``."""
    start = time.perf_counter()
    try:
        if tool == "veil":
            out = peer_env.call("dpquery", "veil_runs", env="veil", spec=spec, runs=runs, seeded=seeded)
        else:
            out = peer_env.call("dpquery", tool, env=PEERS[tool][1], spec=spec, runs=runs)
    except peer_env.PeerError as exc:
        return {"failed": str(exc)}
    out["process_s"] = time.perf_counter() - start
    times = [r["seconds"] for r in out["runs"]]
    out["first_s"], out["best_s"] = times[0], min(times)
    return out


def run(rows: int, queries: list[str], tools: list[str], skip_large: bool = False,
        large_tools: list[str] | None = None) -> dict:
    """Every tool on every query, on Adult (accuracy and time) and on ``rows`` rows (time; only
    ``large_tools`` there when given)."""
    sizes = {"adult": None} if skip_large else {"adult": None, "large": rows}
    results: dict = {"sizes": {}}
    peer_versions: dict = {}
    for size, n in sizes.items():
        progress(f"dpquery: building the {size} table")
        path = table_path(n)
        frame = pl.read_parquet(path)
        exact, doms = truth(frame), domains(frame)
        block = {"rows": frame.height, "persons": int(frame["pid"].n_unique()), "file_bytes": path.stat().st_size,
                 "queries": {}}
        del frame
        for q in queries:
            spec = spec_for(path, q, doms)
            entry = {}
            for tool in (tools if size == "adult" or large_tools is None else
                         [t for t in tools if t in large_tools]):
                progress(f"dpquery {size} ({q}): {tool}")
                if tool == "veil":
                    timed = measure("veil", spec, TIMED_RUNS)
                    acc = measure("veil", spec, ACCURACY_RUNS, seeded=True) if size == "adult" else timed
                else:
                    timed = measure(tool, spec, ACCURACY_RUNS if size == "adult" else 1)
                    acc = timed
                if "failed" in timed:
                    entry[tool] = {"failed": timed["failed"]}
                    continue
                versions = timed.pop("versions", {})
                if tool != "veil":
                    peer_versions |= versions
                record = {k: timed[k] for k in ("first_s", "best_s", "process_s", "import_s", "setup_s", "peak_bytes")}
                record["timed_runs"] = len(timed["runs"])
                record["accuracy"] = score(acc["runs"], exact[q], q) if "failed" not in acc else None
                if tool == "veil":
                    record["fit_for_release"] = timed.get("fit_for_release")
                    record["accuracy_seeded"] = size == "adult"
                entry[tool] = record
            block["queries"][q] = entry
        results["sizes"][size] = block
    progress("")
    meta = machine(with_peer_versions({"veil": _veil_version(), "polars": pl.__version__}, peer_versions))
    meta |= {"epsilon": EPSILON, "delta": DELTA, "max_groups": MAX_GROUPS, "max_rows_per_group": MAX_ROWS_PER_GROUP,
             "seed": SEED, "accuracy_runs": ACCURACY_RUNS, "timed_runs": TIMED_RUNS, "quantiles": QUANTILES,
             "by": BY, "value": VALUE, "bounds": list(BOUNDS), "qcol": QCOL, "qby": QBY, "qbounds": list(QBOUNDS)}
    left = [PEERS[t][0] if t in PEERS else t for t in tools if large_tools is not None and t not in large_tools]
    extra = ([f"Left out of the large table in this run (--dpquery-large-tools): {', '.join(left)}. "
              "Tumult Analytics took 561 s (first run) for (a) at 10,000,000 rows in an earlier run of this "
              "benchmark on this machine (2026-11-29 13:24 UTC), 37× veil's time then; (b) and (c) would take "
              "10 to 19 minutes each."] if left else [])
    return {"meta": meta, **results, "ratios": ratios(results), "notes": notes() + extra, "goals": goals(results)}


def _veil_version() -> str:
    import veil
    return veil.__version__


def ratios(results: dict) -> dict:
    """Per size and query: each peer's first-run time over veil's, and its memory over veil's."""
    out = {}
    for size, block in results["sizes"].items():
        for q, entry in block["queries"].items():
            ours = entry.get("veil") or {}
            if "first_s" not in ours:
                continue
            for tool in PEERS:
                theirs = entry.get(tool) or {}
                if "first_s" in theirs:
                    out[f"{size}/{q}/{tool}"] = {"time": theirs["first_s"] / ours["first_s"],
                                                 "process": theirs["process_s"] / ours["process_s"],
                                                 "memory": (theirs["peak_bytes"] / ours["peak_bytes"]
                                                            if theirs.get("peak_bytes") and ours.get("peak_bytes")
                                                            else None)}
    return out


def goals(results: dict) -> list[dict]:
    """The issue's goals: veil's error no worse than the best peer's (every peer here adds noise of
    the Laplace class under pure ε-DP), per aggregate, on Adult; and veil at least 3× faster than
    the fastest peer on the large table, per query."""
    out = []
    adult = results["sizes"].get("adult", {}).get("queries", {})
    for q, entry in adult.items():
        ours = (entry.get("veil") or {}).get("accuracy")
        if not ours:
            continue
        if q == "b":
            released = [(TOOL_LABELS[t], entry[t]["accuracy"]["keys_released_mean"])
                        for t in PEERS if (entry.get(t) or {}).get("accuracy")]
            if released:
                label, most = max(released, key=lambda p: p[1])
                out.append({"goal": "(b) veil releases as many of the true keys as the best peer on Adult",
                            "measured": f"veil {ours['keys_released_mean']:.1f}, best peer {label} {most:.1f} "
                                        f"of {ours['keys_true']}", "met": ours["keys_released_mean"] >= most})
        for name, mae in ours["mae"].items():
            # (c): the error over every quantile; (b): the count's, whose noise does not depend on
            # which keys were released (a mean's error does: small groups have noisier means)
            if (q == "c" and name != "all") or (q == "b" and name != "count"):
                continue
            peers = [(TOOL_LABELS[t], entry[t]["accuracy"]["mae"].get(name), entry[t]["accuracy"]["se"].get(name))
                     for t in PEERS if (entry.get(t) or {}).get("accuracy")]
            peers = [p for p in peers if p[1] is not None]
            if mae is None or not peers:
                continue
            best_label, best, best_se = min(peers, key=lambda p: p[1])
            # no worse: not above the best peer's by more than two standard errors of the difference
            margin = 2 * math.hypot(ours["se"].get(name) or 0.0, best_se or 0.0)
            out.append({"goal": f"({q}) {name}: veil's mean absolute error no worse than the best peer's on Adult "
                                "(within 2 standard errors)",
                        "measured": f"veil {mae:.4g}, best peer {best_label} {best:.4g} (± {margin:.2g})",
                        "met": mae <= best + margin})
    large = results["sizes"].get("large")
    if large:
        for q, entry in large["queries"].items():
            ours = (entry.get("veil") or {}).get("first_s")
            peers = [(TOOL_LABELS[t], entry[t]["first_s"]) for t in PEERS if "first_s" in (entry.get(t) or {})]
            if ours is None or not peers:
                continue
            label, fastest = min(peers, key=lambda p: p[1])
            out.append({"goal": f"({q}) veil at least {SPEED_GOAL:g}× faster than the fastest peer at "
                                f"{large['rows']:,} rows",
                        "measured": f"{fmt_ratio(fastest / ours)} ({label} {fmt_time(fastest)}, veil {fmt_time(ours)})",
                        "met": fastest / ours >= SPEED_GOAL})
    return out


def notes() -> list[str]:
    return [
        f"Same query everywhere: ε = {EPSILON:g} (δ = {DELTA:g} for private keys), each person at most "
        f"{MAX_ROWS_PER_GROUP} rows in at most {MAX_GROUPS} group (veil: PrivacyUnit.person(max_groups, "
        "max_rows_per_group); Tumult: MaxGroupsPerID on each grouping column and MaxRowsPerGroupPerID; OpenDP: "
        "truncate_num_groups and truncate_per_group; PipelineDP: max_partitions_contributed and "
        "max_contributions_per_partition), income clamped to [0, 1], age to [0, 100].",
        "Persons never straddle a key of (a) to (c) but at the ≤ 9 cuts between (sex, race) runs, so the bounds keep "
        "almost every row and the exact answer on the whole table is the target; the error includes what bounding "
        "drops.",
        "Budget split (a): veil, Tumult and OpenDP spend ε/2 on the count and ε/2 on the mean (a noisy sum and a "
        "noisy count at ε/4 each); PipelineDP answers COUNT and MEAN with two measurements at ε/2 each, the mean "
        "reusing the released count, so its mean gets twice the others' budget at no cost to the count.",
        "Randomness: veil's accuracy runs are seeded (rng = run number), its timed runs secure (the default). The "
        "peers cannot be seeded: their runs draw from their own sources (Tumult and OpenDP: CSPRNG; PipelineDP: "
        "Google's library's secure generator).",
        "Timing: every figure is a run from the Parquet file to the released table, in a fresh process per tool, "
        "query and size; 'first' is the first run of the process (the user's figure), the ratios use it. The "
        "process time adds the interpreter, the imports and, for Tumult, starting Spark (local[2]). Peak memory "
        "is the process's resident memory with its children's (Spark's JVM), sampled every 50 ms.",
    ]


# ------------------------------------------------------------------------------- reports

def _mae(entry: dict, name: str) -> str:
    acc = entry.get("accuracy") or {}
    v = (acc.get("mae") or {}).get(name)
    return "—" if v is None else f"{v:.4g}"


def _mib(n) -> str:
    return "—" if not n else f"{n / 2**20:,.0f} MiB"


def rows_for(results: dict, size: str, q: str) -> list[list[str]]:
    """One row per tool: first run, best, process, memory, errors, peer / veil."""
    entry = results["sizes"][size]["queries"][q]
    names = ["count", "mean"] if q != "c" else ["all"]
    out = []
    for tool in ["veil", *PEERS]:
        e = entry.get(tool)
        if e is None:
            continue
        if "failed" in e:
            out.append([TOOL_LABELS[tool], "could not run: " + e["failed"][:160]] + [""] * (6 + len(names)))
            continue
        r = results["ratios"].get(f"{size}/{q}/{tool}", {})
        acc = e.get("accuracy") or {}
        keys = f"{acc['keys_released_mean']:.1f} / {acc['keys_true']}" if q == "b" and acc else ""
        out.append([TOOL_LABELS[tool], fmt_time(e["first_s"]), fmt_time(e["best_s"]), fmt_time(e["process_s"]),
                    _mib(e["peak_bytes"]), *[_mae(e, n) for n in names], keys,
                    fmt_ratio(r.get("time")) if tool != "veil" else "1×",
                    fmt_ratio(r.get("memory")) if tool != "veil" else "1×"])
    return out


def header(q: str) -> list[str]:
    errs = ["MAE count", "MAE mean"] if q != "c" else ["MAE (years)"]
    return ["tool", "first run", "best run", "process", "peak memory", *errs, "keys released", "time / veil's",
            "memory / veil's"]


def terminal_report(results: dict) -> str:
    meta = results["meta"]
    lines = [f"veil grouped DP queries (issue 27), {meta['date']}", *wrap(machine_sentence(meta), "  "), ""]
    for size, block in results["sizes"].items():
        lines.append(f"{'Adult' if size == 'adult' else 'Adult resampled'}: {block['rows']:,} rows, "
                     f"{block['persons']:,} persons")
        for q in block["queries"]:
            lines += ["", f"  ({q}) {QUERIES[q]}"]
            for row in rows_for(results, size, q):
                lines += wrap("    " + ", ".join(f"{h}: {v}" for h, v in zip(header(q), row) if v), "      ")
        lines.append("")
    lines.append("Notes")
    for note in results["notes"]:
        lines += wrap(f"- {note}", "  ")
    return "\n".join(lines + goal_lines(results["goals"]))


def markdown_report(results: dict) -> str:
    return "\n".join(["## Grouped DP queries at the person level", "", *markdown_body(results)]) + "\n"


def markdown_body(results: dict) -> list[str]:
    meta = results["meta"]
    out = [machine_sentence(meta) + ". Reproduce with `python benchmarks/run.py --only dpquery`.", ""]
    for size, block in results["sizes"].items():
        what = "Adult" if size == "adult" else "Adult resampled"
        acc = (f"errors over {meta['accuracy_runs']} runs" if size == "adult" else "errors from the timed runs")
        out += [f"### {what}: {block['rows']:,} rows, {block['persons']:,} persons ({acc})", ""]
        for q in block["queries"]:
            out += [f"({q}) {QUERIES[q]}:", "", "| " + " | ".join(header(q)) + " |",
                    "|---|" + "---:|" * (len(header(q)) - 1)]
            out += ["| " + " | ".join(row) + " |" for row in rows_for(results, size, q)]
            out.append("")
    out += ["How each tool answers:", ""]
    for tool, label in TOOL_LABELS.items():
        out.append(f"- {label}: " + "; ".join(f"({q}) {MECHANISMS[tool][q]}" for q in QUERIES))
    out += ["", "Notes:", ""] + [f"- {n}" for n in results["notes"]]
    out += ["", "Goals:", ""] + [f"- {g['goal']}: {g['measured']}, **{'met' if g['met'] else 'not met'}**"
                                 for g in results["goals"]]
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """This benchmark's own options, added to the shared command line."""
    parser.add_argument("--dpquery-rows", type=positive_int,
                        help=f"grouped-query benchmark: rows of the resampled table (default {ROWS:,})")
    parser.add_argument("--dpquery-queries", default="a,b,c",
                        help="grouped-query benchmark: which queries, comma-separated (default a,b,c)")
    parser.add_argument("--dpquery-tools", default="veil,tumult,opendp,pipelinedp",
                        help="grouped-query benchmark: which tools, comma-separated (default all)")
    parser.add_argument("--dpquery-large-tools", default=None,
                        help="grouped-query benchmark: which tools on the large table (default: --dpquery-tools)")
